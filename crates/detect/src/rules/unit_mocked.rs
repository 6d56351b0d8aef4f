//! `unit-mocked`: a test newly replaces the very function it is named for and then asserts on
//! the replacement's answer, so it tests the mock, not the code.
//!
//! Flags, in test files:
//! - Python: in `def test_<name>…` (or under a decorator of it), `patch("pkg.mod.<name>", …)`,
//!   `mocker.patch("…<name>", …)`, `patch.object(obj, "<name>", …)` or
//!   `monkeypatch.setattr(obj, "<name>", …)` / `monkeypatch.setattr("…<name>", …)`, with an
//!   `assert` in the same test that calls `<name>(`.
//! - JavaScript and TypeScript: in `it`/`test` whose title begins with `<name>`, or in a file
//!   named for it (`add.test.js`), `jest.spyOn(obj, '<name>')` or `vi.spyOn(…)` given an answer
//!   (`.mockReturnValue…`, `.mockResolvedValue…`, `.mockImplementation…`), with an `expect(` in
//!   the same test that calls `<name>(`.
//!
//! Left alone: patching a collaborator (`patch("app.calc.fetch_rate")` in `test_convert`), a
//! patch the test only observes through (`wraps=`, a spy with no answer), a test whose name is
//! not the patched function's, a patch the base already had.

use crate::rules::prelude::*;
use std::sync::LazyLock;

use regex::bytes::Regex;

use super::code::{self, re};
use crate::lang::Language;
use crate::scan::{Occurrence, Text};

pub(crate) const RULE: RuleInfo = RuleInfo {
    rule: Rule::UnitMocked,
    id: "unit-mocked",
    severity: Severity::Warning,
    source: Source::Detector,
    languages: "Python, JS/TS",
    summary: "A test newly mocks the function it is named for and asserts on the mock's answer.",
    help: "Flags a patch of the test's own subject — `mocker.patch(\"app.calc.add\", \
           return_value=5)` (or `patch`, `patch.object`, `monkeypatch.setattr`) in \
           `test_add`, `jest.spyOn(calc, 'add').mockReturnValue(5)` in `it('add …')` or in \
           `add.test.js` — when the same test then asserts on a call of it: the assertion \
           checks the mock's answer, never the code. Patching a collaborator, a spy that only \
           observes (`wraps=`, no answer given), and a test named for something else are not \
           flags.",
    judges_tests: true,
    passes: &[Pass::Lines(Reads::new(reads, prefilter), lines)],
};

fn reads(file: &File<'_>) -> bool {
    file.role.is_test
        && !file.role.fixture
        && matches!(file.lang, Some(Language::Python | Language::JavaScript))
}

fn prefilter(file: &File<'_>, raw: &[u8]) -> bool {
    file.lang.is_some_and(|lang| might_match(lang, raw))
}

fn might_match(lang: Language, raw: &[u8]) -> bool {
    static PYTHON: LazyLock<super::LiteralSet> =
        LazyLock::new(|| super::literal_set(&["patch", "setattr"]));
    static JS: LazyLock<super::LiteralSet> = LazyLock::new(|| super::literal_set(&["spyOn"]));
    match lang {
        Language::Python => PYTHON.is_match(raw),
        Language::JavaScript => JS.is_match(raw),
        _ => false,
    }
}

fn lines(lines: &Lines<'_, '_>, found: &mut super::Found) {
    let lang = lines.lang;
    let stem = stem(lines.file.path.file_name());
    lines.each(found, might_match, |t, out| match lang {
        Language::Python => python(t, out),
        Language::JavaScript => javascript(t, &stem, out),
        _ => {}
    });
}

/// A file's name before its first dot: `add` of `add.test.js`.
fn stem(name: &[u8]) -> String {
    let name = String::from_utf8_lossy(name);
    name.split('.').next().unwrap_or_default().to_owned()
}

fn push(text: &Text<'_>, start: usize, end: usize, name: &str, out: &mut Vec<Occurrence>) {
    let message = format!(
        "the test mocks `{name}`, the function it is named for, and asserts on the mock's answer"
    );
    let mut o = text.occurrence(Rule::UnitMocked, "unit-mocked", start, end, message);
    o.key = text.key(o.first, o.last);
    out.push(o);
}

/// The last name of a dotted target as written in the raw text between `start..end` (a
/// string's contents are blank in the masked text): `add` of `"app.calc.add"`.
fn target(raw: &[u8], start: usize, end: usize) -> Option<String> {
    let s = std::str::from_utf8(raw.get(start..end)?).ok()?;
    let s = s.trim().trim_matches(|c| c == '"' || c == '\'' || c == '`');
    let last = s.rsplit('.').next()?;
    let plain = !last.is_empty() && last.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    plain.then(|| last.to_owned())
}

/// Whether the test named `test` is named for `subject`: `test_add`, `test_add_rounds` for
/// `add` (Python), `add returns the sum` (a JS title's first word).
fn named_for(test: &str, subject: &str) -> bool {
    test == subject
        || test
            .strip_prefix(subject)
            .is_some_and(|rest| rest.starts_with(['_', ' ', '(', ':']))
}

// ---- Python ----------------------------------------------------------------------------------

static PY_TEST: LazyLock<Regex> =
    LazyLock::new(|| re(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+test_(\w+)[ \t]*\("));

/// A patch whose target is the first argument's string: its contents' span.
static PY_PATCH_STRING: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"\b(?:mock\.)?patch[ \t]*\([ \t]*(["'][^"'\n]*["'])|\bmonkeypatch\.setattr[ \t]*\([ \t]*(["'][^"'\n]*["'])"#,
    )
});

