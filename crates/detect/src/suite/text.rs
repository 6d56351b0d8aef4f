//! One version of a file as the test model reads it: the masked text for structure, the text
//! with only comments blanked for values, and the small scanning tools every language shares
//! (brackets, top-level commas, lines, normalised operands).

use std::hash::Hasher;
use std::ops::Range;

use crate::lang::Language;
use crate::lexer;

pub(crate) struct Source<'a> {
    pub lang: Language,
    pub raw: &'a [u8],
    /// Comments and string contents blanked: structure only.
    pub masked: &'a [u8],
    /// Comments blanked, literals kept: the values.
    pub code: &'a [u8],
    line_starts: Vec<usize>,
}

impl<'a> Source<'a> {
    /// The version `lexed`, read through the views its other readers share.
    pub fn of(lexed: &'a lexer::Lexed<'_>) -> Source<'a> {
        let raw = lexed.raw();
        let line_starts = std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', raw).map(|i| i + 1))
            .collect();
        Source {
            lang: lexed.lang(),
            raw,
            masked: lexed.masked(),
            code: lexed.code(),
            line_starts,
        }
    }

    pub fn len(&self) -> usize {
        self.masked.len()
    }

    /// The 1-based line holding byte `at`.
    pub fn line_of(&self, at: usize) -> u32 {
        u32::try_from(self.line_starts.partition_point(|&s| s <= at)).unwrap_or(u32::MAX)
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The byte range of a 0-based line, without its newline.
    pub fn line_range(&self, i: usize) -> Range<usize> {
        let start = self.line_starts.get(i).copied().unwrap_or(self.len());
        let end = self
            .line_starts
            .get(i + 1)
            .map_or(self.len(), |&e| e.saturating_sub(1));
        start..end.max(start)
    }

    /// The end of the line holding `at` (the newline's offset, or the end).
    pub fn line_end(&self, at: usize) -> usize {
        let i = self.line_of(at) as usize;
        self.line_range(i.saturating_sub(1)).end
    }

    /// `range` of the values' view, normalised: white space dropped except one space between
    /// two word characters, `'` as `"`, no trailing comma before a closing bracket (but the
    /// one of a one-element tuple). A string literal's contents are kept as they are, but
    /// for how quotes are escaped: written with `"` delimiters, `'a \'b\' "c"'` and
    /// `"a 'b' \"c\""` are the one value `"a 'b' \"c\""`.
    pub fn norm(&self, range: Range<usize>) -> String {
        // The masked text keeps a literal's delimiters and blanks its contents, so it says
        // where each string is. Rust's `'` also starts lifetimes, which are code.
        let quotes: &[u8] = if self.lang == Language::Rust {
            b"\"`"
        } else {
            b"\"'`"
        };
        let quote = |b: u8| if b == b'\'' { b'"' } else { b };
        // Ruby's and PHP's single-quoted strings know two escapes only (`\\` and `\'`): their
        // other backslashes are characters, which a double-quoted string writes `\\`. Written
        // double-quoted, `'[x\]'` is `"[x\\]"`, the same string.
        let raw_single = matches!(self.lang, Language::Ruby | Language::Php);
        let mut out = Vec::new();
        let mut pending_space = false;
        // The open string's delimiter, and whether a backslash in it escapes.
        let mut in_string: Option<(u8, bool)> = None;
        // Per open bracket, the commas seen in it.
        let mut commas: Vec<u32> = Vec::new();
        let range = clamp(range, self.len());
        let mut i = range.start;
        while i < range.end {
            let (m, c) = (self.masked[i], self.code[i]);
            i += 1;
            if let Some((open, escapes)) = in_string {
                if quotes.contains(&m) {
                    in_string = None;
                    out.push(quote(m));
                } else if c == b'\\'
                    && escapes
                    && i < range.end
                    && !quotes.contains(&self.masked[i])
                {
                    let next = self.code[i];
                    if raw_single && open == b'\'' && !matches!(next, b'\\' | b'\'') {
                        // A backslash that escapes nothing is a character, which a
                        // double-quoted string writes `\\`; what follows it is read as usual.
                        out.extend_from_slice(b"\\\\");
                        continue;
                    }
                    // An escaped `'` is a `'`; an escaped `"` stays escaped, and so does anything
                    // else (`\\` is read as a pair, so its second backslash escapes nothing).
                    i += 1;
                    if next != b'\'' {
                        out.push(b'\\');
                    }
                    out.push(next);
                } else if c == b'"' && open == b'\'' {
                    // A `"` in a `'` string, whose delimiters are written `"`.
                    out.extend_from_slice(b"\\\"");
                } else {
                    out.push(c);
                }
                continue;
            }
            if c.is_ascii_whitespace() {
                pending_space = !out.is_empty();
                continue;
            }
            if pending_space && out.last().is_some_and(|&l| is_word(l)) && is_word(c) {
                out.push(b' ');
            }
            pending_space = false;
            if quotes.contains(&m) {
                if self.lang == Language::Python {
                    drop_unicode_prefix(&mut out);
                }
                in_string = Some((m, !raw_prefix(&out)));
                out.push(quote(m));
                continue;
            }
            match c {
                b'(' | b'[' | b'{' => commas.push(0),
                b',' => {
                    if let Some(n) = commas.last_mut() {
                        *n += 1;
                    }
                }
                b')' | b']' | b'}' => {
                    // A trailing comma is layout (a formatter adds it to a wrapped list), but
                    // for the one that makes `(x,)` a tuple.
                    let n = commas.pop().unwrap_or(0);
                    if out.last() == Some(&b',') && (c != b')' || n >= 2) {
                        out.pop();
                    }
                }
                _ => {}
            }
            out.push(c);
        }
        while out.last() == Some(&b',') {
            out.pop();
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    /// The code of `range` as a reviewer reads it: one line, white space collapsed, shortened.
    pub fn shown(&self, range: Range<usize>) -> String {
        /// Long enough for a real assertion, short enough for a message.
        const MAX_CHARS: usize = 100;
        let text = String::from_utf8_lossy(&self.code[clamp(range, self.len())]);
        let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        match one.char_indices().nth(MAX_CHARS) {
            Some((i, _)) => format!("{}…", &one[..i]),
            None => one,
        }
    }

    /// The key of a body: its code (masked) without white space, or `None` when it has none.
    pub fn body_key(&self, range: Range<usize>) -> Option<u64> {
        let code: Vec<u8> = self.masked[clamp(range, self.len())]
            .iter()
            .copied()
            .filter(|b| !b.is_ascii_whitespace())
            .collect();
        // A body of punctuation alone (`{}`, `)`, `end`) says nothing about the test.
        let first = code
            .iter()
            .position(|b| b.is_ascii_alphanumeric() || *b >= 0x80);
        let last = code
            .iter()
            .rposition(|b| b.is_ascii_alphanumeric() || *b >= 0x80);
        let meaningful = match (first, last) {
            (Some(f), Some(l)) => {
                let mut m = &code[f..=l];
                while let Some(rest) = m.strip_suffix(b"end") {
                    m = rest;
                }
                !m.is_empty()
            }
            _ => false,
        };
        meaningful.then(|| super::hash_bytes(&code))
    }

    /// The words of a body (names, numbers, and the words inside its strings; comments left
    /// out), hashed and sorted: what two versions of one test still share after it is renamed
    /// and edited. Words of one character (`t`, `x`, `1`) say too little to count.
    pub fn words(&self, range: Range<usize>) -> Vec<u64> {
        let code = &self.code[clamp(range, self.len())];
        let mut out: Vec<u64> = code
            .split(|&b| !is_word(b))
            .filter(|w| w.len() >= 2)
            .map(|w| {
                // Words are compared within one run, never kept: a fast hash will do.
                let mut h = rustc_hash::FxHasher::default();
                h.write(w);
                h.finish()
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// The arguments of the call whose `(` (or `[`, `{`) is at `open`, split at top-level commas,
    /// as ranges, and the offset just past the closing bracket.
    pub fn args(&self, open: usize) -> Option<(Vec<Range<usize>>, usize)> {
        let close = match_close(self.masked, open)?;
        let inner = open + 1..close;
        let parts = split_top(&self.masked[inner.clone()], b',')
            .into_iter()
            .map(|r| inner.start + r.start..inner.start + r.end)
            .filter(|r| {
                self.masked[r.clone()]
                    .iter()
                    .any(|b| !b.is_ascii_whitespace())
            })
            .collect();
        Some((parts, close + 1))
    }
}

/// Drops a Python `u`/`U` string prefix just written to `out`, with the space before it: since
/// Python 3 `u"x"` is `"x"`, and formatters drop the prefix (`assert f() == u"x"` is the same
/// expectation as `assert f() == "x"`).
fn drop_unicode_prefix(out: &mut Vec<u8>) {
    let [.., before, b'u' | b'U'] = out.as_slice() else {
        if matches!(out.as_slice(), [b'u' | b'U']) {
            out.pop();
        }
        return;
    };
    if is_word(*before) {
        // `xu"…"`: part of a name (or another prefix), not a lone `u`.
        return;
    }
    out.pop();
    if out.last() == Some(&b' ') {
        out.pop();
    }
}

/// Whether the prefix just written to `out` makes the string that follows raw, its
/// backslashes plain characters: Python's and Rust's `r"…"` (`rb`, `br`), C#'s `@"…"`.
fn raw_prefix(out: &[u8]) -> bool {
    if out.last() == Some(&b'@') {
        return true;
    }
    let word = out.iter().rev().take_while(|&&b| is_word(b)).count();
    word <= 2
        && out[out.len() - word..]
            .iter()
            .any(|&b| b == b'r' || b == b'R')
}

fn clamp(r: Range<usize>, len: usize) -> Range<usize> {
    let end = r.end.min(len);
    r.start.min(end)..end
}

pub(crate) fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

/// Whether the word `w` stands at `at` of `m`, not inside a longer word.
pub(crate) fn word_at(m: &[u8], at: usize, w: &[u8]) -> bool {
    m[at..].starts_with(w)
        && (at == 0 || !is_word(m[at - 1]))
        && m.get(at + w.len()).is_none_or(|&b| !is_word(b))
}

/// White space dropped except one space between word characters; `'` written as `"`. For text
/// without a masked view beside it; [`Source::norm`] also keeps strings' contents.
#[cfg(test)]
pub(crate) fn normalize(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(bytes.len());
    let mut pending_space = false;
    for &b in bytes {
        if b.is_ascii_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        if pending_space && out.last().is_some_and(|&l| is_word(l)) && is_word(b) {
            out.push(b' ');
        }
        pending_space = false;
        out.push(if b == b'\'' { b'"' } else { b });
    }
    // A trailing comma (a wrapped argument list) is not part of the value.
    while out.last() == Some(&b',') {
        out.pop();
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The offset of the bracket closing the one at `open` (`(`, `[` or `{`), on masked text.
pub(crate) fn match_close(m: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &b) in m.iter().enumerate().skip(open) {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The bracket opening the one that closes at `close`, on masked text.
pub(crate) fn match_open(m: &[u8], close: usize) -> Option<usize> {
    let mut depth = 0usize;
    for i in (0..=close).rev() {
        match m[i] {
            b')' | b']' | b'}' => depth += 1,
            b'(' | b'[' | b'{' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Ranges of `m` between top-level `sep` bytes (outside any bracket).
pub(crate) fn split_top(m: &[u8], sep: u8) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, &b) in m.iter().enumerate() {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            _ if b == sep && depth == 0 => {
                out.push(start..i);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(start..m.len());
    out
}

/// `key: value` or `key => value` or `key = value` at the top level of a normalised field.
pub(crate) fn split_pair(s: &str) -> Option<(&str, &str)> {
    let b = s.as_bytes();
    let mut depth = 0i32;
    let mut in_str = false;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'"' => in_str = !in_str,
            _ if in_str => {}
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b':' if depth == 0 && i > 0 && b[i - 1] != b':' && b.get(i + 1) != Some(&b':') => {
                return Some((&s[..i], &s[i + 1..]));
            }
            b'=' if depth == 0 && b.get(i + 1) == Some(&b'>') => {
                return Some((&s[..i], &s[i + 2..]));
            }
            _ => {}
        }
    }
    None
}

/// Skips white space (newlines included) from `i` on masked text.
pub(crate) fn skip_ws(m: &[u8], mut i: usize) -> usize {
    while i < m.len() && m[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The identifier starting at `i`, as a range (empty if none).
pub(crate) fn ident_at(m: &[u8], i: usize) -> Range<usize> {
    let mut j = i;
    while j < m.len() && is_word(m[j]) {
        j += 1;
    }
    i..j
}

/// The contents of the string literal that starts at or after `from` (skipping white space),
/// read from the raw text; the masked text keeps the quotes.
pub(crate) fn string_at(src: &Source<'_>, from: usize) -> Option<(String, usize)> {
    let m = &src.masked;
    let mut i = skip_ws(m, from);
    // String prefixes: r"…", f'…', b"…", @"…", $"…".
    while i < m.len() && matches!(m[i], b'r' | b'f' | b'b' | b'u' | b'@' | b'$') {
        i += 1;
    }
    let q = *m.get(i)?;
    if !matches!(q, b'"' | b'\'' | b'`') {
        return None;
    }
    let mut j = i + 1;
    while j < m.len() && m[j] != q {
        if m[j] == b'\n' && q != b'`' {
            return None;
        }
        j += 1;
    }
    // A name on one line: a template literal may span several.
    let text = String::from_utf8_lossy(src.raw.get(i + 1..j)?)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    Some((text, j + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalising_keeps_meaning_and_drops_layout() {
        assert_eq!(normalize(b"assert  x ==\n   5"), "assert x==5");
        assert_eq!(normalize(b"f('a',\n  'b',\n)"), "f(\"a\",\"b\",)");
        assert_eq!(normalize(b"x or True"), "x or True");
        assert_eq!(normalize(b"[1, 2],"), "[1,2]");
    }

    #[test]
    fn brackets_and_commas() {
        let m = b"f(a, g(b, c), [d, e]) + 1";
        assert_eq!(match_close(m, 1), Some(20));
        let parts: Vec<&[u8]> = split_top(&m[2..20], b',')
            .into_iter()
            .map(|r| &m[2..20][r])
            .collect();
        assert_eq!(parts, vec![&b"a"[..], b" g(b, c)", b" [d, e]"]);
        assert_eq!(match_close(b"f(a", 1), None);
        assert_eq!(match_close(b")", 0), None);
    }

    #[test]
    fn pairs() {
        assert_eq!(split_pair("name:\"x\""), Some(("name", "\"x\"")));
        assert_eq!(split_pair("a::b"), None);
        assert_eq!(split_pair("\"a:b\""), None);
        assert_eq!(split_pair(":sym=>1"), Some((":sym", "1")));
    }
}
