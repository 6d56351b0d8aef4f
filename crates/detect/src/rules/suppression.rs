//! `suppression`: a newly added lint or type-checker suppression.
//!
//! Suppressions live in comments by design (`# type: ignore`, `# noqa`, `// eslint-disable-line`,
//! `//nolint`, `// NOLINT`, `# rubocop:disable`), so they are matched on the text with only
//! string contents blanked, and only where the directive starts inside a comment: the same words
//! in a string, a docstring or a template are not one. A few are code (Rust `#[allow(…)]` and
//! `#![allow(…)]`, Java `@SuppressWarnings`, Kotlin `@Suppress`, C# `#pragma warning disable` and
//! `[SuppressMessage]`, C/C++ `#pragma … diagnostic ignored`): those are matched on code only, so
//! one in a comment or a doc example is not one either. A directive must follow its comment
//! marker (`# noqa`, not "# this needs noqa"), as the tools themselves require.
//!
//! An existing suppression that moved (to another line or file) or was re-indented is not new:
//! an occurrence's key is the suppression's own text without white space, so the engine pairs it
//! with the one the change removed. The inline `forgeward: allow` comment is not a suppression,
//! a generated file (`// Code generated … DO NOT EDIT.`, `@generated` near its top; a bundle ending with `//# sourceMappingURL=`) is passed
//! over (its suppressions are its generator's), and so is `@ts-expect-error` in a type test
//! (`*.test-d.ts`), where it is the assertion. Configuration that turns a lint rule off or
//! makes mypy ignore errors is read apart, in [`config`].

pub(crate) mod config;

use crate::rules::prelude::*;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::LazyLock;

use regex::bytes::Regex;

use super::code;
use crate::flag::Rule;
use crate::lang::{Language, PerLanguage};
use crate::scan::{Occurrence, Role, Text};

/// Where a directive is written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// In a comment: matched with comments visible, and must start in one.
    Comment,
    /// In code (an attribute, an annotation, a pragma): matched on the masked text.
    Code,
}

struct Directive {
    lang: Language,
    kind: &'static str,
    /// A pattern without capture groups; a comment directive starts with its comment marker.
    pattern: &'static str,
    place: Place,
    /// Completes "newly suppresses …".
    what: &'static str,
}

const TYPE_ERROR: &str = "a type-checker error";
const TYPE_FILE: &str = "type checking of a whole file";
const LINT: &str = "lint warnings";
const COMPILER: &str = "compiler or lint warnings";

use Language::*;
use Place::*;

/// The markers a comment directive may follow.
macro_rules! slash {
    ($d:literal) => {
        concat!(r"(?://+|/\*+)[ \t]*", $d)
    };
}
macro_rules! php {
    ($d:literal) => {
        concat!(r"(?://+|#|/\*+|^[ \t]*\*)[ \t]*", $d)
    };
}

