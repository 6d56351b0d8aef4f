//! `skip-marker`: a test newly marked skipped, ignored, expected to fail or disabled.
//!
//! One table of markers per language. Most need a test file (a method called `skip` in
//! production Ruby is just a method); a few are unambiguous anywhere (`#[ignore]` only ever
//! applies to Rust tests, and Rust keeps unit tests in `#[cfg(test)]` modules under `src/`).
//! Patterns run over the masked text, so a marker in a comment, docstring or string is not one.
//!
//! What is new is judged per test ([`judge`]): each marker is tied to the test or group of tests
//! it applies to ([`owner`]) and compared with what the same test had at the base; a marker on a
//! test new to the change is flagged only without a condition ([`guard`]), unless the test is
//! one the change moved or renamed.

use crate::rules::prelude::*;
use crate::{MAX_TEXT_SIZE, paths};
use std::ops::Range;

use crate::lang::{Language, PerLanguage};
use crate::scan::Text;

mod cfg;
mod guard;
mod judge;
mod owner;

pub(crate) use judge::{Claim, Removed, judge, removed_tests, resolve};

struct Marker {
    lang: Language,
    kind: &'static str,
    /// A pattern without capture groups.
    pattern: &'static str,
    /// Applies in any file of the language, not only in test files.
    anywhere: bool,
    /// Completes "newly …": what the marker does to a test.
    does: &'static str,
}

const SKIPPED: &str = "marks a test skipped";
const XFAIL: &str = "marks a test expected to fail";
const IGNORED: &str = "marks a test ignored";
const DISABLED: &str = "disables a test";

use Language::*;

