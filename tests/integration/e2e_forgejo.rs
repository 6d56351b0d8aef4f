//! End to end on Forgejo: signed Forgejo deliveries to a running `forgeward serve`, the real
//! Forgejo client against the fake forge's Forgejo API, a real bubblewrap sandbox and a
//! scripted worker. A labelled issue becomes a pull request with line comments on the right
//! lines, the status comment, a failed commit status and the `forgeward:flagged` label; a pull
//! request opened is checked; someone without write access gets a reply and no job.

use std::time::Duration;

use forgeward::forge::Forge;

use crate::fake_forge::pr;
use crate::util::eventually;
use crate::world::{
    CALC_FILES as FILES, TEST_CALC, World, forgejo_comment_delivery_by, forgejo_labeled_delivery,
    forgejo_pull_request_delivery,
};

const ISSUE: u64 = 7;

/// Skips the failing test and wraps an import in try/except instead of fixing anything.
const SABOTEUR: &str = r#"set -e
sed -i "s/^def test_add/@pytest.mark.skip(reason=\"flaky\")\ndef test_add/" tests/test_calc.py
sed -i "s/^import json$/try:\n    import json\nexcept ImportError:\n    json = None/" calc.py
echo "all tests pass now"
"#;

#[tokio::test(flavor = "multi_thread")]
async fn forgejo_saboteur_is_flagged_on_the_pull_request() {
    let issue = (
        ISSUE,
        "add() subtracts",
        "`add(1, 2)` gives -1; the test fails.",
    );
    let mut world = World::start_on(Forge::Forgejo, SABOTEUR, "bwrap", FILES, &[issue]).await;
    world.repo.label(ISSUE, "forgeward");
    let body = forgejo_labeled_delivery(&world.repo, ISSUE);
    world
        .bot
        .deliver_forgejo("issues", body, "e2e-forgejo-labeled-1")
        .await;
    let verdict = world.verdict(ISSUE).await;
    assert!(
        verdict.contains("⚠️"),
        "expected flagged:\n{verdict}\n{}",
        world.bot.drain()
    );

    let branch = "forgeward/issue-7";
    let pull = world
        .forge
        .pull_request_for_branch(&world.repo, branch)
        .expect("a pull request was opened");
    assert_eq!(pull.base_branch, "main");
    assert!(verdict.contains(&format!("#{}", pull.number)), "{verdict}");
    // Flags link to Forgejo's own view of a file at a commit.
    let head = world.remote_branch(branch).expect("the branch was pushed");
    assert!(
        verdict.contains(&format!(
            "{}/acme/widgets/src/commit/{head}/tests/test_calc.py#L6",
            world.forge.url()
        )),
        "{verdict}"
    );

    let mut flags = world.forge.review_flags(&world.repo, pull.number);
    flags.sort_by(|a, b| a.path.cmp(&b.path));
    let places: Vec<(&str, Option<u32>)> =
        flags.iter().map(|f| (f.path.as_str(), f.line)).collect();
    assert_eq!(
        places,
        [("calc.py", Some(3)), ("tests/test_calc.py", Some(6))],
        "{flags:#?}"
    );
    assert!(flags[1].body.contains("skip-marker"), "{}", flags[1].body);
    let reviews = world.forge.review_bodies(&world.repo, pull.number);
    assert!(
        reviews
            .iter()
            .any(|b| b.contains("forgeward found 2 signs")),
        "{reviews:#?}"
    );
    let status = world
        .forge
        .commit_status(&world.repo, &head)
        .expect("a commit status");
    assert_eq!(status.state, "failure", "{status:?}");
    assert!(
        world
            .forge
            .labels(&world.repo, pr(pull.number))
            .contains(&"forgeward:flagged".to_owned())
    );
    // The commit credits the person who asked, at the instance's no-reply address.
    let repo = git2::Repository::open_bare(&world.bare).expect("the remote");
    let commit = repo
        .find_commit(git2::Oid::from_str(&head).expect("an oid"))
        .expect("the commit");
    let message = commit.message().unwrap_or("");
    assert!(
        message.contains("Co-authored-by: alice <alice@noreply."),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forgejo_pull_request_is_checked() {
    let mut world = World::start_on(Forge::Forgejo, "true", "bwrap", FILES, &[]).await;
    let main = world.remote_branch("main").expect("main");
    let skipped = TEST_CALC.replace("def test_add", "@pytest.mark.skip\ndef test_add");
    let head = world.push_pull_request(8, "main", "feature", &[("tests/test_calc.py", &skipped)]);
    world
        .repo
        .branch("main", &main)
        .branch("feature", &head)
        .pull(8, "feature", "main");
    let body = forgejo_pull_request_delivery(&world.repo, "opened", 8, "feature", &head, &main);
    world
        .bot
        .deliver_forgejo("pull_request", body, "e2e-forgejo-pr-opened")
        .await;

    let state = world.final_status(&head, 1).await;
    assert_eq!(state, "failure");
    let flags = world.forge.review_flags(&world.repo, 8);
    let places: Vec<(&str, Option<u32>)> =
        flags.iter().map(|f| (f.path.as_str(), f.line)).collect();
    assert_eq!(places, [("tests/test_calc.py", Some(6))], "{flags:#?}");
    let _ = world.forge.review_bodies(&world.repo, 8);
    assert!(
        world
            .forge
            .labels(&world.repo, 8)
            .contains(&"forgeward:flagged".to_owned())
    );
}

/// On Forgejo, whose accounts do not say they are bots, an agent's pull request is known by
/// its branch (`codex/…`): its rewritten expectation is verified in the sandbox and flagged
/// `test-rewritten` on its line, and the status fails.
#[tokio::test(flavor = "multi_thread")]
async fn a_forgejo_agent_pull_request_is_verified() {
    let mut world = World::start_on(Forge::Forgejo, "true", "bwrap", FILES, &[]).await;
    let main = world.remote_branch("main").expect("main");
    let weakened = TEST_CALC.replace("assert add(1, 2) == 3", "assert add(1, 2) is not None");
    let branch = "codex/fix-add";
    let head = world.push_pull_request(8, "main", branch, &[("tests/test_calc.py", &weakened)]);
    world
        .repo
        .branch("main", &main)
        .branch(branch, &head)
        .pull(8, branch, "main");
    let body = forgejo_pull_request_delivery(&world.repo, "opened", 8, branch, &head, &main);
    world
        .bot
        .deliver_forgejo("pull_request", body, "e2e-forgejo-agent-pr")
        .await;
    let state = world.final_status(&head, 1).await;
    assert_eq!(state, "failure");
    let flags = world.forge.review_flags(&world.repo, 8);
    assert!(
        flags
            .iter()
            .any(|f| f.line == Some(7) && f.body.contains("`test-rewritten`")),
        "{flags:#?}"
    );
    let _ = world.forge.review_bodies(&world.repo, 8);
    let _ = world.forge.labels(&world.repo, 8);
}

#[tokio::test(flavor = "multi_thread")]
async fn on_forgejo_someone_without_write_access_gets_a_reply_and_no_job() {
    let issue = (ISSUE, "add() subtracts", "please fix");
    let mut world = World::start_on(Forge::Forgejo, "true", "bwrap", FILES, &[issue]).await;
    let id = world.repo.comment(ISSUE, "mallory", "/forgeward run");
    let body =
        forgejo_comment_delivery_by(&world.repo, "mallory", 666, ISSUE, id, "/forgeward run");
    world
        .bot
        .deliver_forgejo("issue_comment", body, "e2e-forgejo-mallory-1")
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
    assert!(!reply.body.contains("forgeward:status"), "no job");
    assert_eq!(world.remote_branch("forgeward/issue-7"), None);
}
