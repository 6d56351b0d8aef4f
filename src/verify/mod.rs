//! Independent verification: the repository's own tests, run by the bot, read as per-test
//! outcomes and compared across three runs — the base, the head as the worker left it, and the
//! head with the base's test files restored.
//!
//! This module reads what runners report and judges the three runs; it runs nothing itself.
//! [`results`] turns a runner's report (JUnit XML, `go test -json`, libtest's output) into one
//! [`RunResults`]; [`compare`] finds the tests that fail on the base's own tests but pass on the
//! worker's, and the tests the restored run no longer collects.

pub mod compare;
pub mod results;
pub mod runner;
pub mod suite;

/// How one test ended.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Passed,
    /// Failed or errored: the runner counts both against the suite.
    Failed,
    Skipped,
}

/// One test's result in one run.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TestResult {
    /// Stable across runs of the same suite: `tests/test_calc.py::test_add`,
    /// `example.com/calc::TestAdd/negative`, `calc::tests::adds`.
    pub id: String,
    /// The test's file, relative to the repository, where the runner says.
    pub file: Option<String>,
    pub line: Option<u32>,
    pub outcome: Outcome,
    /// The failure's message, shortened, where there is one.
    pub message: Option<String>,
}

/// What one run of a suite reported (kept as JSON for the base's run; see
/// [`crate::store::Store::put_base_run`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunResults {
    pub tests: Vec<TestResult>,
    /// What could not be collected or built (a test file that no longer imports, a package that
    /// no longer compiles), one line each.
    pub collection_errors: Vec<String>,
}

impl RunResults {
    /// How many tests ended in `outcome`.
    pub fn count(&self, outcome: Outcome) -> usize {
        self.last().filter(|t| t.outcome == outcome).count()
    }

    /// How many tests the run collected, whatever their outcome.
    pub fn collected(&self) -> usize {
        self.last().count()
    }

    /// Each test once, by its last result: a test reported again (a runner's retry of a flaky
    /// test) counts by how its last try ended. In the order tests were first reported.
    pub fn last(&self) -> impl Iterator<Item = &TestResult> {
        let mut last: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (i, t) in self.tests.iter().enumerate() {
            last.insert(t.id.as_str(), i);
        }
        self.tests
            .iter()
            .enumerate()
            .filter(move |(i, t)| last.get(t.id.as_str()) == Some(i))
            .map(|(_, t)| t)
    }
}

/// A report that cannot be read: named by what wrote it and where it is, never taken for a pass.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{runner}: {source_name}: {message}")]
pub struct ResultsError {
    pub runner: String,
    pub source_name: String,
    pub message: String,
}
