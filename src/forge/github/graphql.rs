//! What GitHub's REST API cannot do, through its GraphQL API: a pull request's review threads
//! (REST gives the comments, not the threads they belong to, nor whether a thread is
//! resolved) and resolving one (`resolveReviewThread`).
//!
//! GraphQL lives beside REST: `https://api.github.com/graphql` for GitHub's own API, and
//! `https://HOST/api/graphql` for GitHub Enterprise Server's `https://HOST/api/v3`
//! ([`graphql_url`](super::http::graphql_url)). A GraphQL answer reports its failures in an `errors` list beside a 200,
//! which become the same [`ForgeErrorKind`]s a REST call's status would.

use http::Method;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::client::{Client, failure};
use crate::forge::api::{ForgeErrorKind, ForgeResult, PostedFlag};
use crate::forge::http::decode;
use crate::forge::{Number, RepoName};

/// Threads asked for per page; GitHub's most.
const PER_PAGE: u32 = 100;

/// Pages of threads read before giving up (10 000 threads).
const MAX_PAGES: usize = 100;

const THREADS: &str =
    "query($owner: String!, $name: String!, $number: Int!, $first: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: $first, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id isResolved path line originalLine
          comments(first: 1) { nodes { body } }
        }
      }
    }
  }
}";

const RESOLVE: &str = "mutation($thread: ID!) {
  resolveReviewThread(input: {threadId: $thread}) { thread { id isResolved } }
}";

#[derive(Deserialize)]
struct Answer<T> {
    data: Option<T>,
    #[serde(default)]
    errors: Vec<GraphqlError>,
}

#[derive(Deserialize)]
struct GraphqlError {
    #[serde(rename = "type")]
    kind: Option<String>,
    message: String,
}

#[derive(Deserialize)]
struct ThreadsData {
    repository: Option<RepositoryNode>,
}

#[derive(Deserialize)]
struct RepositoryNode {
    #[serde(rename = "pullRequest")]
    pull_request: Option<PullNode>,
}

#[derive(Deserialize)]
struct PullNode {
    #[serde(rename = "reviewThreads")]
    review_threads: Connection<ThreadNode>,
}

#[derive(Deserialize)]
struct Connection<T> {
    #[serde(rename = "pageInfo", default)]
    page_info: Option<PageInfo>,
    nodes: Vec<T>,
}

#[derive(Deserialize)]
struct PageInfo {
    #[serde(rename = "hasNextPage")]
    has_next_page: bool,
    #[serde(rename = "endCursor")]
    end_cursor: Option<String>,
}

#[derive(Deserialize)]
struct ThreadNode {
    id: String,
    #[serde(rename = "isResolved")]
    is_resolved: bool,
    path: String,
    line: Option<u32>,
    #[serde(rename = "originalLine")]
    original_line: Option<u32>,
    comments: Connection<CommentNode>,
}

#[derive(Deserialize)]
struct CommentNode {
    body: String,
}

#[derive(Deserialize)]
struct ResolveData {
    #[serde(rename = "resolveReviewThread")]
    resolve: Option<Value>,
}

impl Client {
    /// The review threads of pull request `number`, each as its first comment: a thread on
    /// lines a later push changed has no `line` any more, and its `originalLine` is where it
    /// was posted, which is what a repeated flag would match.
    pub(super) async fn review_threads(
        &self,
        repo: &RepoName,
        number: Number,
    ) -> ForgeResult<Vec<PostedFlag>> {
        const CALL: &str = "POST /graphql (reviewThreads)";
        let (owner, name) = repo.0.split_once('/').ok_or_else(|| {
            failure(
                repo,
                CALL,
                ForgeErrorKind::Invalid(format!("'{repo}' is not owner/name")),
            )
        })?;
        let mut flags = Vec::new();
        let mut after: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let variables = json!({
                "owner": owner, "name": name, "number": number.0, "first": PER_PAGE,
                "after": after,
            });
            let data: ThreadsData = self.graphql(repo, CALL, THREADS, variables).await?;
            let threads = data
                .repository
                .and_then(|r| r.pull_request)
                .ok_or_else(|| failure(repo, CALL, ForgeErrorKind::NotFound))?
                .review_threads;
            flags.extend(threads.nodes.into_iter().filter_map(|t| {
                let first = t.comments.nodes.into_iter().next()?;
                Some(PostedFlag {
                    thread: t.id,
                    path: t.path,
                    line: t.line.or(t.original_line),
                    body: first.body,
                    resolved: t.is_resolved,
                })
            }));
            match threads.page_info {
                Some(PageInfo {
                    has_next_page: true,
                    end_cursor: Some(cursor),
                }) => after = Some(cursor),
                _ => return Ok(flags),
            }
        }
        Err(failure(
            repo,
            CALL,
            ForgeErrorKind::Decode(format!(
                "more than {} review threads",
                MAX_PAGES as u32 * PER_PAGE
            )),
        ))
    }

    /// Resolves the review thread `thread` (a node id).
    pub(super) async fn resolve_thread(&self, repo: &RepoName, thread: &str) -> ForgeResult<()> {
        const CALL: &str = "POST /graphql (resolveReviewThread)";
        let data: ResolveData = self
            .graphql(repo, CALL, RESOLVE, json!({ "thread": thread }))
            .await?;
        match data.resolve {
            Some(_) => Ok(()),
            None => Err(failure(repo, CALL, ForgeErrorKind::NotFound)),
        }
    }

    /// One GraphQL request on `repo`'s behalf (its installation's token, as a REST call on it
    /// would carry), its `data` decoded, its `errors` an error.
    async fn graphql<T: DeserializeOwned>(
        &self,
        repo: &RepoName,
        call: &'static str,
        query: &str,
        variables: Value,
    ) -> ForgeResult<T> {
        let body = json!({ "query": query, "variables": variables });
        let answer = self
            .send_to(
                &self.graphql,
                repo,
                call,
                Method::POST,
                "/graphql",
                Some(body),
            )
            .await?;
        let answer: Answer<T> = decode(&answer.body).map_err(|kind| failure(repo, call, kind))?;
        if let Some(error) = answer.errors.into_iter().next() {
            return Err(failure(repo, call, error_kind(error)));
        }
        answer.data.ok_or_else(|| {
            failure(
                repo,
                call,
                ForgeErrorKind::Decode("a GraphQL answer with neither data nor errors".to_owned()),
            )
        })
    }
}

/// What a GraphQL error's `type` means, as a REST status would say it.
fn error_kind(error: GraphqlError) -> ForgeErrorKind {
    let message = crate::text::one_line(&error.message);
    match error.kind.as_deref() {
        Some("NOT_FOUND") => ForgeErrorKind::NotFound,
        Some("FORBIDDEN") => ForgeErrorKind::Forbidden(message),
        _ => ForgeErrorKind::Invalid(message),
    }
}
