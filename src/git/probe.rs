//! Whether a git server answers, for `forgeward doctor`: a detached remote (no repository on
//! disk) connected for fetching, the way `git ls-remote` starts — `GET
//! <url>/info/refs?service=git-upload-pack`, through the transport every fetch uses
//! ([`super::http`]) — offering no credentials. Nothing is fetched and nothing is written anywhere.
//!
//! A forge asks for credentials for any repository it does not show anonymously, whether or
//! not it exists (so as not to tell which private repositories there are): a probe of a made-up
//! repository under the forge's git URL gets that challenge, which shows the TLS handshake
//! (certificate verified) and the smart-HTTP endpoint both work without knowing any
//! repository's name. A public repository's refs are the other answer that shows it.

use git2::{Direction, Remote};

pub use super::http::Failure;

/// How a git server answered the probe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// It advertised the refs of a repository anyone may read.
    Refs(usize),
    /// It asked for credentials (`401` with a `WWW-Authenticate` challenge).
    Challenge,
}

/// Connects to `url` (`https://host/owner/repo.git`) as a fetch would and hangs up. Blocking:
/// bounded by the socket timeouts set with
/// [`set_network_timeouts`](super::set_network_timeouts).
pub fn probe(url: &str) -> Result<Answer, Failure> {
    super::mirror::check_url(url).map_err(|e| Failure::Url(e.to_string()))?;
    let (refs, seen) = super::http::session(None, || {
        let mut remote = Remote::create_detached(url)?;
        let connection = remote.connect_auth(Direction::Fetch, None, None)?;
        connection.list().map(<[_]>::len)
    });
    match refs {
        Ok(count) => Ok(Answer::Refs(count)),
        Err(_) if seen.challenged => Ok(Answer::Challenge),
        Err(e) => Err(seen.failure.unwrap_or_else(|| Failure::Other(one_line(&e)))),
    }
}

fn one_line(e: &git2::Error) -> String {
    crate::text::one_line(e.message())
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
    fn a_redirect_is_not_followed_and_a_bare_401_is_no_challenge() {
        let elsewhere = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        elsewhere.set_nonblocking(true).expect("non-blocking");
        let target = elsewhere.local_addr().expect("addr").port();
        let redirect: &'static str = Box::leak(
            format!(
                "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:{target}/acme/probe.git/info/refs?service=git-upload-pack\r\nContent-Length: 0\r\n\r\n"
            )
            .into_boxed_str(),
        );
        let port = answering(redirect);
        let url = format!("http://127.0.0.1:{port}/acme/probe.git");
        assert_eq!(probe(&url), Err(Failure::Status(302)));
        assert!(elsewhere.accept().is_err(), "the redirect was followed");

        let port = answering("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n");
        let url = format!("http://127.0.0.1:{port}/acme/probe.git");
        assert_eq!(probe(&url), Err(Failure::Status(401)));
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
