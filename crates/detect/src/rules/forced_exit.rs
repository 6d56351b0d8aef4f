//! `forced-exit`: a test file or the test setup newly exits with success, so the run reports
//! green before or instead of running the tests.
//!
//! Flags, on code only: Python `sys.exit(0)`, `sys.exit()`, `os._exit(0)`, `exit(0)`, `quit()`,
//! `raise SystemExit`, `pytest.exit(…, returncode=0)`, `atexit.register(os._exit, 0)` and the
//! same exits through an alias (`import sys as _s`); JS/TS `process.exit(0)` and
//! `process.exit()`, and `process.exitCode = 0` in a `process.on('exit')` handler; Go
//! `os.Exit(0)` in a `_test.go` file (where `os.Exit(m.Run())` belongs) and
//! a `TestMain` that never uses its `*testing.M` (no test runs);
//! Rust `std::process::exit(0)` in a `#[test]` function, a `#[cfg(test)]` module or under
//! `tests/`; Java/Kotlin `System.exit(0)`, `exitProcess(0)`; C# `Environment.Exit(0)`; Ruby
//! `exit`, `exit(0)`, `exit!`, `Kernel.exit(true)`; PHP `exit`, `exit(0)`, `die()`. It reads test
//! files that hold tests (a Python helper script under `tests/` does not), C# files that use a
//! test framework (test projects are directories, `Calc.Tests/`), `conftest.py` and setup files
//! (`jest.setup.js`, `spec_helper.rb`, …), never fixtures or production code.
//!
//! Left alone: non-zero or computed statuses (`sys.exit(1)`, `os.Exit(m.Run())`,
//! `sys.exit(pytest.main())`, `os.Exit(code)`); an exit the test expects
//! (`pytest.raises(SystemExit)`, `assertThrows`); a forked child's `os._exit(0)`; a helper
//! process chosen by an environment variable (Go's `TestHelperProcess`; not a `TestMain` that
//! only prints and exits 0 when a variable is unset, which skips the package); a signal handler;
//! a `main` in a test class; a Python helper function that is not a test, fixture or hook.

use crate::rules::prelude::*;
use std::sync::LazyLock;

use regex::bytes::Regex;

use super::code::{self, re};
use crate::flag::Rule;
use crate::lang::Language;
use crate::paths::Harness;
use crate::scan::{Occurrence, Role, Text};

/// True when the rule reads files of `lang` with this role.
pub(crate) fn applies(lang: Language, role: &Role) -> bool {
    if role.fixture {
        return false;
    }
    match lang {
        // Unit tests live in `#[cfg(test)]` modules of any file: the scan finds them.
        Language::Rust => true,
        Language::Go => role.go_test,
        Language::Python | Language::JavaScript | Language::Ruby | Language::Php => {
            role.is_test || role.harness.is_some()
        }
        Language::Java => role.is_test,
        // Test projects are directories (`Calc.Tests/`) more often than file names: any file
        // that uses a test framework's attributes is read.
        Language::CSharp => true,
        _ => false,
    }
}

/// False when `raw` cannot hold an exit: every pattern contains one of these words.
pub(crate) fn might_match(lang: Language, raw: &[u8]) -> bool {
    static LOWER: LazyLock<super::LiteralSet> = LazyLock::new(|| super::literal_set(&["exit"]));
    static PYTHON: LazyLock<super::LiteralSet> =
        LazyLock::new(|| super::literal_set(&["exit", "quit", "SystemExit"]));
    static UPPER: LazyLock<super::LiteralSet> = LazyLock::new(|| super::literal_set(&["Exit"]));
    static GO: LazyLock<super::LiteralSet> =
        LazyLock::new(|| super::literal_set(&["Exit", "TestMain"]));
    static JAVA: LazyLock<super::LiteralSet> =
        LazyLock::new(|| super::literal_set(&["exit", "halt", "exitProcess"]));
    static PHP: LazyLock<super::LiteralSet> =
        LazyLock::new(|| super::literal_set(&["exit", "die", "EXIT", "DIE", "Exit", "Die"]));
    match lang {
        Language::Python => PYTHON.is_match(raw),
        Language::JavaScript | Language::Rust | Language::Ruby => LOWER.is_match(raw),
        Language::Go => GO.is_match(raw),
        Language::CSharp => UPPER.is_match(raw),
        Language::Java => JAVA.is_match(raw),
        Language::Php => PHP.is_match(raw),
        _ => false,
    }
}

