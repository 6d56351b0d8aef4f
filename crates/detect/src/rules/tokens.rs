//! A flat token stream over one file, for the rules that read expressions rather than lines
//! (`special-case`): identifiers, numbers, string literals with their contents, punctuation and
//! line ends, with brackets paired.
//!
//! It is built from the lexer's masked text, so comments never produce a token and a string is
//! recognised by its delimiters alone (its contents are blank there); the contents themselves
//! are read from the raw bytes at the same offsets. It never panics and runs in linear time.

use crate::lang::Language;
use crate::lexer;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Ident,
    Num,
    Str,
    Punct,
    /// The end of a line of code (runs of blank lines and comment-only lines give one).
    Newline,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Tok {
    pub kind: Kind,
    /// Byte range of the whole token in the file.
    pub start: usize,
    pub end: usize,
    /// 1-based line of its first byte, and the column (bytes) it starts at.
    pub line: u32,
    pub col: u32,
    /// For a string, the byte range of its contents; otherwise equal to `start..end`.
    pub inner: (usize, usize),
    /// A string without interpolation (not an f-string, not `${…}`, `#{…}`, `\(…)`, `$x`).
    pub plain: bool,
}

/// The tokens of one file.
pub(crate) struct Tokens<'a> {
    pub raw: &'a [u8],
    pub lang: Language,
    pub toks: Vec<Tok>,
    /// For an opening bracket, the index of the one closing it (and the reverse); `usize::MAX`
    /// for an unpaired bracket and for every other token.
    pair: Vec<usize>,
}

const NONE: usize = usize::MAX;

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b >= 0x80
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

fn blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c)
}

const OPS3: &[&[u8]] = &[b"===", b"!==", b"<=>", b"...", b"**="];
const OPS2: &[&[u8]] = &[
    b"==", b"!=", b"=>", b"->", b"&&", b"||", b"::", b"<=", b">=", b"..", b"**", b"+=", b"-=",
    b"?.", b"??", b":=", b"<<", b">>",
];

