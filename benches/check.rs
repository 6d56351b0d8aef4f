//! `cargo bench --bench check`: `forgeward check` against `git diff` on two generated
//! repositories (a large mixed-language change and a small one), and the check on an empty
//! range (what it costs before it reads a file), with wall time, CPU time and peak RSS of each
//! child process, and where one more check's time went per rule (`forgeward check --timings`). It reports targets met or missed; it never fails on them.
//!
//! Environment knobs (all optional):
//! - `FORGEWARD_BENCH_RUNS`: measured runs per command (default 7).
//! - `FORGEWARD_BENCH_KEEP=1`: keep the generated repositories (in the system temp dir) and
//!   print where they are, for profiling by hand.
//! - `FORGEWARD_BENCH_GEN_ONLY=1`: generate and print the change sizes, measure nothing.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FORGEWARD: &str = env!("CARGO_BIN_EXE_forgeward");
const DEFAULT_RUNS: usize = 7;

// Targets, on medians in the same run: the large change at most half again `git diff -U0`'s
// time on the same range; the small one within a few milliseconds of it (what starting a
// process, opening the repository and reading the base's configuration cost beyond git's).
const LARGE_RATIO_TARGET: f64 = 1.5;
const SMALL_SLACK_MS: f64 = 5.0;
const RSS_MIB_TARGET: f64 = 30.0;

// ---------------------------------------------------------------------------------------------
// A tiny deterministic PRNG (splitmix64).

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Inclusive on both ends.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

// ---------------------------------------------------------------------------------------------
// Code-like text.

const NOUNS: &[&str] = &[
    "user", "order", "invoice", "cache", "token", "session", "request", "response", "payload",
    "record", "index", "buffer", "stream", "queue", "worker", "schema", "field", "value", "result",
    "client", "server", "metric", "event", "handler", "route", "batch", "limit", "offset", "retry",
    "account", "profile", "report", "ledger", "message", "channel", "config", "option", "entry",
    "node", "edge", "graph", "path", "chunk", "page", "cursor", "filter", "query", "price", "item",
    "cart", "tenant", "region", "shard", "lease", "job", "task", "snapshot", "header", "window",
    "budget",
];
const VERBS: &[&str] = &[
    "get",
    "load",
    "parse",
    "build",
    "render",
    "fetch",
    "store",
    "update",
    "compute",
    "validate",
    "merge",
    "split",
    "resolve",
    "encode",
    "decode",
    "normalize",
    "flush",
    "apply",
    "collect",
    "format",
    "emit",
    "check",
    "sync",
    "reset",
    "scan",
    "find",
    "sort",
    "group",
    "send",
    "prune",
];
const ADJS: &[&str] = &[
    "pending", "active", "stale", "cached", "raw", "next", "last", "default", "partial", "total",
    "max", "min", "current", "remote", "local", "shared", "empty", "valid", "primary", "fallback",
];
const PHRASES: &[&str] = &[
    "so that callers never see a partial",
    "before the lock is released, or the",
    "which keeps the hot path free of a second",
    "because the upstream API may return a stale",
    "only when the feature flag enables the",
    "without allocating for the common",
    "to match what the billing service expects for the",
    "as the migration in 2023 left behind an old",
    "so retries stay idempotent for every",
    "and logs once per",
];

fn cap(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

fn noun(r: &mut Rng) -> &'static str {
    NOUNS[r.below(NOUNS.len())]
}

fn snake(r: &mut Rng) -> String {
    if r.chance(0.5) {
        format!("{}_{}_{}", r.pick(VERBS), r.pick(ADJS), noun(r))
    } else {
        format!("{}_{}", r.pick(VERBS), noun(r))
    }
}

fn var(r: &mut Rng) -> String {
    if r.chance(0.4) {
        format!("{}_{}", r.pick(ADJS), noun(r))
    } else {
        noun(r).to_owned()
    }
}

fn camel(s: &str) -> String {
    let mut out = String::new();
    for (i, part) in s.split('_').enumerate() {
        if i == 0 {
            out.push_str(part);
        } else {
            out.push_str(&cap(part));
        }
    }
    out
}

fn pascal(s: &str) -> String {
    s.split('_').map(cap).collect()
}

fn sentence(r: &mut Rng) -> String {
    let v = r.pick(VERBS);
    let a = r.pick(ADJS);
    let n = noun(r);
    let p = r.pick(PHRASES);
    let m = noun(r);
    match r.below(4) {
        0 => format!("{}s the {a} {n} {p} {m}.", cap(v)),
        1 => format!("{} the {n} first, {p} {m}.", cap(v)),
        2 => format!("NOTE: {v} the {a} {n} here {p} {m}."),
        _ => format!("The {n} is {a} here; {v} it {p} {m}."),
    }
}

fn int_lit(r: &mut Rng) -> String {
    match r.below(4) {
        0 => r.range(0, 9).to_string(),
        1 => r.range(10, 999).to_string(),
        2 => (r.range(1, 64) * 1024).to_string(),
        _ => r.range(1000, 99999).to_string(),
    }
}

