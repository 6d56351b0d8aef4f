//! `test-deleted` on tests that changed shape and kept their checks: folded into a table a
//! loop or `each` runs, nested under a group of their old name, renamed with a template name,
//! rewritten from unittest to pytest; and a function named `test` that is no test. Each beside
//! the positive it must not hide.

use super::tests::deleted;
use crate::testing::{Spec::*, run};

const SLUG: &str = "import { slugify } from '../src/slugify'\n\ntest('lowercases', () => {\n  expect(slugify('Hello')).toBe('hello')\n})\n\ntest('replaces spaces', () => {\n  expect(slugify('a b')).toBe('a-b')\n})\n\ntest('strips accents', () => {\n  expect(slugify('café')).toBe('cafe')\n})\n";

#[test]
fn tests_folded_into_each_and_a_loop_over_cases() {
    for head in [
        "import { slugify } from '../src/slugify'\n\ntest.each([\n  ['Hello', 'hello'],\n  ['a b', 'a-b'],\n  ['café', 'cafe'],\n])('slugify(%s) is %s', (input, expected) => {\n  expect(slugify(input)).toBe(expected)\n})\n",
        "import { slugify } from '../src/slugify'\n\nit.each`\n  input      | expected\n  ${'Hello'} | ${'hello'}\n  ${'a b'}   | ${'a-b'}\n  ${'café'}  | ${'cafe'}\n`('slugify($input) is $expected', ({ input, expected }) => {\n  expect(slugify(input)).toBe(expected)\n})\n",
        "import { slugify } from '../src/slugify'\n\nconst cases = [\n  { input: 'Hello', expected: 'hello' },\n  { input: 'a b', expected: 'a-b' },\n  { input: 'café', expected: 'cafe' },\n]\n\nfor (const c of cases) {\n  it(`slugify(${c.input})`, () => {\n    expect(slugify(c.input)).toBe(c.expected)\n  })\n}\n",
    ] {
        assert!(
            deleted(&[Modify("test/slugify.test.ts", SLUG, head)]).is_empty(),
            "{head}"
        );
    }
    // A case left out of the table: that test is deleted.
    let head = "import { slugify } from '../src/slugify'\n\nconst cases = [\n  { input: 'Hello', expected: 'hello' },\n  { input: 'a b', expected: 'a-b' },\n]\n\nfor (const c of cases) {\n  it(`slugify(${c.input})`, () => {\n    expect(slugify(c.input)).toBe(c.expected)\n  })\n}\n";
    let flags = deleted(&[Modify("test/slugify.test.ts", SLUG, head)]);
    assert_eq!(flags.len(), 1);
    assert!(
        flags[0].message.contains("`strips accents`"),
        "{}",
        flags[0].message
    );
    // The values written, but no test of the change calls what the deleted ones called.
    let head = "import { slugify } from '../src/slugify'\n\nexport const cases = ['Hello', 'hello', 'a b', 'a-b', 'café', 'cafe']\n";
    assert_eq!(
        deleted(&[Modify("test/slugify.test.ts", SLUG, head)]).len(),
        3
    );
}

#[test]
fn tests_folded_into_parametrize() {
    let base = "from app.text import slugify\n\n\ndef test_lowercases():\n    assert slugify('Hello') == 'hello'\n\n\ndef test_spaces():\n    assert slugify('a b') == 'a-b'\n\n\ndef test_accents():\n    assert slugify('café') == 'cafe'\n";
    let head = "import pytest\n\nfrom app.text import slugify\n\n\n@pytest.mark.parametrize(\n    ('value', 'expected'),\n    [\n        ('Hello', 'hello'),\n        ('a b', 'a-b'),\n        ('café', 'cafe'),\n    ],\n)\ndef test_slugify(value, expected):\n    assert slugify(value) == expected\n";
    assert!(deleted(&[Modify("tests/test_text.py", base, head)]).is_empty());
    let head = head.replace("        ('café', 'cafe'),\n", "");
    let flags = deleted(&[Modify("tests/test_text.py", base, &head)]);
    assert_eq!(flags.len(), 1);
    assert!(
        flags[0].message.contains("`test_accents`"),
        "{}",
        flags[0].message
    );
}

