//! Tests and helpers of the languages whose blocks are told by brackets: JavaScript and
//! TypeScript (`describe`/`it`/`test` calls of Jest, Vitest, Mocha, Jasmine, node:test, AVA), Go
//! (`func TestX(t *testing.T)`, `t.Run` subtests), Rust (`#[test]` and friends, qualified by
//! `mod`), Java and Kotlin (JUnit 3, 4 and 5), C# (xUnit, NUnit, MSTest) and PHP (PHPUnit).
//!
//! Every bracket is matched on the masked text, so braces in strings and comments play no part.

use std::sync::LazyLock;

use regex::bytes::{Regex, RegexBuilder};

use super::Unit;
use super::text::{self, Source};
use crate::lang::Language;

fn re(p: &str) -> Regex {
    RegexBuilder::new(p)
        .unicode(false)
        .multi_line(true)
        .build()
        .expect("the test model's patterns are valid (tested)")
}

pub(super) fn units(lang: Language, src: &Source<'_>) -> Vec<Unit> {
    let (mut units, groups) = match lang {
        Language::JavaScript => javascript(src),
        Language::Go => (go(src), Vec::new()),
        Language::Rust => rust(src),
        Language::Java | Language::CSharp | Language::Php => classy(lang, src),
        _ => (Vec::new(), Vec::new()),
    };
    qualify(
        &mut units,
        &groups,
        if lang == Language::JavaScript {
            " > "
        } else {
            "::"
        },
    );
    units
}

/// A named block that qualifies the tests inside it: a `describe`, a class, a `mod`.
struct Group {
    name: String,
    span: std::ops::Range<usize>,
}

fn qualify(units: &mut [Unit], groups: &[Group], sep: &str) {
    for u in units.iter_mut() {
        let mut around: Vec<&Group> = groups
            .iter()
            .filter(|g| g.span.start <= u.head.start && u.body.end <= g.span.end)
            .collect();
        if around.is_empty() {
            continue;
        }
        around.sort_by_key(|g| g.span.start);
        let mut name: Vec<&str> = around.iter().map(|g| g.name.as_str()).collect();
        name.push(&u.name);
        u.name = name.join(sep);
    }
}

/// The first `{` at or after `from`, and its match: a function's body.
fn braces_after(src: &Source<'_>, from: usize) -> Option<std::ops::Range<usize>> {
    let m = &src.masked;
    let rel = m
        .get(from..)?
        .iter()
        .position(|&b| b == b'{' || b == b';')?;
    let open = from + rel;
    if m[open] == b';' {
        return None;
    }
    let close = text::match_close(m, open)?;
    Some(open + 1..close)
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

// ---- JavaScript and TypeScript -------------------------------------------------------------

static JS_CALL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:^|[^\w.$])(describe|context|suite|it|test|specify|fit|fdescribe|fcontext|xit|xdescribe|xcontext|xtest)((?:\s*\.\s*\w+)*)\s*([(`])",
    )
});
static JS_FUNCTION: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:\bfunction\s*\*?\s*(\w+)\s*\(|\b(?:const|let|var)\s+(\w+)\s*=\s*(?:async\s+)?(?:function\b[^(]*\(|\([^()]*\)\s*(?::[^=]*)?=>|\w+\s*=>))",
    )
});

/// `const itVm = vmAvailable ? it : it.skip`: a name bound to one of two test functions by a
/// condition, then called as a test (`itVm('runs', fn)`). Both branches must be test (or both
/// group) functions, so a name bound to anything else is never read as one.
static JS_ALIAS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(?:const|let|var)\s+([\w$]+)\s*=\s*[^;\n?]+\?\s*(describe|context|suite|it|test|specify)\b(?:\s*\.\s*\w+)*\s*:\s*(describe|context|suite|it|test|specify)\b(?:\s*\.\s*\w+)*\s*(?:;|$)",
    )
});

/// `(symlinkSupported ? it : it.skip)('follows links', fn)`: one of two test (or group)
/// functions chosen by a condition and called at once. Group 1 is the first branch's function,
/// group 2 the second's, group 3 the bracket that opens the arguments.
static JS_CHOICE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\(\s*[^;()\n?]+\?\s*(describe|context|suite|it|test|specify)\b(?:\s*\.\s*\w+)*\s*:\s*(describe|context|suite|it|test|specify)\b(?:\s*\.\s*\w+)*\s*\)\s*([(`])",
    )
});

