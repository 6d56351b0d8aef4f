//! The client's `forgeward` check: as an App, the check run it begins, takes up and completes,
//! annotated 50 flags a request, within GitHub's limits; with a token, a commit status.

use super::*;

pub(super) fn started(title: &str) -> CheckStart {
    CheckStart {
        title: title.to_owned(),
        details_url: None,
    }
}

fn check_flag(
    path: &str,
    line: Option<u32>,
    base_line: Option<u32>,
    level: FlagLevel,
) -> CheckFlag {
    CheckFlag {
        path: path.to_owned(),
        line,
        base_line,
        level,
        rule: "skip-marker".to_owned(),
        message: "newly marks a test skipped".to_owned(),
        details: "A test newly skipped.".to_owned(),
    }
}

fn result(conclusion: CheckConclusion, flags: Vec<CheckFlag>) -> CheckResult {
    CheckResult {
        conclusion,
        title: "2 review flags for a person to look at".to_owned(),
        summary: "### ⚠️ forgeward: flagged".to_owned(),
        flags,
        details_url: Some("https://github.example/octo/hello/pull/8".to_owned()),
    }
}

/// A GitHub App with installation 99 on octo/hello whose check runs on `abc` are listed as
/// `open` (the ids of runs still in progress); a new run gets id 4.
async fn checks_server(open: Vec<u64>) -> TestServer {
    TestServer::start(
        move |seen: &Seen| match (seen.method.as_str(), seen.uri.as_str()) {
            ("GET", "/repos/octo/hello/installation") => Reply::json(200, json!({"id": 99})),
            ("POST", "/app/installations/99/access_tokens") => Reply::json(
                201,
                json!({"token": "ghs_installation", "expires_at": (chrono::Utc::now() + chrono::Duration::hours(1)).to_rfc3339()}),
            ),
            ("GET", uri) if uri.starts_with("/repos/octo/hello/commits/abc/check-runs?") => {
                let runs: Vec<Value> = open
                    .iter()
                    .map(|id| json!({"id": id, "status": "in_progress"}))
                    .collect();
                Reply::json(200, json!({"total_count": runs.len(), "check_runs": runs}))
            }
            ("POST", "/repos/octo/hello/check-runs") => Reply::json(201, json!({"id": 4})),
            ("PATCH", uri) if uri.starts_with("/repos/octo/hello/check-runs/") => {
                Reply::json(200, json!({"id": 4}))
            }
            _ => Reply::new(404, r#"{"message":"Not Found"}"#),
        },
    )
    .await
}

/// The requests to the repository's check runs, without the App's token traffic.
fn check_calls(server: &TestServer) -> Vec<Seen> {
    server
        .seen()
        .into_iter()
        .filter(|s| s.uri.contains("check-runs"))
        .collect()
}

#[tokio::test]
async fn an_app_check_completes_the_run_it_began_with_every_flag_fifty_at_a_time() {
    let server = checks_server(Vec::new()).await;
    let client = client_with(&server, app());
    let sha = CommitSha("abc".to_owned());
    client
        .start_check(&repo(), &sha, &started("checking the change"))
        .await
        .expect("started");
    let mut flags: Vec<CheckFlag> = (1..=118)
        .map(|n| check_flag("tests/test_a.py", Some(n), None, FlagLevel::Warning))
        .collect();
    flags.push(check_flag("sqlglot.py", None, None, FlagLevel::Error));
    flags.push(check_flag(
        "tests/test_b.py",
        None,
        Some(9),
        FlagLevel::Note,
    ));
    client
        .finish_check(&repo(), &sha, &result(CheckConclusion::Flagged, flags))
        .await
        .expect("finished");

    let calls = check_calls(&server);
    let lines: Vec<String> = calls
        .iter()
        .map(|s| format!("{} {}", s.method, s.uri))
        .collect();
    // Listed once, at the start: the run begun is remembered for its end.
    assert_eq!(
        lines,
        [
            "GET /repos/octo/hello/commits/abc/check-runs?check_name=forgeward&status=in_progress&filter=all&per_page=100&app_id=42",
            "POST /repos/octo/hello/check-runs",
            "PATCH /repos/octo/hello/check-runs/4",
            "PATCH /repos/octo/hello/check-runs/4",
            "PATCH /repos/octo/hello/check-runs/4",
        ]
    );
    let completed = calls[2].json();
    assert_eq!(completed["status"], "completed");
    assert_eq!(completed["conclusion"], "failure");
    assert_eq!(
        completed["details_url"],
        "https://github.example/octo/hello/pull/8"
    );
    assert_eq!(
        completed["output"]["title"],
        "2 review flags for a person to look at"
    );
    assert_eq!(completed["output"]["summary"], "### ⚠️ forgeward: flagged");
    let annotations = |seen: &Seen| {
        seen.json()["output"]["annotations"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    let counts: Vec<usize> = calls[2..].iter().map(|s| annotations(s).len()).collect();
    assert_eq!(counts, [50, 50, 20]);
    assert_eq!(
        annotations(&calls[2])[0],
        json!({"path": "tests/test_a.py", "start_line": 1, "end_line": 1,
               "annotation_level": "warning", "title": "skip-marker",
               "message": "newly marks a test skipped", "raw_details": "A test newly skipped."})
    );
    // The later updates add annotations only, with the output's title and summary GitHub
    // asks for on every update; they do not touch the conclusion.
    let more = calls[4].json();
    assert!(more.get("conclusion").is_none(), "{more}");
    assert_eq!(
        more["output"]["title"],
        "2 review flags for a person to look at"
    );
    let last = annotations(&calls[4]);
    assert_eq!(last[17]["start_line"], 118);
    // A flag on the whole file, and one on something the change removed, are on line 1 and say so.
    assert_eq!(
        (
            &last[18]["path"],
            &last[18]["start_line"],
            &last[18]["annotation_level"]
        ),
        (&json!("sqlglot.py"), &json!(1), &json!("failure"))
    );
    assert_eq!(
        last[18]["message"],
        "newly marks a test skipped (the whole file)"
    );
    assert_eq!(
        (&last[19]["message"], &last[19]["annotation_level"]),
        (
            &json!("newly marks a test skipped (removed: line 9 of the base)"),
            &json!("notice")
        )
    );
}

#[tokio::test]
async fn an_app_check_takes_up_a_run_left_in_progress_and_makes_one_when_none_is() {
    // A retry, in another process: the listed run in progress is the one it begins again and
    // completes, the newest of two.
    let server = checks_server(vec![70, 77]).await;
    let sha = CommitSha("abc".to_owned());
    let first = client_with(&server, app());
    first
        .start_check(&repo(), &sha, &started("checking the change"))
        .await
        .expect("started");
    let other = client_with(&server, app());
    other
        .finish_check(&repo(), &sha, &result(CheckConclusion::Passed, Vec::new()))
        .await
        .expect("finished");
    let lines: Vec<String> = check_calls(&server)
        .iter()
        .map(|s| {
            format!(
                "{} {}",
                s.method,
                s.uri.split('?').next().unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            "GET /repos/octo/hello/commits/abc/check-runs",
            "PATCH /repos/octo/hello/check-runs/77",
            "GET /repos/octo/hello/commits/abc/check-runs",
            "PATCH /repos/octo/hello/check-runs/77",
        ]
    );
    let calls = check_calls(&server);
    assert_eq!(calls[1].json()["status"], "in_progress");
    let done = calls[3].json();
    assert_eq!(
        (&done["status"], &done["conclusion"]),
        (&json!("completed"), &json!("success"))
    );
    assert!(done["output"].get("annotations").is_none(), "{done}");

    // Nothing in progress: the result is a new, completed run.
    let server = checks_server(Vec::new()).await;
    client_with(&server, app())
        .finish_check(&repo(), &sha, &result(CheckConclusion::Error, Vec::new()))
        .await
        .expect("finished");
    let calls = check_calls(&server);
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(
        calls[1].json(),
        json!({"name": "forgeward", "head_sha": "abc", "status": "completed", "conclusion": "failure",
               "output": {"title": "2 review flags for a person to look at", "summary": "### ⚠️ forgeward: flagged"},
               "details_url": "https://github.example/octo/hello/pull/8"})
    );
}

#[tokio::test]
async fn an_app_check_concludes_as_the_flags_and_the_configuration_say() {
    let conclude = async |conclusion: CheckConclusion, flagged: FlaggedConclusion| {
        let server = checks_server(Vec::new()).await;
        let mut config = config(&server.url, app());
        config.flagged_conclusion = flagged;
        let (sleep, _) = recording_sleeper();
        let client = Client::with_retry(
            config,
            Retry {
                policy: RetryPolicy::github(),
                sleep,
            },
        )
        .expect("client");
        client
            .finish_check(
                &repo(),
                &CommitSha("abc".to_owned()),
                &result(conclusion, Vec::new()),
            )
            .await
            .expect("finished");
        let body = check_calls(&server).pop().expect("the run").json();
        body["conclusion"].as_str().unwrap_or_default().to_owned()
    };
    let failure = FlaggedConclusion::Failure;
    assert_eq!(conclude(CheckConclusion::Passed, failure).await, "success");
    assert_eq!(conclude(CheckConclusion::Noted, failure).await, "neutral");
    assert_eq!(conclude(CheckConclusion::Flagged, failure).await, "failure");
    assert_eq!(
        conclude(CheckConclusion::Flagged, FlaggedConclusion::ActionRequired).await,
        "action_required"
    );
    // A check that could not be done must not read as a pass, nor ask for an action.
    assert_eq!(
        conclude(CheckConclusion::Error, FlaggedConclusion::ActionRequired).await,
        "failure"
    );
}

#[tokio::test]
async fn an_app_check_keeps_to_githubs_limits() {
    let server = checks_server(Vec::new()).await;
    let mut long = result(
        CheckConclusion::Flagged,
        vec![CheckFlag {
            message: "é".repeat(40_000),
            rule: "r".repeat(300),
            ..check_flag("a.py", Some(0), None, FlagLevel::Warning)
        }],
    );
    long.summary = "ü".repeat(70_000);
    long.title = "one\ntitle".to_owned();
    client_with(&server, app())
        .finish_check(&repo(), &CommitSha("abc".to_owned()), &long)
        .await
        .expect("finished");
    let body = check_calls(&server).pop().expect("the run").json();
    let output = &body["output"];
    assert_eq!(
        output["summary"].as_str().map(|s| s.chars().count()),
        Some(65_535)
    );
    assert_eq!(output["title"], "one; title");
    let annotation = &output["annotations"][0];
    assert!(
        annotation["message"]
            .as_str()
            .is_some_and(|m| m.len() <= 64 * 1024)
    );
    assert_eq!(
        annotation["title"].as_str().map(|t| t.chars().count()),
        Some(255)
    );
    // GitHub's lines start at 1.
    assert_eq!(annotation["start_line"], 1);
}

#[tokio::test]
async fn a_token_check_is_a_commit_status() {
    let server = TestServer::scripted(vec![
        Reply::json(201, json!({"id": 1})),
        Reply::json(201, json!({"id": 2})),
    ])
    .await;
    let client = client(&server);
    let sha = CommitSha("abc".to_owned());
    client
        .start_check(&repo(), &sha, &started("checking the change"))
        .await
        .expect("started");
    client
        .finish_check(
            &repo(),
            &sha,
            &result(
                CheckConclusion::Noted,
                vec![check_flag("a.py", Some(1), None, FlagLevel::Note)],
            ),
        )
        .await
        .expect("finished");
    let seen = server.seen();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(
        seen[0].json(),
        json!({"state": "pending", "description": "checking the change", "context": "forgeward"})
    );
    assert_eq!(seen[1].uri, "/repos/octo/hello/statuses/abc");
    assert_eq!(
        seen[1].json(),
        json!({"state": "success", "description": "2 review flags for a person to look at",
               "context": "forgeward", "target_url": "https://github.example/octo/hello/pull/8"})
    );
}
