//! The Forgejo client against Forgejo's own API description (Forgejo 11's Swagger 2.0 file,
//! `tests/data/forgejo/swagger.v1.json`), served by Stoplight Prism (`tests/setup/prism.sh`
//! starts it).
//!
//! Every call the client makes goes through a small recording proxy to `prism mock --errors`,
//! which checks the method, the path and its parameters, the query, the `Authorization` header
//! and the JSON body against the description. A request Prism finds wrong fails the test with
//! Prism's own words (its `sl-violations` header, or its problem+json body), and so does one
//! that is not under `/api/v1`. The description has no examples: Prism answers with values it
//! makes from the schemas (`"string"`, `true`, the least integer), and the client must decode
//! them.
//!
//! Where the description is itself at fault, the proxy says so and works around it, and only
//! there:
//! - Prism serves the description at its root, not under its `basePath`: the proxy takes
//!   `/api/v1` off each path it forwards.
//! - The raw file endpoint answers `type: file` as `application/octet-stream`, which Prism
//!   cannot make (it answers 500 "Cannot find serializer"): once Prism has found the request
//!   valid, the proxy answers the file's bytes itself.
//! - The ids, indexes and counts are `int64` with no minimum, so Prism makes them the least
//!   safe integer (-9007199254740991); they are database keys and counts, never negative, and
//!   the proxy turns every negative integer positive.
//!
//! One test has the proxy play a part no description can: Forgejo refusing a review's line
//! (it answers 500 to a review Prism found valid) and keeping the comments before it as the
//! bot's pending review (the reviews Prism lists are made `PENDING`), so that the client's way
//! back, discarding that review and posting the flags in the body, is checked call by call.
//!
//! What Prism shows about the client's requests: it routes `raw/{filepath}` for one path
//! segment only, so files are read at the repository's root here (the client keeps the slashes
//! of a deeper path, as its unit tests check); and the client must send no `Accept:
//! application/json` to the raw endpoint, which the description lists as producing
//! `application/octet-stream` only (Prism answers 406), so it sends no `Accept` at all.

use std::sync::{Arc, Mutex, PoisonError};

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::response::Response;
use forgeward::forge::api::{
    CommitStatus, ForgeApi, Permission, PullRequestSpec, Review, ReviewFlag, Side, StatusState,
};
use forgeward::forge::forgejo::{Client, ForgejoConfig, Retry, RetryPolicy};
use forgeward::forge::webhook::Secret;
use forgeward::forge::{Actor, CommitSha, Number, RepoName, Thread};
use serde_json::Value;

/// Where the client's API is: what the proxy takes off before forwarding to Prism.
const BASE_PATH: &str = "/api/v1";

/// What the proxy answers for a raw file, which Prism cannot make.
const FILE: &[u8] = b"[checks]\nskip = []\n";

/// The value Prism makes for every integer, turned positive by the proxy.
const ID: u64 = 9_007_199_254_740_991;

fn prism_url() -> String {
    let name = "FORGEWARD_TEST_FORGEJO_PRISM_URL";
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run `eval \"$(tests/setup/prism.sh)\"` first")
    })
}

/// What the proxy saw: every request line, and every complaint about a request.
#[derive(Default)]
struct Log {
    requests: Vec<String>,
    refused: Vec<String>,
}

struct Proxy {
    url: String,
    log: Arc<Mutex<Log>>,
}

/// What the proxy plays of Forgejo beyond the description.
#[derive(Clone, Copy)]
enum Part {
    /// Nothing: Prism's answers, repaired where the description is at fault.
    None,
    /// A review with line comments is refused, and the listed reviews are pending.
    RefusedLine,
}