impl<'a> Tokens<'a> {
    /// Tokenises `raw`, a file of `lang`.
    pub fn new(lang: Language, raw: &'a [u8]) -> Tokens<'a> {
        let masked = lexer::mask(lang, raw);
        Tokens::from_masked(lang, raw, &masked)
    }

    /// Tokenises `raw` given its masked text (the same length).
    pub fn from_masked(lang: Language, raw: &'a [u8], m: &[u8]) -> Tokens<'a> {
        let n = m.len().min(raw.len());
        let mut toks: Vec<Tok> = Vec::new();
        let mut line: u32 = 1;
        let mut line_start = 0usize;
        let mut i = 0usize;
        let at = |k: usize| -> u8 { if k < n { m[k] } else { 0 } };
        while i < n {
            let b = m[i];
            if b == b'\n' {
                if toks.last().is_some_and(|t| t.kind != Kind::Newline) {
                    toks.push(Tok {
                        kind: Kind::Newline,
                        start: i,
                        end: i + 1,
                        line,
                        col: (i - line_start) as u32,
                        inner: (i, i + 1),
                        plain: false,
                    });
                }
                line += 1;
                line_start = i + 1;
                i += 1;
                continue;
            }
            if blank(b) {
                i += 1;
                continue;
            }
            let col = (i - line_start) as u32;
            let tok = |kind, start, end| Tok {
                kind,
                start,
                end,
                line,
                col,
                inner: (start, end),
                plain: false,
            };
            // A string: its contents are blank in the masked text.
            if matches!(b, b'"' | b'\'' | b'`')
                && let Some(t) = string_at(lang, raw, m, i, i, line, col)
            {
                let end = t.end;
                // `$"…"` (C#) and `f"…"` are read by `string_at` / below; newlines inside
                // multi-line literals still count.
                line += count_newlines(&m[i..end]);
                if let Some(p) = m[i..end].iter().rposition(|&c| c == b'\n') {
                    line_start = i + p + 1;
                }
                let mut t = t;
                if let Some(prev) = toks.last()
                    && prev.end == i
                    && prev.kind == Kind::Ident
                    && (prev.end - prev.start == 1)
                    && raw[prev.start] == b'$'
                {
                    t.plain = false;
                }
                toks.push(t);
                i = end;
                continue;
            }
            if b.is_ascii_digit()
                || (b == b'.' && at(i + 1).is_ascii_digit() && !is_ident(at(i.wrapping_sub(1))))
            {
                let mut j = i + 1;
                while j < n {
                    let c = m[j];
                    let prev = m[j - 1];
                    let exponent_sign = matches!(c, b'+' | b'-')
                        && matches!(prev, b'e' | b'E')
                        && !(m[i] == b'0' && matches!(at(i + 1), b'x' | b'X'))
                        && at(j + 1).is_ascii_digit();
                    if (is_ident(c) && c != b'$')
                        || (c == b'.' && at(j + 1).is_ascii_digit())
                        || exponent_sign
                    {
                        j += 1;
                    } else {
                        break;
                    }
                }
                toks.push(tok(Kind::Num, i, j));
                i = j;
                continue;
            }
            if is_ident_start(b) {
                let mut j = i + 1;
                while j < n && is_ident(m[j]) {
                    j += 1;
                }
                // Ruby method names end in `?` or `!` (`eql?`, `strip!`).
                if lang == Language::Ruby && matches!(at(j), b'?' | b'!') && at(j + 1) != b'=' {
                    let after = at(j + 1);
                    if !is_ident(after) && after != b':' {
                        j += 1;
                    }
                }
                let word = &m[i..j];
                // String prefixes: `f"…"`, `b'…'`, `r"…"`, `r#"…"#`, `u8"…"`.
                let prefix = prefix_ok(lang, word);
                let hashes = if lang == Language::Rust && matches!(word, b"r" | b"br" | b"cr") {
                    m[j..n].iter().take_while(|&&c| c == b'#').count()
                } else {
                    0
                };
                let q = j + hashes;
                if prefix
                    && matches!(at(q), b'"' | b'\'')
                    && let Some(mut t) = string_at(lang, raw, m, i, q, line, col)
                {
                    if hashes > 0 {
                        t.end = (t.end + hashes).min(n);
                    }
                    t.plain = t.plain && !word.iter().any(|c| matches!(c, b'f' | b'F'));
                    line += count_newlines(&m[i..t.end]);
                    if let Some(p) = m[i..t.end].iter().rposition(|&c| c == b'\n') {
                        line_start = i + p + 1;
                    }
                    toks.push(t);
                    i = t.end;
                    continue;
                }
                toks.push(tok(Kind::Ident, i, j));
                i = j;
                continue;
            }
            let rest = &m[i..n];
            let len = if OPS3.iter().any(|o| rest.starts_with(o)) {
                3
            } else if OPS2.iter().any(|o| rest.starts_with(o)) {
                2
            } else {
                1
            };
            toks.push(tok(Kind::Punct, i, i + len));
            i += len;
        }
        let pair = pair_brackets(m, &toks);
        Tokens {
            raw,
            lang,
            toks,
            pair,
        }
    }

    pub fn len(&self) -> usize {
        self.toks.len()
    }

    /// The raw bytes of token `i` (empty past the end).
    pub fn text(&self, i: usize) -> &'a [u8] {
        self.toks
            .get(i)
            .map_or(&[][..], |t| &self.raw[t.start..t.end])
    }

    /// The contents of string token `i` (the token's text for anything else).
    pub fn content(&self, i: usize) -> &'a [u8] {
        self.toks
            .get(i)
            .map_or(&[][..], |t| &self.raw[t.inner.0..t.inner.1])
    }

    pub fn kind(&self, i: usize) -> Option<Kind> {
        self.toks.get(i).map(|t| t.kind)
    }

    /// True when token `i` is the identifier or punctuation `w`.
    pub fn is(&self, i: usize, w: &str) -> bool {
        self.toks
            .get(i)
            .is_some_and(|t| t.kind != Kind::Str && self.text(i) == w.as_bytes())
    }

    pub fn is_newline(&self, i: usize) -> bool {
        self.kind(i) == Some(Kind::Newline)
    }

    /// The tokens `a..b` without the newlines at either end.
    pub fn trim_newlines(&self, mut a: usize, mut b: usize) -> (usize, usize) {
        while a < b && self.is_newline(a) {
            a += 1;
        }
        while b > a && self.is_newline(b - 1) {
            b -= 1;
        }
        (a, b)
    }

    /// The index of the bracket paired with the one at `i`.
    pub fn pair(&self, i: usize) -> Option<usize> {
        self.pair.get(i).copied().filter(|&p| p != NONE)
    }

