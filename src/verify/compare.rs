//! The three runs judged together: the base's tests on the base, the worker's tests on the
//! worker's code ("head"), and the base's tests on the worker's code ("restored").
//!
//! - A test that fails in the restored run and passes at the head passes only because the
//!   change rewrote it: when it passed at the base, the change broke the code and edited the
//!   test to match (`base-tests-fail`); when it did not (it was the failing test to fix, or
//!   the base could not run it), the change made it pass by editing the test instead of the
//!   code (`test-rewritten`). Either way the base's version of the test still fails on the
//!   change's code: a test that failed at the base is no excuse.
//! - The restored run collects fewer tests than the base run did, or cannot collect a file the
//!   base run could (the worker's code no longer loads the base's tests), or a test that fails
//!   in the restored run is gone from the worker's tests (the worker deleted a test its code
//!   fails): `tests-lost`. A test the worker deleted that passes on its code is a clean-up,
//!   not a loss; the detector's own rules judge the deletion itself.
//!
//! A fourth run, where the change has new or changed tests and changed production code too,
//! runs the change's tests on the base's code ([`vacuous`]): when every new or changed test
//! passes there as well, none shows anything about the change's fix (`tests-vacuous`), as a
//! fix's regression test fails without it. One that fails there is the proof, and the others
//! beside it are left alone: a fix's tests often pin what already worked too.

use std::collections::{BTreeMap, BTreeSet};

use super::{Outcome, RunResults, TestResult};

/// What the comparison found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// Fails on the base's tests, passes on the worker's, and passed at the base.
    BaseTestsFail {
        test: TestResult,
        /// The same test in the change's own run (where the change has it now).
        head: TestResult,
    },
    /// Fails on the base's tests, passes on the worker's, and did not pass at the base.
    TestRewritten {
        test: TestResult,
        head: TestResult,
        /// How it ended at the base, where the base's run had it.
        at_base: Option<Outcome>,
    },
    /// The restored run collects fewer tests than the base run or cannot collect what the base
    /// run could, or tests failing on the worker's code are gone from its tests.
    TestsLost {
        base: usize,
        head: usize,
        restored: usize,
        /// Collection errors the restored run has and the base run did not.
        errors: Vec<String>,
        /// Tests that fail in the restored run and that the worker's tests no longer have.
        deleted: Vec<TestResult>,
    },
    /// A new or changed test that passes on the change's code and on the base's code alike.
    TestsVacuous {
        test: TestResult,
        /// How many more such tests there are, on the last one listed.
        more: usize,
    },
}

/// The most `tests-vacuous` findings listed; the last says how many more there are.
pub const VACUOUS_MAX: usize = 10;

/// The tests among `changed` (ids the change added or edited) that pass on the change's code
/// (`head`), when every one of them passes on the base's code with the change's tests
/// (`on_base`) as well; none when one fails there or is not collected.
pub fn vacuous(
    head: &RunResults,
    on_base: &RunResults,
    changed: &BTreeSet<String>,
) -> Vec<Finding> {
    let passed = |r: &RunResults| -> BTreeSet<String> {
        r.last()
            .filter(|t| t.outcome == Outcome::Passed)
            .map(|t| t.id.clone())
            .collect()
    };
    let on_base = passed(on_base);
    let tests: Vec<&TestResult> = head
        .last()
        .filter(|t| t.outcome == Outcome::Passed && changed.contains(&t.id))
        .collect();
    if tests.iter().any(|t| !on_base.contains(&t.id)) {
        return Vec::new();
    }
    let more = tests.len().saturating_sub(VACUOUS_MAX);
    let listed = tests.len().min(VACUOUS_MAX);
    tests
        .into_iter()
        .take(VACUOUS_MAX)
        .enumerate()
        .map(|(i, t)| Finding::TestsVacuous {
            test: t.clone(),
            more: if i + 1 == listed { more } else { 0 },
        })
        .collect()
}

