//! Secret hosts: TLS ended with the job's CA, the placeholder swapped for the real value in
//! the configured header only, requests streamed over one kept-alive upstream, and every way
//! a value could leak closed.

use std::time::Duration;

use http_body_util::BodyExt;
use hyper::Request;
use hyper::body::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::harness::{
    Harness, Options, TestPki, Upstream, full, gateway, http1, https_upstream, read_response,
    secret, test_pki, tls,
};
use crate::egress::{Injection, Method, Outcome};

const REAL: &str = "sk-real-4f1b2c3d";
const OTHER_REAL: &str = "ghp_other_real_value";

struct Setup {
    h: Harness,
    up: Upstream,
    pki: TestPki,
}

/// An HTTPS upstream on `localhost`, a gateway allowing it with `injection` for `localhost`
/// (and a second secret, for another host) and the upstream's CA as an extra root.
async fn setup(injection: Injection) -> Setup {
    let pki = test_pki();
    let up = https_upstream(&pki).await;
    let port = up.port;
    let h = gateway(
        &[format!("localhost:{port}"), format!("127.0.0.1:{port}")],
        Options {
            secrets: vec![
                secret("ANTHROPIC_API_KEY", &["localhost"], injection, REAL),
                secret(
                    "GITHUB_TOKEN",
                    &["api.github.com"],
                    Injection::Authorization("Bearer".into()),
                    OTHER_REAL,
                ),
            ],
            extra_roots: vec![pki.ca.clone()],
            ..Options::default()
        },
    )
    .await;
    Setup { h, up, pki }
}

impl Setup {
    fn placeholder(&self, env: &str) -> String {
        self.h
            .secrets
            .iter()
            .find(|s| s.rule.env == env)
            .unwrap()
            .placeholder
            .clone()
    }

    /// CONNECT, then TLS trusting only the job's CA, then hyper.
    async fn client(&self) -> super::harness::Client {
        let (head, stream) = self.h.connect(&format!("localhost:{}", self.up.port)).await;
        assert!(head.starts_with("HTTP/1.1 200 "), "{head}");
        let tls = tls(stream, &[self.h.ca.cert_der().clone()], "localhost")
            .await
            .unwrap();
        http1(tls).await
    }

    fn host(&self) -> String {
        format!("localhost:{}", self.up.port)
    }
}

#[tokio::test]
async fn a_header_secret_is_injected_on_every_request_of_a_kept_alive_connection() {
    let s = setup(Injection::Header("x-api-key".into())).await;
    let ph = s.placeholder("ANTHROPIC_API_KEY");
    let mut client = s.client().await;
    for i in 0..3 {
        let res = client
            .send(
                Request::post(format!("/v1/messages/{i}"))
                    .header("host", s.host())
                    .header("x-api-key", &ph)
                    .header("anthropic-version", "2023-06-01")
                    .body(full(format!("{{\"n\": {i}}}")))
                    .unwrap(),
            )
            .await
            .unwrap();
        let (status, headers, body) = read_response(res).await;
        assert_eq!(status, 200);
        assert_eq!(body, format!("ok POST /v1/messages/{i}").as_bytes());
        s.h.assert_clean(headers.as_bytes(), "response headers");
        s.h.assert_clean(&body, "a response body");
    }
    // A chunked upload, streamed: its second half is sent only once the upstream has the
    // first, which a gateway holding whole bodies would never deliver.
    let (mut tx, body) =
        http_body_util::channel::Channel::<Bytes, std::convert::Infallible>::new(1);
    let send = client.send(
        Request::post("/upload")
            .header("host", s.host())
            .header("x-api-key", &ph)
            .body(body.boxed())
            .unwrap(),
    );
    let mut progress = s.up.upload_progress.clone();
    let feed = async move {
        tx.send_data(Bytes::from(vec![b'a'; 70_000])).await.unwrap();
        tokio::time::timeout(Duration::from_secs(10), progress.wait_for(|&n| n >= 70_000))
            .await
            .expect("the first half did not reach the upstream before the second was sent")
            .unwrap();
        tx.send_data(Bytes::from(vec![b'b'; 30_000])).await.unwrap();
    };
    let (res, ()) = tokio::join!(send, feed);
    let (status, _, body) = read_response(res.unwrap()).await;
    assert_eq!((status, body.as_slice()), (200, &b"got 100000"[..]));

    let seen = s.up.seen();
    assert_eq!(seen.len(), 4);
    for request in &seen {
        assert_eq!(request.header("x-api-key"), Some(REAL), "{request:?}");
    }
    assert_eq!(seen[3].header("transfer-encoding"), Some("chunked"));
    assert_eq!(seen[0].body, b"{\"n\": 0}");
    assert_eq!(
        s.up.connections.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "one kept-alive upstream connection"
    );
    drop(client);
    let lines = s.h.wait_lines(1).await;
    let port = s.up.port;
    assert!(
        lines[0].starts_with(&format!(
            "egress: CONNECT localhost:{port} allowed (127.0.0.1:{port}) sent "
        )),
        "{lines:?}"
    );
    assert!(
        lines[0].ends_with(", 4 requests, x-api-key from ANTHROPIC_API_KEY"),
        "{lines:?}"
    );
    let line = &s.h.log.lines()[0];
    assert!(line.sent > 100_000 && line.sent < 110_000, "{line:?}");
}

