//! Finding branches: `if`/`elif`/`elsif`, postfix `if` and ternaries, `case`/`when` arms
//! and keyword-less match arms, whose condition compares an input with literals and whose
//! result is a constant.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use super::condition::{condition, subject};
use super::literal::{Lit, literal, shown_lit};
use crate::lang::Language;
use crate::rules::tokens::{Kind, Tokens};

/// A branch of the shape the rule looks for, whatever its literals.
#[derive(Debug)]
pub(super) struct Branch {
    pub(super) line: u32,
    pub(super) first_line: u32,
    pub(super) last_line: u32,
    pub(super) key: u64,
    /// Every literal compared, one conjunction per alternative.
    pub(super) alternatives: Vec<Vec<Lit>>,
    pub(super) constant: Lit,
    pub(super) shown_constant: String,
    /// What it compares: the input's code, and the `switch` it is an arm of.
    pub(super) subject: String,
    pub(super) switch: Option<usize>,
}

impl Branch {
    pub(super) fn distinctive(&self) -> Vec<Vec<Lit>> {
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
pub(super) fn tables(branches: &[Branch]) -> Vec<bool> {
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
pub(super) enum Family {
    Python,
    Ruby,
    Brace,
}

pub(super) fn family(lang: Language) -> Family {
    match lang {
        Language::Python => Family::Python,
        Language::Ruby => Family::Ruby,
        _ => Family::Brace,
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum SwitchKind {
    /// `case LIT:` / `case LIT ->` / `when LIT` arms.
    Cases,
    /// Arms without a keyword: Rust and PHP `match`, C# `switch` expressions, Kotlin `when`.
    Arms,
}

#[derive(Debug)]
pub(super) struct Switch {
    kind: SwitchKind,
    subject: Option<(usize, usize)>,
    /// The token range of its arms.
    body: (usize, usize),
}

/// Every branch of `t` that compares its input with literals and answers a constant.
pub(super) fn branches(t: &Tokens<'_>) -> Vec<Branch> {
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
        } else if t.is(i, "=>") && t.lang == Language::JavaScript {
            // An arrow function answering with a ternary: `(s) => s === 'abc' ? 42 : f(s)`.
            postfix_branch(t, fam, i)
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
pub(super) fn statement_start(t: &Tokens<'_>, fam: Family, i: usize) -> bool {
    fam == Family::Brace
        || i == 0
        || t.is_newline(i - 1)
        || ["else", ";", "=", "("].iter().any(|w| t.is(i - 1, w))
}

/// Whether the item after a `#[cfg(test)]` ending before `i` is a module (`mod tests`, also
/// `pub mod`, past more attributes): one test-only helper or import (`#[cfg(test)] use …;`)
/// is not where a file's tests begin.
fn test_module_follows(t: &Tokens<'_>, mut i: usize) -> bool {
    while i < t.len() && t.is_newline(i) {
        i += 1;
    }
    // Further attributes: `#[cfg(test)] #[allow(…)] mod tests`.
    while t.is(i, "#") && t.is(i + 1, "[") {
        let Some(close) = t.pair(i + 1) else {
            return false;
        };
        i = close + 1;
        while i < t.len() && t.is_newline(i) {
            i += 1;
        }
    }
    if t.is(i, "pub") {
        i += 1;
    }
    t.is(i, "mod")
}

/// Where a Rust file's `#[cfg(test)]` code starts (tests, not production).
pub(super) fn rust_tests_start(t: &Tokens<'_>) -> usize {
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
                && t.is(i + 6, "]")
                && test_module_follows(t, i + 7)
        })
        .unwrap_or(usize::MAX)
}

pub(super) fn switches(t: &Tokens<'_>, fam: Family) -> Vec<Switch> {
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

pub(super) type Range2 = (usize, usize);

/// A brace-language switch header at `i`: its subject, its `{` and how its arms read.
pub(super) fn brace_switch(
    t: &Tokens<'_>,
    i: usize,
) -> Option<(Option<Range2>, usize, SwitchKind)> {
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

pub(super) fn innermost(switches: &[Switch], i: usize) -> Option<(usize, &Switch)> {
    switches
        .iter()
        .enumerate()
        .filter(|(_, s)| s.body.0 <= i && i < s.body.1)
        .max_by_key(|(_, s)| s.body.0)
}

/// Words that stop a condition: what follows belongs to the body.
pub(super) fn continues_expression(t: &Tokens<'_>, k: usize) -> bool {
    [
        "==", "===", "!=", "!==", "&&", "||", ".", "and", "or", "?.", "<", ">", "<=", ">=", "+",
        "-", "*", "/", "[", "(", "?",
    ]
    .iter()
    .any(|w| t.is(k, w))
}

pub(super) fn if_branch(t: &Tokens<'_>, fam: Family, i: usize) -> Option<Branch> {
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
/// `return x === "a" ? 42 : f(x)` (also after a JS arrow's `=>`).
pub(super) fn postfix_branch(t: &Tokens<'_>, fam: Family, i: usize) -> Option<Branch> {
    // An arrow's body may start on the next line.
    let mut start = i + 1;
    while t.is(i, "=>") && t.is_newline(start) {
        start += 1;
    }
    let end = t
        .find(start, t.len(), |k| {
            t.is_newline(k) || t.is(k, ";") || t.is(k, "}")
        })
        .unwrap_or(t.len());
    match fam {
        Family::Ruby | Family::Python => {
            let at_if = t.find(start, end, |k| t.is(k, "if"))?;
            let value = constant(t, start, at_if)?;
            let cond_end = if fam == Family::Python {
                t.find(at_if + 1, end, |k| t.is(k, "else"))?
            } else {
                end
            };
            make(t, i, (at_if + 1, cond_end), None, value, end, None)
        }
        Family::Brace => {
            let q = t.find(start, end, |k| t.is(k, "?"))?;
            let colon = t.find(q + 1, end, |k| t.is(k, ":"))?;
            let value = constant(t, q + 1, colon)?;
            make(t, i, (start, q), None, value, colon, None)
        }
    }
}

/// `case LIT: return 42`, `case LIT -> 42;`, `case LIT => 42`, Ruby `when LIT then 42`.
pub(super) fn case_branch(
    t: &Tokens<'_>,
    fam: Family,
    switches: &[Switch],
    i: usize,
) -> Option<Branch> {
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
pub(super) fn arm_branch(t: &Tokens<'_>, switches: &[Switch], i: usize) -> Option<Branch> {
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
pub(super) fn returned(t: &Tokens<'_>, fam: Family, j: usize) -> Option<(Lit, usize)> {
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
pub(super) fn constant(t: &Tokens<'_>, a: usize, b: usize) -> Option<Lit> {
    let (a, b) = t.trim_newlines(a, b);
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

/// A branch from its parts: the condition (or an arm's pattern, with its switch's subject) must
/// compare an input with literals.
pub(super) fn make(
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
                let (x, y) = t.trim_newlines(x, y);
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
pub(super) fn subjects_shown(t: &Tokens<'_>, cond: (usize, usize)) -> String {
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

pub(super) fn shown_constant(
    _t: &Tokens<'_>,
    _cond: (usize, usize),
    _end: usize,
    constant: &Lit,
) -> String {
    shown_lit(constant)
}
