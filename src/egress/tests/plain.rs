//! Plain-HTTP proxying: absolute-form requests forwarded in origin form, kept alive per
//! worker connection, placeholders never sent in plain text.

use hyper::Request;
use tokio::net::TcpStream;

use super::harness::{Options, full, gateway, http_upstream, http1, read_response, secret};
use crate::egress::Injection;

fn allow(port: u16) -> Vec<String> {
    vec![format!("localhost:{port}"), format!("127.0.0.1:{port}")]
}

#[tokio::test]
async fn an_absolute_form_request_goes_on_in_origin_form_without_proxy_headers() {
    let up = http_upstream().await;
    let port = up.port;
    let h = gateway(&allow(port), Options::default()).await;
    let out = h
        .raw(
            format!(
                "GET http://LOCALHOST:{port}/path?q=1 HTTP/1.1\r\nHost: wrong.example\r\n\
                 Proxy-Authorization: Basic dXNlcjpwYXNz\r\nProxy-Connection: keep-alive\r\n\
                 Connection: close, x-drop-me\r\nX-Drop-Me: 1\r\nX-Keep: 2\r\n\r\n"
            )
            .as_bytes(),
        )
        .await;
    assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{out}");
    assert!(out.ends_with("ok GET /path?q=1"), "{out}");
    let seen = up.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        (seen[0].method.as_str(), seen[0].uri.as_str()),
        ("GET", "/path?q=1")
    );
    assert_eq!(seen[0].header("host"), Some(&*format!("LOCALHOST:{port}")));
    assert_eq!(seen[0].header("x-keep"), Some("2"));
    for gone in ["proxy-authorization", "proxy-connection", "x-drop-me"] {
        assert_eq!(seen[0].header(gone), None, "{gone} was forwarded");
    }
    let lines = h.wait_lines(1).await;
    assert!(
        lines[0].starts_with(&format!(
            "egress: GET localhost:{port} allowed (127.0.0.1:{port}) sent "
        )),
        "{lines:?}"
    );
    assert!(lines[0].ends_with(", 1 request"), "{lines:?}");
    // A URL with a query and no path goes on as `/?query`.
    let out = h
        .raw(
            format!("GET http://localhost:{port}?q=2 HTTP/1.1\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await;
    assert!(out.ends_with("ok GET /?q=2"), "{out}");
}

#[tokio::test]
async fn one_worker_connection_reaches_several_hosts_each_kept_alive() {
    let a = http_upstream().await;
    let b = http_upstream().await;
    let mut list = allow(a.port);
    list.extend(allow(b.port));
    let h = gateway(&list, Options::default()).await;
    let mut client = http1(TcpStream::connect(h.addr).await.unwrap()).await;
    for port in [a.port, a.port, b.port, b.port, b.port] {
        let res = client
            .send(
                Request::post(format!("http://localhost:{port}/p"))
                    .body(full("body"))
                    .unwrap(),
            )
            .await
            .unwrap();
        let (status, _, body) = read_response(res).await;
        assert_eq!((status, body.as_slice()), (200, &b"ok POST /p"[..]));
    }
    assert_eq!(a.seen().len(), 2);
    assert_eq!(b.seen().len(), 3);
    assert_eq!(b.seen()[0].body, b"body");
    for up in [&a, &b] {
        assert_eq!(up.connections.load(std::sync::atomic::Ordering::SeqCst), 1);
    }
    drop(client);
    let lines = h.wait_lines(2).await;
    assert!(
        lines[0].contains(&format!("localhost:{} ", a.port)) && lines[0].ends_with(", 2 requests"),
        "{lines:?}"
    );
    assert!(
        lines[1].contains(&format!("localhost:{} ", b.port)) && lines[1].ends_with(", 3 requests"),
        "{lines:?}"
    );
}

#[tokio::test]
async fn a_placeholder_is_never_sent_in_plain_http() {
    let up = http_upstream().await;
    let port = up.port;
    let h = gateway(
        &allow(port),
        Options {
            // The secret is for another host: this one is listed, plain, and not a secret's.
            secrets: vec![secret(
                "ANTHROPIC_API_KEY",
                &["api.anthropic.com"],
                Injection::Header("x-api-key".into()),
                "sk-plain-never",
            )],
            ..Options::default()
        },
    )
    .await;
    let ph = h.secrets[0].placeholder.clone();
    for request in [
        format!(
            "GET http://localhost:{port}/ HTTP/1.1\r\nHost: localhost\r\nx-api-key: {ph}\r\n\r\n"
        ),
        format!("GET http://localhost:{port}/?k={ph} HTTP/1.1\r\nHost: localhost\r\n\r\n"),
    ] {
        let out = h.raw(request.as_bytes()).await;
        assert!(out.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{out}");
        assert!(
            out.ends_with(
                "forgeward egress: the request carries the placeholder of ANTHROPIC_API_KEY \
                 in plain HTTP; it is only sent over TLS to api.anthropic.com\n"
            ),
            "{out}"
        );
    }
    assert!(up.seen().is_empty());
    let lines = h.wait_lines(2).await;
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with(&format!("egress: GET localhost:{port} refused: "))),
        "{lines:?}"
    );
}

#[tokio::test]
async fn requests_a_proxy_does_not_serve_are_400() {
    let h = gateway(&allow(80), Options::default()).await;
    let cases = [
        (
            "GET https://localhost/ HTTP/1.1\r\nHost: localhost\r\n\r\n",
            "use CONNECT",
        ),
        (
            "GET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\n",
            "this is a proxy",
        ),
        ("GET ftp://localhost/ HTTP/1.1\r\n\r\n", "only http"),
        (
            "GET http://user:pw@localhost/ HTTP/1.1\r\n\r\n",
            "user information",
        ),
        ("CONNECT localhost HTTP/1.1\r\n\r\n", "has no port"),
    ];
    for (request, want) in cases {
        let out = h.raw(request.as_bytes()).await;
        assert!(
            out.starts_with("HTTP/1.1 400 Bad Request\r\n"),
            "{request:?}: {out}"
        );
        assert!(out.contains(want), "{request:?}: {out}");
    }
    assert_eq!(h.wait_lines(cases.len()).await.len(), cases.len());
}

#[tokio::test]
async fn an_unreachable_upstream_is_a_502() {
    // A port nothing listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let h = gateway(&allow(port), Options::default()).await;
    let out = h
        .raw(format!("GET http://localhost:{port}/ HTTP/1.1\r\nHost: localhost\r\n\r\n").as_bytes())
        .await;
    assert!(out.starts_with("HTTP/1.1 502 Bad Gateway\r\n"), "{out}");
    assert!(
        out.contains(&format!(
            "could not connect to localhost:{port} (127.0.0.1:{port}: "
        )),
        "{out}"
    );
    let lines = h.wait_lines(1).await;
    assert!(
        lines[0].starts_with(&format!(
            "egress: GET localhost:{port} failed: could not connect"
        )),
        "{lines:?}"
    );
}

#[tokio::test]
async fn an_http_1_0_client_gets_a_chunked_answer_decoded_and_the_connection_closed() {
    let up = http_upstream().await;
    let port = up.port;
    // The upstream's chunked /stream sends both halves at once.
    up.release.notify_one();
    let h = gateway(&allow(port), Options::default()).await;
    let out = h
        .raw(format!("GET http://localhost:{port}/stream HTTP/1.0\r\n\r\n").as_bytes())
        .await;
    let (head, body) = out.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(head.contains("Connection: close"), "{head}");
    assert!(
        !head.to_ascii_lowercase().contains("transfer-encoding"),
        "{head}"
    );
    assert_eq!(body, "first half;second half");
}
