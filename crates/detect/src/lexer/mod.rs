//! Masks comments and string literals so the detector's rules only ever match code.
//!
//! [`mask`] blanks every byte inside a comment, and inside the contents of a string or character
//! literal, keeping newlines and string delimiters, so that byte offsets and line numbers in the
//! masked text still point at the original source. [`mask_comments`] and [`mask_strings`] blank
//! only one of the two. Each language is described by one small
//! table (a `Syntax`: comment markers, which quotes open which kind of literal, and a few
//! per-language extras such as Rust raw strings or Ruby heredocs), read by one single-pass
//! scanner. The scan works on bytes (the source need not be UTF-8), never panics, whatever it is
//! given, and runs in linear time with one allocation. It does no IO.
//!
//! The scanner errs towards code: where a construct is ambiguous (a regex literal, a JSX text
//! with an apostrophe), it is read so that the damage stays on one line where possible.

use std::cell::OnceCell;

use super::lang::Language;

/// One version of a file, lexed once for every reader: the line rules and the branch reader
/// take its [`mask`], the test model also its [`mask_comments`]. Each view is made on first
/// use; when the test model reads the file, the first view asked for brings both, from one pass.
pub struct Lexed<'a> {
    lang: Language,
    raw: &'a [u8],
    /// Whether [`Lexed::code`] will be asked for.
    code_too: bool,
    masked: OnceCell<Vec<u8>>,
    code: OnceCell<Vec<u8>>,
}

impl<'a> Lexed<'a> {
    /// `code_too`: the comments-only view will be read as well (a file the test model reads).
    pub fn new(lang: Language, raw: &'a [u8], code_too: bool) -> Lexed<'a> {
        Lexed {
            lang,
            raw,
            code_too,
            masked: OnceCell::new(),
            code: OnceCell::new(),
        }
    }

    pub fn lang(&self) -> Language {
        self.lang
    }

    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// The text with comments and string contents blanked ([`mask`]).
    pub fn masked(&self) -> &[u8] {
        if self.code_too {
            self.both();
        }
        self.masked.get_or_init(|| mask(self.lang, self.raw))
    }

    /// The text with comments blanked, literals kept ([`mask_comments`]).
    pub fn code(&self) -> &[u8] {
        if self.masked.get().is_none() {
            self.both();
        }
        self.code.get_or_init(|| mask_comments(self.lang, self.raw))
    }

    /// Makes both views in one pass, unless one is made already.
    fn both(&self) {
        if self.masked.get().is_none() && self.code.get().is_none() {
            let (masked, code) = mask_and_mask_comments(self.lang, self.raw);
            let _ = self.masked.set(masked);
            let _ = self.code.set(code);
        }
    }
}

/// Returns a copy of `src`, the same length, in which every byte that is inside a comment or inside
/// the *contents* of a string/char literal is replaced by b' ' — except b'\n', which is kept so that
/// line numbers and byte offsets are unchanged. String delimiters (the quotes themselves, prefixes like
/// r/b/f, `r#"`) are kept, so `@Ignore("flaky")` masks to `@Ignore("     ")`. Comment markers themselves
/// are masked too (the whole comment becomes spaces).
pub fn mask(lang: Language, src: &[u8]) -> Vec<u8> {
    scan(lang, src, Blank::Both)
}

/// Like [`mask`], but only comments are blanked: string and character literals keep their
/// contents. The test model reads expected values (`"abc"`, `'x'`) through it, while a comment
/// after an assertion (`assert x == 5  # was 4`) is still not part of it.
pub fn mask_comments(lang: Language, src: &[u8]) -> Vec<u8> {
    scan(lang, src, Blank::Comments)
}

/// Like [`mask`], but only the contents of string and character literals are blanked: comments
/// stay as they are. Lint and type-checker suppressions (`# noqa`, `// eslint-disable-line`)
/// live in comments by design, and are read through it, while the same words in a string or a
/// docstring are not one.
pub fn mask_strings(lang: Language, src: &[u8]) -> Vec<u8> {
    scan(lang, src, Blank::Strings)
}

/// What a scan blanks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Blank {
    Both,
    Comments,
    Strings,
}

