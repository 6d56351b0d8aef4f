//! The fake forge's GitHub commit statuses and check runs. Check runs are an App's (a personal
//! token is GitHub's 403), on a commit the repository has, and kept whole: each request's
//! status, conclusion, output and annotations, which GitHub appends at most 50 a request.
//! The App lists its runs on a commit by name, status and App, as the Checks API does.

use std::collections::HashMap;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State as AxumState};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, patch, post};
use forgeward::forge::Forge;
use serde_json::{Value, json};

use super::github::{
    Repo2, Repo3, body_json, invalid, missing_field, not_found, on_repo, queue, user,
};
use super::state::{APP_ID, Annotation, CheckRun, State, Status, Topic};
use super::{Shared, error, reply};

/// The Checks API's limits: annotations a request, and a summary's characters.
const MAX_ANNOTATIONS: usize = 50;
const MAX_SUMMARY_CHARS: usize = 65_535;

const CONCLUSIONS: &[&str] = &[
    "action_required",
    "cancelled",
    "failure",
    "neutral",
    "success",
    "skipped",
    "timed_out",
];

pub fn routes() -> Router<Shared> {
    Router::new()
        .route("/repos/{o}/{r}/statuses/{sha}", post(create_status))
        .route("/repos/{o}/{r}/check-runs", post(create_check_run))
        .route("/repos/{o}/{r}/check-runs/{id}", patch(update_check_run))
        .route(
            "/repos/{o}/{r}/commits/{sha}/check-runs",
            get(list_check_runs),
        )
}

async fn create_status(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, sha)): Repo3<String>,
    body: Bytes,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full, caller| {
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        let status_state = request["state"].as_str().unwrap_or_default().to_owned();
        if !["error", "failure", "pending", "success"].contains(&status_state.as_str()) {
            return invalid(
                json!([{ "resource": "Status", "field": "state", "code": "custom",
                                    "message": "state is not included in the list" }]),
            );
        }
        let id = state.next_id();
        let status = Status {
            id,
            sha: sha.clone(),
            name: request["context"].as_str().unwrap_or("default").to_owned(),
            state: status_state,
            description: request["description"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            target_url: request["target_url"].as_str().map(str::to_owned),
        };
        let answer = json!({
            "id": id, "node_id": format!("SC_{id}"), "state": status.state,
            "description": status.description, "target_url": status.target_url,
            "context": status.name, "creator": user(None, caller.login),
            "url": format!("{}/repos/{full}/statuses/{sha}", state.base_url),
            "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
        });
        state
            .repo_mut(Forge::GitHub, full)
            .expect("checked")
            .statuses
            .push(status);
        let path = format!("/repos/{full}/statuses/{sha}");
        queue(
            state,
            full,
            "POST",
            path,
            request,
            Topic::Status(sha.clone()),
        );
        reply(StatusCode::CREATED, answer)
    })
}

fn check_run_json(state: &State, full: &str, run: &CheckRun) -> Value {
    let id = run.id;
    json!({
        "id": id, "head_sha": run.sha, "name": run.name, "status": run.status,
        "conclusion": run.conclusion, "details_url": run.details_url,
        "external_id": null, "started_at": "2026-01-01T00:00:00Z",
        "completed_at": (run.status == "completed").then_some("2026-01-01T00:01:00Z"),
        "html_url": format!("https://github.com/{full}/runs/{id}"),
        "node_id": format!("CR_{id}"), "url": format!("{}/repos/{full}/check-runs/{id}", state.base_url),
        "output": { "title": run.title, "summary": run.summary, "text": null,
                    "annotations_count": run.annotations.len(),
                    "annotations_url": format!("{}/repos/{full}/check-runs/{id}/annotations", state.base_url) },
        "check_suite": { "id": 5 },
        "pull_requests": [],
        "app": { "id": APP_ID, "slug": "forgeward", "name": "forgeward" },
    })
}

fn unprocessable(message: &str) -> Response {
    reply(
        StatusCode::UNPROCESSABLE_ENTITY,
        json!({ "message": message, "documentation_url": "https://docs.github.com/rest/checks/runs" }),
    )
}

