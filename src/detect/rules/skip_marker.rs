//! `skip-marker`: a test newly marked skipped, ignored, expected to fail or disabled.
//!
//! One table of markers per language. Most need a test file (a method called `skip` in
//! production Ruby is just a method); a few are unambiguous anywhere (`#[ignore]` only ever
//! applies to Rust tests, and Rust keeps unit tests in `#[cfg(test)]` modules under `src/`).
//! Patterns run over the masked text, so a marker in a comment, docstring or string is not one.

use crate::detect::flag::Rule;
use crate::detect::lang::{Language, PerLanguage};
use crate::detect::scan::{Occurrence, Text};

struct Marker {
    lang: Language,
    kind: &'static str,
    /// A pattern without capture groups.
    pattern: &'static str,
    /// Applies in any file of the language, not only in test files.
    anywhere: bool,
    /// Completes "newly …": what the marker does to a test.
    does: &'static str,
}

const SKIPPED: &str = "marks a test skipped";
const XFAIL: &str = "marks a test expected to fail";
const IGNORED: &str = "marks a test ignored";
const DISABLED: &str = "disables a test";

use Language::*;

const MARKERS: &[Marker] = &[
    // Python: pytest and unittest.
    m(
        Python,
        "py-mark-skip",
        r"\b(?:pytest\s*\.\s*)?mark\s*\.\s*skip(?:if)?\b",
        true,
        SKIPPED,
    ),
    m(
        Python,
        "py-mark-xfail",
        r"\b(?:pytest\s*\.\s*)?mark\s*\.\s*xfail\b",
        true,
        XFAIL,
    ),
    m(
        Python,
        "py-skip-call",
        r"\bpytest\s*\.\s*(?:skip|importorskip)\s*\(",
        true,
        SKIPPED,
    ),
    m(
        Python,
        "py-xfail-call",
        r"\bpytest\s*\.\s*xfail\s*\(",
        true,
        XFAIL,
    ),
    m(
        Python,
        "py-unittest-skip",
        r"\bunittest\s*\.\s*skip(?:If|Unless)?\b",
        true,
        SKIPPED,
    ),
    m(
        Python,
        "py-unittest-xfail",
        r"\bunittest\s*\.\s*expectedFailure\b",
        true,
        XFAIL,
    ),
    m(
        Python,
        "py-skip-decorator",
        r"@\s*skip(?:If|Unless)?\b",
        false,
        SKIPPED,
    ),
    m(
        Python,
        "py-xfail-decorator",
        r"@\s*expectedFailure\b",
        false,
        XFAIL,
    ),
    m(
        Python,
        "py-skiptest",
        r"\.\s*skipTest\s*\(|\braise\s+(?:unittest\s*\.\s*)?SkipTest\b",
        true,
        SKIPPED,
    ),
    // JavaScript and TypeScript: Jest, Mocha, Vitest, Jasmine, Playwright, node:test.
    m(
        JavaScript,
        "js-skip",
        r"\b(?:it|test|describe|context|suite|specify|bench)(?:\s*\.\s*(?:only|concurrent|sequential|serial|parallel|each|prop))*\s*\.\s*(?:skip(?:If)?|runIf)\b",
        false,
        SKIPPED,
    ),
    m(
        JavaScript,
        "js-xfail",
        r"\b(?:it|test)\s*\.\s*(?:fixme|fails|failing)\b",
        false,
        XFAIL,
    ),
    m(
        JavaScript,
        "js-x",
        r"\bx(?:it|test|describe|context|specify)\s*\(",
        false,
        SKIPPED,
    ),
    m(
        JavaScript,
        "js-this-skip",
        r"\b(?:this|ctx|context|t)\s*\.\s*skip\s*\(",
        false,
        SKIPPED,
    ),
    m(
        JavaScript,
        "js-skip-option",
        r"\{\s*skip\s*:\s*(?:true|['`]|\x22)",
        false,
        SKIPPED,
    ),
    // Go: only `_test.go` files hold tests.
    m(
        Go,
        "go-skip",
        r"\b\w+\s*\.\s*(?:Skip|Skipf|SkipNow)\s*\(",
        false,
        SKIPPED,
    ),
    // Rust: `#[ignore]` and `#[cfg_attr(…, ignore)]`, wherever the test sits.
    m(
        Rust,
        "rs-ignore",
        r"#\s*\[\s*(?:ignore\b|cfg_attr\s*\([^\]]*\bignore\b)",
        true,
        IGNORED,
    ),
    // Java and Kotlin: JUnit 4 and 5, TestNG.
    m(
        Java,
        "java-disabled",
        r"@\s*(?:org\.junit\.jupiter\.api\.)?Disabled\w*\b",
        false,
        DISABLED,
    ),
    m(
        Java,
        "java-ignore",
        r"@\s*(?:org\.junit\.)?Ignore\b",
        false,
        IGNORED,
    ),
    m(
        Java,
        "java-testng-disabled",
        r"@\s*Test\s*\([^)]*\benabled\s*=\s*false\b",
        false,
        DISABLED,
    ),
    // C#: xUnit, NUnit, MSTest.
    m(
        CSharp,
        "cs-skip",
        r"\[\s*(?:Skippable)?(?:Fact|Theory)\w*\s*\([^\]]*\bSkip\s*=",
        true,
        SKIPPED,
    ),
    m(
        CSharp,
        "cs-ignore",
        r"[\[,]\s*Ignore\s*[\](]",
        false,
        IGNORED,
    ),
    m(
        CSharp,
        "cs-assert-ignore",
        r"\bAssert\s*\.\s*(?:Ignore|Inconclusive)\s*\(",
        false,
        IGNORED,
    ),
    // Ruby: RSpec and Minitest.
    m(
        Ruby,
        "rb-skip",
        r"(?m)^[ \t]*(?:skip|pending)(?:[ \t]*\(|[ \t]+[\x22']|[ \t\r]*$)",
        false,
        SKIPPED,
    ),
    m(
        Ruby,
        "rb-x",
        r"\bx(?:it|describe|context|specify|example|scenario|feature)\b",
        false,
        SKIPPED,
    ),
    m(
        Ruby,
        "rb-skip-metadata",
        r",\s*(?::skip\b|:pending\b|skip\s*:|pending\s*:)",
        false,
        SKIPPED,
    ),
    // PHP: PHPUnit.
    m(
        Php,
        "php-skip",
        r"\bmarkTest(?:Skipped|Incomplete)\s*\(",
        true,
        SKIPPED,
    ),
    // C++: GoogleTest.
    m(
        Cpp,
        "gtest-disabled",
        r"\b(?:TEST|TEST_F|TEST_P|TYPED_TEST|TYPED_TEST_P)\s*\(\s*(?:DISABLED_\w*|\w+\s*,\s*DISABLED_)",
        true,
        DISABLED,
    ),
    m(Cpp, "gtest-skip", r"\bGTEST_SKIP\b", true, SKIPPED),
    // Swift: XCTest and Swift Testing.
    m(
        Swift,
        "swift-skip",
        r"\bXCTSkip(?:If|Unless)?\b",
        true,
        SKIPPED,
    ),
    m(
        Swift,
        "swift-disabled",
        r"@\s*(?:Test|Suite)\s*\([^)]*\.disabled\b",
        true,
        DISABLED,
    ),
    // Elixir: ExUnit tags.
    m(
        Elixir,
        "ex-skip",
        r"@(?:tag|moduletag|describetag)\s+(?::skip\b|skip\s*:)",
        true,
        SKIPPED,
    ),
];

