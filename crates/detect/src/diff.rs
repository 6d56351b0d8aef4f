//! Line diffs of two versions of a file: the added and removed line ranges a [`Change`]
//! carries, and the hunks that pair them.
//!
//! [`Change`]: crate::Change

use std::ops::Range;

use imara_diff::{Algorithm, Diff, InternedInput, sources};

/// The added lines (ranges in the new text) and removed lines (ranges in the old text) between
/// two versions of a file, 1-based.
///
/// imara-diff's Myers (git's default algorithm, with git's indent heuristic for sliding hunks)
/// rather than libgit2's patch: libgit2 also hashes both buffers and validates them as UTF-8,
/// which doubled the cost of a large check's line diffs.
pub fn line_diff(old: &[u8], new: &[u8]) -> (Vec<Range<u32>>, Vec<Range<u32>>) {
    let input = InternedInput::new(sources::byte_lines(old), sources::byte_lines(new));
    let mut diff = Diff::compute(Algorithm::Myers, &input);
    diff.postprocess_lines(&input);
    let mut added = Vec::new();
    let mut removed = Vec::new();
    for hunk in diff.hunks() {
        if !hunk.after.is_empty() {
            added.push(hunk.after.start + 1..hunk.after.end + 1);
        }
        if !hunk.before.is_empty() {
            removed.push(hunk.before.start + 1..hunk.before.end + 1);
        }
    }
    (added, removed)
}

/// Each hunk between two versions of a file, as `(removed, added)` line ranges, 1-based: the
/// removed lines in the old text, the added lines in the new (an empty range where a hunk only
/// adds or only removes, placed where the other side's lines are).
pub fn hunks(old: &[u8], new: &[u8]) -> Vec<(Range<u32>, Range<u32>)> {
    let input = InternedInput::new(sources::byte_lines(old), sources::byte_lines(new));
    let mut diff = Diff::compute(Algorithm::Myers, &input);
    diff.postprocess_lines(&input);
    diff.hunks()
        .map(|h| {
            (
                h.before.start + 1..h.before.end + 1,
                h.after.start + 1..h.after.end + 1,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::line_diff;

    type Pairs = Vec<(u32, u32)>;

    /// Added and removed ranges as `(start, end)` pairs.
    fn diff(old: &[u8], new: &[u8]) -> (Pairs, Pairs) {
        let (added, removed) = line_diff(old, new);
        let pairs =
            |v: Vec<std::ops::Range<u32>>| v.into_iter().map(|r| (r.start, r.end)).collect();
        (pairs(added), pairs(removed))
    }

    #[test]
    fn line_ranges_are_one_based() {
        assert_eq!(
            diff(b"a\nb\nc\n", b"a\nB\nc\nd\n"),
            (vec![(2, 3), (4, 5)], vec![(2, 3)])
        );
        assert_eq!(diff(b"", b"x\ny\nz\n"), (vec![(1, 4)], vec![]));
        assert_eq!(diff(b"x\n", b""), (vec![], vec![(1, 2)]));
    }

    #[test]
    fn a_missing_final_newline_is_a_changed_line() {
        assert_eq!(diff(b"a\nb", b"a\nb\n"), (vec![(2, 3)], vec![(2, 3)]));
    }
}
