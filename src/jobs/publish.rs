//! Publishing a job's result, in one place: the bot's commit pushed to its branch, the pull
//! request opened or brought up to date, and any check's result on a pull request — the check of
//! its head commit begun and ended (each forge's client makes it a check run or a commit
//! status), the review flags not already posted on an earlier push, the resolving of those an
//! earlier push posted that no longer hold, and the `forgeward:flagged` label.

use git2::Oid;

use super::error::JobError;
use super::run::Prepared;
use crate::detect::{Flag, Report, Rule, Severity};
use crate::forge::api::{
    CheckConclusion, CheckFlag, CheckResult, CheckStart, FlagLevel, ForgeApi, GitCredentials,
    PostedFlag, PullRequest, PullRequestSpec, Review, ReviewFlag, Side,
};
use crate::forge::{CommitSha, RepoName, Thread};
use crate::git::Lease;
use crate::report;

/// The label put on a pull request the detector flagged, and taken off when a later push is
/// clean.
pub const FLAGGED_LABEL: &str = "forgeward:flagged";

/// Pushes the bot's commit to `branch`, expecting the branch where it was when the job fetched.
pub async fn push(
    prepared: &Prepared,
    url: &str,
    credentials: Option<GitCredentials>,
    commit: Oid,
    branch: &str,
) -> Result<(), JobError> {
    let (mirrors, forge, repo, url, branch) = (
        prepared.mirrors.clone(),
        prepared.forge,
        prepared.repo.clone(),
        url.to_owned(),
        branch.to_owned(),
    );
    let lease = match prepared.branch_tip {
        Some(tip) => Lease::At(tip),
        None => Lease::Absent,
    };
    mirrors
        .locked(forge, &repo, move |mirror| {
            // A local repository asks for no credentials: git2 never calls back for them.
            let credentials = credentials.unwrap_or(GitCredentials {
                username: String::new(),
                password: String::new(),
            });
            mirror.push(&url, &credentials, commit, &branch, lease)?;
            Ok(())
        })
        .await
}

/// Opens the pull request for `spec.head_branch`, or brings the open one up to date.
pub(super) async fn upsert_pull_request(
    forge: &dyn ForgeApi,
    repo: &crate::forge::RepoName,
    spec: &PullRequestSpec,
) -> Result<PullRequest, JobError> {
    match forge.find_pull_request(repo, &spec.head_branch).await? {
        Some(pr) => Ok(forge.update_pull_request(repo, pr.number, spec).await?),
        None => Ok(forge.create_pull_request(repo, spec).await?),
    }
}

/// The check of one commit, from its start to its end: begun once, ended once, with the
/// result ([`publish_check`]) or, when the job stops short of one, as an error that says why
/// ([`CommitCheck::fail`]) rather than in progress for ever.
pub(super) struct CommitCheck<'f> {
    forge: &'f dyn ForgeApi,
    repo: RepoName,
    sha: CommitSha,
    ended: bool,
}

impl<'f> CommitCheck<'f> {
    /// Begins the check of `sha` (`details_url`: the pull request, when there is one already).
    /// A forge that refuses is logged and the job goes on: what matters is the check's end,
    /// which makes the check itself when it was not begun (a forge may not know a commit the
    /// moment after it was pushed).
    pub(super) async fn start(
        forge: &'f dyn ForgeApi,
        repo: &RepoName,
        sha: CommitSha,
        details_url: Option<&str>,
    ) -> CommitCheck<'f> {
        let check = CheckStart {
            title: "checking the change".to_owned(),
            details_url: details_url.map(str::to_owned),
        };
        if let Err(e) = forge.start_check(repo, &sha, &check).await {
            tracing::warn!(error = %e, "could not show the check in progress");
        }
        CommitCheck {
            forge,
            repo: repo.clone(),
            sha,
            ended: false,
        }
    }

    /// The forge the check is on.
    pub(super) fn forge(&self) -> &'f dyn ForgeApi {
        self.forge
    }

    /// Ends a check that has no result, and will get none (the job is not tried again), as
    /// an error saying `why`. A check that ended already is left as it is; a forge that refuses
    /// even this is logged.
    pub(super) async fn fail(&mut self, why: &str, details_url: Option<&str>) {
        if self.ended {
            return;
        }
        let title = format!("forgeward could not check the change: {why}");
        let result = CheckResult {
            conclusion: CheckConclusion::Error,
            summary: format!("{title}\n"),
            title,
            flags: Vec::new(),
            details_url: details_url.map(str::to_owned),
        };
        match self
            .forge
            .finish_check(&self.repo, &self.sha, &result)
            .await
        {
            Ok(()) => self.ended = true,
            Err(e) => tracing::warn!(error = %e, "could not report the failed check"),
        }
    }
}

