//! What several line rules need to read code on the masked text: patterns, block extents by
//! indentation (Python) and by braces, and the definitions enclosing a line.
//!
//! Everything here works on masked text (comments and string contents blanked), so a brace or a
//! `def` in a string never counts, and never panics on unbalanced input: an unclosed block ends
//! at the end of the file.

use regex::bytes::{Regex, RegexBuilder};

use crate::scan::Text;

/// A pattern of a rule: bytes, `^`/`$` at line boundaries.
pub(crate) fn re(pattern: &str) -> Regex {
    RegexBuilder::new(pattern)
        .unicode(false)
        .multi_line(true)
        .build()
        .expect("the rule's patterns are valid (tested)")
}

pub(crate) fn indent(line: &[u8]) -> usize {
    line.iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count()
}

pub(crate) fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| b.is_ascii_whitespace())
}

/// The bytes without white space: what two spellings of the same code share.
pub(crate) fn squeeze(bytes: &[u8]) -> Vec<u8> {
    bytes
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect()
}

/// Code as a message shows it: white space runs collapsed, shortened past `max` characters.
pub(crate) fn shown(bytes: &[u8], max: usize) -> String {
    let s = String::from_utf8_lossy(bytes);
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

/// The line holding byte `offset` of `text`, as a message shows it ([`shown`], 80 characters).
pub(crate) fn shown_line(text: &Text<'_>, offset: usize) -> String {
    let line = text.line_of(offset);
    let from = text.line_start(line);
    let to = from + text.masked_line(line).len();
    shown(&text.raw[from..to.min(text.raw.len())], 80)
}

/// The offset of the byte closing the bracket at `open` (`(`, `[` or `{`), counting only that
/// kind of bracket. `None` when it never closes.
pub(crate) fn closing(s: &[u8], open: usize) -> Option<usize> {
    let o = *s.get(open)?;
    let c = match o {
        b'(' => b')',
        b'[' => b']',
        b'{' => b'}',
        _ => return None,
    };
    let mut depth = 0usize;
    for (i, &b) in s.iter().enumerate().skip(open) {
        if b == o {
            depth += 1;
        } else if b == c {
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// Whether a JavaScript block's masked body only loads modules: `require('a')`,
/// `await import('a')` or `(await import('a'))`, each perhaps assigned and followed by member
/// picks (a `try` that `stubbed-import` reads, and `failure-swallowed` leaves to it).
pub(crate) fn js_only_loads(body: &[u8]) -> bool {
    static ONLY_LOADS: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        let call =
            r"(?:(?:await\s+)?(?:require|import)\s*\([^)]*\)|\(\s*await\s+import\s*\([^)]*\)\s*\))";
        let load = format!(
            r"(?:(?:const|let|var)\s+(?:[\w$]+|\{{[^}}]*\}}|\[[^\]]*\])\s*=\s*|[\w$.\[\]]+\s*=\s*)?{call}(?:\s*\.\s*[\w$]+)*"
        );
        re(&format!(r"\A\s*(?:{load}\s*;?\s*)+\z"))
    });
    ONLY_LOADS.is_match(body)
}

/// The `{` blocks enclosing `offset`, innermost first, as the offset of each `{` and the start of
/// its header (the code after the previous `;`, `{` or `}`: `func TestMain(m *testing.M) `).
pub(crate) fn enclosing_braces(s: &[u8], offset: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut i = offset.min(s.len());
    while i > 0 {
        i -= 1;
        match s[i] {
            b'}' => depth += 1,
            b'{' if depth > 0 => depth -= 1,
            b'{' => {
                let header = s[..i]
                    .iter()
                    .rposition(|&b| matches!(b, b';' | b'{' | b'}'))
                    .map_or(0, |p| p + 1);
                out.push((i, header));
            }
            _ => {}
        }
    }
    out
}

/// A Python definition (`def`, `async def` or `class`) enclosing a line.
#[derive(Debug)]
pub(crate) struct PyDef<'t> {
    pub class: bool,
    pub name: &'t [u8],
    /// Its `def`/`class` line.
    pub line: u32,
}

/// The lines that open the Python blocks enclosing `line` (each a line less indented than the
/// one inside it), innermost first, found by indentation.
pub(crate) fn py_block_lines(text: &Text<'_>, line: u32) -> impl Iterator<Item = u32> {
    let mut level = indent(text.masked_line(line));
    let mut l = line;
    std::iter::from_fn(move || {
        while level > 0 && l > 1 {
            l -= 1;
            let code = text.masked_line(l);
            if is_blank(code) || indent(code) >= level {
                continue;
            }
            level = indent(code);
            return Some(l);
        }
        None
    })
}

/// The Python definitions enclosing `line`, innermost first, found by indentation.
pub(crate) fn py_enclosing<'t>(text: &'t Text<'_>, line: u32) -> Vec<PyDef<'t>> {
    py_block_lines(text, line)
        .filter_map(|l| py_def(text, l))
        .collect()
}

/// The definition a line opens, if it is a `def`, `async def` or `class` line.
pub(crate) fn py_def<'t>(text: &'t Text<'_>, line: u32) -> Option<PyDef<'t>> {
    let code = text.masked_line(line);
    let level = indent(code);
    let rest = &code[level..];
    let (class, rest) = if let Some(r) = rest.strip_prefix(b"class") {
        (true, r)
    } else if let Some(r) = rest.strip_prefix(b"def") {
        (false, r)
    } else if let Some(r) = rest.strip_prefix(b"async") {
        (false, r.trim_ascii_start().strip_prefix(b"def")?)
    } else {
        return None;
    };
    if !rest.first().is_some_and(|b| *b == b' ' || *b == b'\t') {
        return None;
    }
    let rest = rest.trim_ascii_start();
    let end = rest
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b >= 0x80))
        .unwrap_or(rest.len());
    (end > 0).then(|| PyDef {
        class,
        name: &rest[..end],
        line,
    })
}

