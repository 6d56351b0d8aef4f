//! `Cargo.toml`: an existing target newly not tested (`test = false`), without libtest's
//! harness (`harness = false`: its `#[test]` functions no longer run), or without doc tests
//! (`doctest = false`), and `autotests = false`. A new target configured so is not flagged.

use super::{Narrowed, toml_lines};

/// The targets of a manifest: `(section, index among its kind, name, table)`.
fn targets(v: &toml::Value) -> Vec<(&'static str, usize, String, &toml::value::Table)> {
    let mut out = Vec::new();
    if let Some(lib) = v.get("lib").and_then(toml::Value::as_table) {
        let name = lib
            .get("name")
            .and_then(toml::Value::as_str)
            .unwrap_or("lib")
            .to_owned();
        out.push(("lib", 0, name, lib));
    }
    for kind in ["bin", "test", "bench", "example"] {
        for (i, t) in v
            .get(kind)
            .and_then(toml::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(toml::Value::as_table)
            .enumerate()
        {
            let name = t
                .get("name")
                .and_then(toml::Value::as_str)
                .or_else(|| t.get("path").and_then(toml::Value::as_str))
                .unwrap_or_default()
                .to_owned();
            out.push((kind, i, name, t));
        }
    }
    out
}

fn is_false(t: &toml::value::Table, key: &str) -> bool {
    t.get(key).and_then(toml::Value::as_bool) == Some(false)
}

pub(super) fn compare(base: &str, head: &str) -> Result<Vec<Narrowed>, String> {
    let h: toml::Value =
        toml::from_str(head).map_err(|e| forgeward_text::one_line(&e.to_string()))?;
    let Ok(b) = toml::from_str::<toml::Value>(base) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    let base_targets = targets(&b);
    for (kind, i, name, t) in targets(&h) {
        let Some((_, _, _, bt)) = base_targets
            .iter()
            .find(|(k, _, n, _)| *k == kind && *n == name)
        else {
            continue;
        };
        let header = |line: &str| {
            if kind == "lib" {
                line == "[lib]"
            } else {
                line == format!("[[{kind}]]")
            }
        };
        for (key, does) in [
            ("test", "it is no longer built and run by `cargo test`"),
            ("harness", "its `#[test]` functions no longer run"),
            ("doctest", "its documentation examples are no longer tested"),
        ] {
            if (key == "doctest" && kind != "lib") || !is_false(t, key) || is_false(bt, key) {
                continue;
            }
            let line = toml_lines(head, header, i, key).map(|(l, _)| l);
            let target = if kind == "lib" {
                "the library".to_owned()
            } else {
                format!("the existing `[[{kind}]]` target `{name}`")
            };
            out.push(Narrowed {
                moved_from: None,
                line,
                message: format!("`{key} = false` on {target}: {does}"),
            });
        }
    }
    let autotests = |v: &toml::Value| {
        v.get("package")
            .and_then(|p| p.get("autotests"))
            .and_then(toml::Value::as_bool)
            == Some(false)
    };
    if autotests(&h) && !autotests(&b) && b.get("package").is_some() {
        out.push(Narrowed {
            moved_from: None,
            line: toml_lines(head, |l| l == "[package]", 0, "autotests").map(|(l, _)| l),
            message: "`autotests = false`: the files in `tests/` are no longer found and run"
                .to_owned(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::Rule;
    use crate::testing::{Spec::*, lines, run};

    fn flagged(old: &str, new: &str) -> Vec<u32> {
        lines(
            &run(&[Modify("Cargo.toml", old, new)]),
            Rule::RunnerNarrowed,
        )
    }

    const OLD: &str = "[package]\nname = \"calc\"\nversion = \"0.1.0\"\n\n[lib]\npath = \"src/lib.rs\"\n\n[[test]]\nname = \"parser\"\npath = \"tests/parser.rs\"\n";

    #[test]
    fn existing_targets_no_longer_tested() {
        let new = OLD.replace(
            "path = \"tests/parser.rs\"\n",
            "path = \"tests/parser.rs\"\nharness = false\n",
        );
        assert_eq!(flagged(OLD, &new), vec![11]);
        let new = OLD.replace(
            "path = \"tests/parser.rs\"\n",
            "path = \"tests/parser.rs\"\ntest = false\n",
        );
        assert_eq!(flagged(OLD, &new), vec![11]);
        let new = OLD.replace(
            "path = \"src/lib.rs\"\n",
            "path = \"src/lib.rs\"\ntest = false\ndoctest = false\n",
        );
        assert_eq!(flagged(OLD, &new), vec![7, 8]);
        let new = OLD.replace(
            "version = \"0.1.0\"\n",
            "version = \"0.1.0\"\nautotests = false\n",
        );
        assert_eq!(flagged(OLD, &new), vec![4]);
    }

    #[test]
    fn new_targets_and_other_edits() {
        let new = format!("{OLD}\n[[test]]\nname = \"fuzzish\"\nharness = false\n");
        assert!(flagged(OLD, &new).is_empty(), "a new target");
        let new = format!("{OLD}\n[[bench]]\nname = \"check\"\nharness = false\n");
        assert!(flagged(OLD, &new).is_empty());
        let new = OLD.replace("0.1.0", "0.2.0");
        assert!(flagged(OLD, &new).is_empty());
        let old = OLD.replace(
            "path = \"tests/parser.rs\"\n",
            "path = \"tests/parser.rs\"\nharness = false\n",
        );
        let new = old.replace("0.1.0", "0.2.0");
        assert!(flagged(&old, &new).is_empty(), "already so at the base");
    }
}
