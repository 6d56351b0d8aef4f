//! One request forwarded and its response relayed, for both plain HTTP and a secret host's
//! tunnel: the request's body is streamed up while the response is read, so an upstream that
//! answers early (a 413, a `100 Continue` the client waits for) is heard at once.

use std::net::SocketAddr;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};

use super::body::{self, Out};
use super::http::{
    self, BodyError, Framing, Header, Reader, RequestHead, Writer, end_to_end, put_header,
};

/// A kept-alive connection to one upstream.
pub(crate) struct Upstream<R, W> {
    pub(crate) reader: Reader<R>,
    pub(crate) writer: Writer<W>,
    pub(crate) addr: SocketAddr,
    /// Whether a request has gone over it already (a failure may then be a stale connection).
    pub(crate) reused: bool,
}

/// The request as it goes upstream.
pub(crate) struct Outgoing {
    /// Request line and headers, framing header included.
    pub(crate) head: Vec<u8>,
    pub(crate) framing: Framing,
    pub(crate) method: String,
    /// The worker's HTTP version (0 or 1): a 1.0 client gets no chunked body and no 1xx.
    pub(crate) client_version: u8,
    /// Whether the worker asked to close after this request.
    pub(crate) client_close: bool,
    /// Values masked in the response (a secret host's real values, should it echo them).
    pub(crate) redact: Vec<Vec<u8>>,
}

