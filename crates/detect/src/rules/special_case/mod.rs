//! `special-case`: production code newly answers a test's exact input with a constant.
//!
//! Flags a new `if`, `case`/`when` arm, match arm, postfix `if` or ternary in production code
//! that compares its input (a name, a tuple of names, or a name normalised by `.strip()`,
//! `.lower()`, `str()`, `JSON.stringify()`, …) with *distinctive* literals and returns or yields
//! a constant — `if (a, b) == (17, 25): return 42`, `if (input === 'abc') return 42;`,
//! `"x**2" => 0.333,` — when a test file of the head tree uses those literals within four lines
//! of each other and of the constant. Where the literals are unmistakably test data (a string
//! with operators such as `"x**2"`, two or more distinct literals together, a list of three or
//! more, an unusual number such as 7919), the constant need not be there: a test may compute
//! its expected value, and a boolean answer (`is_prime(7919)`) has nothing to look for. A
//! boolean answer for a datum no logic singles out (`if n == 49: return False`, a date string
//! `"2024-02-30"`) is flagged when a test expects that answer for it on the same line or one
//! beside it (`assert not is_prime(49)`, `Assert.False(IsValid("2024-02-30"))`).
//!
//! Not distinctive, so never a special case: numbers from -2 to 2, strings shorter than three
//! characters or without a letter or digit, `"__main__"`, empty collections, booleans and
//! `None`/`null`/`nil`. A branch returning `None`/`null`/an empty value is a guard, not an
//! answer. Comparisons of attributes (`self.kind == "x"`, `os.name == "nt"`) are dispatch, not
//! input. Three or more such branches on the same input close together (or in one `switch`) are
//! a lookup table: ordinary words and numbers in a table are its vocabulary, and only
//! unmistakable test data is flagged there. A branch that existed at the base (moved,
//! re-indented, re-quoted) is not new.
//!
//! Candidates are found per file (only on lines the change added, and only when an added line
//! could hold one); the test files are read in [`check`], and only when a candidate exists.
//!
//! The most general special case, production code that asks whether a test runs it
//! (`"pytest" in sys.modules`, `process.env.JEST_WORKER_ID`, `testing.Testing()`), is a line
//! rule of its own ([`under_test`]), scanned with the other line rules.

mod branches;
mod condition;
mod evidence;
mod literal;
pub(crate) mod under_test;

use crate::rules::prelude::*;
use std::collections::HashMap;
use std::sync::LazyLock;

use super::tokens::Tokens;
use crate::change::{Change, RepoPath};
use crate::flag::Rule;
use crate::lang::Language;
use crate::lexer::Lexed;
use crate::{inline_allow, snippet};
use branches::{branches, tables};
pub(crate) use evidence::check;
use literal::Lit;

/// The kind under which a lost branch is recorded for the engine's move check.
pub(crate) const KIND: &str = "special-case";

/// How many test files' bytes a check reads at most, looking for the literals.
const MAX_TEST_BYTES: usize = 128 * 1024 * 1024;

/// Lines around a literal in a test within which the others and the constant must be.
const WINDOW: u32 = 4;

/// A branch that newly answers a literal input with a constant, waiting for the test look-up.
#[derive(Debug)]
pub(crate) struct Candidate {
    path: RepoPath,
    lang: Language,
    line: u32,
    key: u64,
    /// The inputs that select the branch, one conjunction per alternative (`a or b`), with only
    /// the distinctive literals kept.
    alternatives: Vec<Vec<Lit>>,
    constant: Lit,
    shown_constant: String,
    /// One of three or more branches on the same input: a lookup table.
    table: bool,
    snippet: Option<String>,
    allowed: Option<String>,
}

// ---- Finding branches ------------------------------------------------------------------------

/// True when the rule reads files of `lang` (production code only).
pub(crate) fn applies(lang: Language, is_test: bool) -> bool {
    !is_test && !matches!(lang, Language::Elixir)
}

/// The words a branch on a literal may need besides `==`, `=>` and `->`: found with SIMD, then
/// their neighbourhood is looked at byte by byte ([`may_branch`]).
static WORDS: LazyLock<crate::rules::LiteralSet> = LazyLock::new(|| {
    crate::rules::literal_set(&[
        "quals",
        "case",
        "when",
        " is ",
        "DeepEqual",
        "EqualFold",
        "strcmp",
        "tartswith(",
        "tartsWith(",
        "tarts_with(",
        "tart_with?(",
    ])
});

/// A literal that can be distinctive starts at `p` (after blanks): a quote, a tuple or list, or
/// a number other than 0, 1, -1 and 2.
fn literal_after(text: &[u8], mut p: usize) -> bool {
    let at = |k: usize| text.get(k).copied().unwrap_or(0);
    while matches!(at(p), b' ' | b'\t') {
        p += 1;
    }
    if at(p) == b'-' {
        p += 1;
        while matches!(at(p), b' ' | b'\t') {
            p += 1;
        }
    }
    match at(p) {
        b'"' | b'\'' | b'`' | b'(' | b'[' => true,
        b'3'..=b'9' => true,
        b'1'..=b'2' => at(p + 1).is_ascii_digit() || matches!(at(p + 1), b'_' | b'.'),
        b'0' => matches!(at(p + 1), b'.' | b'x' | b'X'),
        _ => false,
    }
}