const DIRECTIVES: &[Directive] = &[
    // Python: mypy, pyright, flake8 and ruff, pylint, pyre, pytype, bandit.
    d(
        Python,
        "py-type-ignore",
        r"#[ \t]*type[ \t]*:[ \t]*ignore\b",
        Comment,
        TYPE_ERROR,
    ),
    d(
        Python,
        "py-pyright-ignore",
        r"#[ \t]*pyright[ \t]*:[ \t]*ignore\b",
        Comment,
        TYPE_ERROR,
    ),
    d(
        Python,
        "py-mypy-file",
        r"#[ \t]*mypy[ \t]*:[ \t]*(?:ignore-errors|disable-error-code)\b",
        Comment,
        TYPE_FILE,
    ),
    d(
        Python,
        "py-pyre",
        r"#[ \t]*pyre-(?:ignore|fixme)\b",
        Comment,
        TYPE_ERROR,
    ),
    d(
        Python,
        "py-pytype",
        r"#[ \t]*pytype[ \t]*:[ \t]*disable\b",
        Comment,
        TYPE_ERROR,
    ),
    d(
        Python,
        "py-noqa",
        r"#[ \t]*(?:(?:flake8|ruff)[ \t]*:[ \t]*)?(?:noqa|NOQA|NoQA)\b",
        Comment,
        LINT,
    ),
    d(
        Python,
        "py-pylint",
        r"#[ \t]*pylint[ \t]*:[ \t]*disable",
        Comment,
        LINT,
    ),
    d(Python, "py-nosec", r"#[ \t]*nosec\b", Comment, LINT),
    // JavaScript and TypeScript: ESLint, TypeScript, TSLint, Biome, oxlint.
    d(
        JavaScript,
        "js-eslint",
        slash!(r"eslint-disable(?:-next-line|-line)?\b"),
        Comment,
        LINT,
    ),
    d(
        JavaScript,
        "js-ts-ignore",
        slash!(r"@ts-ignore\b"),
        Comment,
        TYPE_ERROR,
    ),
    d(
        JavaScript,
        "js-ts-expect-error",
        slash!(r"@ts-expect-error\b"),
        Comment,
        TYPE_ERROR,
    ),
    d(
        JavaScript,
        "js-ts-nocheck",
        slash!(r"@ts-nocheck\b"),
        Comment,
        TYPE_FILE,
    ),
    d(
        JavaScript,
        "js-tslint",
        slash!(r"tslint:disable"),
        Comment,
        LINT,
    ),
    d(
        JavaScript,
        "js-biome",
        slash!(r"(?:biome-ignore|oxlint-disable)"),
        Comment,
        LINT,
    ),
    // Go: golangci-lint, staticcheck.
    d(Go, "go-nolint", r"//[ \t]*nolint\b", Comment, LINT),
    d(
        Go,
        "go-lint-ignore",
        r"//[ \t]*lint:(?:ignore|file-ignore)\b",
        Comment,
        LINT,
    ),
    // Rust: lint attributes are code.
    d(
        Rust,
        "rs-allow",
        r"#[ \t]*!?[ \t]*\[[ \t]*(?:allow[ \t]*\(|cfg_attr[ \t]*\([^\]]*?\ballow[ \t]*\()|#!?\[expect\(",
        Code,
        COMPILER,
    ),
    // Java, Kotlin, Groovy, Scala: annotations are code; IDE and PMD markers are comments.
    d(
        Java,
        "java-suppress",
        r"@[ \t]*(?:(?:file|get|set|param|field)[ \t]*:[ \t]*)?(?:java\.lang\.|kotlin\.)?(?:SuppressWarnings|Suppress|SuppressLint|SuppressFBWarnings)\b",
        Code,
        COMPILER,
    ),
    d(
        Java,
        "java-lint-comment",
        r"//[ \t]*(?:noinspection\b|NOPMD\b|NOSONAR\b|CHECKSTYLE[:.][ \t]*OFF\b|ktlint-disable\b)",
        Comment,
        LINT,
    ),
    // C#: pragmas and attributes are code; ReSharper's markers are comments.
    d(
        CSharp,
        "cs-pragma",
        r"#[ \t]*pragma[ \t]+warning[ \t]+disable\b",
        Code,
        COMPILER,
    ),
    d(
        CSharp,
        "cs-suppress-message",
        r"\[[ \t]*(?:(?:assembly|module)[ \t]*:[ \t]*)?(?:[\w.]+\.)?SuppressMessage(?:Attribute)?[ \t]*\(",
        Code,
        COMPILER,
    ),
    d(
        CSharp,
        "cs-resharper",
        r"//[ \t]*ReSharper[ \t]+disable\b",
        Comment,
        LINT,
    ),
    // C and C++: clang-tidy and cppcheck in comments, compiler pragmas in code.
    d(
        Cpp,
        "cpp-nolint",
        slash!(r"NOLINT(?:NEXTLINE|BEGIN)?\b"),
        Comment,
        LINT,
    ),
    d(
        Cpp,
        "cpp-cppcheck",
        r"//[ \t]*cppcheck-suppress\b",
        Comment,
        LINT,
    ),
    d(
        Cpp,
        "cpp-pragma",
        r"#[ \t]*pragma[ \t]+(?:warning[ \t]*\([ \t]*disable\b|(?:GCC|clang)[ \t]+diagnostic[ \t]+ignored\b)",
        Code,
        COMPILER,
    ),
    // Ruby: RuboCop and Standard.
    d(
        Ruby,
        "rb-rubocop",
        r"#[ \t]*(?:rubocop|standard)[ \t]*:[ \t]*(?:disable|todo)\b",
        Comment,
        LINT,
    ),
    // PHP: PHP_CodeSniffer, PHPStan, Psalm, also inside docblocks.
    d(
        Php,
        "php-phpcs",
        php!(r"(?:phpcs:(?:ignore|disable)\b|@codingStandardsIgnore\w*)"),
        Comment,
        LINT,
    ),
    d(
        Php,
        "php-phpstan",
        php!(r"@phpstan-ignore(?:-line|-next-line)?\b"),
        Comment,
        TYPE_ERROR,
    ),
    d(
        Php,
        "php-psalm",
        php!(r"@psalm-suppress\b"),
        Comment,
        TYPE_ERROR,
    ),
    // Swift: SwiftLint.
    d(
        Swift,
        "swift-swiftlint",
        r"//[ \t]*swiftlint:disable\b",
        Comment,
        LINT,
    ),
    // Elixir: Credo.
    d(
        Elixir,
        "ex-credo",
        r"#[ \t]*credo:disable-for-\w+",
        Comment,
        LINT,
    ),
];

