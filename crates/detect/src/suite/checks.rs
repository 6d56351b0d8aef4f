//! What a test checks: its assertions (one table of starting patterns per language, read by one
//! chain reader), the rows of its parameter tables, the `try` blocks that swallow a failure, and
//! the names it calls.
//!
//! An assertion is read as a chain of named segments with their arguments —
//! `self.assertEqual(a, b)`, `expect(x).not.toBe(5)`, `assertThat(x).isEqualTo(y)`,
//! `Assert.That(x, Is.EqualTo(y))`, `assert_eq!(a, b)`, `$this->assertSame(a, b)` — then its
//! sense is taken out of the names (`Not`, `not`, `False`, `refute`, `_ne`, `NoError`, …), so
//! that `assertNotEqual(a, b)` is `assertEqual(a, b)` negated. Statements that are not calls
//! (Python's `assert`, Go's `if got != want { t.Errorf(…) }`, Ruby's `expect(x).to eq 5` and
//! `assert_equal 5, x`, Kotlin's `x shouldBe 5`) have readers of their own.

use std::ops::Range;
use std::sync::LazyLock;

use regex::bytes::{Regex, RegexBuilder};

mod mock;

use super::text::{self, Source};
use super::{Check, Row, Swallow, Unit, hash, is_literal, is_truthy_literal};
use crate::lang::Language;

fn re(p: &str) -> Regex {
    RegexBuilder::new(p)
        .unicode(false)
        .multi_line(true)
        .build()
        .expect("the test model's patterns are valid (tested)")
}

/// How the text at a pattern's match is read.
#[derive(Clone, Copy)]
enum Shape {
    /// A chain of calls from the match's start.
    Chain,
    /// Python's `assert` statement.
    PyAssert,
    /// Go: a call that fails the test, with the `if` around it.
    GoFail,
    /// Ruby: a chain, then `to`/`not_to` and a matcher without brackets, or a call without
    /// brackets to the end of the line.
    RubyLine,
    /// Kotlin's infix `x shouldBe y`.
    Infix,
    /// A mock's expectation (Mockery, PHPUnit, Prophecy, Mocha): the call that sets it and the
    /// calls chained to it that say how often.
    Mock,
}

struct Starts {
    patterns: Vec<(Regex, Shape)>,
}

fn starts(table: &[(&str, Shape)]) -> Starts {
    Starts {
        patterns: table.iter().map(|(p, s)| (re(p), *s)).collect(),
    }
}

static PYTHON: LazyLock<Starts> = LazyLock::new(|| {
    starts(&[
        (r"^[ \t]*(assert)\b", Shape::PyAssert),
        (r"\b(?:assert\w+|fail(?:If|Unless)\w*)\s*\(", Shape::Chain),
        (r"\b(?:self|cls|pytest)\s*\.\s*fail\s*\(", Shape::Chain),
        (
            r"\bpytest\s*\.\s*(?:raises|warns|deprecated_call)\s*\(",
            Shape::Chain,
        ),
    ])
});
static JAVASCRIPT: LazyLock<Starts> = LazyLock::new(|| {
    starts(&[
        // `expect.poll(fn)` retries until its matcher holds (Playwright, Vitest),
        // `expect.element(locator)` waits for the element, `expect.soft(x)` records a failure
        // and goes on: each is a check like `expect(x)`. (`expect.assertions(n)` is not.)
        (
            r"\bexpect(?:\s*\.\s*(?:poll|element|soft))?\s*\(",
            Shape::Chain,
        ),
        (
            r"(?:^|[^\w.$])(?:assert(?:\s*\.\s*\w+)*)\s*\(",
            Shape::Chain,
        ),
        (
            r"\bt\s*\.\s*(?:is|not|deepEqual|notDeepEqual|like|notLike|true|false|truthy|falsy|throws|throwsAsync|notThrows|notThrowsAsync|regex|notRegex|snapshot|pass|fail|equal|notEqual|same|notSame|ok|notOk|match|strictEqual|notStrictEqual|assert)\s*\(",
            Shape::Chain,
        ),
        (r"\.\s*should\s*\.\s*\w+", Shape::Chain),
    ])
});
static GO: LazyLock<Starts> = LazyLock::new(|| {
    starts(&[
        (
            r"\b(?:t|b|tb|f)\s*\.\s*(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\(",
            Shape::GoFail,
        ),
        (r"\b(?:assert|require)\s*\.\s*[A-Z]\w*\s*\(", Shape::Chain),
        (
            r"\b\w+\s*\.\s*(?:Require|Assert)\s*\(\s*\)\s*\.\s*[A-Z]\w*\s*\(",
            Shape::Chain,
        ),
        (
            r"\b(?:s|suite)\s*\.\s*(?:Equal|NotEqual|EqualValues|True|False|Nil|NotNil|NoError|Error|ErrorIs|Len|Contains|NotContains|Empty|NotEmpty|ElementsMatch|Greater|Less|Zero|NotZero|Panics)\s*\(",
            Shape::Chain,
        ),
        (r"\b(?:c|qt)\s*\.\s*(?:Assert|Check)\s*\(", Shape::Chain),
    ])
});
static RUST: LazyLock<Starts> = LazyLock::new(|| {
    starts(&[
        (
            r"\b(?:assert\w*|debug_assert\w*|prop_assert\w*)\s*!\s*[(\[{]",
            Shape::Chain,
        ),
        (r"\.\s*assert\s*\(\s*\)", Shape::Chain),
        // A test fails by panicking: `panic!`/`unreachable!` in its body are its assertions
        // (kept to tests: in other functions they are the code's own failures).
        (r"\b(?:panic|unreachable)\s*!\s*[(\[{]", Shape::Chain),
    ])
});

/// Rust: the name a failure call that is a check only in a test's own body has.
pub(super) fn is_failure_call(family: &str) -> bool {
    matches!(family, "panic" | "unreachable")
}

static RS_SHOULD_PANIC: LazyLock<Regex> = LazyLock::new(|| re(r"#\s*\[\s*should_panic\b"));

/// Rust: `#[should_panic]` among a test's attributes (in `head`) is a check: the test passes
/// only if the code panics, with the expected message if one is given.
pub(super) fn attribute_checks(lang: Language, src: &Source<'_>, head: Range<usize>) -> Vec<Check> {
    if lang != Language::Rust {
        return Vec::new();
    }
    let m = &src.masked;
    RS_SHOULD_PANIC
        .find_iter(&m[head.clone()])
        .filter_map(|f| {
            let start = head.start + f.start();
            let open = start + m[start..].iter().position(|&b| b == b'[')?;
            let close = text::match_close(m, open)?;
            let inner = head.start + f.end()..close;
            let expected = src
                .norm(inner)
                .trim_start_matches(['(', '='])
                .trim_end_matches(')')
                .to_owned();
            let expected = expected
                .strip_prefix("expected=")
                .unwrap_or(&expected)
                .to_owned();
            let operands = if expected.is_empty() {
                Vec::new()
            } else {
                vec![expected]
            };
            Some(make(
                src,
                start..close + 1,
                "should_panic".to_owned(),
                false,
                operands,
            ))
        })
        .collect()
}
static JAVA: LazyLock<Starts> = LazyLock::new(|| {
    starts(&[
        (
            r"\b(?:(?:Assert|Assertions|Truth|Assume)\s*\.\s*)?(?:assert\w+|fail)\s*[(<]",
            Shape::Chain,
        ),
        (r"\b(?:Mockito\s*\.\s*)?verify\s*\(", Shape::Chain),
        (r"^[ \t]*\S.*?\s(should(?:Not)?\w*)\s+\S", Shape::Infix),
        (r"\.\s*should(?:Not)?[A-Z]\w*\s*\(", Shape::Chain),
    ])
});
static CSHARP: LazyLock<Starts> = LazyLock::new(|| {
    starts(&[
        (
            r"\b(?:Assert|ClassicAssert|CollectionAssert|StringAssert|FileAssert|DirectoryAssert)\s*\.\s*\w+\s*[(<]",
            Shape::Chain,
        ),
        (r"\.\s*Should\s*\(\s*\)", Shape::Chain),
        (r"\.\s*Verify\s*\(", Shape::Chain),
    ])
});
static RUBY: LazyLock<Starts> = LazyLock::new(|| {
    starts(&[
        (r"\bexpect\s*[({]", Shape::RubyLine),
        (r"\bis_expected\b", Shape::RubyLine),
        (r"\.\s*should(?:_not)?\b", Shape::RubyLine),
        (
            r"^[ \t]*(?:assert|refute|flunk)(?:_\w+)?\b",
            Shape::RubyLine,
        ),
        (r"\.\s*(?:must|wont)_\w+", Shape::RubyLine),
        (r"\.\s*(?:expects|stubs)\s*\(", Shape::Mock),
        // RuboCop's cop specs: each expects the cop's offenses or corrections.
        (
            r"^[ \t]*expect_(?:no_)?(?:offenses?|corrections?)\b",
            Shape::RubyLine,
        ),
    ])
});
static PHP: LazyLock<Starts> = LazyLock::new(|| {
    starts(&[
        (
            r"(?:\$this\s*->|\b(?:self|static|parent|Assert)\s*::)\s*(?:assert\w+|fail|expectException\w*)\s*\(",
            Shape::Chain,
        ),
        (r"\bexpect\s*\(", Shape::Chain),
        (
            r"(?:->|::)\s*(?:should[A-Z]\w*|expects|allows)\s*\(",
            Shape::Mock,
        ),
    ])
});

