//! The test model on each language: the tests it finds, and what each checks.

use super::*;

/// `name: family[!] operands… [vacuous]` per check, one test a line.
fn model(lang: Language, src: &str) -> Vec<String> {
    let file = parse(lang, src.as_bytes());
    file.cases
        .iter()
        .map(|t| {
            let checks: Vec<String> = t
                .checks
                .iter()
                .map(|c| {
                    format!(
                        "{}{}({}){}",
                        c.family,
                        if c.negated { "!" } else { "" },
                        c.operands.join(" | "),
                        if c.vacuous { " vacuous" } else { "" }
                    )
                })
                .collect();
            let rows = if t.rows.is_empty() {
                String::new()
            } else {
                format!(" rows={}", t.rows.len())
            };
            let swallows = if t.swallows.is_empty() {
                String::new()
            } else {
                format!(" swallows={}", t.swallows.len())
            };
            format!(
                "{}@{}: {}{rows}{swallows}",
                t.name,
                t.line,
                checks.join(", ")
            )
        })
        .collect()
}

#[test]
fn python() {
    let src = r#"import pytest

class TestCalc:
    def test_add(self):
        assert add(2, 3) == 5  # was 4
        assert add(0, 0) != 1, "message"

    def helper(self):
        pass

@pytest.mark.parametrize("a,b,want", [(1, 2, 3), (2, 2, 4)])
def test_table(a, b, want):
    assert add(a, b) == want

class CalcTests(unittest.TestCase):
    def test_eq(self):
        self.assertEqual(mul(2, 3), 6)
        self.assertNotIn('x', s, msg="no x")
        with self.assertRaises(ValueError):
            parse("")

def test_vacuous():
    assert True
    assert x == 5 or True

def test_swallow():
    try:
        assert f() == 1
    except AssertionError:
        pass
"#;
    assert_eq!(
        model(Language::Python, src),
        vec![
            "TestCalc::test_add@4: assert==(add(2,3) | 5), assert==!(add(0,0) | 1)",
            "test_table@12: assert==(add(a,b) | want) rows=2",
            "CalcTests::test_eq@16: assertEqual(mul(2,3) | 6), assertIn!(\"x\" | s), assertRaises(ValueError)",
            "test_vacuous@22: assert-truth(True) vacuous, assert-truth(x==5 or True) vacuous",
            "test_swallow@26: assert==(f() | 1) swallows=1",
        ]
    );
}

#[test]
fn javascript() {
    let src = r#"describe('calc', () => {
  it('adds', () => {
    expect(add(2, 3)).toBe(5);
    expect(sub(2, 3)).not.toEqual(
      1,
    );
  });
  test.each([[1, 1, 2], [2, 2, 4]])('adds %i', (a, b, c) => {
    expect(add(a, b)).toBe(c);
  });
});
test('ava', t => {
  t.is(add(1, 1), 2);
  t.true(ok);
  t.pass();
});
it('node', () => {
  assert.strictEqual(add(1, 1), 2);
  assert(true);
  try { expect(x).toBe(1); } catch (e) {}
});
"#;
    assert_eq!(
        model(Language::JavaScript, src),
        vec![
            "calc > adds@2: expect.toBe(add(2,3) | 5), expect.toEqual!(sub(2,3) | 1)",
            "calc > adds %i@8: expect.toBe(add(a,b) | c) rows=2",
            "ava@12: t.is(add(1,1) | 2), t.true(ok), t.pass() vacuous",
            "node@17: assert.strictEqual(add(1,1) | 2), assert(true) vacuous, expect.toBe(x | 1) swallows=1",
        ]
    );
}

#[test]
fn go() {
    let src = r#"package calc

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Errorf("Add = %d", got)
	}
	assert.Equal(t, 4, Add(2, 2))
	require.NoError(t, err)
}

func TestTable(t *testing.T) {
	tests := []struct {
		name string
		a, b int
		want int
	}{
		{"small", 1, 2, 3},
		{"big", 10, 20, 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(Add(tt.a, tt.b), tt.want) {
				t.Fatal("bad")
			}
		})
	}
	t.Run("zero", func(t *testing.T) {
		if Add(0, 0) == 1 {
			t.Error("x")
		}
	})
}

