//! Snapshots of the status comment in every state: it is what people read on their issue.

use super::*;
use crate::detect::Rule;

const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

fn links(forge: Forge) -> ForgeLinks {
    let (web_url, repo) = match forge {
        Forge::GitHub => ("https://github.com", "acme/widgets"),
        Forge::GitLab => ("https://gitlab.com", "acme/tools/widgets"),
        Forge::Forgejo => ("https://codeberg.org", "acme/widgets"),
    };
    ForgeLinks {
        forge,
        web_url: web_url.to_owned(),
        repo: RepoName(repo.to_owned()),
        sha: CommitSha(SHA.to_owned()),
    }
}

/// A job with nothing to show yet: each test fills in what its state has.
fn status(state: StatusState, links: &ForgeLinks) -> StatusComment<'_> {
    StatusComment {
        job: JobId(42),
        state,
        attempt: 1,
        max_attempts: 3,
        worker: None,
        exit: None,
        duration: None,
        changes: None,
        flags: &[],
        branch: None,
        pull_request: None,
        links,
        log_tail: &[],
        error: None,
        question: None,
        tests: None,
        verification: None,
        phases: &[],
        page: None,
        network: None,
        environment: None,
        unread: &[],
    }
}

fn flag(rule: Rule, path: &[u8], line: Option<u32>, message: &str) -> Flag {
    Flag {
        rule,
        severity: rule.severity(),
        path: RepoPath::new(path.to_vec()),
        line,
        removed_line: None,
        message: message.to_owned(),
        snippet: None,
    }
}

fn three_flags() -> Vec<Flag> {
    vec![
        flag(
            Rule::StubbedImport,
            b"src/app.py",
            Some(5),
            "newly carries on when `yaml` fails to import: `except ImportError` closes a `try` that only imports",
        ),
        flag(
            Rule::ShadowModule,
            b"sqlglot.py",
            None,
            "new module `sqlglot.py` is named like the dependency `sqlglot` (declared in requirements.txt) and would be imported instead of it",
        ),
        flag(
            Rule::SkipMarker,
            b"tests/test parser #2.py",
            Some(12),
            "newly marks a test skipped: `pytest.mark.skip` <b>|</b> *not* run",
        ),
    ]
}

fn done<'a>(state: StatusState, links: &'a ForgeLinks, flags: &'a [Flag]) -> StatusComment<'a> {
    StatusComment {
        worker: Some("claude-code@sha256:ab12cd34ef56ab12cd34ef56ab12cd34ef56"),
        exit: Some(WorkerExit::Exited(0)),
        duration: Some(Duration::from_secs(185)),
        changes: Some(ChangeSummary {
            files: 5,
            added: 120,
            removed: 8,
        }),
        flags,
        branch: Some("forgeward/issue-7"),
        pull_request: Some(PullRequestLink {
            forge: links.forge,
            number: 12,
            url: match links.forge {
                Forge::GitHub => "https://github.com/acme/widgets/pull/12",
                Forge::GitLab => "https://gitlab.com/acme/tools/widgets/-/merge_requests/12",
                Forge::Forgejo => "https://codeberg.org/acme/widgets/pulls/12",
            },
        }),
        ..status(state, links)
    }
}

fn log() -> Vec<String> {
    [
        "$ pytest -q",
        "```python",
        "def test_parse(): ...",
        "```",
        "FAILED tests/test_parser.py::test_parse - AssertionError",
        "1 failed, 41 passed in 2.31s",
    ]
    .map(str::to_owned)
    .to_vec()
}

#[test]
fn queued() {
    let links = links(Forge::GitHub);
    let s = StatusComment {
        attempt: 0,
        ..status(StatusState::Queued, &links)
    };
    insta::assert_snapshot!(render_status(&s));
}

#[test]
fn working_with_a_fence_in_the_log() {
    let links = links(Forge::GitHub);
    let log = log();
    let s = StatusComment {
        worker: Some("claude-code@sha256:ab12cd34ef56ab12cd34ef56ab12cd34ef56"),
        duration: Some(Duration::from_secs(42)),
        log_tail: &log,
        ..status(
            StatusState::Working {
                phase: "running the worker".to_owned(),
            },
            &links,
        )
    };
    insta::assert_snapshot!(render_status(&s));
}

