//! A deleted test file whose tests reappear in one file under another kind of test directory
//! (`test/integration/` → `e2e/`): not lost, but perhaps run by another job or runner, so a
//! note says where they went.

use super::Candidate;
use crate::RepoPath;
use crate::flag::{Flag, Rule, Severity};
use crate::suite::compare::Pool;

/// Directory names that say which kind of test a directory holds, and so often which job or
/// runner runs it.
const KINDS: &[&str] = &[
    "unit",
    "integration",
    "integration_tests",
    "e2e",
    "functional",
    "acceptance",
    "system",
    "smoke",
    "browser",
    "perf",
    "benchmark",
    "benchmarks",
    "contract",
];

/// The kind of test directory a path sits in (its innermost such directory), if any.
fn kind(path: &RepoPath) -> Option<String> {
    let path = path.to_string();
    let dirs: Vec<&str> = path.split('/').collect();
    dirs[..dirs.len().saturating_sub(1)]
        .iter()
        .rev()
        .find(|d| KINDS.contains(d))
        .map(|d| (*d).to_owned())
}

/// One note per deleted test file most of whose tests are new tests of one file in another
/// kind of test directory.
pub(super) fn relocated(candidates: &[Candidate], pool: &Pool) -> Vec<Flag> {
    let mut out = Vec::new();
    let mut files: Vec<&RepoPath> = candidates
        .iter()
        .filter(|c| c.file_deleted)
        .map(|c| &c.path)
        .collect();
    files.dedup();
    for from in files {
        let tests: Vec<&Candidate> = candidates.iter().filter(|c| &c.path == from).collect();
        let mut hits: Vec<(&RepoPath, usize)> = Vec::new();
        for c in &tests {
            let mut dests: Vec<&RepoPath> = pool
                .new_tests
                .iter()
                .filter(|t| t.simple == c.simple)
                .filter_map(|t| t.path.as_ref())
                .collect();
            dests.dedup();
            for d in dests {
                match hits.iter_mut().find(|(p, _)| *p == d) {
                    Some((_, n)) => *n += 1,
                    None => hits.push((d, 1)),
                }
            }
        }
        let Some((to, n)) = hits.into_iter().max_by_key(|(_, n)| *n) else {
            continue;
        };
        let (Some(was), now) = (kind(to), kind(from)) else {
            continue;
        };
        if 2 * n <= tests.len() || now.as_deref() == Some(was.as_str()) {
            continue;
        }
        let old = now.map_or_else(|| "a plain test directory".to_owned(), |k| format!("`{k}`"));
        out.push(Flag {
            rule: Rule::TestDeleted,
            severity: Severity::Note,
            path: from.clone(),
            line: None,
            removed_line: Some(tests[0].line),
            message: format!(
                "the test file moved to `{to}`, from {old} to an `{was}` directory: its tests run wherever `{was}` tests run, which may not be the run that judges this change"
            ),
            snippet: None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::flag::Severity;
    use crate::testing::{Spec::*, run};

    const CALC: &str = "import { add, mul } from '../../src/calc'\n\ntest('adds', () => {\n  expect(add(1, 2)).toBe(3)\n})\n\ntest('muls', () => {\n  expect(mul(3, 2)).toBe(6)\n})\n";

    #[test]
    fn a_suite_moved_to_another_kind_of_test_directory_is_a_note() {
        let r = run(&[
            Keep("src/calc.ts", "export const add = (a, b) => a + b\n"),
            Delete("test/integration/calc.test.ts", CALC),
            Add("e2e/calc.spec.ts", CALC),
        ]);
        assert_eq!(r.flags.len(), 1, "{:?}", r.flags);
        assert_eq!(r.flags[0].severity, Severity::Note);
        assert!(
            r.flags[0].message.contains("`e2e/calc.spec.ts`"),
            "{}",
            r.flags[0].message
        );
        // Moved within one kind: nothing to say.
        let r = run(&[
            Keep("src/calc.ts", "export const add = (a, b) => a + b\n"),
            Delete("test/integration/calc.test.ts", CALC),
            Add("test/integration/math/calc.test.ts", CALC),
        ]);
        assert!(r.flags.is_empty(), "{:?}", r.flags);
    }
}