/// `import { testWithVmEsm } from '@jest/test-utils'`: the names a file imports.
static JS_IMPORTS: LazyLock<Regex> =
    LazyLock::new(|| re(r"\bimport\s+(?:type\s+)?(?:[\w$]+\s*,\s*)?\{([^}]*)\}\s*from\b"));

/// An imported wrapper of the test function, by its name: `testWithVmEsm`, `itAsync`,
/// `describeIfLinux`. It is read as a test (or group) only where it is called with a string
/// first, like the function it wraps.
fn is_js_wrapper_name(name: &[u8]) -> bool {
    [&b"test"[..], b"it", b"describe"].iter().any(|p| {
        name.strip_prefix(*p)
            .is_some_and(|rest| rest.first().is_some_and(u8::is_ascii_uppercase))
    })
}

fn is_js_group(word: &[u8]) -> bool {
    matches!(
        word,
        b"describe"
            | b"context"
            | b"suite"
            | b"fdescribe"
            | b"fcontext"
            | b"xdescribe"
            | b"xcontext"
    )
}

fn javascript(src: &Source<'_>) -> (Vec<Unit>, Vec<Group>) {
    let m = &src.masked;
    let (mut units, mut groups) = (Vec::new(), Vec::new());
    for c in JS_CALL.captures_iter(m) {
        if let Some(call) = JsCall::of(&c) {
            let group = is_js_group(call.word);
            js_call(src, &call, group, &mut units, &mut groups);
        }
    }
    for c in JS_CHOICE.captures_iter(m) {
        let (Some(a), Some(b), Some(open)) = (c.get(1), c.get(2), c.get(3)) else {
            continue;
        };
        if is_js_group(a.as_bytes()) != is_js_group(b.as_bytes()) {
            continue;
        }
        let call = JsCall {
            word: a.as_bytes(),
            at: a.start(),
            chain: &m[a.end()..a.end()],
            open: open.start(),
        };
        js_call(src, &call, is_js_group(call.word), &mut units, &mut groups);
    }
    // Aliases are rare: a second pattern, for their names only, when a file has any.
    let mut aliases: Vec<(String, bool)> = JS_ALIAS
        .captures_iter(m)
        .filter_map(|c| {
            let (a, b) = (c.get(2)?.as_bytes(), c.get(3)?.as_bytes());
            let name = c.get(1)?.as_bytes();
            // A file that rebinds `it` itself is read by the first pattern already.
            let own = JS_CALL.is_match(&[b" ", name, b"("].concat());
            (!own && is_js_group(a) == is_js_group(b)).then(|| (lossy(name), is_js_group(a)))
        })
        .collect();
    let imported = aliases.len();
    for c in JS_IMPORTS.captures_iter(m) {
        for spec in c[1].split(|&b| b == b',') {
            // `a as b` binds `b`.
            let name = spec
                .split(|b| b.is_ascii_whitespace())
                .rfind(|w| !w.is_empty());
            if let Some(name) = name.filter(|n| is_js_wrapper_name(n)) {
                aliases.push((lossy(name), name.starts_with(b"describe")));
            }
        }
    }
    let names: Vec<String> = aliases.iter().map(|(n, _)| regex::escape(n)).collect();
    if !names.is_empty()
        && let Ok(called) = RegexBuilder::new(&format!(
            r"(?:^|[^\w.$])({})((?:\s*\.\s*\w+)*)\s*([(`])",
            names.join("|")
        ))
        .unicode(false)
        .multi_line(true)
        .build()
    {
        for c in called.captures_iter(m) {
            let Some(call) = JsCall::of(&c) else { continue };
            let group = aliases.iter().any(|(n, g)| *g && n.as_bytes() == call.word);
            // An imported wrapper is a test function only when called with a name.
            let wrapper = !aliases[..imported]
                .iter()
                .any(|(n, _)| n.as_bytes() == call.word);
            if wrapper && text::string_at(src, call.open + 1).is_none() {
                continue;
            }
            js_call(src, &call, group, &mut units, &mut groups);
        }
    }
    for c in JS_FUNCTION.captures_iter(m) {
        let Some(name) = c.get(1).or(c.get(2)) else {
            continue;
        };
        let Some(whole) = c.get(0) else { continue };
        // An arrow function's body is a block only if it starts with `{`; otherwise it is one
        // expression (`const f = (p) => path.resolve(p)`), which ends with its statement and
        // never runs on into the tests after it.
        let after = text::skip_ws(m, whole.end());
        let body = if whole.as_bytes().ends_with(b"=>") && m.get(after) != Some(&b'{') {
            Some(after..expression_end(m, after))
        } else {
            braces_after(src, whole.end())
        };
        let Some(body) = body else {
            continue;
        };
        units.push(Unit {
            test: false,
            name: lossy(name.as_bytes()),
            simple: lossy(name.as_bytes()),
            line: src.line_of(name.start()),
            body,
            head: name.start()..name.start(),
        });
    }
    super::loops::widen(src, &mut units);
    (units, groups)
}

