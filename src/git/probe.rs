//! Whether a git server answers, for `forgeward doctor`: a detached remote (no repository on
//! disk) connected for fetching, the way `git ls-remote` starts — `GET
//! <url>/info/refs?service=git-upload-pack`, through libgit2's own HTTP and TLS — offering no
//! credentials. Nothing is fetched and nothing is written anywhere.
//!
//! A forge asks for credentials for any repository it does not show anonymously, whether or
//! not it exists (so as not to tell which private repositories there are): a probe of a made-up
//! repository under the forge's git URL gets that challenge, which shows the TLS handshake
//! (certificate verified) and the smart-HTTP endpoint both work without knowing any
//! repository's name. A public repository's refs are the other answer that shows it.

use std::cell::Cell;

use git2::{Direction, ErrorClass, ErrorCode, Remote, RemoteCallbacks};

/// How a git server answered the probe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// It advertised the refs of a repository anyone may read.
    Refs(usize),
    /// It asked for credentials (`401` with a `WWW-Authenticate` challenge git understands).
    Challenge,
}

/// Why the probe got no git answer. Each carries libgit2's message (one line; the URL holds no
/// credentials, [`check_url`](super::mirror::check_url) refuses one that does).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The URL is not one the bot can use.
    Url(String),
    /// The host could not be resolved or connected to.
    Connect(String),
    /// The TLS handshake failed: a certificate that is not trusted or not the host's, or no
    /// TLS at all on the other end.
    Tls(String),
    /// The connection or the answer took longer than the process's network timeouts.
    Timeout(String),
    /// An HTTP server answered with a status that is neither refs nor a challenge (`404`).
    Status(u16),
    /// An HTTP server answered, but not as a git server does (HTML, say).
    NotGit(String),
    /// Anything else libgit2 reported.
    Other(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Url(m) | Failure::Connect(m) | Failure::Tls(m) | Failure::Other(m) => {
                f.write_str(m)
            }
            Failure::Timeout(m) => write!(f, "timed out: {m}"),
            Failure::Status(code) => write!(f, "HTTP {code} to git's request"),
            Failure::NotGit(m) => write!(f, "not a git server's answer: {m}"),
        }
    }
}

/// Connects to `url` (`https://host/owner/repo.git`) as a fetch would and hangs up. Blocking:
/// bounded by the socket timeouts set with
/// [`set_network_timeouts`](super::set_network_timeouts).
pub fn probe(url: &str) -> Result<Answer, Failure> {
    super::mirror::check_url(url).map_err(|e| Failure::Url(e.to_string()))?;
    let mut remote = Remote::create_detached(url).map_err(|e| Failure::Url(one_line(&e)))?;
    let challenged = Cell::new(false);
    let mut callbacks = RemoteCallbacks::new();
    callbacks.credentials(|_url, _user, _allowed| {
        challenged.set(true);
        Err(git2::Error::from_str(
            "no credentials offered: the probe only asks whether the server answers",
        ))
    });
    let connected = remote.connect_auth(Direction::Fetch, Some(callbacks), None);
    let refs = match connected {
        Ok(connection) => connection.list().map(<[_]>::len),
        Err(e) => Err(e),
    };
    match refs {
        Ok(count) => Ok(Answer::Refs(count)),
        Err(_) if challenged.get() => Ok(Answer::Challenge),
        Err(e) => Err(classify(&e)),
    }
}

fn classify(e: &git2::Error) -> Failure {
    let message = one_line(e);
    if e.code() == ErrorCode::Timeout || message.contains("timed out") {
        return Failure::Timeout(message);
    }
    if e.code() == ErrorCode::Certificate
        || e.class() == ErrorClass::Ssl
        || message.starts_with("SSL error")
        || message.contains("certificate")
    {
        return Failure::Tls(message);
    }
    if let Some(code) = message
        .strip_prefix("unexpected http status code: ")
        .and_then(|c| c.trim().parse().ok())
    {
        return Failure::Status(code);
    }
    if message.contains("content-type") {
        return Failure::NotGit(message);
    }
    match e.class() {
        ErrorClass::Net | ErrorClass::Os => Failure::Connect(message),
        _ => Failure::Other(message),
    }
}

fn one_line(e: &git2::Error) -> String {
    e.message().split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A one-shot HTTP server answering whatever it is asked with `response`.
    fn answering(response: &'static str) -> u16 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten().take(4) {
                let mut stream = stream;
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf);
                let _ = stream.write_all(response.as_bytes());
            }
        });
        port
    }

    #[test]
    fn a_challenge_is_a_git_servers_answer() {
        let port = answering(
            "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"git\"\r\nContent-Length: 0\r\n\r\n",
        );
        let url = format!("http://127.0.0.1:{port}/acme/probe.git");
        assert_eq!(probe(&url), Ok(Answer::Challenge));
    }

    #[test]
    fn a_web_page_is_not() {
        let port = answering(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\nhello",
        );
        let url = format!("http://127.0.0.1:{port}/acme/probe.git");
        assert!(
            matches!(probe(&url), Err(Failure::NotGit(_))),
            "{:?}",
            probe(&url)
        );
        let port = answering("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        let url = format!("http://127.0.0.1:{port}/acme/probe.git");
        assert_eq!(probe(&url), Err(Failure::Status(404)));
    }

    #[test]
    fn nothing_listening_is_a_connect_failure_and_plain_http_is_no_tls() {
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            listener.local_addr().expect("addr").port()
        };
        let url = format!("http://127.0.0.1:{port}/acme/probe.git");
        assert!(
            matches!(probe(&url), Err(Failure::Connect(_))),
            "{:?}",
            probe(&url)
        );
        let port = answering("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        let url = format!("https://127.0.0.1:{port}/acme/probe.git");
        assert!(
            matches!(probe(&url), Err(Failure::Tls(_))),
            "{:?}",
            probe(&url)
        );
    }

    #[test]
    fn credentials_in_the_url_are_refused_before_libgit2_sees_them() {
        let e = probe("https://user:hunter22@example.com/a/b.git").expect_err("refused");
        assert!(!e.to_string().contains("hunter22"), "{e}");
    }
}
