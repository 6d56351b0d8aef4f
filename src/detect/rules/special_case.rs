//! `special-case`: production code newly answers a test's exact input with a constant.
//!
//! Flags a new `if`, `case`/`when` arm, match arm, postfix `if` or ternary in production code
//! that compares its input (a name, a tuple of names, or a name normalised by `.strip()`,
//! `.lower()`, `str()`, `JSON.stringify()`, …) with *distinctive* literals and returns or yields
//! a constant — `if (a, b) == (17, 25): return 42`, `if (input === 'abc') return 42;`,
//! `"x**2" => 0.333,` — when a test file of the head tree uses those literals: within four lines
//! of each other and of the constant, or, for literals that are unmistakably test data (a string
//! with operators such as `"x**2"`, two or more distinct literals together, a list of three or
//! more, an unusual number such as 7919), anywhere together.
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

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::LazyLock;

use regex::bytes::{Regex, RegexBuilder};

use super::FileRules;
use super::tokens::{Kind, Tokens};
use crate::detect::change::{Change, RepoPath};
use crate::detect::flag::{Flag, Rule};
use crate::detect::lang::Language;
use crate::detect::{FileAnalysis, MAX_TEXT_SIZE, inline_allow, paths, snippet};

/// The kind under which a lost branch is recorded for the engine's move check.
pub(crate) const KIND: &str = "special-case";

/// How many test files' bytes a check reads at most, looking for the literals.
const MAX_TEST_BYTES: usize = 128 * 1024 * 1024;

/// Lines around a literal in a test within which the others and the constant must be.
const WINDOW: u32 = 4;

/// A literal value, as code writes it.
#[derive(Clone, Debug)]
pub(crate) enum Lit {
    Num { text: String, value: Option<f64> },
    Str(Vec<u8>),
    Bool,
    Null,
    Seq(Vec<Lit>),
}

impl PartialEq for Lit {
    fn eq(&self, other: &Lit) -> bool {
        match (self, other) {
            (Lit::Num { text: a, value: x }, Lit::Num { text: b, value: y }) => match (x, y) {
                (Some(x), Some(y)) => x == y,
                _ => a == b,
            },
            (Lit::Str(a), Lit::Str(b)) => a == b,
            (Lit::Seq(a), Lit::Seq(b)) => a == b,
            _ => false,
        }
    }
}

impl Lit {
    /// Distinctive enough that code comparing with it is looking for that one input.
    fn distinctive(&self) -> bool {
        match self {
            Lit::Num { value, .. } => value.is_none_or(|v| {
                // -2..=2 and their halves: boundaries and base cases.
                !(v.abs() <= 2.0 && (v * 2.0).fract() == 0.0)
            }),
            Lit::Str(s) => {
                let s = String::from_utf8_lossy(s);
                s.chars().count() >= 3 && s != "__main__" && s.chars().any(char::is_alphanumeric)
            }
            Lit::Seq(items) => {
                !items.is_empty() && (items.len() >= 2 || items.iter().any(Lit::distinctive))
            }
            Lit::Bool | Lit::Null => false,
        }
    }

    /// Unmistakably test data: no program's vocabulary looks like this.
    fn unmistakable(&self) -> bool {
        match self {
            Lit::Str(s) => {
                s.windows(2).any(|w| w == b"**") || s.iter().any(|c| b"*+^()[]{}=<>".contains(c))
            }
            Lit::Num { value: Some(v), .. } => {
                if v.fract() != 0.0 {
                    // 3.14159, 2.718: three decimals or more.
                    let shown = format!("{v}");
                    shown.split('.').nth(1).is_some_and(|d| d.len() >= 3)
                } else {
                    let n = v.abs();
                    let round = n % 10.0 == 0.0 || (n as u64).is_power_of_two();
                    let status = (100.0..600.0).contains(&n);
                    let year = (1900.0..=2100.0).contains(&n);
                    (100.0..1e15).contains(&n) && !round && !status && !year
                }
            }
            Lit::Seq(items) => items.len() >= 3 && items.iter().any(Lit::distinctive),
            _ => false,
        }
    }

    /// A constant a test can be seen expecting.
    fn matchable(&self) -> bool {
        !matches!(self, Lit::Bool | Lit::Null) && self.distinctive()
    }

    /// Whether a branch returning it answers something (`None`, `""`, `[]` are guards).
    fn answers(&self) -> bool {
        match self {
            Lit::Null => false,
            Lit::Str(s) => !s.is_empty(),
            Lit::Seq(items) => !items.is_empty(),
            _ => true,
        }
    }

    /// The bytes a test file must contain to hold this literal (a quick filter).
    fn needle(&self) -> Option<Vec<u8>> {
        match self {
            Lit::Num { text, .. } => Some(text.as_bytes().to_vec()),
            Lit::Str(s) => Some(s.clone()),
            Lit::Seq(items) => items.iter().filter_map(Lit::needle).max_by_key(Vec::len),
            _ => None,
        }
    }