/// Builds the head sent upstream: origin-form `target`, `Host: authority`, the worker's
/// end-to-end headers (each passed through `map`, which may replace a value), `extra`
/// headers, framing.
pub(crate) fn outgoing_head(
    head: &RequestHead,
    target: &str,
    authority: &str,
    framing: Framing,
    extra: &[(&str, &[u8])],
    mut map: impl FnMut(&Header) -> Option<Vec<u8>>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(head.method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(target.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    put_header(&mut out, "Host", authority.as_bytes());
    for h in end_to_end(&head.headers) {
        match map(h) {
            Some(value) => put_header(&mut out, &h.name, &value),
            None => put_header(&mut out, &h.name, &h.value),
        }
    }
    for (name, value) in extra {
        put_header(&mut out, name, value);
    }
    let body_out = if framing == Framing::Chunked {
        Out::Chunked
    } else {
        Out::Raw
    };
    body::put_framing(&mut out, framing, body_out);
    out.extend_from_slice(b"\r\n");
    out
}

#[derive(Debug)]
pub(crate) struct Exchanged {
    /// Whether the worker's connection can take another request.
    pub(crate) keep_client: bool,
    /// Whether the upstream connection can take another request.
    pub(crate) keep_upstream: bool,
}

#[derive(Debug)]
pub(crate) enum ExchangeError {
    /// The upstream closed a reused connection without answering and nothing of the request
    /// body was taken from the worker: the request may be sent again on a new connection.
    Stale,
    /// The upstream failed before the worker got any byte of a response: answer 502.
    Upstream(String),
    /// The worker's request body was malformed before any response went out: answer 400.
    BadBody(String),
    /// The exchange broke with a response under way, or on the worker's side: close.
    Broken(String),
}

pub(crate) struct Timeouts {
    /// The wait for an upstream's response (an API may think for minutes).
    pub(crate) response: Duration,
    /// A response head, once its first byte arrived.
    pub(crate) head: Duration,
}

/// Sends `req` over `up` and relays the response to the worker.
pub(crate) async fn exchange<CR, CW, UR, UW>(
    client_r: &mut Reader<CR>,
    client_w: &mut Writer<CW>,
    up: &mut Upstream<UR, UW>,
    req: &Outgoing,
    timeouts: &Timeouts,
) -> Result<Exchanged, ExchangeError>
where
    CR: AsyncRead + Unpin,
    CW: AsyncWrite + Unpin,
    UR: AsyncRead + Unpin,
    UW: AsyncWrite + Unpin,
{
    let reused = std::mem::replace(&mut up.reused, true);
    let Upstream {
        reader: up_r,
        writer: up_w,
        ..
    } = up;
    up_w.put(&req.head);
    if let Err(e) = up_w.flush().await {
        return Err(if reused {
            ExchangeError::Stale
        } else {
            ExchangeError::Upstream(format!("sending the request failed ({e})"))
        });
    }
    let body_out = if req.framing == Framing::Chunked {
        Out::Chunked
    } else {
        Out::Raw
    };
    let started = AtomicBool::new(false);
    let body_taken = AtomicBool::new(false);
    let mut uploaded: Option<bool> = (req.framing == Framing::None).then_some(true);
    let outcome = {
        let upload = pin!(async {
            body_taken.store(true, Ordering::Relaxed);
            body::copy_body(client_r, up_w, req.framing, body_out, None).await
        });
        let download = pin!(relay_response(up_r, client_w, req, timeouts, &started));
        let (mut upload, mut download) = (upload, download);
        loop {
            tokio::select! {
                r = &mut upload, if uploaded.is_none() => match r {
                    Ok(()) => uploaded = Some(true),
                    // The upstream stopped reading: its answer may say why.
                    Err(BodyError::Sink(_)) => uploaded = Some(false),
                    Err(BodyError::Malformed(why)) => break Err(ExchangeError::BadBody(why)),
                    Err(e @ BodyError::Source(_)) => break Err(ExchangeError::Broken(e.to_string())),
                },
                r = &mut download => break r,
            }
        }
    };
    let summary = match outcome {
        Ok(summary) => summary,
        Err(ExchangeError::Stale) if !reused || body_taken.load(Ordering::Relaxed) => {
            return Err(ExchangeError::Upstream(
                "the upstream closed the connection without answering".to_owned(),
            ));
        }
        Err(ExchangeError::BadBody(why)) if started.load(Ordering::Relaxed) => {
            return Err(ExchangeError::Broken(why));
        }
        Err(e) => return Err(e),
    };
    let complete = uploaded == Some(true);
    Ok(Exchanged {
        keep_client: complete && summary.keep_client && !req.client_close,
        keep_upstream: complete && summary.keep_upstream,
    })
}

struct Relayed {
    keep_client: bool,
    keep_upstream: bool,
}

/// Reads the upstream's response (interim 1xx answers relayed first) and streams it to the
/// worker. `started` is set once any byte went to the worker.
async fn relay_response<UR, CW>(
    up: &mut Reader<UR>,
    client: &mut Writer<CW>,
    req: &Outgoing,
    timeouts: &Timeouts,
    started: &AtomicBool,
) -> Result<Relayed, ExchangeError>
where
    UR: AsyncRead + Unpin,
    CW: AsyncWrite + Unpin,
{
    loop {
        let head = match up.response_head(timeouts.response, timeouts.head).await {
            Ok(Some(head)) => head,
            Ok(None) => return Err(ExchangeError::Stale),
            Err(http::HeadError::Idle) => {
                return Err(ExchangeError::Upstream(format!(
                    "the upstream did not answer within {}s",
                    timeouts.response.as_secs()
                )));
            }
            Err(e) => {
                return Err(ExchangeError::Upstream(format!(
                    "the upstream's response: {}",
                    e.reason()
                )));
            }
        };
        if head.status == 101 {
            return Err(ExchangeError::Upstream(
                "the upstream switched protocols, which the gateway does not relay".to_owned(),
            ));
        }
        let mut redactor = body::Redactor::new(req.redact.clone());
        let mut out = Vec::with_capacity(512);
        out.extend_from_slice(format!("HTTP/1.1 {} {}\r\n", head.status, head.reason).as_bytes());
        for h in end_to_end(&head.headers) {
            match &redactor {
                Some(r) => {
                    let mut value = h.value.clone();
                    r.mask_all(&mut value);
                    put_header(&mut out, &h.name, &value);
                }
                None => put_header(&mut out, &h.name, &h.value),
            }
        }
        if (100..200).contains(&head.status) {
            if req.client_version == 1 {
                out.extend_from_slice(b"\r\n");
                client.put(&out);
                started.store(true, Ordering::Relaxed);
                client
                    .flush()
                    .await
                    .map_err(|e| ExchangeError::Broken(format!("writing to the worker ({e})")))?;
            }
            continue;
        }
        let framing = http::response_framing(&req.method, &head)
            .map_err(|why| ExchangeError::Upstream(format!("the upstream's response has {why}")))?;
        let keep_upstream =
            !http::wants_close(head.version, &head.headers) && framing != Framing::UntilClose;
        let (body_out, keep_client) = match framing {
            Framing::None | Framing::Length(_) => (Out::Raw, true),
            Framing::Chunked | Framing::UntilClose if req.client_version == 1 => {
                (Out::Chunked, true)
            }
            Framing::Chunked | Framing::UntilClose => (Out::Raw, false),
        };
        body::put_framing(&mut out, framing, body_out);
        if !keep_client || req.client_close {
            put_header(&mut out, "Connection", b"close");
        }
        out.extend_from_slice(b"\r\n");
        client.put(&out);
        started.store(true, Ordering::Relaxed);
        body::copy_body(up, client, framing, body_out, redactor.as_mut())
            .await
            .map_err(|e| ExchangeError::Broken(format!("relaying the response: {e}")))?;
        return Ok(Relayed {
            keep_client,
            keep_upstream,
        });
    }
}
