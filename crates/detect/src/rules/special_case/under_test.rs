//! Production code that asks whether it runs under a test: the most general special case, the
//! test run itself. `"pytest" in sys.modules`, `os.environ.get("PYTEST_CURRENT_TEST")`,
//! `process.env.JEST_WORKER_ID`, `process.env.VITEST`, `typeof jest !== 'undefined'`, Go's
//! `testing.Testing()` and `flag.Lookup("test.v")`, `strings.HasSuffix(os.Args[0], ".test")`,
//! Rust's `cfg!(test)` in an expression. Code that behaves differently under test can pass its
//! tests and fail in use.
//!
//! Only in production code: tests, their harness (`conftest.py`, a Jest setup file),
//! fixtures, and the runner's own code and plugins (a file that imports `pytest`, `@jest/…`,
//! `jest-…` or `vitest`) ask it by right. `NODE_ENV === 'test'` and Rails' `Rails.env.test?`
//! are left alone: an application's own environment, set by its configuration as much as by
//! its tests. Vitest's in-source tests (`if (import.meta.vitest)`) are tests.
//!
//! Matched on the masked text (code only), with a string's contents read from the raw text at
//! the same offsets, so a comment or a docstring that names the variable is not one.

use crate::rules::prelude::*;
use std::sync::LazyLock;

use regex::bytes::Regex;

use super::super::code::{self, re};
use crate::flag::Rule;
use crate::lang::Language;
use crate::scan::{Occurrence, Role, Text};

/// What the question is asked of: a module's name, an environment variable, a flag.
struct Ask {
    lang: Language,
    kind: &'static str,
    /// On the masked text; a group named `s` is a string literal whose contents must be one
    /// of `values` (none: any match).
    pattern: &'static str,
    values: &'static [&'static str],
}

const PYTEST_MODULES: &[&str] = &["pytest", "_pytest"];
const PYTEST_VARS: &[&str] = &[
    "PYTEST_CURRENT_TEST",
    "PYTEST_XDIST_WORKER",
    "PYTEST_VERSION",
];
const JS_VARS: &[&str] = &[
    "JEST_WORKER_ID",
    "VITEST",
    "VITEST_WORKER_ID",
    "VITEST_POOL_ID",
];

const ASKS: &[Ask] = &[
    Ask {
        lang: Language::Python,
        kind: "py-pytest-loaded",
        pattern: r#"(?P<s>["'] *["'])\s+in\s+sys\s*\.\s*modules\b|\bsys\s*\.\s*modules\s*(?:\.\s*get\s*\(|\[)\s*(?P<s2>["'] *["'])"#,
        values: PYTEST_MODULES,
    },
    Ask {
        lang: Language::Python,
        kind: "py-pytest-env",
        pattern: r#"\b(?:environ|getenv)\b\s*(?:\.\s*get\s*\(|\[|\()\s*(?P<s>["'] *["'])|(?P<s2>["'] *["'])\s+in\s+os\s*\.\s*environ\b"#,
        values: PYTEST_VARS,
    },
    Ask {
        lang: Language::JavaScript,
        kind: "js-runner-env",
        pattern: r#"\bprocess\s*\.\s*env\s*(?:\.\s*(?P<w>\w+)\b|\[\s*(?P<s>["'`] *["'`])\s*\])"#,
        values: JS_VARS,
    },
    Ask {
        lang: Language::JavaScript,
        kind: "js-runner-global",
        pattern: r"\btypeof\s+(?:jest|vi)\s*[!=]==?",
        values: &[],
    },
    Ask {
        lang: Language::Go,
        kind: "go-testing",
        pattern: r"\btesting\s*\.\s*Testing\s*\(\s*\)",
        values: &[],
    },
    Ask {
        lang: Language::Go,
        kind: "go-test-flag",
        pattern: r#"\bflag\s*\.\s*Lookup\s*\(\s*(?P<s>" *")|\bos\s*\.\s*Args\s*\[\s*0\s*\]\s*,\s*(?P<s2>" *")"#,
        values: &[
            "test.v",
            "test.run",
            "test.timeout",
            "test.paniconexit0",
            ".test",
        ],
    },
    Ask {
        lang: Language::Rust,
        kind: "rs-cfg-test",
        pattern: r"\bcfg!\s*\(\s*(?:not\s*\(\s*)?test\s*\)",
        values: &[],
    },
];

static COMPILED: LazyLock<Vec<Regex>> =
    LazyLock::new(|| ASKS.iter().map(|a| re(a.pattern)).collect());

/// True when the rule reads files of `lang` in `role`: production code.
pub(crate) fn applies(lang: Language, role: &Role) -> bool {
    !role.is_test
        && role.harness.is_none()
        && !role.fixture
        && !role.go_test
        && ASKS.iter().any(|a| a.lang == lang)
}

/// False when `raw` cannot hold a question: each needs one of these words.
pub(crate) fn might_match(lang: Language, raw: &[u8]) -> bool {
    static WORDS: LazyLock<super::super::LiteralSet> = LazyLock::new(|| {
        super::super::literal_set(&[
            "pytest",
            "PYTEST_",
            "JEST_WORKER_ID",
            "VITEST",
            "typeof jest",
            "typeof vi",
            "Testing()",
            "Lookup(",
            "Args[0]",
            "cfg!",
        ])
    });
    ASKS.iter().any(|a| a.lang == lang) && WORDS.is_match(raw)
}

/// The runner's own code, or a plugin's: a file that imports the runner's packages asks about
/// its runs by right.
static RUNNER_CODE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"^[ \t]*(?:import|from)[ \t]+_?pytest\b|(?:\bfrom\s+|\brequire\s*\(\s*|\bimport\s+)["'](?:@jest/|jest-|@vitest/|vitest\b)"#,
    )
});