#[test]
fn ready_for_review() {
    let links = links(Forge::GitHub);
    let log = log();
    // The log is not shown once a job succeeded.
    let s = StatusComment {
        log_tail: &log,
        ..done(StatusState::ReadyForReview, &links, &[])
    };
    insta::assert_snapshot!(render_status(&s));
}

#[test]
fn flagged_on_github() {
    let links = links(Forge::GitHub);
    let flags = three_flags();
    let s = done(StatusState::Flagged, &links, &flags);
    insta::assert_snapshot!(render_status(&s));
}

#[test]
fn a_file_the_detector_could_not_read_is_named() {
    let links = links(Forge::GitHub);
    let unread = [
        "tests/test_big.py: skipped: 8.1 MiB, over the 4 MiB limit ([check] max_file_size)"
            .to_owned(),
    ];
    let s = StatusComment {
        unread: &unread,
        ..done(StatusState::ReadyForReview, &links, &[])
    };
    insta::assert_snapshot!(render_status(&s));
}

#[test]
fn flagged_on_gitlab() {
    let links = links(Forge::GitLab);
    let flags = three_flags();
    let s = StatusComment {
        attempt: 2,
        ..done(StatusState::Flagged, &links, &flags)
    };
    insta::assert_snapshot!(render_status(&s));
}

#[test]
fn flagged_on_forgejo() {
    let links = links(Forge::Forgejo);
    let flags = three_flags();
    let s = done(StatusState::Flagged, &links, &flags);
    let body = render_status(&s);
    assert!(
        body.contains(&format!(
            "https://codeberg.org/acme/widgets/src/commit/{SHA}/tests/"
        )),
        "{body}"
    );
    assert!(
        body.contains("[#12](https://codeberg.org/acme/widgets/pulls/12)"),
        "{body}"
    );
    insta::assert_snapshot!(body);
}

#[test]
fn many_flags_start_folded() {
    let links = links(Forge::GitHub);
    let flags: Vec<Flag> = (1..=12)
        .map(|i| {
            flag(
                Rule::SkipMarker,
                format!("tests/test_{i:02}.py").as_bytes(),
                Some(i * 10),
                "newly marks a test skipped: `@pytest.mark.skip`",
            )
        })
        .collect();
    let s = done(StatusState::Flagged, &links, &flags);
    let body = render_status(&s);
    assert!(body.contains("<details>\n<summary>12 review flags</summary>"));
    insta::assert_snapshot!(body);
}

#[test]
fn failed() {
    let links = links(Forge::GitHub);
    let log = log();
    let s = StatusComment {
        attempt: 3,
        worker: Some("registry.example.com/agents/claude-code-with-a-very-long-image-name:latest"),
        exit: Some(WorkerExit::Exited(1)),
        duration: Some(Duration::from_secs(3725)),
        log_tail: &log,
        error: Some("the worker exited with code 1 before making a commit"),
        ..status(StatusState::Failed, &links)
    };
    insta::assert_snapshot!(render_status(&s));
}

#[test]
fn cancelled() {
    let links = links(Forge::GitHub);
    let log = log();
    let s = StatusComment {
        exit: Some(WorkerExit::Killed("SIGTERM".to_owned())),
        duration: Some(Duration::from_secs(60)),
        log_tail: &log,
        error: Some("a newer `/forgeward run` on this issue replaced this job"),
        ..status(StatusState::Cancelled, &links)
    };
    insta::assert_snapshot!(render_status(&s));
}

#[test]
fn timed_out() {
    let links = links(Forge::GitHub);
    let log = vec!["still thinking…".to_owned()];
    let s = StatusComment {
        worker: Some("claude-code"),
        exit: Some(WorkerExit::TimedOut),
        duration: Some(Duration::from_secs(30 * 60)),
        log_tail: &log,
        ..status(StatusState::TimedOut, &links)
    };
    insta::assert_snapshot!(render_status(&s));
}