const fn d(
    lang: Language,
    kind: &'static str,
    pattern: &'static str,
    place: Place,
    what: &'static str,
) -> Directive {
    Directive {
        lang,
        kind,
        pattern,
        place,
        what,
    }
}

/// Words every directive of a language contains: a file without any is never masked.
const TRIGGERS: &[(Language, &[&str])] = &[
    (
        Python,
        &[
            "ignore",
            "noqa",
            "NOQA",
            "NoQA",
            "disable",
            "pyre-fixme",
            "nosec",
        ],
    ),
    (
        JavaScript,
        &[
            "eslint-disable",
            "@ts-",
            "tslint:disable",
            "biome-ignore",
            "oxlint-disable",
        ],
    ),
    (Go, &["nolint", "lint:"]),
    (Rust, &["allow", "[expect("]),
    (
        Java,
        &[
            "Suppress",
            "noinspection",
            "NOPMD",
            "NOSONAR",
            "CHECKSTYLE",
            "ktlint-disable",
        ],
    ),
    (CSharp, &["disable", "SuppressMessage"]),
    (Cpp, &["NOLINT", "cppcheck-suppress", "disable", "ignored"]),
    (Ruby, &["rubocop", "standard"]),
    (
        Php,
        &[
            "phpcs:",
            "@codingStandardsIgnore",
            "@phpstan-ignore",
            "@psalm-suppress",
        ],
    ),
    (Swift, &["swiftlint:disable"]),
    (Elixir, &["credo:disable"]),
];

/// One language's directives of one place, as one alternation.
struct Compiled {
    regex: super::Alternation,
    directives: Vec<&'static Directive>,
}

fn compile(lang: Language, place: Place) -> Option<Compiled> {
    let directives: Vec<&Directive> = DIRECTIVES
        .iter()
        .filter(|d| d.lang == lang && d.place == place)
        .collect();
    if directives.is_empty() {
        return None;
    }
    let regex = super::alternation(directives.iter().map(|d| d.pattern), true);
    Some(Compiled { regex, directives })
}

/// A language, its comment directives and its code directives.
static COMPILED: PerLanguage<(Option<Compiled>, Option<Compiled>)> =
    PerLanguage::new(|l| (compile(l, Comment), compile(l, Code)));

static TRIGGER_SETS: PerLanguage<Option<super::LiteralSet>> = PerLanguage::new(|lang| {
    TRIGGERS
        .iter()
        .find(|(l, _)| *l == lang)
        .map(|(_, words)| super::literal_set(words))
});

/// True when the rule reads files of `lang`: every language with a directive, in any file.
pub(crate) fn applies(lang: Language) -> bool {
    DIRECTIVES.iter().any(|d| d.lang == lang)
}

/// False when `raw` cannot hold a suppression of `lang`.
pub(crate) fn might_match(lang: Language, raw: &[u8]) -> bool {
    TRIGGER_SETS
        .get(lang)
        .as_ref()
        .is_some_and(|set| set.is_match(raw))
}

/// The markers generators put at the top of what they write (`// Code generated … DO NOT
/// EDIT.`, `@generated`): a generated file's suppressions are its generator's, not the change's.
static GENERATED: LazyLock<Regex> = LazyLock::new(|| {
    code::re(
        r"(?i:\bcode generated\b|\bdo not edit\b|@generated\b|\bauto-?generated\b|\bautomatically generated\b)",
    )
});

