//! Which test a skip marker applies to.
//!
//! A marker is judged per test, not per file: a test that moves with its marker keeps it, and a
//! marker taken off one test and put on another is a new skip. So each marker found in a version
//! of a file is given an *owner*: the test it decorates or sits in, the group of tests it covers
//! (a decorated class, `describe.skip`, `pytestmark`, a module-level `importorskip`), or nothing
//! a test runs (a marker stored in a variable, a decorator on a helper). What is left (a skip in
//! a fixture or a set-up helper, whose tests cannot be told) is judged per file, as before.
//!
//! The tests come from the test model's outline ([`suite::outline`]); C and C++, Swift and
//! Elixir, which it does not read, get a small reader of their own here.

use std::ops::Range;
use std::sync::LazyLock;

use regex::bytes::Regex;

use super::super::code::{self, closing, indent, is_blank, re};
use crate::lang::Language;
use crate::lexer::Lexed;
use crate::scan::Text;
use crate::suite;

/// A test of one version of a file.
#[derive(Debug)]
pub(super) struct Case {
    /// Qualified by its classes or groups.
    pub name: String,
    /// The last part of the name, which survives a move to another class or file.
    pub simple: String,
    /// Its first byte: its decorators or attributes, else its definition line.
    pub start: usize,
    pub body: Range<usize>,
    /// The definition line (1-based).
    pub line: u32,
    /// The body's code without white space, hashed: the same body under another name is the
    /// same test renamed.
    pub body_key: Option<u64>,
    /// The body's lines, each without white space, hashed, sorted: how alike two tests are.
    pub lines: Vec<u64>,
}

/// A function that is not a test (a helper, a fixture, a set-up method).
#[derive(Debug)]
pub(super) struct Helper {
    pub start: usize,
    pub body: Range<usize>,
}

/// What one version of a file defines.
#[derive(Debug, Default)]
pub(super) struct Outline {
    pub cases: Vec<Case>,
    pub helpers: Vec<Helper>,
}

/// The owner of a marker.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Owner {
    /// One test, by its index in the outline.
    Test(usize),
    /// Every test of a class, a `describe` block or the file: a key that names the group the
    /// same way in both versions, and the tests' indices.
    Group(String, Vec<usize>),
    /// Something whose tests cannot be told (a fixture, a set-up helper): judged per file.
    Other,
    /// Applies to no test: a decorator on a helper, a marker stored in a variable (its uses are
    /// judged where they are).
    Nowhere,
}

pub(super) fn outline(lexed: &Lexed<'_>, text: &Text<'_>) -> Outline {
    let lang = lexed.lang();
    let units = match lang {
        Language::Cpp => gtest(text),
        Language::Swift => swift(text),
        Language::Elixir => exunit(text),
        _ => suite::outline(lexed),
    };
    let mut out = Outline::default();
    for u in units {
        let start = u.head.start.min(text.line_start(u.line));
        if !u.test {
            out.helpers.push(Helper {
                start,
                body: u.body,
            });
            continue;
        }
        let (body_key, lines) = shape(text, u.body.clone());
        out.cases.push(Case {
            name: u.name,
            simple: u.simple,
            start,
            body: u.body,
            line: u.line,
            body_key,
            lines,
        });
    }
    out.cases.sort_by_key(|c| c.start);
    out
}

/// A body's key and its lines' keys (masked code without white space; lines of punctuation
/// alone, `}` or `end`, say nothing).
fn shape(text: &Text<'_>, body: Range<usize>) -> (Option<u64>, Vec<u64>) {
    let m = &text.masked;
    let body = body.start.min(m.len())..body.end.min(m.len());
    let squeezed = code::squeeze(&m[body.clone()]);
    let meaningful = |b: &[u8]| {
        let t = b.strip_suffix(b"end").unwrap_or(b);
        t.iter().any(|c| c.is_ascii_alphanumeric() || *c >= 0x80)
    };
    let key = meaningful(&squeezed).then(|| suite::hash_bytes(&squeezed));
    let mut lines: Vec<u64> = m[body]
        .split(|&b| b == b'\n')
        .map(code::squeeze)
        .filter(|l| meaningful(l))
        .map(|l| suite::hash_bytes(&l))
        .collect();
    lines.sort_unstable();
    lines.dedup();
    (key, lines)
}