#[test]
fn the_marker_finds_the_comment_again() {
    let links = links(Forge::GitHub);
    let flags = three_flags();
    for state in [
        StatusState::Queued,
        StatusState::Flagged,
        StatusState::Failed,
    ] {
        let body = render_status(&done(state, &links, &flags));
        assert_eq!(parse_status_marker(&body), Some(JobId(42)));
    }
    assert_eq!(status_marker(JobId(7)), "<!-- forgeward:status job=7 -->");
    assert_eq!(
        parse_status_marker("<!-- forgeward:status job=7 -->\r\n### …"),
        Some(JobId(7))
    );
}

#[test]
fn other_comments_have_no_marker() {
    for body in [
        "",
        "LGTM",
        "<!-- forgeward:status job= -->",
        "<!-- forgeward:status job=-1 -->",
        "<!-- forgeward:status job=7x -->",
        "<!-- forgeward:status job=99999999999999999999 -->",
        "<!-- some-other-bot job=7 -->",
        // Quoting a status comment in a reply must not make the reply one.
        "> <!-- forgeward:status job=7 -->",
        "As the bot said:\n<!-- forgeward:status job=7 -->",
        "\n<!-- forgeward:status job=7 -->",
    ] {
        assert_eq!(parse_status_marker(body), None, "{body:?}");
    }
}

#[test]
fn links_encode_each_path_segment() {
    let path = RepoPath::new(b"docs/a b/#1?/caf\xc3\xa9/x\xff.py".to_vec());
    assert_eq!(
        links(Forge::GitHub).line(&path, Some(3)),
        format!(
            "https://github.com/acme/widgets/blob/{SHA}/docs/a%20b/%231%3F/caf%C3%A9/x%FF.py#L3"
        )
    );
    assert_eq!(
        links(Forge::GitLab).line(&path, None),
        format!(
            "https://gitlab.com/acme/tools/widgets/-/blob/{SHA}/docs/a%20b/%231%3F/caf%C3%A9/x%FF.py"
        )
    );
    assert_eq!(
        links(Forge::Forgejo).line(&path, Some(7)),
        format!(
            "https://codeberg.org/acme/widgets/src/commit/{SHA}/docs/a%20b/%231%3F/caf%C3%A9/x%FF.py#L7"
        )
    );
    let trailing_slash = ForgeLinks {
        web_url: "https://git.example.com/".to_owned(),
        ..links(Forge::GitLab)
    };
    assert_eq!(
        trailing_slash.line(&RepoPath::from("a.py"), Some(1)),
        format!("https://git.example.com/acme/tools/widgets/-/blob/{SHA}/a.py#L1")
    );
}

#[test]
fn durations_read_like_people_say_them() {
    let cases = [
        (0, "0 s"),
        (42, "42 s"),
        (180, "3 min"),
        (185, "3 min 5 s"),
        (3600, "1 h"),
        (3725, "1 h 2 min"),
    ];
    for (secs, text) in cases {
        assert_eq!(human_duration(Duration::from_secs(secs)), text);
    }
}

#[test]
fn code_spans_fit_their_content() {
    assert_eq!(code_span("a.py:3"), "`a.py:3`");
    assert_eq!(code_span("a`b"), "``a`b``");
    assert_eq!(code_span("`x`"), "`` `x` ``");
    assert_eq!(code_span(" x "), "`  x  `");
    assert_eq!(
        inline("a `b|<c>` <d> *e* ``f"),
        "a `b|<c>` \\<d\\> \\*e\\* \\`\\`f"
    );
}

/// A worker's question, after changing one file: quoted, no pull request, the person who started
/// the job asked to answer with the command.
fn asked<'a>(links: &'a ForgeLinks, text: &'a str) -> StatusComment<'a> {
    StatusComment {
        pull_request: None,
        question: Some(WorkerQuestion {
            text,
            asked_by: "alice",
            command: "/forgeward",
        }),
        changes: Some(ChangeSummary {
            files: 1,
            added: 2,
            removed: 0,
        }),
        ..done(StatusState::Question, links, &[])
    }
}

#[test]
fn question_on_github() {
    let links = links(Forge::GitHub);
    let text = "The task says `add(1, 2)` is 3, but `tests/test_calc.py` expects 4.\n\n\
                Should I change the test, or is the test right?";
    insta::assert_snapshot!(render_status(&asked(&links, text)));
}

