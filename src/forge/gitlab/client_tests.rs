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
