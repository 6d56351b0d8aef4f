//! `CONNECT`: what the allow list lets through, the opaque tunnel, its SNI check, its end.

use std::time::Duration;

use hyper::Request;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::harness::{
    Options, full, gateway, http1, https_upstream, read_head, read_response, test_pki, tls,
};
use crate::egress::{Method, Outcome};

fn allow(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn a_listed_name_is_tunnelled_and_its_line_counts_the_bytes() {
    let pki = test_pki();
    let up = https_upstream(&pki).await;
    let port = up.port;
    let mut h = gateway(
        &allow(&[&format!("localhost:{port}"), &format!("127.0.0.1:{port}")]),
        Options::default(),
    )
    .await;
    let (head, stream) = h.connect(&format!("localhost:{port}")).await;
    assert!(head.starts_with("HTTP/1.1 200 "), "{head}");
    // The upstream's own certificate, through the tunnel: the gateway does not touch it.
    let tls = tls(stream, std::slice::from_ref(&pki.ca), "localhost")
        .await
        .unwrap();
    let mut client = http1(tls).await;
    for _ in 0..2 {
        let res = client
            .send(
                Request::get("/big/100000")
                    .header("host", format!("localhost:{port}"))
                    .body(full(""))
                    .unwrap(),
            )
            .await
            .unwrap();
        let (status, _, body) = read_response(res).await;
        assert_eq!((status, body.len()), (200, 100_000));
    }
    drop(client);
    let lines = h.wait_lines(1).await;
    let line = &h.log.lines()[0];
    assert_eq!(line.method, Method::Connect);
    assert_eq!(line.outcome, Outcome::Allowed);
    assert_eq!(
        line.address,
        Some(format!("127.0.0.1:{port}").parse().unwrap())
    );
    assert_eq!(line.requests, 0, "a tunnel is opaque");
    assert!(
        line.received > 200_000 && line.received < 220_000,
        "{line:?}"
    );
    assert!(line.sent > 200 && line.sent < 5_000, "{line:?}");
    assert!(
        lines[0].starts_with(&format!(
            "egress: CONNECT localhost:{port} allowed (127.0.0.1:{port}) sent "
        )),
        "{lines:?}"
    );
    assert!(lines[0].contains("received 19"), "{lines:?}");
    let totals = h.shutdown().await;
    assert_eq!((totals.allowed, totals.refused), (1, 0));
    assert_eq!(
        totals.reached.into_iter().collect::<Vec<_>>(),
        [format!("localhost:{port}")]
    );
}

/// A refused CONNECT: its status, its one-line body, and its log line.
async fn refused(allowed: &[String], authority: &str) -> (String, String) {
    let h = gateway(allowed, Options::default()).await;
    let (head, mut stream) = h.connect(authority).await;
    let mut body = String::new();
    stream.read_to_string(&mut body).await.unwrap();
    let lines = h.wait_lines(1).await;
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(head.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{head}");
    assert!(head.contains("Content-Type: text/plain"), "{head}");
    assert_eq!(body.lines().count(), 1, "{body}");
    let why = body
        .trim()
        .strip_prefix("forgeward egress: ")
        .unwrap()
        .to_owned();
    assert!(
        lines[0].starts_with("egress: CONNECT ") && lines[0].ends_with(&format!(" refused: {why}")),
        "the line says what the body says: {lines:?}"
    );
    (head, why)
}

#[tokio::test]
async fn loopback_behind_a_listed_name_needs_an_ip_entry() {
    let (_, why) = refused(&allow(&["localhost:8443"]), "localhost:8443").await;
    assert_eq!(
        why,
        "localhost resolves only to 127.0.0.1, a loopback address not listed"
    );
}

#[tokio::test]
async fn names_not_listed_and_other_ports_are_refused() {
    let list = allow(&["pypi.example.com:443", "localhost:8443", "127.0.0.1:8443"]);
    let (_, why) = refused(&list, "example.org:443").await;
    assert_eq!(why, "example.org:443 is not on the allow list");
    let (_, why) = refused(&list, "pypi.example.com:80").await;
    assert_eq!(
        why,
        "pypi.example.com:80 is not on the allow list (listed for port 443 only)"
    );
    let (_, why) = refused(&list, "PyPI.example.com.:22").await;
    assert_eq!(
        why,
        "pypi.example.com:22 is not on the allow list (listed for port 443 only)"
    );
}

#[tokio::test]
async fn a_literal_ip_matches_ip_entries_only() {
    let (_, why) = refused(&allow(&["localhost:8443"]), "127.0.0.1:8443").await;
    assert_eq!(why, "127.0.0.1 is a loopback address");
    let (_, why) = refused(&allow(&["localhost:8443"]), "93.184.216.34:443").await;
    assert_eq!(why, "93.184.216.34:443 is not on the allow list");

    // Listed, it is reached; TLS by address sends no server name, which the SNI check allows.
    let pki = test_pki();
    let up = https_upstream(&pki).await;
    let h = gateway(
        &allow(&[&format!("127.0.0.1:{}", up.port)]),
        Options::default(),
    )
    .await;
    let (head, stream) = h.connect(&format!("127.0.0.1:{}", up.port)).await;
    assert!(head.starts_with("HTTP/1.1 200 "), "{head}");
    let tls = tls(stream, std::slice::from_ref(&pki.ca), "127.0.0.1")
        .await
        .unwrap();
    let mut client = http1(tls).await;
    let res = client
        .send(
            Request::get("/x")
                .header("host", "127.0.0.1")
                .body(full(""))
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(read_response(res).await.2, b"ok GET /x");
}

#[tokio::test]
async fn the_metadata_address_and_private_ranges_are_refused_in_every_spelling() {
    let list = allow(&["localhost:80"]);
    let cases = [
        (
            "169.254.169.254:80",
            "169.254.169.254 is the cloud metadata address",
        ),
        (
            "[fd00:ec2::254]:80",
            "[fd00:ec2::254] is the cloud metadata address",
        ),
        (
            "[::ffff:169.254.169.254]:80",
            "169.254.169.254 is the cloud metadata address",
        ),
        ("10.1.2.3:80", "10.1.2.3 is a private address (10.0.0.0/8)"),
        (
            "100.100.100.200:80",
            "100.100.100.200 is a shared address (100.64.0.0/10, CGNAT)",
        ),
        ("[::1]:80", "[::1] is a loopback address"),
        ("0.0.0.0:80", "0.0.0.0 is the unspecified address"),
    ];
    for (authority, want) in cases {
        let (_, why) = refused(&list, authority).await;
        assert_eq!(why, want, "{authority}");
    }
}

#[tokio::test]
async fn a_suffix_entry_matches_names_below_it_not_itself() {
    let (_, why) = refused(
        &allow(&["*.localhost:8443", "127.0.0.1:8443"]),
        "localhost:8443",
    )
    .await;
    assert_eq!(why, "localhost:8443 is not on the allow list");
    // A name below gets past the list: whatever it resolves to is judged next (here, no
    // resolver knows it, or it is loopback and listed), never "not on the allow list".
    let h = gateway(&allow(&["*.localhost:8443"]), Options::default()).await;
    let (head, _) = h.connect("api.localhost:8443").await;
    let lines = h.wait_lines(1).await;
    assert!(!lines[0].contains("not on the allow list"), "{lines:?}");
    assert!(!head.starts_with("HTTP/1.1 200"), "{head}");
}

#[tokio::test]
async fn a_tls_server_name_other_than_the_connect_host_is_refused() {
    let pki = test_pki();
    let up = https_upstream(&pki).await;
    let port = up.port;
    let h = gateway(
        &allow(&[&format!("localhost:{port}"), &format!("127.0.0.1:{port}")]),
        Options::default(),
    )
    .await;
    let (head, stream) = h.connect(&format!("localhost:{port}")).await;
    assert!(head.starts_with("HTTP/1.1 200 "), "{head}");
    // The hello says example.com: the handshake never reaches the upstream.
    let err = tls(stream, std::slice::from_ref(&pki.ca), "example.com")
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.kind(),
            std::io::ErrorKind::UnexpectedEof
                | std::io::ErrorKind::ConnectionReset
                | std::io::ErrorKind::BrokenPipe
        ),
        "{err}"
    );
    let lines = h.wait_lines(1).await;
    assert_eq!(
        lines,
        [format!(
            "egress: CONNECT localhost:{port} refused: the TLS server name example.com is not \
             localhost, the host the CONNECT named"
        )]
    );
    assert!(up.seen().is_empty());
    let totals = h.gateway.unwrap().shutdown().await;
    assert_eq!((totals.allowed, totals.refused), (0, 1));
}

#[tokio::test]
async fn a_protocol_that_is_not_tls_passes_the_sni_check() {
    let up = super::harness::http_upstream().await;
    let port = up.port;
    let h = gateway(
        &allow(&[&format!("localhost:{port}"), &format!("127.0.0.1:{port}")]),
        Options::default(),
    )
    .await;
    let (_, mut stream) = h.connect(&format!("localhost:{port}")).await;
    stream
        .write_all(b"GET /plain HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).await.unwrap();
    assert!(out.starts_with("HTTP/1.1 200 OK"), "{out}");
    assert!(out.ends_with("ok GET /plain"), "{out}");
}

#[tokio::test]
async fn shutdown_ends_open_tunnels_and_each_still_logs() {
    let up = super::harness::http_upstream().await;
    let port = up.port;
    let mut h = gateway(
        &allow(&[&format!("localhost:{port}"), &format!("127.0.0.1:{port}")]),
        Options::default(),
    )
    .await;
    let (_, stream) = h.connect(&format!("localhost:{port}")).await;
    let mut client = http1(stream).await;
    let res = client
        .send(
            Request::get("/one")
                .header("host", "localhost")
                .body(full(""))
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(read_response(res).await.0, 200);
    // The tunnel is open and idle; shutdown must not wait for it.
    let (_, mut second) = h.connect(&format!("localhost:{port}")).await;
    let totals = tokio::time::timeout(Duration::from_secs(5), h.shutdown())
        .await
        .expect("shutdown waited for open tunnels");
    assert_eq!(totals.allowed, 2);
    assert_eq!(h.lines().len(), 2);
    let mut rest = Vec::new();
    let n = tokio::time::timeout(Duration::from_secs(5), second.read_to_end(&mut rest))
        .await
        .expect("the tunnel stayed open")
        .unwrap_or(0);
    assert_eq!(n, 0);
    assert!(
        client
            .send(Request::get("/two").body(full("")).unwrap())
            .await
            .is_err()
    );
}

#[tokio::test]
async fn an_idle_tunnel_is_closed() {
    let up = super::harness::http_upstream().await;
    let port = up.port;
    let h = gateway(
        &allow(&[&format!("localhost:{port}"), &format!("127.0.0.1:{port}")]),
        Options {
            idle_timeout: Duration::from_millis(300),
            ..Options::default()
        },
    )
    .await;
    let (head, mut stream) = h.connect(&format!("localhost:{port}")).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let started = std::time::Instant::now();
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut rest))
        .await
        .expect("the idle tunnel stayed open")
        .unwrap();
    assert!(started.elapsed() >= Duration::from_millis(250));
    assert_eq!(h.wait_lines(1).await.len(), 1);
}

#[tokio::test]
async fn the_gateway_serves_a_unix_socket() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("egress.sock");
    let listener = tokio::net::UnixListener::bind(&path).unwrap();
    let log = std::sync::Arc::new(super::harness::Capture::default());
    let up = super::harness::http_upstream().await;
    let port = up.port;
    let config = crate::egress::GatewayConfig::new(
        std::sync::Arc::new(crate::egress::Policy::new(super::harness::entries(&allow(
            &[&format!("localhost:{port}"), &format!("127.0.0.1:{port}")],
        )))),
        Vec::new(),
        std::sync::Arc::new(crate::egress::JobCa::generate().unwrap()),
        log.clone(),
    );
    let gateway = crate::egress::Gateway::start(listener, config);
    let mut stream = tokio::net::UnixStream::connect(&path).await.unwrap();
    stream
        .write_all(format!("CONNECT localhost:{port} HTTP/1.1\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let head = read_head(&mut stream).await;
    assert_eq!(head, "HTTP/1.1 200 Connection established\r\n\r\n");
    stream
        .write_all(b"GET /unix HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).await.unwrap();
    assert!(out.ends_with("ok GET /unix"), "{out}");
    let totals = gateway.shutdown().await;
    assert_eq!(totals.allowed, 1);
    assert_eq!(log.lines().len(), 1);
}

#[tokio::test]
async fn connections_past_the_cap_wait_for_a_free_one() {
    let up = super::harness::http_upstream().await;
    let port = up.port;
    let h = gateway(
        &allow(&[&format!("localhost:{port}"), &format!("127.0.0.1:{port}")]),
        Options {
            max_connections: 1,
            ..Options::default()
        },
    )
    .await;
    let (head, first) = h.connect(&format!("localhost:{port}")).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let mut second = tokio::net::TcpStream::connect(h.addr).await.unwrap();
    second
        .write_all(format!("CONNECT localhost:{port} HTTP/1.1\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut byte = [0u8; 1];
    assert!(
        tokio::time::timeout(Duration::from_millis(300), second.read(&mut byte))
            .await
            .is_err(),
        "a second connection was served past the cap"
    );
    drop(first);
    let head = read_head(&mut second).await;
    assert_eq!(head, "HTTP/1.1 200 Connection established\r\n\r\n");
}

#[tokio::test]
async fn a_gateway_dropped_without_shutdown_stops_too() {
    let up = super::harness::http_upstream().await;
    let port = up.port;
    let mut h = gateway(
        &allow(&[&format!("localhost:{port}"), &format!("127.0.0.1:{port}")]),
        Options::default(),
    )
    .await;
    let (_, mut open) = h.connect(&format!("localhost:{port}")).await;
    drop(h.gateway.take());
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), open.read_to_end(&mut rest))
        .await
        .expect("the tunnel outlived its gateway")
        .unwrap();
    assert_eq!(h.wait_lines(1).await.len(), 1);
    let mut refused = false;
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(h.addr).await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(refused, "the listener is still open");
}
