//! HTTP/1.1 as the gateway speaks it, both ways: a buffered [`Reader`] and [`Writer`] over any
//! stream, heads read with a size cap and deadlines, how a body is framed (its streaming is
//! `body.rs`), hop-by-hop headers dropped, and the short plain-text error answers.
//!
//! Framing is strict where a lenient proxy would let two parties read one message two ways
//! (request smuggling): `Content-Length` with `Transfer-Encoding`, differing lengths, a
//! transfer coding other than a final `chunked` on a request, a malformed chunk size are all
//! refused.

use std::io;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::time::Instant;

/// Why a message's body could not be carried through.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// Reading the body's sender failed (or it ended early).
    Source(io::Error),
    /// Writing to its receiver failed.
    Sink(io::Error),
    Malformed(String),
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::Source(e) => write!(f, "reading the body failed ({e})"),
            BodyError::Sink(e) => write!(f, "writing the body failed ({e})"),
            BodyError::Malformed(why) => write!(f, "the body is malformed ({why})"),
        }
    }
}

/// The largest request or response head read: larger is answered 400 (or 502).
pub(crate) const MAX_HEAD: usize = 64 * 1024;
/// Header fields one head may hold.
const MAX_HEADERS: usize = 256;
/// What one read asks for beyond a full head's room.
const READ_CHUNK: usize = 64 * 1024;
/// A chunk-size line or a trailer field longer than this is malformed.
const MAX_LINE: usize = 8 * 1024;
/// Output is written out once this much is waiting (and always before waiting for input).
const WRITE_BATCH: usize = 64 * 1024;

/// A read half with its own buffer: heads are parsed in place, and what a read brought past
/// a message stays for the next.
pub(crate) struct Reader<R> {
    inner: R,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
}

impl<R: AsyncRead + Unpin> Reader<R> {
    pub(crate) fn new(inner: R) -> Reader<R> {
        Reader {
            inner,
            buf: vec![0; MAX_HEAD + READ_CHUNK],
            pos: 0,
            len: 0,
        }
    }

    pub(crate) fn buffered(&self) -> &[u8] {
        &self.buf[self.pos..self.len]
    }

    pub(crate) fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.len);
    }

    /// Takes what is buffered, for a stream that goes on without this reader.
    pub(crate) fn take_buffered(&mut self) -> Vec<u8> {
        let rest = self.buffered().to_vec();
        self.pos = self.len;
        rest
    }

    pub(crate) fn into_inner(self) -> R {
        self.inner
    }

    /// Reads more; `Ok(0)` at end of stream.
    pub(crate) async fn fill(&mut self) -> io::Result<usize> {
        if self.pos == self.len {
            self.pos = 0;
            self.len = 0;
        } else if self.pos > 0 {
            self.buf.copy_within(self.pos..self.len, 0);
            self.len -= self.pos;
            self.pos = 0;
        }
        if self.len == self.buf.len() {
            return Err(io::Error::other("read buffer full"));
        }
        let n = self.inner.read(&mut self.buf[self.len..]).await?;
        self.len += n;
        Ok(n)
    }

    /// Reads one line (through `\n`) of at most [`MAX_LINE`] bytes; returns its length in the
    /// buffer, `\n` included, not consumed.
    pub(crate) async fn line(&mut self) -> Result<usize, BodyError> {
        loop {
            if let Some(i) = memchr::memchr(b'\n', self.buffered()) {
                return Ok(i + 1);
            }
            if self.buffered().len() > MAX_LINE {
                return Err(BodyError::Malformed("a chunk line too long".to_owned()));
            }
            match self.fill().await {
                Ok(0) => return Err(BodyError::Source(io::ErrorKind::UnexpectedEof.into())),
                Ok(_) => {}
                Err(e) => return Err(BodyError::Source(e)),
            }
        }
    }
}

/// A write half that batches small writes (heads, chunk framing) into one.
pub(crate) struct Writer<W> {
    inner: W,
    buf: Vec<u8>,
}

impl<W: AsyncWrite + Unpin> Writer<W> {
    pub(crate) fn new(inner: W) -> Writer<W> {
        Writer {
            inner,
            buf: Vec::with_capacity(16 * 1024),
        }
    }

    pub(crate) fn put(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Writes everything waiting.
    pub(crate) async fn flush(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            self.inner.write_all(&self.buf).await?;
            self.buf.clear();
        }
        self.inner.flush().await
    }