fn scan(lang: Language, src: &[u8], what: Blank) -> Vec<u8> {
    let mut scanner = Scanner {
        syn: syntax(lang),
        src,
        out: src.to_vec(),
        comments: what != Blank::Strings,
        strings: what != Blank::Comments,
        literals: None,
    };
    scanner.run();
    scanner.out
}

/// [`mask`] and [`mask_comments`] of the same text, in one pass: the literals' contents that the
/// first blanks are put back for the second.
pub fn mask_and_mask_comments(lang: Language, src: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut scanner = Scanner {
        syn: syntax(lang),
        src,
        out: src.to_vec(),
        comments: true,
        strings: true,
        literals: Some(Vec::new()),
    };
    scanner.run();
    let mut code = scanner.out.clone();
    for (from, to) in scanner.literals.unwrap_or_default() {
        let to = to.min(src.len());
        let from = from.min(to);
        code[from..to].copy_from_slice(&src[from..to]);
    }
    (scanner.out, code)
}

/// What a quote byte opens when it is met in code.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Quote {
    /// Nothing: the byte is code.
    Code,
    /// A literal with backslash escapes that ends (unterminated) at an unescaped newline.
    Line,
    /// A literal with backslash escapes that spans lines.
    Multi,
    /// A literal without escapes that spans lines (Go's `` `…` ``).
    Raw,
    /// Rust: a char literal (`'x'`, `'\n'`), or else a lifetime or a label, which are code.
    RustChar,
}

/// What three or more of a quote byte in a row open.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Triple {
    /// Nothing special: an empty literal, then a quote.
    No,
    /// `"""…"""`: spans lines, closed by three quotes, with backslash escapes.
    Three,
    /// C# raw strings: n ≥ 3 quotes, closed by n quotes, without escapes.
    Counted,
}

/// What `#` is, in code.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hash {
    Code,
    /// A line comment.
    Comment,
    /// A line comment, except `#[`, which opens an attribute (PHP 8).
    CommentUnlessBracket,
}

/// One language's comment and literal syntax.
struct Syntax {
    /// `//` line comments and `/* */` block comments.
    slash_comments: bool,
    /// Block comments nest: `/* /* */ */` is one comment.
    nested: bool,
    hash: Hash,
    /// What `"`, `'` and `` ` `` open.
    dq: Quote,
    sq: Quote,
    bt: Quote,
    /// What `"""` and `'''` open.
    dq3: Triple,
    sq3: Triple,
    /// Rust raw strings: `r"…"`, `r#"…"#` (any number of `#`), `br"…"`, `cr"…"`.
    rust_raw: bool,
    /// C# verbatim strings `@"…"`, `$@"…"`, `@$"…"`, where `""` is a quote.
    verbatim: bool,
    /// C and C++: raw strings `R"delim(…)delim"` and digit separators `1'000'000`.
    cpp: bool,
    /// Swift raw strings `#"…"#` and `#"""…"""#`.
    hash_raw: bool,
    /// Character literals `?a`, `?\n` (Ruby, Elixir).
    query_char: bool,
    /// Ruby: `=begin`/`=end` comments, `%q(…)`-style literals, `$'`-style globals and
    /// `<<~ID` heredocs.
    ruby: bool,
    /// PHP `<<<ID` heredocs and nowdocs.
    php_heredoc: bool,
    /// Elixir sigils `~s(…)`, `~r/…/`, `~S"""…"""`.
    sigils: bool,
    /// JavaScript regular expression literals `/…/flags`, told from division by what precedes.
    regex: bool,
}

const BASE: Syntax = Syntax {
    slash_comments: false,
    nested: false,
    hash: Hash::Code,
    dq: Quote::Code,
    sq: Quote::Code,
    bt: Quote::Code,
    dq3: Triple::No,
    sq3: Triple::No,
    rust_raw: false,
    verbatim: false,
    cpp: false,
    hash_raw: false,
    query_char: false,
    ruby: false,
    php_heredoc: false,
    sigils: false,
    regex: false,
};

static PYTHON: Syntax = Syntax {
    hash: Hash::Comment,
    dq: Quote::Line,
    sq: Quote::Line,
    dq3: Triple::Three,
    sq3: Triple::Three,
    ..BASE
};

