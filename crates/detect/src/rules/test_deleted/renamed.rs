//! `test-deleted` against tests renamed and edited: judged as the same test, changed.

use crate::testing::{Spec::*, run};
use crate::{Flag, Rule};

/// Every flag of a change to one file, as (rule, line, message).
fn flags(path: &str, old: &str, new: &str) -> Vec<(Rule, Option<u32>, String)> {
    run(&[Modify(path, old, new)])
        .flags
        .into_iter()
        .map(|f: Flag| (f.rule, f.line, f.message))
        .collect()
}

const PY_BASE: &str = "def test_other():\n    assert 1\n\n\ndef test_return_non_none_error(pytester):\n    pytester.makepyfile(\"def test_stuff(): return 1\")\n    res = pytester.runpytest()\n    assert res.ret == 1\n    res.stdout.fnmatch_lines([\"*Did you mean to use `assert`*\"])\n";

#[test]
fn renamed_and_edited_in_place_is_judged_as_the_same_test() {
    // Renamed, and a line of the body changed that checks nothing: no flag at all.
    let head = PY_BASE
        .replace("test_return_non_none_error", "test_return_non_none_warning")
        .replace("return 1\")", "return 2\")");
    assert_eq!(flags("tests/test_g.py", PY_BASE, &head), []);
}

#[test]
fn renamed_with_a_check_dropped_is_weakened_not_deleted() {
    let head = PY_BASE
        .replace("test_return_non_none_error", "test_return_non_none_warning")
        .replace("    assert res.ret == 1\n", "");
    assert_eq!(
        flags("tests/test_g.py", PY_BASE, &head),
        [(
            Rule::TestWeakened,
            Some(5),
            "`test_return_non_none_warning` no longer checks anything: 1 check at the base, none now"
                .to_owned()
        )]
    );
}

#[test]
fn renamed_with_its_expectation_flipped_is_an_expectation_change() {
    let base = "describe('isCoreModule', () => {\n  it('returns true for node: URLs of unknown modules', () => {\n    const isCore = resolver.isCoreModule('node:not-a-core-module');\n    expect(isCore).toBe(true);\n  });\n});\n";
    let head = base
        .replace("returns true", "returns false")
        .replace("toBe(true)", "toBe(false)");
    let got = flags("test/a.test.js", base, &head);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!((got[0].0, got[0].1), (Rule::ExpectationChanged, Some(4)));
    assert!(
        got[0]
            .2
            .contains("now expects `false` where it expected `true`"),
        "{}",
        got[0].2
    );
}

#[test]
fn renamed_in_every_language() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "args_test.go",
            "package p\n\nfunc TestNoArgsWithArgs(t *testing.T) {\n\tc := getCommand(NoArgs, false)\n\t_, err := executeCommand(c, \"illegal\")\n\tif err == nil {\n\t\tt.Fatal(\"expected an error\")\n\t}\n}\n",
            "package p\n\nfunc TestNoArgs_WithArgs(t *testing.T) {\n\tc := getCommand(NoArgs, false)\n\t_, err := executeCommand(c, \"one\")\n\tif err == nil {\n\t\tt.Fatal(\"expected an error\")\n\t}\n}\n",
        ),
        (
            "src/test/java/MapTest.java",
            "public class MapTest {\n  @Test\n  public void testDeerializeMapOfMaps() {\n    Type type = new TypeToken<Map<String, Map<String, String>>>() {}.getType();\n    Map<String, Map<String, String>> map = newMap(\"a\", \"b\");\n    String json = gson.toJson(map);\n    assertEquals(map, gson.fromJson(json, type));\n  }\n}\n",
            "public class MapTest {\n  @Test\n  public void testDeserializeMapOfMaps() {\n    TypeToken<Map<String, Map<String, String>>> type = new TypeToken<>() {};\n    Map<String, Map<String, String>> map = newMap(\"a\", \"b\");\n    String json = gson.toJson(map);\n    assertEquals(map, gson.fromJson(json, type));\n  }\n}\n",
        ),
        (
            "spec/rubocop/cop/layout/foo_spec.rb",
            "RSpec.describe RuboCop::Cop::Layout::Foo, :config do\n  it 'registers an offense for misaligned operands' do\n    expect_offense(<<~RUBY)\n      a or\n          b\n          ^ Align the operands.\n    RUBY\n  end\nend\n",
            "RSpec.describe RuboCop::Cop::Layout::Foo, :config do\n  it 'registers an offense and corrects misaligned operands' do\n    expect_offense(<<~RUBY)\n      a or\n          b\n          ^ Align the operands.\n    RUBY\n\n    expect_correction(<<~RUBY)\n      a or\n        b\n    RUBY\n  end\nend\n",
        ),
    ];
    for (path, old, new) in cases {
        let got = flags(path, old, new);
        assert!(
            got.iter().all(|f| f.0 != Rule::TestDeleted),
            "{path}: {got:?}"
        );
    }
}

