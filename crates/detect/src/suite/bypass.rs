//! Rows of a table test that its own body passes over: a guard that compares a row's value with
//! a literal and leaves the row's run before its checks.
//!
//! ```go
//! for _, tt := range tests {
//!     if tt.name == "punctuation" {
//!         continue
//!     }
//!     t.Run(tt.name, …)
//! }
//! ```
//!
//! `if sku == "TS-M-RED": return` in a parametrized pytest test, `if (name === 'a') return;` in
//! Jest's `test.each`, `if (input.equals("x")) return;` in a JUnit parameterized test. The row
//! stays in the table, so a change that adds the guard removes nothing a reader sees; the row
//! runs no check any more. Only a guard whose whole condition is such comparisons (`==`, `===`,
//! `.equals`, Python's `in (…)`), joined by `or`, and whose block is nothing but `continue` or
//! `return`, is read: a guard that also asks about the platform (`&& runtime.GOOS ==
//! "windows"`) passes over the row somewhere only.
//!
//! Read on the masked text for structure and the values' view for the literals.

use std::ops::Range;

use super::text::{self, Source, is_word, word_at};
use crate::lang::Language;

/// One guard: the literals whose rows it passes over, and how it reads.
#[derive(Debug)]
pub(crate) struct Guard {
    pub values: Vec<String>,
    pub shown: String,
}

/// Names that are no row's: a guard on the platform or the environment is a condition of the
/// run, not of the row.
const NOT_ROWS: &[&str] = &[
    "os", "sys", "platform", "runtime", "process", "env", "settings", "config", "self", "this",
];

/// The guards in `body`.
pub(crate) fn guards(src: &Source<'_>, body: Range<usize>) -> Vec<Guard> {
    let body = body.start.min(src.len())..body.end.min(src.len());
    match src.lang {
        Language::Python => python(src, body),
        Language::Ruby => Vec::new(),
        _ => braces(src, body),
    }
}

/// `if (cond) continue;`, `if cond { continue }`, `if (cond) { return; }`.
fn braces(src: &Source<'_>, body: Range<usize>) -> Vec<Guard> {
    let m = src.masked;
    let mut out = Vec::new();
    let mut i = body.start;
    while i < body.end {
        if m[i] != b'i' || !word_at(m, i, b"if") {
            i += 1;
            continue;
        }
        let at = i;
        i += 2;
        let c = text::skip_ws(m, i);
        let (cond, after) = if m.get(c) == Some(&b'(') {
            let Some(close) = text::match_close(m, c).filter(|&e| e < body.end) else {
                continue;
            };
            (c + 1..close, close + 1)
        } else {
            // Go and Rust: the condition runs to the block's `{` on its line.
            let Some(open) = open_brace(m, c, body.end) else {
                continue;
            };
            (c..open, open)
        };
        let Some(end) = leaves(m, after, body.end) else {
            continue;
        };
        if let Some(values) = brace_condition(src, cond) {
            out.push(Guard {
                values,
                shown: src.shown(at..end),
            });
            i = end;
        }
    }
    out
}

/// The `{` that opens the block of a condition without brackets, on the condition's line.
fn open_brace(m: &[u8], from: usize, end: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, &b) in m.iter().enumerate().take(end).skip(from) {
        match b {
            b'\n' => return None,
            b'{' if depth == 0 => return Some(k),
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.checked_sub(1)?,
            _ => {}
        }
    }
    None
}

/// Whether what follows a condition at `from` is a `continue` or a bare `return`, alone in its
/// block or as the statement itself: where the guard ends.
fn leaves(m: &[u8], from: usize, end: usize) -> Option<usize> {
    let mut k = text::skip_ws(m, from);
    let braced = m.get(k) == Some(&b'{');
    if braced {
        k = text::skip_ws(m, k + 1);
    }
    let word = [&b"continue"[..], b"return"]
        .into_iter()
        .find(|w| k < end && word_at(m, k, w))?;
    k += word.len();
    while k < end && matches!(m[k], b' ' | b'\t' | b';') {
        k += 1;
    }
    if braced {
        let close = text::skip_ws(m, k);
        (m.get(close) == Some(&b'}') && close < end).then_some(close + 1)
    } else {
        matches!(m.get(k), Some(b'\n' | b'\r' | b'}')).then_some(k)
    }
}

