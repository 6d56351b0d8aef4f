//! runner-narrowed on an ignore the base already had, written anew for the place its files
//! moved to: the same ignore, unless nothing moved there.

use crate::Rule;
use crate::testing::{Spec, Spec::*, lines, run};

fn flagged(specs: &[Spec<'_>]) -> Vec<u32> {
    lines(&run(specs), Rule::RunnerNarrowed)
}

const MOVED_TEST: &str = "test('renders', () => { expect(render()).toBe(1) })\n";
const JEST_OLD: &str = "{\n  \"jest\": {\n    \"testPathIgnorePatterns\": [\"/node_modules/\", \"<rootDir>/packages/old/slow/\"]\n  }\n}\n";
const JEST_NEW: &str = "{\n  \"jest\": {\n    \"testPathIgnorePatterns\": [\"/node_modules/\", \"<rootDir>/packages/new/slow/\"]\n  }\n}\n";

#[test]
fn a_jest_ignore_that_followed_its_directory() {
    let moved = Rename(
        "packages/old/slow/render.test.js",
        "packages/new/slow/render.test.js",
        MOVED_TEST,
        MOVED_TEST,
    );
    assert!(flagged(&[Modify("package.json", JEST_OLD, JEST_NEW), moved]).is_empty());
    // The directory moved as a deletion and an addition: the same move.
    assert!(
        flagged(&[
            Modify("package.json", JEST_OLD, JEST_NEW),
            Delete("packages/old/slow/render.test.js", MOVED_TEST),
            Add("packages/new/slow/render.test.js", MOVED_TEST),
        ])
        .is_empty()
    );
    // The positive: the entry re-pathed with nothing moved, over tests that were running.
    assert_eq!(
        flagged(&[Modify("package.json", JEST_OLD, JEST_NEW)]),
        vec![3]
    );
}

#[test]
fn a_vitest_exclude_and_a_pytest_ignore_that_followed_their_files() {
    let test = "test('a', () => { expect(1).toBe(1) })\n";
    let old = "export default defineConfig({\n  test: {\n    exclude: ['**/node_modules/**', 'packages/legacy/**'],\n  },\n})\n";
    let new = "export default defineConfig({\n  test: {\n    exclude: ['**/node_modules/**', 'packages/compat/legacy/**'],\n  },\n})\n";
    let moved = Rename(
        "packages/legacy/a.test.ts",
        "packages/compat/legacy/a.test.ts",
        test,
        test,
    );
    assert!(flagged(&[Modify("vitest.config.ts", old, new), moved]).is_empty());
    assert_eq!(flagged(&[Modify("vitest.config.ts", old, new)]), vec![3]);

    let py = "def test_x():\n    assert slow() == 1\n";
    let old = "[pytest]\naddopts = --ignore=tests/old_dir/test_slow.py\n";
    let new = "[pytest]\naddopts = --ignore=tests/new_dir/test_slow.py\n";
    let moved = Rename(
        "tests/old_dir/test_slow.py",
        "tests/new_dir/test_slow.py",
        py,
        py,
    );
    assert!(flagged(&[Modify("pytest.ini", old, new), moved]).is_empty());
    // Another file moved there than the one ignored: the ignore is new.
    let other = Rename(
        "tests/old_dir/test_fast.py",
        "tests/new_dir/test_fast.py",
        py,
        py,
    );
    assert_eq!(flagged(&[Modify("pytest.ini", old, new), other]), vec![2]);
    // A new ignore, the base had none: flagged.
    assert_eq!(
        flagged(&[Modify(
            "pytest.ini",
            "[pytest]\naddopts = -q\n",
            "[pytest]\naddopts = -q --ignore=tests/new_dir/test_slow.py\n"
        )]),
        vec![2]
    );
}