/// The end of the expression that starts at `from`: a `;` or `,` outside its brackets, the
/// bracket that closes one it is inside, or the end of a line unless the next line goes on
/// with an operator or a member (`\n  .then(…)`).
fn expression_end(m: &[u8], from: usize) -> usize {
    let mut depth = 0usize;
    let mut i = from;
    while i < m.len() {
        match m[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' if depth == 0 => return i,
            b')' | b']' | b'}' => depth -= 1,
            b';' | b',' if depth == 0 => return i,
            b'\n' if depth == 0 => {
                let next = text::skip_ws(m, i);
                if !matches!(
                    m.get(next),
                    Some(b'.' | b'?' | b':' | b'&' | b'|' | b'+' | b'-' | b'*' | b'/')
                ) {
                    return i;
                }
            }
            _ => {}
        }
        i += 1;
    }
    m.len()
}

/// A call of a test function as a pattern found it: the function's name and where it starts,
/// the members chained to it (`.skipIf`, `.each`), and the bracket or backtick that opens its
/// arguments.
struct JsCall<'m> {
    word: &'m [u8],
    at: usize,
    chain: &'m [u8],
    open: usize,
}

impl<'m> JsCall<'m> {
    fn of(c: &regex::bytes::Captures<'m>) -> Option<JsCall<'m>> {
        let (word, chain, open) = (c.get(1)?, c.get(2)?, c.get(3)?);
        Some(JsCall {
            word: word.as_bytes(),
            at: word.start(),
            chain: chain.as_bytes(),
            open: open.start(),
        })
    }
}

/// Whether what looks like a call at `word` defines a function of that name instead:
/// `async function test(ctx) { … }` (a playground's entry point, which a harness calls),
/// a method `test(ctx) { … }`. Its parameters are not a test's name.
fn defines_function(m: &[u8], word: usize, open: usize) -> bool {
    let before = m[..word].trim_ascii_end();
    let before = before.strip_suffix(b"*").unwrap_or(before).trim_ascii_end();
    if before.ends_with(b"function")
        && before
            .len()
            .checked_sub(9)
            .is_none_or(|k| !(before[k].is_ascii_alphanumeric() || before[k] == b'_'))
    {
        return true;
    }
    m[open] == b'('
        && text::match_close(m, open).is_some_and(|close| {
            let next = text::skip_ws(m, close + 1);
            m.get(next) == Some(&b'{')
        })
}

/// One call of a test or group function (its chain of members, its bracket or backtick):
/// a test, a group, or nothing.
fn js_call(
    src: &Source<'_>,
    call: &JsCall<'_>,
    group: bool,
    units: &mut Vec<Unit>,
    groups: &mut Vec<Group>,
) {
    let (word, chain, mut open) = (call.at, call.chain, call.open);
    let m = &src.masked;
    // `test()` called with nothing (a fixture's decorator `@(test().x())`) defines no test.
    if defines_function(m, word, open)
        || (m[open] == b'(' && m.get(text::skip_ws(m, open + 1)) == Some(&b')'))
    {
        return;
    }
    let mut head = open..open;
    let each = chain.windows(4).any(|w| w == b"each");
    if m[open] == b'`' {
        // `it.each`-table`(name, fn)`; any other tagged template is not a test.
        if !each {
            return;
        }
        let Some(after) = m[open + 1..]
            .iter()
            .position(|&b| b == b'`')
            .map(|p| open + p + 2)
        else {
            return;
        };
        head = open..after;
        open = text::skip_ws(m, after);
        if m.get(open) != Some(&b'(') {
            return;
        }
    } else if !chain.is_empty() && (each || text::string_at(src, open + 1).is_none()) {
        // A wrapper called first, then the test: `it.each(table)(name, fn)`,
        // `test.skipIf(cond)(name, fn)`, `test.runIf(cond)(…)`, `it.prop([arbs])(name, fn)`,
        // also through members (`test.runIf(cond).skip(name, fn)`). The second call is the
        // test; only `.each` has its table in the first. A first call that starts with a
        // string is the test itself (`it.skip('name', fn).timeout(500)`).
        let Some(after) = text::match_close(m, open).map(|c| c + 1) else {
            return;
        };
        let mut second = text::skip_ws(m, after);
        while m.get(second) == Some(&b'.') {
            let id = text::ident_at(m, text::skip_ws(m, second + 1));
            if id.is_empty() {
                break;
            }
            second = text::skip_ws(m, id.end);
        }
        if m.get(second) == Some(&b'(') {
            head = if each { open..after } else { second..second };
            open = second;
        } else if each {
            return;
        }
    }
    let Some(close) = text::match_close(m, open) else {
        return;
    };
    let name = text::string_at(src, open + 1)
        .map(|(s, _)| s)
        .unwrap_or_else(|| src.shown(open + 1..(open + 1 + 40).min(close)));
    if group {
        groups.push(Group {
            name,
            span: open..close,
        });
        return;
    }
    units.push(Unit {
        test: true,
        simple: name.clone(),
        name,
        line: src.line_of(word),
        body: open + 1..close,
        head,
    });
}

// ---- Go ---------------------------------------------------------------------------------------

static GO_FUNC: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^func\s*(\(\s*\w*\s*\*?\s*(\w+)[^)]*\))?\s*(\w+)\s*(?:\[[^\]]*\])?\s*\(")
});
static GO_RUN: LazyLock<Regex> = LazyLock::new(|| re(r"\b\w+\s*\.\s*Run\s*\("));