fn table(lang: Language) -> Option<&'static Starts> {
    Some(match lang {
        Language::Python => &PYTHON,
        Language::JavaScript => &JAVASCRIPT,
        Language::Go => &GO,
        Language::Rust => &RUST,
        Language::Java => &JAVA,
        Language::CSharp => &CSHARP,
        Language::Ruby => &RUBY,
        Language::Php => &PHP,
        _ => return None,
    })
}

/// Every assertion that starts inside `ranges` (the bodies of the tests and helpers read), with
/// the bytes it spans, in file order, none inside another.
pub(super) fn find(
    lang: Language,
    src: &Source<'_>,
    ranges: impl Iterator<Item = Range<usize>>,
) -> Vec<(Check, Range<usize>)> {
    let Some(table) = table(lang) else {
        return Vec::new();
    };
    // Nested bodies (a subtest in its test) are read once.
    let mut ranges: Vec<Range<usize>> = ranges.collect();
    ranges.sort_by_key(|r| r.start);
    let mut merged: Vec<Range<usize>> = Vec::new();
    for r in ranges {
        match merged.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => merged.push(r),
        }
    }
    let mut found: Vec<(Check, Range<usize>)> = Vec::new();
    for (pattern, shape) in &table.patterns {
        for r in &merged {
            // The haystack ends with the range, but what precedes it stays visible, so `^` and
            // `\b` read as they do in the whole file.
            let hay = &src.masked[..r.end.min(src.len())];
            let mut at = r.start;
            while let Some(m) = pattern.find_at(hay, at) {
                at = m.end().max(m.start() + 1);
                let start = m.start() + leading_junk(&src.masked[m.range()]);
                if let Some(c) = read(lang, src, start, m.end(), *shape) {
                    found.push(c);
                }
            }
        }
    }
    found.sort_by_key(|(_, r)| (r.start, std::cmp::Reverse(r.end)));
    let mut out: Vec<(Check, Range<usize>)> = Vec::new();
    for (check, span) in found {
        // Go: several failure calls under one `if` are one check.
        if out.last().is_some_and(|(_, last)| span.start < last.end) {
            continue;
        }
        out.push((check, span));
    }
    out
}

/// A pattern may match a byte before what it names (a boundary, a `.`, indentation).
fn leading_junk(m: &[u8]) -> usize {
    m.iter()
        .position(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b == b'.')
        .unwrap_or(0)
}

fn read(
    lang: Language,
    src: &Source<'_>,
    start: usize,
    end: usize,
    shape: Shape,
) -> Option<(Check, Range<usize>)> {
    match shape {
        Shape::Chain => {
            let chain = chain(src, start)?;
            let (mut check, span) = chain_check(lang, src, &chain);
            // Python's mock assertions are methods of the mock: `mailer.send.assert_called_once_with(…)`
            // is about `mailer.send`, as `assert mailer.send.called` is.
            if lang == Language::Python
                && check.family.starts_with("assert_")
                && MOCK_ASSERTS.contains(&check.family.as_str())
                && let Some(from) = receiver(src.masked, start)
            {
                check.operands.insert(0, src.norm(from..start - 1));
                check.key = super::hash(&src.norm(from..span.end));
                check.shown = src.shown(from..span.end);
                check.line = src.line_of(from);
                return Some((check, from..span.end));
            }
            // `.Should()`, `.should.equal`, `.Verify(…)`: the subject stands before, on the line.
            if src.masked.get(start) == Some(&b'.') {
                let line = src.line_range(src.line_of(start) as usize - 1);
                let from =
                    line.start + (line.len() - src.masked[line.clone()].trim_ascii_start().len());
                check.operands.insert(0, src.norm(from.min(start)..start));
                check.vacuous = vacuous(&check.family, check.negated, &check.operands);
                return Some((check, from.min(start)..span.end));
            }
            Some((check, span))
        }
        Shape::PyAssert => py_assert(src, start),
        Shape::GoFail => go_fail(src, start, end),
        Shape::RubyLine => ruby_line(src, start),
        Shape::Infix => infix(src, start),
        Shape::Mock => mock::expectation(src, start),
    }
}

/// `unittest.mock`'s assertions, methods of the mock they are about.
const MOCK_ASSERTS: &[&str] = &[
    "assert_called",
    "assert_called_once",
    "assert_called_with",
    "assert_called_once_with",
    "assert_any_call",
    "assert_has_calls",
    "assert_not_called",
    "assert_awaited",
    "assert_awaited_once",
    "assert_awaited_with",
    "assert_awaited_once_with",
    "assert_any_await",
    "assert_has_awaits",
    "assert_not_awaited",
];

/// Where the receiver of the method at `start` begins (`mailer.send` in
/// `mailer.send.assert_called_once_with`): names, dots, calls and subscripts, on one line.
fn receiver(m: &[u8], start: usize) -> Option<usize> {
    let dot = start.checked_sub(1)?;
    if m.get(dot) != Some(&b'.') {
        return None;
    }
    let mut i = dot;
    while i > 0 {
        let b = m[i - 1];
        if b == b')' || b == b']' {
            i = text::match_open(m, i - 1)?;
        } else if text::is_word(b) || b == b'.' {
            i -= 1;
        } else {
            break;
        }
    }
    (i < dot && m[i] != b'.').then_some(i)
}

/// A chain of named segments, each with its arguments: `a.b(x).c.d(y, z)`.
struct Chain {
    segments: Vec<(String, Vec<Range<usize>>)>,
    span: Range<usize>,
}

fn chain(src: &Source<'_>, start: usize) -> Option<Chain> {
    let m = &src.masked;
    let mut i = start;
    let mut segments = Vec::new();
    let mut end = start;
    loop {
        i = text::skip_ws(m, i);
        // Separators: `.`, `?.`, `->`, `::`, `\`.
        loop {
            match (m.get(i), m.get(i + 1)) {
                (Some(b'.'), _) | (Some(b'\\'), _) => i += 1,
                (Some(b'?'), Some(b'.')) | (Some(b'-'), Some(b'>')) | (Some(b':'), Some(b':')) => {
                    i += 2
                }
                _ => break,
            }
            i = text::skip_ws(m, i);
        }
        let id = text::ident_at(m, i);
        if id.is_empty() {
            break;
        }
        let name = String::from_utf8_lossy(&m[id.clone()]).into_owned();
        i = text::skip_ws(m, id.end);
        if m.get(i) == Some(&b'!') && src.lang == Language::Rust {
            i = text::skip_ws(m, i + 1);
        }
        // Generic arguments: `assertThrows<IOException>(…)`, `Assert.IsType<Foo>(…)`. In C#,
        // Java and Kotlin they say what is expected, and are read as the call's last argument.
        let mut generic = None;
        if m.get(i) == Some(&b'<')
            && let Some(p) = m[i..(i + 80).min(m.len())].iter().position(|&b| b == b'>')
            && matches!(m.get(text::skip_ws(m, i + p + 1)), Some(b'('))
        {
            if matches!(src.lang, Language::CSharp | Language::Java) {
                generic = Some(i + 1..i + p);
            }
            i = text::skip_ws(m, i + p + 1);
        }
        let mut args = Vec::new();
        let mut seg_end = id.end;
        // `(…)`, and for Rust macros and Ruby blocks `[…]`/`{…}`; JS `expect(x)` never `{`.
        let opens: &[u8] = match src.lang {
            Language::Rust | Language::Ruby => b"([{",
            _ => b"(",
        };
        // Ruby: `assert_equal [ :a, :b ], x` passes an array to a call without brackets;
        // `name[…]` indexes, `name (…)` and `name {…}` call.
        let spaced_list = src.lang == Language::Ruby && m.get(i) == Some(&b'[') && i > id.end;
        if m.get(i).is_some_and(|b| opens.contains(b))
            && !spaced_list
            && let Some((parts, after)) = src.args(i)
        {
            args = parts;
            seg_end = after;
            i = after;
        }
        args.extend(generic);
        segments.push((name, args));
        end = seg_end;
        // A chain goes on only through a separator.
        let j = text::skip_ws(m, i);
        let goes_on = matches!(
            (m.get(j), m.get(j + 1)),
            (Some(b'.'), _)
                | (Some(b'?'), Some(b'.'))
                | (Some(b'-'), Some(b'>'))
                | (Some(b':'), Some(b':'))
        ) && !matches!(m.get(j + 1), Some(b'.'));
        if !goes_on {
            break;
        }
        i = j;
    }
    (!segments.is_empty()).then_some(Chain {
        segments,
        span: start..end,
    })
}

