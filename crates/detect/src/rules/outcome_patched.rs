//! `outcome-patched`: test-framework hooks and setup that change outcomes or drop tests, so the
//! run reports green whatever the tests found.
//!
//! Python, in test files and `conftest.py`: a report hook (`pytest_runtest_makereport`, plain or
//! as a wrapper, `pytest_runtest_logreport`, …) assigning `.outcome`, `.excinfo` or `.wasxfail`
//! or calling `force_result`; `pytest_sessionfinish` overwriting `session.exitstatus`;
//! `pytest_pyfunc_call` or `pytest_runtest_protocol` that only `return True` (the test never
//! runs); a `pytest_runtestloop` that neither yields to pytest's loop nor runs the protocol; a
//! `pytest_collection_modifyitems` that removes items (`items[:] = [… if …]`,
//! `items.remove(`, `items.clear()`, `del items[`, a filtered list after `pytest_deselected`) or
//! marks them skip/xfail; assignments into `_pytest` internals, `TestReport`,
//! `unittest.TestCase`, `TestResult`, `pytest.fail`. JS/TS: a local `testResultsProcessor` in
//! `jest.config.*`; Jest's or Vitest's results rewritten (`numFailedTests = 0`,
//! `failureMessages = []`, a test's `status = "passed"`) in a test, setup or reporter file; a
//! test or setup file replacing `expect`, `test`, `it` or `describe` on the
//! global object with a function, an object or a mock of its own.
//!
//! Left alone: fixtures; a makereport wrapper that only reads the report (`outcome = yield`,
//! `setattr(item, "rep_" + rep.when, rep)`); a collection hook that orders (`items.sort(`,
//! `items[:] = fast + slow`), marks for selection (`pytest.mark.slow`), or selects by a
//! command-line option, an environment variable or the platform (the `--runslow` recipe);
//! `session.exitstatus` reset when no tests were collected; `expect.extend`; `global.expect =
//! chai.expect`; a package's `testResultsProcessor` (`jest-junit`); fixtures and production code.

use crate::rules::prelude::*;
use std::sync::LazyLock;

use regex::bytes::Regex;

use super::code::{self, re};
use crate::flag::Rule;
use crate::lang::Language;
use crate::paths::Harness;
use crate::scan::{Occurrence, Role, Text};

/// True when the rule reads files of `lang` with this role: tests and test setup only.
pub(crate) fn applies(lang: Language, role: &Role) -> bool {
    if role.fixture {
        return false;
    }
    match lang {
        Language::Python => role.is_test || role.harness == Some(Harness::Conftest),
        Language::JavaScript => role.is_test || role.harness.is_some(),
        _ => false,
    }
}

/// False when `raw` cannot hold a patched outcome: every pattern contains one of these words.
pub(crate) fn might_match(lang: Language, raw: &[u8]) -> bool {
    static PYTHON: LazyLock<super::LiteralSet> = LazyLock::new(|| {
        super::literal_set(&[
            "pytest_",
            "_pytest",
            "TestReport",
            "TestCase.",
            "TestCase,",
            "TestResult",
            "pytest.fail",
        ])
    });
    static JAVASCRIPT: LazyLock<super::LiteralSet> = LazyLock::new(|| {
        super::literal_set(&[
            "testResults",
            "global",
            "window.",
            "self.",
            "numFailed",
            "failureMessages",
        ])
    });
    match lang {
        Language::Python => PYTHON.is_match(raw),
        Language::JavaScript => JAVASCRIPT.is_match(raw),
        _ => false,
    }
}

pub(crate) fn scan(lang: Language, role: &Role, text: &Text<'_>, out: &mut Vec<Occurrence>) {
    match lang {
        Language::Python => python(role, text, out),
        Language::JavaScript => javascript(role, text, out),
        _ => {}
    }
}

fn push(text: &Text<'_>, kind: &'static str, at: usize, what: String, out: &mut Vec<Occurrence>) {
    let message = format!("{what}: `{}`", code::shown_line(text, at));
    out.push(text.occurrence(Rule::OutcomePatched, kind, at, at + 1, message));
}

// ---- Python ----------------------------------------------------------------------------------

