//! The fake forge's Forgejo/Gitea REST v1 API (under `/api/v1`): repositories, issues and
//! their comments, reactions, labels (by id, created on the repository first), collaborator
//! permissions, raw files and contents, pull requests, reviews with line comments, commit
//! statuses and the token's user — with the shapes, status codes and quirks Forgejo's API
//! description (`tests/data/forgejo/swagger.v1.json`) and its handlers have: issues and pull
//! requests share one number space, issue comments are not paged, editing a pull request
//! answers 201, a reaction already there answers 200, a draft is a `WIP:` title.

use std::collections::HashMap;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{OriginalUri, Path, Query, State as AxumState};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, patch, post};
use base64::Engine as _;
use forgeward::forge::Forge;
use forgeward::forge::api::Permission;
use serde_json::{Value, json};

use super::state::{Comment, Kind, Position, Pull, Repo, State, Status, Topic, Write};
use super::{FORGEJO_TOKEN, Shared, header, lock, parse_body, reply};

/// The user the bot's token belongs to.
pub(super) const BOT_USER: &str = "forgeward-bot";
const BOT_USER_ID: u64 = 4242;

/// Forgejo's default page size (`[api] DEFAULT_PAGING_NUM`) and its largest (`MAX_RESPONSE_ITEMS`).
const DEFAULT_LIMIT: usize = 30;
const MAX_LIMIT: usize = 50;

/// The reactions Forgejo allows by default (`[ui] REACTIONS`).
const REACTIONS: &[&str] = &[
    "+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes",
];

pub fn routes() -> Router<Shared> {
    Router::new()
        .route("/user", get(token_user))
        .route("/repos/{o}/{r}", get(get_repo))
        .route("/repos/{o}/{r}/issues/{n}", get(get_issue))
        .route(
            "/repos/{o}/{r}/issues/{n}/comments",
            get(list_comments).post(create_comment),
        )
        .route("/repos/{o}/{r}/issues/comments/{id}", patch(update_comment))
        .route("/repos/{o}/{r}/issues/comments/{id}/reactions", post(react))
        .route(
            "/repos/{o}/{r}/labels",
            get(list_repo_labels).post(create_repo_label),
        )
        .route(
            "/repos/{o}/{r}/issues/{n}/labels",
            get(issue_labels).post(add_labels),
        )
        .route(
            "/repos/{o}/{r}/issues/{n}/labels/{id}",
            delete(remove_label),
        )
        .route(
            "/repos/{o}/{r}/collaborators/{user}/permission",
            get(permission),
        )
        .route("/repos/{o}/{r}/raw/{*path}", get(raw))
        .route("/repos/{o}/{r}/contents/{*path}", get(contents))
        .route("/repos/{o}/{r}/pulls", get(list_pulls).post(create_pull))
        .route("/repos/{o}/{r}/pulls/{n}", get(get_pull).patch(update_pull))
        .route("/repos/{o}/{r}/pulls/{base}/{head}", get(pull_by_branches))
        .route(
            "/repos/{o}/{r}/pulls/{n}/reviews",
            get(list_reviews).post(create_review),
        )
        .route(
            "/repos/{o}/{r}/pulls/{n}/reviews/{id}",
            delete(delete_review),
        )
        .route(
            "/repos/{o}/{r}/pulls/{n}/reviews/{id}/comments",
            get(review_comments),
        )
        .route("/repos/{o}/{r}/statuses/{sha}", post(create_status))
}

type Repo2 = Path<(String, String)>;
type Repo3<T> = Path<(String, String, T)>;

/// Forgejo's error body: `{"message": …, "url": …}`.
fn error(status: StatusCode, message: &str) -> Response {
    reply(
        status,
        json!({ "message": message, "url": "https://forgejo.org/docs/latest/api" }),
    )
}

fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "The target couldn't be found.")
}

/// Forgejo's 422 for a body it cannot take.
fn invalid(message: &str) -> Response {
    error(StatusCode::UNPROCESSABLE_ENTITY, message)
}

fn authorized(headers: &HeaderMap) -> bool {
    header(headers, "authorization").is_some_and(|h| {
        h.strip_prefix("token ")
            .or_else(|| h.strip_prefix("Bearer "))
            .is_some_and(|t| t == FORGEJO_TOKEN)
    })
}