#[test]
fn a_test_replaced_by_an_unlike_one_is_still_deleted() {
    // The new test shares the framework's words and the file's fixtures, not the old test's.
    let base = "def test_add(client):\n    resp = client.get('/add?a=2&b=3')\n    assert resp.json() == {'sum': 5}\n";
    let head = "def test_health(client):\n    resp = client.get('/health')\n    assert resp.status_code == 200\n";
    let got = flags("tests/test_api.py", base, head);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].0, Rule::TestDeleted);
    assert!(got[0].2.contains("`test_add`"), "{}", got[0].2);
    // Two one-line tests alike only in their framework's words are not one test.
    let base = "it('parses', () => {\n  expect(parse(a)).toBe(true);\n});\n";
    let head = "it('renders', () => {\n  expect(render(b)).toBe(false);\n});\n";
    let got = flags("test/x.test.js", base, head);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].0, Rule::TestDeleted);
}

#[test]
fn two_tests_merged_into_one_parametrized_test_are_kept() {
    let base = "def test_typing_extension_literal_field():\n    from typing_extensions import Literal\n\n    class Model(BaseModel):\n        foo: Literal['foo']\n\n    assert Model(foo='foo').foo == 'foo'\n\n\ndef test_typing_literal_field():\n    from typing import Literal\n\n    class Model(BaseModel):\n        foo: Literal['foo']\n\n    assert Model(foo='foo').foo == 'foo'\n";
    let head = "@pytest.mark.parametrize('typing_literal', [typing.Literal, typing_extensions.Literal])\ndef test_literal_field(typing_literal):\n    class Model(BaseModel):\n        foo: typing_literal['foo']\n\n    assert Model(foo='foo').foo == 'foo'\n";
    assert_eq!(flags("tests/test_g.py", base, head), []);
    // Merged into a test that checks no more than one of them did: one is lost.
    let unrolled = "def test_literal_field():\n    from typing import Literal\n\n    class Model(BaseModel):\n        foo: Literal['foo']\n\n    assert Model(foo='foo').foo == 'foo'\n";
    let got = flags("tests/test_g.py", base, unrolled);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].0, Rule::TestDeleted);
}

const HYPERLINK: &str = "#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn aliases_are_sorted() {\n        let mut prev = HYPERLINK_PATTERN_ALIASES[0].name;\n        for alias in HYPERLINK_PATTERN_ALIASES.iter().skip(1) {\n            assert!(prev < alias.name, \"{} before {}\", prev, alias.name);\n            prev = alias.name;\n        }\n    }\n}\n";

#[test]
fn moved_to_another_file_and_renamed_is_kept() {
    let moved = "#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn is_sorted() {\n        let mut prev = HYPERLINK_PATTERN_ALIASES\n            .get(0)\n            .expect(\"aliases should be non-empty\")\n            .name;\n        for alias in HYPERLINK_PATTERN_ALIASES.iter().skip(1) {\n            assert!(prev < alias.name, \"{} before {}\", prev, alias.name);\n            prev = alias.name;\n        }\n    }\n}\n";
    let report = run(&[
        Modify("crates/printer/src/hyperlink.rs", HYPERLINK, ""),
        Add("crates/printer/src/hyperlink_aliases.rs", moved),
    ]);
    assert_eq!(report.flags, []);
}

#[test]
fn moved_and_renamed_with_less_checked_or_another_expectation_is_deleted() {
    // Its assertion dropped on the way.
    let emptied = "#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn is_sorted() {\n        let mut prev = HYPERLINK_PATTERN_ALIASES[0].name;\n        for alias in HYPERLINK_PATTERN_ALIASES.iter().skip(1) {\n            println!(\"{} before {}\", prev, alias.name);\n            prev = alias.name;\n        }\n    }\n}\n";
    let report = run(&[
        Modify("crates/printer/src/hyperlink.rs", HYPERLINK, ""),
        Add("crates/printer/src/hyperlink_aliases.rs", emptied),
    ]);
    let rules: Vec<Rule> = report.flags.iter().map(|f| f.rule).collect();
    assert_eq!(rules, [Rule::TestDeleted]);
    // An expected value changed on the way.
    let counted = HYPERLINK.replace("assert!(prev < alias.name, ", "println!(").replace(
        "            prev = alias.name;\n        }\n",
        "            prev = alias.name;\n        }\n        assert_eq!(HYPERLINK_PATTERN_ALIASES.len(), 12);\n",
    );
    let moved = counted
        .replace("aliases_are_sorted", "is_sorted")
        .replace("len(), 12", "len(), 13");
    let report = run(&[
        Modify("crates/printer/src/hyperlink.rs", &counted, ""),
        Add("crates/printer/src/hyperlink_aliases.rs", &moved),
    ]);
    let rules: Vec<Rule> = report.flags.iter().map(|f| f.rule).collect();
    assert_eq!(rules, [Rule::TestDeleted]);
}