/// What a `pytest_runtestloop` that runs the tests holds: a yield to pytest's own loop (a
/// hookwrapper), or the protocol run per item.
static PY_RUNS_ITEMS: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\byield\b|\bruntestprotocol\b|\bpytest_runtest_protocol\b|\.\s*runtest\s*\(|\bsuper\s*\(")
});
static PY_HOOK: LazyLock<Regex> =
    LazyLock::new(|| re(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(pytest_\w+)[ \t]*\("));
/// A report's outcome changed: `rep.outcome = "passed"`, `call.excinfo = None`, also through
/// its attributes' dictionary (`rep.__dict__.update(outcome="passed")`, `vars(rep).update(…)`).
static PY_OUTCOME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\.\s*(?:outcome|excinfo|wasxfail)\s*=(?:[^=]|$)|\bforce_result\s*\(|(?:\.\s*__dict__|\bvars\s*\([^)]*\))\s*\.\s*update\s*\([^)]*\b(?:outcome|excinfo|wasxfail)\s*=",
    )
});
/// `setattr(rep, "outcome", …)`: the attribute's name is a string, read raw.
static PY_SETATTR: LazyLock<Regex> = LazyLock::new(|| re(r#"\bsetattr\s*\(\s*[\w.]+\s*,\s*["']"#));
static PY_EXITSTATUS: LazyLock<Regex> = LazyLock::new(|| re(r"\.\s*exitstatus\s*=(?:[^=]|$)"));
static PY_NO_TESTS: LazyLock<Regex> = LazyLock::new(|| re(r"NO_TESTS_COLLECTED|\b5\b"));
static PY_ITEMS_SLICE: LazyLock<Regex> =
    LazyLock::new(|| re(r"\bitems\s*\[\s*:\s*\]\s*=(?:[^=]|$)"));
static PY_ITEMS_DROP: LazyLock<Regex> =
    LazyLock::new(|| re(r"\bitems\s*\.\s*(?:remove|clear|pop)\s*\(|\bdel\s+items\s*\["));
static PY_FILTERS: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\bfor\b[\s\S]*\bif\b|\bfilter\s*\(|\A\s*\[\s*\]|\bitems\s*\[[^\]]*:|\bislice\s*\(")
});
static PY_ORDERS: LazyLock<Regex> = LazyLock::new(|| re(r"\bsorted\s*\(|\breversed\s*\("));
static PY_SKIP_MARK: LazyLock<Regex> =
    LazyLock::new(|| re(r"\.\s*add_marker\s*\([^\n]*(?:skip|xfail)"));
/// Selection by an option, the environment or the platform: what `--runslow` recipes do.
static PY_GATED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\bgetoption\b|\bgetini\b|\bgetvalue\b|\bconfig\s*\.\s*option\b|\benviron\b|\bgetenv\b|\bsys\s*\.\s*platform\b|\bplatform\s*\.",
    )
});
static PY_INTERNALS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b_pytest\s*\.\s*(?:runner|reports|outcomes|skipping|python|unittest|main)\s*\.\s*[\w.]+\s*=(?:[^=]|$)|\bTestReport\s*\.\s*\w+\s*=(?:[^=]|$)|\bsetattr\s*\(\s*(?:[\w.]*\.)?TestReport\b|\bpytest\s*\.\s*fail\s*=(?:[^=]|$)",
    )
});
static PY_MONKEYPATCH: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"\bmonkeypatch\s*\.\s*setattr\s*\(\s*(?:_pytest\s*\.\s*(?:runner|reports|outcomes|skipping|python|unittest|main)\b|["'])"#,
    )
});
static PY_UNITTEST: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:^|[^.\w])(?:unittest\s*\.\s*)?(?:TestCase|TestResult|TextTestResult)\s*\.\s*\w+\s*=(?:[^=]|$)|\bsetattr\s*\(\s*(?:unittest\s*\.\s*)?(?:TestCase|TestResult|TextTestResult)\s*,",
    )
});

/// Report hooks: where an outcome is decided.
const REPORT_HOOKS: &[&[u8]] = &[
    b"pytest_runtest_makereport",
    b"pytest_runtest_logreport",
    b"pytest_report_teststatus",
    b"pytest_runtest_protocol",
    b"pytest_runtest_call",
    b"pytest_runtest_setup",
    b"pytest_runtest_teardown",
    b"pytest_pyfunc_call",
];