/// Names that carry no meaning of their own in a chain.
const RECEIVERS: &[&str] = &["self", "cls", "this", "$this", "static", "parent"];
const FILLERS: &[&str] = &[
    "to", "be", "been", "that", "which", "and", "has", "have", "with", "at", "of", "does", "still",
    "also", "deep", "strict", "itself",
];

/// Takes the sense out of a name: `assertNotEqual` → (`assertEqual`, true).
fn sense(name: &str) -> (String, bool) {
    let mut n = name.to_owned();
    let mut negated = false;
    if matches!(n.as_str(), "not" | "Not" | "not_to" | "to_not") {
        return (String::new(), true);
    }
    let swaps: &[(&str, &str)] = &[
        ("False", "True"),
        ("false", "true"),
        ("Falsy", "Truthy"),
        ("falsy", "truthy"),
        ("refute", "assert"),
        ("wont_", "must_"),
        ("NoError", "Error"),
        ("_not_", "_"),
        ("Not", ""),
        ("not_", ""),
        ("_not", ""),
        ("notOk", "ok"),
        ("notThrows", "throws"),
    ];
    for (from, to) in swaps {
        if let Some(at) = n.find(from) {
            // `Not` only as its own word: `assertNotEqual`, not `Nothing` or `Notify`.
            if *from == "Not" {
                let next = n.as_bytes().get(at + 3);
                if next.is_some_and(|b| b.is_ascii_lowercase()) {
                    continue;
                }
            }
            n.replace_range(at..at + from.len(), to);
            negated = !negated;
            break;
        }
    }
    if let Some(stem) = n.strip_suffix("_ne") {
        n = format!("{stem}_eq");
        negated = !negated;
    }
    if n == "not" {
        // AVA's `t.not(a, b)` is `t.is` negated.
        return ("is".to_owned(), !negated);
    }
    (n, negated)
}

fn chain_check(lang: Language, src: &Source<'_>, c: &Chain) -> (Check, Range<usize>) {
    let mut family = Vec::new();
    let mut negated = false;
    let mut operands = Vec::new();
    let last = c.segments.len().saturating_sub(1);
    for (i, (name, args)) in c.segments.iter().enumerate() {
        let filler = i < last && FILLERS.contains(&name.as_str()) && args.is_empty();
        let keep = !(RECEIVERS.contains(&name.as_str()) || filler);
        if keep {
            let (n, neg) = sense(name);
            negated ^= neg;
            if !n.is_empty() {
                family.push(n);
            }
        }
        for a in args {
            operands.push(src.norm(a.clone()));
        }
    }
    // Python keyword arguments that are messages; Go's `t` first argument.
    operands.retain(|o| {
        !(o.starts_with("msg=") || o.starts_with("message=") || o.starts_with("err_msg="))
    });
    if lang == Language::Go && operands.first().is_some_and(|o| o == "t" || o == "s.T()") {
        operands.remove(0);
    }
    let mut family = family.join(".");
    // Hamcrest and NUnit: `assertThat(x, is(5))`, `Assert.That(x, Is.Not.EqualTo(5))`.
    if (family.ends_with("assertThat") || family.ends_with("That")) && operands.len() >= 2 {
        let matcher = operands.pop().unwrap_or_default();
        let (name, inner, neg) = unwrap_matcher(&matcher);
        family = format!("{family}.{name}");
        negated ^= neg;
        operands.extend(inner);
    }
    let mut check = make(src, c.span.clone(), family, negated, operands);
    if lang == Language::Php && check.family == "expectExceptionObject" {
        check.weight = exception_object_weight(src, c);
    }
    (check, c.span.clone())
}

/// PHPUnit's `expectExceptionObject($e)` expects the class, the message and the code of `$e`:
/// it does what `expectException`, `expectExceptionMessage` and `expectExceptionCode` do. Built
/// in place (`new E('m', 3)`), it weighs the class and each of the message and code given, so
/// that it weighs what the calls it replaces did, and no more: `new E()` expects an empty
/// message, which any message contains. An object built elsewhere weighs all three.
fn exception_object_weight(src: &Source<'_>, c: &Chain) -> usize {
    let m = &src.masked;
    let Some(arg) = c
        .segments
        .iter()
        .find(|(n, _)| n == "expectExceptionObject")
        .and_then(|(_, args)| args.first())
    else {
        return 1;
    };
    let at = text::skip_ws(m, arg.start);
    if !m[at..arg.end].starts_with(b"new") {
        return 3;
    }
    match m[at..arg.end].iter().position(|&b| b == b'(') {
        Some(open) => {
            let given = src.args(at + open).map_or(0, |(a, _)| a.len());
            1 + given.min(2)
        }
        None => 1,
    }
}

/// `Is.Not.EqualTo(5)` → (`EqualTo`, [`5`], true); `not(equalTo(5))` → (`equalTo`, [`5`], true).
fn unwrap_matcher(s: &str) -> (String, Vec<String>, bool) {
    let mut negated = false;
    let mut rest = s;
    loop {
        let before = rest;
        for prefix in [
            "Is.",
            "Does.",
            "Has.",
            "Matchers.",
            "CoreMatchers.",
            "Throws.",
        ] {
            rest = rest.strip_prefix(prefix).unwrap_or(rest);
        }
        if let Some(r) = rest.strip_prefix("Not.") {
            rest = r;
            negated = !negated;
        }
        if rest == before {
            break;
        }
    }
    let Some(i) = rest.find('(').filter(|_| rest.ends_with(')')) else {
        return (rest.to_owned(), Vec::new(), negated);
    };
    let name = &rest[..i];
    let inner = &rest[i + 1..rest.len() - 1];
    let args: Vec<String> = text::split_top(inner.as_bytes(), b',')
        .into_iter()
        .map(|r| inner[r].to_owned())
        .filter(|a| !a.is_empty())
        .collect();
    // Hamcrest's decorators: `is(not(3))` is `is` 3, negated; `is(equalTo(3))` is `equalTo` 3.
    if let [only] = &args[..]
        && matches!(name, "is" | "not")
        && only.ends_with(')')
        && only.starts_with(|c: char| c.is_ascii_lowercase())
    {
        let (inner_name, inner_args, inner_neg) = unwrap_matcher(only);
        let negated = negated ^ inner_neg ^ (name == "not");
        return if inner_name == "not" {
            (name.to_owned(), inner_args, !negated)
        } else {
            (inner_name, inner_args, negated)
        };
    }
    if name == "not" {
        return ("is".to_owned(), args, !negated);
    }
    (name.to_owned(), args, negated)
}

/// A check from its parts: key, shown text, and whether it can fail at all.
fn make(
    src: &Source<'_>,
    span: Range<usize>,
    family: String,
    negated: bool,
    operands: Vec<String>,
) -> Check {
    let norm = src.norm(span.clone());
    let vacuous = vacuous(&family, negated, &operands);
    let conditions = conditions(src.lang, &family, &operands);
    Check {
        line: src.line_of(span.start),
        key: hash(&norm),
        family,
        negated,
        operands,
        shown: src.shown(span),
        vacuous,
        weight: conditions,
    }
}

/// How many conditions an assertion states. An expectation that code raises (or warns) which
/// also says what the error must be states two: that it raises, and what an assertion on the
/// caught error would say. `with pytest.raises(E) as e: …` then `assert "x" in str(e.value)` is
/// the same test as `with pytest.raises(E, match="x"): …`, and so is `assertRaises` and an
/// assertion on `cm.exception` against `assertRaisesRegex`, RSpec's `raise_error(E)` and an
/// expectation on the message against `raise_error(E, "x")`, and Chai's `throw(E, "x")`.
/// A matcher that accepts any error (`match=""`, `match=".*"`, `check=lambda e: True`) states
/// nothing more, so that folding an assertion into it still reads as a loss.
fn conditions(lang: Language, family: &str, operands: &[String]) -> usize {
    let last = family.rsplit('.').next().unwrap_or(family);
    let more = match lang {
        Language::Python => match last {
            "raises" | "warns" => operands
                .iter()
                .map(|o| {
                    let (key, value) = o.split_once('=').unwrap_or(("", ""));
                    match key {
                        "match" => usize::from(!matches!(
                            value.trim_start_matches(['r', 'R', 'b', 'B']),
                            "\"\"" | "\".*\"" | "\"^\"" | "\".*?\"" | "\"(?s).*\"" | "None"
                        )),
                        "check" => predicate_conditions(value),
                        _ => 0,
                    }
                })
                .sum(),
            "assertRaisesRegex" | "assertRaisesRegexp" | "assertWarnsRegex"
            | "assertWarnsRegexp" => usize::from(operands.len() >= 2),
            _ => 0,
        },
        // The subject (the block, the function), the error, and what it must say.
        Language::Ruby => usize::from(last == "raise_error" && operands.len() >= 3),
        Language::JavaScript => usize::from(
            matches!(last, "throw" | "throws" | "Throw")
                && operands.len() >= 3
                && family.starts_with("expect"),
        ),
        _ => 0,
    };
    1 + more
}

