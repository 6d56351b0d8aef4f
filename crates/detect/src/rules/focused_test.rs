//! `focused-test`: a test newly focused, so that the rest of the suite stops running.
//!
//! JavaScript and TypeScript (Jest, Vitest, Mocha, Jasmine, node:test, AVA): `.only` on
//! `it`/`test`/`describe`/`context`/`suite`/`specify`, `fit`/`fdescribe`/`fcontext`/`ftest`, and
//! node:test's `{ only: true }` option. Ruby (RSpec, minitest-focus): `fit`/`fdescribe`/`fcontext`
//! and friends, `focus: true` / `:focus` metadata, a bare `focus` line before a test. Only in test
//! files, on code (a `.only` in a comment or a string is not one). An existing focus that moved or
//! was re-indented is not new: the engine compares occurrences at the base and the head.

use crate::rules::prelude::*;
use std::sync::LazyLock;

use regex::bytes::{Regex, RegexBuilder};

use crate::flag::Rule;
use crate::lang::Language;
use crate::scan::{Occurrence, Text};

/// One pattern per kind; its first capture group is what the flag shows.
const JS: &[(&str, &str)] = &[
    (
        "js-only",
        r"\b((?:it|test|describe|context|suite|specify)(?:\s*\.\s*(?:concurrent|sequential|serial|each|skip|todo|failing))*\s*\.\s*only)\b",
    ),
    ("js-f", r"(?:^|[^\w.$])(f(?:it|describe|context|test))\s*\("),
    ("js-only-option", r"(\{\s*only\s*:\s*true\b)"),
];

const RUBY: &[(&str, &str)] = &[
    (
        "rb-f",
        r"(?m)^[ \t]*(f(?:it|describe|context|specify|example|feature|scenario))(?:[ \t]*[(\x22'{]|[ \t]+[A-Z:])",
    ),
    (
        "rb-focus-meta",
        r#"(?:,|\()[ \t]*((?:focus:|:focus[ \t]*=>)[ \t]*true|:focus)\b"#,
    ),
    ("rb-focus-line", r"(?m)^[ \t]*(focus)[ \t\r]*$"),
];

struct Compiled {
    kinds: Vec<&'static str>,
    regexes: Vec<Regex>,
}

/// One regex per kind: the patterns capture what they show, so they are not joined into one.
fn compile(table: &[(&'static str, &'static str)]) -> Compiled {
    Compiled {
        kinds: table.iter().map(|(k, _)| *k).collect(),
        regexes: table
            .iter()
            .map(|(_, p)| {
                RegexBuilder::new(p)
                    .unicode(false)
                    .multi_line(true)
                    .build()
                    .expect("the rule's patterns are valid (tested)")
            })
            .collect(),
    }
}

static COMPILED_JS: LazyLock<Compiled> = LazyLock::new(|| compile(JS));
static COMPILED_RUBY: LazyLock<Compiled> = LazyLock::new(|| compile(RUBY));

/// True when the rule reads files of `lang`: test files of JavaScript and Ruby.
pub(crate) fn applies(lang: Language, is_test: bool) -> bool {
    is_test && matches!(lang, Language::JavaScript | Language::Ruby)
}

/// False when `raw` cannot hold a focus: every pattern needs one of these words.
pub(crate) fn might_match(lang: Language, raw: &[u8]) -> bool {
    static JS_WORDS: LazyLock<super::LiteralSet> =
        LazyLock::new(|| super::literal_set(&["only", "fit", "fdescribe", "fcontext", "ftest"]));
    static RUBY_WORDS: LazyLock<super::LiteralSet> = LazyLock::new(|| {
        super::literal_set(&[
            "focus",
            "fit",
            "fdescribe",
            "fcontext",
            "fspecify",
            "fexample",
            "ffeature",
            "fscenario",
        ])
    });
    match lang {
        Language::JavaScript => JS_WORDS.is_match(raw),
        Language::Ruby => RUBY_WORDS.is_match(raw),
        _ => false,
    }
}

pub(crate) fn scan(lang: Language, text: &Text<'_>, out: &mut Vec<Occurrence>) {
    let compiled: &Compiled = match lang {
        Language::JavaScript => &COMPILED_JS,
        Language::Ruby => &COMPILED_RUBY,
        _ => return,
    };
    for (kind, re) in compiled.kinds.iter().zip(&compiled.regexes) {
        for caps in re.captures_iter(&text.masked) {
            let Some(found) = caps.get(1) else { continue };
            let shown: String = String::from_utf8_lossy(found.as_bytes())
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            out.push(text.occurrence(
                Rule::FocusedTest,
                kind,
                found.start(),
                found.end(),
                format!("newly focuses a test, so the others stop running: `{shown}`"),
            ));
        }
    }
}

/// The rule's registry entry and what the detector runs for it.
pub(crate) const RULE: RuleInfo = RuleInfo {
    rule: Rule::FocusedTest,
    id: "focused-test",
    severity: Severity::Error,
    source: Source::Detector,
    languages: "JS/TS (Jest, Vitest, Mocha, Jasmine, node:test, AVA), Ruby (RSpec)",
    summary: "A test is newly focused, so the rest of the suite stops running.",
    help: "Flags `.only` on `it`/`test`/`describe`/`context`/`suite`, `fit`, `fdescribe`, \
           `fcontext`, `ftest`, `{ only: true }`, and RSpec's `focus: true`, `:focus` and \
           `fit`/`fdescribe`/`fcontext`. Every other test of the file or run stops running.",
    judges_tests: true,
    passes: &[Pass::Lines(Reads::new(reads, prefilter), lines)],
};

