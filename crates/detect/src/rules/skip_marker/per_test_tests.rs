//! skip-marker judged per test: new tests, stored markers, moves, every language.

use super::tests::{added, modified};
use crate::flag::{Rule, Severity};
use crate::testing::{Spec::*, lines, run};

const OLD_D: &str = "def test_old():\n    assert f() == 1\n";

#[test]
fn a_conditional_skip_on_a_new_test_is_not_flagged() {
    for marker in [
        "@pytest.mark.skipif(sys.version_info < (3, 13), reason='needs 3.13')",
        "@pytest.mark.skipif(os.name != 'nt', reason='windows')",
        "@unittest.skipUnless(HAS_NUMPY, 'numpy')",
        "@pytest.mark.xfail(sys.platform == 'win32', reason='x')",
    ] {
        let new = format!(
            "import sys\nimport pytest\n\ndef test_old():\n    assert f() == 1\n\n\n{marker}\ndef test_new_feature():\n    assert g() == 2\n"
        );
        assert!(
            modified("tests/test_d.py", OLD_D, &new).is_empty(),
            "{marker}"
        );
    }
    // In the body: importorskip, a skip under an `if`, an `except ImportError`.
    for body in [
        "    readline = pytest.importorskip('readline')\n    assert g()\n",
        "    if sys.platform == 'win32':\n        pytest.skip('posix only')\n    assert g()\n",
        "    try:\n        import numpy\n    except ImportError:\n        pytest.skip('no numpy')\n    assert g()\n",
    ] {
        let new = format!("{OLD_D}\ndef test_new():\n{body}");
        assert!(
            modified("tests/test_d.py", OLD_D, &new).is_empty(),
            "{body}"
        );
    }
    // A new test file guarded as a whole.
    assert!(
        added(
            "tests/test_np.py",
            "import pytest\nnp = pytest.importorskip('numpy')\n\ndef test_a():\n    assert np.ones(1)\n"
        )
        .is_empty()
    );
}

#[test]
fn a_plain_skip_on_a_new_test_is_flagged() {
    for (marker, line) in [
        ("@pytest.mark.skip(reason='later')", 4),
        ("@pytest.mark.skipif(True, reason='broken')", 4),
        ("@pytest.mark.xfail(reason='broken')", 4),
        ("@unittest.skip('later')", 4),
    ] {
        let new = format!("{OLD_D}\n{marker}\ndef test_new():\n    assert g() == 2\n");
        assert_eq!(
            modified("tests/test_d.py", OLD_D, &new),
            vec![line],
            "{marker}"
        );
    }
    let new = format!("{OLD_D}\ndef test_new():\n    pytest.skip('later')\n    assert g()\n");
    assert_eq!(modified("tests/test_d.py", OLD_D, &new), vec![5]);
}