/// The literals of a condition made of comparisons of a row's value with a literal, joined by
/// `||`.
fn brace_condition(src: &Source<'_>, cond: Range<usize>) -> Option<Vec<String>> {
    let m = &src.masked[cond.clone()];
    let mut values = Vec::new();
    for part in split_on(m, b"||") {
        let part = trim(m, part);
        let at = |r: Range<usize>| cond.start + r.start..cond.start + r.end;
        let p = &m[part.clone()];
        if let Some(found) = equality(src, cond.start, m, part.clone()) {
            values.push(found?);
        } else if let Some(dot) = find_top(p, b".equals(") {
            // `value.equals("x")` or `"x".equals(value)`.
            let open = part.start + dot + ".equals".len();
            let close = text::match_close(m, open)?;
            if trim(m, close + 1..part.end).start < part.end {
                return None;
            }
            values.push(compared(
                src,
                at(part.start..part.start + dot),
                at(open + 1..close),
            )?);
        } else {
            return None;
        }
    }
    Some(values)
}

/// `part` of the condition `m` (which starts at `offset` of the text) as an equality of a row's
/// value with a literal (`==`, `===`): `None` when it has no `==`, else the literal, if it is one.
fn equality(
    src: &Source<'_>,
    offset: usize,
    m: &[u8],
    part: Range<usize>,
) -> Option<Option<String>> {
    let p = &m[part.clone()];
    let eq = find_top(p, b"==")?;
    // `===` is `==` and one more `=`; `!=` and `<=` are not equalities.
    if eq > 0 && matches!(p[eq - 1], b'!' | b'<' | b'>' | b'=') {
        return Some(None);
    }
    let rhs = eq + if p.get(eq + 2) == Some(&b'=') { 3 } else { 2 };
    let at = |r: Range<usize>| offset + r.start..offset + r.end;
    Some(compared(
        src,
        at(trim(m, part.start..part.start + eq)),
        at(trim(m, part.start + rhs..part.end)),
    ))
}

/// A literal compared with a row's value, in either order: the literal.
fn compared(src: &Source<'_>, a: Range<usize>, b: Range<usize>) -> Option<String> {
    let (a, b) = (src.norm(a), src.norm(b));
    if literal(&a) && row_value(&b) {
        Some(a)
    } else if literal(&b) && row_value(&a) {
        Some(b)
    } else {
        None
    }
}

/// One string or number written out.
fn literal(s: &str) -> bool {
    if let Some(inner) = s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        // No quote inside but an escaped one: `"a" && b == "c"` is no one string.
        let mut escaped = false;
        return inner.bytes().all(|b| {
            let ok = b != b'"' || escaped;
            escaped = b == b'\\' && !escaped;
            ok
        });
    }
    let s = s.strip_prefix('-').unwrap_or(s);
    s.starts_with(|c: char| c.is_ascii_digit())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_')
}

/// A name or a field of one (`tt.name`, `case["sku"]`), but not the platform's.
fn row_value(s: &str) -> bool {
    let root = s.split(['.', '[']).next().unwrap_or("");
    !root.is_empty()
        && root.starts_with(|c: char| c.is_alphabetic() || c == '_' || c == '$')
        && root.bytes().all(is_word)
        && !NOT_ROWS.contains(&root)
        && !matches!(
            root,
            "true" | "false" | "True" | "False" | "None" | "nil" | "null"
        )
}

