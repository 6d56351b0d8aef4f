//! `stubbed-import`: production code newly carries on without a dependency.
//!
//! Python: an `except` (any class, or bare) closing a `try` whose body only imports, unless the
//! handler only raises; writes to `sys.modules[…]`; `<imported name> = None`. JavaScript and
//! TypeScript: a `try` whose body only `require`s or `import()`s, closed by a `catch` that does
//! anything but throw; `.catch` on a dynamic `import()`. A `try` that also does the work and only
//! logs on failure is not a stub: its body is more than imports.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::bytes::{Regex, RegexBuilder};

use crate::detect::flag::Rule;
use crate::detect::lang::Language;
use crate::detect::scan::{Occurrence, Text};

fn re(pattern: &str) -> Regex {
    RegexBuilder::new(pattern)
        .unicode(false)
        .multi_line(true)
        .build()
        .expect("the rule's patterns are valid (tested)")
}

/// True when the rule reads files of `lang` (production code only).
pub(crate) fn applies(lang: Language, is_test: bool) -> bool {
    !is_test && matches!(lang, Language::Python | Language::JavaScript)
}

/// False when `raw` cannot hold a stub: every pattern of the rule contains one of these words.
pub(crate) fn might_match(lang: Language, raw: &[u8]) -> bool {
    static PYTHON: LazyLock<super::LiteralSet> =
        LazyLock::new(|| super::literal_set(&["try", "modules", "None"]));
    static JAVASCRIPT: LazyLock<super::LiteralSet> =
        LazyLock::new(|| super::literal_set(&["try", "catch"]));
    match lang {
        Language::Python => PYTHON.is_match(raw),
        Language::JavaScript => JAVASCRIPT.is_match(raw),
        _ => false,
    }
}

pub(crate) fn scan(
    lang: Language,
    text: &Text<'_>,
    imported: &HashSet<Vec<u8>>,
    out: &mut Vec<Occurrence>,
) {
    match lang {
        Language::Python => python(text, imported, out),
        Language::JavaScript => javascript(text, out),
        _ => {}
    }
}

// ---- Python ----------------------------------------------------------------------------------

static PY_TRY: LazyLock<Regex> = LazyLock::new(|| re(r"^([ \t]*)try[ \t]*:[ \t\r]*$"));
static PY_IMPORT_STMT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^[ \t]*(?:import[ \t]|from[ \t]+\S+[ \t]+import\b|pass\b|[\w.]+[ \t]*=[ \t]*(?:importlib[ \t]*\.[ \t]*)?(?:import_module|__import__)[ \t]*\()",
    )
});
static PY_SYS_MODULES: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\bsys[ \t]*\.[ \t]*modules[ \t]*(?:\[[^\]\n]*\][ \t]*=[^=]|\.[ \t]*(?:setdefault|update)[ \t]*\()",
    )
});
static PY_NONE: LazyLock<Regex> = LazyLock::new(|| re(r"^[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*None\b"));
static PY_IMPORT_NAMES: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^[ \t]*(?:import[ \t]+([^\n]+)|from[ \t]+([\w.]+)[ \t]+import[ \t]+\(?([^\n]+))")
});

/// The names a Python file binds by importing: `import a.b` binds `a`, `import a as b` and
/// `from m import a as b` bind `b`.
pub(crate) fn python_imported_names(text: &Text<'_>, into: &mut HashSet<Vec<u8>>) {
    for caps in PY_IMPORT_NAMES.captures_iter(&text.masked) {
        let (list, is_from) = match (caps.get(1), caps.get(3)) {
            (Some(l), _) => (l.as_bytes(), false),
            (None, Some(l)) => (l.as_bytes(), true),
            _ => continue,
        };
        for item in list.split(|&b| b == b',') {
            let words: Vec<&[u8]> = item
                .split(|b| b.is_ascii_whitespace() || matches!(b, b'(' | b')' | b'\\'))
                .filter(|w| !w.is_empty())
                .collect();
            let name = match words.as_slice() {
                [_, as_, alias, ..] if *as_ == b"as" => *alias,
                [first, ..] if is_from => *first,
                [first, ..] => first.split(|&b| b == b'.').next().unwrap_or(first),
                [] => continue,
            };
            if name.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_') {
                into.insert(name.to_vec());
            }
        }
    }
}

fn indent(line: &[u8]) -> usize {
    line.iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count()
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| b.is_ascii_whitespace())
}

