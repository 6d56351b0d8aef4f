//! `test-deleted`: positives and lookalikes.

use crate::testing::{Spec, Spec::*, run};
use crate::{Flag, Rule};

/// The change's `test-deleted` flags.
pub(super) fn deleted(specs: &[Spec<'_>]) -> Vec<Flag> {
    run(specs)
        .flags
        .into_iter()
        .filter(|f| f.rule == Rule::TestDeleted)
        .collect()
}

const PY: &str =
    "def test_add():\n    assert add(2, 3) == 5\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n";

#[test]
fn a_deleted_test_names_its_base_line() {
    let new = "def test_add():\n    assert add(2, 3) == 5\n";
    let flags = deleted(&[Modify("tests/test_calc.py", PY, new)]);
    assert_eq!(flags.len(), 1);
    let f = &flags[0];
    assert_eq!((f.line, f.removed_line), (None, Some(5)));
    assert_eq!(f.path.to_string(), "tests/test_calc.py");
    assert_eq!(
        f.message,
        "test `test_mul` (line 5 at the base) is deleted and found nowhere else in the change"
    );
}

#[test]
fn a_deleted_test_file_is_one_flag() {
    let flags = deleted(&[Delete("tests/test_calc.py", PY)]);
    assert_eq!(flags.len(), 1);
    assert!(
        flags[0]
            .message
            .starts_with("the test file is deleted with its 2 tests"),
        "{}",
        flags[0].message
    );
}

#[test]
fn in_every_language() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "src/calc.test.js",
            "it('adds', () => {\n  expect(add(1, 1)).toBe(2);\n});\nit('subs', () => {\n  expect(sub(1, 1)).toBe(0);\n});\n",
            "it('adds', () => {\n  expect(add(1, 1)).toBe(2);\n});\n",
        ),
        (
            "calc_test.go",
            "package calc\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 1) != 2 {\n\t\tt.Fatal(\"x\")\n\t}\n}\n\nfunc TestSub(t *testing.T) {\n\tif Sub(1, 1) != 0 {\n\t\tt.Fatal(\"x\")\n\t}\n}\n",
            "package calc\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 1) != 2 {\n\t\tt.Fatal(\"x\")\n\t}\n}\n",
        ),
        (
            "src/lib.rs",
            "#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(add(1, 1), 2);\n    }\n    #[test]\n    fn subs() {\n        assert_eq!(sub(1, 1), 0);\n    }\n}\n",
            "#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(add(1, 1), 2);\n    }\n}\n",
        ),
        (
            "src/test/java/CalcTest.java",
            "class CalcTest {\n    @Test\n    void adds() {\n        assertEquals(2, add(1, 1));\n    }\n    @Test\n    void subs() {\n        assertEquals(0, sub(1, 1));\n    }\n}\n",
            "class CalcTest {\n    @Test\n    void adds() {\n        assertEquals(2, add(1, 1));\n    }\n}\n",
        ),
        (
            "tests/CalcTests.cs",
            "public class CalcTests\n{\n    [Fact]\n    public void Adds()\n    {\n        Assert.Equal(2, Add(1, 1));\n    }\n    [Fact]\n    public void Subs()\n    {\n        Assert.Equal(0, Sub(1, 1));\n    }\n}\n",
            "public class CalcTests\n{\n    [Fact]\n    public void Adds()\n    {\n        Assert.Equal(2, Add(1, 1));\n    }\n}\n",
        ),
        (
            "spec/calc_spec.rb",
            "describe Calc do\n  it 'adds' do\n    expect(add(1, 1)).to eq(2)\n  end\n  it 'subs' do\n    expect(sub(1, 1)).to eq(0)\n  end\nend\n",
            "describe Calc do\n  it 'adds' do\n    expect(add(1, 1)).to eq(2)\n  end\nend\n",
        ),
        (
            "tests/CalcTest.php",
            "<?php\nclass CalcTest extends TestCase {\n    public function testAdd() {\n        $this->assertSame(2, add(1, 1));\n    }\n    public function testSub() {\n        $this->assertSame(0, sub(1, 1));\n    }\n}\n",
            "<?php\nclass CalcTest extends TestCase {\n    public function testAdd() {\n        $this->assertSame(2, add(1, 1));\n    }\n}\n",
        ),
    ];
    for (path, old, new) in cases {
        let flags = deleted(&[Modify(path, old, new)]);
        assert_eq!(flags.len(), 1, "{path}: {flags:?}");
        assert!(
            flags[0].message.contains("sub") || flags[0].message.contains("Sub"),
            "{path}: {}",
            flags[0].message
        );
    }
}