const fn m(
    lang: Language,
    kind: &'static str,
    pattern: &'static str,
    anywhere: bool,
    does: &'static str,
) -> Marker {
    Marker {
        lang,
        kind,
        pattern,
        anywhere,
        does,
    }
}

/// One language's markers as one alternation: a single pass over the file finds them all, and
/// each match says which.
struct Compiled {
    regex: super::Alternation,
    markers: Vec<&'static Marker>,
}

fn compile(lang: Language, in_tests: bool) -> Option<Compiled> {
    let markers: Vec<&Marker> = MARKERS
        .iter()
        .filter(|m| m.lang == lang && (in_tests || m.anywhere))
        .collect();
    if markers.is_empty() {
        return None;
    }
    let regex = super::alternation(markers.iter().map(|m| m.pattern), false);
    Some(Compiled { regex, markers })
}

/// A language, its markers for test files, and those that apply anywhere.
static COMPILED: PerLanguage<(Option<Compiled>, Option<Compiled>)> =
    PerLanguage::new(|l| (compile(l, true), compile(l, false)));

/// Words every marker of a language contains, in the raw text: a file without any of them
/// cannot hold a marker, and is neither masked nor scanned. (Masking only blanks bytes, so a
/// match on the masked text has its words in the raw text too.)
const TRIGGERS: &[(Language, &[&str])] = &[
    (Python, &["skip", "Skip", "xfail", "expectedFailure"]),
    (
        JavaScript,
        &[
            "skip",
            "runIf",
            "xit",
            "xtest",
            "xdescribe",
            "xcontext",
            "xspecify",
            "fixme",
            "fail",
        ],
    ),
    (Go, &["Skip"]),
    (Rust, &["ignore"]),
    (Java, &["Disabled", "Ignore", "enabled"]),
    (CSharp, &["Skip", "Ignore", "Inconclusive"]),
    (
        Ruby,
        &[
            "skip",
            "pending",
            "xit",
            "xdescribe",
            "xcontext",
            "xspecify",
            "xexample",
            "xscenario",
            "xfeature",
        ],
    ),
    (Php, &["markTest"]),
    (Cpp, &["DISABLED_", "GTEST_SKIP"]),
    (Swift, &["XCTSkip", "disabled"]),
    (Elixir, &["skip"]),
];