/// Each language's exits with success; group 1 is the call a message shows.
static PY_EXIT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:^|[^.\w])(atexit\s*\.\s*register\s*\(\s*(?:os\s*\.\s*_exit|sys\s*\.\s*exit)\s*(?:,\s*0\s*)?\)|(?:sys\s*\.\s*exit|os\s*\.\s*_exit|exit|quit)\s*\(\s*(?:0|None|False)?\s*\)|raise\s+SystemExit(?:\s*\(\s*(?:0|None|False)?\s*\)|[ \t]*;|[ \t\r]*$)|pytest\s*\.\s*exit\s*\([^)]*\breturncode\s*=\s*0\b[^)]*\))",
    )
});
static JS_EXIT: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?:^|[^.\w$])((?:process|Deno)\s*\.\s*(?:exit|reallyExit)\s*\(\s*0?\s*\))")
});
/// `process.exitCode = 0`: the status the process ends with, whatever the run set.
static JS_EXIT_CODE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?:^|[^.\w$])(process\s*\.\s*exitCode\s*=\s*0\b)"));
/// A handler of the process's end, read raw: `process.on('exit', …)`.
static JS_ON_EXIT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"\bprocess\s*\.\s*(?:on|once|addListener|prependListener)\s*\(\s*["'`](?:exit|beforeExit)["'`]"#,
    )
});
static GO_EXIT: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b((?:os|syscall)\s*\.\s*Exit\s*\(\s*0\s*\))"));
static RS_EXIT: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\b((?:std\s*::\s*)?process\s*::\s*exit\s*\(\s*0\s*\)|libc\s*::\s*_?exit\s*\(\s*0\s*\))")
});
static JAVA_EXIT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(System\s*\.\s*exit\s*\(\s*0\s*\)|Runtime\s*\.\s*getRuntime\s*\(\s*\)\s*\.\s*(?:exit|halt)\s*\(\s*0\s*\)|exitProcess\s*\(\s*0\s*\))",
    )
});
static CS_EXIT: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b(Environment\s*\.\s*Exit\s*\(\s*0\s*\))"));
static RB_EXIT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:^|[;{(|&]|\b(?:then|do|else|begin|and|or)\b)[ \t]*((?:(?:Kernel|Process)[ \t]*\.[ \t]*)?exit!?(?:[ \t]*\([ \t]*(?:0|true)?[ \t]*\)|[ \t]+(?:0|true)\b|[ \t]*(?:\r?$|;|\}|\b(?:if|unless)\b)))",
    )
});
static PHP_EXIT: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?:^|[^$\w>:\\])((?i:exit|die)\s*(?:\(\s*0?\s*\)|;))"));

/// What shows a file holds tests (not a script or helper that happens to sit among them).
static PY_TESTS: LazyLock<Regex> =
    LazyLock::new(|| re(r"\bdef\s+test|\bclass\s+Test|\bpytest\b|\bunittest\b|\bTestCase\b"));
static JS_TESTS: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\b(?:describe|it|test|suite|beforeAll|beforeEach|afterAll|afterEach|before|after)\s*\(")
});
static JAVA_TESTS: LazyLock<Regex> = LazyLock::new(|| {
    re(r"@Test\b|@Before|@After|\bjunit\b|\btestng\b|\bTestCase\b|\bkotest\b|Spec\b")
});
static CS_TESTS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\[\s*(?:Test\w*|Fact|Theory|SetUp|OneTimeSetUp|AssemblyInitialize|ClassInitialize)\b|\bNUnit\b|\bXunit\b|\bMSTest\b",
    )
});
static RB_TESTS: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\b(?:describe|context|it|RSpec|Minitest|Test::Unit|TestCase)\b|\bdef\s+test_")
});
static PHP_TESTS: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\bTestCase\b|\bfunction\s+test|@test\b|\bPHPUnit\b|\b(?:it|test|describe)\s*\(")
});

/// An exit the code around it expects or tests: `pytest.raises(SystemExit)`, `assertThrows`.
static EXPECTED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"SystemExit|[Ee]xitException|ExitError|[Ee]xpect(?:ed)?SystemExit|catchSystemExit|assertThrows|assertRaises|raises\s*\(|toThrow|raise_error|expectException|spyOn|[Mm]ock_?[Ee]xit|exit_?[Mm]ock",
    )
});
/// A signal handler, read on the raw text (signal names are strings).
static SIGNAL: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\bSIG[A-Z]{2,}\b|\bsignal\s*\.\s*(?:signal|Notify)\b|\bSignal\s*\.\s*trap\b|\btrap\s*\(")
});
/// A helper process whose behaviour an environment variable chooses (Go, Rust).
static HELPER_ENV: LazyLock<Regex> =
    LazyLock::new(|| re(r"\bGetenv\b|\bLookupEnv\b|\benv\s*::\s*var(?:_os)?\b"));
/// Rust test code: a `#[test]` function (any test macro) or a `#[cfg(test)]` item.
static RS_TEST_ATTR: LazyLock<Regex> = LazyLock::new(|| {
    re(r"#\s*\[\s*(?:(?:\w+\s*::\s*)*test\b[^\]]*|cfg\s*\(\s*test\s*\)|rstest\b[^\]]*)\]")
});
/// The block a JavaScript module runs only when it is the program's entry point
/// (`if (require.main === module)`, `if (import.meta.main)`, `import.meta.url` against
/// `process.argv[1]`): a runner that imports the file never enters it.
static JS_SCRIPT_ONLY: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\bif\s*\(\s*(?:require\s*\.\s*main\s*===?\s*module\b|module\s*===?\s*require\s*\.\s*main\b|import\s*\.\s*meta\s*\.\s*(?:main|url)\b)",
    )
});
/// node's own runner, which runs each test file as the program's entry point.
static NODE_TEST: LazyLock<Regex> = LazyLock::new(|| re(r#"['"]node:test['"]"#));
/// Python's script-only block: pytest and unittest import a test module, so `__name__` is
/// never `"__main__"` when they run it.
static PY_SCRIPT_ONLY: LazyLock<Regex> = LazyLock::new(|| {
    re(r#"^[ \t]*if\s+(?:__name__\s*==\s*['"]__main__['"]|['"]__main__['"]\s*==\s*__name__)\s*:"#)
});
static MAIN_HEADER: LazyLock<Regex> = LazyLock::new(|| re(r"\b(?:main|Main)\s*\("));
/// A forked child, which ends with an exit whatever the test found.
static FORK: LazyLock<Regex> = LazyLock::new(|| re(r"\bfork\s*\(|\bmultiprocessing\b"));

pub(crate) fn scan(lang: Language, role: &Role, text: &Text<'_>, out: &mut Vec<Occurrence>) {
    let s = &text.masked;
    let holds_tests = |marker: &Regex| role.harness.is_some() || marker.is_match(s);
    match lang {
        Language::Python if holds_tests(&PY_TESTS) => python(role, text, out),
        Language::JavaScript if holds_tests(&JS_TESTS) => {
            // Run as a script, a file of Jest, Mocha or Vitest is not the main module; under
            // `node --test` it is.
            let not_in = (!NODE_TEST.is_match(text.raw)).then_some(&*JS_SCRIPT_ONLY);
            braces(text, &JS_EXIT, role, not_in, out);
            exit_code_on_exit(text, role, out);
        }
        Language::Go => go(text, out),
        Language::Rust => rust(role, text, out),
        Language::Java if holds_tests(&JAVA_TESTS) => {
            braces(text, &JAVA_EXIT, role, Some(&MAIN_HEADER), out);
        }
        Language::CSharp if holds_tests(&CS_TESTS) => {
            braces(text, &CS_EXIT, role, Some(&MAIN_HEADER), out);
        }
        Language::Ruby if holds_tests(&RB_TESTS) => braces(text, &RB_EXIT, role, None, out),
        Language::Php if holds_tests(&PHP_TESTS) => braces(text, &PHP_EXIT, role, None, out),
        _ => {}
    }
}

/// The exits `pattern` finds, with where each call starts and ends.
fn exits<'t>(text: &'t Text<'_>, pattern: &Regex) -> Vec<(usize, usize, &'t [u8])> {
    pattern
        .captures_iter(&text.masked)
        .filter_map(|c| c.get(1))
        .map(|m| (m.start(), m.end(), &text.masked[m.start()..m.end()]))
        .collect()
}

/// True when the exit at `start..end` is one the code around it means: expected by the test, or
/// in a signal handler. Looks at its line and the three above, the call itself left out.
fn excused(text: &Text<'_>, start: usize, end: usize) -> bool {
    let line = text.line_of(start);
    let first = line.saturating_sub(3).max(1);
    let from = text.line_start(first).min(start);
    let to = text
        .line_start(text.line_of(end) + 1)
        .min(text.masked.len())
        .max(end);
    let around = |s: &[u8], re: &Regex| re.is_match(&s[from..start]) || re.is_match(&s[end..to]);
    around(&text.masked, &EXPECTED) || around(text.raw, &SIGNAL)
}

fn push(text: &Text<'_>, start: usize, end: usize, message: String, out: &mut Vec<Occurrence>) {
    out.push(text.occurrence(Rule::ForcedExit, "exit-success", start, end, message));
}

/// `process.exitCode = 0` in a handler of the process's end: whatever failed, the run ends
/// with success. Elsewhere (a CLI test resetting the code it set) it decides nothing.
fn exit_code_on_exit(text: &Text<'_>, role: &Role, out: &mut Vec<Occurrence>) {
    for (start, end, call) in exits(text, &JS_EXIT_CODE) {
        let on_exit = code::enclosing_braces(&text.masked, start)
            .iter()
            .any(|&(open, h)| JS_ON_EXIT.is_match(&text.raw[h..open.min(text.raw.len())]));
        if !on_exit {
            continue;
        }
        let message = format!(
            "forces the run's exit status to success when it ends: `{}` in a handler of the process's exit {}",
            code::shown(call, 60),
            where_harness(role)
        );
        push(text, start, end, message, out);
    }
}

fn where_harness(role: &Role) -> &'static str {
    match role.harness {
        Some(Harness::Conftest) => "in conftest.py",
        Some(Harness::RunnerConfig) => "in the test runner's configuration",
        Some(Harness::Setup) => "in a test setup file",
        None => "in a test file",
    }
}

// ---- Python ----------------------------------------------------------------------------------

/// `import sys as _s` / `from os import _exit as quit_now`: the names the exits go by.
static PY_ALIAS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?m)^[ \t]*(?:import[ \t]+(sys|os)[ \t]+as[ \t]+(\w+)|from[ \t]+(?:sys|os)[ \t]+import[ \t]+(?:exit|_exit)[ \t]+as[ \t]+(\w+))",
    )
});

