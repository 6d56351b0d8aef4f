//! The fake forge's GitHub GraphQL: the two operations the bot sends, told apart by the field
//! they ask for — a pull request's `reviewThreads` (each review comment a thread of its own,
//! paged by a cursor) and `resolveReviewThread` — with GitHub's 200 and `errors` list for what
//! does not resolve.

use axum::Router;
use axum::body::Bytes;
use axum::extract::State as AxumState;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use forgeward::forge::Forge;
use serde_json::{Value, json};

use super::github::{body_json, on_repo, queue};
use super::state::{Kind, Topic};
use super::{Shared, lock, reply};

/// Threads per page, as the bot asks for.
const PAGE: usize = 100;

pub fn routes() -> Router<Shared> {
    Router::new().route("/graphql", post(graphql))
}

/// A thread's node id: its (only) comment's id.
fn thread_id(comment: u64) -> String {
    format!("PRRT_{comment}")
}

fn errors(data: Value, kind: &str, message: &str) -> Response {
    reply(
        StatusCode::OK,
        json!({ "data": data, "errors": [{ "type": kind, "message": message }] }),
    )
}

async fn graphql(AxumState(s): AxumState<Shared>, h: HeaderMap, body: Bytes) -> Response {
    let request = match body_json(&body) {
        Ok(v) => v,
        Err(refused) => return refused,
    };
    let query = request["query"].as_str().unwrap_or_default().to_owned();
    let variables = request["variables"].clone();
    if query.contains("resolveReviewThread") {
        resolve(&s, &h, request, &variables)
    } else if query.contains("reviewThreads") {
        threads(&s, &h, &variables)
    } else {
        errors(Value::Null, "INVALID", "the fake forge knows no such query")
    }
}

fn threads(s: &Shared, h: &HeaderMap, variables: &Value) -> Response {
    let text = |key: &str| variables[key].as_str().unwrap_or_default().to_owned();
    let (owner, name) = (text("owner"), text("name"));
    let Some(number) = variables["number"].as_u64() else {
        return errors(
            Value::Null,
            "INVALID",
            "Variable $number of type Int! was provided invalid value",
        );
    };
    let after: usize = variables["after"]
        .as_str()
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    on_repo(s, h, &owner, &name, |state, full, _| {
        let repo = state.repo(Forge::GitHub, full).expect("checked");
        if !repo.pulls.contains_key(&number) {
            return errors(
                json!({ "repository": { "pullRequest": null } }),
                "NOT_FOUND",
                &format!("Could not resolve to a PullRequest with the number of {number}."),
            );
        }
        let all: Vec<Value> = state
            .comments
            .iter()
            .filter(|c| c.repo == full && c.kind == Kind::Pull && c.number == number)
            .filter_map(|c| {
                let p = c.position.as_ref()?;
                Some(json!({
                    "id": thread_id(c.id), "isResolved": p.resolved, "path": p.path,
                    "line": p.line, "originalLine": p.line,
                    "comments": { "nodes": [{ "body": c.body }] },
                }))
            })
            .collect();
        let page: Vec<Value> = all.iter().skip(after).take(PAGE).cloned().collect();
        let next = after + page.len();
        reply(
            StatusCode::OK,
            json!({ "data": { "repository": { "pullRequest": { "reviewThreads": {
                "pageInfo": { "hasNextPage": next < all.len(), "endCursor": next.to_string() },
                "nodes": page,
            }}}}}),
        )
    })
}

fn resolve(s: &Shared, h: &HeaderMap, request: Value, variables: &Value) -> Response {
    let thread = variables["thread"].as_str().unwrap_or_default().to_owned();
    let not_found = || {
        errors(
            json!({ "resolveReviewThread": null }),
            "NOT_FOUND",
            &format!("Could not resolve to a node with the global id of '{thread}'"),
        )
    };
    // The thread names no repository: the caller must be allowed on the one it is in.
    let found = {
        let state = lock(s);
        state
            .comments
            .iter()
            .find(|c| c.position.is_some() && thread_id(c.id) == thread)
            .map(|c| (c.id, c.repo.clone(), c.number))
    };
    let Some((id, full, number)) = found else {
        return not_found();
    };
    let Some((owner, name)) = full.split_once('/') else {
        return not_found();
    };
    on_repo(s, h, owner, name, |state, full, _| {
        let Some(position) = state
            .comments
            .iter_mut()
            .find(|c| c.id == id)
            .and_then(|c| c.position.as_mut())
        else {
            return not_found();
        };
        position.resolved = true;
        queue(
            state,
            full,
            "POST",
            "/graphql".to_owned(),
            request,
            Topic::Review(number),
        );
        reply(
            StatusCode::OK,
            json!({ "data": { "resolveReviewThread": { "thread": {
                "id": thread, "isResolved": true,
            }}}}),
        )
    })
}
