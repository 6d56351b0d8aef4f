use super::*;
use crate::flag::Rule;
use crate::testing::{Spec::*, lines, run};

pub(super) fn added(path: &str, new: &str) -> Vec<u32> {
    lines(&run(&[Add(path, new)]), Rule::SkipMarker)
}

pub(super) fn modified(path: &str, old: &str, new: &str) -> Vec<u32> {
    lines(&run(&[Modify(path, old, new)]), Rule::SkipMarker)
}

#[test]
fn every_language_table_compiles() {
    for l in Language::ALL {
        let (tests, _) = COMPILED.get(l);
        assert!(tests.is_some(), "{l:?} has markers");
    }
}

#[test]
fn python_positives() {
    let old = "import pytest\n\ndef test_a():\n    assert f()\n";
    for (new, line) in [
        (
            "import pytest\n\n@pytest.mark.skip(reason='x')\ndef test_a():\n    assert f()\n",
            3,
        ),
        (
            "import pytest\n\n@pytest.mark.skipif(True, reason='x')\ndef test_a():\n    assert f()\n",
            3,
        ),
        (
            "import pytest\n\n@pytest.mark.xfail\ndef test_a():\n    assert f()\n",
            3,
        ),
        (
            "import pytest\n\ndef test_a():\n    pytest.skip('later')\n    assert f()\n",
            4,
        ),
        (
            "import pytest\nnp = pytest.importorskip('numpy')\ndef test_a():\n    assert f()\n",
            2,
        ),
        (
            "import pytest\n\n@unittest.skip('x')\ndef test_a():\n    assert f()\n",
            3,
        ),
        (
            "import pytest\n\n@unittest.expectedFailure\ndef test_a():\n    assert f()\n",
            3,
        ),
        (
            "import pytest\n\n@skipIf(True, 'x')\ndef test_a():\n    assert f()\n",
            3,
        ),
        (
            "import pytest\n\ndef test_a():\n    self.skipTest('x')\n    assert f()\n",
            4,
        ),
        (
            "import pytest\n\ndef test_a():\n    raise unittest.SkipTest('x')\n",
            4,
        ),
        (
            "import pytest\npytestmark = pytest.mark.skip\ndef test_a():\n    assert f()\n",
            2,
        ),
    ] {
        assert_eq!(modified("tests/test_a.py", old, new), vec![line], "{new}");
    }
}

#[test]
fn python_traps() {
    let old = "import pytest\n\ndef test_a():\n    assert f()\n";
    for new in [
        // In a comment, a docstring, a string.
        "import pytest\n\ndef test_a():\n    # pytest.skip('not now')\n    assert f()\n",
        "import pytest\n\ndef test_a():\n    \"\"\"Never @pytest.mark.skip this.\"\"\"\n    assert f()\n",
        "import pytest\n\ndef test_a():\n    msg = 'pytest.skip(\"x\")'\n    assert f()\n",
        // Not a skip: a different name.
        "import pytest\n\ndef test_a():\n    skip_list = mark_skipped()\n    assert f()\n",
    ] {
        assert_eq!(
            modified("tests/test_a.py", old, new),
            Vec::<u32>::new(),
            "{new}"
        );
    }
    // `@skip` is only a marker in a test file.
    assert!(added("src/app.py", "@skip\ndef handler():\n    pass\n").is_empty());
    // Documentation is never a test file.
    assert!(added("docs/testing.md", "Use `@pytest.mark.skip` sparingly.\n").is_empty());
    assert!(added("tests/README.md", "@pytest.mark.skip\n").is_empty());
}

#[test]
fn removing_a_skip_is_never_a_flag() {
    let old = "@pytest.mark.skip\ndef test_a():\n    assert f()\n";
    let new = "def test_a():\n    assert f()\n";
    assert!(modified("tests/test_a.py", old, new).is_empty());
    assert!(lines(&run(&[Delete("tests/test_a.py", old)]), Rule::SkipMarker).is_empty());
}