/// Checks the token and that the repository exists, then runs `f` with its full name.
fn on_repo(
    shared: &Shared,
    headers: &HeaderMap,
    owner: &str,
    name: &str,
    f: impl FnOnce(&mut State, &str) -> Response,
) -> Response {
    let mut state = lock(shared);
    if !authorized(headers) {
        return error(StatusCode::UNAUTHORIZED, "token is required");
    }
    let full = format!("{owner}/{name}");
    if state.repo(Forge::Forgejo, &full).is_none() {
        return not_found();
    }
    f(&mut state, &full)
}

fn repo<'a>(state: &'a State, name: &str) -> &'a Repo {
    state.repo(Forge::Forgejo, name).expect("on_repo found it")
}

fn repo_mut<'a>(state: &'a mut State, name: &str) -> &'a mut Repo {
    state
        .repo_mut(Forge::Forgejo, name)
        .expect("on_repo found it")
}

fn body_json(body: &Bytes) -> Result<Value, Response> {
    parse_body(body).ok_or_else(|| invalid("invalid JSON body"))
}

fn queue(
    state: &mut State,
    repo: &str,
    method: &str,
    uri: &OriginalUri,
    body: Value,
    topic: Topic,
) {
    state.writes.push(Write {
        forge: Forge::Forgejo,
        repo: repo.to_owned(),
        method: method.to_owned(),
        path: uri.0.path().to_owned(),
        body,
        topic,
    });
}

fn web(state: &State, path: &str) -> String {
    format!("{}/{path}", state.base_url)
}

fn user_json(state: &State, login: &str, id: u64) -> Value {
    json!({ "id": id, "login": login, "login_name": "", "full_name": login,
            "email": format!("{login}@noreply.forgejo.example"),
            "avatar_url": web(state, &format!("avatars/{id}")),
            "html_url": web(state, login), "language": "", "is_admin": false,
            "restricted": false, "active": true, "prohibit_login": false,
            "visibility": "public", "created": "2026-01-01T00:00:00Z" })
}

fn user(state: &State, repo: &Repo, login: &str) -> Value {
    let id = if login == BOT_USER {
        BOT_USER_ID
    } else {
        repo.members.get(login).map_or(1, |(id, _)| *id)
    };
    user_json(state, login, id)
}

fn repo_json(state: &State, repo: &Repo) -> Value {
    let (owner, name) = repo.name.split_once('/').unwrap_or(("", &repo.name));
    json!({
        "id": repo.id, "name": name, "full_name": repo.name,
        "owner": user_json(state, owner, 1), "private": false, "fork": false,
        "empty": false, "default_branch": repo.default_branch,
        "html_url": web(state, &repo.name),
        "clone_url": web(state, &format!("{}.git", repo.name)),
        "ssh_url": format!("git@forgejo.example:{}.git", repo.name),
        "has_issues": true, "has_pull_requests": true, "object_format_name": "sha1",
        "permissions": { "admin": true, "push": true, "pull": true },
    })
}

async fn token_user(AxumState(s): AxumState<Shared>, h: HeaderMap) -> Response {
    let state = lock(&s);
    if !authorized(&h) {
        return error(StatusCode::UNAUTHORIZED, "token is required");
    }
    reply(StatusCode::OK, user_json(&state, BOT_USER, BOT_USER_ID))
}

async fn get_repo(AxumState(s): AxumState<Shared>, h: HeaderMap, Path((o, r)): Repo2) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        reply(StatusCode::OK, repo_json(state, repo(state, full)))
    })
}

/// The label's id on the repository; a label seeded by name gets its id when first asked for.
fn label_id(state: &mut State, full: &str, name: &str) -> u64 {
    if let Some(id) = repo(state, full).label_ids.get(name) {
        return *id;
    }
    let id = state.next_id();
    repo_mut(state, full).label_ids.insert(name.to_owned(), id);
    id
}

fn label_json(state: &State, full: &str, name: &str) -> Value {
    let id = repo(state, full).label_ids.get(name).copied().unwrap_or(0);
    json!({ "id": id, "name": name, "exclusive": false, "is_archived": false,
            "color": "e11d21", "description": "",
            "url": format!("{}/api/v1/repos/{full}/labels/{id}", state.base_url) })
}

fn labels_json(state: &mut State, full: &str, names: &[String]) -> Value {
    for name in names {
        label_id(state, full, name);
    }
    Value::Array(names.iter().map(|n| label_json(state, full, n)).collect())
}

fn thread_kind(repo: &Repo, n: u64) -> Option<Kind> {
    if repo.issues.contains_key(&n) {
        Some(Kind::Issue)
    } else if repo.pulls.contains_key(&n) {
        Some(Kind::Pull)
    } else {
        None
    }
}

