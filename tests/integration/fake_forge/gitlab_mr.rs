//! The fake forge's GitLab merge requests and their discussions: one merge request per open
//! source branch (a second is GitLab's 409), draft by title prefix, `diff_refs` on the merge
//! request itself but not in lists, and diff discussions whose position must name the merge
//! request's current `diff_refs` and a line in its diff, and which may be resolved.

use std::collections::HashMap;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{OriginalUri, Path, Query, State as AxumState};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, put};
use serde_json::{Value, json};

use super::gitlab::{
    BOT_USER, body_json, edit_labels, missing, note_json, on_project, paginate, path_of, project,
    project_mut, queue, user,
};
use super::state::{Comment, Kind, Position, Pull, Repo, State, Topic, sha_of};
use super::{Shared, error, reply};

pub fn routes() -> Router<Shared> {
    Router::new()
        .route("/projects/{id}/merge_requests", get(list).post(create))
        .route(
            "/projects/{id}/merge_requests/{iid}",
            get(get_one).put(update),
        )
        .route(
            "/projects/{id}/merge_requests/{iid}/discussions",
            get(discussions).post(create_discussion),
        )
        .route(
            "/projects/{id}/merge_requests/{iid}/discussions/{discussion}",
            put(resolve_discussion),
        )
}

fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "404 Merge Request Not Found")
}

/// GitLab makes a merge request a draft by its title.
fn is_draft(title: &str) -> bool {
    let lower = title.trim_start().to_ascii_lowercase();
    ["draft:", "[draft]", "(draft)"]
        .iter()
        .any(|prefix| lower.starts_with(prefix))
}

fn mr_json(state: &State, repo: &Repo, iid: u64, with_diff_refs: bool) -> Value {
    let mr = &repo.pulls[&iid];
    let source_id = if mr.head_repo == repo.name {
        Some(repo.id)
    } else {
        state
            .repo(forgeward::forge::Forge::GitLab, &mr.head_repo)
            .map(|r| r.id)
    };
    let mut json = json!({
        "id": 200_000 + iid, "iid": iid, "project_id": repo.id, "title": mr.title,
        "description": mr.body, "state": if mr.open { "opened" } else { "closed" },
        "source_branch": mr.head_branch, "target_branch": mr.base_branch,
        "source_project_id": source_id, "target_project_id": repo.id,
        "labels": mr.labels, "draft": mr.draft, "work_in_progress": mr.draft,
        "author": user(repo, &mr.author), "sha": mr.head_sha,
        "merge_status": "can_be_merged", "detailed_merge_status": "mergeable",
        "web_url": format!("https://gitlab.example/{}/-/merge_requests/{iid}", repo.name),
        "references": { "short": format!("!{iid}") },
    });
    if with_diff_refs {
        json["diff_refs"] = json!({
            "base_sha": mr.base_sha, "head_sha": mr.head_sha, "start_sha": mr.base_sha,
        });
    }
    json
}

async fn get_one(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((id, iid)): Path<(String, u64)>,
) -> Response {
    on_project(&s, &h, &id, |state, path| {
        let repo = project(state, path);
        if !repo.pulls.contains_key(&iid) {
            return not_found();
        }
        reply(StatusCode::OK, mr_json(state, repo, iid, true))
    })
}

async fn list(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    on_project(&s, &h, &id, |state, path| {
        let repo = project(state, path);
        let wanted = q.get("state").map_or("all", String::as_str);
        let items = repo
            .pulls
            .iter()
            .filter(|(_, mr)| match wanted {
                "opened" => mr.open,
                "closed" => !mr.open,
                _ => true,
            })
            .filter(|(_, mr)| q.get("source_branch").is_none_or(|b| *b == mr.head_branch))
            .map(|(iid, _)| mr_json(state, repo, *iid, false))
            .rev()
            .collect();
        paginate(&q, items)
    })
}