// ---- The owner of one marker -------------------------------------------------------------------

/// The owner of the marker at `at` (its byte range) in `text`. `runtime`: the marker is a call
/// made while tests run (`test.skip(cond)` in Playwright), not a test's definition.
pub(super) fn owner_of(
    lang: Language,
    text: &Text<'_>,
    outline: &Outline,
    at: Range<usize>,
    runtime: bool,
) -> Owner {
    let m = &text.masked;
    let line = text.line_of(at.start);
    let starts_a_test = |c: &Case| runtime && c.line == line && at.start < c.body.start;
    // The innermost test or helper around it.
    let test = outline
        .cases
        .iter()
        .enumerate()
        .filter(|(_, c)| c.start <= at.start && at.start < c.body.end && !starts_a_test(c))
        .max_by_key(|(_, c)| c.start);
    let helper = outline
        .helpers
        .iter()
        .filter(|h| h.start <= at.start && at.start < h.body.end)
        .max_by_key(|h| h.start);
    match (test, helper) {
        (Some((i, c)), h) if h.is_none_or(|h| h.start <= c.start) => return Owner::Test(i),
        (_, Some(h)) => {
            // A decorator on a Python helper does nothing (pytest ignores marks on fixtures and
            // on functions it does not collect); a skip inside one skips whatever calls it.
            let decorates = lang == Language::Python
                && at.start < h.body.start
                && m[text.line_start(line)..at.start]
                    .trim_ascii_start()
                    .first()
                    == Some(&b'@');
            return if decorates {
                Owner::Nowhere
            } else {
                Owner::Other
            };
        }
        _ => {}
    }
    if let Some(i) = attached(lang, text, outline, at.end) {
        return Owner::Test(i);
    }
    let group = match lang {
        Language::Python => python_group(text, outline, line),
        Language::JavaScript => js_group(text, outline, at.clone()),
        Language::Ruby => ruby_group(text, outline, line),
        Language::Java | Language::CSharp | Language::Php | Language::Swift => {
            class_group(text, outline, at.end)
        }
        _ => None,
    };
    let group = group.unwrap_or_else(|| {
        let all = (0..outline.cases.len()).collect();
        Owner::Group("file".into(), all)
    });
    // A group without a test it can be tied to is judged per file; the file itself is kept,
    // for a new file whose tests no reader can tell.
    match group {
        Owner::Group(ref k, ref tests) if tests.is_empty() && k != "file" => Owner::Other,
        g => g,
    }
}

/// The test a marker ending at `end` stands right above: only attributes or annotations between
/// (brace languages), or only other `@` lines (Elixir's `@tag`).
fn attached(lang: Language, text: &Text<'_>, outline: &Outline, end: usize) -> Option<usize> {
    /// Far more than any real stack of annotations and their arguments.
    const REACH: usize = 4096;
    if matches!(lang, Language::Python | Language::Ruby) {
        return None;
    }
    let i = outline.cases.partition_point(|c| c.start < end);
    let case = outline.cases.get(i)?;
    let gap = text.masked.get(end..case.start)?;
    let ok = if lang == Language::Elixir {
        gap.split(|&b| b == b'\n')
            .skip(1)
            .all(|l| is_blank(l) || l.trim_ascii_start().first() == Some(&b'@'))
    } else {
        gap.len() <= REACH && !gap.iter().any(|b| matches!(b, b';' | b'{' | b'}'))
    };
    ok.then_some(i)
}

/// The tests whose first byte lies in `span`.
fn tests_in(outline: &Outline, span: Range<usize>) -> Vec<usize> {
    (0..outline.cases.len())
        .filter(|&i| span.contains(&outline.cases[i].start))
        .collect()
}

static PY_ASSIGN: LazyLock<Regex> =
    LazyLock::new(|| re(r"^[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=[^=]"));

