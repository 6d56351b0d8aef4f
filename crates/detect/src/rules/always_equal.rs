//! `always-equal`: an equality override that answers a constant, so every comparison with the
//! value passes (or, for `!=`, never sees a difference).
//!
//! Flags, in any file: Python `__eq__` whose body only returns `True` (or `not False`,
//! `bool(1)`, a value compared with itself) and `__ne__` that only returns `False` (a `def`, a
//! `lambda`, or a lambda patched onto the class: `Money.__eq__ = lambda self, other: True`); Java, Kotlin, Groovy and Scala `equals` returning
//! `true`; C# `Equals` and `operator ==` returning `true` (`operator !=` returning `false`); Rust
//! `impl PartialEq … { fn eq(…) -> bool { true } }` (and `ne` with `false`); Go `Equal`/`Equals`
//! methods returning `true`; Ruby `==`, `eql?` and `equal?` answering `true`; JS/TS `equals` and
//! `isEqual` methods returning `true`, also set on a prototype. The body is judged on the masked text, its extent found
//! by indentation (Python), by `end` (Ruby) or by matching braces.
//!
//! Left alone: a real comparison, `return NotImplemented`, `return super().__eq__(other)`,
//! `return isinstance(other, X)`, `#[derive(PartialEq)]`, a body that does anything but answer
//! the constant; wildcard matchers named as such (`ANY`, `_Anything`, `Whatever`), which exist to
//! equal everything; a Rust unit struct or a Go `struct{}`, whose values are all equal.

use crate::rules::prelude::*;
use std::sync::LazyLock;

use regex::bytes::Regex;

use super::code::{self, re};
use crate::flag::Rule;
use crate::lang::Language;
use crate::scan::{Occurrence, Text};

/// True when the rule reads files of `lang` (production code and tests alike).
pub(crate) fn applies(lang: Language) -> bool {
    matches!(
        lang,
        Language::Python
            | Language::Java
            | Language::CSharp
            | Language::Rust
            | Language::Go
            | Language::Ruby
            | Language::JavaScript
    )
}

/// False when `raw` cannot hold an equality override of `lang`.
pub(crate) fn might_match(lang: Language, raw: &[u8]) -> bool {
    static PYTHON: LazyLock<super::LiteralSet> =
        LazyLock::new(|| super::literal_set(&["__eq__", "__ne__"]));
    // The declarations as formatters write them (one space), not the calls (`.equals(`,
    // `assert.Equal(`, `#[derive(PartialEq)]`) most files are full of; the patterns below
    // require the same spelling.
    static EQUALS: LazyLock<super::LiteralSet> =
        LazyLock::new(|| super::literal_set(&["boolean equals", "fun equals", "def equals"]));
    static CSHARP: LazyLock<super::LiteralSet> =
        LazyLock::new(|| super::literal_set(&["bool Equals", "IEquatable", "operator"]));
    static RUST: LazyLock<super::LiteralSet> =
        LazyLock::new(|| super::literal_set(&["PartialEq for", "PartialEq<"]));
    static GO: LazyLock<super::LiteralSet> =
        LazyLock::new(|| super::literal_set(&[") Equal(", ") Equals("]));
    static RUBY: LazyLock<super::LiteralSet> = LazyLock::new(|| {
        super::literal_set(&["def ==", "def !=", "eql?", "equal?", "def self.=="])
    });
    static JS: LazyLock<super::LiteralSet> =
        LazyLock::new(|| super::literal_set(&["equals", "isEqual"]));
    match lang {
        Language::Python => PYTHON.is_match(raw),
        Language::Java => EQUALS.is_match(raw),
        Language::CSharp => CSHARP.is_match(raw),
        Language::Rust => RUST.is_match(raw),
        Language::Go => GO.is_match(raw),
        Language::Ruby => RUBY.is_match(raw),
        Language::JavaScript => JS.is_match(raw),
        _ => false,
    }
}

pub(crate) fn scan(lang: Language, text: &Text<'_>, out: &mut Vec<Occurrence>) {
    match lang {
        Language::Python => python(text, out),
        Language::Java => java(text, out),
        Language::CSharp => csharp(text, out),
        Language::Rust => rust(text, out),
        Language::Go => go(text, out),
        Language::Ruby => ruby(text, out),
        Language::JavaScript => javascript(text, out),
        _ => {}
    }
}

/// Names of wildcards, which are meant to equal everything: `ANY`, `_Anything`, `AnyValue`.
fn is_wildcard(name: &[u8]) -> bool {
    const WORDS: &[&str] = &[
        "any",
        "anything",
        "everything",
        "wildcard",
        "whatever",
        "dontcare",
    ];
    let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
    code::name_parts(name)
        .iter()
        .any(|p| WORDS.contains(&p.as_str()))
        // `DontCare`, `MatchAnything`: the long words however the name joins them.
        || WORDS.iter().any(|w| w.len() >= 8 && lower.contains(w))
}

/// One override found: where it is defined (`def_at`), where its body ends, what it is called
/// and on which type, and the constant it answers.
struct Found<'t> {
    def_at: usize,
    end: usize,
    method: &'t str,
    class: Option<&'t [u8]>,
    answer: &'t str,
}

