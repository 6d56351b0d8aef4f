//! Bodies streamed from one side to the other, a read at a time and never held whole: framed
//! by `Content-Length`, chunked (decoded and chunked again, extensions dropped, trailers
//! kept) or read until the upstream closes; and, on a secret host's responses, a
//! [`Redactor`] that masks any real value the upstream sends back, across read boundaries.

use std::io;

use tokio::io::{AsyncRead, AsyncWrite};

use super::http::{BodyError, Framing, MAX_HEAD, Reader, Writer, put_header};

/// A piece of a body at least this large is written from the reader's buffer, not copied into
/// the writer's first.
const DIRECT_WRITE: usize = 16 * 1024;

/// How a body is written on the outgoing side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Out {
    /// As is: `Content-Length` stays right, or the connection ends with the body.
    Raw,
    Chunked,
}

/// Writes the framing header for a body going out as `out` from a `framing` source.
pub(crate) fn put_framing(head: &mut Vec<u8>, framing: Framing, out: Out) {
    match (framing, out) {
        (Framing::Length(n), _) => put_header(head, "Content-Length", n.to_string().as_bytes()),
        (Framing::Chunked | Framing::UntilClose, Out::Chunked) => {
            put_header(head, "Transfer-Encoding", b"chunked")
        }
        _ => {}
    }
}

/// Masks every occurrence of any of its needles (secret values) with `*`, the same length, so
/// that a `Content-Length` stays true. Only a piece's end that begins a needle is held back
/// until the next piece shows whether it goes on: a stream that pauses between events (an
/// API's server-sent events) is not held up.
pub(crate) struct Redactor {
    needles: Vec<Vec<u8>>,
    /// The longest needle's length less one: the most that may be held back.
    keep: usize,
    held: Vec<u8>,
}

impl Redactor {
    /// `None` without a needle: nothing to mask.
    pub(crate) fn new(needles: Vec<Vec<u8>>) -> Option<Redactor> {
        let needles: Vec<Vec<u8>> = needles.into_iter().filter(|n| !n.is_empty()).collect();
        let longest = needles.iter().map(Vec::len).max()?;
        Some(Redactor {
            needles,
            keep: longest - 1,
            held: Vec::new(),
        })
    }

    /// Masks occurrences in a whole value (a header's): the same length.
    pub(crate) fn mask_all(&self, value: &mut [u8]) {
        for needle in &self.needles {
            let mut from = 0;
            while let Some(i) = memchr::memmem::find(&value[from..], needle) {
                let at = from + i;
                value[at..at + needle.len()].fill(b'*');
                from = at + needle.len();
            }
        }
    }

    /// Takes the next piece; returns what may go out now. The usual piece (nothing held, no
    /// value in it, no value's start at its end) goes out as it is, uncopied.
    fn feed<'d>(&mut self, data: &'d [u8]) -> std::borrow::Cow<'d, [u8]> {
        use std::borrow::Cow;
        if self.held.is_empty()
            && !self
                .needles
                .iter()
                .any(|n| memchr::memmem::find(data, n).is_some())
            && self.partial_start(data) == data.len()
        {
            return Cow::Borrowed(data);
        }
        self.held.extend_from_slice(data);
        let mut held = std::mem::take(&mut self.held);
        self.mask_all(&mut held);
        let cut = self.partial_start(&held);
        self.held = held.split_off(cut);
        Cow::Owned(held)
    }

    /// Where the longest end of `data` that is the start of a needle (and not a whole one)
    /// begins; `data.len()` when there is none.
    fn partial_start(&self, data: &[u8]) -> usize {
        let from = data.len().saturating_sub(self.keep);
        (from..data.len())
            .find(|&i| {
                let tail = &data[i..];
                self.needles
                    .iter()
                    .any(|n| n.len() > tail.len() && n.starts_with(tail))
            })
            .unwrap_or(data.len())
    }

    /// What was held back, at the end of the body.
    fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.held)
    }
}

/// Where a body's data goes: the writer, as `out`, through the redactor if any.
struct Sink<'a, W> {
    to: &'a mut Writer<W>,
    out: Out,
    redact: Option<&'a mut Redactor>,
}

impl<W: AsyncWrite + Unpin> Sink<'_, W> {
    async fn data(&mut self, data: &[u8]) -> Result<(), BodyError> {
        match self.redact.as_deref_mut() {
            Some(r) => {
                let masked = r.feed(data);
                self.write(&masked).await
            }
            None => self.write(data).await,
        }
    }

    /// Writes `data` out: a large piece going out as is straight from where it lies, the rest
    /// batched.
    async fn write(&mut self, data: &[u8]) -> Result<(), BodyError> {
        if self.out == Out::Raw && data.len() >= DIRECT_WRITE {
            return self.to.write_now(data).await.map_err(BodyError::Sink);
        }
        self.emit(data);
        self.to.flush_if_large().await.map_err(BodyError::Sink)
    }

    fn end_data(&mut self) {
        if let Some(r) = self.redact.as_deref_mut() {
            let rest = r.finish();
            self.emit(&rest);
        }
    }

    fn emit(&mut self, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        if self.out == Out::Chunked {
            self.to.put(format!("{:x}\r\n", data.len()).as_bytes());
            self.to.put(data);
            self.to.put(b"\r\n");
        } else {
            self.to.put(data);
        }
    }

    async fn flush(&mut self) -> Result<(), BodyError> {
        self.to.flush().await.map_err(BodyError::Sink)
    }
}

