//! The fake forge's GitLab REST v4 API (under `/api/v4`): projects, issues, notes, award
//! emoji, labels, members, repository files and commit statuses, with the shapes and status
//! codes docs.gitlab.com/api documents. Merge requests and their discussions are in
//! `gitlab_mr`. A project is named by its numeric id or its URL-encoded full path.

use std::collections::HashMap;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{OriginalUri, Path, Query, State as AxumState};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use axum::routing::{get, post, put};
use base64::Engine as _;
use forgeward::forge::Forge;
use forgeward::forge::api::Permission;
use serde_json::{Value, json};

use super::gitlab_mr;
use super::state::{Comment, Kind, Repo, State, Status, Topic, Write};
use super::{GITLAB_TOKEN, Shared, error, header, lock, parse_body, reply};

/// The user the bot's token belongs to.
pub(super) const BOT_USER: &str = "forgeward-bot";

/// GitLab's default page size, and its largest.
const DEFAULT_PER_PAGE: usize = 20;
const MAX_PER_PAGE: usize = 100;

pub fn routes() -> Router<Shared> {
    Router::new()
        .route("/user", get(token_user))
        .route("/projects/{id}", get(get_project))
        .route(
            "/projects/{id}/issues/{iid}",
            get(get_issue).put(edit_issue),
        )
        .route(
            "/projects/{id}/issues/{iid}/notes",
            get(list_notes).post(create_note),
        )
        .route(
            "/projects/{id}/merge_requests/{iid}/notes",
            get(list_notes).post(create_note),
        )
        .route("/projects/{id}/issues/{iid}/notes/{note}", put(update_note))
        .route(
            "/projects/{id}/merge_requests/{iid}/notes/{note}",
            put(update_note),
        )
        .route(
            "/projects/{id}/issues/{iid}/notes/{note}/award_emoji",
            post(award),
        )
        .route(
            "/projects/{id}/merge_requests/{iid}/notes/{note}/award_emoji",
            post(award),
        )
        .route("/projects/{id}/members/all/{user}", get(member))
        .route("/projects/{id}/repository/files/{path}", get(file))
        .route("/projects/{id}/statuses/{sha}", post(create_status))
        .merge(gitlab_mr::routes())
}

/// `GET /user`: the token's user, as GitLab's Users API describes the current user.
async fn token_user(AxumState(s): AxumState<Shared>, h: HeaderMap) -> Response {
    let state = lock(&s);
    if header(&h, "private-token").as_deref() != Some(GITLAB_TOKEN) {
        return error(StatusCode::UNAUTHORIZED, "401 Unauthorized");
    }
    reply(
        StatusCode::OK,
        json!({ "id": 4343, "username": BOT_USER, "name": "forgeward", "state": "active",
                "locked": false, "bot": false,
                "avatar_url": format!("{}/uploads/-/system/user/avatar/4343/avatar.png", state.base_url),
                "web_url": format!("{}/{BOT_USER}", state.base_url),
                "created_at": "2026-01-01T00:00:00.000Z" }),
    )
}

/// Checks `PRIVATE-TOKEN` and finds the project (by numeric id or full path), then runs `f`
/// with the project's path.
pub(super) fn on_project(
    shared: &Shared,
    headers: &HeaderMap,
    id: &str,
    f: impl FnOnce(&mut State, &str) -> Response,
) -> Response {
    let mut state = lock(shared);
    if header(headers, "private-token").as_deref() != Some(GITLAB_TOKEN) {
        return error(StatusCode::UNAUTHORIZED, "401 Unauthorized");
    }
    let found = match id.parse::<u64>() {
        Ok(number) => state.repo_by_id(Forge::GitLab, number),
        Err(_) => state.repo(Forge::GitLab, id),
    };
    let Some(path) = found.map(|r| r.name.clone()) else {
        return error(StatusCode::NOT_FOUND, "404 Project Not Found");
    };
    f(&mut state, &path)
}

pub(super) fn project<'a>(state: &'a State, path: &str) -> &'a Repo {
    state
        .repo(Forge::GitLab, path)
        .expect("on_project found it")
}

pub(super) fn project_mut<'a>(state: &'a mut State, path: &str) -> &'a mut Repo {
    state
        .repo_mut(Forge::GitLab, path)
        .expect("on_project found it")
}

/// GitLab's 400 for a parameter it requires: `{"error": "body is missing"}`.
pub(super) fn missing(field: &str) -> Response {
    reply(
        StatusCode::BAD_REQUEST,
        json!({ "error": format!("{field} is missing") }),
    )
}

pub(super) fn body_json(body: &Bytes) -> Result<Value, Response> {
    parse_body(body).ok_or_else(|| error(StatusCode::BAD_REQUEST, "400 Bad request - invalid JSON"))
}

