use super::*;
use crate::lang::Language;
use crate::suite::parse;

/// The checks of a one-test file in `lang`.
fn checks(lang: Language, file: &str) -> Vec<Check> {
    let mut t = parse(lang, file.as_bytes()).cases;
    assert_eq!(t.len(), 1, "one test in {file}");
    t.remove(0).checks
}

fn strengths(lang: Language, file: &str) -> Vec<Strength> {
    checks(lang, file).iter().map(strength).collect()
}

#[test]
fn equality_with_a_value_is_exact_in_every_language() {
    use Strength::Exact;
    let py =
        "def test_a():\n    assert x == 170\n    self.assertEqual(x, 3)\n    assert got == want\n";
    assert_eq!(strengths(Language::Python, py), [Exact, Exact, Exact]);
    let js = "it('a', () => {\n  expect(x).toBe(170);\n  expect(x).toEqual([1, 2]);\n  expect(f).toThrow('bad');\n  expect(names).toHaveLength(2);\n});\n";
    assert_eq!(
        strengths(Language::JavaScript, js),
        [Exact, Exact, Exact, Exact]
    );
    let java = "class T {\n  @Test\n  void a() {\n    assertThat(slug(\"A\")).isEqualTo(\"a\");\n    assertEquals(170.0, x, 1e-9);\n  }\n}\n";
    assert_eq!(strengths(Language::Java, java), [Exact, Exact]);
    let go = "func TestA(t *testing.T) {\n\tassert.Equal(t, 2.0, Ratio(4, 2))\n\tif got != 170 {\n\t\tt.Errorf(\"got %v\", got)\n\t}\n}\n";
    assert_eq!(strengths(Language::Go, go), [Exact, Exact]);
}

#[test]
fn presence_type_part_and_range_are_loose() {
    use Strength::Loose;
    let py = "def test_a():\n    assert x is not None\n    assert x != None\n    assert x\n    assert isinstance(x, int)\n    assert \"pen\" in names\n    assert len(x) > 0\n    self.assertIsNotNone(x)\n    self.assertTrue(x)\n    assert x == mock.ANY\n";
    assert_eq!(
        strengths(Language::Python, py),
        [
            Loose, Loose, Loose, Loose, Loose, Loose, Loose, Loose, Loose
        ]
    );
    let js = "it('a', () => {\n  expect(x).toBeDefined();\n  expect(x).toBeTruthy();\n  expect(x).not.toBeNull();\n  expect(x).toMatchObject({a: 1});\n  expect(x).toContain('a');\n  expect(x).toEqual(expect.any(Number));\n  expect(f).toThrow();\n  expect(n).toBeGreaterThan(0);\n});\n";
    assert_eq!(
        strengths(Language::JavaScript, js),
        [Loose, Loose, Loose, Loose, Loose, Loose, Loose, Loose]
    );
    let rs = "#[test]\nfn a() {\n    assert!(got.is_ok());\n}\n";
    assert_eq!(strengths(Language::Rust, rs), [Loose]);
    let cs =
        "public class T {\n  [Fact]\n  public void A() {\n    Assert.NotNull(result);\n  }\n}\n";
    assert_eq!(strengths(Language::CSharp, cs), [Loose]);
}

#[test]
fn conditions_and_negations_that_compare_are_neither() {
    use Strength::Other;
    let py = "def test_a():\n    assert x != 5\n    assert x.startswith(\"a\")\n    assert not x\n    assert (a == 1) or (b == 2)\n";
    assert_eq!(
        strengths(Language::Python, py),
        [Other, Other, Other, Other]
    );
}

fn pairs(lang: Language, base: &str, head: &str) -> Vec<(String, String)> {
    let (b, h) = (checks(lang, base), checks(lang, head));
    let a = crate::suite::compare::align(&b, &h);
    loosened(&a.lost, &a.gained)
        .into_iter()
        .map(|(o, n)| (o.shown.clone(), n.shown.clone()))
        .collect()
}

#[test]
fn an_exact_assertion_swapped_for_a_loose_one_on_its_value_is_loosened() {
    let p = pairs(
        Language::Python,
        "def test_a():\n    result = f()\n    assert result == 170.0\n",
        "def test_a():\n    result = f()\n    assert result is not None\n",
    );
    assert_eq!(
        p,
        [(
            "assert result == 170.0".to_owned(),
            "assert result is not None".to_owned()
        )]
    );
    let p = pairs(
        Language::JavaScript,
        "it('a', () => {\n  expect(f).toThrow('between 0 and 100');\n});\n",
        "it('a', () => {\n  expect(f).toThrow();\n});\n",
    );
    assert_eq!(p.len(), 1, "{p:?}");
    let p = pairs(
        Language::Go,
        "func TestA(t *testing.T) {\n\tassert.Equal(t, 2.0, Ratio(4, 2))\n}\n",
        "func TestA(t *testing.T) {\n\tassert.NotNil(t, Ratio(4, 2))\n}\n",
    );
    assert_eq!(p.len(), 1, "{p:?}");
}

