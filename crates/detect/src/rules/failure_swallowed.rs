//! `failure-swallowed`: production code newly catches every failure and carries on as if
//! nothing happened, so an error the tests would have seen never reaches them.
//!
//! Flags, in production files (not tests, fixtures or test set-up):
//! - Python: a handler of everything (`except:`, `except Exception`, `except BaseException`, a
//!   tuple naming one of them, with or without `as e`) whose body is only `pass`, `...` or
//!   `continue`; `contextlib.suppress(Exception)`.
//! - JavaScript and TypeScript: an empty `catch` block; a promise's `.catch` whose handler does
//!   nothing (`() => {}`, `() => undefined`, `() => null`, `function () {}`, `noop`).
//! - Java, Kotlin, C#, PHP: an empty `catch` of `Exception`, `Throwable` or `RuntimeException`
//!   (C#: also a bare `catch {}`).
//! - Go: `_ = err`, and `if err != nil {}` with nothing inside.
//! - Ruby: a `rescue` of everything (`rescue`, `rescue StandardError`, `rescue Exception`, `=> e`)
//!   followed by `end`; the `rescue nil` modifier.
//!
//! A handler with a comment saying why it does nothing, and a promise's `.catch(() => {})` (how
//! real code ends a fire-and-forget call), are notes: on merged pull requests of popular
//! projects they were nearly always deliberate. Bundles and vendored code are not read.
//!
//! Left alone: a handler that logs, re-raises, returns a value or does any work; a handler of a
//! named failure (`except KeyError: pass`, `catch (IOException e) {}`: a deliberate choice of
//! which failure does not matter); a `try` whose body only imports (`stubbed-import` reads
//! those); `__del__`, where raising is useless; a handler the base already had, wherever the
//! change moved it.

use crate::rules::prelude::*;
use std::sync::LazyLock;

use regex::bytes::Regex;

use super::code::{self, re};
use crate::lang::Language;
use crate::paths;
use crate::scan::{Occurrence, Role, Text};

pub(crate) const RULE: RuleInfo = RuleInfo {
    rule: Rule::FailureSwallowed,
    id: "failure-swallowed",
    severity: Severity::Warning,
    source: Source::Detector,
    languages: "Python, JS/TS, Go, Java/Kotlin, C#, PHP, Ruby",
    summary: "Production code newly catches every failure and carries on, so the tests never see the error.",
    help: "Flags a new handler of everything whose body does nothing, in production code: \
           Python `except Exception: pass` (bare `except:`, `BaseException`, `continue`, \
           `...`, `contextlib.suppress(Exception)`), an empty `catch {}` or a promise's \
           `.catch(() => {})` in JS/TS, an empty `catch (Exception e) {}` in Java, Kotlin, C# \
           and PHP, Go's `_ = err` and empty `if err != nil {}`, Ruby's bare `rescue` before \
           `end` and `rescue nil`. A worker that cannot make the code work can make its \
           failure silent. A handler with a comment saying why, and a promise's \
           `.catch(() => {})` (how real code ends fire-and-forget calls), are notes; bundles \
           and vendored code are not read. A handler that logs, re-raises, returns a value or does any work, \
           one of a named failure (`except KeyError: pass`), a `try` that only imports \
           (`stubbed-import`), `__del__` and a handler the base already had are not flags.",
    judges_tests: false,
    passes: &[Pass::Lines(Reads::new(reads, prefilter), lines)],
};

fn reads(file: &File<'_>) -> bool {
    file.lang.is_some_and(|lang| applies(lang, &file.role)) && !paths::is_generated(file.path)
}

fn prefilter(file: &File<'_>, raw: &[u8]) -> bool {
    file.lang.is_some_and(|lang| might_match(lang, raw))
}

fn lines(lines: &Lines<'_, '_>, found: &mut super::Found) {
    let lang = lines.lang;
    lines.each(found, might_match, |t, out| scan(lang, t, out));
}

/// Production code of a language the rule reads.
pub(crate) fn applies(lang: Language, role: &Role) -> bool {
    let production = !role.is_test && !role.fixture && role.harness.is_none() && !role.go_test;
    production
        && matches!(
            lang,
            Language::Python
                | Language::JavaScript
                | Language::Go
                | Language::Java
                | Language::CSharp
                | Language::Php
                | Language::Ruby
        )
}

/// False when `raw` cannot hold a swallowed failure of `lang`.
pub(crate) fn might_match(lang: Language, raw: &[u8]) -> bool {
    static PYTHON: LazyLock<super::LiteralSet> =
        LazyLock::new(|| super::literal_set(&["except", "suppress("]));
    static CATCH: LazyLock<super::LiteralSet> = LazyLock::new(|| super::literal_set(&["catch"]));
    static GO: LazyLock<super::LiteralSet> = LazyLock::new(|| super::literal_set(&["err"]));
    static RUBY: LazyLock<super::LiteralSet> = LazyLock::new(|| super::literal_set(&["rescue"]));
    match lang {
        Language::Python => PYTHON.is_match(raw),
        Language::JavaScript | Language::Java | Language::CSharp | Language::Php => {
            CATCH.is_match(raw)
        }
        Language::Go => GO.is_match(raw),
        Language::Ruby => RUBY.is_match(raw),
        _ => false,
    }
}