/// How far into a file a generator's marker is looked for.
const GENERATED_HEAD: usize = 1024;

pub(crate) fn scan(lang: Language, role: &Role, text: &Text<'_>, out: &mut Vec<Occurrence>) {
    let (comments, code) = COMPILED.get(lang);
    if GENERATED.is_match(&text.raw[..text.raw.len().min(GENERATED_HEAD)])
        || crate::paths::ends_with_source_map(text.raw)
    {
        return;
    }
    if let Some(c) = comments {
        let visible = text.with_comments();
        for (d, start, _) in matches(c, visible) {
            // The marker itself, past any indentation a docblock line starts with.
            let marker = start + code::indent(&visible[start..]);
            if !text.in_comment(marker) || (role.type_test && d.kind == "js-ts-expect-error") {
                continue;
            }
            // RuboCop reads a directive where a comment starts with it: the same words after
            // the start of a comment are quoted (`#   # rubocop:disable X` in a YARD example,
            // "disable it with `# rubocop:disable X`").
            if d.kind == "rb-rubocop" && !starts_comment(text, marker) {
                continue;
            }
            let end = comment_directive_end(visible, marker);
            push(text, d, marker, end, out);
        }
    }
    if let Some(c) = code {
        for (d, start, end) in matches(c, &text.masked) {
            let end = code_directive_end(&text.masked, start, end);
            push(text, d, start, end, out);
        }
    }
}

/// Whether the comment around `marker` starts there: nothing before it on its line is comment.
fn starts_comment(text: &Text<'_>, marker: usize) -> bool {
    let line_start = text.with_comments()[..marker]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    !(line_start..marker).any(|i| text.in_comment(i))
}

fn matches<'c>(c: &'c Compiled, s: &[u8]) -> Vec<(&'c Directive, usize, usize)> {
    c.regex
        .find_iter(s)
        .map(|(i, found)| (c.directives[i], found.start, found.end))
        .collect()
}

/// Where a directive in a comment ends: at the end of its line or comment, or where another
/// comment starts on the same line (`# type: ignore  # noqa` holds two).
fn comment_directive_end(s: &[u8], start: usize) -> usize {
    let marker = s[start];
    let mut i = start + 1;
    while i < s.len() {
        let b = s[i];
        let next = s.get(i + 1).copied();
        let ends = b == b'\n'
            || (b == b'*' && next == Some(b'/'))
            || (marker == b'#' && b == b'#')
            || (marker == b'/' && b == b'/' && next == Some(b'/') && i > start + 2);
        if ends {
            break;
        }
        i += 1;
    }
    while i > start && s[i - 1].is_ascii_whitespace() {
        i -= 1;
    }
    i
}