static TRIGGER_SETS: PerLanguage<Option<super::LiteralSet>> = PerLanguage::new(|lang| {
    TRIGGERS
        .iter()
        .find(|(l, _)| *l == lang)
        .map(|(_, words)| super::literal_set(words))
});

/// False when `raw` cannot hold any marker of `lang`.
pub(crate) fn might_match(lang: Language, raw: &[u8]) -> bool {
    TRIGGER_SETS
        .get(lang)
        .as_ref()
        .is_some_and(|set| set.is_match(raw))
}

/// True when some marker of `lang` applies to a file (a test file, or any file for markers
/// that apply anywhere).
pub(crate) fn applies(lang: Language, is_test: bool) -> bool {
    MARKERS
        .iter()
        .any(|m| m.lang == lang && (is_test || m.anywhere))
}

pub(crate) fn scan(lang: Language, is_test: bool, text: &Text<'_>, out: &mut Vec<Occurrence>) {
    let (tests, anywhere) = COMPILED.get(lang);
    let Some(compiled) = (if is_test { tests } else { anywhere }) else {
        return;
    };
    for (i, found) in compiled.regex.find_iter(&text.masked) {
        let marker = compiled.markers[i];
        let shown = String::from_utf8_lossy(&text.masked[found.clone()]);
        let shown: String = shown.split_whitespace().collect::<Vec<_>>().join(" ");
        let message = format!("newly {}: `{}`", marker.does, shown.trim());
        out.push(text.occurrence(
            Rule::SkipMarker,
            marker.kind,
            found.start,
            found.end,
            message,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::testing::{Spec::*, lines, run};

    fn added(path: &str, new: &str) -> Vec<u32> {
        lines(&run(&[Add(path, new)]), Rule::SkipMarker)
    }

    fn modified(path: &str, old: &str, new: &str) -> Vec<u32> {
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
        // Moved from one file to another in the same change.
        let r = run(&[
            Modify(
                "tests/test_a.py",
                "@pytest.mark.skip\ndef test_a():\n    pass\n",
                "def test_a():\n    pass\n",
            ),
            Add(
                "tests/test_b.py",
                "import pytest\n\n@pytest.mark.skip\ndef test_b():\n    pass\n",
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
            ("test.skipIf(isCI)('x', () => {})\n", 1),
            ("test.runIf(!isCI)('x', () => {})\n", 1),
            ("describe.skipIf(!global.gc)('s', () => {})\n", 1),
        ] {
            assert_eq!(added("web/src/App.test.tsx", new), vec![line], "{new}");
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
        let old = "package x\n\nfunc TestA(t *testing.T) {\n\tif f() != 1 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n";
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
        assert_eq!(
            added(
                "tests/it.rs",
                "#[test]\n#[cfg_attr(windows, ignore)]\nfn t() {}\n"
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
}