#[test]
fn existing_skip_reindented_or_reworded_is_not_new() {
    let old = "class T:\n    @pytest.mark.skip\n    def test_a(self):\n        pass\n";
    let new = "if True:\n    class T:\n        @pytest.mark.skip(reason=\"flaky\")\n        def test_a(self):\n            pass\n";
    assert!(modified("tests/test_a.py", old, new).is_empty());
    let java_old = "class FooTest {\n  @Ignore\n  @Test void a() {}\n}\n";
    let java_new = "class FooTest {\n  @Ignore(\"tracked in #12\")\n  @Test void a() {}\n}\n";
    assert!(modified("src/test/java/FooTest.java", java_old, java_new).is_empty());
}

#[test]
fn crlf_reencoding_is_not_new() {
    let old = "@pytest.mark.skip\ndef test_a():\n    pass\n";
    let new = old.replace('\n', "\r\n");
    assert!(modified("tests/test_a.py", old, &new).is_empty());
}

#[test]
fn a_second_skip_beside_an_existing_one_is_new() {
    let old = "@pytest.mark.skip\ndef test_a():\n    pass\n\ndef test_b():\n    pass\n";
    let new = "@pytest.mark.skip\ndef test_a():\n    pass\n\n@pytest.mark.skip\ndef test_b():\n    pass\n";
    assert_eq!(modified("tests/test_a.py", old, new), vec![5]);
}

#[test]
fn new_skip_inside_a_reindented_block_is_found() {
    let old = "class T:\n    @pytest.mark.skip\n    def test_a(self):\n        pass\n    def test_b(self):\n        pass\n";
    let new = "if X:\n    class T:\n        @pytest.mark.skip\n        def test_a(self):\n            pass\n        @pytest.mark.xfail\n        def test_b(self):\n            pass\n";
    assert_eq!(modified("tests/test_a.py", old, new), vec![6]);
}

#[test]
fn pure_rename_and_cross_file_move_are_not_new() {
    let content = "@pytest.mark.skip\ndef test_a():\n    pass\n";
    let r = run(&[Rename(
        "tests/test_a.py",
        "tests/unit/test_a.py",
        content,
        content,
    )]);
    assert!(lines(&r, Rule::SkipMarker).is_empty());
    // Moved from one file to another in the same change, with its marker.
    let r = run(&[
        Modify(
            "tests/test_a.py",
            "@pytest.mark.skip\ndef test_a():\n    pass\n\ndef test_keep():\n    pass\n",
            "def test_keep():\n    pass\n",
        ),
        Add(
            "tests/test_b.py",
            "import pytest\n\n@pytest.mark.skip\ndef test_a():\n    pass\n",
        ),
    ]);
    assert!(lines(&r, Rule::SkipMarker).is_empty(), "{:?}", r.flags);
    // But a different skip removed elsewhere does not excuse a new one.
    let r = run(&[
        Modify(
            "tests/test_a.py",
            "@pytest.mark.xfail\ndef test_a():\n    pass\n",
            "def test_a():\n    pass\n",
        ),
        Add(
            "tests/test_b.py",
            "@pytest.mark.skip\ndef test_b():\n    pass\n",
        ),
    ]);
    assert_eq!(lines(&r, Rule::SkipMarker), vec![1]);
}