/// The first line of the Python statement holding `line` (a bracketed statement spans lines).
pub(super) fn py_statement_start(text: &Text<'_>, line: u32) -> u32 {
    // Bracket depth at each line's start, counted from the top: small files only reach here.
    let mut depth = 0i32;
    let mut start = 1;
    for l in 1..=line {
        if depth <= 0 {
            start = l;
            depth = 0;
        }
        if l == line {
            break;
        }
        for &b in text.masked_line(l) {
            match b {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                _ => {}
            }
        }
    }
    start
}

/// The name a Python statement assigns, if it is `name = …` (or `name: T = …`).
pub(super) fn py_assigned(text: &Text<'_>, statement: u32) -> Option<String> {
    let c = PY_ASSIGN.captures(text.masked_line(statement))?;
    Some(String::from_utf8_lossy(&c[1]).into_owned())
}

/// The class (qualified by the classes around it) whose body holds `line`, or `None` at module
/// level; `Err` inside a function.
fn py_class_around(text: &Text<'_>, line: u32) -> Result<Option<String>, ()> {
    let around = code::py_enclosing(text, line);
    if around.iter().any(|d| !d.class) {
        return Err(());
    }
    let names: Vec<String> = around
        .iter()
        .rev()
        .map(|d| String::from_utf8_lossy(d.name).into_owned())
        .collect();
    Ok((!names.is_empty()).then(|| names.join("::")))
}

fn py_class_group(outline: &Outline, class: Option<String>) -> Owner {
    match class {
        None => Owner::Group("file".into(), (0..outline.cases.len()).collect()),
        Some(q) => {
            let prefix = format!("{q}::");
            let tests = (0..outline.cases.len())
                .filter(|&i| outline.cases[i].name.starts_with(&prefix))
                .collect();
            Owner::Group(format!("class {q}"), tests)
        }
    }
}

/// A Python marker outside every function: a decorator on a class covers the class's tests; a
/// statement in a class body (`pytestmark = …`) the class's; one at module level
/// (`pytestmark`, `importorskip`, `skip(allow_module_level=True)`) the file's.
fn python_group(text: &Text<'_>, outline: &Outline, line: u32) -> Option<Owner> {
    let statement = py_statement_start(text, line);
    let code = text.masked_line(statement);
    if code.trim_ascii_start().first() == Some(&b'@') {
        // The definition it decorates: the next statement not a decorator, at the same level.
        let level = indent(code);
        let mut l = statement + 1;
        while l <= text.line_count() {
            let c = text.masked_line(l);
            let s = py_statement_start(text, l);
            if s == l && !is_blank(c) && indent(c) <= level {
                if c.trim_ascii_start().first() == Some(&b'@') {
                    l += 1;
                    continue;
                }
                let def = code::py_def(text, l)?;
                if !def.class {
                    return None;
                }
                let outer = py_class_around(text, l).ok()?;
                let name = String::from_utf8_lossy(def.name).into_owned();
                let q = match outer {
                    Some(o) => format!("{o}::{name}"),
                    None => name,
                };
                return Some(py_class_group(outline, Some(q)));
            }
            l += 1;
        }
        return None;
    }
    let class = py_class_around(text, statement).ok()?;
    Some(py_class_group(outline, class))
}

/// The first string literal's contents between `from` and `to`, from the raw text: a group's
/// name, the same in both versions whatever marker it gains.
fn first_string(text: &Text<'_>, from: usize, to: usize) -> Option<String> {
    let m = &text.masked;
    let to = to.min(m.len());
    let open = from
        + m.get(from..to)?
            .iter()
            .position(|b| matches!(b, b'"' | b'\''))?;
    let close = open + 1 + m[open + 1..to].iter().position(|&b| b == m[open])?;
    Some(String::from_utf8_lossy(&text.raw[open + 1..close]).into_owned())
}

static JS_GROUP: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:describe|context|suite|xdescribe|xcontext)\b"));

/// `describe.skip('x', …)`, `xdescribe(…)`: the tests inside the call.
fn js_group(text: &Text<'_>, outline: &Outline, at: Range<usize>) -> Option<Owner> {
    let m = &text.masked;
    if !JS_GROUP.is_match(&m[at.clone()]) || super::guard::is_reference(m, at.clone()) {
        return None;
    }
    // `xdescribe(` ends with its parenthesis; `describe.skip(` does not.
    let mut open = at.start + m[at.start..].iter().position(|&b| b == b'(')?;
    let mut close = closing(m, open)?;
    // `describe.runIf(cond)('x', …)`: the group is the second call.
    if super::guard::curried(m, at.end).is_some() {
        open = close + 1 + m[close + 1..].iter().position(|&b| b == b'(')?;
        close = closing(m, open)?;
    }
    let name = first_string(text, open, close).unwrap_or_default();
    Some(Owner::Group(
        format!("describe {name}"),
        tests_in(outline, open..close),
    ))
}

