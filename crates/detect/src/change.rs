//! The detector's input: what one file went through between two revisions.
//!
//! Paths are bytes, as git stores them: a path that is not UTF-8 is still a real path and is
//! reported with its real name. Line numbers are 1-based, as every editor and forge shows them.

use std::fmt;
use std::ops::Range;

/// A path inside a repository, `/`-separated, exactly as git stores it (not necessarily UTF-8).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RepoPath(Vec<u8>);

impl RepoPath {
    pub fn new(bytes: impl Into<Vec<u8>>) -> Self {
        RepoPath(bytes.into())
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The path for people and text formats: invalid UTF-8 is shown as U+FFFD.
    pub fn display(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.0)
    }

    /// The last component.
    pub fn file_name(&self) -> &[u8] {
        match self.0.iter().rposition(|&b| b == b'/') {
            Some(i) => &self.0[i + 1..],
            None => &self.0,
        }
    }

    /// Everything before the last component, without the trailing `/` (empty at the root).
    pub fn parent(&self) -> &[u8] {
        match self.0.iter().rposition(|&b| b == b'/') {
            Some(i) => &self.0[..i],
            None => &[],
        }
    }

    /// The directory components, root first, without the file name.
    pub fn dirs(&self) -> impl Iterator<Item = &[u8]> {
        let parent = self.parent();
        parent.split(|&b| b == b'/').filter(|c| !c.is_empty())
    }

    /// `dir/name` joined with a `/` (or just `name` at the root).
    pub fn join(dir: &[u8], name: &[u8]) -> RepoPath {
        let mut v = Vec::with_capacity(dir.len() + name.len() + 1);
        v.extend_from_slice(dir);
        if !dir.is_empty() {
            v.push(b'/');
        }
        v.extend_from_slice(name);
        RepoPath(v)
    }
}

impl fmt::Debug for RepoPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.display(), f)
    }
}

impl fmt::Display for RepoPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display())
    }
}

impl From<&str> for RepoPath {
    fn from(s: &str) -> Self {
        RepoPath(s.as_bytes().to_vec())
    }
}

/// What happened to a file, as git's rename detection tells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    Added,
    Modified,
    Deleted,
    Renamed,
    Copied,
}

/// One file's change. The contents are not held here: the detector is handed them beside the
/// change (see [`crate::FileInput`]), so that a caller can stream a large diff file by
/// file without holding it all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub kind: ChangeKind,
    /// The path at the base (none for an added file).
    pub old_path: Option<RepoPath>,
    /// The path at the head (none for a deleted file).
    pub new_path: Option<RepoPath>,
    /// Lines added, as 1-based line-number ranges in the new file.
    pub added: Vec<Range<u32>>,
    /// Lines removed, as 1-based line-number ranges in the old file.
    pub removed: Vec<Range<u32>>,
    /// A binary file, or one too large to read as text: only its path is judged.
    pub binary: bool,
    /// The size of the side over [`crate::Options::max_file_size`], when that is why it was
    /// not read.
    pub too_large: Option<u64>,
}

impl Change {
    /// The path the change is known by: the new path, or the old one for a deletion.
    pub fn path(&self) -> &RepoPath {
        self.new_path
            .as_ref()
            .or(self.old_path.as_ref())
            .expect("a change has an old path, a new path or both")
    }

    /// How many lines were added.
    pub fn added_lines(&self) -> u64 {
        self.added.iter().map(|r| u64::from(r.end - r.start)).sum()
    }

    /// How many lines were removed.
    pub fn removed_lines(&self) -> u64 {
        self.removed
            .iter()
            .map(|r| u64::from(r.end - r.start))
            .sum()
    }

    /// True when `line` (1-based, new file) is one of the added lines.
    pub fn is_added(&self, line: u32) -> bool {
        // `added` is sorted: the diff produces hunks in order.
        let i = self.added.partition_point(|r| r.end <= line);
        self.added.get(i).is_some_and(|r| r.contains(&line))
    }

    /// True when any line in `lines` (1-based, new file, inclusive range) was added.
    pub fn any_added(&self, first: u32, last: u32) -> bool {
        let i = self.added.partition_point(|r| r.end <= first);
        self.added.get(i).is_some_and(|r| r.start <= last)
    }

    /// True when `line` (1-based, old file) is one of the removed lines.
    pub fn is_removed(&self, line: u32) -> bool {
        let i = self.removed.partition_point(|r| r.end <= line);
        self.removed.get(i).is_some_and(|r| r.contains(&line))
    }

    /// True when any line in `first..=last` (1-based, old file) was removed.
    pub fn any_removed(&self, first: u32, last: u32) -> bool {
        let i = self.removed.partition_point(|r| r.end <= first);
        self.removed.get(i).is_some_and(|r| r.start <= last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(added: Vec<Range<u32>>) -> Change {
        Change {
            kind: ChangeKind::Modified,
            old_path: Some("a.py".into()),
            new_path: Some("a.py".into()),
            added,
            removed: vec![],
            binary: false,
            too_large: None,
        }
    }

    #[test]
    fn added_line_lookup() {
        let c = change(vec![3..5, 10..11]);
        let added: Vec<u32> = (1..12).filter(|&l| c.is_added(l)).collect();
        assert_eq!(added, vec![3, 4, 10]);
        assert!(c.any_added(1, 3));
        assert!(!c.any_added(5, 9));
        assert!(c.any_added(5, 10));
        assert_eq!(c.added_lines(), 3);
    }

    #[test]
    fn path_parts() {
        let p = RepoPath::from("a/b/c.py");
        assert_eq!(p.file_name(), b"c.py");
        assert_eq!(p.parent(), b"a/b");
        assert_eq!(p.dirs().collect::<Vec<_>>(), vec![&b"a"[..], &b"b"[..]]);
        assert_eq!(RepoPath::from("c.py").parent(), b"");
        assert_eq!(RepoPath::join(b"", b"x"), RepoPath::from("x"));
    }
}
