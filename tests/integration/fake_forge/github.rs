//! The fake forge's GitHub REST API: the endpoints the GitHub client calls, with the request
//! and response shapes docs.github.com/rest documents (the fields a client reads, not every
//! field GitHub sends), its status codes (201 on create, 404 for what is not there, 422 for a
//! refused body), `Link` pagination and its credentials.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State as AxumState};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use axum::routing::{delete, get, patch, post};
use base64::Engine as _;
use forgeward::forge::Forge;
use forgeward::forge::api::Permission;
use serde_json::{Value, json};
use std::collections::HashMap;

use super::state::{APP_ID, Comment, Kind, Repo, State, Topic, Write};
use super::{GITHUB_TOKEN, Shared, error, header, lock, parse_body, reply};
use super::{github_checks, github_graphql, github_pulls};

/// The login the bot's writes are made as: an App writes as `<slug>[bot]`.
const APP_LOGIN: &str = "forgeward[bot]";
/// The login behind [`GITHUB_TOKEN`].
const TOKEN_LOGIN: &str = "forgeward-bot";

/// GitHub's default page size for lists, and its largest.
const DEFAULT_PER_PAGE: usize = 30;
const MAX_PER_PAGE: usize = 100;

const REACTIONS: &[&str] = &[
    "+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes",
];

pub fn routes() -> Router<Shared> {
    Router::new()
        .route("/repos/{o}/{r}", get(get_repo))
        .route("/app", get(get_app))
        .route("/user", get(get_user))
        .route("/repos/{o}/{r}/installation", get(get_installation))
        .route("/app/installations/{id}/access_tokens", post(access_token))
        .route("/repos/{o}/{r}/issues/{n}", get(get_issue))
        .route(
            "/repos/{o}/{r}/issues/{n}/comments",
            get(list_comments).post(create_comment),
        )
        .route("/repos/{o}/{r}/issues/comments/{id}", patch(update_comment))
        .route("/repos/{o}/{r}/issues/comments/{id}/reactions", post(react))
        .route("/repos/{o}/{r}/issues/{n}/labels", post(add_labels))
        .route(
            "/repos/{o}/{r}/issues/{n}/labels/{name}",
            delete(remove_label),
        )
        .route(
            "/repos/{o}/{r}/collaborators/{user}/permission",
            get(permission),
        )
        .route("/repos/{o}/{r}/contents/{*path}", get(contents))
        .merge(github_pulls::routes())
        .merge(github_checks::routes())
        .merge(github_graphql::routes())
}

pub(super) type Repo2 = Path<(String, String)>;
pub(super) type Repo3<T> = Path<(String, String, T)>;

/// The caller, once its credentials are checked: who writes, and whether as an App.
pub(super) struct Caller {
    pub login: &'static str,
    pub app: bool,
}

/// Checks a repository call's credentials and that the repository exists, then runs `f`.
pub(super) fn on_repo(
    shared: &Shared,
    headers: &HeaderMap,
    owner: &str,
    name: &str,
    f: impl FnOnce(&mut State, &str, Caller) -> Response,
) -> Response {
    let mut state = lock(shared);
    let full = format!("{owner}/{name}");
    let Some(repo) = state.repo(Forge::GitHub, &full) else {
        return not_found();
    };
    let installation = repo.installation;
    let Some(token) = header(headers, "authorization").and_then(|h| {
        h.strip_prefix("token ")
            .or_else(|| h.strip_prefix("Bearer "))
            .map(str::to_owned)
    }) else {
        return error(StatusCode::UNAUTHORIZED, "Requires authentication");
    };
    let caller = if token == GITHUB_TOKEN {
        Caller {
            login: TOKEN_LOGIN,
            app: false,
        }
    } else if state.installation_tokens.iter().any(|(t, id, expires)| {
        *t == token && Some(*id) == installation && *expires > chrono::Utc::now()
    }) {
        Caller {
            login: APP_LOGIN,
            app: true,
        }
    } else {
        return error(StatusCode::UNAUTHORIZED, "Bad credentials");
    };
    f(&mut state, &full, caller)
}