#[test]
fn any_skip_on_an_existing_test_is_flagged() {
    let new = "import sys\nimport pytest\n\n@pytest.mark.skipif(sys.version_info < (3, 13), reason='needs 3.13')\ndef test_old():\n    assert f() == 1\n";
    assert_eq!(modified("tests/test_d.py", OLD_D, new), vec![4]);
    // Renamed in place (same body) and guarded: the same test.
    let new = "import sys\n\n@pytest.mark.skipif(sys.platform == 'win32', reason='x')\ndef test_renamed():\n    assert f() == 1\n";
    assert_eq!(modified("tests/test_d.py", OLD_D, new), vec![3]);
    // Renamed with a small edit and guarded: most of its body is the old test's.
    let old = "def test_old():\n    a = make()\n    b = a.run()\n    assert b == 1\n";
    let new = "@pytest.mark.skipif(sys.platform == 'win32', reason='x')\ndef test_old_v2():\n    a = make()\n    b = a.run()\n    assert b == 2\n";
    assert_eq!(modified("tests/test_d.py", old, new), vec![1]);
    // Moved to another file and guarded there.
    let r = run(&[
        Modify(
            "tests/test_a.py",
            "def test_keep():\n    pass\n\ndef test_socket():\n    assert sock()\n",
            "def test_keep():\n    pass\n",
        ),
        Add(
            "tests/test_b.py",
            "import sys\n\n@pytest.mark.skipif(sys.platform != 'linux', reason='x')\ndef test_socket():\n    assert sock()\n",
        ),
    ]);
    assert_eq!(lines(&r, Rule::SkipMarker), vec![3]);
    // The same, the file it left holding no marker at all, and a guard turned into a plain skip.
    let r = run(&[
        Delete("tests/test_a.py", "def test_socket():\n    assert sock()\n"),
        Add(
            "tests/test_b.py",
            "import pytest\npytestmark = pytest.mark.skipif(not LINUX, reason='x')\n\ndef test_socket():\n    assert sock()\n",
        ),
    ]);
    assert_eq!(lines(&r, Rule::SkipMarker), vec![2]);
    let old =
        "@pytest.mark.skipif(sys.version_info < (3, 8), reason='x')\ndef test_a():\n    pass\n";
    let new = "@pytest.mark.skipif(True, reason='x')\ndef test_a():\n    pass\n";
    assert_eq!(modified("tests/test_a.py", old, new), vec![1]);
}

#[test]
fn markers_are_compared_per_test() {
    // F9, F10: a guard dropped from one test, a plain skip added to another.
    let old = "import sys\nimport pytest\n\n\n@pytest.mark.skipif(sys.version_info < (3, 8), reason='old python')\ndef test_one():\n    assert f()\n\n\ndef test_two():\n    assert g()\n";
    let new = "import sys\nimport pytest\n\n\ndef test_one():\n    assert f()\n\n\n@pytest.mark.skipif(True, reason='broken, skip for now')\ndef test_two():\n    assert g()\n";
    assert_eq!(modified("tests/test_a.py", old, new), vec![9]);
    let old = old.replace(
        "@pytest.mark.skipif(sys.version_info < (3, 8), reason='old python')",
        "@pytest.mark.skipif(\n    sys.version_info < (3, 8),\n    reason='old python',\n)",
    );
    let new = new.replace(
        "@pytest.mark.skipif(True, reason='broken, skip for now')",
        "@pytest.mark.skipif(\n    True,\n    reason='broken, skip for now',\n)",
    );
    assert_eq!(modified("tests/test_a.py", &old, &new), vec![9]);
    // Two guarded tests swap nothing: each keeps its own guard, reworded.
    let old = "@pytest.mark.skipif(A, reason='a')\ndef test_one():\n    pass\n\n@pytest.mark.skipif(B, reason='b')\ndef test_two():\n    pass\n";
    let new = "@pytest.mark.skipif(A2, reason='a')\ndef test_one():\n    pass\n\n@pytest.mark.skipif(B2, reason='b')\ndef test_two():\n    pass\n";
    assert!(modified("tests/test_a.py", old, new).is_empty());
}

#[test]
fn a_test_moved_with_its_marker_is_not_flagged() {
    // F8: `test_socket` moves to another file with its guard; a new guarded test takes its place.
    let a_old = "import sys\nimport pytest\n\n\ndef test_keep():\n    assert 1\n\n\n@pytest.mark.skipif(\n    not sys.platform.startswith('linux'),\n    reason='linux only',\n)\ndef test_socket(tmp_path):\n    assert sock(tmp_path)\n";
    let a_new = "import sys\nimport pytest\n\n\ndef test_keep():\n    assert 1\n\n\n@pytest.mark.skipif(\n    sys.version_info < (3, 13),\n    reason='new in 3.13',\n)\ndef test_brand_new():\n    assert g()\n";
    let b_old = "def test_b():\n    assert 1\n";
    let b_new = "import sys\nimport pytest\n\n\ndef test_b():\n    assert 1\n\n\n@pytest.mark.skipif(\n    not sys.platform.startswith('linux'),\n    reason='linux only',\n)\ndef test_socket(tmp_path):\n    assert sock(tmp_path)\n";
    let r = run(&[
        Modify("tests/test_a.py", a_old, a_new),
        Modify("tests/test_b.py", b_old, b_new),
    ]);
    assert!(lines(&r, Rule::SkipMarker).is_empty(), "{:?}", r.flags);
    // A decorated class moved whole keeps its marker; the same class gaining it does not.
    let class =
        "@pytest.mark.skip(reason='x')\nclass TestX:\n    def test_a(self):\n        pass\n";
    let r = run(&[
        Delete("tests/test_a.py", class),
        Add("tests/test_b.py", class),
    ]);
    assert!(lines(&r, Rule::SkipMarker).is_empty(), "{:?}", r.flags);
    let bare = "class TestX:\n    def test_a(self):\n        pass\n";
    assert_eq!(modified("tests/test_a.py", bare, class), vec![1]);
}

