//! The GitHub client against GitHub's own OpenAPI description, served by Stoplight Prism
//! (`tests/setup/prism.sh` installs and starts it).
//!
//! Every call the client makes goes through a small recording proxy to `prism mock --errors`,
//! which checks the method, the path and its parameters, the query and the JSON body against the
//! description. A request Prism finds wrong fails the test with Prism's own words (its
//! `sl-violations` header, or its problem+json body). The answers are the description's
//! examples, and the client must decode them into what the examples say.
//!
//! Where GitHub's description is itself at fault, the proxy says so and works around it, and
//! only there: an example that breaks its own schema makes the strict server answer 500 to a
//! valid request, so that example is taken from a second Prism that does not validate; an
//! example written as a nested Example object (`{"value": …}`) is unwrapped; and file contents
//! whose example spells its line breaks as `\n` get real ones.
//!
//! What Prism shows about the client's requests: it answers 406 to `Accept:
//! application/vnd.github+json` alone (the description lists every answer as
//! `application/json`), so the client sends both; and it routes `contents/{path}` for one path
//! segment only, so files are read at the repository's root here (the client keeps the slashes
//! of a deeper path, as GitHub documents).
//!
//! The review threads the bot reads and resolves are GraphQL's, which no OpenAPI description
//! covers: the client's unit tests and the fake forge's GraphQL hold those calls.

use std::sync::{Arc, Mutex, PoisonError};

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::response::Response;
use forgeward::forge::api::{
    CheckConclusion, CheckFlag, CheckResult, CheckStart, CommitStatus, FlagLevel, ForgeApi,
    Permission, PullRequestSpec, Review, ReviewFlag, StatusState,
};
use forgeward::forge::github::app::GithubApp;
use forgeward::forge::github::http::{Retry, RetryPolicy};
use forgeward::forge::github::{Client, FlaggedConclusion, GithubAuth, GithubConfig};
use forgeward::forge::webhook::Secret;
use forgeward::forge::{Actor, CommitSha, Number, RepoName, Thread};
use serde_json::Value;

const PRIVATE_KEY: &str = "tests/data/github-app/test-only-private-key.pem";

/// The file the proxy presents as one over 1 MB, which the contents API does not inline.
const BIG_FILE: &str = "big.bin";

/// The manifest code for which the proxy answers as though GitHub had made the App without a
/// webhook secret (and with the test-only key, so that the App can sign its JWT).
pub(crate) const CODE_WITHOUT_SECRET: &str = "no-webhook-secret";

/// Commits whose check runs the proxy lists as none (the description's example lists one):
/// where the client must make a new run.
const UNCHECKED: [&str; 2] = [
    "1111111111111111111111111111111111111111",
    "2222222222222222222222222222222222222222",
];

fn prism_urls() -> (String, String) {
    let var = |name: &str| {
        std::env::var(name).unwrap_or_else(|_| {
            panic!("{name} is not set: run `eval \"$(tests/setup/prism.sh)\"` first")
        })
    };
    (
        var("FORGEWARD_TEST_PRISM_URL"),
        var("FORGEWARD_TEST_PRISM_EXAMPLES_URL"),
    )
}

/// What the proxy saw: every request line, and every complaint Prism made about a request.
#[derive(Default)]
struct Log {
    requests: Vec<String>,
    /// Each request's path and JSON body.
    bodies: Vec<(String, Value)>,
    refused: Vec<String>,
}

/// The recording proxy in front of the two Prisms: `doctor` points the binary at it, and
/// `setup_github` sends `forgeward setup github`'s conversion through it.
pub(crate) struct Proxy {
    pub(crate) url: String,
    log: Arc<Mutex<Log>>,
}

