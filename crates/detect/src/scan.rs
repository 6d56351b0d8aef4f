//! One version of one file, masked and indexed for the line rules, and the occurrences they find;
//! what a path says of a file ([`Role`]); a flagged line's snippet and inline allow.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::hash::{DefaultHasher, Hash, Hasher};

use super::change::RepoPath;
use super::flag::{Flag, Rule};
use super::lang::Language;
use super::lexer;
use super::paths::{self, Harness};

/// Something a line rule found in one version of a file. Occurrences of the same `kind` are
/// counted at the base and at the head; the surplus is what the change introduced.
#[derive(Clone, Debug)]
pub(crate) struct Occurrence {
    pub rule: Rule,
    /// A stable name for what was found (`py-mark-skip`, `py-try-import`, …).
    pub kind: &'static str,
    /// The lines the occurrence spans, 1-based and inclusive; it is new only where the change
    /// added one of them.
    pub first: u32,
    pub last: u32,
    /// The line a reviewer is pointed to.
    pub line: u32,
    /// The occurrence's code with white space removed, hashed: the same line moved to another
    /// file, or re-indented, has the same key.
    pub key: u64,
    pub message: String,
    /// Below the rule's default for a form of it that is less often right (`None`: the
    /// default).
    pub severity: Option<crate::flag::Severity>,
}

/// One version of a file: its bytes, and the same bytes with comments and string contents
/// blanked out, so rules match code only.
pub(crate) struct Text<'a> {
    pub raw: &'a [u8],
    pub masked: Cow<'a, [u8]>,
    lang: Language,
    line_starts: OnceCell<Vec<usize>>,
    with_comments: OnceCell<Vec<u8>>,
}

impl<'a> Text<'a> {
    /// `raw`, masked on its own: for tests of one rule on one text.
    #[cfg(test)]
    pub fn new(lang: Language, raw: &'a [u8]) -> Text<'a> {
        Text::with_mask(lang, raw, Cow::Owned(lexer::mask(lang, raw)))
    }

    /// The version `lexed`, masked as it was for the file's other readers.
    pub fn of(lexed: &'a lexer::Lexed<'_>) -> Text<'a> {
        Text::with_mask(lexed.lang(), lexed.raw(), Cow::Borrowed(lexed.masked()))
    }

    fn with_mask(lang: Language, raw: &'a [u8], masked: Cow<'a, [u8]>) -> Text<'a> {
        Text {
            raw,
            masked,
            lang,
            line_starts: OnceCell::new(),
            with_comments: OnceCell::new(),
        }
    }

    /// The bytes with only string contents blanked: code and comments. Built on first use, for
    /// the one rule that reads comments (suppressions live there).
    pub fn with_comments(&self) -> &[u8] {
        self.with_comments
            .get_or_init(|| lexer::mask_strings(self.lang, self.raw))
    }

    /// True when the byte at `offset` is part of a comment (not code, not a string).
    pub fn in_comment(&self, offset: usize) -> bool {
        let visible = self.with_comments().get(offset).is_some_and(|&b| b != b' ');
        visible && self.masked.get(offset) == Some(&b' ')
    }

    /// Built on first use: most files have no occurrence at all and never need it.
    fn line_starts(&self) -> &[usize] {
        self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(memchr::memchr_iter(b'\n', &self.masked).map(|i| i + 1))
                .collect()
        })
    }

    /// The offset of the first byte of a 1-based line (the end of the text past the last).
    pub fn line_start(&self, line: u32) -> usize {
        let i = (line as usize).saturating_sub(1);
        self.line_starts()
            .get(i)
            .copied()
            .unwrap_or(self.masked.len())
    }

    /// The 1-based line holding byte `offset`.
    pub fn line_of(&self, offset: usize) -> u32 {
        let starts = self.line_starts();
        let line = starts.partition_point(|&s| s <= offset);
        u32::try_from(line).unwrap_or(u32::MAX)
    }

    pub fn line_count(&self) -> u32 {
        u32::try_from(self.line_starts().len()).unwrap_or(u32::MAX)
    }

    /// The masked bytes of a 1-based line, without its line ending.
    pub fn masked_line(&self, line: u32) -> &[u8] {
        let starts = self.line_starts();
        let i = (line as usize).saturating_sub(1);
        let Some(&start) = starts.get(i) else {
            return &[];
        };
        let end = starts.get(i + 1).map_or(self.masked.len(), |&e| e - 1);
        let l = &self.masked[start..end.max(start)];
        l.strip_suffix(b"\r").unwrap_or(l)
    }

    /// The key of the code on lines `first..=last`: white space removed, then hashed.
    pub fn key(&self, first: u32, last: u32) -> u64 {
        let mut h = DefaultHasher::new();
        for line in first..=last {
            for &b in self.masked_line(line) {
                if !b.is_ascii_whitespace() {
                    b.hash(&mut h);
                }
            }
        }
        h.finish()
    }

    /// An occurrence spanning the bytes `start..end`, reported on its first line.
    pub fn occurrence(
        &self,
        rule: Rule,
        kind: &'static str,
        start: usize,
        end: usize,
        message: String,
    ) -> Occurrence {
        let first = self.line_of(start);
        let last = self.line_of(end.saturating_sub(1).max(start));
        Occurrence {
            rule,
            kind,
            first,
            last,
            line: first,
            key: self.key(first, first),
            message,
            severity: None,
        }
    }
}

