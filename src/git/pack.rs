//! A pack of whole, uncompressed objects, streamed into a repository's object database.
//!
//! A checkout's `.git` needs a copy of every object of one commit. libgit2's pack builder
//! searches for deltas and compresses each object, which cost as much as writing the files
//! themselves; loose objects cost a file each. This writes pack format 2 directly: no deltas,
//! each object in zlib "stored" blocks (a valid zlib stream with no compression), and the
//! SHA-1 trailer; libgit2's indexer checks it all and writes the `.idx`. The `.git` is read by
//! one worker and thrown away, so its size does not matter.

use std::collections::HashSet;
use std::io::Write;

use git2::{ObjectType, Odb, OdbPackwriter, Oid};
use sha1::{Digest, Sha1};

/// The largest stored block zlib allows.
const STORED_BLOCK: usize = 65_535;

/// Adler-32's modulus, and the most bytes summed before reducing without overflowing `u32`.
const ADLER_MOD: u32 = 65_521;
const ADLER_NMAX: usize = 5_552;

pub(super) struct PackStream<'o> {
    out: OdbPackwriter<'o>,
    hash: Sha1,
    written: HashSet<Oid>,
    expected: u32,
    buf: Vec<u8>,
}

impl<'o> PackStream<'o> {
    /// A pack of exactly `count` objects into `odb`.
    pub(super) fn new(odb: &'o Odb<'_>, count: u32) -> Result<PackStream<'o>, git2::Error> {
        let mut pack = PackStream {
            out: odb.packwriter()?,
            hash: Sha1::new(),
            written: HashSet::new(),
            expected: count,
            buf: Vec::new(),
        };
        let mut header = Vec::with_capacity(12);
        header.extend_from_slice(b"PACK");
        header.extend_from_slice(&2u32.to_be_bytes());
        header.extend_from_slice(&count.to_be_bytes());
        pack.emit(&header)?;
        Ok(pack)
    }

    /// Adds an object, unless it is already in the pack.
    pub(super) fn add(
        &mut self,
        oid: Oid,
        kind: ObjectType,
        data: &[u8],
    ) -> Result<(), git2::Error> {
        if !self.written.insert(oid) {
            return Ok(());
        }
        let code: u8 = match kind {
            ObjectType::Commit => 1,
            ObjectType::Tree => 2,
            ObjectType::Blob => 3,
            _ => {
                return Err(git2::Error::from_str(
                    "only commits, trees and blobs are packed",
                ));
            }
        };
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        object_header(&mut buf, code, data.len());
        zlib_stored(&mut buf, data);
        let result = self.emit(&buf);
        self.buf = buf;
        result
    }

    /// Writes the trailer and indexes the pack.
    pub(super) fn finish(mut self) -> Result<(), git2::Error> {
        if self.written.len() != self.expected as usize {
            return Err(git2::Error::from_str("the pack's object count is wrong"));
        }
        let trailer = self.hash.finalize_reset();
        self.out
            .write_all(&trailer)
            .map_err(|e| git2::Error::from_str(&e.to_string()))?;
        self.out.commit().map(|_| ())
    }

    fn emit(&mut self, bytes: &[u8]) -> Result<(), git2::Error> {
        self.hash.update(bytes);
        self.out
            .write_all(bytes)
            .map_err(|e| git2::Error::from_str(&e.to_string()))
    }
}

/// An object's type and size: 4 bits of size in the first byte, then 7 bits a byte.
fn object_header(out: &mut Vec<u8>, code: u8, size: usize) {
    let mut size = size;
    let mut byte = (code << 4) | (size & 0x0f) as u8;
    size >>= 4;
    while size != 0 {
        out.push(byte | 0x80);
        byte = (size & 0x7f) as u8;
        size >>= 7;
    }
    out.push(byte);
}

/// `data` as a zlib stream of stored (uncompressed) blocks.
fn zlib_stored(out: &mut Vec<u8>, data: &[u8]) {
    // CMF: deflate, 32 KiB window; FLG: no dictionary, check bits making CMF·FLG divisible by 31.
    out.extend_from_slice(&[0x78, 0x01]);
    let mut chunks = data.chunks(STORED_BLOCK).peekable();
    if chunks.peek().is_none() {
        out.extend_from_slice(&[0x01, 0x00, 0x00, 0xff, 0xff]);
    }
    while let Some(chunk) = chunks.next() {
        let last = chunks.peek().is_none();
        let len = chunk.len() as u16;
        out.push(u8::from(last));
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(chunk);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
}

fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in data.chunks(ADLER_NMAX) {
        for &byte in chunk {
            a += u32::from(byte);
            b += a;
        }
        a %= ADLER_MOD;
        b %= ADLER_MOD;
    }
    (b << 16) | a
}

/// The number of distinct objects of a commit: itself, its trees and blobs (submodules are
/// commits of another repository, not copied).
pub(super) fn count_objects(
    repo: &git2::Repository,
    tree: &git2::Tree<'_>,
) -> Result<u32, git2::Error> {
    let mut seen = HashSet::new();
    seen.insert(tree.id());
    let mut stack = vec![tree.id()];
    while let Some(id) = stack.pop() {
        let tree = repo.find_tree(id)?;
        for entry in tree.iter() {
            match entry.kind() {
                Some(ObjectType::Tree) if seen.insert(entry.id()) => stack.push(entry.id()),
                Some(ObjectType::Blob) => {
                    seen.insert(entry.id());
                }
                _ => {}
            }
        }
    }
    u32::try_from(seen.len() + 1).map_err(|_| git2::Error::from_str("too many objects"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adler32_matches_known_values() {
        assert_eq!(adler32(b""), 1);
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        let big = vec![0xffu8; 100_000];
        // Reference value from zlib.
        assert_eq!(adler32(&big), 0x149A_302C);
    }

    #[test]
    fn sizes_are_encoded_four_then_seven_bits_at_a_time() {
        let mut out = Vec::new();
        object_header(&mut out, 3, 10);
        assert_eq!(out, [0x3a]);
        out.clear();
        object_header(&mut out, 1, 300);
        // 300 = 0b1_0010_1100: low nibble 0xc, then 300 >> 4 = 18.
        assert_eq!(out, [0x80 | 0x10 | 0x0c, 18]);
    }

    #[test]
    fn a_pack_written_here_is_read_back_by_libgit2() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init_bare(tmp.path()).unwrap();
        let odb = repo.odb().unwrap();
        let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let objects: [&[u8]; 3] = [b"", b"hello\n", &big];
        let oids: Vec<Oid> = objects
            .iter()
            .map(|d| Oid::hash_object(ObjectType::Blob, d).unwrap())
            .collect();
        let mut pack = PackStream::new(&odb, 3).unwrap();
        for (oid, data) in oids.iter().zip(objects) {
            pack.add(*oid, ObjectType::Blob, data).unwrap();
            pack.add(*oid, ObjectType::Blob, data).unwrap();
        }
        pack.finish().unwrap();
        odb.refresh().unwrap();
        for (oid, data) in oids.iter().zip(objects) {
            assert_eq!(repo.find_blob(*oid).unwrap().content(), data);
        }
    }
}