impl Proxy {
    pub(crate) async fn start() -> Proxy {
        let (strict, examples) = prism_urls();
        let http = reqwest::Client::new();
        for url in [&strict, &examples] {
            if let Err(e) = http.get(format!("{url}/zen")).send().await {
                panic!("Prism does not answer at {url} ({e}): run tests/setup/prism.sh");
            }
        }
        let log = Arc::new(Mutex::new(Log::default()));
        let recorded = log.clone();
        let app = axum::Router::new().fallback(move |request: Request| {
            let (http, strict, examples, log) = (
                http.clone(),
                strict.clone(),
                examples.clone(),
                recorded.clone(),
            );
            async move { forward(&http, &strict, &examples, &log, request).await }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        Proxy { url, log }
    }

    pub(crate) fn requests(&self) -> Vec<String> {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .requests
            .clone()
    }

    /// The JSON bodies of the requests whose path contains `part`, in order.
    fn bodies(&self, part: &str) -> Vec<Value> {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .bodies
            .iter()
            .filter(|(path, _)| path.contains(part))
            .map(|(_, body)| body.clone())
            .collect()
    }

    /// Fails the test with every request Prism refused.
    pub(crate) fn assert_all_conform(&self) {
        let log = self.log.lock().unwrap_or_else(PoisonError::into_inner);
        assert!(
            log.refused.is_empty(),
            "Prism refused {} request(s) as not matching GitHub's description:\n{}",
            log.refused.len(),
            log.refused.join("\n")
        );
    }
}

struct Answer {
    status: u16,
    violations: Vec<Value>,
    content_type: Option<String>,
    body: String,
}

async fn send(
    http: &reqwest::Client,
    base: &str,
    parts: &http::request::Parts,
    body: &[u8],
) -> Answer {
    let path = parts.uri.path_and_query().map_or("/", |pq| pq.as_str());
    let mut request = http.request(parts.method.clone(), format!("{base}{path}"));
    for (name, value) in &parts.headers {
        if name != http::header::HOST && name != http::header::CONTENT_LENGTH {
            request = request.header(name, value);
        }
    }
    let response = request
        .body(body.to_vec())
        .send()
        .await
        .unwrap_or_else(|e| panic!("Prism at {base} does not answer: {e}"));
    let status = response.status().as_u16();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let violations = header("sl-violations")
        .and_then(|v| serde_json::from_str::<Vec<Value>>(&v).ok())
        .unwrap_or_default();
    let content_type = header("content-type");
    let body = response.text().await.unwrap_or_default();
    Answer {
        status,
        violations,
        content_type,
        body,
    }
}

fn about_the_response(violation: &Value) -> bool {
    violation["location"][0] == "response"
}

async fn forward(
    http: &reqwest::Client,
    strict: &str,
    examples: &str,
    log: &Mutex<Log>,
    request: Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let body = to_bytes(body, usize::MAX).await.unwrap_or_default();
    let line = format!(
        "{} {}",
        parts.method,
        parts.uri.path_and_query().map_or("/", |pq| pq.as_str())
    );
    let mut answer = send(http, strict, &parts, &body).await;
    let request_errors: Vec<&Value> = answer
        .violations
        .iter()
        .filter(|v| !about_the_response(v) && v["severity"] == "Error")
        .collect();
    let problem = answer
        .content_type
        .as_deref()
        .is_some_and(|t| t.starts_with("application/problem+json"));
    {
        let mut log = log.lock().unwrap_or_else(PoisonError::into_inner);
        log.requests.push(line.clone());
        if let Ok(json) = serde_json::from_slice::<Value>(&body) {
            log.bodies.push((parts.uri.path().to_owned(), json));
        }
        if !request_errors.is_empty() || (problem && (400..500).contains(&answer.status)) {
            let sent = String::from_utf8_lossy(&body);
            log.refused.push(format!(
                "{line} {sent}\n  -> {}: {}\n     {}",
                answer.status,
                serde_json::to_string(&request_errors).unwrap_or_default(),
                answer.body
            ));
        }
    }
    let only_the_example_is_wrong = answer.status == 500
        && !answer.violations.is_empty()
        && answer.violations.iter().all(about_the_response);
    if only_the_example_is_wrong {
        answer = send(http, examples, &parts, &body).await;
    }
    let body = repair(&parts, &answer.body);
    Response::builder()
        .status(answer.status)
        .header("content-type", "application/json")
        .body(Body::from(body))
        .expect("a valid response")
}

/// The description's examples, made into what GitHub sends where they are known to differ.
fn repair(parts: &http::request::Parts, body: &str) -> String {
    let Ok(mut json) = serde_json::from_str::<Value>(body) else {
        return body.to_owned();
    };
    // `{"value": {…}, "x-github-breaking-changes": …}`: an Example object where its value belongs.
    if let Some(object) = json.as_object()
        && object.contains_key("value")
        && object.keys().all(|k| k == "value" || k.starts_with("x-"))
    {
        json = object["value"].clone();
    }
    if json["encoding"] == "base64"
        && let Some(content) = json["content"].as_str()
    {
        json["content"] = Value::from(content.replace("\\n", "\n"));
    }
    if UNCHECKED.iter().any(|sha| {
        parts
            .uri
            .path()
            .ends_with(&format!("/commits/{sha}/check-runs"))
    }) {
        json = serde_json::json!({ "total_count": 0, "check_runs": [] });
    }
    if parts.uri.path() == format!("/app-manifests/{CODE_WITHOUT_SECRET}/conversions") {
        json["webhook_secret"] = Value::Null;
        json["pem"] = Value::from(std::fs::read_to_string(PRIVATE_KEY).unwrap_or_default());
    }
    if parts.uri.path().ends_with(&format!("/contents/{BIG_FILE}")) {
        json["content"] = Value::from("");
        json["encoding"] = Value::from("none");
        json["size"] = Value::from(2_000_000);
    }
    json.to_string()
}

fn client(proxy: &Proxy, auth: GithubAuth) -> Client {
    let config = GithubConfig {
        api_url: proxy.url.clone(),
        web_url: "https://github.com".to_owned(),
        git_url: "file:///tmp/remotes".to_owned(),
        auth,
        flagged_conclusion: FlaggedConclusion::ActionRequired,
    };
    // No retries: Prism answers at once, and a 5xx here is a finding, not a hiccup.
    let retry = Retry::new(RetryPolicy::once());
    Client::with_retry(config, retry).unwrap_or_else(|e| panic!("{e}"))
}

fn repo() -> RepoName {
    RepoName("octocat/Hello-World".to_owned())
}

fn spec() -> PullRequestSpec {
    PullRequestSpec {
        head_branch: "forgeward/issue-7".to_owned(),
        base_branch: "main".to_owned(),
        title: "Fix the parser".to_owned(),
        body: "Closes #7".to_owned(),
        draft: true,
    }
}

fn check<T>(proxy: &Proxy, what: &str, result: Result<T, forgeward::forge::ForgeError>) -> T {
    result.unwrap_or_else(|e| {
        proxy.assert_all_conform();
        panic!("{what}: {e}")
    })
}

#[tokio::test]
async fn every_call_with_a_token_matches_githubs_description() {
    let proxy = Proxy::start().await;
    let client = client(
        &proxy,
        GithubAuth::Token(Secret::new("ghp_test".to_owned())),
    );
    let repo = repo();

    let branch = check(&proxy, "default_branch", client.default_branch(&repo).await);
    assert_eq!(branch, "master");
    let issue = check(&proxy, "issue", client.issue(&repo, Number(7)).await);
    assert_eq!(
        (issue.number, issue.title.as_str()),
        (Number(1347), "Found a bug")
    );
    let comments = check(
        &proxy,
        "comments",
        client.comments(&repo, Thread::Issue, Number(7)).await,
    );
    assert_eq!(comments[0].author, "octocat");
    assert_eq!(comments[0].body, "Me too");
    let comment = check(
        &proxy,
        "create_comment",
        client
            .create_comment(
                &repo,
                Thread::Issue,
                Number(7),
                "queued <!-- forgeward:status -->",
            )
            .await,
    );
    assert_eq!(comment.id, 1);
    check(
        &proxy,
        "update_comment",
        client
            .update_comment(&repo, Thread::Issue, Number(7), 42, "working")
            .await,
    );
    check(
        &proxy,
        "react_eyes",
        client.react_eyes(&repo, Thread::Issue, Number(7), 42).await,
    );
    check(
        &proxy,
        "add_labels",
        client
            .add_labels(
                &repo,
                Thread::PullRequest,
                Number(8),
                &["forgeward:flagged".to_owned()],
            )
            .await,
    );
    check(
        &proxy,
        "remove_label",
        client
            .remove_label(&repo, Thread::PullRequest, Number(8), "forgeward:flagged")
            .await,
    );
    let actor = Actor {
        login: "monalisa".to_owned(),
        id: 2,
    };
    let permission = check(&proxy, "permission", client.permission(&repo, &actor).await);
    assert_eq!(permission, Permission::Admin);
    let file = check(
        &proxy,
        "read_file",
        client.read_file(&repo, ".forgeward.toml", "main").await,
    );
    assert!(
        file.as_deref().is_some_and(|f| f.starts_with(b"# Yoga B")),
        "{file:?}"
    );
    let big = check(
        &proxy,
        "read_file (over 1 MB)",
        client.read_file(&repo, BIG_FILE, "0123abcd").await,
    );
    assert_eq!(big.as_deref(), Some(&b"Content of the blob"[..]));
    let pr = check(
        &proxy,
        "pull_request",
        client.pull_request(&repo, Number(8)).await,
    );
    assert_eq!(
        (pr.number, pr.head_branch.as_str(), pr.head_repo.0.as_str()),
        (Number(1347), "new-topic", "octocat/Hello-World")
    );
    assert_eq!(pr.head_sha.0, "6dcb09b5b57875f334f61aebed695e2e4193db5e");
    let found = check(
        &proxy,
        "find_pull_request",
        client.find_pull_request(&repo, "forgeward/issue-7").await,
    );
    assert_eq!(found.map(|p| p.number), Some(Number(1347)));
    let created = check(
        &proxy,
        "create_pull_request",
        client.create_pull_request(&repo, &spec()).await,
    );
    assert_eq!(created.base_branch, "master");
    check(
        &proxy,
        "update_pull_request",
        client.update_pull_request(&repo, Number(8), &spec()).await,
    );
    let review = Review {
        body: "forgeward found 2 signs of gamed tests.".to_owned(),
        flags: vec![
            ReviewFlag {
                path: "tests/test_parser.py".to_owned(),
                line: Some(12),
                side: forgeward::forge::api::Side::New,
                body: "A new skip marker.".to_owned(),
            },
            ReviewFlag {
                path: "sqlglot.py".to_owned(),
                line: None,
                side: forgeward::forge::api::Side::New,
                body: "Shadows the installed package.".to_owned(),
            },
        ],
    };
    check(
        &proxy,
        "post_review",
        client.post_review(&repo, &pr, &review).await,
    );
    let status = CommitStatus {
        state: StatusState::Failure,
        description: "2 flags".to_owned(),
        target_url: Some("https://forgeward.example/jobs/1".to_owned()),
    };
    let sha = CommitSha("6dcb09b5b57875f334f61aebed695e2e4193db5e".to_owned());
    check(
        &proxy,
        "set_commit_status",
        client.set_commit_status(&repo, &sha, &status).await,
    );

    proxy.assert_all_conform();
    let expected = [
        "GET /repos/octocat/Hello-World",
        "GET /repos/octocat/Hello-World/issues/7",
        "GET /repos/octocat/Hello-World/issues/7/comments?per_page=100&page=1",
        "POST /repos/octocat/Hello-World/issues/7/comments",
        "PATCH /repos/octocat/Hello-World/issues/comments/42",
        "POST /repos/octocat/Hello-World/issues/comments/42/reactions",
        "POST /repos/octocat/Hello-World/issues/8/labels",
        "DELETE /repos/octocat/Hello-World/issues/8/labels/forgeward%3Aflagged",
        "GET /repos/octocat/Hello-World/collaborators/monalisa/permission",
        "GET /repos/octocat/Hello-World/contents/.forgeward.toml?ref=main",
        "GET /repos/octocat/Hello-World/contents/big.bin?ref=0123abcd",
        "GET /repos/octocat/Hello-World/git/blobs/3d21ec53a331a6f037a91c368710b99387d012c1",
        "GET /repos/octocat/Hello-World/pulls/8",
        "GET /repos/octocat/Hello-World/pulls?head=octocat%3Aforgeward%2Fissue-7&state=open&per_page=100",
        "POST /repos/octocat/Hello-World/pulls",
        "PATCH /repos/octocat/Hello-World/pulls/8",
        "POST /repos/octocat/Hello-World/pulls/1347/reviews",
        "POST /repos/octocat/Hello-World/statuses/6dcb09b5b57875f334f61aebed695e2e4193db5e",
    ];
    assert_eq!(proxy.requests(), expected);
}

#[tokio::test]
async fn an_app_gets_installation_tokens_and_makes_check_runs_as_github_describes() {
    let proxy = Proxy::start().await;
    let app =
        GithubApp::load(42, std::path::Path::new(PRIVATE_KEY)).unwrap_or_else(|e| panic!("{e}"));
    let client = client(&proxy, GithubAuth::App(Arc::new(app)));
    let repo = repo();

    let credentials = check(
        &proxy,
        "git_credentials",
        client.git_credentials(&repo).await,
    );
    assert_eq!(credentials.username, "x-access-token");
    assert_eq!(
        credentials.password,
        "ghs_16C7e42F292c6912E7710c838347Ae178B4a"
    );
    // A new run in progress, completed with 120 flags: the first 50 with the conclusion, the
    // rest in two more updates of the same run.
    let details = Some("https://github.com/octocat/Hello-World/pull/1347".to_owned());
    let start = CheckStart {
        title: "checking the change".to_owned(),
        details_url: details.clone(),
    };
    let fresh = CommitSha(UNCHECKED[0].to_owned());
    check(
        &proxy,
        "start_check",
        client.start_check(&repo, &fresh, &start).await,
    );
    let flags: Vec<CheckFlag> = (1..=120)
        .map(|n| CheckFlag {
            path: format!("tests/test_{n}.py"),
            line: (n % 10 != 0).then_some(n),
            base_line: (n % 20 == 0).then_some(n),
            level: [FlagLevel::Note, FlagLevel::Warning, FlagLevel::Error][n as usize % 3],
            rule: "skip-marker".to_owned(),
            message: "newly marks a test skipped".to_owned(),
            details: "A test newly skipped, ignored, expected to fail or disabled.".to_owned(),
        })
        .collect();
    let flagged = CheckResult {
        conclusion: CheckConclusion::Flagged,
        title: "120 review flags for a person to look at".to_owned(),
        summary: "### ⚠️ forgeward: flagged — 120 review flags\n".to_owned(),
        flags,
        details_url: details.clone(),
    };
    check(
        &proxy,
        "finish_check (120 flags)",
        client.finish_check(&repo, &fresh, &flagged).await,
    );
    // A run left in progress on the commit (the description's example) is taken up again.
    let listed = CommitSha("ce587453ced02b1526dfb4cb910479d431683101".to_owned());
    check(
        &proxy,
        "start_check (a run in progress)",
        client.start_check(&repo, &listed, &start).await,
    );
    // A result with no run begun: a new run, completed at once with its annotations.
    let noted = CheckResult {
        conclusion: CheckConclusion::Noted,
        title: "1 note for a person to read".to_owned(),
        summary: "### ✅ forgeward: ready for review\n".to_owned(),
        flags: flagged.flags[..1].to_vec(),
        details_url: None,
    };
    check(
        &proxy,
        "finish_check (none begun)",
        client
            .finish_check(&repo, &CommitSha(UNCHECKED[1].to_owned()), &noted)
            .await,
    );

    proxy.assert_all_conform();
    // The description's token expired in 2016, so each call asks for a new one; the
    // installation is asked for once.
    let requests: Vec<String> = proxy
        .requests()
        .into_iter()
        .filter(|r| !r.ends_with("/access_tokens"))
        .collect();
    let list = |sha: &str| {
        format!(
            "GET /repos/octocat/Hello-World/commits/{sha}/check-runs?check_name=forgeward&status=in_progress&filter=all&per_page=100&app_id=42"
        )
    };
    assert_eq!(
        requests,
        [
            "GET /repos/octocat/Hello-World/installation".to_owned(),
            list(UNCHECKED[0]),
            "POST /repos/octocat/Hello-World/check-runs".to_owned(),
            "PATCH /repos/octocat/Hello-World/check-runs/4".to_owned(),
            "PATCH /repos/octocat/Hello-World/check-runs/4".to_owned(),
            "PATCH /repos/octocat/Hello-World/check-runs/4".to_owned(),
            list("ce587453ced02b1526dfb4cb910479d431683101"),
            "PATCH /repos/octocat/Hello-World/check-runs/4".to_owned(),
            list(UNCHECKED[1]),
            "POST /repos/octocat/Hello-World/check-runs".to_owned(),
        ]
    );
    let bodies = proxy.bodies("/check-runs");
    let annotations: Vec<usize> = bodies
        .iter()
        .map(|b| b["output"]["annotations"].as_array().map_or(0, Vec::len))
        .collect();
    assert_eq!(annotations, [0, 50, 50, 20, 0, 1]);
    assert_eq!(bodies[1]["conclusion"], "action_required");
    assert_eq!(bodies[5]["conclusion"], "neutral");
}

/// The proxy refuses what GitHub's description refuses: a check run update with more than 50
/// annotations, so the conformance above would catch a client that sent one.
#[tokio::test]
async fn prism_refuses_more_than_fifty_annotations_in_one_request() {
    let proxy = Proxy::start().await;
    let annotation = serde_json::json!({ "path": "a.py", "start_line": 1, "end_line": 1,
                                         "annotation_level": "warning", "message": "m" });
    let body = serde_json::json!({ "output": { "title": "t", "summary": "s",
                                               "annotations": vec![annotation; 51] } });
    let answer = reqwest::Client::new()
        .patch(format!(
            "{}/repos/octocat/Hello-World/check-runs/4",
            proxy.url
        ))
        .header("authorization", "Bearer ghs_test")
        .header("accept", "application/json")
        .json(&body)
        .send()
        .await
        .expect("the proxy answers");
    assert!(answer.status().is_client_error(), "{}", answer.status());
    let refused = proxy
        .log
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .refused
        .clone();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(refused[0].contains("annotations"), "{}", refused[0]);
}