    pub fn line(&self, i: usize) -> u32 {
        self.toks.get(i).map_or(0, |t| t.line)
    }

    /// The first index at or after `from` (before `to`) at bracket depth 0 for which `stop`
    /// holds; bracket groups are stepped over whole.
    pub fn find(&self, from: usize, to: usize, stop: impl Fn(usize) -> bool) -> Option<usize> {
        let mut i = from;
        while i < to.min(self.len()) {
            if stop(i) {
                return Some(i);
            }
            i = match self.opener(i).then(|| self.pair(i)).flatten() {
                Some(close) if close > i => close + 1,
                _ => i + 1,
            };
        }
        None
    }

    /// True for `(`, `[` and `{`.
    pub fn opener(&self, i: usize) -> bool {
        self.kind(i) == Some(Kind::Punct) && matches!(self.text(i), b"(" | b"[" | b"{")
    }

    /// Splits `from..to` at depth-0 tokens `sep` accepts.
    pub fn split(
        &self,
        from: usize,
        to: usize,
        sep: impl Fn(usize) -> bool,
    ) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut start = from;
        let mut i = from;
        while let Some(s) = self.find(i, to, &sep) {
            out.push((start, s));
            start = s + 1;
            i = s + 1;
        }
        out.push((start, to));
        out
    }

    /// The code of `from..to` as a reviewer would read it: tokens joined by single spaces where
    /// they were apart, shortened.
    pub fn shown(&self, from: usize, to: usize) -> String {
        let mut s = String::new();
        for i in from..to.min(self.len()) {
            if self.is_newline(i) {
                continue;
            }
            if i > from && !s.is_empty() && self.toks[i].start > self.toks[i - 1].end {
                s.push(' ');
            }
            s.push_str(&String::from_utf8_lossy(self.text(i)));
        }
        const MAX: usize = 60;
        match s.char_indices().nth(MAX) {
            Some((k, _)) => format!("{}…", &s[..k]),
            None => s,
        }
    }
}

fn count_newlines(s: &[u8]) -> u32 {
    u32::try_from(s.iter().filter(|&&b| b == b'\n').count()).unwrap_or(u32::MAX)
}

/// Whether `word` can prefix a string literal in `lang`.
fn prefix_ok(lang: Language, word: &[u8]) -> bool {
    let letters = |set: &[u8]| word.len() <= 3 && word.iter().all(|c| set.contains(c));
    match lang {
        Language::Python => letters(b"rRbBfFuU"),
        Language::Rust => matches!(word, b"b" | b"r" | b"br" | b"c" | b"cr"),
        Language::Cpp => matches!(word, b"u8" | b"u" | b"U" | b"L"),
        _ => false,
    }
}

/// A string literal whose opening quote is at `q` (its token starting at `start`, which is
/// before `q` for a prefixed literal). `None` where the quote does not open a literal.
fn string_at(
    lang: Language,
    raw: &[u8],
    m: &[u8],
    start: usize,
    q: usize,
    line: u32,
    col: u32,
) -> Option<Tok> {
    let n = m.len().min(raw.len());
    let quote = m[q];
    let run = m[q..n].iter().take_while(|&&c| c == quote).count();
    let triple_langs = matches!(
        lang,
        Language::Python | Language::Java | Language::Swift | Language::CSharp | Language::Elixir
    );
    let (open, close_at, close_len) = if run >= 3 && triple_langs {
        // `"""…"""`: the next run of as many quotes closes it.
        let body = q + run;
        let mut j = body;
        loop {
            let k = m[j..n].iter().position(|&c| c == quote)? + j;
            let r = m[k..n].iter().take_while(|&&c| c == quote).count();
            if r >= run {
                // Extra quotes belong to the contents.
                break (body, k + r - run, run);
            }
            j = k + r;
        }
    } else if run >= 2 {
        (q + 1, q + 1, 1)
    } else {
        let next = *m.get(q + 1)?;
        if !blank(next) {
            // Code right after the quote: a Rust lifetime, or a quote the lexer read as code.
            return None;
        }
        let k = m[q + 1..n].iter().position(|&c| c == quote)? + q + 1;
        if !m[q + 1..k].iter().all(|&c| blank(c)) {
            return None;
        }
        (q + 1, k, 1)
    };
    let content = &raw[open..close_at];
    let interpolates = content.windows(2).any(|w| {
        matches!(w, b"${" | b"#{" | b"\\(")
            || (matches!(lang, Language::Java | Language::Php)
                && w[0] == b'$'
                && (w[1].is_ascii_alphabetic() || w[1] == b'_'))
    });
    let template = quote == b'`' && lang == Language::JavaScript && content.contains(&b'$');
    let plain = !(interpolates || template);
    Some(Tok {
        kind: Kind::Str,
        start,
        end: close_at + close_len,
        line,
        col,
        inner: (open, close_at),
        plain,
    })
}