/// The check's end (its title ending with `verified`, what the bot's own test runs showed,
/// where they ran; `summary` the story of the check; every flag), the review flags not posted
/// before (as line comments from `comment_from` up, the others listed in the review's body),
/// the bot's line comments that no longer hold resolved, and the label. The check ends first:
/// a pull request whose flags fail to post still carries its failing check.
pub(super) async fn publish_check(
    check: &mut CommitCheck<'_>,
    pr: &PullRequest,
    report: &Report,
    comment_from: Severity,
    verified: Option<&str>,
    unjudged: Option<&str>,
    summary: String,
) -> Result<(), JobError> {
    let (forge, repo) = (check.forge, &check.repo);
    let flags = &report.flags;
    let failing = report.failing();
    let result = check_result(report, verified, unjudged, summary, Some(&pr.web_url));
    forge.finish_check(repo, &check.sha, &result).await?;
    check.ended = true;
    let posted = forge.review_flags(repo, pr.number).await?;
    let judged = verified.is_some() && unjudged.is_none();
    let (new, gone) = compare(&posted, flags, judged);
    if !new.is_empty() {
        post_flags(forge, repo, pr, flags, &new, comment_from).await?;
    }
    let why = format!(
        "no longer holds at `{}`.",
        pr.head_sha.0.get(..7).unwrap_or(&pr.head_sha.0)
    );
    // The check has ended and the new flags are posted: a comment the forge will not let the
    // bot resolve (a person's reply that quotes a flag, on a forge that lists replies as
    // comments) is logged, and fails nothing.
    for flag in gone {
        if let Err(err) = forge.resolve_flag(repo, pr.number, flag, &why).await {
            tracing::warn!(error = %err, thread = %flag.thread, "could not resolve a flag that no longer holds");
        }
    }
    if failing == 0 {
        forge
            .remove_label(repo, Thread::PullRequest, pr.number, FLAGGED_LABEL)
            .await?;
    } else {
        forge
            .add_labels(
                repo,
                Thread::PullRequest,
                pr.number,
                &[FLAGGED_LABEL.to_owned()],
            )
            .await?;
    }
    Ok(())
}

/// What a check of `report` came to: flagged with any flag at or above the repository's
/// `fail_on`; else unjudged when verification could not run the tests (`unjudged` says why:
/// what was not seen is no pass); else noted with flags below `fail_on` only, passed with none.
fn check_result(
    report: &Report,
    verified: Option<&str>,
    unjudged: Option<&str>,
    summary: String,
    details_url: Option<&str>,
) -> CheckResult {
    let (failing, all) = (report.failing(), report.flags.len());
    let conclusion = match (failing, all) {
        (0, _) if unjudged.is_some() => CheckConclusion::Unjudged,
        (_, 0) => CheckConclusion::Passed,
        (0, _) => CheckConclusion::Noted,
        _ => CheckConclusion::Flagged,
    };
    let verdict = match (failing, all) {
        (0, _) if let Some(why) = unjudged => format!("the tests could not be run: {why}"),
        (_, 0) => "no sign of sabotage".to_owned(),
        (0, n) => format!(
            "{n} note{} for a person to read",
            if n == 1 { "" } else { "s" }
        ),
        (n, _) => format!(
            "{n} review flag{} for a person to look at",
            if n == 1 { "" } else { "s" }
        ),
    };
    CheckResult {
        conclusion,
        title: check_title(verdict, verified),
        summary,
        flags: report.flags.iter().map(check_flag).collect(),
        details_url: details_url.map(str::to_owned),
    }
}

fn check_flag(flag: &Flag) -> CheckFlag {
    CheckFlag {
        path: flag.path.to_string(),
        line: flag.line,
        base_line: flag.removed_line,
        level: match flag.severity {
            Severity::Note => FlagLevel::Note,
            Severity::Warning => FlagLevel::Warning,
            Severity::Error => FlagLevel::Error,
        },
        rule: flag.rule.id().to_owned(),
        message: flag.message.clone(),
        details: flag.rule.description().to_owned(),
    }
}

