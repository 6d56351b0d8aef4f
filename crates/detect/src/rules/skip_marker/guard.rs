//! Whether a marker skips only under a condition: `skipif(sys.version_info < (3, 13))`,
//! `importorskip("numpy")`, `#[cfg_attr(windows, ignore)]`, `@DisabledOnOs(WINDOWS)`,
//! `it.skipIf(…)`, or a skip call inside an `if` (`if testing.Short() { t.Skip() }`).
//!
//! A test new to a change that is born conditional hides nothing: no test that ran before stops
//! running. One skipped without condition (`@pytest.mark.skip`, `xit`, `t.Skip()` as its first
//! statement) is what a worker does with a new test it cannot make pass, and stays flagged. A
//! condition that is a literal (`skipif(True)`, `skipIf(1, …)`) is none.

use std::ops::Range;

use super::super::code::{closing, enclosing_braces, indent, is_blank};
use crate::lang::Language;
use crate::scan::Text;
use crate::suite::is_truthy_literal;

/// Whether the marker of `kind` matched at `at` is conditional. `scope` is where its owner (the
/// test, or the file) starts: a guard is looked for between the two.
pub(super) fn conditional(
    lang: Language,
    kind: &str,
    text: &Text<'_>,
    at: Range<usize>,
    scope: usize,
) -> bool {
    let m = &text.masked;
    let matched = &m[at.clone()];
    let ends = |w: &[u8]| matched.trim_ascii_end().ends_with(w);
    match kind {
        "py-mark-skip" if ends(b"skipif") => condition_arg(text, at.end, Some(false)),
        "py-mark-xfail" => condition_arg(text, at.end, None),
        "py-unittest-skip" | "py-skip-decorator" if ends(b"skipIf") => {
            condition_arg(text, at.end, Some(false))
        }
        "py-unittest-skip" | "py-skip-decorator" if ends(b"skipUnless") => {
            condition_arg(text, at.end, Some(true))
        }
        "py-skip-call" if matched.windows(12).any(|w| w == b"importorskip") => true,
        "py-skip-call" | "py-xfail-call" | "py-skiptest" | "js-this-skip" | "go-skip"
        | "cs-assert-ignore" | "rb-skip" | "php-skip" | "gtest-skip" | "java-assume-false" => {
            guarded(lang, text, at, scope)
        }
        "js-skip" if ends(b"skipIf") || ends(b"runIf") && curried(m, at.end).is_some() => {
            curried(m, at.end).is_none_or(|c| !js_literal(m[c].trim_ascii()))
        }
        "js-skip" | "js-xfail" | "js-x" if is_reference(m, at.clone()) => chooses(m, at),
        "js-skip" | "js-xfail" => match js_runtime(text, at.end) {
            Some(true) => true,
            Some(false) => false,
            None => guarded(lang, text, at, scope),
        },
        "rs-ignore" => matched.windows(8).any(|w| w == b"cfg_attr"),
        // `@Disabled` alone; `@DisabledOnOs`, `@DisabledIf…`, `@DisabledForJreRange` … ask.
        "java-disabled" => !ends(b"Disabled"),
        "swift-skip" if ends(b"XCTSkipIf") || ends(b"XCTSkipUnless") => true,
        "swift-skip" => guarded(lang, text, at, scope),
        "swift-disabled" => {
            let rest = &m[at.end..];
            let open = skip_ws(rest, 0);
            rest.get(open) == Some(&b'(') && rest[skip_ws(rest, open + 1)..].starts_with(b"if")
        }
        _ => false,
    }
}

/// A JavaScript `.skip(…)` or `.fixme(…)` that does not define a test but skips the one it runs
/// in (`test.skip()`, `test.skip(browserName === 'webkit')`).
pub(super) fn js_runtime_call(text: &Text<'_>, at: Range<usize>) -> bool {
    // `it.skipIf(cond)(name, fn)` and `describe.runIf(cond)(name, fn)` define what follows.
    !text.masked[at.clone()].ends_with(b"skipIf")
        && curried(&text.masked, at.end).is_none()
        && js_runtime(text, at.end) != Some(false)
}