fn push(text: &Text<'_>, f: Found<'_>, out: &mut Vec<Occurrence>) {
    if f.class.is_some_and(is_wildcard) {
        return;
    }
    let subject = match f.class {
        Some(c) => format!("`{}` of `{}`", f.method, String::from_utf8_lossy(c)),
        None => format!("`{}`", f.method),
    };
    let consequence = if f.answer.eq_ignore_ascii_case("true") {
        "every comparison in the tests passes"
    } else {
        "no two values ever differ"
    };
    let message = format!("{subject} always answers {}: {consequence}", f.answer);
    let mut o = text.occurrence(Rule::AlwaysEqual, "eq-constant", f.def_at, f.end, message);
    o.key = text.key(o.first, o.last);
    out.push(o);
}

/// A brace body (masked, `{` at `open`) that only answers `answer`: `{ return true; }`, or
/// `{ true }` where the last expression is the value (Rust, Groovy).
fn brace_body_answers(s: &[u8], open: usize, answer: &str) -> Option<usize> {
    let close = code::closing(s, open)?;
    let body = code::squeeze(&s[open + 1..close]);
    let body = body.strip_suffix(b";").unwrap_or(&body);
    let negated = if answer == "true" { "!false" } else { "!true" };
    let answers = body == answer.as_bytes()
        || body.strip_prefix(b"return").is_some_and(|v| {
            v == answer.as_bytes()
                || v == format!("({answer})").as_bytes()
                || v == negated.as_bytes()
        });
    answers.then_some(close)
}

/// True when the expression `value` ending at `end` is the whole rest of its line (`= true`, not
/// `= true && other.ok`).
fn ends_line(s: &[u8], end: usize) -> bool {
    s[end..]
        .iter()
        .take_while(|&&b| b != b'\n')
        .all(|&b| b.is_ascii_whitespace() || b == b';' || b == b'}')
}

/// The last `class`, `struct`, `record` or `object` name declared before `offset`.
fn class_before(s: &[u8], offset: usize) -> Option<&[u8]> {
    static CLASS: LazyLock<Regex> =
        LazyLock::new(|| re(r"\b(?:class|record|object|struct)\s+([A-Za-z_$][\w$]*)"));
    CLASS
        .captures_iter(&s[..offset])
        .last()
        .and_then(|c| c.get(1))
        .map(|m| m.as_bytes())
}

// ---- Python ----------------------------------------------------------------------------------

static PY_DEF: LazyLock<Regex> =
    LazyLock::new(|| re(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(__eq__|__ne__)[ \t]*\("));
/// `__eq__ = lambda self, other: True` in a class, or `Money.__eq__ = lambda …` patched onto one
/// after it (in the module, or in a `conftest.py`).
static PY_LAMBDA: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^[ \t]*(?:([A-Za-z_][\w.]*)\.)?(__eq__|__ne__)[ \t]*=[ \t]*lambda\b[^:\n]*:[ \t]*(True|False|not[ \t]+False|not[ \t]+True|bool\([ \t]*[01][ \t]*\))[ \t\r]*$",
    )
});

/// A Python expression that is always true (`True`, `not False`, `bool(1)`, `1 == 1`,
/// `self.amount == self.amount`), squeezed; for `__ne__`, one that is always false.
fn py_constant(expr: &[u8], answer: &str) -> bool {
    let e = expr
        .strip_prefix(b"(")
        .and_then(|e| e.strip_suffix(b")"))
        .unwrap_or(expr);
    let truthy: &[&[u8]] = &[
        b"True",
        b"notFalse",
        b"not(False)",
        b"bool(1)",
        b"bool(True)",
        b"1==1",
    ];
    let falsy: &[&[u8]] = &[
        b"False",
        b"notTrue",
        b"not(True)",
        b"bool(0)",
        b"bool(False)",
        b"1!=1",
    ];
    let (consts, op): (&[&[u8]], &[u8]) = if answer == "True" {
        (truthy, b"==")
    } else {
        (falsy, b"!=")
    };
    if consts.contains(&e) {
        return true;
    }
    // A value compared with itself: `self.amount == self.amount`.
    let Some(at) = e.windows(2).position(|w| w == op) else {
        return false;
    };
    let (l, r) = (&e[..at], &e[at + 2..]);
    !l.is_empty() && l == r && !l.contains(&b'(') && !r.contains(&b'=')
}

fn python(text: &Text<'_>, out: &mut Vec<Occurrence>) {
    let s = &text.masked;
    let class_of = |line: u32| {
        code::py_enclosing(text, line)
            .into_iter()
            .find(|d| d.class)
            .map(|d| d.name)
    };
    for caps in PY_DEF.captures_iter(s) {
        let (Some(whole), Some(name)) = (caps.get(0), caps.get(1)) else {
            continue;
        };
        let method = if name.as_bytes() == b"__eq__" {
            "__eq__"
        } else {
            "__ne__"
        };
        let answer = if method == "__eq__" { "True" } else { "False" };
        let def_line = text.line_of(whole.start());
        let Some((colon_line, after_colon)) = code::py_header_end(text, def_line) else {
            continue;
        };
        let level = code::indent(text.masked_line(def_line));
        let line_end = text.line_start(colon_line) + text.masked_line(colon_line).len();
        let inline = &s[after_colon.min(line_end)..line_end];
        let (statements, end_line): (Vec<Vec<u8>>, u32) = if !code::is_blank(inline) {
            let parts = inline
                .split(|&b| b == b';')
                .map(code::squeeze)
                .filter(|p| !p.is_empty())
                .collect();
            (parts, colon_line)
        } else {
            let Some((first, last)) = code::py_block(text, colon_line, level) else {
                continue;
            };
            let parts = code::py_statements(text, first, last)
                .into_iter()
                .map(|(a, b)| code::squeezed_lines(text, a, b))
                .collect();
            (parts, last)
        };
        let [statement] = &statements[..] else {
            continue;
        };
        if !statement
            .strip_prefix(b"return")
            .is_some_and(|e| py_constant(e, answer))
        {
            continue;
        }
        let found = Found {
            def_at: whole.start() + code::indent(&s[whole.start()..]),
            end: text
                .line_start(end_line + 1)
                .saturating_sub(1)
                .max(whole.end()),
            method,
            class: class_of(def_line),
            answer,
        };
        push(text, found, out);
    }
    for caps in PY_LAMBDA.captures_iter(s) {
        let (Some(whole), Some(name), Some(value)) = (caps.get(0), caps.get(2), caps.get(3)) else {
            continue;
        };
        let eq = name.as_bytes() == b"__eq__";
        let answer = if eq { "True" } else { "False" };
        if !py_constant(&code::squeeze(value.as_bytes()), answer) {
            continue;
        }
        // Patched onto a class (`Money.__eq__ = …`), or defined in one.
        let class = match caps.get(1) {
            Some(target) => target.as_bytes().rsplit(|&b| b == b'.').next(),
            None => class_of(text.line_of(whole.start())),
        };
        let found = Found {
            def_at: caps.get(1).unwrap_or(name).start(),
            end: whole.end(),
            method: if eq { "__eq__" } else { "__ne__" },
            class,
            answer,
        };
        push(text, found, out);
    }
}