fn python(role: &Role, text: &Text<'_>, out: &mut Vec<Occurrence>) {
    let s = &text.masked;
    for caps in PY_HOOK.captures_iter(s) {
        let (Some(whole), Some(name)) = (caps.get(0), caps.get(1)) else {
            continue;
        };
        let hook = name.as_bytes();
        let def_line = text.line_of(whole.start());
        let Some((colon_line, after_colon)) = code::py_header_end(text, def_line) else {
            continue;
        };
        let level = code::indent(text.masked_line(def_line));
        let (body_from, body_to) = match code::py_block(text, colon_line, level) {
            Some((_, last)) => (
                after_colon,
                text.line_start(last) + text.masked_line(last).len(),
            ),
            None => (
                after_colon,
                text.line_start(colon_line) + text.masked_line(colon_line).len(),
            ),
        };
        let body_to = body_to.max(body_from).min(s.len());
        let body = &s[body_from..body_to];
        let hook_name = String::from_utf8_lossy(hook);
        if REPORT_HOOKS.contains(&hook) {
            for m in PY_OUTCOME.find_iter(body) {
                push(
                    text,
                    "py-outcome",
                    body_from + m.start(),
                    format!("rewrites test outcomes in `{hook_name}`"),
                    out,
                );
            }
            for m in PY_SETATTR.find_iter(body) {
                let name_at = body_from + m.end();
                let raw = &text.raw[name_at.min(text.raw.len())..];
                if raw.starts_with(b"outcome") || raw.starts_with(b"excinfo") {
                    push(
                        text,
                        "py-outcome",
                        body_from + m.start(),
                        format!("rewrites test outcomes in `{hook_name}`"),
                        out,
                    );
                }
            }
            if matches!(hook, b"pytest_pyfunc_call" | b"pytest_runtest_protocol") {
                only_returns_true(text, colon_line, level, &hook_name, out);
            }
        }
        match hook {
            // The loop that runs the collected tests, taken over by one that runs none: a
            // hookwrapper yields to pytest's, a real loop calls the protocol.
            b"pytest_runtestloop" if !PY_RUNS_ITEMS.is_match(body) => {
                push(
                    text,
                    "py-runtestloop",
                    whole.start() + (whole.len() - whole.as_bytes().trim_ascii_start().len()),
                    "`pytest_runtestloop` takes over the run and never runs the tests, so the session reports success".to_owned(),
                    out,
                );
            }
            b"pytest_sessionfinish" if !PY_NO_TESTS.is_match(body) => {
                for m in PY_EXITSTATUS.find_iter(body) {
                    push(
                        text,
                        "py-exitstatus",
                        body_from + m.start(),
                        "overwrites the run's exit status in `pytest_sessionfinish`".to_owned(),
                        out,
                    );
                }
            }
            b"pytest_collection_modifyitems" if !PY_GATED.is_match(body) => {
                collection(text, body_from, body, out);
            }
            _ => {}
        }
    }
    for m in PY_INTERNALS.find_iter(s) {
        push(
            text,
            "py-pytest-internals",
            m.start(),
            "patches pytest's own machinery, which decides outcomes".to_owned(),
            out,
        );
    }
    if role.harness == Some(Harness::Conftest) {
        for m in PY_MONKEYPATCH.find_iter(s) {
            let quoted = matches!(m.as_bytes().last(), Some(b'"' | b'\''));
            if quoted {
                let raw = &text.raw[m.end().min(text.raw.len())..];
                static TARGET: LazyLock<Regex> = LazyLock::new(|| {
                    re(r"\A_pytest\.(?:runner|reports|outcomes|skipping|python|unittest|main)\b")
                });
                if !TARGET.is_match(raw) {
                    continue;
                }
            }
            push(
                text,
                "py-pytest-internals",
                m.start(),
                "patches pytest's own machinery, which decides outcomes".to_owned(),
                out,
            );
        }
    }
    for caps in PY_UNITTEST.captures_iter(s) {
        let Some(m) = caps.get(0) else { continue };
        let at = m.start() + (m.len() - m.as_bytes().trim_ascii_start().len());
        // The `(?:^|[^.\w])` guard may have taken one byte of code before the name.
        let at = if s[at].is_ascii_alphabetic() || s[at] == b'_' {
            at
        } else {
            at + 1
        };
        push(
            text,
            "py-unittest-patch",
            at,
            "patches unittest's test case or result, which decides outcomes".to_owned(),
            out,
        );
    }
}