fn reads(file: &File<'_>) -> bool {
    file.lang
        .is_some_and(|lang| applies(lang, file.role.is_test))
}

fn prefilter(file: &File<'_>, raw: &[u8]) -> bool {
    file.lang.is_some_and(|lang| might_match(lang, raw))
}

fn lines(lines: &Lines<'_, '_>, found: &mut Found) {
    let lang = lines.lang;
    lines.each(found, |_, _| true, |t, out| scan(lang, t, out));
}

#[cfg(test)]
mod tests {
    use crate::Rule;
    use crate::testing::{Spec::*, lines, run};

    fn modified(path: &str, old: &str, new: &str) -> Vec<u32> {
        lines(&run(&[Modify(path, old, new)]), Rule::FocusedTest)
    }

    const JS_OLD: &str = "describe('calc', () => {\n  it('adds', () => {\n    expect(add(1, 2)).toBe(3);\n  });\n});\n";

    #[test]
    fn javascript_positives() {
        for (new, line) in [
            (JS_OLD.replace("it('adds'", "it.only('adds'"), 2),
            (JS_OLD.replace("describe('calc'", "describe.only('calc'"), 1),
            (JS_OLD.replace("it('adds'", "fit('adds'"), 2),
            (JS_OLD.replace("describe('calc'", "fdescribe('calc'"), 1),
            (JS_OLD.replace("it('adds'", "test.only('adds'"), 2),
            (JS_OLD.replace("it('adds'", "it.concurrent.only('adds'"), 2),
            (
                JS_OLD.replace("it('adds', ()", "it('adds', { only: true }, ()"),
                2,
            ),
        ] {
            assert_eq!(
                modified("src/calc.test.ts", JS_OLD, &new),
                vec![line],
                "{new}"
            );
        }
    }

    #[test]
    fn javascript_lookalikes() {
        for new in [
            // In a comment or a string.
            JS_OLD.replace("  it('adds'", "  // it.only('adds')\n  it('adds'"),
            JS_OLD.replace("it('adds'", "it('adds it.only'"),
            // Other words that merely contain the letters.
            JS_OLD.replace(
                "expect(add(1, 2)).toBe(3);",
                "const only = profit(1); expect(onlyOnce(x)).toBe(3);",
            ),
            JS_OLD.replace("it('adds'", "it.each([1])('adds'"),
            JS_OLD.replace("it('adds', ()", "it('adds', { only: false }, ()"),
        ] {
            assert!(
                modified("src/calc.test.ts", JS_OLD, &new).is_empty(),
                "{new}"
            );
        }
        // Production code is not read: a method called `only` is just a method.
        assert!(modified("src/query.ts", "q.all();\n", "q.only();\n").is_empty());
    }

    #[test]
    fn an_existing_focus_moved_or_reindented_is_not_new() {
        let old = "it.only('a', () => {});\nit('b', () => {});\n";
        let new = "describe('x', () => {\n  it('b', () => {});\n  it.only('a', () => {});\n});\n";
        assert!(modified("a.test.js", old, new).is_empty());
    }

    #[test]
    fn ruby() {
        let old = "describe Calc do\n  it 'adds' do\n    expect(add(1, 2)).to eq(3)\n  end\nend\n";
        for (new, line) in [
            (old.replace("  it 'adds'", "  fit 'adds'"), 2),
            (old.replace("describe Calc do", "fdescribe Calc do"), 1),
            (old.replace("it 'adds' do", "it 'adds', focus: true do"), 2),
            (old.replace("it 'adds' do", "it 'adds', :focus do"), 2),
            (
                old.replace("describe Calc do", "describe Calc, :focus do"),
                1,
            ),
        ] {
            assert_eq!(
                modified("spec/calc_spec.rb", old, &new),
                vec![line],
                "{new}"
            );
        }
        let minitest = "class CalcTest < Minitest::Test\n  def test_add\n    assert_equal 3, add(1, 2)\n  end\nend\n";
        let focused = minitest.replace("  def test_add", "  focus\n  def test_add");
        assert_eq!(modified("test/calc_test.rb", minitest, &focused), vec![2]);
        for new in [
            old.replace("  it 'adds'", "  # fit 'adds'\n  it 'adds'"),
            old.replace("it 'adds' do", "it 'adds', focus: false do"),
            old.replace("it 'adds' do", "it 'adds :focus' do"),
            old.replace("expect(add(1, 2))", "expect(fitness(1, 2))"),
        ] {
            assert!(modified("spec/calc_spec.rb", old, &new).is_empty(), "{new}");
        }
    }

    #[test]
    fn severity_is_error_by_default() {
        let r = run(&[Modify(
            "a.test.js",
            JS_OLD,
            &JS_OLD.replace("it(", "it.only("),
        )]);
        assert_eq!(r.flags[0].severity, crate::Severity::Error);
        assert_eq!(
            r.flags[0].message,
            "newly focuses a test, so the others stop running: `it.only`"
        );
    }
}