/// The App's own calls carry a JWT: three base64url parts. The signature is not checked.
fn app_jwt(headers: &HeaderMap) -> Result<(), Response> {
    let jwt = header(headers, "authorization")
        .and_then(|h| h.strip_prefix("Bearer ").map(str::to_owned))
        .ok_or_else(|| error(StatusCode::UNAUTHORIZED, "Requires authentication"))?;
    let parts: Vec<&str> = jwt.split('.').collect();
    if parts.len() == 3 && parts.iter().all(|p| !p.is_empty()) {
        Ok(())
    } else {
        Err(error(
            StatusCode::UNAUTHORIZED,
            "A JSON web token could not be decoded",
        ))
    }
}

pub(super) fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "Not Found")
}

/// GitHub's 422: `Validation Failed` with the errors it lists.
pub(super) fn invalid(errors: Value) -> Response {
    reply(
        StatusCode::UNPROCESSABLE_ENTITY,
        json!({ "message": "Validation Failed", "errors": errors,
                "documentation_url": "https://docs.github.com/rest" }),
    )
}

pub(super) fn missing_field(resource: &str, field: &str) -> Response {
    invalid(json!([{ "resource": resource, "field": field, "code": "missing_field" }]))
}

pub(super) fn body_json(body: &Bytes) -> Result<Value, Response> {
    parse_body(body).ok_or_else(|| error(StatusCode::BAD_REQUEST, "Problems parsing JSON"))
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
        forge: Forge::GitHub,
        repo: repo.to_owned(),
        method: method.to_owned(),
        path,
        body,
        topic,
    });
}

pub(super) fn user(repo: Option<&Repo>, login: &str) -> Value {
    let id = repo
        .and_then(|r| r.members.get(login))
        .map_or(1, |(id, _)| *id);
    let kind = if login.ends_with("[bot]") {
        "Bot"
    } else {
        "User"
    };
    simple_user(login, id, kind)
}

/// GitHub's `simple-user`: every field its schema requires. The URLs are where github.com
/// has them; nothing in the bot follows them.
pub(super) fn simple_user(login: &str, id: u64, kind: &str) -> Value {
    let api = format!("https://api.github.com/users/{login}");
    json!({
        "login": login, "id": id, "node_id": format!("U_{id}"),
        "avatar_url": format!("https://avatars.githubusercontent.com/u/{id}"),
        "gravatar_id": "", "url": api, "html_url": format!("https://github.com/{login}"),
        "followers_url": format!("{api}/followers"),
        "following_url": format!("{api}/following{{/other_user}}"),
        "gists_url": format!("{api}/gists{{/gist_id}}"),
        "starred_url": format!("{api}/starred{{/owner}}{{/repo}}"),
        "subscriptions_url": format!("{api}/subscriptions"),
        "organizations_url": format!("{api}/orgs"), "repos_url": format!("{api}/repos"),
        "events_url": format!("{api}/events{{/privacy}}"),
        "received_events_url": format!("{api}/received_events"),
        "type": kind, "site_admin": false,
    })
}

pub(super) fn repo_json(state: &State, name: &str) -> Value {
    let repo = state.repo(Forge::GitHub, name);
    let (owner, short) = name.split_once('/').unwrap_or(("", name));
    json!({
        "id": repo.map_or(0, |r| r.id),
        "name": short,
        "full_name": name,
        "owner": simple_user(owner, 1, "Organization"),
        "private": false,
        "html_url": format!("https://github.com/{name}"),
        "url": format!("{}/repos/{name}", state.base_url),
        "default_branch": repo.map_or("main", |r| r.default_branch.as_str()),
    })
}

async fn get_repo(AxumState(s): AxumState<Shared>, h: HeaderMap, Path((o, r)): Repo2) -> Response {
    on_repo(&s, &h, &o, &r, |state, full, _| {
        reply(StatusCode::OK, repo_json(state, full))
    })
}

