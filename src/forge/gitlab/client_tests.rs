//! The GitLab client's pure parts: roles from access levels, draft titles, the review's note.

use super::*;

#[test]
fn access_levels_map_to_roles() {
    assert_eq!(permission_of(0), Permission::None);
    assert_eq!(permission_of(5), Permission::None);
    assert_eq!(permission_of(10), Permission::Read);
    assert_eq!(permission_of(15), Permission::Read);
    assert_eq!(permission_of(20), Permission::Triage);
    assert_eq!(permission_of(30), Permission::Write);
    assert_eq!(permission_of(40), Permission::Maintain);
    assert_eq!(permission_of(50), Permission::Admin);
    assert!(!permission_of(20).may_trigger());
    assert!(permission_of(30).may_trigger());
}

fn spec(title: &str, draft: bool) -> PullRequestSpec {
    PullRequestSpec {
        head_branch: "forgeward/issue-7".into(),
        base_branch: "main".into(),
        title: title.into(),
        body: String::new(),
        draft,
    }
}

#[test]
fn a_draft_is_a_title_prefix_given_once() {
    assert_eq!(title_of(&spec("Fix it", true)), "Draft: Fix it");
    assert_eq!(title_of(&spec("Draft: Fix it", true)), "Draft: Fix it");
    assert_eq!(title_of(&spec("Draft: Fix it", false)), "Fix it");
    assert_eq!(title_of(&spec("Fix it", false)), "Fix it");
}

#[test]
fn flags_without_a_line_follow_the_body() {
    let flag = ReviewFlag {
        path: "tests/test_x.py".into(),
        line: None,
        side: crate::forge::api::Side::New,
        body: "A skip marker.\n".into(),
    };
    assert_eq!(
        review_body("Two flags.\n", &[&flag]),
        "Two flags.\n\n**`tests/test_x.py`**\n\nA skip marker."
    );
    assert_eq!(review_body("", &[]), "");
}

#[test]
fn the_token_never_shows_in_debug() {
    let config = GitlabConfig {
        url: "https://gitlab.example".into(),
        git_url: "https://gitlab.example".into(),
        token: Secret::new("glpat-secret".into()),
    };
    assert!(!format!("{config:?}").contains("glpat-secret"));
}

fn offline_client() -> Client {
    Client::new(GitlabConfig {
        url: "http://127.0.0.1:9".into(),
        git_url: "http://127.0.0.1:9".into(),
        token: Secret::new("t".into()),
    })
    .expect("a client")
}

fn merge_request(patch: serde_json::Value) -> MergeRequestJson {
    let mut mr = json!({
        "iid": 3, "title": "Fix", "web_url": "https://gitlab.example/g/p/-/merge_requests/3",
        "source_branch": "feature", "target_branch": "main", "project_id": 27,
        "source_project_id": 27, "sha": "abc", "draft": false,
        "diff_refs": { "base_sha": "b", "start_sha": "s", "head_sha": "abc" },
    });
    for (key, value) in patch.as_object().expect("an object") {
        mr[key] = value.clone();
    }
    serde_json::from_value(mr).expect("a merge request")
}

#[tokio::test]
async fn a_new_merge_request_may_lack_its_diff_refs() {
    let repo = RepoName("g/p".into());
    let mr = offline_client()
        .neutral_pull_request(&repo, merge_request(json!({ "diff_refs": null })))
        .await
        .expect("no call needed");
    assert_eq!(mr.base_sha, CommitSha(String::new()));
    assert_eq!(mr.start_sha, CommitSha(String::new()));
    assert_eq!(mr.head_sha, CommitSha("abc".into()));
    assert_eq!(mr.head_repo, repo);
}

#[tokio::test]
async fn a_merge_request_from_a_deleted_fork_has_no_head_repo() {
    let repo = RepoName("g/p".into());
    let mr = offline_client()
        .neutral_pull_request(&repo, merge_request(json!({ "source_project_id": null })))
        .await
        .expect("no call needed");
    assert_eq!(mr.head_repo, RepoName(String::new()));
    assert_eq!(mr.start_sha, CommitSha("s".into()));
}