pub(crate) fn scan(lang: Language, text: &Text<'_>, out: &mut Vec<Occurrence>) {
    match lang {
        Language::Python => python(text, out),
        Language::JavaScript => {
            empty_catch(text, &JS_CATCH, out);
            patterns(text, &[&*JS_PROMISE], Form::Explained, out);
        }
        Language::Java => empty_catch(text, &JAVA_CATCH, out),
        Language::CSharp => empty_catch(text, &CSHARP_CATCH, out),
        Language::Php => empty_catch(text, &PHP_CATCH, out),
        Language::Go => patterns(text, &[&*GO_DISCARD, &*GO_EMPTY_IF], Form::Silent, out),
        Language::Ruby => patterns(text, &[&*RUBY_RESCUE, &*RUBY_RESCUE_NIL], Form::Silent, out),
        _ => {}
    }
}

/// How often a form is right, as its flag's severity says.
#[derive(Clone, Copy, PartialEq)]
enum Form {
    /// A handler that does nothing and says nothing: the rule's default.
    Silent,
    /// A handler with a comment saying why it does nothing, or a promise's `.catch(() => {})`
    /// (real code ends fire-and-forget calls so, a page closed, a file raced): a note.
    Explained,
}

fn push(text: &Text<'_>, start: usize, end: usize, form: Form, out: &mut Vec<Occurrence>) {
    let end = end.min(text.raw.len());
    let commented = (start..end).any(|i| text.in_comment(i));
    let shown = code::shown(&text.raw[start..end], 60);
    let message = format!("newly catches every failure and carries on: `{shown}`");
    let mut o = text.occurrence(Rule::FailureSwallowed, "swallowed", start, end, message);
    o.key = text.key(o.first, o.last);
    if form == Form::Explained || commented {
        o.severity = Some(Severity::Note);
    }
    out.push(o);
}

/// Each match of `patterns`, flagged whole as `form`.
fn patterns(text: &Text<'_>, patterns: &[&Regex], form: Form, out: &mut Vec<Occurrence>) {
    for pattern in patterns {
        for m in pattern.find_iter(&text.masked) {
            push(text, m.start(), m.end(), form, out);
        }
    }
}

// ---- Python ----------------------------------------------------------------------------------

/// `except <everything>:` and what follows the colon on its line.
static PY_EXCEPT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^([ \t]*)except\b[ \t]*(\(?[ \t]*(?:Exception|BaseException)\b[^:]*|[ \t]*)(?:[ \t]+as[ \t]+\w+)?[ \t]*:[ \t]*(.*)$",
    )
});

static PY_SUPPRESS: LazyLock<Regex> =
    LazyLock::new(|| re(r"\bsuppress\([ \t]*(?:Exception|BaseException)[ \t]*\)"));

static PY_IMPORT: LazyLock<Regex> = LazyLock::new(|| re(r"^[ \t]*(?:import|from)[ \t]"));

/// Statements that do nothing.
fn py_nothing(statement: &[u8]) -> bool {
    matches!(statement, b"pass" | b"..." | b"continue")
}

fn python(text: &Text<'_>, out: &mut Vec<Occurrence>) {
    patterns(text, &[&*PY_SUPPRESS], Form::Silent, out);
    for caps in PY_EXCEPT.captures_iter(&text.masked) {
        let (Some(whole), Some(lead), Some(clause), Some(rest)) =
            (caps.get(0), caps.get(1), caps.get(2), caps.get(3))
        else {
            continue;
        };
        let clause = clause.as_bytes();
        // A tuple names everything only when one of its names is everything.
        if clause.contains(&b',') && !clause.starts_with(b"(") {
            continue;
        }
        let level = lead.as_bytes().len();
        let line = text.line_of(whole.start());
        let inline = code::squeeze(rest.as_bytes());
        let end = if !inline.is_empty() {
            if !py_nothing(&inline) {
                continue;
            }
            whole.end()
        } else {
            // The body: the lines below, deeper than the `except`.
            let mut last = line;
            let mut body = Vec::new();
            for l in line + 1..=text.line_count() {
                let masked = text.masked_line(l);
                if code::is_blank(masked) {
                    continue;
                }
                if code::indent(masked) <= level {
                    break;
                }
                body.push(code::squeeze(masked));
                last = l;
            }
            if body.is_empty() || !body.iter().all(|s| py_nothing(s)) {
                continue;
            }
            text.line_start(last) + text.masked_line(last).len()
        };
        if py_try_only_imports(text, line, level)
            || code::py_enclosing(text, line)
                .iter()
                .any(|d| !d.class && d.name == b"__del__")
        {
            continue;
        }
        push(text, whole.start(), end, Form::Silent, out);
    }
}