pub(crate) fn scan(lang: Language, text: &Text<'_>, out: &mut Vec<Occurrence>) {
    if RUNNER_CODE.is_match(text.raw) {
        return;
    }
    for (ask, regex) in ASKS.iter().zip(COMPILED.iter()) {
        if ask.lang != lang {
            continue;
        }
        for caps in regex.captures_iter(&text.masked) {
            let Some(whole) = caps.get(0) else { continue };
            if !ask.values.is_empty() {
                // The name asked for: a string's contents, or a word of code.
                let named = ["s", "s2"]
                    .iter()
                    .find_map(|g| caps.name(g))
                    .and_then(|s| text.raw.get(s.start() + 1..s.end() - 1))
                    .or_else(|| caps.name("w").map(|w| w.as_bytes()));
                let Some(named) = named else { continue };
                if !ask.values.iter().any(|v| v.as_bytes() == named) {
                    continue;
                }
            }
            let at = whole.start();
            let shown = code::shown_line(text, at);
            let message = format!(
                "asks whether it runs under a test (`{shown}`): code that behaves differently under test can pass its tests and fail in use"
            );
            out.push(text.occurrence(Rule::SpecialCase, ask.kind, at, whole.end(), message));
        }
    }
}

pub(super) fn reads(file: &File<'_>) -> bool {
    file.lang.is_some_and(|lang| applies(lang, &file.role))
}

pub(super) fn prefilter(file: &File<'_>, raw: &[u8]) -> bool {
    file.lang.is_some_and(|lang| might_match(lang, raw))
}

pub(super) fn lines(lines: &Lines<'_, '_>, found: &mut Found) {
    let lang = lines.lang;
    lines.each(found, might_match, |t, out| scan(lang, t, out));
}

#[cfg(test)]
mod tests {
    use crate::Rule;
    use crate::testing::{Spec::*, lines, run};

    fn added(path: &str, new: &str) -> Vec<u32> {
        lines(&run(&[Add(path, new)]), Rule::SpecialCase)
    }

    #[test]
    fn production_code_that_asks_whether_a_test_runs_it() {
        for (path, text) in [
            (
                "src/shop/slug.py",
                "import sys\n\ndef slug(s):\n    if \"pytest\" in sys.modules:\n        return 'hello-world'\n",
            ),
            (
                "src/shop/slug.py",
                "import os\n\ndef slug(s):\n    if os.environ.get('PYTEST_CURRENT_TEST'):\n        return 'x'\n",
            ),
            (
                "src/shop/slug.py",
                "import sys\nTESTING = sys.modules.get('pytest') is not None\n",
            ),
            (
                "src/slug.js",
                "export function slug(s) {\n  if (process.env.JEST_WORKER_ID) return 'hello-world';\n}\n",
            ),
            (
                "src/slug.ts",
                "const testing = process.env['VITEST'] !== undefined;\n",
            ),
            ("src/slug.js", "const t = typeof jest !== 'undefined';\n"),
            (
                "slug/slug.go",
                "package slug\n\nfunc Slug(s string) string {\n\tif testing.Testing() {\n\t\treturn \"x\"\n\t}\n\treturn s\n}\n",
            ),
            (
                "slug/slug.go",
                "package slug\n\nvar testing = flag.Lookup(\"test.v\") != nil\n",
            ),
            (
                "slug/slug.go",
                "package slug\n\nvar testing = strings.HasSuffix(os.Args[0], \".test\")\n",
            ),
            (
                "src/slug.rs",
                "pub fn slug(s: &str) -> String {\n    if cfg!(test) {\n        return String::new();\n    }\n    s.to_owned()\n}\n",
            ),
        ] {
            assert_eq!(added(path, text).len(), 1, "{path}: {text}");
        }
    }

    #[test]
    fn lookalikes() {
        for (path, text) in [
            // Tests, their harness and fixtures ask by right.
            (
                "tests/conftest.py",
                "import sys\nif \"pytest\" in sys.modules:\n    pass\n",
            ),
            (
                "tests/test_slug.py",
                "import os\nassert os.environ.get('PYTEST_CURRENT_TEST')\n",
            ),
            ("test/slug.test.js", "if (process.env.JEST_WORKER_ID) {}\n"),
            (
                "slug/slug_test.go",
                "package slug\n\nvar v = testing.Testing()\n",
            ),
            // Another module, another variable, the application's environment.
            (
                "src/shop/io.py",
                "import sys\nif 'numpy' in sys.modules:\n    pass\n",
            ),
            (
                "src/shop/io.py",
                "import os\nDEBUG = os.environ.get('DEBUG')\n",
            ),
            (
                "src/log.js",
                "if (process.env.NODE_ENV === 'test') { quiet(); }\n",
            ),
            ("src/log.js", "const id = process.env.WORKER_ID;\n"),
            // In a comment or a docstring.
            (
                "src/shop/io.py",
                "def f():\n    \"\"\"Not like 'pytest' in sys.modules.\"\"\"\n    # os.environ.get('PYTEST_CURRENT_TEST')\n",
            ),
            ("src/lib.rs", "#[cfg(test)]\nmod tests {}\n// cfg!(test)\n"),
            // The runner's own code and its plugins.
            (
                "src/xdist/plugin.py",
                "import os\nimport pytest\n\nWORKER = os.environ.get('PYTEST_XDIST_WORKER')\n",
            ),
            (
                "packages/jest-reporters/src/Coverage.ts",
                "import {Worker} from 'jest-worker';\nif (!process.env.JEST_WORKER_ID) {}\n",
            ),
        ] {
            assert_eq!(added(path, text), [] as [u32; 0], "{path}: {text}");
        }
    }
}