fn str_lit(r: &mut Rng) -> String {
    match r.below(3) {
        0 => format!("{}-{}", noun(r), r.range(1, 999)),
        1 => format!("{}.{}", noun(r), r.pick(ADJS)),
        _ => format!("{} {}", r.pick(VERBS), noun(r)),
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Lang {
    Py,
    Ts,
    Go,
    Rs,
    Java,
}

/// One source file, as blocks so that the head can replace and insert whole functions.
#[derive(Clone)]
struct SourceFile {
    lang: Lang,
    test: bool,
    /// Go package, Java package and class, Python module to import: what the header needs.
    header: Vec<String>,
    blocks: Vec<Vec<String>>,
    footer: Vec<String>,
}

impl SourceFile {
    fn text(&self) -> String {
        let mut s = String::new();
        for l in self
            .header
            .iter()
            .chain(self.blocks.iter().flatten())
            .chain(&self.footer)
        {
            s.push_str(l);
            s.push('\n');
        }
        s
    }
}

fn ind(lang: Lang, depth: usize) -> String {
    match lang {
        Lang::Go => "\t".repeat(depth),
        Lang::Ts => "  ".repeat(depth),
        _ => "    ".repeat(depth),
    }
}

/// One to four lines of a statement at `depth`.
fn statement(lang: Lang, r: &mut Rng, depth: usize) -> Vec<String> {
    let i = ind(lang, depth);
    let i1 = ind(lang, depth + 1);
    let v = var(r);
    let f = snake(r);
    let a = var(r);
    let x = noun(r).chars().next().unwrap_or('x');
    let attr = noun(r);
    let attr2 = r.pick(ADJS);
    let n = int_lit(r);
    let s = str_lit(r);
    let k = r.below(9);
    match lang {
        Lang::Py => match k {
            0 => vec![format!("{i}{v} = {f}({a}, {n})")],
            1 => vec![format!("{i}{v} = {a}.get(\"{s}\", {n})")],
            2 => vec![format!("{i}if {v} is None:"), format!("{i1}return {n}")],
            3 => vec![
                format!("{i}for {x} in {a}:"),
                format!("{i1}{v}.append({x}.{attr})"),
            ],
            4 => vec![format!("{i}# {}", sentence(r))],
            5 => vec![format!("{i}logger.debug(\"{} %s\", {v})", sentence(r))],
            6 => vec![format!(
                "{i}{v} = [{x}.{attr} for {x} in {a} if {x}.{attr2}]"
            )],
            7 => vec![
                format!("{i}try:"),
                format!("{i1}{v} = int({a}.{attr})"),
                format!("{i}except ValueError as exc:"),
                format!("{i1}raise {}Error(\"{s}\") from exc", pascal(&f)),
            ],
            _ => vec![
                format!("{i}{v} = {{"),
                format!("{i1}\"{attr}\": {a},"),
                format!("{i1}\"{attr2}\": {n},"),
                format!("{i}}}"),
            ],
        },
        Lang::Ts => {
            let fc = camel(&f);
            let vc = camel(&v);
            let ac = camel(&a);
            match k {
                0 => vec![format!("{i}const {vc} = {fc}({ac}, {n});")],
                1 => vec![format!(
                    "{i}let {vc}: {} | undefined = {ac}.get('{s}');",
                    pascal(attr)
                )],
                2 => vec![
                    format!("{i}if ({vc} === undefined) {{"),
                    format!("{i1}return {n};"),
                    format!("{i}}}"),
                ],
                3 => vec![
                    format!("{i}for (const {x} of {ac}) {{"),
                    format!("{i1}{vc}.push({x}.{attr});"),
                    format!("{i}}}"),
                ],
                4 => vec![format!("{i}// {}", sentence(r))],
                5 => vec![format!("{i}logger.debug(`{} ${{{vc}}}`);", sentence(r))],
                6 => vec![format!(
                    "{i}const {vc} = {ac}.filter(({x}) => {x}.{attr} > {n}).map(({x}) => {x}.{attr2});"
                )],
                7 => vec![format!("{i}const {vc} = await this.{fc}({ac}, '{s}');")],
                _ => vec![
                    format!("{i}const {vc} = {{"),
                    format!("{i1}{attr}: {ac},"),
                    format!("{i1}{attr2}: {n},"),
                    format!("{i}}};"),
                ],
            }
        }
        Lang::Go => {
            let fp = pascal(&f);
            let vc = camel(&v);
            let ac = camel(&a);
            let ap = pascal(attr);
            match k {
                0 => vec![format!("{i}{vc} := {fp}({ac}, {n})")],
                1 => vec![
                    format!("{i}{vc}, err := {fp}(ctx, {ac})"),
                    format!("{i}if err != nil {{"),
                    format!(
                        "{i1}return nil, fmt.Errorf(\"{} {}: %w\", err)",
                        r.pick(VERBS),
                        noun(r)
                    ),
                    format!("{i}}}"),
                ],
                2 => vec![
                    format!("{i}if {vc} == nil {{"),
                    format!("{i1}return nil, nil"),
                    format!("{i}}}"),
                ],
                3 => vec![
                    format!("{i}for _, {x} := range {ac} {{"),
                    format!("{i1}{vc} = append({vc}, {x}.{ap})"),
                    format!("{i}}}"),
                ],
                4 => vec![format!("{i}// {}", sentence(r))],
                5 => vec![format!("{i}log.Printf(\"{}: %v\", {vc})", sentence(r))],
                6 => vec![format!("{i}{vc} := strings.TrimPrefix({ac}.{ap}, \"{s}\")")],
                7 => vec![format!("{i}{vc} += {n}")],
                _ => vec![
                    format!("{i}{vc} := map[string]int{{"),
                    format!("{i1}\"{attr}\": {n},"),
                    format!("{i1}\"{attr2}\": len({ac}),"),
                    format!("{i}}}"),
                ],
            }
        }
        Lang::Rs => match k {
            0 => vec![format!("{i}let {v} = {f}(&{a}, {n});")],
            1 => vec![format!(
                "{i}let mut {v}: Vec<{}> = Vec::with_capacity({n});",
                pascal(attr)
            )],
            2 => vec![
                format!("{i}if {v}.is_empty() {{"),
                format!("{i1}return Err(Error::{}(\"{s}\".into()));", pascal(&f)),
                format!("{i}}}"),
            ],
            3 => vec![
                format!("{i}for {x} in {a}.iter() {{"),
                format!("{i1}{v}.push({x}.{attr}.clone());"),
                format!("{i}}}"),
            ],
            4 => vec![format!("{i}// {}", sentence(r))],
            5 => vec![format!(
                "{i}tracing::debug!({v} = ?{v}, \"{}\");",
                sentence(r)
            )],
            6 => vec![format!(
                "{i}let {v} = {a}.iter().filter(|{x}| {x}.{attr} > {n}).count();"
            )],
            7 => vec![format!(
                "{i}let {v} = {a}.get(\"{s}\").copied().unwrap_or({n});"
            )],
            _ => vec![
                format!("{i}let {v} = match {a} {{"),
                format!("{i1}Some({x}) => {x}.{attr},"),
                format!("{i1}None => {n},"),
                format!("{i}}};"),
            ],
        },
        Lang::Java => {
            let fc = camel(&f);
            let vc = camel(&v);
            let ac = camel(&a);
            let ap = pascal(attr);
            match k {
                0 => vec![format!("{i}var {vc} = {fc}({ac}, {n});")],
                1 => vec![format!("{i}List<{ap}> {vc} = new ArrayList<>();")],
                2 => vec![
                    format!("{i}if ({vc} == null) {{"),
                    format!("{i1}return {n};"),
                    format!("{i}}}"),
                ],
                3 => vec![
                    format!("{i}for (var {x} : {ac}) {{"),
                    format!("{i1}{vc}.add({x}.get{ap}());"),
                    format!("{i}}}"),
                ],
                4 => vec![format!("{i}// {}", sentence(r))],
                5 => vec![format!("{i}log.debug(\"{} {{}}\", {vc});", sentence(r))],
                6 => vec![format!("{i}String {vc} = {ac}.get{ap}().orElse(\"{s}\");")],
                7 => vec![format!("{i}{vc} += {n};")],
                _ => vec![
                    format!("{i}Map<String, Integer> {vc} = Map.of("),
                    format!("{i1}\"{attr}\", {n},"),
                    format!("{i1}\"{attr2}\", {ac}.size()"),
                    format!("{i});"),
                ],
            }
        }
    }
}

fn body(lang: Lang, r: &mut Rng, depth: usize, lo: usize, hi: usize) -> Vec<String> {
    let mut out = Vec::new();
    for _ in 0..r.range(lo, hi) {
        out.extend(statement(lang, r, depth));
    }
    out
}

/// A function (or a test), blank line included.
fn block(lang: Lang, test: bool, r: &mut Rng) -> Vec<String> {
    let name = snake(r);
    let ret = var(r);
    let mut b = Vec::new();
    match (lang, test) {
        (Lang::Py, false) => {
            if r.chance(0.15) {
                let cls = pascal(&format!("{}_{}", r.pick(ADJS), noun(r)));
                let field = noun(r);
                b.push(format!("class {cls}:"));
                b.push(format!("    \"\"\"{}\"\"\"", sentence(r)));
                b.push(String::new());
                b.push(format!("    def __init__(self, {field}):"));
                b.push(format!("        self.{field} = {field}"));
                b.push(String::new());
                b.push(format!("    def {name}(self, {ret}):"));
                b.extend(body(lang, r, 2, 2, 6));
                b.push(format!("        return self.{field}"));
            } else {
                let arg = var(r);
                b.push(format!("def {name}({arg}, {ret}=None):"));
                if r.chance(0.5) {
                    b.push(format!("    \"\"\"{}", sentence(r)));
                    b.push(String::new());
                    b.push("    Args:".into());
                    b.push(format!("        {arg}: the {} {}.", r.pick(ADJS), noun(r)));
                    b.push("    \"\"\"".into());
                } else {
                    b.push(format!("    \"\"\"{}\"\"\"", sentence(r)));
                }
                b.extend(body(lang, r, 1, 3, 8));
                b.push(format!("    return {ret}"));
            }
            b.push(String::new());
            b.push(String::new());
        }
        (Lang::Py, true) => {
            if r.chance(0.2) {
                b.push(format!(
                    "@pytest.mark.parametrize(\"{ret}\", [{}, {}, {}])",
                    int_lit(r),
                    int_lit(r),
                    int_lit(r)
                ));
                b.push(format!("def test_{name}({ret}):"));
            } else {
                b.push(format!("def test_{name}():"));
            }
            b.extend(body(lang, r, 1, 2, 6));
            b.push(format!("    assert {name}({ret}) == {}", int_lit(r)));
            b.push(String::new());
            b.push(String::new());
        }
        (Lang::Ts, false) => {
            let c = camel(&name);
            let arg = camel(&var(r));
            b.push(format!("/** {} */", sentence(r)));
            b.push(format!(
                "export async function {c}({arg}: {}[], limit = {}): Promise<number> {{",
                pascal(noun(r)),
                int_lit(r)
            ));
            b.extend(body(lang, r, 1, 3, 8));
            b.push(format!("  return {}.length;", camel(&ret)));
            b.push("}".into());
            b.push(String::new());
        }
        (Lang::Ts, true) => {
            let c = camel(&name);
            b.push(format!("describe('{c}', () => {{"));
            for _ in 0..r.range(1, 2) {
                b.push(format!(
                    "  it('{}', async () => {{",
                    sentence(r).trim_end_matches('.')
                ));
                b.extend(body(lang, r, 2, 1, 4));
                b.push(format!(
                    "    expect(await {c}({})).toBe({});",
                    camel(&ret),
                    int_lit(r)
                ));
                b.push("  });".into());
            }
            b.push("});".into());
            b.push(String::new());
        }
        (Lang::Go, false) => {
            let p = pascal(&name);
            b.push(format!("// {p} {}", sentence(r)));
            b.push(format!(
                "func {p}(ctx context.Context, {} []{}) ([]string, error) {{",
                camel(&var(r)),
                pascal(noun(r))
            ));
            b.extend(body(lang, r, 1, 3, 8));
            b.push(format!("\treturn {}, nil", camel(&ret)));
            b.push("}".into());
            b.push(String::new());
        }
        (Lang::Go, true) => {
            let p = pascal(&name);
            b.push(format!("func Test{p}(t *testing.T) {{"));
            b.extend(body(lang, r, 1, 1, 4));
            b.push(format!("\tgot, err := {p}(context.Background(), nil)"));
            b.push("\tif err != nil {".into());
            b.push(format!("\t\tt.Fatalf(\"{p}: %v\", err)"));
            b.push("\t}".into());
            b.push(format!("\tif len(got) != {} {{", int_lit(r)));
            b.push("\t\tt.Errorf(\"got %d items\", len(got))".into());
            b.push("\t}".into());
            b.push("}".into());
            b.push(String::new());
        }
        (Lang::Rs, _) => {
            b.push(format!("/// {}", sentence(r)));
            b.push(format!(
                "pub fn {name}({}: &[{}], limit: usize) -> Result<usize, Error> {{",
                var(r),
                pascal(noun(r))
            ));
            b.extend(body(lang, r, 1, 3, 8));
            b.push(format!("    Ok({ret}.len())"));
            b.push("}".into());
            b.push(String::new());
        }
        (Lang::Java, false) => {
            let c = camel(&name);
            b.push(format!("    /** {} */", sentence(r)));
            b.push(format!(
                "    public int {c}(List<{}> {}, int limit) {{",
                pascal(noun(r)),
                camel(&var(r))
            ));
            b.extend(body(lang, r, 2, 3, 8));
            b.push(format!("        return {}.size();", camel(&ret)));
            b.push("    }".into());
            b.push(String::new());
        }
        (Lang::Java, true) => {
            let c = camel(&name);
            b.push("    @Test".into());
            b.push(format!("    void {c}() {{"));
            b.extend(body(lang, r, 2, 1, 4));
            b.push(format!(
                "        assertEquals({}, subject.{c}(List.of(), 0));",
                int_lit(r)
            ));
            b.push("    }".into());
            b.push(String::new());
        }
    }
    b
}

fn rust_tests(r: &mut Rng, count: usize, ignored: bool) -> Vec<String> {
    let mut f = vec![
        "#[cfg(test)]".to_owned(),
        "mod tests {".into(),
        "    use super::*;".into(),
        String::new(),
    ];
    for i in 0..count {
        if ignored && i == count - 1 {
            f.push("    #[ignore = \"flaky on CI\"]".into());
        }
        let name = snake(r);
        f.push("    #[test]".into());
        f.push(format!("    fn {name}_works() {{"));
        f.extend(body(Lang::Rs, r, 2, 1, 3));
        f.push(format!(
            "        assert_eq!({name}(&[], {}).unwrap(), 0);",
            int_lit(r)
        ));
        f.push("    }".into());
        if i + 1 < count {
            f.push(String::new());
        }
    }
    f.push("}".into());
    f
}

fn new_file(
    lang: Lang,
    test: bool,
    dir: &str,
    stem: &str,
    r: &mut Rng,
    blocks: usize,
) -> SourceFile {
    let mut header = Vec::new();
    let mut footer = Vec::new();
    match lang {
        Lang::Py => {
            header.push(format!("\"\"\"{}\"\"\"", sentence(r)));
            header.push(String::new());
            header.push("from __future__ import annotations".into());
            header.push(String::new());
            header.push("import json".into());
            header.push("import logging".into());
            header.push("import os".into());
            if test {
                header.push(String::new());
                header.push("import pytest".into());
                header.push(String::new());
                header.push(format!("from app.{} import *  # noqa: F403", noun(r)));
            } else {
                header.push(String::new());
                header.push(format!("from .{} import {}", noun(r), snake(r)));
                header.push(String::new());
                header.push("logger = logging.getLogger(__name__)".into());
            }
            header.push(String::new());
            header.push(String::new());
        }
        Lang::Ts => {
            header.push(format!(
                "import {{ {}, {} }} from './{}';",
                camel(&snake(r)),
                camel(&snake(r)),
                noun(r)
            ));
            header.push("import { logger } from '../log';".into());
            if test {
                header.push("import { describe, expect, it } from 'vitest';".into());
            }
            header.push(String::new());
        }
        Lang::Go => {
            header.push(format!("package {dir}"));
            header.push(String::new());
            header.push("import (".into());
            header.push("\t\"context\"".into());
            header.push("\t\"fmt\"".into());
            header.push("\t\"log\"".into());
            header.push("\t\"strings\"".into());
            if test {
                header.push("\t\"testing\"".into());
            }
            header.push(")".into());
            header.push(String::new());
        }
        Lang::Rs => {
            header.push(format!("//! {}", sentence(r)));
            header.push(String::new());
            header.push("use std::collections::HashMap;".into());
            header.push(String::new());
            header.push("use crate::error::Error;".into());
            header.push(String::new());
            let tests = r.range(2, 4);
            footer = rust_tests(r, tests, false);
        }
        Lang::Java => {
            let class = pascal(stem);
            header.push(format!("package com.acme.{dir};"));
            header.push(String::new());
            header.push("import java.util.ArrayList;".into());
            header.push("import java.util.List;".into());
            header.push("import java.util.Map;".into());
            if test {
                header.push(String::new());
                header.push("import org.junit.jupiter.api.Disabled;".into());
                header.push("import org.junit.jupiter.api.Test;".into());
                header.push(String::new());
                header.push("import static org.junit.jupiter.api.Assertions.assertEquals;".into());
            }
            header.push(String::new());
            header.push(format!("/** {} */", sentence(r)));
            header.push(format!("public class {class} {{"));
            if test {
                header.push(format!(
                    "    private final {} subject = new {}();",
                    class.trim_end_matches("Test"),
                    class.trim_end_matches("Test")
                ));
                header.push(String::new());
            }
            footer.push("}".into());
        }
    }
    let blocks = (0..blocks).map(|_| block(lang, test, r)).collect();
    SourceFile {
        lang,
        test,
        header,
        blocks,
        footer,
    }
}

// ---------------------------------------------------------------------------------------------
// Repositories.

struct Spec {
    name: &'static str,
    seed: u64,
    base_files: usize,
    /// Blocks per base file (inclusive range).
    base_blocks: (usize, usize),
    modify: f64,
    /// Blocks replaced and inserted in a modified file.
    replace: (usize, usize),
    insert: (usize, usize),
    added_files: usize,
    added_blocks: (usize, usize),
    deleted_files: usize,
    renamed_files: usize,
    /// The sabotage signs and their decoys; the small repo gets one skip only.
    sabotage: bool,
}

const LARGE: Spec = Spec {
    name: "large",
    seed: 0x5EED_0001,
    base_files: 600,
    base_blocks: (6, 16),
    modify: 0.9,
    replace: (9, 17),
    insert: (3, 11),
    added_files: 55,
    added_blocks: (8, 18),
    deleted_files: 8,
    renamed_files: 8,
    sabotage: true,
};

const SMALL: Spec = Spec {
    name: "small",
    seed: 0x5EED_0002,
    base_files: 60,
    base_blocks: (3, 8),
    modify: 0.6,
    replace: (0, 0),
    insert: (4, 11),
    added_files: 3,
    added_blocks: (5, 8),
    deleted_files: 0,
    renamed_files: 1,
    sabotage: false,
};

/// A file of the tree: generated source, or fixed text (manifests, `__init__.py`).
#[derive(Clone)]
enum Content {
    Source(SourceFile),
    Text(String),
}

impl Content {
    fn text(&self) -> String {
        match self {
            Content::Source(f) => f.text(),
            Content::Text(t) => t.clone(),
        }
    }
}

struct Tree {
    files: Vec<(String, Content)>,
}

impl Tree {
    fn write(&self, root: &Path) {
        for (path, content) in &self.files {
            let p = root.join(path);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, content.text()).unwrap();
        }
    }

    fn find(&self, mut pred: impl FnMut(&str, &Content) -> bool) -> Option<usize> {
        self.files.iter().position(|(p, c)| pred(p, c))
    }
}

const PY_PKGS: &[&str] = &[
    "billing", "accounts", "ingest", "search", "notify", "reports",
];
const TS_DIRS: &[&str] = &["api", "components", "store", "utils"];
const GO_PKGS: &[&str] = &["gateway", "scheduler", "storage", "auth"];
const RS_CRATES: &[&str] = &["core", "engine", "wire"];
const JAVA_PKGS: &[&str] = &["orders", "payments", "inventory"];

/// Where the `i`th generated file of a language lives.
fn place(lang: Lang, test: bool, i: usize, r: &mut Rng) -> (String, String, String) {
    let stem = format!("{}_{}", noun(r), i);
    match lang {
        Lang::Py => {
            let pkg = PY_PKGS[i % PY_PKGS.len()];
            if test {
                (format!("tests/{pkg}/test_{stem}.py"), pkg.into(), stem)
            } else {
                (format!("src/app/{pkg}/{stem}.py"), pkg.into(), stem)
            }
        }
        Lang::Ts => {
            let d = TS_DIRS[i % TS_DIRS.len()];
            let c = camel(&stem);
            if test {
                (format!("web/src/{d}/{c}.test.ts"), d.into(), stem)
            } else {
                (format!("web/src/{d}/{c}.ts"), d.into(), stem)
            }
        }
        Lang::Go => {
            let p = GO_PKGS[i % GO_PKGS.len()];
            if test {
                (format!("services/{p}/{stem}_test.go"), p.into(), stem)
            } else {
                (format!("services/{p}/{stem}.go"), p.into(), stem)
            }
        }
        Lang::Rs => {
            let c = RS_CRATES[i % RS_CRATES.len()];
            (format!("crates/{c}/src/{stem}.rs"), c.into(), stem)
        }
        Lang::Java => {
            let p = JAVA_PKGS[i % JAVA_PKGS.len()];
            let class = pascal(&stem);
            if test {
                (
                    format!("jvm/src/test/java/com/acme/{p}/{class}Test.java"),
                    p.into(),
                    format!("{stem}_test"),
                )
            } else {
                (
                    format!("jvm/src/main/java/com/acme/{p}/{class}.java"),
                    p.into(),
                    stem,
                )
            }
        }
    }
}

fn pick_lang(r: &mut Rng) -> (Lang, bool) {
    // Python 30%, TS 22%, Go 18%, Rust 15%, Java 15%; about 40% tests (Rust tests live inline).
    let lang = match r.below(100) {
        0..30 => Lang::Py,
        30..52 => Lang::Ts,
        52..70 => Lang::Go,
        70..85 => Lang::Rs,
        _ => Lang::Java,
    };
    let test = lang != Lang::Rs && r.chance(0.4);
    (lang, test)
}

fn manifests(head: bool) -> Vec<(String, Content)> {
    let mut req = String::from(
        "requests==2.31.0\nPyYAML==6.0.1\nsqlalchemy>=2.0\npydantic>=2.5,<3\nhttpx==0.27.0\n",
    );
    let mut pkg_deps = vec![
        ("axios", "^1.6.0"),
        ("lodash", "^4.17.21"),
        ("zod", "^3.22.4"),
    ];
    let mut go_mod = String::from(
        "module example.com/acme\n\ngo 1.22\n\nrequire (\n\tgithub.com/google/uuid v1.6.0\n\tgolang.org/x/sync v0.6.0\n)\n",
    );
    if head {
        req.push_str("tenacity==8.2.3\norjson==3.9.15\n");
        pkg_deps.push(("date-fns", "^3.3.1"));
        go_mod = go_mod.replace("v0.6.0", "v0.7.0");
    }
    let deps = pkg_deps
        .iter()
        .map(|(n, v)| format!("    \"{n}\": \"{v}\""))
        .collect::<Vec<_>>()
        .join(",\n");
    let pkg = format!(
        "{{\n  \"name\": \"@acme/web\",\n  \"version\": \"1.4.0\",\n  \"private\": true,\n  \"scripts\": {{\n    \"test\": \"vitest run\"\n  }},\n  \"dependencies\": {{\n{deps}\n  }},\n  \"devDependencies\": {{\n    \"vitest\": \"^1.3.1\",\n    \"typescript\": \"^5.4.2\"\n  }}\n}}\n"
    );
    let mut out = vec![
        ("requirements.txt".to_owned(), Content::Text(req)),
        (
            "requirements-dev.txt".to_owned(),
            Content::Text("pytest==8.0.2\npytest-cov==4.1.0\n".into()),
        ),
        ("web/package.json".to_owned(), Content::Text(pkg)),
        ("services/go.mod".to_owned(), Content::Text(go_mod)),
    ];
    for c in RS_CRATES {
        out.push((
            format!("crates/{c}/Cargo.toml"),
            Content::Text(format!(
                "[package]\nname = \"acme-{c}\"\nversion = \"0.3.0\"\nedition = \"2021\"\n\n[dependencies]\nserde = \"1\"\ntracing = \"0.1\"\n"
            )),
        ));
    }
    out
}

fn base_tree(spec: &Spec, r: &mut Rng) -> Tree {
    let mut files = manifests(false);
    files.push((
        "README.md".into(),
        Content::Text("# acme\n\nThe monorepo of everything acme.\n".into()),
    ));
    for pkg in PY_PKGS {
        files.push((
            format!("src/app/{pkg}/__init__.py"),
            Content::Text(String::new()),
        ));
    }
    files.push(("src/app/__init__.py".into(), Content::Text(String::new())));
    let fixed = files.len();
    for i in 0..spec.base_files.saturating_sub(fixed) {
        let (lang, test) = pick_lang(r);
        let (path, dir, stem) = place(lang, test, i, r);
        let blocks = r.range(spec.base_blocks.0, spec.base_blocks.1);
        files.push((
            path,
            Content::Source(new_file(lang, test, &dir, &stem, r, blocks)),
        ));
    }
    Tree { files }
}

fn modify(f: &mut SourceFile, spec: &Spec, r: &mut Rng) {
    let n = f.blocks.len();
    let replace = r.range(spec.replace.0, spec.replace.1).min(n);
    let mut chosen = BTreeSet::new();
    while chosen.len() < replace {
        chosen.insert(r.below(n));
    }
    for &i in &chosen {
        f.blocks[i] = block(f.lang, f.test, r);
    }
    for _ in 0..r.range(spec.insert.0, spec.insert.1) {
        let at = r.range(0, f.blocks.len());
        let b = block(f.lang, f.test, r);
        f.blocks.insert(at, b);
    }
}

/// The head: most files modified, some added, a few deleted and renamed, plus sabotage.
fn head_tree(spec: &Spec, base: &Tree, r: &mut Rng) -> Tree {
    let mut files: Vec<(String, Content)> = Vec::new();
    let fixed_manifests = manifests(true);
    let sources: Vec<usize> = (0..base.files.len())
        .filter(|&i| matches!(base.files[i].1, Content::Source(_)))
        .collect();
    // Deleted and renamed files: distinct, from the sources.
    let mut gone = BTreeSet::new();
    let mut renamed = BTreeSet::new();
    while gone.len() < spec.deleted_files {
        gone.insert(sources[r.below(sources.len())]);
    }
    while renamed.len() < spec.renamed_files {
        let i = sources[r.below(sources.len())];
        if !gone.contains(&i) {
            renamed.insert(i);
        }
    }
    for (i, (path, content)) in base.files.iter().enumerate() {
        if gone.contains(&i) {
            continue;
        }
        match content {
            Content::Text(_) => {
                let new = fixed_manifests
                    .iter()
                    .find(|(p, _)| p == path)
                    .map_or_else(|| content.clone(), |(_, c)| c.clone());
                files.push((path.clone(), new));
            }
            Content::Source(f) => {
                let mut f = f.clone();
                if renamed.contains(&i) {
                    // A move into a `legacy/` directory, with one function edited half the time.
                    if r.chance(0.5) && !f.blocks.is_empty() {
                        let at = r.below(f.blocks.len());
                        f.blocks[at] = block(f.lang, f.test, r);
                    }
                    let (dir, name) = path.rsplit_once('/').unwrap();
                    files.push((format!("{dir}/legacy/{name}"), Content::Source(f)));
                } else {
                    if r.chance(spec.modify) {
                        modify(&mut f, spec, r);
                    }
                    files.push((path.clone(), Content::Source(f)));
                }
            }
        }
    }
    for i in 0..spec.added_files {
        let (lang, test) = pick_lang(r);
        let (path, dir, stem) = place(lang, test, 10_000 + i, r);
        let blocks = r.range(spec.added_blocks.0, spec.added_blocks.1);
        files.push((
            path,
            Content::Source(new_file(lang, test, &dir, &stem, r, blocks)),
        ));
    }
    let mut tree = Tree { files };
    sabotage(spec, base, &mut tree, r);
    tree
}

fn source_mut(
    tree: &mut Tree,
    pred: impl Fn(&str, &SourceFile) -> bool,
) -> Option<&mut SourceFile> {
    let i = tree.find(|p, c| matches!(c, Content::Source(f) if pred(p, f)))?;
    match &mut tree.files[i].1 {
        Content::Source(f) => Some(f),
        Content::Text(_) => None,
    }
}

fn insert_block(f: &mut SourceFile, b: Vec<String>) {
    let at = f.blocks.len() / 2;
    f.blocks.insert(at, b);
}

fn sabotage(spec: &Spec, base: &Tree, tree: &mut Tree, r: &mut Rng) {
    let is = |lang: Lang, test: bool| {
        move |p: &str, f: &SourceFile| f.lang == lang && f.test == test && !p.contains("legacy/")
    };
    // Every repository: one Python test newly skipped.
    if let Some(f) = source_mut(tree, is(Lang::Py, true)) {
        let mut b = vec!["@pytest.mark.skip(reason=\"flaky on CI, see #412\")".to_owned()];
        b.extend(
            block(Lang::Py, true, r)
                .into_iter()
                .filter(|l| !l.starts_with('@')),
        );
        insert_block(f, b);
    }
    if !spec.sabotage {
        return;
    }
    // A second Python test, expected to fail.
    let mut seen = 0;
    if let Some(i) = tree.find(|p, c| {
        matches!(c, Content::Source(f) if is(Lang::Py, true)(p, f)) && {
            seen += 1;
            seen == 5
        }
    }) && let Content::Source(f) = &mut tree.files[i].1
    {
        let mut b =
            vec!["@pytest.mark.xfail(reason=\"upstream returns 500 intermittently\")".to_owned()];
        b.extend(
            block(Lang::Py, true, r)
                .into_iter()
                .filter(|l| !l.starts_with('@')),
        );
        insert_block(f, b);
    }
    // Decoys: a skip in a comment and in a string, which are not skips.
    if let Some(f) = source_mut(tree, |p, f| {
        is(Lang::Py, true)(p, f) && p.contains("billing")
    }) {
        f.blocks.insert(
            0,
            vec![
                "# Do not use pytest.mark.skip here: fix the fixture instead.".into(),
                "SKIP_HINT = \"pytest.mark.skip is banned in this suite\"".into(),
                String::new(),
                String::new(),
            ],
        );
    }
    // TypeScript: it.skip.
    if let Some(f) = source_mut(tree, is(Lang::Ts, true)) {
        insert_block(
            f,
            vec![
                "describe('retry budget', () => {".into(),
                "  it.skip('gives up after the budget is spent', async () => {".into(),
                "    expect(await retryBudget(3)).toBe(0);".into(),
                "  });".into(),
                "});".into(),
                String::new(),
            ],
        );
    }
    // Go: t.Skip.
    if let Some(f) = source_mut(tree, is(Lang::Go, true)) {
        insert_block(
            f,
            vec![
                "func TestLeaseRenewal(t *testing.T) {".into(),
                "\tt.Skip(\"times out on CI\")".into(),
                "\tgot, err := RenewLease(context.Background(), nil)".into(),
                "\tif err != nil || len(got) != 1 {".into(),
                "\t\tt.Fatalf(\"RenewLease: %v %v\", got, err)".into(),
                "\t}".into(),
                "}".into(),
                String::new(),
            ],
        );
    }
    // Rust: #[ignore] in a test module.
    if let Some(f) = source_mut(tree, is(Lang::Rs, false)) {
        let count = f.footer.iter().filter(|l| l.trim() == "#[test]").count();
        f.footer = rust_tests(r, count + 1, true);
    }
    // Java: @Disabled.
    if let Some(f) = source_mut(tree, is(Lang::Java, true)) {
        insert_block(
            f,
            vec![
                "    @Disabled(\"flaky, see JIRA-2211\")".into(),
                "    @Test".into(),
                "    void refundsPartialOrders() {".into(),
                "        assertEquals(0, subject.hashCode() % 1);".into(),
                "    }".into(),
                String::new(),
            ],
        );
    }
    // Python production code: an import stubbed out.
    if let Some(f) = source_mut(tree, |p, f| {
        is(Lang::Py, false)(p, f) && p.contains("ingest")
    }) {
        let at = f.header.iter().position(|l| l == "import os").unwrap_or(0) + 1;
        for (k, l) in [
            "try:",
            "    import yaml",
            "except ImportError:",
            "    yaml = None",
        ]
        .into_iter()
        .enumerate()
        {
            f.header.insert(at + k, l.to_owned());
        }
    }
    // A stray backup of a base file beside it.
    if let Some((path, content)) = base
        .files
        .iter()
        .find(|(p, c)| p.starts_with("src/app/billing/") && matches!(c, Content::Source(_)))
    {
        tree.files.push((format!("{path}.bak"), content.clone()));
    }
    // A module shadowing a dependency (PyYAML) at a root of imports (`src/` layout).
    tree.files.push((
        "src/yaml.py".into(),
        Content::Text(
            "def safe_load(stream):\n    return {}\n\n\ndef safe_dump(data):\n    return \"\"\n"
                .into(),
        ),
    ));
}

struct Repo {
    _dir: Option<tempfile::TempDir>,
    path: PathBuf,
    home: PathBuf,
    base: String,
    head: String,
}

fn git_env(cmd: &mut Command, home: &Path) {
    for v in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_CONFIG",
    ] {
        cmd.env_remove(v);
    }
    cmd.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .env("GIT_PAGER", "cat")
        .env("GIT_AUTHOR_NAME", "Bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "Bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .env("GIT_AUTHOR_DATE", "2024-03-01T12:00:00Z")
        .env("GIT_COMMITTER_DATE", "2024-03-01T12:00:00Z");
}

fn git(repo: &Path, home: &Path, args: &[&str]) -> String {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(repo).args(args);
    git_env(&mut cmd, home);
    let out = cmd.output().expect("running git");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("git output is UTF-8")
}

fn build_repo(spec: &Spec) -> Repo {
    let dir = tempfile::Builder::new()
        .prefix(&format!("forgeward-bench-{}-", spec.name))
        .tempdir()
        .expect("creating a temp dir");
    let root = dir.path().to_path_buf();
    let home = root.join("home");
    let path = root.join("repo");
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(&path).unwrap();
    git(&path, &home, &["init", "-q", "-b", "main"]);

    let mut r = Rng::new(spec.seed);
    let base = base_tree(spec, &mut r);
    base.write(&path);
    git(&path, &home, &["add", "-A"]);
    git(&path, &home, &["commit", "-q", "-m", "base"]);
    let base_oid = git(&path, &home, &["rev-parse", "HEAD"]).trim().to_owned();

    let head = head_tree(spec, &base, &mut r);
    // Replace the tree: remove everything tracked, write the head.
    for (p, _) in &base.files {
        let _ = fs::remove_file(path.join(p));
    }
    head.write(&path);
    git(&path, &home, &["add", "-A"]);
    git(&path, &home, &["commit", "-q", "-m", "head"]);
    let head_oid = git(&path, &home, &["rev-parse", "HEAD"]).trim().to_owned();
    git(&path, &home, &["repack", "-adq"]);

    let keep = std::env::var_os("FORGEWARD_BENCH_KEEP").is_some_and(|v| v == "1");
    let dir = if keep {
        let kept = dir.keep();
        eprintln!("kept {} repository at {}", spec.name, kept.display());
        None
    } else {
        Some(dir)
    };
    Repo {
        _dir: dir,
        path,
        home,
        base: base_oid,
        head: head_oid,
    }
}

// ---------------------------------------------------------------------------------------------
// Measuring.

#[derive(Clone, Copy)]
struct Sample {
    wall: Duration,
    cpu: Duration,
    rss_kib: i64,
    ok: bool,
}

fn tv(t: libc::timeval) -> Duration {
    Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
}

/// Set in the environment of the bench binary re-run as the measuring runner.
const RUNNER_ENV: &str = "FORGEWARD_BENCH_RUNNER";

/// Runs `cmd` once through a fresh copy of this binary (the runner), which spawns it, reaps it
/// with `wait4` and prints what it measured.
///
/// Why not spawn it from here: Linux carries a process's peak RSS across `exec` (the old address
/// space's high-water mark goes into the new program's `ru_maxrss`), and a spawned child starts
/// from a copy of (or, with `posix_spawn`, the very) address space of its parent. Spawned from
/// this process, which held the generated trees, every child would report at least this
/// process's own peak. The runner is a few MiB when it spawns, so children report their own
/// peak plus that floor, which [`rss_floor`] measures with `true`.
fn run_once(cmd: &Command) -> Sample {
    let mut runner = Command::new(std::env::current_exe().expect("the bench binary's path"));
    runner
        .env(RUNNER_ENV, "1")
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => runner.env(k, v),
            None => runner.env_remove(k),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        runner.current_dir(dir);
    }
    let out = runner
        .stderr(Stdio::inherit())
        .output()
        .expect("running the runner");
    let text = String::from_utf8_lossy(&out.stdout);
    let f: Vec<u64> = text
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(
        out.status.success() && f.len() == 4,
        "the runner failed: {text}"
    );
    Sample {
        wall: Duration::from_nanos(f[0]),
        cpu: Duration::from_nanos(f[1]),
        rss_kib: f[2] as i64,
        ok: f[3] == 1,
    }
}