#[tokio::test]
async fn an_authorization_secret_is_injected_after_its_scheme() {
    let s = setup(Injection::Authorization("Bearer".into())).await;
    let ph = s.placeholder("ANTHROPIC_API_KEY");
    let mut client = s.client().await;
    for auth in [
        format!("Bearer {ph}"),
        "Bearer not-a-placeholder".to_owned(),
    ] {
        let res = client
            .send(
                Request::get("/me")
                    .header("host", s.host())
                    .header("authorization", &auth)
                    .body(full(""))
                    .unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(read_response(res).await.0, 200);
    }
    let seen = s.up.seen();
    assert_eq!(
        seen[0].header("authorization"),
        Some(&*format!("Bearer {REAL}"))
    );
    assert_eq!(
        seen[1].header("authorization"),
        Some("Bearer not-a-placeholder")
    );
    drop(client);
    let lines = s.h.wait_lines(1).await;
    assert!(
        lines[0].ends_with(", 2 requests, authorization (Bearer) from ANTHROPIC_API_KEY"),
        "{lines:?}"
    );
}

#[tokio::test]
async fn another_secrets_placeholder_is_refused_on_a_secret_host() {
    let s = setup(Injection::Header("x-api-key".into())).await;
    let foreign = s.placeholder("GITHUB_TOKEN");
    let port = s.up.port;
    for (path, header) in [
        ("/a".to_owned(), format!("Bearer {foreign}")),
        (format!("/b?token={foreign}"), "none".to_owned()),
    ] {
        let mut client = s.client().await;
        let res = client
            .send(
                Request::get(path)
                    .header("host", s.host())
                    .header("authorization", header)
                    .body(full(""))
                    .unwrap(),
            )
            .await
            .unwrap();
        let (status, headers, body) = read_response(res).await;
        assert_eq!(status, 403);
        s.h.assert_clean(headers.as_bytes(), "headers");
        assert_eq!(
            String::from_utf8(body).unwrap(),
            format!(
                "forgeward egress: the request carries the placeholder of GITHUB_TOKEN, which \
                 is not for localhost\n"
            )
        );
    }
    assert!(s.up.seen().is_empty(), "nothing was forwarded");
    let lines = s.h.wait_lines(4).await;
    let refused: Vec<&String> = lines.iter().filter(|l| l.contains("refused")).collect();
    assert_eq!(refused.len(), 2, "{lines:?}");
    for line in refused {
        assert_eq!(
            line,
            &format!(
                "egress: GET localhost:{port} refused: the request carries the placeholder of \
                 GITHUB_TOKEN, which is not for localhost"
            )
        );
    }
}

#[tokio::test]
async fn an_upstream_the_roots_do_not_trust_is_a_502_and_gets_nothing() {
    let pki = test_pki();
    let up = https_upstream(&pki).await;
    let port = up.port;
    // The gateway trusts another CA than the upstream's.
    let h = gateway(
        &[format!("localhost:{port}"), format!("127.0.0.1:{port}")],
        Options {
            secrets: vec![secret(
                "ANTHROPIC_API_KEY",
                &["localhost"],
                Injection::Header("x-api-key".into()),
                REAL,
            )],
            extra_roots: vec![test_pki().ca],
            ..Options::default()
        },
    )
    .await;
    let (head, mut stream) = h.connect(&format!("localhost:{port}")).await;
    assert!(head.starts_with("HTTP/1.1 502 Bad Gateway\r\n"), "{head}");
    let mut body = String::new();
    stream.read_to_string(&mut body).await.unwrap();
    h.assert_clean(body.as_bytes(), "the 502");
    assert!(body.contains("invalid peer certificate"), "{body}");
    let lines = h.wait_lines(1).await;
    assert!(
        lines[0].starts_with(&format!(
            "egress: CONNECT localhost:{port} failed: TLS with localhost:{port} (127.0.0.1:{port}) \
             failed: invalid peer certificate"
        )),
        "{lines:?}"
    );
    assert!(up.seen().is_empty());
    let totals = h.gateway.unwrap().shutdown().await;
    assert_eq!((totals.allowed, totals.failed), (0, 1));
}

#[tokio::test]
async fn a_secret_host_the_policy_refuses_is_never_served() {
    let pki = test_pki();
    let up = https_upstream(&pki).await;
    let h = gateway(
        &[format!("localhost:{}", up.port)],
        Options {
            secrets: vec![secret(
                "ANTHROPIC_API_KEY",
                &["localhost"],
                Injection::Header("x-api-key".into()),
                REAL,
            )],
            extra_roots: vec![pki.ca.clone()],
            ..Options::default()
        },
    )
    .await;
    let (head, _) = h.connect(&format!("localhost:{}", up.port)).await;
    assert!(head.starts_with("HTTP/1.1 403 "), "{head}");
    assert_eq!(up.connections.load(std::sync::atomic::Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_host_header_or_target_for_another_host_is_refused() {
    let s = setup(Injection::Header("x-api-key".into())).await;
    let ph = s.placeholder("ANTHROPIC_API_KEY");
    for (target, host) in [
        ("/x".to_owned(), "evil.example".to_owned()),
        ("https://evil.example/x".to_owned(), s.host()),
        ("/x".to_owned(), "localhost:1".to_owned()),
    ] {
        let mut client = s.client().await;
        let res = client
            .send(
                Request::get(target)
                    .header("host", host)
                    .header("x-api-key", &ph)
                    .body(full(""))
                    .unwrap(),
            )
            .await
            .unwrap();
        let (status, _, body) = read_response(res).await;
        assert_eq!(status, 403, "{}", String::from_utf8_lossy(&body));
    }
    assert!(s.up.seen().is_empty());
    s.h.lines();
}

#[tokio::test]
async fn responses_stream_and_expect_continue_is_honoured() {
    let s = setup(Injection::Header("x-api-key".into())).await;
    let ph = s.placeholder("ANTHROPIC_API_KEY");
    let mut client = s.client().await;
    let res = client
        .send(
            Request::get("/stream")
                .header("host", s.host())
                .header("x-api-key", &ph)
                .body(full(""))
                .unwrap(),
        )
        .await
        .unwrap();
    let mut body = res.into_body();
    // The first half arrives while the upstream holds the second back.
    let first = tokio::time::timeout(Duration::from_secs(10), body.frame())
        .await
        .expect("the first half was held back")
        .unwrap()
        .unwrap()
        .into_data()
        .unwrap();
    assert_eq!(&first[..], b"first half;");
    s.up.release.notify_one();
    let rest = body.collect().await.unwrap().to_bytes();
    assert_eq!(&rest[..], b"second half");
    drop(client);

    // Expect: 100-continue, by hand: the body goes only after the interim answer.
    let (_, stream) = s.h.connect(&s.host()).await;
    let mut tls = tls(stream, &[s.h.ca.cert_der().clone()], "localhost")
        .await
        .unwrap();
    tls.write_all(
        format!(
            "POST /upload HTTP/1.1\r\nHost: {}\r\nx-api-key: {ph}\r\nContent-Length: 5\r\n\
             Expect: 100-continue\r\n\r\n",
            s.host()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let interim = super::harness::read_head(&mut tls).await;
    assert_eq!(interim, "HTTP/1.1 100 Continue\r\n\r\n");
    tls.write_all(b"hello").await.unwrap();
    let head = super::harness::read_head(&mut tls).await;
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    let mut body = [0u8; 5];
    tls.read_exact(&mut body).await.unwrap();
    assert_eq!(&body, b"got 5");
    assert_eq!(s.up.seen().last().unwrap().header("x-api-key"), Some(REAL));
    drop(tls);
    for line in s.h.wait_lines(2).await {
        assert!(line.contains(" allowed "), "{line}");
    }
}

#[tokio::test]
async fn a_secret_hosts_tls_server_name_must_match_too() {
    let s = setup(Injection::Header("x-api-key".into())).await;
    let (_, stream) = s.h.connect(&s.host()).await;
    assert!(
        tls(stream, &[s.h.ca.cert_der().clone()], "example.com")
            .await
            .is_err()
    );
    let lines = s.h.wait_lines(1).await;
    assert!(
        lines[0].ends_with(
            "refused: the TLS server name example.com is not localhost, the host the CONNECT named"
        ),
        "{lines:?}"
    );
    let line = &s.h.log.lines()[0];
    assert_eq!((line.method.clone(), line.requests), (Method::Connect, 0));
    assert!(matches!(line.outcome, Outcome::Refused(_)));
    let _ = &s.pki;
}

#[tokio::test]
async fn a_value_the_upstream_echoes_back_is_masked() {
    let s = setup(Injection::Header("x-api-key".into())).await;
    let ph = s.placeholder("ANTHROPIC_API_KEY");
    let mut client = s.client().await;
    let res = client
        .send(
            Request::get("/echo-key")
                .header("host", s.host())
                .header("x-api-key", &ph)
                .header("accept-encoding", "gzip, br")
                .body(full(""))
                .unwrap(),
        )
        .await
        .unwrap();
    let (status, headers, body) = read_response(res).await;
    assert_eq!(status, 200);
    s.h.assert_clean(headers.as_bytes(), "response headers");
    s.h.assert_clean(&body, "the response body");
    let mask = "*".repeat(REAL.len());
    assert_eq!(
        String::from_utf8(body).unwrap(),
        format!("{{\"error\": \"invalid key {mask}\"}}")
    );
    assert!(
        headers.contains(&format!("\"x-echo\": \"{mask}\"")),
        "{headers}"
    );
    let seen = s.up.seen();
    assert_eq!(seen[0].header("x-api-key"), Some(REAL));
    assert_eq!(seen[0].header("accept-encoding"), Some("identity"));
}

#[tokio::test]
async fn a_malformed_request_inside_a_secret_hosts_tunnel_is_400() {
    let s = setup(Injection::Header("x-api-key".into())).await;
    let (_, stream) = s.h.connect(&s.host()).await;
    let mut tls = tls(stream, &[s.h.ca.cert_der().clone()], "localhost")
        .await
        .unwrap();
    tls.write_all(b"NOT HTTP AT ALL\r\n\r\n").await.unwrap();
    let mut out = Vec::new();
    let _ = tls.read_to_end(&mut out).await;
    let out = String::from_utf8_lossy(&out);
    assert!(out.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{out}");
    let port = s.up.port;
    let lines = s.h.wait_lines(2).await;
    assert!(
        lines[0].starts_with(&format!(
            "egress: request localhost:{port} refused: the head is malformed"
        )),
        "{lines:?}"
    );
    assert!(s.up.seen().is_empty());
}
