//! Pull requests the bot did not open, end to end on GitHub, GitLab and Forgejo: signed
//! deliveries to a running `forgeward serve`, each forge's real client against the fake forge,
//! verification in a real bubblewrap sandbox.
//!
//! - An agent's pull request (its branch named as Copilot's are) that rewrites a failing
//!   test's expectation fails, with `test-rewritten` on the line; the push that undoes the
//!   rewrite and fixes the code passes, and every line comment of the bot's is resolved
//!   (GitHub's review threads, GitLab's discussions, Forgejo's comments edited to say so).
//! - An agent's honest fix (its branch named as Claude Code's are) is verified and passes; a
//!   person's pull request with the same weakened test gets the static check only: a passing
//!   status and no line comment.

use forgeward::forge::Forge;

use crate::fake_forge::{FlagView, pr};
use crate::world::{
    CALC, CALC_FILES as FILES, TEST_CALC, World, forgejo_pull_request_delivery,
    gitlab_merge_request_delivery, gitlab_merge_request_update, pull_request_delivery,
};

/// The expectation of the failing test rewritten to what the broken code gives.
fn rewritten() -> String {
    TEST_CALC.replace("assert add(1, 2) == 3", "assert add(1, 2) == -1")
}

fn fixed() -> String {
    CALC.replace("return a - b", "return a + b")
}

/// A pull request's delivery on `on`: opened, or a push to it from `before` (`None`: opened).
fn delivery(
    world: &World,
    on: Forge,
    number: u64,
    branch: &str,
    head: &str,
    base: &str,
    before: Option<&str>,
) -> Vec<u8> {
    match (on, before) {
        (Forge::GitHub, None) => {
            pull_request_delivery(&world.repo, "opened", number, branch, head, base)
        }
        (Forge::GitHub, Some(_)) => {
            pull_request_delivery(&world.repo, "synchronize", number, branch, head, base)
        }
        (Forge::GitLab, None) => gitlab_merge_request_delivery(&world.repo, number, branch, head),
        (Forge::GitLab, Some(old)) => {
            gitlab_merge_request_update(&world.repo, number, branch, head, old)
        }
        (Forge::Forgejo, None) => {
            forgejo_pull_request_delivery(&world.repo, "opened", number, branch, head, base)
        }
        (Forge::Forgejo, Some(_)) => {
            forgejo_pull_request_delivery(&world.repo, "synchronized", number, branch, head, base)
        }
    }
}

async fn deliver(world: &World, on: Forge, body: Vec<u8>, id: &str) {
    match on {
        Forge::GitHub => {
            world.bot.deliver_event("pull_request", body, id).await;
        }
        Forge::GitLab => {
            world
                .bot
                .deliver_gitlab("Merge Request Hook", body, id)
                .await;
        }
        Forge::Forgejo => {
            world.bot.deliver_forgejo("pull_request", body, id).await;
        }
    }
}

/// The state a failing check leaves on `on`'s commit status.
fn failing(on: Forge) -> &'static str {
    match on {
        Forge::GitLab => "failed",
        Forge::GitHub | Forge::Forgejo => "failure",
    }
}

/// The rule a line comment of the bot's names.
fn rule_of(flag: &FlagView) -> &str {
    let Some(start) = flag.body.find("forgeward · `") else {
        return "?";
    };
    let rest = &flag.body[start + "forgeward · `".len()..];
    rest.split('`').next().unwrap_or("?")
}