/// `if cond: continue` and `if cond:` with `continue` or `return` alone in its block.
fn python(src: &Source<'_>, body: Range<usize>) -> Vec<Guard> {
    let m = src.masked;
    let mut out = Vec::new();
    let first = src.line_of(body.start) as usize - 1;
    let last = src.line_of(body.end.saturating_sub(1)) as usize;
    let mut lines = (first..last).map(|i| src.line_range(i)).peekable();
    while let Some(line) = lines.next() {
        let start = text::skip_ws(m, line.start).min(line.end);
        if !word_at(m, start, b"if") || start + 2 > line.end {
            continue;
        }
        let l = &m[start..line.end];
        let Some(colon) = find_top(l, b":").filter(|&c| {
            c + 1 == l.trim_ascii_end().len() || {
                let rest = l[c + 1..].trim_ascii();
                word_at(rest, 0, b"continue") || word_at(rest, 0, b"return")
            }
        }) else {
            continue;
        };
        let cond = start + 2..start + colon;
        let rest = m[start + colon + 1..line.end].trim_ascii();
        let end = if rest.is_empty() {
            // The block: its first statement.
            let indent = start - line.start;
            let Some(next) = lines.peek() else {
                continue;
            };
            let s = text::skip_ws(m, next.start).min(next.end);
            if s - next.start <= indent {
                continue;
            }
            let stmt = m[s..next.end].trim_ascii_end();
            if stmt != b"continue" && stmt != b"return" && stmt != b"return None" {
                continue;
            }
            next.end
        } else if rest == b"continue" || rest == b"return" || rest == b"return None" {
            line.end
        } else {
            continue;
        };
        if let Some(values) = python_condition(src, cond) {
            out.push(Guard {
                values,
                shown: src.shown(start..end),
            });
        }
    }
    out
}

/// `x == "a"`, `x.name == "a"`, `x in ("a", "b")`, joined by `or`.
fn python_condition(src: &Source<'_>, cond: Range<usize>) -> Option<Vec<String>> {
    let m = &src.masked[cond.clone()];
    let mut values = Vec::new();
    for part in split_on(m, b" or ") {
        let part = trim(m, part);
        let p = &m[part.clone()];
        let at = |r: Range<usize>| cond.start + r.start..cond.start + r.end;
        if let Some(found) = equality(src, cond.start, m, part.clone()) {
            values.push(found?);
        } else if let Some(k) = find_top(p, b" in ") {
            if p[..k].trim_ascii_end().ends_with(b" not") {
                return None;
            }
            if !row_value(&src.norm(at(part.start..part.start + k))) {
                return None;
            }
            let open = text::skip_ws(m, part.start + k + 4);
            if !matches!(m.get(open), Some(b'(' | b'[' | b'{')) {
                return None;
            }
            let close = text::match_close(m, open)?;
            if trim(m, close + 1..part.end).start < part.end {
                return None;
            }
            for item in text::split_top(&m[open + 1..close], b',') {
                let item = trim(m, open + 1 + item.start..open + 1 + item.end);
                if item.is_empty() {
                    continue;
                }
                let v = src.norm(at(item));
                if !literal(&v) {
                    return None;
                }
                values.push(v);
            }
        } else {
            return None;
        }
    }
    (!values.is_empty()).then_some(values)
}

/// The parts of `m` between top-level occurrences of `sep`.
fn split_on(m: &[u8], sep: &[u8]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let (mut start, mut i) = (0, 0);
    while i < m.len() {
        match m[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            _ if depth == 0 && m[i..].starts_with(sep) => {
                out.push(start..i);
                i += sep.len();
                start = i;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(start..m.len());
    out
}

/// The first top-level occurrence of `what` in `m`.
fn find_top(m: &[u8], what: &[u8]) -> Option<usize> {
    let mut depth = 0i32;
    for (i, &b) in m.iter().enumerate() {
        if depth == 0 && m[i..].starts_with(what) {
            return Some(i);
        }
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// `r` of `m` without white space at either end (offsets into the same text as `r`'s).
fn trim(m: &[u8], r: Range<usize>) -> Range<usize> {
    let mut r = r.start.min(m.len())..r.end.min(m.len());
    while r.start < r.end && m[r.start].is_ascii_whitespace() {
        r.start += 1;
    }
    while r.end > r.start && m[r.end - 1].is_ascii_whitespace() {
        r.end -= 1;
    }
    r
}

/// Whether a row's normalised field is `value`, alone or as a named field's value
/// (`name: "a"`, `name="a"`).
pub(crate) fn holds(field: &str, value: &str) -> bool {
    let field = field.trim();
    if field == value {
        return true;
    }
    let named = text::split_pair(field).map(|(_, v)| v).or_else(|| {
        let (k, v) = field.split_once('=')?;
        (k.bytes().all(is_word) && !v.starts_with('=')).then_some(v)
    });
    named.is_some_and(|v| v.trim() == value)
}

#[cfg(test)]
mod tests;