static JAVASCRIPT: Syntax = Syntax {
    slash_comments: true,
    dq: Quote::Line,
    sq: Quote::Line,
    bt: Quote::Multi,
    regex: true,
    ..BASE
};

static GO: Syntax = Syntax {
    slash_comments: true,
    dq: Quote::Line,
    sq: Quote::Line,
    bt: Quote::Raw,
    ..BASE
};

static RUST: Syntax = Syntax {
    slash_comments: true,
    nested: true,
    dq: Quote::Multi,
    sq: Quote::RustChar,
    rust_raw: true,
    ..BASE
};

/// Java, Kotlin, Groovy and Scala. Block comments are read as not nesting (as in Java): a nested
/// Kotlin comment then leaves its tail visible as code, which can only over-report, whereas
/// nesting in Java would let `/* /* */ @Disabled` hide real code.
static JAVA: Syntax = Syntax {
    slash_comments: true,
    dq: Quote::Line,
    sq: Quote::Line,
    dq3: Triple::Three,
    sq3: Triple::Three,
    ..BASE
};

static CSHARP: Syntax = Syntax {
    slash_comments: true,
    dq: Quote::Line,
    sq: Quote::Line,
    dq3: Triple::Counted,
    verbatim: true,
    ..BASE
};

static RUBY: Syntax = Syntax {
    hash: Hash::Comment,
    dq: Quote::Multi,
    sq: Quote::Multi,
    bt: Quote::Multi,
    query_char: true,
    ruby: true,
    ..BASE
};

static PHP: Syntax = Syntax {
    slash_comments: true,
    hash: Hash::CommentUnlessBracket,
    dq: Quote::Multi,
    sq: Quote::Multi,
    bt: Quote::Multi,
    php_heredoc: true,
    ..BASE
};

static CPP: Syntax = Syntax {
    slash_comments: true,
    dq: Quote::Line,
    sq: Quote::Line,
    cpp: true,
    ..BASE
};

static SWIFT: Syntax = Syntax {
    slash_comments: true,
    nested: true,
    dq: Quote::Line,
    dq3: Triple::Three,
    hash_raw: true,
    ..BASE
};

static ELIXIR: Syntax = Syntax {
    hash: Hash::Comment,
    dq: Quote::Multi,
    sq: Quote::Multi,
    dq3: Triple::Three,
    sq3: Triple::Three,
    query_char: true,
    sigils: true,
    ..BASE
};

fn syntax(lang: Language) -> &'static Syntax {
    match lang {
        Language::Python => &PYTHON,
        Language::JavaScript => &JAVASCRIPT,
        Language::Go => &GO,
        Language::Rust => &RUST,
        Language::Java => &JAVA,
        Language::CSharp => &CSHARP,
        Language::Ruby => &RUBY,
        Language::Php => &PHP,
        Language::Cpp => &CPP,
        Language::Swift => &SWIFT,
        Language::Elixir => &ELIXIR,
    }
}

/// How the literal being scanned treats a backslash or a doubled closing quote.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Escape {
    None,
    /// `\` escapes the next byte.
    Backslash,
    /// `""` is a quote (C# verbatim strings).
    Doubled,
}

/// How a literal ends, once opened.
#[derive(Clone, Copy)]
struct Lit<'a> {
    /// The closing byte.
    close: u8,
    /// How many closing bytes in a row end it (3 for `"""`).
    n: usize,
    /// How many `#` must follow them (Rust and Swift raw strings).
    hashes: usize,
    /// An opening bracket that nests inside the literal (`%q(a(b)c)`), or 0.
    open: u8,
    esc: Escape,
    /// Whether it spans lines; if not, an unescaped newline ends it (unterminated).
    multiline: bool,
    /// C++ raw strings end at `)`, this delimiter, `"`.
    cpp_delim: Option<&'a [u8]>,
}

impl Lit<'_> {
    fn new(close: u8, esc: Escape, multiline: bool) -> Self {
        Lit {
            close,
            n: 1,
            hashes: 0,
            open: 0,
            esc,
            multiline,
            cpp_delim: None,
        }
    }
}

/// The longest heredoc identifier taken as one (longer ones are read as code).
const MAX_HEREDOC_ID: usize = 64;

/// The longest C++ raw string delimiter (the standard's limit).
const MAX_CPP_DELIM: usize = 16;

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c)
}