#[test]
fn a_marker_not_on_a_test_is_judged_where_it_is_used() {
    // C11: a stored marker used by a new test, and a decorator on a helper.
    let old = "import pytest\n\ndef test_old():\n    assert f() == 1\n";
    let new = "import pytest\nfrom platform import python_implementation\n\nrequire_cpython_gc = pytest.mark.skipif(\n    python_implementation() != 'CPython', reason='gc',\n)\n\ndef test_old():\n    assert f() == 1\n\n\n@require_cpython_gc\ndef test_freed():\n    assert g()\n";
    assert!(modified("tests/test_e.py", old, new).is_empty());
    let old = "import pytest\n\ndef memray_limit_memory(limit):\n    return pytest.mark.limit_memory(limit)\n\ndef test_old():\n    assert f() == 1\n";
    let new = "import pytest\n\n@pytest.mark.skipif(sys.version_info >= (3, 15), reason='memray')\ndef memray_limit_memory(limit):\n    return pytest.mark.limit_memory(limit)\n\ndef test_old():\n    assert f() == 1\n";
    assert!(modified("tests/test_e.py", old, new).is_empty());
    // E3: a stored marker, old or new, put on an existing test is flagged on the test.
    let old = "import pytest\n\nneeds_gc = pytest.mark.skipif(True, reason='x')\n\ndef test_old():\n    assert f() == 1\n";
    let new = "import pytest\n\nneeds_gc = pytest.mark.skipif(True, reason='x')\n\n@needs_gc\ndef test_old():\n    assert f() == 1\n";
    let r = run(&[Modify("tests/test_e.py", old, new)]);
    assert_eq!(lines(&r, Rule::SkipMarker), vec![5]);
    assert_eq!(
        r.flags[0].message,
        "newly marks a test skipped: `needs_gc` (`pytest.mark.skipif`)"
    );
    let new = "import pytest\n\nbroken = pytest.mark.skip\n\n@broken\ndef test_old():\n    assert f() == 1\n";
    assert_eq!(
        modified(
            "tests/test_e.py",
            "import pytest\n\ndef test_old():\n    assert f() == 1\n",
            new
        ),
        vec![5]
    );
    // Even a guarded one: the test existed.
    let new = "import pytest\n\nneeds_gc = pytest.mark.skipif(not GC, reason='x')\n\n@needs_gc\ndef test_old():\n    assert f() == 1\n";
    assert_eq!(
        modified(
            "tests/test_e.py",
            "import pytest\n\ndef test_old():\n    assert f() == 1\n",
            new
        ),
        vec![5]
    );
    // A plain stored skip on a new test, and one stored through another name.
    let new = "import pytest\n\nbroken = pytest.mark.skip\nmarks = [broken]\n\ndef test_old():\n    assert f() == 1\n\n@pytest.mark.parametrize('x', [1], marks=marks)\ndef test_new(x):\n    assert x\n";
    assert_eq!(
        modified(
            "tests/test_e.py",
            "import pytest\n\ndef test_old():\n    assert f() == 1\n",
            new
        ),
        vec![9]
    );
    // A stored marker this file does not use (another module imports it) is flagged where it
    // is written; a skip inside a helper skips its callers, and is flagged too.
    assert_eq!(
        added(
            "tests/marks.py",
            "import pytest\n\nbroken = pytest.mark.skip\n"
        ),
        vec![3]
    );
    let new = "import pytest\n\ndef need_gpu():\n    pytest.skip('no gpu')\n\ndef test_old():\n    need_gpu()\n    assert f() == 1\n";
    assert_eq!(
        modified(
            "tests/test_e.py",
            "import pytest\n\ndef test_old():\n    assert f() == 1\n",
            new
        ),
        vec![4]
    );
}

