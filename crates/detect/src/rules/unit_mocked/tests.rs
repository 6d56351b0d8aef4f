use crate::flag::Rule;
use crate::testing::{Spec::*, lines, messages, run};

fn added(path: &str, new: &str) -> Vec<u32> {
    lines(&run(&[Add(path, new)]), Rule::UnitMocked)
}

#[test]
fn a_python_test_that_mocks_its_own_subject() {
    let base = "from app.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n";
    let mocked = "from app.calc import add\n\n\ndef test_add(mocker):\n    mocker.patch(\"app.calc.add\", return_value=5)\n    assert add(2, 3) == 5\n";
    let report = run(&[Modify("tests/test_calc.py", base, mocked)]);
    assert_eq!(lines(&report, Rule::UnitMocked), [5]);
    assert_eq!(
        messages(&report, Rule::UnitMocked),
        ["the test mocks `add`, the function it is named for, and asserts on the mock's answer"]
    );
    for (patch, line) in [
        (
            "@patch('app.calc.add', return_value=5)\ndef test_add_two_numbers(m):\n",
            1,
        ),
        (
            "def test_add(monkeypatch):\n    monkeypatch.setattr(calc, \"add\", lambda a, b: 5)\n",
            2,
        ),
        (
            "def test_add():\n    with patch.object(calc, 'add', return_value=5):\n",
            2,
        ),
    ] {
        let body = if patch.contains("with ") {
            "        assert calc.add(2, 3) == 5\n"
        } else {
            "    assert calc.add(2, 3) == 5\n"
        };
        let new = format!("import calc\nfrom unittest.mock import patch\n\n{patch}{body}");
        assert_eq!(added("tests/test_calc.py", &new), [line + 3], "{new}");
    }
}

#[test]
fn python_lookalikes() {
    for test in [
        // A collaborator mocked: the subject still runs.
        "def test_convert(mocker):\n    mocker.patch(\"app.rates.fetch_rate\", return_value=2)\n    assert convert(3) == 6\n",
        // Named for the subject but observed, not replaced.
        "def test_add(mocker):\n    spy = mocker.patch(\"app.calc.add\", wraps=calc.add)\n    assert calc.add(2, 3) == 5\n",
        // The patched function is not asserted on.
        "def test_add(mocker):\n    mocker.patch(\"app.calc.add\", return_value=5)\n    assert total([2, 3]) == 5\n",
        // A patch in a string.
        "def test_add():\n    doc = 'mocker.patch(\"app.calc.add\")'\n    assert add(2, 3) == 5\n",
    ] {
        assert!(added("tests/test_calc.py", test).is_empty(), "{test}");
    }
    // Production code is no test.
    let mocked = "def test_add(mocker):\n    mocker.patch(\"app.calc.add\", return_value=5)\n    assert add(2, 3) == 5\n";
    assert!(added("app/helpers.py", mocked).is_empty());
}

#[test]
fn a_js_test_that_spies_on_its_own_subject_with_an_answer() {
    let mocked = "import * as calc from '../src/calc';\n\nit('add returns the sum', () => {\n  jest.spyOn(calc, 'add').mockReturnValue(5);\n  expect(calc.add(2, 3)).toBe(5);\n});\n";
    assert_eq!(added("test/calc.test.js", mocked), [4]);
    // Named by its file.
    let by_file = "import * as m from '../src/add';\n\ntest('sums', () => {\n  vi.spyOn(m, 'add').mockImplementation(() => 5);\n  expect(m.add(2, 3)).toBe(5);\n});\n";
    assert_eq!(added("test/add.test.ts", by_file), [4]);
    for test in [
        // A collaborator.
        "it('convert', () => {\n  jest.spyOn(rates, 'fetchRate').mockReturnValue(2);\n  expect(convert(3)).toBe(6);\n});\n",
        // A spy that only observes.
        "it('add', () => {\n  const spy = jest.spyOn(calc, 'add');\n  expect(calc.add(2, 3)).toBe(5);\n});\n",
        // Another test's subject.
        "it('total', () => {\n  jest.spyOn(calc, 'add').mockReturnValue(5);\n  expect(calc.add(2, 3)).toBe(5);\n});\n",
    ] {
        assert!(added("test/calc.test.js", test).is_empty(), "{test}");
    }
}