    pub(crate) async fn flush_if_large(&mut self) -> io::Result<()> {
        if self.buf.len() >= WRITE_BATCH {
            self.inner.write_all(&self.buf).await?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Writes what is waiting, then `data`, without copying it.
    pub(crate) async fn write_now(&mut self, data: &[u8]) -> io::Result<()> {
        if !self.buf.is_empty() {
            self.inner.write_all(&self.buf).await?;
            self.buf.clear();
        }
        self.inner.write_all(data).await
    }

    /// Flushes and closes the write side (TLS: close_notify).
    pub(crate) async fn shutdown(&mut self) -> io::Result<()> {
        self.flush().await?;
        self.inner.shutdown().await
    }

    pub(crate) fn into_inner(self) -> W {
        self.inner
    }
}

/// One header field as received.
#[derive(Debug, Clone)]
pub(crate) struct Header {
    pub(crate) name: String,
    pub(crate) value: Vec<u8>,
}

impl Header {
    pub(crate) fn is(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
    }
}

#[derive(Debug, Clone)]
pub(crate) struct RequestHead {
    pub(crate) method: String,
    pub(crate) target: String,
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub(crate) version: u8,
    pub(crate) headers: Vec<Header>,
}

#[derive(Debug, Clone)]
pub(crate) struct ResponseHead {
    pub(crate) status: u16,
    pub(crate) reason: String,
    pub(crate) version: u8,
    pub(crate) headers: Vec<Header>,
}

/// Why a head could not be read.
#[derive(Debug)]
pub(crate) enum HeadError {
    Io(io::Error),
    /// No byte of a head arrived within the wait for one (an idle connection).
    Idle,
    /// The stream ended inside a head.
    Truncated,
    TooLarge,
    TimedOut,
    Malformed(String),
}

impl HeadError {
    /// One line for the error answer and the log.
    pub(crate) fn reason(&self) -> String {
        match self {
            HeadError::Io(e) => format!("the connection failed while reading a head ({e})"),
            HeadError::Truncated => "the connection ended inside a head".to_owned(),
            HeadError::TooLarge => format!("the head is larger than {} KiB", MAX_HEAD / 1024),
            HeadError::Idle => "no request arrived in time".to_owned(),
            HeadError::TimedOut => "the head did not arrive in time".to_owned(),
            HeadError::Malformed(why) => why.clone(),
        }
    }
}

pub(crate) enum Parsed<T> {
    Complete(T, usize),
    Partial,
}

impl<R: AsyncRead + Unpin> Reader<R> {
    /// Reads a head: the first byte within `first_byte` (the idle wait between requests), the
    /// whole head within `complete` of it. `Ok(None)` when the stream ends before any byte.
    async fn head<T>(
        &mut self,
        first_byte: Duration,
        complete: Duration,
        parse: impl Fn(&[u8]) -> Result<Parsed<T>, HeadError>,
    ) -> Result<Option<T>, HeadError> {
        if self.buffered().is_empty() {
            match tokio::time::timeout(first_byte, self.fill()).await {
                Err(_) => return Err(HeadError::Idle),
                Ok(Err(e)) => return Err(HeadError::Io(e)),
                Ok(Ok(0)) => return Ok(None),
                Ok(Ok(_)) => {}
            }
        }
        let deadline = Instant::now() + complete;
        let mut scanned: usize = 0;
        loop {
            let data = self.buffered();
            // Parse only once an empty line may have arrived: a head dripped a byte at a time
            // is then parsed once, not once per byte.
            let from = scanned.saturating_sub(3);
            let ended = memchr::memmem::find(&data[from..], b"\n\r\n").is_some()
                || memchr::memmem::find(&data[from..], b"\n\n").is_some();
            scanned = data.len();
            if ended && let Parsed::Complete(head, n) = parse(data)? {
                if n > MAX_HEAD {
                    return Err(HeadError::TooLarge);
                }
                self.consume(n);
                return Ok(Some(head));
            }
            if data.len() > MAX_HEAD {
                return Err(HeadError::TooLarge);
            }
            match tokio::time::timeout_at(deadline, self.fill()).await {
                Err(_) => return Err(HeadError::TimedOut),
                Ok(Err(e)) => return Err(HeadError::Io(e)),
                Ok(Ok(0)) => return Err(HeadError::Truncated),
                Ok(Ok(_)) => {}
            }
        }
    }

    pub(crate) async fn request_head(
        &mut self,
        first_byte: Duration,
        complete: Duration,
    ) -> Result<Option<RequestHead>, HeadError> {
        self.head(first_byte, complete, parse_request).await
    }

    pub(crate) async fn response_head(
        &mut self,
        first_byte: Duration,
        complete: Duration,
    ) -> Result<Option<ResponseHead>, HeadError> {
        self.head(first_byte, complete, parse_response).await
    }
}

fn httparse_error(e: httparse::Error) -> HeadError {
    match e {
        httparse::Error::TooManyHeaders => HeadError::Malformed(format!(
            "the head has more than {MAX_HEADERS} header fields"
        )),
        other => HeadError::Malformed(format!("the head is malformed ({other})")),
    }
}

fn owned_headers(headers: &[httparse::Header<'_>]) -> Vec<Header> {
    headers
        .iter()
        .map(|h| Header {
            name: h.name.to_owned(),
            value: h.value.to_vec(),
        })
        .collect()
}

pub(crate) fn parse_request(data: &[u8]) -> Result<Parsed<RequestHead>, HeadError> {
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut slots);
    match req.parse(data).map_err(httparse_error)? {
        httparse::Status::Partial => Ok(Parsed::Partial),
        httparse::Status::Complete(n) => {
            let (Some(method), Some(target), Some(version)) = (req.method, req.path, req.version)
            else {
                return Ok(Parsed::Partial);
            };
            Ok(Parsed::Complete(
                RequestHead {
                    method: method.to_owned(),
                    target: target.to_owned(),
                    version,
                    headers: owned_headers(req.headers),
                },
                n,
            ))
        }
    }
}

pub(crate) fn parse_response(data: &[u8]) -> Result<Parsed<ResponseHead>, HeadError> {
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut res = httparse::Response::new(&mut slots);
    match res.parse(data).map_err(httparse_error)? {
        httparse::Status::Partial => Ok(Parsed::Partial),
        httparse::Status::Complete(n) => {
            let (Some(status), Some(version)) = (res.code, res.version) else {
                return Ok(Parsed::Partial);
            };
            Ok(Parsed::Complete(
                ResponseHead {
                    status,
                    reason: res.reason.unwrap_or("").to_owned(),
                    version,
                    headers: owned_headers(res.headers),
                },
                n,
            ))
        }
    }
}

/// How a message's body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    None,
    Length(u64),
    Chunked,
    /// A response read until the upstream closes.
    UntilClose,
}

fn content_length(headers: &[Header]) -> Result<Option<u64>, String> {
    let mut length = None;
    for h in headers.iter().filter(|h| h.is("content-length")) {
        for part in h.value.split(|&b| b == b',') {
            let part = part.trim_ascii();
            let n = std::str::from_utf8(part)
                .ok()
                .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|s| s.parse::<u64>().ok())
                .ok_or_else(|| "an invalid Content-Length".to_owned())?;
            if length.is_some_and(|l| l != n) {
                return Err("differing Content-Length values".to_owned());
            }
            length = Some(n);
        }
    }
    Ok(length)
}

