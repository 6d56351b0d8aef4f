//! `test-deleted` against tests still written where their runner no longer runs them.

use crate::testing::{Spec::*, messages, run};
use crate::{Report, Rule};

fn deleted(report: &Report) -> Vec<String> {
    messages(report, Rule::TestDeleted)
}

const PY: &str = "from shop import parse_sku\n\n\ndef test_parse_sku():\n    parsed = parse_sku('TS-M-RED')\n    assert parsed['family'] == 'TS'\n    assert parsed['size'] == 'M'\n\n\ndef test_other():\n    assert parse_sku('A') is None\n";

const GO: &str = "package p\n\nfunc TestSlug(t *testing.T) {\n\tif got := Slug(\"A b\"); got != \"a-b\" {\n\t\tt.Errorf(\"got %q\", got)\n\t}\n}\n";

#[test]
fn renamed_to_a_name_the_runner_does_not_collect() {
    let got = deleted(&run(&[Modify(
        "tests/test_sku.py",
        PY,
        &PY.replace("def test_parse_sku", "def _test_parse_sku"),
    )]));
    assert_eq!(
        got,
        [
            "test `test_parse_sku` (line 4 at the base) is now `_test_parse_sku`, a function its runner does not collect and nothing in its file calls: its checks no longer run"
        ]
    );
    for new in [
        GO.replace("func TestSlug", "func xTestSlug"),
        GO.replace("func TestSlug", "func testSlug"),
    ] {
        let got = deleted(&run(&[Modify("p/slug_test.go", GO, &new)]));
        assert_eq!(got.len(), 1, "{new}: {got:?}");
    }
    let java = "class SlugTest {\n  @Test\n  void slug() {\n    assertEquals(\"a-b\", Slug.of(\"A b\"));\n  }\n}\n";
    let got = deleted(&run(&[Modify(
        "src/test/java/SlugTest.java",
        java,
        &java.replace("  @Test\n", ""),
    )]));
    assert_eq!(got.len(), 1, "{got:?}");
}

#[test]
fn a_test_made_into_a_helper_something_calls_is_no_loss() {
    // Renamed, and called by the tests that replace it.
    let new = PY.replace("def test_parse_sku():", "def _test_parse_sku():")
        + "\n\ndef test_parse_sku_twice():\n    _test_parse_sku()\n    _test_parse_sku()\n";
    assert_eq!(
        deleted(&run(&[Modify("tests/test_sku.py", PY, &new)])),
        [] as [String; 0]
    );
    // Handed to the runner by name.
    let new = GO.replace("func TestSlug", "func testSlug")
        + "\nfunc TestAll(t *testing.T) {\n\tt.Run(\"slug\", testSlug)\n}\n";
    assert_eq!(
        deleted(&run(&[Modify("p/slug_test.go", GO, &new)])),
        [] as [String; 0]
    );
    // A helper of another name, holding what the test checked: no rename.
    let new = PY.replace("def test_parse_sku():", "def check_family():");
    let got = deleted(&run(&[Modify("tests/test_sku.py", PY, &new)]));
    assert!(got.iter().all(|m| !m.contains("its runner")), "{got:?}");
}

const MOVED: &str = "from shop import parse_sku\n\n\ndef test_parse_sku():\n    parsed = parse_sku('TS-M-RED')\n    assert parsed['family'] == 'TS'\n    assert parsed['size'] == 'M'\n";

#[test]
fn moved_to_a_file_pytest_does_not_collect() {
    let left = PY.replace(
        "def test_parse_sku():\n    parsed = parse_sku('TS-M-RED')\n    assert parsed['family'] == 'TS'\n    assert parsed['size'] == 'M'\n\n\n",
        "",
    );
    let got = deleted(&run(&[
        Modify("tests/test_sku.py", PY, &left),
        Add("tests/sku_cases.py", MOVED),
    ]));
    assert_eq!(
        got,
        [
            "test `test_parse_sku` (line 4 at the base) is moved to `tests/sku_cases.py`, a file pytest does not collect (not named `test_*.py` or `*_test.py`) and nothing in the change imports: it no longer runs"
        ]
    );
    // Moved to a file pytest collects.
    for name in ["tests/test_sku_cases.py", "tests/sku_cases_test.py"] {
        let got = deleted(&run(&[
            Modify("tests/test_sku.py", PY, &left),
            Add(name, MOVED),
        ]));
        assert_eq!(got, [] as [String; 0], "{name}");
    }
    // Imported by a test file, or pytest told to collect such files.
    let importer = format!("from tests.sku_cases import *\n{left}");
    let got = deleted(&run(&[
        Modify("tests/test_sku.py", PY, &importer),
        Add("tests/sku_cases.py", MOVED),
    ]));
    assert_eq!(got, [] as [String; 0]);
    let got = deleted(&run(&[
        Modify("tests/test_sku.py", PY, &left),
        Add("tests/sku_cases.py", MOVED),
        Keep(
            "pytest.ini",
            "[pytest]\npython_files = *_cases.py test_*.py\n",
        ),
    ]));
    assert_eq!(got, [] as [String; 0]);
}