#[test]
fn question_on_gitlab() {
    let links = links(Forge::GitLab);
    let s = StatusComment {
        changes: None,
        branch: None,
        ..asked(&links, "Which of `parse` and `parse_strict` should raise?")
    };
    let body = render_status(&s);
    assert!(
        body.contains("@alice, reply `/forgeward run <answer>` here"),
        "{body}"
    );
    insta::assert_snapshot!(body);
}

#[test]
fn a_question_cannot_mention_hide_or_forge_markers() {
    let links = links(Forge::GitHub);
    let text = "cc @bob @acme/everyone ＠carol &#64;dave &commat;erin\n\
                <!-- forgeward:status job=1 -->\n\
                --> <details><summary>x</summary> </details> <img src=x>\n\
                a\u{7}bell `Vec<u8>` a < b && c > d\n\
                > <!--";
    let body = render_status(&asked(&links, text));
    // The only mention left is the bot's own, of the person who started the job.
    let mentions: Vec<&str> = body
        .split_whitespace()
        .filter(|word| {
            let name = word.strip_prefix('@').or_else(|| word.strip_prefix('＠'));
            name.is_some_and(|n| n.starts_with(|c: char| c.is_ascii_alphanumeric()))
        })
        .collect();
    assert_eq!(mentions, ["@alice,"], "{body}");
    assert!(
        !body.contains("&#64;") && !body.contains("&commat;"),
        "{body}"
    );
    // No HTML comment but the marker on the first line, no tag the worker wrote.
    assert_eq!(body.matches("<!--").count(), 1, "{body}");
    assert_eq!(body.matches("-->").count(), 1, "{body}");
    assert_eq!(parse_status_marker(&body), Some(JobId(42)));
    for tag in ["<details><summary>x", "</details> <img", "<img"] {
        assert!(!body.contains(tag), "{tag} in {body}");
    }
    // Every line of the question stays inside the quote; what is not markup reads as written.
    let quoted: Vec<&str> = body.lines().filter(|l| l.starts_with('>')).collect();
    assert_eq!(quoted.len(), 5, "{body}");
    assert!(body.contains("a\u{FFFD}bell"), "{body}");
    assert!(body.contains("a < b && c > d"), "{body}");
}

#[test]
fn a_long_question_is_cut() {
    let links = links(Forge::GitHub);
    let long = "why? ".repeat(2000);
    let body = render_status(&asked(&links, &long));
    assert!(body.len() < 6000, "{} bytes", body.len());
    assert!(body.contains("> …\n"), "{body}");
    let many = (1..=100)
        .map(|i| format!("line {i}"))
        .collect::<Vec<_>>()
        .join("\n");
    let body = render_status(&asked(&links, &many));
    assert!(body.contains("> line 60\n>\n> …\n"), "{body}");
    assert!(!body.contains("line 61"), "{body}");
}

#[test]
fn a_login_that_is_not_one_is_not_mentioned() {
    let links = links(Forge::GitHub);
    let s = StatusComment {
        question: Some(WorkerQuestion {
            text: "why?",
            asked_by: "bob <b>",
            command: "/forgeward",
        }),
        ..asked(&links, "")
    };
    let body = render_status(&s);
    assert!(
        body.contains("The person who started this job, reply"),
        "{body}"
    );
    assert!(!body.contains("bob"), "{body}");
}

#[test]
fn the_table_says_whether_the_tests_were_read_only() {
    let links = links(Forge::GitHub);
    for (tests, row) in [
        (
            crate::config::pipeline::TestsAccess::ReadOnly,
            "| Tests | read-only |",
        ),
        (
            crate::config::pipeline::TestsAccess::Writable,
            "| Tests | writable |",
        ),
    ] {
        let s = StatusComment {
            tests: Some(tests),
            ..status(StatusState::ReadyForReview, &links)
        };
        let text = render_status(&s);
        assert!(text.contains(row), "{text}");
    }
    let text = render_status(&status(StatusState::ReadyForReview, &links));
    assert!(
        !text.contains("| Tests |"),
        "unknown before the checkout:\n{text}"
    );
}