/// The conditions a `check=` predicate states: a function, one; a lambda, one per operand of
/// its top-level `and` that is not a constant (`lambda e: e.code == 1 and e.msg == "x"` holds
/// the two assertions it replaces; `lambda e: True` holds none).
fn predicate_conditions(value: &str) -> usize {
    let Some(body) = value
        .strip_prefix("lambda")
        .and_then(|l| l.split_once(':'))
        .map(|(_, body)| body)
    else {
        return 1;
    };
    let mut body = body.trim();
    while body.starts_with('(')
        && body.ends_with(')')
        && text::match_close(body.as_bytes(), 0) == Some(body.len() - 1)
    {
        body = body[1..body.len() - 1].trim();
    }
    // The top-level `and`s of a normalised expression: outside brackets and strings, a word
    // of its own.
    let b = body.as_bytes();
    let word = |i: usize| {
        b.get(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    };
    let (mut depth, mut in_string, mut from) = (0i32, false, 0);
    let mut parts = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' if in_string => i += 1,
            b'"' => in_string = !in_string,
            _ if in_string => {}
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'a' if depth == 0
                && b[i..].starts_with(b"and")
                && !word(i.wrapping_sub(1))
                && !word(i + 3) =>
            {
                parts.push(&body[from..i]);
                from = i + 3;
                i += 2;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(&body[from..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty() && !is_truthy_literal(p))
        .count()
}

/// An assertion that passes whatever the code does.
fn vacuous(family: &str, negated: bool, operands: &[String]) -> bool {
    let f = family.to_ascii_lowercase();
    let last = f.rsplit('.').next().unwrap_or(&f);
    if matches!(last, "pass") {
        return true;
    }
    let Some(subject) = operands.first() else {
        return false;
    };
    // `expect(x)` with no matcher (Jest, Vitest, Chai, RSpec) asserts nothing.
    if f == "expect" && operands.len() == 1 {
        return true;
    }
    // A size is never negative: `assert len(x) >= 0`, `expect(x.length).toBeGreaterThanOrEqual(0)`.
    let at_least = [
        "assert>=",
        "tobegreaterthanorequal",
        "assertgreaterequal",
        "greaterorequal",
        "isgreaterthanorequalto",
    ];
    if !negated
        && at_least.contains(&last)
        && operands.len() >= 2
        && matches!(operands[1].as_str(), "0" | "0.0")
        && is_size(subject)
    {
        return true;
    }
    // Python: `assert (x == 1, "msg")` asserts a tuple, which is always true.
    if last == "assert-truth" && is_tuple(subject) {
        return true;
    }
    let always_true = |s: &str| {
        is_truthy_literal(s)
            || s.ends_with(" or True")
            || s.ends_with("||true")
            || s.ends_with(" or 1")
            || s.ends_with("||1")
    };
    let truth = [
        "assert",
        "asserttrue",
        "istrue",
        "tobetruthy",
        "tobetrue",
        "true",
        "betrue",
        "truthy",
        "ok",
        "assert-truth",
        "go-truth",
        "assertthat.istrue",
        "be_truthy",
    ];
    if (truth.contains(&last) || truth.contains(&f.as_str()))
        && (operands.len() == 1
            || matches!(last, "assert" | "asserttrue" | "true" | "ok" | "istrue"))
    {
        return if negated {
            matches!(
                subject.as_str(),
                "False" | "false" | "0" | "None" | "nil" | "null"
            )
        } else {
            always_true(subject)
        };
    }
    // Two identical values compared for equality: `assertEqual(x, x)`, `expect(1).toBe(1)`.
    let equal = is_equality(last);
    // Only a literal or a bare name is the same value twice: `X(a) == X(a)` builds two values
    // and tests construction and equality, which can fail.
    let same_value = |a: &str, b: &str| a == b && (is_literal(a) || is_bare_name(a));
    // `expect(x === 170 || true).toBe(true)`: a condition made true, compared with `true`.
    let or_true = |s: &str| s.ends_with("||true") || s.ends_with(" or True");
    if equal
        && !negated
        && operands.len() >= 2
        && ((operands[1] == "true" || operands[1] == "True") && or_true(subject)
            || (subject == "true" || subject == "True") && or_true(&operands[1]))
    {
        return true;
    }
    equal && !negated && operands.len() >= 2 && same_value(&operands[0], &operands[1])
}

/// A name alone, as an operand: `result`, `$got`.
fn is_bare_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$')
}

/// The last part of an assertion family that compares for equality: `assertEqual`, `toBe`,
/// `==`.
fn is_equality(last: &str) -> bool {
    [
        "equal",
        "eq",
        "tobe",
        "toequal",
        "tostrictequal",
        "is",
        "same",
        "be",
        "eql",
    ]
    .iter()
    .any(|e| last.contains(e))
        || last.ends_with("==")
}

/// An assignment at a line's start: `result = f(x)`, `const got = f(x);`, `got := F(x)`,
/// `let v: T = f(x);`, with the name and the value (to the line's end or a `;`).
static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^[ \t]*(?:(?:const|let|var|val|auto|final)[ \t]+)?(?:mut[ \t]+)?([A-Za-z_$][\w$]*)[ \t]*(?::[ \t]*[\w.<>\[\], ]+[ \t]*)?:?=([^=\n;][^\n;]*)",
    )
});

/// xUnit's `var ex = Record.Exception(f);` then `Assert.NotNull(ex);`: an assertion about the
/// recorded exception is about `f`, which stands for the name among its operands, so that it
/// reads as the `Assert.Throws<E>(f)` it may replace (which said which exception).
pub(super) fn recorded_exceptions(src: &Source<'_>, body: Range<usize>, checks: &mut [Check]) {
    static RECORD: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"\b(?:var|Exception\??)\s+(\w+)\s*=\s*(?:await\s+)?(Record\s*\.\s*Exception(?:Async)?\s*\()",
        )
    });
    let text = &src.masked[body.clone()];
    if !text.windows(6).any(|w| w == b"Record") {
        return;
    }
    for c in RECORD.captures_iter(text) {
        let (Some(name), Some(call)) = (c.get(1), c.get(2)) else {
            continue;
        };
        let open = body.start + call.end() - 1;
        let Some(close) = text::match_close(src.masked, open) else {
            continue;
        };
        let value = src.norm(body.start + call.start()..close + 1);
        let name = String::from_utf8_lossy(name.as_bytes());
        for check in checks.iter_mut() {
            if let Some(first) = check.operands.first_mut()
                && *first == name
            {
                first.clone_from(&value);
                // `Assert.IsType<E>(ex)` on it says which exception, as `Assert.Throws<E>` does.
                if check.family.ends_with("IsType") || check.family.ends_with("IsAssignableFrom") {
                    check.family = "Assert.Throws".to_owned();
                }
            }
        }
    }
}

/// Marks as vacuous an equality between a name and the very call the test assigned it from:
/// `result = apply_discount(200, 15)` … `assert result == apply_discount(200, 15)` compares
/// the code's answer with itself. `checks` and `spans` are aligned; the last assignment to
/// the name counts, and only when the check follows it directly.
pub(super) fn self_compared(
    src: &Source<'_>,
    body: Range<usize>,
    checks: &mut [Check],
    spans: &[Range<usize>],
) {
    let mut assigned: Option<Vec<(usize, String, Range<usize>)>> = None;
    for (check, span) in checks.iter_mut().zip(spans) {
        let f = check.family.to_ascii_lowercase();
        let last = f.rsplit('.').next().unwrap_or(&f);
        if check.vacuous || check.negated || check.operands.len() < 2 || !is_equality(last) {
            continue;
        }
        let (a, b) = (&check.operands[0], &check.operands[1]);
        let is_call = |s: &str| s.ends_with(')') && s.contains('(') && !s.starts_with('(');
        let (name, call) = match (is_bare_name(a), is_bare_name(b)) {
            (true, false) if is_call(b) => (a, b),
            (false, true) if is_call(a) => (b, a),
            _ => continue,
        };
        let assigned = assigned.get_or_insert_with(|| {
            let text = &src.masked[body.clone()];
            ASSIGNMENT
                .captures_iter(text)
                .filter_map(|c| {
                    let (n, v) = (c.get(1)?, c.get(2)?);
                    Some((
                        body.start + n.start(),
                        String::from_utf8_lossy(n.as_bytes()).into_owned(),
                        body.start + v.start()..body.start + v.end(),
                    ))
                })
                .collect()
        });
        // Only right after the assignment: a call in between may change what the same call
        // returns (`registry.get()` after `registry.set(…)`, a file read after a write).
        let Some((_, _, value)) = assigned
            .iter()
            .rev()
            .find(|(at, n, _)| *at < span.start && n == name)
        else {
            continue;
        };
        let line_start = src.line_range(src.line_of(span.start) as usize - 1).start;
        let between = src.masked.get(value.end..line_start).unwrap_or_default();
        if between
            .iter()
            .all(|b| b.is_ascii_whitespace() || *b == b';')
            && src.norm(value.clone()) == *call
        {
            check.vacuous = true;
        }
    }
}