/// Whether the `try:` the `except` on `line` closes has only imports in its body.
fn py_try_only_imports(text: &Text<'_>, line: u32, level: usize) -> bool {
    let mut body = 0;
    for l in (1..line).rev() {
        let masked = text.masked_line(l);
        if code::is_blank(masked) {
            continue;
        }
        let indent = code::indent(masked);
        if indent > level {
            if !PY_IMPORT.is_match(masked) {
                return false;
            }
            body += 1;
            continue;
        }
        if indent < level {
            return false;
        }
        // At the `except`'s level: its `try:`, or an earlier handler of the same `try`.
        let squeezed = code::squeeze(masked);
        if squeezed.starts_with(b"try:") {
            return body > 0;
        }
        if !squeezed.starts_with(b"except") {
            return false;
        }
    }
    false
}

// ---- Braces ----------------------------------------------------------------------------------

/// `catch` with its parameter (or none) and an empty block, whatever the spaces.
static JS_CATCH: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\bcatch[ \t\r\n]*(?:\([ \t]*[A-Za-z_$][\w$]*[ \t]*(?::[ \t]*[\w$.]+[ \t]*)?\))?[ \t\r\n]*\{[ \t\r\n]*\}",
    )
});

static JS_PROMISE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\.catch\([ \t\r\n]*(?:(?:\([ \t]*[\w$]*[ \t]*\)|[A-Za-z_$][\w$]*)[ \t]*=>[ \t\r\n]*(?:\{[ \t\r\n]*\}|undefined|null|void 0)|function[ \t]*\w*[ \t]*\([ \t]*[\w$]*[ \t]*\)[ \t\r\n]*\{[ \t\r\n]*\}|(?:_\.|lodash\.)?noop)[ \t\r\n]*\)",
    )
});

/// Java and Kotlin (`catch (e: Exception)`).
static JAVA_CATCH: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\bcatch[ \t]*\([ \t]*(?:(?:final[ \t]+)?(?:java\.lang\.)?(?:Exception|Throwable|RuntimeException)[ \t]+\w+|\w+[ \t]*:[ \t]*(?:Exception|Throwable|RuntimeException))[ \t]*\)[ \t\r\n]*\{[ \t\r\n]*\}",
    )
});

static CSHARP_CATCH: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\bcatch[ \t]*(?:\([ \t]*(?:System\.)?Exception(?:[ \t]+\w+)?[ \t]*\))?[ \t\r\n]*\{[ \t\r\n]*\}",
    )
});

static PHP_CATCH: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\bcatch[ \t]*\([ \t]*\\?(?:Exception|Throwable)(?:[ \t]+\$\w+)?[ \t]*\)[ \t\r\n]*\{[ \t\r\n]*\}",
    )
});

/// Each empty `catch` of `pattern`, unless its `try` only loads modules (`stubbed-import`'s).
fn empty_catch(text: &Text<'_>, pattern: &Regex, out: &mut Vec<Occurrence>) {
    let s = &text.masked;
    for m in pattern.find_iter(s) {
        if try_only_loads(s, m.start()) {
            continue;
        }
        push(text, m.start(), m.end(), Form::Silent, out);
    }
}

/// Whether the block closing just before the `catch` at `catch` holds only `require`s or
/// dynamic `import()`s.
fn try_only_loads(s: &[u8], catch: usize) -> bool {
    let Some(close) = s[..catch].iter().rposition(|b| !b.is_ascii_whitespace()) else {
        return false;
    };
    if s[close] != b'}' {
        return false;
    }
    let Some((open, _)) = code::enclosing_braces(s, close).into_iter().next() else {
        return false;
    };
    code::js_only_loads(&s[open + 1..close])
}

// ---- Go and Ruby -----------------------------------------------------------------------------

static GO_DISCARD: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^[ \t]*_[ \t]*=[ \t]*err[ \t]*$"));

static GO_EMPTY_IF: LazyLock<Regex> =
    LazyLock::new(|| re(r"\bif[ \t]+err[ \t]*!=[ \t]*nil[ \t]*\{[ \t\r\n]*\}"));

static RUBY_RESCUE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\brescue(?:[ \t]+(?:StandardError|Exception))?(?:[ \t]*=>[ \t]*\w+)?[ \t]*\r?\n[ \t]*end\b",
    )
});

/// The modifier, after an expression on its line (`value = parse(s) rescue nil`).
static RUBY_RESCUE_NIL: LazyLock<Regex> = LazyLock::new(|| re(r"[ \t]rescue[ \t]+nil\b"));

#[cfg(test)]
mod tests;
