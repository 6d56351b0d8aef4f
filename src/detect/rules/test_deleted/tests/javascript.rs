//! `test-deleted` on JavaScript and TypeScript test forms.

use super::deleted;
use crate::detect::Rule;
use crate::detect::testing::{Spec::*, messages, run};

const BASE: &str = "import { expect, test } from 'vitest'\nimport { isBundledDev } from './utils'\n\ntest('renders blue', async () => {\n  expect(await getColor('p')).toBe('blue')\n})\n";

#[test]
fn a_test_put_behind_a_condition_is_skipped_not_deleted() {
    let head = BASE.replace("test('renders", "test.skipIf(isBundledDev)('renders");
    let report = run(&[Modify("test/a.spec.ts", BASE, &head)]);
    assert!(messages(&report, Rule::TestDeleted).is_empty());
    // The skip rule still sees it.
    assert_eq!(
        messages(&report, Rule::SkipMarker),
        vec!["newly marks a test skipped: `test.skipIf`"]
    );
    let head = BASE.replace("test('renders", "test.runIf(!isBundledDev)('renders");
    let report = run(&[Modify("test/a.spec.ts", BASE, &head)]);
    assert!(messages(&report, Rule::TestDeleted).is_empty());
    assert_eq!(
        messages(&report, Rule::SkipMarker),
        vec!["newly marks a test skipped: `test.runIf`"]
    );
    // So does it when the test goes behind a name bound to `test` or `test.skip`.
    let head = BASE.replace(
        "test('renders",
        "const maybe = 'Temporal' in globalThis ? test : test.skip;\nmaybe('renders",
    );
    let report = run(&[Modify("test/a.spec.ts", BASE, &head)]);
    assert!(messages(&report, Rule::TestDeleted).is_empty());
    assert_eq!(messages(&report, Rule::SkipMarker).len(), 1);
}

#[test]
fn changed_generators_of_a_property_test_keep_the_test() {
    let old = "it.prop([fc.array(fc.char())])('should be reflexive', a => {\n  expect(f(a, a)).toEqual(a)\n})\n";
    let new = old.replace("fc.char()", "char()");
    assert!(deleted(&[Modify("test/a.test.ts", old, &new)]).is_empty());
}

#[test]
fn a_wrapped_test_that_is_gone_is_still_deleted() {
    // The lookalike: the test behind the condition is removed, and another stays.
    let old = "test.skipIf(isWin)('renders blue', () => {\n  expect(color()).toBe('blue')\n})\ntest('kept', () => {\n  expect(1 + 1).toBe(2)\n})\n";
    let new = "test('kept', () => {\n  expect(1 + 1).toBe(2)\n})\n";
    let flags = deleted(&[Modify("test/a.spec.ts", old, new)]);
    assert_eq!(flags.len(), 1);
    assert!(
        flags[0].message.starts_with("test `renders blue` (line 1"),
        "{}",
        flags[0].message
    );
}

#[test]
fn brackets_and_quotes_in_a_regex_literal_do_not_move_tests() {
    let old = "describe('build', () => {\n  test('minifies', () => {\n    const pattern = /,function\\(e,/\n  })\n  test('emits css', () => {\n    expect(b).toEqual([])\n  })\n})\n";
    let new = old.replace(
        "    const pattern = /,function\\(e,/\n",
        "    const pattern = /,function\\(e,/\n    expect(c).toMatch(/catch\\s*\\(/)\n    expect(c).not.toMatch(/catch\\s*\\{\"/)\n",
    );
    assert!(deleted(&[Modify("test/a.spec.ts", old, &new)]).is_empty());
    // The lookalike: the neighbouring test really removed.
    let gone = new.replace(
        "  test('emits css', () => {\n    expect(b).toEqual([])\n  })\n",
        "",
    );
    let flags = deleted(&[Modify("test/a.spec.ts", old, &gone)]);
    assert_eq!(flags.len(), 1);
    assert!(
        flags[0].message.contains("build > emits css"),
        "{}",
        flags[0].message
    );
}
