//! The rules raised outside the detector, listed in the registry beside its own: `config-edit`,
//! which every check adds when a change edits `.forgeward.toml` (the detector knows no
//! configuration files), and the bot's, from a worker's change and its verification. None has a
//! pass here.

use super::prelude::*;

/// Raised by every check (`check`, the hook, the bot), never by the detector.
pub(crate) const CONFIG_EDIT: RuleInfo = RuleInfo {
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
    judges_tests: false,
    passes: &[],
};

/// The bot's, on a worker's change with read-only tests.
pub(crate) const PROTECTED_TEST_CHANGED: RuleInfo = RuleInfo {
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
    judges_tests: false,
    passes: &[],
};

/// The bot's verification.
pub(crate) const BASE_TESTS_FAIL: RuleInfo = RuleInfo {
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
    judges_tests: false,
    passes: &[],
};

/// The bot's verification.
pub(crate) const TESTS_LOST: RuleInfo = RuleInfo {
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
    judges_tests: false,
    passes: &[],
};

/// The bot's verification.
pub(crate) const TEST_REWRITTEN: RuleInfo = RuleInfo {
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
    judges_tests: false,
    passes: &[],
};

/// The bot's verification.
pub(crate) const TESTS_VACUOUS: RuleInfo = RuleInfo {
    rule: Rule::TestsVacuous,
    id: "tests-vacuous",
    severity: Severity::Note,
    source: Source::Bot,
    languages: "any suite the bot can run",
    summary: "The change's new and changed tests all pass on the base's code too: none shows the change's fix.",
    help: "From the bot's own runs of the suite: where a change edits production code and adds \
           or changes tests, its tests also run on the base's code. When every new or changed \
           test passes there as well, they would all pass without the change, so none shows \
           what the change fixed (a fix's regression test fails without the fix); each is \
           listed. One that fails there is the proof, and the tests beside it are left alone. \
           A note on a person's change; at least a warning on a worker's and an agent's, whose \
           tests are what claims the fix works.",
    judges_tests: true,
    passes: &[],
};