#[test]
fn moves_renames_splits_and_tables_are_not_deletions() {
    let only_add = "def test_add():\n    assert add(2, 3) == 5\n";
    // Moved to another file.
    assert!(
        deleted(&[
            Modify("tests/test_calc.py", PY, only_add),
            Add(
                "tests/test_mul.py",
                "def test_mul():\n    assert mul(2, 3) == 6\n"
            ),
        ])
        .is_empty()
    );
    // Renamed, same body.
    assert!(
        deleted(&[Modify(
            "tests/test_calc.py",
            PY,
            &PY.replace("test_mul", "test_product")
        )])
        .is_empty()
    );
    // Renamed to a longer name, body edited.
    assert!(
        deleted(&[Modify(
            "tests/test_calc.py",
            PY,
            &PY.replace(
                "def test_mul():\n    assert mul(2, 3) == 6",
                "def test_mul_small():\n    assert mul(2, 3) == 6\n    assert mul(1, 1) == 1"
            )
        )])
        .is_empty()
    );
    // Moved into a class.
    assert!(
        deleted(&[Modify(
            "tests/test_calc.py",
            PY,
            "class TestCalc:\n    def test_add(self):\n        assert add(2, 3) == 5\n\n    def test_mul(self):\n        assert mul(2, 3) == 6\n"
        )])
        .is_empty()
    );
    // Two tests folded into one parametrized test.
    let table = "@pytest.mark.parametrize('f,a,b,want', [(add, 2, 3, 5), (mul, 2, 3, 6)])\ndef test_ops(f, a, b, want):\n    assert f(a, b) == want\n";
    assert!(deleted(&[Modify("tests/test_calc.py", PY, table)]).is_empty());
    // A file renamed.
    assert!(deleted(&[Rename("tests/test_calc.py", "tests/test_arith.py", PY, PY)]).is_empty());
    // Split into two files, renamed.
    assert!(
        deleted(&[
            Delete("tests/test_calc.py", PY),
            Add(
                "tests/arith/test_sum.py",
                "def test_sum():\n    assert add(2, 3) == 5\n"
            ),
            Add(
                "tests/arith/test_product.py",
                "def test_product():\n    assert mul(2, 3) == 6\n"
            ),
        ])
        .is_empty()
    );
}

#[test]
fn a_test_of_a_feature_the_change_removes_goes_with_it() {
    let js = "describe('res', () => {\n  it('sends', () => {\n    res.send('x');\n  });\n  it('sendfile works', () => {\n    res.sendfile('a.txt', done);\n  });\n});\n";
    let kept = "describe('res', () => {\n  it('sends', () => {\n    res.send('x');\n  });\n});\n";
    let lib = "res.send = function (body) {\n  return body;\n};\n\nres.sendfile = function (path, fn) {\n  return path;\n};\n";
    let lib_without = "res.send = function (body) {\n  return body;\n};\n";
    assert!(
        deleted(&[
            Modify("test/res.js", js, kept),
            Modify("lib/response.js", lib, lib_without)
        ])
        .is_empty()
    );
    // The same tests deleted while the code stays (or moves elsewhere): flagged.
    assert_eq!(deleted(&[Modify("test/res.js", js, kept)]).len(), 1);
    assert_eq!(
        deleted(&[
            Modify("test/res.js", js, kept),
            Modify("lib/response.js", lib, lib_without),
            Add(
                "lib/files.js",
                "res.sendfile = function (path, fn) {\n  return path;\n};\n"
            ),
        ])
        .len(),
        1
    );
}