/// Where a directive in code ends: after the bracket it opens (`#[allow(…)]`,
/// `@SuppressWarnings(…)`), or at the end of its line (a pragma).
fn code_directive_end(s: &[u8], start: usize, end: usize) -> usize {
    let opens = s[start..end].iter().position(|&b| b == b'[' || b == b'(');
    if let Some(p) = opens
        && let Some(close) = code::closing(s, start + p)
    {
        return close + 1;
    }
    // An annotation without arguments is itself; with them, they follow it.
    if s.get(end) == Some(&b'(')
        && let Some(close) = code::closing(s, end)
    {
        return close + 1;
    }
    if s[start] == b'#' {
        let line_end = s[end..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(s.len(), |p| end + p);
        let mut e = line_end;
        while e > end && s[e - 1].is_ascii_whitespace() {
            e -= 1;
        }
        return e;
    }
    end
}

fn push(text: &Text<'_>, d: &Directive, start: usize, end: usize, out: &mut Vec<Occurrence>) {
    let end = end.max(start + 1).min(text.raw.len());
    let raw = &text.raw[start..end];
    let shown = code::shown(raw, 80);
    let message = format!(
        "newly suppresses {} instead of fixing it: `{shown}`",
        d.what
    );
    let mut o = text.occurrence(Rule::Suppression, d.kind, start, end, message);
    let mut h = DefaultHasher::new();
    code::squeeze(raw).hash(&mut h);
    o.key = h.finish();
    out.push(o);
}

/// The rule's registry entry and what the detector runs for it.
pub(crate) const RULE: RuleInfo = RuleInfo {
    rule: Rule::Suppression,
    id: "suppression",
    severity: Severity::Note,
    source: Source::Detector,
    languages: "Python, JS/TS, Go, Rust, Java/Kotlin, C#, Ruby, PHP, C++, Swift, Elixir",
    summary: "A lint or type-checker suppression is newly added.",
    help: "A silenced warning is one nobody fixed. Flags `# type: ignore`, `# noqa`, \
           `# pylint: disable`, `# pyright: ignore`, `// eslint-disable…`, `// @ts-ignore`, \
           `// @ts-expect-error`, `#[allow(…)]`, `//nolint`, `@SuppressWarnings`, \
           `@Suppress`, `// NOLINT`, `#pragma warning disable`, `# rubocop:disable`, \
           `// phpcs:ignore`, `@phpstan-ignore`, `// swiftlint:disable` and the like in \
           comments (or, for attributes, in code), never in strings or docstrings, and \
           an ESLint rule newly turned off or mypy newly told to ignore errors in an \
           existing configuration file. An \
           existing suppression moved or re-indented is not new. A note by default: honest \
           changes add them too.",
    judges_tests: false,
    passes: &[
        Pass::Whole(Reads::ANY, in_configuration),
        Pass::Lines(Reads::new(reads, prefilter), lines),
    ],
};

fn reads(file: &File<'_>) -> bool {
    file.lang.is_some_and(applies)
}

fn prefilter(file: &File<'_>, raw: &[u8]) -> bool {
    file.lang.is_some_and(|lang| might_match(lang, raw))
}

fn lines(lines: &Lines<'_, '_>, found: &mut Found) {
    let (lang, role) = (lines.lang, &lines.file.role);
    lines.each(found, might_match, |t, out| scan(lang, role, t, out));
}

/// An ESLint rule newly turned off, mypy newly told to ignore errors.
fn in_configuration(whole: &Whole<'_>, out: &mut Out<'_>) {
    for flag in config::check(whole.file.change, whole.old, whole.new) {
        let f = out.whole_file_finding(flag, config::KIND);
        out.findings.push(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{self, Spec::*, lines, run};

    fn added(path: &str, new: &str) -> Vec<u32> {
        lines(&run(&[Add(path, new)]), Rule::Suppression)
    }

    fn modified(path: &str, old: &str, new: &str) -> Vec<u32> {
        lines(&run(&[Modify(path, old, new)]), Rule::Suppression)
    }

    fn messages(path: &str, new: &str) -> Vec<String> {
        testing::messages(&run(&[Add(path, new)]), Rule::Suppression)
    }

    #[test]
    fn every_language_compiles_and_has_triggers() {
        for l in Language::ALL {
            let (comments, code) = COMPILED.get(l);
            assert!(comments.is_some() || code.is_some(), "{l:?}");
            assert!(TRIGGERS.iter().any(|(t, _)| *t == l), "{l:?} has triggers");
        }
        // Every directive's words are among its language's triggers.
        for (lang, sample) in [
            (Python, "# type: ignore"),
            (Python, "# pyright: ignore"),
            (Python, "# mypy: ignore-errors"),
            (Python, "# pyre-fixme[6]"),
            (Python, "# pytype: disable=attribute-error"),
            (Python, "# noqa"),
            (Python, "# pylint: disable=x"),
            (Python, "# nosec"),
            (JavaScript, "// eslint-disable-line"),
            (JavaScript, "// @ts-ignore"),
            (JavaScript, "// tslint:disable"),
            (JavaScript, "// biome-ignore lint: x"),
            (Go, "//nolint:errcheck"),
            (Go, "//lint:ignore SA1019 x"),
            (Rust, "#[allow(dead_code)]"),
            (Rust, "#[expect(unused)]"),
            (Java, "@SuppressWarnings(\"x\")"),
            (Java, "// noinspection x"),
            (CSharp, "#pragma warning disable CS1"),
            (CSharp, "[SuppressMessage(\"a\", \"b\")]"),
            (CSharp, "// ReSharper disable once X"),
            (Cpp, "// NOLINT"),
            (Cpp, "// cppcheck-suppress x"),
            (Cpp, "#pragma GCC diagnostic ignored \"-Wx\""),
            (Cpp, "#pragma warning(disable: 4996)"),
            (Ruby, "# rubocop:disable Foo"),
            (Php, "// phpcs:ignore"),
            (Php, "/** @phpstan-ignore-next-line */"),
            (Php, "/** @psalm-suppress X */"),
            (Swift, "// swiftlint:disable x"),
            (Elixir, "# credo:disable-for-next-line"),
        ] {
            assert!(might_match(lang, sample.as_bytes()), "{lang:?}: {sample}");
        }
    }

    #[test]
    fn python() {
        let old = "import yaml\n\nx = load()\n";
        for (new, line) in [
            ("import yaml\n\nx = load()  # type: ignore\n", 3),
            (
                "import yaml\n\nx = load()  # type: ignore[attr-defined]\n",
                3,
            ),
            ("import yaml  # noqa: F401\n\nx = load()\n", 1),
            ("import yaml  # NOQA\n\nx = load()\n", 1),
            ("# flake8: noqa\nimport yaml\n\nx = load()\n", 1),
            (
                "import yaml\n\nx = load()  # pylint: disable=no-member\n",
                3,
            ),
            (
                "import yaml\n# pylint: disable-next=no-member\nx = load()\n",
                2,
            ),
            (
                "import yaml\n\nx = load()  # pyright: ignore[reportGeneralTypeIssues]\n",
                3,
            ),
            ("# mypy: ignore-errors\nimport yaml\n\nx = load()\n", 1),
        ] {
            assert_eq!(modified("src/app.py", old, new), vec![line], "{new}");
        }
        assert_eq!(
            added("src/app.py", "x = f()  # type: ignore  # noqa: E501\n"),
            vec![1, 1]
        );
        for new in [
            "s = '# type: ignore'\n",
            "def f():\n    \"\"\"Add `# noqa` where flake8 is wrong.\"\"\"\n",
            "# this line needs noqa one day\n",
            "x = f()  # forgeward: allow skip-marker -- reason\n",
            "t = type(x)  # ignore the type\n",
            "# pylint: enable=no-member\n",
        ] {
            assert!(added("src/app.py", new).is_empty(), "{new}");
        }
        assert_eq!(
            messages("src/app.py", "x = load()  # type: ignore[attr-defined]\n"),
            vec![
                "newly suppresses a type-checker error instead of fixing it: `# type: ignore[attr-defined]`"
            ]
        );
    }

    #[test]
    fn moved_reindented_or_edited_is_not_new() {
        let old = "def f():\n    return load()  # type: ignore\n";
        let new = "class A:\n    def f(self):\n        return load()  # type: ignore\n";
        assert!(modified("src/app.py", old, new).is_empty());
        let new = "def f():\n    return load(strict=True)  # type: ignore\n";
        assert!(modified("src/app.py", old, new).is_empty());
        let r = run(&[
            Modify("src/a.py", old, "def f():\n    return 1\n"),
            Add("src/b.py", "def g():\n    return load()  # type: ignore\n"),
        ]);
        assert!(lines(&r, Rule::Suppression).is_empty(), "{:?}", r.flags);
        // A second suppression beside an existing one is new.
        let new = "def f():\n    return load()  # type: ignore\n\ny = g()  # type: ignore\n";
        assert_eq!(modified("src/app.py", old, new), vec![4]);
        // Removing one is never a flag.
        assert!(modified("src/app.py", old, "def f():\n    return load()\n").is_empty());
    }

    #[test]
    fn javascript() {
        for (new, line) in [
            (
                "// eslint-disable-next-line no-console\nconsole.log(x);\n",
                1,
            ),
            ("console.log(x); // eslint-disable-line\n", 1),
            ("/* eslint-disable */\nconsole.log(x);\n", 1),
            ("/* eslint-disable no-alert, no-console */\nalert(x);\n", 1),
            ("// @ts-ignore\nconst a: number = 'x';\n", 1),
            (
                "// @ts-expect-error wrong on purpose\nconst a: number = 'x';\n",
                1,
            ),
            ("// @ts-nocheck\nconst a = 1;\n", 1),
            (
                "const el = (\n  <div>{/* eslint-disable-line */}</div>\n);\n",
                2,
            ),
        ] {
            assert_eq!(added("src/app.tsx", new), vec![line], "{new}");
        }
        for new in [
            "const s = '// eslint-disable-line';\n",
            "const t = `\n// @ts-ignore\n`;\n",
            "// Prefer fixing over eslint-disable comments.\n",
            "/* eslint-enable */\n",
        ] {
            assert!(added("src/app.ts", new).is_empty(), "{new}");
        }
    }

    #[test]
    fn go_rust() {
        assert_eq!(
            added(
                "pkg/a.go",
                "package a\n\nfunc f() {\n\tg() //nolint:errcheck\n}\n"
            ),
            vec![4]
        );
        assert_eq!(
            added(
                "pkg/a.go",
                "package a\n\n//lint:ignore SA1019 old API\nvar x = y\n"
            ),
            vec![3]
        );
        assert!(
            added(
                "pkg/a.go",
                "package a\n\nvar s = \"//nolint\"\n// see nolint docs\n"
            )
            .is_empty()
        );
        for (new, line) in [
            ("#[allow(dead_code)]\nfn f() {}\n", 1),
            ("#![allow(clippy::all)]\n", 1),
            ("#[cfg_attr(test, allow(unused))]\nfn f() {}\n", 1),
            ("#[expect(clippy::too_many_arguments)]\nfn f() {}\n", 1),
            (
                "fn f() {\n    #[allow(unused_variables)]\n    let x = 1;\n}\n",
                2,
            ),
        ] {
            assert_eq!(added("src/lib.rs", new), vec![line], "{new}");
        }
        for new in [
            "/// #[allow(dead_code)]\nfn f() {}\n",
            "// #[allow(dead_code)]\n",
            "const S: &str = \"#[allow(dead_code)]\";\n",
            "fn f() { allow(x); v.expect(\"y\"); }\n",
        ] {
            assert!(added("src/lib.rs", new).is_empty(), "{new}");
        }
        let r = run(&[Add(
            "src/lib.rs",
            "#[allow(dead_code, unused)]\nfn f() {}\n",
        )]);
        assert_eq!(
            r.flags[0].message,
            "newly suppresses compiler or lint warnings instead of fixing it: `#[allow(dead_code, unused)]`"
        );
    }

    #[test]
    fn java_kotlin_csharp_cpp() {
        assert_eq!(
            added(
                "src/main/java/A.java",
                "class A {\n  @SuppressWarnings(\"unchecked\")\n  void f() {}\n}\n"
            ),
            vec![2]
        );
        assert_eq!(
            added(
                "src/main/java/A.java",
                "class A {\n  @SuppressWarnings({\n    \"unchecked\",\n    \"rawtypes\"\n  })\n  void f() {}\n}\n"
            ),
            vec![2]
        );
        assert_eq!(
            added(
                "src/main/kotlin/A.kt",
                "@file:Suppress(\"UNUSED\")\n\n@Suppress(\"DEPRECATION\")\nfun f() {}\n"
            ),
            vec![1, 3]
        );
        assert!(
            added(
                "src/main/java/A.java",
                "/** Never use {@code @SuppressWarnings(\"all\")}. */\nclass A { String s = \"@SuppressWarnings\"; }\n"
            )
            .is_empty()
        );
        assert_eq!(
            added(
                "src/A.cs",
                "#pragma warning disable CS0618\nvar x = Old();\n#pragma warning restore CS0618\n"
            ),
            vec![1]
        );
        assert_eq!(
            added(
                "src/A.cs",
                "[SuppressMessage(\"Style\", \"IDE0051\")]\nprivate void F() {}\n"
            ),
            vec![1]
        );
        assert_eq!(
            added(
                "src/A.cs",
                "// ReSharper disable once UnusedMember.Local\nvoid F() {}\n"
            ),
            vec![1]
        );
        assert!(added("src/A.cs", "var s = \"#pragma warning disable\";\n").is_empty());
        assert_eq!(
            added("src/a.cc", "int x = f(); // NOLINT(runtime/int)\n"),
            vec![1]
        );
        assert_eq!(
            added("src/a.cc", "// NOLINTNEXTLINE(bugprone-x)\nint x = f();\n"),
            vec![1]
        );
        assert_eq!(
            added(
                "src/a.cc",
                "#pragma GCC diagnostic push\n#pragma GCC diagnostic ignored \"-Wdeprecated\"\n"
            ),
            vec![2]
        );
        assert_eq!(
            added("src/a.cc", "#pragma warning(disable: 4996)\n"),
            vec![1]
        );
        assert!(added("src/a.h", "#pragma once\nconst char* s = \"// NOLINT\";\n").is_empty());
    }

    #[test]
    fn rubocop_directives_quoted_in_a_comment_are_not_directives() {
        let doc = "  # @example\n  #   # rubocop:disable Metrics/AbcSize\n  # Disable it with `# rubocop:disable Foo/Bar`.\n  class Foo\n  end\n";
        assert!(added("lib/foo/bar.rb", doc).is_empty());
        // Where a comment starts with it, at the line's start or after code, it is one.
        let real = "  # rubocop:disable Metrics/AbcSize\n  def f = 1 # rubocop:disable Style/Foo\n";
        assert_eq!(added("lib/foo/bar.rb", real), vec![1, 2]);
    }

    #[test]
    fn ruby_php_swift_elixir() {
        assert_eq!(
            added("lib/a.rb", "def f # rubocop:disable Metrics/AbcSize\nend\n"),
            vec![1]
        );
        assert_eq!(
            added("lib/a.rb", "# rubocop:todo Style/Foo\nx = 1\n"),
            vec![1]
        );
        assert!(
            added(
                "lib/a.rb",
                "s = '# rubocop:disable Foo'\n# rubocop:enable Foo\n"
            )
            .is_empty()
        );
        assert_eq!(
            added("src/A.php", "<?php\n$a = f(); // phpcs:ignore\n"),
            vec![2]
        );
        assert_eq!(added("src/A.php", "<?php\n# phpcs:disable\n"), vec![2]);
        assert_eq!(
            added(
                "src/A.php",
                "<?php\n/**\n * @phpstan-ignore-next-line\n */\n$a = f();\n"
            ),
            vec![3]
        );
        assert_eq!(
            added(
                "src/A.php",
                "<?php\n/** @psalm-suppress MixedAssignment */\n$a = f();\n"
            ),
            vec![2]
        );
        assert!(added("src/A.php", "<?php\n$s = '// phpcs:ignore';\n#[Attr]\n").is_empty());
        assert_eq!(
            added(
                "Sources/A.swift",
                "// swiftlint:disable:next force_cast\nlet a = b as! C\n"
            ),
            vec![1]
        );
        assert!(added("Sources/A.swift", "let s = \"// swiftlint:disable\"\n").is_empty());
        assert_eq!(
            added("lib/a.ex", "# credo:disable-for-next-line\nIO.inspect(x)\n"),
            vec![1]
        );
    }

    #[test]
    fn ts_expect_error_asserts_in_type_tests() {
        let new = "// @ts-expect-error the argument must be a number\nadd('1', 2);\n";
        assert!(added("test/add.test-d.ts", new).is_empty());
        assert_eq!(added("test/add.test.ts", new), vec![1]);
        assert_eq!(
            added("test/add.test-d.ts", "// @ts-ignore\nadd('1', 2);\n"),
            vec![1]
        );
    }

    #[test]
    fn generated_files_are_passed_over() {
        assert!(
            added(
                "src/gen.ts",
                "/* eslint-disable */\n// @generated by graphql-codegen\nexport const a = 1;\n"
            )
            .is_empty()
        );
        assert!(
            added(
                "src/gen.py",
                "# This file is automatically generated by tool.py\nx = f()  # type: ignore\n"
            )
            .is_empty()
        );
        assert!(added("pb/a.go", "// Code generated by protoc-gen-go. DO NOT EDIT.\n\npackage pb\n\nvar x = y //nolint\n").is_empty());
        // A bundle: a bundler's source-map comment ends it.
        let bundle = "// eslint-disable-next-line no-undef\nvar a = b;\n//# sourceMappingURL=axios.cjs.map\n";
        assert!(added("dist/node/axios.cjs", bundle).is_empty());
        // The lookalike: the same comment elsewhere than at the end is no marker.
        let code = "//# sourceMappingURL=x.map\n// eslint-disable-next-line no-undef\nvar a = b;\n";
        assert_eq!(added("src/a.js", code), vec![2]);
    }

    #[test]
    fn tests_count_too_and_note_is_the_default() {
        let r = run(&[Add("tests/test_a.py", "x = f()  # type: ignore\n")]);
        assert_eq!(lines(&r, Rule::Suppression), vec![1]);
        assert_eq!(r.flags[0].severity, crate::Severity::Note);
    }
}
