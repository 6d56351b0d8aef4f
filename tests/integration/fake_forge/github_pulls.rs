//! The fake forge's GitHub pull requests and reviews: one open pull request per head branch (a
//! second is GitHub's 422), and reviews that are all or nothing.

use std::collections::HashMap;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State as AxumState};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use forgeward::forge::Forge;
use serde_json::{Value, json};

use super::github::{
    Repo2, Repo3, body_json, comment_json, invalid, labels_json, missing_field, not_found, on_repo,
    paginate, queue, repo_json, user,
};
use super::state::{Comment, Kind, Position, Pull, State, Topic};
use super::{Shared, reply};

pub fn routes() -> Router<Shared> {
    Router::new()
        .route("/repos/{o}/{r}/pulls", get(list_pulls).post(create_pull))
        .route("/repos/{o}/{r}/pulls/{n}", get(get_pull).patch(update_pull))
        .route("/repos/{o}/{r}/pulls/{n}/comments", get(review_comments))
        .route("/repos/{o}/{r}/pulls/{n}/reviews", post(create_review))
}

fn branch_json(state: &State, repo: &str, branch: &str, sha: &str) -> Value {
    let owner = repo.split_once('/').map_or(repo, |(o, _)| o);
    json!({ "label": format!("{owner}:{branch}"), "ref": branch, "sha": sha,
            "repo": repo_json(state, repo) })
}

fn pull_json(state: &State, full: &str, n: u64, p: &Pull) -> Value {
    let repo = state.repo(Forge::GitHub, full);
    json!({
        "id": 200_000 + n, "number": n, "state": if p.open { "open" } else { "closed" },
        "title": p.title, "body": p.body, "draft": p.draft, "merged": false,
        "user": user(repo, &p.author), "labels": labels_json(&p.labels),
        "html_url": format!("https://github.com/{full}/pull/{n}"),
        "url": format!("{}/repos/{full}/pulls/{n}", state.base_url),
        "head": branch_json(state, &p.head_repo, &p.head_branch, &p.head_sha),
        "base": branch_json(state, full, &p.base_branch, &p.base_sha),
    })
}

async fn get_pull(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, n)): Repo3<u64>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full, _| {
        let repo = state.repo(Forge::GitHub, full).expect("checked");
        match repo.pulls.get(&n) {
            Some(p) => reply(StatusCode::OK, pull_json(state, full, n, p)),
            None => not_found(),
        }
    })
}

async fn list_pulls(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r)): Repo2,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full, _| {
        let repo = state.repo(Forge::GitHub, full).expect("checked");
        let wanted_state = q.get("state").map_or("open", String::as_str);
        // `head` is `owner:branch`, the owner being the head repository's.
        let head = q.get("head").and_then(|h| h.split_once(':'));
        let items = repo
            .pulls
            .iter()
            .filter(|(_, p)| match wanted_state {
                "all" => true,
                "closed" => !p.open,
                _ => p.open,
            })
            .filter(|(_, p)| {
                head.is_none_or(|(owner, branch)| {
                    p.head_branch == branch && p.head_repo.split('/').next() == Some(owner)
                })
            })
            .map(|(n, p)| pull_json(state, full, *n, p))
            .collect();
        let path = format!("/repos/{full}/pulls");
        paginate(&state.base_url, &path, &q, items)
    })
}

async fn create_pull(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r)): Repo2,
    body: Bytes,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full, caller| {
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        for field in ["title", "head", "base"] {
            if !request[field].is_string() {
                return missing_field("PullRequest", field);
            }
        }
        let head = request["head"].as_str().unwrap_or_default();
        let branch = head.split_once(':').map_or(head, |(_, b)| b).to_owned();
        let base = request["base"].as_str().unwrap_or_default().to_owned();
        let repo = state.repo_mut(Forge::GitHub, full).expect("checked");
        let (Some(head_sha), Some(base_sha)) = (repo.branch_sha(&branch), repo.branch_sha(&base))
        else {
            return invalid(
                json!([{ "resource": "PullRequest", "field": "head", "code": "invalid" }]),
            );
        };
        if repo
            .pulls
            .values()
            .any(|p| p.open && p.head_branch == branch)
        {
            let message = format!(
                "A pull request already exists for {}:{branch}.",
                repo.owner()
            );
            return invalid(
                json!([{ "resource": "PullRequest", "code": "custom", "message": message }]),
            );
        }
        let n = repo.next_number(Kind::Pull);
        let pull = Pull {
            title: request["title"].as_str().unwrap_or_default().to_owned(),
            body: request["body"].as_str().unwrap_or_default().to_owned(),
            author: caller.login.to_owned(),
            labels: Vec::new(),
            head_branch: branch.clone(),
            head_sha,
            head_repo: full.to_owned(),
            base_branch: base,
            base_sha,
            draft: request["draft"].as_bool().unwrap_or(false),
            open: true,
            commentable: None,
            reviews: Vec::new(),
        };
        repo.pulls.insert(n, pull);
        let answer = pull_json(
            state,
            full,
            n,
            &state.repo(Forge::GitHub, full).expect("checked").pulls[&n],
        );
        let path = format!("/repos/{full}/pulls");
        queue(
            state,
            full,
            "POST",
            path,
            request,
            Topic::PullRequest(branch),
        );
        reply(StatusCode::CREATED, answer)
    })
}