#[test]
fn javascript() {
    for (new, line) in [
        ("it.skip('works', () => {})\n", 1),
        ("describe.skip('suite', () => {})\n", 1),
        ("test.concurrent.skip('x', async () => {})\n", 1),
        ("describe('s', () => {\n  xit('works', () => {})\n})\n", 2),
        ("xdescribe('s', () => {})\n", 1),
        ("xtest('x', () => {})\n", 1),
        ("test.fixme('x', async () => {})\n", 1),
        ("test('x', { skip: true }, () => {})\n", 1),
    ] {
        assert_eq!(added("web/src/App.test.tsx", new), vec![line], "{new}");
    }
    // Vitest's conditional forms, on an existing test.
    for (old, new) in [
        (
            "test('x', () => {})\n",
            "test.skipIf(isCI)('x', () => {})\n",
        ),
        (
            "test('x', () => {})\n",
            "test.runIf(!isCI)('x', () => {})\n",
        ),
        (
            "describe('s', () => {})\n",
            "describe.skipIf(!global.gc)('s', () => {})\n",
        ),
    ] {
        assert_eq!(modified("web/src/App.test.tsx", old, new), vec![1], "{new}");
    }
    assert!(
        added(
            "web/src/App.test.js",
            "// it.skip('x')\nconst s = `it.skip(`;\n"
        )
        .is_empty()
    );
    assert!(
        added("web/src/skip.js", "list.skip(3)\nit.skip('x')\n").is_empty(),
        "not a test file"
    );
}

#[test]
fn go() {
    let old =
        "package x\n\nfunc TestA(t *testing.T) {\n\tif f() != 1 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n";
    let new = "package x\n\nfunc TestA(t *testing.T) {\n\tt.Skip(\"later\")\n\tif f() != 1 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n";
    assert_eq!(modified("pkg/a_test.go", old, new), vec![4]);
    assert_eq!(
        added(
            "pkg/b_test.go",
            "func TestB(t *testing.T) { t.Skipf(\"%d\", 1) }\n"
        ),
        vec![1]
    );
    assert_eq!(
        added(
            "pkg/c_test.go",
            "func TestC(t *testing.T) {\n\tt.SkipNow()\n}\n"
        ),
        vec![2]
    );
    assert!(added("pkg/c.go", "func f(r *Reader) { r.Skip(3) }\n").is_empty());
    assert!(added("pkg/d_test.go", "// t.Skip(\"x\")\nvar s = \"t.Skip()\"\n").is_empty());
}

#[test]
fn rust_ignore_anywhere_including_unit_test_modules() {
    let new = "fn f() {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    #[ignore]\n    fn t() {}\n\n    #[test]\n    #[ignore = \"slow\"]\n    fn u() {}\n}\n";
    assert_eq!(added("src/lib.rs", new), vec![6, 10]);
    // A platform guard on an existing test.
    assert_eq!(
        modified(
            "tests/it.rs",
            "#[test]\nfn t() {\n    assert!(f());\n}\n",
            "#[test]\n#[cfg_attr(windows, ignore)]\nfn t() {\n    assert!(f());\n}\n"
        ),
        vec![2]
    );
    assert!(
        added(
            "src/lib.rs",
            "// #[ignore]\nconst S: &str = \"#[ignore]\";\n"
        )
        .is_empty()
    );
}

#[test]
fn java_kotlin() {
    let old = "class FooTest {\n  @Test void a() {}\n}\n";
    let new = "class FooTest {\n  @Disabled(\"later\")\n  @Test void a() {}\n}\n";
    assert_eq!(modified("src/test/java/FooTest.java", old, new), vec![2]);
    assert_eq!(
        added(
            "app/src/test/kotlin/BarTest.kt",
            "class BarTest {\n  @Ignore\n  @Test fun a() {}\n}\n"
        ),
        vec![2]
    );
    assert_eq!(
        added(
            "src/test/java/T.java",
            "@Test(enabled = false)\nvoid a() {}\n"
        ),
        vec![1]
    );
    assert!(
        added("src/main/java/Foo.java", "@Ignore\nclass Foo {}\n").is_empty(),
        "not a test file"
    );
    assert!(
        added(
            "src/test/java/BazTest.java",
            "/* @Disabled */\n@Test void a() {}\n"
        )
        .is_empty()
    );
}