/// A patch of an attribute named by the second argument: `patch.object(calc, "add", …)`.
static PY_PATCH_ATTR: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"\b(?:patch\.object|monkeypatch\.setattr)[ \t]*\([ \t]*[\w.]+[ \t]*,[ \t]*(["'][^"'\n]*["'])"#,
    )
});

fn python(text: &Text<'_>, out: &mut Vec<Occurrence>) {
    // Patterns run on the raw text (targets are strings); what they find is code only where
    // the masked text has code at the same place.
    for caps in PY_TEST.captures_iter(&text.masked) {
        let (Some(def), Some(lead), Some(name)) = (caps.get(0), caps.get(1), caps.get(2)) else {
            continue;
        };
        let name = String::from_utf8_lossy(name.as_bytes()).into_owned();
        let level = lead.as_bytes().len();
        let def_line = text.line_of(def.start());
        let Some((header_last, _)) = code::py_header_end(text, def_line) else {
            continue;
        };
        let Some((_, last)) = code::py_block(text, header_last, level) else {
            continue;
        };
        // The decorators above, and the body.
        let mut first = def_line;
        while first > 1 && code::squeeze(text.masked_line(first - 1)).starts_with(b"@") {
            first -= 1;
        }
        let (from, to) = (
            text.line_start(first),
            text.line_start(last) + text.masked_line(last).len(),
        );
        let raw = &text.raw[from..to.min(text.raw.len())];
        let masked = &text.masked[from..to.min(text.masked.len())];
        for pattern in [&*PY_PATCH_STRING, &*PY_PATCH_ATTR] {
            for caps in pattern.captures_iter(raw) {
                let (Some(whole), Some(arg)) = (caps.get(0), caps.get(1).or(caps.get(2))) else {
                    continue;
                };
                // Code, not text in a string or comment.
                if masked.get(whole.start()) != raw.get(whole.start()) {
                    continue;
                }
                let Some(subject) = target(raw, arg.start(), arg.end()) else {
                    continue;
                };
                if !named_for(&name, &subject) || !py_asserts_a_call(masked, &subject) {
                    continue;
                }
                // A patch that wraps the real function still runs it.
                let paren = masked[whole.start()..]
                    .iter()
                    .position(|&b| b == b'(')
                    .map(|p| whole.start() + p);
                let call_end = paren
                    .and_then(|p| code::closing(masked, p))
                    .unwrap_or(whole.end());
                if raw[whole.start()..call_end.min(raw.len())]
                    .windows(6)
                    .any(|w| w == b"wraps=")
                {
                    continue;
                }
                push(
                    text,
                    from + whole.start(),
                    from + whole.end(),
                    &subject,
                    out,
                );
            }
        }
    }
}

/// Whether an assertion of the masked body (`assert …`, `self.assertEqual(…)`) calls `name(`.
fn py_asserts_a_call(body: &[u8], name: &str) -> bool {
    body.split(|&b| b == b'\n')
        .any(|line| line.windows(6).any(|w| w == b"assert") && calls(line, name))
}

/// Whether `code` calls `name(` (as a whole name, possibly through an attribute).
fn calls(code: &[u8], name: &str) -> bool {
    let needle = format!("{name}(");
    code.windows(needle.len()).enumerate().any(|(i, w)| {
        w == needle.as_bytes()
            && (i == 0 || !(code[i - 1].is_ascii_alphanumeric() || code[i - 1] == b'_'))
    })
}

// ---- JavaScript ------------------------------------------------------------------------------

static JS_TEST: LazyLock<Regex> =
    LazyLock::new(|| re(r#"\b(?:it|test)(?:\.\w+)?[ \t]*\([ \t]*(['"`])"#));

static JS_SPY: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"\b(?:jest|vi)\.spyOn[ \t]*\([ \t]*[\w.$]+[ \t]*,[ \t]*(['"][\w$]+['"])[ \t]*\)[ \t\r\n]*\.mock(?:Return|Resolved|Rejected|Implementation)"#,
    )
});

fn javascript(text: &Text<'_>, stem: &str, out: &mut Vec<Occurrence>) {
    let s = &text.masked;
    for caps in JS_TEST.captures_iter(text.raw) {
        let (Some(call), Some(quote)) = (caps.get(0), caps.get(1)) else {
            continue;
        };
        if s.get(call.start()) != text.raw.get(call.start()) {
            continue;
        }
        // The title, as written.
        let title_start = quote.end();
        let q = text.raw[quote.start()];
        let Some(len) = text.raw[title_start..]
            .iter()
            .position(|&b| b == q || b == b'\n')
        else {
            continue;
        };
        let title = String::from_utf8_lossy(&text.raw[title_start..title_start + len]).into_owned();
        // The test's body: its call's parentheses.
        let Some(open) = s[call.start()..].iter().position(|&b| b == b'(') else {
            continue;
        };
        let open = call.start() + open;
        let Some(close) = code::closing(s, open) else {
            continue;
        };
        let raw = &text.raw[open..close];
        let masked = &s[open..close];
        for spy in JS_SPY.captures_iter(raw) {
            let (Some(whole), Some(arg)) = (spy.get(0), spy.get(1)) else {
                continue;
            };
            if masked.get(whole.start()) != raw.get(whole.start()) {
                continue;
            }
            let Some(subject) = target(raw, arg.start(), arg.end()) else {
                continue;
            };
            let named = named_for(title.trim(), &subject) || stem == subject;
            let asserted = masked
                .split(|&b| b == b'\n' || b == b';')
                .any(|st| st.windows(7).any(|w| w == b"expect(") && calls(st, &subject));
            if named && asserted {
                push(
                    text,
                    open + whole.start(),
                    open + whole.end(),
                    &subject,
                    out,
                );
            }
        }
    }
}

#[cfg(test)]
mod tests;