/// `GET /app`: the seeded App, to a JWT its key signed (RS256, `iss` its id, not expired).
async fn get_app(AxumState(s): AxumState<Shared>, h: HeaderMap) -> Response {
    let state = lock(&s);
    let Some(app) = state.app.clone() else {
        return not_found();
    };
    let Some(jwt) =
        header(&h, "authorization").and_then(|v| v.strip_prefix("Bearer ").map(str::to_owned))
    else {
        return error(StatusCode::UNAUTHORIZED, "Requires authentication");
    };
    let public = std::fs::read(super::APP_PUBLIC_KEY).expect("the test App's public key");
    let key = jsonwebtoken::DecodingKey::from_rsa_pem(&public).expect("a public key");
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    validation.set_issuer(&[app.id.to_string()]);
    validation.set_required_spec_claims(&["iss", "iat", "exp"]);
    if jsonwebtoken::decode::<serde_json::Value>(&jwt, &key, &validation).is_err() {
        return error(
            StatusCode::UNAUTHORIZED,
            "A JSON web token could not be decoded",
        );
    }
    let installations: std::collections::BTreeSet<u64> = state
        .repos
        .iter()
        .filter(|r| r.forge == Forge::GitHub)
        .filter_map(|r| r.installation)
        .collect();
    reply(
        StatusCode::OK,
        json!({ "id": app.id, "slug": app.slug, "node_id": format!("A_{}", app.id),
                "client_id": "Iv1.fakeforge", "owner": simple_user("acme", 1, "Organization"),
                "name": "forgeward", "description": "", "external_url": "https://forgeward.example",
                "html_url": format!("https://github.com/apps/{}", app.slug),
                "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
                "permissions": app.permissions, "events": app.events,
                "installations_count": installations.len() }),
    )
}

/// `GET /user`: the personal token's user, with a classic token's `X-OAuth-Scopes`. An App's
/// installation token has no user (GitHub: 403).
async fn get_user(AxumState(s): AxumState<Shared>, h: HeaderMap) -> Response {
    let state = lock(&s);
    let token = header(&h, "authorization").and_then(|v| {
        v.strip_prefix("token ")
            .or_else(|| v.strip_prefix("Bearer "))
            .map(str::to_owned)
    });
    match token.as_deref() {
        Some(GITHUB_TOKEN) => {}
        Some(t) if state.installation_tokens.iter().any(|(it, _, _)| it == t) => {
            return error(
                StatusCode::FORBIDDEN,
                "Resource not accessible by integration",
            );
        }
        Some(_) => return error(StatusCode::UNAUTHORIZED, "Bad credentials"),
        None => return error(StatusCode::UNAUTHORIZED, "Requires authentication"),
    }
    let mut response = reply(StatusCode::OK, simple_user(TOKEN_LOGIN, 77, "User"));
    response
        .headers_mut()
        .insert("x-oauth-scopes", HeaderValue::from_static("repo, read:org"));
    response
}

async fn get_installation(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r)): Repo2,
) -> Response {
    if let Err(refused) = app_jwt(&h) {
        return refused;
    }
    let state = lock(&s);
    let Some(id) = state
        .repo(Forge::GitHub, &format!("{o}/{r}"))
        .and_then(|repo| repo.installation)
    else {
        return not_found();
    };
    reply(
        StatusCode::OK,
        json!({ "id": id, "app_id": APP_ID, "app_slug": "forgeward",
                "account": simple_user(&o, 1, "Organization"), "events": ["issues", "issue_comment", "pull_request"],
                "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
                "target_type": "Organization", "repository_selection": "selected",
                "permissions": { "issues": "write", "pull_requests": "write" } }),
    )
}

async fn access_token(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path(id): Path<u64>,
) -> Response {
    if let Err(refused) = app_jwt(&h) {
        return refused;
    }
    let mut state = lock(&s);
    if !state.repos.iter().any(|r| r.installation == Some(id)) {
        return not_found();
    }
    let token = format!("ghs_fake{id}x{}", state.next_id());
    let lifetime = state.token_lifetime.unwrap_or(chrono::Duration::hours(1));
    let expires = chrono::Utc::now() + lifetime;
    state.installation_tokens.push((token.clone(), id, expires));
    reply(
        StatusCode::CREATED,
        json!({ "token": token,
                "expires_at": expires.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                "permissions": { "issues": "write", "pull_requests": "write",
                                 "contents": "write", "statuses": "write", "checks": "write" },
                "repository_selection": "selected" }),
    )
}

