//! `expectation-changed`: positives and lookalikes in every language the test model reads.

use crate::Rule;
use crate::testing::{Spec::*, run};

fn changed(path: &str, old: &str, new: &str) -> Vec<(u32, String)> {
    run(&[Modify(path, old, new)])
        .flags
        .into_iter()
        .filter(|f| f.rule == Rule::ExpectationChanged)
        .map(|f| (f.line.unwrap_or(0), f.message))
        .collect()
}

fn lines(path: &str, old: &str, new: &str) -> Vec<u32> {
    changed(path, old, new)
        .into_iter()
        .map(|(l, _)| l)
        .collect()
}

const PY: &str = "def test_add():\n    assert add(2, 3) == 5\n    assert is_even(4) is True\n    self.assertEqual(name(), 'bob')\n";

#[test]
fn python() {
    let p = "tests/test_calc.py";
    assert_eq!(
        changed(p, PY, &PY.replace("== 5", "== -1")),
        vec![(
            2,
            "`test_add` now expects `-1` where it expected `5`".to_owned()
        )]
    );
    assert_eq!(lines(p, PY, &PY.replace("== 5", "!= 5")), vec![2]);
    assert_eq!(lines(p, PY, &PY.replace("is True", "is not True")), vec![3]);
    assert_eq!(lines(p, PY, &PY.replace("'bob'", "'alice'")), vec![4]);
    assert_eq!(
        lines(p, PY, &PY.replace("assertEqual", "assertNotEqual")),
        vec![4]
    );
    let flipped = changed(p, PY, &PY.replace("== 5", "!= 5"));
    assert_eq!(
        flipped[0].1,
        "`test_add` now expects the opposite: `assert add(2, 3) == 5` → `assert add(2, 3) != 5`"
    );
}

#[test]
fn python_lookalikes() {
    let p = "tests/test_calc.py";
    for new in [
        PY.replace("'bob'", "\"bob\""),
        PY.replace("assert add(2, 3) == 5", "assert add(\n        2, 3\n    ) == 5"),
        PY.replace("== 5\n", "== 5, 'the sum'\n"),
        PY.replace("self.assertEqual(name(), 'bob')", "self.assertEqual(name(), 'bob', 'the name')"),
        // The input changed, not the expectation.
        PY.replace("add(2, 3) == 5", "add(3, 2) == 5"),
        // Moved into a parametrize row, unchanged.
        "@pytest.mark.parametrize('a,b,want', [(2, 3, 5)])\ndef test_add(a, b, want):\n    assert add(a, b) == want\n    assert is_even(4) is True\n    self.assertEqual(name(), 'bob')\n".to_owned(),
        // A new assertion beside the old.
        PY.replace("== 5\n", "== 5\n    assert add(1, 1) == 2\n"),
        // Python 3's strings are unicode: a formatter drops the `u` prefix.
        PY.replace("'bob'", "u'bob'"),
        PY.replace("self.assertEqual(name(), 'bob')", "self.assertEqual(name(), U\"bob\")"),
    ] {
        assert!(lines(p, PY, &new).is_empty(), "{new}");
    }
    // The other way round, and in a table's rows.
    let prefixed = PY.replace("'bob'", "u'bob'");
    assert!(lines(p, &prefixed, PY).is_empty());
    let rows = "@pytest.mark.parametrize('url', [u'http://*', u'http://a.b/'])\ndef test_bad(url):\n    assert bad(url) == True\n";
    assert!(lines(p, rows, &rows.replace("u'", "'")).is_empty());
    // Another value is still another value, with or without the prefix.
    assert_eq!(
        lines(p, &prefixed, &PY.replace("'bob'", "'alice'")),
        vec![4]
    );
    // A new test is not an edited one.
    assert!(
        lines(
            p,
            PY,
            &format!("{PY}\ndef test_new():\n    assert add(1, 1) == 3\n")
        )
        .is_empty()
    );
}