/// What the pull request's line comments (`posted`) make of a check's `flags`: the flags
/// not on it yet, to post, and the bot's open line comments whose flag no longer holds, to
/// resolve. A flag matches a comment by its key (rule, path and flagged text), wherever the
/// line moved. A comment resolved before does not count as posted: a flag that comes back is
/// posted anew. Only what this check looked for is resolved: the detector's flags always, the
/// bot's own (verification's) only when verification judged the change (`judged`), since a
/// push whose tests could not be run shows nothing about them.
fn compare<'f, 'p>(
    posted: &'p [PostedFlag],
    flags: &'f [Flag],
    judged: bool,
) -> (Vec<&'f Flag>, Vec<&'p PostedFlag>) {
    let open: Vec<(&str, &PostedFlag)> = posted
        .iter()
        .filter(|p| !p.resolved)
        .filter_map(|p| Some((report::posted_flag_key(&p.body)?, p)))
        .collect();
    let keys: Vec<String> = flags.iter().map(report::flag_key).collect();
    let new = flags
        .iter()
        .zip(&keys)
        .filter(|(_, key)| !open.iter().any(|(k, _)| k == key))
        .map(|(flag, _)| flag)
        .collect();
    let looked_for = |key: &str| {
        let rule = key.split(' ').next().and_then(|id| id.parse::<Rule>().ok());
        rule.is_some_and(|rule| rule.is_detector_rule() || judged)
    };
    let gone = open
        .into_iter()
        .filter(|(key, _)| !keys.iter().any(|k| k == key) && looked_for(key))
        .map(|(_, p)| p)
        .collect();
    (new, gone)
}

/// One review with a line comment per new flag from `comment_from` up (on the base side of
/// the diff for something the change removed). Flags below it, and flags with no line, are
/// listed in the review's body. When the forge refuses a line (not in the diff it shows), the
/// review is posted again with every flag as a file-level note in its body.
async fn post_flags(
    forge: &dyn ForgeApi,
    repo: &RepoName,
    pr: &PullRequest,
    all: &[Flag],
    new: &[&Flag],
    comment_from: Severity,
) -> Result<(), JobError> {
    let commented =
        |f: &Flag| f.severity >= comment_from && (f.line.is_some() || f.removed_line.is_some());
    let file_level: Vec<&Flag> = new.iter().copied().filter(|f| !commented(f)).collect();
    let review = Review {
        body: report::render_review_body(all, &file_level),
        flags: new
            .iter()
            .filter(|f| commented(f))
            .map(|f| ReviewFlag {
                path: f.path.to_string(),
                line: f.line.or(f.removed_line),
                side: if f.line.is_none() {
                    Side::Old
                } else {
                    Side::New
                },
                body: report::render_flag_comment(f),
            })
            .collect(),
    };
    match forge.post_review(repo, pr, &review).await {
        Ok(()) => Ok(()),
        Err(err) if matches!(err.kind, crate::forge::ForgeErrorKind::Invalid(_)) => {
            tracing::warn!(error = %err, "a flagged line is not in the diff: posting file-level notes");
            let review = Review {
                body: report::render_review_body(all, new),
                flags: Vec::new(),
            };
            Ok(forge.post_review(repo, pr, &review).await?)
        }
        Err(err) => Err(err.into()),
    }
}