const MARKERS: &[Marker] = &[
    // Python: pytest and unittest.
    m(
        Python,
        "py-mark-skip",
        r"\b(?:pytest\s*\.\s*)?mark\s*\.\s*skip(?:if)?\b",
        true,
        SKIPPED,
    ),
    m(
        Python,
        "py-mark-xfail",
        r"\b(?:pytest\s*\.\s*)?mark\s*\.\s*xfail\b",
        true,
        XFAIL,
    ),
    m(
        Python,
        "py-skip-call",
        r"\bpytest\s*\.\s*(?:skip|importorskip)\s*\(",
        true,
        SKIPPED,
    ),
    m(
        Python,
        "py-xfail-call",
        r"\bpytest\s*\.\s*xfail\s*\(",
        true,
        XFAIL,
    ),
    m(
        Python,
        "py-unittest-skip",
        r"\bunittest\s*\.\s*skip(?:If|Unless)?\b",
        true,
        SKIPPED,
    ),
    m(
        Python,
        "py-unittest-xfail",
        r"\bunittest\s*\.\s*expectedFailure\b",
        true,
        XFAIL,
    ),
    m(
        Python,
        "py-skip-decorator",
        r"@\s*skip(?:If|Unless)?\b",
        false,
        SKIPPED,
    ),
    m(
        Python,
        "py-xfail-decorator",
        r"@\s*expectedFailure\b",
        false,
        XFAIL,
    ),
    m(
        Python,
        "py-skiptest",
        r"\.\s*skipTest\s*\(|\braise\s+(?:unittest\s*\.\s*)?SkipTest\b",
        true,
        SKIPPED,
    ),
    // JavaScript and TypeScript: Jest, Mocha, Vitest, Jasmine, Playwright, node:test.
    m(
        JavaScript,
        "js-skip",
        r"\b(?:it|test|describe|context|suite|specify|bench)(?:\s*\.\s*(?:only|concurrent|sequential|serial|parallel|each|prop))*\s*\.\s*(?:skip(?:If)?|runIf)\b",
        false,
        SKIPPED,
    ),
    m(
        JavaScript,
        "js-xfail",
        r"\b(?:it|test)\s*\.\s*(?:fixme|fails|failing)\b",
        false,
        XFAIL,
    ),
    m(
        JavaScript,
        "js-x",
        r"\bx(?:it|test|describe|context|specify)\s*\(",
        false,
        SKIPPED,
    ),
    m(
        JavaScript,
        "js-this-skip",
        r"\b(?:this|ctx|context|t)\s*\.\s*skip\s*\(",
        false,
        SKIPPED,
    ),
    m(
        JavaScript,
        "js-skip-option",
        r"\{\s*skip\s*:\s*(?:true|['`]|\x22)",
        false,
        SKIPPED,
    ),
    // Go: only `_test.go` files hold tests.
    m(
        Go,
        "go-skip",
        r"\b\w+\s*\.\s*(?:Skip|Skipf|SkipNow)\s*\(",
        false,
        SKIPPED,
    ),
    // Rust: `#[ignore]` and `#[cfg_attr(…, ignore)]`, wherever the test sits.
    m(
        Rust,
        "rs-ignore",
        r"#\s*\[\s*(?:ignore\b|cfg_attr\s*\([^\]]*\bignore\b)",
        true,
        IGNORED,
    ),
    // Java and Kotlin: JUnit 4 and 5, TestNG.
    m(
        Java,
        "java-disabled",
        r"@\s*(?:org\.junit\.jupiter\.api\.)?Disabled\w*\b",
        false,
        DISABLED,
    ),
    m(
        Java,
        "java-ignore",
        r"@\s*(?:org\.junit\.)?Ignore\b",
        false,
        IGNORED,
    ),
    m(
        Java,
        "java-testng-disabled",
        r"@\s*Test\s*\([^)]*\benabled\s*=\s*false\b",
        false,
        DISABLED,
    ),
    // An assumption that never holds aborts the test as skipped (JUnit 4 and 5).
    m(
        Java,
        "java-assume-false",
        r"\bassume(?:True\s*\(\s*false|False\s*\(\s*true)\b|\bAssumptions\s*\.\s*abort\s*\(",
        false,
        SKIPPED,
    ),
    // C#: xUnit, NUnit, MSTest.
    m(
        CSharp,
        "cs-skip",
        r"\[\s*(?:Skippable)?(?:Fact|Theory)\w*\s*\([^\]]*\bSkip\s*=",
        true,
        SKIPPED,
    ),
    m(
        CSharp,
        "cs-ignore",
        r"[\[,]\s*Ignore\s*[\](]",
        false,
        IGNORED,
    ),
    m(
        CSharp,
        "cs-assert-ignore",
        r"\bAssert\s*\.\s*(?:Ignore|Inconclusive)\s*\(",
        false,
        IGNORED,
    ),
    // Ruby: RSpec and Minitest.
    m(
        Ruby,
        "rb-skip",
        r"(?m)^[ \t]*(?:skip|pending)(?:[ \t]*\(|[ \t]+[\x22']|[ \t\r]*$)",
        false,
        SKIPPED,
    ),
    m(
        Ruby,
        "rb-x",
        r"\bx(?:it|describe|context|specify|example|scenario|feature)\b",
        false,
        SKIPPED,
    ),
    m(
        Ruby,
        "rb-skip-metadata",
        r",\s*(?::skip\b|:pending\b|skip\s*:|pending\s*:)",
        false,
        SKIPPED,
    ),
    // PHP: PHPUnit.
    m(
        Php,
        "php-skip",
        r"\bmarkTest(?:Skipped|Incomplete)\s*\(",
        true,
        SKIPPED,
    ),
    // C++: GoogleTest.
    m(
        Cpp,
        "gtest-disabled",
        r"\b(?:TEST|TEST_F|TEST_P|TYPED_TEST|TYPED_TEST_P)\s*\(\s*(?:DISABLED_\w*|\w+\s*,\s*DISABLED_)",
        true,
        DISABLED,
    ),
    m(Cpp, "gtest-skip", r"\bGTEST_SKIP\b", true, SKIPPED),
    // Swift: XCTest and Swift Testing.
    m(
        Swift,
        "swift-skip",
        r"\bXCTSkip(?:If|Unless)?\b",
        true,
        SKIPPED,
    ),
    m(
        Swift,
        "swift-disabled",
        r"@\s*(?:Test|Suite)\s*\([^)]*\.disabled\b",
        true,
        DISABLED,
    ),
    // Elixir: ExUnit tags.
    m(
        Elixir,
        "ex-skip",
        r"@(?:tag|moduletag|describetag)\s+(?::skip\b|skip\s*:)",
        true,
        SKIPPED,
    ),
];

const fn m(
    lang: Language,
    kind: &'static str,
    pattern: &'static str,
    anywhere: bool,
    does: &'static str,
) -> Marker {
    Marker {
        lang,
        kind,
        pattern,
        anywhere,
        does,
    }
}

/// One language's markers as one alternation: a single pass over the file finds them all, and
/// each match says which.
struct Compiled {
    regex: super::Alternation,
    markers: Vec<&'static Marker>,
}

fn compile(lang: Language, in_tests: bool) -> Option<Compiled> {
    let markers: Vec<&Marker> = MARKERS
        .iter()
        .filter(|m| m.lang == lang && (in_tests || m.anywhere))
        .collect();
    if markers.is_empty() {
        return None;
    }
    let regex = super::alternation(markers.iter().map(|m| m.pattern), false);
    Some(Compiled { regex, markers })
}

