//! Stored snapshots whose recorded value changed: the expected side of a snapshot assertion
//! lives in a file of its own, and rewriting it (`jest -u`, `cargo insta accept`) is how a
//! test is made to expect whatever the code now does.
//!
//! Read in both versions of a modified file:
//! - Jest and Vitest `__snapshots__/*.snap`: each ``exports[`name 1`] = `…`;`` entry;
//! - insta `snapshots/*.snap` (Rust): the value after the `---` header, one per file;
//! - syrupy `__snapshots__/*.ambr` (Python): each `# name: …` entry up to `# ---`.
//!
//! An entry present in both with another value is noted on its first changed head line. New
//! entries (a new test's snapshot) and removed ones (obsolete snapshots) are not changes of an
//! expectation, nor is indentation alone. More than [`MAX_SHOWN`] changed entries in one file
//! make one note for the file.

use crate::change::{Change, ChangeKind, RepoPath};
use crate::flag::Flag;

/// The kind under which the engine keeps these findings.
pub(crate) const KIND: &str = "snapshot-changed";

/// Changed entries noted one by one; beyond, one note for the file (a behaviour change often
/// rewrites many snapshots at once, and one note says it).
const MAX_SHOWN: usize = 1;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Jest,
    Insta,
    Syrupy,
}

impl Format {
    fn of(path: &RepoPath) -> Option<Format> {
        let name = path.file_name();
        let parent = path.parent();
        let in_dir = |d: &[u8]| parent == d || parent.ends_with(&[b"/", d].concat());
        if name.ends_with(b".snap") && in_dir(b"__snapshots__") {
            Some(Format::Jest)
        } else if name.ends_with(b".snap") && in_dir(b"snapshots") {
            Some(Format::Insta)
        } else if name.ends_with(b".ambr") && in_dir(b"__snapshots__") {
            Some(Format::Syrupy)
        } else {
            None
        }
    }
}

/// One stored snapshot: its name, and its value's lines with their 1-based line numbers.
struct Entry<'a> {
    name: String,
    lines: Vec<(u32, &'a str)>,
}

fn entries<'a>(format: Format, text: &'a str, whole_name: &str) -> Vec<Entry<'a>> {
    let lines: Vec<(u32, &str)> = (1u32..).zip(text.lines()).collect();
    let mut out = Vec::new();
    match format {
        Format::Jest => {
            let mut i = 0;
            while i < lines.len() {
                let (_, l) = lines[i];
                let Some(rest) = l.strip_prefix("exports[`") else {
                    i += 1;
                    continue;
                };
                let name = rest.split("`] = `").next().unwrap_or(rest).to_owned();
                // The value runs to the line that closes the template literal (`` `; ``).
                let start = i;
                let mut value = Vec::new();
                if !l.ends_with("`;") {
                    i += 1;
                    while i < lines.len() && !lines[i].1.ends_with("`;") {
                        value.push(lines[i]);
                        i += 1;
                    }
                    if let Some(&last) = lines.get(i) {
                        value.push(last);
                    }
                } else {
                    value.push(lines[start]);
                }
                out.push(Entry { name, lines: value });
                i += 1;
            }
        }
        Format::Insta => {
            // `---`, the header's `key: value` lines, `---`, then the value.
            let body = match lines.first() {
                Some((_, "---")) => lines
                    .iter()
                    .skip(1)
                    .position(|(_, l)| *l == "---")
                    .map_or(0, |k| k + 2),
                _ => 0,
            };
            out.push(Entry {
                name: whole_name.to_owned(),
                lines: lines[body.min(lines.len())..].to_vec(),
            });
        }
        Format::Syrupy => {
            let mut current: Option<Entry<'a>> = None;
            for &(n, l) in &lines {
                if let Some(name) = l.strip_prefix("# name: ") {
                    out.extend(current.take());
                    current = Some(Entry {
                        name: name.trim().to_owned(),
                        lines: Vec::new(),
                    });
                } else if l == "# ---" {
                    out.extend(current.take());
                } else if let Some(e) = current.as_mut() {
                    e.lines.push((n, l));
                }
            }
            out.extend(current);
        }
    }
    out
}

fn shown(line: &str) -> String {
    const MAX_CHARS: usize = 60;
    let one = line.trim();
    match one.char_indices().nth(MAX_CHARS) {
        Some((i, _)) => format!("{}…", &one[..i]),
        None => one.to_owned(),
    }
}

/// The notes for one changed file (none unless it is a snapshot file present in both versions).
pub(crate) fn check(change: &Change, old: Option<&[u8]>, new: Option<&[u8]>) -> Vec<Flag> {
    let path = change.path();
    let (Some(format), Some(old), Some(new)) = (Format::of(path), old, new) else {
        return Vec::new();
    };
    if change.binary || change.kind != ChangeKind::Modified {
        return Vec::new();
    }
    let (Ok(old), Ok(new)) = (std::str::from_utf8(old), std::str::from_utf8(new)) else {
        return Vec::new();
    };
    let file = String::from_utf8_lossy(path.file_name()).into_owned();
    let base = entries(format, old, &file);
    let mut changed: Vec<(String, u32, String, String)> = Vec::new();
    for h in entries(format, new, &file) {
        let Some(b) = base.iter().find(|b| b.name == h.name) else {
            continue;
        };
        let (bl, hl): (Vec<&str>, Vec<&str>) = (
            b.lines.iter().map(|(_, l)| *l).collect(),
            h.lines.iter().map(|(_, l)| *l).collect(),
        );
        // Indentation alone is not another value.
        let squeezed = |ls: &[&str]| -> Vec<String> {
            ls.iter()
                .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
                .collect()
        };
        if squeezed(&bl) == squeezed(&hl) {
            continue;
        }
        // The lines between the common start and the common end: what went, what came.
        let k = bl.iter().zip(&hl).take_while(|(x, y)| x == y).count();
        let tail = bl[k..]
            .iter()
            .rev()
            .zip(hl[k..].iter().rev())
            .take_while(|(x, y)| x == y)
            .count();
        let (was, now) = (&bl[k..bl.len() - tail], &hl[k..hl.len() - tail]);
        let Some(&(line, _)) = h.lines.get(k).or(h.lines.last()) else {
            continue;
        };
        changed.push((
            h.name,
            line,
            now.first().map_or_else(String::new, |l| shown(l)),
            was.first().map_or_else(String::new, |l| shown(l)),
        ));
    }
    let flag = |line: u32, message: String| super::flag(path, line, message);
    if changed.len() > MAX_SHOWN {
        let names: Vec<String> = changed
            .iter()
            .take(MAX_SHOWN)
            .map(|(n, ..)| format!("`{n}`"))
            .collect();
        return vec![flag(
            changed[0].1,
            format!(
                "{} stored snapshots now expect other values ({}, …): rewritten snapshots expect what the code now does",
                changed.len(),
                names.join(", ")
            ),
        )];
    }
    changed
        .into_iter()
        .map(|(name, line, now, was)| {
            let what = match (now.is_empty(), was.is_empty()) {
                (false, false) => format!("`{now}` where it held `{was}`"),
                (false, true) => format!("`{now}` more"),
                _ => format!("less: `{was}` is gone"),
            };
            flag(
                line,
                format!("the stored snapshot `{name}` now holds {what}"),
            )
        })
        .collect()
}