/// Streams one body from `from` (framed as `framing`) to `to` (written as `out`, masked by
/// `redact`), and flushes. What follows the body in `from`'s buffer stays there.
pub(crate) async fn copy_body<R, W>(
    from: &mut Reader<R>,
    to: &mut Writer<W>,
    framing: Framing,
    out: Out,
    redact: Option<&mut Redactor>,
) -> Result<(), BodyError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut sink = Sink { to, out, redact };
    match framing {
        Framing::None => {}
        Framing::Length(n) => {
            copy_exact(from, &mut sink, n).await?;
            sink.end_data();
        }
        Framing::UntilClose => {
            loop {
                if from.buffered().is_empty() {
                    sink.flush().await?;
                    if from.fill().await.map_err(BodyError::Source)? == 0 {
                        break;
                    }
                }
                let n = from.buffered().len();
                sink.data(from.buffered()).await?;
                from.consume(n);
            }
            sink.end_data();
            if out == Out::Chunked {
                sink.to.put(b"0\r\n\r\n");
            }
        }
        Framing::Chunked => copy_chunked(from, &mut sink).await?,
    }
    sink.flush().await
}

async fn copy_exact<R, W>(
    from: &mut Reader<R>,
    sink: &mut Sink<'_, W>,
    mut left: u64,
) -> Result<(), BodyError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    while left > 0 {
        if from.buffered().is_empty() {
            sink.flush().await?;
            if from.fill().await.map_err(BodyError::Source)? == 0 {
                return Err(BodyError::Source(io::ErrorKind::UnexpectedEof.into()));
            }
        }
        let n = (from.buffered().len() as u64).min(left) as usize;
        sink.data(&from.buffered()[..n]).await?;
        from.consume(n);
        left -= n as u64;
    }
    Ok(())
}

/// Decodes a chunked body and writes its data again (trailers kept when the output is
/// chunked).
async fn copy_chunked<R, W>(from: &mut Reader<R>, sink: &mut Sink<'_, W>) -> Result<(), BodyError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    loop {
        if from.buffered().is_empty() {
            sink.flush().await?;
        }
        let n = from.line().await?;
        let size = chunk_size(&from.buffered()[..n])?;
        from.consume(n);
        if size == 0 {
            break;
        }
        copy_exact(from, sink, size).await?;
        let n = from.line().await?;
        if !from.buffered()[..n].trim_ascii().is_empty() {
            return Err(BodyError::Malformed(
                "a chunk longer than its size".to_owned(),
            ));
        }
        from.consume(n);
    }
    sink.end_data();
    let chunked = sink.out == Out::Chunked;
    if chunked {
        sink.to.put(b"0\r\n");
    }
    // Trailer fields, then the empty line.
    let mut trailers = 0usize;
    loop {
        let n = from.line().await?;
        let line = &from.buffered()[..n];
        let empty = line.trim_ascii().is_empty();
        trailers += n;
        if trailers > MAX_HEAD {
            return Err(BodyError::Malformed("trailers too large".to_owned()));
        }
        if chunked && !empty {
            let mut line = line.to_vec();
            if let Some(r) = sink.redact.as_deref() {
                r.mask_all(&mut line);
            }
            sink.to.put(&line);
        }
        from.consume(n);
        if empty {
            break;
        }
    }
    if chunked {
        sink.to.put(b"\r\n");
    }
    Ok(())
}

fn chunk_size(line: &[u8]) -> Result<u64, BodyError> {
    let bad = || BodyError::Malformed("an invalid chunk size".to_owned());
    let size = line
        .split(|&b| b == b';')
        .next()
        .unwrap_or(line)
        .trim_ascii();
    if size.is_empty() || size.len() > 15 || !size.iter().all(u8::is_ascii_hexdigit) {
        return Err(bad());
    }
    let text = std::str::from_utf8(size).map_err(|_| bad())?;
    u64::from_str_radix(text, 16).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_split_across_pieces_is_masked_and_lengths_stay() {
        let secret = b"sk-real-value".to_vec();
        let text = b"echo: sk-real-value and again sk-real-value!".to_vec();
        for split in 1..text.len() {
            let mut r = Redactor::new(vec![secret.clone(), b"zz".to_vec()]).unwrap();
            let mut out = r.feed(&text[..split]).to_vec();
            out.extend_from_slice(&r.feed(&text[split..]));
            out.extend(r.finish());
            assert_eq!(out.len(), text.len());
            assert_eq!(
                String::from_utf8(out).unwrap(),
                "echo: ************* and again *************!",
                "split at {split}"
            );
        }
        assert!(Redactor::new(vec![Vec::new()]).is_none());
        // What cannot begin a value is let through at once.
        let mut r = Redactor::new(vec![secret.clone()]).unwrap();
        assert_eq!(&*r.feed(b"data: {}\n\n"), b"data: {}\n\n");
        assert_eq!(&*r.feed(b"x sk-re"), b"x ");
        assert_eq!(&*r.feed(b"st"), b"sk-rest");
    }
}