#[test]
fn a_boolean_expectation_swapped_for_a_wildcard_is_loosened_and_a_truth_test_is_not() {
    let p = pairs(
        Language::JavaScript,
        "it('a', () => {\n  expect(isValid(x)).toEqual(true);\n});\n",
        "it('a', () => {\n  expect(isValid(x)).toEqual(expect.anything());\n});\n",
    );
    assert_eq!(
        p,
        [(
            "expect(isValid(x)).toEqual(true)".to_owned(),
            "expect(isValid(x)).toEqual(expect.anything())".to_owned()
        )]
    );
    // `== True` → a plain truth test, or `toBe(true)` → `toBeTruthy()`: the same check spelt
    // otherwise (or close enough to leave to a reviewer).
    let p = pairs(
        Language::Python,
        "def test_a():\n    assert is_valid(x) == True\n",
        "def test_a():\n    assert is_valid(x)\n",
    );
    assert!(p.is_empty(), "{p:?}");
    let p = pairs(
        Language::JavaScript,
        "it('a', () => {\n  expect(isValid(x)).toBe(true);\n});\n",
        "it('a', () => {\n  expect(isValid(x)).toBeTruthy();\n});\n",
    );
    assert!(p.is_empty(), "{p:?}");
}

#[test]
fn an_exact_assertion_rewritten_exactly_or_about_another_value_is_not() {
    // A guard added, the value now read through a field: still exact.
    let p = pairs(
        Language::Python,
        "def test_a():\n    assert result == 5\n",
        "def test_a():\n    assert result is not None\n    assert result.value == 5\n",
    );
    assert!(p.is_empty(), "{p:?}");
    // The loose assertion is about another value.
    let p = pairs(
        Language::Python,
        "def test_a():\n    assert total == 5\n",
        "def test_a():\n    assert other is not None\n",
    );
    assert!(p.is_empty(), "{p:?}");
    // Same assertion, message added: aligned, nothing lost.
    let p = pairs(
        Language::Python,
        "def test_a():\n    self.assertEqual(x, 5)\n",
        "def test_a():\n    self.assertEqual(x, 5, \"five\")\n",
    );
    assert!(p.is_empty(), "{p:?}");
    // A loose assertion replaced by an exact one is the opposite of loosening.
    let p = pairs(
        Language::JavaScript,
        "it('a', () => {\n  expect(x).toBeDefined();\n});\n",
        "it('a', () => {\n  expect(x).toBe(3);\n});\n",
    );
    assert!(p.is_empty(), "{p:?}");
}

#[test]
fn a_boolean_compared_and_a_helper_named_for_throwing_are_not_exact_or_loose() {
    // `assert.Equal(t, true, x)` → `assert.True(t, x)` says the same.
    let p = pairs(
        Language::Go,
        "func TestA(t *testing.T) {\n\tassert.Equal(t, true, p.IsOutputColor())\n}\n",
        "func TestA(t *testing.T) {\n\tassert.True(t, p.IsOutputColor())\n}\n",
    );
    assert!(p.is_empty(), "{p:?}");
    let p = pairs(
        Language::Php,
        "<?php\nclass ArrTest extends TestCase {\n    public function testA() {\n        $this->assertSame(true, Arr::boolean($a, 'b'));\n    }\n}\n",
        "<?php\nclass ArrTest extends TestCase {\n    public function testA() {\n        $this->assertTrue(Arr::boolean($a, 'b'));\n    }\n}\n",
    );
    assert!(p.is_empty(), "{p:?}");
    // A project's own helper, named for what it expects: not a loose `assertThrows`.
    let p = pairs(
        Language::Java,
        "class T {\n  @Test\n  void a() {\n    assertThrows(StackOverflowError.class, () -> gson.toJson(a));\n  }\n}\n",
        "class T {\n  @Test\n  void a() {\n    assertThrowsStackOverflow(() -> gson.toJson(a));\n  }\n}\n",
    );
    assert!(p.is_empty(), "{p:?}");
}