/// The decorator lines right above a Python definition line (`@pytest.fixture(autouse=True)`).
pub(crate) fn py_decorators<'t>(text: &'t Text<'_>, def_line: u32) -> Vec<&'t [u8]> {
    let level = indent(text.masked_line(def_line));
    let mut out = Vec::new();
    let mut l = def_line;
    while l > 1 {
        l -= 1;
        let code = text.masked_line(l);
        if is_blank(code) {
            break;
        }
        let t = code.trim_ascii();
        if indent(code) == level && t.starts_with(b"@") {
            out.push(t);
        } else if indent(code) <= level && !t.starts_with(b")") {
            break;
        }
        // Else the wrapped arguments of a decorator above.
    }
    out
}

/// The end of a Python definition's header (`def f(a,\n  b) -> int:`) from its `def` line: the
/// line of the `:` that opens the body, and the offset just after it.
pub(crate) fn py_header_end(text: &Text<'_>, def_line: u32) -> Option<(u32, usize)> {
    let s = &text.masked;
    let start = text.line_start(def_line);
    let line_end = start + text.masked_line(def_line).len();
    // The parameter list (or a class's bases) closes before the colon, wherever it wraps.
    let mut i = start;
    while i < line_end && s[i] != b'(' && s[i] != b':' {
        i += 1;
    }
    if i < line_end && s[i] == b'(' {
        i = closing(s, i)? + 1;
    }
    let colon = i + s[i..].iter().position(|&b| b == b':')?;
    Some((text.line_of(colon), colon + 1))
}

/// The lines of an indented block under a header ending on `header_last` at indentation `level`:
/// `(first, last)`, or `None` when no line is indented deeper.
pub(crate) fn py_block(text: &Text<'_>, header_last: u32, level: usize) -> Option<(u32, u32)> {
    let count = text.line_count();
    let mut first = None;
    let mut last = header_last;
    let mut l = header_last + 1;
    while l <= count {
        let code = text.masked_line(l);
        if !is_blank(code) {
            if indent(code) <= level {
                break;
            }
            first.get_or_insert(l);
            last = l;
        }
        l += 1;
    }
    first.map(|f| (f, last))
}

/// The last line of the logical line that starts at `line`: its bracketed or `\\`-continued
/// lines folded in, never past `last`.
pub(crate) fn py_logical_end(text: &Text<'_>, line: u32, last: u32) -> u32 {
    let mut l = line;
    let mut depth: i32 = 0;
    loop {
        let code = text.masked_line(l);
        for &b in code {
            match b {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                _ => {}
            }
        }
        let continued = depth > 0 || code.trim_ascii_end().ends_with(b"\\");
        if !continued || l >= last {
            return l;
        }
        l += 1;
    }
}

