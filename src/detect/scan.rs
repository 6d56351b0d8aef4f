//! One version of one file, masked and indexed for the line rules, and the occurrences they find.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use super::change::RepoPath;
use super::flag::Rule;
use super::lang::Language;
use super::paths::{self, Harness};
use super::{lexer, rules};

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

/// How to scan the files of one path: its language, and whether it holds tests.
pub(crate) struct FileScan {
    lang: Language,
    role: Role,
    /// The directories on the file's path: the packages it belongs to, whose modules a
    /// fallback import may not come from (they could be stand-ins written for the purpose).
    local: Vec<Vec<u8>>,
    stubs: bool,
    focus: bool,
    exits: bool,
    equals: bool,
    outcomes: bool,
    suppressions: bool,
    under_test: bool,
}

impl FileScan {
    /// `on` says which rules the repository has turned on: a rule that is off is not even run.
    pub fn new(
        lang: Language,
        path: &RepoPath,
        is_test: bool,
        on: impl Fn(Rule) -> bool,
    ) -> FileScan {
        let role = Role::of(path, is_test);
        FileScan {
            lang,
            role,
            local: path.dirs().map(<[u8]>::to_vec).collect(),
            stubs: on(Rule::StubbedImport) && rules::stubbed_import::applies(lang, &role),
            exits: on(Rule::ForcedExit) && rules::forced_exit::applies(lang, &role),
            equals: on(Rule::AlwaysEqual) && rules::always_equal::applies(lang),
            outcomes: on(Rule::OutcomePatched) && rules::outcome_patched::applies(lang, &role),
            suppressions: on(Rule::Suppression) && rules::suppression::applies(lang),
            focus: on(Rule::FocusedTest) && rules::focused_test::applies(lang, is_test),
            under_test: on(Rule::SpecialCase)
                && rules::special_case::under_test::applies(lang, &role),
        }
    }

    /// The occurrences of the head and of the base version (either may be absent).
    pub fn both(
        &self,
        new: Option<&lexer::Lexed<'_>>,
        old: Option<&lexer::Lexed<'_>>,
    ) -> (Vec<Occurrence>, Vec<Occurrence>) {
        let stubs = self.stubs;
        let lang = self.lang;
        // Text without a word any pattern needs: nothing to find, so it is not even masked. Both
        // versions are scanned as soon as either may hold something, since newness is their
        // difference.
        let may_hold = |lexed: &lexer::Lexed<'_>| {
            let raw = lexed.raw();
            (stubs && rules::stubbed_import::might_match(lang, raw))
                || (self.focus && rules::focused_test::might_match(lang, raw))
                || (self.exits && rules::forced_exit::might_match(lang, raw))
                || (self.equals && rules::always_equal::might_match(lang, raw))
                || (self.outcomes && rules::outcome_patched::might_match(lang, raw))
                || (self.suppressions && rules::suppression::might_match(lang, raw))
                || (self.under_test && rules::special_case::under_test::might_match(lang, raw))
        };
        if !new.is_some_and(may_hold) && !old.is_some_and(may_hold) {
            return (Vec::new(), Vec::new());
        }
        let new = new.map(Text::of);
        let old = old.map(Text::of);
        // `<dependency> = None` is judged against what either version imports: a change that
        // replaces `import yaml` with `yaml = None` no longer imports it at the head.
        let mut imported = HashSet::new();
        if stubs && self.lang == Language::Python {
            for t in new.iter().chain(old.iter()) {
                rules::stubbed_import::python_imported_names(t, &mut imported);
            }
        }
        let scan = |t: &Option<Text<'_>>| {
            let mut out = Vec::new();
            if let Some(t) = t {
                if stubs {
                    rules::stubbed_import::scan(
                        lang,
                        &self.role,
                        t,
                        &imported,
                        &self.local,
                        &mut out,
                    );
                }
                // Each prefilter again, on this version: a rule whose words it lacks has
                // nothing to find in it.
                if self.exits && rules::forced_exit::might_match(lang, t.raw) {
                    rules::forced_exit::scan(lang, &self.role, t, &mut out);
                }
                if self.equals && rules::always_equal::might_match(lang, t.raw) {
                    rules::always_equal::scan(lang, t, &mut out);
                }
                if self.outcomes && rules::outcome_patched::might_match(lang, t.raw) {
                    rules::outcome_patched::scan(lang, &self.role, t, &mut out);
                }
                if self.suppressions && rules::suppression::might_match(lang, t.raw) {
                    rules::suppression::scan(lang, &self.role, t, &mut out);
                }
                if self.focus {
                    rules::focused_test::scan(lang, t, &mut out);
                }
                if self.under_test && rules::special_case::under_test::might_match(lang, t.raw) {
                    rules::special_case::under_test::scan(lang, t, &mut out);
                }
            }
            out
        };
        (scan(&new), scan(&old))
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
