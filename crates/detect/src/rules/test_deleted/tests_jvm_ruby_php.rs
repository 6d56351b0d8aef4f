//! `test-deleted` on Kotlin, whose statements end at the line's end: helpers after a test, a
//! statement continued by a call on the next line, expression bodies.

use crate::Rule;
use crate::testing::{Spec::*, messages, run};

fn deleted(path: &str, old: &str, new: &str) -> Vec<String> {
    messages(&run(&[Modify(path, old, new)]), Rule::TestDeleted)
}

#[test]
fn a_kotlin_helper_after_a_test_is_not_a_test() {
    let p = "src/test/kotlin/CacheTest.kt";
    let test = "  @Test\n  fun cacheHit() {\n    enableCache()\n    assertThat(fetch()).isEqualTo(\"abc\")\n  }\n";
    let helper = "  private fun enableCache() {\n    client = client.newBuilder().cache(cache).build()\n  }\n";
    let base = format!("class CacheTest {{\n{test}\n{helper}}}\n");
    let head = format!("class CacheTest {{\n{helper}\n{test}}}\n");
    assert!(deleted(p, &base, &head).is_empty());
    // After a test with an expression body, too.
    let expr = "  @Test\n  fun cacheMiss() = assertThat(fetch()).isNull()\n";
    let base = format!("class CacheTest {{\n{expr}\n{helper}}}\n");
    let head = format!("class CacheTest {{\n{helper}\n{expr}}}\n");
    assert!(deleted(p, &base, &head).is_empty());
}

const PARSER: &str = "class ParserTest {\n  @Test\n  fun first() {\n    assertThat(parse(\"1\")).isEqualTo(1)\n  }\n\n  @Test\n  fun second() {\n    assertThat(parse(\"2\")).isEqualTo(2)\n  }\n}\n";

#[test]
fn kotlin_statements_are_not_read_as_definitions() {
    let p = "src/test/kotlin/ParserTest.kt";
    let second = PARSER.replace("isEqualTo(2)", "isEqualTo(3)");
    for first in [
        // A line ending in a name, then a call: two statements.
        "    val result = parse(\"1\") ?: fallback\n    assertThat(result).isEqualTo(1)\n",
        // An expression body inside an object: it ends at the line's end.
        "    val body = object : RequestBody() {\n      override fun isOneShot() = true\n    }\n    assertThat(parse(\"1\")).isEqualTo(1)\n",
        // Infix assertions whose right side is a call.
        "    parse(\"1\") shouldBe listOf(1)\n",
    ] {
        let head = second.replace("    assertThat(parse(\"1\")).isEqualTo(1)\n", first);
        assert!(deleted(p, PARSER, &head).is_empty(), "{first}");
    }
    // Still a deletion.
    let gone = PARSER.replace(
        "\n  @Test\n  fun second() {\n    assertThat(parse(\"2\")).isEqualTo(2)\n  }\n",
        "",
    );
    assert_eq!(
        deleted(p, PARSER, &gone),
        [
            "test `ParserTest::second` (line 8 at the base) is deleted and found nowhere else in the change"
        ]
    );
}

#[test]
fn coroutine_tests_and_brace_styles_keep_their_bodies() {
    // `= runTest {`: the lambda is the body; C# and PHP put the brace on its own line.
    let kt = "class FlowTest {\n  @Test\n  fun emits() = runTest {\n    assertThat(flow.first()).isEqualTo(1)\n  }\n\n  @Test\n  fun closes() = runTest {\n    assertThat(flow.count()).isEqualTo(0)\n  }\n}\n";
    let gone = kt.replace(
        "\n  @Test\n  fun closes() = runTest {\n    assertThat(flow.count()).isEqualTo(0)\n  }\n",
        "",
    );
    assert_eq!(deleted("src/test/kotlin/FlowTest.kt", kt, &gone).len(), 1);
    let java = "class IoTest {\n  @Test\n  void reads()\n      throws IOException {\n    assertEquals(1, read());\n  }\n\n  @Test\n  void writes() {\n    assertEquals(2, write());\n  }\n}\n";
    let gone = java.replace(
        "  @Test\n  void reads()\n      throws IOException {\n    assertEquals(1, read());\n  }\n\n",
        "",
    );
    assert_eq!(
        deleted("src/test/java/IoTest.java", java, &gone),
        [
            "test `IoTest::reads` (line 3 at the base) is deleted and found nowhere else in the change"
        ]
    );
}

const SKIPPED: &str = "<?php\nfinal class SkippedAttemptTest extends TestCase\n{\n    public function testOne(): void\n    {\n        $this->markTestSkipped('Skipped on second attempt');\n    }\n}\n";

#[test]
fn test_classes_under_a_fixtures_directory_are_not_tests_of_the_suite() {
    let fixture = "tests/end-to-end/retry/_files/SkippedAttemptTest.php";
    let report = run(&[Add(fixture, SKIPPED)]);
    assert!(report.flags.is_empty(), "{:?}", report.flags);
    assert!(deleted(fixture, SKIPPED, "<?php\n").is_empty());
    // The same skip in a test of the suite.
    let report = run(&[Add("tests/unit/SkippedAttemptTest.php", SKIPPED)]);
    assert_eq!(messages(&report, Rule::SkipMarker).len(), 1);
    // A test moved into a fixtures directory is no longer run: it is not found there.
    let test = SKIPPED.replace(
        "$this->markTestSkipped('Skipped on second attempt')",
        "$this->assertTrue(ok())",
    );
    let two = test.replace("    public function testOne", "    public function testTwo(): void\n    {\n        $this->assertTrue(two());\n    }\n\n    public function testOne");
    let report = run(&[
        Modify(
            "tests/unit/AttemptTest.php",
            &two,
            &test.replace("testOne", "testTwo").replace("ok()", "two()"),
        ),
        Add("tests/_files/AttemptTest.php", &test),
    ]);
    assert_eq!(
        messages(&report, Rule::TestDeleted).len(),
        1,
        "{:?}",
        report.flags
    );
}