/// The lines after `header` indented deeper than `level`: a block's body, as `(first, last)`,
/// with logical lines that continue inside brackets or after `\` folded in.
fn block_statements(text: &Text<'_>, header: u32, level: usize) -> (Vec<(u32, u32)>, u32) {
    let mut statements = Vec::new();
    let mut line = header + 1;
    let mut end = header;
    let count = text.line_count();
    while line <= count {
        let l = text.masked_line(line);
        if is_blank(l) {
            line += 1;
            continue;
        }
        if indent(l) <= level {
            break;
        }
        let first = line;
        let mut depth: i32 = 0;
        loop {
            let l = text.masked_line(line);
            for &b in l {
                match b {
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => depth -= 1,
                    _ => {}
                }
            }
            let continued = depth > 0 || l.trim_ascii_end().ends_with(b"\\");
            if !continued || line >= count {
                break;
            }
            line += 1;
        }
        statements.push((first, line));
        end = line;
        line += 1;
    }
    (statements, end)
}

fn python(text: &Text<'_>, imported: &HashSet<Vec<u8>>, out: &mut Vec<Occurrence>) {
    let mut handlers: Vec<(u32, u32)> = Vec::new();
    for caps in PY_TRY.captures_iter(&text.masked) {
        let (Some(whole), Some(ws)) = (caps.get(0), caps.get(1)) else {
            continue;
        };
        let level = ws.len();
        let try_line = text.line_of(whole.start());
        let (body, body_end) = block_statements(text, try_line, level);
        let only_imports = !body.is_empty()
            && body
                .iter()
                .all(|&(first, _)| PY_IMPORT_STMT.is_match(text.masked_line(first)));
        if !only_imports {
            continue;
        }
        // Every `except` clause of this `try`, at the same indentation.
        let mut line = body_end + 1;
        while line <= text.line_count() {
            let l = text.masked_line(line);
            if is_blank(l) {
                line += 1;
                continue;
            }
            let clause = l.trim_ascii();
            if indent(l) != level || !(clause.starts_with(b"except") && is_word_end(clause, 6)) {
                break;
            }
            let (handler, handler_end) = block_statements(text, line, level);
            let only_raises = !handler.is_empty()
                && handler
                    .iter()
                    .all(|&(first, _)| text.masked_line(first).trim_ascii().starts_with(b"raise"));
            if !only_raises {
                let modules = imported_modules(text, &body);
                let shown_clause = String::from_utf8_lossy(clause)
                    .trim_end_matches(':')
                    .to_owned();
                let message = format!(
                    "newly carries on when {modules} fails to import: `{}` closes a `try` that only imports",
                    shown_clause
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                );
                let mut o = text.occurrence(Rule::StubbedImport, "py-try-import", 0, 0, message);
                o.first = try_line;
                o.last = handler_end.max(line);
                o.line = line;
                o.key = text.key(try_line + 1, body_end);
                handlers.push((line, o.last));
                out.push(o);
            }
            line = handler_end.max(line) + 1;
        }
    }
    for m in PY_SYS_MODULES.find_iter(&text.masked) {
        let message =
            "newly writes to `sys.modules`: an import gets a stand-in instead of the real module"
                .to_owned();
        out.push(text.occurrence(
            Rule::StubbedImport,
            "py-sys-modules",
            m.start(),
            m.end(),
            message,
        ));
    }
    for caps in PY_NONE.captures_iter(&text.masked) {
        let (Some(whole), Some(name)) = (caps.get(0), caps.get(1)) else {
            continue;
        };
        if !imported.contains(name.as_bytes()) {
            continue;
        }
        let line = text.line_of(whole.start());
        // Already part of a flagged `except` handler.
        if handlers.iter().any(|&(a, b)| (a..=b).contains(&line)) {
            continue;
        }
        let name = String::from_utf8_lossy(name.as_bytes());
        let message = format!(
            "newly sets the imported name `{name}` to None: code that uses it carries on without the module"
        );
        out.push(text.occurrence(
            Rule::StubbedImport,
            "py-dep-none",
            whole.start(),
            whole.end(),
            message,
        ));
    }
}