/// A language, its markers for test files, and those that apply anywhere.
static COMPILED: PerLanguage<(Option<Compiled>, Option<Compiled>)> =
    PerLanguage::new(|l| (compile(l, true), compile(l, false)));

/// Words every marker of a language contains, in the raw text: a file without any of them
/// cannot hold a marker, and is neither masked nor scanned. (Masking only blanks bytes, so a
/// match on the masked text has its words in the raw text too.)
const TRIGGERS: &[(Language, &[&str])] = &[
    (Python, &["skip", "Skip", "xfail", "expectedFailure"]),
    (
        JavaScript,
        &[
            "skip",
            "runIf",
            "xit",
            "xtest",
            "xdescribe",
            "xcontext",
            "xspecify",
            "fixme",
            "fail",
        ],
    ),
    (Go, &["Skip"]),
    (Rust, &["ignore"]),
    (Java, &["Disabled", "Ignore", "enabled", "assume", "abort"]),
    (CSharp, &["Skip", "Ignore", "Inconclusive"]),
    (
        Ruby,
        &[
            "skip",
            "pending",
            "xit",
            "xdescribe",
            "xcontext",
            "xspecify",
            "xexample",
            "xscenario",
            "xfeature",
        ],
    ),
    (Php, &["markTest"]),
    (Cpp, &["DISABLED_", "GTEST_SKIP"]),
    (Swift, &["XCTSkip", "disabled"]),
    (Elixir, &["skip"]),
];

static TRIGGER_SETS: PerLanguage<Option<super::LiteralSet>> = PerLanguage::new(|lang| {
    TRIGGERS
        .iter()
        .find(|(l, _)| *l == lang)
        .map(|(_, words)| super::literal_set(words))
});

/// False when `raw` cannot hold any marker of `lang`.
pub(crate) fn might_match(lang: Language, raw: &[u8]) -> bool {
    TRIGGER_SETS
        .get(lang)
        .as_ref()
        .is_some_and(|set| set.is_match(raw))
}

/// True when some marker of `lang` applies to a file (a test file, or any file for markers
/// that apply anywhere).
pub(crate) fn applies(lang: Language, is_test: bool) -> bool {
    MARKERS
        .iter()
        .any(|m| m.lang == lang && (is_test || m.anywhere))
}

/// Every marker of `lang` in one version, leftmost first, with where it is.
fn find(lang: Language, is_test: bool, text: &Text<'_>) -> Vec<(&'static Marker, Range<usize>)> {
    let (tests, anywhere) = COMPILED.get(lang);
    let Some(compiled) = (if is_test { tests } else { anywhere }) else {
        return Vec::new();
    };
    compiled
        .regex
        .find_iter(&text.masked)
        .map(|(i, found)| (compiled.markers[i], found))
        .filter(|(marker, found)| {
            !(marker.kind == "rs-ignore" && cfg::only_under_a_tool(&text.masked[found.clone()]))
        })
        .collect()
}