/// The part of a create or update request GitHub applies to a run: status and conclusion
/// (a conclusion completes the run; `completed` wants one), details, and the output, whose
/// annotations are appended. A request GitHub refuses is its 422, and changes nothing.
fn apply(run: &mut CheckRun, request: &Value) -> Result<(), Response> {
    let conclusion = match &request["conclusion"] {
        Value::Null => None,
        Value::String(c) if CONCLUSIONS.contains(&c.as_str()) => Some(c.clone()),
        _ => {
            return Err(invalid(
                json!([{ "resource": "CheckRun", "field": "conclusion", "code": "invalid" }]),
            ));
        }
    };
    let status = match (&request["status"], &conclusion) {
        (_, Some(_)) => Some("completed".to_owned()),
        (Value::Null, None) => None,
        (Value::String(s), None) if s == "completed" => {
            return Err(unprocessable(
                "Conclusion must be provided when the status is completed",
            ));
        }
        (Value::String(s), None) if s == "queued" || s == "in_progress" => Some(s.clone()),
        _ => {
            return Err(invalid(
                json!([{ "resource": "CheckRun", "field": "status", "code": "invalid" }]),
            ));
        }
    };
    let output = &request["output"];
    let mut added = Vec::new();
    if !output.is_null() {
        for field in ["title", "summary"] {
            if !output[field].is_string() {
                return Err(missing_field("CheckRun", &format!("output.{field}")));
            }
        }
        if output["summary"].as_str().map_or(0, |s| s.chars().count()) > MAX_SUMMARY_CHARS {
            return Err(unprocessable(
                "Invalid request.\n\nOnly 65535 characters are allowed; the summary is longer.",
            ));
        }
        let annotations = output["annotations"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if annotations.len() > MAX_ANNOTATIONS {
            return Err(unprocessable(
                "Invalid request.\n\nOnly 50 annotations are allowed per request.",
            ));
        }
        for a in &annotations {
            let (Some(path), Some(start), Some(end), Some(level), Some(message)) = (
                a["path"].as_str(),
                a["start_line"].as_u64(),
                a["end_line"].as_u64(),
                a["annotation_level"].as_str(),
                a["message"].as_str(),
            ) else {
                return Err(unprocessable(
                    "Invalid request.\n\npath, start_line, end_line, annotation_level and message are required.",
                ));
            };
            if !["notice", "warning", "failure"].contains(&level) || start == 0 || end < start {
                return Err(unprocessable(
                    "Invalid request.\n\nAn annotation's level or lines are not valid.",
                ));
            }
            added.push(Annotation {
                path: path.to_owned(),
                start_line: start,
                end_line: end,
                level: level.to_owned(),
                title: a["title"].as_str().map(str::to_owned),
                message: message.to_owned(),
            });
        }
    }
    if let Some(status) = status {
        run.status = status;
    }
    if conclusion.is_some() {
        run.conclusion = conclusion;
    }
    if let Some(url) = request["details_url"].as_str() {
        run.details_url = Some(url.to_owned());
    }
    if !output.is_null() {
        run.title = output["title"].as_str().map(str::to_owned);
        run.summary = output["summary"].as_str().map(str::to_owned);
    }
    run.annotations.extend(added);
    run.requests += 1;
    Ok(())
}

/// Check runs are an App's: a personal token is refused with GitHub's 403; the commit must be
/// one the repository has, when it is backed by a real one.
async fn create_check_run(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r)): Repo2,
    body: Bytes,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full, caller| {
        if !caller.app {
            return error(
                StatusCode::FORBIDDEN,
                "You must authenticate via a GitHub App.",
            );
        }
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        for field in ["name", "head_sha"] {
            if !request[field].is_string() {
                return missing_field("CheckRun", field);
            }
        }
        let sha = request["head_sha"].as_str().unwrap_or_default().to_owned();
        let repo = state.repo(Forge::GitHub, full).expect("checked");
        if let Some(dir) = &repo.git_dir {
            let known = git2::Repository::open_bare(dir)
                .ok()
                .and_then(|git| {
                    git2::Oid::from_str(&sha)
                        .ok()
                        .map(|oid| git.find_commit(oid).is_ok())
                })
                .unwrap_or(false);
            if !known {
                return unprocessable(&format!("No commit found for SHA: {sha}"));
            }
        }
        let mut run = CheckRun {
            id: state.next_id(),
            sha: sha.clone(),
            name: request["name"].as_str().unwrap_or_default().to_owned(),
            status: "queued".to_owned(),
            conclusion: None,
            title: None,
            summary: None,
            details_url: None,
            annotations: Vec::new(),
            requests: 0,
        };
        if let Err(refused) = apply(&mut run, &request) {
            return refused;
        }
        let answer = check_run_json(state, full, &run);
        state
            .repo_mut(Forge::GitHub, full)
            .expect("checked")
            .check_runs
            .push(run);
        let path = format!("/repos/{full}/check-runs");
        queue(state, full, "POST", path, request, Topic::Status(sha));
        reply(StatusCode::CREATED, answer)
    })
}

async fn update_check_run(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, id)): Repo3<u64>,
    body: Bytes,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full, caller| {
        if !caller.app {
            return error(
                StatusCode::FORBIDDEN,
                "You must authenticate via a GitHub App.",
            );
        }
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        let repo = state.repo_mut(Forge::GitHub, full).expect("checked");
        let Some(run) = repo.check_runs.iter_mut().find(|run| run.id == id) else {
            return not_found();
        };
        if let Err(refused) = apply(run, &request) {
            return refused;
        }
        let (run, sha) = (run.clone(), run.sha.clone());
        let answer = check_run_json(state, full, &run);
        let path = format!("/repos/{full}/check-runs/{id}");
        queue(state, full, "PATCH", path, request, Topic::Status(sha));
        reply(StatusCode::OK, answer)
    })
}

/// The runs on a commit, newest first, filtered as the Checks API filters them: by
/// `check_name`, `status` and `app_id`.
async fn list_check_runs(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, sha)): Repo3<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full, _| {
        let repo = state.repo(Forge::GitHub, full).expect("checked");
        let app = q.get("app_id").map(|id| id.parse::<u64>().ok());
        if app == Some(None) {
            return invalid(
                json!([{ "resource": "CheckRun", "field": "app_id", "code": "invalid" }]),
            );
        }
        let runs: Vec<Value> = repo
            .check_runs
            .iter()
            .rev()
            .filter(|run| run.sha == sha)
            .filter(|run| q.get("check_name").is_none_or(|name| *name == run.name))
            .filter(|run| q.get("status").is_none_or(|status| *status == run.status))
            .filter(|_| app.flatten().is_none_or(|id| id == APP_ID))
            .map(|run| check_run_json(state, full, run))
            .collect();
        reply(
            StatusCode::OK,
            json!({ "total_count": runs.len(), "check_runs": runs }),
        )
    })
}