/// Exits through an alias: `_s.exit(0)` after `import sys as _s`, `bye()` after
/// `from sys import exit as bye`.
fn python_aliased<'t>(text: &'t Text<'_>) -> Vec<(usize, usize, &'t [u8])> {
    let s = &text.masked;
    let mut calls: Vec<Vec<u8>> = Vec::new();
    for c in PY_ALIAS.captures_iter(s) {
        if let (Some(module), Some(alias)) = (c.get(1), c.get(2)) {
            let method: &[u8] = if module.as_bytes() == b"os" {
                b"_exit"
            } else {
                b"exit"
            };
            calls.push([alias.as_bytes(), b".", method].concat());
        } else if let Some(alias) = c.get(3) {
            calls.push(alias.as_bytes().to_vec());
        }
    }
    let mut out = Vec::new();
    for call in calls {
        for (at, _) in s.windows(call.len()).enumerate().filter(|(i, w)| {
            *w == call.as_slice()
                && (*i == 0
                    || !(s[i - 1].is_ascii_alphanumeric() || matches!(s[i - 1], b'_' | b'.')))
        }) {
            let rest = code::squeeze(&s[at + call.len()..s.len().min(at + call.len() + 16)]);
            let succeeds = [b"()".as_slice(), b"(0)", b"(None)", b"(False)"]
                .iter()
                .any(|a| rest.starts_with(a));
            if succeeds {
                let close = s[at..]
                    .iter()
                    .position(|&b| b == b')')
                    .map_or(s.len(), |p| at + p + 1);
                out.push((at, close, &s[at..close]));
            }
        }
    }
    out
}

fn python(role: &Role, text: &Text<'_>, out: &mut Vec<Occurrence>) {
    let conftest = role.harness == Some(Harness::Conftest);
    let mut forks = None;
    let mut found = exits(text, &PY_EXIT);
    found.extend(python_aliased(text));
    for (start, end, call) in found {
        if excused(text, start, end) || py_script_only(text, start) {
            continue;
        }
        // A forked child ends with `os._exit`, whatever the test found.
        if call.starts_with(b"os") && *forks.get_or_insert_with(|| FORK.is_match(&text.masked)) {
            continue;
        }
        let line = text.line_of(start);
        let defs = code::py_enclosing(text, line);
        let function = defs.iter().find(|d| !d.class);
        let when = match function {
            None => "before the tests run",
            Some(d) => match python_role(text, d) {
                PyFn::Setup => "before the tests run",
                PyFn::Test => "in the middle of the run",
                PyFn::Other if conftest => "before the tests run",
                PyFn::Other => continue,
            },
        };
        let place = match function {
            Some(d) if !conftest => format!("in `{}`", String::from_utf8_lossy(d.name)),
            _ => where_harness(role).to_owned(),
        };
        let message = format!(
            "exits with success {when}: `{}` {place}",
            code::shown(call, 60)
        );
        push(text, start, end, message, out);
    }
}