static RB_GROUP: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^[ \t]*(?:RSpec[ \t]*\.[ \t]*)?(?:describe|context|feature|xdescribe|xcontext|xfeature)\b")
});

/// `xdescribe 'x' do`, `describe 'x', :skip do`: the tests of the block.
fn ruby_group(text: &Text<'_>, outline: &Outline, line: u32) -> Option<Owner> {
    let code = text.masked_line(line);
    if !RB_GROUP.is_match(code) {
        return None;
    }
    let start = text.line_start(line);
    let name = first_string(text, start, start + code.len()).unwrap_or_default();
    let last = code::py_block(text, line, indent(code)).map_or(line, |(_, l)| l);
    let span = start..text.line_start(last + 1);
    Some(Owner::Group(
        format!("describe {name}"),
        tests_in(outline, span),
    ))
}

static CLASS_WORD: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\b(?:class|object|interface|struct|record|enum|extension|actor)\s+(\w+)")
});

/// An annotation or attribute on a class (`@Disabled class FooTest {`, `[Ignore] class T {`,
/// `@Suite(.disabled) struct S {`): the class's tests.
fn class_group(text: &Text<'_>, outline: &Outline, end: usize) -> Option<Owner> {
    let m = &text.masked;
    let stop = end
        + m[end..]
            .iter()
            .position(|b| matches!(b, b';' | b'{' | b'}'))?;
    if m[stop] != b'{' {
        return None;
    }
    let c = CLASS_WORD.captures(&m[end..stop])?;
    let close = closing(m, stop)?;
    Some(Owner::Group(
        format!("class {}", String::from_utf8_lossy(&c[1])),
        tests_in(outline, stop..close),
    ))
}

// ---- Tests of the languages the test model does not read -----------------------------------

static GTEST: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\b(?:TEST|TEST_F|TEST_P|TYPED_TEST|TYPED_TEST_P)\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)")
});

/// GoogleTest's `TEST(Suite, Name) { … }`. The name leaves out `DISABLED_`, so that disabling a
/// test by renaming it is that test gaining a marker.
fn gtest(text: &Text<'_>) -> Vec<suite::Unit> {
    let m = &text.masked;
    let strip = |b: &[u8]| {
        let s = String::from_utf8_lossy(b).into_owned();
        s.strip_prefix("DISABLED_").map(str::to_owned).unwrap_or(s)
    };
    GTEST
        .captures_iter(m)
        .filter_map(|c| {
            let whole = c.get(0)?;
            let body = braces_after(m, whole.end())?;
            let simple = strip(&c[2]);
            Some(suite::Unit {
                test: true,
                name: format!("{}.{simple}", strip(&c[1])),
                simple,
                line: text.line_of(whole.start()),
                body,
                head: whole.start()..whole.start(),
            })
        })
        .collect()
}

static SWIFT_FUNC: LazyLock<Regex> = LazyLock::new(|| re(r"(@Test\b[^{};]*?)?\bfunc\s+(\w+)\s*\("));

/// XCTest's `func testX()` and Swift Testing's `@Test func x()`.
fn swift(text: &Text<'_>) -> Vec<suite::Unit> {
    let m = &text.masked;
    SWIFT_FUNC
        .captures_iter(m)
        .filter_map(|c| {
            let whole = c.get(0)?;
            let name = c.get(2)?;
            let body = braces_after(m, whole.end())?;
            let simple = String::from_utf8_lossy(name.as_bytes()).into_owned();
            Some(suite::Unit {
                test: c.get(1).is_some() || simple.starts_with("test"),
                name: simple.clone(),
                simple,
                line: text.line_of(name.start()),
                body,
                head: whole.start()..whole.start(),
            })
        })
        .collect()
}

