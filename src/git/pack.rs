//! A pack of whole, uncompressed objects, written with its index into a repository's
//! `objects/pack`.
//!
//! A checkout's `.git` needs a copy of every object of one commit. libgit2's pack builder
//! searches for deltas and compresses each object, which cost as much as writing the files
//! themselves; loose objects cost a file each; its indexer inflates and hashes each object
//! again (most of a checkout's time beside writing the files). This writes pack format 2
//! directly — no deltas, each object in zlib "stored" blocks (a valid zlib stream with no
//! compression), the SHA-1 trailer — and its version-2 index beside it, from the object ids
//! the mirror already has: nothing is hashed but the two files' own checksums. The `.git` is
//! read by one worker and thrown away, so its size does not matter.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use git2::{ObjectType, Oid};
use sha1::{Digest, Sha1};

/// The largest stored block zlib allows.
const STORED_BLOCK: usize = 65_535;

/// Adler-32's modulus, and the most bytes summed before reducing without overflowing `u32`.
const ADLER_MOD: u32 = 65_521;
const ADLER_NMAX: usize = 5_552;

/// The CRC-32 an index keeps of each object's bytes in the pack (zlib's).
const CRC32: crc::Crc<u32, crc::Table<16>> =
    crc::Crc::<u32, crc::Table<16>>::new(&crc::CRC_32_ISO_HDLC);

/// An object's place in the pack, for the index.
struct Entry {
    oid: Oid,
    crc: u32,
    offset: u64,
}

pub(super) struct PackStream {
    dir: PathBuf,
    temp: PathBuf,
    out: BufWriter<File>,
    hash: Sha1,
    offset: u64,
    entries: Vec<Entry>,
    written: HashSet<Oid>,
    expected: u32,
    buf: Vec<u8>,
}

fn io_error(e: std::io::Error) -> git2::Error {
    git2::Error::from_str(&e.to_string())
}

impl PackStream {
    /// A pack of exactly `count` objects into the repository's pack directory `dir`
    /// (`objects/pack`), which must exist.
    pub(super) fn new(dir: &Path, count: u32) -> Result<PackStream, git2::Error> {
        let temp = dir.join("tmp_pack_checkout");
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .map_err(io_error)?;
        let mut pack = PackStream {
            dir: dir.to_path_buf(),
            temp,
            out: BufWriter::with_capacity(256 * 1024, file),
            hash: Sha1::new(),
            offset: 0,
            entries: Vec::with_capacity(count as usize),
            written: HashSet::with_capacity(count as usize),
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

    /// Adds an object, unless it is already in the pack. `oid` must be the object's id.
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
        self.entries.push(Entry {
            oid,
            crc: CRC32.checksum(&buf),
            offset: self.offset,
        });
        let result = self.emit(&buf);
        self.buf = buf;
        result
    }

    /// Writes the trailer, then the index, and puts both in place (the index last: a pack is
    /// found by its index).
    pub(super) fn finish(mut self) -> Result<(), git2::Error> {
        if self.written.len() != self.expected as usize {
            return Err(git2::Error::from_str("the pack's object count is wrong"));
        }
        let checksum: [u8; 20] = self.hash.finalize_reset().into();
        self.out.write_all(&checksum).map_err(io_error)?;
        self.out.flush().map_err(io_error)?;
        let name = format!("pack-{}", hex::encode(checksum));
        std::fs::rename(&self.temp, self.dir.join(format!("{name}.pack"))).map_err(io_error)?;
        self.entries
            .sort_unstable_by(|a, b| a.oid.as_bytes().cmp(b.oid.as_bytes()));
        let index = index_v2(&self.entries, &checksum);
        let temp = self.dir.join("tmp_idx_checkout");
        std::fs::write(&temp, index).map_err(io_error)?;
        std::fs::rename(&temp, self.dir.join(format!("{name}.idx"))).map_err(io_error)
    }

    fn emit(&mut self, bytes: &[u8]) -> Result<(), git2::Error> {
        self.hash.update(bytes);
        self.offset += bytes.len() as u64;
        self.out.write_all(bytes).map_err(io_error)
    }
}

/// A pack index, version 2, of `entries` sorted by id: the fan-out table, the ids, their
/// CRC-32s, their offsets (those past 2 GiB in a second table), the pack's checksum and the
/// index's own.
fn index_v2(entries: &[Entry], pack_checksum: &[u8; 20]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + 256 * 4 + entries.len() * 28 + 40);
    out.extend_from_slice(&[0xff, b't', b'O', b'c']);
    out.extend_from_slice(&2u32.to_be_bytes());
    let mut fanout = [0u32; 256];
    for entry in entries {
        fanout[usize::from(entry.oid.as_bytes()[0])] += 1;
    }
    let mut total = 0u32;
    for count in fanout {
        total += count;
        out.extend_from_slice(&total.to_be_bytes());
    }
    for entry in entries {
        out.extend_from_slice(entry.oid.as_bytes());
    }
    for entry in entries {
        out.extend_from_slice(&entry.crc.to_be_bytes());
    }
    let mut large = Vec::new();
    for entry in entries {
        match u32::try_from(entry.offset) {
            Ok(small) if small < 0x8000_0000 => out.extend_from_slice(&small.to_be_bytes()),
            _ => {
                let at = 0x8000_0000 | large.len() as u32;
                out.extend_from_slice(&at.to_be_bytes());
                large.push(entry.offset);
            }
        }
    }
    for offset in large {
        out.extend_from_slice(&offset.to_be_bytes());
    }
    out.extend_from_slice(pack_checksum);
    let own: [u8; 20] = Sha1::digest(&out).into();
    out.extend_from_slice(&own);
    out
}

impl Drop for PackStream {
    fn drop(&mut self) {
        // A pack not finished leaves nothing behind (a finished one was renamed away).
        let _ = std::fs::remove_file(&self.temp);
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
        let mut pack = PackStream::new(&tmp.path().join("objects/pack"), 3).unwrap();
        for (oid, data) in oids.iter().zip(objects) {
            pack.add(*oid, ObjectType::Blob, data).unwrap();
            pack.add(*oid, ObjectType::Blob, data).unwrap();
        }
        pack.finish().unwrap();
        odb.refresh().unwrap();
        for (oid, data) in oids.iter().zip(objects) {
            assert_eq!(repo.find_blob(*oid).unwrap().content(), data);
        }
        // git itself finds nothing wrong with the pack or its index.
        let out = std::process::Command::new("git")
            .arg("--git-dir")
            .arg(tmp.path())
            .args(["fsck", "--strict", "--no-dangling"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let packs: Vec<_> = std::fs::read_dir(tmp.path().join("objects/pack"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(
            packs.len(),
            2,
            "a pack and its index, nothing else: {packs:?}"
        );
        let idx = packs.iter().find(|p| p.ends_with(".idx")).unwrap();
        let verify = std::process::Command::new("git")
            .args(["verify-pack", "-v"])
            .arg(tmp.path().join("objects/pack").join(idx))
            .output()
            .unwrap();
        assert!(verify.status.success(), "{verify:?}");
    }

    #[test]
    fn an_unfinished_pack_leaves_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        git2::Repository::init_bare(tmp.path()).unwrap();
        let dir = tmp.path().join("objects/pack");
        let mut pack = PackStream::new(&dir, 2).unwrap();
        let oid = Oid::hash_object(ObjectType::Blob, b"one").unwrap();
        pack.add(oid, ObjectType::Blob, b"one").unwrap();
        assert!(pack.finish().is_err(), "one object of two");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    }
}