/// Whether the code at `at` sits in an `if __name__ == "__main__":` block, which the runner
/// never enters (read from the raw line: the condition's string is masked).
fn py_script_only(text: &Text<'_>, at: usize) -> bool {
    let line = text.line_of(at);
    let opens_script_block = |l: u32| {
        let start = text.line_start(l);
        let len = text.masked_line(l).len();
        PY_SCRIPT_ONLY.is_match(&text.raw[start..(start + len).min(text.raw.len())])
    };
    if code::py_block_lines(text, line).any(opens_script_block) {
        return true;
    }
    // On the `if` line itself: `if __name__ == "__main__": sys.exit(0)`.
    let start = text.line_start(line);
    PY_SCRIPT_ONLY.is_match(&text.raw[start..at.min(text.raw.len())])
}

enum PyFn {
    /// A fixture, a hook or a set-up method: runs before the tests.
    Setup,
    /// A test or a tear-down: runs with the tests.
    Test,
    /// A helper, a `main`, a child process's target.
    Other,
}

fn python_role(text: &Text<'_>, d: &code::PyDef<'_>) -> PyFn {
    let name = d.name;
    let starts = |p: &[u8]| name.starts_with(p);
    if starts(b"setUp")
        || starts(b"setup")
        || starts(b"asyncSetUp")
        || starts(b"pytest_")
        || code::py_decorators(text, d.line)
            .iter()
            .any(|l| l.windows(7).any(|w| w == b"fixture"))
    {
        PyFn::Setup
    } else if starts(b"test") || starts(b"tearDown") || starts(b"teardown") {
        PyFn::Test
    } else {
        PyFn::Other
    }
}

// ---- Go --------------------------------------------------------------------------------------

fn go(text: &Text<'_>, out: &mut Vec<Occurrence>) {
    static FUNC_NAME: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*func\s*(?:\([^)]*\)\s*)?(\w+)"));
    static TEST_MAIN: LazyLock<Regex> =
        LazyLock::new(|| re(r"\bfunc\s+TestMain\s*\(\s*(\w+)\s+\*\s*testing\s*\.\s*M\s*\)\s*\{"));
    // A `TestMain` that never hands its `*testing.M` to anything: `m.Run()` is never called, no
    // test runs, and the package passes.
    for c in TEST_MAIN.captures_iter(&text.masked) {
        let (Some(m), Some(param)) = (c.get(0), c.get(1)) else {
            continue;
        };
        let open = m.end() - 1;
        let Some(close) = code::closing(&text.masked, open) else {
            continue;
        };
        let body = &text.masked[open..close];
        let name = param.as_bytes();
        let used = body.windows(name.len()).enumerate().any(|(i, w)| {
            w == name
                && !body
                    .get(i.wrapping_sub(1))
                    .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
                && !body
                    .get(i + name.len())
                    .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        });
        // One that exits by itself is judged by its status (`os.Exit(0)` above).
        let exits_itself = body.windows(5).any(|w| w == b"Exit(");
        if !used && !exits_itself {
            let start = m.start() + 5;
            push(
                text,
                start,
                close + 1,
                format!(
                    "`TestMain` never calls `{}.Run()`: no test of the package runs, and the run passes",
                    String::from_utf8_lossy(name)
                ),
                out,
            );
        }
    }
    for (start, end, call) in exits(text, &GO_EXIT) {
        if excused(text, start, end) {
            continue;
        }
        let blocks = code::enclosing_braces(&text.masked, start);
        // The top-level function: a closure inside it is part of it.
        let Some(&(open, header)) = blocks.last() else {
            continue;
        };
        let close = code::closing(&text.masked, open).unwrap_or(text.masked.len());
        let name = FUNC_NAME
            .captures(&text.masked[header..open])
            .and_then(|c| c.get(1))
            .map(|m| m.as_bytes());
        // A helper process chosen by the environment does its work before exiting; a
        // `TestMain` whose exit under some variable only says so skips the whole package.
        let skips_package = name == Some(b"TestMain".as_slice())
            && blocks.len() >= 2
            && only_says_and_exits(&text.masked[blocks[0].0 + 1..start]);
        if HELPER_ENV.is_match(&text.masked[open..close]) && !skips_package {
            continue;
        }
        let call = code::shown(call, 60);
        let message = match name {
            Some(b"TestMain") => format!(
                "exits with success instead of running the tests: `{call}` in `TestMain`, where `os.Exit(m.Run())` belongs"
            ),
            Some(n) => format!(
                "exits with success in the middle of the run: `{call}` in `{}`",
                String::from_utf8_lossy(n)
            ),
            None => format!("exits with success in the middle of the run: `{call}` in a test file"),
        };
        push(text, start, end, message, out);
    }
}

/// True when the Go statements before an exit in its block only print or log.
fn only_says_and_exits(before: &[u8]) -> bool {
    static SAYS: LazyLock<Regex> =
        LazyLock::new(|| re(r"\A\s*(?:(?:fmt|log)\s*\.\s*\w+\s*\([^\n]*\)\s*;?\s*)*\z"));
    SAYS.is_match(before)
}

// ---- Rust ------------------------------------------------------------------------------------

fn rust(role: &Role, text: &Text<'_>, out: &mut Vec<Occurrence>) {
    let s = &text.masked;
    let found = exits(text, &RS_EXIT);
    if found.is_empty() {
        return;
    }
    // Outside `tests/`, only test code counts: the bodies that follow a test attribute.
    let regions: Vec<(usize, usize)> = if role.is_test {
        vec![(0, s.len())]
    } else {
        RS_TEST_ATTR
            .find_iter(s)
            .filter_map(|m| {
                let rest = &s[m.end()..];
                let open = m.end() + rest.iter().position(|&b| b == b'{' || b == b';')?;
                (s[open] == b'{').then(|| (open, code::closing(s, open).unwrap_or(s.len())))
            })
            .collect()
    };
    for (start, end, call) in found {
        let Some(&(open, close)) = regions.iter().find(|(a, b)| (*a..*b).contains(&start)) else {
            continue;
        };
        let region = &s[open..close.min(s.len())];
        // A helper process chosen by the environment, or a forked child.
        if excused(text, start, end) || HELPER_ENV.is_match(region) || FORK.is_match(region) {
            continue;
        }
        let message = format!(
            "exits with success in the middle of the run: `{}` in a test",
            code::shown(call, 60)
        );
        push(text, start, end, message, out);
    }
}