/// The length of the UTF-8 sequence a byte leads (1 for ASCII and for anything invalid).
fn utf8_width(b: u8) -> usize {
    match b {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    }
}

struct Scanner<'a> {
    syn: &'static Syntax,
    src: &'a [u8],
    out: Vec<u8>,
    /// Whether comments are blanked.
    comments: bool,
    /// Whether literals' contents are blanked.
    strings: bool,
    /// Where literals' contents were blanked, when asked for.
    literals: Option<Vec<(usize, usize)>>,
}

impl<'a> Scanner<'a> {
    /// The byte at `i`, or 0 past the end (callers only compare it with non-zero bytes).
    fn at(&self, i: usize) -> u8 {
        self.src.get(i).copied().unwrap_or(0)
    }

    /// Blanks `from..to` in the output, keeping newlines.
    fn blank(&mut self, from: usize, to: usize) {
        let to = to.min(self.out.len());
        let from = from.min(to);
        for b in &mut self.out[from..to] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }

    /// Blanks the contents of a literal, unless only comments are masked.
    fn blank_literal(&mut self, from: usize, to: usize) {
        if self.strings {
            self.blank(from, to);
            if let Some(l) = &mut self.literals {
                l.push((from, to));
            }
        }
    }

    /// Blanks a comment, unless only literals are masked.
    fn blank_comment(&mut self, from: usize, to: usize) {
        if self.comments {
            self.blank(from, to);
        }
    }