fn is_word_end(s: &[u8], at: usize) -> bool {
    s.get(at)
        .is_none_or(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
}

/// The modules a block of import statements names, for a message: "`yaml`", "`a` or `b`".
fn imported_modules(text: &Text<'_>, body: &[(u32, u32)]) -> String {
    static MODULE: LazyLock<Regex> =
        LazyLock::new(|| re(r"^[ \t]*(?:import[ \t]+([\w.]+)|from[ \t]+([\w.]+)[ \t]+import)"));
    either(body.iter().filter_map(|&(first, _)| {
        let caps = MODULE.captures(text.masked_line(first))?;
        caps.get(1).or(caps.get(2)).map(|m| m.as_bytes())
    }))
}

/// Module names for a message: "`yaml`", "`a` or `b`", or "a module" when none is known.
fn either<'a>(names: impl Iterator<Item = &'a [u8]>) -> String {
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
static JS_ONLY_LOADS: LazyLock<Regex> = LazyLock::new(|| {
    let load = r"(?:(?:const|let|var)\s+(?:[\w$]+|\{[^}]*\}|\[[^\]]*\])\s*=\s*|[\w$.\[\]]+\s*=\s*)?(?:await\s+)?(?:require|import)\s*\([^)]*\)(?:\s*\.\s*[\w$]+)*";
    re(&format!(r"\A\s*(?:{load}\s*;?\s*)+\z"))
});
static JS_ONLY_THROWS: LazyLock<Regex> = LazyLock::new(|| re(r"\A\s*throw\b[^;]*;?\s*\z"));
static JS_CATCH: LazyLock<Regex> = LazyLock::new(|| re(r"\A\s*catch\s*(?:\([^)]*\))?\s*\{"));
static JS_IMPORT_CATCH: LazyLock<Regex> =
    LazyLock::new(|| re(r"\bimport\s*\(([^)]*)\)\s*\.\s*catch\s*\("));
static JS_MODULE_NAME: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(?:require|import)\s*\(\s*['"`]([^'"`]+)"#));

/// The offset of the `}` closing the `{` at `open` (masked text: no braces in strings).
fn closing_brace(s: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &b) in s.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

fn js_modules(raw: &[u8]) -> String {
    either(
        JS_MODULE_NAME
            .captures_iter(raw)
            .filter_map(|c| c.get(1))
            .map(|m| m.as_bytes()),
    )
}

fn javascript(text: &Text<'_>, out: &mut Vec<Occurrence>) {
    let s = &text.masked;
    for m in JS_TRY.find_iter(s) {
        let open = m.end() - 1;
        let Some(close) = closing_brace(s, open) else {
            continue;
        };
        if !JS_ONLY_LOADS.is_match(&s[open + 1..close]) {
            continue;
        }
        let Some(catch) = JS_CATCH.find(&s[close + 1..]) else {
            continue;
        };
        let catch_open = close + catch.end();
        let Some(catch_close) = closing_brace(s, catch_open) else {
            continue;
        };
        if JS_ONLY_THROWS.is_match(&s[catch_open + 1..catch_close]) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::testing::{Spec::*, lines, run};

    fn added(path: &str, new: &str) -> Vec<u32> {
        lines(&run(&[Add(path, new)]), Rule::StubbedImport)
    }

    fn modified(path: &str, old: &str, new: &str) -> Vec<u32> {
        lines(&run(&[Modify(path, old, new)]), Rule::StubbedImport)
    }

    #[test]
    fn python_try_only_imports() {
        let old = "import os\n\nimport sqlglot\n\ndef parse(s):\n    return sqlglot.parse(s)\n";
        let new = "import os\n\ntry:\n    import sqlglot\nexcept ImportError:\n    sqlglot = None\n\ndef parse(s):\n    return sqlglot.parse(s)\n";
        assert_eq!(
            modified("src/app/parse.py", old, new),
            vec![5],
            "one flag, on the except"
        );
        for (new, line) in [
            ("try:\n    import yaml\nexcept:\n    pass\n", 3),
            (
                "try:\n    from yaml import safe_load\nexcept Exception:\n    safe_load = None\n",
                3,
            ),
            (
                "try:\n    import ujson as json\nexcept (ImportError, ModuleNotFoundError):\n    import json\n",
                3,
            ),
            (
                "if True:\n    try:\n        from a import (\n            b,\n            c,\n        )\n    except ImportError:\n        b = c = None\n",
                7,
            ),
            (
                "try:\n    import a\nexcept ValueError:\n    raise\nexcept ImportError:\n    a = None\n",
                5,
            ),
        ] {
            assert_eq!(added("pkg/mod.py", new), vec![line], "{new}");
        }
    }

    #[test]
    fn python_try_that_does_the_work_or_reraises_is_not_a_stub() {
        for new in [
            "try:\n    import yaml\n    data = yaml.safe_load(f)\nexcept Exception:\n    log.warning('bad config')\n",
            "try:\n    import yaml\nexcept ImportError as e:\n    raise RuntimeError('install pyyaml') from e\n",
            "try:\n    conn.execute(q)\nexcept Exception:\n    pass\n",
            "# try:\n#     import yaml\n# except ImportError:\n#     pass\n",
            "s = '''\ntry:\n    import yaml\nexcept ImportError:\n    pass\n'''\n",
        ] {
            assert!(added("pkg/mod.py", new).is_empty(), "{new}");
        }
    }

    #[test]
    fn python_tests_are_not_production_code() {
        assert!(
            added(
                "tests/test_x.py",
                "try:\n    import yaml\nexcept ImportError:\n    yaml = None\n"
            )
            .is_empty()
        );
    }

    #[test]
    fn python_existing_stub_edited_or_reindented_is_not_new() {
        let old = "try:\n    import yaml\nexcept ImportError:  # optional\n    yaml = None\n";
        let new = "try:\n    import yaml\nexcept ImportError:  # optional: only for config files\n    yaml = None\n";
        assert!(modified("pkg/conf.py", old, new).is_empty());
        let new = "if ENABLED:\n    try:\n        import yaml\n    except ImportError:\n        yaml = None\n";
        assert!(modified("pkg/conf.py", old, new).is_empty());
        // A handler that used to re-raise and now carries on is new.
        let old = "try:\n    import yaml\nexcept ImportError:\n    raise\n";
        let new = "try:\n    import yaml\nexcept ImportError:\n    yaml = None\n";
        assert_eq!(modified("pkg/conf.py", old, new), vec![3]);
    }

    #[test]
    fn python_sys_modules_and_none() {
        assert_eq!(
            added(
                "pkg/shim.py",
                "import sys, types\nsys.modules['sqlglot'] = types.ModuleType('sqlglot')\n"
            ),
            vec![2]
        );
        assert_eq!(
            added(
                "pkg/shim.py",
                "import sys\nsys.modules.setdefault('x', object())\n"
            ),
            vec![2]
        );
        assert!(added("pkg/shim.py", "import sys\nif 'x' in sys.modules:\n    m = sys.modules['x']\nok = sys.modules['x'] == m\n").is_empty());
        let old = "import numpy as np\n\ndef f():\n    return np.zeros(3)\n";
        let new = "np = None\n\ndef f():\n    return np.zeros(3)\n";
        assert_eq!(modified("pkg/calc.py", old, new), vec![1]);
        assert!(
            added("pkg/calc.py", "import os\n_cache = None\n").is_empty(),
            "not an imported name"
        );
    }

    #[test]
    fn javascript_try_require() {
        let new =
            "let sharp;\ntry {\n  sharp = require('sharp');\n} catch (e) {\n  sharp = null;\n}\n";
        assert_eq!(added("src/img.js", new), vec![4]);
        let new = "try {\n  const { a, b } = require(\"lib\")\n  var c = await import('c')\n}\ncatch {\n  module.exports = {}\n}\n";
        assert_eq!(added("src/x.ts", new), vec![5]);
        assert_eq!(
            added(
                "src/y.mjs",
                "const m = await import('optional-dep').catch(() => null);\n"
            ),
            vec![1]
        );
    }

    #[test]
    fn javascript_non_stubs() {
        for new in [
            "try {\n  const a = require('a');\n  a.run();\n} catch (e) {\n  console.error(e);\n}\n",
            "try {\n  require('a');\n} catch (e) {\n  throw new Error('install a');\n}\n",
            "// try { require('a') } catch (e) {}\n",
            "const s = `try { require('a') } catch (e) {}`;\n",
            "import('./page').then(m => m.render());\n",
        ] {
            assert!(added("src/z.js", new).is_empty(), "{new}");
        }
        assert!(added("src/z.test.js", "try { require('a') } catch (e) {}\n").is_empty());
    }

    #[test]
    fn message_names_the_module() {
        let r = run(&[Add(
            "pkg/m.py",
            "try:\n    import yaml\nexcept ImportError:\n    yaml = None\n",
        )]);
        assert_eq!(
            r.flags[0].message,
            "newly carries on when `yaml` fails to import: `except ImportError` closes a `try` that only imports"
        );
        assert_eq!(r.flags[0].snippet.as_deref(), Some("except ImportError:"));
    }
}