pub(super) fn labels_json(labels: &[String]) -> Value {
    Value::Array(
        labels
            .iter()
            .enumerate()
            .map(|(i, name)| {
                json!({ "id": i + 1, "node_id": format!("LA_{i}"), "name": name, "color": "ededed",
                        "default": false, "description": null,
                        "url": format!("https://api.github.com/labels/{}", i + 1) })
            })
            .collect(),
    )
}

async fn get_issue(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, n)): Repo3<u64>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full, _| {
        let repo = state.repo(Forge::GitHub, full).expect("checked");
        // GitHub's issues API answers for pull requests too, marked by `pull_request`.
        let (title, body, author, labels, pull) = if let Some(i) = repo.issues.get(&n) {
            (&i.title, &i.body, &i.author, &i.labels, false)
        } else if let Some(p) = repo.pulls.get(&n) {
            (&p.title, &p.body, &p.author, &p.labels, true)
        } else {
            return not_found();
        };
        let comments = state
            .comments
            .iter()
            .filter(|c| c.repo == full && c.number == n && c.position.is_none())
            .count();
        let url = format!("{}/repos/{full}/issues/{n}", state.base_url);
        let mut issue = json!({
            "id": 100_000 + n, "node_id": format!("I_{n}"), "number": n, "state": "open",
            "title": title, "body": body, "user": user(Some(repo), author),
            "labels": labels_json(labels), "assignee": null, "assignees": [],
            "locked": false, "comments": comments, "author_association": "COLLABORATOR",
            "repository_url": format!("{}/repos/{full}", state.base_url),
            "labels_url": format!("{url}/labels{{/name}}"),
            "comments_url": format!("{url}/comments"), "events_url": format!("{url}/events"),
            "url": url, "html_url": format!("https://github.com/{full}/issues/{n}"),
            "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
        });
        if pull {
            let html = format!("https://github.com/{full}/pull/{n}");
            issue["pull_request"] = json!({
                "url": format!("{}/repos/{full}/pulls/{n}", state.base_url),
                "html_url": html, "diff_url": format!("{html}.diff"),
                "patch_url": format!("{html}.patch"),
            });
        }
        reply(StatusCode::OK, issue)
    })
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

pub(super) fn comment_json(state: &State, c: &Comment) -> Value {
    let repo = state.repo(Forge::GitHub, &c.repo);
    let mut json = json!({
        "id": c.id, "node_id": format!("IC_{}", c.id), "body": c.body,
        "user": user(repo, &c.author),
        "url": format!("{}/repos/{}/issues/comments/{}", state.base_url, c.repo, c.id),
        "html_url": format!("https://github.com/{}/issues/{}#issuecomment-{}", c.repo, c.number, c.id),
        "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
        "author_association": "COLLABORATOR",
    });
    if let Some(p) = &c.position {
        let url = format!(
            "{}/repos/{}/pulls/comments/{}",
            state.base_url, c.repo, c.id
        );
        let html = format!(
            "https://github.com/{}/pull/{}#discussion_r{}",
            c.repo, c.number, c.id
        );
        let pull = format!("{}/repos/{}/pulls/{}", state.base_url, c.repo, c.number);
        json["node_id"] = json!(format!("PRRC_{}", c.id));
        json["path"] = json!(p.path);
        json["line"] = json!(p.line);
        json["original_line"] = json!(p.line);
        json["side"] = json!("RIGHT");
        json["commit_id"] = json!(p.commit);
        json["original_commit_id"] = json!(p.commit);
        json["diff_hunk"] = json!("@@ -1,1 +1,1 @@");
        json["pull_request_review_id"] = json!(c.discussion);
        json["pull_request_url"] = json!(pull);
        json["_links"] = json!({ "self": { "href": url }, "html": { "href": html },
                                 "pull_request": { "href": pull } });
        json["url"] = json!(url);
        json["html_url"] = json!(html);
    }
    json
}

