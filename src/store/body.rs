//! How a delivery's raw body is kept: compressed with zstd at its fastest level, by the task that
//! records it (off the writer's path), or as it came when compressing would not make it smaller.
//!
//! The body is kept for audit only: nothing the bot does reads it back (a job runs from its
//! parsed event). What it costs is on the write path: every byte of a 13 KB issue event is
//! copied into the WAL, checksummed and fsynced while the deliveries of its batch wait for their
//! acknowledgement, then copied again by the checkpoint. A forge's JSON shrinks about six-fold,
//! so the writer commits a sixth of the bytes. The `body_encoding` column says which form a row
//! holds (`identity` for rows written before it, and for bodies that do not shrink);
//! [`decode`] gives the body back as it arrived.

use std::cell::RefCell;

use super::StoreError;

/// The `body_encoding` of a body kept as it came.
pub(crate) const IDENTITY: &str = "identity";
/// The `body_encoding` of a zstd frame.
pub(crate) const ZSTD: &str = "zstd";

/// The most a kept body may expand to when read back: more than any body the server takes
/// (25 MB), so a damaged frame cannot ask for unbounded memory.
pub(crate) const MOST: usize = 32 * 1024 * 1024;

/// zstd's fastest regular level: the ratio on JSON is close to the default level's, at several
/// times its speed.
const LEVEL: i32 = 1;

thread_local! {
    /// One compression context per thread, made on first use: a context is hundreds of KB to
    /// set up, more than compressing a body costs.
    static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
}

/// The form to keep `body` in, and its `body_encoding`.
pub(crate) fn encode(body: Vec<u8>) -> (Vec<u8>, &'static str) {
    let compressed = COMPRESSOR.with(|slot| {
        let mut slot = slot.borrow_mut();
        if slot.is_none() {
            *slot = zstd::bulk::Compressor::new(LEVEL).ok();
        }
        slot.as_mut()?.compress(&body).ok()
    });
    match compressed {
        Some(frame) if frame.len() < body.len() => (frame, ZSTD),
        _ => (body, IDENTITY),
    }
}

/// A kept body as it arrived. `max` bounds what a zstd frame may expand to (a body larger than
/// the server accepts was never written).
pub(crate) fn decode(encoding: &str, kept: Vec<u8>, max: usize) -> Result<Vec<u8>, StoreError> {
    let corrupt = |reason: String| StoreError::Corrupt {
        what: "a delivery's body".to_owned(),
        reason,
    };
    match encoding {
        IDENTITY => Ok(kept),
        ZSTD => zstd::bulk::decompress(&kept, max).map_err(|err| corrupt(format!("zstd: {err}"))),
        other => Err(corrupt(format!(
            "kept as {other:?}, which this version cannot read"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forge_event_is_kept_smaller_and_read_back_whole() {
        let body = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/webhooks/github/issues.labeled.json"
        ))
        .unwrap();
        let (kept, encoding) = encode(body.clone());
        assert_eq!(encoding, ZSTD);
        assert!(
            kept.len() * 4 < body.len(),
            "{} → {} bytes",
            body.len(),
            kept.len()
        );
        assert_eq!(decode(encoding, kept, 1 << 20).unwrap(), body);
    }

    #[test]
    fn a_body_that_does_not_shrink_is_kept_as_it_came() {
        for body in [Vec::new(), b"{}".to_vec()] {
            let (kept, encoding) = encode(body.clone());
            assert_eq!((kept.as_slice(), encoding), (body.as_slice(), IDENTITY));
            assert_eq!(decode(IDENTITY, kept, 1 << 20).unwrap(), body);
        }
    }

    #[test]
    fn a_damaged_or_unknown_body_is_an_error_not_a_panic() {
        let (mut kept, encoding) = encode(vec![b'a'; 4096]);
        assert_eq!(encoding, ZSTD);
        kept.truncate(kept.len() / 2);
        let err = decode(ZSTD, kept.clone(), 1 << 20).unwrap_err();
        assert!(err.to_string().contains("zstd"), "{err}");
        // A frame that would expand past the bound is refused, not allocated.
        let (whole, _) = encode(vec![b'a'; 4096]);
        assert!(decode(ZSTD, whole, 1024).is_err());
        let err = decode("brotli", b"x".to_vec(), 1 << 20).unwrap_err();
        assert!(err.to_string().contains("brotli"), "{err}");
    }
}