func helper(t *testing.T) {
	t.Helper()
	if x != 1 {
		t.Fatal("x")
	}
}
"#;
    assert_eq!(
        model(Language::Go, src),
        vec![
            "TestAdd@3: go==(got | 5), assert.Equal(4 | Add(2,2)), require.Error!(err)",
            "TestTable/zero@27: go==!(Add(0,0) | 1)",
            "TestTable@11: go-DeepEqual(Add(tt.a,tt.b) | tt.want) rows=2",
        ]
    );
}

#[test]
fn rust() {
    let src = r#"
fn helper(x: i32) { assert!(x > 0); }

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(2, 3), 5);
        assert_ne!(add(2, 3), 6, "message {}", 1);
        assert!(true);
    }

    #[tokio::test]
    async fn waits() -> Result<(), E> {
        assert!(matches!(f().await, Ok(_)));
        Ok(())
    }
}
"#;
    assert_eq!(
        model(Language::Rust, src),
        vec![
            "tests::adds@9: assert_eq(add(2,3) | 5), assert_eq!(add(2,3) | 6 | \"message {}\" | 1), assert(true) vacuous",
            "tests::waits@16: assert(matches!(f().await,Ok(_)))",
        ]
    );
}

#[test]
fn java_kotlin() {
    let java = r#"class CalcTest {
    @Test
    void adds() {
        assertEquals(5, Calc.add(2, 3));
        assertThat(Calc.add(2, 2)).isEqualTo(4);
        assertThat(x, is(not(3)));
    }

    @ParameterizedTest
    @CsvSource({"1, 2, 3", "2, 2, 4"})
    void table(int a, int b, int c) {
        Assertions.assertTrue(Calc.add(a, b) == c);
    }

    public void testOld() {
        assertFalse(false);
    }
}
"#;
    assert_eq!(
        model(Language::Java, java),
        vec![
            "CalcTest::adds@3: assertEquals(5 | Calc.add(2,3)), assertThat.isEqualTo(Calc.add(2,2) | 4), assertThat.is!(x | 3)",
            "CalcTest::table@11: Assertions.assertTrue(Calc.add(a,b)==c) rows=2",
            "CalcTest::testOld@15: assertTrue!(false) vacuous",
        ]
    );
    let kotlin = "class CalcTest {\n    @Test\n    fun `adds two`() {\n        assertEquals(5, add(2, 3))\n        add(1, 1) shouldBe 2\n    }\n}\n";
    assert_eq!(
        model(Language::Java, kotlin),
        vec!["CalcTest::adds two@3: assertEquals(5 | add(2,3)), shouldBe(add(1,1) | 2)"]
    );
}

#[test]
fn csharp() {
    let src = r#"public class CalcTests
{
    [Fact]
    public void Adds()
    {
        Assert.Equal(5, Calc.Add(2, 3));
        Assert.That(Calc.Add(2, 2), Is.Not.EqualTo(5));
        Calc.Add(1, 1).Should().Be(2);
    }

    [Theory]
    [InlineData(1, 2, 3)]
    [InlineData(2, 2, 4)]
    public void Table(int a, int b, int c)
    {
        Assert.True(Calc.Add(a, b) == c);
    }
}
"#;
    assert_eq!(
        model(Language::CSharp, src),
        vec![
            "CalcTests::Adds@4: Assert.Equal(5 | Calc.Add(2,3)), Assert.That.EqualTo!(Calc.Add(2,2) | 5), Should.Be(Calc.Add(1,1) | 2)",
            "CalcTests::Table@14: Assert.True(Calc.Add(a,b)==c) rows=2",
        ]
    );
}

#[test]
fn ruby() {
    let src = r#"RSpec.describe Calc do
  it "adds" do
    expect(Calc.add(2, 3)).to eq(5)
    expect(Calc.add(2, 2)).not_to eq 5
  end

  context "with zero" do
    it("is zero") { expect(Calc.add(0, 0)).to be_zero }
  end
end

class CalcTest < Minitest::Test
  def test_add
    assert_equal 5, Calc.add(2, 3)
    refute_nil Calc.add(1, 1)
  end
end
"#;
    assert_eq!(
        model(Language::Ruby, src),
        vec![
            "Calc adds@2: expect.eq(Calc.add(2,3) | 5), expect.eq!(Calc.add(2,2) | 5)",
            "Calc with zero is zero@8: expect.be_zero(Calc.add(0,0))",
            "CalcTest test_add@13: assert_equal(5 | Calc.add(2,3)), assert_nil!(Calc.add(1,1))",
        ]
    );
}