fn issue_json(state: &mut State, full: &str, n: u64) -> Value {
    let labels = {
        let repo = repo(state, full);
        match thread_kind(repo, n) {
            Some(Kind::Issue) => repo.issues[&n].labels.clone(),
            _ => repo.pulls[&n].labels.clone(),
        }
    };
    let labels = labels_json(state, full, &labels);
    let repo = repo(state, full);
    let (title, body, author, pull) = match thread_kind(repo, n) {
        Some(Kind::Issue) => {
            let i = &repo.issues[&n];
            (
                i.title.clone(),
                i.body.clone(),
                i.author.clone(),
                Value::Null,
            )
        }
        _ => {
            let p = &repo.pulls[&n];
            (
                p.title.clone(),
                p.body.clone(),
                p.author.clone(),
                json!({ "draft": p.draft, "merged": false,
                        "html_url": web(state, &format!("{full}/pulls/{n}")) }),
            )
        }
    };
    let kind = if pull.is_null() { "issues" } else { "pulls" };
    json!({
        "id": 100_000 + n, "number": n, "title": title, "body": body, "ref": "",
        "user": user(state, repo, &author), "labels": labels, "state": "open",
        "comments": 0, "is_locked": false, "pull_request": pull, "assets": [],
        "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
        "html_url": web(state, &format!("{full}/{kind}/{n}")),
        "url": format!("{}/api/v1/repos/{full}/issues/{n}", state.base_url),
        "repository": { "id": repo.id, "name": full.rsplit('/').next(), "owner": repo.owner(),
                        "full_name": full },
    })
}

async fn get_issue(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, n)): Repo3<u64>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        if thread_kind(repo(state, full), n).is_none() {
            return not_found();
        }
        reply(StatusCode::OK, issue_json(state, full, n))
    })
}

fn comment_json(state: &State, repo: &Repo, c: &Comment) -> Value {
    let kind = if c.kind == Kind::Pull {
        "pulls"
    } else {
        "issues"
    };
    json!({
        "id": c.id, "body": c.body, "user": user(state, repo, &c.author),
        "original_author": "", "original_author_id": 0, "assets": [],
        "html_url": web(state, &format!("{}/{kind}/{}#issuecomment-{}", repo.name, c.number, c.id)),
        "issue_url": format!("{}/api/v1/repos/{}/issues/{}", state.base_url, repo.name, c.number),
        "pull_request_url": "",
        "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
    })
}

/// Every comment of the thread, oldest first: Forgejo does not page this list.
async fn list_comments(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, n)): Repo3<u64>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        let repo = repo(state, full);
        let Some(kind) = thread_kind(repo, n) else {
            return not_found();
        };
        let items: Vec<Value> = state
            .comments
            .iter()
            .filter(|c| c.repo == full && c.kind == kind && c.number == n && c.position.is_none())
            .map(|c| comment_json(state, repo, c))
            .collect();
        reply(StatusCode::OK, Value::Array(items))
    })
}

async fn create_comment(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    uri: OriginalUri,
    Path((o, r, n)): Repo3<u64>,
    body: Bytes,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        let Some(kind) = thread_kind(repo(state, full), n) else {
            return not_found();
        };
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        let Some(text) = request["body"].as_str().filter(|b| !b.is_empty()) else {
            return invalid("[Body]: Required");
        };
        let id = state.next_id();
        let comment = Comment {
            id,
            repo: full.to_owned(),
            kind,
            number: n,
            author: BOT_USER.to_owned(),
            body: text.to_owned(),
            reactions: Vec::new(),
            position: None,
            discussion: id,
            system: false,
        };
        let answer = comment_json(state, repo(state, full), &comment);
        state.comments.push(comment);
        queue(state, full, "POST", &uri, request, Topic::Comments(kind, n));
        reply(StatusCode::CREATED, answer)
    })
}

async fn update_comment(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    uri: OriginalUri,
    Path((o, r, id)): Repo3<u64>,
    body: Bytes,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        let Some(text) = request["body"].as_str().map(str::to_owned) else {
            return invalid("[Body]: Required");
        };
        let Some(comment) = state.comment_mut(full, id) else {
            return not_found();
        };
        if comment.author != BOT_USER {
            return error(StatusCode::FORBIDDEN, "user should be the poster");
        }
        comment.body = text;
        let comment = comment.clone();
        let answer = comment_json(state, repo(state, full), &comment);
        // A review's line comment is edited through the same endpoint as an issue comment.
        let topic = match comment.position {
            Some(_) => Topic::Review(comment.number),
            None => Topic::Comments(comment.kind, comment.number),
        };
        queue(state, full, "PATCH", &uri, request, topic);
        reply(StatusCode::OK, answer)
    })
}