/// The size of a collection or a string: `len(x)`, `x.length`, `x.len()`, `x.size()`, `x.Count`.
fn is_size(op: &str) -> bool {
    (op.starts_with("len(") && op.ends_with(')'))
        || [
            ".length", ".len()", ".size()", ".size", ".count()", ".Count", ".Length", ".count",
        ]
        .iter()
        .any(|s| op.ends_with(s))
}

/// A parenthesised tuple: `(x==1,"msg")`, a comma inside the outer brackets and outside any
/// other bracket or string, the brackets closing at the end. (Operands are normalised: strings
/// are double-quoted.)
fn is_tuple(op: &str) -> bool {
    let b = op.as_bytes();
    if b.first() != Some(&b'(') {
        return false;
    }
    let (mut depth, mut in_string, mut escaped, mut comma) = (0usize, false, false, false);
    for (i, &c) in b.iter().enumerate() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_string = true,
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return comma && i == b.len() - 1;
                }
            }
            b',' if depth == 1 => comma = true,
            _ => {}
        }
    }
    false
}

// ---- Python's assert statement ------------------------------------------------------------

fn py_assert(src: &Source<'_>, start: usize) -> Option<(Check, Range<usize>)> {
    let m = &src.masked;
    let kw = start + m[start..].iter().position(|&b| b == b'a')?;
    let expr_start = kw + "assert".len();
    // The statement ends at a newline outside brackets, not after a backslash.
    let mut depth = 0i32;
    let mut end = m.len();
    let mut i = expr_start;
    while i < m.len() {
        match m[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'\n' if depth <= 0 && (i == 0 || m[i - 1] != b'\\') => {
                end = i;
                break;
            }
            b';' if depth <= 0 => {
                end = i;
                break;
            }
            _ => {}
        }
        i += 1;
    }
    let expr = expr_start..end;
    let parts = text::split_top(&m[expr.clone()], b',');
    let cond = parts
        .first()
        .map(|r| expr.start + r.start..expr.start + r.end)?;
    let (family, negated, operands) = py_condition(src, cond);
    Some((make(src, kw..end, family, negated, operands), kw..end))
}

/// The first of `ops` (operator, family, negated) at the top level of `cond`, outside brackets:
/// its family, sense and two sides.
fn comparison(
    src: &Source<'_>,
    cond: Range<usize>,
    ops: &[(&[u8], &str, bool)],
) -> Option<(String, bool, Vec<String>)> {
    let m = &src.masked[cond.clone()];
    let mut depth = 0i32;
    for i in 0..m.len() {
        match m[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            _ if depth == 0 => {
                if let Some((op, family, negated)) =
                    ops.iter().find(|(op, _, _)| m[i..].starts_with(op))
                {
                    let left = cond.start..cond.start + i;
                    let right = cond.start + i + op.len()..cond.end;
                    return Some((
                        (*family).to_owned(),
                        *negated,
                        vec![src.norm(left), src.norm(right)],
                    ));
                }
            }
            _ => {}
        }
    }
    None
}

/// The comparison at the top level of a condition: its family, sense and two sides.
fn py_condition(src: &Source<'_>, cond: Range<usize>) -> (String, bool, Vec<String>) {
    let m = &src.masked[cond.clone()];
    let ops: &[(&[u8], &str, bool)] = &[
        (b" is not ", "assert-is", true),
        (b" not in ", "assert-in", true),
        (b"==", "assert==", false),
        (b"!=", "assert==", true),
        (b"<=", "assert<=", false),
        (b">=", "assert>=", false),
        (b" is ", "assert-is", false),
        (b" in ", "assert-in", false),
        (b"<", "assert<", false),
        (b">", "assert>", false),
    ];
    // The first comparison operator outside brackets, and outside a lambda or a conditional.
    let lowest = m.windows(4).any(|w| w == b" or " || w == b" if ");
    if !lowest && let Some(found) = comparison(src, cond.clone(), ops) {
        return found;
    }
    let text = src.norm(cond);
    match text.strip_prefix("not ") {
        Some(rest) => ("assert-truth".to_owned(), true, vec![rest.to_owned()]),
        None => ("assert-truth".to_owned(), false, vec![text]),
    }
}

// ---- Go: `if <failure condition> { t.Errorf(…) }` -------------------------------------------

static GO_IF: LazyLock<Regex> = LazyLock::new(|| re(r"(?:^|\}\s*else)\s*if\s+"));

fn go_fail(src: &Source<'_>, start: usize, end: usize) -> Option<(Check, Range<usize>)> {
    let m = &src.masked;
    let call_start = start + leading_junk(&m[start..end]);
    let open = end - 1;
    let close = text::match_close(m, open)?;
    let call = call_start..close + 1;
    // The block around the call: back to the `{` that is not closed before it.
    let mut depth = 0i32;
    let mut i = call_start;
    let block_open = loop {
        if i == 0 {
            break None;
        }
        i -= 1;
        match m[i] {
            b'}' => depth += 1,
            b'{' if depth == 0 => break Some(i),
            b'{' => depth -= 1,
            _ => {}
        }
    };
    let fail_name = src.norm(call.clone());
    let fail_name = fail_name.split('(').next().unwrap_or("").to_owned();
    if let Some(open) = block_open {
        let line = src.line_range(src.line_of(open) as usize - 1);
        let head = &m[line.start..open];
        if let Some(f) = GO_IF.find(head) {
            let cond_start = line.start + f.end();
            let mut cond = cond_start..open;
            // `if err := f(); err != nil`: the condition is after the last top-level `;`.
            if let Some(last) = text::split_top(&m[cond.clone()], b';').last() {
                cond = cond.start + last.start..cond.start + last.end;
            }
            let (family, negated, operands) = go_condition(src, cond);
            let block_close = text::match_close(m, open).unwrap_or(close);
            let span = line.start + f.start()..block_close + 1;
            let key_text = format!("{}{}", src.norm(cond_start..open), fail_name);
            let mut check = make(src, span.clone(), family, negated, operands);
            check.key = hash(&key_text);
            check.shown = src.shown(cond_start..open);
            check.shown = format!("if {} {{ {fail_name}(…) }}", check.shown);
            return Some((check, span));
        }
    }
    let check = make(src, call.clone(), fail_name, false, Vec::new());
    Some((check, call))
}

/// A failure condition says what must hold, negated: `got != want` checks `got == want`.
fn go_condition(src: &Source<'_>, cond: Range<usize>) -> (String, bool, Vec<String>) {
    let m = &src.masked[cond.clone()];
    let ops: &[(&[u8], &str, bool)] = &[
        (b"!=", "go==", false),
        (b"==", "go==", true),
        (b"<=", "go>", false),
        (b">=", "go<", false),
        (b"<", "go>=", false),
        (b">", "go<=", false),
    ];
    if !m.windows(2).any(|w| w == b"&&" || w == b"||")
        && let Some(found) = comparison(src, cond.clone(), ops)
    {
        return found;
    }
    let text = src.norm(cond);
    let (negated, inner) = match text.strip_prefix('!') {
        Some(rest) => (false, rest.to_owned()),
        None => (true, text),
    };
    // `!reflect.DeepEqual(got, want)`: the call's name and arguments.
    if let Some(open) = inner.find('(')
        && inner.ends_with(')')
        && text::match_close(inner.as_bytes(), open) == Some(inner.len() - 1)
    {
        let name = inner[..open].rsplit('.').next().unwrap_or("").to_owned();
        let args = &inner[open + 1..inner.len() - 1];
        let operands = text::split_top(args.as_bytes(), b',')
            .into_iter()
            .map(|r| args[r].to_owned())
            .collect();
        return (format!("go-{name}"), negated, operands);
    }
    ("go-truth".to_owned(), negated, vec![inner])
}

// ---- Ruby -------------------------------------------------------------------------------------

