//! `test-weakened`: positives and lookalikes in every language the test model reads.

use crate::Rule;
use crate::testing::{Spec, Spec::*, lines, messages, run};

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
    // Python: a helper named as an assertion is read as one, and weighs what it checks.
    let old = "def test_parse_sku():\n    parsed = parse_sku(\"TS-M-RED\")\n    assert parsed[\"family\"] == \"TS\"\n    assert parsed[\"size\"] == \"M\"\n    assert parsed[\"color\"] == \"RED\"\n";
    let helper = "def assert_sku(parsed, family, size, color):\n    assert parsed[\"family\"] == family\n    assert parsed[\"size\"] == size\n    assert parsed[\"color\"] == color\n\n\n";
    let new = format!(
        "{helper}def test_parse_sku():\n    assert_sku(parse_sku(\"TS-M-RED\"), \"TS\", \"M\", \"RED\")\n"
    );
    assert!(modified("tests/test_sku.py", old, &new).is_empty());
    // The lookalike: the helper checks one field of the three.
    let one = new
        .replace("    assert parsed[\"size\"] == size\n", "")
        .replace("    assert parsed[\"color\"] == color\n", "");
    assert_eq!(modified("tests/test_sku.py", old, &one), vec![5]);
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
    // The failure's condition made false: its block never runs.
    assert_eq!(
        modified(
            p,
            old,
            &old.replace("if Add(0, 0) != 0", "if false && Add(0, 0) != 0")
        ),
        vec![3]
    );
    // A condition that holds more than it did still runs the block.
    assert!(
        modified(
            p,
            old,
            &old.replace("if Add(0, 0) != 0", "if Add(0, 0) != 0 || debug")
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

#[test]
fn an_assertion_on_the_error_folded_into_the_raise_is_kept() {
    let p = "tests/test_a.py";
    let old = "import pytest\n\n\ndef test_bad_type():\n    with pytest.raises(TypeError) as excinfo:\n        parse(\"x\")\n    assert \"must be int\" in str(excinfo.value)\n";
    for new in [
        "import pytest\n\n\ndef test_bad_type():\n    with pytest.raises(TypeError, match=\"must be int\"):\n        parse(\"x\")\n",
        "import pytest\n\n\ndef test_bad_type():\n    with pytest.raises(TypeError, check=lambda e: 'must be int' in str(e)):\n        parse(\"x\")\n",
        "import pytest\n\n\ndef test_bad_type():\n    with pytest.warns(UserWarning, match=r\"must be int\"):\n        parse(\"x\")\n",
    ] {
        assert!(modified(p, old, new).is_empty(), "{new}");
    }
    // Two assertions on the error, folded into one predicate.
    let two = "import pytest\n\n\ndef test_bad_code():\n    with pytest.raises(UserError) as exc:\n        build()\n    assert exc.value.code == 'overlap'\n    assert exc.value.message == \"TD and 'a'\"\n";
    let new = "import pytest\n\n\ndef test_bad_code():\n    with pytest.raises(\n        UserError,\n        check=lambda e: (\n            e.code == 'overlap'\n            and e.message == \"TD and 'a'\"\n        ),\n    ):\n        build()\n";
    assert!(modified(p, two, new).is_empty());
    // One of them dropped, or padded with a constant: a loss.
    let new = "import pytest\n\n\ndef test_bad_code():\n    with pytest.raises(UserError, check=lambda e: e.code == 'overlap' and True):\n        build()\n";
    assert_eq!(modified(p, two, new), vec![4]);
    // unittest: `assertRaises` and an assertion on `cm.exception` become `assertRaisesRegex`.
    let old = "class T(unittest.TestCase):\n    def test_bad(self):\n        with self.assertRaises(TypeError) as cm:\n            parse('x')\n        self.assertIn('must be int', str(cm.exception))\n";
    let new = "class T(unittest.TestCase):\n    def test_bad(self):\n        with self.assertRaisesRegex(TypeError, 'must be int'):\n            parse('x')\n";
    assert!(modified(p, old, new).is_empty());
    // try / except with an assertion / else fail, written as one `pytest.raises`.
    let old = "def test_type_error():\n    try:\n        make('foobar')\n    except KeyError as exc:\n        assert str(exc) == \"'bad'\"\n    else:\n        raise AssertionError('did not raise')\n";
    let new = "import pytest\n\ndef test_type_error():\n    with pytest.raises(KeyError, match=\"'bad'\"):\n        make('foobar')\n";
    assert!(modified(p, old, new).is_empty());
    // RSpec and Chai say the message beside the error.
    let old = "describe 'parse' do\n  it 'raises' do\n    expect { parse('x') }.to raise_error(ArgumentError)\n    expect(last_error.message).to eq('bad')\n  end\nend\n";
    let new = "describe 'parse' do\n  it 'raises' do\n    expect { parse('x') }.to raise_error(ArgumentError, 'bad')\n  end\nend\n";
    assert!(modified("spec/parse_spec.rb", old, new).is_empty());
    let old = "it('raises', () => {\n  expect(() => parse('x')).to.throw(TypeError);\n  expect(lastError.message).to.equal('bad');\n});\n";
    let new = "it('raises', () => {\n  expect(() => parse('x')).to.throw(TypeError, 'bad');\n});\n";
    assert!(modified("test/parse.test.js", old, new).is_empty());
}

#[test]
fn pytest_raises_called_with_the_function_is_the_same_check_as_its_with_form() {
    let p = "tests/test_a.py";
    // pytest's own tests moved from the call form to the context manager (one pull request,
    // 86 tests): the same error expected of the same call.
    let old = "import pytest\n\n\ndef test_url():\n    pytest.raises(ValueError, url_for, \"index\", _scheme=\"https\")\n";
    let new = "import pytest\n\n\ndef test_url():\n    with pytest.raises(ValueError):\n        url_for(\"index\", _scheme=\"https\")\n";
    assert!(modified(p, old, new).is_empty());
    assert!(modified(p, new, old).is_empty());
    // What the error must say, dropped in the move, is still a loss.
    let said = "import pytest\n\n\ndef test_url():\n    with pytest.raises(ValueError, match=\"scheme\"):\n        url_for(\"index\", _scheme=\"https\")\n";
    assert_eq!(modified(p, said, old), vec![4]);
    assert_eq!(modified(p, said, new), vec![4]);
}

#[test]
fn an_assertion_on_the_error_dropped_is_still_a_loss() {
    let p = "tests/test_a.py";
    let old = "import pytest\n\n\ndef test_bad_type():\n    with pytest.raises(TypeError) as excinfo:\n        parse(\"x\")\n    assert \"must be int\" in str(excinfo.value)\n";
    // The raise kept, the assertion dropped; or folded into a matcher that accepts any error.
    for new in [
        "import pytest\n\n\ndef test_bad_type():\n    with pytest.raises(TypeError) as excinfo:\n        parse(\"x\")\n",
        "import pytest\n\n\ndef test_bad_type():\n    with pytest.raises(TypeError, match=\".*\"):\n        parse(\"x\")\n",
        "import pytest\n\n\ndef test_bad_type():\n    with pytest.raises(TypeError, match=''):\n        parse(\"x\")\n",
        "import pytest\n\n\ndef test_bad_type():\n    with pytest.raises(TypeError, check=lambda e: True):\n        parse(\"x\")\n",
    ] {
        assert_eq!(modified(p, old, new), vec![4], "{new}");
    }
    // `match=` kept, another assertion dropped: one condition less.
    let old = "import pytest\n\n\ndef test_bad_type():\n    with pytest.raises(TypeError, match='int') as e:\n        parse(\"x\")\n    assert e.value.code == 3\n";
    let new = "import pytest\n\n\ndef test_bad_type():\n    with pytest.raises(TypeError, match='int'):\n        parse(\"x\")\n";
    assert_eq!(modified(p, old, new), vec![4]);
}

#[test]
fn a_duplicate_row_removed_loses_nothing() {
    let p = "tests/test_b.py";
    let old = "@pytest.mark.parametrize('field', ['dt', 'd', 't', 'dt'])\ndef test_decode(field):\n    assert check(field)\n";
    assert!(modified(p, old, &old.replace(", 'dt'])", "])")).is_empty());
    // The same row again, with another comment, other spacing and other quotes.
    let old = "@pytest.mark.parametrize(\n    'value,cls',\n    [\n        ('192.168.0.0/24', V4),\n        (2**32 - 1, V4),  # no mask equals to mask /32\n        (b'\\xff', V4),\n        (2 ** 32 - 1, V4),  # so `strict` has no effect\n        (\"x\", V6),\n    ],\n)\ndef test_iface(value, cls):\n    assert parse(value) == cls(value)\n";
    let new = old.replace(
        "        (2 ** 32 - 1, V4),  # so `strict` has no effect\n",
        "",
    );
    assert!(modified(p, old, &new).is_empty());
    let new = old.replace(
        "        (2**32 - 1, V4),  # no mask equals to mask /32\n",
        "",
    );
    assert!(modified(p, old, &new).is_empty());
    // A row that was not a duplicate is lost, even beside duplicates.
    let old = "@pytest.mark.parametrize('field', ['dt', 'd', 't', 'td'])\ndef test_decode(field):\n    assert check(field)\n";
    assert_eq!(modified(p, old, &old.replace(", 'td'])", "])")), vec![2]);
    let old = "@pytest.mark.parametrize('field', ['dt', 'dt', 'd'])\ndef test_decode(field):\n    assert check(field)\n";
    assert_eq!(
        modified(p, old, &old.replace("['dt', 'dt', 'd']", "['dt', 'dt']")),
        vec![2]
    );
    // Both copies gone.
    assert_eq!(
        modified(p, old, &old.replace("['dt', 'dt', 'd']", "['d']")),
        vec![2]
    );
}

#[test]
fn rows_wrapped_in_pytest_param() {
    let p = "tests/test_x.py";
    let old = "@pytest.mark.parametrize('a,want', [(2, 4), (3, 9), (4, 16)])\ndef test_sq(a, want):\n    assert sq(a) == want\n";
    // Wrapped with ids: nothing lost.
    let new = old
        .replace("(2, 4)", "pytest.param(2, 4, id='two')")
        .replace("(3, 9)", "pytest.param(3, 9, id='three')");
    assert!(modified(p, old, &new).is_empty());
    // Wrapped, and a row dropped: that row is lost.
    let new = old
        .replace("(2, 4)", "pytest.param(2, 4, id='two')")
        .replace(", (3, 9)", "");
    assert_eq!(modified(p, old, &new), vec![2]);
    // Marked to be skipped: the row is not the row that ran, and the marker is flagged.
    let new = old.replace("(3, 9)", "pytest.param(3, 9, marks=pytest.mark.skip)");
    let report = run(&[Modify(p, old, &new)]);
    assert_eq!(lines(&report, Rule::SkipMarker), vec![1]);
}

#[test]
fn rows_the_model_cannot_count_are_not_gone() {
    let p = "tests/test_c.py";
    let old = "import pytest\n\n@pytest.mark.parametrize('deco', [dataclass, pyd_dataclass])\ndef test_doc(deco):\n    assert schema(deco) == {}\n";
    for table in [
        "**dataclass_decorators(include_combined=False)",
        "dataclass_decorators()",
        "[d for d in DECORATORS]",
        "[*DECORATORS, extra]",
        "DECORATORS",
        "argvalues=make_decorators()",
    ] {
        let new = old.replace("[dataclass, pyd_dataclass]", table);
        assert!(modified(p, old, &new).is_empty(), "{new}");
    }
    // A row dropped from a table that is read: lost.
    let new = old.replace("[dataclass, pyd_dataclass]", "[dataclass]");
    assert_eq!(modified(p, old, &new), vec![4]);
    // The table moved into a variable of the file is still read, and its loss seen.
    let new = old.replace(
        "@pytest.mark.parametrize('deco', [dataclass, pyd_dataclass])",
        "DECORATORS = [dataclass]\n\n@pytest.mark.parametrize('deco', DECORATORS)",
    );
    assert_eq!(modified(p, old, &new), vec![6]);
    let new = old.replace(
        "@pytest.mark.parametrize('deco', [dataclass, pyd_dataclass])",
        "DECORATORS = [dataclass, pyd_dataclass]\n\n@pytest.mark.parametrize('deco', DECORATORS)",
    );
    assert!(modified(p, old, &new).is_empty());
    // The body's own assertions are still counted.
    let old = "@pytest.mark.parametrize('deco', [dataclass, pyd_dataclass])\ndef test_doc(deco):\n    assert schema(deco) == {}\n    assert deco.__doc__\n";
    let new = "@pytest.mark.parametrize('deco', **decorators())\ndef test_doc(deco):\n    assert schema(deco) == {}\n";
    assert_eq!(modified(p, old, new), vec![2]);
    // Jest's `each` over a table made by a call.
    let old = "it.each([[1, 2], [2, 4]])('doubles %i', (a, want) => {\n  expect(double(a)).toBe(want);\n});\n";
    let new = old.replace("[[1, 2], [2, 4]]", "doublings()");
    assert!(modified("src/double.test.js", old, &new).is_empty());
    let new = old.replace("[[1, 2], [2, 4]]", "[[1, 2]]");
    assert_eq!(modified("src/double.test.js", old, &new), vec![1]);
}

#[test]
fn equal_constructions_can_fail() {
    let p = "tests/test_s.py";
    let old = "def test_secretstr_equality():\n    assert SecretStr('123') == SecretStr('123')\n";
    let new = "def test_secretstr_equality():\n    assert SecretStr('123') == SecretStr('123')\n    assert SecretStr('caf\u{e9}') == SecretStr('caf\u{e9}')\n";
    assert!(modified(p, old, new).is_empty());
    let java = "class T {\n    @Test\n    void eq() {\n        assertEquals(5, f());\n    }\n}\n";
    let new = java.replace(
        "assertEquals(5, f())",
        "assertEquals(new Money(5), new Money(5))",
    );
    assert!(modified("src/test/java/T.java", java, &new).is_empty());
    // The same literal, or the same name, on both sides cannot fail.
    let old = "def test_parse():\n    assert parse('1') == 1\n";
    for (new, line) in [
        ("def test_parse():\n    assert 1 == 1\n", 2),
        (
            "def test_parse():\n    x = parse('1')\n    assert x == x\n",
            3,
        ),
        ("def test_parse():\n    self.assertEqual('a', 'a')\n", 2),
    ] {
        assert_eq!(modified(p, old, new), vec![line], "{new}");
    }
    assert_eq!(
        modified(
            "src/calc.rs",
            "#[test]\nfn t() {\n    assert_eq!(f(), 1);\n}\n",
            "#[test]\nfn t() {\n    assert_eq!(1, 1);\n}\n"
        ),
        vec![3]
    );
}

#[test]
fn expected_value_computed_by_the_code_under_test() {
    let p = "tests/test_pricing.py";
    let old = "def test_apply_discount():\n    result = apply_discount(200, 15)\n    assert result == 170.0\n";
    for new in [
        "def test_apply_discount():\n    result = apply_discount(200, 15)\n    assert result == apply_discount(200, 15)\n",
        "def test_apply_discount():\n    result = apply_discount(200, 15)\n    assert apply_discount( 200,15 ) == result\n",
        "def test_apply_discount():\n    result: float = apply_discount(200, 15)\n    self.assertEqual(result, apply_discount(200, 15))\n",
    ] {
        assert_eq!(modified(p, old, new), vec![3], "{new}");
    }
    let js = "test('discount', () => {\n  const got = applyDiscount(200, 15);\n  expect(got).toBe(170);\n});\n";
    let new = js.replace("toBe(170)", "toBe(applyDiscount(200, 15))");
    assert_eq!(modified("test/pricing.test.js", js, &new), vec![3]);
    // Another call, other arguments, a name assigned again in between, or an inequality can
    // fail.
    for new in [
        "def test_apply_discount():\n    result = apply_discount(200, 15)\n    assert result == expected_price(200, 15)\n",
        "def test_apply_discount():\n    result = apply_discount(200, 15)\n    assert result == apply_discount(100, 15) * 2\n",
        "def test_apply_discount():\n    result = apply_discount(200, 15)\n    assert result == apply_discount(400, 15) / 2\n",
        "def test_apply_discount():\n    result = apply_discount(200, 15)\n    result = round(result)\n    assert result == apply_discount(200, 15)\n    assert result == 170\n",
        "def test_apply_discount():\n    result = apply_discount(200, 15)\n    assert result != apply_discount(200, 16)\n    assert result == 170.0\n",
        // Code ran in between: the same call may answer otherwise now.
        "def test_apply_discount():\n    result = registry.get()\n    registry.push(1)\n    registry.pop()\n    assert result == registry.get()\n    assert apply_discount(200, 15) == 170.0\n",
    ] {
        assert!(modified(p, old, new).is_empty(), "{new}");
    }
}

#[test]
fn exclusive_branches_weigh_their_heaviest() {
    let p = "tests/test_t.py";
    let old = "@pytest.mark.parametrize('logging', ['no', 'system-err'])\ndef test_output(logging):\n    node = run(logging)\n    if logging in ['system-err', 'all']:\n        assert len(node.find('system-err')) == 1\n    elif logging == 'out':\n        assert len(node.find('system-out')) == 1\n    else:\n        assert len(node.find('system-err')) == 0\n    assert node.ok\n";
    let new = "@pytest.mark.parametrize('logging', ['no', 'system-err'])\ndef test_output(logging):\n    node = run(logging)\n    expected = 1 if logging in ['system-err', 'all'] else 0\n    assert len(node.find('system-err')) == expected\n    assert node.ok\n";
    assert!(modified(p, old, new).is_empty());
    // A branch with two checks weighs two: one check in its place is a loss.
    let old = "def test_output(on):\n    node = run(on)\n    if on:\n        assert node.err == 1\n        assert node.out == (\n            1\n        )\n    else:\n        assert node.err == 0\n";
    let new = "def test_output(on):\n    node = run(on)\n    assert node.err == (1 if on else 0)\n";
    assert_eq!(modified(p, old, new), vec![1]);
    // Checks after the chain, or in an `if` without branches, still add up.
    let old = "def test_output(on):\n    node = run(on)\n    if on:\n        assert node.err == 1\n    if not on:\n        assert node.err == 0\n";
    let new =
        "def test_output(on):\n    node = run(on)\n    if on:\n        assert node.err == 1\n";
    assert_eq!(modified(p, old, new), vec![1]);
}

#[test]
fn a_row_that_never_ran_is_not_lost() {
    let p = "tests/test_v.py";
    let old = "import pytest\n\n@pytest.mark.parametrize(\n    \"fil\",\n    [\"*dir\", pytest.mark.skip(\"py2 only\")(b\"*dir\")],\n)\ndef test_visit(path1, fil):\n    lst = [p for p in path1.visit(fil)]\n    assert \"sampledir\" in lst\n";
    let new = "import pytest\n\ndef test_visit(path1):\n    lst = [p for p in path1.visit(\"*dir\")]\n    assert \"sampledir\" in lst\n";
    assert!(modified(p, old, new).is_empty());
    let old = "@pytest.mark.parametrize('a,want', [(2, 4), pytest.param(3, 9, marks=pytest.mark.skip(reason='slow')), (4, 16)])\ndef test_sq(a, want):\n    assert sq(a) == want\n";
    let new = old.replace(
        ", pytest.param(3, 9, marks=pytest.mark.skip(reason='slow'))",
        "",
    );
    assert!(modified(p, old, &new).is_empty());
    // A row skipped only under a condition ran elsewhere: lost.
    let old = old.replace(
        "pytest.mark.skip(",
        "pytest.mark.skipif(sys.platform == 'win32', ",
    );
    let new = old.replace(
        ", pytest.param(3, 9, marks=pytest.mark.skipif(sys.platform == 'win32', reason='slow'))",
        "",
    );
    assert_ne!(old, new);
    assert_eq!(modified(p, &old, &new), vec![2]);
    // A row that ran, dropped beside a skipped one: lost.
    let old = "@pytest.mark.parametrize('a,want', [(2, 4), pytest.param(3, 9, marks=pytest.mark.skip), (4, 16)])\ndef test_sq(a, want):\n    assert sq(a) == want\n";
    let new = old.replace(", (4, 16)", "");
    assert_eq!(modified(p, old, &new), vec![2]);
}

const GO_HEAD: &str =
    "package p\n\nimport (\n\t\"testing\"\n\n\t\"github.com/stretchr/testify/require\"\n)\n\n";

fn go_modified(old: &str, new: &str) -> Vec<String> {
    let (old, new) = (format!("{GO_HEAD}{old}"), format!("{GO_HEAD}{new}"));
    crate::testing::messages(
        &run(&[Modify("p/p_test.go", &old, &new)]),
        Rule::TestWeakened,
    )
}

#[test]
fn go_literals_are_rows_only_when_a_loop_ranges_over_them() {
    // A fixture map moved into a constructor: its entries were never cases of the test.
    let fixture = "func TestHandlerRelabel(t *testing.T) {\n\th := &Manager{\n\t\tsets: map[string]*alertmanagerSet{\n\t\t\t\"1\": {url: \"http://a\"},\n\t\t\t\"2\": {url: \"http://b\"},\n\t\t},\n\t}\n\tif !h.sendAll(alert) {\n\t\tt.Fatal(\"send failed\")\n\t}\n}\n";
    let built = "func TestHandlerRelabel(t *testing.T) {\n\th := newTestManager(\"http://a\", \"http://b\")\n\tif !h.sendAll(alert) {\n\t\tt.Fatal(\"send failed\")\n\t}\n}\n";
    assert_eq!(go_modified(fixture, built), Vec::<String>::new());
    // A closure's result type and the slice it builds are no table either.
    let closure = "func TestNHCB(t *testing.T) {\n\tapp := newApp()\n\tgetMatching := func() []histogramSample {\n\t\tvar got []histogramSample\n\t\tfor _, h := range app.histograms {\n\t\t\tgot = append(got, h)\n\t\t}\n\t\treturn got\n\t}\n\trequire.Len(t, getMatching(), 2)\n}\n";
    let direct = "func TestNHCB(t *testing.T) {\n\tapp := newApp()\n\trequire.Len(t, app.ResultSamples(), 2)\n}\n";
    assert_eq!(go_modified(closure, direct), Vec::<String>::new());
    // A table the test ranges over, by name, still loses a row, and only its rows count.
    let table = "func TestUp(t *testing.T) {\n\targs := []string{\"-v\", \"-x\", \"-q\"}\n\ttests := []struct{ in, want string }{\n\t\t{\"a\", \"A\"},\n\t\t{\"b\", \"B\"},\n\t}\n\tfor _, tc := range tests {\n\t\tif up(tc.in, args) != tc.want {\n\t\t\tt.Errorf(\"up(%q)\", tc.in)\n\t\t}\n\t}\n}\n";
    assert_eq!(
        go_modified(table, &table.replace("\t\t{\"b\", \"B\"},\n", "")),
        ["`TestUp` checks less: 1 row of its table are gone"]
    );
    assert_eq!(
        go_modified(table, &table.replace("\"-x\", ", "")),
        Vec::<String>::new()
    );
    // And so does a literal ranged over in place (the lookalike of the fixture).
    let inline = "func TestUp(t *testing.T) {\n\tfor _, tc := range []struct{ in, want string }{{\"a\", \"A\"}, {\"b\", \"B\"}} {\n\t\tif up(tc.in) != tc.want {\n\t\t\tt.Errorf(\"up(%q)\", tc.in)\n\t\t}\n\t}\n}\n";
    assert_eq!(
        go_modified(inline, &inline.replace(", {\"b\", \"B\"}", "")),
        ["`TestUp` checks less: 1 row of its table are gone"]
    );
}

#[test]
fn go_test_bodies_moved_into_helpers_of_the_same_file() {
    let inline = "func TestScrapeAppend(t *testing.T) {\n\tapp := newAppendable()\n\tn, err := app.append([]sample{{V: 1}, {V: 2}})\n\trequire.NoError(t, err)\n\trequire.Equal(t, 2, n)\n}\n";
    let wrapped = "func TestScrapeAppend(t *testing.T) {\n\tforeachAppendable(t, func(t *testing.T, appV2 bool) {\n\t\ttestScrapeAppend(t, appV2)\n\t})\n}\n\nfunc testScrapeAppend(t *testing.T, appV2 bool) {\n\tapp := newAppendable(appV2)\n\tn, err := app.append([]sample{{V: 1}, {V: 2}})\n\trequire.NoError(t, err)\n\trequire.Equal(t, 2, n)\n}\n";
    assert_eq!(go_modified(inline, wrapped), Vec::<String>::new());
    // The helper that lost a check: the test checks less.
    assert_eq!(
        go_modified(inline, &wrapped.replace("\trequire.Equal(t, 2, n)\n", "")),
        [
            "`TestScrapeAppend` checks less: 2 checks at the base, 1 now (gone: `require.NoError(t, err)`, `require.Equal(t, 2, n)`)"
        ]
    );
    // A helper of a helper: `testX` only runs `runX`, which checks.
    let deep = "func TestScrapeAppend(t *testing.T) {\n\tforeachAppendable(t, func(t *testing.T, appV2 bool) {\n\t\ttestScrapeAppend(t, appV2)\n\t})\n}\n\nfunc testScrapeAppend(t *testing.T, appV2 bool) {\n\tt.Run(\"append\", func(t *testing.T) {\n\t\trunAppend(t, newAppendable(appV2))\n\t})\n}\n\nfunc runAppend(t *testing.T, app *appendable) {\n\tn, err := app.append([]sample{{V: 1}, {V: 2}})\n\trequire.NoError(t, err)\n\trequire.Equal(t, 2, n)\n}\n";
    assert_eq!(go_modified(inline, deep), Vec::<String>::new());
    assert_eq!(
        go_modified(
            inline,
            &deep.replace(
                "\trequire.NoError(t, err)\n\trequire.Equal(t, 2, n)\n",
                "\t_, _ = n, err\n"
            )
        ),
        ["`TestScrapeAppend` no longer checks anything: 2 checks at the base, none now"]
    );

    // The helper checks through a function named for what it does, as the test did.
    let named =
        |check: &str| wrapped.replace("\trequire.Equal(t, 2, n)\n", &format!("\t{check}\n"));
    assert_eq!(
        go_modified(inline, &named("teststorage.RequireEqual(t, 2, n)")),
        Vec::<String>::new()
    );
    assert_eq!(
        go_modified(inline, &named("logSamples(t, 2, n)")).len(),
        1,
        "a call named for nothing checks nothing"
    );
    // Nor does Go's marker of a helper: a helper that only fails by hand is no helper, and a
    // call to it weighs what its name says, at the base and at the head alike.
    let by_hand = "func TestSample(t *testing.T) {\n\trequireNotEqual(t, a, b)\n}\n\nfunc requireNotEqual(t testing.TB, a, b any) {\n\tt.Helper()\n\tif !cmp.Equal(a, b) {\n\t\treturn\n\t}\n\trequire.Fail(t, \"equal\")\n}\n";
    let moved_out = "func TestSample(t *testing.T) {\n\tRequireNotEqual(t, a, b)\n}\n";
    assert_eq!(go_modified(by_hand, moved_out), Vec::<String>::new());
}

#[test]
fn an_exception_a_helper_constructs_is_no_call_that_checks() {
    // `close()` of a test double throws when called twice; the tests call another object's
    // `close(…)`, and that double going away takes nothing from them.
    let old = "class WebSocketTest {\n  @Test\n  fun clientCloses() {\n    client.webSocket!!.close(1000, \"bye\")\n    assertThat(client.closed).isTrue()\n  }\n\n  private class TestStreams(\n    client: Boolean,\n  ) : RealWebSocket.Streams(client) {\n    var closed = false\n\n    override fun close() {\n      if (closed) {\n        throw AssertionError(\"Already closed\")\n      }\n      try {\n        source.close()\n      } catch (ignored: IOException) {\n      }\n      closed = true\n    }\n  }\n}\n";
    let new = "class WebSocketTest {\n  @Test\n  fun clientCloses() {\n    client.webSocket!!.close(1000, \"bye\")\n    assertThat(client.closed).isTrue()\n  }\n}\n";
    assert_eq!(
        modified("src/test/kotlin/WebSocketTest.kt", old, new),
        Vec::<u32>::new()
    );
}

#[test]
fn go_asserting_helpers_named_after_require() {
    let old = "func TestDelete(t *testing.T) {\n\texp, res := expand(t)\n\trequire.Equal(t, exp, res)\n}\n";
    for call in [
        "requireEqualSamples(t, \"series\", exp, res)",
        "teststorage.RequireEqual(t, exp, res)",
        "testutil.AssertEqual(t, exp, res)",
    ] {
        let new = old.replace("require.Equal(t, exp, res)", call);
        assert_eq!(go_modified(old, &new), Vec::<String>::new(), "{call}");
    }
    assert_eq!(
        go_modified(
            old,
            &old.replace("require.Equal(t, exp, res)", "logSamples(t, exp, res)")
        ),
        ["`TestDelete` no longer checks anything: 1 check at the base, none now"]
    );
}

#[test]
fn go_checks_moved_into_subtests_stay_the_tests() {
    let old = "func TestMaxSchema(t *testing.T) {\n\tapp := newMaxSchemaAppender()\n\trequire.NoError(t, app.Append(h))\n\trequire.Equal(t, 3, h.Schema)\n}\n";
    let new = "func TestMaxSchema(t *testing.T) {\n\tt.Run(\"appV2=false\", func(t *testing.T) {\n\t\tapp := newMaxSchemaAppender()\n\t\trequire.NoError(t, app.Append(h))\n\t\trequire.Equal(t, 3, h.Schema)\n\t})\n\tt.Run(\"appV2=true\", func(t *testing.T) {\n\t\tapp := newMaxSchemaAppenderV2()\n\t\trequire.NoError(t, app.Append(h))\n\t\trequire.Equal(t, 3, h.Schema)\n\t})\n}\n";
    assert_eq!(go_modified(old, new), Vec::<String>::new());
    // A subtest whose name is built is no subtest of its own: its checks are the test's.
    let loop_old = "func TestPanicWithBrokenPipe(t *testing.T) {\n\tfor _, errno := range errnos {\n\t\tt.Run(errno.Error(), func(t *testing.T) {\n\t\t\tw := perform(errno)\n\t\t\trequire.Equal(t, 204, w.Code)\n\t\t})\n\t}\n}\n";
    let loop_new = loop_old.replace(
        "t.Run(errno.Error(),",
        "t.Run(\"Recovery from \"+errno.Error(),",
    );
    assert_eq!(go_modified(loop_old, &loop_new), Vec::<String>::new());
    // The lookalike: the subtest loses its check.
    assert_eq!(
        go_modified(
            loop_old,
            &loop_new.replace("\t\t\trequire.Equal(t, 204, w.Code)\n", "\t\t\t_ = w\n")
        ),
        ["`TestPanicWithBrokenPipe` no longer checks anything: 1 check at the base, none now"]
    );
    let one = new.replace("\t\trequire.Equal(t, 3, h.Schema)\n\t})\n}\n", "\t})\n}\n");
    assert_eq!(
        go_modified(new, &one),
        [
            "`appV2=true` checks less: 2 checks at the base, 1 now (gone: `require.Equal(t, 3, h.Schema)`)"
        ]
    );
}

#[test]
fn rust_tests_that_pass_by_panicking() {
    let p = "tests/rt_local.rs";
    let old = "#[test]\nfn spawn_local_panics() {\n    let r = std::panic::catch_unwind(|| spawn_local_outside());\n    assert!(r.is_err());\n}\n";
    let attr = "#[test]\n#[should_panic = \"`spawn_local` called from outside of a `task::LocalSet`\"]\nfn spawn_local_panics() {\n    spawn_local_outside();\n}\n";
    assert!(modified(p, old, attr).is_empty());
    // Above `#[test]`, or without a message, it checks all the same.
    let above =
        "#[should_panic]\n#[test]\nfn spawn_local_panics() {\n    spawn_local_outside();\n}\n";
    assert!(modified(p, old, above).is_empty());
    // A retry loop that ends in `panic!` checks what the `assert!` did.
    let leak = "#[test]\nfn no_fd_leak() {\n    let leaked = count_fds() - before();\n    assert!(leaked <= 64);\n}\n";
    let retry = "#[test]\nfn no_fd_leak() {\n    while start.elapsed() < Duration::from_secs(1) {\n        if count_fds() - before() <= 64 {\n            return;\n        }\n    }\n    panic!(\"FD count stays above 64: probably a leak\");\n}\n";
    assert!(modified("tests/fd_leak.rs", leak, retry).is_empty());
    // The lookalikes: neither `should_panic` nor `panic!` is left.
    assert_eq!(
        modified(
            p,
            old,
            "#[test]\nfn spawn_local_panics() {\n    let _ = std::panic::catch_unwind(|| spawn_local_outside());\n}\n"
        ),
        vec![2]
    );
    assert_eq!(
        modified(
            "tests/fd_leak.rs",
            leak,
            &retry.replace(
                "    panic!(\"FD count stays above 64: probably a leak\");\n",
                ""
            )
        ),
        vec![2]
    );
    // A `panic!` in a function that is not a test is no assertion a test makes.
    let helper = "fn setup() {\n    panic!(\"x\");\n}\n\n#[test]\nfn t() {\n    setup();\n}\n";
    assert_eq!(
        modified(
            "tests/h.rs",
            &helper.replace("    setup();\n", "    assert!(ok());\n"),
            helper
        ),
        vec![6]
    );
}

mod javascript;

#[test]
fn php_exception_object_expects_class_message_and_code() {
    let p = "tests/GateTest.php";
    let old = "<?php\nclass GateTest extends TestCase\n{\n    public function testAuthorizeThrows()\n    {\n        $this->expectException(AuthorizationException::class);\n        $this->expectExceptionMessage('You are not an admin.');\n        $this->expectExceptionCode(0);\n        $this->gate()->authorize('create');\n    }\n}\n";
    let new = "<?php\nclass GateTest extends TestCase\n{\n    public function testAuthorizeThrows()\n    {\n        $this->expectExceptionObject(new AuthorizationException('You are not an admin.', 0));\n        $this->gate()->authorize('create');\n    }\n}\n";
    assert!(modified(p, old, new).is_empty());
    // The message's expectation dropped: a loss.
    let new = old.replace(
        "        $this->expectExceptionMessage('You are not an admin.');\n",
        "",
    );
    assert_eq!(modified(p, old, &new), vec![4]);
    let new = "<?php\nclass GateTest extends TestCase\n{\n    public function testAuthorizeThrows()\n    {\n        $this->expectExceptionObject(new AuthorizationException());\n        $this->gate()->authorize('create');\n    }\n}\n";
    assert_eq!(modified(p, old, new), vec![4]);
}

#[test]
fn a_tolerance_widened_checks_less_and_is_no_expected_value_changed() {
    use crate::testing::messages;
    let p = "tests/test_tax.py";
    let old = "def test_tax():\n    assert tax(100.0) == pytest.approx(20.0, abs=1e-9)\n";
    let report = run(&[Modify(p, old, &old.replace("abs=1e-9", "abs=10"))]);
    assert_eq!(
        messages(&report, Rule::TestWeakened),
        [
            "`test_tax` checks less: `assert tax(100.0) == pytest.approx(20.0, abs=10)` where it checked `assert tax(100.0) == pytest.approx(20.0, abs=1e-9)` (a tolerance of 10 where it allowed 1e-9)"
        ]
    );
    // A positional tolerance is no expected value: only the widening is said.
    let go = "package p\n\nfunc TestRatio(t *testing.T) {\n\tassert.InDelta(t, 0.3333, Ratio(1, 3), 0.0001)\n}\n";
    let report = run(&[Modify("p/ratio_test.go", go, &go.replace("0.0001)", "1)"))]);
    assert_eq!(lines(&report, Rule::TestWeakened), vec![4]);
    assert!(lines(&report, Rule::ExpectationChanged).is_empty());
    // An exact equality made approximate.
    let exact = "def test_total():\n    assert total() == 170.0\n";
    assert_eq!(
        messages(
            &run(&[Modify(
                p,
                exact,
                &exact.replace("170.0", "pytest.approx(170.0, rel=0.5)")
            )]),
            Rule::TestWeakened
        ),
        [
            "`test_total` checks less: `assert total() == pytest.approx(170.0, rel=0.5)` where it checked `assert total() == 170.0` (a tolerance of 85 where it required the exact value)"
        ]
    );
    let ut = "class T(unittest.TestCase):\n    def test_tax(self):\n        self.assertAlmostEqual(tax(100.0), 20.0, places=7)\n";
    assert_eq!(
        modified(p, ut, &ut.replace("places=7", "places=0")),
        vec![3]
    );
    assert_eq!(modified(p, ut, &ut.replace("places=7", "delta=5")), vec![3]);
    let rs =
        "#[test]\nfn ratio_third() {\n    assert!((ratio(1.0, 3.0) - 0.3333).abs() < 1e-4);\n}\n";
    assert_eq!(
        modified("src/lib.rs", rs, &rs.replace("1e-4", "10.0")),
        vec![3]
    );
    let java = "class PricingTest {\n  @Test\n  void discount() {\n    assertEquals(170.0, Pricing.applyDiscount(200, 15), 1e-9);\n  }\n}\n";
    assert_eq!(
        modified(
            "src/test/java/PricingTest.java",
            java,
            &java.replace("1e-9", "1.0")
        ),
        vec![4]
    );
}

#[test]
fn a_tolerance_tightened_or_a_float_equality_made_approximate_is_no_weakening() {
    let p = "tests/test_tax.py";
    let exact = "def test_total():\n    assert total() == 170.0\n    assert ratio() == 0.3\n";
    for new in [
        exact.replace("170.0\n", "pytest.approx(170.0)\n"),
        exact.replace("ratio() == 0.3", "abs(ratio() - 0.3) < 1e-9"),
        exact.replace("ratio() == 0.3", "math.isclose(ratio(), 0.3)"),
    ] {
        let report = run(&[Modify(p, exact, &new)]);
        assert!(report.flags.is_empty(), "{new}: {:?}", report.flags);
    }
    let js = "it('ratio', () => {\n  expect(ratio(1, 3)).toBeCloseTo(0.3333, 4);\n});\n";
    for new in [
        js.replace("0.3333, 4", "0.33333, 5"),
        js.replace("4);", "6);"),
        js.replace("0.3333, 4", "1 / 3, 4"),
    ] {
        let report = run(&[Modify("test/ratio.test.js", js, &new)]);
        assert!(report.flags.is_empty(), "{new}: {:?}", report.flags);
    }
    let go = "package p\n\nfunc TestRatio(t *testing.T) {\n\tassert.InDelta(t, 0.3333, Ratio(1, 3), 0.0001)\n}\n";
    let tighter = go.replace(
        "0.3333, Ratio(1, 3), 0.0001",
        "0.33333, Ratio(1, 3), 0.00001",
    );
    assert!(
        run(&[Modify("p/ratio_test.go", go, &tighter)])
            .flags
            .is_empty()
    );
}

#[test]
fn a_mock_an_error_or_a_string_checked_loosely_checks_less() {
    let p = "tests/test_receipt.py";
    let old = "def test_send_receipt():\n    mailer = mock.Mock()\n    send_receipt(mailer, 16)\n    mailer.send.assert_called_once_with(\"a@example.com\", \"Your total is 16\")\n";
    for loose in [
        "assert mailer.send.called",
        "mailer.send.assert_called()",
        "mailer.send.assert_called_once()",
    ] {
        let new = old.replace(
            "mailer.send.assert_called_once_with(\"a@example.com\", \"Your total is 16\")",
            loose,
        );
        assert_eq!(modified(p, old, &new), vec![4], "{loose}");
    }
    // Another mock's call checked loosely is not this one's loosened.
    let other = old.replace(
        "mailer.send.assert_called_once_with(\"a@example.com\", \"Your total is 16\")",
        "mailer.send.assert_called_once_with(\"a@example.com\", \"Your total is 16\")\n    audit.log.assert_called()",
    );
    assert!(modified(p, old, &other).is_empty());
    let java = "class PricingTest {\n  @Test\n  void rejects() {\n    assertThatThrownBy(() -> Pricing.applyDiscount(100, 120))\n        .isInstanceOf(IllegalArgumentException.class)\n        .hasMessageContaining(\"between 0 and 100\");\n  }\n}\n";
    let any = java.replace(
        "        .isInstanceOf(IllegalArgumentException.class)\n        .hasMessageContaining(\"between 0 and 100\");",
        "        .isInstanceOf(Exception.class);",
    );
    assert_eq!(
        modified("src/test/java/PricingTest.java", java, &any),
        vec![4]
    );
    // The message's check dropped for a narrower type is no loosening.
    let narrower = java.replace(
        "        .isInstanceOf(IllegalArgumentException.class)\n        .hasMessageContaining(\"between 0 and 100\");",
        "        .isInstanceOf(PercentOutOfRange.class);",
    );
    assert!(modified("src/test/java/PricingTest.java", java, &narrower).is_empty());
    let ts = "it('slugs', () => {\n  expect(slugify('Hello, World!')).toBe('hello-world');\n  expect(applyDiscount(200, 15)).toBe(170);\n});\n";
    let path = "test/pricing.test.ts";
    assert_eq!(
        modified(
            path,
            ts,
            &ts.replace("toBe('hello-world')", "toMatch(/hello/)")
        ),
        vec![2]
    );
    assert_eq!(
        modified(path, ts, &ts.replace("toBe(170)", "toBeTypeOf('number')")),
        vec![3]
    );
}

#[test]
fn should_panic_added_to_a_test_that_still_asserts_makes_its_failure_pass() {
    let p = "src/lib.rs";
    let old = "#[cfg(test)]\nmod tests {\n    #[test]\n    fn slugs() {\n        assert_eq!(slug(\"Hello World\"), \"hello-world\");\n    }\n}\n";
    let new = old.replace("#[test]\n", "#[test]\n    #[should_panic]\n");
    assert_eq!(modified(p, old, &new), vec![5]);
    // A test rewritten to expect a panic, its old assertion gone, says what it expects.
    let rewritten = "#[cfg(test)]\nmod tests {\n    #[test]\n    #[should_panic(expected = \"empty\")]\n    fn slugs() {\n        slug(\"\");\n    }\n}\n";
    assert!(modified(p, old, rewritten).is_empty());
    // A new test that panics is a test of a panic.
    let added = old.replace(
        "    }\n}\n",
        "    }\n\n    #[test]\n    #[should_panic]\n    fn empty() {\n        assert_eq!(slug(\"\"), \"\");\n    }\n}\n",
    );
    assert!(modified(p, old, &added).is_empty());
}

#[test]
fn checks_of_parts_folded_into_a_check_of_the_whole_are_kept() {
    let p = "tests/test_sku.py";
    let old = "def test_parse_sku():\n    parsed = parse_sku(\"TS-M-RED\")\n    assert parsed[\"family\"] == \"TS\"\n    assert parsed[\"size\"] == \"M\"\n    assert parsed[\"color\"] == \"RED\"\n";
    let whole = "def test_parse_sku():\n    parsed = parse_sku(\"TS-M-RED\")\n    assert parsed == {\"family\": \"TS\", \"size\": \"M\", \"color\": \"RED\"}\n";
    assert!(modified(p, old, whole).is_empty());
    let ut = |body: &str| {
        format!(
            "class T(unittest.TestCase):\n    def test_parse_sku(self):\n        parsed = parse_sku(\"TS-M-RED\")\n{body}"
        )
    };
    let fields = ut(
        "        self.assertEqual(parsed[\"family\"], \"TS\")\n        self.assertEqual(parsed[\"size\"], \"M\")\n",
    );
    let dict = ut("        self.assertDictEqual(parsed, {\"family\": \"TS\", \"size\": \"M\"})\n");
    assert!(modified(p, &fields, &dict).is_empty());
    let js = "it('bundles', () => {\n  const names = bundle(ITEMS);\n  expect(names).toHaveLength(2);\n  expect(names).toEqual(['pen', 'pad']);\n});\n";
    let folded = "it('bundles', () => {\n  const names = bundle(ITEMS);\n  expect({ length: names.length, names }).toEqual({ length: 2, names: ['pen', 'pad'] });\n});\n";
    assert!(modified("test/bundle.test.js", js, folded).is_empty());
    // The lookalikes: the whole compared with other values, or another value compared.
    let other = whole.replace("\"RED\"}", "\"BLUE\"}");
    assert_eq!(modified(p, old, &other), vec![1]);
    let elsewhere = whole.replace("assert parsed ==", "assert defaults ==");
    assert_eq!(modified(p, old, &elsewhere), vec![1]);
}

#[test]
fn a_row_its_body_newly_passes_over_checks_nothing() {
    let go = "package p\n\nfunc TestSlug(t *testing.T) {\n\ttests := []struct{ name, in, want string }{\n\t\t{\"lower\", \"Hello\", \"hello\"},\n\t\t{\"punctuation\", \"Hello, World!\", \"hello-world\"},\n\t}\n\tfor _, tt := range tests {\n\t\tt.Run(tt.name, func(t *testing.T) {\n\t\t\tif got := Slug(tt.in); got != tt.want {\n\t\t\t\tt.Errorf(\"got %q\", got)\n\t\t\t}\n\t\t})\n\t}\n}\n";
    let guarded = go.replace(
        "\tfor _, tt := range tests {\n",
        "\tfor _, tt := range tests {\n\t\tif tt.name == \"punctuation\" {\n\t\t\tcontinue // TODO\n\t\t}\n",
    );
    let got = crate::testing::messages(
        &run(&[Modify("p/p_test.go", go, &guarded)]),
        Rule::TestWeakened,
    );
    assert_eq!(
        got,
        [
            "`TestSlug` checks less: 1 row of its table is passed over by `if tt.name == \"punctuation\" { continue }`"
        ]
    );
    // Inside the subtest, by a return.
    let inside = go.replace(
        "\t\t\tif got := Slug",
        "\t\t\tif tt.name == \"punctuation\" { return }\n\t\t\tif got := Slug",
    );
    assert_eq!(modified("p/p_test.go", go, &inside), vec![3]);
    let py = "@pytest.mark.parametrize('sku,want', [('TS-M-RED', 'TS'), ('MUG-L', 'MUG')])\ndef test_family(sku, want):\n    assert parse(sku).family == want\n";
    let guarded = py.replace(
        "    assert parse",
        "    if sku == 'TS-M-RED':\n        return\n    assert parse",
    );
    assert_eq!(modified("tests/test_p.py", py, &guarded), vec![2]);
    let js = "test.each([['a', 1], ['b', 2]])('%s', (name, want) => {\n  expect(f(name)).toBe(want);\n});\n";
    let guarded = js.replace("  expect(", "  if (name === 'b') return;\n  expect(");
    assert_eq!(modified("test/f.test.js", js, &guarded), vec![1]);

    // Lookalikes: a guard the base had, a guard on the platform too, a guard on no row's value.
    assert!(modified("p/p_test.go", &guarded_go(go, ""), &guarded_go(go, "\n")).is_empty());
    let platform = go.replace(
        "\tfor _, tt := range tests {\n",
        "\tfor _, tt := range tests {\n\t\tif tt.name == \"punctuation\" && runtime.GOOS == \"windows\" {\n\t\t\tcontinue\n\t\t}\n",
    );
    assert!(modified("p/p_test.go", go, &platform).is_empty());
    let other = go.replace(
        "\tfor _, tt := range tests {\n",
        "\tfor _, tt := range tests {\n\t\tif tt.name == \"unicode\" {\n\t\t\tcontinue\n\t\t}\n",
    );
    assert!(modified("p/p_test.go", go, &other).is_empty());
}

/// `go` with its `punctuation` row passed over, and `extra` after the guard.
fn guarded_go(go: &str, extra: &str) -> String {
    go.replace(
        "\tfor _, tt := range tests {\n",
        &format!("\tfor _, tt := range tests {{\n\t\tif tt.name == \"punctuation\" {{\n\t\t\tcontinue\n\t\t}}\n{extra}"),
    )
}

#[test]
fn csharp_specific_exception_made_any() {
    let p = "tests/Shop.Tests/PricingTests.cs";
    let old = "public class PricingTests\n{\n    [Fact]\n    public void RejectsBadPercent()\n    {\n        Assert.Throws<ArgumentOutOfRangeException>(() => Pricing.ApplyDiscount(100m, 120m));\n    }\n}\n";
    let new = old.replace(
        "        Assert.Throws<ArgumentOutOfRangeException>(() => Pricing.ApplyDiscount(100m, 120m));\n",
        "        var ex = Record.Exception(() => Pricing.ApplyDiscount(100m, 120m));\n        Assert.NotNull(ex);\n",
    );
    assert_eq!(modified(p, old, &new), vec![7]);
    // The recorded exception checked for its type and message is still as specific.
    let kept = old.replace(
        "        Assert.Throws<ArgumentOutOfRangeException>(() => Pricing.ApplyDiscount(100m, 120m));\n",
        "        var ex = Record.Exception(() => Pricing.ApplyDiscount(100m, 120m));\n        Assert.IsType<ArgumentOutOfRangeException>(ex);\n",
    );
    assert!(modified(p, old, &kept).is_empty());
    // Another specific exception is an expectation changed, not a check lost.
    let other = old.replace("ArgumentOutOfRangeException", "ArgumentException");
    assert!(modified(p, old, &other).is_empty());
}

#[test]
fn a_range_widened_around_the_value_checks_less_and_one_moved_or_narrowed_does_not() {
    let js = "it('percent', () => {\n  expect(percent(5, 50)).toBeWithin(0, 10);\n});\n";
    let wide = js.replace("toBeWithin(0, 10)", "toBeWithin(-1000, 1000)");
    let report = run(&[Modify("test/percent.test.js", js, &wide)]);
    assert_eq!(lines(&report, Rule::TestWeakened), [2]);
    assert_eq!(
        messages(&report, Rule::TestWeakened),
        [
            "`percent` checks less: `expect(percent(5, 50)).toBeWithin(-1000, 1000)` where it checked `expect(percent(5, 50)).toBeWithin(0, 10)` (a tolerance of 1000 where it allowed 5)"
        ]
    );
    for new in [
        js.replace("toBeWithin(0, 10)", "toBeWithin(9, 11)"),
        js.replace("toBeWithin(0, 10)", "toBeWithin(0, 20)"),
        js.replace("toBeWithin(0, 10)", "toBeWithin(100, 110)"),
    ] {
        let report = run(&[Modify("test/percent.test.js", js, &new)]);
        assert!(
            lines(&report, Rule::TestWeakened).is_empty(),
            "{new}: {:?}",
            report.flags
        );
    }
}