#[test]
fn table_rows() {
    let old = "@pytest.mark.parametrize('a,b,want', [(2, 3, 5), (0, 0, 0)])\ndef test_add(a, b, want):\n    assert add(a, b) == want\n";
    assert_eq!(
        changed(
            "tests/test_add.py",
            old,
            &old.replace("(2, 3, 5)", "(2, 3, 6)")
        ),
        vec![(
            1,
            "a row of `test_add` now holds `6` where it held `5`".to_owned()
        )]
    );
    let go = "package calc\n\nfunc TestAdd(t *testing.T) {\n\tcases := []struct{ a, b, want int }{\n\t\t{2, 3, 5},\n\t\t{0, 0, 0},\n\t}\n\tfor _, c := range cases {\n\t\tif got := Add(c.a, c.b); got != c.want {\n\t\t\tt.Errorf(\"got %d\", got)\n\t\t}\n\t}\n}\n";
    assert_eq!(
        lines(
            "calc/add_test.go",
            go,
            &go.replace("{2, 3, 5}", "{2, 3, 7}")
        ),
        vec![5]
    );
    // A row added is not a row changed.
    assert!(
        lines(
            "calc/add_test.go",
            go,
            &go.replace("{0, 0, 0},", "{0, 0, 0},\n\t\t{1, 1, 2},")
        )
        .is_empty()
    );
    let cs = "public class T\n{\n    [Theory]\n    [InlineData(2, 3, 5)]\n    public void Adds(int a, int b, int c)\n    {\n        Assert.Equal(c, Calc.Add(a, b));\n    }\n}\n";
    assert_eq!(
        lines("tests/T.cs", cs, &cs.replace("(2, 3, 5)", "(2, 3, 4)")),
        vec![4]
    );
}

#[test]
fn other_languages() {
    let js = "it('adds', () => {\n  expect(add(2, 3)).toBe(5);\n});\n";
    assert_eq!(
        lines("a.test.js", js, &js.replace("toBe(5)", "toBe(-1)")),
        vec![2]
    );
    assert_eq!(
        lines("a.test.js", js, &js.replace(".toBe(5)", ".not.toBe(5)")),
        vec![2]
    );
    assert!(
        lines(
            "a.test.js",
            js,
            &js.replace("toBe(5)", "toBe(\n    5,\n  )")
        )
        .is_empty()
    );
    let go = "package calc\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Errorf(\"got %d\", got)\n\t}\n}\n";
    assert_eq!(
        lines("calc_test.go", go, &go.replace("got != 5", "got != 6")),
        vec![4]
    );
    assert_eq!(
        lines("calc_test.go", go, &go.replace("got != 5", "got == 5")),
        vec![4]
    );
    let rs = "#[test]\nfn adds() {\n    assert_eq!(add(2, 3), 5);\n}\n";
    assert_eq!(
        lines("tests/calc.rs", rs, &rs.replace(", 5)", ", 6)")),
        vec![3]
    );
    assert_eq!(
        lines("tests/calc.rs", rs, &rs.replace("assert_eq!", "assert_ne!")),
        vec![3]
    );
    let java = "class CalcTest {\n    @Test\n    void adds() {\n        assertEquals(5, Calc.add(2, 3));\n        assertTrue(Calc.isEven(4));\n    }\n}\n";
    let p = "src/test/java/CalcTest.java";
    assert_eq!(
        lines(p, java, &java.replace("assertEquals(5,", "assertEquals(6,")),
        vec![4]
    );
    assert_eq!(
        lines(p, java, &java.replace("assertTrue", "assertFalse")),
        vec![5]
    );
    // JUnit 4's message first.
    assert!(
        lines(
            p,
            java,
            &java.replace("assertEquals(5,", "assertEquals(\"sum\", 5,")
        )
        .is_empty()
    );
    let cs = "public class T\n{\n    [Fact]\n    public void Adds()\n    {\n        Assert.Equal(5, Calc.Add(2, 3));\n    }\n}\n";
    assert_eq!(
        lines("tests/T.cs", cs, &cs.replace("Equal(5", "Equal(4")),
        vec![6]
    );
    assert_eq!(
        lines(
            "tests/T.cs",
            cs,
            &cs.replace("Assert.Equal", "Assert.NotEqual")
        ),
        vec![6]
    );
    let rb = "describe Calc do\n  it 'adds' do\n    expect(Calc.add(2, 3)).to eq(5)\n  end\nend\n";
    assert_eq!(
        lines("spec/calc_spec.rb", rb, &rb.replace("eq(5)", "eq(6)")),
        vec![3]
    );
    assert_eq!(
        lines("spec/calc_spec.rb", rb, &rb.replace(".to eq", ".not_to eq")),
        vec![3]
    );
    let php = "<?php\nclass CalcTest extends TestCase\n{\n    public function testAdd(): void\n    {\n        $this->assertSame(5, Calc::add(2, 3));\n    }\n}\n";
    assert_eq!(
        lines(
            "tests/CalcTest.php",
            php,
            &php.replace("assertSame(5", "assertSame(4")
        ),
        vec![6]
    );
    assert_eq!(
        lines(
            "tests/CalcTest.php",
            php,
            &php.replace("assertSame", "assertNotSame")
        ),
        vec![6]
    );
}

#[test]
fn a_note_by_default() {
    let r = run(&[Modify(
        "tests/test_calc.py",
        PY,
        &PY.replace("== 5", "== 6"),
    )]);
    assert_eq!(r.flags[0].severity, crate::Severity::Note);
}

