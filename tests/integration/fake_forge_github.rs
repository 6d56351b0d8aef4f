//! The fake forge's GitHub side, driven with plain HTTP: each endpoint the GitHub client calls
//! answers with the request and response shapes, status codes, pagination and credentials
//! docs.github.com/rest documents, and every answer reads as octocrab's typed model of it (the
//! GitHub client is built on octocrab). Also the fake forge's own rules: unknown routes and
//! writes a test did not expect fail the test.

use base64::Engine as _;
use forgeward::forge::api::Permission;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::fake_forge::{FakeForge, GITHUB_TOKEN, RepoHandle, sha_of};

const REPO: &str = "acme/widgets";

/// A bare GitHub REST caller: one credential, JSON in and out.
struct Gh {
    http: reqwest::Client,
    base: String,
    auth: Option<String>,
}

/// What GitHub answered.
struct Answer {
    status: StatusCode,
    link: Option<String>,
    json: Value,
}

impl Gh {
    fn new(forge: &FakeForge, auth: Option<String>) -> Gh {
        Gh {
            http: reqwest::Client::new(),
            base: forge.url(),
            auth,
        }
    }

    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> Answer {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header("accept", "application/vnd.github+json")
            .header("x-github-api-version", "2022-11-28");
        if let Some(auth) = &self.auth {
            request = request.header("authorization", auth);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("the fake forge answers");
        let status = response.status();
        let link = response
            .headers()
            .get("link")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let text = response.text().await.expect("a body");
        let json = serde_json::from_str(&text).unwrap_or(Value::Null);
        Answer { status, link, json }
    }

    async fn get(&self, path: &str) -> Answer {
        self.call(Method::GET, path, None).await
    }

    async fn post(&self, path: &str, body: Value) -> Answer {
        self.call(Method::POST, path, Some(body)).await
    }

    async fn patch(&self, path: &str, body: Value) -> Answer {
        self.call(Method::PATCH, path, Some(body)).await
    }
}

async fn setup() -> (FakeForge, RepoHandle, Gh) {
    let forge = FakeForge::start().await;
    let repo = forge.github_repo(REPO);
    let gh = Gh::new(&forge, Some(format!("token {GITHUB_TOKEN}")));
    (forge, repo, gh)
}

#[tokio::test]
async fn requests_need_a_token_github_knows() {
    let (forge, _repo, gh) = setup().await;
    let none = Gh::new(&forge, None).get("/repos/acme/widgets").await;
    assert_eq!(none.status, StatusCode::UNAUTHORIZED);
    assert_eq!(none.json["message"], "Requires authentication");
    let wrong = Gh::new(&forge, Some("token ghp_nope".into()))
        .get("/repos/acme/widgets")
        .await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    assert_eq!(wrong.json["message"], "Bad credentials");
    let repo = gh.get("/repos/acme/widgets").await;
    assert_eq!(repo.status, StatusCode::OK);
    assert_eq!(repo.json["full_name"], REPO);
    assert_eq!(repo.json["default_branch"], "main");
    assert_eq!(repo.json["owner"]["login"], "acme");
    let seen: Vec<Option<String>> = forge.requests().into_iter().map(|r| r.credential).collect();
    assert_eq!(
        seen,
        [
            None,
            Some("token ghp_nope".into()),
            Some(format!("token {GITHUB_TOKEN}"))
        ]
    );
}

/// A JWT in shape: the fake does not hold the App's key, so it checks no more.
const JWT: &str = "Bearer eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiIxIn0.c2lnbmF0dXJl";

#[tokio::test]
async fn an_app_mints_installation_tokens_for_its_repositories() {
    let forge = FakeForge::start().await;
    let widgets = forge.github_repo(REPO).installation(42);
    forge.github_repo("other/thing").installation(7);
    let app = Gh::new(&forge, Some(JWT.into()));
    let installation = app.get("/repos/acme/widgets/installation").await;
    assert_eq!(installation.status, StatusCode::OK);
    assert_eq!(installation.json["id"], 42);
    assert_eq!(installation.json["account"]["login"], "acme");
    let minted = app
        .post("/app/installations/42/access_tokens", json!({}))
        .await;
    assert_eq!(minted.status, StatusCode::CREATED);
    let token = minted.json["token"].as_str().expect("a token").to_owned();
    let expires = minted.json["expires_at"].as_str().expect("an expiry");
    let expires = chrono::DateTime::parse_from_rfc3339(expires).expect("RFC 3339");
    let left = expires
        .signed_duration_since(chrono::Utc::now())
        .num_minutes();
    assert!((58..=60).contains(&left), "{left} minutes");
    let bot = Gh::new(&forge, Some(format!("token {token}")));
    assert_eq!(bot.get("/repos/acme/widgets").await.status, StatusCode::OK);
    // A token is for its installation's repositories only.
    assert_eq!(
        bot.get("/repos/other/thing").await.status,
        StatusCode::UNAUTHORIZED
    );
    // The App's own calls want its JWT, not a token; unknown installations are 404.
    assert_eq!(
        bot.get("/repos/acme/widgets/installation").await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        app.post("/app/installations/9/access_tokens", json!({}))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    // Check runs are for Apps.
    let run = json!({ "name": "forgeward", "head_sha": sha_of("head"), "status": "completed",
                      "conclusion": "success",
                      "output": { "title": "No flags", "summary": "forgeward found nothing." } });
    let made = bot
        .post("/repos/acme/widgets/check-runs", run.clone())
        .await;
    assert_eq!(made.status, StatusCode::CREATED);
    assert_eq!(made.json["conclusion"], "success");
    assert_eq!(made.json["status"], "completed");
    let pat = Gh::new(&forge, Some(format!("Bearer {GITHUB_TOKEN}")));
    let refused = pat.post("/repos/acme/widgets/check-runs", run).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    let status = forge
        .commit_status(&widgets, &sha_of("head"))
        .expect("the check run");
    assert!(status.check_run);
    assert_eq!(status.state, "completed/success");
}

/// A check run keeps what each request said: its status and conclusion, its output, and every
/// annotation, 50 at most a request; the App finds its runs on a commit by name and status.
#[tokio::test]
async fn check_runs_keep_their_output_and_annotations() {
    let forge = FakeForge::start().await;
    let widgets = forge.github_repo(REPO).installation(42);
    let app = Gh::new(&forge, Some(JWT.into()));
    let minted = app
        .post("/app/installations/42/access_tokens", json!({}))
        .await;
    let bot = Gh::new(
        &forge,
        Some(format!(
            "token {}",
            minted.json["token"].as_str().expect("a token")
        )),
    );
    let sha = sha_of("head");
    let annotation = |line: u64| {
        json!({ "path": "a.py", "start_line": line, "end_line": line,
                "annotation_level": "warning", "title": "skip-marker", "message": "m" })
    };
    let made = bot
        .post(
            "/repos/acme/widgets/check-runs",
            json!({ "name": "forgeward", "head_sha": sha, "status": "in_progress",
                    "output": { "title": "checking", "summary": "…" } }),
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED);
    let id = made.json["id"].as_u64().expect("an id");
    let path = format!("/repos/acme/widgets/check-runs/{id}");
    let list = format!(
        "/repos/acme/widgets/commits/{sha}/check-runs?check_name=forgeward&status=in_progress&app_id=1"
    );
    assert_eq!(bot.get(&list).await.json["check_runs"][0]["id"], id);
    assert_eq!(
        bot.get(&list.replace("app_id=1", "app_id=2")).await.json["total_count"],
        0,
        "another App's runs"
    );
    // More than 50 annotations in one request: GitHub's 422, and nothing changes.
    let too_many: Vec<Value> = (1..=51).map(annotation).collect();
    let refused = bot
        .patch(
            &path,
            json!({ "output": { "title": "t", "summary": "s", "annotations": too_many } }),
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    let done = bot
        .patch(
            &path,
            json!({ "conclusion": "failure",
                    "output": { "title": "2 flags", "summary": "story",
                                "annotations": (1..=50).map(annotation).collect::<Vec<_>>() } }),
        )
        .await;
    assert_eq!(done.json["status"], "completed");
    let more = bot
        .patch(
            &path,
            json!({ "output": { "title": "2 flags", "summary": "story",
                                "annotations": [annotation(51)] } }),
        )
        .await;
    assert_eq!(more.json["output"]["annotations_count"], 51);
    assert_eq!(
        bot.get(&list).await.json["total_count"],
        0,
        "no longer in progress"
    );
    // A completed run wants its conclusion; a line 0 is no line.
    let no_conclusion = bot.patch(&path, json!({ "status": "completed" })).await;
    assert_eq!(no_conclusion.status, StatusCode::UNPROCESSABLE_ENTITY);
    let bad_line = bot
        .patch(
            &path,
            json!({ "output": { "title": "t", "summary": "s", "annotations": [annotation(0)] } }),
        )
        .await;
    assert_eq!(bad_line.status, StatusCode::UNPROCESSABLE_ENTITY);

    let runs = forge.check_runs(&widgets, &sha);
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(
        (
            run.status.as_str(),
            run.conclusion.as_deref(),
            run.title.as_deref(),
            run.summary.as_deref()
        ),
        ("completed", Some("failure"), Some("2 flags"), Some("story"))
    );
    assert_eq!(run.requests, 3);
    let lines: Vec<u64> = run.annotations.iter().map(|a| a.start_line).collect();
    assert_eq!(lines, (1..=51).collect::<Vec<_>>());
}

#[tokio::test]
async fn an_expired_installation_token_is_refused() {
    let forge = FakeForge::start().await;
    forge.github_repo(REPO).installation(42);
    forge.installation_token_lifetime(chrono::Duration::seconds(-1));
    let app = Gh::new(&forge, Some(JWT.into()));
    let minted = app
        .post("/app/installations/42/access_tokens", json!({}))
        .await;
    let token = minted.json["token"].as_str().expect("a token");
    let bot = Gh::new(&forge, Some(format!("token {token}")));
    let refused = bot.get("/repos/acme/widgets").await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert_eq!(refused.json["message"], "Bad credentials");
}

#[tokio::test]
async fn an_issue_and_a_pull_request_through_the_issues_api() {
    let (forge, repo, gh) = setup().await;
    repo.issue(7, "Parser drops a line", "Expected two.")
        .label(7, "bug")
        .pull(8, "feature", "main");
    let issue = gh.get("/repos/acme/widgets/issues/7").await;
    assert_eq!(issue.status, StatusCode::OK);
    assert_eq!(issue.json["number"], 7);
    assert_eq!(issue.json["title"], "Parser drops a line");
    assert_eq!(issue.json["body"], "Expected two.");
    assert_eq!(issue.json["labels"][0]["name"], "bug");
    assert!(issue.json.get("pull_request").is_none());
    let pull = gh.get("/repos/acme/widgets/issues/8").await;
    assert!(pull.json["pull_request"]["url"].is_string());
    assert_eq!(
        gh.get("/repos/acme/widgets/issues/9").await.status,
        StatusCode::NOT_FOUND
    );
    assert!(forge.pending_writes().is_empty(), "reading writes nothing");
}

#[tokio::test]
async fn comments_are_paged_with_link_headers() {
    let (_forge, repo, gh) = setup().await;
    repo.issue(7, "t", "b");
    for i in 0..75 {
        repo.comment(7, "alice", &format!("comment {i}"));
    }
    let first = gh.get("/repos/acme/widgets/issues/7/comments").await;
    assert_eq!(first.json.as_array().map(Vec::len), Some(30));
    let link = first.link.expect("a Link header");
    let base = gh.base.clone();
    assert_eq!(
        link,
        format!(
            "<{base}/repos/acme/widgets/issues/7/comments?per_page=30&page=2>; rel=\"next\", \
             <{base}/repos/acme/widgets/issues/7/comments?per_page=30&page=3>; rel=\"last\""
        )
    );
    let last = gh
        .get("/repos/acme/widgets/issues/7/comments?per_page=30&page=3")
        .await;
    assert_eq!(last.json.as_array().map(Vec::len), Some(15));
    assert_eq!(last.json[14]["body"], "comment 74");
    assert_eq!(last.json[14]["user"]["login"], "alice");
    assert!(!last.link.expect("first and prev").contains("rel=\"next\""));
    let all = gh
        .get("/repos/acme/widgets/issues/7/comments?per_page=100")
        .await;
    assert_eq!(all.json.as_array().map(Vec::len), Some(75));
    assert_eq!(all.link, None);
}

#[tokio::test]
async fn a_comment_is_created_edited_and_reacted_to() {
    let (forge, repo, gh) = setup().await;
    repo.issue(7, "t", "b");
    let made = gh
        .post(
            "/repos/acme/widgets/issues/7/comments",
            json!({ "body": "<!-- forgeward:status -->\nQueued" }),
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED);
    assert_eq!(made.json["user"]["login"], "forgeward-bot");
    let id = made.json["id"].as_u64().expect("an id");
    let missing = gh
        .post("/repos/acme/widgets/issues/7/comments", json!({}))
        .await;
    assert_eq!(missing.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(missing.json["errors"][0]["code"], "missing_field");
    let edited = gh
        .call(
            Method::PATCH,
            &format!("/repos/acme/widgets/issues/comments/{id}"),
            Some(json!({ "body": "<!-- forgeward:status -->\nDone" })),
        )
        .await;
    assert_eq!(edited.status, StatusCode::OK);
    assert_eq!(edited.json["body"], "<!-- forgeward:status -->\nDone");
    let reactions = format!("/repos/acme/widgets/issues/comments/{id}/reactions");
    assert_eq!(
        gh.post(&reactions, json!({ "content": "eyes" }))
            .await
            .status,
        StatusCode::CREATED
    );
    // The same reaction again is 200, and still one reaction.
    assert_eq!(
        gh.post(&reactions, json!({ "content": "eyes" }))
            .await
            .status,
        StatusCode::OK
    );
    let odd = gh.post(&reactions, json!({ "content": "thumbsup" })).await;
    assert_eq!(odd.status, StatusCode::UNPROCESSABLE_ENTITY);
    let status = forge.status_comment(&repo, 7).expect("the status comment");
    assert_eq!(status.id, id);
    assert_eq!(status.reactions, ["eyes"]);
    assert!(status.body.ends_with("Done"));
}

#[tokio::test]
async fn labels_are_added_and_removed() {
    let (forge, repo, gh) = setup().await;
    repo.issue(7, "t", "b");
    let added = gh
        .post(
            "/repos/acme/widgets/issues/7/labels",
            json!({ "labels": ["forgeward", "forgeward:flagged"] }),
        )
        .await;
    assert_eq!(added.status, StatusCode::OK);
    assert_eq!(added.json[1]["name"], "forgeward:flagged");
    let path = "/repos/acme/widgets/issues/7/labels/forgeward";
    let removed = gh.call(Method::DELETE, path, None).await;
    assert_eq!(removed.status, StatusCode::OK);
    assert_eq!(removed.json.as_array().map(Vec::len), Some(1));
    let again = gh.call(Method::DELETE, path, None).await;
    assert_eq!(again.status, StatusCode::NOT_FOUND);
    assert_eq!(again.json["message"], "Label does not exist");
    assert_eq!(forge.labels(&repo, 7), ["forgeward:flagged"]);
}

#[tokio::test]
async fn permissions_have_a_legacy_name_and_a_role() {
    let (_forge, repo, gh) = setup().await;
    repo.collaborator("alice", Permission::Write)
        .collaborator("max", Permission::Maintain)
        .collaborator("tia", Permission::Triage);
    let of = |user: &str| format!("/repos/acme/widgets/collaborators/{user}/permission");
    for (user, legacy, role) in [
        ("alice", "write", "write"),
        ("max", "write", "maintain"),
        ("tia", "read", "triage"),
    ] {
        let answer = gh.get(&of(user)).await;
        assert_eq!(answer.json["permission"], legacy, "{user}");
        assert_eq!(answer.json["role_name"], role, "{user}");
        assert_eq!(answer.json["user"]["login"], user);
    }
    assert_eq!(gh.get(&of("nobody")).await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn file_contents_are_base64_at_a_revision() {
    let (_forge, repo, gh) = setup().await;
    let text = "label = \"bot\"\n".repeat(10);
    repo.file("main", ".forgeward.toml", &text)
        .file(&sha_of("v1"), ".forgeward.toml", "old");
    let file = gh
        .get("/repos/acme/widgets/contents/.forgeward.toml?ref=main")
        .await;
    assert_eq!(file.json["type"], "file");
    assert_eq!(file.json["encoding"], "base64");
    let content = file.json["content"].as_str().expect("content");
    assert!(content.contains('\n'), "GitHub wraps base64 lines");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(content.replace('\n', ""))
        .expect("base64");
    assert_eq!(bytes, text.as_bytes());
    let old = gh
        .get(&format!(
            "/repos/acme/widgets/contents/.forgeward.toml?ref={}",
            sha_of("v1")
        ))
        .await;
    assert_eq!(old.json["size"], 3);
    let nested = gh
        .get("/repos/acme/widgets/contents/sub/dir/x.toml?ref=main")
        .await;
    assert_eq!(nested.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn pull_requests_are_listed_opened_once_and_edited() {
    let (forge, repo, gh) = setup().await;
    repo.pull(3, "feature", "main")
        .branch("forgeward/issue-7", &sha_of("work"));
    let three = gh.get("/repos/acme/widgets/pulls/3").await;
    assert_eq!(three.json["head"]["ref"], "feature");
    assert_eq!(three.json["head"]["sha"], sha_of("feature"));
    assert_eq!(three.json["head"]["repo"]["full_name"], REPO);
    assert_eq!(three.json["base"]["sha"], sha_of("main"));
    assert_eq!(three.json["draft"], false);
    let request = json!({ "title": "Fix the parser", "head": "forgeward/issue-7", "base": "main",
                          "body": "Closes #7", "draft": true });
    let made = gh.post("/repos/acme/widgets/pulls", request.clone()).await;
    assert_eq!(made.status, StatusCode::CREATED);
    assert_eq!(made.json["number"], 4);
    assert_eq!(made.json["draft"], true);
    let twice = gh.post("/repos/acme/widgets/pulls", request).await;
    assert_eq!(twice.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        twice.json["errors"][0]["message"],
        "A pull request already exists for acme:forgeward/issue-7."
    );
    let untitled = gh
        .post(
            "/repos/acme/widgets/pulls",
            json!({ "head": "x", "base": "main" }),
        )
        .await;
    assert_eq!(untitled.json["errors"][0]["field"], "title");
    let found = gh
        .get("/repos/acme/widgets/pulls?head=acme:forgeward/issue-7&state=open")
        .await;
    assert_eq!(found.json.as_array().map(Vec::len), Some(1));
    assert_eq!(found.json[0]["number"], 4);
    // Paging keeps the filters.
    let paged = gh
        .get("/repos/acme/widgets/pulls?state=all&per_page=1")
        .await;
    let next = paged.link.expect("a next page");
    assert!(
        next.contains("/repos/acme/widgets/pulls?state=all&per_page=1&page=2>; rel=\"next\""),
        "{next}"
    );
    let edited = gh
        .call(
            Method::PATCH,
            "/repos/acme/widgets/pulls/4",
            Some(json!({ "title": "Fix it", "body": "Closes #7." })),
        )
        .await;
    assert_eq!(edited.status, StatusCode::OK);
    let seen = forge
        .pull_request_for_branch(&repo, "forgeward/issue-7")
        .expect("#4");
    assert_eq!(
        (seen.title.as_str(), seen.body.as_str(), seen.draft),
        ("Fix it", "Closes #7.", true)
    );
}

#[tokio::test]
async fn a_review_off_the_diff_is_refused_whole() {
    let (forge, repo, gh) = setup().await;
    repo.pull(8, "feature", "main")
        .commentable(8, &[("tests/test_x.py", 12)]);
    let review = |line: u32| {
        json!({ "commit_id": sha_of("feature"), "body": "forgeward found a flag.", "event": "COMMENT",
                "comments": [{ "path": "tests/test_x.py", "line": line, "side": "RIGHT", "body": "A skip marker" }] })
    };
    let refused = gh
        .post("/repos/acme/widgets/pulls/8/reviews", review(13))
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(refused.json["errors"][0], "Line could not be resolved");
    let posted = gh
        .post("/repos/acme/widgets/pulls/8/reviews", review(12))
        .await;
    assert_eq!(posted.status, StatusCode::OK);
    assert_eq!(posted.json["state"], "COMMENTED");
    let comments = gh.get("/repos/acme/widgets/pulls/8/comments").await;
    assert_eq!(comments.json[0]["path"], "tests/test_x.py");
    assert_eq!(comments.json[0]["line"], 12);
    assert_eq!(comments.json[0]["side"], "RIGHT");
    assert_eq!(comments.json[0]["commit_id"], sha_of("feature"));
    assert_eq!(forge.review_bodies(&repo, 8), ["forgeward found a flag."]);
    assert_eq!(forge.review_flags(&repo, 8).len(), 1);
    // Line comments are not issue comments.
    assert!(forge.comments(&repo, 8).is_empty());
}

#[tokio::test]
async fn commit_statuses_take_the_documented_states() {
    let (forge, repo, gh) = setup().await;
    let path = format!("/repos/acme/widgets/statuses/{}", sha_of("head"));
    let made = gh
        .post(
            &path,
            json!({ "state": "success", "context": "forgeward", "description": "No flags",
                             "target_url": "https://bot.example/jobs/1" }),
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED);
    assert_eq!(made.json["context"], "forgeward");
    let odd = gh
        .post(&path, json!({ "state": "failed", "context": "forgeward" }))
        .await;
    assert_eq!(odd.status, StatusCode::UNPROCESSABLE_ENTITY);
    let status = forge
        .commit_status(&repo, &sha_of("head"))
        .expect("a status");
    assert_eq!(
        (status.state.as_str(), status.description.as_str()),
        ("success", "No flags")
    );
}

#[tokio::test]
async fn an_unknown_route_is_404_and_reported() {
    let (forge, _repo, gh) = setup().await;
    let answer = gh.get("/repos/acme/widgets/hooks").await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    let wrong_method = gh
        .call(Method::PUT, "/repos/acme/widgets/issues/7", None)
        .await;
    assert_eq!(wrong_method.status, StatusCode::NOT_FOUND);
    assert_eq!(
        forge.take_unexpected(),
        [
            "GET /repos/acme/widgets/hooks",
            "PUT /repos/acme/widgets/issues/7"
        ]
    );
}

#[tokio::test]
async fn a_write_nobody_expected_fails_the_test() {
    let (forge, repo, gh) = setup().await;
    repo.issue(7, "t", "b");
    gh.post(
        "/repos/acme/widgets/issues/7/comments",
        json!({ "body": "hello" }),
    )
    .await;
    let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(forge)));
    let message = dropped.expect_err("the fake forge panics");
    let message = message.downcast_ref::<String>().expect("a message");
    assert!(
        message.contains("write not expected: POST /repos/acme/widgets/issues/7/comments"),
        "{message}"
    );
}

/// `value` read as octocrab's model of it, naming the field that does not fit.
fn as_model<T: serde::de::DeserializeOwned>(what: &str, value: &Value) -> T {
    serde_path_to_error::deserialize(value)
        .unwrap_or_else(|err| panic!("{what} does not read as octocrab's model: {err}\n{value:#}"))
}

/// Every answer reads as octocrab's typed model of it, which follows GitHub's schema: the
/// fake sends every field GitHub documents as required.
#[tokio::test]
async fn every_answer_reads_as_octocrab_s_models() {
    use octocrab::models;
    let forge = FakeForge::start().await;
    let repo = forge
        .github_repo(REPO)
        .installation(42)
        .issue(7, "t", "b")
        .label(7, "bug")
        .pull(8, "feature", "main")
        .branch("forgeward/issue-7", &sha_of("work"))
        .file("main", ".forgeward.toml", "x = 1\n");
    let app = Gh::new(&forge, Some(JWT.into()));
    let installation = app.get("/repos/acme/widgets/installation").await.json;
    as_model::<models::Installation>("installation", &installation);
    let token = app
        .post("/app/installations/42/access_tokens", json!({}))
        .await
        .json;
    as_model::<models::InstallationToken>("installation token", &token);
    let gh = Gh::new(
        &forge,
        Some(format!(
            "Bearer {}",
            token["token"].as_str().expect("a token")
        )),
    );
    let answer = gh.get("/repos/acme/widgets").await.json;
    as_model::<models::Repository>("repository", &answer);
    for n in [7, 8] {
        let answer = gh
            .get(&format!("/repos/acme/widgets/issues/{n}"))
            .await
            .json;
        as_model::<models::issues::Issue>("issue", &answer);
    }
    let comment = gh
        .post(
            "/repos/acme/widgets/issues/7/comments",
            json!({ "body": "hi" }),
        )
        .await
        .json;
    as_model::<models::issues::Comment>("comment", &comment);
    let list = gh.get("/repos/acme/widgets/issues/7/comments").await.json;
    as_model::<Vec<models::issues::Comment>>("comments", &list);
    let id = comment["id"].as_u64().expect("an id");
    let reaction = gh
        .post(
            &format!("/repos/acme/widgets/issues/comments/{id}/reactions"),
            json!({ "content": "eyes" }),
        )
        .await
        .json;
    as_model::<models::reactions::Reaction>("reaction", &reaction);
    let labels = gh
        .post(
            "/repos/acme/widgets/issues/7/labels",
            json!({ "labels": ["forgeward"] }),
        )
        .await
        .json;
    as_model::<Vec<models::Label>>("labels", &labels);
    let file = gh
        .get("/repos/acme/widgets/contents/.forgeward.toml?ref=main")
        .await
        .json;
    as_model::<models::repos::Content>("content", &file);
    let pull = gh.get("/repos/acme/widgets/pulls/8").await.json;
    as_model::<models::pulls::PullRequest>("pull request", &pull);
    let made = gh
        .post(
            "/repos/acme/widgets/pulls",
            json!({ "title": "t", "head": "forgeward/issue-7", "base": "main" }),
        )
        .await
        .json;
    as_model::<models::pulls::PullRequest>("new pull request", &made);
    let open = gh
        .get("/repos/acme/widgets/pulls?head=acme:forgeward/issue-7&state=open")
        .await
        .json;
    as_model::<Vec<models::pulls::PullRequest>>("pull requests", &open);
    let review = gh
        .post(
            "/repos/acme/widgets/pulls/8/reviews",
            json!({ "commit_id": sha_of("feature"), "body": "b", "event": "COMMENT",
                    "comments": [{ "path": "a.py", "line": 1, "side": "RIGHT", "body": "c" }] }),
        )
        .await
        .json;
    as_model::<models::pulls::Review>("review", &review);
    let review_comments = gh.get("/repos/acme/widgets/pulls/8/comments").await.json;
    as_model::<Vec<models::pulls::Comment>>("review comments", &review_comments);
    let status = gh
        .post(
            &format!("/repos/acme/widgets/statuses/{}", sha_of("feature")),
            json!({ "state": "pending", "context": "forgeward" }),
        )
        .await
        .json;
    as_model::<models::Status>("status", &status);
    let run = gh
        .post(
            "/repos/acme/widgets/check-runs",
            json!({ "name": "forgeward", "head_sha": sha_of("feature"), "status": "in_progress" }),
        )
        .await
        .json;
    as_model::<models::checks::CheckRun>("check run", &run);
    let id = run["id"].as_u64().expect("an id");
    let updated = gh
        .patch(
            &format!("/repos/acme/widgets/check-runs/{id}"),
            json!({ "conclusion": "success", "output": { "title": "t", "summary": "s" } }),
        )
        .await
        .json;
    as_model::<models::checks::CheckRun>("updated check run", &updated);
    let runs = gh
        .get(&format!(
            "/repos/acme/widgets/commits/{}/check-runs?check_name=forgeward",
            sha_of("feature")
        ))
        .await
        .json;
    as_model::<models::checks::ListCheckRuns>("check runs", &runs);
    // What the test wrote, it read back above through GitHub itself; the fake's queue is
    // for the clients' tests.
    forge.comments(&repo, 7);
    forge.labels(&repo, 7);
    forge.pull_request_for_branch(&repo, "forgeward/issue-7");
    forge.review_flags(&repo, 8);
    forge.commit_statuses(&repo, &sha_of("feature"));
}
