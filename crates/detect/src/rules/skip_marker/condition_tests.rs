//! skip-marker on markers that skip only under a condition, written as real suites write
//! them (Vitest's `runIf`/`skipIf`, a runner chosen by a ternary, Mocha's `this.skip()` under
//! an `if`, pytest's skip on a missing import), each beside the positive it must not hide.

use super::tests::{added, modified};
use crate::flag::{Rule, Severity};
use crate::testing::{Spec::*, run};

const VITEST: &str = "import { describe, expect, test } from 'vitest'\nimport { isBuild, isWindows } from '~utils'\n\ndescribe('resolve', () => {\n  test('finds the entry', async () => {\n    expect(await resolve('pkg')).toBe('/pkg/index.js')\n  })\n})\n";

fn with(extra: &str) -> String {
    format!("{VITEST}\n{extra}")
}

#[test]
fn a_new_vitest_group_or_test_born_with_run_if_or_skip_if() {
    for extra in [
        "describe.runIf(isWindows)('windows paths', () => {\n  test('normalizes drive letters', () => {\n    expect(normalizePath('C:\\\\a\\\\b')).toBe('C:/a/b')\n  })\n})\n",
        "describe.skipIf(process.platform === 'win32')('symlinks', () => {\n  test('follows a link', () => {\n    expect(realpath('link')).toBe('/target')\n  })\n})\n",
        "test.runIf(isBuild)('emits a manifest', async () => {\n  expect(await readManifest()).toHaveProperty('index.html')\n})\n",
        "test.skipIf(!isBuild)('inlines small assets', async () => {\n  expect(await getBg('.icon')).toMatch('data:image/png')\n})\n",
    ] {
        assert!(
            modified(
                "playground/resolve/__tests__/resolve.spec.ts",
                VITEST,
                &with(extra)
            )
            .is_empty(),
            "{extra}"
        );
    }
    // The positives beside them: a new group skipped outright, and a condition that is a
    // constant (`runIf(false)` never runs).
    let skipped = with(
        "describe.skip('symlinks', () => {\n  test('follows a link', () => {\n    expect(realpath('link')).toBe('/target')\n  })\n})\n",
    );
    assert_eq!(
        modified(
            "playground/resolve/__tests__/resolve.spec.ts",
            VITEST,
            &skipped
        ),
        vec![10]
    );
    let never = with(
        "describe.runIf(false)('symlinks', () => {\n  test('follows a link', () => {\n    expect(realpath('link')).toBe('/target')\n  })\n})\n",
    );
    assert_eq!(
        modified(
            "playground/resolve/__tests__/resolve.spec.ts",
            VITEST,
            &never
        ),
        vec![10]
    );
}

#[test]
fn a_new_group_run_by_a_runner_a_ternary_chose() {
    for extra in [
        "const describeIfWin = isWindows ? describe : describe.skip\n\ndescribeIfWin('windows paths', () => {\n  test('normalizes drive letters', () => {\n    expect(normalizePath('C:\\\\a')).toBe('C:/a')\n  })\n})\n",
        ";(isWindows ? describe : describe.skip)('windows paths', () => {\n  test('normalizes drive letters', () => {\n    expect(normalizePath('C:\\\\a')).toBe('C:/a')\n  })\n})\n",
    ] {
        assert!(
            modified("test/paths.spec.ts", VITEST, &with(extra)).is_empty(),
            "{extra}"
        );
    }
    // The existing group run through it: a note where it is used.
    let base = "import { describe, expect, test } from 'vitest'\n\ndescribe('windows paths', () => {\n  test('normalizes drive letters', () => {\n    expect(normalizePath('C:\\\\a')).toBe('C:/a')\n  })\n})\n";
    let head = "import { describe, expect, test } from 'vitest'\n\nconst describeIfWin = isWindows ? describe : describe.skip\n\ndescribeIfWin('windows paths', () => {\n  test('normalizes drive letters', () => {\n    expect(normalizePath('C:\\\\a')).toBe('C:/a')\n  })\n})\n";
    let r = run(&[Modify("test/paths.spec.ts", base, head)]);
    let flags: Vec<_> = r
        .flags
        .iter()
        .filter(|f| f.rule == Rule::SkipMarker)
        .collect();
    assert_eq!(flags.len(), 1);
    assert_eq!(
        (flags[0].line, flags[0].severity),
        (Some(5), Severity::Note)
    );
}

#[test]
fn mocha_this_skip_under_an_if_in_a_new_test() {
    let old = "describe('scroll', function () {\n  it('restores the position', function () {\n    assert.equal(restore(), 120)\n  })\n})\n";
    for guard in [
        "    if (isSafari) {\n      this.skip()\n    }\n",
        "    if (isSafari) this.skip()\n",
    ] {
        let new = format!(
            "describe('scroll', function () {{\n  it('restores the position', function () {{\n    assert.equal(restore(), 120)\n  }})\n\n  it('scrolls smoothly', function () {{\n{guard}    assert.equal(scrollBehavior(), 'smooth')\n  }})\n}})\n"
        );
        assert!(
            modified("test/scroll.test.js", old, &new).is_empty(),
            "{guard}"
        );
    }
    let new = "describe('scroll', function () {\n  it('restores the position', function () {\n    assert.equal(restore(), 120)\n  })\n\n  it('scrolls smoothly', function () {\n    this.skip()\n    assert.equal(scrollBehavior(), 'smooth')\n  })\n})\n";
    assert_eq!(modified("test/scroll.test.js", old, new), vec![7]);
}