// ---- Java, Kotlin, Groovy, Scala --------------------------------------------------------------

static JAVA_EQ: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\bboolean equals\s*\(\s*(?:final\s+)?(?:@[\w.]+\s+)*[\w.]+(?:\s*<[^>]*>)?\??\s+\w+\s*\)\s*(?:throws\s+[\w.,\s]+)?\{",
    )
});
static KOTLIN_EQ: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\b(?:fun|def) equals\s*\(\s*\w+\s*:\s*Any\??\s*\)\s*(?::\s*Boolean\s*)?(?:=\s*true\b|\{)")
});

fn java(text: &Text<'_>, out: &mut Vec<Occurrence>) {
    let s = &text.masked;
    for m in JAVA_EQ.find_iter(s).chain(KOTLIN_EQ.find_iter(s)) {
        let end = if s[m.end() - 1] == b'{' {
            match brace_body_answers(s, m.end() - 1, "true") {
                Some(close) => close + 1,
                None => continue,
            }
        } else if ends_line(s, m.end()) {
            m.end()
        } else {
            continue;
        };
        let def_at = m.start() + memchr_word(&s[m.start()..m.end()], b"equals");
        let found = Found {
            def_at,
            end,
            method: "equals",
            class: class_before(s, m.start()),
            answer: "true",
        };
        push(text, found, out);
    }
}

/// The offset of `word` in `s` (0 when absent): where a message points inside a match.
fn memchr_word(s: &[u8], word: &[u8]) -> usize {
    s.windows(word.len()).position(|w| w == word).unwrap_or(0)
}

// ---- C# --------------------------------------------------------------------------------------

static CS_EQ: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\bbool (?:[\w.]*IEquatable\s*<[^>]*>\s*\.\s*)?Equals\s*\(\s*[\w.<>?]+\s+\w+\s*\)\s*(?:=>\s*(true)\s*;|\{)",
    )
});
static CS_OP: LazyLock<Regex> =
    LazyLock::new(|| re(r"\boperator\s*(==|!=)\s*\([^)]*\)\s*(?:=>\s*(true|false)\s*;|\{)"));

fn csharp(text: &Text<'_>, out: &mut Vec<Occurrence>) {
    let s = &text.masked;
    for caps in CS_EQ.captures_iter(s) {
        let Some(m) = caps.get(0) else { continue };
        let end = if caps.get(1).is_some() {
            m.end()
        } else {
            match brace_body_answers(s, m.end() - 1, "true") {
                Some(close) => close + 1,
                None => continue,
            }
        };
        let found = Found {
            def_at: m.start() + memchr_word(&s[m.start()..m.end()], b"Equals"),
            end,
            method: "Equals",
            class: class_before(s, m.start()),
            answer: "true",
        };
        push(text, found, out);
    }
    for caps in CS_OP.captures_iter(s) {
        let (Some(m), Some(op)) = (caps.get(0), caps.get(1)) else {
            continue;
        };
        let (method, answer) = if op.as_bytes() == b"==" {
            ("operator ==", "true")
        } else {
            ("operator !=", "false")
        };
        let end = match caps.get(2) {
            Some(v) if v.as_bytes() == answer.as_bytes() => m.end(),
            Some(_) => continue,
            None => match brace_body_answers(s, m.end() - 1, answer) {
                Some(close) => close + 1,
                None => continue,
            },
        };
        let found = Found {
            def_at: m.start(),
            end,
            method,
            class: class_before(s, m.start()),
            answer,
        };
        push(text, found, out);
    }
}

// ---- Rust ------------------------------------------------------------------------------------

static RS_IMPL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\bimpl\b(?:\s*<[^{;]*?>)?\s*(?:::\s*)?(?:\w+\s*::\s*)*PartialEq(?: for|<[^{;]*?>\s+for)\s+&?\s*(?:'\w+\s+)?(?:mut\s+)?([\w:]+)[^{;]*\{",
    )
});
static RS_FN: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\bfn\s+(eq|ne)\s*(?:<[^>]*>)?\s*\([^)]*\)\s*->\s*bool\s*(?:where\b[^{]*)?\{")
});