/// `value` percent-encoded for a query string.
fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// One page of `items` as GitHub pages lists: `per_page` (30 by default, at most 100) and
/// `page`, with a `Link` header naming the next, last, first and previous pages.
pub(super) fn paginate(
    base: &str,
    path: &str,
    query: &HashMap<String, String>,
    items: Vec<Value>,
) -> Response {
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
    let last = items.len().div_ceil(per_page).max(1);
    let slice: Vec<Value> = items
        .into_iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .collect();
    // The other parameters (`state`, `head`) are kept in every link, as GitHub keeps them.
    let mut kept: Vec<(&String, &String)> = query
        .iter()
        .filter(|(k, _)| *k != "per_page" && *k != "page")
        .collect();
    kept.sort();
    let kept: String = kept
        .into_iter()
        .map(|(k, v)| format!("{}={}&", encode(k), encode(v)))
        .collect();
    let link = |p: usize, rel: &str| {
        format!("<{base}{path}?{kept}per_page={per_page}&page={p}>; rel=\"{rel}\"")
    };
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
    if let Ok(value) = HeaderValue::try_from(links.join(", "))
        && !links.is_empty()
    {
        response.headers_mut().insert("link", value);
    }
    response
}

async fn list_comments(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, n)): Repo3<u64>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full, _| {
        let repo = state.repo(Forge::GitHub, full).expect("checked");
        if thread_kind(repo, n).is_none() {
            return not_found();
        }
        let items = state
            .comments
            .iter()
            .filter(|c| c.repo == full && c.number == n && c.position.is_none())
            .map(|c| comment_json(state, c))
            .collect();
        let path = format!("/repos/{full}/issues/{n}/comments");
        paginate(&state.base_url, &path, &q, items)
    })
}

async fn create_comment(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, n)): Repo3<u64>,
    body: Bytes,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full, caller| {
        let Some(kind) = thread_kind(state.repo(Forge::GitHub, full).expect("checked"), n) else {
            return not_found();
        };
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        let Some(text) = request["body"].as_str() else {
            return missing_field("IssueComment", "body");
        };
        let id = state.next_id();
        let comment = Comment {
            id,
            repo: full.to_owned(),
            kind,
            number: n,
            author: caller.login.to_owned(),
            body: text.to_owned(),
            reactions: Vec::new(),
            position: None,
            discussion: id,
            system: false,
        };
        let answer = comment_json(state, &comment);
        state.comments.push(comment);
        let path = format!("/repos/{full}/issues/{n}/comments");
        queue(state, full, "POST", path, request, Topic::Comments(kind, n));
        reply(StatusCode::CREATED, answer)
    })
}

async fn update_comment(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, id)): Repo3<u64>,
    body: Bytes,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full, _| {
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        let Some(text) = request["body"].as_str().map(str::to_owned) else {
            return missing_field("IssueComment", "body");
        };
        let Some(comment) = state.comment_mut(full, id).filter(|c| c.position.is_none()) else {
            return not_found();
        };
        comment.body = text;
        let (kind, n) = (comment.kind, comment.number);
        let answer = comment_json(
            state,
            &state
                .comments
                .iter()
                .find(|c| c.id == id)
                .expect("found")
                .clone(),
        );
        let path = format!("/repos/{full}/issues/comments/{id}");
        queue(
            state,
            full,
            "PATCH",
            path,
            request,
            Topic::Comments(kind, n),
        );
        reply(StatusCode::OK, answer)
    })
}

async fn react(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, id)): Repo3<u64>,
    body: Bytes,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full, caller| {
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        let content = request["content"].as_str().unwrap_or_default().to_owned();
        if !REACTIONS.contains(&content.as_str()) {
            return invalid(
                json!([{ "resource": "Reaction", "field": "content", "code": "invalid" }]),
            );
        }
        let reaction_id = state.next_id();
        let Some(comment) = state.comment_mut(full, id) else {
            return not_found();
        };
        let who = caller.login.to_owned();
        let answer = json!({ "id": reaction_id, "content": content,
                             "node_id": format!("REA_{reaction_id}"),
                             "user": user(None, &who),
                             "created_at": "2026-01-01T00:00:00Z" });
        // A reaction already there is answered 200 and changes nothing.
        if comment.reactions.contains(&(who.clone(), content.clone())) {
            return reply(StatusCode::OK, answer);
        }
        comment.reactions.push((who, content));
        let topic = Topic::Comments(comment.kind, comment.number);
        let path = format!("/repos/{full}/issues/comments/{id}/reactions");
        queue(state, full, "POST", path, request, topic);
        reply(StatusCode::CREATED, answer)
    })
}