/// One language's per-test cases: a guard on a new test (not flagged), the same guard on an
/// existing test (flagged), a marker moved from one existing test to another (flagged) and a
/// test moved to another file with its marker (not flagged).
struct PerTest<'a> {
    path: &'a str,
    other: &'a str,
    /// One test.
    one: &'a str,
    /// `one` and a new test born guarded.
    guarded_new: &'a str,
    /// `one`, guarded.
    guarded_old: (&'a str, u32),
    /// Two tests, the first marked; then the second marked instead, and the line flagged.
    swap: (&'a str, &'a str, u32),
}

fn per_test(c: &PerTest<'_>) {
    let p = c.path;
    assert!(
        modified(p, c.one, c.guarded_new).is_empty(),
        "{p}: guarded new test\n{}",
        c.guarded_new
    );
    assert_eq!(
        modified(p, c.one, c.guarded_old.0),
        vec![c.guarded_old.1],
        "{p}: guarded existing test"
    );
    assert_eq!(
        modified(p, c.swap.0, c.swap.1),
        vec![c.swap.2],
        "{p}: marker moved to another test"
    );
    // The marked test (the swap's first version) moves whole to another file.
    let r = run(&[Delete(p, c.swap.0), Add(c.other, c.swap.0)]);
    assert!(
        lines(&r, Rule::SkipMarker).is_empty(),
        "{p}: moved: {:?}",
        r.flags
    );
}