#[test]
fn pytest_skip_when_an_optional_import_is_missing() {
    let new = "import pytest\n\ntry:\n    import numpy as np\nexcept ImportError:\n    pytest.skip(\"numpy is not installed\", allow_module_level=True)\n\n\ndef test_sum():\n    assert np.array([1, 2]).sum() == 3\n";
    assert!(added("tests/test_numpy.py", new).is_empty());
    let old = "import pytest\n\n\ndef test_plain():\n    assert total([1, 2]) == 3\n";
    let new = "import pytest\n\n\ndef test_plain():\n    assert total([1, 2]) == 3\n\n\ndef test_numpy():\n    try:\n        import numpy as np\n    except ImportError as exc:\n        pytest.skip(f\"numpy is required: {exc}\")\n    assert total(np.array([1, 2])) == 3\n";
    assert!(modified("tests/test_total.py", old, new).is_empty());
    // Skipped whatever is installed: flagged.
    let new = "import pytest\n\n\ndef test_plain():\n    assert total([1, 2]) == 3\n\n\ndef test_numpy():\n    pytest.skip(\"later\")\n    assert total(np.array([1, 2])) == 3\n";
    assert_eq!(modified("tests/test_total.py", old, new), vec![9]);
}

#[test]
fn tests_moved_between_groups_under_the_same_condition() {
    let base = "describe.runIf(isBuild)('css', () => {\n  test('emits a stylesheet', async () => {\n    expect(await findAssetFile(/\\.css$/)).toMatch('color: red')\n  })\n  test('emits a chunk', async () => {\n    expect(await findAssetFile(/\\.js$/)).toMatch('export')\n  })\n})\n";
    let head = "describe.runIf(isBuild)('css', () => {\n  test('emits a stylesheet', async () => {\n    expect(await findAssetFile(/\\.css$/)).toMatch('color: red')\n  })\n})\n\ndescribe.runIf(isBuild)('js', () => {\n  test('emits a chunk', async () => {\n    expect(await findAssetFile(/\\.js$/)).toMatch('export')\n  })\n})\n";
    assert!(modified("playground/css/__tests__/css.spec.ts", base, head).is_empty());
    // Moved out of a group that ran everywhere into one that runs only in a build: flagged.
    let base = "describe('css', () => {\n  test('emits a stylesheet', async () => {\n    expect(await findAssetFile(/\\.css$/)).toMatch('color: red')\n  })\n  test('emits a chunk', async () => {\n    expect(await findAssetFile(/\\.js$/)).toMatch('export')\n  })\n})\n";
    assert!(!modified("playground/css/__tests__/css.spec.ts", base, head).is_empty());
}

#[test]
fn an_existing_test_newly_skipped_under_a_condition_is_a_note() {
    let old = "import { expect, test } from 'vitest'\n\ntest('serves the wasm file', async () => {\n  expect(await page.textContent('.url')).toMatch('/light.wasm')\n})\n";
    let new = old.replace("test('serves", "test.skipIf(isBundledDev)('serves");
    let r = run(&[Modify("playground/wasm/__tests__/wasm.spec.ts", old, &new)]);
    let flags: Vec<_> = r
        .flags
        .iter()
        .filter(|f| f.rule == Rule::SkipMarker)
        .collect();
    assert_eq!(flags.len(), 1);
    assert_eq!(
        (flags[0].line, flags[0].severity),
        (Some(3), Severity::Note)
    );
    assert!(!r.fails());
    // A condition that reads the environment, where the run judging the change may differ
    // from a developer's: a warning.
    let new = old.replace("test('serves", "test.skipIf(process.env.CI)('serves");
    let r = run(&[Modify("playground/wasm/__tests__/wasm.spec.ts", old, &new)]);
    assert_eq!(r.flags[0].severity, Severity::Warning);
    // Skipped outright: a warning.
    let new = old.replace("test('serves", "test.skip('serves");
    let r = run(&[Modify("playground/wasm/__tests__/wasm.spec.ts", old, &new)]);
    assert_eq!(r.flags[0].severity, Severity::Warning);
}

#[test]
fn an_existing_test_run_by_a_ternary_chosen_inline() {
    // mocha's own suite: the symlink test skipped where symlinks cannot be made.
    let base = "describe('lookupFiles', function () {\n  it('should not choke on symlinks', function () {\n    expect(utils.lookupFiles(tmpDir, ['js'], false)).to.have.length(2)\n  })\n})\n";
    let head = "describe('lookupFiles', function () {\n  var symlinkSupported = canSymlink(tmpDir)\n\n  ;(symlinkSupported ? it : it.skip)('should not choke on symlinks', function () {\n    expect(utils.lookupFiles(tmpDir, ['js'], false)).to.have.length(2)\n  })\n})\n";
    let r = run(&[Modify("test/acceptance/lookup-files.js", base, head)]);
    // The same test, still there: not deleted, and a note where it became conditional.
    let got: Vec<(Rule, Severity)> = r.flags.iter().map(|f| (f.rule, f.severity)).collect();
    assert_eq!(
        got,
        vec![(Rule::SkipMarker, Severity::Note)],
        "{:?}",
        r.flags
    );
    // Chosen by a constant, it is skipped outright.
    let head = head.replace("(symlinkSupported ?", "(false ?");
    let r = run(&[Modify("test/acceptance/lookup-files.js", base, &head)]);
    assert!(
        r.flags
            .iter()
            .any(|f| f.rule == Rule::SkipMarker && f.severity == Severity::Warning),
        "{:?}",
        r.flags
    );
}