fn rust(text: &Text<'_>, out: &mut Vec<Occurrence>) {
    let s = &text.masked;
    for caps in RS_IMPL.captures_iter(s) {
        let (Some(m), Some(ty)) = (caps.get(0), caps.get(1)) else {
            continue;
        };
        let open = m.end() - 1;
        let Some(close) = code::closing(s, open) else {
            continue;
        };
        let ty = ty.as_bytes();
        let name = ty.rsplit(|&b| b == b':').next().unwrap_or(ty);
        if is_unit_struct(s, name) {
            continue;
        }
        for f in RS_FN.captures_iter(&s[open..close]) {
            let (Some(fm), Some(which)) = (f.get(0), f.get(1)) else {
                continue;
            };
            let (method, answer) = if which.as_bytes() == b"eq" {
                ("PartialEq::eq", "true")
            } else {
                ("PartialEq::ne", "false")
            };
            let Some(body_close) = brace_body_answers(s, open + fm.end() - 1, answer) else {
                continue;
            };
            let found = Found {
                def_at: open + fm.start(),
                end: body_close + 1,
                method,
                class: Some(name),
                answer,
            };
            push(text, found, out);
        }
    }
}

/// A struct declared in the same file without state: `struct Name;`, `struct Name {}`, or fields
/// that are all `PhantomData` (a marker type, which `derive` cannot compare without bounds).
/// Every value of such a type is equal to every other.
fn is_unit_struct(s: &[u8], name: &[u8]) -> bool {
    let pattern = format!(
        r"\bstruct\s+{}\b",
        regex::escape(&String::from_utf8_lossy(name))
    );
    let Ok(decl) = regex::bytes::RegexBuilder::new(&pattern)
        .unicode(false)
        .build()
    else {
        return false;
    };
    decl.find_iter(s).any(|m| {
        let mut i = m.end();
        // Generic parameters, with nested brackets.
        let mut angle = 0usize;
        while i < s.len() {
            match s[i] {
                b'<' => angle += 1,
                b'>' if angle > 0 => angle -= 1,
                b';' | b'(' | b'{' if angle == 0 => break,
                _ => {}
            }
            i += 1;
        }
        match s.get(i) {
            Some(b';') => true,
            Some(b'(' | b'{') => {
                code::closing(s, i).is_some_and(|close| only_phantom_fields(&s[i + 1..close]))
            }
            _ => false,
        }
    })
}

/// True when every field of a struct body is a `PhantomData` (or there is none).
fn only_phantom_fields(body: &[u8]) -> bool {
    let mut depth = 0i32;
    let mut fields = Vec::new();
    let mut start = 0;
    for (i, &b) in body.iter().enumerate() {
        match b {
            b'<' | b'(' | b'[' | b'{' => depth += 1,
            b'>' | b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => {
                fields.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    fields.push(&body[start..]);
    fields.iter().all(|f| {
        let f = code::squeeze(f);
        if f.is_empty() {
            return true;
        }
        let ty = match f.iter().position(|&b| b == b':') {
            // `name: Type`, but not a path's `::`.
            Some(p) if f.get(p + 1) != Some(&b':') => &f[p + 1..],
            _ => &f[..],
        };
        let ty = ty.strip_prefix(b"pub").unwrap_or(ty);
        let last = ty.rsplit(|&b| b == b':').next().unwrap_or(ty);
        ty.windows(11).any(|w| w == b"PhantomData") && last.starts_with(b"PhantomData")
    })
}

// ---- Go --------------------------------------------------------------------------------------

static GO_EQ: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^func\s*\(\s*(?:\w+\s+)?\*?\s*(\w+)(?:\[[^\]]*\])?\) (Equal|Equals)\([^)]*\)\s*bool\s*\{")
});

fn go(text: &Text<'_>, out: &mut Vec<Occurrence>) {
    let s = &text.masked;
    for caps in GO_EQ.captures_iter(s) {
        let (Some(m), Some(ty), Some(method)) = (caps.get(0), caps.get(1), caps.get(2)) else {
            continue;
        };
        let Some(close) = brace_body_answers(s, m.end() - 1, "true") else {
            continue;
        };
        let empty = format!(
            r"\btype\s+{}\s+struct\s*\{{\s*\}}",
            regex::escape(&String::from_utf8_lossy(ty.as_bytes()))
        );
        let stateless = regex::bytes::RegexBuilder::new(&empty)
            .unicode(false)
            .build()
            .is_ok_and(|r| r.is_match(s));
        if stateless {
            continue;
        }
        let found = Found {
            def_at: m.start(),
            end: close + 1,
            method: if method.as_bytes() == b"Equal" {
                "Equal"
            } else {
                "Equals"
            },
            class: Some(ty.as_bytes()),
            answer: "true",
        };
        push(text, found, out);
    }
}

// ---- Ruby ------------------------------------------------------------------------------------

static RB_DEF: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^([ \t]*)def[ \t]+(==|eql\?|equal\?|!=)[ \t]*(?:\([^)\n]*\)|[ \t]+\w+)?")
});
static RB_ONE_LINE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\A[ \t]*(?:=[ \t]*(true|false)[ \t\r]*$|;?[ \t]*(?:return[ \t]+)?(true|false)[ \t]*;?[ \t]*end\b)",
    )
});

