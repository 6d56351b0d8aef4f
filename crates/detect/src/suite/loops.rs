//! JavaScript and TypeScript tests written once inside a loop over a table of rows:
//!
//! ```js
//! for (const { name, path } of [{ name: 'a', path: '/a' }, { name: 'b', path: '/b' }]) {
//!   test(`denies ${name}`, async () => { … })
//! }
//! ```
//!
//! Such a test is one test in the file and as many when it runs, one per row, each named by
//! the template with the row's values. Those names are what a change that folds separate tests
//! into the loop keeps: `denies a` and `denies b` are still tested. Only a loop over an array
//! literal written in place (`for … of [ … ]`, `[ … ].forEach(…)`) is read, and only rows
//! whose values the name uses are literals: a row that is not there names no test.

use std::ops::Range;
use std::sync::LazyLock;

use regex::bytes::{Regex, RegexBuilder};
use rustc_hash::FxHashMap as HashMap;

use super::Unit;
use super::text::{self, Source};

static FOR_OF: LazyLock<Regex> = LazyLock::new(|| {
    RegexBuilder::new(r"\bfor\s*(\()\s*(?:const|let|var)\s+")
        .unicode(false)
        .build()
        .expect("the loop patterns are valid (tested)")
});
static FOR_EACH: LazyLock<Regex> = LazyLock::new(|| {
    RegexBuilder::new(r"\]\s*\.\s*forEach\s*\(")
        .unicode(false)
        .build()
        .expect("the loop patterns are valid (tested)")
});

/// How a loop binds each row.
enum Binding {
    /// `row`: the row itself, `${row}` or `${row.key}`.
    Whole(String),
    /// `{ a, b: c }`: variable → the row's key.
    Keys(HashMap<String, String>),
    /// `[a, b]`: variable → the row's position.
    Places(HashMap<String, usize>),
}

/// A loop: its rows, how each is bound, and the text it spans.
struct Loop {
    rows: Range<usize>,
    binding: Binding,
    span: Range<usize>,
}

/// The names the test `unit` runs under, one per row of the loops around it, when its name is
/// a template that uses the rows' values; empty otherwise.
pub(super) fn instances(src: &Source<'_>, unit: &Unit) -> Vec<String> {
    if !unit.test || !unit.simple.contains("${") {
        return Vec::new();
    }
    let mut out = Vec::new();
    for l in loops(src) {
        if !(l.span.start <= unit.body.start && unit.body.end <= l.span.end) {
            continue;
        }
        for row in text::split_top(&src.masked[l.rows.clone()], b',') {
            let row = l.rows.start + row.start..l.rows.start + row.end;
            if let Some(name) = instantiate(src, &unit.simple, &l.binding, row) {
                out.push(name);
            }
        }
    }
    out
}

/// Starts each test named by a template at the loop around it, so that a row added to the
/// loop touches the test: the rows are part of what it runs.
pub(super) fn widen(src: &Source<'_>, units: &mut [Unit]) {
    // A table test (`it.each`) has its rows in its head already.
    let named = |u: &Unit| u.test && u.head.is_empty() && u.simple.contains("${");
    if !units.iter().any(named) {
        return;
    }
    let loops = loops(src);
    for u in units.iter_mut().filter(|u| named(u)) {
        if let Some(l) = loops
            .iter()
            .filter(|l| l.span.start <= u.body.start && u.body.end <= l.span.end)
            .max_by_key(|l| l.span.start)
        {
            u.head = l.span.start..l.span.start;
        }
    }
}

fn loops(src: &Source<'_>) -> Vec<Loop> {
    let m = src.masked;
    let mut out = Vec::new();
    for c in FOR_OF.captures_iter(m) {
        let (Some(whole), Some(paren)) = (c.get(0), c.get(1)) else {
            continue;
        };
        let Some((binding, after)) = binding(src, whole.end()) else {
            continue;
        };
        let of = text::skip_ws(m, after);
        if !m[of..].starts_with(b"of") {
            continue;
        }
        let open = text::skip_ws(m, of + 2);
        let (Some(b'['), Some(close)) = (m.get(open), text::match_close(m, open)) else {
            continue;
        };
        let Some(header_end) = text::match_close(m, paren.start()) else {
            continue;
        };
        let body = text::skip_ws(m, header_end + 1);
        let end = match m.get(body) {
            Some(b'{') => text::match_close(m, body),
            _ => m[body..]
                .iter()
                .position(|&b| b == b';' || b == b'\n')
                .map(|p| body + p),
        }
        .unwrap_or(m.len());
        out.push(Loop {
            rows: open + 1..close,
            binding,
            span: whole.start()..end,
        });
    }
    for f in FOR_EACH.find_iter(m) {
        let Some(open) = text::match_open(m, f.start()) else {
            continue;
        };
        let call = f.end() - 1;
        let Some(call_end) = text::match_close(m, call) else {
            continue;
        };
        // `(row) =>`, `row =>`, `function (row)`, each perhaps `async`.
        let mut p = text::skip_ws(m, call + 1);
        for word in [&b"async"[..], b"function"] {
            if m[p..].starts_with(word) {
                p = text::skip_ws(m, p + word.len());
            }
        }
        let parens = m.get(p) == Some(&b'(');
        let Some((binding, _)) = binding(src, if parens { p + 1 } else { p }) else {
            continue;
        };
        out.push(Loop {
            rows: open + 1..f.start(),
            binding,
            span: open..call_end,
        });
    }
    out
}

