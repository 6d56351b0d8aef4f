//! The test model on JavaScript and TypeScript forms beyond the plain `it('name', fn)` call.

use super::model;
use crate::lang::Language;

#[test]
fn a_wrapper_called_first_then_the_test() {
    // `X.m(args)(name, fn)`: the first call's arguments are a condition or generators, never
    // the test's name.
    let src = r#"describe.skipIf(!global.gc)('memory', () => {
  test.skipIf(isBundledDev)('renders blue', async () => {
    expect(await getColor('p')).toBe('blue')
  })
})
test.runIf(isServe)('hmr', () => {
  expect(hmr()).toBe(true)
})
it.prop([fc.array(fc.char())])('is reflexive', (a) => {
  expect(f(a, a)).toEqual(a)
})
test.each([[1, 2]])('adds %i', (a, b) => {
  expect(a + 1).toBe(b)
})
test.runIf(isBuild).skip('manual chunk', () => {
  expect(chunk()).toBeDefined()
})
it.skip('slow', () => {
  expect(slow()).toBe(1)
}).timeout(500)
"#;
    assert_eq!(
        model(Language::JavaScript, src),
        vec![
            "memory > renders blue@2: expect.toBe(await getColor(\"p\") | \"blue\")",
            "hmr@6: expect.toBe(hmr() | true)",
            "is reflexive@9: expect.toEqual(f(a,a) | a)",
            "adds %i@12: expect.toBe(a+1 | b) rows=1",
            "manual chunk@15: expect.toBeDefined(chunk())",
            "slow@18: expect.toBe(slow() | 1)",
        ]
    );
}

#[test]
fn a_name_bound_to_a_test_function_by_a_condition() {
    let src = r#"const testTemporal = 'Temporal' in globalThis ? test : test.skip;
var describePromises = global.Promise ? describe : describe.skip
const helper = ready ? run : skip;
describePromises('promises', () => {
  testTemporal('accepts Temporal', () => {
    expect(run().exitCode).toBe(0)
  })
})
helper('not a test', () => {
  expect(1).toBe(1)
})
"#;
    assert_eq!(
        model(Language::JavaScript, src),
        vec!["promises > accepts Temporal@5: expect.toBe(run().exitCode | 0)"]
    );
}

#[test]
fn polled_and_awaited_expectations_are_checks() {
    let src = r#"test('renders red', async () => {
  await expect.poll(() => getColor('h1')).toBe('red')
  await expect
    .poll(() => count())
    .toBe(2)
  await expect.element(page.getByText('hi')).toBeVisible()
  expect.soft(a).toBe(1)
  await expect(load()).resolves.toEqual({ ok: true })
  await expect(fail()).rejects.toThrow('no')
  expect.assertions(3)
})
"#;
    assert_eq!(
        model(Language::JavaScript, src),
        vec![
            "renders red@1: expect.poll.toBe(()=>getColor(\"h1\") | \"red\"), \
             expect.poll.toBe(()=>count() | 2), \
             expect.element.toBeVisible(page.getByText(\"hi\")), \
             expect.soft.toBe(a | 1), \
             expect.resolves.toEqual(load() | {ok:true}), \
             expect.rejects.toThrow(fail() | \"no\")"
        ]
    );
}

#[test]
fn an_arrow_helper_ends_with_its_expression() {
    // `check` asserts in one expression over two lines; `fromRoot` asserts nothing, and the
    // test after it is not inside it.
    let src = r#"const check = (x) => expect(x)
  .toBe(1)
const fromRoot = (p) => path.resolve(p)
test('uses', () => {
  check(fromRoot('a'))
})
"#;
    let file = crate::suite::parse(Language::JavaScript, src.as_bytes());
    let helpers: Vec<(&str, usize)> = file
        .helpers
        .iter()
        .map(|h| (h.name.as_str(), h.checks.len()))
        .collect();
    assert_eq!(helpers, vec![("check", 1)]);
    assert_eq!(model(Language::JavaScript, src), vec!["uses@4: "]);
}

#[test]
fn a_test_in_a_loop_runs_under_each_row_name() {
    let src = r#"for (const [a, b] of [[1, 'one'], [2, 'two']]) {
  it(`maps ${a} to ${b}`, () => { expect(f(a)).toBe(b) })
}
for (const s of ['x', "y", name]) test(`takes ${s}`, () => { expect(g(s)).toBe(true) })
test(`plain ${v}`, () => { expect(1).toBe(1) })
"#;
    let file = crate::suite::parse(Language::JavaScript, src.as_bytes());
    let names: Vec<(&str, Vec<&str>)> = file
        .cases
        .iter()
        .map(|t| {
            (
                t.name.as_str(),
                t.instances.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        names,
        vec![
            ("maps ${a} to ${b}", vec!["maps 1 to one", "maps 2 to two"]),
            ("takes ${s}", vec!["takes x", "takes y"]),
            ("plain ${v}", vec![]),
        ]
    );
}

#[test]
fn an_imported_wrapper_called_with_a_name_is_a_test() {
    let src = r#"import {testWithVmEsm, itAsync as itA, helper} from '@jest/test-utils';
testWithVmEsm(
  'unwraps the default export',
  async () => { expect(await load()).toBe(1) },
);
itA('waits', async () => { expect(await wait()).toBe(true) })
testWithVmEsm(options, () => {})
helper('not a test', () => { expect(1).toBe(1) })
"#;
    assert_eq!(
        model(Language::JavaScript, src),
        vec![
            "unwraps the default export@2: expect.toBe(await load() | 1)",
            "waits@6: expect.toBe(await wait() | true)",
        ]
    );
}