#[test]
fn many_tests_gone_from_one_file_are_one_flag() {
    let old: String = (1..=5)
        .map(|i| format!("def test_{i}():\n    assert f({i}) == {i}\n\n\n"))
        .collect();
    let flags = deleted(&[Modify(
        "tests/test_f.py",
        &old,
        "def test_1():\n    assert f(1) == 1\n",
    )]);
    assert_eq!(flags.len(), 1, "{flags:?}");
    assert_eq!(
        flags[0].message,
        "4 tests are deleted from this file and found nowhere else in the change (`test_2`, `test_3`, `test_4`, …, the first at line 5 of the base)"
    );
    assert_eq!(flags[0].removed_line, Some(5));
}

#[test]
fn not_a_test_file() {
    assert!(deleted(&[Modify("src/calc.py", PY, "")]).is_empty());
}

#[test]
fn a_test_renamed_and_edited_in_place_is_judged_as_that_test() {
    let p = "testing/test_g.py";
    let old = "def test_other():\n    assert 1\n\n\ndef test_return_non_none_error(pytester):\n    pytester.makepyfile(\"def test_stuff(): return 1\")\n    res = pytester.runpytest()\n    res.assert_outcomes(failed=1)\n    res.stdout.fnmatch_lines([\"*Did you mean to use `assert`*\"])\n";
    let new = "def test_other():\n    assert 1\n\n\ndef test_return_non_none_warning(pytester):\n    pytester.makepyfile(\"def test_stuff(): return 1\")\n    res = pytester.runpytest()\n    res.stdout.fnmatch_lines([\"*Did you mean to use `assert`*\"])\n";
    let report = run(&[Modify(p, old, new)]);
    assert!(
        !report.flags.iter().any(|f| f.rule == Rule::TestDeleted),
        "{:?}",
        report.flags
    );
    // What the edit did is judged: the assertion it dropped.
    let weakened: Vec<Option<u32>> = report
        .flags
        .iter()
        .filter(|f| f.rule == Rule::TestWeakened)
        .map(|f| f.line)
        .collect();
    assert_eq!(weakened, vec![Some(5)]);
    // Renamed with an expectation changed: a note on the new test, nothing deleted.
    let old = "def test_rel_must_be_timedelta():\n    d = timedelta(days=1)\n    with pytest.raises(TypeError):\n        approx(d, rel=1)\n    assert approx(d) == d\n";
    let new = "def test_rel_must_be_number():\n    d = timedelta(days=1)\n    with pytest.raises(TypeError):\n        approx(d, rel=1)\n    assert approx(d) != d\n";
    let report = run(&[Modify(p, old, new)]);
    let rules: Vec<Rule> = report.flags.iter().map(|f| f.rule).collect();
    assert_eq!(rules, vec![Rule::ExpectationChanged]);
}

#[test]
fn a_test_deleted_beside_a_new_one_of_another_body_is_deleted() {
    let p = "tests/test_calc.py";
    let old = "def test_mul():\n    x = mul(2, 3)\n    assert x == 6\n    assert mul(0, 3) == 0\n";
    let new = "def test_div():\n    x = div(6, 3)\n    assert x == 2\n    assert div(0, 3) == 0\n";
    let flags = deleted(&[Modify(p, old, new)]);
    assert_eq!(flags.len(), 1, "{flags:?}");
    assert!(flags[0].message.contains("`test_mul`"));
    // One line in common of three is not the same test either.
    let new = "def test_div():\n    x = mul(2, 3)\n    assert div(x, 3) == 2\n    assert div(0, 3) == 0\n";
    assert_eq!(deleted(&[Modify(p, old, new)]).len(), 1);
}

