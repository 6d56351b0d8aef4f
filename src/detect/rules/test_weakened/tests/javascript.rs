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
