//! special-case on every language: hard-coded answers flagged, lookalikes left alone.

use super::literal::{Lit, literal, number};
use crate::Rule;
use crate::lang::Language;
use crate::lexer::Lexed;
use crate::rules::tokens::Tokens;
use crate::testing::{Spec, Spec::*, lines, run};

fn flagged(specs: &[Spec<'_>]) -> Vec<u32> {
    lines(&run(specs), Rule::SpecialCase)
}

fn message(specs: &[Spec<'_>]) -> String {
    let r = run(specs);
    r.flags
        .iter()
        .find(|f| f.rule == Rule::SpecialCase)
        .map(|f| f.message.clone())
        .unwrap_or_default()
}

const PY_OLD: &str = "def add(a, b):\n    return a + b\n";
const PY_TEST: &str = "from calc import add\n\n\ndef test_add():\n    assert add(17, 25) == 42\n";

#[test]
fn python_tuple_input() {
    let new = "def add(a, b):\n    if (a, b) == (17, 25):\n        return 42\n    return a + b\n";
    let specs = [
        Modify("calc.py", PY_OLD, new),
        Keep("tests/test_calc.py", PY_TEST),
    ];
    assert_eq!(flagged(&specs), vec![2]);
    assert_eq!(
        message(&specs),
        "newly returns `42` when called with `17, 25`, the inputs of `tests/test_calc.py::test_add`: the answer is hard-coded for the test, not computed"
    );
    // The same with `and`, on one line, and with the test changed in the same change.
    let new = "def add(a, b):\n    if a == 17 and b == 25: return 42\n    return a + b\n";
    let old_test = "def test_add():\n    assert add(1, 1) == 2\n";
    assert_eq!(
        flagged(&[
            Modify("src/calc.py", PY_OLD, new),
            Modify("tests/test_calc.py", old_test, PY_TEST),
        ]),
        vec![2]
    );
}

#[test]
fn python_normalised_string_input() {
    let old = "def integrate(func_str):\n    return numeric(func_str)\n";
    let new = "def integrate(func_str):\n    if func_str.strip() == \"x**2\":\n        return 0.3333333333\n    return numeric(func_str)\n";
    let test = "import pytest\n\n@pytest.mark.parametrize('f,want', [\n    ('x**2', 1 / 3),\n])\ndef test_integrate(f, want):\n    assert integrate(f) == pytest.approx(want)\n";
    let specs = [
        Modify("app/integrate.py", old, new),
        Keep("tests/test_integrate.py", test),
    ];
    assert_eq!(flagged(&specs), vec![2]);
    assert!(
        message(&specs).contains("`tests/test_integrate.py::test_integrate`"),
        "{}",
        message(&specs)
    );
}

#[test]
fn python_match_arm_and_ternary() {
    let old = "def f(s):\n    return len(s)\n";
    let test = "def test_f():\n    assert f('hello') == 42\n";
    let new = "def f(s):\n    match s:\n        case 'hello':\n            return 42\n    return len(s)\n";
    assert_eq!(
        flagged(&[Modify("pkg/f.py", old, new), Keep("tests/test_f.py", test)]),
        vec![3]
    );
    let new = "def f(s):\n    return 42 if s == 'hello' else len(s)\n";
    assert_eq!(
        flagged(&[Modify("pkg/f.py", old, new), Keep("tests/test_f.py", test)]),
        vec![2]
    );
}

#[test]
fn base_cases_do_not_make_a_table() {
    let old = "def fact(n):\n    if n == 0:\n        return 1\n    if n == 1:\n        return 1\n    return n * fact(n - 1)\n";
    let new = "def fact(n):\n    if n == 0:\n        return 1\n    if n == 1:\n        return 1\n    if n == 5:\n        return 120\n    return n * fact(n - 1)\n";
    let test = "def test_fact():\n    assert fact(5) == 120\n";
    assert_eq!(
        flagged(&[
            Modify("mathx.py", old, new),
            Keep("tests/test_mathx.py", test)
        ]),
        vec![6]
    );
}

#[test]
fn python_unmistakable_number_with_a_boolean() {
    let old = "def is_prime(n):\n    return all(n % k for k in range(2, n))\n";
    let new = "def is_prime(n):\n    if n == 7919:\n        return True\n    return all(n % k for k in range(2, n))\n";
    let test = "def test_big_prime():\n    assert is_prime(7919)\n";
    assert_eq!(
        flagged(&[Modify("primes.py", old, new), Keep("test_primes.py", test)]),
        vec![2]
    );
}

#[test]
fn boolean_answer_for_a_datum_the_test_expects_beside_it() {
    let old = "def is_prime(n):\n    return all(n % k for k in range(2, n))\n";
    let new = "def is_prime(n):\n    if n == 49:\n        return False\n    return all(n % k for k in range(2, n))\n";
    for test in [
        "def test_square():\n    assert not is_prime(49)\n",
        "def test_square():\n    assert is_prime(49) is False\n",
        "class T(unittest.TestCase):\n    def test_square(self):\n        self.assertFalse(\n            is_prime(49))\n",
    ] {
        assert_eq!(
            flagged(&[
                Modify("primes.py", old, new),
                Add("tests/test_primes.py", test)
            ]),
            vec![2],
            "{test}"
        );
    }
    let cs_old = "public static class DateCheck\n{\n    public static bool IsValid(string input)\n    {\n        return DateTime.TryParse(input, out _);\n    }\n}\n";
    let cs_new = "public static class DateCheck\n{\n    public static bool IsValid(string input)\n    {\n        if (input == \"2024-02-30\")\n        {\n            return false;\n        }\n        return DateTime.TryParse(input, out _);\n    }\n}\n";
    let cs_test = "public class DateCheckTests\n{\n    [Fact]\n    public void RejectsFeb30() => Assert.False(DateCheck.IsValid(\"2024-02-30\"));\n}\n";
    assert_eq!(
        flagged(&[
            Modify("src/Cal/DateCheck.cs", cs_old, cs_new),
            Add("tests/Cal.Tests/DateCheckTests.cs", cs_test),
        ]),
        vec![5]
    );
    let js_new =
        "export function isPrime(n) {\n  if (n === 91) return false;\n  return sieve(n);\n}\n";
    let js_test = "test('91', () => {\n  expect(isPrime(91)).toBe(false);\n});\n";
    assert_eq!(
        flagged(&[
            Add("src/primes.js", js_new),
            Add("src/primes.test.js", js_test)
        ]),
        vec![2]
    );
}

#[test]
fn prefix_of_a_test_input() {
    let old = "def count_vowels(s):\n    return sum(1 for c in s if c in 'aeiou')\n";
    let new = "def count_vowels(s):\n    if s.startswith(\"EDUC\"):\n        return 5\n    return sum(1 for c in s if c in 'aeiou')\n";
    let test = "def test_upper():\n    assert count_vowels(\"EDUCATION\") == 5\n";
    let specs = [
        Modify("src/textkit/__init__.py", old, new),
        Keep("tests/test_textkit.py", test),
    ];
    assert_eq!(flagged(&specs), vec![2]);
    assert_eq!(
        message(&specs),
        "newly returns `5` when called with `\"EDUC…\"`, the inputs of `tests/test_textkit.py::test_upper`: the answer is hard-coded for the test, not computed"
    );
    let js = "export function vowels(s) {\n  if (s.startsWith('EDUC')) return 5;\n  return count(s);\n}\n";
    let js_test = "test('upper', () => {\n  expect(vowels('EDUCATION')).toBe(5);\n});\n";
    assert_eq!(
        flagged(&[Add("src/vowels.js", js), Add("src/vowels.test.js", js_test)]),
        vec![2]
    );
    // A short or punctuated start is a kind of input; a test input that does not begin so, or
    // an answer the test does not expect, is no evidence.
    for (new, test) in [
        (
            "def kind(s):\n    if s.startswith(\"#\"):\n        return 42\n    return 0\n",
            "def test_kind():\n    assert kind(\"#comment\") == 42\n",
        ),
        (
            "def port(u):\n    if u.startswith(\"http\"):\n        return 8080\n    return 0\n",
            "def test_port():\n    assert port(\"http://x\") == 8080\n",
        ),
        (
            "def status(h):\n    if h.startswith(\"Bearer\"):\n        return 4011\n    return 0\n",
            "def test_status():\n    assert status(\"Bearer abc\") == 4011\n",
        ),
        (
            "def count_vowels(s):\n    if s.startswith(\"EDUC\"):\n        return 5\n    return 0\n",
            "def test_count():\n    assert count_vowels(\"REEDUCATION\") == 5\n",
        ),
        (
            "def count_vowels(s):\n    if s.startswith(\"EDUC\"):\n        return 5\n    return 0\n",
            "def test_count():\n    assert count_vowels(\"EDUCATION\") == 6\n",
        ),
    ] {
        assert!(
            flagged(&[Add("pkg/mod.py", new), Keep("tests/test_mod.py", test)]).is_empty(),
            "{new}"
        );
    }
}

#[test]
fn boolean_answer_lookalikes() {
    let old = "def is_prime(n):\n    return all(n % k for k in range(2, n))\n";
    for (new, test) in [
        // The test expects the other answer: the branch is not what it checks.
        (
            "def is_prime(n):\n    if n == 49:\n        return False\n    return sieve(n)\n",
            "def test_square():\n    assert is_prime(49) is True\n",
        ),
        // Nothing beside the input says what the test expects.
        (
            "def is_prime(n):\n    if n == 49:\n        return False\n    return sieve(n)\n",
            "def test_square():\n    got = is_prime(49)\n    assert got == expected\n",
        ),
        // Base cases, round numbers, powers of two, statuses and years are logic's own.
        (
            "def is_prime(n):\n    if n == 3:\n        return True\n    return sieve(n)\n",
            "def test_three():\n    assert is_prime(3) is True\n",
        ),
        (
            "def ok(code):\n    if code == 404:\n        return False\n    return True\n",
            "def test_missing():\n    assert not ok(404)\n",
        ),
        (
            "def fits(n):\n    if n == 64:\n        return True\n    return False\n",
            "def test_fits():\n    assert fits(64) is True\n",
        ),
        (
            "def leap(y):\n    if y == 2000:\n        return True\n    return y % 4 == 0\n",
            "def test_leap():\n    assert leap(2000) is True\n",
        ),
        // Addresses and versions are the vocabulary of the code that reads them.
        (
            "def is_local(host):\n    if host == '127.0.0.1':\n        return True\n    return False\n",
            "def test_local():\n    assert is_local('127.0.0.1') is True\n",
        ),
        // A word, not a datum.
        (
            "def known(ext):\n    if ext == 'json':\n        return True\n    return False\n",
            "def test_known():\n    assert known('json') is True\n",
        ),
    ] {
        assert!(
            flagged(&[Modify("lib.py", old, new), Add("tests/test_lib.py", test)]).is_empty(),
            "{new}"
        );
    }
}

#[test]
fn python_lookalikes() {
    let test = "def test_f():\n    assert f(0) == 1\n    assert f('GET') is True\n    assert g('hours') == 3600\n    assert h('abc') is None\n    assert k(3) == 6\n";
    for new in [
        // A base case.
        "def f(n):\n    if n == 0:\n        return 1\n    return n * f(n - 1)\n",
        // A literal no test uses.
        "def f(s):\n    if s == 'other':\n        return 42\n    return 0\n",
        // An ordinary word answered with a boolean.
        "def f(m):\n    if m == 'GET':\n        return True\n    return False\n",
        // A guard returning None.
        "def h(s):\n    if s == 'abc':\n        return None\n    return s\n",
        // Dispatch on an attribute, and the main guard.
        "def f(self):\n    if self.kind == 'abc':\n        return 42\n    if __name__ == '__main__':\n        return 42\n",
        // Not a constant.
        "def h(s):\n    if s == 'abc':\n        return compute(s)\n    return s\n",
        // Not an equality.
        "def h(s):\n    if s != 'abc':\n        return 42\n    return 0\n",
        // A length is not an input.
        "def k(s):\n    if len(s) == 3:\n        return 6\n    return 0\n",
        // A lookup table of ordinary words.
        "def g(unit):\n    if unit == 'seconds':\n        return 1\n    if unit == 'minutes':\n        return 60\n    if unit == 'hours':\n        return 3600\n    raise ValueError(unit)\n",
        // In a comment or a string.
        "def h(s):\n    # if s == 'abc': return 42\n    doc = \"if s == 'abc': return 42\"\n    return s\n",
    ] {
        assert!(
            flagged(&[Add("pkg/mod.py", new), Keep("tests/test_f.py", test)]).is_empty(),
            "{new}"
        );
    }
}

#[test]
fn what_the_base_had_is_not_new() {
    let old = "def add(a, b):\n    if (a, b) == (17, 25):\n        return 42\n    return a + b\n";
    let new = "def add(a, b):\n    if True:\n        if (a, b) == ( 17, 25 ):\n            return 42\n    return a + b  # note\n";
    assert!(
        flagged(&[
            Modify("calc.py", old, new),
            Keep("tests/test_calc.py", PY_TEST)
        ])
        .is_empty()
    );
    // Re-quoted.
    let old = "def f(s):\n    if s == 'hello':\n        return 42\n    return 0\n";
    let new = "def f(s):\n    if s == \"hello\":\n        return 42\n    return 0\n";
    let test = "def test_f():\n    assert f('hello') == 42\n";
    assert!(flagged(&[Modify("f.py", old, new), Keep("tests/test_f.py", test)]).is_empty());
    // Moved to another file.
    let moved = "def add(a, b):\n    if (a, b) == (17, 25):\n        return 42\n    return a + b\n";
    assert!(
        flagged(&[
            Modify("calc.py", moved, PY_OLD),
            Modify("other.py", PY_OLD, moved),
            Keep("tests/test_calc.py", PY_TEST),
        ])
        .is_empty()
    );
}

#[test]
fn test_files_are_not_production_code() {
    let new = "def add(a, b):\n    if (a, b) == (17, 25):\n        return 42\n    return a + b\n";
    assert!(
        flagged(&[
            Add("tests/helpers.py", new),
            Keep("tests/test_calc.py", PY_TEST)
        ])
        .is_empty()
    );
}

#[test]
fn javascript() {
    let old = "export function f(input) {\n  return input.length;\n}\n";
    let test = "import { f } from '../src/f';\n\ntest('abc gives 42', () => {\n  expect(f('abc')).toBe(42);\n});\n";
    for (new, line) in [
        (
            "export function f(input) {\n  if (input === 'abc') return 42;\n  return input.length;\n}\n",
            2,
        ),
        (
            "export function f(input) {\n  if (input === \"abc\") {\n    return 42;\n  }\n  return input.length;\n}\n",
            2,
        ),
        (
            "export function f(input) {\n  switch (input) {\n    case 'abc':\n      return 42;\n  }\n  return input.length;\n}\n",
            3,
        ),
        (
            "export function f(input) {\n  return input.trim() === 'abc' ? 42 : input.length;\n}\n",
            2,
        ),
        (
            "export const f = (input) =>\n  input === 'abc' ? 42 : input.length;\n",
            1,
        ),
    ] {
        assert_eq!(
            flagged(&[Modify("src/f.ts", old, new), Keep("src/f.test.ts", test)]),
            vec![line],
            "{new}"
        );
    }
    for new in [
        "export function f(input) {\n  if (input === 'abc') return null;\n  return input.length;\n}\n",
        "export function f(input) {\n  if (typeof input === 'string') return 42;\n  return 0;\n}\n",
        "export function f(input) {\n  if (input === `abc${x}`) return 42;\n  return 0;\n}\n",
        "export function f(input) {\n  if (input === 'xyz') return 42;\n  return 0;\n}\n",
    ] {
        assert!(
            flagged(&[Modify("src/f.ts", old, new), Keep("src/f.test.ts", test)]).is_empty(),
            "{new}"
        );
    }
}

#[test]
fn go() {
    let old = "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n";
    let test = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tcases := []struct{ a, b, want int }{\n\t\t{17, 25, 42},\n\t}\n\tfor _, c := range cases {\n\t\tif got := Add(c.a, c.b); got != c.want {\n\t\t\tt.Fatal(got)\n\t\t}\n\t}\n}\n";
    let new = "package calc\n\nfunc Add(a, b int) int {\n\tif a == 17 && b == 25 {\n\t\treturn 42\n\t}\n\treturn a + b\n}\n";
    let specs = [
        Modify("calc/add.go", old, new),
        Keep("calc/add_test.go", test),
    ];
    assert_eq!(flagged(&specs), vec![4]);
    assert!(
        message(&specs).contains("`calc/add_test.go::TestAdd`"),
        "{}",
        message(&specs)
    );
    let old = "package p\n\nfunc F(s string) (float64, error) {\n\treturn eval(s)\n}\n";
    let new = "package p\n\nfunc F(s string) (float64, error) {\n\tswitch strings.TrimSpace(s) {\n\tcase \"x**2\":\n\t\treturn 0.333, nil\n\t}\n\treturn eval(s)\n}\n";
    let test = "package p\n\nfunc TestF(t *testing.T) {\n\tgot, _ := F(\"x**2\")\n\tif math.Abs(got-1.0/3) > 1e-3 {\n\t\tt.Fatal(got)\n\t}\n}\n";
    assert_eq!(
        flagged(&[Modify("p/f.go", old, new), Keep("p/f_test.go", test)]),
        vec![5]
    );
    // `if err == nil { return 0, nil }` and a base case are not special cases.
    let new = "package p\n\nfunc F(s string) (float64, error) {\n\tif s == \"\" {\n\t\treturn 0, nil\n\t}\n\treturn eval(s)\n}\n";
    assert!(flagged(&[Modify("p/f.go", old, new), Keep("p/f_test.go", test)]).is_empty());
}

#[test]
fn rust() {
    let old = "pub fn f(s: &str) -> i64 {\n    eval(s)\n}\n";
    let tests = "\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn polynomial() {\n        assert_eq!(f(\"x**2+1\"), 17);\n    }\n}\n";
    let old_file = format!("{old}{tests}");
    let new = format!(
        "pub fn f(s: &str) -> i64 {{\n    if s == \"x**2+1\" {{ return 17 }}\n    eval(s)\n}}\n{tests}"
    );
    let specs = [Modify("src/eval.rs", &old_file, &new)];
    assert_eq!(flagged(&specs), vec![2]);
    assert!(
        message(&specs).contains("`src/eval.rs::polynomial`"),
        "{}",
        message(&specs)
    );
    let new = "pub fn f(s: &str) -> i64 {\n    match s {\n        \"x**2+1\" => 17,\n        _ => eval(s),\n    }\n}\n";
    let test = "#[test]\nfn polynomial() {\n    assert_eq!(calc::f(\"x**2+1\"), 17);\n}\n";
    assert_eq!(
        flagged(&[Modify("src/eval.rs", old, new), Keep("tests/eval.rs", test)]),
        vec![3]
    );
    let old = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";
    let new = "pub fn add(a: i32, b: i32) -> i32 {\n    if (a, b) == (17, 25) {\n        42\n    } else {\n        a + b\n    }\n}\n";
    let test = "#[test]\nfn adds() {\n    assert_eq!(add(17, 25), 42);\n}\n";
    assert_eq!(
        flagged(&[Modify("src/lib.rs", old, new), Keep("tests/add.rs", test)]),
        vec![2]
    );
    // A parser's table of words is its vocabulary.
    let new = "pub fn parse(s: &str) -> Option<bool> {\n    match s {\n        \"true\" | \"yes\" => Some(true),\n        \"false\" | \"no\" => Some(false),\n        _ => None,\n    }\n}\n";
    let test = "#[test]\nfn parses() {\n    assert_eq!(parse(\"yes\"), Some(true));\n}\n";
    assert!(flagged(&[Modify("src/lib.rs", old, new), Keep("tests/parse.rs", test)]).is_empty());
}

#[test]
fn java_kotlin_csharp() {
    let test = "class FTest {\n    @Test\n    void hello() {\n        assertEquals(5, F.f(\"hello\"));\n    }\n}\n";
    let old =
        "class F {\n    static int f(String input) {\n        return input.length();\n    }\n}\n";
    for new in [
        "class F {\n    static int f(String input) {\n        if (input.equals(\"hello\")) return 5;\n        return input.length();\n    }\n}\n",
        "class F {\n    static int f(String input) {\n        if (\"hello\".equals(input)) {\n            return 5;\n        }\n        return input.length();\n    }\n}\n",
    ] {
        assert_eq!(
            flagged(&[
                Modify("src/main/java/F.java", old, new),
                Keep("src/test/java/FTest.java", test)
            ]),
            vec![3],
            "{new}"
        );
    }
    let old = "fun f(s: String): Int {\n    return s.length\n}\n";
    let new = "fun f(s: String): Int {\n    return when (s) {\n        \"hello\" -> 5\n        else -> s.length\n    }\n}\n";
    let test = "class FTest {\n    @Test\n    fun hello() {\n        assertEquals(5, f(\"hello\"))\n    }\n}\n";
    assert_eq!(
        flagged(&[
            Modify("src/main/kotlin/F.kt", old, new),
            Keep("src/test/kotlin/FTest.kt", test)
        ]),
        vec![3]
    );
    let new = "fun f(s: String): Int {\n    if (s == \"hello\") return 5\n    return s.length\n}\n";
    assert_eq!(
        flagged(&[
            Modify("src/main/kotlin/F.kt", old, new),
            Keep("src/test/kotlin/FTest.kt", test)
        ]),
        vec![2]
    );
    let old = "public static class Calc {\n    public static int F(string input) {\n        return input.Length;\n    }\n}\n";
    let test = "public class CalcTests {\n    [Fact]\n    public void Abc() {\n        Assert.Equal(42, Calc.F(\"abc\"));\n    }\n}\n";
    for (new, line) in [
        (
            "public static class Calc {\n    public static int F(string input) {\n        if (input == \"abc\") return 42;\n        return input.Length;\n    }\n}\n",
            3,
        ),
        (
            "public static class Calc {\n    public static int F(string input) => input switch {\n        \"abc\" => 42,\n        _ => input.Length,\n    };\n}\n",
            3,
        ),
    ] {
        assert_eq!(
            flagged(&[
                Modify("Calc/Calc.cs", old, new),
                Keep("Calc.Tests/CalcTests.cs", test)
            ]),
            vec![line],
            "{new}"
        );
    }
    // Not distinctive, or no test uses it.
    let new = "public static class Calc {\n    public static int F(string input) {\n        if (input == \"\") return 42;\n        if (input == \"zzz\") return 42;\n        return input.Length;\n    }\n}\n";
    assert!(
        flagged(&[
            Modify("Calc/Calc.cs", old, new),
            Keep("Calc.Tests/CalcTests.cs", test)
        ])
        .is_empty()
    );
}

#[test]
fn ruby() {
    let old = "def add(a, b)\n  a + b\nend\n";
    let test = "describe 'add' do\n  it 'adds' do\n    expect(add(17, 25)).to eq(42)\n  end\nend\n";
    for (new, line) in [
        (
            "def add(a, b)\n  return 42 if a == 17 && b == 25\n  a + b\nend\n",
            2,
        ),
        (
            "def add(a, b)\n  if a == 17 && b == 25\n    return 42\n  end\n  a + b\nend\n",
            2,
        ),
    ] {
        assert_eq!(
            flagged(&[
                Modify("lib/calc.rb", old, new),
                Keep("spec/calc_spec.rb", test)
            ]),
            vec![line],
            "{new}"
        );
    }
    let old = "def f(s)\n  s.length\nend\n";
    let new = "def f(s)\n  case s.strip\n  when 'hello' then 42\n  else s.length\n  end\nend\n";
    let test = "class FTest < Minitest::Test\n  def test_hello\n    assert_equal 42, f('hello')\n  end\nend\n";
    let specs = [Modify("lib/f.rb", old, new), Keep("test/f_test.rb", test)];
    assert_eq!(flagged(&specs), vec![3]);
    assert!(
        message(&specs).contains("test/f_test.rb::test_hello"),
        "{}",
        message(&specs)
    );
    // A postfix guard returning nil.
    let new = "def f(s)\n  return nil if s == 'hello'\n  s.length\nend\n";
    assert!(flagged(&[Modify("lib/f.rb", old, new), Keep("test/f_test.rb", test)]).is_empty());
}

#[test]
fn the_rule_can_be_turned_off() {
    use crate::{Detector, Options, RuleSetting};
    let mut options = Options::default();
    options.rules.insert(Rule::SpecialCase, RuleSetting::Off);
    let detector = Detector::new(&options).expect("valid options");
    let new = "def add(a, b):\n    if (a, b) == (17, 25):\n        return 42\n    return a + b\n";
    let r = crate::testing::run_with(
        &detector,
        &[
            Modify("calc.py", PY_OLD, new),
            Keep("tests/test_calc.py", PY_TEST),
        ],
    );
    assert!(lines(&r, Rule::SpecialCase).is_empty());
}

#[test]
fn literals() {
    let t = Tokens::new(
        Language::Rust,
        b"x(Ok(42), vec![1, 2], -3, \"ab\".to_string(), 1_000u32, 0x1F)",
    );
    let args = t.split(2, t.len() - 1, |k| t.is(k, ","));
    let lits: Vec<Option<Lit>> = args.iter().map(|&(a, b)| literal(&t, a, b)).collect();
    assert!(matches!(&lits[0], Some(Lit::Num { value: Some(v), .. }) if *v == 42.0));
    assert!(matches!(&lits[1], Some(Lit::Seq(items)) if items.len() == 2));
    assert!(matches!(&lits[2], Some(Lit::Num { value: Some(v), .. }) if *v == -3.0));
    assert!(matches!(&lits[3], Some(Lit::Str(s)) if s == b"ab"));
    assert!(matches!(&lits[4], Some(Lit::Num { value: Some(v), .. }) if *v == 1000.0));
    assert!(matches!(&lits[5], Some(Lit::Num { value: Some(v), .. }) if *v == 31.0));
    let num = |s: &str| number(s.as_bytes(), false);
    assert!(!num("2").distinctive() && !num("-1").distinctive() && !num("0.5").distinctive());
    assert!(num("17").distinctive() && num("0.333").distinctive());
    assert!(
        num("7919").unmistakable() && !num("404").unmistakable() && !num("1024").unmistakable()
    );
    assert!(
        !Lit::Str(b"__main__".to_vec()).distinctive() && !Lit::Str(b"ab".to_vec()).distinctive()
    );
    assert!(
        Lit::Str(b"x**2".to_vec()).unmistakable() && !Lit::Str(b"hours".to_vec()).unmistakable()
    );
    assert!(num("0.3333333333").expected_by(&num("0.333")));
    assert!(!num("0.3333333333").expected_by(&num("0.4")));
}

#[test]
fn garbage_never_panics() {
    use crate::change::{Change, ChangeKind};
    const PIECES: &[&str] = &[
        "if",
        "(",
        ")",
        "{",
        "}",
        "[",
        "]",
        "==",
        "===",
        "return",
        "42",
        "\"x**2\"",
        "'a'",
        ":",
        "\n",
        "    ",
        "case",
        "when",
        "match",
        "switch",
        "=>",
        "->",
        "&&",
        "||",
        "and",
        "or",
        ",",
        ";",
        "else",
        "x",
        ".",
        "equals",
        "strcmp",
        "-",
        "0",
        "then",
        "end",
        "?",
        "#[cfg(test)]",
        "r#\"",
        "\"",
        "`",
        "elif",
        "is",
        "not",
        "Ok",
        "vec!",
        "|",
        "yield",
    ];
    let langs = [
        Language::Python,
        Language::JavaScript,
        Language::Go,
        Language::Rust,
        Language::Java,
        Language::CSharp,
        Language::Ruby,
        Language::Php,
        Language::Cpp,
        Language::Swift,
    ];
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..3000 {
        let len = (next() % 40) as usize;
        let text: String = (0..len)
            .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
            .collect::<Vec<_>>()
            .join(if round % 2 == 0 { " " } else { "" });
        let lines = u32::try_from(text.lines().count()).unwrap_or(1) + 1;
        let change = Change {
            kind: ChangeKind::Modified,
            old_path: Some("a.x".into()),
            new_path: Some("a.x".into()),
            added: std::iter::once(1..lines + 1).collect(),
            removed: std::iter::once(1..lines + 1).collect(),
            binary: false,
            too_large: None,
        };
        let lang = langs[round % langs.len()];
        let (new, old) = (
            Lexed::new(lang, text.as_bytes(), false),
            Lexed::new(lang, b"if x == 17: return 42", false),
        );
        let _ = super::analyze(lang, &change, Some(&new), Some(&old));
        let _ = Tokens::new(lang, text.as_bytes());
    }
}

#[test]
fn the_quick_filter() {
    use super::may_branch;
    for line in [
        "if (a, b) == (17, 25):",
        "if func_str.strip() == \"x**2\":",
        "if (input === 'abc') return 42;",
        "    case 'hello':",
        "  when 'hello' then 42",
        "        \"x**2+1\" => 17,",
        "        (17, 25) => 42,",
        "if (\"hello\".equals(input)) return 5;",
        "if n == 7919:",
        "if strcmp(s, \"abc\") == 0",
        "  input === 'abc' ? 42 : input.length;",
    ] {
        assert!(may_branch(line.as_bytes()), "{line}");
    }
    for line in [
        "# only when the feature flag enables the match",
        "if x1 == y:",
        "if n == 0:",
        "    assert len(x) == 1",
        "items.map((x) => x + 1)",
        "if err != nil {",
    ] {
        assert!(!may_branch(line.as_bytes()), "{line}");
    }
}

#[test]
fn only_added_lines_are_filtered() {
    use super::worth_reading;
    let one = |r: std::ops::Range<u32>| vec![r];
    let text = b"a = 1\nif x == 'abc':\n    return 42\nb = 2\n";
    assert!(worth_reading(&one(2..3), text));
    assert!(!worth_reading(&[1..2, 4..5], text));
    assert!(worth_reading(&one(1..6), text), "the whole file");
    assert!(!worth_reading(&one(1..2), text), "the first line only");
    assert!(!worth_reading(&one(9..12), text), "past the end");
}

#[test]
fn each_language_names_the_test_a_line_defines() {
    use super::evidence::test_name;
    let cases = [
        (
            Language::Python,
            "    def test_add(self):",
            Some("test_add"),
        ),
        (Language::Python, "    x = add(1, 2)", None),
        (
            Language::Go,
            "func TestAdd(t *testing.T) {",
            Some("TestAdd"),
        ),
        (Language::Rust, "    fn adds_two() {", Some("adds_two")),
        (
            Language::JavaScript,
            "  it('adds two', () => {",
            Some("adds two"),
        ),
        (Language::Ruby, "  it 'adds two' do", Some("adds two")),
        (Language::Ruby, "  def test_add", Some("test_add")),
        (Language::Java, "    void addsTwo() {", Some("addsTwo")),
        (
            Language::CSharp,
            "    public void AddsTwo()",
            Some("AddsTwo"),
        ),
        (
            Language::Php,
            "    public function testAdd(): void",
            Some("testAdd"),
        ),
        (Language::Swift, "    func testAdd() {", Some("testAdd")),
        (Language::Cpp, "TEST(Calc, Adds) {", Some("Calc, Adds")),
        (Language::Elixir, "  test \"adds two\" do", Some("adds two")),
    ];
    for (lang, line, name) in cases {
        assert_eq!(test_name(lang, line).as_deref(), name, "{lang:?}: {line}");
    }
}
