//! End to end as a GitHub App: `forgeward serve` authenticated with the App's key, the fake
//! forge's installation, and the result of each check as the head commit's `forgeward` check
//! run — begun in progress, completed with the story as its summary, an annotation on each
//! flagged line, and its conclusion (`[github] flagged_conclusion`). No commit status.

use std::time::Duration;

use crate::fake_forge::{Annotation, CheckRunView};
use crate::util::eventually;
use crate::world::{CALC_FILES as FILES, World, labeled_delivery, pull_request_delivery};

/// calc.py with its import stubbed (`except ImportError:` on line 3) and a new suppression on
/// line 8, a note.
const STUBBED: &str = "try:\n    import json\nexcept ImportError:\n    json = None\n\n\ndef add(a, b):\n    return a - b  # type: ignore\n\n\ndef dump(x):\n    return json.dumps(x)\n";
/// The test skipped: the marker on line 6.
const SKIPPED: &str = "import pytest\n\nfrom calc import add\n\n\n@pytest.mark.skip\ndef test_add():\n    assert add(1, 2) == 3\n";

/// Skips the failing test and stubs the import instead of fixing anything.
const SABOTEUR: &str = r#"set -e
sed -i "s/^def test_add/@pytest.mark.skip(reason=\"flaky\")\ndef test_add/" tests/test_calc.py
sed -i "s/^import json$/try:\n    import json\nexcept ImportError:\n    json = None/" calc.py
"#;

/// (path, line, level, rule) of each annotation, sorted.
fn places(run: &CheckRunView) -> Vec<(String, u64, String, String)> {
    let mut places: Vec<_> = run
        .annotations
        .iter()
        .map(|a: &Annotation| {
            assert_eq!(a.start_line, a.end_line, "{a:?}");
            (
                a.path.clone(),
                a.start_line,
                a.level.clone(),
                a.title.clone().unwrap_or_default(),
            )
        })
        .collect();
    places.sort();
    places
}

fn place(path: &str, line: u64, level: &str, rule: &str) -> (String, u64, String, String) {
    (path.to_owned(), line, level.to_owned(), rule.to_owned())
}