fn go(src: &Source<'_>) -> Vec<Unit> {
    let m = &src.masked;
    let mut units = Vec::new();
    for c in GO_FUNC.captures_iter(m) {
        let (Some(whole), Some(name)) = (c.get(0), c.get(3)) else {
            continue;
        };
        let open = whole.end() - 1;
        let Some(close) = text::match_close(m, open) else {
            continue;
        };
        let Some(body) = braces_after(src, close + 1) else {
            continue;
        };
        let simple = lossy(name.as_bytes());
        let test = is_go_test(&simple) && simple != "TestMain";
        let name = match c.get(2) {
            Some(recv) => format!("{}.{simple}", lossy(recv.as_bytes())),
            None => simple.clone(),
        };
        let start = whole.start();
        // Subtests with a literal name are tests of their own: `TestX/name`.
        if test {
            for (sub, at, open, close) in go_subtests(src, body.clone()) {
                units.push(Unit {
                    test: true,
                    name: format!("{name}/{sub}"),
                    simple: sub,
                    line: src.line_of(at),
                    body: open + 1..close,
                    head: open..open,
                });
            }
        }
        units.push(Unit {
            test,
            name,
            simple,
            line: src.line_of(start),
            body,
            head: start..start,
        });
    }
    units
}

/// The `t.Run` calls in `body` whose name is a string literal and nothing else (`"Recovery
/// from "+err.Error()` names no subtest one can tell): the name, where the call starts, and its
/// brackets.
pub(super) fn go_subtests(
    src: &Source<'_>,
    body: std::ops::Range<usize>,
) -> Vec<(String, usize, usize, usize)> {
    let m = &src.masked;
    let mut out = Vec::new();
    for r in GO_RUN.find_iter(&m[body.clone()]) {
        let open = body.start + r.end() - 1;
        let Some((sub, after)) = text::string_at(src, open + 1) else {
            continue;
        };
        if m.get(text::skip_ws(m, after)) != Some(&b',') {
            continue;
        }
        let Some(close) = text::match_close(m, open) else {
            continue;
        };
        out.push((sub, body.start + r.start(), open, close));
    }
    out
}