/// Whether the last transfer coding is `chunked`; `None` without `Transfer-Encoding`.
fn chunked(headers: &[Header]) -> Option<bool> {
    let mut last: Option<Vec<u8>> = None;
    for h in headers.iter().filter(|h| h.is("transfer-encoding")) {
        for coding in h.value.split(|&b| b == b',') {
            let coding = coding.trim_ascii();
            if !coding.is_empty() {
                last = Some(coding.to_ascii_lowercase());
            }
        }
    }
    last.map(|c| c == b"chunked")
}

pub(crate) fn request_framing(head: &RequestHead) -> Result<Framing, String> {
    let length = content_length(&head.headers)?;
    match chunked(&head.headers) {
        Some(_) if length.is_some() => Err("both Content-Length and Transfer-Encoding".to_owned()),
        Some(true) => Ok(Framing::Chunked),
        Some(false) => Err("a Transfer-Encoding that does not end in chunked".to_owned()),
        None => Ok(match length {
            Some(0) | None => Framing::None,
            Some(n) => Framing::Length(n),
        }),
    }
}

pub(crate) fn response_framing(method: &str, head: &ResponseHead) -> Result<Framing, String> {
    if method.eq_ignore_ascii_case("HEAD")
        || (100..200).contains(&head.status)
        || head.status == 204
        || head.status == 304
    {
        return Ok(Framing::None);
    }
    match chunked(&head.headers) {
        Some(true) => return Ok(Framing::Chunked),
        Some(false) => return Ok(Framing::UntilClose),
        None => {}
    }
    Ok(match content_length(&head.headers)? {
        Some(0) => Framing::None,
        Some(n) => Framing::Length(n),
        None => Framing::UntilClose,
    })
}

