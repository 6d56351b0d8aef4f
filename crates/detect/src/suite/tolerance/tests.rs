use super::*;
use crate::lang::Language;
use crate::suite::parse;

/// The checks of a one-test file in `lang`.
fn checks(lang: Language, file: &str) -> Vec<Check> {
    let mut t = parse(lang, file.as_bytes()).cases;
    assert_eq!(t.len(), 1, "one test in {file}");
    t.remove(0).checks
}

fn widths(lang: Language, file: &str) -> Vec<Option<f64>> {
    checks(lang, file).iter().map(width).collect()
}

/// The base's and the head's one assertion, compared.
fn compared(lang: Language, base: &str, head: &str) -> Option<Change> {
    let (b, h) = (checks(lang, base), checks(lang, head));
    assert_eq!(
        (b.len(), h.len()),
        (1, 1),
        "one check each in {base} and {head}"
    );
    compare(&b[0], &h[0])
}

fn py(assertion: &str) -> String {
    format!("def test_tax():\n    {assertion}\n")
}

#[test]
fn each_language_s_tolerances_are_read() {
    let py = "def test_a():\n    assert tax(100.0) == pytest.approx(20.0, abs=1e-9)\n    assert result == pytest.approx(170.0, rel=0.5)\n    self.assertAlmostEqual(tax(100.0), 20.0, places=7)\n    self.assertAlmostEqual(tax(100.0), 20.0, delta=5)\n    assert abs(x - 2.0) < 1e-6\n    assert math.isclose(x, 2.0, rel_tol=0.1)\n    assert result == 170.0\n    self.assertAlmostEqual(x, 2.0)\n";
    assert_eq!(
        widths(Language::Python, py),
        [
            Some(1e-9),
            Some(85.0),
            Some(0.5e-7),
            Some(5.0),
            Some(1e-6),
            Some(0.2),
            Some(0.0),
            Some(0.5e-7)
        ]
    );
    let rs = "#[test]\nfn a() {\n    assert!((ratio(1.0, 3.0) - 0.3333).abs() < 1e-4);\n    assert_relative_eq!(x, 1.0, epsilon = 1e-6);\n    assert_eq!(x, 3.5);\n}\n";
    assert_eq!(
        widths(Language::Rust, rs),
        [Some(1e-4), Some(1e-6), Some(0.0)]
    );
    let java = "class T {\n  @Test\n  void a() {\n    assertEquals(170.0, Pricing.applyDiscount(200, 15), 1e-9);\n    assertThat(x).isCloseTo(1.0, within(0.01));\n    assertEquals(\"m\", 170.0, y, 1e-9);\n    assertThat(y, closeTo(2.0, 0.5));\n  }\n}\n";
    assert_eq!(
        widths(Language::Java, java),
        [Some(1e-9), Some(0.01), Some(1e-9), Some(0.5)]
    );
    let go = "func TestA(t *testing.T) {\n\tassert.InDelta(t, 0.3333, Ratio(1, 3), 0.0001)\n\tif math.Abs(got-0.5) > 1e-9 {\n\t\tt.Errorf(\"x\")\n\t}\n\tassert.Equal(t, 3, n, \"count %d\", 3)\n}\n";
    assert_eq!(widths(Language::Go, go), [Some(0.0001), Some(1e-9), None]);
    let js = "it('a', () => {\n  expect(ratio(1, 3)).toBeCloseTo(0.3333, 4);\n  expect(Math.abs(x - 2)).toBeLessThan(0.01);\n  expect(y).toBeCloseTo(2);\n});\n";
    assert_eq!(
        widths(Language::JavaScript, js),
        [Some(0.5e-4), Some(0.01), Some(0.005)]
    );
    let rb = "describe \"x\" do\n  it \"a\" do\n    expect(x).to be_within(0.01).of(2.0)\n    assert_in_delta 2.0, x, 0.5\n  end\nend\n";
    assert_eq!(widths(Language::Ruby, rb), [Some(0.01), Some(0.5)]);
    let php = "<?php\nclass T extends TestCase {\n  public function testA() {\n    $this->assertEqualsWithDelta(2.0, $x, 0.01);\n  }\n}\n";
    assert_eq!(widths(Language::Php, php), [Some(0.01)]);
    let cs = "public class T {\n  [Fact]\n  public void A() {\n    Assert.Equal(0.3333, Pricing.Ratio(1, 3), 4);\n    Assert.That(x, Is.EqualTo(2.0).Within(0.1));\n  }\n}\n";
    assert_eq!(widths(Language::CSharp, cs), [Some(0.5e-4), Some(0.1)]);
}

