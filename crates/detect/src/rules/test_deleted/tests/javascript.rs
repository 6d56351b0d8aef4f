//! `test-deleted` on JavaScript and TypeScript test forms.

use super::deleted;
use crate::Rule;
use crate::testing::{Spec::*, messages, run};

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

const DENY_BASE: &str = "describe('main', () => {\n  test('**/deny/** should deny src/deny/deny.txt', async () => {\n    expect((await fetchPath('/src/deny/deny.txt')).status()).toBe(403)\n  })\n  test('**/deny/** should deny src/deny/.deny', async () => {\n    expect((await fetchPath('/src/deny/.deny')).status()).toBe(403)\n  })\n})\n";

const DENY_LOOP: &str = "describe('main', () => {\n  for (const { name, urlPath } of [\n    { name: 'src/deny/deny.txt', urlPath: '/src/deny/deny.txt' },\n    { name: 'src/deny/.deny', urlPath: '/src/deny/.deny' },\n    { name: 'src/deny/deny.txt?raw', urlPath: '/src/deny/deny.txt?raw' },\n  ]) {\n    test(`**/deny/** should deny ${name}`, async () => {\n      expect((await fetchPath(urlPath)).status()).toBe(403)\n    })\n  }\n})\n";

#[test]
fn tests_folded_into_a_loop_over_rows_are_kept() {
    assert!(deleted(&[Modify("test/deny.spec.ts", DENY_BASE, DENY_LOOP)]).is_empty());
    // `forEach` over rows, each bound whole, is the same.
    let each = "describe('main', () => {\n  ;[\n    { name: 'src/deny/deny.txt', urlPath: '/src/deny/deny.txt' },\n    { name: 'src/deny/.deny', urlPath: '/src/deny/.deny' },\n  ].forEach((row) => {\n    test(`**/deny/** should deny ${row.name}`, async () => {\n      expect((await fetchPath(row.urlPath)).status()).toBe(403)\n    })\n  })\n})\n";
    assert!(deleted(&[Modify("test/deny.spec.ts", DENY_BASE, each)]).is_empty());
    // A row added to a loop that was there already.
    let old_loop = DENY_LOOP.replace(
        "    { name: 'src/deny/.deny', urlPath: '/src/deny/.deny' },\n",
        "",
    );
    let base = old_loop.replace(
        "  for (const",
        "  test('**/deny/** should deny src/deny/.deny', async () => {\n    expect((await fetchPath('/src/deny/.deny')).status()).toBe(403)\n  })\n  for (const",
    );
    assert!(deleted(&[Modify("test/deny.spec.ts", &base, DENY_LOOP)]).is_empty());
}

#[test]
fn a_test_missing_from_the_rows_is_deleted() {
    let head = DENY_LOOP.replace(
        "    { name: 'src/deny/.deny', urlPath: '/src/deny/.deny' },\n",
        "",
    );
    let flags = deleted(&[Modify("test/deny.spec.ts", DENY_BASE, &head)]);
    assert_eq!(flags.len(), 1);
    assert!(
        flags[0].message.contains("should deny src/deny/.deny`"),
        "{}",
        flags[0].message
    );
    // A row whose name is not a literal names no test, but it still holds the test's
    // input and the loop's test still checks it: the test is folded, not deleted.
    let head = DENY_LOOP.replace("name: 'src/deny/.deny'", "name: someName");
    assert!(deleted(&[Modify("test/deny.spec.ts", DENY_BASE, &head)]).is_empty());
    // Its input gone from the rows too: deleted.
    let head = DENY_LOOP.replace(
        "{ name: 'src/deny/.deny', urlPath: '/src/deny/.deny' }",
        "{ name: someName, urlPath: otherPath }",
    );
    assert_eq!(
        deleted(&[Modify("test/deny.spec.ts", DENY_BASE, &head)]).len(),
        1
    );
}