#[test]
fn a_test_nested_under_a_group_of_its_old_name() {
    let base = "describe('parser', () => {\n  it('parses json', () => {\n    const out = parse('{\"a\":1}')\n    expect(out.a).toBe(1)\n  })\n  it('parses yaml', () => {\n    expect(parse('a: 1').a).toBe(1)\n  })\n})\n";
    let head = "describe('parser', () => {\n  describe('parses json', () => {\n    it('with an object', () => {\n      const out = parse('{\"a\":1}')\n      expect(out.a).toBe(1)\n    })\n    it('with a BOM', () => {\n      expect(parse('\\ufeff{\"a\":2}').a).toBe(2)\n    })\n  })\n  it('parses yaml', () => {\n    expect(parse('a: 1').a).toBe(1)\n  })\n})\n";
    assert!(deleted(&[Modify("test/parser.test.ts", base, head)]).is_empty());
    // The old body gone from the group: deleted.
    let head = "describe('parser', () => {\n  describe('parses json', () => {\n    it('with a BOM', () => {\n      expect(parse('\\ufeff{\"a\":2}').a).toBe(2)\n    })\n  })\n  it('parses yaml', () => {\n    expect(parse('a: 1').a).toBe(1)\n  })\n})\n";
    assert_eq!(
        deleted(&[Modify("test/parser.test.ts", base, head)]).len(),
        1
    );
}

#[test]
fn a_template_name_renamed_with_its_body() {
    let base = "for (const route of routes) {\n  test(`creates screenshots of ${route}`, async () => {\n    await page.goto(route)\n    expect(await page.screenshot()).toMatchSnapshot()\n  })\n}\n";
    let head = base.replace("creates screenshots of", "takes a screenshot of");
    assert!(deleted(&[Modify("e2e/screens.spec.ts", base, &head)]).is_empty());
    let head = "for (const route of routes) {\n  test(`takes a screenshot of ${route}`, async () => {\n    await page.goto(route)\n  })\n}\n";
    assert!(
        !run(&[Modify("e2e/screens.spec.ts", base, head)])
            .flags
            .is_empty()
    );
}

#[test]
fn a_function_named_test_is_no_test_named_by_its_parameter() {
    // A playground's entry point, which the harness calls.
    let base = "import { expect } from 'vitest'\n\nexport async function test(ctx) {\n  await ctx.page.goto('/')\n  expect(await ctx.page.title()).toBe('Home')\n}\n";
    assert!(deleted(&[Delete("playground/home/__tests__/home.spec.ts", base)]).is_empty());
    let head = base.replace("function test(ctx)", "function run(ctx)");
    assert!(
        deleted(&[Modify(
            "playground/home/__tests__/home.spec.ts",
            base,
            &head
        )])
        .is_empty()
    );
    // A test called `test` beside it is still read.
    let base = format!(
        "{base}\ntest('renders the title', async () => {{\n  expect(await title()).toBe('Home')\n}})\n"
    );
    let flags = deleted(&[Delete("playground/home/__tests__/home.spec.ts", &base)]);
    assert_eq!(flags.len(), 1);
    assert!(
        flags[0].message.contains("`renders the title`"),
        "{}",
        flags[0].message
    );
}

#[test]
fn a_unittest_test_renamed_and_rewritten_for_pytest() {
    let base = "import unittest\n\nfrom app.calc import add, div\n\n\nclass TestCalc(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n        self.assertEqual(add(-1, 1), 0)\n\n    def test_div_by_zero(self):\n        with self.assertRaises(ZeroDivisionError):\n            div(1, 0)\n";
    let head = "import pytest\n\nfrom app.calc import add, div\n\n\ndef test_add_integers():\n    assert add(1, 2) == 3\n    assert add(-1, 1) == 0\n\n\ndef test_division_by_zero_raises():\n    with pytest.raises(ZeroDivisionError):\n        div(1, 0)\n";
    assert!(deleted(&[Modify("tests/test_calc.py", base, head)]).is_empty());
    // Its check dropped on the way: deleted.
    let head = "import pytest\n\nfrom app.calc import add, div\n\n\ndef test_add_integers():\n    assert add(1, 2) == 3\n    assert add(-1, 1) == 0\n";
    let flags = deleted(&[Modify("tests/test_calc.py", base, head)]);
    assert_eq!(flags.len(), 1);
    assert!(
        flags[0].message.contains("test_div_by_zero"),
        "{}",
        flags[0].message
    );
    // Rewritten to expect another error: not the same test.
    let head = "import pytest\n\nfrom app.calc import add, div\n\n\ndef test_add_integers():\n    assert add(1, 2) == 3\n    assert add(-1, 1) == 0\n\n\ndef test_division_by_zero_raises():\n    with pytest.raises(ValueError):\n        div(1, 0)\n";
    assert_eq!(
        deleted(&[Modify("tests/test_calc.py", base, head)]).len(),
        1
    );
}

#[test]
fn a_call_of_test_with_no_arguments_is_no_test() {
    // A formatter's fixture: a decorator calling a function named `test`.
    let fixture = "@(test().x(\"global\").y())\nclass X {}\n";
    assert!(
        deleted(&[Delete(
            "tests/format/typescript/decorators/parenthesized-call.ts",
            fixture
        )])
        .is_empty()
    );
}