async fn create(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    uri: OriginalUri,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    on_project(&s, &h, &id, |state, path| {
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        for field in ["source_branch", "target_branch", "title"] {
            if request[field].as_str().is_none_or(str::is_empty) {
                return missing(field);
            }
        }
        let field = |name: &str| request[name].as_str().unwrap_or_default().to_owned();
        let (source, target, title) = (
            field("source_branch"),
            field("target_branch"),
            field("title"),
        );
        let repo = project_mut(state, path);
        let Some(head_sha) = repo.branch_sha(&source) else {
            let message = format!("Source branch \"{source}\" does not exist");
            return reply(StatusCode::BAD_REQUEST, json!({ "message": [message] }));
        };
        let Some(base_sha) = repo.branch_sha(&target) else {
            let message = format!("Target branch \"{target}\" does not exist");
            return reply(StatusCode::BAD_REQUEST, json!({ "message": [message] }));
        };
        if let Some((iid, _)) = repo
            .pulls
            .iter()
            .find(|(_, mr)| mr.open && mr.head_branch == source)
        {
            let message =
                format!("Another open merge request already exists for this source branch: !{iid}");
            return reply(StatusCode::CONFLICT, json!({ "message": [message] }));
        }
        let iid = repo.next_number(Kind::Pull);
        repo.pulls.insert(
            iid,
            Pull {
                draft: is_draft(&title),
                title,
                body: field("description"),
                author: BOT_USER.to_owned(),
                labels: Vec::new(),
                head_branch: source.clone(),
                head_sha,
                head_repo: path.to_owned(),
                base_branch: target,
                base_sha,
                open: true,
                commentable: None,
                reviews: Vec::new(),
            },
        );
        let answer = mr_json(state, project(state, path), iid, true);
        queue(
            state,
            path,
            "POST",
            path_of(&uri),
            request,
            Topic::PullRequest(source),
        );
        reply(StatusCode::CREATED, answer)
    })
}

/// Title, description and labels; a title change sets draft by its prefix.
async fn update(
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
        let Some(mr) = repo.pulls.get_mut(&iid) else {
            return not_found();
        };
        if let Some(title) = request["title"].as_str() {
            mr.title = title.to_owned();
            mr.draft = is_draft(title);
        }
        if let Some(description) = request["description"].as_str() {
            mr.body = description.to_owned();
        }
        let branch = mr.head_branch.clone();
        let edits_labels =
            request.get("add_labels").is_some() || request.get("remove_labels").is_some();
        edit_labels(repo, Kind::Pull, iid, &request);
        let answer = mr_json(state, project(state, path), iid, true);
        let topic = if edits_labels {
            Topic::Labels(Kind::Pull, iid)
        } else {
            Topic::PullRequest(branch)
        };
        queue(state, path, "PUT", path_of(&uri), request, topic);
        reply(StatusCode::OK, answer)
    })
}

/// A discussion's id: 40 hex digits, as GitLab's.
fn discussion_id(first_note: u64) -> String {
    sha_of(&format!("discussion {first_note}"))
}

fn discussion_json(repo: &Repo, notes: &[&Comment]) -> Value {
    let first = notes.first().map_or(0, |n| n.discussion);
    json!({
        "id": discussion_id(first),
        "individual_note": notes.len() == 1 && notes[0].position.is_none(),
        "notes": notes.iter().map(|n| note_json(repo, n)).collect::<Vec<_>>(),
    })
}

async fn discussions(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    Path((id, iid)): Path<(String, u64)>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    on_project(&s, &h, &id, |state, path| {
        let repo = project(state, path);
        if !repo.pulls.contains_key(&iid) {
            return not_found();
        }
        let mut grouped: Vec<(u64, Vec<&Comment>)> = Vec::new();
        for note in state
            .comments
            .iter()
            .filter(|c| c.repo == path && c.kind == Kind::Pull && c.number == iid)
        {
            match grouped.iter_mut().find(|(d, _)| *d == note.discussion) {
                Some((_, notes)) => notes.push(note),
                None => grouped.push((note.discussion, vec![note])),
            }
        }
        let items = grouped
            .iter()
            .map(|(_, notes)| discussion_json(repo, notes))
            .collect();
        paginate(&q, items)
    })
}

