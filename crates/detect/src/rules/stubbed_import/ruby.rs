//! `stubbed-import` in Ruby: a `begin` that only `require`s, closed by a `rescue LoadError`
//! (or `ScriptError`, its parent) that carries on. `require 'a' rescue nil` does not count: a
//! modifier `rescue` catches `StandardError`, which `LoadError` is not.

use std::sync::LazyLock;

use regex::bytes::Regex;

use super::{either, re};
use crate::flag::Rule;
use crate::rules::code::{indent, is_blank};
use crate::scan::{Occurrence, Text};

static RB_BEGIN: LazyLock<Regex> = LazyLock::new(|| re(r"^([ \t]*)begin[ \t]*$"));
static RB_REQUIRE: LazyLock<Regex> =
    LazyLock::new(|| re(r"\A[ \t]*(?:require|require_relative|gem)\b[^;\n]*\z"));
static RB_RESCUE_LOAD: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\A[ \t]*rescue[ \t]+(?:[\w:]+[ \t]*,[ \t]*)*(?:::)?(?:LoadError|ScriptError)\b")
});
/// A handler line that gives up or loads a real alternative under the same name.
static RB_GIVES_UP: LazyLock<Regex> =
    LazyLock::new(|| re(r"\A[ \t]*(?:raise|fail|abort|exit|require|require_relative)\b"));
static RB_NAME: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(?:require|require_relative|gem)[ \t(]*['"]([^'"]+)"#));

pub(super) fn scan(text: &Text<'_>, out: &mut Vec<Occurrence>) {
    let count = text.line_count();
    for caps in RB_BEGIN.captures_iter(&text.masked) {
        let (Some(whole), Some(lead)) = (caps.get(0), caps.get(1)) else {
            continue;
        };
        let level = indent(lead.as_bytes());
        let begin = text.line_of(whole.start());
        // The body: require lines up to the first `rescue` at the `begin`'s own indent.
        let mut line = begin + 1;
        let mut requires = 0;
        while line <= count {
            let l = text.masked_line(line);
            if is_blank(l) {
                line += 1;
                continue;
            }
            if !RB_REQUIRE.is_match(l) || indent(l) <= level {
                break;
            }
            requires += 1;
            line += 1;
        }
        let rescue = line;
        let l = text.masked_line(rescue);
        if requires == 0 || indent(l) != level || !RB_RESCUE_LOAD.is_match(l) {
            continue;
        }
        // The handler: the lines after the `rescue` up to the next clause or the `end`.
        let gives_up = (rescue + 1..=count)
            .map(|n| text.masked_line(n))
            .take_while(|l| is_blank(l) || indent(l) > level)
            .any(|l| RB_GIVES_UP.is_match(l));
        if gives_up {
            continue;
        }
        let body = text.line_start(begin + 1)..text.line_start(rescue);
        let modules = either(
            RB_NAME
                .captures_iter(&text.raw[body])
                .filter_map(|c| c.get(1))
                .map(|m| m.as_bytes()),
        );
        let message = format!(
            "newly carries on when {modules} fails to load: `rescue LoadError` closes a `begin` that only requires"
        );
        let start = text.line_start(rescue);
        let mut o = text.occurrence(
            Rule::StubbedImport,
            "rb-rescue-load-error",
            start,
            start + l.len(),
            message,
        );
        o.key = text.key(begin + 1, rescue - 1);
        out.push(o);
    }
}