/// The statements of lines `first..=last` as `(first, last)` line pairs, each logical line with
/// its bracketed or `\`-continued lines folded in. Docstrings and other bare strings are left
/// out (masked, they are only quotes).
pub(crate) fn py_statements(text: &Text<'_>, first: u32, last: u32) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut l = first;
    while l <= last {
        let code = text.masked_line(l);
        if is_blank(code) {
            l += 1;
            continue;
        }
        let start = l;
        l = py_logical_end(text, l, last);
        let only_string = (start..=l).all(|k| is_bare_string(text.masked_line(k)));
        if !only_string {
            out.push((start, l));
        }
        l += 1;
    }
    out
}

/// A masked line that holds nothing but string delimiters (and their prefixes): part of a
/// docstring.
fn is_bare_string(line: &[u8]) -> bool {
    line.iter().any(|b| matches!(b, b'"' | b'\''))
        && line.iter().all(|b| {
            b.is_ascii_whitespace()
                || matches!(
                    b,
                    b'"' | b'\'' | b'r' | b'R' | b'b' | b'B' | b'u' | b'U' | b'f' | b'F'
                )
        })
}

/// The squeezed code of lines `first..=last` (masked, no white space).
pub(crate) fn squeezed_lines(text: &Text<'_>, first: u32, last: u32) -> Vec<u8> {
    let mut out = Vec::new();
    for l in first..=last {
        out.extend(squeeze(text.masked_line(l)));
    }
    out
}

/// The parts of an identifier, lower-cased: `AnyValue` → `any`, `value`; `_ANY` → `any`.
pub(crate) fn name_parts(name: &[u8]) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for &b in name {
        if !b.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                parts.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if b.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
            parts.push(std::mem::take(&mut cur));
        }
        prev_lower = b.is_ascii_lowercase() || b.is_ascii_digit();
        cur.push(b.to_ascii_lowercase() as char);
    }
    if !cur.is_empty() {
        parts.push(cur);
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Language;

    #[test]
    fn braces_and_enclosing_blocks() {
        let s = b"func A() {\n  if x {\n    y()\n  }\n}\nfunc B() { z() }\n";
        assert_eq!(closing(s, 9), Some(32));
        let at = s.iter().position(|&b| b == b'y').expect("y");
        let blocks = enclosing_braces(s, at);
        assert_eq!(blocks.len(), 2);
        assert!(s[blocks[1].1..blocks[1].0].starts_with(b"func A()"));
        assert!(
            s[blocks[0].1..blocks[0].0]
                .trim_ascii()
                .starts_with(b"if x")
        );
        assert_eq!(closing(b"{ { }", 0), None);
    }

    #[test]
    fn python_blocks() {
        let src = "class Money:\n    \"\"\"Doc.\"\"\"\n\n    def __eq__(self,\n               other) -> bool:\n        \"\"\"\n        Equal.\n        \"\"\"\n        return True\n\nx = 1\n";
        let t = Text::new(Language::Python, src.as_bytes());
        let d = py_def(&t, 4).expect("a def");
        assert_eq!((d.class, d.name, d.line), (false, &b"__eq__"[..], 4));
        let (last, _) = py_header_end(&t, 4).expect("header");
        assert_eq!(last, 5);
        assert_eq!(py_block(&t, 5, 4), Some((6, 9)));
        assert_eq!(py_statements(&t, 6, 9), vec![(9, 9)]);
        let outer = py_enclosing(&t, 9);
        let names: Vec<&[u8]> = outer.iter().map(|d| d.name).collect();
        assert_eq!(names, vec![&b"__eq__"[..], b"Money"]);
        assert!(py_enclosing(&t, 11).is_empty());
    }

    #[test]
    fn identifier_parts() {
        assert_eq!(name_parts(b"AnyValue"), ["any", "value"]);
        assert_eq!(name_parts(b"_ANY"), ["any"]);
        assert_eq!(name_parts(b"Company"), ["company"]);
        assert_eq!(name_parts(b"always_equal"), ["always", "equal"]);
        assert_eq!(shown(b"sys .  exit(\n 0)", 80), "sys . exit( 0)");
    }
}
