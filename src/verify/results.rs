//! Runners' reports read into [`RunResults`]: JUnit XML (pytest `--junitxml`, jest-junit,
//! Surefire and Gradle, gotestsum, cargo-nextest), `go test -json`, and libtest's own output
//! (`cargo test`).
//!
//! Nothing a runner wrote is trusted: a report is bounded in size, a malformed one is a
//! [`ResultsError`] naming the runner and the file, and a report with no test at all is not a
//! pass but an empty run (the comparison sees that it collected nothing).

use std::collections::BTreeMap;

use super::{Outcome, ResultsError, RunResults, TestResult};
use crate::config::repo::ResultsFormat;

/// A report of `format`, written by `runner`, read from `source` (a file, or the command's
/// output).
pub fn read(
    format: ResultsFormat,
    runner: &str,
    source: &str,
    text: &[u8],
) -> Result<RunResults, ResultsError> {
    match format {
        ResultsFormat::Junit => junit(runner, source, text),
        ResultsFormat::JestJson => jest_json(source, text),
        ResultsFormat::GoTestJson => go_test_json(source, text),
        ResultsFormat::Libtest => libtest(source, text),
    }
}

/// The largest report read: a suite of tens of thousands of tests fits many times over.
pub const MAX_REPORT_BYTES: usize = 64 * 1024 * 1024;

/// The most of a failure's message kept per test.
const MESSAGE_MAX_CHARS: usize = 500;

fn error(runner: &str, source: &str, message: impl Into<String>) -> ResultsError {
    ResultsError {
        runner: runner.to_owned(),
        source_name: source.to_owned(),
        message: message.into(),
    }
}

fn too_large(runner: &str, source: &str, text: &[u8]) -> Result<(), ResultsError> {
    if text.len() > MAX_REPORT_BYTES {
        return Err(error(
            runner,
            source,
            format!(
                "the report is {} bytes, more than the {MAX_REPORT_BYTES} read",
                text.len()
            ),
        ));
    }
    Ok(())
}

fn shorten(message: &str) -> Option<String> {
    // What failed, not where: a JavaScript or JVM stack trace starts at its first frame.
    let frame = |line: &str| {
        let line = line.trim_start();
        line.starts_with("at ") && (line.contains('(') || line.contains(':'))
    };
    let what: Vec<&str> = message.lines().take_while(|l| !frame(l)).collect();
    let one: String = what
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if one.is_empty() {
        return None;
    }
    if one.chars().count() <= MESSAGE_MAX_CHARS {
        return Some(one);
    }
    let cut: String = one.chars().take(MESSAGE_MAX_CHARS).collect();
    Some(format!("{cut}…"))
}