fn is_go_test(name: &str) -> bool {
    ["Test", "Fuzz", "Example"].iter().any(|p| {
        name.strip_prefix(p).is_some_and(|rest| {
            rest.is_empty() || !rest.starts_with(|c: char| c.is_ascii_lowercase())
        })
    })
}

// ---- Rust -------------------------------------------------------------------------------------

static RS_TEST_ATTR: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"#\s*\[\s*(?:[\w]+\s*::\s*)*(?:test|rstest|test_case|quickcheck|proptest|wasm_bindgen_test|googletest::test)\b",
    )
});
static RS_FN: LazyLock<Regex> = LazyLock::new(|| re(r"\bfn\s+(\w+)\s*(?:<[^>{]*>)?\s*\("));
static RS_MOD: LazyLock<Regex> = LazyLock::new(|| re(r"\bmod\s+(\w+)\s*\{"));

fn rust(src: &Source<'_>) -> (Vec<Unit>, Vec<Group>) {
    let m = &src.masked;
    let attrs: Vec<usize> = RS_TEST_ATTR.find_iter(m).map(|f| f.start()).collect();
    let mut units = Vec::new();
    let mut prev_fn_end = 0;
    for c in RS_FN.captures_iter(m) {
        let (Some(whole), Some(name)) = (c.get(0), c.get(1)) else {
            continue;
        };
        let open = whole.end() - 1;
        let Some(close) = text::match_close(m, open) else {
            continue;
        };
        let Some(body) = braces_after(src, close + 1) else {
            continue;
        };
        // A test attribute between the previous function and this one marks it.
        let upto = attrs.partition_point(|&a| a < whole.start());
        let from = attrs[..upto].partition_point(|&a| a < prev_fn_end);
        let attr = attrs[from..upto].first().copied();
        prev_fn_end = whole.end();
        let simple = lossy(name.as_bytes());
        units.push(Unit {
            test: attr.is_some(),
            name: simple.clone(),
            simple,
            line: src.line_of(whole.start()),
            body,
            head: attr.map_or(whole.start(), |a| attributes_above(src, a))..whole.start(),
        });
    }
    let groups = RS_MOD
        .captures_iter(m)
        .filter_map(|c| {
            let open = c.get(0)?.end() - 1;
            let close = text::match_close(m, open)?;
            Some(Group {
                name: lossy(&c[1]),
                span: open..close,
            })
        })
        .collect();
    (units, groups)
}