async fn add_labels(
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
        let Some(names) = request["labels"].as_array().and_then(|a| {
            a.iter()
                .map(|l| l.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        }) else {
            return missing_field("Label", "labels");
        };
        let repo = state.repo_mut(Forge::GitHub, full).expect("checked");
        let Some(kind) = thread_kind(repo, n) else {
            return not_found();
        };
        let labels = repo.labels_mut(kind, n).expect("the thread exists");
        for name in names {
            if !labels.contains(&name) {
                labels.push(name);
            }
        }
        let answer = labels_json(labels);
        let path = format!("/repos/{full}/issues/{n}/labels");
        queue(state, full, "POST", path, request, Topic::Labels(kind, n));
        reply(StatusCode::OK, answer)
    })
}

async fn remove_label(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, n, name)): Path<(String, String, u64, String)>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full, _| {
        let repo = state.repo_mut(Forge::GitHub, full).expect("checked");
        let Some(kind) = thread_kind(repo, n) else {
            return not_found();
        };
        let labels = repo.labels_mut(kind, n).expect("the thread exists");
        let Some(at) = labels.iter().position(|l| *l == name) else {
            return error(StatusCode::NOT_FOUND, "Label does not exist");
        };
        labels.remove(at);
        let answer = labels_json(labels);
        let path = format!("/repos/{full}/issues/{n}/labels/{name}");
        queue(
            state,
            full,
            "DELETE",
            path,
            Value::Null,
            Topic::Labels(kind, n),
        );
        reply(StatusCode::OK, answer)
    })
}

async fn permission(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, login)): Repo3<String>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full, _| {
        let repo = state.repo(Forge::GitHub, full).expect("checked");
        // The fake knows only the collaborators a test seeded; anyone else is not a user.
        let Some((id, permission)) = repo.members.get(&login) else {
            return not_found();
        };
        let (legacy, role) = match permission {
            Permission::Admin => ("admin", "admin"),
            Permission::Maintain => ("write", "maintain"),
            Permission::Write => ("write", "write"),
            Permission::Triage => ("read", "triage"),
            Permission::Read => ("read", "read"),
            Permission::None => ("none", "none"),
        };
        reply(
            StatusCode::OK,
            json!({ "permission": legacy, "role_name": role,
                    "user": simple_user(&login, *id, "User") }),
        )
    })
}

async fn contents(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((o, r, path)): Repo3<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    on_repo(&s, &h, &o, &r, |state, full, _| {
        let repo = state.repo(Forge::GitHub, full).expect("checked");
        let revision = q.get("ref").cloned().unwrap_or(repo.default_branch.clone());
        let Some(bytes) = repo.file_at(&revision, &path) else {
            return not_found();
        };
        // GitHub wraps the base64 at 60 characters, as MIME does.
        let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
        let wrapped: Vec<String> = encoded
            .as_bytes()
            .chunks(60)
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .collect();
        let name = path.rsplit('/').next().unwrap_or(&path);
        reply(
            StatusCode::OK,
            json!({ "type": "file", "encoding": "base64", "size": bytes.len(),
                    "name": name, "path": path, "content": wrapped.join("\n") + "\n",
                    "sha": super::state::sha_of(&format!("{revision}:{path}")),
                    "url": format!("{}/repos/{full}/contents/{path}?ref={revision}", state.base_url),
                    "html_url": format!("https://github.com/{full}/blob/{revision}/{path}"),
                    "git_url": null, "download_url": null,
                    "_links": { "self": format!("{}/repos/{full}/contents/{path}?ref={revision}", state.base_url),
                                "git": null,
                                "html": format!("https://github.com/{full}/blob/{revision}/{path}") } }),
        )
    })
}
