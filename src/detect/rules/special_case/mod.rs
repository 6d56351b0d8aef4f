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
//! its expected value, and a boolean answer (`is_prime(7919)`) has nothing to look for.
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

mod branches;
mod condition;
mod evidence;
mod literal;

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::bytes::{Regex, RegexBuilder};

use super::tokens::Tokens;
use crate::detect::change::{Change, RepoPath};
use crate::detect::flag::Rule;
use crate::detect::lang::Language;
use crate::detect::{inline_allow, snippet};
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

/// A line that could hold a branch on a literal: a comparison, `case`/`when` or an arm, and a
/// literal's first byte.
static MAY_BRANCH: LazyLock<Regex> = LazyLock::new(|| {
    RegexBuilder::new(r#"(?:==|quals\s*\(|eql\?|\bcase\b|\bwhen\b|=>|->|\bmatch\b)[^\n]*?[0-9"'`]|[0-9"'`][^\n]*?(?:==|quals\s*\(|eql\?|=>|->)"#)
        .unicode(false)
        .build()
        .expect("the rule's patterns are valid (tested)")
});

fn lines_of(text: &[u8]) -> Vec<&[u8]> {
    text.split(|&b| b == b'\n').collect()
}

/// True when one of `lines` (1-based ranges) of `text` could hold a branch: most changed files
/// have none, and are never tokenised.
fn worth_reading(ranges: &[std::ops::Range<u32>], text: &[u8]) -> bool {
    let lines = lines_of(text);
    ranges.iter().any(|r| {
        (r.start..r.end).any(|l| {
            lines
                .get((l as usize).wrapping_sub(1))
                .is_some_and(|line| MAY_BRANCH.is_match(line))
        })
    })
}

/// Looks at one production file: the branches the head has that the base has not, on added
/// lines, and the base's branches the change removed (a move's other half, as `(KIND, key)`).
pub(crate) fn analyze(
    lang: Language,
    change: &Change,
    new: Option<&[u8]>,
    old: Option<&[u8]>,
) -> (Vec<Candidate>, Vec<(&'static str, u64)>) {
    let gained = new.filter(|n| worth_reading(&change.added, n));
    let lost = old.filter(|o| worth_reading(&change.removed, o));
    if gained.is_none() && lost.is_none() {
        return (Vec::new(), Vec::new());
    }
    let head = new
        .map(|n| branches(&Tokens::new(lang, n)))
        .unwrap_or_default();
    let gains = gained.is_some()
        && head
            .iter()
            .any(|b| change.any_added(b.first_line, b.last_line) && !b.distinctive().is_empty());
    if !gains && lost.is_none() {
        return (Vec::new(), Vec::new());
    }
    let base = old
        .map(|o| branches(&Tokens::new(lang, o)))
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
    if let (true, Some(new)) = (gains, new) {
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
            if alternatives.is_empty() {
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

#[cfg(test)]
mod tests;