/// What a file's path says about it, for the rules that look beyond its language.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Role {
    /// A test file, by convention or by the configured globs.
    pub is_test: bool,
    /// A file that sets up or configures the test run (`conftest.py`, `jest.setup.js`).
    pub harness: Option<Harness>,
    /// Under a fixtures or test-data directory: run or read by tests, not a test.
    pub fixture: bool,
    /// A Go file whose name ends in `_test.go`: what `go test` compiles.
    pub go_test: bool,
    /// A type test (`*.test-d.ts`, a `tsd` or `type-tests` directory), where
    /// `@ts-expect-error` is the assertion, not a suppression.
    pub type_test: bool,
}

impl Role {
    pub fn of(path: &RepoPath, is_test: bool) -> Role {
        Role {
            is_test,
            harness: paths::harness(path),
            fixture: paths::is_fixture(path),
            go_test: path.file_name().ends_with(b"_test.go"),
            type_test: paths::is_type_test(path),
        }
    }
}

/// Reads `forgeward: allow <rule> -- <reason>` from one line; the reason is required.
pub(crate) fn parse_inline_allow(line: &[u8], rule: Rule) -> Option<String> {
    const MARK: &[u8] = b"forgeward: allow ";
    let at = line.windows(MARK.len()).position(|w| w == MARK)?;
    let rest = String::from_utf8_lossy(&line[at + MARK.len()..]);
    let (id, reason) = rest.split_once("--")?;
    let reason = reason
        .trim()
        .trim_end_matches("*/")
        .trim_end_matches("-->")
        .trim();
    (id.trim() == rule.id() && !reason.is_empty()).then(|| reason.to_owned())
}

/// A head-side flag's snippet and the inline allow on or above its line.
pub(crate) fn head_line(new: Option<&[u8]>, flag: &Flag) -> (Option<String>, Option<String>) {
    match (new, flag.line) {
        (Some(text), Some(line)) => (
            Some(snippet(text, line)),
            inline_allow(text, line, flag.rule),
        ),
        _ => (None, None),
    }
}

/// The text of a 1-based line, trimmed, shortened for a report.
pub(crate) fn snippet(text: &[u8], line: u32) -> String {
    /// Long enough for any real decorator or call, short enough for a table cell.
    const MAX_CHARS: usize = 200;
    let raw = nth_line(text, line).unwrap_or_default();
    let s = String::from_utf8_lossy(raw);
    let s = s.trim();
    match s.char_indices().nth(MAX_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// The bytes of a 1-based line, without its line ending.
fn nth_line(text: &[u8], line: u32) -> Option<&[u8]> {
    let raw = text
        .split(|&b| b == b'\n')
        .nth(line.checked_sub(1)? as usize)?;
    Some(raw.strip_suffix(b"\r").unwrap_or(raw))
}

/// `forgeward: allow <rule> -- <reason>` on the flagged line or the line above.
pub(crate) fn inline_allow(text: &[u8], line: u32, rule: Rule) -> Option<String> {
    [line, line.saturating_sub(1)]
        .into_iter()
        .filter_map(|l| nth_line(text, l))
        .find_map(|l| parse_inline_allow(l, rule))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_allow_needs_rule_and_reason() {
        let l = b"    @pytest.mark.skip  # forgeward: allow skip-marker -- flaky upstream, see #4";
        assert_eq!(
            parse_inline_allow(l, Rule::SkipMarker).as_deref(),
            Some("flaky upstream, see #4")
        );
        assert_eq!(parse_inline_allow(l, Rule::StrayBackup), None);
        assert_eq!(
            parse_inline_allow(b"x # forgeward: allow skip-marker", Rule::SkipMarker),
            None
        );
        assert_eq!(
            parse_inline_allow(b"x # forgeward: allow skip-marker --  ", Rule::SkipMarker),
            None
        );
        assert_eq!(
            parse_inline_allow(
                b"/* forgeward: allow skip-marker -- slow */",
                Rule::SkipMarker
            )
            .as_deref(),
            Some("slow")
        );
    }

    #[test]
    fn lines_and_keys() {
        let t = Text::new(Language::Python, b"a = 1\r\n  b = 2  # c\nlast");
        assert_eq!(t.line_count(), 3);
        assert_eq!(t.line_of(0), 1);
        assert_eq!(t.line_of(7), 2);
        assert_eq!(t.masked_line(1), b"a = 1");
        assert_eq!(t.masked_line(3), b"last");
        assert_eq!(t.masked_line(4), b"");
        let u = Text::new(Language::Python, b"b=2\n");
        assert_eq!(
            t.key(2, 2),
            u.key(1, 1),
            "white space and comments do not count"
        );
    }
}