#[test]
fn php() {
    let src = r#"<?php
class CalcTest extends TestCase
{
    public function testAdd(): void
    {
        $this->assertEquals(5, Calc::add(2, 3));
        self::assertNotSame(4, Calc::add(2, 3));
    }

    /** @test */
    public function it_adds(): void
    {
        $this->assertTrue(true);
    }
}
"#;
    assert_eq!(
        model(Language::Php, src),
        vec![
            "CalcTest::testAdd@4: assertEquals(5 | Calc::add(2,3)), assertSame!(4 | Calc::add(2,3))",
            "CalcTest::it_adds@11: assertTrue(true) vacuous",
        ]
    );
}

#[test]
fn comments_and_strings_hold_no_tests() {
    let src = "# def test_a():\n#     assert x\nDOC = '''\ndef test_b():\n    assert y\n'''\n";
    assert!(model(Language::Python, src).is_empty());
    let src = "// it('a', () => { expect(1).toBe(2) })\nconst s = \"it('b', () => {})\";\n";
    assert!(model(Language::JavaScript, src).is_empty());
}

#[test]
fn literals() {
    for l in [
        "5",
        "-1",
        "2.5",
        "0x1F",
        "\"abc\"",
        "None",
        "[1,2]",
        "(1,\"a\")",
        "{\"a\":1}",
        "vec![1,2]",
        "5u32",
        "1_000",
    ] {
        assert!(is_literal(l), "{l}");
    }
    for l in [
        "x",
        "add(2,3)",
        "[a,1]",
        "f\"{x}\"x",
        "want",
        "tt.want",
        "\"a\"+b",
    ] {
        assert!(!is_literal(l), "{l}");
    }
}

mod javascript;

#[test]
fn an_exception_constructed_is_no_call() {
    // A helper that throws by hand calls no function named for a check: what it throws is a
    // type, built.
    for (lang, src) in [
        (
            Language::Java,
            "class T {\n  @Test\n  void t() {\n    close();\n    prepare(x);\n  }\n  void close() {\n    if (closed) {\n      throw new AssertionError(\"twice\");\n    }\n  }\n}\n",
        ),
        (
            Language::Python,
            "def test_t():\n    close()\n    prepare(x)\n\ndef close():\n    if closed:\n        raise AssertionError('twice')\n",
        ),
    ] {
        let file = parse(lang, src.as_bytes());
        let test = &file.cases[0];
        assert!(test.calls.contains(&"prepare".to_owned()), "{lang:?}");
        assert!(
            file.helpers.iter().all(|h| h.name != "close"),
            "{lang:?}: {:?}",
            file.helpers.iter().map(|h| &h.name).collect::<Vec<_>>()
        );
    }
}

#[test]
fn more_assertions_that_cannot_fail() {
    let py = r#"def test_a():
    assert (total == 5, "total")
    assert len(names) >= 0
    assert len(names) >= 1
    assert (total == 5), "total"
    assert ("a,b" in s)
    assert (a, b) == (1, 2)
"#;
    assert_eq!(
        model(Language::Python, py),
        vec![
            "test_a@1: assert-truth((total==5,\"total\")) vacuous, assert>=(len(names) | 0) vacuous, \
             assert>=(len(names) | 1), assert-truth((total==5)), assert-truth((\"a,b\"in s)), \
             assert==((a,b) | (1,2))"
        ]
    );
    let js = r#"it('a', () => {
  expect(result);
  expect(result).toBe(3);
  expect(names.length).toBeGreaterThanOrEqual(0);
  expect(count).toBeGreaterThanOrEqual(0);
  expect(total === 170 || true).toBe(true);
  expect(total === 170).toBe(true);
  expect(
    '[warn]: unhandled error',
  ).toHaveBeenWarnedTimes(1);
  expect('b').toBe(1);
});
"#;
    assert_eq!(
        model(Language::JavaScript, js),
        vec![
            "a@1: expect(result) vacuous, expect.toBe(result | 3), \
             expect.toBeGreaterThanOrEqual(names.length | 0) vacuous, \
             expect.toBeGreaterThanOrEqual(count | 0), expect.toBe(total===170||true | true) vacuous, \
             expect.toBe(total===170 | true), \
             expect.toHaveBeenWarnedTimes(\"[warn]: unhandled error\" | 1), expect.toBe(\"b\" | 1)"
        ]
    );
}