#[test]
fn per_test_in_every_language() {
    per_test(&PerTest {
        path: "web/a.test.js",
        other: "web/b.test.js",
        one: "it('a', () => {\n  expect(f()).toBe(1)\n})\n",
        guarded_new: "it('a', () => {\n  expect(f()).toBe(1)\n})\nit.skipIf(isWin)('b', () => {\n  expect(g()).toBe(2)\n})\ntest('c', async ({ browserName }) => {\n  test.skip(browserName === 'webkit', 'no')\n  expect(h()).toBe(3)\n})\nit('d', function () {\n  if (!db) {\n    this.skip()\n  }\n  expect(k()).toBe(4)\n})\n",
        guarded_old: (
            "it('a', function () {\n  if (!db) this.skip()\n  expect(f()).toBe(1)\n})\n",
            2,
        ),
        swap: (
            "it.skip('a', () => {\n  expect(f()).toBe(1)\n})\nit('b', () => {\n  expect(g()).toBe(2)\n})\n",
            "it('a', () => {\n  expect(f()).toBe(1)\n})\nit.skip('b', () => {\n  expect(g()).toBe(2)\n})\n",
            4,
        ),
    });
    assert_eq!(
        modified(
            "web/a.test.ts",
            "it('a', () => {\n  expect(f()).toBe(1)\n})\n",
            "it.skipIf(isWin)('a', () => {\n  expect(f()).toBe(1)\n})\n"
        ),
        vec![1]
    );
    per_test(&PerTest {
        path: "pkg/a_test.go",
        other: "pkg/b_test.go",
        one: "package x\n\nfunc TestA(t *testing.T) {\n\tcheck(t, f())\n}\n",
        guarded_new: "package x\n\nfunc TestA(t *testing.T) {\n\tcheck(t, f())\n}\n\nfunc TestB(t *testing.T) {\n\tif testing.Short() {\n\t\tt.Skip(\"short\")\n\t}\n\tcheck(t, g())\n}\n\nfunc TestC(t *testing.T) {\n\tif runtime.GOOS == \"windows\" { t.Skip(\"posix\") }\n\tcheck(t, h())\n}\n",
        guarded_old: (
            "package x\n\nfunc TestA(t *testing.T) {\n\tif testing.Short() {\n\t\tt.Skip(\"short\")\n\t}\n\tcheck(t, f())\n}\n",
            5,
        ),
        swap: (
            "package x\n\nfunc TestA(t *testing.T) {\n\tt.Skip(\"later\")\n\tcheck(t, f())\n}\n\nfunc TestB(t *testing.T) {\n\tcheck(t, g())\n}\n",
            "package x\n\nfunc TestA(t *testing.T) {\n\tcheck(t, f())\n}\n\nfunc TestB(t *testing.T) {\n\tt.Skip(\"later\")\n\tcheck(t, g())\n}\n",
            8,
        ),
    });
    per_test(&PerTest {
        path: "tests/it.rs",
        other: "tests/other.rs",
        one: "#[test]\nfn a() {\n    assert!(f());\n}\n",
        guarded_new: "#[test]\nfn a() {\n    assert!(f());\n}\n\n#[test]\n#[cfg_attr(windows, ignore)]\nfn b() {\n    assert!(g());\n}\n",
        guarded_old: (
            "#[test]\n#[cfg_attr(windows, ignore)]\nfn a() {\n    assert!(f());\n}\n",
            2,
        ),
        swap: (
            "#[test]\n#[ignore]\nfn a() {\n    assert!(f());\n}\n\n#[test]\nfn b() {\n    assert!(g());\n}\n",
            "#[test]\nfn a() {\n    assert!(f());\n}\n\n#[ignore]\n#[test]\nfn b() {\n    assert!(g());\n}\n",
            6,
        ),
    });
    per_test(&PerTest {
        path: "src/test/java/FooTest.java",
        other: "src/test/java/BarTest.java",
        one: "class FooTest {\n  @Test\n  void a() {\n    assertEquals(1, f());\n  }\n}\n",
        guarded_new: "class FooTest {\n  @Test\n  void a() {\n    assertEquals(1, f());\n  }\n\n  @Test\n  @DisabledOnOs(OS.WINDOWS)\n  void b() {\n    assertEquals(2, g());\n  }\n}\n",
        guarded_old: (
            "class FooTest {\n  @DisabledOnOs(OS.WINDOWS)\n  @Test\n  void a() {\n    assertEquals(1, f());\n  }\n}\n",
            2,
        ),
        swap: (
            "class FooTest {\n  @Disabled\n  @Test\n  void a() {\n    assertEquals(1, f());\n  }\n\n  @Test\n  void b() {\n    assertEquals(2, g());\n  }\n}\n",
            "class FooTest {\n  @Test\n  void a() {\n    assertEquals(1, f());\n  }\n\n  @Disabled\n  @Test\n  void b() {\n    assertEquals(2, g());\n  }\n}\n",
            7,
        ),
    });
    per_test(&PerTest {
        path: "Calc.Tests/CalcTests.cs",
        other: "Calc.Tests/MoreTests.cs",
        one: "public class CalcTests {\n  [Test]\n  public void A() {\n    Assert.AreEqual(1, F());\n  }\n}\n",
        guarded_new: "public class CalcTests {\n  [Test]\n  public void A() {\n    Assert.AreEqual(1, F());\n  }\n\n  [Test]\n  public void B() {\n    if (!Gpu.Present) { Assert.Ignore(\"no gpu\"); }\n    Assert.AreEqual(2, G());\n  }\n}\n",
        guarded_old: (
            "public class CalcTests {\n  [Test]\n  public void A() {\n    if (!Gpu.Present) Assert.Ignore(\"no gpu\");\n    Assert.AreEqual(1, F());\n  }\n}\n",
            4,
        ),
        swap: (
            "public class CalcTests {\n  [Fact(Skip = \"later\")]\n  public void A() {\n    Assert.Equal(1, F());\n  }\n\n  [Fact]\n  public void B() {\n    Assert.Equal(2, G());\n  }\n}\n",
            "public class CalcTests {\n  [Fact]\n  public void A() {\n    Assert.Equal(1, F());\n  }\n\n  [Fact(Skip = \"later\")]\n  public void B() {\n    Assert.Equal(2, G());\n  }\n}\n",
            7,
        ),
    });
    per_test(&PerTest {
        path: "spec/user_spec.rb",
        other: "spec/admin_spec.rb",
        one: "describe User do\n  it 'a' do\n    expect(f).to eq 1\n  end\nend\n",
        guarded_new: "describe User do\n  it 'a' do\n    expect(f).to eq 1\n  end\n\n  it 'b' do\n    skip 'posix only' if windows?\n    expect(g).to eq 2\n  end\nend\n",
        guarded_old: (
            "describe User do\n  it 'a' do\n    skip 'posix only' if windows?\n    expect(f).to eq 1\n  end\nend\n",
            3,
        ),
        swap: (
            "describe User do\n  xit 'a' do\n    expect(f).to eq 1\n  end\n\n  it 'b' do\n    expect(g).to eq 2\n  end\nend\n",
            "describe User do\n  it 'a' do\n    expect(f).to eq 1\n  end\n\n  xit 'b' do\n    expect(g).to eq 2\n  end\nend\n",
            6,
        ),
    });
    per_test(&PerTest {
        path: "tests/FooTest.php",
        other: "tests/BarTest.php",
        one: "<?php\nclass FooTest extends TestCase {\n  public function testA() {\n    $this->assertSame(1, f());\n  }\n}\n",
        guarded_new: "<?php\nclass FooTest extends TestCase {\n  public function testA() {\n    $this->assertSame(1, f());\n  }\n\n  public function testB() {\n    if (!extension_loaded('intl')) {\n      $this->markTestSkipped('intl');\n    }\n    $this->assertSame(2, g());\n  }\n}\n",
        guarded_old: (
            "<?php\nclass FooTest extends TestCase {\n  public function testA() {\n    if (!extension_loaded('intl')) {\n      $this->markTestSkipped('intl');\n    }\n    $this->assertSame(1, f());\n  }\n}\n",
            5,
        ),
        swap: (
            "<?php\nclass FooTest extends TestCase {\n  public function testA() {\n    $this->markTestSkipped('later');\n    $this->assertSame(1, f());\n  }\n\n  public function testB() {\n    $this->assertSame(2, g());\n  }\n}\n",
            "<?php\nclass FooTest extends TestCase {\n  public function testA() {\n    $this->assertSame(1, f());\n  }\n\n  public function testB() {\n    $this->markTestSkipped('later');\n    $this->assertSame(2, g());\n  }\n}\n",
            8,
        ),
    });
    per_test(&PerTest {
        path: "base/str_test.cc",
        other: "base/split_test.cc",
        one: "TEST(Str, A) {\n  EXPECT_EQ(1, f());\n}\n",
        guarded_new: "TEST(Str, A) {\n  EXPECT_EQ(1, f());\n}\n\nTEST(Str, B) {\n  if (!HasGpu()) GTEST_SKIP() << \"no gpu\";\n  EXPECT_EQ(2, g());\n}\n",
        guarded_old: (
            "TEST(Str, A) {\n  if (!HasGpu()) {\n    GTEST_SKIP();\n  }\n  EXPECT_EQ(1, f());\n}\n",
            3,
        ),
        swap: (
            "TEST(Str, DISABLED_A) {\n  EXPECT_EQ(1, f());\n}\n\nTEST(Str, B) {\n  EXPECT_EQ(2, g());\n}\n",
            "TEST(Str, A) {\n  EXPECT_EQ(1, f());\n}\n\nTEST(Str, DISABLED_B) {\n  EXPECT_EQ(2, g());\n}\n",
            5,
        ),
    });
    per_test(&PerTest {
        path: "Tests/AppTests.swift",
        other: "Tests/MoreTests.swift",
        one: "final class AppTests: XCTestCase {\n  func testA() throws {\n    XCTAssertEqual(f(), 1)\n  }\n}\n",
        guarded_new: "final class AppTests: XCTestCase {\n  func testA() throws {\n    XCTAssertEqual(f(), 1)\n  }\n\n  func testB() throws {\n    try XCTSkipIf(isCI, \"slow\")\n    XCTAssertEqual(g(), 2)\n  }\n\n  @Test(.disabled(if: isCI)) func c() {\n    #expect(h() == 3)\n  }\n}\n",
        guarded_old: (
            "final class AppTests: XCTestCase {\n  func testA() throws {\n    guard hasGpu else { throw XCTSkip(\"gpu\") }\n    XCTAssertEqual(f(), 1)\n  }\n}\n",
            3,
        ),
        swap: (
            "final class AppTests: XCTestCase {\n  func testA() throws {\n    throw XCTSkip(\"later\")\n  }\n\n  func testB() throws {\n    XCTAssertEqual(g(), 2)\n  }\n}\n",
            "final class AppTests: XCTestCase {\n  func testA() throws {\n    XCTAssertEqual(g(), 1)\n  }\n\n  func testB() throws {\n    throw XCTSkip(\"later\")\n  }\n}\n",
            7,
        ),
    });
    // ExUnit's markers are tags, never conditional: the guarded cases do not apply.
    let one = "defmodule AppTest do\n  test \"a\" do\n    assert f() == 1\n  end\nend\n";
    let swap_old = "defmodule AppTest do\n  @tag :skip\n  test \"a\" do\n    assert f() == 1\n  end\n\n  test \"b\" do\n    assert g() == 2\n  end\nend\n";
    let swap_new = "defmodule AppTest do\n  test \"a\" do\n    assert f() == 1\n  end\n\n  @tag :skip\n  test \"b\" do\n    assert g() == 2\n  end\nend\n";
    assert_eq!(modified("test/app_test.exs", swap_old, swap_new), vec![6]);
    let r = run(&[
        Delete("test/app_test.exs", swap_old),
        Add("test/other_test.exs", swap_old),
    ]);
    assert!(lines(&r, Rule::SkipMarker).is_empty(), "{:?}", r.flags);
    let new = "defmodule AppTest do\n  test \"a\" do\n    assert f() == 1\n  end\n\n  @tag :skip\n  test \"new\" do\n    assert g() == 2\n  end\nend\n";
    assert_eq!(modified("test/app_test.exs", one, new), vec![6]);
}