/// A literal ends right before `p` (before blanks): a quote, or a number token.
fn literal_before(text: &[u8], p: usize) -> bool {
    let mut e = p;
    while e > 0 && matches!(text[e - 1], b' ' | b'\t') {
        e -= 1;
    }
    let Some(&last) = e.checked_sub(1).and_then(|k| text.get(k)) else {
        return false;
    };
    if matches!(last, b'"' | b'\'' | b'`') {
        return true;
    }
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'.';
    let mut s = e;
    while s > 0 && word(text[s - 1]) {
        s -= 1;
    }
    s < e
        && text[s].is_ascii_digit()
        && (s == 0 || !(text[s - 1].is_ascii_alphanumeric() || text[s - 1] == b'_'))
}

/// A `(…) =>` arm at the start of its line: `(17, 25) => 42`.
fn tuple_arm(text: &[u8], p: usize) -> bool {
    let mut e = p;
    while e > 0 && matches!(text[e - 1], b' ' | b'\t') {
        e -= 1;
    }
    if e == 0 || text[e - 1] != b')' {
        return false;
    }
    let start = memchr::memrchr(b'\n', &text[..e]).map_or(0, |k| k + 1);
    text[start..e].iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'(')
}

/// Where text could hold a branch on a distinctive literal: an equality, `is`, `case` or
/// `when` right before a literal that is not 0, 1, -1 or 2 (or a quote, a tuple, a list), a
/// literal right before an equality or an arm's `=>`/`->`, a tuple arm, or an equality call.
/// Read on the raw text, it lets most changed files go without being tokenised.
pub(super) fn branch_hits(text: &[u8]) -> Vec<usize> {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut hits: Vec<usize> = Vec::new();
    // One SIMD pass per operator: faster than one search for all of them, as they are short.
    hits.extend(memchr::memmem::find_iter(text, b"==").filter(|&s| {
        let negated = s > 0 && text[s - 1] == b'!';
        let after = if text.get(s + 2) == Some(&b'=') {
            s + 3
        } else {
            s + 2
        };
        !negated && (literal_after(text, after) || literal_before(text, s))
    }));
    for op in [&b"=>"[..], b"->"] {
        hits.extend(
            memchr::memmem::find_iter(text, op)
                .filter(|&s| literal_before(text, s) || tuple_arm(text, s)),
        );
    }
    hits.extend(WORDS.find_iter(text).filter_map(|m| {
        let (s, e) = (m.start, m.end);
        let hit = match &text[m] {
            b"case" | b"when" => {
                (s == 0 || !ident(text[s - 1]))
                    && !text.get(e).copied().is_some_and(ident)
                    && literal_after(text, e)
            }
            b" is " => literal_after(text, e),
            // `equals(`, `DeepEqual(`, `strcmp(`, `startswith(`: rare enough to read the file.
            _ => true,
        };
        hit.then_some(s)
    }));
    hits
}

#[cfg(test)]
pub(super) fn may_branch(text: &[u8]) -> bool {
    !branch_hits(text).is_empty()
}

/// True when one of `ranges` (1-based lines, end exclusive) of `text` could hold a branch: most
/// changed files have none, and are never tokenised. Lines are counted only up to the hits.
fn worth_reading(ranges: &[std::ops::Range<u32>], text: &[u8]) -> bool {
    if ranges.is_empty() {
        return false;
    }
    let mut hits = branch_hits(text);
    hits.sort_unstable();
    let mut line = 1usize;
    let mut pos = 0usize;
    for hit in hits {
        line += memchr::memchr_iter(b'\n', &text[pos..hit]).count();
        pos = hit;
        let l = u32::try_from(line).unwrap_or(u32::MAX);
        if ranges.iter().any(|r| r.contains(&l)) {
            return true;
        }
    }
    false
}

fn lines_of(text: &[u8]) -> Vec<&[u8]> {
    text.split(|&b| b == b'\n').collect()
}