/// A `pytest_pyfunc_call` or `pytest_runtest_protocol` whose body only answers `True`: the
/// test function is never called, and the hook tells pytest it was.
fn only_returns_true(
    text: &Text<'_>,
    colon_line: u32,
    level: usize,
    hook: &str,
    out: &mut Vec<Occurrence>,
) {
    let Some((first, last)) = code::py_block(text, colon_line, level) else {
        return;
    };
    let statements = code::py_statements(text, first, last);
    if let [(a, b)] = statements[..]
        && code::squeezed_lines(text, a, b) == b"returnTrue"
    {
        let at = text.line_start(a) + code::indent(text.masked_line(a));
        push(
            text,
            "py-hook-skips-test",
            at,
            format!("`{hook}` answers without running the test, so it counts as passed"),
            out,
        );
    }
}

/// A `pytest_collection_modifyitems` body (not gated by an option): removals and skip marks.
fn collection(text: &Text<'_>, body_from: usize, body: &[u8], out: &mut Vec<Occurrence>) {
    const HOOK: &str = "`pytest_collection_modifyitems`";
    let deselects = body.windows(8).any(|w| w == b"deselect");
    for m in PY_ITEMS_SLICE.find_iter(body) {
        let rhs = statement_rest(body, m.end() - 1);
        let filters = PY_FILTERS.is_match(rhs) && !PY_ORDERS.is_match(rhs);
        if filters || (deselects && !PY_ORDERS.is_match(rhs)) {
            push(
                text,
                "py-drop-items",
                body_from + m.start(),
                format!("drops collected tests in {HOOK}"),
                out,
            );
        }
    }
    for m in PY_ITEMS_DROP.find_iter(body) {
        push(
            text,
            "py-drop-items",
            body_from + m.start(),
            format!("drops collected tests in {HOOK}"),
            out,
        );
    }
    for m in PY_SKIP_MARK.find_iter(body) {
        push(
            text,
            "py-skip-items",
            body_from + m.start(),
            format!("marks collected tests skipped or expected to fail in {HOOK}"),
            out,
        );
    }
}

/// The rest of a statement from `from`: up to the newline that ends it outside brackets.
fn statement_rest(s: &[u8], from: usize) -> &[u8] {
    let mut depth: i32 = 0;
    let start = (from + 1).min(s.len());
    for (i, &b) in s.iter().enumerate().skip(start) {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'\n' if depth <= 0 => return &s[start..i],
            _ => {}
        }
    }
    &s[start..]
}

// ---- JavaScript and TypeScript ---------------------------------------------------------------

static JS_PROCESSOR: LazyLock<Regex> =
    LazyLock::new(|| re(r#"\btestResultsProcessor["']?\s*:([^\n]*)"#));
static JS_LOCAL: LazyLock<Regex> =
    LazyLock::new(|| re(r"\./|<rootDir>|__dirname|\bpath\s*\.|=>|\bfunction\b"));
/// A Jest or Vitest aggregated result rewritten: its failure counts or messages cleared, or a
/// test's status set to passed (what a results processor or a reporter that lies does).
static JS_RESULTS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"\.\s*(?:numFailedTests|numFailedTestSuites|numRuntimeErrorTestSuites)\s*=(?:[^=]|$)|\.\s*failureMessages\s*=\s*\[\s*\]|\.\s*status\s*=\s*(?P<s>["'`] *["'`])"#,
    )
});
static JS_GLOBAL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:^|[^.\w$])(?:global|globalThis|window|self)\s*\.\s*(expect|test|it|describe|fit|xit)\s*=([^=>][^\n]*|$)",
    )
});
static JS_DEFINE: LazyLock<Regex> = LazyLock::new(|| {
    re(r#"\bObject\s*\.\s*defineProperty\s*\(\s*(?:global|globalThis|window)\s*,\s*["'`]"#)
});
/// A stand-in: a function, an object literal, a mock that never fails, a skipping variant.
static JS_FAKE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\A\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::\s*[\w<>\[\]]+\s*)?=>|[\w$]+\s*=>|\{|(?:jest|vi|sinon)\s*\.\s*(?:fn|stub)\s*\(|[\w$.]*\.\s*(?:skip|todo)\b)",
    )
});