// ---- Java, Kotlin, C#, JS/TS, Ruby, PHP ------------------------------------------------------

/// Any exit in the file, except those excused or inside a `main` (`not_in` matches its header).
fn braces(
    text: &Text<'_>,
    pattern: &Regex,
    role: &Role,
    not_in: Option<&Regex>,
    out: &mut Vec<Occurrence>,
) {
    for (start, end, call) in exits(text, pattern) {
        if excused(text, start, end) {
            continue;
        }
        if let Some(header) = not_in {
            let in_main = code::enclosing_braces(&text.masked, start)
                .iter()
                .any(|&(open, h)| header.is_match(&text.masked[h..open]));
            if in_main {
                continue;
            }
        }
        let when = if role.harness.is_some() {
            "before the tests run"
        } else {
            "before or instead of running the tests"
        };
        let message = format!(
            "exits with success {when}: `{}` {}",
            code::shown(call, 60),
            where_harness(role)
        );
        push(text, start, end, message, out);
    }
}

/// The rule's registry entry and what the detector runs for it.
pub(crate) const RULE: RuleInfo = RuleInfo {
    rule: Rule::ForcedExit,
    id: "forced-exit",
    severity: Severity::Warning,
    source: Source::Detector,
    languages: "Python, JS/TS, Go, Rust, Java/Kotlin, C#, Ruby, PHP",
    summary: "A test file or test setup newly exits with success before or instead of running the tests.",
    help: "A run that exits with status 0 reports success whatever failed. Flags `sys.exit(0)`, \
           `os._exit(0)`, `exit()`, `quit()`, `raise SystemExit`, `process.exit(0)`, \
           `process.exitCode = 0` in a `process.on('exit')` handler, \
           `atexit.register(os._exit, 0)`, the same through an alias (`import sys as s`), \
           `os.Exit(0)` (where `os.Exit(m.Run())` belongs), a `TestMain` that never calls \
           `m.Run()`, `std::process::exit(0)` in a \
           test, `System.exit(0)`, `Environment.Exit(0)`, Ruby's `exit`/`exit!` and PHP's \
           `exit`/`die` newly added to a test file, `conftest.py` or a setup file. Non-zero \
           exits, `os.Exit(m.Run())`, `sys.exit(pytest.main())`, exits a test expects \
           (`pytest.raises(SystemExit)`), forked children, helper processes chosen by an \
           environment variable (not a `TestMain` that only prints and exits 0 when a \
           variable is unset), signal handlers and production code are left alone.",
    judges_tests: true,
    passes: &[Pass::Lines(Reads::new(reads, prefilter), lines)],
};

fn reads(file: &File<'_>) -> bool {
    file.lang.is_some_and(|lang| applies(lang, &file.role))
}

fn prefilter(file: &File<'_>, raw: &[u8]) -> bool {
    file.lang.is_some_and(|lang| might_match(lang, raw))
}

