//! A one-thread-per-connection HTTP server in front of `git http-backend` for the mirror's
//! tests: it asks for Basic credentials, records what each request carried, and hands the rest
//! to the real backend (CGI), so fetches and pushes over HTTP run end to end on loopback; over
//! HTTPS too, with a certificate for 127.0.0.1 from a CA of its own.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use crate::util::{default_path, test_tls_server};

/// A one-thread-per-connection HTTP server in front of `git http-backend`, which asks for Basic
/// credentials and records the requests it saw.
pub struct GitHttp {
    pub port: u16,
    pub seen: Arc<Mutex<Vec<String>>>,
}

/// `x-access-token:s3cret-t0ken` in Base64.
pub const GOOD_AUTH: &str = "Basic eC1hY2Nlc3MtdG9rZW46czNjcmV0LXQwa2Vu";

impl GitHttp {
    pub fn start(project_root: &Path, home: &Path) -> GitHttp {
        GitHttp::serve(project_root, home, None)
    }

    /// The server over HTTPS, and the PEM of the CA its certificate (for 127.0.0.1) is from.
    #[allow(dead_code)]
    pub fn start_tls(project_root: &Path, home: &Path) -> (GitHttp, String) {
        let (config, ca) = test_tls_server("127.0.0.1", "git test server CA");
        (GitHttp::serve(project_root, home, Some(config)), ca)
    }

    fn serve(project_root: &Path, home: &Path, tls: Option<Arc<rustls::ServerConfig>>) -> GitHttp {
        let listener = TcpListener::bind("127.0.0.1:0").expect("binding");
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (root, home, log) = (project_root.to_path_buf(), home.to_path_buf(), seen.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (root, home, log, tls) = (root.clone(), home.clone(), log.clone(), tls.clone());
                std::thread::spawn(move || match tls {
                    None => serve_one(stream, &root, &home, &log),
                    Some(config) => {
                        let Ok(connection) = rustls::ServerConnection::new(config) else {
                            return;
                        };
                        let tls = rustls::StreamOwned::new(connection, stream);
                        serve_one(tls, &root, &home, &log);
                    }
                });
            }
        });
        GitHttp { port, seen }
    }
}

fn serve_one(stream: impl Read + Write, root: &Path, home: &Path, log: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                return;
            }
            let line = line.trim_end().to_owned();
            if line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
            }
        }
        let header = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        let mut body = Vec::new();
        if let Some(len) = header("content-length") {
            body.resize(len.parse().unwrap(), 0);
            reader.read_exact(&mut body).expect("the body");
        } else if header("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
            loop {
                let mut size = String::new();
                reader.read_line(&mut size).expect("a chunk size");
                let size = usize::from_str_radix(size.trim(), 16).expect("a hex size");
                let mut chunk = vec![0; size + 2];
                reader.read_exact(&mut chunk).expect("a chunk");
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        }
        let auth = header("authorization");
        log.lock().unwrap().push(format!(
            "{} auth={}",
            request_line.trim_end(),
            auth.as_deref().unwrap_or("none")
        ));
        if auth.as_deref() != Some(GOOD_AUTH) {
            let stream = reader.get_mut();
            let _ = stream.write_all(
                b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"git\"\r\n\
                  Content-Length: 0\r\n\r\n",
            );
            let _ = stream.flush();
            continue;
        }
        let mut parts = request_line.split_whitespace();
        let method = parts.next().unwrap_or_default().to_owned();
        let target = parts.next().unwrap_or_default().to_owned();
        let (path, query) = target.split_once('?').unwrap_or((&target, ""));
        let mut child = Command::new("git")
            .arg("http-backend")
            .env_clear()
            .env("PATH", default_path())
            .env("HOME", home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_PROJECT_ROOT", root)
            .env("GIT_HTTP_EXPORT_ALL", "1")
            .env("REMOTE_USER", "x-access-token")
            .env("REQUEST_METHOD", &method)
            .env("PATH_INFO", path)
            .env("QUERY_STRING", query)
            .env("CONTENT_TYPE", header("content-type").unwrap_or_default())
            .env("CONTENT_LENGTH", body.len().to_string())
            .env(
                "HTTP_CONTENT_ENCODING",
                header("content-encoding").unwrap_or_default(),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("git http-backend");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(&body)
            .expect("feeding the backend");
        let out = child.wait_with_output().expect("the backend's answer");
        let split = out
            .stdout
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map(|i| (i, 4))
            .or_else(|| {
                out.stdout
                    .windows(2)
                    .position(|w| w == b"\n\n")
                    .map(|i| (i, 2))
            })
            .expect("CGI headers");
        let cgi_headers = String::from_utf8_lossy(&out.stdout[..split.0]).into_owned();
        let payload = &out.stdout[split.0 + split.1..];
        let mut status = "200 OK".to_owned();
        let mut response = Vec::new();
        for line in cgi_headers.lines() {
            if let Some(s) = line.strip_prefix("Status:") {
                status = s.trim().to_owned();
            } else {
                response.extend_from_slice(format!("{line}\r\n").as_bytes());
            }
        }
        let head = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\n", payload.len());
        let mut all = head.into_bytes();
        all.extend_from_slice(&response);
        all.extend_from_slice(b"\r\n");
        all.extend_from_slice(payload);
        let stream = reader.get_mut();
        if stream
            .write_all(&all)
            .and_then(|()| stream.flush())
            .is_err()
        {
            return;
        }
    }
}
