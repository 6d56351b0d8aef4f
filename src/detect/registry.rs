//! The rules (`Rule`), their severities (`Severity`) and the registry: one row per rule, with
//! everything a user or a report needs to know of it.
//!
//! The rules themselves live in [`super::rules`], one file each; this table is what SARIF lists,
//! what `.forgeward.toml` names in `[check.rules]`, and where each rule's default severity is
//! chosen. The rows are in the order of the [`Rule`] enum, so a rule finds its row by index.
//!
//! Default severities are chosen so that a reviewer of an ordinary human pull request is not
//! flooded and still sees every weakened test of a worker:
//! - `error`: something that is almost never right to merge (a focused test silently stops the
//!   rest of the suite from running);
//! - `warning`: a sign that a test now checks less or no longer runs; the pull request check posts
//!   it as a line comment;
//! - `note`: a change that is routine in honest work but worth a glance on a worker's change
//!   (an expected value edited along with the behaviour it checks); a pull request check lists it
//!   in its summary only, while a worker job shows it like any other flag.

use std::fmt;
use std::str::FromStr;

/// A rule of the detector. The ids are stable: JSON, SARIF and configuration use them, and a
/// later rule gets a new id rather than a renamed one. What each rule is (its id, default
/// severity, languages and help) is one row of [`RULES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    SkipMarker,
    StubbedImport,
    ShadowModule,
    StrayBackup,
    /// A change edits `.forgeward.toml`: raised by every check (the configuration in force is
    /// always the base's), not by the detector, which knows no configuration files.
    ConfigEdit,
    TestWeakened,
    ExpectationChanged,
    TestDeleted,
    FocusedTest,
    ForcedExit,
    AlwaysEqual,
    OutcomePatched,
    Suppression,
    SpecialCase,
    RunnerNarrowed,
    /// The bot's own flag: a test protected as read-only at the base changed all the same.
    ProtectedTestChanged,
    /// The bot's verification: a test fails on the base's tests and passes on the worker's.
    BaseTestsFail,
    /// The bot's verification: fewer tests collected than at the base.
    TestsLost,
    /// The bot's verification: a test that still fails with its base version on the change,
    /// and passes only with the change's rewrite of it.
    TestRewritten,
}

impl Rule {
    /// Every rule, in the registry's order.
    pub fn all() -> impl Iterator<Item = Rule> {
        RULES.iter().map(|r| r.rule)
    }

    /// The rule's row in the registry.
    pub fn info(self) -> &'static RuleInfo {
        // The registry lists the rules in the enum's order (a unit test holds it to that).
        &RULES[self as usize]
    }

    /// Whether the detector raises it (`forgeward check`); the others are the bot's own.
    pub fn is_detector_rule(self) -> bool {
        self.info().source == Source::Detector
    }

    /// Whether it judges the tests or what runs them: on a worker's change (and an agent's pull
    /// request) such a rule is at least a warning, whatever the repository's `[check.rules]` say,
    /// since these are the signs of a test made to pass instead of code made to work. Lint
    /// suppressions, backups and the production-code rules keep the configured severity.
    pub fn judges_tests(self) -> bool {
        matches!(
            self,
            Rule::SkipMarker
                | Rule::TestWeakened
                | Rule::ExpectationChanged
                | Rule::TestDeleted
                | Rule::FocusedTest
                | Rule::ForcedExit
                | Rule::AlwaysEqual
                | Rule::OutcomePatched
                | Rule::RunnerNarrowed
        )
    }

    pub fn id(self) -> &'static str {
        self.info().id
    }

    /// One sentence for rule listings (SARIF rule metadata, line comments).
    pub fn description(self) -> &'static str {
        self.info().summary
    }

    /// The severity its flags have unless the repository says otherwise.
    pub fn severity(self) -> Severity {
        self.info().severity
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for Rule {
    type Err = String;

    fn from_str(s: &str) -> Result<Rule, String> {
        Rule::all().find(|r| r.id() == s).ok_or_else(|| {
            let ids: Vec<&str> = Rule::all().map(Rule::id).collect();
            format!("unknown rule '{s}', expected one of {}", ids.join(", "))
        })
    }
}

/// How much a flag matters. Ordered: `Note < Warning < Error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    Note,
    Warning,
    Error,
}

