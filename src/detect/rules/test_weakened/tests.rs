//! `test-weakened`: positives and lookalikes in every language the test model reads.

use crate::detect::Rule;
use crate::detect::testing::{Spec, Spec::*, lines, run};

fn weakened(specs: &[Spec<'_>]) -> Vec<u32> {
    lines(&run(specs), Rule::TestWeakened)
}

fn modified(path: &str, old: &str, new: &str) -> Vec<u32> {
    weakened(&[Modify(path, old, new)])
}

const PY: &str = "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n    assert add(0, 0) == 0\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n";

#[test]
fn python_positives() {
    let p = "tests/test_calc.py";
    // An assertion replaced with `pass`: the test checks nothing.
    let new = PY.replace("    assert mul(2, 3) == 6\n", "    pass\n");
    assert_eq!(modified(p, PY, &new), vec![9]);
    // `... or True`.
    let new = PY.replace("== 5\n", "== 5 or True\n");
    assert_eq!(modified(p, PY, &new), vec![5]);
    // One assertion of two removed.
    let new = PY.replace("    assert add(0, 0) == 0\n", "");
    assert_eq!(modified(p, PY, &new), vec![4]);
    // A body reduced to a call whose result is dropped.
    let new = PY.replace("    assert mul(2, 3) == 6\n", "    mul(2, 3)\n");
    assert_eq!(modified(p, PY, &new), vec![9]);
    // `assert True` added in place of the check.
    let new = PY.replace("assert mul(2, 3) == 6", "assert True");
    assert_eq!(modified(p, PY, &new), vec![10]);
    // The failure swallowed.
    let new = PY.replace(
        "    assert mul(2, 3) == 6\n",
        "    try:\n        assert mul(2, 3) == 6\n    except AssertionError:\n        pass\n",
    );
    assert_eq!(modified(p, PY, &new), vec![12]);
}

#[test]
fn python_lookalikes() {
    let p = "tests/test_calc.py";
    for new in [
        // Reformatted, re-quoted, a message added, a comment edited.
        PY.replace("assert add(2, 3) == 5", "assert (\n        add(2, 3) == 5\n    ), 'sum'"),
        PY.replace("== 6\n", "== 6  # the product\n"),
        // An assertion rewritten, as many as before.
        PY.replace("assert add(0, 0) == 0", "assert add(0, 1) == 1"),
        // A new assertion.
        PY.replace("== 6\n", "== 6\n    assert mul(1, 1) == 1\n"),
        // Moved under a new class, re-indented.
        format!(
            "from calc import add, mul\n\n\nclass TestCalc:\n{}",
            PY.lines()
                .skip(3)
                .map(|l| if l.is_empty() { "\n".to_owned() } else { format!("    {}\n", l.replace("():", "(self):")) })
                .collect::<String>()
        ),
        // A swallow that re-raises.
        PY.replace(
            "    assert mul(2, 3) == 6\n",
            "    try:\n        assert mul(2, 3) == 6\n    except AssertionError:\n        log()\n        raise\n",
        ),
    ] {
        assert!(modified(p, PY, &new).is_empty(), "{new}");
    }
}

#[test]
fn split_tests_and_extracted_helpers_keep_their_assertions() {
    let p = "tests/test_calc.py";
    // Split: one assertion moved into a new test.
    let split = PY.replace(
        "    assert add(0, 0) == 0\n",
        "\n\ndef test_add_zero():\n    assert add(0, 0) == 0\n",
    );
    assert!(modified(p, PY, &split).is_empty());
    // Extracted into a helper of the same file.
    let helper = PY.replace(
        "def test_mul():\n    assert mul(2, 3) == 6\n",
        "def check_mul(a, b, want):\n    assert mul(a, b) == want\n\n\ndef test_mul():\n    check_mul(2, 3, 6)\n",
    );
    assert!(modified(p, PY, &helper).is_empty());
    // Into a helper in another file of the change, with any name.
    let moved = PY.replace(
        "    assert mul(2, 3) == 6\n",
        "    product_matches(2, 3, 6)\n",
    );
    assert!(
        weakened(&[
            Modify(p, PY, &moved),
            Add(
                "tests/support.py",
                "def product_matches(a, b, want):\n    assert mul(a, b) == want\n"
            ),
        ])
        .is_empty()
    );
    // Moved to another file: the assertion arrives there.
    let fewer = PY.replace("    assert add(0, 0) == 0\n", "");
    assert!(
        weakened(&[
            Modify(p, PY, &fewer),
            Add(
                "tests/test_zero.py",
                "def test_zero():\n    assert add(0, 0) == 0\n"
            ),
        ])
        .is_empty()
    );
    // Into a parametrized table.
    let table = PY.replace(
        "def test_mul():\n    assert mul(2, 3) == 6\n",
        "@pytest.mark.parametrize('a,b,want', [(2, 3, 6)])\ndef test_mul(a, b, want):\n    assert mul(a, b) == want\n",
    );
    assert!(modified(p, PY, &table).is_empty());
}

#[test]
fn checks_extracted_into_a_helper_weigh_what_they_did() {
    // Go, as cobra did: two inline checks become one call to a helper that makes both.
    let old = "package c\n\nfunc TestNoArgs(t *testing.T) {\n\toutput, err := run()\n\tif output != \"\" {\n\t\tt.Errorf(\"output %v\", output)\n\t}\n\tif err != nil {\n\t\tt.Fatalf(\"error %v\", err)\n\t}\n}\n";
    let new = "package c\n\nfunc wantSuccess(output string, err error, t *testing.T) {\n\tif output != \"\" {\n\t\tt.Errorf(\"output %v\", output)\n\t}\n\tif err != nil {\n\t\tt.Fatalf(\"error %v\", err)\n\t}\n}\n\nfunc TestNoArgs(t *testing.T) {\n\toutput, err := run()\n\twantSuccess(output, err, t)\n}\n";
    assert!(modified("c/args_test.go", old, new).is_empty());
}

#[test]
fn table_rows_removed() {
    let old = "@pytest.mark.parametrize('a,b,want', [(2, 3, 5), (0, 0, 0), (1, 1, 2)])\ndef test_add(a, b, want):\n    assert add(a, b) == want\n";
    let new = old.replace(", (0, 0, 0)", "");
    assert_eq!(modified("tests/test_add.py", old, &new), vec![2]);
}

#[test]
fn javascript() {
    let p = "src/calc.test.ts";
    let old = "describe('calc', () => {\n  it('adds', () => {\n    expect(add(2, 3)).toBe(5);\n    expect(add(0, 0)).toBe(0);\n  });\n});\n";
    assert_eq!(
        modified(p, old, &old.replace("    expect(add(0, 0)).toBe(0);\n", "")),
        vec![2]
    );
    assert_eq!(
        modified(
            p,
            old,
            &old.replace("expect(add(2, 3)).toBe(5)", "expect(true).toBe(true)")
        ),
        vec![3]
    );
    assert_eq!(
        modified(
            p,
            old,
            &old.replace(
                "    expect(add(0, 0)).toBe(0);\n",
                "    try {\n      expect(add(0, 0)).toBe(0);\n    } catch (e) {}\n"
            )
        ),
        vec![6]
    );
    for new in [
        old.replace("toBe(5);", "toBe(\n      5,\n    );"),
        old.replace("'adds'", "\"adds\""),
        old.replace(
            "    expect(add(0, 0)).toBe(0);\n",
            "    expect(add(0, 0)).toEqual(0);\n",
        ),
    ] {
        assert!(modified(p, old, &new).is_empty(), "{new}");
    }
}

#[test]
fn go() {
    let p = "calc/calc_test.go";
    let old = "package calc\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Errorf(\"got %d\", got)\n\t}\n\tif Add(0, 0) != 0 {\n\t\tt.Fatal(\"zero\")\n\t}\n}\n";
    assert_eq!(
        modified(
            p,
            old,
            &old.replace("\tif Add(0, 0) != 0 {\n\t\tt.Fatal(\"zero\")\n\t}\n", "")
        ),
        vec![3]
    );
    assert_eq!(
        modified(
            p,
            old,
            "package calc\n\nfunc TestAdd(t *testing.T) {\n\t_ = Add(2, 3)\n}\n"
        ),
        vec![3]
    );
    let table = "package calc\n\nfunc TestAdd(t *testing.T) {\n\tfor _, c := range []struct{ a, b, want int }{\n\t\t{2, 3, 5},\n\t\t{0, 0, 0},\n\t} {\n\t\tif got := Add(c.a, c.b); got != c.want {\n\t\t\tt.Errorf(\"got %d\", got)\n\t\t}\n\t}\n}\n";
    assert_eq!(
        modified(p, table, &table.replace("\t\t{0, 0, 0},\n", "")),
        vec![3]
    );
    assert!(
        modified(
            p,
            old,
            &old.replace("t.Errorf(\"got %d\", got)", "t.Fatalf(\"sum: %d\", got)")
        )
        .is_empty()
    );
}

#[test]
fn rust_java_csharp_ruby_php() {
    let rs = "#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 3), 5);\n        assert_eq!(add(0, 0), 0);\n    }\n}\n";
    assert_eq!(
        modified(
            "src/calc.rs",
            rs,
            &rs.replace("        assert_eq!(add(0, 0), 0);\n", "")
        ),
        vec![4]
    );
    assert_eq!(
        modified(
            "src/calc.rs",
            rs,
            &rs.replace("assert_eq!(add(2, 3), 5)", "assert!(true)")
        ),
        vec![5]
    );
    let java = "class CalcTest {\n    @Test\n    void adds() {\n        assertEquals(5, Calc.add(2, 3));\n        assertEquals(0, Calc.add(0, 0));\n    }\n}\n";
    assert_eq!(
        modified(
            "src/test/java/CalcTest.java",
            java,
            &java.replace("        assertEquals(0, Calc.add(0, 0));\n", "")
        ),
        vec![3]
    );
    assert_eq!(
        modified(
            "src/test/java/CalcTest.java",
            java,
            &java.replace(
                "assertEquals(5, Calc.add(2, 3))",
                "assertThat(true).isTrue()"
            )
        ),
        vec![4]
    );
    let cs = "public class CalcTests\n{\n    [Fact]\n    public void Adds()\n    {\n        Assert.Equal(5, Calc.Add(2, 3));\n        Assert.Equal(0, Calc.Add(0, 0));\n    }\n}\n";
    assert_eq!(
        modified(
            "tests/CalcTests.cs",
            cs,
            &cs.replace("        Assert.Equal(0, Calc.Add(0, 0));\n", "")
        ),
        vec![4]
    );
    let rb = "describe Calc do\n  it 'adds' do\n    expect(Calc.add(2, 3)).to eq(5)\n    expect(Calc.add(0, 0)).to eq(0)\n  end\nend\n";
    assert_eq!(
        modified(
            "spec/calc_spec.rb",
            rb,
            &rb.replace("    expect(Calc.add(0, 0)).to eq(0)\n", "")
        ),
        vec![2]
    );
    let php = "<?php\nclass CalcTest extends TestCase\n{\n    public function testAdd(): void\n    {\n        $this->assertSame(5, Calc::add(2, 3));\n        $this->assertSame(0, Calc::add(0, 0));\n    }\n}\n";
    assert_eq!(
        modified(
            "tests/CalcTest.php",
            php,
            &php.replace("        $this->assertSame(0, Calc::add(0, 0));\n", "")
        ),
        vec![4]
    );
    assert_eq!(
        modified(
            "tests/CalcTest.php",
            php,
            &php.replace(
                "$this->assertSame(5, Calc::add(2, 3))",
                "$this->assertTrue(true)"
            )
        ),
        vec![6]
    );
}

#[test]
fn new_tests_and_production_code_are_not_judged() {
    // A new test file that asserts little is not a weakened test.
    assert!(
        weakened(&[Add(
            "tests/test_new.py",
            "def test_smoke():\n    assert True\n"
        )])
        .is_empty()
    );
    // Production code is not a test.
    assert!(
        modified(
            "src/calc.py",
            "def f():\n    assert x == 1\n",
            "def f():\n    pass\n"
        )
        .is_empty()
    );
}

mod javascript;