fn ruby_line(src: &Source<'_>, start: usize) -> Option<(Check, Range<usize>)> {
    let m = &src.masked;
    let line_end = src.line_end(start);
    let start = start + leading_junk(&m[start..line_end]);
    // `.should eq 5` / `.must_equal 5`: the subject is what stands before on the line.
    let (first, chain_start) = if m[start] == b'.' {
        (
            Some(src.line_range(src.line_of(start) as usize - 1).start),
            start + 1,
        )
    } else {
        (None, start)
    };
    let c = chain(src, chain_start)?;
    let mut family = Vec::new();
    let mut negated = false;
    let mut operands = Vec::new();
    if let Some(line_start) = first {
        let subject = src.norm(line_start..start);
        operands.push(
            subject
                .trim_start_matches("_(")
                .trim_end_matches(')')
                .to_owned(),
        );
    }
    for (name, args) in &c.segments {
        let (n, neg) = sense(name);
        negated ^= neg;
        if !n.is_empty() && !["to", "is_expected"].contains(&n.as_str()) {
            family.push(n);
        }
        operands.extend(args.iter().map(|a| src.norm(a.clone())));
    }
    // What follows without brackets: `to eq 5`, `assert_equal 5, x`, `must_equal 5`.
    let rest = text::skip_ws(m, c.span.end);
    let mut end = c.span.end;
    if rest < line_end {
        let mut depth = 0i32;
        let close = m[rest..line_end]
            .iter()
            .position(|&b| {
                match b {
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => depth -= 1,
                    _ => {}
                }
                depth < 0
            })
            .map_or(line_end, |p| rest + p);
        let tail = rest..close;
        let tail_text = &m[tail.clone()];
        let stop = tail_text
            .windows(3)
            .position(|w| w == b" do" || w == b" if")
            .unwrap_or(tail_text.len());
        let tail = tail.start..tail.start + stop;
        let id = text::ident_at(m, tail.start);
        if !id.is_empty() && family.last().is_some_and(|f| f == "to" || f.is_empty())
            || !id.is_empty()
                && c.segments.last().is_some_and(|(n, _)| {
                    matches!(
                        n.as_str(),
                        "to" | "not_to" | "to_not" | "should" | "should_not"
                    )
                })
        {
            // A matcher: `eq 5`, `be_nil`, `include(3)`.
            let (n, neg) = sense(&String::from_utf8_lossy(&m[id.clone()]));
            negated ^= neg;
            family.push(n);
            let after = text::skip_ws(m, id.end);
            let args = if m.get(after) == Some(&b'(') {
                src.args(after).map(|(a, _)| a).unwrap_or_default()
            } else {
                text::split_top(&m[after.min(tail.end)..tail.end], b',')
                    .into_iter()
                    .map(|r| after + r.start..after + r.end)
                    .collect()
            };
            operands.extend(
                args.into_iter()
                    .map(|a| src.norm(a))
                    .filter(|a| !a.is_empty()),
            );
        } else {
            operands.extend(
                text::split_top(&m[tail.clone()], b',')
                    .into_iter()
                    .map(|r| src.norm(tail.start + r.start..tail.start + r.end))
                    .filter(|a| !a.is_empty()),
            );
        }
        end = tail.end;
    }
    let span = first.unwrap_or(start)..end;
    let check = make(src, span.clone(), family.join("."), negated, operands);
    Some((check, span))
}

/// Kotest: `result shouldBe 5`, `list shouldNotContain x`.
fn infix(src: &Source<'_>, start: usize) -> Option<(Check, Range<usize>)> {
    let line = src.line_range(src.line_of(start) as usize - 1);
    let m = &src.masked[line.clone()];
    let at = m.windows(7).position(|w| w == b" should")?;
    let word = text::ident_at(m, at + 1);
    let (family, negated) = sense(&String::from_utf8_lossy(&m[word.clone()]));
    let left = line.start..line.start + at;
    let right = line.start + word.end..line.end;
    let span = line.start + (m.len() - m.trim_ascii_start().len())..line.end;
    let check = make(
        src,
        span.clone(),
        family,
        negated,
        vec![src.norm(left), src.norm(right)],
    );
    Some((check, span))
}

// ---- Rows of parametrized and table tests ---------------------------------------------------