/// The runner: `<bench binary> PROGRAM ARGS...` with [`RUNNER_ENV`] set. Prints
/// `wall_ns cpu_ns maxrss_kib ok`.
fn runner() {
    let mut args = std::env::args_os().skip(1);
    let program = args.next().expect("the runner needs a program");
    let mut cmd = Command::new(program);
    cmd.args(args).env_remove(RUNNER_ENV);
    let s = spawn_and_wait4(&mut cmd);
    println!(
        "{} {} {} {}",
        s.wall.as_nanos(),
        s.cpu.as_nanos(),
        s.rss_kib,
        u8::from(s.ok)
    );
}

/// Peak RSS that `true` reports through the runner: what every measurement includes.
fn rss_floor() -> f64 {
    let floor = (0..3)
        .map(|_| run_once(&Command::new("true")).rss_kib)
        .min()
        .unwrap_or(0);
    floor as f64 / 1024.0
}

/// Spawns, and reaps with `wait4` for the child's own resource usage.
fn spawn_and_wait4(cmd: &mut Command) -> Sample {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let start = Instant::now();
    let child = cmd.spawn().expect("spawning the command");
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero rusage is a valid value; wait4 fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: plain FFI call with valid pointers to locals.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            break;
        }
        let err = std::io::Error::last_os_error();
        assert_eq!(err.kind(), std::io::ErrorKind::Interrupted, "wait4: {err}");
    }
    let wall = start.elapsed();
    // Reaped already: the Child must not be waited on again (dropping it does not wait).
    drop(child);
    Sample {
        wall,
        cpu: tv(ru.ru_utime) + tv(ru.ru_stime),
        rss_kib: ru.ru_maxrss,
        ok: libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
    }
}