#[test]
fn a_test_named_for_a_removed_definition_goes_with_it() {
    let test = "from pkg.model import Model\n\n\ndef test_eval_type():\n    assert Model('1').x == 1\n\n\ndef test_eval_type_backport():\n    assert Model('list[int | str]').x == [1]\n";
    let kept =
        "from pkg.model import Model\n\n\ndef test_eval_type():\n    assert Model('1').x == 1\n";
    let lib = "def eval_type(v):\n    return v\n\n\ndef eval_type_backport(v):\n    return v\n";
    let lib_without = "def eval_type(v):\n    return v\n";
    assert!(
        deleted(&[
            Modify("tests/test_typing.py", test, kept),
            Modify("pkg/typing_extra.py", lib, lib_without),
        ])
        .is_empty()
    );
    // The definition stays, or another one is removed: the test is lost.
    assert_eq!(
        deleted(&[Modify("tests/test_typing.py", test, kept)]).len(),
        1
    );
    let lib_other = "def eval_type_backport(v):\n    return v\n";
    assert_eq!(
        deleted(&[
            Modify("tests/test_typing.py", test, kept),
            Modify("pkg/typing_extra.py", lib, lib_other),
        ])
        .len(),
        1
    );
}

#[test]
fn a_test_of_a_removed_deprecated_alias_or_class_method_goes_with_it() {
    let lib = "var req = exports = module.exports = {};\nreq.acceptsLanguages = function acceptsLanguages() {\n  return accepts(this).languages.apply(this, arguments);\n};\nreq.acceptsLanguage = deprecate.function(req.acceptsLanguages,\n  'req.acceptsLanguage: Use acceptsLanguages instead');\n";
    let lib_without = "var req = exports = module.exports = {};\nreq.acceptsLanguages = function acceptsLanguages() {\n  return accepts(this).languages.apply(this, arguments);\n};\n";
    let test = "describe('req', function () {\n  describe('.acceptsLanguage', function () {\n    it('should be true if language accepted', function (done) {\n      var app = express();\n      app.use(function (req, res) { res.end(String(req.acceptsLanguage('en-us'))); });\n      request(app).get('/').set('Accept-Language', 'en;q=.5, en-us').expect(200, 'true', done);\n    });\n  });\n});\n";
    assert!(
        deleted(&[
            Delete("test/req.acceptsLanguage.js", test),
            Modify("lib/request.js", lib, lib_without),
        ])
        .is_empty()
    );
    // The alias stays: the deleted test file is flagged.
    assert_eq!(
        deleted(&[Delete("test/req.acceptsLanguage.js", test)]).len(),
        1
    );

    let runtime = "export default class Runtime {\n  requireModule(from: string): unknown {\n    return load(from);\n  }\n\n  hasCjsFactory(moduleID: string): boolean {\n    return this._cjs.has(moduleID);\n  }\n}\n";
    let runtime_without = "export default class Runtime {\n  requireModule(from: string): unknown {\n    return load(from);\n  }\n}\n";
    let spec = "describe('Runtime', () => {\n  it('requires', () => {\n    expect(runtime.requireModule('a')).toBe(1);\n  });\n  it('knows its factories', () => {\n    expect(runtime.hasCjsFactory('a')).toBe(true);\n  });\n});\n";
    let spec_kept = "describe('Runtime', () => {\n  it('requires', () => {\n    expect(runtime.requireModule('a')).toBe(1);\n  });\n});\n";
    assert!(
        deleted(&[
            Modify("src/__tests__/runtime.test.ts", spec, spec_kept),
            Modify("src/runtime.ts", runtime, runtime_without),
        ])
        .is_empty()
    );
    assert_eq!(
        deleted(&[Modify("src/__tests__/runtime.test.ts", spec, spec_kept)]).len(),
        1
    );
}

