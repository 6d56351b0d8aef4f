//! Test helpers: run the detector on files given as text, the way a real diff would hand them.

use std::collections::BTreeMap;

use super::{Change, ChangeKind, Detector, FileInput, Flag, RepoPath, Report, Rule, Tree};

/// One file of a test change.
pub enum Spec<'a> {
    Add(&'a str, &'a str),
    Modify(&'a str, &'a str, &'a str),
    Delete(&'a str, &'a str),
    /// Old path, new path, old content, new content.
    Rename(&'a str, &'a str, &'a str, &'a str),
    /// A file present and unchanged in both trees.
    Keep(&'a str, &'a str),
}

/// A tree held in memory.
#[derive(Default)]
pub struct MemTree(pub BTreeMap<RepoPath, Vec<u8>>);

impl Tree for MemTree {
    fn exists(&self, path: &RepoPath) -> bool {
        self.0.contains_key(path)
    }
    fn read(&self, path: &RepoPath) -> Option<Vec<u8>> {
        self.0.get(path).cloned()
    }
    fn files(&self) -> Vec<RepoPath> {
        self.0.keys().cloned().collect()
    }
}

fn change(kind: ChangeKind, old: Option<(&str, &str)>, new: Option<(&str, &str)>) -> Change {
    let (added, removed) = crate::diff::line_diff(
        old.map_or(&b""[..], |(_, c)| c.as_bytes()),
        new.map_or(&b""[..], |(_, c)| c.as_bytes()),
    );
    Change {
        kind,
        old_path: old.map(|(p, _)| p.into()),
        new_path: new.map(|(p, _)| p.into()),
        added,
        removed,
        binary: false,
        too_large: None,
    }
}

/// Runs the detector with the default configuration.
pub fn run(specs: &[Spec<'_>]) -> Report {
    run_with(&Detector::default(), specs)
}

pub fn run_with(detector: &Detector, specs: &[Spec<'_>]) -> Report {
    let mut base = MemTree::default();
    let mut head = MemTree::default();
    let mut inputs = Vec::new();
    for spec in specs {
        let (c, old, new) = match *spec {
            Spec::Add(p, n) => (change(ChangeKind::Added, None, Some((p, n))), None, Some(n)),
            Spec::Modify(p, o, n) => (
                change(ChangeKind::Modified, Some((p, o)), Some((p, n))),
                Some(o),
                Some(n),
            ),
            Spec::Delete(p, o) => (
                change(ChangeKind::Deleted, Some((p, o)), None),
                Some(o),
                None,
            ),
            Spec::Rename(op, np, o, n) => (
                change(ChangeKind::Renamed, Some((op, o)), Some((np, n))),
                Some(o),
                Some(n),
            ),
            Spec::Keep(p, c) => {
                base.0.insert(p.into(), c.as_bytes().to_vec());
                head.0.insert(p.into(), c.as_bytes().to_vec());
                continue;
            }
        };
        if let (Some(p), Some(o)) = (&c.old_path, old) {
            base.0.insert(p.clone(), o.as_bytes().to_vec());
        }
        if let (Some(p), Some(n)) = (&c.new_path, new) {
            head.0.insert(p.clone(), n.as_bytes().to_vec());
        }
        inputs.push(FileInput {
            change: c,
            old: old.map(str::as_bytes),
            new: new.map(str::as_bytes),
        });
    }
    detector.detect(inputs, &base, &head)
}

/// The lines flagged by one rule.
pub fn lines(report: &Report, rule: Rule) -> Vec<u32> {
    report
        .flags
        .iter()
        .filter(|f: &&Flag| f.rule == rule)
        .filter_map(|f| f.line)
        .collect()
}

/// The messages of one rule's flags.
pub fn messages(report: &Report, rule: Rule) -> Vec<String> {
    report
        .flags
        .iter()
        .filter(|f| f.rule == rule)
        .map(|f| f.message.clone())
        .collect()
}