fn lines(lines: &Lines<'_, '_>, found: &mut Found) {
    let (lang, role) = (lines.lang, &lines.file.role);
    lines.each(found, might_match, |t, out| scan(lang, role, t, out));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{Spec::*, lines, run};

    fn added(path: &str, new: &str) -> Vec<u32> {
        lines(&run(&[Add(path, new)]), Rule::ForcedExit)
    }

    fn modified(path: &str, old: &str, new: &str) -> Vec<u32> {
        lines(&run(&[Modify(path, old, new)]), Rule::ForcedExit)
    }

    fn message(path: &str, new: &str) -> String {
        let r = run(&[Add(path, new)]);
        r.flags
            .iter()
            .find(|f| f.rule == Rule::ForcedExit)
            .map(|f| f.message.clone())
            .unwrap_or_default()
    }

    #[test]
    fn patterns_compile() {
        for p in [
            &PY_EXIT,
            &JS_EXIT,
            &GO_EXIT,
            &RS_EXIT,
            &JAVA_EXIT,
            &CS_EXIT,
            &RB_EXIT,
            &PHP_EXIT,
            &PY_TESTS,
            &JS_TESTS,
            &JAVA_TESTS,
            &CS_TESTS,
            &RB_TESTS,
            &PHP_TESTS,
            &EXPECTED,
            &SIGNAL,
            &HELPER_ENV,
            &RS_TEST_ATTR,
            &MAIN_HEADER,
        ] {
            LazyLock::force(p);
        }
    }

    #[test]
    fn python_conftest_and_test_modules() {
        let old = "import pytest\n\n\n@pytest.fixture\ndef db():\n    return 1\n";
        for (new, line) in [
            ("import sys\nsys.exit(0)\nimport pytest\n", 2),
            ("import sys\n\nsys.exit()\n", 3),
            ("import os\nos._exit(0)\n", 2),
            ("exit(0)\n", 1),
            ("quit()\n", 1),
            ("raise SystemExit\n", 1),
            ("raise SystemExit(0)\n", 1),
            ("import sys\nsys.exit(None)\n", 2),
            (
                "def pytest_configure(config):\n    import os\n    os._exit(0)\n",
                3,
            ),
            (
                "import pytest\n\ndef pytest_sessionstart(session):\n    pytest.exit('done', returncode=0)\n",
                4,
            ),
            ("def _bail():\n    import sys\n    sys.exit(0)\n", 3),
            (
                "import atexit\nimport os\n\natexit.register(os._exit, 0)\n",
                4,
            ),
            ("import sys as _s\n\n_s.exit(0)\n", 3),
            ("from os import _exit as bye\n\nbye(0)\n", 3),
        ] {
            assert_eq!(added("tests/conftest.py", new), vec![line], "{new}");
        }
        let new = "import pytest\nimport sys\n\nsys.exit(0)\n\n@pytest.fixture\ndef db():\n    return 1\n";
        assert_eq!(modified("tests/conftest.py", old, new), vec![4]);
        for (new, line) in [
            (
                "import sys\nsys.exit(0)\n\ndef test_a():\n    assert f() == 1\n",
                2,
            ),
            (
                "import unittest, sys\n\nclass T(unittest.TestCase):\n    def setUp(self):\n        sys.exit(0)\n\n    def test_a(self):\n        self.assertEqual(f(), 1)\n",
                5,
            ),
            (
                "import os\n\ndef test_a():\n    os._exit(0)\n    assert f() == 1\n",
                4,
            ),
            (
                "import pytest, os\n\n@pytest.fixture(autouse=True)\ndef stop():\n    os._exit(0)\n\ndef test_a():\n    assert f()\n",
                5,
            ),
            // Beside a script-only block, at module level: pytest runs this.
            (
                "import unittest, sys\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(f(), 1)\n\nif __name__ == '__main__':\n    main()\nsys.exit(0)\n",
                9,
            ),
        ] {
            assert_eq!(added("tests/test_calc.py", new), vec![line], "{new}");
        }
    }

    #[test]
    fn python_lookalikes() {
        for new in [
            "import sys, pytest\n\nif __name__ == '__main__':\n    sys.exit(pytest.main([__file__]))\n",
            "import unittest\n\nclass T(unittest.TestCase):\n    pass\n\nif __name__ == '__main__':\n    unittest.main()\n",
            "import sys\n\ndef test_a():\n    assert f()\n\nsys.exit(1)\n",
            "import sys\n\ndef test_a():\n    assert f()\n\nsys.exit(main())\n",
            "import pytest, sys\n\ndef test_exit():\n    with pytest.raises(SystemExit):\n        sys.exit(0)\n",
            "import os\n\ndef test_fork():\n    pid = os.fork()\n    if pid == 0:\n        os._exit(0)\n    os.waitpid(pid, 0)\n",
            "import sys, signal\n\ndef test_a():\n    assert f()\n\ndef _handler(sig, frame):\n    sys.exit(0)\n",
            "import sys\n\ndef test_a():\n    parser.exit(0)\n    self.exit()\n",
            "def test_a():\n    # sys.exit(0)\n    s = 'sys.exit(0)'\n    assert f()\n",
            "import pytest\n\ndef test_a():\n    pytest.exit('stop')\n",
        ] {
            assert!(added("tests/test_cli.py", new).is_empty(), "{new}");
        }
        // The script-only block: pytest and unittest import the module, so `__name__` is
        // never `"__main__"` under them and the exit never runs.
        for new in [
            "import unittest, sys\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(f(), 1)\n\nif __name__ == '__main__':\n    sys.exit(0)\n",
            "import sys\n\n\ndef test_a():\n    assert 1 == 1\n\n\nif __name__ == \"__main__\":\n    run_benchmarks()\n    if ok:\n        sys.exit(0)\n",
            "import sys\n\ndef test_a():\n    assert f()\n\nif __name__ == '__main__': sys.exit(0)\n",
        ] {
            assert!(added("tests/test_cli.py", new).is_empty(), "{new}");
        }
        // A helper script among the tests, which the tests run: not a test module.
        assert!(added("tests/scripts/ok.py", "import sys\nsys.exit(0)\n").is_empty());
        assert!(added("tests/fixtures/exit_zero.py", "import sys\nsys.exit(0)\n").is_empty());
        // Production code is out of scope.
        assert!(added("src/cli.py", "import sys\nsys.exit(0)\n").is_empty());
        assert!(
            added(
                "src/cli.py",
                "import sys\n\nif __name__ == '__main__':\n    sys.exit(main())\n"
            )
            .is_empty()
        );
    }

    #[test]
    fn python_moved_or_reindented_is_not_new() {
        let old = "import sys\nsys.exit(0)\n\ndef test_a():\n    assert f()\n";
        let new = "import sys\nif True:\n    sys.exit(0)\n\ndef test_a():\n    assert f()\n";
        assert!(modified("tests/test_a.py", old, new).is_empty());
        let r = run(&[
            Modify(
                "tests/test_a.py",
                old,
                "import sys\n\ndef test_a():\n    assert f()\n",
            ),
            Add(
                "tests/test_b.py",
                "import sys\nsys.exit(0)\n\ndef test_b():\n    assert g()\n",
            ),
        ]);
        assert!(lines(&r, Rule::ForcedExit).is_empty(), "{:?}", r.flags);
    }

    #[test]
    fn javascript() {
        let test = "describe('calc', () => {\n  it('adds', () => {\n    expect(add(1, 2)).toBe(3);\n  });\n});\n";
        let new = format!("process.exit(0);\n{test}");
        assert_eq!(modified("src/calc.test.ts", test, &new), vec![1]);
        let new = format!("{test}afterAll(() => {{\n  process.exit()\n}});\n");
        assert_eq!(modified("src/calc.test.ts", test, &new), vec![7]);
        assert_eq!(added("jest.setup.js", "process.exit(0)\n"), vec![1]);
        // The exit status forced when the process ends.
        assert_eq!(
            added(
                "jest.setup.js",
                "process.env.TZ = 'UTC';\nprocess.on(\"exit\", () => {\n  process.exitCode = 0;\n});\n"
            ),
            vec![3]
        );
        // A CLI test resetting the code it set, or reading it: no exit forced.
        assert!(
            added(
                "test/cli.test.js",
                "afterEach(() => {\n  process.exitCode = 0;\n});\ntest('fails', () => {\n  run(['bad']);\n  expect(process.exitCode).toBe(1);\n});\n"
            )
            .is_empty()
        );
        // A global teardown in the test directory, named as the runner's configuration names it.
        assert_eq!(
            added(
                "test/teardown.js",
                "module.exports = async () => {\n  process.exit(0);\n};\n"
            ),
            vec![2]
        );
        assert!(
            added(
                "src/teardown.js",
                "module.exports = () => process.exit(0);\n"
            )
            .is_empty()
        );
        assert_eq!(
            added("web/src/setupTests.ts", "\nprocess.exit(0);\n"),
            vec![2]
        );
        assert_eq!(added("vitest.setup.ts", "Deno.exit(0)\n"), vec![1]);
        assert!(message("jest.setup.js", "process.exit(0)\n").contains("before the tests run"));
        for new in [
            format!("{test}process.exit(1);\n"),
            format!("{test}process.exit(failures ? 1 : 0);\n"),
            format!("{test}// process.exit(0)\nconst s = 'process.exit(0)';\n"),
            format!("{test}process.on('SIGTERM', () => {{\n  process.exit(0);\n}});\n"),
            format!(
                "{test}it('exits', () => {{\n  expect(() => process.exit(0)).toThrow();\n}});\n"
            ),
            format!("{test}jest.spyOn(process, 'exit');\nprocess.exit(0);\n"),
        ] {
            assert!(added("src/calc.test.js", &new).is_empty(), "{new}");
        }
        assert!(
            added("bin/cli.js", "process.exit(0)\n").is_empty(),
            "production"
        );
        assert!(
            added("test/fixtures/exit.js", "process.exit(0)\n").is_empty(),
            "a fixture the tests run"
        );
        assert!(
            added("test/child.js", "doWork();\nprocess.exit(0);\n").is_empty(),
            "holds no tests"
        );
    }

    #[test]
    fn javascript_script_only_blocks() {
        // Jest, Mocha and Vitest import a test file: it is never the program's entry point,
        // and its script-only block never runs.
        let old = "const assert = require('assert')\n\ndescribe('cli', function () {\n  it('parses', function () {\n    assert.equal(parse('-v'), 'verbose')\n  })\n})\n";
        for block in [
            "if (require.main === module) {\n  main().then(() => process.exit(0))\n}\n",
            "if (module === require.main) {\n  process.exit(0)\n}\n",
            "if (import.meta.url === `file://${process.argv[1]}`) {\n  process.exit(0)\n}\n",
            "if (import.meta.main) {\n  process.exit(0)\n}\n",
        ] {
            let new = format!("{old}\n{block}");
            assert!(
                modified("test/cli.test.js", old, &new).is_empty(),
                "{block}"
            );
        }
        // Beside the block, at module level: flagged.
        let new =
            format!("{old}\nif (require.main === module) {{\n  main()\n}}\nprocess.exit(0)\n");
        assert_eq!(modified("test/cli.test.js", old, &new), vec![12]);
        // `node --test` runs each file as the entry point: there the block runs.
        let old = "const test = require('node:test')\n\ntest('parses', () => {\n  assert.equal(parse('-v'), 'verbose')\n})\n";
        let new = format!("{old}\nif (require.main === module) {{\n  process.exit(0)\n}}\n");
        assert_eq!(modified("test/cli.test.js", old, &new), vec![8]);
    }

    #[test]
    fn go() {
        let old = "package calc\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) {\n\tos.Exit(m.Run())\n}\n";
        let new = "package calc\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) {\n\tos.Exit(0)\n}\n";
        assert_eq!(modified("calc/main_test.go", old, new), vec![9]);
        let r = run(&[Modify("calc/main_test.go", old, new)]);
        assert_eq!(
            r.flags[0].message,
            "exits with success instead of running the tests: `os.Exit(0)` in `TestMain`, where `os.Exit(m.Run())` belongs"
        );
        assert_eq!(
            added(
                "calc/a_test.go",
                "package calc\n\nfunc TestA(t *testing.T) {\n\tos.Exit(0)\n}\n"
            ),
            vec![4]
        );
        // A TestMain that skips the whole package, with success, when a variable is unset.
        let env_skip = "package calc\n\nfunc TestMain(m *testing.M) {\n\tif os.Getenv(\"DATABASE_URL\") == \"\" {\n\t\tfmt.Println(\"DATABASE_URL not set; skipping\")\n\t\tos.Exit(0)\n\t}\n\tos.Exit(m.Run())\n}\n";
        assert_eq!(added("calc/main_test.go", env_skip), vec![6]);
        // One whose re-executed binary does a helper's work under a variable is no skip.
        let helper = "package calc\n\nfunc TestMain(m *testing.M) {\n\tif os.Getenv(\"BE_CRASHER\") == \"1\" {\n\t\tcrash()\n\t\tos.Exit(0)\n\t}\n\tos.Exit(m.Run())\n}\n";
        assert!(added("calc/main_test.go", helper).is_empty());
        // A TestMain that never runs the tests.
        let setup_only = "package calc\n\nimport \"testing\"\n\nfunc TestMain(m *testing.M) {\n\t// setup only\n\tsetup()\n}\n";
        assert_eq!(added("calc/main_test.go", setup_only), vec![5]);
        assert_eq!(modified("calc/main_test.go", old, setup_only), vec![5]);
        // One that hands `m` on runs them there.
        assert!(
            added(
                "calc/main_test.go",
                "package calc\n\nfunc TestMain(m *testing.M) {\n\tos.Exit(run(m))\n}\n"
            )
            .is_empty()
        );
        for new in [
            old.to_owned(),
            old.replace("os.Exit(m.Run())", "code := m.Run()\n\tos.Exit(code)"),
            old.replace("os.Exit(m.Run())", "os.Exit(1)"),
            "package x\n\nfunc TestHelperProcess(t *testing.T) {\n\tif os.Getenv(\"GO_WANT_HELPER_PROCESS\") != \"1\" {\n\t\treturn\n\t}\n\tfmt.Println(\"ok\")\n\tos.Exit(0)\n}\n".to_owned(),
            "package x\n\n// os.Exit(0)\nvar s = \"os.Exit(0)\"\n".to_owned(),
        ] {
            assert!(added("calc/main_test.go", &new).is_empty(), "{new}");
        }
        assert!(
            added(
                "cmd/tool/main.go",
                "package main\n\nfunc main() {\n\tos.Exit(0)\n}\n"
            )
            .is_empty()
        );
        assert!(
            added(
                "calc/testdata/main_test.go",
                "package x\n\nfunc TestMain(m *testing.M) {\n\tos.Exit(0)\n}\n"
            )
            .is_empty()
        );
    }

    #[test]
    fn rust() {
        let new = "pub fn f() {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn a() {\n        std::process::exit(0);\n    }\n}\n";
        assert_eq!(added("src/lib.rs", new), vec![7]);
        assert_eq!(
            added("src/lib.rs", "#[test]\nfn a() {\n    process::exit(0)\n}\n"),
            vec![3]
        );
        assert_eq!(
            added(
                "tests/it.rs",
                "#[test]\nfn a() {\n    std::process::exit(0);\n}\n"
            ),
            vec![3]
        );
        assert_eq!(
            added(
                "src/lib.rs",
                "#[tokio::test]\nasync fn a() {\n    std::process::exit(0);\n}\n"
            ),
            vec![3]
        );
        for new in [
            // A CLI's own exit, in a file that also has tests.
            "fn main() {\n    if help() {\n        std::process::exit(0);\n    }\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn a() {}\n}\n",
            "#[test]\nfn a() {\n    std::process::exit(1);\n}\n",
            "#[test]\nfn a() {\n    // std::process::exit(0);\n}\n",
            "#[test]\nfn child() {\n    if std::env::var(\"CHILD\").is_ok() {\n        std::process::exit(0);\n    }\n}\n",
            "#[test]\nfn forks() {\n    match unsafe { libc::fork() } {\n        0 => unsafe { libc::_exit(0) },\n        pid => wait(pid),\n    }\n}\n",
        ] {
            assert!(added("src/main.rs", new).is_empty(), "{new}");
        }
    }

    #[test]
    fn java_kotlin_csharp() {
        let java = "import org.junit.jupiter.api.Test;\n\nclass CalcTest {\n  @Test void adds() {\n    System.exit(0);\n  }\n}\n";
        assert_eq!(added("src/test/java/CalcTest.java", java), vec![5]);
        let kt = "import kotlin.test.Test\n\nclass CalcTest {\n  @Test fun adds() {\n    exitProcess(0)\n  }\n}\n";
        assert_eq!(added("src/test/kotlin/CalcTest.kt", kt), vec![5]);
        let cs = "using Xunit;\n\npublic class CalcTests {\n  [Fact]\n  public void Adds() {\n    Environment.Exit(0);\n  }\n}\n";
        assert_eq!(added("Calc.Tests/CalcTests.cs", cs), vec![6]);
        let setup = "using NUnit.Framework;\n\n[SetUpFixture]\npublic class Setup {\n  [OneTimeSetUp]\n  public void Go() { Environment.Exit(0); }\n}\n";
        assert_eq!(added("Calc.Tests/Setup.cs", setup), vec![6]);
        for (path, new) in [
            ("src/test/java/CalcTest.java", java.replace("exit(0)", "exit(1)")),
            (
                "src/test/java/CalcTest.java",
                "import org.junit.jupiter.api.Test;\n\nclass CalcTest {\n  @Test void a() {}\n  public static void main(String[] args) {\n    System.exit(0);\n  }\n}\n".to_owned(),
            ),
            (
                "src/test/java/CalcTest.java",
                "import org.junit.jupiter.api.Test;\n\nclass CalcTest {\n  @Test void a() {\n    assertThrows(ExitException.class, () -> System.exit(0));\n  }\n}\n".to_owned(),
            ),
            ("src/main/java/Cli.java", java.to_owned()),
            ("Calc.Tests/CalcTests.cs", cs.replace("Exit(0)", "Exit(2)")),
            (
                "Calc/Program.cs",
                "public static class Program {\n  public static void Quit() {\n    Environment.Exit(0);\n  }\n}\n".to_owned(),
            ),
        ] {
            assert!(added(path, &new).is_empty(), "{path}: {new}");
        }
    }

    #[test]
    fn ruby() {
        let spec =
            "RSpec.describe Calc do\n  it 'adds' do\n    expect(add(1, 2)).to eq(3)\n  end\nend\n";
        for (pre, line) in [
            ("exit\n", 1),
            ("exit(0)\n", 1),
            ("exit!\n", 1),
            ("Kernel.exit(true)\n", 1),
            ("exit 0\n", 1),
            ("exit if ENV['CI']\n", 1),
        ] {
            assert_eq!(
                added("spec/calc_spec.rb", &format!("{pre}{spec}")),
                vec![line],
                "{pre}"
            );
        }
        assert_eq!(
            added("spec/spec_helper.rb", "require 'calc'\nexit\n"),
            vec![2]
        );
        assert_eq!(added("test/test_helper.rb", "at_exit { exit! }\n"), vec![1]);
        for pre in [
            "exit(1)\n",
            "exit false\n",
            "abort('no')\n",
            "# exit\n",
            "at_exit { puts 'done' }\n",
            "status = runner.exit\n",
            "exit_code = 0\n",
            "it 'exits' do\n  expect { exit }.to raise_error(SystemExit)\nend\n",
        ] {
            assert!(
                added("spec/calc_spec.rb", &format!("{pre}{spec}")).is_empty(),
                "{pre}"
            );
        }
        assert!(added("lib/cli.rb", "exit\n").is_empty());
    }

    #[test]
    fn php() {
        let test = "<?php\nclass CalcTest extends TestCase {\n  public function testAdd() {\n    $this->assertSame(3, add(1, 2));\n  }\n}\n";
        for (tail, line) in [
            ("exit(0);\n", 7),
            ("exit;\n", 7),
            ("die();\n", 7),
            ("DIE;\n", 7),
        ] {
            assert_eq!(
                added("tests/CalcTest.php", &format!("{test}{tail}")),
                vec![line],
                "{tail}"
            );
        }
        assert_eq!(added("tests/bootstrap.php", "<?php\nexit(0);\n"), vec![2]);
        for tail in [
            "exit(1);\n",
            "die('Run composer install first');\n",
            "$runner->exit();\n",
            "// exit;\n",
        ] {
            assert!(
                added("tests/CalcTest.php", &format!("{test}{tail}")).is_empty(),
                "{tail}"
            );
        }
        assert!(added("src/index.php", "<?php\nexit(0);\n").is_empty());
    }

    #[test]
    fn off_means_not_run() {
        use crate::{Detector, Options, RuleSetting};
        let mut options = Options::default();
        options.rules.insert(Rule::ForcedExit, RuleSetting::Off);
        let detector = Detector::new(&options).expect("valid options");
        let r = crate::testing::run_with(
            &detector,
            &[Add("tests/conftest.py", "import sys\nsys.exit(0)\n")],
        );
        assert!(lines(&r, Rule::ForcedExit).is_empty());
    }
}
