//! Rust's `#[cfg_attr(P, ignore)]`: when its condition `P` skips nothing that ran.
//!
//! - `P` holds only under a special runner (Miri's interpreter, loom's model checker): the test
//!   still runs under `cargo test` ([`only_under_a_tool`]).
//! - The file was not compiled at all under `P` at the base: its inner `#![cfg(…)]` said
//!   `not(P)`. A change that opens the file to a new target and ignores there the tests that
//!   cannot run on it yet (`#![cfg(not(target_os = "wasi"))]` dropped, `#[cfg_attr(target_os =
//!   "wasi", ignore)]` added) stops none that ran before ([`FileCfg::excludes`]).

use super::Text;

/// Configurations that only a special runner sets (Miri's interpreter, loom's model checker):
/// a test ignored under one of them still runs under `cargo test`.
const TOOL_CFGS: &[&str] = &["miri", "loom"];

/// The predicate of `#[cfg_attr(P, ignore…)]` in a marker's code, white space removed, and
/// split at the top level of an `any(…)`: the conditions any one of which ignores the test.
fn alternatives(marker: &str) -> Option<Vec<String>> {
    let args = marker.split_once("cfg_attr")?.1.split_once('(')?.1;
    let (predicate, _) = args.rsplit_once(',')?;
    let predicate: String = predicate.split_whitespace().collect();
    let alternatives = match predicate
        .strip_prefix("any(")
        .and_then(|p| p.strip_suffix(')'))
    {
        Some(inner) => split_top(inner),
        None => vec![predicate],
    };
    (!alternatives.is_empty()).then_some(alternatives)
}

/// Whether a Rust marker (masked code: strings blank) is `#[cfg_attr(P, ignore)]` whose
/// condition holds only under such a runner (`miri`, `any(miri, loom)`): the test is not skipped
/// where the suite is run, so the marker hides nothing. `not(miri)`, a platform or a feature is
/// a real skip.
pub(super) fn only_under_a_tool(marker: &[u8]) -> bool {
    alternatives(&String::from_utf8_lossy(marker))
        .is_some_and(|names| names.iter().all(|n| TOOL_CFGS.contains(&n.as_str())))
}

/// The conditions under which a Rust file is not compiled at all: the `not(…)` terms of its
/// inner `#![cfg(…)]` attributes (each term of a top-level `all(…)`), white space removed.
#[derive(Debug, Default)]
pub(super) struct FileCfg {
    excluded: Vec<String>,
}

impl FileCfg {
    pub fn of(text: &Text<'_>) -> FileCfg {
        let masked = &text.masked;
        let mut excluded = Vec::new();
        let mut from = 0;
        while let Some(at) = memchr::memmem::find(&masked[from..], b"#![cfg(") {
            let open = from + at + "#![cfg".len();
            let Some(close) = crate::rules::code::closing(masked, open) else {
                break;
            };
            let predicate: String = super::shown(text, open + 1..close)
                .split_whitespace()
                .collect();
            let terms = match predicate
                .strip_prefix("all(")
                .and_then(|p| p.strip_suffix(')'))
            {
                Some(inner) => split_top(inner),
                None => vec![predicate],
            };
            excluded.extend(terms.into_iter().filter_map(|t| {
                t.strip_prefix("not(")
                    .and_then(|t| t.strip_suffix(')'))
                    .map(str::to_owned)
            }));
            from = close;
        }
        FileCfg { excluded }
    }

    /// Whether every condition under which `marker` (its code, strings shown) ignores its test
    /// is one the file was not compiled under.
    pub fn excludes(&self, marker: &str) -> bool {
        !self.excluded.is_empty()
            && alternatives(marker)
                .is_some_and(|names| names.iter().all(|n| self.excluded.iter().any(|e| e == n)))
    }
}

/// `s` split at its top-level commas, empty parts dropped.
fn split_top(s: &str) -> Vec<String> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out.into_iter()
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect()
}
