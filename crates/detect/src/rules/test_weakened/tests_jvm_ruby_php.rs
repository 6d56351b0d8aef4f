//! `test-weakened` on what PHP, Ruby and the JVM languages write: checks that stand for
//! several (`expectExceptionObject`), mock expectations, Kotlin's statements, Ruby's calls
//! without brackets.

use crate::Rule;
use crate::testing::{Spec::*, messages, run};

fn flagged(path: &str, old: &str, new: &str) -> Vec<String> {
    messages(&run(&[Modify(path, old, new)]), Rule::TestWeakened)
}

fn php(body: &str) -> String {
    format!(
        "<?php\nclass GateTest extends TestCase\n{{\n    public function testAuthorizeThrows()\n    {{\n{body}        $this->gate()->authorize('create');\n    }}\n}}\n"
    )
}

const THREE_EXPECTATIONS: &str = "        $this->expectException(AuthorizationException::class);\n        $this->expectExceptionMessage('You are not an admin.');\n        $this->expectExceptionCode(0);\n";

#[test]
fn expect_exception_object_stands_for_class_message_and_code() {
    let p = "tests/GateTest.php";
    let base = php(THREE_EXPECTATIONS);
    for head in [
        "        $this->expectExceptionObject(new AuthorizationException('You are not an admin.', 0));\n",
        // Built elsewhere: PHPUnit expects all three of what it holds.
        "        $this->expectExceptionObject($this->denied);\n",
    ] {
        assert!(flagged(p, &base, &php(head)).is_empty(), "{head}");
    }
    // Fewer than it replaces: the class and the message, not the code.
    let two = "        $this->expectException(AuthorizationException::class);\n        $this->expectExceptionMessage('You are not an admin.');\n";
    assert!(
        flagged(
            p,
            &php(two),
            &php("        $this->expectExceptionObject(new AuthorizationException('You are not an admin.'));\n")
        )
        .is_empty()
    );
    // Still a weakening: the message expectation dropped, with or without the object form.
    let only_class = "        $this->expectException(AuthorizationException::class);\n";
    assert_eq!(flagged(p, &php(two), &php(only_class)).len(), 1);
    assert_eq!(
        flagged(
            p,
            &php(two),
            &php("        $this->expectExceptionObject(new AuthorizationException());\n")
        ),
        [
            "`testAuthorizeThrows` checks less: 2 checks at the base, 1 now (gone: `$this->expectException(AuthorizationException::class)`, `$this->expectExceptionMessage('You are not an admin.')`)"
        ]
    );
}

fn provider(first: &str) -> String {
    format!(
        "<?php\nclass ProviderTest extends TestCase\n{{\n    public function testRetrieveById()\n    {{\n        $mock = m::mock(stdClass::class);\n{first}        $mock->shouldReceive('second')->once()->andReturn('baz');\n        $provider = $this->provider();\n        $provider->expects($this->once())->method('createModel')->willReturn($mock);\n        $this->assertSame('bar', $provider->retrieveById(1));\n    }}\n}}\n"
    )
}

#[test]
fn mock_expectations_count_once_each_and_stubs_not_at_all() {
    let p = "tests/ProviderTest.php";
    let base = provider("        $mock->shouldReceive('first')->once()->andReturn('bar');\n");
    for head in [
        // Mockery's shorthand for the same expectation.
        "        $mock->expects('first')->andReturn('bar');\n",
        "        $mock->shouldReceive('first')->times(1)->andReturn('bar');\n",
        "        $mock->shouldReceive('first')->atLeast()->once()->andReturn('bar');\n",
    ] {
        assert!(flagged(p, &base, &provider(head)).is_empty(), "{head}");
    }
    // One expectation of two on the same name removed: counted per occurrence, not per name.
    assert_eq!(
        flagged(p, &base, &provider("")),
        [
            "`testRetrieveById` checks less: 4 checks at the base, 3 now (gone: `shouldReceive('first')->once()->andReturn('bar')`)"
        ]
    );
    // An expectation turned into a stub: it no longer checks the call.
    for head in [
        "        $mock->allows('first')->andReturn('bar');\n",
        "        $mock->shouldReceive('first')->andReturn('bar');\n",
        "        $mock->shouldReceive('first')->zeroOrMoreTimes()->andReturn('bar');\n",
        "        $mock->shouldAllowMockingProtectedMethods()->shouldReceive('first')->andReturn('bar');\n",
    ] {
        assert_eq!(flagged(p, &base, &provider(head)).len(), 1, "{head}");
    }
    // A facade's expectation (`File::expects`) is the mock's.
    let facade = base.replace(
        "$mock->shouldReceive('first')->once()",
        "File::expects('first')",
    );
    assert!(flagged(p, &base, &facade).is_empty());
    assert_eq!(
        flagged(
            p,
            &facade,
            &facade.replace("File::expects('first')", "File::allows('first')")
        )
        .len(),
        1
    );
    // PHPUnit's `expects($this->any())` is a stub too.
    let any = base.replace("expects($this->once())", "expects($this->any())");
    assert_eq!(flagged(p, &base, &any).len(), 1);
    // A stub added or removed changes nothing.
    let stubbed = provider(
        "        $mock->shouldReceive('first')->once()->andReturn('bar');\n        $mock->shouldAllowMockingProtectedMethods()->shouldReceive('third')->zeroOrMoreTimes();\n",
    );
    assert!(flagged(p, &stubbed, &base).is_empty());
}

