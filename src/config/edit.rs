//! What a change to `.forgeward.toml` would do once it is the base's: each setting it relaxes
//! (fewer files judged, a rule off or down, a check that no longer fails) and each it tightens.
//!
//! The configuration in force is always the base's, so an edit never changes the check of its
//! own range; this is what the `config-edit` flag tells the reviewer who lets it in.

use std::collections::BTreeSet;

use super::pipeline::{ByteSize, TestsAccess};
use super::repo::{Mode, RepoConfig};
use crate::detect::{Rule, Severity};

/// The settings an edit changes, each as a short clause (`` ignore adds `tests/**` ``).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ConfigEdit {
    /// What the next checks would no longer see or no longer fail on.
    pub relaxed: Vec<String>,
    /// What they would see or fail on that they did not.
    pub tightened: Vec<String>,
}

impl ConfigEdit {
    /// `before` (the base's configuration) against `after` (the change's, which may not parse:
    /// a file that cannot be read makes every later check fail, and is a relaxation of its
    /// own).
    pub fn between(before: &RepoConfig, after: Result<&RepoConfig, String>) -> ConfigEdit {
        let mut edit = ConfigEdit::default();
        let after = match after {
            Ok(after) => after,
            Err(why) => {
                edit.relaxed
                    .push(format!("the change's file does not parse ({why})"));
                return edit;
            }
        };
        let (b, a) = (&before.check, &after.check);
        edit.lists("ignore", b.ignore(), a.ignore(), Effect::AddingRelaxes);
        // A file newly named a test, or no longer one, is judged by other rules: either way
        // the rules that judged it no longer do.
        edit.lists(
            "test_paths",
            b.test_paths(),
            a.test_paths(),
            Effect::EitherRelaxes,
        );
        let allows = |c: &RepoConfig| -> Vec<String> {
            c.check
                .allow
                .iter()
                .map(|x| format!("{} on {}", x.rule, x.path.get_ref()))
                .collect()
        };
        let (ab, aa) = (allows(before), allows(after));
        edit.lists(
            "allow",
            ab.iter().map(String::as_str),
            aa.iter().map(String::as_str),
            Effect::AddingRelaxes,
        );
        let warns = |c: &RepoConfig| c.check.mode == Some(Mode::Warn);
        edit.switch(
            warns(before),
            warns(after),
            "mode = \"warn\": flags no longer fail the check",
            "mode = \"block\"",
        );
        let (from, to) = (b.fail_on(), a.fail_on());
        if to > from {
            edit.relaxed.push(format!(
                "fail_on = \"{to}\": {from}s no longer fail the check"
            ));
        } else if to < from {
            edit.tightened.push(format!("fail_on = \"{to}\""));
        }
        let (from, to) = (b.max_file_size(), a.max_file_size());
        if to < from {
            edit.relaxed.push(format!(
                "max_file_size = \"{}\": files between it and {} are no longer read",
                ByteSize(to),
                ByteSize(from)
            ));
        } else if to > from {
            edit.tightened
                .push(format!("max_file_size = \"{}\"", ByteSize(to)));
        }
        let (ob, oa) = (b.options(), a.options());
        for rule in Rule::all() {
            match (ob.severity(rule), oa.severity(rule)) {
                (Some(_), None) => edit.relaxed.push(format!("`{rule}` turned off")),
                (Some(was), Some(now)) if now < was => edit
                    .relaxed
                    .push(format!("`{rule}` lowered from {was} to {now}")),
                (None, Some(now)) => edit.tightened.push(format!("`{rule}` turned on ({now})")),
                (Some(was), Some(now)) if now > was => edit
                    .tightened
                    .push(format!("`{rule}` raised from {was} to {now}")),
                _ => {}
            }
        }
        let (vb, va) = (&before.verify, &after.verify);
        edit.switch(
            vb.enabled == Some(false),
            va.enabled == Some(false),
            "verification turned off",
            "verification turned on",
        );
        let command = |c: &RepoConfig| c.verify.command.as_ref().map(|c| c.get_ref().clone());
        if command(before) != command(after) {
            let now = command(after).map_or_else(
                || "the usual runner".to_owned(),
                |c| format!("`{}`", c.join(" ")),
            );
            edit.relaxed
                .push(format!("verification's command changed to {now}"));
        }
        let writable = |c: &RepoConfig| c.job.tests != Some(TestsAccess::ReadOnly);
        edit.switch(
            writable(before),
            writable(after),
            "the worker may now change the base's tests",
            "tests = \"read-only\"",
        );
        edit
    }

    /// A setting that either relaxes the check or does not: `relaxed` when the edit turns it to
    /// relaxing, `tightened` when it turns it back.
    fn switch(&mut self, was: bool, now: bool, relaxed: &str, tightened: &str) {
        match (was, now) {
            (false, true) => self.relaxed.push(relaxed.to_owned()),
            (true, false) => self.tightened.push(tightened.to_owned()),
            _ => {}
        }
    }