/// Whether the other side asked for the connection to end after this message.
pub(crate) fn wants_close(version: u8, headers: &[Header]) -> bool {
    let mut close = version == 0;
    for h in headers
        .iter()
        .filter(|h| h.is("connection") || h.is("proxy-connection"))
    {
        for token in h.value.split(|&b| b == b',') {
            let token = token.trim_ascii();
            if token.eq_ignore_ascii_case(b"close") {
                return true;
            }
            if token.eq_ignore_ascii_case(b"keep-alive") {
                close = false;
            }
        }
    }
    close
}

/// Headers that belong to one hop, never forwarded: the fixed list, every `Proxy-*`, and
/// whatever `Connection` names. Framing headers are dropped too: the gateway writes its own.
pub(crate) fn end_to_end(headers: &[Header]) -> impl Iterator<Item = &Header> {
    const HOP: [&str; 9] = [
        "connection",
        "keep-alive",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
        "proxy-connection",
        "host",
    ];
    let named: Vec<String> = headers
        .iter()
        .filter(|h| h.is("connection"))
        .flat_map(|h| {
            h.value
                .split(|&b| b == b',')
                .map(|t| String::from_utf8_lossy(t.trim_ascii()).to_ascii_lowercase())
                .collect::<Vec<_>>()
        })
        .collect();
    headers.iter().filter(move |h| {
        let lower = h.name.to_ascii_lowercase();
        !HOP.contains(&lower.as_str()) && !lower.starts_with("proxy-") && !named.contains(&lower)
    })
}

pub(crate) fn put_header(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// The reason phrase of the statuses the gateway answers with itself.
fn reason_phrase(status: u16) -> &'static str {
    match status {
        400 => "Bad Request",
        403 => "Forbidden",
        408 => "Request Timeout",
        502 => "Bad Gateway",
        504 => "Gateway Timeout",
        _ => "Error",
    }
}

/// The gateway's own answer: a one-line plain-text body saying why, and the connection closed
/// after it. `reason` must name hosts and ranges only, never a header's value.
pub(crate) fn error_response(status: u16, reason: &str) -> Vec<u8> {
    let reason: String = reason
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let body = format!("forgeward egress: {reason}\n");
    format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        reason_phrase(status),
        body.len()
    )
    .into_bytes()
}

/// Writes [`error_response`] and closes the write side; failures are the worker's problem.
pub(crate) async fn answer_error<W: AsyncWrite + Unpin>(
    to: &mut Writer<W>,
    status: u16,
    reason: &str,
) {
    to.put(&error_response(status, reason));
    let _ = to.shutdown().await;
}

/// How long, and how much, [`drain`] reads.
const LINGER: Duration = Duration::from_secs(1);
const LINGER_BYTES: usize = 1 << 20;

/// After an answer that ends the connection: reads and drops what the worker is still
/// sending, briefly, so that closing does not reset the connection before the worker has
/// read the answer.
pub(crate) async fn drain<R: AsyncRead + Unpin>(reader: &mut Reader<R>) {
    let deadline = Instant::now() + LINGER;
    let mut total = 0;
    loop {
        reader.pos = reader.len;
        match tokio::time::timeout_at(deadline, reader.fill()).await {
            Ok(Ok(n)) if n > 0 && total < LINGER_BYTES => total += n,
            _ => return,
        }
    }
}

/// Splits an authority (`host:port`, `[v6]:port`, or without the port when `default_port`
/// is given) into the host as written and the port.
pub(crate) fn split_authority(
    authority: &str,
    default_port: Option<u16>,
) -> Result<(&str, u16), String> {
    let (host, port) = if authority.starts_with('[') {
        match authority.find(']') {
            Some(close) => {
                let rest = &authority[close + 1..];
                match rest.strip_prefix(':') {
                    Some(port) => (&authority[..=close], Some(port)),
                    None if rest.is_empty() => (&authority[..=close], None),
                    None => return Err(format!("the authority {authority:?} is malformed")),
                }
            }
            None => return Err(format!("the authority {authority:?} is malformed")),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err(format!("the authority {authority:?} has no host"));
    }
    let port = match (port, default_port) {
        (Some(p), _) => match p.parse::<u16>() {
            Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) => n,
            _ => return Err(format!("the authority {authority:?} has an invalid port")),
        },
        (None, Some(default)) => default,
        (None, None) => {
            return Err(format!(
                "CONNECT {authority} has no port: the target is host:port"
            ));
        }
    };
    Ok((host, port))
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