/// The marker as a reviewer reads it: matched on the masked text, shown with its strings
/// (`target_os = "wasi"`) but not its comments, on one line.
fn shown(text: &Text<'_>, at: Range<usize>) -> String {
    let code: Vec<u8> = at
        .map(|i| match (text.masked[i], text.raw.get(i)) {
            (m, Some(&r)) if m == r || text.in_comment(i) => m,
            (_, Some(&r)) => r,
            (m, None) => m,
        })
        .collect();
    let s = String::from_utf8_lossy(&code);
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The rule's registry entry and what the detector runs for it.
pub(crate) const RULE: RuleInfo = RuleInfo {
    rule: Rule::SkipMarker,
    id: "skip-marker",
    severity: Severity::Warning,
    source: Source::Detector,
    languages: "Python, JS/TS, Go, Rust, Java/Kotlin, C#, Ruby, PHP, C++, Swift, Elixir",
    summary: "A test is newly marked skipped, ignored, expected to fail or disabled.",
    help: "A skipped test passes by not running. Flags a skip, xfail, ignore or disable \
           marker (or an assumption that never holds: `assumeTrue(false)`) that the \
           change puts on a test, compared test by test: on a test that \
           existed (or that the change moved or renamed), any marker it did not have; on a \
           test new to the change, one without a condition (a skipif on a real condition, \
           importorskip or a skip under an if is how a new test says where it runs). A test \
           moved with its marker, a marker re-indented or given a reason, a stored marker \
           where it is defined (its uses are judged) and a decorator on a helper are not \
           new, nor is a Rust test ignored only under Miri or loom \
           (`#[cfg_attr(miri, ignore)]`), which `cargo test` still runs, or one ignored \
           only where the base did not compile its file (`#![cfg(not(target_os = \"wasi\"))]` \
           dropped). A module's or class's skip narrowed to the tests that need it adds \
           none to them. Files under a fixtures directory (`fixtures`, `testdata`, PHPUnit's `_files`), which tests \
           read or run, are not read.",
    judges_tests: true,
    passes: &[
        Pass::Code(Reads::new(reads, prefilter), judge_markers),
        Pass::Change(settle_claims),
    ],
};

/// Test files and the files where a marker applies anywhere; not fixtures (a runner's input
/// that skips on purpose is not this suite's).
fn reads(file: &File<'_>) -> bool {
    !file.role.fixture
        && file
            .lang
            .is_some_and(|lang| applies(lang, file.role.is_test))
}

fn prefilter(file: &File<'_>, raw: &[u8]) -> bool {
    file.lang.is_some_and(|lang| might_match(lang, raw))
}

/// What [`judge_markers`] holds for [`settle_claims`]: the markers on tests new to the file,
/// and the tests it lost.
struct Held {
    claims: Vec<(Finding, Claim)>,
    removed: Vec<Removed>,
}

/// Skip markers are judged per test; those whose tests cannot be told join the per-file count
/// of the line rules.
fn judge_markers(code: &Code<'_>, out: &mut Out<'_>) {
    let role = &code.file.role;
    let Some(judged) = judge(
        code.lang,
        role.is_test,
        role.harness.is_some(),
        code.file.change,
        code.new,
        code.old,
    ) else {
        return;
    };
    out.found.head.extend(judged.head_other);
    out.found.base.extend(judged.base_other);
    for o in judged.now {
        let f = out.finding(o);
        out.findings.push(f);
    }
    for o in judged.conditional {
        let mut f = out.finding(o);
        f.flag.severity = Severity::Note;
        out.findings.push(f);
    }
    let claims = judged
        .claims
        .into_iter()
        .map(|(o, claim)| (out.finding(o), claim))
        .collect();
    out.hold(Held {
        claims,
        removed: judged.removed,
    });
}

/// The skip markers on tests new to their files, settled against the tests the change
/// removed anywhere: a test moved with its marker keeps it; a test moved or renamed that
/// gains one, and a new test skipped without a condition, are flagged.
fn settle_claims(across: &mut Across<'_, '_>) -> Vec<(Flag, Option<String>)> {
    let mut read: Vec<Option<Vec<Removed>>> = across.files.iter().map(|_| None).collect();
    let mut claims: Vec<(Finding, Claim)> = Vec::new();
    for (i, held) in across.take::<Held>() {
        claims.extend(held.claims);
        read[i] = Some(held.removed);
    }
    if claims.is_empty() {
        return Vec::new();
    }
    // A conditional marker on a new test is flagged only when the test is one the change
    // moved or renamed, from any file: files whose markers were not read are read now
    // for the tests they lost (rarely: only a change with such a claim pays for it).
    let read_all = claims.iter().any(|(_, c)| c.conditional());
    let (classifier, base, head) = (
        across.trees.classifier,
        across.trees.base,
        across.trees.head,
    );
    let mut removed = Vec::new();
    for (a, read) in across.files.iter().zip(read) {
        if let Some(r) = read {
            removed.extend(r);
            continue;
        }
        if !read_all || a.ignored || a.change.removed.is_empty() {
            continue;
        }
        let Some(old_path) = &a.change.old_path else {
            continue;
        };
        let Some(lang) = Language::of(old_path) else {
            continue;
        };
        // Test files, and Rust files (which keep unit tests beside the code).
        let is_test = classifier.is_test(old_path);
        if paths::is_doc(old_path)
            || !(is_test || lang == Language::Rust)
            || !applies(lang, is_test)
        {
            continue;
        }
        let Some(old) = base.read(old_path).filter(|t| t.len() <= MAX_TEXT_SIZE) else {
            continue;
        };
        let new = a
            .change
            .new_path
            .as_ref()
            .and_then(|p| head.read(p))
            .filter(|t| t.len() <= MAX_TEXT_SIZE);
        removed.extend(removed_tests(lang, &old, new.as_deref()));
    }
    let refs: Vec<&Claim> = claims.iter().map(|(_, c)| c).collect();
    let verdicts = resolve(&refs, &mut removed);
    claims
        .into_iter()
        .zip(verdicts)
        .filter(|(_, flagged)| *flagged)
        .map(|((f, _), _)| (f.flag, f.allowed))
        .collect()
}

#[cfg(test)]
mod condition_tests;
#[cfg(test)]
mod per_test_tests;
#[cfg(test)]
mod tests;