#[test]
fn groups_of_tests() {
    // A describe block skipped whole: its tests existed.
    let old = "describe('s', () => {\n  it('a', () => {\n    expect(f()).toBe(1)\n  })\n})\n";
    for new in [
        "xdescribe('s', () => {\n  it('a', () => {\n    expect(f()).toBe(1)\n  })\n})\n",
        "describe.skip('s', () => {\n  it('a', () => {\n    expect(f()).toBe(1)\n  })\n})\n",
    ] {
        assert_eq!(modified("web/s.test.js", old, new), vec![1], "{new}");
    }
    // A new class born guarded is not flagged; a new class skipped outright is; an existing
    // class guarded is.
    let one = "def test_old():\n    assert f()\n";
    let new = format!(
        "{one}\n@pytest.mark.skipif(not HAS_GPU, reason='gpu')\nclass TestGpu:\n    def test_a(self):\n        assert g()\n"
    );
    assert!(modified("tests/test_g.py", one, &new).is_empty());
    let new = format!(
        "{one}\n@pytest.mark.skip\nclass TestGpu:\n    def test_a(self):\n        assert g()\n"
    );
    assert_eq!(modified("tests/test_g.py", one, &new), vec![4]);
    let old = "class TestGpu:\n    def test_a(self):\n        assert g()\n";
    let new = "class TestGpu:\n    pytestmark = pytest.mark.skipif(not HAS_GPU, reason='gpu')\n\n    def test_a(self):\n        assert g()\n";
    assert_eq!(modified("tests/test_g.py", old, new), vec![2]);
    // A module-level guard on a file whose tests existed.
    let new = format!("import pytest\nnp = pytest.importorskip('numpy')\n\n{one}");
    assert_eq!(modified("tests/test_g.py", one, &new), vec![2]);
}