    /// The index of the next newline at or after `from`, or the end.
    fn line_end(&self, from: usize) -> usize {
        let from = from.min(self.src.len());
        self.src[from..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(self.src.len(), |p| from + p)
    }

    /// How many `b` bytes in a row start at `i`.
    fn run_of(&self, i: usize, b: u8) -> usize {
        self.src
            .get(i..)
            .map_or(0, |s| s.iter().take_while(|&&c| c == b).count())
    }

    /// Like [`Self::run_of`], counting at most `max`.
    fn run_upto(&self, i: usize, b: u8, max: usize) -> usize {
        self.src
            .get(i..)
            .map_or(0, |s| s.iter().take(max).take_while(|&&c| c == b).count())
    }

    fn run(&mut self) {
        let src = self.src;
        let syn = self.syn;
        let mut i = 0;
        // A heredoc opened on the current line: its body starts at the next newline.
        let mut heredoc: Option<&'a [u8]> = None;
        // JavaScript: the last token that is code (not white space, not a comment), which says
        // whether a `/` starts a regex literal; and the end of a line on which a `/` was already
        // tried as one and found unterminated (the scan stays linear).
        let mut last: Option<(usize, usize)> = None;
        let mut no_regex_before = 0;
        while i < src.len() {
            let b = src[i];
            let next = self.at(i + 1);
            let start = i;
            let comment = b == b'/' && syn.slash_comments && matches!(next, b'/' | b'*');
            i = match b {
                b'\n' => match heredoc.take() {
                    Some(id) => self.heredoc_body(i + 1, id),
                    None => i + 1,
                },
                b'/' if syn.slash_comments && next == b'/' => self.line_comment(i),
                b'/' if syn.slash_comments && next == b'*' => self.block_comment(i),
                b'/' if syn.regex && i >= no_regex_before && self.regex_may_start(last) => {
                    match self.regex(i) {
                        Some(end) => end,
                        None => {
                            no_regex_before = self.line_end(i);
                            i + 1
                        }
                    }
                }
                b'#' => self.hash(i),
                b'"' | b'\'' | b'`' => self.quote(i),
                b'=' if syn.ruby && (i == 0 || src[i - 1] == b'\n') => self.begin_end(i),
                b'@' if syn.verbatim => self.verbatim(i),
                b'?' if syn.query_char => self.query_char(i),
                b'$' if syn.ruby && matches!(next, b'\'' | b'"' | b'`') => i + 2,
                b'%' if syn.ruby => self.percent(i),
                b'~' if syn.sigils => self.sigil(i),
                b'<' if syn.ruby || syn.php_heredoc => {
                    let (end, id) = self.heredoc_open(i);
                    if heredoc.is_none() {
                        heredoc = id;
                    }
                    end
                }
                _ if is_ident(b) => self.ident(i),
                _ => i + 1,
            };
            if syn.regex && !comment && !is_space(b) {
                last = Some((start, i));
            }
        }
    }

    /// Whether a `/` after the token `last` starts a regex literal rather than dividing: at the
    /// start, after an operator or an opening bracket, after `=>`, or after a keyword that
    /// takes an expression. After an operand (a name, a number, a literal, `)` or `]`) it is
    /// division. `<` and a `>` that is not part of `=>` are left out: in JSX they open and
    /// close tags, and `</p>` holds no regex.
    fn regex_may_start(&self, last: Option<(usize, usize)>) -> bool {
        let Some((from, to)) = last else {
            return true;
        };
        let token = &self.src[from..to];
        match token {
            [b'>'] => from > 0 && self.src[from - 1] == b'=',
            [b] if !is_ident(*b) => matches!(
                b,
                b'(' | b','
                    | b'='
                    | b':'
                    | b'['
                    | b'!'
                    | b'&'
                    | b'|'
                    | b'?'
                    | b'{'
                    | b'}'
                    | b';'
                    | b'+'
                    | b'-'
                    | b'*'
                    | b'%'
                    | b'~'
                    | b'^'
            ),
            _ if is_ident(token[0]) => matches!(
                token,
                b"return"
                    | b"typeof"
                    | b"instanceof"
                    | b"in"
                    | b"of"
                    | b"new"
                    | b"delete"
                    | b"void"
                    | b"throw"
                    | b"case"
                    | b"do"
                    | b"else"
                    | b"yield"
                    | b"await"
            ),
            _ => false,
        }
    }

    /// A regex literal whose opening `/` is at `i`: its contents blanked like a string's, up to
    /// the `/` that closes it (not one escaped, nor one inside a `[…]` class). Returns where
    /// code resumes (its flags are code), or `None` if the line ends first: then the `/` was
    /// division after all, and only that line was read.
    fn regex(&mut self, i: usize) -> Option<usize> {
        let src = self.src;
        let mut class = false;
        let mut j = i + 1;
        while j < src.len() {
            match src[j] {
                b'\n' | b'\r' => return None,
                b'\\' => {
                    if matches!(self.at(j + 1), b'\n' | b'\r') {
                        return None;
                    }
                    j += 2;
                    continue;
                }
                b'[' => class = true,
                b']' => class = false,
                b'/' if !class => {
                    self.blank_literal(i + 1, j);
                    return Some(j + 1);
                }
                _ => {}
            }
            j += 1;
        }
        None
    }

    /// A line comment starting at `i`: masked up to (not including) the newline.
    fn line_comment(&mut self, i: usize) -> usize {
        let end = self.line_end(i);
        self.blank_comment(i, end);
        end
    }

    /// A `/* */` comment starting at `i`, nesting if the language nests them.
    fn block_comment(&mut self, i: usize) -> usize {
        let src = self.src;
        let nested = self.syn.nested;
        let mut depth = 1usize;
        let mut j = i + 2;
        while j < src.len() {
            if src[j] == b'*' && self.at(j + 1) == b'/' {
                j += 2;
                depth -= 1;
                if depth == 0 {
                    self.blank_comment(i, j);
                    return j;
                }
            } else if nested && src[j] == b'/' && self.at(j + 1) == b'*' {
                j += 2;
                depth += 1;
            } else {
                j += 1;
            }
        }
        self.blank_comment(i, src.len());
        src.len()
    }

    fn hash(&mut self, i: usize) -> usize {
        match self.syn.hash {
            Hash::Comment => self.line_comment(i),
            Hash::CommentUnlessBracket if self.at(i + 1) == b'[' => i + 1,
            Hash::CommentUnlessBracket => self.line_comment(i),
            Hash::Code if self.syn.hash_raw => self.hash_raw(i),
            Hash::Code => i + 1,
        }
    }

    /// Swift raw strings: `#"…"#`, `##"…"##`, `#"""…"""#`.
    fn hash_raw(&mut self, i: usize) -> usize {
        let hashes = self.run_of(i, b'#');
        let q = i + hashes;
        if self.at(q) != b'"' {
            return q;
        }
        let triple = self.run_of(q, b'"') >= 3;
        let n = if triple { 3 } else { 1 };
        let lit = Lit {
            n,
            hashes,
            ..Lit::new(b'"', Escape::None, triple)
        };
        self.literal(q + n, lit)
    }

    /// A quote byte met in code.
    fn quote(&mut self, i: usize) -> usize {
        let syn = self.syn;
        let q = self.src[i];
        let (kind, triple) = match q {
            b'"' => (syn.dq, syn.dq3),
            b'\'' => (syn.sq, syn.sq3),
            _ => (syn.bt, Triple::No),
        };
        if triple != Triple::No {
            let run = self.run_of(i, q);
            if run >= 3 {
                let (n, esc) = match triple {
                    Triple::Counted => (run, Escape::None),
                    _ => (3, Escape::Backslash),
                };
                let lit = Lit {
                    n,
                    ..Lit::new(q, esc, true)
                };
                return self.literal(i + n, lit);
            }
        }
        let (esc, multiline) = match kind {
            Quote::Code => return i + 1,
            Quote::RustChar => return self.rust_char(i),
            Quote::Line => (Escape::Backslash, false),
            Quote::Multi => (Escape::Backslash, true),
            Quote::Raw => (Escape::None, true),
        };
        self.literal(i + 1, Lit::new(q, esc, multiline))
    }

    /// Rust `'`: a char literal if it is `'\…'` or `'X'` with X one (UTF-8) character; otherwise
    /// a lifetime or a label, which are code.
    fn rust_char(&mut self, i: usize) -> usize {
        let c = self.at(i + 1);
        if c == b'\\' {
            return self.literal(i + 1, Lit::new(b'\'', Escape::Backslash, false));
        }
        if i + 1 >= self.src.len() {
            return i + 1;
        }
        let close = i + 1 + utf8_width(c);
        if self.at(close) == b'\'' {
            self.blank_literal(i + 1, close);
            close + 1
        } else {
            i + 1
        }
    }

    /// The contents of a literal, from `start` (just after the opening delimiter). Returns where
    /// code resumes: after the closing delimiter, at the newline that ends an unterminated
    /// single-line literal, or at the end.
    fn literal(&mut self, start: usize, lit: Lit<'_>) -> usize {
        let src = self.src;
        let mut depth = 0usize;
        let mut j = start;
        while j < src.len() {
            let b = src[j];
            if b == b'\n' && !lit.multiline {
                self.blank_literal(start, j);
                return j;
            }
            if b == b'\\' && lit.esc == Escape::Backslash {
                j += 2;
                if self.at(j - 1) == b'\r' && self.at(j) == b'\n' {
                    j += 1;
                }
                continue;
            }
            if let Some(delim) = lit.cpp_delim {
                if b == b')'
                    && src[j + 1..].starts_with(delim)
                    && self.at(j + 1 + delim.len()) == b'"'
                {
                    self.blank_literal(start, j);
                    return j + delim.len() + 2;
                }
                j += 1;
                continue;
            }
            if lit.open != 0 && b == lit.open {
                depth += 1;
                j += 1;
                continue;
            }
            if b != lit.close {
                j += 1;
                continue;
            }
            if depth > 0 {
                depth -= 1;
                j += 1;
                continue;
            }
            if lit.esc == Escape::Doubled {
                // Pairs are escaped quotes; an odd one out closes.
                let run = self.run_of(j, b);
                if run.is_multiple_of(2) {
                    j += run;
                    continue;
                }
                self.blank_literal(start, j + run - 1);
                return j + run;
            }
            let run = if lit.n > 1 { self.run_of(j, b) } else { 1 };
            if run < lit.n {
                j += run;
                continue;
            }
            let hashes = self.run_upto(j + run, b'#', lit.hashes);
            if hashes < lit.hashes {
                j += run + hashes;
                continue;
            }
            // Extra quotes before the closing ones belong to the contents (as in Kotlin).
            self.blank_literal(start, j + run - lit.n);
            return j + run + hashes;
        }
        self.blank_literal(start, src.len());
        src.len()
    }

    /// An identifier, keyword or number starting at `i`, with the string prefixes that matter.
    fn ident(&mut self, i: usize) -> usize {
        let src = self.src;
        let syn = self.syn;
        let mut j = i;
        while j < src.len() && is_ident(src[j]) {
            j += 1;
        }
        if syn.cpp && src[i].is_ascii_digit() {
            // Digit separators: 1'000'000, 0xFF'FF.
            while self.at(j) == b'\'' && is_ident(self.at(j + 1)) {
                j += 1;
                while j < src.len() && is_ident(src[j]) {
                    j += 1;
                }
            }
        }
        let word = &src[i..j];
        if syn.rust_raw && matches!(word, b"r" | b"br" | b"cr") {
            let hashes = self.run_of(j, b'#');
            if self.at(j + hashes) == b'"' {
                let lit = Lit {
                    hashes,
                    ..Lit::new(b'"', Escape::None, true)
                };
                return self.literal(j + hashes + 1, lit);
            }
        }
        if syn.cpp
            && matches!(word, b"R" | b"u8R" | b"uR" | b"UR" | b"LR")
            && self.at(j) == b'"'
            && let Some(end) = self.cpp_raw(j)
        {
            return end;
        }
        j
    }

    /// C++ raw string whose `"` is at `q`: `R"delim(…)delim"`. `None` if there is no valid
    /// delimiter (then it is an ordinary string).
    fn cpp_raw(&mut self, q: usize) -> Option<usize> {
        let src = self.src;
        let mut k = q + 1;
        loop {
            match *src.get(k)? {
                b'(' => break,
                b' ' | b')' | b'\\' | b'\t' | b'\n' | b'\r' | b'"' | 0x0b | 0x0c => return None,
                _ if k - q > MAX_CPP_DELIM => return None,
                _ => k += 1,
            }
        }
        let lit = Lit {
            cpp_delim: Some(&src[q + 1..k]),
            ..Lit::new(b')', Escape::None, true)
        };
        Some(self.literal(k + 1, lit))
    }

    /// C# `@"…"` and `@$"…"` (`$@"…"` reaches here at its `@`).
    fn verbatim(&mut self, i: usize) -> usize {
        let q = match (self.at(i + 1), self.at(i + 2)) {
            (b'"', _) => i + 1,
            (b'$', b'"') => i + 2,
            _ => return i + 1,
        };
        self.literal(q + 1, Lit::new(b'"', Escape::Doubled, true))
    }

    /// Ruby and Elixir character literals `?a`, `?\n`, `?"`; a `?` after an identifier or before
    /// whitespace is code, and so is `?X` followed by an identifier character (a ternary).
    fn query_char(&mut self, i: usize) -> usize {
        let c = self.at(i + 1);
        if (i > 0 && is_ident(self.src[i - 1])) || i + 1 >= self.src.len() || is_space(c) {
            return i + 1;
        }
        let end = if c == b'\\' {
            i + 3
        } else {
            i + 1 + utf8_width(c)
        };
        if end > self.src.len() || is_ident(self.at(end)) {
            return i + 1;
        }
        self.blank_literal(i + 1, end);
        end
    }

    /// Ruby percent literals: `%q(…)`, `%w[…]`, `%r{…}`, `%(…)`. A `%` after an operand is the
    /// modulo operator.
    fn percent(&mut self, i: usize) -> usize {
        if i > 0 && (is_ident(self.src[i - 1]) || matches!(self.src[i - 1], b')' | b']' | b'}')) {
            return i + 1;
        }
        let mut d = i + 1;
        match self.at(d) {
            b'q' | b'Q' | b'w' | b'W' | b'i' | b'I' | b'r' | b's' | b'x' => d += 1,
            b'(' | b'[' | b'{' | b'<' => {}
            _ => return i + 1,
        }
        let delim = self.at(d);
        let (open, close) = match delim {
            b'(' => (b'(', b')'),
            b'[' => (b'[', b']'),
            b'{' => (b'{', b'}'),
            b'<' => (b'<', b'>'),
            _ if delim.is_ascii_punctuation() => (0, delim),
            _ => return i + 1,
        };
        let lit = Lit {
            open,
            ..Lit::new(close, Escape::Backslash, true)
        };
        self.literal(d + 1, lit)
    }

    /// Elixir sigils: `~r/…/`, `~s(…)`, `~S"""…"""`, `~HTML|…|`.
    fn sigil(&mut self, i: usize) -> usize {
        let mut d = i + 1;
        let c = self.at(d);
        if c.is_ascii_lowercase() {
            d += 1;
        } else if c.is_ascii_uppercase() {
            while self.at(d).is_ascii_uppercase() {
                d += 1;
            }
        } else {
            return i + 1;
        }
        let delim = self.at(d);
        let close = match delim {
            b'"' | b'\'' if self.run_of(d, delim) >= 3 => {
                let lit = Lit {
                    n: 3,
                    ..Lit::new(delim, Escape::Backslash, true)
                };
                return self.literal(d + 3, lit);
            }
            b'"' | b'\'' | b'/' | b'|' => delim,
            b'(' => b')',
            b'[' => b']',
            b'{' => b'}',
            b'<' => b'>',
            _ => return d,
        };
        self.literal(d + 1, Lit::new(close, Escape::Backslash, true))
    }

    /// Ruby `=begin` … `=end`, both at line starts (checked by the caller for `=begin`).
    fn begin_end(&mut self, i: usize) -> usize {
        let src = self.src;
        let starts = |p: usize, word: &[u8]| {
            src[p..].starts_with(word)
                && (p + word.len() == src.len() || is_space(src[p + word.len()]))
        };
        if !starts(i, b"=begin") {
            return i + 1;
        }
        let mut line = self.line_end(i) + 1;
        while line < src.len() {
            let end = self.line_end(line);
            if starts(line, b"=end") {
                self.blank_comment(i, end);
                return end;
            }
            line = end + 1;
        }
        self.blank_comment(i, src.len());
        src.len()
    }

    /// A heredoc identifier at `j`: its bytes and where it ends.
    fn heredoc_id(&self, j: usize) -> Option<(&'a [u8], usize)> {
        let src = self.src;
        let first = *src.get(j)?;
        if !is_ident(first) || first.is_ascii_digit() {
            return None;
        }
        let mut e = j;
        while e < src.len() && is_ident(src[e]) {
            e += 1;
            if e - j > MAX_HEREDOC_ID {
                return None;
            }
        }
        Some((&src[j..e], e))
    }

    /// A `<` in Ruby or PHP code: maybe a heredoc opener (`<<~ID`, `<<-'ID'`, `<<ID`; PHP
    /// `<<<ID`, `<<<"ID"`, `<<<'ID'`). Returns where code resumes and the identifier if it is one.
    fn heredoc_open(&self, i: usize) -> (usize, Option<&'a [u8]>) {
        let not = (i + 1, None);
        if self.at(i + 1) != b'<' {
            return not;
        }
        let mut j = i + 2;
        if self.syn.php_heredoc {
            if self.at(j) != b'<' {
                return not;
            }
            j += 1;
            while matches!(self.at(j), b' ' | b'\t') {
                j += 1;
            }
        } else {
            if matches!(self.at(j), b'~' | b'-') {
                j += 1;
            } else {
                // Plain `<<` only before an upper-case identifier (quoted or not): `a << b`,
                // `a <<b` and `a <<"b"` are appends or shifts.
                let first = match self.at(j) {
                    b'\'' | b'"' | b'`' => self.at(j + 1),
                    c => c,
                };
                if !first.is_ascii_uppercase() {
                    return not;
                }
            }
        }
        let quote = self.at(j);
        let quoted = matches!(quote, b'\'' | b'"' | b'`');
        if quoted {
            j += 1;
        }
        let Some((id, mut end)) = self.heredoc_id(j) else {
            return not;
        };
        if quoted {
            if self.at(end) != quote {
                return not;
            }
            end += 1;
        }
        (end, Some(id))
    }

    /// A heredoc body from `start` (a line start): masked up to the line that holds only the
    /// identifier (after indentation), which is code.
    fn heredoc_body(&mut self, start: usize, id: &[u8]) -> usize {
        let src = self.src;
        let mut line = start;
        while line < src.len() {
            let end = self.line_end(line);
            let mut p = line;
            while p < end && matches!(src[p], b' ' | b'\t') {
                p += 1;
            }
            if src[p..end].starts_with(id) && !is_ident(self.at(p + id.len())) {
                return line;
            }
            self.blank_literal(line, end);
            line = end + 1;
        }
        src.len()
    }
}

#[cfg(test)]
mod tests;
