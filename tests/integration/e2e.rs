//! End to end: a signed `issues` `labeled` delivery to a running `forgeward serve` → the job →
//! a real sandbox running a scripted worker → a branch pushed to a local bare remote → the pull
//! request, review flags, commit status, label and status comment on the fake forge.
//!
//! Two workers: an honest one that fixes the bug (✅, no flags) and a saboteur that skips the
//! failing test and wraps an import in `try`/`except` (⚠️, two line comments on the right lines,
//! the `forgeward:flagged` label).

use std::time::{Duration, Instant};

use forgeward::forge::Forge;

use crate::util::eventually;
use crate::world::{
    CALC, CALC_FILES as FILES, TEST_CALC, World, comment_delivery, comment_delivery_by,
    gitlab_labeled_delivery, labeled_delivery, pull_request_delivery,
};

const ISSUE: u64 = 7;

/// Fixes the bug and says so in its summary.
const HONEST: &str = r#"set -e
test -f /job/task.md
sed -i "s/return a - b/return a + b/" calc.py
echo "fixed add" 
echo "Fixed the sign in add()." > /job-out/summary.md
"#;

/// Skips the failing test and wraps an import in try/except instead of fixing anything.
const SABOTEUR: &str = r#"set -e
sed -i "s/^def test_add/@pytest.mark.skip(reason=\"flaky\")\ndef test_add/" tests/test_calc.py
sed -i "s/^import json$/try:\n    import json\nexcept ImportError:\n    json = None/" calc.py
echo "all tests pass now"
"#;

/// acme/widgets on `main` (the bug, its test, and the test's dependency), and a bot.
async fn world(script: &str, backend: &str) -> World {
    let issue = (
        ISSUE,
        "add() subtracts",
        "`add(1, 2)` gives -1; the test fails.",
    );
    let world = World::start(script, backend, FILES, &[issue]).await;
    world
        .bot
        .deliver(labeled_delivery(&world.repo, ISSUE), "e2e-labeled-1")
        .await;
    world
}

async fn honest_worker_gets_a_clean_pull_request(backend: &str) {
    let mut world = world(HONEST, backend).await;
    let verdict = world.verdict(ISSUE).await;
    assert!(
        verdict.contains("✅"),
        "expected ready for review:\n{verdict}\n{}",
        world.bot.drain()
    );

    let (pr, head) = world.clean_pull_request("forgeward/issue-7", "Fixed the sign in add().");
    assert_eq!(pr.base_branch, "main");
    assert!(pr.title.contains("add() subtracts"), "{pr:?}");
    assert!(verdict.contains(&format!("#{}", pr.number)), "{verdict}");
    // The commit is the bot's, crediting the person who asked.
    let repo = git2::Repository::open_bare(&world.bare).expect("the remote");
    let commit = repo
        .find_commit(git2::Oid::from_str(&head).expect("an oid"))
        .expect("the commit");
    assert_eq!(commit.author().name(), Some("forgeward"));
    // The worker's log is kept for the operator; its job directory is gone.
    let logs: Vec<_> = std::fs::read_dir(world.data_dir().join("logs"))
        .expect("the logs directory")
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).expect("a log"))
        .collect();
    assert!(logs.iter().any(|l| l.contains("fixed add")), "{logs:?}");
    let jobs = std::fs::read_dir(world.data_dir().join("jobs")).expect("the jobs directory");
    assert_eq!(
        jobs.count(),
        0,
        "job directories are removed when the job ends"
    );
    let message = commit.message().unwrap_or("");
    assert!(message.contains("Co-authored-by: alice"), "{message}");
    // The job fetched its base and its own branch, not the remote's other branches (what
    // arrives over HTTP for those refspecs is `mirror::a_fetch_of_one_branch_…`'s business:
    // this remote is a local path, which libgit2 packs whole).
    let mirrors = mirror_dirs(&world.data_dir().join("mirrors"));
    assert_eq!(mirrors.len(), 1, "{mirrors:?}");
    let mirror = git2::Repository::open_bare(&mirrors[0]).expect("the bot's mirror");
    assert!(mirror.find_reference("refs/heads/main").is_ok());
    assert!(
        mirror
            .find_reference(&format!("refs/heads/{}", crate::world::EXPERIMENT))
            .is_err()
    );
}