#[test]
fn rows_wrapped_in_pytest_param_keep_their_values() {
    let p = "tests/test_x.py";
    let old = "@pytest.mark.parametrize('value,result', [\n    (True, True),\n    (1, True),\n    ('y', True),\n    ('1', True),\n    ('t', True),\n])\ndef test_bool(value, result):\n    assert to_bool(value) is result\n";
    let new = "@pytest.mark.parametrize('value,result', [\n    pytest.param(True, True, id='True_bool'),\n    pytest.param(1, True, id='1_int'),\n    ('y', True),\n    pytest.param('1', True, id='1_str'),\n    ('t', True),\n])\ndef test_bool(value, result):\n    assert to_bool(value) is result\n";
    assert!(changed(p, old, new).is_empty());
    // Wrapped and reordered: each row pairs with its own values.
    let new = "@pytest.mark.parametrize('value,result', [\n    pytest.param(1, True, id='1_int'),\n    ('t', True),\n    pytest.param(True, True, id='True_bool'),\n    ('y', True),\n    pytest.param('1', True, id='1_str'),\n])\ndef test_bool(value, result):\n    assert to_bool(value) is result\n";
    assert!(changed(p, old, new).is_empty());
    // A single value wrapped.
    let old = "@pytest.mark.parametrize('field', ['dt', 'd'])\ndef test_decode(field):\n    assert check(field)\n";
    let new = old.replace("'dt'", "pytest.param('dt', id='datetime')");
    assert!(changed(p, old, &new).is_empty());
    // A value changed inside the wrapper is still a changed row.
    let old = "@pytest.mark.parametrize('a,want', [(2, 4), (3, 9)])\ndef test_sq(a, want):\n    assert sq(a) == want\n";
    let new = old.replace("(3, 9)", "pytest.param(3, 10, id='three')");
    assert_eq!(
        changed(p, old, &new),
        vec![(
            1,
            "a row of `test_sq` now holds `10` where it held `9`".to_owned()
        )]
    );
}

#[test]
fn escaped_quotes_are_the_same_string() {
    let p = "tests/test_x.py";
    let old = "@pytest.mark.parametrize('value, expected', (\n    ('a; b=\\'x\\' ', ('a', {'b': 'x'})),\n    ('a; \"b=x\" ', ('a', {'b': 'x'})),\n))\ndef test_parse(value, expected):\n    assert parse(value) == expected\n";
    let new = old
        .replace("'a; b=\\'x\\' '", "\"a; b='x' \"")
        .replace("'a; \"b=x\" '", "\"a; \\\"b=x\\\" \"");
    assert_ne!(old, new);
    assert!(changed(p, old, &new).is_empty(), "{new}");
    let old = "def test_q():\n    assert quote() == 'it\\'s'\n";
    assert!(changed(p, old, "def test_q():\n    assert quote() == \"it's\"\n").is_empty());
    // Another value is still another value; and a raw string's backslash is a character.
    assert_eq!(
        lines(p, old, "def test_q():\n    assert quote() == \"its\"\n"),
        vec![2]
    );
    assert_eq!(
        lines(p, old, "def test_q():\n    assert quote() == r'it\\'s'\n"),
        vec![2]
    );
}

#[test]
fn a_trailing_comma_is_layout() {
    let p = "tests/test_x.py";
    let old = "@pytest.mark.parametrize('value, expected', (\n    ('a; b', ('a', {'b': 'x', 'c': True})),\n    ('t', ('t', {})),\n))\ndef test_parse(value, expected):\n    assert parse(value) == expected\n";
    let new = "@pytest.mark.parametrize(\n    \"value, expected\",\n    (\n        (\n            \"a; b\",\n            (\n                \"a\",\n                {\n                    \"b\": \"x\",\n                    \"c\": True,\n                },\n            ),\n        ),\n        (\"t\", (\"t\", {})),\n    ),\n)\ndef test_parse(value, expected):\n    assert parse(value) == expected\n";
    assert!(changed(p, old, new).is_empty());
    // A one-element tuple is not its element.
    let old = "def test_t():\n    assert f() == (1,)\n";
    assert_eq!(
        lines(p, old, "def test_t():\n    assert f() == (2,)\n"),
        vec![2]
    );
    let old = "def test_t():\n    assert f() == [1, 2,]\n";
    assert!(lines(p, old, "def test_t():\n    assert f() == [1, 2]\n").is_empty());
}