/// A reaction on a comment: 201 when made, 200 with the reaction when it was already there.
async fn react(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    uri: OriginalUri,
    Path((o, r, id)): Repo3<u64>,
    body: Bytes,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        let content = request["content"].as_str().unwrap_or_default().to_owned();
        if !REACTIONS.contains(&content.as_str()) {
            return error(
                StatusCode::FORBIDDEN,
                &format!("'{content}' is not an allowed reaction"),
            );
        }
        let bot = user_json(state, BOT_USER, BOT_USER_ID);
        let Some(comment) = state.comment_mut(full, id) else {
            return not_found();
        };
        let answer = json!({ "user": bot, "content": content,
                             "created_at": "2026-01-01T00:00:00Z" });
        let mine = (BOT_USER.to_owned(), content);
        if comment.reactions.contains(&mine) {
            return reply(StatusCode::OK, answer);
        }
        comment.reactions.push(mine);
        let topic = Topic::Comments(comment.kind, comment.number);
        queue(state, full, "POST", &uri, request, topic);
        reply(StatusCode::CREATED, answer)
    })
}

/// One page of `items`, as Forgejo pages lists: `page` and `limit`, a `Link` header naming the
/// next, last, first and previous pages, and `X-Total-Count`.
fn paginate(
    base: &str,
    path: &str,
    query: &HashMap<String, String>,
    items: Vec<Value>,
) -> Response {
    let limit = query
        .get("limit")
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_LIMIT)
        .clamp(1, MAX_LIMIT);
    let page: usize = query
        .get("page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    let total = items.len();
    let last = total.div_ceil(limit).max(1);
    let slice: Vec<Value> = items
        .into_iter()
        .skip((page - 1) * limit)
        .take(limit)
        .collect();
    let mut kept: Vec<(&String, &String)> = query
        .iter()
        .filter(|(k, _)| *k != "limit" && *k != "page")
        .collect();
    kept.sort();
    let kept: String = kept.into_iter().map(|(k, v)| format!("{k}={v}&")).collect();
    let link =
        |p: usize, rel: &str| format!("<{base}{path}?{kept}limit={limit}&page={p}>; rel=\"{rel}\"");
    let mut links = Vec::new();
    if page < last {
        links.push(link(page + 1, "next"));
        links.push(link(last, "last"));
    }
    if page > 1 {
        links.push(link(1, "first"));
        links.push(link(page - 1, "prev"));
    }
    let mut response = reply(StatusCode::OK, Value::Array(slice));
    let headers = response.headers_mut();
    if !links.is_empty()
        && let Ok(value) = HeaderValue::try_from(links.join(","))
    {
        headers.insert("link", value);
    }
    if let Ok(value) = HeaderValue::try_from(total.to_string()) {
        headers.insert("x-total-count", value);
    }
    response
}

async fn list_repo_labels(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    uri: OriginalUri,
    Path((o, r)): Repo2,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        let names: Vec<String> = repo(state, full).label_ids.keys().cloned().collect();
        let items = names.iter().map(|n| label_json(state, full, n)).collect();
        paginate(&state.base_url, uri.0.path(), &q, items)
    })
}

/// A repository label; the same name twice is Forgejo's 422.
async fn create_repo_label(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r)): Repo2,
    body: Bytes,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        let Some(name) = request["name"].as_str().filter(|n| !n.is_empty()) else {
            return invalid("[Name]: Required");
        };
        let color = request["color"].as_str().unwrap_or_default();
        let hex = color.trim_start_matches('#');
        if hex.len() != 6 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return invalid("Color: invalid color");
        }
        if repo(state, full).label_ids.contains_key(name) {
            return invalid("label already exists");
        }
        // Creating a label is seeding the repository, not a write on a thread a test reads.
        label_id(state, full, name);
        reply(StatusCode::CREATED, label_json(state, full, name))
    })
}