fn javascript(role: &Role, text: &Text<'_>, out: &mut Vec<Occurrence>) {
    let s = &text.masked;
    if role.harness == Some(Harness::RunnerConfig) {
        // Read raw: the key may be quoted, and the value is a string.
        for caps in JS_PROCESSOR.captures_iter(text.raw) {
            let (Some(m), Some(value)) = (caps.get(0), caps.get(1)) else {
                continue;
            };
            if text.in_comment(m.start()) || !JS_LOCAL.is_match(value.as_bytes()) {
                continue;
            }
            push(
                text,
                "js-results-processor",
                m.start(),
                "a local `testResultsProcessor` can rewrite every test result".to_owned(),
                out,
            );
        }
    }
    if text.raw.windows(11).any(|w| w == b"testResults")
        || text.raw.windows(9).any(|w| w == b"numFailed")
    {
        for caps in JS_RESULTS.captures_iter(s) {
            let Some(m) = caps.get(0) else { continue };
            // `.status = "…"`: only "passed", read raw.
            if let Some(q) = caps.name("s")
                && text.raw.get(q.start() + 1..q.end() - 1) != Some(&b"passed"[..])
            {
                continue;
            }
            push(
                text,
                "js-results-rewritten",
                m.start() + 1,
                "rewrites the run's test results to passing".to_owned(),
                out,
            );
        }
    }
    for caps in JS_GLOBAL.captures_iter(s) {
        let (Some(m), Some(name), Some(rhs)) = (caps.get(0), caps.get(1), caps.get(2)) else {
            continue;
        };
        if !JS_FAKE.is_match(rhs.as_bytes()) {
            continue;
        }
        let at = m.start() + usize::from(!is_ident_start(s[m.start()]));
        push(
            text,
            "js-global-override",
            at,
            format!(
                "replaces the test framework's `{}` with a stand-in",
                String::from_utf8_lossy(name.as_bytes())
            ),
            out,
        );
    }
    for m in JS_DEFINE.find_iter(s) {
        let raw = &text.raw[m.end().min(text.raw.len())..];
        let name_len = raw.iter().take_while(|b| b.is_ascii_alphanumeric()).count();
        let name = &raw[..name_len];
        if matches!(name, b"expect" | b"test" | b"it" | b"describe") {
            push(
                text,
                "js-global-override",
                m.start(),
                format!(
                    "replaces the test framework's `{}` with a stand-in",
                    String::from_utf8_lossy(name)
                ),
                out,
            );
        }
    }
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$'
}

