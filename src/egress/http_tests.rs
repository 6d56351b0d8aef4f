use std::time::Duration;

use super::*;
use crate::egress::body::{Out, copy_body};

const WAIT: Duration = Duration::from_secs(5);

async fn reader(bytes: &[u8]) -> Reader<&[u8]> {
    Reader::new(bytes)
}

#[tokio::test]
async fn pipelined_heads_are_read_one_by_one() {
    let mut r = reader(
        b"GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\nPOST http://b/x HTTP/1.0\r\nContent-Length: 2\r\n\r\nhi",
    )
    .await;
    let first = r.request_head(WAIT, WAIT).await.unwrap().unwrap();
    assert_eq!(
        (first.method.as_str(), first.target.as_str(), first.version),
        ("GET", "http://a/", 1)
    );
    let second = r.request_head(WAIT, WAIT).await.unwrap().unwrap();
    assert_eq!(second.method, "POST");
    assert_eq!(request_framing(&second).unwrap(), Framing::Length(2));
    assert!(wants_close(second.version, &second.headers));
    assert_eq!(r.buffered(), b"hi");
}

#[tokio::test]
async fn an_empty_stream_is_no_head_and_a_cut_one_is_truncated() {
    assert!(
        reader(b"")
            .await
            .request_head(WAIT, WAIT)
            .await
            .unwrap()
            .is_none()
    );
    assert!(matches!(
        reader(b"GET / HTTP/1.1\r\nHo")
            .await
            .request_head(WAIT, WAIT)
            .await,
        Err(HeadError::Truncated)
    ));
}

fn head(headers: &[(&str, &str)]) -> RequestHead {
    RequestHead {
        method: "POST".into(),
        target: "/".into(),
        version: 1,
        headers: headers
            .iter()
            .map(|(n, v)| Header {
                name: n.to_string(),
                value: v.as_bytes().to_vec(),
            })
            .collect(),
    }
}

#[test]
fn request_framing_is_strict() {
    assert_eq!(request_framing(&head(&[])).unwrap(), Framing::None);
    assert_eq!(
        request_framing(&head(&[("Content-Length", "0")])).unwrap(),
        Framing::None
    );
    assert_eq!(
        request_framing(&head(&[("content-length", "5"), ("Content-Length", "5")])).unwrap(),
        Framing::Length(5)
    );
    assert_eq!(
        request_framing(&head(&[("Transfer-Encoding", "gzip, Chunked")])).unwrap(),
        Framing::Chunked
    );
    for bad in [
        vec![("Content-Length", "5"), ("Content-Length", "6")],
        vec![("Content-Length", "5, 6")],
        vec![("Content-Length", "0x5")],
        vec![("Content-Length", "")],
        vec![("Transfer-Encoding", "chunked"), ("Content-Length", "5")],
        vec![("Transfer-Encoding", "chunked, gzip")],
    ] {
        assert!(request_framing(&head(&bad)).is_err(), "{bad:?}");
    }
}

#[test]
fn response_framing_follows_the_request_and_status() {
    let res = |status: u16, headers: &[(&str, &str)]| ResponseHead {
        status,
        reason: String::new(),
        version: 1,
        headers: head(headers).headers,
    };
    assert_eq!(
        response_framing("HEAD", &res(200, &[("Content-Length", "9")])).unwrap(),
        Framing::None
    );
    assert_eq!(
        response_framing("GET", &res(204, &[])).unwrap(),
        Framing::None
    );
    assert_eq!(
        response_framing("GET", &res(304, &[("Content-Length", "9")])).unwrap(),
        Framing::None
    );
    assert_eq!(
        response_framing("GET", &res(200, &[])).unwrap(),
        Framing::UntilClose
    );
    assert_eq!(
        response_framing("GET", &res(200, &[("Transfer-Encoding", "chunked")])).unwrap(),
        Framing::Chunked
    );
}

#[test]
fn hop_by_hop_and_proxy_headers_are_dropped() {
    let h = head(&[
        ("Connection", "keep-alive, X-Secret-Hop"),
        ("X-Secret-Hop", "1"),
        ("Keep-Alive", "timeout=5"),
        ("Proxy-Authorization", "Basic x"),
        ("Proxy-Foo", "1"),
        ("TE", "trailers"),
        ("Upgrade", "h2c"),
        ("Host", "a"),
        ("Content-Length", "3"),
        ("Accept", "*/*"),
        ("X-Api-Key", "k"),
    ]);
    let kept: Vec<&str> = end_to_end(&h.headers).map(|h| h.name.as_str()).collect();
    assert_eq!(kept, ["Accept", "X-Api-Key"]);
}

async fn rechunk(
    input: &[u8],
    framing: Framing,
    out: Out,
) -> Result<(Vec<u8>, Vec<u8>), BodyError> {
    let mut r = Reader::new(input);
    let mut sink = Vec::new();
    {
        let mut w = Writer::new(&mut sink);
        copy_body(&mut r, &mut w, framing, out, None).await?;
    }
    Ok((sink, r.buffered().to_vec()))
}

#[tokio::test]
async fn chunked_bodies_are_decoded_and_written_again() {
    let (out, rest) = rechunk(
        b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\nNEXT",
        Framing::Chunked,
        Out::Chunked,
    )
    .await
    .unwrap();
    assert_eq!(
        out,
        b"5\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"
    );
    assert_eq!(rest, b"NEXT");
    let (out, _) = rechunk(b"5\r\nhello\r\n0\r\n\r\n", Framing::Chunked, Out::Raw)
        .await
        .unwrap();
    assert_eq!(out, b"hello");
    let (out, rest) = rechunk(b"abcdef", Framing::Length(4), Out::Raw)
        .await
        .unwrap();
    assert_eq!(
        (out.as_slice(), rest.as_slice()),
        (&b"abcd"[..], &b"ef"[..])
    );
    let (out, _) = rechunk(b"until close", Framing::UntilClose, Out::Chunked)
        .await
        .unwrap();
    assert_eq!(out, b"b\r\nuntil close\r\n0\r\n\r\n");
}

#[tokio::test]
async fn malformed_chunks_are_errors() {
    for bad in [
        &b"zz\r\nhello\r\n0\r\n\r\n"[..],
        b"5\r\nhelloXX\r\n0\r\n\r\n",
        b"ffffffffffffffffff\r\n",
        b"5\r\nhel",
    ] {
        assert!(
            rechunk(bad, Framing::Chunked, Out::Chunked).await.is_err(),
            "{bad:?}"
        );
    }
    assert!(matches!(
        rechunk(b"abc", Framing::Length(10), Out::Raw).await,
        Err(BodyError::Source(_))
    ));
}

#[test]
fn error_answers_are_one_plain_line() {
    let bytes = error_response(403, "no\r\nInjected: header");
    let text = String::from_utf8(bytes).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 403 Forbidden\r\n"));
    assert!(head.contains(&format!("Content-Length: {}", body.len())));
    assert_eq!(body, "forgeward egress: no  Injected: header\n");
}