#[test]
fn a_test_left_with_stubs_only_checks_nothing() {
    let p = "tests/ProviderTest.php";
    let base = "<?php\nclass ProviderTest extends TestCase\n{\n    public function testFetch()\n    {\n        $mock = m::mock(Api::class);\n        $mock->shouldReceive('fetch')->once()->andReturn(1);\n        (new Client($mock))->run();\n    }\n}\n";
    let head = base.replace("->once()", "");
    assert_eq!(
        flagged(p, base, &head),
        ["`testFetch` no longer checks anything: 1 check at the base, none now"]
    );
}

#[test]
fn mocha_expectations_count_per_occurrence() {
    let p = "test/client_test.rb";
    let base = "class ClientTest < Minitest::Test\n  def test_run\n    api.expects(:fetch).returns(1)\n    api.expects(:store).once\n    Client.new(api).run\n  end\nend\n";
    assert_eq!(
        flagged(p, base, &base.replace("    api.expects(:store).once\n", "")).len(),
        1
    );
    // A stub in place of an expectation checks nothing.
    assert_eq!(
        flagged(
            p,
            base,
            &base.replace("api.expects(:store).once", "api.stubs(:store)")
        )
        .len(),
        1
    );
    assert!(flagged(p, base, &base.replace("returns(1)", "returns(2)")).is_empty());
}

const COP_SPEC: &str = "RSpec.describe Foo do\n  it 'registers an offense' do\n    expect_offense(<<~RUBY)\n      x\n      ^ Bad.\n    RUBY\n\n    expect_correction(\"y\\n\")\n  end\nend\n";

#[test]
fn ruby_calls_without_brackets_count_like_calls_with() {
    let p = "spec/foo_spec.rb";
    let head = COP_SPEC.replace(
        "    expect_correction(\"y\\n\")\n",
        "    expect_no_corrections\n",
    );
    assert!(flagged(p, COP_SPEC, &head).is_empty());
    // The correction's expectation removed with nothing in its place.
    assert_eq!(
        flagged(
            p,
            COP_SPEC,
            &COP_SPEC.replace("    expect_correction(\"y\\n\")\n", "")
        ),
        [
            "`registers an offense` checks less: 2 checks at the base, 1 now (gone: `expect_correction(\"y\\n\")`)"
        ]
    );
    // A helper called without brackets, then dropped.
    let base = "class RecordTest < ActiveSupport::TestCase\n  test \"saves\" do\n    assert_equal 1, Record.count\n    expect_no_errors record\n  end\nend\n";
    assert_eq!(
        flagged(p, base, &base.replace("    expect_no_errors record\n", "")).len(),
        1
    );
    assert!(
        flagged(
            p,
            base,
            &base.replace("expect_no_errors record", "expect_no_errors(record)")
        )
        .is_empty()
    );
}

#[test]
fn ruby_array_argument_without_brackets_is_one_operand() {
    let p = "test/models/reflection_test.rb";
    let test = |line: &str| {
        format!(
            "class ReflectionTest < ActiveSupport::TestCase\n  test \"macros\" do\n    {line}\n  end\nend\n"
        )
    };
    let base = test("assert_equal [ :one ], macros");
    for line in [
        "assert_equal [ :one, :one, :many ], macros",
        "assert_equal [:one, :one, :many], macros",
    ] {
        assert!(flagged(p, &base, &test(line)).is_empty(), "{line}");
    }
    assert_eq!(
        flagged(p, &base, &test("assert_equal macros, macros")),
        ["`assert_equal macros, macros` in `macros` cannot fail"]
    );
}

#[test]
fn identical_calls_compared_can_fail() {
    let p = "src/test/kotlin/CacheControlTest.kt";
    let base = "class CacheControlTest {\n  @Test\n  fun interned() {\n    val value = parse(\"a\")\n    assertThat(value.toString()).isEqualTo(\"a\")\n  }\n}\n";
    let call = base.replace(
        "isEqualTo(\"a\")\n",
        "isEqualTo(\"a\")\n    assertThat(value.toString()).isSameInstanceAs(value.toString())\n",
    );
    assert!(flagged(p, base, &call).is_empty());
    let same = base.replace(
        "isEqualTo(\"a\")\n",
        "isEqualTo(\"a\")\n    assertThat(value).isSameInstanceAs(value)\n",
    );
    assert_eq!(flagged(p, base, &same).len(), 1);
}

#[test]
fn a_helper_call_moved_into_a_split_off_test_is_not_lost() {
    let p = "src/test/kotlin/OkHttpTest.kt";
    let helper = "  private fun localRequest() {\n    assertEquals(200, call().code)\n    assertEquals(1, calls())\n  }\n";
    let base = format!(
        "class OkHttpTest {{\n  @Test\n  fun testRequest() {{\n    assertEquals(200, remote().code)\n    localRequest()\n  }}\n\n{helper}}}\n"
    );
    let split = format!(
        "class OkHttpTest {{\n  @Test\n  fun testRequest() {{\n    assertEquals(200, remote().code)\n  }}\n\n  @Test\n  fun testLocal() {{\n    localRequest()\n  }}\n\n{helper}}}\n"
    );
    assert!(flagged(p, &base, &split).is_empty());
    let dropped = format!(
        "class OkHttpTest {{\n  @Test\n  fun testRequest() {{\n    assertEquals(200, remote().code)\n  }}\n\n{helper}}}\n"
    );
    assert_eq!(flagged(p, &base, &dropped).len(), 1);
}