/// The condition of a wrapper called before the test or group it defines:
/// `describe.runIf(cond)(name, fn)`, `it.skipIf(cond)(name, fn)`. The range of the first
/// call's arguments, when a second call follows it.
pub(super) fn curried(m: &[u8], end: usize) -> Option<Range<usize>> {
    let open = skip_ws(m, end);
    if m.get(open) != Some(&b'(') {
        return None;
    }
    let close = closing(m, open)?;
    (m.get(skip_ws(m, close + 1)) == Some(&b'(')).then_some(open + 1..close)
}

/// A JavaScript condition that is a constant: `runIf(false)` never runs, `skipIf(true)`
/// always skips; neither asks anything.
fn js_literal(c: &[u8]) -> bool {
    matches!(
        c,
        b"true" | b"false" | b"0" | b"1" | b"!0" | b"!1" | b"null" | b"undefined" | b""
    )
}

fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while s.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The top-level arguments of the call whose `(` is at `open`, as ranges.
fn args(m: &[u8], open: usize) -> Option<Vec<Range<usize>>> {
    let close = closing(m, open)?;
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, open + 1);
    for (i, &b) in m.iter().enumerate().take(close).skip(open + 1) {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => {
                out.push(start..i);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(start..close);
    Some(
        out.into_iter()
            .filter(|r| !m[r.clone()].trim_ascii().is_empty())
            .collect(),
    )
}

/// Python `skipif(condition, reason=…)`, `xfail(condition, …)`, `skipUnless(condition, …)`:
/// whether the condition (the first positional argument, or `condition=`) is a real one. A
/// literal is none: `skipif(True)` always skips; `skipUnless(False)` too (`skips_when` says
/// which literal value skips: `Some(false)` for skipif, `Some(true)` for skipUnless; `None` for
/// xfail, whose condition is optional).
fn condition_arg(text: &Text<'_>, end: usize, skips_when: Option<bool>) -> bool {
    let m = &text.masked;
    let open = skip_ws(m, end);
    if m.get(open) != Some(&b'(') {
        return false;
    }
    let Some(args) = args(m, open) else {
        return false;
    };
    let keyword = |r: &Range<usize>| {
        let a = m[r.clone()].trim_ascii();
        let eq = a.iter().position(|&b| b == b'=')?;
        (a.get(eq + 1) != Some(&b'=')
            && a[..eq]
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || b.is_ascii_whitespace()))
        .then(|| {
            (
                a[..eq].trim_ascii().to_vec(),
                a[eq + 1..].trim_ascii().to_vec(),
            )
        })
    };
    let condition = args.iter().find_map(|r| match keyword(r) {
        Some((k, v)) if k == b"condition" => Some(v),
        Some(_) => None,
        None => Some(m[r.clone()].trim_ascii().to_vec()),
    });
    let Some(condition) = condition else {
        return false;
    };
    let c = String::from_utf8_lossy(&condition);
    // A string condition is an expression pytest evaluates: a condition. Its contents are
    // masked, so it cannot be told from a reason; only `xfail` takes a reason first, by name.
    if c.starts_with(['"', '\'']) {
        return skips_when.is_some();
    }
    let literal_true = is_truthy_literal(&c);
    let literal_false = matches!(c.as_ref(), "False" | "0" | "None");
    match skips_when {
        Some(false) | None => !(literal_true || skips_when.is_none() && literal_false),
        Some(true) => !literal_false && !literal_true,
    }
}

/// A JavaScript `.skip(…)`/`.fixme(…)`: `Some(false)` when it defines a skipped test or group
/// (a name first, or a function among its arguments), `Some(true)` when it skips at run time on
/// a condition (Playwright's `test.skip(browserName === 'webkit', …)`), `None` when it has no
/// argument (skips the test it runs in: a guard may still surround it).
fn js_runtime(text: &Text<'_>, end: usize) -> Option<bool> {
    let m = &text.masked;
    let open = skip_ws(m, end);
    if !matches!(m.get(open), Some(b'(')) {
        return Some(false);
    }
    let args = args(m, open)?;
    let first = args.first()?;
    let a = m[first.clone()].trim_ascii();
    if a.first().is_some_and(|b| matches!(b, b'"' | b'\'' | b'`')) {
        return Some(false);
    }
    let defines = args.iter().skip(1).any(|r| {
        let a = &m[r.clone()];
        a.windows(2).any(|w| w == b"=>") || a.windows(8).any(|w| w == b"function")
    });
    Some(!defines)
}

