//! What a broken or hostile client gets: a 400 (or 408) with one line, never a panic, and a
//! gateway that goes on serving.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::harness::{Options, gateway, http_upstream};

#[tokio::test]
async fn malformed_heads_are_400_and_the_gateway_goes_on() {
    let up = http_upstream().await;
    let port = up.port;
    let h = gateway(
        &[format!("localhost:{port}"), format!("127.0.0.1:{port}")],
        Options::default(),
    )
    .await;
    let cases: [&[u8]; 5] = [
        b"GARBAGE\r\n\r\n",
        b"GET http://localhost/ HTTP/9.9\r\n\r\n",
        b"GET http://localhost/ HTTP/1.1\r\nBad Header\r\n\r\n",
        b"\x16\x03\x01\x00\x05hello\r\n\r\n",
        b"GET http://localhost/ HTTP/1.1\r\nX: a\x00b\r\n\r\n",
    ];
    for case in cases {
        let out = h.raw(case).await;
        assert!(
            out.starts_with("HTTP/1.1 400 Bad Request\r\n"),
            "{case:?}: {out}"
        );
        assert!(
            out.contains("forgeward egress: the head is malformed"),
            "{out}"
        );
    }
    let lines = h.wait_lines(cases.len()).await;
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("egress: request refused: the head is malformed")),
        "{lines:?}"
    );
    // Still serving.
    let out = h
        .raw(
            format!("GET http://localhost:{port}/after HTTP/1.1\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await;
    assert!(out.ends_with("ok GET /after"), "{out}");
}

#[tokio::test]
async fn an_oversized_head_is_400() {
    let h = gateway(&["localhost:80".to_owned()], Options::default()).await;
    let mut request = b"GET http://localhost/ HTTP/1.1\r\n".to_vec();
    for i in 0..2000 {
        request.extend_from_slice(format!("X-Filler-{i}: {}\r\n", "a".repeat(40)).as_bytes());
    }
    request.extend_from_slice(b"\r\n");
    assert!(request.len() > 64 * 1024);
    let out = h.raw(&request).await;
    assert!(out.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{out}");
    assert!(
        out.contains("larger than 64 KiB") || out.contains("more than 256 header fields"),
        "{out}"
    );

    let mut one = b"GET http://localhost/ HTTP/1.1\r\nX-Big: ".to_vec();
    one.extend(std::iter::repeat_n(b'a', 100_000));
    one.extend_from_slice(b"\r\n\r\n");
    let out = h.raw(&one).await;
    assert!(out.contains("the head is larger than 64 KiB"), "{out}");
}

#[tokio::test]
async fn a_head_that_never_ends_is_408_and_silence_is_closed() {
    let h = gateway(
        &["localhost:80".to_owned()],
        Options {
            head_timeout: Duration::from_millis(300),
            ..Options::default()
        },
    )
    .await;
    let started = std::time::Instant::now();
    let out = h.raw(b"GET http://localhost/ HTTP/1.1\r\nX-Slow: ").await;
    assert!(out.starts_with("HTTP/1.1 408 Request Timeout\r\n"), "{out}");
    assert!(started.elapsed() < Duration::from_secs(3));
    // A connection that never says anything is closed after the head timeout, silently.
    let mut quiet = TcpStream::connect(h.addr).await.unwrap();
    let mut buf = Vec::new();
    let n = tokio::time::timeout(Duration::from_secs(3), quiet.read_to_end(&mut buf))
        .await
        .expect("a silent connection was kept")
        .unwrap();
    assert_eq!(n, 0);
}

#[tokio::test]
async fn ambiguous_framing_is_refused() {
    let up = http_upstream().await;
    let port = up.port;
    let h = gateway(
        &[format!("localhost:{port}"), format!("127.0.0.1:{port}")],
        Options::default(),
    )
    .await;
    let cases = [
        "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n",
        "Content-Length: 3\r\nContent-Length: 4\r\n",
        "Transfer-Encoding: gzip\r\n",
        "Content-Length: -1\r\n",
    ];
    for framing in cases {
        let out = h
            .raw(
                format!("POST http://localhost:{port}/ HTTP/1.1\r\nHost: x\r\n{framing}\r\nabc")
                    .as_bytes(),
            )
            .await;
        assert!(
            out.starts_with("HTTP/1.1 400 Bad Request\r\n"),
            "{framing}: {out}"
        );
    }
    // A malformed chunk is caught mid-body.
    let mut s = TcpStream::connect(h.addr).await.unwrap();
    s.write_all(
        format!("POST http://localhost:{port}/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
            .as_bytes(),
    )
    .await
    .unwrap();
    let mut out = String::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_string(&mut out)).await;
    assert!(out.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{out}");
    assert!(up.seen().is_empty() || up.seen().iter().all(|r| r.body.is_empty()));
}
