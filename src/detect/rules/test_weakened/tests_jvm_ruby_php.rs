//! `test-weakened` on what PHP, Ruby and the JVM languages write: checks that stand for
//! several (`expectExceptionObject`), mock expectations, Kotlin's statements, Ruby's calls
//! without brackets.

use crate::detect::Rule;
use crate::detect::testing::{Spec::*, messages, run};

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