impl Proxy {
    async fn start(part: Part) -> Proxy {
        let prism = prism_url();
        let http = reqwest::Client::new();
        if let Err(e) = http.get(format!("{prism}/version")).send().await {
            panic!("Prism does not answer at {prism} ({e}): run tests/setup/prism.sh");
        }
        let log = Arc::new(Mutex::new(Log::default()));
        let recorded = log.clone();
        let app = axum::Router::new().fallback(move |request: Request| {
            let (http, prism, log) = (http.clone(), prism.clone(), recorded.clone());
            async move { forward(&http, &prism, &log, part, request).await }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        Proxy { url, log }
    }

    fn requests(&self) -> Vec<String> {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .requests
            .clone()
    }

    /// Fails the test with every request Prism refused.
    fn assert_all_conform(&self) {
        let log = self.log.lock().unwrap_or_else(PoisonError::into_inner);
        assert!(
            log.refused.is_empty(),
            "{} request(s) do not match Forgejo's description:\n{}",
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
    prism: &str,
    path: &str,
    parts: &http::request::Parts,
    body: &[u8],
) -> Answer {
    let mut request = http.request(parts.method.clone(), format!("{prism}{path}"));
    for (name, value) in &parts.headers {
        if name != http::header::HOST && name != http::header::CONTENT_LENGTH {
            request = request.header(name, value);
        }
    }
    let response = request
        .body(body.to_vec())
        .send()
        .await
        .unwrap_or_else(|e| panic!("Prism at {prism} does not answer: {e}"));
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
    prism: &str,
    log: &Mutex<Log>,
    part: Part,
    request: Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let body = to_bytes(body, usize::MAX).await.unwrap_or_default();
    let sent = parts.uri.path_and_query().map_or("/", |pq| pq.as_str());
    let line = format!("{} {sent}", parts.method);
    let Some(path) = sent.strip_prefix(BASE_PATH) else {
        let mut log = log.lock().unwrap_or_else(PoisonError::into_inner);
        log.requests.push(line.clone());
        log.refused.push(format!("{line}: not under {BASE_PATH}"));
        return reply(404, "application/json", Body::from("{}"));
    };
    let answer = send(http, prism, path, &parts, &body).await;
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
        if !request_errors.is_empty() || (problem && (400..500).contains(&answer.status)) {
            log.refused.push(format!(
                "{line} {}\n  -> {}: {}\n     {}",
                String::from_utf8_lossy(&body),
                answer.status,
                serde_json::to_string(&request_errors).unwrap_or_default(),
                answer.body
            ));
        }
    }
    // The raw endpoint's `type: file`, which Prism validates the request for and then cannot
    // serialize.
    let no_serializer = answer.status == 500
        && problem
        && request_errors.is_empty()
        && answer.body.contains("Cannot find serializer");
    if no_serializer && parts.uri.path().contains("/raw/") {
        return reply(200, "application/octet-stream", Body::from(FILE));
    }
    let reviews = parts.uri.path().ends_with("/reviews");
    if let Part::RefusedLine = part
        && reviews
        && parts.method == http::Method::POST
        && request_errors.is_empty()
        && serde_json::from_slice::<Value>(&body)
            .is_ok_and(|sent| sent["comments"].as_array().is_some_and(|c| !c.is_empty()))
    {
        // Forgejo's answer on a production instance: CreateCodeComment failed, message hidden.
        let refusal = r#"{"message":"","url":"https://codeberg.example/api/swagger"}"#;
        return reply(500, "application/json", Body::from(refusal));
    }
    let body = match serde_json::from_str::<Value>(&answer.body) {
        Ok(mut json) => {
            positive(&mut json);
            if let (Part::RefusedLine, true, Some(listed)) = (
                part,
                reviews && parts.method == http::Method::GET,
                json.as_array_mut(),
            ) {
                for review in listed {
                    review["state"] = Value::from("PENDING");
                }
            }
            json.to_string()
        }
        Err(_) => answer.body,
    };
    let content_type = answer
        .content_type
        .unwrap_or_else(|| "application/json".to_owned());
    reply(answer.status, &content_type, Body::from(body))
}

fn reply(status: u16, content_type: &str, body: Body) -> Response {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(body)
        .expect("a valid response")
}

/// Every negative integer in `json` made positive: Prism's least safe integer for Forgejo's
/// ids, indexes and counts, which the description leaves without a minimum.
fn positive(json: &mut Value) {
    match json {
        Value::Number(n) => {
            if let Some(negative) = n.as_i64().filter(|&i| i < 0) {
                *json = Value::from(negative.unsigned_abs());
            }
        }
        Value::Array(items) => items.iter_mut().for_each(positive),
        Value::Object(fields) => fields.values_mut().for_each(positive),
        _ => {}
    }
}

fn client(proxy: &Proxy) -> Client {
    let config = ForgejoConfig {
        url: proxy.url.clone(),
        git_url: "https://codeberg.example".to_owned(),
        token: Secret::new("forgejo-test-token".to_owned()),
    };
    // No retries: Prism answers at once, and a 5xx here is a finding, not a hiccup.
    Client::with_retry(config, Retry::new(RetryPolicy::once())).unwrap_or_else(|e| panic!("{e}"))
}

fn check<T>(proxy: &Proxy, what: &str, result: Result<T, forgeward::forge::ForgeError>) -> T {
    result.unwrap_or_else(|e| {
        proxy.assert_all_conform();
        panic!("{what}: {e}")
    })
}

#[tokio::test]
async fn every_call_matches_forgejos_description() {
    let proxy = Proxy::start(Part::None).await;
    let client = client(&proxy);
    let repo = RepoName("acme/widgets".to_owned());

    assert_eq!(
        client.git_url(&repo),
        "https://codeberg.example/acme/widgets.git"
    );
    let credentials = check(
        &proxy,
        "git_credentials",
        client.git_credentials(&repo).await,
    );
    assert_eq!(credentials.password, "forgejo-test-token");
    let branch = check(&proxy, "default_branch", client.default_branch(&repo).await);
    assert_eq!(branch, "string");
    let issue = check(&proxy, "issue", client.issue(&repo, Number(7)).await);
    assert_eq!((issue.number, issue.title.as_str()), (Number(ID), "string"));
    let comments = check(
        &proxy,
        "comments",
        client.comments(&repo, Thread::Issue, Number(7)).await,
    );
    assert_eq!(comments.len(), 1);
    assert_eq!(
        (comments[0].id, comments[0].author.as_str()),
        (ID, "string")
    );
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
    assert_eq!(comment.id, ID);
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
    // Prism names every label "string": that one is on the pull request, so it is removed.
    check(
        &proxy,
        "remove_label",
        client
            .remove_label(&repo, Thread::PullRequest, Number(8), "string")
            .await,
    );
    let actor = Actor {
        login: "monalisa".to_owned(),
        id: 2,
    };
    let permission = check(&proxy, "permission", client.permission(&repo, &actor).await);
    assert_eq!(permission, Permission::None, "\"string\" is no access mode");
    let file = check(
        &proxy,
        "read_file",
        client.read_file(&repo, ".forgeward.toml", "main").await,
    );
    assert_eq!(file.as_deref(), Some(FILE));
    let pr = check(
        &proxy,
        "pull_request",
        client.pull_request(&repo, Number(8)).await,
    );
    assert_eq!(
        (pr.number, pr.head_branch.as_str(), pr.head_repo.0.as_str()),
        (Number(ID), "string", "string")
    );
    assert_eq!((pr.base_sha.0.as_str(), pr.draft), ("string", true));
    // Prism's pull request comes from a head branch named "string" of the same repository id.
    let found = check(
        &proxy,
        "find_pull_request",
        client.find_pull_request(&repo, "string").await,
    );
    assert_eq!(found.map(|p| p.number), Some(Number(ID)));
    let spec = PullRequestSpec {
        head_branch: "forgeward/issue-7".to_owned(),
        base_branch: "main".to_owned(),
        title: "Fix the parser".to_owned(),
        body: "Closes #7".to_owned(),
        draft: true,
    };
    let created = check(
        &proxy,
        "create_pull_request",
        client.create_pull_request(&repo, &spec).await,
    );
    assert_eq!(created.base_branch, "string");
    check(
        &proxy,
        "update_pull_request",
        client.update_pull_request(&repo, Number(8), &spec).await,
    );
    let flags = check(
        &proxy,
        "review_flags",
        client.review_flags(&repo, Number(8)).await,
    );
    assert_eq!(flags.len(), 1);
    assert_eq!(
        (flags[0].path.as_str(), flags[0].body.as_str()),
        ("string", "string")
    );
    check(
        &proxy,
        "resolve_flag",
        client
            .resolve_flag(&repo, Number(8), &flags[0], "no longer holds at `1a2b3c4`.")
            .await,
    );
    let review = Review {
        body: "forgeward found 3 signs of gamed tests.".to_owned(),
        flags: vec![
            ReviewFlag {
                path: "tests/test_parser.py".to_owned(),
                line: Some(12),
                side: Side::New,
                body: "A new skip marker.".to_owned(),
            },
            ReviewFlag {
                path: "tests/test_lexer.py".to_owned(),
                line: Some(30),
                side: Side::Old,
                body: "A deleted test.".to_owned(),
            },
            ReviewFlag {
                path: "sqlglot.py".to_owned(),
                line: None,
                side: Side::New,
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
        "GET /api/v1/repos/acme/widgets",
        "GET /api/v1/repos/acme/widgets/issues/7",
        "GET /api/v1/repos/acme/widgets/issues/7/comments",
        "POST /api/v1/repos/acme/widgets/issues/7/comments",
        "PATCH /api/v1/repos/acme/widgets/issues/comments/42",
        "POST /api/v1/repos/acme/widgets/issues/comments/42/reactions",
        "GET /api/v1/repos/acme/widgets/labels?page=1&limit=50",
        "POST /api/v1/repos/acme/widgets/labels",
        "POST /api/v1/repos/acme/widgets/issues/8/labels",
        "GET /api/v1/repos/acme/widgets/issues/8/labels",
        "DELETE /api/v1/repos/acme/widgets/issues/8/labels/9007199254740991",
        "GET /api/v1/repos/acme/widgets/collaborators/monalisa/permission",
        "GET /api/v1/repos/acme/widgets/raw/.forgeward.toml?ref=main",
        "GET /api/v1/repos/acme/widgets/pulls/8",
        "GET /api/v1/repos/acme/widgets/pulls?state=open&page=1&limit=50",
        "POST /api/v1/repos/acme/widgets/pulls",
        "PATCH /api/v1/repos/acme/widgets/pulls/8",
        "GET /api/v1/repos/acme/widgets/pulls/8/reviews?page=1&limit=50",
        "GET /api/v1/repos/acme/widgets/pulls/8/reviews/9007199254740991/comments",
        "PATCH /api/v1/repos/acme/widgets/issues/comments/9007199254740991",
        "POST /api/v1/repos/acme/widgets/pulls/9007199254740991/reviews",
        "POST /api/v1/repos/acme/widgets/statuses/6dcb09b5b57875f334f61aebed695e2e4193db5e",
    ];
    assert_eq!(proxy.requests(), expected);
}

/// `forgeward doctor`'s one call on Forgejo: who the token is.
#[tokio::test]
async fn the_token_users_call_matches_forgejos_description() {
    let proxy = Proxy::start(Part::None).await;
    let login = client(&proxy).token_user().await.unwrap_or_else(|e| {
        proxy.assert_all_conform();
        panic!("token_user: {e}")
    });
    assert_eq!(login, "string");
    proxy.assert_all_conform();
    assert_eq!(proxy.requests(), ["GET /api/v1/user"]);
}

#[tokio::test]
async fn a_refused_line_discards_the_pending_review_and_posts_the_flags_in_the_body() {
    let proxy = Proxy::start(Part::RefusedLine).await;
    let client = client(&proxy);
    let repo = RepoName("acme/widgets".to_owned());
    let pr = check(
        &proxy,
        "pull_request",
        client.pull_request(&repo, Number(8)).await,
    );
    // Prism's pending review holds one comment, "string": the flag Forgejo placed before the
    // one it refused.
    let review = Review {
        body: "forgeward found 2 signs of gamed tests.".to_owned(),
        flags: vec![
            ReviewFlag {
                path: "tests/test_parser.py".to_owned(),
                line: Some(12),
                side: Side::New,
                body: "string".to_owned(),
            },
            ReviewFlag {
                path: "tests/test_lexer.py".to_owned(),
                line: Some(30),
                side: Side::Old,
                body: "A deleted test.".to_owned(),
            },
        ],
    };
    check(
        &proxy,
        "post_review",
        client.post_review(&repo, &pr, &review).await,
    );
    proxy.assert_all_conform();
    assert_eq!(
        proxy.requests(),
        [
            "GET /api/v1/repos/acme/widgets/pulls/8",
            "POST /api/v1/repos/acme/widgets/pulls/9007199254740991/reviews",
            "GET /api/v1/repos/acme/widgets/pulls/9007199254740991/reviews?page=1&limit=50",
            "GET /api/v1/repos/acme/widgets/pulls/9007199254740991/reviews/9007199254740991/comments",
            "DELETE /api/v1/repos/acme/widgets/pulls/9007199254740991/reviews/9007199254740991",
            "POST /api/v1/repos/acme/widgets/pulls/9007199254740991/reviews",
        ]
    );
}
