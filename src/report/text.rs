//! `path:line: rule: message`, one flag a line, the summary last.

use std::io::{self, Write};

use crate::detect::{Flag, Report, Severity};

const BOLD: &str = "\x1b[1m";
const YELLOW: &str = "\x1b[33m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

fn paint(color: bool, code: &str) -> (&str, &str) {
    if color { (code, RESET) } else { ("", "") }
}

/// One flag: the path keeps its real bytes, so a non-UTF-8 name reads as it is on disk.
pub fn write_flag(out: &mut dyn Write, flag: &Flag, color: bool) -> io::Result<()> {
    let (b, r) = paint(color, BOLD);
    let (y, yr) = paint(color, YELLOW);
    out.write_all(b.as_bytes())?;
    out.write_all(flag.path.as_bytes())?;
    if let Some(line) = flag.line {
        write!(out, ":{line}")?;
    }
    // Warnings are the common case; the others say what they are.
    let severity = match flag.severity {
        Severity::Warning => String::new(),
        other => format!(" ({other})"),
    };
    writeln!(out, "{r}: {y}{}{severity}{yr}: {}", flag.rule, flag.message)
}

pub fn write_text(out: &mut dyn Write, report: &Report, color: bool) -> io::Result<()> {
    for flag in &report.flags {
        write_flag(out, flag, color)?;
    }
    let (d, dr) = paint(color, DIM);
    for (flag, reason) in &report.allowed {
        out.write_all(d.as_bytes())?;
        out.write_all(flag.path.as_bytes())?;
        if let Some(line) = flag.line {
            write!(out, ":{line}")?;
        }
        writeln!(out, ": {}: allowed: {reason}{dr}", flag.rule)?;
    }
    writeln!(out, "{}", summary(report))
}

/// `3 files, +41 lines: 1 flag (2 allowed)`.
pub fn summary(report: &Report) -> String {
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut s = format!(
        "{}, +{}: {}",
        plural(report.files as u64, "file", "files"),
        plural(report.added_lines, "line", "lines"),
        plural(report.flags.len() as u64, "flag", "flags"),
    );
    if !report.allowed.is_empty() {
        s.push_str(&format!(" ({} allowed)", report.allowed.len()));
    }
    s
}