/// A JUnit XML report (`<testsuites>` or a lone `<testsuite>`), as every ecosystem writes it.
///
/// A test's id is its file and name where the report gives the file (`tests/test_calc.py::
/// test_add`), else its class name and name (`tests.test_calc::test_add`). `<failure>` and
/// `<error>` are failures, `<skipped>` a skip. pytest reports a file it cannot collect as a
/// test case named after the file with an `<error>` whose message says "collection failure":
/// that is a collection error, not a test. Which suites pytest wrote their report says (it names
/// them `pytest`), whatever command ran it.
pub fn junit(runner: &str, source: &str, text: &[u8]) -> Result<RunResults, ResultsError> {
    too_large(runner, source, text)?;
    let text =
        std::str::from_utf8(text).map_err(|e| error(runner, source, format!("not UTF-8: {e}")))?;
    let doc = roxmltree::Document::parse(text)
        .map_err(|e| error(runner, source, format!("not JUnit XML: {e}")))?;
    let root = doc.root_element();
    if !matches!(root.tag_name().name(), "testsuites" | "testsuite") {
        return Err(error(
            runner,
            source,
            format!(
                "not JUnit XML: the root element is <{}>, not <testsuites> or <testsuite>",
                root.tag_name().name()
            ),
        ));
    }
    let mut out = RunResults::default();
    for case in root
        .descendants()
        .filter(|n| n.is_element() && n.tag_name().name() == "testcase")
    {
        let name = case.attribute("name").unwrap_or_default().trim();
        let class = case.attribute("classname").unwrap_or_default().trim();
        let file = case
            .attribute("file")
            .map(|f| f.trim().trim_start_matches("./").to_owned())
            .filter(|f| !f.is_empty());
        let by_pytest = case
            .ancestors()
            .find(|n| n.is_element() && n.tag_name().name() == "testsuite")
            .and_then(|suite| suite.attribute("name"))
            == Some("pytest");
        // pytest writes its item's location, which counts lines from 0.
        let line = case
            .attribute("line")
            .and_then(|l| l.trim().parse::<u32>().ok())
            .map(|l| if by_pytest { l + 1 } else { l });
        let child = |tag: &str| {
            case.children()
                .find(|c| c.is_element() && c.tag_name().name() == tag)
        };
        let failure = child("failure").or_else(|| child("error"));
        let (outcome, message) = match (failure, child("skipped")) {
            (Some(f), _) => {
                let message = f
                    .attribute("message")
                    .map(str::to_owned)
                    .or_else(|| f.text().map(str::to_owned))
                    .unwrap_or_default();
                (Outcome::Failed, shorten(&message))
            }
            (None, Some(s)) => (Outcome::Skipped, s.attribute("message").and_then(shorten)),
            (None, None) => (Outcome::Passed, None),
        };
        if let Some(f) = child("error")
            && f.attribute("message")
                .is_some_and(|m| m.contains("collection failure"))
        {
            // The traceback's last line says why (`E   ImportError: …`).
            let why = f
                .text()
                .and_then(|t| t.lines().map(str::trim).rfind(|l| !l.is_empty()))
                .map(|l| l.trim_start_matches("E ").trim())
                .and_then(shorten)
                .unwrap_or_else(|| "collection failure".to_owned());
            let what = if class.is_empty() { name } else { class };
            out.collection_errors.push(format!("{what}: {why}"));
            continue;
        }
        if name.is_empty() {
            return Err(error(runner, source, "a <testcase> has no name"));
        }
        let id = match (&file, class) {
            (Some(file), _) if by_pytest => format!("{file}::{name}"),
            (_, "") => name.to_owned(),
            (_, class) => format!("{class}::{name}"),
        };
        out.tests.push(TestResult {
            id,
            file,
            line,
            outcome,
            message,
        });
    }
    Ok(out)
}