#[test]
fn go_subtests_and_tests_reached_through_helpers_of_the_same_file() {
    // Subtests moved from the test into a helper it now runs: not deleted.
    let old = "package p\n\nfunc TestOutOfOrder(t *testing.T) {\n\tt.Run(\"disabled\", func(t *testing.T) { runOOOTest(t, false) })\n\tt.Run(\"enabled\", func(t *testing.T) { runOOOTest(t, true) })\n}\n\nfunc runOOOTest(t *testing.T, ooo bool) {\n\tgot, err := appendOOO(ooo)\n\trequire.NoError(t, err)\n\trequire.Equal(t, ooo, got)\n}\n";
    let new = "package p\n\nfunc TestOutOfOrder(t *testing.T) {\n\tforeachAppendable(t, func(t *testing.T, appV2 bool) { testOutOfOrder(t, appV2) })\n}\n\nfunc testOutOfOrder(t *testing.T, appV2 bool) {\n\tt.Run(\"disabled\", func(t *testing.T) { runOOOTest(t, appV2, false) })\n\tt.Run(\"enabled\", func(t *testing.T) { runOOOTest(t, appV2, true) })\n}\n\nfunc runOOOTest(t *testing.T, appV2, ooo bool) {\n\tgot, err := appendOOO(appV2, ooo)\n\trequire.NoError(t, err)\n\trequire.Equal(t, ooo, got)\n}\n";
    let p = "p/ooo_test.go";
    assert!(deleted(&[Modify(p, old, new)]).is_empty());
    assert!(
        run(&[Modify(p, old, new)])
            .flags
            .iter()
            .all(|f| f.rule != Rule::TestWeakened)
    );
    // The helper runs one of them only: the other is gone.
    let one = new.replace(
        "\tt.Run(\"enabled\", func(t *testing.T) { runOOOTest(t, appV2, true) })\n",
        "",
    );
    let flags = deleted(&[Modify(p, old, &one)]);
    assert_eq!(flags.len(), 1);
    assert!(
        flags[0]
            .message
            .starts_with("test `TestOutOfOrder/enabled`"),
        "{}",
        flags[0].message
    );

    // A test of production code the change removes, reached through its helper.
    let code = "package prw\n\nfunc NewCombinedAppender(x int) int { return x }\n";
    let test = "package prw\n\nfunc TestCombinedAppenderOnTSDB(t *testing.T) {\n\ttestCombinedAppenderOnTSDB(t, 1)\n}\n\nfunc testCombinedAppenderOnTSDB(t *testing.T, x int) {\n\tif NewCombinedAppender(x) != x {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n";
    let empty = "package prw\n";
    assert!(
        deleted(&[
            Modify("prw/combined.go", code, empty),
            Modify("prw/combined_test.go", test, empty),
        ])
        .is_empty()
    );
    assert_eq!(
        deleted(&[
            Keep("prw/combined.go", code),
            Modify("prw/combined_test.go", test, empty),
        ])
        .len(),
        1
    );
}

mod javascript;

