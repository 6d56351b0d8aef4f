//! `test-weakened` on JavaScript and TypeScript forms.

use super::modified;

const RED: &str =
    "test('renders red', async () => {\n  expect(await getColor('h1')).toBe('red')\n})\n";

#[test]
fn an_expectation_rewritten_as_a_polled_one_still_checks() {
    let new = RED.replace(
        "expect(await getColor('h1'))",
        "await expect.poll(() => getColor('h1'))",
    );
    assert!(modified("test/a.spec.ts", RED, &new).is_empty());
    let new = RED.replace(
        "expect(await getColor('h1'))",
        "await expect\n    .poll(() => getColor('h1'))\n   ",
    );
    assert!(modified("test/a.spec.ts", RED, &new).is_empty());
}

#[test]
fn a_polled_expectation_dropped_is_weakened() {
    let old = "test('renders red', async () => {\n  await expect.poll(() => getColor('h1')).toBe('red')\n})\n";
    let new = "test('renders red', async () => {\n  await getColor('h1')\n})\n";
    assert_eq!(modified("test/a.spec.ts", old, new), vec![1]);
}

const FROM_ROOT: &str = "const fromRoot = (p) => path.resolve(p)\n\ntest('top-level input', async () => {\n  const config = await resolveConfig({ input: 'a' })\n  expect(config.input).toBe(fromRoot('a'))\n  expect(config.other).toBeUndefined()\n})\n\ntest('nested', () => {\n  expect(g()).toBe(1)\n})\n";

#[test]
fn an_expression_bodied_arrow_helper_holds_no_tests() {
    let new = FROM_ROOT.replace("toBe(fromRoot('a'))", "toBe('a')");
    assert!(modified("test/a.spec.ts", FROM_ROOT, &new).is_empty());
    // The lookalike: the same test losing an assertion is still weakened.
    let new = FROM_ROOT.replace("  expect(config.other).toBeUndefined()\n", "");
    assert_eq!(modified("test/a.spec.ts", FROM_ROOT, &new), vec![3]);
}