pub(super) fn queue(
    state: &mut State,
    repo: &str,
    method: &str,
    path: String,
    body: Value,
    topic: Topic,
) {
    state.writes.push(Write {
        forge: Forge::GitLab,
        repo: repo.to_owned(),
        method: method.to_owned(),
        path,
        body,
        topic,
    });
}

/// The URL path a write is queued under: the request's own, as the client sent it.
pub(super) fn path_of(uri: &OriginalUri) -> String {
    uri.0.path().to_owned()
}

/// Issues or merge requests, by the path the request came on.
fn kind_of(uri: &OriginalUri) -> Kind {
    if uri.0.path().contains("/merge_requests/") {
        Kind::Pull
    } else {
        Kind::Issue
    }
}

fn thread_exists(repo: &Repo, kind: Kind, iid: u64) -> bool {
    match kind {
        Kind::Issue => repo.issues.contains_key(&iid),
        Kind::Pull => repo.pulls.contains_key(&iid),
    }
}

fn not_found(what: &str) -> Response {
    error(StatusCode::NOT_FOUND, &format!("404 {what} Not Found"))
}

pub(super) fn user(repo: &Repo, username: &str) -> Value {
    let id = repo.members.get(username).map_or(1, |(id, _)| *id);
    json!({ "id": id, "username": username, "name": username, "state": "active",
            "web_url": format!("https://gitlab.example/{username}") })
}

async fn get_project(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    on_project(&s, &h, &id, |state, path| {
        let repo = project(state, path);
        let name = path.rsplit('/').next().unwrap_or(path);
        reply(
            StatusCode::OK,
            json!({ "id": repo.id, "name": name, "path": name, "path_with_namespace": path,
                    "default_branch": repo.default_branch,
                    "web_url": format!("https://gitlab.example/{path}"),
                    "http_url_to_repo": format!("https://gitlab.example/{path}.git") }),
        )
    })
}

fn issue_json(repo: &Repo, iid: u64) -> Value {
    let issue = &repo.issues[&iid];
    json!({
        "id": 100_000 + iid, "iid": iid, "project_id": repo.id, "title": issue.title,
        "description": issue.body, "state": "opened", "labels": issue.labels,
        "author": user(repo, &issue.author),
        "web_url": format!("https://gitlab.example/{}/-/issues/{iid}", repo.name),
    })
}

async fn get_issue(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((id, iid)): Path<(String, u64)>,
) -> Response {
    on_project(&s, &h, &id, |state, path| {
        let repo = project(state, path);
        if !repo.issues.contains_key(&iid) {
            return not_found("Issue");
        }
        reply(StatusCode::OK, issue_json(repo, iid))
    })
}