/// The labels on an issue or pull request (not paged).
async fn issue_labels(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, n)): Repo3<u64>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        let repo = repo(state, full);
        let names = match thread_kind(repo, n) {
            Some(Kind::Issue) => repo.issues[&n].labels.clone(),
            Some(Kind::Pull) => repo.pulls[&n].labels.clone(),
            None => return not_found(),
        };
        reply(StatusCode::OK, labels_json(state, full, &names))
    })
}

/// `{"labels": [ids or names]}`: Forgejo takes either; an id it does not have is a 422.
async fn add_labels(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    uri: OriginalUri,
    Path((o, r, n)): Repo3<u64>,
    body: Bytes,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        let Some(kind) = thread_kind(repo(state, full), n) else {
            return not_found();
        };
        let Some(wanted) = request["labels"].as_array() else {
            return invalid("[Labels]: Required");
        };
        let mut names = Vec::new();
        for label in wanted {
            let ids = &repo(state, full).label_ids;
            let name = match label {
                Value::Number(id) => ids
                    .iter()
                    .find(|(_, v)| Some(**v) == id.as_u64())
                    .map(|(name, _)| name.clone()),
                Value::String(name) => ids.contains_key(name).then(|| name.clone()),
                _ => None,
            };
            let Some(name) = name else {
                return invalid(&format!("label does not exist [id: {label}]"));
            };
            names.push(name);
        }
        let labels = repo_mut(state, full)
            .labels_mut(kind, n)
            .expect("the thread exists");
        for name in names {
            if !labels.contains(&name) {
                labels.push(name);
            }
        }
        let labels = labels.clone();
        queue(state, full, "POST", &uri, request, Topic::Labels(kind, n));
        reply(StatusCode::OK, labels_json(state, full, &labels))
    })
}

/// 204 whether or not the thread had the label; an id the repository lacks is a 422.
async fn remove_label(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    uri: OriginalUri,
    Path((o, r, n, id)): Path<(String, String, u64, u64)>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        let Some(kind) = thread_kind(repo(state, full), n) else {
            return not_found();
        };
        let Some(name) = repo(state, full)
            .label_ids
            .iter()
            .find(|(_, v)| **v == id)
            .map(|(name, _)| name.clone())
        else {
            return invalid("label does not exist");
        };
        let labels = repo_mut(state, full)
            .labels_mut(kind, n)
            .expect("the thread exists");
        let had = labels.contains(&name);
        labels.retain(|l| *l != name);
        if had {
            queue(
                state,
                full,
                "DELETE",
                &uri,
                json!({}),
                Topic::Labels(kind, n),
            );
        }
        StatusCode::NO_CONTENT.into_response()
    })
}

/// Forgejo's access mode names.
fn access_mode(permission: Permission) -> &'static str {
    match permission {
        Permission::None => "none",
        Permission::Read | Permission::Triage => "read",
        Permission::Write | Permission::Maintain => "write",
        Permission::Admin => "admin",
    }
}

/// A collaborator's permission; anyone else reads a public repository (`read`).
async fn permission(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, login)): Repo3<String>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        let repo = repo(state, full);
        let (mode, id) = match repo.members.get(&login) {
            Some((id, permission)) => (access_mode(*permission), *id),
            None if login == o => ("owner", 1),
            None => ("read", 2),
        };
        reply(
            StatusCode::OK,
            json!({ "permission": mode, "role_name": mode, "user": user_json(state, &login, id) }),
        )
    })
}

fn revision_of(q: &HashMap<String, String>, repo: &Repo) -> String {
    q.get("ref")
        .filter(|r| !r.is_empty())
        .cloned()
        .unwrap_or_else(|| repo.default_branch.clone())
}

async fn raw(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, path)): Repo3<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        let repo = repo(state, full);
        let Some(bytes) = repo.file_at(&revision_of(&q, repo), &path) else {
            return not_found();
        };
        (
            StatusCode::OK,
            [("content-type", "application/octet-stream")],
            bytes.clone(),
        )
            .into_response()
    })
}

async fn contents(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, path)): Repo3<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        let repo = repo(state, full);
        let revision = revision_of(&q, repo);
        let Some(bytes) = repo.file_at(&revision, &path) else {
            return not_found();
        };
        let name = path.rsplit('/').next().unwrap_or(&path);
        let sha = super::state::sha_of(&format!("{revision}:{path}"));
        reply(
            StatusCode::OK,
            json!({ "name": name, "path": path, "sha": sha, "type": "file",
                    "size": bytes.len(), "encoding": "base64",
                    "content": base64::engine::general_purpose::STANDARD.encode(bytes),
                    "last_commit_sha": super::state::sha_of(&revision),
                    "url": format!("{}/api/v1/repos/{full}/contents/{path}?ref={revision}", state.base_url),
                    "html_url": web(state, &format!("{full}/src/branch/{revision}/{path}")) }),
        )
    })
}