async fn an_agent_s_cheat_is_caught_and_its_undoing_resolves_the_flags(on: Forge) {
    let mut world = World::start_on(on, "true", "bwrap", FILES, &[]).await;
    let main = world.remote_branch("main").expect("main");
    let branch = "copilot/fix-add";
    let cheat = world.push_pull_request(8, "main", branch, &[("tests/test_calc.py", &rewritten())]);
    world
        .repo
        .branch("main", &main)
        .branch(branch, &cheat)
        .pull(8, branch, "main");
    let body = delivery(&world, on, 8, branch, &cheat, &main, None);
    deliver(&world, on, body, "e2e-review-cheat").await;
    let state = world.final_status(&cheat, 1).await;
    let status = world.forge.commit_status(&world.repo, &cheat);
    assert_eq!(state, failing(on), "{status:?}");
    let flags = world.forge.review_flags(&world.repo, 8);
    assert!(
        flags
            .iter()
            .any(|f| f.line == Some(7) && rule_of(f) == "test-rewritten" && !f.resolved),
        "{status:?} {flags:#?} {}",
        world.bot.drain()
    );
    assert!(
        world
            .forge
            .labels(&world.repo, pr(8))
            .contains(&"forgeward:flagged".to_owned())
    );

    // The agent is told, and pushes the real fix with the test as it was.
    let undone = world.push_pull_request(
        8,
        &cheat,
        branch,
        &[("tests/test_calc.py", TEST_CALC), ("calc.py", &fixed())],
    );
    world.repo.push(8, &undone);
    let body = delivery(&world, on, 8, branch, &undone, &main, Some(&cheat));
    deliver(&world, on, body, "e2e-review-undone").await;
    let state = world.final_status(&undone, 2).await;
    let status = world.forge.commit_status(&world.repo, &undone);
    assert_eq!(state, "success", "{status:?} {}", world.bot.drain());
    assert!(
        status
            .as_ref()
            .is_some_and(|s| s.description.contains("the base's tests: 1 of 1 pass")),
        "{status:?}"
    );
    let flags = world.forge.review_flags(&world.repo, 8);
    assert!(!flags.is_empty());
    let open: Vec<&FlagView> = flags.iter().filter(|f| !f.resolved).collect();
    assert!(open.is_empty(), "flags left open: {open:#?}");
    if on == Forge::Forgejo {
        // Forgejo cannot resolve a conversation through its API: the comment says it.
        assert!(
            flags
                .iter()
                .all(|f| f.body.contains("**Resolved:** no longer holds at `")),
            "{flags:#?}"
        );
    }
    assert!(
        !world
            .forge
            .labels(&world.repo, pr(8))
            .contains(&"forgeward:flagged".to_owned())
    );
    let _ = world.forge.comments(&world.repo, pr(8));
}

#[tokio::test(flavor = "multi_thread")]
async fn github_an_agent_s_cheat_is_caught_and_its_undoing_resolves_the_flags() {
    an_agent_s_cheat_is_caught_and_its_undoing_resolves_the_flags(Forge::GitHub).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn gitlab_an_agent_s_cheat_is_caught_and_its_undoing_resolves_the_flags() {
    an_agent_s_cheat_is_caught_and_its_undoing_resolves_the_flags(Forge::GitLab).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn forgejo_an_agent_s_cheat_is_caught_and_its_undoing_resolves_the_flags() {
    an_agent_s_cheat_is_caught_and_its_undoing_resolves_the_flags(Forge::Forgejo).await;
}

async fn an_agent_s_honest_fix_passes_and_a_person_s_pull_request_is_checked_statically(on: Forge) {
    let mut world = World::start_on(on, "true", "bwrap", FILES, &[]).await;
    let main = world.remote_branch("main").expect("main");
    let weakened = TEST_CALC.replace("assert add(1, 2) == 3", "assert add(1, 2) is not None");
    let person = world.push_pull_request(8, "main", "fix", &[("tests/test_calc.py", &weakened)]);
    let agent = "claude/fix-add";
    let honest = world.push_pull_request(9, "main", agent, &[("calc.py", &fixed())]);
    world
        .repo
        .branch("main", &main)
        .branch("fix", &person)
        .branch(agent, &honest)
        .pull(8, "fix", "main")
        .pull(9, agent, "main");
    let body = delivery(&world, on, 8, "fix", &person, &main, None);
    deliver(&world, on, body, "e2e-review-person").await;
    let body = delivery(&world, on, 9, agent, &honest, &main, None);
    deliver(&world, on, body, "e2e-review-honest").await;

    // A person's pull request under `verify = "agents"`: no test run, a note in the review's
    // body, no line comment, a passing status.
    assert_eq!(world.final_status(&person, 1).await, "success");
    let status = world.forge.commit_status(&world.repo, &person);
    assert!(
        status
            .as_ref()
            .is_some_and(|s| !s.description.contains("tests")),
        "{status:?}"
    );
    assert!(world.forge.review_flags(&world.repo, 8).is_empty());

    // The agent's honest fix: verified, passing, nothing flagged.
    assert_eq!(world.final_status(&honest, 2).await, "success");
    let status = world.forge.commit_status(&world.repo, &honest);
    assert!(
        status
            .as_ref()
            .is_some_and(|s| s.description.contains("the base's tests: 1 of 1 pass")),
        "{status:?}"
    );
    assert!(world.forge.review_flags(&world.repo, 9).is_empty());
    for n in [8, 9] {
        let _ = world.forge.labels(&world.repo, pr(n));
        let _ = world.forge.comments(&world.repo, pr(n));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn gitlab_an_agent_s_honest_fix_passes_and_a_person_s_is_checked_statically() {
    an_agent_s_honest_fix_passes_and_a_person_s_pull_request_is_checked_statically(Forge::GitLab)
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn forgejo_an_agent_s_honest_fix_passes_and_a_person_s_is_checked_statically() {
    an_agent_s_honest_fix_passes_and_a_person_s_pull_request_is_checked_statically(Forge::Forgejo)
        .await;
}