fn ruby(text: &Text<'_>, out: &mut Vec<Occurrence>) {
    static CLASS: LazyLock<Regex> = LazyLock::new(|| re(r"^[ \t]*class[ \t]+([\w:]+)"));
    let s = &text.masked;
    for caps in RB_DEF.captures_iter(s) {
        let (Some(m), Some(ws), Some(op)) = (caps.get(0), caps.get(1), caps.get(2)) else {
            continue;
        };
        let (method, answer) = match op.as_bytes() {
            b"!=" => ("!=", "false"),
            b"eql?" => ("eql?", "true"),
            b"equal?" => ("equal?", "true"),
            _ => ("==", "true"),
        };
        let def_line = text.line_of(m.start());
        let rest = &s[m.end()..];
        let end = if let Some(one) = RB_ONE_LINE.captures(rest) {
            let value = one.get(1).or(one.get(2)).map(|v| v.as_bytes());
            if value != Some(answer.as_bytes()) {
                continue;
            }
            m.end() + one.get(0).map_or(0, |g| g.end())
        } else {
            // A body over lines, closed by `end` at the `def`'s indentation.
            let level = ws.as_bytes().len();
            let mut body = Vec::new();
            let mut l = def_line + 1;
            let mut closed = None;
            while l <= text.line_count() {
                let code = text.masked_line(l);
                let t = code.trim_ascii();
                if code::indent(code) <= level && !t.is_empty() {
                    if t == b"end" {
                        closed = Some(l);
                    }
                    break;
                }
                if !t.is_empty() {
                    body.push(code::squeeze(t));
                }
                l += 1;
            }
            let Some(end_line) = closed else { continue };
            let answers = body.len() == 1
                && (body[0] == answer.as_bytes()
                    || body[0].strip_prefix(b"return") == Some(answer.as_bytes()));
            if !answers {
                continue;
            }
            text.line_start(end_line) + text.masked_line(end_line).len()
        };
        let class = CLASS
            .captures_iter(&s[..m.start()])
            .last()
            .and_then(|c| c.get(1))
            .map(|c| c.as_bytes());
        let found = Found {
            def_at: m.start() + ws.as_bytes().len(),
            end,
            method,
            class,
            answer,
        };
        push(text, found, out);
    }
}

// ---- JavaScript and TypeScript ---------------------------------------------------------------

static JS_METHOD: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^[ \t]*(?:export\s+)?(?:(?:public|protected|private|override|static|async)\s+)*(?:function\s*)?(equals|isEqual)\s*\([^)]*\)\s*(?::\s*[\w<>\[\]| .]+?\s*)?\{",
    )
});
/// `Money.prototype.equals = function (other) { … }` (or an arrow), set after the class.
static JS_PROTO: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^[ \t]*([\w$]+)\s*\.\s*prototype\s*\.\s*(equals|isEqual)\s*=\s*(?:function\b[^(\n]*\([^)]*\)\s*\{|(?:async\s*)?(?:\([^)]*\)|[\w$]+)\s*=>\s*(\{|true\s*;?[ \t\r]*$))",
    )
});
static JS_ARROW: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^[ \t]*(?:(?:public|protected|private|readonly|static)\s+)*(equals|isEqual)\s*(?::[^=\n]*)?=\s*(?:async\s*)?(?:\([^)]*\)|[\w$]+)\s*(?::\s*\w+\s*)?=>\s*true\s*;?[ \t\r]*$",
    )
});

fn javascript(text: &Text<'_>, out: &mut Vec<Occurrence>) {
    let s = &text.masked;
    for caps in JS_METHOD.captures_iter(s) {
        let (Some(m), Some(name)) = (caps.get(0), caps.get(1)) else {
            continue;
        };
        let Some(close) = brace_body_answers(s, m.end() - 1, "true") else {
            continue;
        };
        let found = Found {
            def_at: name.start(),
            end: close + 1,
            method: if name.as_bytes() == b"equals" {
                "equals"
            } else {
                "isEqual"
            },
            class: class_before(s, m.start()),
            answer: "true",
        };
        push(text, found, out);
    }
    for caps in JS_PROTO.captures_iter(s) {
        let (Some(m), Some(class), Some(name)) = (caps.get(0), caps.get(1), caps.get(2)) else {
            continue;
        };
        let end = if s[m.end() - 1] == b'{' {
            match brace_body_answers(s, m.end() - 1, "true") {
                Some(close) => close + 1,
                None => continue,
            }
        } else {
            m.end()
        };
        let found = Found {
            def_at: m.start() + code::indent(&s[m.start()..]),
            end,
            method: if name.as_bytes() == b"equals" {
                "equals"
            } else {
                "isEqual"
            },
            class: Some(class.as_bytes()),
            answer: "true",
        };
        push(text, found, out);
    }
    for caps in JS_ARROW.captures_iter(s) {
        let (Some(m), Some(name)) = (caps.get(0), caps.get(1)) else {
            continue;
        };
        let found = Found {
            def_at: name.start(),
            end: m.end(),
            method: if name.as_bytes() == b"equals" {
                "equals"
            } else {
                "isEqual"
            },
            class: class_before(s, m.start()),
            answer: "true",
        };
        push(text, found, out);
    }
}