#[test]
fn java_assumptions_that_never_hold() {
    let p = "src/test/java/com/acme/PricingTest.java";
    let old = "class PricingTest {\n  @Test\n  void slugs() {\n    assertThat(slug(\"A B\")).isEqualTo(\"a-b\");\n  }\n}\n";
    for (call, line) in [
        ("assumeTrue(false, \"pending fix\");", 4),
        ("org.junit.jupiter.api.Assumptions.assumeTrue(false);", 4),
        ("Assume.assumeFalse(true);", 4),
        ("Assumptions.abort(\"later\");", 4),
    ] {
        let new = old.replace(
            "void slugs() {\n",
            &format!("void slugs() {{\n    {call}\n"),
        );
        assert_eq!(modified(p, old, &new), vec![line], "{call}");
    }
    // An assumption on the environment is no skip.
    for call in [
        "assumeTrue(isLinux());",
        "assumeFalse(System.getenv(\"CI\") != null);",
        "assumeTrue(falseNegativesAllowed());",
    ] {
        let new = old.replace(
            "void slugs() {\n",
            &format!("void slugs() {{\n    {call}\n"),
        );
        assert!(modified(p, old, &new).is_empty(), "{call}");
    }
}

#[test]
fn csharp() {
    assert_eq!(
        added(
            "Calc.Tests/CalcTests.cs",
            "[Fact(Skip = \"later\")]\npublic void A() {}\n"
        ),
        vec![1]
    );
    assert_eq!(
        added(
            "Calc.Tests/CalcTests.cs",
            "[Theory(DisplayName = \"x\", Skip = \"y\")]\npublic void A() {}\n"
        ),
        vec![1]
    );
    assert_eq!(
        added(
            "Calc.Tests/CalcTests.cs",
            "[Test, Ignore(\"later\")]\npublic void A() {}\n"
        ),
        vec![1]
    );
    assert_eq!(
        added(
            "Calc.Tests/CalcTests.cs",
            "[Ignore]\n[TestMethod]\npublic void A() {}\n"
        ),
        vec![1]
    );
    assert!(
        added(
            "Calc.Tests/CalcTests.cs",
            "[Fact]\npublic void A() { var s = \"Skip = 1\"; }\n"
        )
        .is_empty()
    );
}

#[test]
fn ruby() {
    assert_eq!(
        added(
            "spec/user_spec.rb",
            "describe User do\n  it 'x' do\n    skip 'later'\n  end\nend\n"
        ),
        vec![3]
    );
    assert_eq!(
        added(
            "spec/user_spec.rb",
            "describe User do\n  xit 'x' do\n  end\nend\n"
        ),
        vec![2]
    );
    assert_eq!(
        added(
            "spec/user_spec.rb",
            "describe User do\n  it 'x', :skip do\n  end\nend\n"
        ),
        vec![2]
    );
    assert_eq!(
        added("test/user_test.rb", "def test_x\n  pending\nend\n"),
        vec![2]
    );
    assert!(
        added(
            "spec/user_spec.rb",
            "# skip 'later'\nit 'skips' do\n  list.skip_nil\nend\n"
        )
        .is_empty()
    );
    assert!(
        added("app/models/list.rb", "def x\n  skip\nend\n").is_empty(),
        "not a test file"
    );
}