#[tokio::test(flavor = "multi_thread")]
async fn an_app_checks_a_pull_request_with_a_check_run_annotated_on_the_flagged_lines() {
    let settings = [("FORGEWARD_GITHUB_FLAGGED_CONCLUSION", "action_required")];
    let mut world = World::start_as_app(&settings, "true", "bwrap", FILES, &[]).await;
    let main = world.remote_branch("main").expect("main");
    let head = world.push_pull_request(
        8,
        "main",
        "feature",
        &[("calc.py", STUBBED), ("tests/test_calc.py", SKIPPED)],
    );
    world
        .repo
        .branch("main", &main)
        .branch("feature", &head)
        .pull(8, "feature", "main");
    let body = pull_request_delivery(&world.repo, "opened", 8, "feature", &head, &main);
    world
        .bot
        .deliver_event("pull_request", body, "e2e-app-pr-opened")
        .await;
    eventually(
        "the check's job to finish",
        Duration::from_secs(60),
        async || {
            if world.bot.drain().contains("job finished") {
                return Ok(());
            }
            Err(world.bot.drain().to_owned())
        },
    )
    .await;

    // The run was made in progress when the check began, then completed.
    let begun = world
        .forge
        .expect_write("POST", "/repos/acme/widgets/check-runs");
    assert_eq!(
        (&begun["head_sha"], &begun["status"], &begun["name"]),
        (
            &head.as_str().into(),
            &"in_progress".into(),
            &"forgeward".into()
        ),
        "{begun}"
    );
    let runs = world.forge.check_runs(&world.repo, &head);
    assert_eq!(
        runs.len(),
        1,
        "one check run for the head commit: {runs:#?}"
    );
    let run = &runs[0];
    assert_eq!(run.requests, 2, "made, then completed: {run:#?}");
    assert_eq!(run.status, "completed");
    assert_eq!(run.conclusion.as_deref(), Some("action_required"));
    assert_eq!(
        run.title.as_deref(),
        Some("2 review flags for a person to look at")
    );
    assert_eq!(
        run.details_url.as_deref(),
        Some("https://github.com/acme/widgets/pull/8")
    );
    assert_eq!(
        places(run),
        [
            place("calc.py", 3, "warning", "stubbed-import"),
            place("calc.py", 8, "notice", "suppression"),
            place("tests/test_calc.py", 6, "warning", "skip-marker"),
        ]
    );
    let summary = run.summary.as_deref().unwrap_or_default();
    assert!(
        summary.starts_with("### ⚠️ forgeward: flagged — 3 review flags"),
        "{summary}"
    );
    assert!(
        summary.contains(&format!(
            "https://github.example/acme/widgets/blob/{head}/tests/test_calc.py#L6"
        )),
        "the flags link to their lines: {summary}"
    );
    assert!(!summary.contains("forgeward:status"), "{summary}");
    // A check run, not a commit status.
    let statuses = world.forge.commit_statuses(&world.repo, &head);
    assert!(statuses.iter().all(|s| s.check_run), "{statuses:#?}");
    // The warnings are line comments too; the note is in the review's body.
    let flags = world.forge.review_flags(&world.repo, 8);
    assert_eq!(flags.len(), 2, "{flags:#?}");
    assert!(
        world
            .forge
            .labels(&world.repo, 8)
            .contains(&"forgeward:flagged".to_owned())
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_app_checks_a_workers_change_with_the_status_comments_story() {
    let issue = (
        7,
        "add() subtracts",
        "`add(1, 2)` gives -1; the test fails.",
    );
    let mut world = World::start_as_app(&[], SABOTEUR, "bwrap", FILES, &[issue]).await;
    world
        .bot
        .deliver(labeled_delivery(&world.repo, 7), "e2e-app-labeled")
        .await;
    let verdict = world.verdict(7).await;
    assert!(
        verdict.contains("⚠️"),
        "expected flagged:\n{verdict}\n{}",
        world.bot.drain()
    );
    let branch = "forgeward/issue-7";
    let head = world.remote_branch(branch).expect("the branch was pushed");
    let pr = world
        .forge
        .pull_request_for_branch(&world.repo, branch)
        .expect("a pull request was opened");

    let runs = world.forge.check_runs(&world.repo, &head);
    assert_eq!(
        runs.len(),
        1,
        "one check run for the bot's commit: {runs:#?}"
    );
    let run = &runs[0];
    assert_eq!(
        (run.status.as_str(), run.conclusion.as_deref()),
        ("completed", Some("failure")),
        "flags fail the check by default"
    );
    assert_eq!(
        run.requests, 2,
        "begun once the commit was pushed, then completed"
    );
    assert_eq!(
        places(run),
        [
            place("calc.py", 3, "warning", "stubbed-import"),
            place("tests/test_calc.py", 6, "warning", "skip-marker"),
        ]
    );
    // The summary is the status comment's story: the worker, the pull request, the flags.
    let summary = run.summary.as_deref().unwrap_or_default();
    assert!(
        summary.starts_with("### ⚠️ forgeward: flagged — 2 review flags"),
        "{summary}"
    );
    assert!(summary.contains("`scripted-worker`"), "{summary}");
    assert!(
        summary.contains(&format!("[#{}](", pr.number)),
        "the pull request: {summary}"
    );
    let changes = summary
        .lines()
        .find(|l| l.starts_with("| Changes |"))
        .unwrap_or_else(|| panic!("the table's Changes row: {summary}"));
    assert!(verdict.contains(changes), "{changes}\n{verdict}");
    assert_eq!(world.forge.review_flags(&world.repo, pr.number).len(), 2);
    let _ = world.forge.labels(&world.repo, pr.number);
}