/// Flags of every rule but `test-deleted` and the others' notes: what a move to another file
/// was judged as.
fn moved(specs: &[Spec<'_>]) -> Vec<(Rule, String, Option<u32>, String)> {
    run(specs)
        .flags
        .into_iter()
        .map(|f| (f.rule, f.path.to_string(), f.line, f.message))
        .collect()
}

#[test]
fn a_test_moved_to_another_file_is_judged_by_what_it_checks_there() {
    let base = "def test_add():\n    assert add(2, 3) == 5\n\n\ndef test_parse():\n    p = parse(\"TS-M\")\n    assert p[\"family\"] == \"TS\"\n    assert p[\"size\"] == \"M\"\n";
    let left = "def test_add():\n    assert add(2, 3) == 5\n";
    // Moved, and most of its assertions dropped on the way.
    let flags = moved(&[
        Modify("tests/test_calc.py", base, left),
        Add(
            "tests/test_parse.py",
            "def test_parse():\n    p = parse(\"TS-M\")\n    assert p[\"family\"] == \"TS\"\n",
        ),
    ]);
    assert_eq!(flags.len(), 1, "{flags:?}");
    assert_eq!(flags[0].0, Rule::TestWeakened);
    assert_eq!(flags[0].1, "tests/test_parse.py");
    assert_eq!(flags[0].2, Some(1));
    assert!(
        flags[0].3.starts_with(
            "`test_parse` (moved from `tests/test_calc.py`) checks less: 2 checks at the base, 1 now"
        ),
        "{}",
        flags[0].3
    );
    // Moved, one expected value changed in a string (a body's key does not see it).
    let flags = moved(&[
        Modify("tests/test_calc.py", base, left),
        Add(
            "tests/test_parse.py",
            "def test_parse():\n    p = parse(\"TS-M\")\n    assert p[\"family\"] == \"TS\"\n    assert p[\"size\"] == \"L\"\n",
        ),
    ]);
    assert_eq!(flags.len(), 1, "{flags:?}");
    assert_eq!(flags[0].0, Rule::ExpectationChanged);
    assert_eq!(flags[0].2, Some(4));
    // Moved, an exact assertion made loose.
    let flags = moved(&[
        Modify("tests/test_calc.py", base, left),
        Add(
            "tests/test_parse.py",
            "def test_parse():\n    p = parse(\"TS-M\")\n    assert p[\"family\"] == \"TS\"\n    assert p[\"size\"] is not None\n",
        ),
    ]);
    assert_eq!(flags.len(), 1, "{flags:?}");
    assert_eq!(flags[0].0, Rule::TestWeakened);
    assert!(flags[0].3.contains("where it checked"), "{}", flags[0].3);
}

#[test]
fn a_test_moved_intact_or_with_more_checks_is_not_flagged() {
    let base = "def test_add():\n    assert add(2, 3) == 5\n\n\ndef test_parse():\n    p = parse(\"TS-M\")\n    assert p[\"family\"] == \"TS\"\n    assert p[\"size\"] == \"M\"\n";
    let left = "def test_add():\n    assert add(2, 3) == 5\n";
    for moved_to in [
        // Intact, reformatted.
        "from calc import parse\n\n\ndef test_parse():\n    p = parse('TS-M')\n    assert p['family'] == 'TS'\n    assert p['size'] == 'M'\n",
        // A message added, an assertion more.
        "def test_parse():\n    p = parse(\"TS-M\")\n    assert p[\"family\"] == \"TS\", \"family\"\n    assert p[\"size\"] == \"M\"\n    assert p[\"color\"] is None\n",
        // Into a class.
        "class TestParse:\n    def test_parse(self):\n        p = parse(\"TS-M\")\n        assert p[\"family\"] == \"TS\"\n        assert p[\"size\"] == \"M\"\n",
    ] {
        let flags = moved(&[
            Modify("tests/test_calc.py", base, left),
            Add("tests/test_parse.py", moved_to),
        ]);
        assert!(flags.is_empty(), "{moved_to}: {flags:?}");
    }
}

#[test]
fn a_namesake_in_another_file_or_two_tests_of_one_name_merged_are_not_judged_as_a_move() {
    let base = "def test_add():\n    assert add(2, 3) == 5\n\n\ndef test_str():\n    assert parse_json('\"a\"') == 'a'\n    assert parse_json('\"b\"') == 'b'\n";
    let left = "def test_add():\n    assert add(2, 3) == 5\n";
    // `test_str` of another file, about something else: found by its name, as before.
    let flags = moved(&[
        Modify("tests/test_json.py", base, left),
        Add(
            "tests/test_tz.py",
            "def test_str():\n    assert str(TzInfo(3600)) == 'UTC+01:00'\n",
        ),
    ]);
    assert!(flags.is_empty(), "{flags:?}");
    // Two files' `test_str` merged into one new test.
    let other =
        "def test_str():\n    assert parse_str('a') == 'a'\n    assert parse_str('b') == 'b'\n";
    let flags = moved(&[
        Modify("tests/test_json.py", base, left),
        Delete("tests/test_strings.py", other),
        Add(
            "tests/test_all.py",
            "def test_str():\n    assert parse_json('\"a\"') == 'a'\n    assert parse_str('a') == 'a'\n    assert parse_str('b') == 'b'\n",
        ),
    ]);
    assert!(flags.iter().all(|f| f.0 != Rule::TestWeakened), "{flags:?}");
}