#[test]
fn php_cpp_swift_elixir() {
    assert_eq!(
        added(
            "tests/FooTest.php",
            "<?php\nfunction testA() {\n  $this->markTestSkipped('x');\n}\n"
        ),
        vec![3]
    );
    assert!(
        added(
            "tests/FooTest.php",
            "<?php\n// $this->markTestSkipped('x');\n"
        )
        .is_empty()
    );
    assert_eq!(
        added(
            "base/str_test.cc",
            "TEST(Str, DISABLED_Split) {\n}\nTEST_F(DISABLED_Fix, A) {}\n"
        ),
        vec![1, 3]
    );
    assert_eq!(
        added(
            "base/str_test.cc",
            "TEST(Str, Split) {\n  GTEST_SKIP() << \"later\";\n}\n"
        ),
        vec![2]
    );
    assert!(
        added(
            "base/str_test.cc",
            "// TEST(Str, DISABLED_Split)\nTEST(Str, Split) {}\n"
        )
        .is_empty()
    );
    assert_eq!(
        added(
            "Tests/AppTests.swift",
            "func testA() throws {\n  throw XCTSkip(\"x\")\n}\n"
        ),
        vec![2]
    );
    assert_eq!(
        added(
            "Tests/AppTests.swift",
            "@Test(.disabled(\"x\")) func a() {}\n"
        ),
        vec![1]
    );
    assert_eq!(
        added(
            "test/app_test.exs",
            "  @tag :skip\n  test \"a\" do\n  end\n"
        ),
        vec![1]
    );
    assert_eq!(
        added("test/app_test.exs", "  @moduletag skip: \"later\"\n"),
        vec![1]
    );
    assert!(added("test/app_test.exs", "  # @tag :skip\n  @tag :slow\n").is_empty());
}

#[test]
fn message_and_snippet() {
    let r = run(&[Add(
        "tests/test_a.py",
        "@pytest.mark.skip(reason='x')\ndef test_a():\n    pass\n",
    )]);
    let f = &r.flags[0];
    assert_eq!(f.message, "newly marks a test skipped: `pytest.mark.skip`");
    assert_eq!(f.snippet.as_deref(), Some("@pytest.mark.skip(reason='x')"));
    assert_eq!(f.path.to_string(), "tests/test_a.py");
}

#[test]
fn inline_allow() {
    let r = run(&[Add(
        "tests/test_a.py",
        "# forgeward: allow skip-marker -- needs a GPU\n@pytest.mark.skip\ndef test_a():\n    pass\n",
    )]);
    assert!(r.flags.is_empty());
    assert_eq!(r.allowed.len(), 1);
    assert_eq!(r.allowed[0].1, "needs a GPU");
}

#[test]
fn message_shows_the_strings_of_the_marker() {
    let old = "#[tokio::test]\nasync fn t() {}\n";
    let new =
        "#[tokio::test]\n#[cfg_attr(target_os = \"wasi\" /* no */, ignore)]\nasync fn t() {}\n";
    let r = run(&[Modify("tests/net.rs", old, new)]);
    let f = &r.flags[0];
    assert_eq!(
        f.message,
        "newly marks a test ignored: `#[cfg_attr(target_os = \"wasi\" , ignore`"
    );
}

#[test]
fn an_ignore_under_a_special_runner_only_is_not_a_skip() {
    let old = "#[test]\nfn t() {\n    assert!(f());\n}\n";
    for attr in ["miri", "any(miri, loom)", "loom"] {
        let new = format!(
            "#[test]\n#[cfg_attr({attr}, ignore)] // too slow there\nfn t() {{\n    assert!(f());\n}}\n"
        );
        assert!(modified("tests/net.rs", old, &new).is_empty(), "{attr}");
    }
    // Where `cargo test` runs, these skip.
    for attr in [
        "not(miri)",
        "windows",
        "any(miri, windows)",
        "feature = \"slow\"",
    ] {
        let new =
            format!("#[test]\n#[cfg_attr({attr}, ignore)]\nfn t() {{\n    assert!(f());\n}}\n");
        assert_eq!(modified("tests/net.rs", old, &new), vec![2], "{attr}");
    }
}

