//! The job page as rendered: what a person reads, and nothing from outside left unescaped.

use super::*;
use crate::forge::event::{Actor, Number, Repo};
use crate::store::{PhaseEntry, RunFlag};

const HOSTILE: &str = "<script>alert('x')</script>\"><img src=x onerror=alert(1)>";

fn job(state: JobState, event: Event) -> Job {
    Job {
        id: JobId(42),
        state,
        phase: if state == JobState::Running {
            "working".to_owned()
        } else {
            state.as_str().to_owned()
        },
        target: Some("github:acme/widgets#7".to_owned()),
        event,
        delivery_id: "d-1".to_owned(),
        forge: Forge::GitHub,
        attempts: 1,
        max_attempts: 3,
        lease_owner: None,
        lease_expires_at_ms: None,
        next_run_at_ms: 0,
        last_error: None,
        created_at_ms: 1_750_000_000_000,
        updated_at_ms: 1_750_000_100_000,
        question: None,
    }
}

fn labeled(title: &str) -> Event {
    Event::IssueLabeled {
        repo: Repo {
            forge: Forge::GitHub,
            name: RepoName("acme/widgets".to_owned()),
            id: 1,
        },
        number: Number(7),
        labels: vec!["forgeward".to_owned()],
        actor: Actor {
            login: "alice".to_owned(),
            id: 2,
        },
        title: title.to_owned(),
        body: String::new(),
    }
}

fn run(flags: Vec<RunFlag>, ended: Option<i64>) -> Run {
    Run {
        attempt: 1,
        started_at_ms: 1_750_000_001_000,
        ended_at_ms: ended,
        title: Some(HOSTILE.to_owned()),
        branch: Some("forgeward/issue-7".to_owned()),
        base_sha: Some("b".repeat(40)),
        commit_sha: Some("c".repeat(40)),
        pull_request: Some((12, "javascript:alert(1)".to_owned())),
        phases: ["cloning", "working", "checking"]
            .iter()
            .enumerate()
            .map(|(i, p)| PhaseEntry {
                phase: (*p).to_owned(),
                started_at_ms: 1_750_000_001_000 + 10_000 * i as i64,
            })
            .collect(),
        flags,
        unjudged: None,
    }
}

fn web() -> WebUrls {
    WebUrls {
        github: "https://github.example/".to_owned(),
        gitlab: "https://gitlab.example".to_owned(),
        forgejo: "https://codeberg.example".to_owned(),
    }
}

fn skip_flag() -> RunFlag {
    RunFlag {
        rule: "skip-marker".to_owned(),
        severity: "warning".to_owned(),
        path: "tests/test <calc>.py".to_owned(),
        line: Some(6),
        message: format!("newly marks a test skipped: {HOSTILE}"),
        snippet: Some("@pytest.mark.skip(reason=\"<b>\")".to_owned()),
    }
}

#[test]
fn a_flagged_job_shows_its_verdict_flags_and_links_with_everything_escaped() {
    let job = job(JobState::Flagged, labeled(HOSTILE));
    let runs = [run(vec![skip_flag()], Some(1_750_000_050_000))];
    let log = LogText {
        text: format!("all tests pass now {HOSTILE}\n\u{1b}[31mred\u{1b}[0m\n"),
        end: 60,
        skipped: 0,
    };
    let html = render(&View {
        job: &job,
        runs: &runs,
        now_ms: 1_750_000_200_000,
        web: &web(),
        log: Some(&log),
        stream: None,
    });
    assert!(
        !html.contains("<script"),
        "nothing to run on a final job:\n{html}"
    );
    assert!(!html.contains("<img"), "{html}");
    assert!(!html.contains("onerror=alert(1)>"), "{html}");
    assert!(
        html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"),
        "{html}"
    );
    assert!(html.contains("⚠️ Flagged — 1 review flag"), "{html}");
    // The flag links to its line at the bot's commit, the path encoded in the URL and escaped
    // in the text.
    let line_url = format!(
        "https://github.example/acme/widgets/blob/{}/tests/test%20%3Ccalc%3E.py#L6",
        "c".repeat(40)
    );
    assert!(html.contains(&format!("href=\"{line_url}\"")), "{html}");
    assert!(html.contains(">tests/test &lt;calc&gt;.py:6</a>"), "{html}");
    assert!(
        html.contains("@pytest.mark.skip(reason=&quot;&lt;b&gt;&quot;)"),
        "{html}"
    );
    // The issue and the branch link to the forge; a pull request URL that is not http(s) is
    // shown, not linked.
    assert!(
        html.contains("href=\"https://github.example/acme/widgets/issues/7\""),
        "{html}"
    );
    assert!(
        html.contains("href=\"https://github.example/acme/widgets/tree/forgeward/issue-7\""),
        "{html}"
    );
    assert!(!html.contains("javascript:"), "{html}");
    assert!(html.contains("rel=\"noreferrer noopener\""), "{html}");
    // The phases with their times: the last one ends with the run.
    assert!(
        html.contains(">cloning <span class=\"took\">10 s</span>"),
        "{html}"
    );
    assert!(
        html.contains(">checking <span class=\"took\">29 s</span>"),
        "{html}"
    );
    assert!(!html.contains("class=\"current\""), "{html}");
    // The log, escaped, without its terminal colours, and no stream to follow.
    assert!(html.contains("all tests pass now &lt;script&gt;"), "{html}");
    assert!(html.contains("<span class=\"line\">red\n</span>"), "{html}");
    assert!(!html.contains("data-stream"), "{html}");
    assert!(html.contains("<meta name=\"viewport\""), "{html}");
}