#[test]
fn javascript_markers_picked_by_a_condition() {
    // A new file's tests run by a runner chosen on a capability.
    let new = "const itVm = vmAvailable ? it : it.skip\n\nitVm('runs', () => {\n  expect(run()).toBe(1)\n})\n";
    assert!(added("test/vm.test.js", new).is_empty());
    let new = "var describePromises = global.Promise ? describe : describe.skip\n\ndescribePromises('p', () => {\n  it('a', () => {\n    expect(f()).toBe(1)\n  })\n})\n";
    assert!(added("test/p.test.js", new).is_empty());
    // The same in a file whose tests existed: flagged where the alias is used, as a note
    // (the test still runs where the capability is there).
    let old = "it('a', () => {\n  expect(f()).toBe(1)\n})\n";
    let new =
        "const itVm = vmAvailable ? it : it.skip\n\nitVm('a', () => {\n  expect(f()).toBe(1)\n})\n";
    assert_eq!(modified("test/vm.test.js", old, new), vec![3]);
    let r = run(&[Modify("test/vm.test.js", old, new)]);
    assert_eq!(r.flags[0].severity, Severity::Note);
    assert_eq!(
        r.flags[0].message,
        "newly marks a test skipped: `itVm` (`it.skip`)"
    );
    // A plain alias of a skip on a new file's tests: no condition, flagged.
    let new = "const later = it.skip\n\nlater('runs', () => {\n  expect(run()).toBe(1)\n})\n";
    assert_eq!(added("test/vm.test.js", new), vec![3]);
}