#[test]
fn an_ignore_where_the_base_did_not_compile_the_file_is_not_a_skip() {
    // The file is opened to WASI; the tests that cannot run there yet are ignored there. Under
    // WASI none of them ran before.
    let old = "#![warn(rust_2018_idioms)]\n#![cfg(all(feature = \"full\", not(target_os = \"wasi\"), not(miri)))] // no bind\n\n#[test]\nfn t() {\n    assert!(f());\n}\n";
    let opened = |attr: &str| {
        format!(
            "#![warn(rust_2018_idioms)]\n#![cfg(all(\n    feature = \"full\",\n    not(all(target_os = \"wasi\", target_env = \"p1\")),\n    not(miri)\n))]\n\n#[test]\n#[cfg_attr({attr}, ignore = \"needs threads\")]\nfn t() {{\n    assert!(f());\n}}\n"
        )
    };
    for attr in [
        "target_os = \"wasi\"",
        "target_os=\"wasi\"",
        "any(target_os = \"wasi\", miri)",
    ] {
        assert!(
            modified("tests/tcp.rs", old, &opened(attr)).is_empty(),
            "{attr}"
        );
    }
    // Lookalikes: a condition the base compiled the file under, and a file the base compiled
    // everywhere, are still skips; so is a plain `#[ignore]`.
    for attr in [
        "windows",
        "any(target_os = \"wasi\", windows)",
        "feature = \"full\"",
    ] {
        assert_eq!(
            modified("tests/tcp.rs", old, &opened(attr)),
            vec![9],
            "{attr}"
        );
    }
    let everywhere = old.replace(", not(target_os = \"wasi\")", "");
    assert_eq!(
        modified("tests/tcp.rs", &everywhere, &opened("target_os = \"wasi\"")),
        vec![9]
    );
    let plain = opened("target_os = \"wasi\"").replace(
        "#[cfg_attr(target_os = \"wasi\", ignore = \"needs threads\")]",
        "#[ignore]",
    );
    assert_eq!(modified("tests/tcp.rs", old, &plain), vec![9]);
    // The exclusion in a comment or a string is not the file's.
    let commented = old.replace(
        "#![cfg(all(feature = \"full\", not(target_os = \"wasi\"), not(miri)))]",
        "// #![cfg(not(target_os = \"wasi\"))]\nconst S: &str = \"#![cfg(not(target_os = \\\"wasi\\\"))]\";",
    );
    assert!(!modified("tests/tcp.rs", &commented, &opened("target_os = \"wasi\"")).is_empty());
}

#[test]
fn a_group_skip_narrowed_to_the_tests_that_need_it_is_not_new() {
    let module = |mark: &str, a: &str| {
        format!(
            "import sys\nimport pytest\n\n{mark}\n\n{a}def test_a():\n    assert f()\n\ndef test_b():\n    assert g()\n"
        )
    };
    let cond = "pytest.mark.skipif(sys.platform == \"win32\", reason=\"posix\")";
    let old = module(&format!("pytestmark = {cond}"), "");
    // The module's skip moved onto the one test that needs it.
    let narrowed = module("", &format!("@{cond}\n"));
    assert!(modified("tests/test_x.py", &old, &narrowed).is_empty());
    // Lookalikes: a plain skip where the module's had a condition; a test that gains a marker
    // while the module keeps its own.
    let plain = module("", "@pytest.mark.skip(reason=\"later\")\n");
    assert_eq!(modified("tests/test_x.py", &old, &plain), vec![6]);
    let kept = module(
        &format!("pytestmark = {cond}"),
        "@pytest.mark.skipif(sys.version_info < (3, 12), reason=\"new\")\n",
    );
    assert_eq!(modified("tests/test_x.py", &old, &kept), vec![6]);
    // A class's skip excuses its own tests only.
    let class = "import pytest\n\n@pytest.mark.skipif(X, reason=\"x\")\nclass TestA:\n    def test_a(self):\n        assert f()\n\ndef test_b():\n    assert g()\n";
    let moved_out = "import pytest\n\nclass TestA:\n    def test_a(self):\n        assert f()\n\n@pytest.mark.skipif(X, reason=\"x\")\ndef test_b():\n    assert g()\n";
    assert_eq!(modified("tests/test_x.py", class, moved_out), vec![7]);
}
