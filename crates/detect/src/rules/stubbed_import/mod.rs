//! `stubbed-import`: production code newly carries on without a dependency.
//!
//! Python: an `except` (any class, or bare) closing a `try` whose body only imports, unless the
//! handler only raises or imports a real alternative under the same names (`import json` after
//! `import simplejson as json`: when both are missing, the import still fails), and unless the
//! body only imports platform-only standard-library modules (`winreg`, `readline`); writes to
//! `sys.modules[…]` (not `sys.modules[<own package>…] = sys.modules[…]`, an alias of a real
//! module); `<imported name> = None` at module level or under `global`. JavaScript and
//! TypeScript: a `try` whose body only `require`s or `import()`s, closed by a `catch` that does
//! anything but throw; `.catch` on a dynamic `import()` (after any `.then` that only picks a
//! member, `m => m.default`) whose handler does more than throw. A `try` that also does the work
//! and only logs on failure is not a stub: its body is more than imports. Ruby: a `begin` that
//! only `require`s, closed by a `rescue LoadError` whose handler neither raises nor requires an
//! alternative. In `conftest.py`, a write to
//! `sys.modules` at module level (`sys.modules["numpy"] = MagicMock()`): every test of the run
//! imports the stand-in; one inside a fixture or a function is scoped to what uses it.

use crate::rules::prelude::*;
use std::collections::HashSet;
use std::sync::LazyLock;

use regex::bytes::{Regex, RegexBuilder};

use super::code;
use crate::flag::Rule;
use crate::lang::Language;
use crate::paths::Harness;
use crate::scan::{Occurrence, Role, Text};

mod python;
mod ruby;

pub(crate) use python::python_imported_names;

pub(super) fn re(pattern: &str) -> Regex {
    RegexBuilder::new(pattern)
        .unicode(false)
        .multi_line(true)
        .build()
        .expect("the rule's patterns are valid (tested)")
}

/// True when the rule reads files of `lang` in `role`: production code, and `conftest.py`,
/// whose module-level writes to `sys.modules` give every test a stand-in.
pub(crate) fn applies(lang: Language, role: &Role) -> bool {
    match lang {
        Language::Python => !role.is_test || role.harness == Some(Harness::Conftest),
        Language::JavaScript | Language::Ruby => !role.is_test,
        _ => false,
    }
}

/// False when `raw` cannot hold a stub: every pattern of the rule contains one of these words.
pub(crate) fn might_match(lang: Language, raw: &[u8]) -> bool {
    static PYTHON: LazyLock<super::LiteralSet> =
        LazyLock::new(|| super::literal_set(&["try", "modules", "None"]));
    static JAVASCRIPT: LazyLock<super::LiteralSet> =
        LazyLock::new(|| super::literal_set(&["try", "catch"]));
    static RUBY: LazyLock<super::LiteralSet> =
        LazyLock::new(|| super::literal_set(&["LoadError", "ScriptError"]));
    match lang {
        Language::Python => PYTHON.is_match(raw),
        Language::JavaScript => JAVASCRIPT.is_match(raw),
        Language::Ruby => RUBY.is_match(raw),
        _ => false,
    }
}

pub(crate) fn scan(
    lang: Language,
    role: &Role,
    text: &Text<'_>,
    imported: &HashSet<Vec<u8>>,
    local: &[Vec<u8>],
    out: &mut Vec<Occurrence>,
) {
    match lang {
        Language::Python if role.harness == Some(Harness::Conftest) => {
            python::conftest(text, local, out);
        }
        Language::Python if !role.is_test => python::scan(text, imported, local, out),
        Language::JavaScript => javascript(text, out),
        Language::Ruby => ruby::scan(text, out),
        _ => {}
    }
}

pub(super) fn is_word_end(s: &[u8], at: usize) -> bool {
    s.get(at)
        .is_none_or(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
}

/// Module names for a message: "`yaml`", "`a` or `b`", or "a module" when none is known.
pub(super) fn either<'a>(names: impl Iterator<Item = &'a [u8]>) -> String {
    let mut shown: Vec<String> = Vec::new();
    for name in names {
        let name = format!("`{}`", String::from_utf8_lossy(name));
        if !shown.contains(&name) {
            shown.push(name);
        }
    }
    if shown.is_empty() {
        "a module".to_owned()
    } else {
        shown.join(" or ")
    }
}

// ---- JavaScript and TypeScript ---------------------------------------------------------------

static JS_TRY: LazyLock<Regex> = LazyLock::new(|| re(r"\btry\s*\{"));
static JS_ONLY_THROWS: LazyLock<Regex> = LazyLock::new(|| re(r"\A\s*throw\b[^;]*;?\s*\z"));
static JS_CATCH: LazyLock<Regex> = LazyLock::new(|| re(r"\A\s*catch\s*(?:\([^)]*\))?\s*\{"));
/// `import('a')`, any `.then` that only picks a member (`m => m.default`), then `.catch(`.
static JS_IMPORT_CATCH: LazyLock<Regex> = LazyLock::new(|| {
    let pick =
        r"\.\s*then\s*\(\s*(?:[\w$]+|\(\s*[\w$]+\s*\))\s*=>\s*[\w$]+(?:\s*\.\s*[\w$]+)*\s*\)";
    re(&format!(
        r"\bimport\s*\(([^)]*)\)(?:\s*{pick})*\s*\.\s*catch\s*\("
    ))
});
/// A `.catch` handler that only throws: `e => { throw new Error('install a') }`.
static JS_HANDLER_THROWS: LazyLock<Regex> =
    LazyLock::new(|| re(r"\A\s*(?:[\w$]+|\([^)]*\))\s*=>\s*\{\s*throw\b[^;{}]*;?\s*\}\s*\z"));