/// `add_labels` / `remove_labels` (comma-separated) on an issue or merge request. Removing a
/// label that is not there changes nothing, and adding one creates it.
pub(super) fn edit_labels(repo: &mut Repo, kind: Kind, iid: u64, request: &Value) {
    let names = |key: &str| -> Vec<String> {
        request[key]
            .as_str()
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let (add, remove) = (names("add_labels"), names("remove_labels"));
    let Some(labels) = repo.labels_mut(kind, iid) else {
        return;
    };
    for label in add {
        if !labels.contains(&label) {
            labels.push(label);
        }
    }
    labels.retain(|l| !remove.contains(l));
}

async fn edit_issue(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    uri: OriginalUri,
    Path((id, iid)): Path<(String, u64)>,
    body: Bytes,
) -> Response {
    on_project(&s, &h, &id, |state, path| {
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        let repo = project_mut(state, path);
        if !repo.issues.contains_key(&iid) {
            return not_found("Issue");
        }
        edit_labels(repo, Kind::Issue, iid, &request);
        let answer = issue_json(repo, iid);
        queue(
            state,
            path,
            "PUT",
            path_of(&uri),
            request,
            Topic::Labels(Kind::Issue, iid),
        );
        reply(StatusCode::OK, answer)
    })
}

pub(super) fn note_json(repo: &Repo, c: &Comment) -> Value {
    let noteable_type = match c.kind {
        Kind::Issue => "Issue",
        Kind::Pull => "MergeRequest",
    };
    let mut note = json!({
        "id": c.id, "type": null, "body": c.body, "attachment": null,
        "author": user(repo, &c.author),
        "created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-01T00:00:00.000Z",
        "system": c.system, "noteable_id": 100_000 + c.number, "noteable_type": noteable_type,
        "noteable_iid": c.number, "project_id": repo.id, "resolvable": false,
        "confidential": false, "internal": false,
    });
    if let Some(p) = &c.position {
        note["type"] = json!("DiffNote");
        note["resolvable"] = json!(true);
        note["resolved"] = json!(p.resolved);
        note["position"] = json!({
            "base_sha": p.base_sha, "start_sha": p.start_sha, "head_sha": p.commit,
            "old_path": p.path, "new_path": p.path, "position_type": "text",
            "old_line": null, "new_line": p.line,
        });
    }
    note
}

/// One page of `items` as GitLab pages lists: `per_page` (20 by default, at most 100) and
/// `page`, with `x-page`, `x-next-page` (empty on the last page), `x-total` and friends.
pub(super) fn paginate(query: &HashMap<String, String>, items: Vec<Value>) -> Response {
    let per_page = query
        .get("per_page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_PER_PAGE)
        .clamp(1, MAX_PER_PAGE);
    let page: usize = query
        .get("page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    let total = items.len();
    let pages = total.div_ceil(per_page).max(1);
    let slice: Vec<Value> = items
        .into_iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .collect();
    let next = if page < pages {
        (page + 1).to_string()
    } else {
        String::new()
    };
    let prev = if page > 1 {
        (page - 1).to_string()
    } else {
        String::new()
    };
    let mut response = reply(StatusCode::OK, Value::Array(slice));
    for (name, value) in [
        ("x-page", page.to_string()),
        ("x-per-page", per_page.to_string()),
        ("x-next-page", next),
        ("x-prev-page", prev),
        ("x-total", total.to_string()),
        ("x-total-pages", pages.to_string()),
    ] {
        if let Ok(value) = HeaderValue::try_from(value) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

/// Notes oldest first with `sort=asc`; GitLab's default is newest first.
async fn list_notes(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    uri: OriginalUri,
    Path((id, iid)): Path<(String, u64)>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let kind = kind_of(&uri);
    on_project(&s, &h, &id, |state, path| {
        let repo = project(state, path);
        if !thread_exists(repo, kind, iid) {
            return not_found(if kind == Kind::Issue {
                "Issue"
            } else {
                "Merge Request"
            });
        }
        let mut items: Vec<Value> = state
            .comments
            .iter()
            .filter(|c| c.repo == path && c.kind == kind && c.number == iid)
            .map(|c| note_json(repo, c))
            .collect();
        if q.get("sort").map(String::as_str) != Some("asc") {
            items.reverse();
        }
        paginate(&q, items)
    })
}

async fn create_note(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    uri: OriginalUri,
    Path((id, iid)): Path<(String, u64)>,
    body: Bytes,
) -> Response {
    let kind = kind_of(&uri);
    on_project(&s, &h, &id, |state, path| {
        if !thread_exists(project(state, path), kind, iid) {
            return not_found(if kind == Kind::Issue {
                "Issue"
            } else {
                "Merge Request"
            });
        }
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        let Some(text) = request["body"].as_str().filter(|b| !b.is_empty()) else {
            return missing("body");
        };
        let note_id = state.next_id();
        let comment = Comment {
            id: note_id,
            repo: path.to_owned(),
            kind,
            number: iid,
            author: BOT_USER.to_owned(),
            body: text.to_owned(),
            reactions: Vec::new(),
            position: None,
            discussion: note_id,
            system: false,
        };
        let answer = note_json(project(state, path), &comment);
        state.comments.push(comment);
        queue(
            state,
            path,
            "POST",
            path_of(&uri),
            request,
            Topic::Comments(kind, iid),
        );
        reply(StatusCode::CREATED, answer)
    })
}

async fn update_note(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    uri: OriginalUri,
    Path((id, iid, note_id)): Path<(String, u64, u64)>,
    body: Bytes,
) -> Response {
    let kind = kind_of(&uri);
    on_project(&s, &h, &id, |state, path| {
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        let Some(text) = request["body"].as_str().map(str::to_owned) else {
            return missing("body");
        };
        let Some(note) = state
            .comment_mut(path, note_id)
            .filter(|c| c.kind == kind && c.number == iid)
        else {
            return not_found("Note");
        };
        note.body = text;
        let note = note.clone();
        let answer = note_json(project(state, path), &note);
        queue(
            state,
            path,
            "PUT",
            path_of(&uri),
            request,
            Topic::Comments(kind, iid),
        );
        reply(StatusCode::OK, answer)
    })
}

/// Awards an emoji on a note; the same emoji twice from one user is GitLab's 404 "has already
/// been taken".
async fn award(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    uri: OriginalUri,
    Path((id, iid, note_id)): Path<(String, u64, u64)>,
    body: Bytes,
) -> Response {
    let kind = kind_of(&uri);
    on_project(&s, &h, &id, |state, path| {
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        let Some(name) = request["name"].as_str().map(str::to_owned) else {
            return missing("name");
        };
        let award_id = state.next_id();
        let Some(note) = state
            .comment_mut(path, note_id)
            .filter(|c| c.kind == kind && c.number == iid)
        else {
            return not_found("Note");
        };
        let who = BOT_USER.to_owned();
        if note.reactions.contains(&(who.clone(), name.clone())) {
            return error(
                StatusCode::NOT_FOUND,
                "404 Award Emoji Name has already been taken",
            );
        }
        note.reactions.push((who, name.clone()));
        let answer = json!({
            "id": award_id, "name": name, "user": user(project(state, path), BOT_USER),
            "created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-01T00:00:00.000Z",
            "awardable_id": note_id, "awardable_type": "Note",
        });
        queue(
            state,
            path,
            "POST",
            path_of(&uri),
            request,
            Topic::Comments(kind, iid),
        );
        reply(StatusCode::CREATED, answer)
    })
}

/// GitLab's access level for a role (documented in the members API).
pub(super) fn access_level(permission: Permission) -> Option<u32> {
    match permission {
        Permission::None => None,
        Permission::Read => Some(10),
        Permission::Triage => Some(20),
        Permission::Write => Some(30),
        Permission::Maintain => Some(40),
        Permission::Admin => Some(50),
    }
}

async fn member(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((id, user_id)): Path<(String, u64)>,
) -> Response {
    on_project(&s, &h, &id, |state, path| {
        let repo = project(state, path);
        let Some((username, level)) = repo.members.iter().find_map(|(name, (uid, perm))| {
            (*uid == user_id).then_some((name, access_level(*perm)?))
        }) else {
            return not_found("Member");
        };
        let mut answer = user(repo, username);
        answer["access_level"] = json!(level);
        answer["expires_at"] = Value::Null;
        reply(StatusCode::OK, answer)
    })
}

async fn file(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((id, file_path)): Path<(String, String)>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    on_project(&s, &h, &id, |state, path| {
        let Some(revision) = q.get("ref") else {
            return missing("ref");
        };
        let Some(bytes) = project(state, path).file_at(revision, &file_path) else {
            return not_found("File");
        };
        let name = file_path.rsplit('/').next().unwrap_or(&file_path);
        let blob = super::state::sha_of(&format!("{revision}:{file_path}"));
        reply(
            StatusCode::OK,
            json!({ "file_name": name, "file_path": file_path, "size": bytes.len(),
                    "encoding": "base64", "ref": revision, "blob_id": blob,
                    "commit_id": super::state::sha_of(revision),
                    "last_commit_id": super::state::sha_of(revision),
                    "execute_filemode": false,
                    "content": base64::engine::general_purpose::STANDARD.encode(bytes) }),
        )
    })
}

/// The transition GitLab names when a status is set to the state it is already in.
fn transition(state: &str) -> &'static str {
    match state {
        "pending" => "enqueue",
        "running" => "run",
        "success" => "succeed",
        "failed" => "drop",
        "canceled" => "cancel",
        _ => "skip",
    }
}

async fn create_status(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    uri: OriginalUri,
    Path((id, sha)): Path<(String, String)>,
    body: Bytes,
) -> Response {
    on_project(&s, &h, &id, |state, path| {
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        let Some(wanted) = request["state"].as_str().map(str::to_owned) else {
            return missing("state");
        };
        if ![
            "pending", "running", "success", "failed", "canceled", "skipped",
        ]
        .contains(&wanted.as_str())
        {
            return reply(
                StatusCode::BAD_REQUEST,
                json!({ "error": "state does not have a valid value" }),
            );
        }
        let name = request["name"]
            .as_str()
            .or(request["context"].as_str())
            .unwrap_or("default")
            .to_owned();
        let status_id = state.next_id();
        let repo = project_mut(state, path);
        let current = repo
            .statuses
            .iter()
            .rev()
            .find(|st| st.sha == sha && st.name == name);
        if let Some(current) = current.filter(|st| st.state == wanted) {
            let message = format!(
                "Cannot transition status via :{} from :{} (Line: 1)",
                transition(&wanted),
                current.state
            );
            return error(StatusCode::BAD_REQUEST, &message);
        }
        let status = Status {
            id: status_id,
            sha: sha.clone(),
            name,
            state: wanted,
            description: request["description"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            target_url: request["target_url"].as_str().map(str::to_owned),
        };
        let answer = json!({
            "id": status_id, "sha": sha, "ref": repo.default_branch, "status": status.state,
            "name": status.name, "description": status.description,
            "target_url": status.target_url, "allow_failure": false, "coverage": null,
            "created_at": "2026-01-01T00:00:00.000Z", "author": user(repo, BOT_USER),
        });
        repo.statuses.push(status);
        queue(
            state,
            path,
            "POST",
            path_of(&uri),
            request,
            Topic::Status(sha.clone()),
        );
        reply(StatusCode::CREATED, answer)
    })
}