struct Tool {
    label: &'static str,
    make: Box<dyn Fn() -> Command>,
    samples: Vec<Sample>,
}

impl Tool {
    fn median(&self, f: impl Fn(&Sample) -> Duration) -> Duration {
        let mut v: Vec<Duration> = self.samples.iter().map(f).collect();
        v.sort();
        v[v.len() / 2]
    }

    fn min_wall(&self) -> Duration {
        self.samples.iter().map(|s| s.wall).min().unwrap()
    }

    fn max_rss_mib(&self) -> f64 {
        self.samples.iter().map(|s| s.rss_kib).max().unwrap() as f64 / 1024.0
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn tools(repo: &Repo) -> Vec<Tool> {
    let forgeward = |head: &str| {
        let (path, home, base, head) = (
            repo.path.clone(),
            repo.home.clone(),
            repo.base.clone(),
            head.to_owned(),
        );
        move || {
            let mut c = Command::new(FORGEWARD);
            c.args(["check", "--repo"]).arg(&path).args([
                "--base", &base, "--head", &head, "--format", "json", "--mode", "warn",
            ]);
            git_env(&mut c, &home);
            c
        }
    };
    let git_diff = |extra: &'static [&'static str]| {
        let (path, home, base, head) = (
            repo.path.clone(),
            repo.home.clone(),
            repo.base.clone(),
            repo.head.clone(),
        );
        move || {
            let mut c = Command::new("git");
            c.arg("-C")
                .arg(&path)
                .args(["diff", "-U0"])
                .args(extra)
                .args([&base, &head]);
            git_env(&mut c, &home);
            c
        }
    };
    vec![
        Tool {
            label: "forgeward check --format json",
            make: Box::new(forgeward(&repo.head)),
            samples: Vec::new(),
        },
        Tool {
            label: "git diff -U0",
            make: Box::new(git_diff(&[])),
            samples: Vec::new(),
        },
        Tool {
            label: "git diff -U0 --no-renames",
            make: Box::new(git_diff(&["--no-renames"])),
            samples: Vec::new(),
        },
        Tool {
            label: "git diff -U0 -M",
            make: Box::new(git_diff(&["-M"])),
            samples: Vec::new(),
        },
        // The same command on an empty range: what a check costs before it reads a file
        // (process start, the repository opened, the revisions resolved, the configuration
        // read). The rest of the first row is the detector reading the change.
        Tool {
            label: EMPTY_RANGE,
            make: Box::new(forgeward(&repo.base)),
            samples: Vec::new(),
        },
    ]
}

const EMPTY_RANGE: &str = "forgeward check, empty range";

fn measure(repo: &Repo, runs: usize) -> Vec<Tool> {
    let mut tools = tools(repo);
    for t in &tools {
        let s = run_once(&(t.make)());
        if !s.ok {
            println!("WARNING: warm-up of `{}` failed", t.label);
        }
    }
    for _ in 0..runs {
        for t in &mut tools {
            let s = run_once(&(t.make)());
            if !s.ok {
                println!("WARNING: `{}` exited unsuccessfully", t.label);
            }
            t.samples.push(s);
        }
    }
    tools
}

/// Runs forgeward once with `--timings` and prints where its time went.
fn breakdown(repo: &Repo) {
    let mut c = Command::new(FORGEWARD);
    c.args(["check", "--repo"]).arg(&repo.path).args([
        "--base",
        &repo.base,
        "--head",
        &repo.head,
        "--format",
        "json",
        "--mode",
        "warn",
        "--timings",
    ]);
    git_env(&mut c, &repo.home);
    let out = c.output().expect("running forgeward");
    for line in String::from_utf8_lossy(&out.stderr).lines() {
        if let Some(rest) = line.strip_prefix("forgeward: timings: ") {
            println!("  {rest}");
        }
    }
}

/// Runs forgeward once more with its output captured, and checks the JSON against git.
fn verify(repo: &Repo) {
    let out = {
        let mut c = Command::new(FORGEWARD);
        c.args(["check", "--repo"]).arg(&repo.path).args([
            "--base", &repo.base, "--head", &repo.head, "--format", "json", "--mode", "warn",
        ]);
        git_env(&mut c, &repo.home);
        c.output().expect("running forgeward")
    };
    if !out.status.success() {
        println!(
            "WARNING: forgeward exited with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let json: serde_json::Value = match serde_json::from_slice(&out.stdout) {
        Ok(v) => v,
        Err(e) => {
            println!("WARNING: forgeward's output is not JSON: {e}");
            return;
        }
    };
    let git_files = git(
        &repo.path,
        &repo.home,
        &["diff", "--name-only", "-M", &repo.base, &repo.head],
    )
    .lines()
    .count();
    let files = json["summary"]["files"].as_u64();
    if files != Some(git_files as u64) {
        println!(
            "WARNING: summary.files is {files:?} but `git diff --name-only -M` lists {git_files} files"
        );
    } else {
        println!("  JSON parses; summary.files = {git_files} = `git diff --name-only -M` count");
    }
    println!(
        "  summary: added_lines = {}, flags = {}, warnings = {}",
        json["summary"]["added_lines"],
        json["summary"]["flags"],
        json["warnings"].as_array().map_or(0, Vec::len)
    );
    for f in json["flags"].as_array().into_iter().flatten() {
        println!(
            "    flag {:<15} {}:{}",
            f["rule"].as_str().unwrap_or("?"),
            f["path"].as_str().unwrap_or("?"),
            f["line"]
        );
    }
}

fn mark(met: bool) -> &'static str {
    if met { "met" } else { "MISSED" }
}

fn main() {
    if std::env::var_os(RUNNER_ENV).is_some() {
        runner();
        return;
    }
    // `cargo bench` passes `--bench`; a filter argument, if any, picks repositories by name.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let runs = std::env::var("FORGEWARD_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_RUNS);
    let gen_only = std::env::var_os("FORGEWARD_BENCH_GEN_ONLY").is_some_and(|v| v == "1");
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("forgeward: {FORGEWARD}");
    println!(
        "{}, {cpus} CPUs, {runs} runs per command after 1 warm-up, alternating",
        git_version()
    );
    println!(
        "peak RSS is ru_maxrss from wait4 in a small runner process; `true` reports {:.1} MiB \
         through it (the floor every figure includes)\n",
        rss_floor()
    );

    let mut summary = Vec::new();
    for spec in [&LARGE, &SMALL] {
        if !filter.is_empty() && !filter.iter().any(|f| spec.name.contains(f.as_str())) {
            continue;
        }
        let t = Instant::now();
        let repo = build_repo(spec);
        let stat = git(
            &repo.path,
            &repo.home,
            &["diff", "--shortstat", &repo.base, &repo.head],
        );
        let stat_m = git(
            &repo.path,
            &repo.home,
            &["diff", "--shortstat", "-M", &repo.base, &repo.head],
        );
        let stat_nr = git(
            &repo.path,
            &repo.home,
            &[
                "diff",
                "--shortstat",
                "--no-renames",
                &repo.base,
                &repo.head,
            ],
        );
        let base_files = git(
            &repo.path,
            &repo.home,
            &["ls-tree", "-r", "--name-only", &repo.base],
        )
        .lines()
        .count();
        println!(
            "== {} repository (generated in {:.1} s): {base_files} files at base",
            spec.name,
            t.elapsed().as_secs_f64()
        );
        println!("  git diff --shortstat:              {}", stat.trim());
        println!("  git diff --shortstat -M:           {}", stat_m.trim());
        println!("  git diff --shortstat --no-renames: {}", stat_nr.trim());
        verify(&repo);
        if gen_only {
            println!();
            continue;
        }
        let tools = measure(&repo, runs);
        println!();
        println!(
            "  {:<32} {:>10} {:>9} {:>13} {:>11} {:>10}",
            "command", "median ms", "min ms", "cpu ms (med)", "cpu/wall", "peak MiB"
        );
        for t in &tools {
            let med = t.median(|s| s.wall);
            let cpu = t.median(|s| s.cpu);
            println!(
                "  {:<32} {:>10.1} {:>9.1} {:>13.1} {:>11.2} {:>10.1}",
                t.label,
                ms(med),
                ms(t.min_wall()),
                ms(cpu),
                cpu.as_secs_f64() / med.as_secs_f64(),
                t.max_rss_mib()
            );
        }
        let fw = &tools[0];
        let fw_med = ms(fw.median(|s| s.wall));
        println!();
        for t in tools[1..].iter().filter(|t| t.label != EMPTY_RANGE) {
            println!(
                "  ratio forgeward / {:<26} {:.2}x (median)",
                t.label,
                fw_med / ms(t.median(|s| s.wall))
            );
        }
        if let Some(empty) = tools.iter().find(|t| t.label == EMPTY_RANGE) {
            let floor = ms(empty.median(|s| s.wall));
            println!(
                "  of which start-up (empty range) {floor:.1} ms = {:.2}x `git diff -U0`; reading the change {:.1} ms",
                floor / ms(tools[1].median(|s| s.wall)),
                fw_med - floor
            );
        }
        breakdown(&repo);
        let rss = fw.max_rss_mib();
        let time_target = {
            let git_med = ms(tools[1].median(|s| s.wall));
            let ratio = fw_med / git_med;
            if spec.name == "large" {
                (
                    format!("time <= {LARGE_RATIO_TARGET}x `git diff -U0`: {ratio:.2}x"),
                    ratio <= LARGE_RATIO_TARGET,
                )
            } else {
                (
                    format!(
                        "time <= `git diff -U0` + {SMALL_SLACK_MS} ms: +{:.1} ms",
                        fw_med - git_med
                    ),
                    fw_med <= git_med + SMALL_SLACK_MS,
                )
            }
        };
        println!("  target {:<45} {}", time_target.0, mark(time_target.1));
        let rss_line = format!("peak RSS <= {RSS_MIB_TARGET} MiB: {rss:.1} MiB");
        println!("  target {:<45} {}", rss_line, mark(rss <= RSS_MIB_TARGET));
        println!();
        summary.push((spec.name, time_target, (rss_line, rss <= RSS_MIB_TARGET)));
        drop(repo);
    }
    if !summary.is_empty() {
        println!("== targets");
        for (name, time, rss) in summary {
            println!("  {name:<6} {:<45} {}", time.0, mark(time.1));
            println!("  {name:<6} {:<45} {}", rss.0, mark(rss.1));
        }
    }
}

fn git_version() -> String {
    Command::new("git")
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".into())
}