async fn update_pull(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, n)): Repo3<u64>,
    body: Bytes,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full, _| {
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        let repo = state.repo_mut(Forge::GitHub, full).expect("checked");
        let Some(p) = repo.pulls.get_mut(&n) else {
            return not_found();
        };
        if let Some(title) = request["title"].as_str() {
            p.title = title.to_owned();
        }
        if let Some(body) = request["body"].as_str() {
            p.body = body.to_owned();
        }
        match request["state"].as_str() {
            Some("closed") => p.open = false,
            Some("open") => p.open = true,
            _ => {}
        }
        let branch = p.head_branch.clone();
        let answer = pull_json(
            state,
            full,
            n,
            &state.repo(Forge::GitHub, full).expect("checked").pulls[&n],
        );
        let path = format!("/repos/{full}/pulls/{n}");
        queue(
            state,
            full,
            "PATCH",
            path,
            request,
            Topic::PullRequest(branch),
        );
        reply(StatusCode::OK, answer)
    })
}

async fn review_comments(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, n)): Repo3<u64>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full, _| {
        if !state
            .repo(Forge::GitHub, full)
            .expect("checked")
            .pulls
            .contains_key(&n)
        {
            return not_found();
        }
        let items = state
            .comments
            .iter()
            .filter(|c| c.repo == full && c.number == n && c.position.is_some())
            .map(|c| comment_json(state, c))
            .collect();
        let path = format!("/repos/{full}/pulls/{n}/comments");
        paginate(&state.base_url, &path, &q, items)
    })
}

/// A review is all or nothing: a line comment off the diff refuses the whole review with
/// GitHub's 422 `Line could not be resolved`.
async fn create_review(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, n)): Repo3<u64>,
    body: Bytes,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full, caller| {
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        let repo = state.repo(Forge::GitHub, full).expect("checked");
        let Some(p) = repo.pulls.get(&n) else {
            return not_found();
        };
        let unprocessable = |errors: Value| {
            reply(
                StatusCode::UNPROCESSABLE_ENTITY,
                json!({ "message": "Unprocessable Entity", "errors": errors,
                        "documentation_url": "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request" }),
            )
        };
        let event = request["event"].as_str().unwrap_or("PENDING");
        if !["APPROVE", "REQUEST_CHANGES", "COMMENT", "PENDING"].contains(&event) {
            return unprocessable(json!(["event is not included in the list"]));
        }
        let commit = request["commit_id"]
            .as_str()
            .unwrap_or(&p.head_sha)
            .to_owned();
        if commit != p.head_sha {
            return unprocessable(json!(["commit_id is not part of the pull request"]));
        }
        let comments = request["comments"].as_array().cloned().unwrap_or_default();
        let text = request["body"].as_str().unwrap_or_default().to_owned();
        if event == "COMMENT" && text.is_empty() && comments.is_empty() {
            return unprocessable(json!(["Review body is required"]));
        }
        let mut placed = Vec::new();
        for c in &comments {
            let (Some(path), Some(line), Some(body)) =
                (c["path"].as_str(), c["line"].as_u64(), c["body"].as_str())
            else {
                return unprocessable(json!(["Path, line and body are required"]));
            };
            if c["side"]
                .as_str()
                .is_some_and(|side| side != "RIGHT" && side != "LEFT")
            {
                return unprocessable(json!(["side is not included in the list"]));
            }
            let line = u32::try_from(line).unwrap_or(u32::MAX);
            if !p.may_comment(path, line) {
                return unprocessable(json!(["Line could not be resolved"]));
            }
            placed.push((path.to_owned(), line, body.to_owned()));
        }
        let review_id = state.next_id();
        for (path, line, body) in placed {
            let id = state.next_id();
            state.comments.push(Comment {
                id,
                repo: full.to_owned(),
                kind: Kind::Pull,
                number: n,
                author: caller.login.to_owned(),
                body,
                reactions: Vec::new(),
                position: Some(Position {
                    path,
                    line: Some(line),
                    commit: commit.clone(),
                    base_sha: String::new(),
                    start_sha: String::new(),
                    resolved: false,
                }),
                discussion: review_id,
                system: false,
            });
        }
        let repo = state.repo_mut(Forge::GitHub, full).expect("checked");
        let p = repo.pulls.get_mut(&n).expect("checked");
        p.reviews.push((review_id, text.clone(), commit.clone()));
        let review_state = match event {
            "APPROVE" => "APPROVED",
            "REQUEST_CHANGES" => "CHANGES_REQUESTED",
            "COMMENT" => "COMMENTED",
            _ => "PENDING",
        };
        let answer = json!({
            "id": review_id, "node_id": format!("PRR_{review_id}"),
            "user": user(None, caller.login), "body": text, "state": review_state,
            "commit_id": commit, "author_association": "NONE",
            "html_url": format!("https://github.com/{full}/pull/{n}#pullrequestreview-{review_id}"),
            "pull_request_url": format!("{}/repos/{full}/pulls/{n}", state.base_url),
            "submitted_at": "2026-01-01T00:00:00Z",
            "_links": { "html": { "href": format!("https://github.com/{full}/pull/{n}#pullrequestreview-{review_id}") },
                        "pull_request": { "href": format!("{}/repos/{full}/pulls/{n}", state.base_url) } },
        });
        let path = format!("/repos/{full}/pulls/{n}/reviews");
        queue(state, full, "POST", path, request, Topic::Review(n));
        reply(StatusCode::OK, answer)
    })
}