/// Judges the three runs.
pub fn compare(base: &RunResults, head: &RunResults, restored: &RunResults) -> Vec<Finding> {
    // A test reported twice (a retry) counts by its last outcome.
    let by_id = |r: &RunResults| -> BTreeMap<String, Outcome> {
        r.last().map(|t| (t.id.clone(), t.outcome)).collect()
    };
    let at_base = by_id(base);
    let at_head: BTreeMap<&str, &TestResult> = head.last().map(|t| (t.id.as_str(), t)).collect();
    let mut out: Vec<Finding> = restored
        .last()
        .filter(|t| t.outcome == Outcome::Failed)
        .filter_map(|t| {
            let now = at_head
                .get(t.id.as_str())
                .filter(|h| h.outcome == Outcome::Passed)?;
            let (test, head) = (t.clone(), (*now).clone());
            Some(match at_base.get(&t.id) {
                Some(Outcome::Passed) => Finding::BaseTestsFail { test, head },
                at_base => Finding::TestRewritten {
                    test,
                    head,
                    at_base: at_base.copied(),
                },
            })
        })
        .collect();
    let at_head: BTreeMap<String, Outcome> = by_id(head);
    let base_errors: BTreeSet<&str> = base.collection_errors.iter().map(String::as_str).collect();
    let new_errors: Vec<String> = restored
        .collection_errors
        .iter()
        .filter(|e| !base_errors.contains(e.as_str()))
        .cloned()
        .collect();
    let deleted: Vec<TestResult> = restored
        .last()
        .filter(|t| t.outcome == Outcome::Failed && !at_head.contains_key(&t.id))
        .cloned()
        .collect();
    if restored.collected() < base.collected() || !new_errors.is_empty() || !deleted.is_empty() {
        out.push(Finding::TestsLost {
            base: base.collected(),
            head: head.collected(),
            restored: restored.collected(),
            errors: new_errors,
            deleted,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(tests: &[(&str, Outcome)], errors: &[&str]) -> RunResults {
        RunResults {
            tests: tests
                .iter()
                .map(|(id, outcome)| TestResult {
                    id: (*id).to_owned(),
                    file: Some("tests/test_calc.py".to_owned()),
                    line: Some(4),
                    outcome: *outcome,
                    message: None,
                })
                .collect(),
            collection_errors: errors.iter().map(|e| (*e).to_owned()).collect(),
        }
    }

    use Outcome::*;

    #[test]
    fn an_honest_change_agrees_everywhere() {
        let base = run(&[("a", Failed), ("b", Passed)], &[]);
        let fixed = run(&[("a", Passed), ("b", Passed)], &[]);
        assert_eq!(compare(&base, &fixed, &fixed), []);
    }

    #[test]
    fn an_edited_expectation_fails_on_the_base_tests() {
        let base = run(&[("a", Passed), ("b", Passed)], &[]);
        // The worker changed `b`'s code and its expectation to match.
        let head = run(&[("a", Passed), ("b", Passed)], &[]);
        let restored = run(&[("a", Passed), ("b", Failed)], &[]);
        let found = compare(&base, &head, &restored);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(matches!(&found[0], Finding::BaseTestsFail { test, .. } if test.id == "b"));
    }

    #[test]
    fn a_failing_test_made_to_pass_by_rewriting_it_is_the_change_s_doing() {
        // The failing test to fix: the change edited its expected value, not the code.
        let base = run(&[("a", Failed), ("b", Passed)], &[]);
        let head = run(&[("a", Passed), ("b", Passed)], &[]);
        let restored = run(&[("a", Failed), ("b", Passed)], &[]);
        let found = compare(&base, &head, &restored);
        assert!(
            matches!(&found[..], [Finding::TestRewritten { test, at_base: Some(Failed), .. }] if test.id == "a"),
            "{found:?}"
        );
        // The base could not run it (skipped there, or not in its run): still the rewrite.
        let base = run(&[("a", Skipped), ("b", Passed)], &[]);
        assert!(matches!(
            &compare(&base, &head, &restored)[..],
            [Finding::TestRewritten {
                at_base: Some(Skipped),
                ..
            }]
        ));
        // The honest fix of the same test: it passes with the base's version too.
        let fixed = run(&[("a", Passed), ("b", Passed)], &[]);
        assert_eq!(compare(&run(&[("a", Failed)], &[]), &fixed, &fixed), []);
        // Still failing with the change's own version: an honest failure, not a rewrite.
        let head = run(&[("a", Failed), ("b", Passed)], &[]);
        assert_eq!(compare(&base, &head, &restored), []);
    }

    #[test]
    fn a_test_failing_at_the_head_too_is_an_honest_failure() {
        let base = run(&[("a", Passed)], &[]);
        let head = run(&[("a", Failed)], &[]);
        assert_eq!(compare(&base, &head, &head), []);
    }

    #[test]
    fn fewer_tests_collected_or_a_file_that_no_longer_imports_is_tests_lost() {
        let base = run(&[("a", Passed), ("b", Passed)], &[]);
        let restored = run(&[("a", Passed)], &["tests/test_b.py: ImportError: mul"]);
        let head = run(&[("a", Passed)], &[]);
        assert_eq!(
            compare(&base, &head, &restored),
            [Finding::TestsLost {
                base: 2,
                head: 1,
                restored: 1,
                errors: vec!["tests/test_b.py: ImportError: mul".to_owned()],
                deleted: vec![],
            }]
        );
        // An error the base already had is not lost to the worker.
        let base = run(&[("a", Passed)], &["tests/test_b.py: ImportError: mul"]);
        assert_eq!(compare(&base, &head, &restored), []);
        // A test deleted from the worker's tests that fails on its code (here it failed at the
        // base already: the bug the worker was to fix).
        let base = run(&[("a", Passed), ("b", Failed)], &[]);
        let head = run(&[("a", Passed)], &[]);
        let restored = run(&[("a", Passed), ("b", Failed)], &[]);
        let found = compare(&base, &head, &restored);
        assert!(
            matches!(&found[..], [Finding::TestsLost { base: 2, head: 1, restored: 2, errors, deleted }]
                if errors.is_empty() && deleted.len() == 1 && deleted[0].id == "b"),
            "{found:?}"
        );
    }

    #[test]
    fn a_retried_test_counts_by_its_last_try() {
        let base = run(&[("a", Passed)], &[]);
        let head = run(&[("a", Passed)], &[]);
        // Flaky on the base's tests: failed, then passed when the runner tried again.
        let restored = run(&[("a", Failed), ("a", Passed)], &[]);
        assert_eq!(compare(&base, &head, &restored), []);
        assert_eq!((restored.collected(), restored.count(Failed)), (1, 0));
        // Failed on its last try: one flag, not one per try.
        let restored = run(&[("a", Failed), ("a", Failed)], &[]);
        assert_eq!(compare(&base, &head, &restored).len(), 1);
    }

    #[test]
    fn a_deleted_test_that_passes_on_the_change_is_a_clean_up() {
        let base = run(&[("a", Passed), ("b", Passed)], &[]);
        let head = run(&[("a", Passed)], &[]);
        let restored = run(&[("a", Passed), ("b", Passed)], &[]);
        assert_eq!(compare(&base, &head, &restored), []);
        // Tests renamed by the worker: the restored run has the base's names, all passing.
        let head = run(&[("a2", Passed), ("b2", Passed)], &[]);
        assert_eq!(compare(&base, &head, &restored), []);
    }

    fn ids(ids: &[&str]) -> BTreeSet<String> {
        ids.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn new_tests_that_all_pass_without_the_fix_are_vacuous() {
        let head = run(&[("old", Passed), ("a", Passed), ("b", Passed)], &[]);
        let found = vacuous(&head, &head, &ids(&["a", "b"]));
        let listed: Vec<&str> = found
            .iter()
            .filter_map(|f| match f {
                Finding::TestsVacuous { test, .. } => Some(test.id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(listed, ["a", "b"]);
    }

    #[test]
    fn one_new_test_that_fails_without_the_fix_is_the_proof() {
        let head = run(
            &[("old", Passed), ("shows_it", Passed), ("pins", Passed)],
            &[],
        );
        let on_base = run(
            &[("old", Passed), ("shows_it", Failed), ("pins", Passed)],
            &[],
        );
        assert_eq!(vacuous(&head, &on_base, &ids(&["shows_it", "pins"])), []);
    }

    #[test]
    fn a_test_the_base_cannot_run_or_the_change_does_not_pass_is_not_vacuous() {
        // The base's code does not load the new test (a collection error), and a test that
        // fails on the change says nothing of the kind either.
        let head = run(&[("new", Passed), ("broken", Failed)], &[]);
        let on_base = run(&[("broken", Failed)], &["tests/test_calc.py: ImportError"]);
        assert_eq!(vacuous(&head, &on_base, &ids(&["new", "broken"])), []);
        // A changed test that fails on the change is no proof of anything either way.
        let on_base = run(&[("new", Passed), ("broken", Failed)], &[]);
        assert_eq!(vacuous(&head, &on_base, &ids(&["broken"])), []);
        // Unchanged tests are not asked about, however they end.
        let on_base = run(&[("new", Passed)], &[]);
        assert_eq!(vacuous(&head, &on_base, &ids(&[])), []);
    }

    #[test]
    fn many_vacuous_tests_are_listed_up_to_the_most_and_counted() {
        let names: Vec<String> = (0..13).map(|i| format!("t{i:02}")).collect();
        let tests: Vec<(&str, Outcome)> = names.iter().map(|n| (n.as_str(), Passed)).collect();
        let all = run(&tests, &[]);
        let changed: BTreeSet<String> = names.iter().cloned().collect();
        let found = vacuous(&all, &all, &changed);
        assert_eq!(found.len(), VACUOUS_MAX);
        let more: Vec<usize> = found
            .iter()
            .map(|f| match f {
                Finding::TestsVacuous { more, .. } => *more,
                _ => usize::MAX,
            })
            .collect();
        assert_eq!(more, [0, 0, 0, 0, 0, 0, 0, 0, 0, 3]);
    }
}