/// Where the block of attributes that holds the one at `at` starts: `#[should_panic]` may stand
/// above `#[test]` as well as below it.
fn attributes_above(src: &Source<'_>, at: usize) -> usize {
    let mut start = at;
    let mut line = src.line_of(at) as usize - 1;
    while line > 0 {
        line -= 1;
        let r = src.line_range(line);
        let l = src.masked[r.clone()].trim_ascii();
        if l.starts_with(b"#[") && l.ends_with(b"]") {
            start = r.end - src.masked[r].trim_ascii_start().len();
        } else if !l.is_empty() {
            break;
        }
    }
    start
}

// ---- Java, Kotlin, C#, PHP --------------------------------------------------------------------

static JAVA_TEST_ATTR: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"@\s*(?:[\w.]+\.)?(?:Test|ParameterizedTest|RepeatedTest|TestFactory|TestTemplate|Property|Theory)\b",
    )
});
static CS_TEST_ATTR: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"[\[,]\s*(?:[\w.]+\.)?(?:Fact|Theory|Test|TestCase|TestCaseSource|TestMethod|DataTestMethod|SkippableFact|SkippableTheory)\b",
    )
});
static PHP_TEST_ATTR: LazyLock<Regex> = LazyLock::new(|| re(r"#\[\s*(?:\\?[\w\\]*\\)?Test\b"));
/// A method definition: modifiers or a return type, then a name and its parameters. A bare
/// return type stands on the name's line: in Kotlin, Groovy and Scala a statement ends at the
/// line's end, and `x = a ?: b⏎ assertThat(x)` is two statements, not a method `assertThat`.
static JAVA_METHOD: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:\bfun\s+(?:<[^>]*>\s*)?(?:[\w.]+\.)?(`[^`\n]+`|\w+)|\bfunction\s+(\w+)|(?:\b(?:void|public|private|protected|internal|static|async|override|final|Task|def)\b[\w<>\[\],.?\s]*?|[\w<>\[\]]+[ \t]+)\b(\w+))\s*\(",
    )
});
static CLASS: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b(?:class|object|interface|struct|record|trait)\s+(\w+)"));

fn classy(lang: Language, src: &Source<'_>) -> (Vec<Unit>, Vec<Group>) {
    let m = &src.masked;
    let attr_re: &Regex = match lang {
        Language::Java => &JAVA_TEST_ATTR,
        Language::CSharp => &CS_TEST_ATTR,
        _ => &PHP_TEST_ATTR,
    };
    let attrs: Vec<usize> = attr_re.find_iter(m).map(|f| f.start()).collect();
    let keywords: &[&[u8]] = &[
        b"if",
        b"for",
        b"while",
        b"switch",
        b"catch",
        b"return",
        b"new",
        b"throw",
        b"synchronized",
        b"foreach",
        b"using",
        b"lock",
        b"when",
        b"else",
        b"try",
        b"function",
        b"fun",
        b"class",
        b"sizeof",
        b"typeof",
        b"nameof",
        b"super",
        b"this",
    ];
    let mut units = Vec::new();
    let mut prev_end = 0;
    for c in JAVA_METHOD.captures_iter(m) {
        let Some(whole) = c.get(0) else { continue };
        let Some(name) = c.get(1).or(c.get(2)).or(c.get(3)) else {
            continue;
        };
        if whole.start() < prev_end || keywords.contains(&name.as_bytes()) {
            continue;
        }
        let open = whole.end() - 1;
        let Some(close) = text::match_close(m, open) else {
            continue;
        };
        // A method has a body (Kotlin `= expr` bodies are left alone).
        let Some(body) = method_body(src, close + 1) else {
            continue;
        };
        prev_end = body.start;
        let simple = lossy(name.as_bytes()).trim_matches('`').to_owned();
        let line_start = whole.start();
        // Attributes stand just above their method: only the last few before it are looked at.
        let upto = attrs.partition_point(|&a| a < line_start);
        let from = attrs[..upto].partition_point(|&a| a + ATTRIBUTE_REACH < line_start);
        let attr = attrs[from..upto]
            .iter()
            .copied()
            .filter(|&a| {
                a < line_start && only_annotations(m.get(a..line_start).unwrap_or_default())
            })
            .min();
        // Without an attribute: JUnit 3's `void testX()` (Kotlin `fun testX()`), PHPUnit's
        // `function testX()` or `/** @test */`.
        let prefix = &m[line_start..name.start()];
        let by_name = simple.starts_with("test")
            && match lang {
                Language::Java => {
                    prefix.windows(4).any(|w| w == b"void")
                        || prefix.windows(3).any(|w| w == b"fun")
                }
                Language::Php => true,
                _ => false,
            };
        let php_doc_test = lang == Language::Php && doc_says_test(src, line_start);
        let test = attr.is_some() || by_name || php_doc_test;
        units.push(Unit {
            test,
            name: simple.clone(),
            simple,
            line: src.line_of(name.start()),
            body,
            head: attr.unwrap_or(line_start)..line_start,
        });
    }
    let groups = CLASS
        .captures_iter(m)
        .filter_map(|c| {
            let start = c.get(0)?.end();
            let body = braces_after(src, start)?;
            Some(Group {
                name: lossy(&c[1]),
                span: body,
            })
        })
        .collect();
    (units, groups)
}

