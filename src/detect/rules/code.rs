//! What several line rules need to read code on the masked text: patterns, block extents by
//! indentation (Python) and by braces, and the definitions enclosing a line.
//!
//! Everything here works on masked text (comments and string contents blanked), so a brace or a
//! `def` in a string never counts, and never panics on unbalanced input: an unclosed block ends
//! at the end of the file.

use regex::bytes::{Regex, RegexBuilder};

use crate::detect::scan::Text;

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

/// Code as a message shows it: white space runs collapsed, shortened past `max` characters.
pub(crate) fn shown(bytes: &[u8], max: usize) -> String {
    let s = String::from_utf8_lossy(bytes);
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
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

/// The Python definitions enclosing `line`, innermost first, found by indentation.
pub(crate) fn py_enclosing<'t>(text: &'t Text<'_>, line: u32) -> Vec<PyDef<'t>> {
    let mut out = Vec::new();
    let mut level = indent(text.masked_line(line));
    let mut l = line;
    while level > 0 && l > 1 {
        l -= 1;
        let code = text.masked_line(l);
        if is_blank(code) || indent(code) >= level {
            continue;
        }
        level = indent(code);
        if let Some(d) = py_def(text, l) {
            out.push(d);
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