/// `verdict`, then what verification showed. Each forge's client cuts it to what it keeps.
fn check_title(verdict: String, verified: Option<&str>) -> String {
    match verified {
        Some(verified) => format!("{verdict} · {verified}"),
        None => verdict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Rule;

    fn flag(rule: Rule, severity: Severity, line: Option<u32>, removed: Option<u32>) -> Flag {
        Flag {
            rule,
            severity,
            path: "tests/test_a.py".into(),
            line,
            removed_line: removed,
            message: "a message".to_owned(),
            snippet: None,
        }
    }

    fn report(flags: Vec<Flag>) -> Report {
        Report {
            flags,
            ..Report::default()
        }
    }

    #[test]
    fn the_title_says_what_verification_showed() {
        assert_eq!(
            check_title("no sign of sabotage".to_owned(), None),
            "no sign of sabotage"
        );
        assert_eq!(
            check_title(
                "1 review flag for a person to look at".to_owned(),
                Some("the base's tests: 0 of 1 pass on the change")
            ),
            "1 review flag for a person to look at · the base's tests: 0 of 1 pass on the change"
        );
    }

    #[test]
    fn a_check_passes_without_flags_notes_below_fail_on_and_flags_at_or_above_it() {
        let passed = check_result(&report(Vec::new()), None, None, String::new(), None);
        assert_eq!(
            (passed.conclusion, passed.title.as_str()),
            (CheckConclusion::Passed, "no sign of sabotage")
        );
        let note = flag(Rule::Suppression, Severity::Note, Some(3), None);
        let noted = check_result(&report(vec![note.clone()]), None, None, String::new(), None);
        assert_eq!(
            (noted.conclusion, noted.title.as_str()),
            (CheckConclusion::Noted, "1 note for a person to read")
        );
        let warning = flag(Rule::TestDeleted, Severity::Warning, None, Some(9));
        let flagged = check_result(
            &report(vec![note.clone(), warning]),
            Some("verified"),
            None,
            "the story".to_owned(),
            Some("https://forge.example/pr/1"),
        );
        assert_eq!(flagged.conclusion, CheckConclusion::Flagged);
        assert_eq!(
            flagged.title,
            "1 review flag for a person to look at · verified"
        );
        assert_eq!(flagged.summary, "the story");
        assert_eq!(
            flagged.flags[1],
            CheckFlag {
                path: "tests/test_a.py".to_owned(),
                line: None,
                base_line: Some(9),
                level: FlagLevel::Warning,
                rule: "test-deleted".to_owned(),
                message: "a message".to_owned(),
                details: Rule::TestDeleted.description().to_owned(),
            }
        );
        assert_eq!(flagged.flags[0].level, FlagLevel::Note);
        // A repository that fails on notes fails the check on one.
        let strict = Report {
            fail_on: Severity::Note,
            ..report(vec![flag(Rule::Suppression, Severity::Note, Some(3), None)])
        };
        let strict = check_result(&strict, None, None, String::new(), None);
        assert_eq!(strict.conclusion, CheckConclusion::Flagged);
    }

    #[test]
    fn a_check_whose_tests_could_not_be_run_is_neither_a_pass_nor_a_flag() {
        let why = Some("the base run: pytest collected no test");
        for flags in [
            vec![],
            vec![flag(Rule::Suppression, Severity::Note, Some(3), None)],
        ] {
            let unjudged = check_result(&report(flags), None, why, String::new(), None);
            assert_eq!(
                (unjudged.conclusion, unjudged.title.as_str()),
                (
                    CheckConclusion::Unjudged,
                    "the tests could not be run: the base run: pytest collected no test"
                )
            );
        }
        // A flag that fails the check says more than the tests that could not run.
        let warning = flag(Rule::TestDeleted, Severity::Warning, None, Some(9));
        let flagged = check_result(&report(vec![warning]), None, why, String::new(), None);
        assert_eq!(flagged.conclusion, CheckConclusion::Flagged);
    }

    fn snippet(mut flag: Flag, text: &str) -> Flag {
        flag.snippet = Some(text.to_owned());
        flag
    }

    fn posted(thread: &str, flag: &Flag, resolved: bool) -> PostedFlag {
        PostedFlag {
            thread: thread.to_owned(),
            path: flag.path.to_string(),
            line: flag.line,
            body: report::render_flag_comment(flag),
            resolved,
        }
    }

    fn threads(gone: &[&PostedFlag]) -> Vec<String> {
        gone.iter().map(|p| p.thread.clone()).collect()
    }

    #[test]
    fn a_push_that_undoes_a_flag_resolves_its_comment_and_a_new_one_is_posted() {
        let skip = snippet(
            flag(Rule::SkipMarker, Severity::Warning, Some(3), None),
            "@pytest.mark.skip",
        );
        let moved = Flag {
            line: Some(9),
            ..skip.clone()
        };
        let weakened = snippet(
            flag(Rule::TestWeakened, Severity::Warning, Some(5), None),
            "assert x",
        );
        let person = PostedFlag {
            body: "Why this?".to_owned(),
            ..posted("9", &skip, false)
        };
        let on_pr = [
            posted("1", &skip, false),
            posted("2", &weakened, false),
            person,
        ];

        // The skip moved down the file: still the same flag, posted once. The weakened
        // assertion is gone: its comment is resolved. A person's comment is left alone.
        let flags = [moved.clone()];
        let (new, gone) = compare(&on_pr, &flags, false);
        assert!(new.is_empty(), "{new:?}");
        assert_eq!(threads(&gone), ["2"]);

        // Nothing left: every flag of the bot's resolved, none posted.
        let (new, gone) = compare(&on_pr, &[], false);
        assert!(new.is_empty());
        assert_eq!(threads(&gone), ["1", "2"]);

        // A flag whose comment was resolved before, back again: posted anew, nothing resolved
        // twice.
        let resolved = [posted("1", &skip, true)];
        let (new, gone) = compare(&resolved, &flags, false);
        assert_eq!(new, [&moved]);
        assert!(gone.is_empty());
    }

    #[test]
    fn verification_s_flags_are_resolved_only_by_a_verification_that_judged() {
        let rewritten = snippet(
            flag(Rule::TestRewritten, Severity::Error, Some(7), None),
            "assert add(2, 2) == 5",
        );
        let on_pr = [posted("1", &rewritten, false)];
        // The tests could not be run on this push: what they showed before still stands.
        let (_, gone) = compare(&on_pr, &[], false);
        assert!(gone.is_empty(), "{gone:?}");
        // They ran, and the rewritten test is no more.
        let (_, gone) = compare(&on_pr, &[], true);
        assert_eq!(threads(&gone), ["1"]);
    }
}
