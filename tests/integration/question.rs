//! The worker can ask: a scripted worker that leaves `/job-out/question.md` gets no pull request,
//! a ❓ status comment quoting its question (defused: no mention, no HTML comment) that asks the
//! person who started the job to answer; its change is still pushed. The answer, given with
//! `/forgeward run <answer>`, reaches the next job's task with the question.

use std::time::Duration;

use forgeward::forge::Forge;

use crate::fake_forge::CommentView;
use crate::util::eventually;
use crate::world::{
    World, comment_delivery, gitlab_comment_delivery, gitlab_labeled_delivery, is_final,
    labeled_delivery,
};

const ISSUE: u64 = 7;
const BRANCH: &str = "forgeward/issue-7";

const CALC: &str = "def add(a, b):\n    return a - b\n";
const TEST_CALC: &str = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n";
const FILES: &[(&str, &str)] = &[("calc.py", CALC), ("tests/test_calc.py", TEST_CALC)];

/// Asks when its task has no answer (after leaving a note in calc.py, which is still pushed);
/// given an answer, keeps its task in `task-seen.md` and fixes the bug.
const ASKER: &str = r##"set -e
if grep -q "^## Answer" /job/task.md; then
  cp /job/task.md task-seen.md
  sed -i "s/return a - b/return a + b/" calc.py
  echo "Fixed as answered." > /job-out/summary.md
else
  grep -q "/job-out/question.md" /job/task.md
  echo "# started on the fix" >> calc.py
  printf 'The issue says add(1, 2) is 4 but the test expects 3. Which is right? cc @bob\n<!-- forgeward:status job=1 -->\n' > /job-out/question.md
  echo "asked"
fi
"##;

async fn world(on: Forge) -> World {
    let issue = (ISSUE, "add() is wrong", "`add(1, 2)` should be 4.");
    let world = World::start_on(on, ASKER, "bwrap", FILES, &[issue]).await;
    match on {
        Forge::GitHub => {
            world
                .bot
                .deliver(labeled_delivery(&world.repo, ISSUE), "question-labeled-1")
                .await;
        }
        Forge::GitLab => {
            world
                .bot
                .deliver_gitlab(
                    "Issue Hook",
                    gitlab_labeled_delivery(&world.repo, ISSUE),
                    "question-gitlab-1",
                )
                .await;
        }
        Forge::Forgejo => panic!("FORGEJO-PENDING"),
    }
    world
}

/// What every forge shows for the question: the ❓ state, the quote, the mention, the command,
/// no pull request, the branch with the worker's change.
fn assert_asked(world: &mut World, verdict: &str) {
    assert!(
        verdict.contains("### ❓ forgeward: the worker has a question"),
        "expected a question:\n{verdict}\n{}",
        world.bot.drain()
    );
    assert!(
        verdict.contains(
            "> The issue says add(1, 2) is 4 but the test expects 3. Which is right? cc @\u{200B}bob\n"
        ),
        "the question is quoted, its mention defused:\n{verdict}"
    );
    assert!(
        verdict.contains("@alice, reply `/forgeward run <answer>` here"),
        "the person who started the job is asked:\n{verdict}"
    );
    assert_eq!(
        verdict.matches("<!--").count(),
        1,
        "only the bot's own marker is an HTML comment:\n{verdict}"
    );
    assert!(
        verdict.contains("| Pull request | none: the worker asked a question |"),
        "{verdict}"
    );
    assert!(
        world
            .forge
            .pull_request_for_branch(&world.repo, BRANCH)
            .is_none(),
        "no pull request is opened for a question"
    );
    assert!(
        world.remote_branch(BRANCH).is_some(),
        "the branch is pushed"
    );
    assert!(
        world
            .file_on_remote(BRANCH, "calc.py")
            .contains("# started on the fix"),
        "the worker's change is on the branch"
    );
}

/// Waits for a status comment other than `first` to reach a final state.
async fn next_verdict(world: &mut World, first: u64) -> CommentView {
    eventually("no second verdict", Duration::from_secs(180), async || {
        let comments = world.forge.comments(&world.repo, ISSUE);
        let next = comments.into_iter().find(|c| {
            c.id != first && c.body.starts_with("<!-- forgeward:status") && is_final(&c.body)
        });
        if let Some(next) = next {
            return Ok(next);
        }
        Err(format!("the bot said:\n{}", world.bot.drain()))
    })
    .await
}

/// The question, then `/forgeward run <answer>` from alice: the next job's task has both, and
/// its change gets the pull or merge request the question did not.
async fn asked_then_answered(on: Forge) {
    let mut world = world(on).await;
    let verdict = world.verdict(ISSUE).await;
    assert_asked(&mut world, &verdict);
    let first = world
        .forge
        .status_comment(&world.repo, ISSUE)
        .expect("the first status comment")
        .id;

    let answer = "/forgeward run the issue is wrong: 3 is right, keep the test";
    let id = world.repo.comment(ISSUE, "alice", answer);
    match on {
        Forge::GitHub => {
            let body = comment_delivery(&world.repo, ISSUE, id, answer);
            world
                .bot
                .deliver_event("issue_comment", body, "question-answer-1")
                .await;
        }
        Forge::GitLab => {
            let body = gitlab_comment_delivery(&world.repo, ISSUE, id, answer);
            world
                .bot
                .deliver_gitlab("Note Hook", body, "question-answer-gitlab-1")
                .await;
        }
        Forge::Forgejo => panic!("FORGEJO-PENDING"),
    }
    let next = next_verdict(&mut world, first).await;
    assert!(
        next.body.contains("✅"),
        "the answered job is ready for review:\n{}\n{}",
        next.body,
        world.bot.drain()
    );
    let task = world.file_on_remote(BRANCH, "task-seen.md");
    assert!(
        task.contains(
            "## Your earlier question\n\n> The issue says add(1, 2) is 4 but the test expects 3. \
             Which is right? cc @bob\n> <!-- forgeward:status job=1 -->\n\n\
             ## Answer\n\nthe issue is wrong: 3 is right, keep the test\n"
        ),
        "the next task carries the question and the answer:\n{task}"
    );
    // The answered job opens a pull or merge request.
    world.clean_pull_request(BRANCH, "Fixed as answered.");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_question_is_asked_and_its_answer_reaches_the_next_job() {
    asked_then_answered(Forge::GitHub).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn gitlab_a_question_is_asked_and_its_answer_reaches_the_next_job() {
    asked_then_answered(Forge::GitLab).await;
}