impl Severity {
    pub const ALL: [Severity; 3] = [Severity::Note, Severity::Warning, Severity::Error];

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Severity {
    type Err = String;

    fn from_str(s: &str) -> Result<Severity, String> {
        Severity::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| format!("unknown severity '{s}', expected error, warning or note"))
    }
}

/// Who raises a rule's flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The detector, on any change (`forgeward check`, pull request checks, worker jobs).
    Detector,
    /// The bot, on a worker's change only.
    Bot,
}

/// One rule, as users and reports see it.
#[derive(Debug)]
pub struct RuleInfo {
    pub rule: Rule,
    /// Stable: JSON, SARIF and configuration use it.
    pub id: &'static str,
    pub severity: Severity,
    pub source: Source,
    /// The languages or files it reads.
    pub languages: &'static str,
    /// One sentence.
    pub summary: &'static str,
    /// What it flags and why, and what it deliberately leaves alone.
    pub help: &'static str,
}

/// Every rule, in the [`Rule`] enum's order.
pub static RULES: &[RuleInfo] = &[
    RuleInfo {
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
    },
    RuleInfo {
        rule: Rule::StubbedImport,
        id: "stubbed-import",
        severity: Severity::Warning,
        source: Source::Detector,
        languages: "Python, JS/TS, Ruby",
        summary: "Production code newly carries on without a dependency instead of failing to import it.",
        help: "A missing dependency should fail loudly. Flags `try: import x` / `except: ...` \
               (not an `except` that imports another real module under the same names, nor a \
               platform-only standard-library module such as `winreg` or `readline`), \
               writes to `sys.modules` (not an alias of an imported module within the project's own \
               package), `x = None` for an imported name at module level, `require()` in \
               `try`/`catch` and `import().catch` newly added to production code, Ruby's \
               `begin require 'x' rescue LoadError … end` that carries on, and a write \
               to `sys.modules` at module level in `conftest.py` (every test imports the \
               stand-in).",
    },
    RuleInfo {
        rule: Rule::ShadowModule,
        id: "shadow-module",
        severity: Severity::Warning,
        source: Source::Detector,
        languages: "Python, JS/TS (dependency manifests), Go (go.mod)",
        summary: "A new local module is named like a declared dependency and would be imported instead of it.",
        help: "A local `yaml.py` beside the code hides the real PyYAML. Flags a new module or \
               package named like a dependency the repository declares, where the language \
               would import it: in Python also among the tests (`tests/requests.py`, which \
               pytest puts first on `sys.path`); in JS/TS only under `node_modules/` or a root of bare imports \
               that a `tsconfig.json`/`jsconfig.json` declares (`baseUrl`, `paths`); and a \
               `go.mod` `replace` newly pointing a dependency at a directory the same change \
               writes.",
    },
    RuleInfo {
        rule: Rule::StrayBackup,
        id: "stray-backup",
        severity: Severity::Warning,
        source: Source::Detector,
        languages: "any file",
        summary: "A new file or directory is a backup copy left behind.",
        help: "Flags new `*.bak`, `*.orig`, `*.rej`, `*~`, `*.swp` files, `name_backup.py` \
               or `name.py.old` beside `name.py`, and `backup/` directories of copies.",
    },
    RuleInfo {
        rule: Rule::ConfigEdit,
        id: "config-edit",
        severity: Severity::Warning,
        source: Source::Bot,
        languages: ".forgeward.toml",
        summary: "The change edits .forgeward.toml, the configuration that decides what is flagged.",
        help: "Every check reads the configuration from the base of what it judges (`check`, \
               the pre-push hook, `verify`, the bot), never from the change itself, so a change \
               cannot switch its own check off; its new settings apply from the next range on. \
               The flag lists what the edit would relax (an `ignore` or `test_paths` entry \
               added, an `allow` added, a rule turned off or down, `mode = \"warn\"`, a higher \
               `fail_on`, verification turned off or its command changed, read-only tests made \
               writable) and is a warning when it relaxes anything, a note when it only \
               tightens. On a worker's change any edit is a warning.",
    },
    RuleInfo {
        rule: Rule::TestWeakened,
        id: "test-weakened",
        severity: Severity::Note,
        source: Source::Detector,
        languages: "Python, JS/TS, Go, Rust, Java/Kotlin, C#, Ruby, PHP",
        summary: "A test that exists before and after the change now checks less.",
        help: "Flags a test with fewer assertions (or table rows) than it had, a body reduced \
               to nothing that checks (`pass`, `return`, calls whose results are dropped), an \
               assertion made vacuous (`assert True`, `... or True`, `expect(true).toBe(true)`, \
               `assert!(true)`, `expect(x)` with no matcher, `assert len(x) >= 0`), an exact \
               assertion swapped for a loose one about the same value (`== 170` to \
               `is not None`, `toBe(170)` to `toBeDefined()`, `isEqualTo` to `isNotNull()`, \
               `toThrow(\"msg\")` to `toThrow()`), a tolerance widened by an order of \
               magnitude or more past rounding noise (`approx(20.0, abs=1e-9)` to `abs=10`, \
               `== 170.0` to `approx(170.0, rel=0.5)`, `places=7` to `places=0`, \
               `toBeCloseTo(x, 4)` to `toBeCloseTo(x, 0)`, a delta from `1e-9` to `1.0`), a \
               mock's call checked loosely (`assert_called_once_with(...)` to \
               `assert mock.called`), a specific error made any error, `#[should_panic]` \
               added to a Rust test that still asserts what it did, a test moved to another file or class \
               that checks less there, assertions put where they never run (after a \
               `return`, inside `if False:` or `if (false) { ... }`), a table row the body \
               newly passes over (`if tt.name == \"x\" { continue }`), and an assertion newly \
               wrapped so that its failure is \
               swallowed (`except AssertionError: pass`, an empty `catch`). Assertions moved \
               to another test, into a helper the test calls, or into a parametrized table are \
               not lost, nor is an assertion on a caught error folded into the raise that \
               caught it (`pytest.raises(E, match=...)`, `assertRaisesRegex`). A mock's \
               expectation (`expects(...)`, `shouldReceive(...)->once()`) counts once each; a \
               stub (a mock set up with no call count) counts for nothing.",
    },
    RuleInfo {
        rule: Rule::ExpectationChanged,
        id: "expectation-changed",
        severity: Severity::Note,
        source: Source::Detector,
        languages: "Python, JS/TS, Go, Rust, Java/Kotlin, C#, Ruby, PHP",
        summary: "An assertion of an existing test now expects a different value, or the opposite.",
        help: "Flags an assertion whose expected literal changed (`== 5` to `== -1`), or whose \
               sense flipped (`==` to `!=`, `assertTrue` to `assertFalse`, `toBe` to \
               `not.toBe`), a table row of a test whose one literal changed, and a rewritten \
               snapshot (inline, or stored: Jest/Vitest `.snap`, insta, syrupy). Quote style, \
               wrapping, an added assertion message and a value moved into a parametrized row \
               unchanged are not changes. A note by default: honest changes of behaviour edit \
               expectations too.",
    },
    RuleInfo {
        rule: Rule::TestDeleted,
        id: "test-deleted",
        severity: Severity::Note,
        source: Source::Detector,
        languages: "Python, JS/TS, Go, Rust, Java/Kotlin, C#, Ruby, PHP",
        summary: "A test, or a whole test file, is gone and is not found elsewhere in the change.",
        help: "A deleted test cannot fail. Flags a test case present at the base and absent at \
               the head, unless it moved to another file, was renamed with the same body (or \
               with most of its body's words: in its file the edit is then judged as a \
               weakened test or a changed expectation; in another, the new test must check as \
               much with the same expected values), was split into tests that keep its \
               assertions or merged into one that checks as much, became a row of a \
               parametrized test, or tested (or was named for) a production definition the \
               change removes. Also flags a test still written where its runner no longer \
               runs it: renamed to a name the runner does not collect and nothing in its file \
               calls (`_test_x`, `xTestX`, `@Test` dropped), or moved to a new Python file \
               pytest does not collect that nothing in the change imports.",
    },
    RuleInfo {
        rule: Rule::FocusedTest,
        id: "focused-test",
        severity: Severity::Error,
        source: Source::Detector,
        languages: "JS/TS (Jest, Vitest, Mocha, Jasmine, node:test, AVA), Ruby (RSpec)",
        summary: "A test is newly focused, so the rest of the suite stops running.",
        help: "Flags `.only` on `it`/`test`/`describe`/`context`/`suite`, `fit`, `fdescribe`, \
               `fcontext`, `ftest`, `{ only: true }`, and RSpec's `focus: true`, `:focus` and \
               `fit`/`fdescribe`/`fcontext`. Every other test of the file or run stops running.",
    },
    RuleInfo {
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
    },
    RuleInfo {
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
    },
    RuleInfo {
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
    },
    RuleInfo {
        rule: Rule::Suppression,
        id: "suppression",
        severity: Severity::Note,
        source: Source::Detector,
        languages: "Python, JS/TS, Go, Rust, Java/Kotlin, C#, Ruby, PHP, C++, Swift, Elixir",
        summary: "A lint or type-checker suppression is newly added.",
        help: "A silenced warning is one nobody fixed. Flags `# type: ignore`, `# noqa`, \
               `# pylint: disable`, `# pyright: ignore`, `// eslint-disable…`, `// @ts-ignore`, \
               `// @ts-expect-error`, `#[allow(…)]`, `//nolint`, `@SuppressWarnings`, \
               `@Suppress`, `// NOLINT`, `#pragma warning disable`, `# rubocop:disable`, \
               `// phpcs:ignore`, `@phpstan-ignore`, `// swiftlint:disable` and the like in \
               comments (or, for attributes, in code), never in strings or docstrings, and \
               an ESLint rule newly turned off or mypy newly told to ignore errors in an \
               existing configuration file. An \
               existing suppression moved or re-indented is not new. A note by default: honest \
               changes add them too.",
    },
    RuleInfo {
        rule: Rule::SpecialCase,
        id: "special-case",
        severity: Severity::Warning,
        source: Source::Detector,
        languages: "Python, JS/TS, Go, Rust, Java/Kotlin, C#, Ruby, PHP, Swift, C++",
        summary: "Production code newly returns a constant for the exact input a test uses.",
        help: "Hard-coding a test's input makes that test pass and nothing else work. Flags a \
               new `if`, `case` or match arm in production code that compares its input with a \
               distinctive literal (not 0, 1, -1, 2, `None`, booleans, empty or short strings) \
               and returns a constant, when a test file of the head tree calls with that literal \
               and expects that constant (or the literal alone is unmistakable test data, such as \
               `\"x**2\"` or `(17, 25)`). Also flags production code that newly asks whether \
               a test runs it (`\"pytest\" in sys.modules`, `PYTEST_CURRENT_TEST`, \
               `process.env.JEST_WORKER_ID`, `testing.Testing()`, `cfg!(test)`). Base cases, \
               lookup tables of ordinary words, literals no test uses, branches that only moved \
               and `NODE_ENV === 'test'` are not flagged.",
    },
    RuleInfo {
        rule: Rule::RunnerNarrowed,
        id: "runner-narrowed",
        severity: Severity::Note,
        source: Source::Detector,
        languages: "pytest, tox, nox, coverage.py, Jest, Vitest, Mocha, package.json, Go build constraints, Cargo, Make, just, GitHub Actions, GitLab CI",
        summary: "The test runner, CI or coverage configuration newly runs or demands less.",
        help: "A suite that no longer runs the failing test, or a CI step that may fail, passes \
               without the code working. Flags pytest options that deselect or ignore tests \
               (`-k`, `--deselect`, `--ignore`, `-p no:…`, narrowed `testpaths`, `norecursedirs` \
               over tests, `-m`, `python_files` no longer matching `test_*.py`, a \
               `conftest.py` `collect_ignore` of tests or `pytest_ignore_collect`), Maven \
               `<skipTests>`, `<testFailureIgnore>` or a Surefire `<exclude>`, Gradle \
               `ignoreFailures` or an `exclude` in a test task, Jest/Vitest ignore patterns, `exclude`, `passWithNoTests`, `bail`, \
               Mocha's `spec` narrowed or `forbid-only` turned off, a \
               test script or recipe that can no longer fail (`|| true`, `; exit 0`, `echo`, a \
               `-` prefix) or runs fewer paths (also a nox session's `session.run`), a \
               `_test.go` file newly built only under `ignore` (or, for an existing one, a tag \
               a plain `go test` does not set, `integration`), Cargo `test = false` / `harness = false` on an existing target, a CI \
               test step given `continue-on-error` or `allow_failure` or removed, and a lowered \
               coverage threshold. More verbosity or strictness, wider selections, new jobs and \
               raised thresholds are not flagged.",
    },
    RuleInfo {
        rule: Rule::ProtectedTestChanged,
        id: "protected-test-changed",
        severity: Severity::Error,
        source: Source::Bot,
        languages: "any test file of the base",
        summary: "A test the repository protects as read-only (`[job] tests = \"read-only\"`) changed in the worker's change.",
        help: "With read-only tests the sandbox mounts every test file of the base read-only, so \
               an edit, a removal, a rename over it or a swap for a symlink fails inside it. The \
               bot still compares each protected test of the base with the worker's commit: a \
               difference means the protection was got round, and is flagged on the file.",
    },
    RuleInfo {
        rule: Rule::BaseTestsFail,
        id: "base-tests-fail",
        severity: Severity::Error,
        source: Source::Bot,
        languages: "any suite the bot can run (pytest, Jest, Vitest, go test, cargo test, Maven, Gradle)",
        summary: "A test fails when the base's own tests run on the worker's code, passes with the worker's tests, and did not fail at the base.",
        help: "The bot runs the repository's tests three times in the sandbox: on the base, on \
               the worker's change, and on the worker's change with every test file put back \
               as it was at the base. A test that only passes with the worker's version of the \
               tests was made to pass by editing it, not by fixing the code.",
    },
    RuleInfo {
        rule: Rule::TestsLost,
        id: "tests-lost",
        severity: Severity::Warning,
        source: Source::Bot,
        languages: "any suite the bot can run",
        summary: "The worker deleted a test its code fails, or the base's tests no longer all load with its code.",
        help: "From the bot's own runs of the suite: a test that fails when the base's tests run \
               on the worker's code is gone from the worker's tests, or the base's tests on the \
               worker's code collect fewer tests than the base run, or a test file that loaded at \
               the base fails to import or build. A deleted test that passes on the worker's code \
               is not flagged here.",
    },
    RuleInfo {
        rule: Rule::TestRewritten,
        id: "test-rewritten",
        severity: Severity::Error,
        source: Source::Bot,
        languages: "any suite the bot can run",
        summary: "A test still fails on the change with its base version, and passes only because the change rewrote it.",
        help: "From the bot's own runs of the suite: the test fails when the base's version of \
               it runs on the change's code and passes with the change's version, and it did \
               not pass at the base (it was the failing test to fix, or the base could not run \
               it). The change made the test pass by editing the test (its expected value, its \
               assertion), not the code. The flag sits on the line of the test the change \
               rewrote and says what changed there; a test that passed at the base is \
               `base-tests-fail`.",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_follow_the_enum_and_ids_are_unique() {
        for (i, info) in RULES.iter().enumerate() {
            assert_eq!(info.rule as usize, i, "{} is out of order", info.id);
            assert_eq!(info.rule.id(), info.id);
            assert!(!info.summary.is_empty() && !info.help.is_empty());
        }
        let mut ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), RULES.len());
    }

    #[test]
    fn ids_parse_back() {
        for rule in Rule::all() {
            assert_eq!(rule.id().parse::<Rule>(), Ok(rule));
        }
        assert!("skip".parse::<Rule>().is_err());
        assert_eq!("note".parse::<Severity>(), Ok(Severity::Note));
        assert!("loud".parse::<Severity>().is_err());
    }
}