#[test]
fn a_running_job_streams_its_log_from_where_the_page_ends() {
    let job = job(JobState::Running, labeled("add() subtracts"));
    let runs = [run(Vec::new(), None)];
    let log = LogText {
        text: "thinking\n".to_owned(),
        end: 9,
        skipped: 0,
    };
    let html = render(&View {
        job: &job,
        runs: &runs,
        now_ms: 1_750_000_035_000,
        web: &web(),
        log: Some(&log),
        stream: Some("/jobs/42/log?t=1.a%2Bb&from=1:9".to_owned()),
    });
    assert!(html.contains("🔄 In progress — working"), "{html}");
    assert!(
        html.contains("<section id=\"log\" data-stream=\"/jobs/42/log?t=1.a%2Bb&amp;from=1:9\">"),
        "{html}"
    );
    assert!(html.contains("<script>"), "the live page runs its script");
    assert!(
        html.contains("class=\"current\" data-phase=\"checking\""),
        "the phase it is in: {html}"
    );
    assert!(html.contains("<span class=\"took\">14 s</span>"), "{html}");
}

#[test]
fn the_headline_says_where_the_job_is() {
    let event = labeled("x");
    let flags = vec![skip_flag(), skip_flag()];
    let cases = [
        (JobState::Queued, 0, None, "⏳ Queued"),
        (
            JobState::Queued,
            1,
            None,
            "⏳ Queued to run again (attempt 2 of 3 next)",
        ),
        (
            JobState::Flagged,
            1,
            Some(run(flags, None)),
            "⚠️ Flagged — 2 review flags",
        ),
        (
            JobState::Succeeded,
            1,
            Some(run(Vec::new(), None)),
            "✅ Ready for review: no review flags",
        ),
        (JobState::Dead, 3, None, "❌ Failed on every attempt (3)"),
    ];
    for (state, attempts, run, want) in cases {
        let job = Job {
            attempts,
            ..job(state, event.clone())
        };
        assert_eq!(headline(&job, run.as_ref()).0, want);
    }
    let asked = Job {
        question: Some("Which one?".to_owned()),
        ..job(JobState::Succeeded, event)
    };
    assert_eq!(headline(&asked, None).0, "❓ The worker has a question");
}

#[test]
fn forge_links_follow_each_forge() {
    let repo = RepoName("acme/tools/widgets".to_owned());
    let urls = |forge| ForgeUrls {
        web: "https://forge.example",
        forge,
        repo: &repo,
    };
    assert_eq!(
        urls(Forge::GitLab).thread(Thread::PullRequest, 3),
        "https://forge.example/acme/tools/widgets/-/merge_requests/3"
    );
    assert_eq!(
        urls(Forge::Forgejo).thread(Thread::PullRequest, 3),
        "https://forge.example/acme/tools/widgets/pulls/3"
    );
    assert_eq!(
        urls(Forge::GitHub).thread(Thread::Issue, 3),
        "https://forge.example/acme/tools/widgets/issues/3"
    );
    assert_eq!(
        urls(Forge::Forgejo).branch("forgeward/issue 7"),
        "https://forge.example/acme/tools/widgets/src/branch/forgeward/issue%207"
    );
    assert_eq!(
        urls(Forge::GitLab).commit("abc\"def"),
        "https://forge.example/acme/tools/widgets/-/commit/abcdef"
    );
    assert_eq!(
        urls(Forge::GitLab).line("abc", "src/a.py", Some(4)),
        "https://forge.example/acme/tools/widgets/-/blob/abc/src/a.py#L4"
    );
}

#[test]
fn a_log_is_read_up_to_its_last_whole_line_and_from_a_line_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("1-1.log");
    std::fs::write(&path, "one\ntwo\nthree\npartial").expect("write");
    let all = read_log(&path, u64::MAX).expect("a log");
    assert_eq!(
        (all.text.as_str(), all.end, all.skipped),
        ("one\ntwo\nthree\n", 14, 0)
    );
    // The last 14 bytes begin just before "three": the line cut at the start is left out.
    let cut = read_log(&path, 12).expect("a log");
    assert_eq!((cut.text.as_str(), cut.end), ("", 14));
    let tail = read_log(&path, 14).expect("a log");
    assert_eq!(
        (tail.text.as_str(), tail.end, tail.skipped),
        ("three\n", 14, 8)
    );
    assert!(read_log(&dir.path().join("none.log"), 10).is_none());
}