/// Forgejo's default work-in-progress prefixes (`[repository.pull-request] WORK_IN_PROGRESS_PREFIXES`).
fn is_draft(title: &str) -> bool {
    let lower = title.trim_start().to_ascii_lowercase();
    ["wip:", "[wip]"].iter().any(|p| lower.starts_with(p))
}

fn branch_json(state: &State, repo_name: &str, branch: &str, sha: &str) -> Value {
    let repo_value = state
        .repo(Forge::Forgejo, repo_name)
        .map_or(Value::Null, |r| repo_json(state, r));
    let repo_id = state.repo(Forge::Forgejo, repo_name).map_or(0, |r| r.id);
    json!({ "label": branch, "ref": branch, "sha": sha, "repo_id": repo_id, "repo": repo_value })
}

fn pull_json(state: &mut State, full: &str, n: u64) -> Value {
    let names = repo(state, full).pulls[&n].labels.clone();
    let labels = labels_json(state, full, &names);
    let repo = repo(state, full);
    let p = &repo.pulls[&n];
    json!({
        "id": 200_000 + n, "number": n, "title": p.title, "body": p.body,
        "user": user(state, repo, &p.author), "labels": labels,
        "state": if p.open { "open" } else { "closed" }, "draft": p.draft,
        "is_locked": false, "comments": 0, "mergeable": true, "merged": false,
        "allow_maintainer_edit": false, "flow": 0,
        "head": branch_json(state, &p.head_repo, &p.head_branch, &p.head_sha),
        "base": branch_json(state, full, &p.base_branch, &p.base_sha),
        "merge_base": p.base_sha,
        "html_url": web(state, &format!("{full}/pulls/{n}")),
        "diff_url": web(state, &format!("{full}/pulls/{n}.diff")),
        "patch_url": web(state, &format!("{full}/pulls/{n}.patch")),
        "url": web(state, &format!("{full}/pulls/{n}")),
        "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
    })
}

async fn get_pull(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, n)): Repo3<u64>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        if !repo(state, full).pulls.contains_key(&n) {
            return not_found();
        }
        reply(StatusCode::OK, pull_json(state, full, n))
    })
}

/// The newest pull request from `head` into `base` (branches of this repository).
async fn pull_by_branches(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, base, head)): Path<(String, String, String, String)>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        let found = repo(state, full)
            .pulls
            .iter()
            .rev()
            .find(|(_, p)| p.base_branch == base && p.head_branch == head && p.head_repo == full)
            .map(|(n, _)| *n);
        match found {
            Some(n) => reply(StatusCode::OK, pull_json(state, full, n)),
            None => not_found(),
        }
    })
}

async fn list_pulls(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    uri: OriginalUri,
    Path((o, r)): Repo2,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        let wanted = q.get("state").map_or("open", String::as_str);
        let numbers: Vec<u64> = repo(state, full)
            .pulls
            .iter()
            .rev()
            .filter(|(_, p)| match wanted {
                "open" => p.open,
                "closed" => !p.open,
                _ => true,
            })
            .map(|(n, _)| *n)
            .collect();
        let items = numbers.iter().map(|n| pull_json(state, full, *n)).collect();
        let base = state.base_url.clone();
        paginate(&base, uri.0.path(), &q, items)
    })
}

/// A pull request from a branch of this repository; one already open for the same branches
/// is Forgejo's 409.
async fn create_pull(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    uri: OriginalUri,
    Path((o, r)): Repo2,
    body: Bytes,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        let field = |name: &str| request[name].as_str().unwrap_or_default().to_owned();
        let (head, base, title) = (field("head"), field("base"), field("title"));
        if title.is_empty() {
            return invalid("[Title]: Required");
        }
        let repo = repo_mut(state, full);
        let (Some(head_sha), Some(base_sha)) = (repo.branch_sha(&head), repo.branch_sha(&base))
        else {
            return not_found();
        };
        if let Some((n, _)) = repo
            .pulls
            .iter()
            .find(|(_, p)| p.open && p.head_branch == head && p.base_branch == base)
        {
            return error(
                StatusCode::CONFLICT,
                &format!(
                    "pull request already exists for these targets [id: {}, issue_id: {n}, head_repo_id: {}, base_repo_id: {}, head_branch: {head}, base_branch: {base}]",
                    200_000 + n,
                    repo.id,
                    repo.id
                ),
            );
        }
        let n = repo.next_number(Kind::Pull);
        repo.pulls.insert(
            n,
            Pull {
                draft: is_draft(&title),
                title,
                body: field("body"),
                author: BOT_USER.to_owned(),
                labels: Vec::new(),
                head_branch: head.clone(),
                head_sha,
                head_repo: full.to_owned(),
                base_branch: base,
                base_sha,
                open: true,
                commentable: None,
                reviews: Vec::new(),
            },
        );
        let answer = pull_json(state, full, n);
        queue(state, full, "POST", &uri, request, Topic::PullRequest(head));
        reply(StatusCode::CREATED, answer)
    })
}