/// Looks at one production file: the branches the head has that the base has not, on added
/// lines, and the base's branches the change removed (a move's other half, as `(KIND, key)`).
pub(crate) fn analyze(
    lang: Language,
    change: &Change,
    new: Option<&Lexed<'_>>,
    old: Option<&Lexed<'_>>,
) -> (Vec<Candidate>, Vec<(&'static str, u64)>) {
    let gained = new.filter(|n| worth_reading(&change.added, n.raw()));
    let lost = old.filter(|o| worth_reading(&change.removed, o.raw()));
    if gained.is_none() && lost.is_none() {
        return (Vec::new(), Vec::new());
    }
    let head = new
        .map(|n| branches(&Tokens::from_masked(lang, n.raw(), n.masked())))
        .unwrap_or_default();
    let gains = gained.is_some()
        && head
            .iter()
            .any(|b| change.any_added(b.first_line, b.last_line) && !b.distinctive().is_empty());
    if !gains && lost.is_none() {
        return (Vec::new(), Vec::new());
    }
    let base = old
        .map(|o| branches(&Tokens::from_masked(lang, o.raw(), o.masked())))
        .unwrap_or_default();
    let mut base_keys: HashMap<u64, usize> = HashMap::new();
    for b in &base {
        *base_keys.entry(b.key).or_default() += 1;
    }
    let mut head_keys: HashMap<u64, usize> = HashMap::new();
    for b in &head {
        *head_keys.entry(b.key).or_default() += 1;
    }
    let mut out = Vec::new();
    if let (true, Some(new)) = (gains, new.map(Lexed::raw)) {
        let tables = tables(&head);
        let path = change.path().clone();
        for (i, b) in head.iter().enumerate() {
            if !change.any_added(b.first_line, b.last_line) {
                continue;
            }
            // The same branch at the base (re-indented, moved within the file) is not new.
            if let Some(n) = base_keys.get_mut(&b.key)
                && *n > 0
            {
                *n -= 1;
                continue;
            }
            let alternatives = b.distinctive();
            if alternatives.is_empty() || answers_its_input(&alternatives, &b.constant) {
                continue;
            }
            out.push(Candidate {
                path: path.clone(),
                lang,
                line: b.line,
                key: b.key,
                alternatives,
                constant: b.constant.clone(),
                shown_constant: b.shown_constant.clone(),
                table: tables[i],
                snippet: Some(snippet(new, b.line)),
                allowed: inline_allow(new, b.line, Rule::SpecialCase),
            });
        }
    }
    let mut gone = Vec::new();
    for b in &base {
        if !change.any_removed(b.first_line, b.last_line) || b.distinctive().is_empty() {
            continue;
        }
        match head_keys.get_mut(&b.key) {
            Some(n) if *n > 0 => *n -= 1,
            _ => gone.push((KIND, b.key)),
        }
    }
    (out, gone)
}

/// A branch whose answer is the very literal it compared its input with
/// (`if (weight === 'bold') return 'bold'`): it hands the input back, which computes nothing
/// a test could be answered with.
fn answers_its_input(alternatives: &[Vec<Lit>], constant: &Lit) -> bool {
    alternatives
        .iter()
        .any(|conj| conj.len() == 1 && conj[0] == *constant)
}

/// The rule's registry entry and what the detector runs for it.
pub(crate) const RULE: RuleInfo = RuleInfo {
    rule: Rule::SpecialCase,
    id: "special-case",
    severity: Severity::Warning,
    source: Source::Detector,
    languages: "Python, JS/TS, Go, Rust, Java/Kotlin, C#, Ruby, PHP, Swift, C++",
    summary: "Production code newly returns a constant for the exact input a test uses.",
    help: "Hard-coding a test's input makes that test pass and nothing else work. Flags a \
           new `if`, `case` or match arm in production code that compares its input with a \
           distinctive literal (not 0, 1, -1, 2, `None`, booleans, empty or short strings) \
           and returns a constant, when a test file of the head tree calls with that literal \
           and expects that constant (or the literal alone is unmistakable test data, such as \
           `\"x**2\"` or `(17, 25)`). Also flags production code that newly asks whether \
           a test runs it (`\"pytest\" in sys.modules`, `PYTEST_CURRENT_TEST`, \
           `process.env.JEST_WORKER_ID`, `testing.Testing()`, `cfg!(test)`). Base cases, \
           lookup tables of ordinary words, literals no test uses, branches that only moved \
           and `NODE_ENV === 'test'` are not flagged.",
    judges_tests: false,
    passes: &[
        Pass::Lines(
            Reads::new(under_test::reads, under_test::prefilter),
            under_test::lines,
        ),
        Pass::Code(Reads::new(reads, Reads::ANY.prefilter), find_branches),
        Pass::Change(judge_branches),
    ],
};

fn reads(file: &File<'_>) -> bool {
    file.lang
        .is_some_and(|lang| applies(lang, file.role.is_test))
}

/// New branches on a literal, held for [`judge_branches`], and the base's branches the change
/// removed (a move's other half).
fn find_branches(code: &Code<'_>, out: &mut Out<'_>) {
    let (special, lost) = analyze(code.lang, code.file.change, code.new, code.old);
    out.hold(special);
    out.lost.extend(lost);
}

/// The new branches of every file, judged against the head's tests (looked up only when some
/// file holds one).
fn judge_branches(across: &mut Across<'_, '_>) -> Vec<(Flag, Option<String>)> {
    let candidates: Vec<Candidate> = across
        .take::<Vec<Candidate>>()
        .into_iter()
        .flat_map(|(_, c)| c)
        .collect();
    check(&candidates, across.files, across.lost, across.trees)
}

#[cfg(test)]
mod convention_tests;
#[cfg(test)]
mod tests;