/// The binding pattern at `at` and where it ends.
fn binding(src: &Source<'_>, at: usize) -> Option<(Binding, usize)> {
    let m = src.masked;
    let at = text::skip_ws(m, at);
    let word = |r: Range<usize>| String::from_utf8_lossy(&m[r]).trim().to_owned();
    match m.get(at)? {
        open @ (b'{' | b'[') => {
            let close = text::match_close(m, at)?;
            let inner = at + 1..close;
            let parts = text::split_top(&m[inner.clone()], b',');
            let names = parts.into_iter().map(|r| {
                let part = word(inner.start + r.start..inner.start + r.end);
                // A default value is not part of the name: `{ a = 1 }`, `[a = 1]`.
                let part = part.split('=').next().unwrap_or_default().trim().to_owned();
                match part.split_once(':') {
                    Some((key, var)) => (key.trim().to_owned(), var.trim().to_owned()),
                    None => (part.clone(), part),
                }
            });
            let binding = if *open == b'{' {
                Binding::Keys(names.map(|(key, var)| (var, key)).collect())
            } else {
                Binding::Places(names.enumerate().map(|(i, (_, var))| (var, i)).collect())
            };
            Some((binding, close + 1))
        }
        _ => {
            let id = text::ident_at(m, at);
            (!id.is_empty()).then(|| (Binding::Whole(word(id.clone())), id.end))
        }
    }
}

/// The template `name` with each `${…}` replaced by the row's value, if every one is a literal
/// of the row.
fn instantiate(
    src: &Source<'_>,
    name: &str,
    binding: &Binding,
    row: Range<usize>,
) -> Option<String> {
    let m = src.masked;
    let row = text::skip_ws(m, row.start)..row.end;
    let mut out = String::new();
    let mut rest = name;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let end = rest[at..].find('}')? + at;
        let expr = rest[at + 2..end].trim();
        let value = match binding {
            Binding::Whole(var) if expr == var => literal(src, row.clone()),
            Binding::Whole(var) => {
                let key = expr.strip_prefix(var.as_str())?.strip_prefix('.')?;
                field(src, row.clone(), |k, _| k == key)
            }
            Binding::Keys(keys) => {
                let key = keys.get(expr)?;
                field(src, row.clone(), |k, _| k == key)
            }
            Binding::Places(places) => {
                let place = *places.get(expr)?;
                field(src, row.clone(), |_, i| i == place)
            }
        }?;
        out.push_str(&value);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    Some(out.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// A field of an object or array row, by key or position.
fn field(
    src: &Source<'_>,
    row: Range<usize>,
    wanted: impl Fn(&str, usize) -> bool,
) -> Option<String> {
    let m = src.masked;
    let (open, close) = (row.start, text::match_close(m, row.start)?);
    let object = match m.get(open)? {
        b'{' => true,
        b'[' => false,
        _ => return None,
    };
    let inner = open + 1..close;
    for (i, r) in text::split_top(&m[inner.clone()], b',')
        .into_iter()
        .enumerate()
    {
        let r = inner.start + r.start..inner.start + r.end;
        if !object {
            if wanted("", i) {
                return literal(src, r);
            }
            continue;
        }
        let colon = text::split_top(&m[r.clone()], b':');
        let [key, value] = &colon[..] else { continue };
        let key = r.start + key.start..r.start + key.end;
        let key = match text::string_at(src, key.start) {
            Some((k, _)) => k,
            None => String::from_utf8_lossy(&m[key]).trim().to_owned(),
        };
        if wanted(&key, i) {
            return literal(src, r.start + value.start..r.start + value.end);
        }
    }
    None
}

/// The value of a literal at `r`: a string's contents, or a number or keyword as written.
fn literal(src: &Source<'_>, r: Range<usize>) -> Option<String> {
    let m = src.masked;
    let start = text::skip_ws(m, r.start);
    let shown = String::from_utf8_lossy(src.code.get(start..r.end)?)
        .trim()
        .to_owned();
    if matches!(m.get(start), Some(b'"' | b'\'' | b'`')) {
        let (value, after) = text::string_at(src, start)?;
        // One string, not an expression that starts with one, nor a template with values.
        let whole = m.get(after..r.end)?.iter().all(u8::is_ascii_whitespace);
        return (whole && !(m[start] == b'`' && value.contains("${"))).then_some(value);
    }
    // A number or a keyword such as `true`; a name is a variable, whose value is not here.
    let plain = super::is_literal(&shown) && !matches!(m.get(start), Some(b'[' | b'{' | b'('));
    plain.then_some(shown)
}