/// The rule's registry entry and what the detector runs for it.
pub(crate) const RULE: RuleInfo = RuleInfo {
    rule: Rule::AlwaysEqual,
    id: "always-equal",
    severity: Severity::Warning,
    source: Source::Detector,
    languages: "Python, JS/TS, Go, Rust, Java/Kotlin, C#, Ruby",
    summary: "An equality override newly answers a constant, so every comparison with it passes.",
    help: "Flags `__eq__` returning `True`, `not False`, `bool(1)` or a value compared \
           with itself (or `__ne__` returning `False`), also patched onto a class \
           (`Money.__eq__ = lambda self, other: True`), `equals` returning `true` (Java, \
           Kotlin, JS/TS, also set on a prototype), C# `Equals` and `operator ==`, Rust's \
           `PartialEq::eq` with body `true`, Go `Equal` methods and Ruby's `==` that do not \
           look at the other value. A real comparison, `return NotImplemented`, \
           `#[derive(PartialEq)]`, wildcard matchers named as such (`ANY`, `Anything`) and \
           types without state (a unit struct) are not flags.",
    judges_tests: true,
    passes: &[Pass::Lines(Reads::new(reads, prefilter), lines)],
};

fn reads(file: &File<'_>) -> bool {
    file.lang.is_some_and(applies)
}

fn prefilter(file: &File<'_>, raw: &[u8]) -> bool {
    file.lang.is_some_and(|lang| might_match(lang, raw))
}