/// The rule's registry entry and what the detector runs for it.
pub(crate) const RULE: RuleInfo = RuleInfo {
    rule: Rule::OutcomePatched,
    id: "outcome-patched",
    severity: Severity::Warning,
    source: Source::Detector,
    languages: "Python (pytest, unittest), JS/TS (Jest, Vitest, Mocha)",
    summary: "A test hook or setup file newly rewrites test outcomes or drops tests.",
    help: "Flags a `pytest_runtest_makereport` (or other report hook) that assigns an \
           outcome or calls `force_result`, a `pytest_collection_modifyitems` that removes \
           items or marks them skip/xfail, `session.exitstatus` overwritten, a \
           `pytest_pyfunc_call` that returns without calling the test, a \
           `pytest_runtestloop` that runs no test, assignments into \
           `_pytest` internals, `TestReport`, `unittest.TestCase` or `TestResult`, a local \
           Jest `testResultsProcessor`, Jest's results rewritten (`numFailedTests = 0`, \
           `failureMessages = []`), and a setup file replacing `expect`, `test` or `it` \
           with a function of its own. A hook that only orders items, marks them for \
           selection, or selects by a command-line option, and `expect.extend`, are not.",
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
        lines(&run(&[Add(path, new)]), Rule::OutcomePatched)
    }

    fn modified(path: &str, old: &str, new: &str) -> Vec<u32> {
        lines(&run(&[Modify(path, old, new)]), Rule::OutcomePatched)
    }

    #[test]
    fn patterns_compile() {
        for p in [
            &PY_HOOK,
            &PY_OUTCOME,
            &PY_SETATTR,
            &PY_EXITSTATUS,
            &PY_NO_TESTS,
            &PY_ITEMS_SLICE,
            &PY_ITEMS_DROP,
            &PY_FILTERS,
            &PY_ORDERS,
            &PY_SKIP_MARK,
            &PY_GATED,
            &PY_INTERNALS,
            &PY_MONKEYPATCH,
            &PY_UNITTEST,
            &JS_PROCESSOR,
            &JS_LOCAL,
            &JS_GLOBAL,
            &JS_DEFINE,
            &JS_FAKE,
        ] {
            LazyLock::force(p);
        }
    }

    const WRAPPER: &str = "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    rep = outcome.get_result()\n    setattr(item, 'rep_' + rep.when, rep)\n";

    #[test]
    fn makereport() {
        let new = format!("{WRAPPER}    rep.outcome = 'passed'\n");
        assert_eq!(modified("tests/conftest.py", WRAPPER, &new), vec![8]);
        let r = run(&[Modify("tests/conftest.py", WRAPPER, &new)]);
        assert_eq!(
            r.flags[0].message,
            "rewrites test outcomes in `pytest_runtest_makereport`: `rep.outcome = 'passed'`"
        );
        for (new, line) in [
            (
                "def pytest_runtest_makereport(item, call):\n    if call.excinfo is not None:\n        call.excinfo = None\n",
                3,
            ),
            (
                "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    outcome.force_result(make_passed(item))\n",
                6,
            ),
            (
                "def pytest_runtest_logreport(report):\n    report.outcome = \"passed\"\n",
                2,
            ),
            (
                "def pytest_runtest_makereport(item, call):\n    rep = make(item, call)\n    setattr(rep, 'outcome', 'passed')\n    return rep\n",
                3,
            ),
            (
                "def pytest_runtest_makereport(item, call):\n    rep = make(item, call)\n    if rep.failed:\n        rep.__dict__.update(outcome=\"passed\", longrepr=None)\n    return rep\n",
                4,
            ),
            (
                "def pytest_runtest_logreport(report):\n    vars(report).update(longrepr=None, outcome='passed')\n",
                2,
            ),
            ("def pytest_pyfunc_call(pyfuncitem):\n    return True\n", 2),
            (
                "def pytest_runtest_protocol(item, nextitem):\n    \"\"\"Fast.\"\"\"\n    return True\n",
                3,
            ),
            (
                "def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n",
                2,
            ),
            ("def pytest_runtestloop(session):\n    return True\n", 1),
            (
                "import pytest\n\n@pytest.hookimpl(tryfirst=True)\ndef pytest_runtestloop(session):\n    session.testscollected = 0\n    return True\n",
                4,
            ),
        ] {
            assert_eq!(added("tests/conftest.py", new), vec![line], "{new}");
        }
    }

    #[test]
    fn makereport_lookalikes() {
        for new in [
            WRAPPER.to_owned(),
            format!("{WRAPPER}    if rep.outcome == 'failed':\n        print(rep.nodeid)\n"),
            "def pytest_sessionfinish(session, exitstatus):\n    if exitstatus == 5:\n        session.exitstatus = 0\n".to_owned(),
            "def pytest_sessionfinish(session, exitstatus):\n    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:\n        session.exitstatus = pytest.ExitCode.OK\n".to_owned(),
            "def pytest_pyfunc_call(pyfuncitem):\n    if is_async(pyfuncitem.obj):\n        run(pyfuncitem)\n        return True\n".to_owned(),
            "import pytest\n\n@pytest.fixture\ndef outcome():\n    result = Result()\n    result.outcome = 'passed'\n    return result\n".to_owned(),
            "def pytest_runtest_makereport(item, call):\n    # rep.outcome = 'passed'\n    s = 'rep.outcome = 1'\n".to_owned(),
            // Extra attributes for a later reader leave the outcome alone.
            format!("{WRAPPER}    rep.__dict__.update(duration_ms=rep.duration * 1000)\n"),
            // A loop that runs the tests: a wrapper around pytest's, or the protocol per item.
            "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtestloop(session):\n    start = time.time()\n    yield\n    report(time.time() - start)\n".to_owned(),
            "def pytest_runtestloop(session):\n    for i, item in enumerate(session.items):\n        nextitem = session.items[i + 1] if i + 1 < len(session.items) else None\n        item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)\n    return True\n".to_owned(),
        ] {
            assert!(added("tests/conftest.py", &new).is_empty(), "{new}");
        }
        // A game's outcome in a test is not a report's.
        assert!(
            added(
                "tests/test_game.py",
                "def test_win():\n    game.outcome = 'win'\n    assert game.over\n"
            )
            .is_empty()
        );
        // pytest plugins are production code: they change reports by design.
        assert!(
            added(
                "src/pytest_rerun/plugin.py",
                "def pytest_runtest_makereport(item, call):\n    rep.outcome = 'rerun'\n"
            )
            .is_empty()
        );
    }

    const RUNSLOW: &str = "import pytest\n\ndef pytest_addoption(parser):\n    parser.addoption('--runslow', action='store_true')\n\ndef pytest_collection_modifyitems(config, items):\n    if config.getoption('--runslow'):\n        return\n    skip_slow = pytest.mark.skip(reason='need --runslow')\n    for item in items:\n        if 'slow' in item.keywords:\n            item.add_marker(skip_slow)\n";

    #[test]
    fn collection_hooks() {
        for (new, line) in [
            (
                "def pytest_collection_modifyitems(items):\n    items[:] = [i for i in items if 'parse' not in i.nodeid]\n",
                2,
            ),
            (
                "def pytest_collection_modifyitems(items):\n    for item in list(items):\n        if 'parse' in item.nodeid:\n            items.remove(item)\n",
                4,
            ),
            (
                "def pytest_collection_modifyitems(items):\n    items.clear()\n",
                2,
            ),
            (
                "def pytest_collection_modifyitems(items):\n    del items[3:]\n",
                2,
            ),
            (
                "import pytest\n\ndef pytest_collection_modifyitems(items):\n    for item in items:\n        item.add_marker(pytest.mark.xfail(reason='flaky'))\n",
                5,
            ),
            (
                "def pytest_collection_modifyitems(config, items):\n    keep, drop = split(items)\n    config.hook.pytest_deselected(items=drop)\n    items[:] = keep\n",
                4,
            ),
        ] {
            assert_eq!(added("conftest.py", new), vec![line], "{new}");
        }
        for new in [
            RUNSLOW.to_owned(),
            "def pytest_collection_modifyitems(items):\n    items.sort(key=lambda i: i.name)\n".to_owned(),
            "def pytest_collection_modifyitems(items):\n    fast, slow = [], []\n    for i in items:\n        (slow if 'slow' in i.keywords else fast).append(i)\n    items[:] = fast + slow\n".to_owned(),
            "def pytest_collection_modifyitems(items):\n    items[:] = sorted(items, key=lambda i: 0 if 'db' in i.nodeid else 1)\n".to_owned(),
            "import pytest\n\ndef pytest_collection_modifyitems(items):\n    for item in items:\n        item.add_marker(pytest.mark.slow)\n".to_owned(),
            "import sys\n\ndef pytest_collection_modifyitems(items):\n    if sys.platform == 'win32':\n        items[:] = [i for i in items if 'posix' not in i.keywords]\n".to_owned(),
        ] {
            assert!(added("conftest.py", &new).is_empty(), "{new}");
        }
    }

    #[test]
    fn internals_and_unittest() {
        for (path, new, line) in [
            (
                "tests/conftest.py",
                "import _pytest.runner\n\n_pytest.runner.call_and_report = lambda *a, **k: None\n",
                3,
            ),
            (
                "tests/conftest.py",
                "from _pytest.reports import TestReport\nTestReport.failed = property(lambda self: False)\n",
                2,
            ),
            (
                "tests/conftest.py",
                "import pytest, _pytest\n\n@pytest.fixture(autouse=True)\ndef quiet(monkeypatch):\n    monkeypatch.setattr(_pytest.outcomes, 'fail', lambda *a: None)\n",
                5,
            ),
            (
                "tests/conftest.py",
                "import pytest\n\n@pytest.fixture(autouse=True)\ndef quiet(monkeypatch):\n    monkeypatch.setattr('_pytest.runner.pytest_runtest_call', lambda item: None)\n",
                5,
            ),
            (
                "tests/test_calc.py",
                "import unittest\n\nunittest.TestCase.run = lambda self, result=None: None\n",
                3,
            ),
            (
                "tests/test_calc.py",
                "import unittest\nunittest.TestResult.addFailure = lambda *a: None\n",
                2,
            ),
            (
                "tests/test_calc.py",
                "from unittest import TestCase\nsetattr(TestCase, 'assertEqual', lambda *a: None)\n",
                2,
            ),
            (
                "tests/test_calc.py",
                "import pytest\npytest.fail = print\n",
                2,
            ),
        ] {
            assert_eq!(added(path, new), vec![line], "{path}: {new}");
        }
        for (path, new) in [
            (
                "tests/test_terminal.py",
                "def test_x(monkeypatch):\n    monkeypatch.setattr(_pytest.terminal, '_get_pos', fake)\n",
            ),
            (
                "tests/test_results.py",
                "import _pytest_results\n_pytest_results.SESSION = 1\n",
            ),
            (
                "tests/test_calc.py",
                "import unittest\n\nclass MyResult(unittest.TestResult):\n    def addFailure(self, test, err):\n        super().addFailure(test, err)\n",
            ),
            (
                "tests/test_calc.py",
                "def test_a(self):\n    self.TestCase.x = 1\n    assert TestCase.run == run\n",
            ),
            ("src/app/runner.py", "unittest.TestCase.run = custom_run\n"),
        ] {
            assert!(added(path, new).is_empty(), "{path}: {new}");
        }
    }

    #[test]
    fn jest_results_rewritten() {
        let processor = "module.exports = (results) => {\n  results.numFailedTests = 0;\n  results.success = true;\n  results.testResults.forEach((f) => f.testResults.forEach((t) => { t.status = \"passed\"; }));\n  return results;\n};\n";
        assert_eq!(added("test/processor.js", processor), vec![2, 4]);
        let reporter = "class Green {\n  onTestResult(test, result) {\n    for (const r of result.testResults) {\n      r.failureMessages = [];\n    }\n  }\n}\n";
        assert_eq!(added("test/green-reporter.js", reporter), vec![4]);
        for new in [
            // Read, compared or asserted, not assigned; another status; not results.
            "const { numFailedTests } = results;\nif (results.numFailedTests === 0) {}\nexpect(r.testResults[0].status).toBe('passed');\n",
            "for (const t of results.testResults) { t.status = 'failed'; }\n",
            "order.status = 'passed';\n",
        ] {
            assert!(added("test/x.test.js", new).is_empty(), "{new}");
        }
    }

    #[test]
    fn jest_config_and_setup_files() {
        let old = "module.exports = {\n  testEnvironment: 'node',\n};\n";
        let new = "module.exports = {\n  testEnvironment: 'node',\n  testResultsProcessor: './scripts/all-green.js',\n};\n";
        assert_eq!(modified("jest.config.js", old, new), vec![3]);
        let new = "export default {\n  \"testResultsProcessor\": \"<rootDir>/green.js\",\n};\n";
        assert_eq!(added("jest.config.ts", new), vec![2]);
        for new in [
            "module.exports = {\n  testResultsProcessor: 'jest-junit',\n};\n",
            "module.exports = {\n  testResultsProcessor: require.resolve('jest-sonar-reporter'),\n};\n",
            "module.exports = {\n  // testResultsProcessor: './green.js',\n};\n",
        ] {
            assert!(added("jest.config.js", new).is_empty(), "{new}");
        }
        for (path, new, line) in [
            (
                "jest.setup.js",
                "global.expect = () => ({ toBe() {}, toEqual() {} });\n",
                1,
            ),
            (
                "vitest.setup.ts",
                "import { vi } from 'vitest';\nglobalThis.expect = vi.fn();\n",
                2,
            ),
            ("src/setupTests.ts", "globalThis.test = it.skip;\n", 1),
            ("test/setup.js", "global.it = function (name, fn) {};\n", 1),
            ("src/calc.test.js", "window.describe = (n, f) => {};\n", 1),
            (
                "jest.setup.js",
                "Object.defineProperty(globalThis, 'expect', { value: () => ({}) });\n",
                1,
            ),
        ] {
            assert_eq!(added(path, new), vec![line], "{path}: {new}");
        }
        for (path, new) in [
            (
                "test/setup.js",
                "const chai = require('chai');\nglobal.expect = chai.expect;\n",
            ),
            (
                "jest.setup.js",
                "expect.extend({ toBeMoney(x) { return { pass: true } } });\n",
            ),
            ("jest.setup.js", "if (global.expect === undefined) {}\n"),
            ("jest.setup.js", "// global.expect = () => ({})\n"),
            ("src/app.js", "global.expect = () => ({});\n"),
        ] {
            assert!(added(path, new).is_empty(), "{path}: {new}");
        }
    }

    #[test]
    fn moved_is_not_new() {
        let hook = "def pytest_runtest_logreport(report):\n    report.outcome = 'passed'\n";
        let r = run(&[Delete("tests/conftest.py", hook), Add("conftest.py", hook)]);
        assert!(lines(&r, Rule::OutcomePatched).is_empty(), "{:?}", r.flags);
        let new = "if True:\n    def pytest_runtest_logreport(report):\n        report.outcome = 'passed'\n";
        assert!(modified("tests/conftest.py", hook, new).is_empty());
    }
}