    /// The entries of the list `name` that `after` adds to `before`'s and those it drops, as
    /// `effect` says they count.
    fn lists<'a>(
        &mut self,
        name: &str,
        before: impl Iterator<Item = &'a str>,
        after: impl Iterator<Item = &'a str>,
        effect: Effect,
    ) {
        let (before, after): (BTreeSet<&str>, BTreeSet<&str>) = (before.collect(), after.collect());
        let quoted = |set: Vec<&&str>| -> Option<String> {
            (!set.is_empty()).then(|| {
                set.iter()
                    .map(|s| format!("`{s}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
        };
        let added = quoted(after.difference(&before).collect()).map(|n| format!("{name} adds {n}"));
        let dropped =
            quoted(before.difference(&after).collect()).map(|g| format!("{name} drops {g}"));
        match effect {
            Effect::AddingRelaxes => {
                self.relaxed.extend(added);
                self.tightened.extend(dropped);
            }
            Effect::EitherRelaxes => self.relaxed.extend(added.into_iter().chain(dropped)),
        }
    }

    /// The flag's severity: a relaxation at the rule's configured severity, an edit that only
    /// tightens (or changes nothing that matters) a note.
    pub fn severity(&self, configured: Severity) -> Severity {
        if self.relaxed.is_empty() {
            Severity::Note
        } else {
            configured
        }
    }

    /// The flag's message.
    pub fn message(&self, file: &str) -> String {
        if !self.relaxed.is_empty() {
            let mut text = format!(
                "the change edits {file}, which decides what forgeward flags; this range was checked with the base's, and from the next range on the edit would relax it: {}",
                self.relaxed.join("; ")
            );
            if !self.tightened.is_empty() {
                text.push_str(&format!(" (and tighten: {})", self.tightened.join("; ")));
            }
            return text;
        }
        if self.tightened.is_empty() {
            return format!(
                "the change edits {file} without changing what it decides; this range was checked with the base's"
            );
        }
        format!(
            "the change edits {file} and only tightens it: {}; this range was checked with the base's",
            self.tightened.join("; ")
        )
    }
}

/// How the entries of a list count.
#[derive(Clone, Copy)]
enum Effect {
    /// An entry added makes the check judge less (an ignore, an allow); one dropped, more.
    AddingRelaxes,
    /// Any change moves files from some rules to others (which files are tests).
    EitherRelaxes,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> RepoConfig {
        RepoConfig::parse(".forgeward.toml", text).expect("valid")
    }

    fn edit(before: &str, after: &str) -> ConfigEdit {
        ConfigEdit::between(&config(before), Ok(&config(after)))
    }

    #[test]
    fn each_relaxation_is_named() {
        let e = edit("", "[check]\nignore = [\"tests/**\"]\n");
        assert_eq!(e.relaxed, ["ignore adds `tests/**`"]);
        assert!(e.tightened.is_empty());
        assert_eq!(
            edit("", "[check]\nmode = \"warn\"\n").relaxed,
            ["mode = \"warn\": flags no longer fail the check"]
        );
        assert_eq!(
            edit("", "[check.rules]\nskip-marker = \"off\"\n").relaxed,
            ["`skip-marker` turned off"]
        );
        assert_eq!(
            edit("", "[check.rules]\nskip-marker = \"note\"\n").relaxed,
            ["`skip-marker` lowered from warning to note"]
        );
        assert_eq!(
            edit("", "[check]\nfail_on = \"error\"\n").relaxed,
            ["fail_on = \"error\": warnings no longer fail the check"]
        );
        assert_eq!(
            edit("", "[check]\nmax_file_size = \"1M\"\n").relaxed,
            ["max_file_size = \"1M\": files between it and 4M are no longer read"]
        );
        let raised = edit("", "[check]\nmax_file_size = \"16M\"\n");
        assert!(raised.relaxed.is_empty());
        assert_eq!(raised.tightened, ["max_file_size = \"16M\""]);
        assert_eq!(
            edit(
                "",
                "[[check.allow]]\nrule = \"skip-marker\"\npath = \"tests/**\"\nreason = \"x\"\n"
            )
            .relaxed,
            ["allow adds `skip-marker on tests/**`"]
        );
        assert_eq!(
            edit("", "[verify]\nenabled = false\n").relaxed,
            ["verification turned off"]
        );
        assert_eq!(
            edit("[job]\ntests = \"read-only\"\n", "").relaxed,
            ["the worker may now change the base's tests"]
        );
        assert_eq!(
            edit("", "[check]\ntest_paths = [\"src/**\"]\n").relaxed,
            ["test_paths adds `src/**`"]
        );
    }

    #[test]
    fn an_edit_that_only_tightens_is_a_note() {
        let e = edit(
            "[check]\nmode = \"warn\"\nignore = [\"vendor/**\", \"tests/**\"]\n",
            "[check]\nignore = [\"vendor/**\"]\n[check.rules]\nexpectation-changed = \"warning\"\n",
        );
        assert!(e.relaxed.is_empty(), "{e:?}");
        assert_eq!(
            e.tightened,
            [
                "ignore drops `tests/**`",
                "mode = \"block\"",
                "`expectation-changed` raised from note to warning"
            ]
        );
        assert_eq!(e.severity(Severity::Warning), Severity::Note);
        assert!(
            e.message(".forgeward.toml")
                .starts_with("the change edits .forgeward.toml and only tightens it:"),
            "{}",
            e.message(".forgeward.toml")
        );
        // A comment edited: nothing that matters changed.
        let same = edit("# a\n", "# b\n");
        assert_eq!(same, ConfigEdit::default());
        assert_eq!(same.severity(Severity::Warning), Severity::Note);
    }

    #[test]
    fn a_file_that_no_longer_parses_relaxes_everything() {
        let e = ConfigEdit::between(&config(""), Err("line 1: expected `=`".to_owned()));
        assert_eq!(
            e.relaxed,
            ["the change's file does not parse (line 1: expected `=`)"]
        );
        assert_eq!(e.severity(Severity::Warning), Severity::Warning);
    }
}