fn pair_brackets(m: &[u8], toks: &[Tok]) -> Vec<usize> {
    let mut pair = vec![NONE; toks.len()];
    let mut stack: Vec<(u8, usize)> = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if t.kind != Kind::Punct || t.end - t.start != 1 {
            continue;
        }
        let b = m[t.start];
        match b {
            b'(' | b'[' | b'{' => stack.push((b, i)),
            b')' | b']' | b'}' => {
                let want = match b {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                // An unpaired closer is skipped; an unclosed opener inside is dropped.
                if let Some(pos) = stack.iter().rposition(|&(o, _)| o == want) {
                    let (_, open) = stack[pos];
                    stack.truncate(pos);
                    pair[open] = i;
                    pair[i] = open;
                }
            }
            _ => {}
        }
    }
    pair
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(lang: Language, s: &str) -> Vec<(Kind, String)> {
        let t = Tokens::new(lang, s.as_bytes());
        (0..t.len())
            .map(|i| {
                let text = if t.kind(i) == Some(Kind::Str) {
                    t.content(i)
                } else {
                    t.text(i)
                };
                (t.toks[i].kind, String::from_utf8_lossy(text).into_owned())
            })
            .collect()
    }

    #[test]
    fn strings_numbers_and_comments() {
        let k = kinds(
            Language::Python,
            "if s.strip() == \"x**2\":  # a comment\n    return 0.3333333333\n",
        );
        let texts: Vec<&str> = k.iter().map(|(_, s)| s.as_str()).collect();
        assert_eq!(
            texts,
            vec![
                "if",
                "s",
                ".",
                "strip",
                "(",
                ")",
                "==",
                "x**2",
                ":",
                "\n",
                "return",
                "0.3333333333",
                "\n"
            ]
        );
        assert_eq!(k[7].0, Kind::Str);
        assert_eq!(k[11].0, Kind::Num);
        let k = kinds(
            Language::Rust,
            "fn f<'a>(s: &'a str) -> u8 { if s == r#\"a\"b\"# { 1e-3 } else { 'x' as u8 } }",
        );
        assert!(k.contains(&(Kind::Str, "a\"b".into())), "{k:?}");
        assert!(k.contains(&(Kind::Num, "1e-3".into())), "{k:?}");
        assert!(k.contains(&(Kind::Str, "x".into())), "{k:?}");
        assert!(
            !k.iter()
                .any(|(kind, s)| *kind == Kind::Str && s.contains("a>")),
            "{k:?}"
        );
    }

    #[test]
    fn interpolation_is_not_plain() {
        for (lang, src) in [
            (Language::Python, "f\"{x}\""),
            (Language::JavaScript, "`a${x}`"),
            (Language::Ruby, "\"a#{x}\""),
            (Language::CSharp, "$\"a{x}\""),
            (Language::Java, "\"a$x\""),
        ] {
            let t = Tokens::new(lang, src.as_bytes());
            let s = (0..t.len())
                .find(|&i| t.kind(i) == Some(Kind::Str))
                .expect("a string");
            assert!(!t.toks[s].plain, "{src}");
        }
        let t = Tokens::new(Language::Python, b"'abc'");
        assert!(t.toks[0].plain);
    }

    #[test]
    fn brackets_pair_and_lines_count() {
        let t = Tokens::new(Language::JavaScript, b"f(a, [1, 2], {\n b: `x\ny`\n}) + 1");
        assert_eq!(t.pair(1), Some(t.len() - 3));
        let last = t.len() - 1;
        assert_eq!(t.line(last), 4);
        let parts = t.split(2, t.len() - 3, |i| t.is(i, ","));
        assert_eq!(parts.len(), 3);
        // Unbalanced input never panics.
        let t = Tokens::new(Language::Go, b")]} { ( [ \"");
        assert!(t.len() > 0);
    }
}