#[test]
fn a_new_harness_file_skips_tests_that_may_exist() {
    // conftest.py is not a test module: a module-level skip there reaches the tests around it.
    let new = "import sys\nimport pytest\n\nif sys.platform != 'linux':\n    pytest.skip('linux', allow_module_level=True)\n";
    assert_eq!(added("tests/conftest.py", new), vec![5]);
    // The same in a new test module of its own (no test found in it) is not flagged.
    assert!(added("tests/test_linux.py", new).is_empty());
}

#[test]
fn a_guard_moved_from_a_test_into_a_helper_it_calls() {
    let old = "<?php\nclass ImgTest extends TestCase {\n  public function testAvif() {\n    if (!supports('AVIF')) {\n      $this->markTestSkipped('no avif');\n    }\n    $this->assertTrue(encode('AVIF'));\n  }\n}\n";
    let new = "<?php\nclass ImgTest extends TestCase {\n  public function testAvif() {\n    $this->ensure('AVIF');\n    $this->assertTrue(encode('AVIF'));\n  }\n\n  protected function ensure($f) {\n    if (!supports($f)) {\n      $this->markTestSkipped('no support');\n    }\n  }\n}\n";
    assert!(modified("tests/ImgTest.php", old, new).is_empty());
    // A skip in a new helper, with no test losing one, is flagged as before.
    let old = "<?php\nclass ImgTest extends TestCase {\n  public function testAvif() {\n    $this->assertTrue(encode('AVIF'));\n  }\n}\n";
    let new = "<?php\nclass ImgTest extends TestCase {\n  public function testAvif() {\n    $this->ensure('AVIF');\n    $this->assertTrue(encode('AVIF'));\n  }\n\n  protected function ensure($f) {\n    $this->markTestSkipped('later');\n  }\n}\n";
    assert_eq!(modified("tests/ImgTest.php", old, new), vec![9]);
}