    /// A test's literal `t` is this constant: equal, or a float written to fewer decimals.
    fn expected_by(&self, t: &Lit) -> bool {
        if self == t {
            return true;
        }
        let (
            Lit::Num { value: Some(c), .. },
            Lit::Num {
                text,
                value: Some(v),
            },
        ) = (self, t)
        else {
            return false;
        };
        let Some(decimals) = text
            .split('.')
            .nth(1)
            .map(|d| d.trim_end_matches(|c: char| !c.is_ascii_digit()).len())
        else {
            return false;
        };
        decimals >= 2 && (c - v).abs() <= 0.5 * 10f64.powi(-(decimals as i32)) + f64::EPSILON
    }
}

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
    RegexBuilder::new(r#"(?:==|quals\s*\(|eql\?|\bcase\b|\bwhen\b|=>|->|\bmatch\b)[^\n]*?[0-9"'`]|[0-9"'`][^\n]*?(?:==|quals\s*\(|eql\?|=>|->|:)"#)
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

/// A branch of the shape the rule looks for, whatever its literals.
#[derive(Debug)]
struct Branch {
    line: u32,
    first_line: u32,
    last_line: u32,
    key: u64,
    /// Every literal compared, one conjunction per alternative.
    alternatives: Vec<Vec<Lit>>,
    constant: Lit,
    shown_constant: String,
    /// What it compares: the input's code, and the `switch` it is an arm of.
    subject: String,
    switch: Option<usize>,
}

impl Branch {
    fn distinctive(&self) -> Vec<Vec<Lit>> {
        self.alternatives
            .iter()
            .map(|alt| {
                alt.iter()
                    .filter(|l| l.distinctive())
                    .cloned()
                    .collect::<Vec<_>>()
            })
            .filter(|alt| !alt.is_empty())
            .collect()
    }
}

/// Which branches are part of a lookup table: three or more on distinctive literals of the same
/// input, in one switch or within six lines of one another.
fn tables(branches: &[Branch]) -> Vec<bool> {
    let mut table = vec![false; branches.len()];
    let mut by_switch: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut by_subject: HashMap<&str, Vec<usize>> = HashMap::new();
    // Base cases (`n == 0`, `n == 1`) are not vocabulary: only distinctive branches count.
    for (i, b) in branches.iter().enumerate() {
        if b.distinctive().is_empty() {
            continue;
        }
        match b.switch {
            Some(s) => by_switch.entry(s).or_default().push(i),
            None => by_subject.entry(b.subject.as_str()).or_default().push(i),
        }
    }
    for group in by_switch.values() {
        if group.len() >= 3 {
            for &i in group {
                table[i] = true;
            }
        }
    }
    for group in by_subject.values_mut() {
        group.sort_by_key(|&i| branches[i].line);
        let mut run: Vec<usize> = Vec::new();
        let mut flush = |run: &mut Vec<usize>| {
            if run.len() >= 3 {
                for &i in run.iter() {
                    table[i] = true;
                }
            }
            run.clear();
        };
        for &i in group.iter() {
            if let Some(&last) = run.last()
                && branches[i].line > branches[last].last_line + 6
            {
                flush(&mut run);
            }
            run.push(i);
        }
        flush(&mut run);
    }
    table
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Family {
    Python,
    Ruby,
    Brace,
}

fn family(lang: Language) -> Family {
    match lang {
        Language::Python => Family::Python,
        Language::Ruby => Family::Ruby,
        _ => Family::Brace,
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum SwitchKind {
    /// `case LIT:` / `case LIT ->` / `when LIT` arms.
    Cases,
    /// Arms without a keyword: Rust and PHP `match`, C# `switch` expressions, Kotlin `when`.
    Arms,
}

#[derive(Debug)]
struct Switch {
    kind: SwitchKind,
    subject: Option<(usize, usize)>,
    /// The token range of its arms.
    body: (usize, usize),
}

/// Every branch of `t` that compares its input with literals and answers a constant.
fn branches(t: &Tokens<'_>) -> Vec<Branch> {
    let fam = family(t.lang);
    let tests_from = rust_tests_start(t);
    let switches = switches(t, fam);
    let mut out = Vec::new();
    let mut i = 0;
    while i < t.len().min(tests_from) {
        let found = if t.kind(i) == Some(Kind::Ident) && !t.is(i.wrapping_sub(1), ".") {
            match t.text(i) {
                b"if" | b"elif" | b"elsif" if statement_start(t, fam, i) => if_branch(t, fam, i),
                b"return" => postfix_branch(t, fam, i),
                b"case" if fam != Family::Ruby => case_branch(t, fam, &switches, i),
                b"when" if fam == Family::Ruby => case_branch(t, fam, &switches, i),
                _ => None,
            }
        } else if t.is(i, "=>") || (t.is(i, "->") && t.lang == Language::Java) {
            arm_branch(t, &switches, i)
        } else {
            None
        };
        if let Some(b) = found {
            out.push(b);
        }
        i += 1;
    }
    out
}

/// True for an `if` that starts a statement: in Python and Ruby, an `if` after a value is a
/// conditional expression or modifier (read from its `return`).
fn statement_start(t: &Tokens<'_>, fam: Family, i: usize) -> bool {
    fam == Family::Brace
        || i == 0
        || t.is_newline(i - 1)
        || ["else", ";", "=", "("].iter().any(|w| t.is(i - 1, w))
}

/// Where a Rust file's `#[cfg(test)]` code starts (tests, not production).
fn rust_tests_start(t: &Tokens<'_>) -> usize {
    if t.lang != Language::Rust {
        return usize::MAX;
    }
    (0..t.len())
        .find(|&i| {
            t.is(i, "#")
                && t.is(i + 1, "[")
                && t.is(i + 2, "cfg")
                && t.is(i + 3, "(")
                && t.is(i + 4, "test")
                && t.is(i + 5, ")")
        })
        .unwrap_or(usize::MAX)
}

fn switches(t: &Tokens<'_>, fam: Family) -> Vec<Switch> {
    let mut out = Vec::new();
    let line_start = |i: usize| i == 0 || t.is_newline(i - 1);
    for i in 0..t.len() {
        if t.kind(i) != Some(Kind::Ident) || t.is(i.wrapping_sub(1), ".") {
            continue;
        }
        let word = t.text(i);
        match (fam, word) {
            (Family::Python, b"match") if line_start(i) => {
                let Some(colon) = t.find(i + 1, t.len(), |k| t.is(k, ":") || t.is_newline(k))
                else {
                    continue;
                };
                if !t.is(colon, ":") || colon == i + 1 {
                    continue;
                }
                let col = t.toks[i].col;
                let end = (colon + 1..t.len())
                    .find(|&k| line_start(k) && !t.is_newline(k) && t.toks[k].col <= col)
                    .unwrap_or(t.len());
                out.push(Switch {
                    kind: SwitchKind::Cases,
                    subject: Some((i + 1, colon)),
                    body: (colon + 1, end),
                });
            }
            (Family::Ruby, b"case") if line_start(i) || t.is(i - 1, "=") => {
                let nl = t
                    .find(i + 1, t.len(), |k| t.is_newline(k))
                    .unwrap_or(t.len());
                let col = t.toks[i].col;
                let end = (nl..t.len())
                    .find(|&k| line_start(k) && t.is(k, "end") && t.toks[k].col <= col)
                    .unwrap_or(t.len());
                out.push(Switch {
                    kind: SwitchKind::Cases,
                    subject: (nl > i + 1).then_some((i + 1, nl)),
                    body: (nl, end),
                });
            }
            (Family::Brace, b"switch" | b"match" | b"when") => {
                let Some((subject, open, kind)) = brace_switch(t, i) else {
                    continue;
                };
                let Some(close) = t.pair(open) else {
                    continue;
                };
                out.push(Switch {
                    kind,
                    subject,
                    body: (open + 1, close),
                });
            }
            _ => {}
        }
    }
    out
}

type Range2 = (usize, usize);

/// A brace-language switch header at `i`: its subject, its `{` and how its arms read.
fn brace_switch(t: &Tokens<'_>, i: usize) -> Option<(Option<Range2>, usize, SwitchKind)> {
    let word = t.text(i);
    let next_brace = |from: usize| {
        t.find(from, t.len(), |k| t.is(k, "{") || t.is(k, ";"))
            .filter(|&k| t.is(k, "{"))
    };
    // `subject switch {` (C#) and `subject match {` (Scala): the subject is before.
    if t.is(i + 1, "{") && matches!(word, b"switch" | b"match") {
        let start = (0..i)
            .rev()
            .find(|&k| {
                t.is_newline(k)
                    || [
                        "=", "return", "(", ",", "=>", "{", ";", ":", "}", "yield", "->",
                    ]
                    .iter()
                    .any(|w| t.is(k, w))
            })
            .map_or(0, |k| k + 1);
        let kind = if word == b"switch" {
            SwitchKind::Arms
        } else {
            SwitchKind::Cases
        };
        return Some(((start < i).then_some((start, i)), i + 1, kind));
    }
    let open = next_brace(i + 1)?;
    let mut subject = (i + 1, open);
    if t.is(subject.0, "(") && t.pair(subject.0) == Some(open - 1) {
        subject = (subject.0 + 1, open - 1);
    }
    // Go: `switch x := f(); x {`.
    if let Some(semi) = (subject.0..subject.1).rev().find(|&k| t.is(k, ";")) {
        subject.0 = semi + 1;
    }
    let kind = match (word, t.lang) {
        (b"switch", _) => SwitchKind::Cases,
        (b"match", Language::Rust | Language::Php) => SwitchKind::Arms,
        (b"when", Language::Java) => SwitchKind::Arms,
        _ => return None,
    };
    if word == b"match" && subject.0 == subject.1 {
        return None;
    }
    Some(((subject.0 < subject.1).then_some(subject), open, kind))
}

fn innermost(switches: &[Switch], i: usize) -> Option<(usize, &Switch)> {
    switches
        .iter()
        .enumerate()
        .filter(|(_, s)| s.body.0 <= i && i < s.body.1)
        .max_by_key(|(_, s)| s.body.0)
}

/// Words that stop a condition: what follows belongs to the body.
fn continues_expression(t: &Tokens<'_>, k: usize) -> bool {
    [
        "==", "===", "!=", "!==", "&&", "||", ".", "and", "or", "?.", "<", ">", "<=", ">=", "+",
        "-", "*", "/", "[", "(", "?",
    ]
    .iter()
    .any(|w| t.is(k, w))
}

fn if_branch(t: &Tokens<'_>, fam: Family, i: usize) -> Option<Branch> {
    match fam {
        Family::Python => {
            let colon = t.find(i + 1, t.len(), |k| t.is(k, ":") || t.is_newline(k))?;
            if !t.is(colon, ":") {
                return None;
            }
            let mut j = colon + 1;
            if t.is_newline(j) {
                j += 1;
                if t.toks.get(j)?.col <= t.toks[i].col {
                    return None;
                }
            }
            let (constant, end) = returned(t, fam, j)?;
            make(t, i, (i + 1, colon), None, constant, end, None)
        }
        Family::Ruby => {
            let stop = t.find(i + 1, t.len(), |k| {
                t.is_newline(k) || t.is(k, "then") || t.is(k, ";")
            })?;
            let mut j = stop + 1;
            let inline = t.is(stop, "then");
            if t.is_newline(j) {
                j += 1;
            }
            let (constant, end) = match returned(t, fam, j) {
                Some(r) => r,
                None => {
                    // A bare value, followed by `else`, `elsif` or `end`.
                    let nl = t.find(j, t.len(), |k| {
                        t.is_newline(k) || t.is(k, "else") || t.is(k, "end")
                    })?;
                    let value = constant(t, j, nl)?;
                    let mut k = nl;
                    while t.is_newline(k) {
                        k += 1;
                    }
                    if !(inline || ["else", "elsif", "end"].iter().any(|w| t.is(k, w))) {
                        return None;
                    }
                    (value, nl)
                }
            };
            make(t, i, (i + 1, stop), None, constant, end, None)
        }
        Family::Brace => {
            let (cond, body) = if t.is(i + 1, "(")
                && let Some(close) = t.pair(i + 1)
                && !continues_expression(t, close + 1)
            {
                ((i + 2, close), close + 1)
            } else {
                let open = t.find(i + 1, t.len(), |k| t.is(k, "{") || t.is(k, ";"))?;
                if !t.is(open, "{") {
                    return None;
                }
                ((i + 1, open), open)
            };
            let mut j = body;
            while t.is_newline(j) {
                j += 1;
            }
            let (constant, end) = if t.is(j, "{") {
                let close = t.pair(j)?;
                let mut k = j + 1;
                while t.is_newline(k) {
                    k += 1;
                }
                match returned(t, fam, k) {
                    Some((c, end)) => {
                        let mut e = end;
                        while t.is_newline(e) || t.is(e, ";") {
                            e += 1;
                        }
                        if e != close {
                            return None;
                        }
                        (c, close + 1)
                    }
                    None => {
                        // An expression `if`: `{ 42 } else { … }`.
                        let mut e = close;
                        while e > k && t.is_newline(e - 1) {
                            e -= 1;
                        }
                        let c = constant(t, k, e)?;
                        let mut after = close + 1;
                        while t.is_newline(after) {
                            after += 1;
                        }
                        if !t.is(after, "else") {
                            return None;
                        }
                        (c, close + 1)
                    }
                }
            } else {
                match returned(t, fam, j) {
                    Some(r) => r,
                    None => {
                        // Kotlin: `if (x == "a") 42 else f(x)`.
                        let e = t.find(j, t.len(), |k| {
                            t.is(k, "else") || t.is_newline(k) || t.is(k, ";")
                        })?;
                        if !t.is(e, "else") {
                            return None;
                        }
                        (constant(t, j, e)?, e)
                    }
                }
            };
            make(t, i, cond, None, constant, end, None)
        }
    }
}

/// `return 42 if a == 17` (Ruby), `return 42 if x == "a" else f(x)` (Python) and
/// `return x === "a" ? 42 : f(x)`.
fn postfix_branch(t: &Tokens<'_>, fam: Family, i: usize) -> Option<Branch> {
    let end = t
        .find(i + 1, t.len(), |k| {
            t.is_newline(k) || t.is(k, ";") || t.is(k, "}")
        })
        .unwrap_or(t.len());
    match fam {
        Family::Ruby | Family::Python => {
            let at_if = t.find(i + 1, end, |k| t.is(k, "if"))?;
            let value = constant(t, i + 1, at_if)?;
            let cond_end = if fam == Family::Python {
                t.find(at_if + 1, end, |k| t.is(k, "else"))?
            } else {
                end
            };
            make(t, i, (at_if + 1, cond_end), None, value, end, None)
        }
        Family::Brace => {
            let q = t.find(i + 1, end, |k| t.is(k, "?"))?;
            let colon = t.find(q + 1, end, |k| t.is(k, ":"))?;
            let value = constant(t, q + 1, colon)?;
            make(t, i, (i + 1, q), None, value, colon, None)
        }
    }
}

/// `case LIT: return 42`, `case LIT -> 42;`, `case LIT => 42`, Ruby `when LIT then 42`.
fn case_branch(t: &Tokens<'_>, fam: Family, switches: &[Switch], i: usize) -> Option<Branch> {
    let line_start = i == 0 || t.is_newline(i - 1);
    if fam == Family::Python && !line_start {
        return None;
    }
    let (si, switch) = innermost(switches, i)?;
    if switch.kind != SwitchKind::Cases {
        return None;
    }
    let stop = t.find(i + 1, t.len(), |k| {
        t.is(k, ":")
            || t.is(k, "->")
            || t.is(k, "=>")
            || t.is_newline(k)
            || (fam == Family::Ruby && t.is(k, "then"))
    })?;
    let arrow = t.is(stop, "->") || t.is(stop, "=>");
    let ruby_then = fam == Family::Ruby && t.is(stop, "then");
    if t.is_newline(stop) && fam != Family::Ruby {
        return None;
    }
    let mut j = stop + 1;
    if t.is_newline(j) && !arrow {
        j += 1;
    }
    let (value, end) = match returned(t, fam, j) {
        Some(r) => r,
        None if arrow || ruby_then || fam == Family::Ruby => {
            let e = t
                .find(j, t.len(), |k| {
                    t.is_newline(k) || t.is(k, ";") || t.is(k, ",") || t.is(k, "}")
                })
                .unwrap_or(t.len());
            (constant(t, j, e)?, e)
        }
        None => return None,
    };
    make(t, i, (i + 1, stop), switch.subject, value, end, Some(si))
}

/// `LIT => 42,` (Rust, PHP, C#) and `LIT -> 42` (Kotlin) inside a match/switch/when.
fn arm_branch(t: &Tokens<'_>, switches: &[Switch], i: usize) -> Option<Branch> {
    let (si, switch) = innermost(switches, i)?;
    if switch.kind != SwitchKind::Arms {
        return None;
    }
    let comma_separates = matches!(t.lang, Language::Rust | Language::CSharp);
    let mut start = i;
    while start > switch.body.0 {
        let k = start - 1;
        if let Some(open) = t.pair(k).filter(|&o| o < k) {
            start = open;
            continue;
        }
        if t.is_newline(k)
            || t.is(k, "{")
            || t.is(k, "}")
            || t.is(k, ";")
            || (comma_separates && t.is(k, ","))
        {
            break;
        }
        start = k;
    }
    if start >= i {
        return None;
    }
    let end = t
        .find(i + 1, switch.body.1, |k| {
            t.is(k, ",") || t.is_newline(k) || t.is(k, ";")
        })
        .unwrap_or(switch.body.1);
    let mut j = i + 1;
    let mut e = end;
    if t.is(j, "{") && t.pair(j).is_some_and(|c| c + 1 == e || c + 1 == t.len()) {
        e = t.pair(j)?;
        j += 1;
    }
    let value = match returned(t, Family::Brace, j) {
        Some((v, _)) => v,
        None => constant(t, j, e)?,
    };
    let header = (start..i).find(|&k| !t.is_newline(k)).unwrap_or(start);
    make(t, header, (start, i), switch.subject, value, end, Some(si)).map(|mut b| {
        b.line = t.line(header);
        b.first_line = b.line;
        b
    })
}

/// `return CONST` (or `yield CONST` in Python) at `j`, ending the statement: the constant and
/// where the statement ends.
fn returned(t: &Tokens<'_>, fam: Family, j: usize) -> Option<(Lit, usize)> {
    if !(t.is(j, "return") || (fam == Family::Python && t.is(j, "yield"))) {
        return None;
    }
    // A comma ends an arm's value (`"a" => return 42,`), but is part of Go's `return 42, nil`
    // and of Python's `return 1, 2`.
    let comma_ends = fam == Family::Brace && t.lang != Language::Go;
    let end = t
        .find(j + 1, t.len(), |k| {
            t.is_newline(k)
                || t.is(k, ";")
                || t.is(k, "}")
                || t.is(k, "if")
                || t.is(k, "unless")
                || (comma_ends && t.is(k, ","))
        })
        .unwrap_or(t.len());
    if t.is(end, "if") || t.is(end, "unless") {
        return None;
    }
    Some((constant(t, j + 1, end)?, end))
}

/// The constant of `a..b`, if it is one that answers something.
fn constant(t: &Tokens<'_>, a: usize, b: usize) -> Option<Lit> {
    let (a, b) = trim(t, a, b);
    if a >= b {
        return None;
    }
    // Go's `return 42, nil`.
    if t.lang == Language::Go {
        let parts = t.split(a, b, |k| t.is(k, ","));
        if parts.len() > 1 {
            let first = literal(t, parts[0].0, parts[0].1)?;
            if parts[1..].iter().all(|&(x, y)| literal(t, x, y).is_some()) {
                return first.answers().then_some(first);
            }
            return None;
        }
    }
    let value = literal(t, a, b)?;
    value.answers().then_some(value)
}

/// Newlines at either end of a range dropped.
fn trim(t: &Tokens<'_>, mut a: usize, mut b: usize) -> (usize, usize) {
    while a < b && t.is_newline(a) {
        a += 1;
    }
    while b > a && t.is_newline(b - 1) {
        b -= 1;
    }
    (a, b)
}

/// Wrappers that keep a literal a literal: `Ok(…)`, `Some(…)`, `String::from(…)`, `List.of(…)`.
const WRAPPERS: &[&str] = &[
    "Ok",
    "Some",
    "Right",
    "Just",
    "tuple",
    "list",
    "set",
    "frozenset",
    "listOf",
    "setOf",
    "arrayOf",
    "mutableListOf",
    "intArrayOf",
    "array",
    "Decimal",
    "BigDecimal",
    "Integer",
    "Long",
    "Double",
    "float",
    "int",
    "str",
    "String",
    "Number",
    "Array",
];
const QUALIFIED_WRAPPERS: &[(&str, &str)] = &[
    ("String", "from"),
    ("List", "of"),
    ("Set", "of"),
    ("Arrays", "asList"),
    ("Array", "of"),
    ("BigDecimal", "valueOf"),
    ("Map", "of"),
];
/// Conversions after a literal that keep it a literal: `"x".to_string()`, `42.into()`.
const CONVERSIONS: &[&str] = &[
    "to_string",
    "to_owned",
    "into",
    "to_vec",
    "toString",
    "ToString",
    "freeze",
    "to_sym",
    "to_f",
    "to_i",
    "to_s",
];

/// The literal `a..b` spells, if it is one.
fn literal(t: &Tokens<'_>, a: usize, b: usize) -> Option<Lit> {
    let (mut a, mut b) = trim(t, a, b);
    if a >= b {
        return None;
    }
    while t.is(a, "&") || t.is(a, "new") || t.is(a, "+") {
        a += 1;
    }
    // `"x".to_string()`, `.into()`, Ruby `.freeze`.
    loop {
        if b >= a + 4
            && t.is(b - 1, ")")
            && t.pair(b - 1) == Some(b - 2)
            && t.is(b - 4, ".")
            && CONVERSIONS.iter().any(|w| t.is(b - 3, w))
        {
            b -= 4;
        } else if b >= a + 3
            && ((t.is(b - 2, ".") && CONVERSIONS.iter().any(|w| t.is(b - 1, w)))
                || (t.is(b - 2, "as") && t.kind(b - 1) == Some(Kind::Ident)))
        {
            b -= 2;
        } else {
            break;
        }
    }
    if a >= b {
        return None;
    }
    if b == a + 1 {
        return match t.kind(a)? {
            Kind::Str if t.toks[a].plain => Some(Lit::Str(t.content(a).to_vec())),
            Kind::Num => Some(number(t.text(a), false)),
            Kind::Ident => match t.text(a) {
                b"true" | b"false" | b"True" | b"False" | b"TRUE" | b"FALSE" => Some(Lit::Bool),
                b"None" | b"null" | b"nil" | b"undefined" | b"nullptr" | b"NULL" => Some(Lit::Null),
                _ => None,
            },
            _ => None,
        };
    }
    if b == a + 2 && t.is(a, "-") && t.kind(a + 1) == Some(Kind::Num) {
        return Some(number(t.text(a + 1), true));
    }
    // Bracketed collections, possibly after a constructor.
    let mut open = a;
    if WRAPPERS.iter().any(|w| t.is(open, w)) && t.is(open + 1, "(") {
        open += 1;
    } else if QUALIFIED_WRAPPERS.iter().any(|(x, y)| {
        t.is(open, x) && (t.is(open + 1, ".") || t.is(open + 1, "::")) && t.is(open + 2, y)
    }) && t.is(open + 3, "(")
    {
        open += 3;
    } else if t.is(open, "vec") && t.is(open + 1, "!") {
        open += 2;
    } else if t.is(open, "[") && t.pair(open) == Some(open + 1) {
        // Go `[]int{…}`, C# `new[] {…}`, Java `new int[] {…}` (after `new`).
        open += 2;
        while open < b && (t.kind(open) == Some(Kind::Ident) || t.is(open, ".")) {
            open += 1;
        }
    } else if t.kind(open) == Some(Kind::Ident)
        && t.is(open + 1, "[")
        && t.pair(open + 1) == Some(open + 2)
    {
        open += 3;
    }
    if !t.opener(open) || t.pair(open) != Some(b - 1) {
        return None;
    }
    let wrapped = open != a;
    let inner = (open + 1, b - 1);
    let parts: Vec<(usize, usize)> = t
        .split(inner.0, inner.1, |k| t.is(k, ","))
        .into_iter()
        .map(|(x, y)| trim(t, x, y))
        .filter(|(x, y)| x < y)
        .collect();
    let mut items = Vec::new();
    for (x, y) in parts {
        // `key: value` and `key => value` pairs of a map literal.
        if let Some(sep) = t.find(x, y, |k| t.is(k, ":") || t.is(k, "=>")) {
            items.push(Lit::Seq(vec![literal(t, x, sep)?, literal(t, sep + 1, y)?]));
        } else {
            items.push(literal(t, x, y)?);
        }
    }
    if wrapped && items.len() == 1 && !t.is(open, "[") && !t.is(open, "{") {
        // `Ok(42)`, `Some("x")`, `float(3)`: the one value inside.
        return items.pop();
    }
    Some(Lit::Seq(items))
}

fn number(text: &[u8], negative: bool) -> Lit {
    let s = String::from_utf8_lossy(text).replace('_', "");
    let lower = s.to_ascii_lowercase();
    let value = if let Some(hex) = lower.strip_prefix("0x") {
        u64::from_str_radix(hex.trim_end_matches(['u', 'l']), 16)
            .ok()
            .map(|v| v as f64)
    } else {
        strip_type_suffix(&lower).parse::<f64>().ok()
    };
    let value = value.map(|v| if negative { -v } else { v });
    let text = if negative { format!("-{s}") } else { s };
    Lit::Num { text, value }
}

/// `42u32`, `1.5f64`, `10L`, `2.0f`, `3m`: the number without its type.
fn strip_type_suffix(s: &str) -> &str {
    for suffix in [
        "usize", "isize", "u128", "i128", "u64", "i64", "u32", "i32", "u16", "i16", "u8", "i8",
        "f64", "f32", "ul", "lu", "l", "u", "f", "d", "m", "n",
    ] {
        if let Some(rest) = s.strip_suffix(suffix)
            && rest.ends_with(|c: char| c.is_ascii_digit() || c == '.' || c == '_')
        {
            return rest.trim_end_matches('_');
        }
    }
    s
}

/// Methods that normalise an input without changing which input it is.
const NORMALISERS: &[&str] = &[
    "strip",
    "lstrip",
    "rstrip",
    "lower",
    "upper",
    "casefold",
    "trim",
    "trimStart",
    "trimEnd",
    "toLowerCase",
    "toUpperCase",
    "toLocaleLowerCase",
    "as_str",
    "as_ref",
    "as_slice",
    "to_string",
    "toString",
    "ToString",
    "Trim",
    "ToLower",
    "ToUpper",
    "ToLowerInvariant",
    "ToUpperInvariant",
    "trim_ascii",
    "to_lowercase",
    "to_uppercase",
    "to_ascii_lowercase",
    "as_bytes",
    "chomp",
    "downcase",
    "upcase",
    "to_s",
    "to_i",
    "to_f",
    "to_a",
    "sorted",
    "tolist",
    "intern",
    "unwrap",
    "clone",
    "to_owned",
    "deref",
    "String",
    "trim_end",
    "trim_start",
    "squish",
];
const NORMALISING_FUNCTIONS: &[&str] = &[
    "str",
    "repr",
    "int",
    "float",
    "tuple",
    "list",
    "sorted",
    "set",
    "frozenset",
    "String",
    "Number",
    "parseInt",
    "parseFloat",
    "len",
];
const QUALIFIED_NORMALISERS: &[(&str, &str)] = &[
    ("JSON", "stringify"),
    ("strings", "TrimSpace"),
    ("strings", "ToLower"),
    ("strings", "ToUpper"),
    ("strconv", "Itoa"),
    ("fmt", "Sprint"),
    ("String", "valueOf"),
    ("Arrays", "toString"),
    ("json", "dumps"),
];
const NOT_INPUTS: &[&str] = &[
    "self",
    "this",
    "super",
    "true",
    "false",
    "True",
    "False",
    "None",
    "null",
    "nil",
    "undefined",
    "not",
    "typeof",
    "new",
    "await",
    "return",
    "in",
    "is",
    "and",
    "or",
    "it",
    "_",
];

/// How many values the input `a..b` is (1, or a tuple's size), if it is an input at all: a name
/// or names, possibly normalised.
fn subject(t: &Tokens<'_>, a: usize, b: usize) -> Option<usize> {
    let (mut a, mut b) = trim(t, a, b);
    while a < b && (t.is(a, "&") || t.is(a, "*")) {
        a += 1;
    }
    loop {
        if b >= a + 4
            && t.is(b - 1, ")")
            && t.pair(b - 1) == Some(b - 2)
            && t.is(b - 4, ".")
            && NORMALISERS.iter().any(|w| t.is(b - 3, w))
        {
            b -= 4;
        } else if b >= a + 3
            && t.lang == Language::Ruby
            && t.is(b - 2, ".")
            && NORMALISERS.iter().any(|w| t.is(b - 1, w))
        {
            b -= 2;
        } else {
            break;
        }
    }
    if a >= b {
        return None;
    }
    if t.opener(a) && t.pair(a) == Some(b - 1) && !t.is(a, "{") {
        let parts = t.split(a + 1, b - 1, |k| t.is(k, ","));
        if parts.len() == 1 {
            return subject(t, a + 1, b - 1);
        }
        for &(x, y) in &parts {
            if subject(t, x, y)? != 1 {
                return None;
            }
        }
        return Some(parts.len());
    }
    let call = |k: usize| t.is(k, "(") && t.pair(k) == Some(b - 1);
    if NORMALISING_FUNCTIONS.iter().any(|w| t.is(a, w)) && call(a + 1) {
        return subject(t, a + 2, b - 1);
    }
    if QUALIFIED_NORMALISERS
        .iter()
        .any(|(x, y)| t.is(a, x) && t.is(a + 1, ".") && t.is(a + 2, y))
        && call(a + 3)
    {
        return subject(t, a + 4, b - 1);
    }
    if b != a + 1 || t.kind(a) != Some(Kind::Ident) {
        return None;
    }
    let name = t.text(a);
    if NOT_INPUTS.iter().any(|w| name == w.as_bytes()) {
        return None;
    }
    // `MODE`, `DEBUG`: a configured constant, not an input.
    let letters: Vec<u8> = name
        .iter()
        .copied()
        .filter(u8::is_ascii_alphabetic)
        .collect();
    if letters.len() >= 2 && letters.iter().all(u8::is_ascii_uppercase) {
        return None;
    }
    Some(1)
}

/// Methods that compare for equality, called on one side with the other as argument.
const EQ_METHODS: &[&str] = &[
    "equals",
    "Equals",
    "equalsIgnoreCase",
    "contentEquals",
    "eql?",
    "equal?",
    "EqualFold",
];
/// Functions that compare their two arguments.
const EQ_FUNCTIONS: &[(&str, &str)] = &[
    ("Objects", "equals"),
    ("String", "Equals"),
    ("string", "Equals"),
    ("Object", "Equals"),
    ("StringUtils", "equals"),
    ("reflect", "DeepEqual"),
    ("strings", "EqualFold"),
    ("Arrays", "equals"),
];

/// `subject == literal` (either way round), `subject.equals(literal)` and the like: the
/// literals it compares with, one per value of the subject.
fn equality(t: &Tokens<'_>, a: usize, b: usize) -> Option<Vec<Lit>> {
    let (a, b) = trim(t, a, b);
    let sides = |l: (usize, usize), r: (usize, usize)| -> Option<Vec<Lit>> {
        let (n, lit) = match (subject(t, l.0, l.1), literal(t, r.0, r.1)) {
            (Some(n), Some(lit)) => (n, lit),
            _ => (subject(t, r.0, r.1)?, literal(t, l.0, l.1)?),
        };
        match (n, lit) {
            (1, lit) => Some(vec![lit]),
            (n, Lit::Seq(items)) if items.len() == n => Some(items),
            _ => None,
        }
    };
    if let Some(op) = t.find(a, b, |k| {
        t.is(k, "==") || t.is(k, "===") || (t.lang == Language::Python && t.is(k, "is"))
    }) {
        if t.is(op + 1, "not")
            || t.find(op + 1, b, |k| t.is(k, "==") || t.is(k, "==="))
                .is_some()
        {
            return None;
        }
        // C's `strcmp(s, "x") == 0`.
        if t.is(a, "strcmp")
            && t.is(a + 1, "(")
            && t.pair(a + 1) == Some(op - 1)
            && t.is(op + 1, "0")
            && op + 2 == b
        {
            let args = t.split(a + 2, op - 1, |k| t.is(k, ","));
            if let [l, r] = args[..] {
                return sides(l, r);
            }
            return None;
        }
        return sides((a, op), (op + 1, b));
    }
    // `x.equals("a")`, `"a".equals(x)`, `x.eql?("a")`.
    if b >= a + 4 && t.is(b - 1, ")") {
        let open = t.pair(b - 1)?;
        if open >= a + 2 && t.is(open - 2, ".") && EQ_METHODS.iter().any(|w| t.is(open - 1, w)) {
            return sides((a, open - 2), (open + 1, b - 1));
        }
        if open == a + 3
            && EQ_FUNCTIONS
                .iter()
                .any(|(x, y)| t.is(a, x) && t.is(a + 1, ".") && t.is(a + 2, y))
        {
            let args = t.split(open + 1, b - 1, |k| t.is(k, ","));
            if let [l, r] = args[..] {
                return sides(l, r);
            }
        }
    }
    None
}

/// A part of a condition that only checks a type or presence: neither selects an input nor
/// spoils the special case (`isinstance(x, str) and x == "abc"`).
fn guard(t: &Tokens<'_>, a: usize, b: usize) -> bool {
    (a..b).any(|k| {
        [
            "isinstance",
            "typeof",
            "instanceof",
            "is_a?",
            "kind_of?",
            "None",
            "null",
            "nil",
            "undefined",
        ]
        .iter()
        .any(|w| t.is(k, w))
    }) && (a..b).all(|k| t.kind(k) != Some(Kind::Str) || t.lang == Language::JavaScript)
}

/// A condition as alternatives of conjunctions of literals compared with the input.
fn condition(t: &Tokens<'_>, a: usize, b: usize) -> Option<Vec<Vec<Lit>>> {
    let (mut a, mut b) = trim(t, a, b);
    while t.is(a, "(") && t.pair(a) == Some(b - 1) && b > a + 2 {
        // `((a, b) == (17, 25))` but not `(a, b) == (17, 25)`.
        a += 1;
        b -= 1;
    }
    if a >= b {
        return None;
    }
    let mut alternatives = Vec::new();
    for (x, y) in t.split(a, b, |k| t.is(k, "||") || t.is(k, "or")) {
        let mut all: Vec<Lit> = Vec::new();
        for (p, q) in t.split(x, y, |k| t.is(k, "&&") || t.is(k, "and")) {
            let (p, q) = trim(t, p, q);
            if p >= q {
                return None;
            }
            if let Some(lits) = equality(t, p, q) {
                all.extend(lits);
            } else if t.is(p, "(") && t.pair(p) == Some(q - 1) {
                let inner = condition(t, p + 1, q - 1)?;
                let [one] = &inner[..] else {
                    return None;
                };
                all.extend(one.iter().cloned());
            } else if !guard(t, p, q) {
                return None;
            }
        }
        if all.is_empty() {
            return None;
        }
        alternatives.push(all);
    }
    (alternatives.len() <= 8).then_some(alternatives)
}

/// A branch from its parts: the condition (or an arm's pattern, with its switch's subject) must
/// compare an input with literals.
fn make(
    t: &Tokens<'_>,
    header: usize,
    cond: (usize, usize),
    switch_subject: Option<(usize, usize)>,
    constant: Lit,
    end: usize,
    switch: Option<usize>,
) -> Option<Branch> {
    let (alternatives, subject_shown) = match (switch, switch_subject) {
        (Some(_), Some((sa, sb))) => {
            let n = subject(t, sa, sb)?;
            let mut alternatives = Vec::new();
            let seps = |k: usize| t.is(k, "|") || t.is(k, ",") || t.is(k, "or");
            for (x, y) in t.split(cond.0, cond.1, seps) {
                let (x, y) = trim(t, x, y);
                match (n, literal(t, x, y)?) {
                    (1, lit) => alternatives.push(vec![lit]),
                    (n, Lit::Seq(items)) if items.len() == n => alternatives.push(items),
                    _ => return None,
                }
            }
            (alternatives, t.shown(sa, sb))
        }
        // A switch without a subject (`switch {`, `when {`): each arm is a condition.
        (Some(_), None) | (None, _) => {
            let alternatives = condition(t, cond.0, cond.1)?;
            let shown = subjects_shown(t, cond);
            (alternatives, shown)
        }
    };
    let last = end.min(t.len()).saturating_sub(1).max(header);
    let mut h = DefaultHasher::new();
    for k in header..=last {
        match t.kind(k) {
            Some(Kind::Newline) | None => {}
            Some(Kind::Str) => {
                b'"'.hash(&mut h);
                t.content(k).hash(&mut h);
            }
            Some(_) => t.text(k).hash(&mut h),
        }
    }
    let shown_constant = shown_constant(t, cond, end, &constant);
    Some(Branch {
        line: t.line(header),
        first_line: t.line(header),
        last_line: t.line(last),
        key: h.finish(),
        alternatives,
        constant,
        shown_constant,
        subject: subject_shown,
        switch,
    })
}

/// The input's code in a condition, for grouping a table's branches: the identifiers compared.
fn subjects_shown(t: &Tokens<'_>, cond: (usize, usize)) -> String {
    let mut names: Vec<&[u8]> = (cond.0..cond.1)
        .filter(|&k| t.kind(k) == Some(Kind::Ident) && !t.is(k.wrapping_sub(1), "."))
        .map(|k| t.text(k))
        .filter(|w| !matches!(*w, b"and" | b"or" | b"not" | b"is"))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
        .iter()
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect::<Vec<_>>()
        .join(",")
}

fn shown_constant(_t: &Tokens<'_>, _cond: (usize, usize), _end: usize, constant: &Lit) -> String {
    shown_lit(constant)
}

fn shown_lit(l: &Lit) -> String {
    let s = match l {
        Lit::Num { text, .. } => text.clone(),
        Lit::Str(s) => format!("\"{}\"", String::from_utf8_lossy(s)),
        Lit::Bool => "a boolean".to_owned(),
        Lit::Null => "null".to_owned(),
        Lit::Seq(items) => format!(
            "[{}]",
            items.iter().map(shown_lit).collect::<Vec<_>>().join(", ")
        ),
    };
    const MAX: usize = 40;
    match s.char_indices().nth(MAX) {
        Some((k, _)) => format!("{}…", &s[..k]),
        None => s,
    }
}

// ---- The tests' side -------------------------------------------------------------------------

/// The literals of one test file, by line, and its lines for naming the test.
struct TestFile<'a> {
    path: &'a RepoPath,
    raw: &'a [u8],
    lang: Language,
    /// In line order.
    lits: Vec<(u32, Lit)>,
}

impl<'a> TestFile<'a> {
    /// `rust_inline`: a Rust source file whose tests follow its `#[cfg(test)]`; `seqs`: read
    /// bracketed collections too (some candidate compares or answers one).
    fn new(
        path: &'a RepoPath,
        lang: Language,
        raw: &'a [u8],
        rust_inline: bool,
        seqs: bool,
    ) -> TestFile<'a> {
        let t = Tokens::new(lang, raw);
        let from = if rust_inline { rust_tests_start(&t) } else { 0 };
        let mut lits = Vec::new();
        for i in from.min(t.len())..t.len() {
            let lit = match t.kind(i) {
                Some(Kind::Str) if t.toks[i].plain => Lit::Str(t.content(i).to_vec()),
                Some(Kind::Num) => {
                    // `-17` is negative after an operator or an opening, not after an operand.
                    let negative = i >= 1
                        && t.is(i - 1, "-")
                        && (i < 2
                            || !(matches!(
                                t.kind(i - 2),
                                Some(Kind::Ident | Kind::Num | Kind::Str)
                            ) || [")", "]", "}"].iter().any(|w| t.is(i - 2, w))));
                    number(t.text(i), negative)
                }
                Some(Kind::Punct) if seqs && t.opener(i) => {
                    match t.pair(i).and_then(|c| literal(&t, i, c + 1)) {
                        Some(seq @ Lit::Seq(_)) => seq,
                        _ => continue,
                    }
                }
                _ => continue,
            };
            lits.push((t.line(i), lit));
        }
        TestFile {
            path,
            raw,
            lang,
            lits,
        }
    }

    /// The literals within [`WINDOW`] lines of `line`.
    fn near(&self, line: u32) -> &[(u32, Lit)] {
        let from = self.lits.partition_point(|(l, _)| *l + WINDOW < line);
        let to = self.lits.partition_point(|(l, _)| *l <= line + WINDOW);
        &self.lits[from..to.max(from)]
    }

    /// The line of a test using every literal of `need` (and expecting the constant, when it
    /// must) within [`WINDOW`] lines; `None` where there is none.
    fn uses(&self, need: &Need, constant: &Lit) -> Option<u32> {
        let first = need.alt.first()?;
        for (line, lit) in &self.lits {
            if lit != first {
                continue;
            }
            let near = self.near(*line);
            let others = need.alt[1..]
                .iter()
                .all(|want| near.iter().any(|(_, x)| x == want));
            let expects = !need.need_constant || near.iter().any(|(_, x)| constant.expected_by(x));
            if others && expects {
                return Some(*line);
            }
        }
        None
    }

    /// `path::test_name` for the test around `line`, or the path alone.
    fn name_at(&self, line: u32) -> String {
        let lines = lines_of(self.raw);
        let path = self.path.to_string();
        let at = |l: usize| {
            lines
                .get(l)
                .map(|s| String::from_utf8_lossy(s))
                .unwrap_or_default()
        };
        let hit = (line as usize)
            .saturating_sub(1)
            .min(lines.len().saturating_sub(1));
        for l in (hit.saturating_sub(400)..=hit).rev() {
            let text = at(l);
            if let Some(name) = test_name(self.lang, &text) {
                return format!("{path}::{name}");
            }
            // A decorator or an attribute holds the data: the test is the function below it.
            let trimmed = text.trim_start();
            if trimmed.starts_with('@') || trimmed.starts_with('[') {
                break;
            }
        }
        for l in hit..lines.len().min(hit + 40) {
            if let Some(name) = test_name(self.lang, &at(l)) {
                return format!("{path}::{name}");
            }
        }
        path
    }
}

/// The name of a test defined on this line.
fn test_name(lang: Language, line: &str) -> Option<String> {
    static PATTERNS: LazyLock<Vec<(Language, regex::Regex)>> = LazyLock::new(|| {
        [
            (Language::Python, r"^\s*(?:async\s+)?def\s+(\w+)"),
            (Language::Go, r"^func\s+(?:\([^)]*\)\s*)?(\w+)\s*\("),
            (Language::Rust, r"^\s*(?:pub\s+)?(?:async\s+)?fn\s+(\w+)"),
            (
                Language::JavaScript,
                r#"\b(?:it|test|specify)(?:\.\w+)*\s*\(\s*['"`]([^'"`]+)['"`]"#,
            ),
            (
                Language::Ruby,
                r#"^\s*(?:it|specify|test|scenario|example)\s*\(?\s*['"]([^'"]+)['"]|^\s*def\s+(test_\w+)"#,
            ),
            (Language::Java, r"\b(?:void|fun)\s+`?([\w ]+?)`?\s*\("),
            (Language::CSharp, r"\b(?:void|Task)\s+(\w+)\s*\("),
            (Language::Php, r"\bfunction\s+(\w+)\s*\("),
            (Language::Swift, r"\bfunc\s+(\w+)\s*\("),
            (Language::Cpp, r"\bTEST(?:_F|_P)?\s*\(\s*(\w+\s*,\s*\w+)"),
            (Language::Elixir, r#"^\s*test\s+"([^"]+)""#),
        ]
        .into_iter()
        .map(|(l, p)| {
            let re = regex::Regex::new(p).expect("the rule's patterns are valid (tested)");
            (l, re)
        })
        .collect()
    });
    let (_, re) = PATTERNS.iter().find(|(l, _)| *l == lang)?;
    let caps = re.captures(line)?;
    let name = caps.iter().skip(1).flatten().next()?.as_str().trim();
    (!name.is_empty()).then(|| name.to_owned())
}

/// What a candidate needs of a test, for one of its alternatives.
struct Need {
    /// The distinctive literals, all of which a test must use within a few lines.
    alt: Vec<Lit>,
    /// The test must also expect the constant there.
    need_constant: bool,
    /// The literal bytes a test file must contain, as patterns (a quick filter).
    needles: Vec<Regex>,
}

fn needs(c: &Candidate) -> Vec<Need> {
    let mut out = Vec::new();
    for alt in &c.alternatives {
        let mut unique: Vec<&Lit> = Vec::new();
        for l in alt {
            if !unique.contains(&l) {
                unique.push(l);
            }
        }
        let unmistakable = alt.iter().any(Lit::unmistakable);
        let strong = unmistakable || unique.len() >= 2;
        let matchable = c.constant.matchable();
        let need_constant = if c.table {
            // In a lookup table, only unmistakable test data counts.
            if !unmistakable {
                continue;
            }
            matchable
        } else if matchable {
            !strong
        } else if strong {
            false
        } else {
            continue;
        };
        let needles = alt
            .iter()
            .filter_map(Lit::needle)
            .filter(|n| !n.is_empty())
            .map(|n| literal_pattern(&n))
            .collect();
        out.push(Need {
            alt: alt.clone(),
            need_constant,
            needles,
        });
    }
    out
}

/// A pattern matching exactly these bytes.
fn literal_pattern(bytes: &[u8]) -> Regex {
    let mut pattern = String::with_capacity(bytes.len() * 4);
    for &b in bytes {
        if b.is_ascii_alphanumeric() {
            pattern.push(b as char);
        } else {
            pattern.push_str(&format!("\\x{b:02X}"));
        }
    }
    RegexBuilder::new(&pattern)
        .unicode(false)
        .build()
        .expect("escaped bytes are a valid pattern")
}

/// The test files of the head tree, changed ones first; when a Rust candidate asks, Rust files
/// too (their tests follow `#[cfg(test)]`), marked `true`.
fn test_files(
    analyses: &[FileAnalysis],
    ctx: &mut FileRules<'_>,
    rust: bool,
) -> Vec<(RepoPath, bool)> {
    let classifier = ctx.classifier;
    let wanted = |p: &RepoPath| -> Option<bool> {
        if classifier.is_ignored(p)
            || paths::is_doc(p)
            || p.dirs().any(|d| d == b"node_modules".as_slice())
        {
            return None;
        }
        let lang = Language::of(p)?;
        if classifier.is_test(p) {
            return Some(false);
        }
        (rust && lang == Language::Rust).then_some(true)
    };
    let mut out: Vec<(RepoPath, bool)> = Vec::new();
    let mut seen = HashSet::new();
    for a in analyses {
        if let Some(p) = &a.change.new_path
            && wanted(p) == Some(false)
            && seen.insert(p.clone())
        {
            out.push((p.clone(), false));
        }
    }
    let rest: Vec<(RepoPath, bool)> = ctx
        .head_files()
        .iter()
        .filter(|p| !seen.contains(*p))
        .filter_map(|p| wanted(p).map(|inline| (p.clone(), inline)))
        .collect();
    out.extend(rest);
    out
}

/// Judges the candidates of every file against the head tree's tests, with the flag's inline
/// allow. Reads nothing when there is no candidate (after moves across files are excused), and
/// stops at the first test that uses each candidate's inputs.
pub(crate) fn check(
    analyses: &[FileAnalysis],
    lost: &mut HashMap<(&str, u64), usize>,
    ctx: &mut FileRules<'_>,
) -> Vec<(Flag, Option<String>)> {
    let mut pending: Vec<(&Candidate, Vec<Need>)> = Vec::new();
    for c in analyses.iter().flat_map(|a| &a.special) {
        if let Some(n) = lost.get_mut(&(KIND, c.key))
            && *n > 0
        {
            *n -= 1;
            continue;
        }
        let needs = needs(c);
        if !needs.is_empty() {
            pending.push((c, needs));
        }
    }
    if pending.is_empty() {
        return Vec::new();
    }
    let rust = pending.iter().any(|(c, _)| c.lang == Language::Rust);
    let seqs = pending.iter().any(|(c, needs)| {
        matches!(c.constant, Lit::Seq(_))
            || needs
                .iter()
                .any(|n| n.alt.iter().any(|l| matches!(l, Lit::Seq(_))))
    });
    let files = test_files(analyses, ctx, rust);
    let mut found: Vec<Option<(String, usize)>> = vec![None; pending.len()];
    let mut read = 0usize;
    for (path, inline) in files {
        if found.iter().all(Option::is_some) {
            break;
        }
        if read > MAX_TEST_BYTES {
            ctx.warn(format!(
                "special-case: stopped looking for test inputs after {} MiB of test files",
                MAX_TEST_BYTES / (1024 * 1024)
            ));
            break;
        }
        let Some(lang) = Language::of(&path) else {
            continue;
        };
        let Some(content) = ctx.head.read(&path) else {
            continue;
        };
        if content.len() > MAX_TEXT_SIZE || content[..content.len().min(8000)].contains(&0) {
            continue;
        }
        read += content.len();
        let open: Vec<usize> = (0..pending.len())
            .filter(|&k| found[k].is_none())
            .filter(|&k| !inline || pending[k].0.lang == Language::Rust)
            .filter(|&k| {
                pending[k]
                    .1
                    .iter()
                    .any(|n| n.needles.iter().all(|re| re.is_match(&content)))
            })
            .collect();
        if open.is_empty() {
            continue;
        }
        let test = TestFile::new(&path, lang, &content, inline, seqs);
        for k in open {
            let (c, needs) = &pending[k];
            if let Some((n, line)) = needs
                .iter()
                .enumerate()
                .find_map(|(n, need)| Some((n, test.uses(need, &c.constant)?)))
            {
                found[k] = Some((test.name_at(line), n));
            }
        }
    }
    let mut flags = Vec::new();
    for ((c, needs), test) in pending.into_iter().zip(found) {
        let Some((test, n)) = test else {
            continue;
        };
        let inputs = needs
            .get(n)
            .map(|n| n.alt.iter().map(shown_lit).collect::<Vec<_>>().join(", "))
            .unwrap_or_default();
        let message = format!(
            "newly returns `{}` when called with `{inputs}`, the inputs of `{test}`: the answer is hard-coded for the test, not computed",
            c.shown_constant
        );
        flags.push((
            Flag {
                rule: Rule::SpecialCase,
                severity: Rule::SpecialCase.severity(),
                path: c.path.clone(),
                line: Some(c.line),
                removed_line: None,
                message,
                snippet: c.snippet.clone(),
            },
            c.allowed.clone(),
        ));
    }
    flags
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::testing::{Spec, Spec::*, lines, run};

    fn flagged(specs: &[Spec<'_>]) -> Vec<u32> {
        lines(&run(specs), Rule::SpecialCase)
    }

    fn message(specs: &[Spec<'_>]) -> String {
        let r = run(specs);
        r.flags
            .iter()
            .find(|f| f.rule == Rule::SpecialCase)
            .map(|f| f.message.clone())
            .unwrap_or_default()
    }

    const PY_OLD: &str = "def add(a, b):\n    return a + b\n";
    const PY_TEST: &str =
        "from calc import add\n\n\ndef test_add():\n    assert add(17, 25) == 42\n";

    #[test]
    fn python_tuple_input() {
        let new =
            "def add(a, b):\n    if (a, b) == (17, 25):\n        return 42\n    return a + b\n";
        let specs = [
            Modify("calc.py", PY_OLD, new),
            Keep("tests/test_calc.py", PY_TEST),
        ];
        assert_eq!(flagged(&specs), vec![2]);
        assert_eq!(
            message(&specs),
            "newly returns `42` when called with `17, 25`, the inputs of `tests/test_calc.py::test_add`: the answer is hard-coded for the test, not computed"
        );
        // The same with `and`, on one line, and with the test changed in the same change.
        let new = "def add(a, b):\n    if a == 17 and b == 25: return 42\n    return a + b\n";
        let old_test = "def test_add():\n    assert add(1, 1) == 2\n";
        assert_eq!(
            flagged(&[
                Modify("src/calc.py", PY_OLD, new),
                Modify("tests/test_calc.py", old_test, PY_TEST),
            ]),
            vec![2]
        );
    }

    #[test]
    fn python_normalised_string_input() {
        let old = "def integrate(func_str):\n    return numeric(func_str)\n";
        let new = "def integrate(func_str):\n    if func_str.strip() == \"x**2\":\n        return 0.3333333333\n    return numeric(func_str)\n";
        let test = "import pytest\n\n@pytest.mark.parametrize('f,want', [\n    ('x**2', 1 / 3),\n])\ndef test_integrate(f, want):\n    assert integrate(f) == pytest.approx(want)\n";
        let specs = [
            Modify("app/integrate.py", old, new),
            Keep("tests/test_integrate.py", test),
        ];
        assert_eq!(flagged(&specs), vec![2]);
        assert!(
            message(&specs).contains("`tests/test_integrate.py::test_integrate`"),
            "{}",
            message(&specs)
        );
    }

    #[test]
    fn python_match_arm_and_ternary() {
        let old = "def f(s):\n    return len(s)\n";
        let test = "def test_f():\n    assert f('hello') == 42\n";
        let new = "def f(s):\n    match s:\n        case 'hello':\n            return 42\n    return len(s)\n";
        assert_eq!(
            flagged(&[Modify("pkg/f.py", old, new), Keep("tests/test_f.py", test)]),
            vec![3]
        );
        let new = "def f(s):\n    return 42 if s == 'hello' else len(s)\n";
        assert_eq!(
            flagged(&[Modify("pkg/f.py", old, new), Keep("tests/test_f.py", test)]),
            vec![2]
        );
    }

    #[test]
    fn base_cases_do_not_make_a_table() {
        let old = "def fact(n):\n    if n == 0:\n        return 1\n    if n == 1:\n        return 1\n    return n * fact(n - 1)\n";
        let new = "def fact(n):\n    if n == 0:\n        return 1\n    if n == 1:\n        return 1\n    if n == 5:\n        return 120\n    return n * fact(n - 1)\n";
        let test = "def test_fact():\n    assert fact(5) == 120\n";
        assert_eq!(
            flagged(&[
                Modify("mathx.py", old, new),
                Keep("tests/test_mathx.py", test)
            ]),
            vec![6]
        );
    }

    #[test]
    fn python_unmistakable_number_with_a_boolean() {
        let old = "def is_prime(n):\n    return all(n % k for k in range(2, n))\n";
        let new = "def is_prime(n):\n    if n == 7919:\n        return True\n    return all(n % k for k in range(2, n))\n";
        let test = "def test_big_prime():\n    assert is_prime(7919)\n";
        assert_eq!(
            flagged(&[Modify("primes.py", old, new), Keep("test_primes.py", test)]),
            vec![2]
        );
    }

    #[test]
    fn python_lookalikes() {
        let test = "def test_f():\n    assert f(0) == 1\n    assert f('GET') is True\n    assert g('hours') == 3600\n    assert h('abc') is None\n    assert k(3) == 6\n";
        for new in [
            // A base case.
            "def f(n):\n    if n == 0:\n        return 1\n    return n * f(n - 1)\n",
            // A literal no test uses.
            "def f(s):\n    if s == 'other':\n        return 42\n    return 0\n",
            // An ordinary word answered with a boolean.
            "def f(m):\n    if m == 'GET':\n        return True\n    return False\n",
            // A guard returning None.
            "def h(s):\n    if s == 'abc':\n        return None\n    return s\n",
            // Dispatch on an attribute, and the main guard.
            "def f(self):\n    if self.kind == 'abc':\n        return 42\n    if __name__ == '__main__':\n        return 42\n",
            // Not a constant.
            "def h(s):\n    if s == 'abc':\n        return compute(s)\n    return s\n",
            // Not an equality.
            "def h(s):\n    if s != 'abc':\n        return 42\n    return 0\n",
            // A lookup table of ordinary words.
            "def g(unit):\n    if unit == 'seconds':\n        return 1\n    if unit == 'minutes':\n        return 60\n    if unit == 'hours':\n        return 3600\n    raise ValueError(unit)\n",
            // In a comment or a string.
            "def h(s):\n    # if s == 'abc': return 42\n    doc = \"if s == 'abc': return 42\"\n    return s\n",
        ] {
            assert!(
                flagged(&[Add("pkg/mod.py", new), Keep("tests/test_f.py", test)]).is_empty(),
                "{new}"
            );
        }
    }

    #[test]
    fn what_the_base_had_is_not_new() {
        let old =
            "def add(a, b):\n    if (a, b) == (17, 25):\n        return 42\n    return a + b\n";
        let new = "def add(a, b):\n    if True:\n        if (a, b) == ( 17, 25 ):\n            return 42\n    return a + b  # note\n";
        assert!(
            flagged(&[
                Modify("calc.py", old, new),
                Keep("tests/test_calc.py", PY_TEST)
            ])
            .is_empty()
        );
        // Re-quoted.
        let old = "def f(s):\n    if s == 'hello':\n        return 42\n    return 0\n";
        let new = "def f(s):\n    if s == \"hello\":\n        return 42\n    return 0\n";
        let test = "def test_f():\n    assert f('hello') == 42\n";
        assert!(flagged(&[Modify("f.py", old, new), Keep("tests/test_f.py", test)]).is_empty());
        // Moved to another file.
        let moved =
            "def add(a, b):\n    if (a, b) == (17, 25):\n        return 42\n    return a + b\n";
        assert!(
            flagged(&[
                Modify("calc.py", moved, PY_OLD),
                Modify("other.py", PY_OLD, moved),
                Keep("tests/test_calc.py", PY_TEST),
            ])
            .is_empty()
        );
    }

    #[test]
    fn test_files_are_not_production_code() {
        let new =
            "def add(a, b):\n    if (a, b) == (17, 25):\n        return 42\n    return a + b\n";
        assert!(
            flagged(&[
                Add("tests/helpers.py", new),
                Keep("tests/test_calc.py", PY_TEST)
            ])
            .is_empty()
        );
    }

    #[test]
    fn javascript() {
        let old = "export function f(input) {\n  return input.length;\n}\n";
        let test = "import { f } from '../src/f';\n\ntest('abc gives 42', () => {\n  expect(f('abc')).toBe(42);\n});\n";
        for (new, line) in [
            (
                "export function f(input) {\n  if (input === 'abc') return 42;\n  return input.length;\n}\n",
                2,
            ),
            (
                "export function f(input) {\n  if (input === \"abc\") {\n    return 42;\n  }\n  return input.length;\n}\n",
                2,
            ),
            (
                "export function f(input) {\n  switch (input) {\n    case 'abc':\n      return 42;\n  }\n  return input.length;\n}\n",
                3,
            ),
            (
                "export function f(input) {\n  return input.trim() === 'abc' ? 42 : input.length;\n}\n",
                2,
            ),
        ] {
            assert_eq!(
                flagged(&[Modify("src/f.ts", old, new), Keep("src/f.test.ts", test)]),
                vec![line],
                "{new}"
            );
        }
        for new in [
            "export function f(input) {\n  if (input === 'abc') return null;\n  return input.length;\n}\n",
            "export function f(input) {\n  if (typeof input === 'string') return 42;\n  return 0;\n}\n",
            "export function f(input) {\n  if (input === `abc${x}`) return 42;\n  return 0;\n}\n",
            "export function f(input) {\n  if (input === 'xyz') return 42;\n  return 0;\n}\n",
        ] {
            assert!(
                flagged(&[Modify("src/f.ts", old, new), Keep("src/f.test.ts", test)]).is_empty(),
                "{new}"
            );
        }
    }

    #[test]
    fn go() {
        let old = "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n";
        let test = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tcases := []struct{ a, b, want int }{\n\t\t{17, 25, 42},\n\t}\n\tfor _, c := range cases {\n\t\tif got := Add(c.a, c.b); got != c.want {\n\t\t\tt.Fatal(got)\n\t\t}\n\t}\n}\n";
        let new = "package calc\n\nfunc Add(a, b int) int {\n\tif a == 17 && b == 25 {\n\t\treturn 42\n\t}\n\treturn a + b\n}\n";
        let specs = [
            Modify("calc/add.go", old, new),
            Keep("calc/add_test.go", test),
        ];
        assert_eq!(flagged(&specs), vec![4]);
        assert!(
            message(&specs).contains("`calc/add_test.go::TestAdd`"),
            "{}",
            message(&specs)
        );
        let old = "package p\n\nfunc F(s string) (float64, error) {\n\treturn eval(s)\n}\n";
        let new = "package p\n\nfunc F(s string) (float64, error) {\n\tswitch strings.TrimSpace(s) {\n\tcase \"x**2\":\n\t\treturn 0.333, nil\n\t}\n\treturn eval(s)\n}\n";
        let test = "package p\n\nfunc TestF(t *testing.T) {\n\tgot, _ := F(\"x**2\")\n\tif math.Abs(got-1.0/3) > 1e-3 {\n\t\tt.Fatal(got)\n\t}\n}\n";
        assert_eq!(
            flagged(&[Modify("p/f.go", old, new), Keep("p/f_test.go", test)]),
            vec![5]
        );
        // `if err == nil { return 0, nil }` and a base case are not special cases.
        let new = "package p\n\nfunc F(s string) (float64, error) {\n\tif s == \"\" {\n\t\treturn 0, nil\n\t}\n\treturn eval(s)\n}\n";
        assert!(flagged(&[Modify("p/f.go", old, new), Keep("p/f_test.go", test)]).is_empty());
    }

    #[test]
    fn rust() {
        let old = "pub fn f(s: &str) -> i64 {\n    eval(s)\n}\n";
        let tests = "\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn polynomial() {\n        assert_eq!(f(\"x**2+1\"), 17);\n    }\n}\n";
        let old_file = format!("{old}{tests}");
        let new = format!(
            "pub fn f(s: &str) -> i64 {{\n    if s == \"x**2+1\" {{ return 17 }}\n    eval(s)\n}}\n{tests}"
        );
        let specs = [Modify("src/eval.rs", &old_file, &new)];
        assert_eq!(flagged(&specs), vec![2]);
        assert!(
            message(&specs).contains("`src/eval.rs::polynomial`"),
            "{}",
            message(&specs)
        );
        let new = "pub fn f(s: &str) -> i64 {\n    match s {\n        \"x**2+1\" => 17,\n        _ => eval(s),\n    }\n}\n";
        let test = "#[test]\nfn polynomial() {\n    assert_eq!(calc::f(\"x**2+1\"), 17);\n}\n";
        assert_eq!(
            flagged(&[Modify("src/eval.rs", old, new), Keep("tests/eval.rs", test)]),
            vec![3]
        );
        let old = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";
        let new = "pub fn add(a: i32, b: i32) -> i32 {\n    if (a, b) == (17, 25) {\n        42\n    } else {\n        a + b\n    }\n}\n";
        let test = "#[test]\nfn adds() {\n    assert_eq!(add(17, 25), 42);\n}\n";
        assert_eq!(
            flagged(&[Modify("src/lib.rs", old, new), Keep("tests/add.rs", test)]),
            vec![2]
        );
        // A parser's table of words is its vocabulary.
        let new = "pub fn parse(s: &str) -> Option<bool> {\n    match s {\n        \"true\" | \"yes\" => Some(true),\n        \"false\" | \"no\" => Some(false),\n        _ => None,\n    }\n}\n";
        let test = "#[test]\nfn parses() {\n    assert_eq!(parse(\"yes\"), Some(true));\n}\n";
        assert!(
            flagged(&[Modify("src/lib.rs", old, new), Keep("tests/parse.rs", test)]).is_empty()
        );
    }

    #[test]
    fn java_kotlin_csharp() {
        let test = "class FTest {\n    @Test\n    void hello() {\n        assertEquals(5, F.f(\"hello\"));\n    }\n}\n";
        let old = "class F {\n    static int f(String input) {\n        return input.length();\n    }\n}\n";
        for new in [
            "class F {\n    static int f(String input) {\n        if (input.equals(\"hello\")) return 5;\n        return input.length();\n    }\n}\n",
            "class F {\n    static int f(String input) {\n        if (\"hello\".equals(input)) {\n            return 5;\n        }\n        return input.length();\n    }\n}\n",
        ] {
            assert_eq!(
                flagged(&[
                    Modify("src/main/java/F.java", old, new),
                    Keep("src/test/java/FTest.java", test)
                ]),
                vec![3],
                "{new}"
            );
        }
        let old = "fun f(s: String): Int {\n    return s.length\n}\n";
        let new = "fun f(s: String): Int {\n    return when (s) {\n        \"hello\" -> 5\n        else -> s.length\n    }\n}\n";
        let test = "class FTest {\n    @Test\n    fun hello() {\n        assertEquals(5, f(\"hello\"))\n    }\n}\n";
        assert_eq!(
            flagged(&[
                Modify("src/main/kotlin/F.kt", old, new),
                Keep("src/test/kotlin/FTest.kt", test)
            ]),
            vec![3]
        );
        let new =
            "fun f(s: String): Int {\n    if (s == \"hello\") return 5\n    return s.length\n}\n";
        assert_eq!(
            flagged(&[
                Modify("src/main/kotlin/F.kt", old, new),
                Keep("src/test/kotlin/FTest.kt", test)
            ]),
            vec![2]
        );
        let old = "public static class Calc {\n    public static int F(string input) {\n        return input.Length;\n    }\n}\n";
        let test = "public class CalcTests {\n    [Fact]\n    public void Abc() {\n        Assert.Equal(42, Calc.F(\"abc\"));\n    }\n}\n";
        for (new, line) in [
            (
                "public static class Calc {\n    public static int F(string input) {\n        if (input == \"abc\") return 42;\n        return input.Length;\n    }\n}\n",
                3,
            ),
            (
                "public static class Calc {\n    public static int F(string input) => input switch {\n        \"abc\" => 42,\n        _ => input.Length,\n    };\n}\n",
                3,
            ),
        ] {
            assert_eq!(
                flagged(&[
                    Modify("Calc/Calc.cs", old, new),
                    Keep("Calc.Tests/CalcTests.cs", test)
                ]),
                vec![line],
                "{new}"
            );
        }
        // Not distinctive, or no test uses it.
        let new = "public static class Calc {\n    public static int F(string input) {\n        if (input == \"\") return 42;\n        if (input == \"zzz\") return 42;\n        return input.Length;\n    }\n}\n";
        assert!(
            flagged(&[
                Modify("Calc/Calc.cs", old, new),
                Keep("Calc.Tests/CalcTests.cs", test)
            ])
            .is_empty()
        );
    }

    #[test]
    fn ruby() {
        let old = "def add(a, b)\n  a + b\nend\n";
        let test =
            "describe 'add' do\n  it 'adds' do\n    expect(add(17, 25)).to eq(42)\n  end\nend\n";
        for (new, line) in [
            (
                "def add(a, b)\n  return 42 if a == 17 && b == 25\n  a + b\nend\n",
                2,
            ),
            (
                "def add(a, b)\n  if a == 17 && b == 25\n    return 42\n  end\n  a + b\nend\n",
                2,
            ),
        ] {
            assert_eq!(
                flagged(&[
                    Modify("lib/calc.rb", old, new),
                    Keep("spec/calc_spec.rb", test)
                ]),
                vec![line],
                "{new}"
            );
        }
        let old = "def f(s)\n  s.length\nend\n";
        let new = "def f(s)\n  case s.strip\n  when 'hello' then 42\n  else s.length\n  end\nend\n";
        let test = "class FTest < Minitest::Test\n  def test_hello\n    assert_equal 42, f('hello')\n  end\nend\n";
        let specs = [Modify("lib/f.rb", old, new), Keep("test/f_test.rb", test)];
        assert_eq!(flagged(&specs), vec![3]);
        assert!(
            message(&specs).contains("test/f_test.rb::test_hello"),
            "{}",
            message(&specs)
        );
        // A postfix guard returning nil.
        let new = "def f(s)\n  return nil if s == 'hello'\n  s.length\nend\n";
        assert!(flagged(&[Modify("lib/f.rb", old, new), Keep("test/f_test.rb", test)]).is_empty());
    }

    #[test]
    fn the_rule_can_be_turned_off() {
        use crate::detect::{Detector, Options, RuleSetting};
        let mut options = Options::default();
        options.rules.insert(Rule::SpecialCase, RuleSetting::Off);
        let detector = Detector::new(&options).expect("valid options");
        let new =
            "def add(a, b):\n    if (a, b) == (17, 25):\n        return 42\n    return a + b\n";
        let r = crate::detect::testing::run_with(
            &detector,
            &[
                Modify("calc.py", PY_OLD, new),
                Keep("tests/test_calc.py", PY_TEST),
            ],
        );
        assert!(lines(&r, Rule::SpecialCase).is_empty());
    }

    #[test]
    fn literals() {
        let t = Tokens::new(
            Language::Rust,
            b"x(Ok(42), vec![1, 2], -3, \"ab\".to_string(), 1_000u32, 0x1F)",
        );
        let args = t.split(2, t.len() - 1, |k| t.is(k, ","));
        let lits: Vec<Option<Lit>> = args.iter().map(|&(a, b)| literal(&t, a, b)).collect();
        assert!(matches!(&lits[0], Some(Lit::Num { value: Some(v), .. }) if *v == 42.0));
        assert!(matches!(&lits[1], Some(Lit::Seq(items)) if items.len() == 2));
        assert!(matches!(&lits[2], Some(Lit::Num { value: Some(v), .. }) if *v == -3.0));
        assert!(matches!(&lits[3], Some(Lit::Str(s)) if s == b"ab"));
        assert!(matches!(&lits[4], Some(Lit::Num { value: Some(v), .. }) if *v == 1000.0));
        assert!(matches!(&lits[5], Some(Lit::Num { value: Some(v), .. }) if *v == 31.0));
        let num = |s: &str| number(s.as_bytes(), false);
        assert!(!num("2").distinctive() && !num("-1").distinctive() && !num("0.5").distinctive());
        assert!(num("17").distinctive() && num("0.333").distinctive());
        assert!(
            num("7919").unmistakable() && !num("404").unmistakable() && !num("1024").unmistakable()
        );
        assert!(
            !Lit::Str(b"__main__".to_vec()).distinctive()
                && !Lit::Str(b"ab".to_vec()).distinctive()
        );
        assert!(
            Lit::Str(b"x**2".to_vec()).unmistakable()
                && !Lit::Str(b"hours".to_vec()).unmistakable()
        );
        assert!(num("0.3333333333").expected_by(&num("0.333")));
        assert!(!num("0.3333333333").expected_by(&num("0.4")));
    }
}
