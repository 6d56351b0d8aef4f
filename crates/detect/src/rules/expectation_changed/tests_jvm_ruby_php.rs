//! `expectation-changed` on Ruby's and PHP's strings, whose single quotes keep backslashes.

use crate::Rule;
use crate::testing::{Spec::*, messages, run};

fn notes(path: &str, old: &str, new: &str) -> Vec<String> {
    messages(&run(&[Modify(path, old, new)]), Rule::ExpectationChanged)
}

#[test]
fn single_quoted_strings_are_read_as_their_value() {
    let rb = |lit: &str| {
        format!(
            "class MarkdownTest < ActiveSupport::TestCase\n  test \"escapes\" do\n    assert_equal {lit}, convert(\"[text](x)\")\n  end\nend\n"
        )
    };
    let p = "test/markdown_test.rb";
    assert!(notes(p, &rb(r#""[text\\](x)""#), &rb(r"'[text\](x)'")).is_empty());
    assert!(notes(p, &rb(r#""it's \"x\"""#), &rb(r#"'it\'s "x"'"#)).is_empty());
    // A different string is a new expectation.
    assert_eq!(
        notes(p, &rb(r#""[text](x)""#), &rb(r"'[text\](x)'")).len(),
        1
    );
    let php = |lit: &str| {
        format!(
            "<?php\nclass PathTest extends TestCase\n{{\n    public function testSeparator()\n    {{\n        $this->assertSame({lit}, sep());\n    }}\n}}\n"
        )
    };
    let p = "tests/PathTest.php";
    assert!(notes(p, &php(r#""a\\b""#), &php(r"'a\b'")).is_empty());
    assert_eq!(notes(p, &php(r#""a\\b""#), &php(r"'a\\\\b'")).len(), 1);
}