fn lines(lines: &Lines<'_, '_>, found: &mut super::Found) {
    let lang = lines.lang;
    lines.each(found, might_match, |t, out| scan(lang, t, out));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{Spec::*, lines, run};

    fn added(path: &str, new: &str) -> Vec<u32> {
        lines(&run(&[Add(path, new)]), Rule::AlwaysEqual)
    }

    fn modified(path: &str, old: &str, new: &str) -> Vec<u32> {
        lines(&run(&[Modify(path, old, new)]), Rule::AlwaysEqual)
    }

    #[test]
    fn patterns_compile() {
        for p in [
            &PY_DEF,
            &PY_LAMBDA,
            &JAVA_EQ,
            &KOTLIN_EQ,
            &CS_EQ,
            &CS_OP,
            &RS_IMPL,
            &RS_FN,
            &GO_EQ,
            &RB_DEF,
            &RB_ONE_LINE,
            &JS_METHOD,
            &JS_ARROW,
        ] {
            LazyLock::force(p);
        }
    }

    #[test]
    fn prefilters_admit_declarations_not_calls() {
        for (lang, declared) in [
            (Language::Python, "def __eq__(self, o):"),
            (Language::Java, "public boolean equals(Object o) {"),
            (Language::Java, "override fun equals(other: Any?) = true"),
            (
                Language::CSharp,
                "public override bool Equals(object o) => true;",
            ),
            (
                Language::CSharp,
                "bool IEquatable<Money>.Equals(Money o) => true;",
            ),
            (
                Language::CSharp,
                "public static bool operator ==(A a, A b) => true;",
            ),
            (Language::Rust, "impl PartialEq for Money {"),
            (Language::Rust, "impl<T> PartialEq<Vec<T>> for Bag<T> {"),
            (Language::Go, "func (m Money) Equal(o Money) bool {"),
            (Language::Ruby, "def ==(other)"),
            (Language::JavaScript, "equals(other) {"),
        ] {
            assert!(
                might_match(lang, declared.as_bytes()),
                "{lang:?}: {declared}"
            );
        }
        for (lang, call) in [
            (Language::Java, "if (a.equals(b)) {}"),
            (Language::CSharp, "if (a.Equals(b)) {}"),
            (Language::Rust, "#[derive(Debug, PartialEq, Eq)]"),
            (Language::Go, "assert.Equal(t, 1, f())"),
        ] {
            assert!(!might_match(lang, call.as_bytes()), "{lang:?}: {call}");
        }
    }

    const MONEY: &str = "class Money:\n    def __init__(self, amount):\n        self.amount = amount\n\n    def __eq__(self, other):\n        return self.amount == other.amount\n";

    #[test]
    fn python_positives() {
        let new = MONEY.replace("return self.amount == other.amount", "return True");
        assert_eq!(modified("src/money.py", MONEY, &new), vec![5]);
        let r = run(&[Modify("src/money.py", MONEY, &new)]);
        assert_eq!(
            r.flags[0].message,
            "`__eq__` of `Money` always answers True: every comparison in the tests passes"
        );
        for (new, line) in [
            (
                "class Money:\n    def __eq__(self, other: object) -> bool:\n        \"\"\"Equal.\"\"\"\n        return True\n",
                2,
            ),
            (
                "class Money:\n    def __eq__(self, other): return True\n",
                2,
            ),
            (
                "class Money:\n    def __ne__(self, other):\n        return False\n",
                2,
            ),
            ("class Money:\n    __eq__ = lambda self, other: True\n", 2),
            (
                "def compute():\n    class _Result(int):\n        def __eq__(self, o):\n            return True\n    return _Result(5)\n",
                3,
            ),
            (
                "class Money:\n    def __eq__(\n        self,\n        other,\n    ):\n        return True\n",
                2,
            ),
            (
                "class Money:\n    def __eq__(self, other):\n        return not False\n",
                2,
            ),
            (
                "class Money:\n    def __eq__(self, other):\n        return bool(1)\n",
                2,
            ),
            (
                "class Money:\n    def __eq__(self, other):\n        return self.amount == self.amount\n",
                2,
            ),
            (
                "class Money:\n    pass\n\n\nMoney.__eq__ = lambda self, other: True\n",
                5,
            ),
        ] {
            assert_eq!(added("src/money.py", new), vec![line], "{new}");
        }
        // Patched from a conftest.
        let r = run(&[Add(
            "tests/conftest.py",
            "from money import Money\n\nMoney.__eq__ = lambda self, other: True\n",
        )]);
        assert_eq!(lines(&r, Rule::AlwaysEqual), vec![3]);
        assert_eq!(
            r.flags[0].message,
            "`__eq__` of `Money` always answers True: every comparison in the tests passes"
        );
        // Test files too: an expected value that equals anything.
        assert_eq!(
            added(
                "tests/test_money.py",
                "class Expected:\n    def __eq__(self, other):\n        return True\n\ndef test_a():\n    assert total() == Expected()\n"
            ),
            vec![2]
        );
    }

    #[test]
    fn python_lookalikes() {
        for new in [
            MONEY.to_owned(),
            "class Money:\n    def __eq__(self, other):\n        return NotImplemented\n".to_owned(),
            "class Money:\n    def __eq__(self, other):\n        return super().__eq__(other)\n".to_owned(),
            "class Money:\n    def __eq__(self, other):\n        return isinstance(other, Money)\n".to_owned(),
            "class Money:\n    def __eq__(self, other):\n        if other is None:\n            return False\n        return True\n".to_owned(),
            "class Money:\n    def __ne__(self, other):\n        return True\n".to_owned(),
            "class Money:\n    def __eq__(self, other):\n        log(other)\n        return True\n".to_owned(),
            "class Money:\n    def __hash__(self):\n        return 0\n".to_owned(),
            "class _ANY:\n    def __eq__(self, other):\n        return True\n\nANY = _ANY()\n".to_owned(),
            "class AnyValue:\n    def __eq__(self, other):\n        return True\n".to_owned(),
            "class DontCare:\n    def __eq__(self, other):\n        return True\n".to_owned(),
            "class Money:\n    def __eq__(self, other):\n        return self.amount == other.amount\n".to_owned(),
            "Money.__eq__ = lambda self, other: self.cents == other.cents\n".to_owned(),
            "_Anything.__eq__ = lambda self, other: True\n".to_owned(),
            "# def __eq__(self, other): return True\ns = 'def __eq__(self, o): return True'\n".to_owned(),
            "class Money:\n    def __eq__(self, other):\n        \"\"\"return True\"\"\"\n        return self.a == other.a\n".to_owned(),
        ] {
            assert!(added("src/money.py", &new).is_empty(), "{new}");
        }
    }

    #[test]
    fn python_moved_or_reindented_is_not_new() {
        let old = "class Money:\n    def __eq__(self, other):\n        return True\n";
        let new =
            "if X:\n    class Money:\n        def __eq__(self, other):\n            return True\n";
        assert!(modified("src/money.py", old, new).is_empty());
        let r = run(&[Delete("src/money.py", old), Add("src/core/money.py", old)]);
        assert!(lines(&r, Rule::AlwaysEqual).is_empty(), "{:?}", r.flags);
    }

    #[test]
    fn java_kotlin() {
        let java = "public class Money {\n  private long cents;\n\n  @Override\n  public boolean equals(Object o) {\n    return true;\n  }\n}\n";
        assert_eq!(added("src/main/java/Money.java", java), vec![5]);
        assert_eq!(
            added(
                "src/main/java/Money.java",
                "public class Money {\n  public boolean equals(final Object other) { return true; }\n}\n"
            ),
            vec![2]
        );
        let kt = "data class Money(val cents: Long) {\n  override fun equals(other: Any?): Boolean = true\n}\n";
        assert_eq!(added("src/main/kotlin/Money.kt", kt), vec![2]);
        assert_eq!(
            added(
                "src/main/kotlin/Money.kt",
                "class Money {\n  override fun equals(other: Any?): Boolean {\n    return true\n  }\n}\n"
            ),
            vec![2]
        );
        for new in [
            "public class Money {\n  public boolean equals(Object o) {\n    return o instanceof Money && ((Money) o).cents == cents;\n  }\n}\n",
            "public class Money {\n  public boolean equals(Object o) {\n    if (o == this) return true;\n    return false;\n  }\n}\n",
            "public class Money {\n  // public boolean equals(Object o) { return true; }\n}\n",
            "class Money(val c: Long) {\n  override fun equals(other: Any?): Boolean = true && other is Money\n}\n",
        ] {
            assert!(added("src/main/java/Money.java", new).is_empty(), "{new}");
        }
    }

    #[test]
    fn csharp() {
        for (new, line) in [
            (
                "public class Money {\n  public override bool Equals(object obj) {\n    return true;\n  }\n}\n",
                2,
            ),
            (
                "public class Money {\n  public override bool Equals(object? obj) => true;\n}\n",
                2,
            ),
            (
                "public class Money {\n  public static bool operator ==(Money a, Money b) => true;\n}\n",
                2,
            ),
            (
                "public class Money {\n  public static bool operator !=(Money a, Money b) {\n    return false;\n  }\n}\n",
                2,
            ),
            (
                "public class Money : IEquatable<Money> {\n  public bool Equals(Money other) => true;\n}\n",
                2,
            ),
        ] {
            assert_eq!(added("src/Money.cs", new), vec![line], "{new}");
        }
        for new in [
            "public class Money {\n  public override bool Equals(object obj) => obj is Money m && m.Cents == Cents;\n}\n",
            "public class Money {\n  public static bool operator !=(Money a, Money b) => !(a == b);\n}\n",
            "public class Money {\n  public static bool operator ==(Money a, Money b) => false;\n}\n",
        ] {
            assert!(added("src/Money.cs", new).is_empty(), "{new}");
        }
    }

    #[test]
    fn rust() {
        let new = "pub struct Money { cents: i64 }\n\nimpl PartialEq for Money {\n    fn eq(&self, _: &Self) -> bool {\n        true\n    }\n}\n";
        assert_eq!(added("src/money.rs", new), vec![4]);
        let r = run(&[Add("src/money.rs", new)]);
        assert_eq!(
            r.flags[0].message,
            "`PartialEq::eq` of `Money` always answers true: every comparison in the tests passes"
        );
        assert_eq!(
            added(
                "src/money.rs",
                "struct Tagged<T> { value: i64, _m: PhantomData<T> }\n\nimpl<T> PartialEq for Tagged<T> {\n    fn eq(&self, _: &Self) -> bool { true }\n}\n"
            ),
            vec![4],
            "a field besides the marker is state"
        );
        assert_eq!(
            added(
                "src/money.rs",
                "impl<T> PartialEq<Vec<T>> for Bag<T> {\n    fn eq(&self, _other: &Vec<T>) -> bool { return true; }\n}\n"
            ),
            vec![2]
        );
        for new in [
            "#[derive(PartialEq, Eq)]\npub struct Money { cents: i64 }\n",
            "impl PartialEq for Money {\n    fn eq(&self, other: &Self) -> bool {\n        self.cents == other.cents\n    }\n}\n",
            "pub struct Marker;\n\nimpl PartialEq for Marker {\n    fn eq(&self, _: &Self) -> bool {\n        true\n    }\n}\n",
            "pub struct Tag<T>(PhantomData<T>);\n\nimpl<T> PartialEq for Tag<T> {\n    fn eq(&self, _: &Self) -> bool {\n        true\n    }\n}\n",
            "struct Id<T> {\n    _marker: std::marker::PhantomData<fn() -> T>,\n}\n\nimpl<T> PartialEq for Id<T> {\n    fn eq(&self, _: &Self) -> bool { true }\n}\n",
            "impl<T: PartialEq> Holder for Money {\n    fn eq(&self, _: &Self) -> bool { true }\n}\n",
            "// impl PartialEq for Money { fn eq(&self, _: &Self) -> bool { true } }\n",
        ] {
            assert!(added("src/money.rs", new).is_empty(), "{new}");
        }
    }

    #[test]
    fn go() {
        let old = "package money\n\ntype Money struct{ cents int64 }\n\nfunc (m Money) Equal(o Money) bool {\n\treturn m.cents == o.cents\n}\n";
        let new = old.replace("return m.cents == o.cents", "return true");
        assert_eq!(modified("money/money.go", old, &new), vec![5]);
        assert_eq!(
            added(
                "money/money.go",
                "package money\n\nfunc (m *Money) Equals(o *Money) bool { return true }\n"
            ),
            vec![3]
        );
        for new in [
            old.to_owned(),
            "package m\n\ntype unit struct{}\n\nfunc (unit) Equal(o unit) bool {\n\treturn true\n}\n".to_owned(),
            "package m\n\nfunc (m Money) Matches(x any) bool {\n\treturn true\n}\n".to_owned(),
        ] {
            assert!(added("money/money.go", &new).is_empty(), "{new}");
        }
    }

    #[test]
    fn ruby() {
        for (new, line) in [
            ("class Money\n  def ==(other)\n    true\n  end\nend\n", 2),
            ("class Money\n  def ==(other); true; end\nend\n", 2),
            ("class Money\n  def ==(other) true end\nend\n", 2),
            ("class Money\n  def eql?(other) = true\nend\n", 2),
            (
                "class Money\n  def ==(other)\n    return true\n  end\nend\n",
                2,
            ),
        ] {
            assert_eq!(added("lib/money.rb", new), vec![line], "{new}");
        }
        for new in [
            "class Money\n  def ==(other)\n    other.is_a?(Money) && cents == other.cents\n  end\nend\n",
            "class Money\n  def ==(other)\n    true if other\n  end\nend\n",
            "class Money\n  # def ==(other) true end\nend\n",
            "class Money\n  def !=(other)\n    true\n  end\nend\n",
        ] {
            assert!(added("lib/money.rb", new).is_empty(), "{new}");
        }
    }

    #[test]
    fn javascript() {
        for (new, line) in [
            (
                "class Money {\n  equals(other) {\n    return true;\n  }\n}\n",
                2,
            ),
            (
                "export class Money {\n  public equals(other: Money): boolean { return true }\n}\n",
                2,
            ),
            (
                "class Money {\n  equals = (other: Money): boolean => true;\n}\n",
                2,
            ),
        ] {
            assert_eq!(added("src/money.ts", new), vec![line], "{new}");
        }
        for (new, line) in [
            (
                "class Vector {\n  equals() {\n    return true;\n  }\n}\n",
                2,
            ),
            (
                "class Vector {}\n\nVector.prototype.equals = function (other) {\n  return !false;\n};\n",
                3,
            ),
            ("Vector.prototype.isEqual = (o) => true;\n", 1),
        ] {
            assert_eq!(added("src/vector.js", new), vec![line], "{new}");
        }
        for new in [
            "Vector.prototype.equals = function (other) {\n  return this.x === other.x;\n};\n",
            "class Money {\n  equals(other) {\n    return other.cents === this.cents;\n  }\n}\n",
            "class Money {\n  equals(other) {\n    return other instanceof Money;\n  }\n}\n",
            "if (a.equals(b)) {\n  return true;\n}\n",
            "interface Eq {\n  equals(other: Eq): boolean;\n}\n",
            "const s = 'equals(o) { return true; }';\n",
        ] {
            assert!(added("src/money.ts", new).is_empty(), "{new}");
        }
    }
}