/// Title and body; a title sets draft by its prefix. Forgejo answers an edit with 201.
async fn update_pull(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    uri: OriginalUri,
    Path((o, r, n)): Repo3<u64>,
    body: Bytes,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        let Some(pull) = repo_mut(state, full).pulls.get_mut(&n) else {
            return not_found();
        };
        if let Some(title) = request["title"].as_str() {
            pull.title = title.to_owned();
            pull.draft = is_draft(title);
        }
        if let Some(text) = request["body"].as_str() {
            pull.body = text.to_owned();
        }
        let branch = pull.head_branch.clone();
        let answer = pull_json(state, full, n);
        queue(
            state,
            full,
            "PATCH",
            &uri,
            request,
            Topic::PullRequest(branch),
        );
        reply(StatusCode::CREATED, answer)
    })
}

fn review_json(state: &State, repo: &Repo, n: u64, review: &(u64, String, String)) -> Value {
    let (id, body, commit) = review;
    let count = state
        .comments
        .iter()
        .filter(|c| c.repo == repo.name && c.discussion == *id && c.position.is_some())
        .count();
    json!({
        "id": id, "body": body, "commit_id": commit, "state": "COMMENT",
        "user": user(state, repo, BOT_USER), "team": null, "official": false,
        "stale": false, "dismissed": false, "comments_count": count,
        "html_url": web(state, &format!("{}/pulls/{n}#issuecomment-{id}", repo.name)),
        "pull_request_url": web(state, &format!("{}/pulls/{n}", repo.name)),
        "submitted_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
    })
}

async fn list_reviews(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    uri: OriginalUri,
    Path((o, r, n)): Repo3<u64>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        let repo = repo(state, full);
        let Some(pull) = repo.pulls.get(&n) else {
            return not_found();
        };
        let items = pull
            .reviews
            .iter()
            .map(|review| review_json(state, repo, n, review))
            .collect();
        paginate(&state.base_url, uri.0.path(), &q, items)
    })
}

async fn review_comments(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, n, id)): Path<(String, String, u64, u64)>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        let repo = repo(state, full);
        let Some(pull) = repo.pulls.get(&n) else {
            return not_found();
        };
        if !pull.reviews.iter().any(|(review, _, _)| *review == id) {
            return not_found();
        }
        let items: Vec<Value> = state
            .comments
            .iter()
            .filter(|c| c.repo == full && c.discussion == id)
            .filter_map(|c| {
                let p = c.position.as_ref()?;
                Some(json!({
                    "id": c.id, "body": c.body, "user": user(state, repo, &c.author),
                    "path": p.path, "commit_id": p.commit, "original_commit_id": p.commit,
                    "position": p.line.unwrap_or(0), "original_position": 0, "resolver": null,
                    "diff_hunk": "@@ -1 +1 @@", "pull_request_review_id": id,
                    "html_url": web(state, &format!("{full}/pulls/{n}/files#issuecomment-{}", c.id)),
                    "pull_request_url": web(state, &format!("{full}/pulls/{n}")),
                    "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
                }))
            })
            .collect();
        reply(StatusCode::OK, Value::Array(items))
    })
}