static JS_MODULE_NAME: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(?:require|import)\s*\(\s*['"`]([^'"`]+)"#));

fn js_modules(raw: &[u8]) -> String {
    either(
        JS_MODULE_NAME
            .captures_iter(raw)
            .filter_map(|c| c.get(1))
            .map(|m| m.as_bytes()),
    )
}

/// True when every `require(…)` / `import(…)` in `start..end` loads a specifier built at run
/// time (`base + url`, `` `./locales/${lang}.js` ``): a URL or a file of the project's own data,
/// such as a hot-reload patch, not a dependency. A literal, or a single name that may hold
/// one, is still a dependency's load.
fn built_at_runtime(text: &Text<'_>, start: usize, end: usize) -> bool {
    static LOAD: LazyLock<Regex> = LazyLock::new(|| re(r"\b(?:require|import)\s*\(([^)]*)\)"));
    let mut any = false;
    for caps in LOAD.captures_iter(&text.masked[start..end]) {
        let Some(arg) = caps.get(1) else {
            continue;
        };
        let raw = &text.raw[start + arg.start()..start + arg.end()];
        let built = arg.as_bytes().contains(&b'+') || raw.windows(2).any(|w| w == b"${");
        if !built {
            return false;
        }
        any = true;
    }
    any
}

fn javascript(text: &Text<'_>, out: &mut Vec<Occurrence>) {
    let s = &text.masked;
    for m in JS_TRY.find_iter(s) {
        let open = m.end() - 1;
        let Some(close) = code::closing(s, open) else {
            continue;
        };
        if !code::js_only_loads(&s[open + 1..close]) {
            continue;
        }
        let Some(catch) = JS_CATCH.find(&s[close + 1..]) else {
            continue;
        };
        let catch_open = close + catch.end();
        let Some(catch_close) = code::closing(s, catch_open) else {
            continue;
        };
        if JS_ONLY_THROWS.is_match(&s[catch_open + 1..catch_close])
            || built_at_runtime(text, open + 1, close)
        {
            continue;
        }
        let modules = js_modules(&text.raw[open + 1..close]);
        let message = format!(
            "newly carries on when {modules} fails to load: `catch` closes a `try` that only loads modules"
        );
        let catch_at = close
            + 1
            + catch.start()
            + (catch.as_bytes().len() - catch.as_bytes().trim_ascii_start().len());
        let mut o = text.occurrence(
            Rule::StubbedImport,
            "js-try-require",
            m.start(),
            catch_close + 1,
            message,
        );
        o.line = text.line_of(catch_at);
        o.key = text.key(text.line_of(open + 1), text.line_of(close));
        out.push(o);
    }
    for caps in JS_IMPORT_CATCH.captures_iter(s) {
        let (Some(whole), Some(arg)) = (caps.get(0), caps.get(1)) else {
            continue;
        };
        let open = whole.end() - 1;
        let handler = code::closing(s, open).map_or(&s[open + 1..], |close| &s[open + 1..close]);
        if built_at_runtime(text, whole.start(), whole.end()) || JS_HANDLER_THROWS.is_match(handler)
        {
            continue;
        }
        let modules = js_modules(&text.raw[whole.start()..arg.end() + 1]);
        let message = format!(
            "newly falls back when the dynamic import of {modules} fails: `.catch` on `import()`"
        );
        out.push(text.occurrence(
            Rule::StubbedImport,
            "js-import-catch",
            whole.start(),
            whole.end(),
            message,
        ));
    }
}

/// The rule's registry entry and what the detector runs for it.
pub(crate) const RULE: RuleInfo = RuleInfo {
    rule: Rule::StubbedImport,
    id: "stubbed-import",
    severity: Severity::Warning,
    source: Source::Detector,
    languages: "Python, JS/TS, Ruby",
    summary: "Production code newly carries on without a dependency instead of failing to import it.",
    help: "A missing dependency should fail loudly. Flags `try: import x` / `except: ...` \
           (not an `except` that imports another real module under the same names, nor a \
           platform-only standard-library module such as `winreg` or `readline`), \
           writes to `sys.modules` (not an alias of an imported module within the project's own \
           package), `x = None` for an imported name at module level, `require()` in \
           `try`/`catch` and `import().catch` newly added to production code, Ruby's \
           `begin require 'x' rescue LoadError … end` that carries on, and a write \
           to `sys.modules` at module level in `conftest.py` (every test imports the \
           stand-in).",
    judges_tests: false,
    passes: &[Pass::Lines(Reads::new(reads, prefilter), lines)],
};

fn reads(file: &File<'_>) -> bool {
    file.lang.is_some_and(|lang| applies(lang, &file.role))
}

fn prefilter(file: &File<'_>, raw: &[u8]) -> bool {
    file.lang.is_some_and(|lang| might_match(lang, raw))
}

fn lines(lines: &Lines<'_, '_>, found: &mut Found) {
    // The directories on the file's path: the packages it belongs to, whose modules a
    // fallback import may not come from (they could be stand-ins written for the purpose).
    let local: Vec<Vec<u8>> = lines.file.path.dirs().map(<[u8]>::to_vec).collect();
    // `<dependency> = None` is judged against what either version imports: a change that
    // replaces `import yaml` with `yaml = None` no longer imports it at the head.
    let mut imported = HashSet::new();
    if lines.lang == Language::Python {
        for t in lines.new.into_iter().chain(lines.old) {
            python_imported_names(t, &mut imported);
        }
    }
    let role = &lines.file.role;
    lines.each(
        found,
        |_, _| true,
        |t, out| scan(lines.lang, role, t, &imported, &local, out),
    );
}

#[cfg(test)]
mod tests;