#[test]
fn a_tolerance_widened_by_orders_of_magnitude_is_widened() {
    use Language::Python;
    let widened = [
        (
            "assert tax(100.0) == pytest.approx(20.0, abs=1e-9)",
            "assert tax(100.0) == pytest.approx(20.0, abs=10)",
        ),
        (
            "assert result == 170.0",
            "assert result == pytest.approx(170.0, rel=0.5)",
        ),
        (
            "self.assertAlmostEqual(tax(100.0), 20.0, places=7)",
            "self.assertAlmostEqual(tax(100.0), 20.0, places=0)",
        ),
        (
            "self.assertAlmostEqual(tax(100.0), 20.0, places=7)",
            "self.assertAlmostEqual(tax(100.0), 20.0, delta=5)",
        ),
        ("assert x == 2.0", "assert abs(x - 2.0) < 1"),
        (
            "assert math.isclose(x, 2.0, rel_tol=1e-9)",
            "assert math.isclose(x, 2.0, rel_tol=0.1)",
        ),
    ];
    for (old, new) in widened {
        assert_eq!(
            compared(Python, &py(old), &py(new)),
            Some(Change::Widened),
            "{old} → {new}"
        );
    }
    let go = |d: &str| {
        format!("func TestR(t *testing.T) {{\n\tassert.InDelta(t, 0.3333, Ratio(1, 3), {d})\n}}\n")
    };
    assert_eq!(
        compared(Language::Go, &go("0.0001"), &go("1")),
        Some(Change::Widened)
    );
    let js = |d: &str| {
        format!("it('r', () => {{\n  expect(ratio(1, 3)).toBeCloseTo(0.3333{d});\n}});\n")
    };
    assert_eq!(
        compared(Language::JavaScript, &js(", 4"), &js(", 0")),
        Some(Change::Widened)
    );
    // A stated precision dropped for a looser default.
    assert_eq!(
        compared(Language::JavaScript, &js(", 6"), &js("")),
        Some(Change::Widened)
    );
    let rs = |d: &str| {
        format!("#[test]\nfn r() {{\n    assert!((ratio(1.0, 3.0) - 0.3333).abs() < {d});\n}}\n")
    };
    assert_eq!(
        compared(Language::Rust, &rs("1e-4"), &rs("10.0")),
        Some(Change::Widened)
    );
    let java = |d: &str| {
        format!(
            "class T {{\n  @Test\n  void a() {{\n    assertEquals(170.0, Pricing.applyDiscount(200, 15), {d});\n  }}\n}}\n"
        )
    };
    assert_eq!(
        compared(Language::Java, &java("1e-9"), &java("1.0")),
        Some(Change::Widened)
    );
    let cs = |d: &str| {
        format!(
            "public class T {{\n  [Fact]\n  public void A() {{\n    Assert.Equal(0.3333, Pricing.Ratio(1, 3), {d});\n  }}\n}}\n"
        )
    };
    assert_eq!(
        compared(Language::CSharp, &cs("4"), &cs("0")),
        Some(Change::Widened)
    );
}

#[test]
fn a_tolerance_tightened_tuned_or_at_a_float_s_precision_is_kept() {
    use Language::Python;
    let kept = [
        // An exact float comparison made approximate at the library's default.
        (
            "assert result == 170.0",
            "assert result == pytest.approx(170.0)",
        ),
        ("assert x == 0.3", "assert abs(x - 0.3) < 1e-9"),
        // A float equality given a tolerance chosen for its value.
        (
            "assert x == 4.2",
            "assert x == pytest.approx(4.2, abs=0.01)",
        ),
        // Rounding noise, however many orders of magnitude.
        (
            "assert x == pytest.approx(20.0, abs=1e-12)",
            "assert x == pytest.approx(20.0, abs=1e-9)",
        ),
        (
            "self.assertAlmostEqual(x, 20.0, places=7)",
            "self.assertAlmostEqual(x, 20.0, places=5)",
        ),
        // Tightened.
        (
            "assert x == pytest.approx(20.0, abs=1)",
            "assert x == pytest.approx(20.0, abs=0.01)",
        ),
        // Less than an order of magnitude.
        (
            "assert x == pytest.approx(20.0, abs=0.1)",
            "assert x == pytest.approx(20.0, abs=0.5)",
        ),
    ];
    for (old, new) in kept {
        assert_eq!(
            compared(Python, &py(old), &py(new)),
            Some(Change::Kept),
            "{old} → {new}"
        );
    }
    // Another value under test, or another expected value with no wider tolerance, is no
    // tolerance change.
    assert_eq!(
        compared(
            Python,
            &py("assert x == pytest.approx(2.0, abs=0.01)"),
            &py("assert y == pytest.approx(2.0, abs=5)")
        ),
        None
    );
    assert_eq!(
        compared(
            Python,
            &py("assert x == pytest.approx(2.0, abs=0.01)"),
            &py("assert x == pytest.approx(3.0, abs=0.01)")
        ),
        None
    );
    // Two equalities are expectation-changed's to read.
    assert_eq!(
        compared(Python, &py("assert x == 2.0"), &py("assert x == 3.0")),
        None
    );
    // A Go message's arguments are no delta.
    let go = "func TestA(t *testing.T) {\n\tassert.Equal(t, 3, n, \"count %d\", 3)\n}\n";
    assert_eq!(width(&checks(Language::Go, go)[0]), None);
}