/// Whether `between` (from a test attribute to a method) holds nothing but annotations and
/// modifiers: no statement end, no block and no `=` outside an annotation's brackets. Kotlin has
/// no `;`, so a whole test (`@Test fun a() { … }`, `@Test fun b() = x`) may stand between an
/// attribute and the helper after it; its braces or its `=` say it is not an annotation.
fn only_annotations(between: &[u8]) -> bool {
    let mut depth = 0i32;
    for (i, &b) in between.iter().enumerate() {
        match b {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b';' | b'{' | b'}' if depth <= 0 => return false,
            b'=' if depth <= 0 && between.get(i + 1) != Some(&b'>') => return false,
            _ => {}
        }
    }
    true
}

/// The body of the method whose parameter list ends just before `from`: the `{` that follows,
/// with only a return type, `throws`, `where` or a constructor call between. Lines after the
/// first may hold only those (or the `{` itself, as C# and PHP write it): where the line ends a
/// statement (Kotlin, Groovy, Scala), `fun f() = x` is followed by the next member, and a call
/// that looked like a definition (`a shouldBe listOf(1)`) by the next statement, whose braces
/// are not its body. A `;` or a `}` first means there is no body.
fn method_body(src: &Source<'_>, from: usize) -> Option<std::ops::Range<usize>> {
    let m = &src.masked;
    let mut depth = 0i32;
    let mut i = from;
    while i < m.len() {
        match m[i] {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b'{' if depth <= 0 => {
                let close = text::match_close(m, i)?;
                return Some(i + 1..close);
            }
            b';' | b'}' if depth <= 0 => return None,
            b'\n' if depth <= 0 => {
                let next = text::skip_ws(m, i);
                let rest = &m[next..];
                let continues = [&b"{"[..], b"throws", b"where", b":"]
                    .iter()
                    .any(|w| rest.starts_with(w));
                if !continues {
                    return None;
                }
                i = next;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// How far above a method its test attributes may start: far more than any real stack of
/// annotations and their arguments, and a bound on the look-back.
const ATTRIBUTE_REACH: usize = 4096;

/// PHPUnit's `/** @test */` above a method: a comment, so it is read from the raw text of the
/// lines just above.
fn doc_says_test(src: &Source<'_>, at: usize) -> bool {
    let line = src.line_of(at) as usize;
    (line.saturating_sub(6)..line.saturating_sub(1))
        .rev()
        .map(|i| &src.raw[src.line_range(i)])
        .take_while(|l| {
            let t = l.trim_ascii();
            t.starts_with(b"*") || t.starts_with(b"/*") || t.starts_with(b"#[") || t.is_empty()
        })
        .any(|l| l.windows(5).any(|w| w == b"@test"))
}