#[test]
fn the_verification_section() {
    let links = links(Forge::GitHub);
    let view = VerificationView {
        runner: Some("pytest".to_owned()),
        runs: vec![
            ("base".to_owned(), Ok([1, 1, 0, 2])),
            ("the change's tests".to_owned(), Ok([2, 0, 0, 2])),
            (
                "the base's tests on the change".to_owned(),
                Err("pytest ran out of its 10m | x".to_owned()),
            ),
        ],
        changed: vec![(
            "tests/test_calc.py::test_add".to_owned(),
            "passes".to_owned(),
            "fails".to_owned(),
        )],
        note: None,
    };
    let s = StatusComment {
        verification: Some(&view),
        ..status(StatusState::Flagged, &links)
    };
    let text = render_status(&s);
    for line in [
        "**Verification** (pytest)",
        "| run | passed | failed | skipped | collected |",
        "| base | 1 | 1 | 0 | 2 |",
        "| the change's tests | 2 | 0 | 0 | 2 |",
        "| the base's tests on the change | could not be judged: pytest ran out of its 10m \\| x | | | |",
        "- `tests/test_calc.py::test_add`: passes with the change's tests, fails with the base's",
    ] {
        assert!(text.contains(line), "no {line:?} in:\n{text}");
    }
    let none = VerificationView {
        note: Some("no test command recognised".to_owned()),
        ..VerificationView::default()
    };
    let s = StatusComment {
        verification: Some(&none),
        ..status(StatusState::ReadyForReview, &links)
    };
    assert!(
        render_status(&s).contains("**Verification:** could not run: no test command recognised")
    );
}

#[test]
fn the_duration_names_each_phase_and_its_own_time() {
    let links = links(Forge::GitHub);
    let phases = [
        ("cloning", Duration::from_secs(40)),
        ("working", Duration::from_secs(125)),
        ("verifying", Duration::from_secs(3)),
    ];
    let s = StatusComment {
        duration: Some(Duration::from_secs(168)),
        phases: &phases,
        ..status(StatusState::ReadyForReview, &links)
    };
    let text = render_status(&s);
    assert!(
        text.contains(
            "| Duration | 2 min 48 s (cloning 40 s · working 2 min 5 s · verifying 3 s) |"
        ),
        "{text}"
    );
}

#[test]
fn a_check_summary_is_the_story_without_the_marker_or_the_footer() {
    let links = links(Forge::GitHub);
    let flags = three_flags();
    let s = done(StatusState::Flagged, &links, &flags);
    let summary = render_check_summary(&s, 65_535);
    let comment = render_status(&s);
    assert!(summary.starts_with("### ⚠️ forgeward: flagged — 3 review flags"));
    assert!(!summary.contains("forgeward:status"), "{summary}");
    assert!(!summary.contains("one comment per job"), "{summary}");
    // Everything else is the comment's, word for word.
    assert!(comment.contains(&summary), "{summary}\n---\n{comment}");
}

#[test]
fn a_check_summary_too_long_for_the_forge_lists_fewer_flags_and_says_how_many_more() {
    let links = links(Forge::GitHub);
    let flags: Vec<Flag> = (1..=2000)
        .map(|i| {
            flag(
                Rule::SkipMarker,
                format!("tests/test_{i:04}.py").as_bytes(),
                Some(i),
                "newly marks a test skipped: `@pytest.mark.skip`",
            )
        })
        .collect();
    let s = done(StatusState::Flagged, &links, &flags);
    assert!(
        render_status(&s).chars().count() > 65_535,
        "the story is long"
    );
    let summary = render_check_summary(&s, 65_535);
    assert!(summary.chars().count() <= 65_535);
    let listed = summary.matches("**skip-marker**").count();
    assert!(listed > 100 && listed < 2000, "{listed} listed");
    assert!(
        summary.contains(&format!(
            "- … and {} more, each an annotation of this check",
            2000 - listed
        )),
        "{}",
        &summary[summary.len() - 400..]
    );
    assert!(
        summary.trim_end().ends_with("</details>"),
        "the list is closed"
    );
    // With no room even for the table, the story is cut.
    let tiny = render_check_summary(&s, 40);
    assert_eq!(tiny.chars().count(), 40);
    assert!(tiny.ends_with('…'));
}