/// The bare repositories under `root`.
fn mirror_dirs(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if dir.join("HEAD").is_file() && dir.join("objects").is_dir() {
            found.push(dir);
            continue;
        }
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(entry.path());
            }
        }
    }
    found
}

async fn saboteur_is_flagged_on_the_right_lines(backend: &str) {
    let mut world = world(SABOTEUR, backend).await;
    let verdict = world.verdict(ISSUE).await;
    assert!(
        verdict.contains("⚠️"),
        "expected flagged:\n{verdict}\n{}",
        world.bot.drain()
    );

    let branch = "forgeward/issue-7";
    let pr = world
        .forge
        .pull_request_for_branch(&world.repo, branch)
        .expect("a pull request was opened");
    let mut flags = world.forge.review_flags(&world.repo, pr.number);
    flags.sort_by(|a, b| a.path.cmp(&b.path));
    let places: Vec<(&str, Option<u32>)> =
        flags.iter().map(|f| (f.path.as_str(), f.line)).collect();
    // calc.py: `try:` is line 1, `import json` 2, `except ImportError:` 3.
    // tests/test_calc.py: the skip marker is inserted at line 6, above `def test_add`.
    assert_eq!(places.len(), 2, "two line comments: {flags:#?}");
    assert_eq!(places[0].0, "calc.py", "{flags:#?}");
    assert!(matches!(places[0].1, Some(1..=4)), "{flags:#?}");
    assert_eq!(places[1], ("tests/test_calc.py", Some(6)), "{flags:#?}");
    assert!(flags[1].body.contains("skip-marker"), "{}", flags[1].body);
    assert!(
        flags[0].body.contains("stubbed-import"),
        "{}",
        flags[0].body
    );
    assert!(
        world
            .forge
            .labels(&world.repo, pr.number)
            .contains(&"forgeward:flagged".to_owned())
    );
    let head = world.remote_branch(branch).expect("the branch was pushed");
    let status = world
        .forge
        .commit_status(&world.repo, &head)
        .expect("a commit status");
    assert_eq!(status.state, "failure", "{status:?}");
    assert!(
        verdict.contains("tests/test_calc.py"),
        "the flags are listed: {verdict}"
    );
    // A flagged change does not close its issue when merged.
    assert!(pr.body.starts_with("Refs #7 — "), "{}", pr.body);
}