static EX_TEST: LazyLock<Regex> = LazyLock::new(|| re(r#"(?m)^[ \t]*test[ \t]+""#));

/// ExUnit's `test "name" do … end`, its block told by indentation.
fn exunit(text: &Text<'_>) -> Vec<suite::Unit> {
    let m = &text.masked;
    EX_TEST
        .find_iter(m)
        .filter_map(|f| {
            let line = text.line_of(f.start());
            let code = text.masked_line(line);
            let start = text.line_start(line);
            let simple = first_string(text, start, start + code.len())?;
            let last = code::py_block(text, line, indent(code)).map_or(line, |(_, l)| l);
            Some(suite::Unit {
                test: true,
                name: simple.clone(),
                simple,
                line,
                body: start + code.len()..text.line_start(last + 1),
                head: start..start,
            })
        })
        .collect()
}

/// The first `{ … }` after `from`, before any `;`.
fn braces_after(m: &[u8], from: usize) -> Option<Range<usize>> {
    let open = from
        + m.get(from..)?
            .iter()
            .position(|b| matches!(b, b'{' | b';'))?;
    if m[open] != b'{' {
        return None;
    }
    Some(open + 1..closing(m, open)?)
}

static JS_ASSIGN: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?:\b(?:const|let|var)[ \t]+)([A-Za-z_$][\w$]*)[ \t]*=[^=>]"));

/// Where a JavaScript marker named, not called (`cond ? describe : describe.skip`), takes
/// effect: the calls made through it. The parenthesised choice called at once
/// (`(isWin ? describe : describe.skip)('x', fn)`), or each call of the variable it is stored
/// in (`const describeWin = …; describeWin('x', fn)`), each with the group of tests inside
/// the call and where the call is written. `None` when it is neither (passed on, exported).
pub(super) fn js_reference_uses(
    text: &Text<'_>,
    outline: &Outline,
    at: Range<usize>,
) -> Option<Vec<(Range<usize>, Owner)>> {
    let m = &text.masked;
    let stmt = m[..at.start]
        .iter()
        .rposition(|b| matches!(b, b';' | b'{' | b'}' | b'\n'))
        .map_or(0, |p| p + 1);
    let group = |name_at: Range<usize>, open: usize| -> Option<(Range<usize>, Owner)> {
        let close = closing(m, open)?;
        let line = text.line_of(name_at.start);
        // The call is a test itself (`itVm('runs', fn)`), or a group of them.
        if let Some(i) = (0..outline.cases.len())
            .find(|&i| outline.cases[i].line == line && outline.cases[i].body.end <= close + 1)
        {
            return Some((name_at, Owner::Test(i)));
        }
        let name = first_string(text, open, close).unwrap_or_default();
        let tests = tests_in(outline, open..close);
        let owner = if tests.is_empty() {
            Owner::Other
        } else {
            Owner::Group(format!("describe {name}"), tests)
        };
        Some((name_at, owner))
    };
    // `(cond ? describe : describe.skip)(…)`.
    let mut depth = 0i32;
    for i in (stmt..at.start).rev() {
        match m[i] {
            b')' => depth += 1,
            b'(' if depth > 0 => depth -= 1,
            b'(' => {
                let close = closing(m, i)?;
                let next = skip_blank(m, close + 1);
                return (m.get(next) == Some(&b'('))
                    .then(|| group(i..close + 1, next))
                    .flatten()
                    .map(|g| vec![g]);
            }
            _ => {}
        }
    }
    let caps = JS_ASSIGN.captures(&m[stmt..at.start])?;
    let name = caps.get(1)?.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(p) = memchr::memmem::find(&m[from..], name) {
        let (s, e) = (from + p, from + p + name.len());
        from = e;
        let word = |b: Option<&u8>| {
            b.is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'.'))
        };
        if word(s.checked_sub(1).and_then(|k| m.get(k))) || word(m.get(e)) {
            continue;
        }
        let open = skip_blank(m, e);
        if m.get(open) != Some(&b'(') {
            continue;
        }
        out.extend(group(s..e, open));
    }
    Some(out)
}

fn skip_blank(m: &[u8], mut i: usize) -> usize {
    while m.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}