#[test]
fn ready_for_review_with_notes_says_nothing_fails() {
    let links = links(Forge::GitHub);
    let flags = [Flag {
        severity: Severity::Note,
        ..flag(
            Rule::Suppression,
            b"src/app.py",
            Some(3),
            "a new `# type: ignore`",
        )
    }];
    let body = render_status(&done(StatusState::ReadyForReview, &links, &flags));
    assert!(
        body.contains("Nothing here fails the check; the flags below are for a person to read."),
        "{body}"
    );
    assert!(!body.contains("No review flags."), "{body}");
}

#[test]
fn working_with_a_link_to_the_job_page() {
    let links = links(Forge::GitHub);
    let phases = [
        ("cloning", Duration::from_secs(3)),
        ("working", Duration::from_secs(40)),
    ];
    let s = StatusComment {
        worker: Some("scripted-worker"),
        duration: Some(Duration::from_secs(43)),
        phases: &phases,
        page: Some("https://forgeward.example.com/jobs/42?t=1767225600.Zm9v_YmFy-w"),
        network: None,
        environment: None,
        ..status(
            StatusState::Working {
                phase: "working".to_owned(),
            },
            &links,
        )
    };
    insta::assert_snapshot!(render_status(&s));
}

#[test]
fn the_network_the_worker_ran_under_is_a_row_of_its_own() {
    let links = links(Forge::GitHub);
    let s = StatusComment {
        network: Some(
            "allow list: `api.anthropic.com:443`, `pypi.example.com:443`; `ANTHROPIC_API_KEY` by \
             placeholder · reached `api.anthropic.com:443`; 2 refused",
        ),
        ..done(StatusState::ReadyForReview, &links, &[])
    };
    let body = render_status(&s);
    assert!(
        body.contains(
            "| Network | allow list: `api.anthropic.com:443`, `pypi.example.com:443`; \
             `ANTHROPIC_API_KEY` by placeholder · reached `api.anthropic.com:443`; 2 refused |"
        ),
        "{body}"
    );
    let none = render_status(&done(StatusState::ReadyForReview, &links, &[]));
    assert!(!none.contains("| Network |"), "{none}");
}

#[test]
fn tests_that_could_not_be_run_are_never_ready_for_review() {
    let links = links(Forge::GitHub);
    let view = VerificationView {
        runner: Some("pytest".to_owned()),
        runs: vec![
            (
                "base".to_owned(),
                Err("pytest collected no test: tests.test_calc: ModuleNotFoundError: No module named 'trio'".to_owned()),
            ),
            (
                "the change's tests".to_owned(),
                Err("pytest collected no test".to_owned()),
            ),
            (
                "the base's tests on the change".to_owned(),
                Err("pytest collected no test".to_owned()),
            ),
        ],
        changed: Vec::new(),
        note: None,
    };
    let s = StatusComment {
        verification: Some(&view),
        error: Some(
            "the base run: pytest collected no test: tests.test_calc: ModuleNotFoundError: No module named 'trio'",
        ),
        ..done(StatusState::Unjudged, &links, &[])
    };
    let text = render_status(&s);
    assert!(!text.contains("✅"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn working_in_an_environment_kept_from_an_earlier_job() {
    let links = links(Forge::GitHub);
    let s = StatusComment {
        environment: Some(
            "kept from job 12: python (requirements.txt), node in web (package-lock.json) · 4211 files, 180 MB",
        ),
        ..status(
            StatusState::Working {
                phase: "running the worker".to_owned(),
            },
            &links,
        )
    };
    insta::assert_snapshot!(render_status(&s));
}

#[test]
fn working_with_an_environment_not_prepared() {
    let links = links(Forge::GitHub);
    let s = StatusComment {
        environment: Some(
            "not prepared: python (requirements.txt) needs a package registry, and [environment] allow lists none; node: node_modules is in the repository; not installed again",
        ),
        ..status(
            StatusState::Working {
                phase: "running the worker".to_owned(),
            },
            &links,
        )
    };
    insta::assert_snapshot!(render_status(&s));
}