/// `it.skip` or `xdescribe` named, not called: `const itVm = vm ? it : it.skip`.
pub(super) fn is_reference(m: &[u8], at: Range<usize>) -> bool {
    !m[at.clone()].ends_with(b"(") && m.get(skip_ws(m, at.end)) != Some(&b'(')
}

/// Whether the statement holding a marker named, not called, picks it under a condition (`?`,
/// `&&`, `||`, an `if`).
fn chooses(m: &[u8], at: Range<usize>) -> bool {
    let start = m[..at.start]
        .iter()
        .rposition(|b| matches!(b, b';' | b'{' | b'}'))
        .map_or(0, |p| p + 1);
    let end = m[at.end..]
        .iter()
        .position(|b| matches!(b, b';' | b'\n'))
        .map_or(m.len(), |p| at.end + p);
    let stmt = &m[start..end];
    if let Some(q) = stmt.iter().position(|&b| b == b'?') {
        // The condition, after the bracket or `=` that opens it: a constant asks nothing
        // (`(false ? it : it.skip)` always skips).
        let before = &stmt[..q];
        let from = before
            .iter()
            .rposition(|b| matches!(b, b'(' | b'='))
            .map_or(0, |p| p + 1);
        return !js_literal(before[from..].trim_ascii());
    }
    has_guard_word(stmt)
}

/// Words that make what follows them run only sometimes.
const GUARDS: &[&[u8]] = &[
    b"if", b"elif", b"else", b"elsif", b"unless", b"except", b"rescue", b"when", b"case",
    b"switch", b"catch", b"guard", b"select", b"match", b"and", b"or",
];

fn has_guard_word(code: &[u8]) -> bool {
    code.split(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
        .any(|w| GUARDS.contains(&w))
        || code.windows(2).any(|w| w == b"&&" || w == b"||")
}

/// Whether a skip call at `at` runs only under a condition: an `if` (or `unless`, `except`, a
/// `switch` case, a `guard`) around it inside its owner, or on its own statement
/// (`if (!ok) GTEST_SKIP();`, `skip "…" unless linux?`, `ok || t.Skip()`).
fn guarded(lang: Language, text: &Text<'_>, at: Range<usize>, scope: usize) -> bool {
    let m = &text.masked;
    let line = text.line_of(at.start);
    if matches!(lang, Language::Python | Language::Ruby | Language::Elixir) {
        let start = text.line_start(line);
        let end = start + text.masked_line(line).len();
        if has_guard_word(&m[start..at.start]) || has_guard_word(&m[at.end..end.max(at.end)]) {
            return true;
        }
        let top = text.line_of(scope);
        let mut level = indent(text.masked_line(line));
        let mut l = line;
        while l > top && level > 0 {
            l -= 1;
            let code = text.masked_line(l);
            if is_blank(code) || indent(code) >= level {
                continue;
            }
            level = indent(code);
            let first = code.trim_ascii_start();
            let word = first
                .split(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
                .next()
                .unwrap_or_default();
            if GUARDS.contains(&word) {
                return true;
            }
        }
        return false;
    }
    let stmt = m[..at.start]
        .iter()
        .rposition(|b| matches!(b, b';' | b'{' | b'}'))
        .map_or(0, |p| p + 1);
    if has_guard_word(&m[stmt.max(scope).min(at.start)..at.start]) {
        return true;
    }
    enclosing_braces(m, at.start)
        .into_iter()
        .take_while(|&(open, _)| open >= scope)
        .any(|(open, header)| has_guard_word(&m[header.min(open)..open]))
}