/// Jest's own report (`jest --json --outputFile=…`): each test file's assertions, with the file
/// made relative to `/workspace`; a file that failed to run (it does not parse, an import is
/// missing) is a collection error.
pub fn jest_json(source: &str, text: &[u8]) -> Result<RunResults, ResultsError> {
    const RUNNER: &str = "jest";
    too_large(RUNNER, source, text)?;
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Report {
        test_results: Vec<File>,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct File {
        name: String,
        #[serde(default)]
        status: String,
        #[serde(default)]
        message: String,
        #[serde(default)]
        assertion_results: Vec<Assertion>,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Assertion {
        full_name: String,
        status: String,
        #[serde(default)]
        failure_messages: Vec<String>,
        location: Option<Location>,
    }
    #[derive(serde::Deserialize)]
    struct Location {
        line: u32,
    }
    let report: Report = serde_json::from_slice(text)
        .map_err(|e| error(RUNNER, source, format!("not Jest's JSON report: {e}")))?;
    let mut out = RunResults::default();
    for file in report.test_results {
        let path = file
            .name
            .strip_prefix("/workspace/")
            .unwrap_or(&file.name)
            .to_owned();
        if file.assertion_results.is_empty() && file.status == "failed" {
            let why = shorten(
                file.message
                    .lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or(""),
            )
            .unwrap_or_else(|| "the test file failed to run".to_owned());
            out.collection_errors.push(format!("{path}: {why}"));
            continue;
        }
        for a in file.assertion_results {
            let outcome = match a.status.as_str() {
                "passed" => Outcome::Passed,
                "failed" => Outcome::Failed,
                _ => Outcome::Skipped,
            };
            out.tests.push(TestResult {
                id: format!("{path}::{}", a.full_name),
                file: Some(path.clone()),
                line: a.location.map(|l| l.line),
                outcome,
                message: a.failure_messages.first().and_then(|m| shorten(m)),
            });
        }
    }
    Ok(out)
}

/// `go test -json` (test2json): one JSON event a line. A test's last `pass`, `fail` or `skip`
/// is its outcome; a package that fails without a test failing (it does not build) is a
/// collection error. Lines that are not JSON (a build's own messages) are passed over.
pub fn go_test_json(source: &str, text: &[u8]) -> Result<RunResults, ResultsError> {
    const RUNNER: &str = "go test";
    too_large(RUNNER, source, text)?;
    #[derive(serde::Deserialize)]
    struct Event {
        #[serde(rename = "Action")]
        action: String,
        #[serde(rename = "Package", default)]
        package: String,
        #[serde(rename = "Test")]
        test: Option<String>,
        #[serde(rename = "Output")]
        output: Option<String>,
    }
    let mut outcomes: BTreeMap<(String, String), Outcome> = BTreeMap::new();
    let mut output: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut failed_packages: Vec<String> = Vec::new();
    let mut any_event = false;
    for line in text.split(|&b| b == b'\n') {
        let line = line.trim_ascii();
        if !line.starts_with(b"{") {
            // Before Go 1.24 a package that does not build is only this plain line.
            let plain = String::from_utf8_lossy(line);
            if let Some(rest) = plain.strip_prefix("FAIL")
                && let Some(package) = rest
                    .trim()
                    .strip_suffix("[build failed]")
                    .or_else(|| rest.trim().strip_suffix("[setup failed]"))
            {
                failed_packages.push(package.trim().to_owned());
                any_event = true;
            }
            continue;
        }
        let Ok(event) = serde_json::from_slice::<Event>(line) else {
            continue;
        };
        any_event = true;
        match (&event.test, event.action.as_str()) {
            (Some(test), "output") => {
                let out = output
                    .entry((event.package.clone(), test.clone()))
                    .or_default();
                if out.len() < 4096 {
                    out.push_str(event.output.as_deref().unwrap_or_default());
                }
            }
            (Some(test), action @ ("pass" | "fail" | "skip")) => {
                let outcome = match action {
                    "pass" => Outcome::Passed,
                    "fail" => Outcome::Failed,
                    _ => Outcome::Skipped,
                };
                outcomes.insert((event.package.clone(), test.clone()), outcome);
            }
            (None, "fail") | (_, "build-fail") => failed_packages.push(event.package.clone()),
            _ => {}
        }
    }
    if !any_event && !text.trim_ascii().is_empty() {
        return Err(error(
            RUNNER,
            source,
            "no `go test -json` event in the output",
        ));
    }
    let mut out = RunResults::default();
    for (key, outcome) in &outcomes {
        let (package, test) = key;
        let message = match outcome {
            Outcome::Failed => output.get(key).and_then(|o| shorten(o)),
            _ => None,
        };
        out.tests.push(TestResult {
            id: format!("{package}::{test}"),
            file: None,
            line: None,
            outcome: *outcome,
            message,
        });
    }
    failed_packages.sort();
    failed_packages.dedup();
    for package in failed_packages {
        let failed_a_test = outcomes
            .iter()
            .any(|((p, _), o)| *p == package && *o == Outcome::Failed);
        if !failed_a_test {
            out.collection_errors.push(format!(
                "{package}: the package fails without a test failing (does it build?)"
            ));
        }
    }
    Ok(out)
}

/// libtest's own output (`cargo test`): `test <path> ... ok|FAILED|ignored` lines, each test
/// binary's under its `Running` line; a compile error (`error[E…]` or `error: could not
/// compile`) is a collection error.
pub fn libtest(source: &str, text: &[u8]) -> Result<RunResults, ResultsError> {
    const RUNNER: &str = "cargo test";
    too_large(RUNNER, source, text)?;
    let text = String::from_utf8_lossy(text);
    let mut out = RunResults::default();
    let mut target = String::new();
    for line in text.lines() {
        let line = line.trim_end();
        if let Some(rest) = line.trim_start().strip_prefix("Running ") {
            // `Running unittests src/lib.rs (target/debug/deps/calc-…)`, `Running tests/api.rs (…)`
            target = rest
                .split(" (")
                .next()
                .unwrap_or(rest)
                .trim_start_matches("unittests ")
                .to_owned();
            continue;
        }
        if line.starts_with("error[E") || line.starts_with("error: could not compile") {
            out.collection_errors.push(line.to_owned());
            continue;
        }
        let Some(rest) = line.strip_prefix("test ") else {
            continue;
        };
        let Some((name, verdict)) = rest.rsplit_once(" ... ") else {
            continue;
        };
        let outcome = match verdict.trim() {
            "ok" => Outcome::Passed,
            "FAILED" => Outcome::Failed,
            v if v.starts_with("ignored") => Outcome::Skipped,
            _ => continue,
        };
        let id = if target.is_empty() {
            name.trim().to_owned()
        } else {
            format!("{target}::{}", name.trim())
        };
        out.tests.push(TestResult {
            id,
            file: None,
            line: None,
            outcome,
            message: None,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytest_junit_with_a_failure_a_skip_and_a_collection_error() {
        let xml = br#"<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="4">
  <testcase classname="tests.test_broken" name="tests/test_broken.py" time="0.000"><error message="collection failure">ImportError: cannot import name 'mul'</error></testcase>
  <testcase classname="tests.test_calc" name="test_add" file="tests/test_calc.py" line="4" time="0.001"/>
  <testcase classname="tests.test_calc" name="test_sub" file="tests/test_calc.py" line="8" time="0.001"><failure message="assert 9 == 5">def test_sub():
&gt;       assert sub(7, 2) == 5</failure></testcase>
  <testcase classname="tests.test_calc" name="test_gpu" file="tests/test_calc.py" line="12"><skipped type="pytest.skip" message="needs a GPU"/></testcase>
</testsuite></testsuites>"#;
        let r = junit("pytest", "junit.xml", xml).expect("reads");
        let ids: Vec<(&str, Outcome, Option<u32>)> = r
            .tests
            .iter()
            .map(|t| (t.id.as_str(), t.outcome, t.line))
            .collect();
        assert_eq!(
            ids,
            [
                ("tests/test_calc.py::test_add", Outcome::Passed, Some(5)),
                ("tests/test_calc.py::test_sub", Outcome::Failed, Some(9)),
                ("tests/test_calc.py::test_gpu", Outcome::Skipped, Some(13)),
            ]
        );
        assert_eq!(r.tests[1].message.as_deref(), Some("assert 9 == 5"));
        assert_eq!(r.tests[0].file.as_deref(), Some("tests/test_calc.py"));
        assert_eq!(
            r.collection_errors,
            ["tests.test_broken: ImportError: cannot import name 'mul'"]
        );
        assert_eq!((r.collected(), r.count(Outcome::Failed)), (3, 1));
    }

    #[test]
    fn jest_and_surefire_junit_use_class_and_name() {
        let xml = br#"<testsuites name="jest tests"><testsuite name="calc">
<testcase classname="calc adds" name="calc adds" time="0.002"></testcase>
<testcase classname="calc subtracts" name="calc subtracts"><failure>Expected: 5
Received: 9</failure></testcase></testsuite></testsuites>"#;
        let r = junit("jest", "junit.xml", xml).expect("reads");
        assert_eq!(r.tests[0].id, "calc adds::calc adds");
        assert_eq!(r.tests[1].outcome, Outcome::Failed);
        assert_eq!(
            r.tests[1].message.as_deref(),
            Some("Expected: 5 Received: 9")
        );
        let surefire = br#"<testsuite name="com.acme.CalcTest" tests="1"><testcase name="adds" classname="com.acme.CalcTest"><error type="java.lang.NullPointerException"/></testcase></testsuite>"#;
        let r = junit("maven", "TEST-com.acme.CalcTest.xml", surefire).expect("reads");
        assert_eq!(r.tests[0].id, "com.acme.CalcTest::adds");
        assert_eq!(r.tests[0].outcome, Outcome::Failed);
    }

    #[test]
    fn garbage_is_an_error_naming_the_runner_and_the_file() {
        for (text, why) in [
            (&b"all tests passed!"[..], "not JUnit XML"),
            (
                b"<html><body>ok</body></html>",
                "the root element is <html>",
            ),
            (
                b"<testsuite><testcase/></testsuite>",
                "a <testcase> has no name",
            ),
            (b"\xff\xfe<testsuite/>", "not UTF-8"),
        ] {
            let err = junit("pytest", "/job-out/verify/junit.xml", text).expect_err("garbage");
            let s = err.to_string();
            assert!(s.starts_with("pytest: /job-out/verify/junit.xml: "), "{s}");
            assert!(s.contains(why), "{s}");
        }
        // An empty suite reads as a run that collected nothing: the comparison judges that.
        let r = junit("pytest", "junit.xml", b"<testsuites/>").expect("reads");
        assert_eq!(r.collected(), 0);
    }

    #[test]
    fn jest_json_report() {
        let report = br#"{"numTotalTests":3,"testResults":[
 {"name":"/workspace/calc.test.js","status":"failed","message":"","assertionResults":[
   {"ancestorTitles":["calc"],"fullName":"calc adds","status":"passed","title":"adds","failureMessages":[],"location":{"line":3,"column":3}},
   {"ancestorTitles":["calc"],"fullName":"calc subtracts","status":"failed","title":"subtracts","failureMessages":["expect(received).toBe(expected)\n\nExpected: 5\nReceived: 9"],"location":null},
   {"fullName":"calc later","status":"todo","title":"later"}]},
 {"name":"/workspace/broken.test.js","status":"failed","message":"  \u25cf Test suite failed to run\n\n    Cannot find module './mul'","assertionResults":[]}]}"#;
        let r = jest_json("/job-out/verify/jest.json", report).expect("reads");
        let ids: Vec<(&str, Outcome, Option<u32>)> = r
            .tests
            .iter()
            .map(|t| (t.id.as_str(), t.outcome, t.line))
            .collect();
        assert_eq!(
            ids,
            [
                ("calc.test.js::calc adds", Outcome::Passed, Some(3)),
                ("calc.test.js::calc subtracts", Outcome::Failed, None),
                ("calc.test.js::calc later", Outcome::Skipped, None),
            ]
        );
        assert_eq!(
            r.tests[1].message.as_deref(),
            Some("expect(received).toBe(expected) Expected: 5 Received: 9")
        );
        assert_eq!(
            r.collection_errors,
            ["broken.test.js: \u{25cf} Test suite failed to run"]
        );
        let err = jest_json("jest.json", b"{}").expect_err("not a report");
        assert!(
            err.to_string()
                .starts_with("jest: jest.json: not Jest's JSON report"),
            "{err}"
        );
    }

    #[test]
    fn go_test_json_events() {
        let out = br#"{"Action":"run","Package":"example.com/calc","Test":"TestAdd"}
{"Action":"pass","Package":"example.com/calc","Test":"TestAdd","Elapsed":0}
{"Action":"run","Package":"example.com/calc","Test":"TestSub"}
{"Action":"output","Package":"example.com/calc","Test":"TestSub","Output":"    calc_test.go:9: got 9, want 5\n"}
{"Action":"fail","Package":"example.com/calc","Test":"TestSub","Elapsed":0}
{"Action":"skip","Package":"example.com/calc","Test":"TestSlow","Elapsed":0}
{"Action":"fail","Package":"example.com/calc","Elapsed":0.01}
# example.com/broken
broken/x_test.go:3:2: undefined: Mul
{"Action":"fail","Package":"example.com/broken","Elapsed":0}
FAIL	example.com/old [build failed]
"#;
        let r = go_test_json("go test -json ./...", out).expect("reads");
        let ids: Vec<(&str, Outcome)> =
            r.tests.iter().map(|t| (t.id.as_str(), t.outcome)).collect();
        assert_eq!(
            ids,
            [
                ("example.com/calc::TestAdd", Outcome::Passed),
                ("example.com/calc::TestSlow", Outcome::Skipped),
                ("example.com/calc::TestSub", Outcome::Failed),
            ]
        );
        assert_eq!(
            r.tests[2].message.as_deref(),
            Some("calc_test.go:9: got 9, want 5")
        );
        assert_eq!(r.collection_errors.len(), 2, "{:?}", r.collection_errors);
        assert!(r.collection_errors[0].starts_with("example.com/broken: "));
        assert!(r.collection_errors[1].starts_with("example.com/old: "));
        let err =
            go_test_json("go test", b"PASS\nok  example.com/calc 0.01s\n").expect_err("not json");
        assert!(
            err.to_string()
                .starts_with("go test: go test: no `go test -json` event")
        );
    }

    #[test]
    fn a_stack_trace_is_cut_from_a_message() {
        let message = "Error: expect(received).toBe(expected)\n\nExpected: 3\nReceived: 4\n    at Object.toBe (/workspace/__tests__/calc.test.js:4:21)\n    at new Promise (<anonymous>)";
        assert_eq!(
            shorten(message).as_deref(),
            Some("Error: expect(received).toBe(expected) Expected: 3 Received: 4")
        );
        // A line that merely starts with the word is kept.
        assert_eq!(
            shorten("expected the value\nat least 3").as_deref(),
            Some("expected the value at least 3")
        );
    }

    #[test]
    fn libtest_output() {
        let out = b"   Compiling calc v0.1.0\n     Running unittests src/lib.rs (target/debug/deps/calc-1a2b)\n\nrunning 3 tests\ntest tests::adds ... ok\ntest tests::subtracts ... FAILED\ntest tests::slow ... ignored, needs a GPU\n\n     Running tests/api.rs (target/debug/deps/api-3c4d)\ntest serves ... ok\n";
        let r = libtest("cargo test", out).expect("reads");
        let ids: Vec<(&str, Outcome)> =
            r.tests.iter().map(|t| (t.id.as_str(), t.outcome)).collect();
        assert_eq!(
            ids,
            [
                ("src/lib.rs::tests::adds", Outcome::Passed),
                ("src/lib.rs::tests::subtracts", Outcome::Failed),
                ("src/lib.rs::tests::slow", Outcome::Skipped),
                ("tests/api.rs::serves", Outcome::Passed),
            ]
        );
        let broken = b"error[E0425]: cannot find function `mul` in this scope\nerror: could not compile `calc` (lib test) due to 1 previous error\n";
        let r = libtest("cargo test", broken).expect("reads");
        assert_eq!(r.collected(), 0);
        assert_eq!(r.collection_errors.len(), 2);
    }

    #[test]
    fn a_report_too_large_is_refused() {
        let big = vec![b' '; MAX_REPORT_BYTES + 1];
        let err = junit("pytest", "junit.xml", &big).expect_err("too large");
        assert!(err.to_string().contains("more than the"), "{err}");
    }
}