#[test]
fn inline_snapshot() {
    let old = "test('parses', () => {\n  expect(parseSku('TS-M-RED')).toMatchInlineSnapshot(`\n    {\n      \"color\": \"RED\",\n      \"size\": \"M\",\n    }\n  `);\n});\n";
    let new = old
        .replace("\"RED\"", "undefined")
        .replace("\"M\"", "undefined");
    assert_eq!(lines("test/sku.test.js", old, &new), vec![2]);
    // A long value is shown from a little before where the two differ.
    let long = "test('map', () => {\n  expect(map()).toMatchInlineSnapshot(`{ \"mappings\": \"AAAA;EACE,UAAU;AACZ;;AAAA,SAAS,OAAO\" }`);\n});\n";
    let edited = long.replace(";;AAAA,SAAS", ";AC,SAAS");
    assert_eq!(
        changed("test/map.test.js", long, &edited),
        vec![(
            2,
            "`map` now expects `…E,UAAU;AACZ;AC,SAAS,OAAO\" }`` where it expected `…E,UAAU;AACZ;;AAAA,SAAS,OAAO\" }``".to_owned()
        )]
    );
    // Reformatted around the same snapshot: not another value.
    let same = old.replace(
        "expect(parseSku('TS-M-RED'))",
        "expect(parseSku(\"TS-M-RED\"))",
    );
    assert!(lines("test/sku.test.js", old, &same).is_empty());
}

const JEST_SNAP: &str = "// Jest Snapshot v1, https://goo.gl/fbAQLP\n\nexports[`pricing parses a SKU 1`] = `\n{\n  \"color\": \"RED\",\n  \"family\": \"TS\",\n}\n`;\n\nexports[`pricing totals 1`] = `\"170.00\"`;\n";

#[test]
fn stored_snapshots() {
    let p = "test/__snapshots__/pricing.test.js.snap";
    let new = JEST_SNAP.replace("\"color\": \"RED\"", "\"color\": undefined");
    assert_eq!(
        changed(p, JEST_SNAP, &new),
        vec![(
            5,
            "the stored snapshot `pricing parses a SKU 1` now holds `\"color\": undefined,` where it held `\"color\": \"RED\",`".to_owned()
        )]
    );
    let new = JEST_SNAP.replace("`\"170.00\"`", "`\"200.00\"`");
    assert_eq!(lines(p, JEST_SNAP, &new), vec![10]);
    // A new snapshot, an obsolete one removed, entries reordered: no expectation changed.
    let added = format!("{JEST_SNAP}\nexports[`pricing new 1`] = `42`;\n");
    assert!(lines(p, JEST_SNAP, &added).is_empty());
    let removed = JEST_SNAP.replace("\nexports[`pricing totals 1`] = `\"170.00\"`;\n", "");
    assert!(lines(p, JEST_SNAP, &removed).is_empty());
    // The same value elsewhere than under `__snapshots__` is not a snapshot.
    assert!(lines("test/pricing.snap", JEST_SNAP, &new).is_empty());
    // Many rewritten at once: one note for the file.
    let many_old: String = (1..=5)
        .map(|k| format!("exports[`t {k}`] = `{k}`;\n\n"))
        .collect();
    let many_new = many_old.replace("] = `", "] = `0");
    let notes = changed(p, &many_old, &many_new);
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0]
            .1
            .starts_with("5 stored snapshots now expect other values (`t 1`, …)")
    );
    // A line inserted is shown as such; indentation alone is no change.
    let inserted = JEST_SNAP.replace(
        "  \"family\": \"TS\",\n",
        "  \"extra\": 1,\n  \"family\": \"TS\",\n",
    );
    assert_eq!(
        changed(p, JEST_SNAP, &inserted),
        vec![(
            6,
            "the stored snapshot `pricing parses a SKU 1` now holds `\"extra\": 1,` more"
                .to_owned()
        )]
    );
    let indented = JEST_SNAP.replace("  \"color\"", "    \"color\"");
    assert!(lines(p, JEST_SNAP, &indented).is_empty());
    // insta (Rust) and syrupy (Python).
    let insta =
        "---\nsource: src/lib.rs\nexpression: parse(\"x\")\n---\nNode {\n    kind: Word,\n}\n";
    let insta_new = insta.replace("Word", "Error");
    assert_eq!(
        lines("src/snapshots/crate__parse.snap", insta, &insta_new),
        vec![6]
    );
    let header_only = insta.replace("src/lib.rs", "src/parse.rs");
    assert!(lines("src/snapshots/crate__parse.snap", insta, &header_only).is_empty());
    let ambr =
        "# serializer version: 1\n# name: test_parse\n  dict({\n    'kind': 'word',\n  })\n# ---\n";
    let ambr_new = ambr.replace("'word'", "'error'");
    assert_eq!(
        lines("tests/__snapshots__/test_parse.ambr", ambr, &ambr_new),
        vec![4]
    );
}