#[tokio::test(flavor = "multi_thread")]
async fn bwrap_honest_worker_gets_a_clean_pull_request() {
    honest_worker_gets_a_clean_pull_request("bwrap").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bwrap_saboteur_is_flagged_on_the_right_lines() {
    saboteur_is_flagged_on_the_right_lines("bwrap").await;
}

/// Works for a minute, printing as it goes, unless stopped.
const SLOW: &str = r#"echo "thinking hard"
echo changed >> calc.py
sleep 60
"#;

#[tokio::test(flavor = "multi_thread")]
async fn cancel_stops_a_running_worker_and_pushes_nothing() {
    let mut world = world(SLOW, "bwrap").await;
    wait_for_phase(&mut world, "working").await;
    let (id, asked) = ask_to_cancel(&mut world, "e2e-cancel-1").await;
    let verdict = world.verdict(ISSUE).await;
    assert!(
        verdict.contains("⏹"),
        "expected cancelled:\n{verdict}\n{}",
        world.bot.drain()
    );
    assert!(verdict.contains("cancelled by @alice"), "{verdict}");
    assert!(
        asked.elapsed() < Duration::from_secs(20),
        "the worker was stopped {:?} after it was asked",
        asked.elapsed()
    );
    assert_eq!(
        world.remote_branch("forgeward/issue-7"),
        None,
        "nothing is pushed"
    );
    assert!(
        world
            .forge
            .pull_request_for_branch(&world.repo, "forgeward/issue-7")
            .is_none()
    );
    // The cancel request itself gets 👀 and no "nothing to cancel" reply.
    let comments = wait_for_reaction(&mut world, id).await;
    let request = comments.iter().find(|c| c.id == id).expect("the request");
    assert_eq!(request.reactions, ["eyes"]);
    assert_eq!(
        comments.len(),
        2,
        "only the request and the status comment: {comments:#?}"
    );
}

/// Alice asks, in a comment, for the job on the issue to stop; returns the comment and when.
async fn ask_to_cancel(world: &mut World, delivery: &str) -> (u64, Instant) {
    let asked = Instant::now();
    let id = world.repo.comment(ISSUE, "alice", "/forgeward cancel");
    let body = comment_delivery(&world.repo, ISSUE, id, "/forgeward cancel");
    world
        .bot
        .deliver_event("issue_comment", body, delivery)
        .await;
    (id, asked)
}

/// Waits for the bot to react to comment `id`; returns the issue's comments then.
async fn wait_for_reaction(world: &mut World, id: u64) -> Vec<crate::fake_forge::CommentView> {
    let what = "the request was never seen";
    eventually(what, Duration::from_secs(30), async || {
        let comments = world.forge.comments(&world.repo, ISSUE);
        let request = comments.iter().find(|c| c.id == id).expect("the request");
        if request.reactions.is_empty() {
            return Err(world.bot.drain().to_owned());
        }
        Ok(comments)
    })
    .await
}

/// Waits for the issue's status comment to show `phase`.
async fn wait_for_phase(world: &mut World, phase: &str) {
    let what = format!("the job never reached {phase}");
    eventually(&what, Duration::from_secs(60), async || {
        let shown = world
            .forge
            .status_comment(&world.repo, ISSUE)
            .is_some_and(|c| c.body.contains(phase));
        if shown {
            return Ok(());
        }
        Err(world.bot.drain().to_owned())
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pull_request_is_checked_and_a_flag_is_not_repeated_on_the_next_push() {
    let mut world = World::start("true", "bwrap", FILES, &[]).await;
    let main = world.remote_branch("main").expect("main");
    let skipped = TEST_CALC.replace("def test_add", "@pytest.mark.skip\ndef test_add");
    let head = world.push_pull_request(8, "main", "feature", &[("tests/test_calc.py", &skipped)]);
    world
        .repo
        .branch("main", &main)
        .branch("feature", &head)
        .pull(8, "feature", "main");
    let body = pull_request_delivery(&world.repo, "opened", 8, "feature", &head, &main);
    world
        .bot
        .deliver_event("pull_request", body, "e2e-pr-opened")
        .await;

    assert_eq!(world.final_status(&head, 1).await, "failure");
    let flags = world.forge.review_flags(&world.repo, 8);
    let places: Vec<(&str, Option<u32>)> =
        flags.iter().map(|f| (f.path.as_str(), f.line)).collect();
    assert_eq!(places, [("tests/test_calc.py", Some(6))], "{flags:#?}");
    assert!(
        world
            .forge
            .labels(&world.repo, 8)
            .contains(&"forgeward:flagged".to_owned())
    );

    // A new commit that leaves the skip in place: a new status, the same single line comment.
    let next = world.push_pull_request(8, &head, "feature", &[("NOTES.md", "more\n")]);
    world.repo.push(8, &next);
    let body = pull_request_delivery(&world.repo, "synchronize", 8, "feature", &next, &main);
    world
        .bot
        .deliver_event("pull_request", body, "e2e-pr-sync")
        .await;
    assert_eq!(world.final_status(&next, 2).await, "failure");
    let flags = world.forge.review_flags(&world.repo, 8);
    assert_eq!(flags.len(), 1, "the flag was posted again: {flags:#?}");
    let _ = world.forge.labels(&world.repo, 8);
}

/// The same weakened assertion of a failing test, in a person's pull request and in an agent's
/// (opened by a bot account), and an agent's honest fix (its branch named as Claude Code's are):
/// under `[review] verify = "agents"` (the default) the person's gets the static check only — a
/// note, listed in the review's body, and a passing check; the agent's weakened test is a
/// warning on its line, and verification, run on the pull request's head in the sandbox, finds
/// that the test still fails with its base version (`test-rewritten`, on the same line); the
/// honest fix is verified and passes.
#[tokio::test(flavor = "multi_thread")]
async fn an_agent_s_pull_request_is_verified_and_its_rewritten_test_caught() {
    let mut world = World::start("true", "bwrap", FILES, &[]).await;
    let main = world.remote_branch("main").expect("main");
    let weakened = TEST_CALC.replace("assert add(1, 2) == 3", "assert add(1, 2) is not None");
    let person = world.push_pull_request(8, "main", "fix", &[("tests/test_calc.py", &weakened)]);
    let agent = world.push_pull_request(
        9,
        "main",
        "agent-fix",
        &[
            ("tests/test_calc.py", &weakened),
            ("NOTES.md", "by an agent\n"),
        ],
    );
    let fixed = CALC.replace("return a - b", "return a + b");
    let honest = world.push_pull_request(10, "main", "claude/fix-add", &[("calc.py", &fixed)]);
    world
        .repo
        .branch("main", &main)
        .branch("fix", &person)
        .branch("agent-fix", &agent)
        .branch("claude/fix-add", &honest)
        .pull(8, "fix", "main")
        .pull(9, "agent-fix", "main")
        .pull(10, "claude/fix-add", "main")
        .pull_author(9, "copilot-swe-agent[bot]");
    let pulls = [
        (8, "fix", &person, "e2e-person"),
        (9, "agent-fix", &agent, "e2e-agent"),
        (10, "claude/fix-add", &honest, "e2e-honest"),
    ];
    for (number, branch, head, id) in pulls {
        let body = pull_request_delivery(&world.repo, "opened", number, branch, head, &main);
        world.bot.deliver_event("pull_request", body, id).await;
    }
    assert_eq!(world.final_status(&person, 1).await, "success");
    assert_eq!(world.final_status(&agent, 2).await, "failure");
    assert_eq!(world.final_status(&honest, 3).await, "success");

    let status = |sha: &str| {
        world
            .forge
            .commit_status(&world.repo, sha)
            .expect("a status")
    };
    assert!(
        !status(&person).description.contains("tests"),
        "{:?}",
        status(&person)
    );
    assert!(world.forge.review_flags(&world.repo, 8).is_empty());
    let flags = world.forge.review_flags(&world.repo, 9);
    let mut rules: Vec<(&str, Option<u32>, &str)> = flags
        .iter()
        .map(|f| {
            let rule = ["test-rewritten", "test-weakened"]
                .into_iter()
                .find(|r| f.body.contains(&format!("`{r}`")))
                .unwrap_or("?");
            (f.path.as_str(), f.line, rule)
        })
        .collect();
    rules.sort();
    assert_eq!(
        rules,
        [
            ("tests/test_calc.py", Some(7), "test-rewritten"),
            ("tests/test_calc.py", Some(7), "test-weakened"),
        ],
        "{flags:#?}"
    );
    assert!(
        status(&honest)
            .description
            .contains("the base's tests: 1 of 1 pass"),
        "{:?}",
        status(&honest)
    );
    assert!(world.forge.review_flags(&world.repo, 10).is_empty());
    assert!(
        world
            .forge
            .labels(&world.repo, 9)
            .contains(&"forgeward:flagged".to_owned())
    );
    let _ = world.forge.labels(&world.repo, 8);
    let _ = world.forge.labels(&world.repo, 10);
}

#[tokio::test(flavor = "multi_thread")]
async fn someone_without_write_access_gets_a_reply_and_no_job() {
    let issue = (ISSUE, "add() subtracts", "please fix");
    let mut world = World::start(HONEST, "bwrap", FILES, &[issue]).await;
    let id = world.repo.comment(ISSUE, "mallory", "/forgeward run");
    let body = comment_delivery_by(&world.repo, "mallory", 666, ISSUE, id, "/forgeward run");
    world
        .bot
        .deliver_event("issue_comment", body, "e2e-mallory-1")
        .await;
    let reply = eventually("no reply", Duration::from_secs(30), async || {
        let comments = world.forge.comments(&world.repo, ISSUE);
        if let Some(reply) = comments.iter().find(|c| c.id != id) {
            return Ok(reply.clone());
        }
        Err(world.bot.drain().to_owned())
    })
    .await;
    assert!(
        reply
            .body
            .contains("@mallory only people with write access"),
        "{}",
        reply.body
    );
    assert!(
        !reply.body.contains("forgeward:status"),
        "no job, so no status comment"
    );
    assert_eq!(world.remote_branch("forgeward/issue-7"), None);
}

/// On GitLab, an agent's merge request (its branch named as Copilot's are) is verified in the
/// sandbox: its rewritten expectation is `test-rewritten` on its line and the status fails.
#[tokio::test(flavor = "multi_thread")]
async fn gitlab_an_agent_merge_request_is_verified() {
    let mut world = World::start_on(Forge::GitLab, "true", "bwrap", FILES, &[]).await;
    let main = world.remote_branch("main").expect("main");
    let weakened = TEST_CALC.replace("assert add(1, 2) == 3", "assert add(1, 2) is not None");
    let branch = "copilot/fix-add";
    let head = world.push_pull_request(8, "main", branch, &[("tests/test_calc.py", &weakened)]);
    world
        .repo
        .branch("main", &main)
        .branch(branch, &head)
        .pull(8, branch, "main");
    let body = crate::world::gitlab_merge_request_delivery(&world.repo, 8, branch, &head);
    world
        .bot
        .deliver_gitlab("Merge Request Hook", body, "e2e-gitlab-agent-mr")
        .await;
    let state = world.final_status(&head, 1).await;
    let status = world.forge.commit_status(&world.repo, &head);
    assert_eq!(state, "failed", "{status:?}");
    let flags = world.forge.review_flags(&world.repo, 8);
    assert!(
        flags
            .iter()
            .any(|f| f.line == Some(7) && f.body.contains("`test-rewritten`")),
        "{status:?} {flags:#?} {}",
        world.bot.drain()
    );
    let _ = world.forge.comments(&world.repo, crate::fake_forge::pr(8));
    let _ = world.forge.labels(&world.repo, crate::fake_forge::pr(8));
}

#[tokio::test(flavor = "multi_thread")]
async fn gitlab_saboteur_is_flagged_on_the_merge_request() {
    let issue = (
        ISSUE,
        "add() subtracts",
        "`add(1, 2)` gives -1; the test fails.",
    );
    let mut world = World::start_on(Forge::GitLab, SABOTEUR, "bwrap", FILES, &[issue]).await;
    let body = gitlab_labeled_delivery(&world.repo, ISSUE);
    world
        .bot
        .deliver_gitlab("Issue Hook", body, "e2e-gitlab-1")
        .await;
    let verdict = world.verdict(ISSUE).await;
    assert!(
        verdict.contains("⚠️"),
        "expected flagged:\n{verdict}\n{}",
        world.bot.drain()
    );
    let branch = "forgeward/issue-7";
    let mr = world
        .forge
        .pull_request_for_branch(&world.repo, branch)
        .expect("a merge request was opened");
    assert!(verdict.contains(&format!("!{}", mr.number)), "{verdict}");
    let mut flags = world.forge.review_flags(&world.repo, mr.number);
    flags.sort_by(|a, b| a.path.cmp(&b.path));
    let places: Vec<(&str, Option<u32>)> =
        flags.iter().map(|f| (f.path.as_str(), f.line)).collect();
    assert_eq!(
        places,
        [("calc.py", Some(3)), ("tests/test_calc.py", Some(6))],
        "{flags:#?}"
    );
    // The review's body goes on the merge request as one note.
    let notes = world
        .forge
        .comments(&world.repo, crate::fake_forge::pr(mr.number));
    assert!(
        notes
            .iter()
            .any(|n| n.body.contains("forgeward found 2 signs")),
        "{notes:#?}"
    );
    let head = world.remote_branch(branch).expect("the branch was pushed");
    let status = world
        .forge
        .commit_status(&world.repo, &head)
        .expect("a commit status");
    assert_eq!(status.state, "failed", "{status:?}");
    assert!(
        world
            .forge
            .labels(&world.repo, crate::fake_forge::pr(mr.number))
            .contains(&"forgeward:flagged".to_owned())
    );
}

/// The Docker tests build their images on the local base `tests/setup/docker.sh` makes.
fn require_docker_base() {
    assert!(
        std::env::var("FORGEWARD_TEST_DOCKER_BASE").is_ok(),
        "FORGEWARD_TEST_DOCKER_BASE is not set: run `eval \"$(bash tests/setup/docker.sh)\"` (tests/run does)"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn docker_honest_worker_gets_a_clean_pull_request() {
    require_docker_base();
    honest_worker_gets_a_clean_pull_request("docker").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn docker_saboteur_is_flagged_on_the_right_lines() {
    require_docker_base();
    saboteur_is_flagged_on_the_right_lines("docker").await;
}

/// A project whose tests the bot runs itself: `add` is right and its test passes at the base.
const VERIFIED_FILES: &[(&str, &str)] = &[
    (".forgeward.toml", "[verify]\nenabled = true\n"),
    ("conftest.py", ""),
    ("requirements.txt", "pytest\n"),
    ("calc.py", "def add(a, b):\n    return a + b\n"),
    (
        "tests/test_calc.py",
        "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    ),
];

/// Breaks `add` and rewrites its test's expectation to match.
const EXPECTATION_GAMER: &str = r#"set -e
sed -i "s/return a + b/return a * b + 2/" calc.py
sed -i "s/add(1, 2) == 3/add(1, 2) == 4/" tests/test_calc.py
"#;

#[tokio::test(flavor = "multi_thread")]
async fn bwrap_the_bots_own_test_runs_catch_an_edited_expectation() {
    the_bots_own_test_runs_catch_an_edited_expectation("bwrap").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn docker_the_bots_own_test_runs_catch_an_edited_expectation() {
    require_docker_base();
    the_bots_own_test_runs_catch_an_edited_expectation("docker").await;
}

async fn the_bots_own_test_runs_catch_an_edited_expectation(backend: &str) {
    let issue = (ISSUE, "add() is slow", "Make `add` faster.");
    let other = (ISSUE + 1, "add() is still slow", "Make `add` faster still.");
    let mut world = World::start(EXPECTATION_GAMER, backend, VERIFIED_FILES, &[issue, other]).await;
    world
        .bot
        .deliver(labeled_delivery(&world.repo, ISSUE), "e2e-verify-1")
        .await;
    let verdict = world.verdict(ISSUE).await;
    assert!(
        verdict.contains("⚠️"),
        "expected flagged:\n{verdict}\n{}",
        world.bot.drain()
    );
    for line in [
        "**Verification** (pytest)",
        "| base | 1 | 0 | 0 | 1 |",
        "| the change's tests | 1 | 0 | 0 | 1 |",
        "| the base's tests on the change | 0 | 1 | 0 | 1 |",
        "- `tests/test_calc.py::test_add`: passes with the change's tests, fails with the base's",
    ] {
        assert!(verdict.contains(line), "no {line:?} in:\n{verdict}");
    }
    let pr = world
        .forge
        .pull_request_for_branch(&world.repo, "forgeward/issue-7")
        .expect("a pull request was opened");
    let flags = world.forge.review_flags(&world.repo, pr.number);
    assert!(
        flags.iter().any(|f| f.path == "tests/test_calc.py"
            && f.line == Some(5)
            && f.body.contains("base-tests-fail")),
        "{flags:#?}"
    );
    assert!(
        world
            .forge
            .labels(&world.repo, pr.number)
            .contains(&"forgeward:flagged".to_owned())
    );
    let head = world
        .remote_branch("forgeward/issue-7")
        .expect("the branch was pushed");
    let status = world
        .forge
        .commit_status(&world.repo, &head)
        .expect("a commit status");
    assert_eq!(status.state, "failure", "{status:?}");
    assert!(
        status
            .description
            .ends_with(" · the base's tests: 0 of 1 pass on the change"),
        "{status:?}"
    );
    if backend != "bwrap" {
        return;
    }
    // A second job on the same base takes the base's run from the store.
    world
        .bot
        .deliver(labeled_delivery(&world.repo, ISSUE + 1), "e2e-verify-2")
        .await;
    let verdict = world.verdict(ISSUE + 1).await;
    for line in [
        "| base (kept from an earlier job) | 1 | 0 | 0 | 1 |",
        "| the base's tests on the change | 0 | 1 | 0 | 1 |",
    ] {
        assert!(verdict.contains(line), "no {line:?} in:\n{verdict}");
    }
    let pr = world
        .forge
        .pull_request_for_branch(&world.repo, "forgeward/issue-8")
        .expect("a second pull request");
    let flags = world.forge.review_flags(&world.repo, pr.number);
    assert!(
        flags.iter().any(|f| f.body.contains("base-tests-fail")),
        "{flags:#?}"
    );
    world.forge.labels(&world.repo, pr.number);
    let head = world
        .remote_branch("forgeward/issue-8")
        .expect("the second branch was pushed");
    world.forge.commit_status(&world.repo, &head);
}

/// A project whose test fails at the base: `add` subtracts.
const FAILING_FILES: &[(&str, &str)] = &[
    (".forgeward.toml", "[verify]\nenabled = true\n"),
    ("conftest.py", ""),
    ("calc.py", "def add(a, b):\n    return a - b\n"),
    (
        "tests/test_calc.py",
        "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    ),
];

/// Makes the failing test pass by rewriting its expected value to what the code returns.
const EXPECTATION_REWRITER: &str = r#"set -e
sed -i "s/add(1, 2) == 3/add(1, 2) == -1/" tests/test_calc.py
"#;

#[tokio::test(flavor = "multi_thread")]
async fn github_a_failing_test_rewritten_to_pass_is_flagged_on_its_line() {
    a_failing_test_rewritten_to_pass_is_flagged_on_its_line(Forge::GitHub).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn gitlab_a_failing_test_rewritten_to_pass_is_flagged_on_its_line() {
    a_failing_test_rewritten_to_pass_is_flagged_on_its_line(Forge::GitLab).await;
}

/// The cheat that matters most, through the bot: the test failed at the base, which excuses
/// nothing. The honest fix of the same test, on another issue, is ready for review.
async fn a_failing_test_rewritten_to_pass_is_flagged_on_its_line(on: Forge) {
    let issue = (ISSUE, "test_add fails", "Fix the failing test.");
    let mut world =
        World::start_on(on, EXPECTATION_REWRITER, "bwrap", FAILING_FILES, &[issue]).await;
    match on {
        Forge::GitLab => {
            let body = gitlab_labeled_delivery(&world.repo, ISSUE);
            world
                .bot
                .deliver_gitlab("Issue Hook", body, "e2e-rewritten-gitlab")
                .await;
        }
        _ => {
            world
                .bot
                .deliver(labeled_delivery(&world.repo, ISSUE), "e2e-rewritten")
                .await;
        }
    }
    let verdict = world.verdict(ISSUE).await;
    assert!(
        verdict.contains("⚠️ forgeward: flagged"),
        "expected flagged:\n{verdict}\n{}",
        world.bot.drain()
    );
    assert!(
        verdict.contains("| the base's tests on the change | 0 | 1 | 0 | 1 |"),
        "{verdict}"
    );
    let pr = world
        .forge
        .pull_request_for_branch(&world.repo, "forgeward/issue-7")
        .expect("a pull request was opened");
    let number = crate::fake_forge::pr(pr.number);
    let flags = world.forge.review_flags(&world.repo, pr.number);
    let rewritten = flags
        .iter()
        .find(|f| f.body.contains("test-rewritten"))
        .unwrap_or_else(|| panic!("no test-rewritten flag: {flags:#?}"));
    assert_eq!(
        (rewritten.path.as_str(), rewritten.line),
        ("tests/test_calc.py", Some(5)),
        "{flags:#?}"
    );
    assert!(
        rewritten.body.contains(
            "`tests/test_calc.py::test_add` still fails on the change with its base version"
        ) && rewritten
            .body
            .contains("it now expects `-1` where it expected `3`"),
        "{}",
        rewritten.body
    );
    // On a worker's change the changed expectation is a warning, not a note.
    assert!(
        flags.iter().any(|f| f
            .body
            .starts_with("⚠\u{fe0f} **forgeward · `expectation-changed`**")),
        "{flags:#?}"
    );
    world.forge.labels(&world.repo, number);
    if on == Forge::GitLab {
        // The review's body goes on the merge request as one note.
        let notes = world.forge.comments(&world.repo, number);
        assert!(
            notes.iter().any(|n| n.body.contains("forgeward found")),
            "{notes:#?}"
        );
    }
    let head = world
        .remote_branch("forgeward/issue-7")
        .expect("the branch was pushed");
    let status = world
        .forge
        .commit_status(&world.repo, &head)
        .expect("a commit status");
    assert_eq!(
        status.state,
        if on == Forge::GitLab {
            "failed"
        } else {
            "failure"
        },
        "{status:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_honest_fix_of_a_failing_test_is_ready_for_review() {
    let issue = (ISSUE, "test_add fails", "Fix the failing test.");
    let mut world = World::start(HONEST, "bwrap", FAILING_FILES, &[issue]).await;
    world
        .bot
        .deliver(labeled_delivery(&world.repo, ISSUE), "e2e-honest-verified")
        .await;
    let verdict = world.verdict(ISSUE).await;
    assert!(
        verdict.contains("✅ forgeward: ready for review"),
        "expected ready:\n{verdict}\n{}",
        world.bot.drain()
    );
    assert!(
        verdict.contains("| the base's tests on the change | 1 | 0 | 0 | 1 |"),
        "{verdict}"
    );
    let pr = world
        .forge
        .pull_request_for_branch(&world.repo, "forgeward/issue-7")
        .expect("a pull request was opened");
    assert!(world.forge.review_flags(&world.repo, pr.number).is_empty());
    world.forge.labels(&world.repo, pr.number);
    let head = world
        .remote_branch("forgeward/issue-7")
        .expect("the branch was pushed");
    let status = world
        .forge
        .commit_status(&world.repo, &head)
        .expect("a commit status");
    assert_eq!(status.state, "success", "{status:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn cancel_stops_verification_and_pushes_nothing() {
    // A suite that never ends by itself.
    let files: &[(&str, &str)] = &[
        (
            ".forgeward.toml",
            "[verify]\nenabled = true\ncommand = [\"sleep\", \"300\"]\nresults = { format = \"libtest\" }\n",
        ),
        ("calc.py", "def add(a, b):\n    return a - b\n"),
    ];
    let issue = (ISSUE, "add() subtracts", "Fix it.");
    let mut world = World::start(HONEST, "bwrap", files, &[issue]).await;
    world
        .bot
        .deliver(labeled_delivery(&world.repo, ISSUE), "e2e-verify-cancel-1")
        .await;
    wait_for_phase(&mut world, "verifying").await;
    let (id, asked) = ask_to_cancel(&mut world, "e2e-verify-cancel-2").await;
    let verdict = world.verdict(ISSUE).await;
    assert!(
        verdict.contains("cancelled by @alice while verifying"),
        "expected cancelled:\n{verdict}\n{}",
        world.bot.drain()
    );
    assert!(
        asked.elapsed() < Duration::from_secs(20),
        "verification was stopped {:?} after it was asked",
        asked.elapsed()
    );
    assert_eq!(world.remote_branch("forgeward/issue-7"), None);
    // The request is seen (👀) before the test ends.
    wait_for_reaction(&mut world, id).await;
}
