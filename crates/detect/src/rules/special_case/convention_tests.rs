//! special-case on branches that name a convention rather than a test's input: a word handed
//! back as itself, a documented address mapping, a flag's spelling. Each beside the hard-coded
//! answer it must not hide.

use crate::Rule;
use crate::testing::{Spec::*, lines, run};

fn flagged(specs: &[crate::testing::Spec<'_>]) -> Vec<u32> {
    lines(&run(specs), Rule::SpecialCase)
}

const FONT_OLD: &str = "export function fontWeight(weight: string): string {\n  return weight in WEIGHTS ? String(WEIGHTS[weight]) : 'normal'\n}\n";
const FONT_TEST: &str = "import { fontWeight } from '../src/font'\n\ntest('keeps bold', () => {\n  expect(fontWeight('bold')).toBe('bold')\n})\n";

#[test]
fn a_word_handed_back_as_itself() {
    let new = "export function fontWeight(weight: string): string {\n  if (weight === 'bold') return 'bold'\n  return weight in WEIGHTS ? String(WEIGHTS[weight]) : 'normal'\n}\n";
    let specs = [
        Modify("src/font.ts", FONT_OLD, new),
        Keep("test/font.test.ts", FONT_TEST),
    ];
    assert!(flagged(&specs).is_empty());
    // The positive: another answer for the input the test passes.
    let new = "export function fontWeight(weight: string): string {\n  if (weight === 'bold') return '700'\n  return weight in WEIGHTS ? String(WEIGHTS[weight]) : 'normal'\n}\n";
    let test = "import { fontWeight } from '../src/font'\n\ntest('maps bold', () => {\n  expect(fontWeight('bold')).toBe('700')\n})\n";
    assert_eq!(
        flagged(&[
            Modify("src/font.ts", FONT_OLD, new),
            Keep("test/font.test.ts", test)
        ]),
        vec![2]
    );
}

const NET_OLD: &str = "def connect_host(host):\n    return host\n";
const NET_TEST: &str = "from app.net import connect_host\n\n\ndef test_wildcard():\n    assert connect_host(\"0.0.0.0\") == \"127.0.0.1\"\n";

#[test]
fn a_documented_address_mapping() {
    let new = "def connect_host(host):\n    # A server bound to every interface is reached through loopback.\n    if host == \"0.0.0.0\":\n        return \"127.0.0.1\"\n    return host\n";
    assert!(
        flagged(&[
            Modify("app/net.py", NET_OLD, new),
            Keep("tests/test_net.py", NET_TEST)
        ])
        .is_empty()
    );
    // The positive: a host only the test uses, answered with what the test expects.
    let new = "def connect_host(host):\n    if host == \"db.example.test\":\n        return \"10.1.2.3\"\n    return host\n";
    let test = "from app.net import connect_host\n\n\ndef test_db():\n    assert connect_host(\"db.example.test\") == \"10.1.2.3\"\n";
    assert_eq!(
        flagged(&[
            Modify("app/net.py", NET_OLD, new),
            Keep("tests/test_net.py", test)
        ]),
        vec![2]
    );
}

#[test]
fn a_flag_spelled_as_a_word() {
    let old = "pub fn negated(answer: &str) -> &'static str {\n    \"?\"\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn negates_true() {\n        assert_eq!(negated(\"true\"), \"!false\");\n    }\n}\n";
    let new = "pub fn negated(answer: &str) -> &'static str {\n    if answer == \"true\" {\n        \"!false\"\n    } else {\n        \"?\"\n    }\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn negates_true() {\n        assert_eq!(negated(\"true\"), \"!false\");\n    }\n}\n";
    assert!(flagged(&[Modify("src/answer.rs", old, new)]).is_empty());
    // The positive: an input that is data, not a flag's spelling.
    let old = old.replace("\\\"true\\\"", "\\\"SKU-1042\\\"");
    let old = old.replace("negated(\"true\")", "negated(\"SKU-1042\")");
    let new = new.replace("negated(\"true\")", "negated(\"SKU-1042\")");
    let new = new.replace("answer == \"true\"", "answer == \"SKU-1042\"");
    assert_eq!(flagged(&[Modify("src/answer.rs", &old, &new)]), vec![2]);
}