/// A review: `event` COMMENT with a body or line comments (`new_position` on the head's side,
/// `old_position` on the base's); a line the pull request's diff does not show is a 500, as
/// Forgejo answers when it cannot place a comment.
async fn create_review(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    uri: OriginalUri,
    Path((o, r, n)): Repo3<u64>,
    body: Bytes,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        let Some(pull) = repo(state, full).pulls.get(&n) else {
            return not_found();
        };
        let event = request["event"].as_str().unwrap_or("PENDING");
        if !["COMMENT", "APPROVED", "REQUEST_CHANGES", "PENDING"].contains(&event) {
            return invalid(&format!("unknown review event: {event}"));
        }
        let text = request["body"].as_str().unwrap_or_default().to_owned();
        let commit = request["commit_id"]
            .as_str()
            .filter(|c| !c.is_empty())
            .unwrap_or(&pull.head_sha)
            .to_owned();
        let wanted = request["comments"].as_array().cloned().unwrap_or_default();
        if text.is_empty() && wanted.is_empty() && event == "COMMENT" {
            return invalid("review event COMMENT requires a body or a comment");
        }
        let mut positions = Vec::new();
        for comment in &wanted {
            let Some(path) = comment["path"].as_str() else {
                return invalid("[Path]: Required");
            };
            let new = comment["new_position"].as_u64().unwrap_or(0);
            let old = comment["old_position"].as_u64().unwrap_or(0);
            let line = u32::try_from(new).ok().filter(|l| *l > 0);
            if new == 0 && old == 0 {
                return invalid("comment needs new_position or old_position");
            }
            if let Some(line) = line
                && !pull.may_comment(path, line)
            {
                // What a production instance answers when it cannot make a line comment: a
                // 500 whose message is empty.
                return error(StatusCode::INTERNAL_SERVER_ERROR, "");
            }
            let Some(text) = comment["body"].as_str().filter(|b| !b.is_empty()) else {
                return invalid("[Body]: Required");
            };
            positions.push((text.to_owned(), path.to_owned(), line));
        }
        let review_id = state.next_id();
        for (text, path, line) in positions {
            let id = state.next_id();
            state.comments.push(Comment {
                id,
                repo: full.to_owned(),
                kind: Kind::Pull,
                number: n,
                author: BOT_USER.to_owned(),
                body: text,
                reactions: Vec::new(),
                position: Some(Position {
                    path,
                    line,
                    commit: commit.clone(),
                    base_sha: String::new(),
                    start_sha: String::new(),
                    resolved: false,
                }),
                discussion: review_id,
                system: false,
            });
        }
        let review = (review_id, text, commit);
        repo_mut(state, full)
            .pulls
            .get_mut(&n)
            .expect("the pull request exists")
            .reviews
            .push(review.clone());
        let answer = review_json(state, repo(state, full), n, &review);
        queue(state, full, "POST", &uri, request, Topic::Review(n));
        reply(StatusCode::OK, answer)
    })
}

/// Deletes a review and its line comments (the bot's own only).
async fn delete_review(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    uri: OriginalUri,
    Path((o, r, n, id)): Path<(String, String, u64, u64)>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        let Some(pull) = repo_mut(state, full).pulls.get_mut(&n) else {
            return not_found();
        };
        let before = pull.reviews.len();
        pull.reviews.retain(|(review, _, _)| *review != id);
        if pull.reviews.len() == before {
            return not_found();
        }
        state
            .comments
            .retain(|c| !(c.repo == full && c.discussion == id && c.position.is_some()));
        queue(state, full, "DELETE", &uri, json!({}), Topic::Review(n));
        StatusCode::NO_CONTENT.into_response()
    })
}

async fn create_status(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    uri: OriginalUri,
    Path((o, r, sha)): Repo3<String>,
    body: Bytes,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full| {
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        let wanted = request["state"].as_str().unwrap_or_default().to_owned();
        if !["pending", "success", "error", "failure", "warning"].contains(&wanted.as_str()) {
            return error(StatusCode::BAD_REQUEST, "invalid state");
        }
        let id = state.next_id();
        let status = Status {
            id,
            sha: sha.clone(),
            name: request["context"].as_str().unwrap_or("default").to_owned(),
            state: wanted,
            description: request["description"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            target_url: request["target_url"]
                .as_str()
                .filter(|u| !u.is_empty())
                .map(str::to_owned),
        };
        let repo = repo(state, full);
        let answer = json!({
            "id": id, "status": status.state, "context": status.name,
            "description": status.description, "target_url": status.target_url,
            "creator": user(state, repo, BOT_USER),
            "url": format!("{}/api/v1/repos/{full}/statuses/{sha}", state.base_url),
            "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
        });
        repo_mut(state, full).statuses.push(status);
        queue(
            state,
            full,
            "POST",
            &uri,
            request,
            Topic::Status(sha.clone()),
        );
        reply(StatusCode::CREATED, answer)
    })
}