/// GitLab's refusal of a position it cannot place on a line of the diff.
fn bad_position() -> Response {
    error(
        StatusCode::BAD_REQUEST,
        "400 Bad request - Note {:line_code=>[\"can't be blank\", \"must be a valid line code\"]}",
    )
}

async fn create_discussion(
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
        let Some(mr) = project(state, path).pulls.get(&iid) else {
            return not_found();
        };
        let Some(text) = request["body"]
            .as_str()
            .filter(|b| !b.is_empty())
            .map(str::to_owned)
        else {
            return missing("body");
        };
        let position = match request.get("position") {
            None => None,
            Some(p) => {
                if p["position_type"].as_str() != Some("text") {
                    return missing("position[position_type]");
                }
                let sha = |key: &str| p[key].as_str().unwrap_or_default().to_owned();
                let (base, start, head) = (sha("base_sha"), sha("start_sha"), sha("head_sha"));
                let Some(new_path) = p["new_path"].as_str().map(str::to_owned) else {
                    return missing("position[new_path]");
                };
                let line = p["new_line"].as_u64().and_then(|l| u32::try_from(l).ok());
                // The position must be on the merge request's current diff, at a line in it.
                if base != mr.base_sha || start != mr.base_sha || head != mr.head_sha {
                    return bad_position();
                }
                if line.is_none_or(|line| !mr.may_comment(&new_path, line)) {
                    return bad_position();
                }
                Some(Position {
                    path: new_path,
                    line,
                    commit: head,
                    base_sha: base,
                    start_sha: start,
                    resolved: false,
                })
            }
        };
        let note_id = state.next_id();
        let comment = Comment {
            id: note_id,
            repo: path.to_owned(),
            kind: Kind::Pull,
            number: iid,
            author: BOT_USER.to_owned(),
            body: text,
            reactions: Vec::new(),
            position,
            discussion: note_id,
            system: false,
        };
        let answer = discussion_json(project(state, path), &[&comment]);
        state.comments.push(comment);
        queue(
            state,
            path,
            "POST",
            path_of(&uri),
            request,
            Topic::Review(iid),
        );
        reply(StatusCode::CREATED, answer)
    })
}

/// `PUT …/discussions/:discussion_id` with `resolved`: resolves (or reopens) every note of a
/// resolvable discussion; GitLab refuses one that cannot be resolved.
async fn resolve_discussion(
    AxumState(s): AxumState<Shared>,
    h: HeaderMap,
    uri: OriginalUri,
    Path((id, iid, discussion)): Path<(String, u64, String)>,
    body: Bytes,
) -> Response {
    on_project(&s, &h, &id, |state, path| {
        let request = match body_json(&body) {
            Ok(v) => v,
            Err(refused) => return refused,
        };
        let Some(resolved) = request["resolved"].as_bool() else {
            return missing("resolved");
        };
        if !project(state, path).pulls.contains_key(&iid) {
            return not_found();
        }
        let mut notes: Vec<&mut Comment> = state
            .comments
            .iter_mut()
            .filter(|c| c.repo == path && c.kind == Kind::Pull && c.number == iid)
            .filter(|c| discussion_id(c.discussion) == discussion)
            .collect();
        if notes.is_empty() {
            return error(StatusCode::NOT_FOUND, "404 Discussion Not Found");
        }
        if notes.iter().any(|n| n.position.is_none()) {
            return error(
                StatusCode::BAD_REQUEST,
                "400 Bad request - Discussion is not resolvable",
            );
        }
        for note in &mut notes {
            if let Some(p) = note.position.as_mut() {
                p.resolved = resolved;
            }
        }
        let notes: Vec<Comment> = notes.into_iter().map(|n| n.clone()).collect();
        let answer = discussion_json(project(state, path), &notes.iter().collect::<Vec<_>>());
        queue(
            state,
            path,
            "PUT",
            path_of(&uri),
            request,
            Topic::Review(iid),
        );
        reply(StatusCode::OK, answer)
    })
}