static PY_PARAMETRIZE: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b(?:parametrize|parameterized\s*\.\s*expand|params)\s*\("));
static GO_TABLE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?:\[\]|map\[[^\]\n]*\])\s*(?:struct\s*\{|\*?[\w.]+\s*\{)"));
static GO_RANGE_NAME: LazyLock<Regex> = LazyLock::new(|| re(r"\brange\s+(\w+)\s*\{"));
static RS_CASE: LazyLock<Regex> = LazyLock::new(|| re(r"#\s*\[\s*(?:test_case|case)\s*\("));
static CS_ROW: LazyLock<Regex> =
    LazyLock::new(|| re(r"[\[,]\s*(?:InlineData|TestCase|DataRow)\s*\("));
static JAVA_CSV: LazyLock<Regex> = LazyLock::new(|| re(r"@\s*(?:CsvSource|ValueSource)\s*\("));
static PHP_WITH: LazyLock<Regex> = LazyLock::new(|| re(r"#\[\s*TestWith\s*\("));

/// The rows of a unit's tables, and whether it has a table whose rows cannot be counted: one
/// made by a call (`**cases()`, `make_cases()`), a comprehension, or a name the file does not
/// assign a literal to.
pub(super) fn rows(lang: Language, src: &Source<'_>, unit: &Unit) -> (Vec<Row>, bool) {
    let m = &src.masked;
    let head = unit.head.clone();
    let mut out = Vec::new();
    let mut unread = false;
    match lang {
        Language::Python => {
            for f in PY_PARAMETRIZE.find_iter(&m[head.clone()]) {
                let open = head.start + f.end() - 1;
                let Some((args, _)) = src.args(open) else {
                    continue;
                };
                // `parametrize("a,b", [...])` has the table second; `expand([...])` first.
                let table = if args.len() >= 2 {
                    args[1].clone()
                } else {
                    args.first().cloned().unwrap_or(0..0)
                };
                // `argvalues=[...]` given by its name.
                let at = text::skip_ws(m, table.start);
                let table = if m[at..table.end].starts_with(b"argvalues") {
                    let eq = m[at..table.end].iter().position(|&b| b == b'=');
                    eq.map_or(table.clone(), |e| at + e + 1..table.end)
                } else {
                    table
                };
                let table = assigned(src, table.clone()).unwrap_or(table);
                unread |= !elements(src, table, &mut out);
            }
        }
        Language::JavaScript => {
            if let Some(&b'(') = m.get(head.start)
                && let Some((args, _)) = src.args(head.start)
                && let Some(table) = args.first()
            {
                let table = assigned(src, table.clone()).unwrap_or(table.clone());
                unread |= !elements(src, table, &mut out);
            }
        }
        Language::Go => {
            let ranged = go_ranged_names(m, unit.body.clone());
            for f in GO_TABLE.find_iter(&m[unit.body.clone()]) {
                if !go_ranged_table(m, unit.body.start..unit.body.start + f.start(), &ranged) {
                    continue;
                }
                let mut open = unit.body.start + f.end() - 1;
                if m[unit.body.start + f.start()..open].ends_with(b"struct ")
                    || m[..open].ends_with(b"struct")
                    || f.as_bytes().windows(6).any(|w| w == b"struct")
                {
                    let Some(close) = text::match_close(m, open) else {
                        continue;
                    };
                    open = text::skip_ws(m, close + 1);
                    if m.get(open) != Some(&b'{') {
                        continue;
                    }
                }
                let Some(close) = text::match_close(m, open) else {
                    continue;
                };
                elements(src, open..close + 1, &mut out);
            }
        }
        Language::Rust => each_call_row(src, &RS_CASE, head, &mut out),
        Language::CSharp => each_call_row(src, &CS_ROW, head, &mut out),
        Language::Java => {
            for f in JAVA_CSV.find_iter(&m[head.clone()]) {
                let open = head.start + f.end() - 1;
                let Some(close) = text::match_close(m, open) else {
                    continue;
                };
                // Each string is a row of comma-separated values.
                let mut i = open + 1;
                while let Some((s, after)) = text::string_at(src, i) {
                    if after > close {
                        break;
                    }
                    let fields = s.split(',').map(|f| f.trim().to_owned()).collect();
                    out.push(Row {
                        line: src.line_of(i),
                        key: hash(&s),
                        fields,
                        marks: String::new(),
                        bypassed: None,
                    });
                    i = after;
                    while i < close
                        && matches!(m[i], b',' | b' ' | b'\n' | b'\t' | b'\r' | b'{' | b'}')
                    {
                        i += 1;
                    }
                }
                if out.is_empty() {
                    // `@ValueSource(ints = {1, 2, 3})`.
                    if let Some(b) = m[open..close].iter().position(|&b| b == b'{') {
                        elements(src, open + b..close, &mut out);
                    }
                }
            }
        }
        Language::Php => {
            for f in PHP_WITH.find_iter(&m[head.clone()]) {
                let open = head.start + f.end() - 1;
                if let Some((args, _)) = src.args(open)
                    && let Some(first) = args.first()
                {
                    let r = first.clone();
                    out.push(row(src, r.clone(), inner_fields(src, r)));
                }
            }
        }
        _ => {}
    }
    (out, unread)
}

/// When `table` is a bare name, the literal the file assigns to it at the start of a line
/// (`CASES = [...]`, `const cases = [...]`): a table kept in a variable is still read.
fn assigned(src: &Source<'_>, table: Range<usize>) -> Option<Range<usize>> {
    let m = &src.masked;
    let name = src.norm(table);
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
    {
        return None;
    }
    let pattern = format!(
        r"^[ \t]*(?:(?:export\s+)?(?:const|let|var)\s+)?{}\s*(?::[^=\n]*)?=\s*[\[({{]",
        regex::escape(&name)
    );
    let found = re(&pattern).find_iter(m).last()?;
    let open = found.end() - 1;
    let close = text::match_close(m, open)?;
    Some(open..close + 1)
}

/// The names a Go body ranges over: `for _, tt := range tests {`.
fn go_ranged_names(m: &[u8], body: Range<usize>) -> Vec<&[u8]> {
    GO_RANGE_NAME
        .captures_iter(&m[body])
        .filter_map(|c| c.get(1).map(|n| n.as_bytes()))
        .collect()
}

/// Whether the Go composite literal after `before` is a table: the literal a `for … range`
/// iterates, or one assigned to a name the body ranges over. A literal is a list of values,
/// not of cases, until a loop runs the test once per element: fixture maps, expected slices,
/// arguments and a closure's result type are not rows.
fn go_ranged_table(m: &[u8], before: Range<usize>, ranged: &[&[u8]]) -> bool {
    let b = m[before].trim_ascii_end();
    if b.ends_with(b"range") && !b[..b.len() - 5].last().is_some_and(|&c| is_word(c)) {
        return true;
    }
    let Some(b) = b.strip_suffix(b"=") else {
        return false;
    };
    let b = b.strip_suffix(b":").unwrap_or(b).trim_ascii_end();
    let start = b.iter().rposition(|&c| !is_word(c)).map_or(0, |p| p + 1);
    let name = &b[start..];
    !name.is_empty() && ranged.contains(&name)
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn each_call_row(src: &Source<'_>, pattern: &Regex, head: Range<usize>, out: &mut Vec<Row>) {
    for f in pattern.find_iter(&src.masked[head.clone()]) {
        let open = head.start + f.end() - 1;
        if let Some((args, close)) = src.args(open) {
            let fields = args.into_iter().map(|a| src.norm(a)).collect();
            out.push(row(src, open..close, fields));
        }
    }
}

/// The elements of a list or table literal at `range` (brackets included), each a row; false
/// when `range` holds something else (a call, a name, a comprehension), whose rows are unknown.
fn elements(src: &Source<'_>, range: Range<usize>, out: &mut Vec<Row>) -> bool {
    let m = &src.masked;
    let start = text::skip_ws(m, range.start);
    if !matches!(m.get(start), Some(b'[' | b'(' | b'{')) {
        return false;
    }
    let Some((items, close)) = src.args(start) else {
        return false;
    };
    // `[…] + more`, `[…] * 2`: more than the literal.
    if m[close..range.end.max(close)]
        .iter()
        .any(|b| !b.is_ascii_whitespace())
    {
        return false;
    }
    // `[f(x) for x in …]`, `[*cases, extra]`: rows made as the test runs.
    let made = |r: &Range<usize>| {
        let t = &m[r.clone()];
        t.windows(5).any(|w| w == b" for ") || t.trim_ascii_start().starts_with(b"*")
    };
    if items.iter().any(made) {
        return false;
    }
    for item in items {
        let fields = inner_fields(src, item.clone());
        let mut r = row(src, item.clone(), fields);
        if let Some((key, marks, values)) = param_row(src, item) {
            r.key = key;
            r.marks = marks;
            r.fields = values;
        }
        out.push(r);
    }
    true
}

/// A row wrapped to carry an id or marks, read as the row it wraps: its key, its marks and its
/// values. `pytest.param(1, True, id="one")` is the row `(1, True)`, and `pytest.param("x")`
/// the row `"x"`; its `id=` names the case and does not change it. Its `marks=` do (a case
/// marked to be skipped is not the case that runs), so they stay in the key. pytest's older
/// form, a mark applied to the values (`pytest.mark.skip("py2")(b"x")`), is read the same way.
fn param_row(src: &Source<'_>, item: Range<usize>) -> Option<(u64, String, Vec<String>)> {
    let m = &src.masked;
    let s = text::skip_ws(m, item.start);
    let open = s + m[s..item.end].iter().position(|&b| b == b'(')?;
    let prefix = src.norm(s..open);
    let close = text::match_close(m, open)?;
    let ends = |at: usize| m[at..item.end.max(at)].iter().all(u8::is_ascii_whitespace);
    let (args, marks) = if prefix == "pytest.param" || prefix == "param" {
        if !ends(close + 1) {
            return None;
        }
        let (args, _) = src.args(open)?;
        let args: Vec<String> = args.into_iter().map(|a| src.norm(a)).collect();
        let marks: Vec<&str> = args
            .iter()
            .filter_map(|a| a.strip_prefix("marks="))
            .collect();
        let marks = marks.join(",");
        (args, marks)
    } else if prefix.starts_with("pytest.mark.") {
        let second = text::skip_ws(m, close + 1);
        if m.get(second) != Some(&b'(') || !ends(text::match_close(m, second)? + 1) {
            return None;
        }
        let (args, _) = src.args(second)?;
        let args: Vec<String> = args.into_iter().map(|a| src.norm(a)).collect();
        (args, src.norm(s..close + 1))
    } else {
        return None;
    };
    let values: Vec<String> = args
        .into_iter()
        .filter(|a| !a.starts_with("id=") && !a.starts_with("marks="))
        .collect();
    let mut key = match &values[..] {
        [one] => one.clone(),
        _ => format!("({})", values.join(",")),
    };
    if !marks.is_empty() {
        key.push_str(",marks=");
        key.push_str(&marks);
    }
    Some((hash(&key), marks, values))
}

/// The fields of one row: inside its brackets (a tuple, `pytest.param(…)`, `{…}`), or itself.
fn inner_fields(src: &Source<'_>, item: Range<usize>) -> Vec<String> {
    let m = &src.masked;
    let s = text::skip_ws(m, item.start);
    // `"name": {…}` in a Go map literal: the key is a field too.
    let open = m[s..item.end]
        .iter()
        .position(|&b| matches!(b, b'(' | b'[' | b'{'))
        .map(|p| s + p);
    match open {
        Some(o)
            if text::match_close(m, o).is_some_and(|c| {
                c + 1 >= item.end.min(m.len())
                    || m[c + 1..item.end].iter().all(u8::is_ascii_whitespace)
            }) =>
        {
            let mut fields: Vec<String> = Vec::new();
            let prefix = src.norm(s..o);
            if prefix.ends_with(':') {
                fields.push(prefix.trim_end_matches(':').to_owned());
            }
            if let Some((args, _)) = src.args(o) {
                fields.extend(
                    args.into_iter()
                        .map(|a| src.norm(a))
                        .filter(|f| !f.starts_with("id=") && !f.starts_with("marks=")),
                );
            }
            fields
        }
        _ => vec![src.norm(item)],
    }
}

fn row(src: &Source<'_>, range: Range<usize>, fields: Vec<String>) -> Row {
    Row {
        line: src.line_of(text::skip_ws(src.masked, range.start)),
        key: hash(&src.norm(range)),
        fields,
        marks: String::new(),
        bypassed: None,
    }
}

// ---- Swallowed failures ---------------------------------------------------------------------

static PY_TRY: LazyLock<Regex> = LazyLock::new(|| re(r"^([ \t]*)try[ \t]*:"));
static BRACE_TRY: LazyLock<Regex> = LazyLock::new(|| re(r"\btry\s*\{"));
static RS_CATCH_UNWIND: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?:\blet\s+_\s*=\s*|^[ \t]*|;\s*)(?:std\s*::\s*)?(?:panic\s*::\s*)?catch_unwind\s*\(")
});
static RB_RESCUE: LazyLock<Regex> = LazyLock::new(|| re(r"^[ \t]*rescue\b([^\n]*)"));

/// Exception types whose handler catches a failed assertion, per language.
fn catches_failure(lang: Language, types: &str) -> bool {
    let t = types.trim();
    let any: &[&str] = match lang {
        Language::Python => &["AssertionError", "Exception", "BaseException"],
        Language::Java => &[
            "AssertionError",
            "AssertionFailedError",
            "Throwable",
            "Error",
            "Exception",
            "ComparisonFailure",
            "MultipleFailuresError",
        ],
        Language::CSharp => &[
            "Exception",
            "XunitException",
            "AssertFailedException",
            "AssertionException",
        ],
        Language::Php => &[
            "Exception",
            "Throwable",
            "ExpectationFailedException",
            "AssertionFailedError",
            "Error",
        ],
        Language::Ruby => &[
            "Exception",
            "ExpectationNotMetError",
            "Minitest::Assertion",
            "MiniTest::Assertion",
        ],
        // JavaScript catches everything.
        _ => return true,
    };
    if t.is_empty() || t == "()" {
        // A bare `except:` or C# `catch`; Ruby's bare `rescue` is StandardError, which a failed
        // assertion is not.
        return lang != Language::Ruby;
    }
    any.iter().any(|a| {
        t.match_indices(a).any(|(i, _)| {
            let before = t.as_bytes().get(i.wrapping_sub(1)).copied();
            let after = t.as_bytes().get(i + a.len()).copied();
            !before.is_some_and(|b| b.is_ascii_alphanumeric())
                && !after.is_some_and(|b| b.is_ascii_alphanumeric())
        })
    })
}

/// Whether a handler does something with the failure: raises, fails, asserts.
fn handles(handler: &[u8]) -> bool {
    let words: &[&[u8]] = &[
        b"raise", b"throw", b"fail", b"assert", b"expect", b"flunk", b"rethrow", b"done",
        b"reject", b"Fail",
    ];
    words
        .iter()
        .any(|w| handler.windows(w.len()).any(|x| x == *w))
}

pub(super) fn swallows(
    lang: Language,
    src: &Source<'_>,
    body: Range<usize>,
    checks: &[Range<usize>],
) -> Vec<Swallow> {
    let m = &src.masked;
    let holds_check =
        |r: Range<usize>| checks.iter().any(|c| r.start <= c.start && c.start < r.end);
    let mut out = Vec::new();
    let mut push = |at: usize, key_range: Range<usize>| {
        out.push(Swallow {
            line: src.line_of(at),
            key: hash(&src.norm(key_range)),
        });
    };
    match lang {
        Language::Python => {
            for c in PY_TRY.captures_iter(&m[body.clone()]) {
                let (Some(whole), Some(ind)) = (c.get(0), c.get(1)) else {
                    continue;
                };
                let indent = ind.as_bytes();
                let first = src.line_of(body.start + whole.start()) as usize;
                // The clauses at the try's indentation: (start of line, is an `except`).
                let mut clauses: Vec<(usize, bool)> = Vec::new();
                let mut stop = body.end;
                for i in first..src.line_count() {
                    let r = src.line_range(i);
                    if r.start >= body.end {
                        break;
                    }
                    let l = &m[r.clone()];
                    if l.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    let deeper = l.starts_with(indent)
                        && l.get(indent.len()).is_some_and(u8::is_ascii_whitespace);
                    if deeper {
                        continue;
                    }
                    let rest = l.get(indent.len()..).unwrap_or_default();
                    if rest.starts_with(b"except") {
                        clauses.push((r.start, true));
                    } else if rest.starts_with(b"else") || rest.starts_with(b"finally") {
                        clauses.push((r.start, false));
                    } else {
                        stop = r.start;
                        break;
                    }
                }
                let Some(&(suite_end, _)) = clauses.first() else {
                    continue;
                };
                if !holds_check(body.start + whole.end()..suite_end) {
                    continue;
                }
                for (k, &(at, is_except)) in clauses.iter().enumerate() {
                    let end = clauses.get(k + 1).map_or(stop, |c| c.0);
                    let line_end = src.line_end(at);
                    let clause = String::from_utf8_lossy(&m[at..line_end]).into_owned();
                    let types = clause.trim().trim_start_matches("except");
                    let types = types.split(':').next().unwrap_or("");
                    let types = types.split(" as ").next().unwrap_or("");
                    let code_start = at + indent.len();
                    if is_except
                        && catches_failure(lang, types)
                        && !handles(&m[at + indent.len() + 6..end.max(at + indent.len() + 6)])
                    {
                        push(code_start, code_start..line_end);
                    }
                }
            }
        }
        Language::Ruby => {
            for c in RB_RESCUE.captures_iter(&m[body.clone()]) {
                let (Some(whole), Some(types)) = (c.get(0), c.get(1)) else {
                    continue;
                };
                let at = body.start + whole.start();
                let types = String::from_utf8_lossy(
                    &src.code[body.start + types.start()..body.start + types.end()],
                )
                .into_owned();
                let types = types.split("=>").next().unwrap_or("").to_owned();
                if !catches_failure(lang, &types) || !holds_check(body.start..at) {
                    continue;
                }
                let line = src.line_of(at) as usize;
                let next = src.line_range(line);
                if !handles(&m[next.clone()]) {
                    push(at, at..body.start + whole.end());
                }
            }
        }
        Language::Rust => {
            for f in RS_CATCH_UNWIND.find_iter(&m[body.clone()]) {
                let open = body.start + f.end() - 1;
                if let Some(close) = text::match_close(m, open)
                    && holds_check(open..close)
                {
                    let at = body.start + f.start() + leading_junk(f.as_bytes());
                    push(at, at..open);
                }
            }
        }
        Language::Go => {}
        _ => {
            for f in BRACE_TRY.find_iter(&m[body.clone()]) {
                let open = body.start + f.end() - 1;
                let Some(close) = text::match_close(m, open) else {
                    continue;
                };
                if !holds_check(open..close) {
                    continue;
                }
                let mut i = text::skip_ws(m, close + 1);
                while m[i..].starts_with(b"catch") {
                    let at = i;
                    i = text::skip_ws(m, i + 5);
                    let mut types = String::new();
                    if m.get(i) == Some(&b'(') {
                        let Some(c) = text::match_close(m, i) else {
                            break;
                        };
                        types = String::from_utf8_lossy(&src.code[i + 1..c]).into_owned();
                        i = text::skip_ws(m, c + 1);
                    }
                    if m.get(i) != Some(&b'{') {
                        break;
                    }
                    let Some(end) = text::match_close(m, i) else {
                        break;
                    };
                    if catches_failure(lang, &types) && !handles(&m[i + 1..end]) {
                        push(at, at..i);
                    }
                    i = text::skip_ws(m, end + 1);
                }
            }
        }
    }
    out
}

// ---- Calls ----------------------------------------------------------------------------------

static CALL: LazyLock<Regex> = LazyLock::new(|| re(r"\b[A-Za-z_]\w*\s*!?\s*\("));
/// Ruby calls a method without brackets: a statement that is a name alone, or a name and its
/// arguments (`assert_valid record`, `expect_no_errors`), not an assignment or an operation.
static RUBY_COMMAND: LazyLock<Regex> =
    LazyLock::new(|| re(r"^[ \t]*([a-z_]\w*[?!]?)(?:[ \t]*$|[ \t]+[\w:@$\x22'\[])"));

/// The names a body calls outside its checks, deduplicated.
pub(super) fn calls(src: &Source<'_>, body: Range<usize>, checks: &[Range<usize>]) -> Vec<String> {
    const KEYWORDS: &[&str] = &[
        "if", "for", "while", "switch", "match", "return", "catch", "function", "fn", "func",
        "def", "print", "println", "len", "range", "new", "typeof", "await", "async", "with",
        "elif", "not", "and", "or", "in", "lambda", "super", "format", "str", "int", "list",
        "dict", "set",
    ];
    let mut out: Vec<String> = Vec::new();
    let mut found: Vec<usize> = CALL
        .find_iter(&src.masked[body.clone()])
        .map(|m| m.start())
        .collect();
    if src.lang == Language::Ruby {
        found.extend(
            RUBY_COMMAND
                .captures_iter(&src.masked[body.clone()])
                .filter_map(|c| c.get(1))
                .map(|m| m.start()),
        );
        found.sort_unstable();
    }
    for start in found {
        let at = body.start + start;
        if checks.iter().any(|r| r.contains(&at)) {
            continue;
        }
        // The name is the match without what follows it (`!`, white space, `(`).
        let id = text::ident_at(src.masked, at);
        let name = String::from_utf8_lossy(&src.masked[id]).into_owned();
        if KEYWORDS.contains(&name.as_str()) || out.contains(&name) || constructs(src, at) {
            continue;
        }
        out.push(name);
    }
    out
}

/// Whether the call at `at` makes an object to throw or return (`throw AssertionError(…)`,
/// `new Error(…)`, `raise ValueError(…)`): a constructor, named for its type, not a function
/// that checks.
fn constructs(src: &Source<'_>, at: usize) -> bool {
    let before = src.masked[..at].trim_ascii_end();
    let word_start = before
        .iter()
        .rposition(|b| !b.is_ascii_alphanumeric() && *b != b'_')
        .map_or(0, |i| i + 1);
    matches!(&before[word_start..], b"new" | b"throw" | b"raise")
}

/// Whether two operands differ only as a value: both literals, not equal.
pub(crate) fn literal_change(old: &str, new: &str) -> bool {
    old != new && is_literal(old) && is_literal(new)
}
