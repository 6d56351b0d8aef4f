//! The list of jobs: newest first, [`PAGE_SIZE`] a page, filtered by repository (on one forge,
//! or on any) and by state. Opened with the list's own token (`forgeward link jobs`); each job
//! in it links to its page with a job token that expires when the list's does.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;

use super::html::{self, escape};
use super::job::{about, headline, sigil, state_class};
use super::{AppState, authorize, forbidden, html_response, query_value, refusal};
use crate::forge::event::Forge;
use crate::links::Scope;
use crate::store::{JobFilter, JobId, JobState, Listed};

/// Jobs a page of the list shows: a screenful or two on a phone.
pub const PAGE_SIZE: u32 = 50;

/// The list's filters as the address gives them: `repo` (`owner/name`, or `forge:owner/name`
/// for one forge's), `state`, and `before` (a job id: the page starts after it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Filters {
    pub repo: Option<(Option<Forge>, String)>,
    pub state: Option<JobState>,
    pub before: Option<JobId>,
}

impl Filters {
    /// The filters in `query`, or a one-line reason one of them is wrong. Empty values are no
    /// filter (what an "any" choice in the form sends).
    pub fn parse(query: &HashMap<String, String>) -> Result<Filters, String> {
        let given = |key: &str| query.get(key).map(|v| v.trim()).filter(|v| !v.is_empty());
        let repo = given("repo").map(|repo| match repo.split_once(':') {
            Some((forge, name)) => match forge.parse::<Forge>() {
                Ok(forge) => Ok((Some(forge), name.to_owned())),
                Err(_) => Err(format!("unknown forge '{forge}' in repo")),
            },
            None => Ok((None, repo.to_owned())),
        });
        let state = given("state").map(str::parse::<JobState>);
        let before = given("before").map(|b| {
            super::job_id(b).ok_or_else(|| format!("before must be a job number, not '{b}'"))
        });
        Ok(Filters {
            repo: repo.transpose()?,
            state: state.transpose()?,
            before: before.transpose()?,
        })
    }

    /// What the store is asked for: one more than a page, to know whether there is another.
    pub fn store_filter(&self) -> JobFilter {
        JobFilter {
            repo: self.repo.as_ref().map(|(_, name)| name.clone()),
            forge: self.repo.as_ref().and_then(|(forge, _)| *forge),
            state: self.state,
            before: self.before,
            limit: PAGE_SIZE + 1,
        }
    }

    /// The repository filter as the form's value.
    fn repo_value(&self) -> String {
        match &self.repo {
            Some((Some(forge), name)) => format!("{forge}:{name}"),
            Some((None, name)) => name.clone(),
            None => String::new(),
        }
    }

    /// The query string of these filters with `token`, and `before` when given.
    fn query(&self, token: &str, before: Option<JobId>) -> String {
        let mut q = format!("t={}", query_value(token));
        let repo = self.repo_value();
        if !repo.is_empty() {
            let _ = write!(q, "&repo={}", query_value(&repo));
        }
        if let Some(state) = self.state {
            let _ = write!(q, "&state={state}");
        }
        if let Some(before) = before {
            let _ = write!(q, "&before={before}");
        }
        q
    }
}

pub(super) async fn page(
    State(state): State<Arc<AppState>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let pages = &state.pages;
    let expires_at = match authorize(pages, Scope::Jobs, &query) {
        Ok(expires_at) => expires_at,
        Err(why) => return forbidden(&why),
    };
    let filters = match Filters::parse(&query) {
        Ok(filters) => filters,
        Err(why) => return refusal(StatusCode::BAD_REQUEST, "Bad filter", &why),
    };
    let wanted = filters.store_filter();
    let (mut jobs, repos) =
        match tokio::try_join!(state.store.list_jobs(&wanted), state.store.job_repos()) {
            Ok(found) => found,
            Err(err) => return super::unavailable(&err),
        };
    let more = jobs.len() > PAGE_SIZE as usize;
    jobs.truncate(PAGE_SIZE as usize);
    let token = query.get("t").map(String::as_str).unwrap_or_default();
    let view = ListView {
        jobs: &jobs,
        repos: &repos,
        filters: &filters,
        token,
        more,
        job_link: &|id| pages.links.path(Scope::Job(id), expires_at),
        expires_at,
    };
    html_response(StatusCode::OK, render(&view))
}

pub(super) struct ListView<'a> {
    pub jobs: &'a [Listed],
    pub repos: &'a [(Forge, String, i64)],
    pub filters: &'a Filters,
    /// The list's token, carried by the filter form and the paging links.
    pub token: &'a str,
    /// Whether there are older jobs than these.
    pub more: bool,
    /// A job page's path with its token.
    pub job_link: &'a dyn Fn(JobId) -> String,
    pub expires_at: i64,
}

pub(super) fn render(view: &ListView) -> String {
    let mut b = String::new();
    b.push_str("<header class=\"top\">forgeward · jobs</header>\n<main>\n<h1>Jobs</h1>\n");
    let _ = writeln!(
        b,
        "<p class=\"muted\">Newest first. This link works until {}.</p>",
        escape(&crate::links::utc(view.expires_at))
    );
    form(&mut b, view);
    if view.jobs.is_empty() {
        b.push_str("<p>No jobs match.</p>\n");
    }
    b.push_str("<ul class=\"jobs\">\n");
    for listed in view.jobs {
        item(&mut b, view, listed);
    }
    b.push_str("</ul>\n<nav class=\"pages\">");
    if view.filters.before.is_some() {
        let _ = write!(
            b,
            "<a href=\"/jobs?{}\">← Newest</a> ",
            escape(&view.filters.query(view.token, None))
        );
    }
    if let (true, Some(last)) = (view.more, view.jobs.last()) {
        let _ = write!(
            b,
            "<a href=\"/jobs?{}\" rel=\"next\">Older →</a>",
            escape(&view.filters.query(view.token, Some(last.job.id)))
        );
    }
    b.push_str("</nav>\n</main>\n");
    html::page("Jobs", &b, false)
}

fn form(b: &mut String, view: &ListView) {
    b.push_str("<form class=\"filters\" method=\"get\" action=\"/jobs\">\n");
    let _ = writeln!(
        b,
        "<input type=\"hidden\" name=\"t\" value=\"{}\">",
        escape(view.token)
    );
    b.push_str("<label>Repository <select name=\"repo\">\n<option value=\"\">any</option>\n");
    let chosen = view.filters.repo_value();
    let mut offered = false;
    for (forge, name, count) in view.repos {
        let value = format!("{forge}:{name}");
        let selected = if value == chosen {
            offered = true;
            " selected"
        } else {
            ""
        };
        let _ = writeln!(
            b,
            "<option value=\"{}\"{selected}>{} ({forge}, {count})</option>",
            escape(&value),
            escape(name)
        );
    }
    if !chosen.is_empty() && !offered {
        let _ = writeln!(
            b,
            "<option value=\"{v}\" selected>{v}</option>",
            v = escape(&chosen)
        );
    }
    b.push_str("</select></label>\n<label>State <select name=\"state\">\n<option value=\"\">any</option>\n");
    for state in JobState::ALL {
        let selected = if view.filters.state == Some(state) {
            " selected"
        } else {
            ""
        };
        let _ = writeln!(b, "<option value=\"{state}\"{selected}>{state}</option>");
    }
    b.push_str("</select></label>\n<button type=\"submit\">Show</button>\n</form>\n");
}

fn item(b: &mut String, view: &ListView, listed: &Listed) {
    let job = &listed.job;
    let about = about(&job.event);
    let (headline, _) = headline(job, None);
    let title = listed
        .title
        .as_deref()
        .or(about.as_ref().and_then(|a| a.title))
        .unwrap_or("");
    let place = about.as_ref().map_or_else(String::new, |a| {
        format!("{} {}{}", a.repo, sigil(a.forge, a.thread), a.number)
    });
    let _ = writeln!(
        b,
        "<li><a class=\"mono\" href=\"{}\">job {}</a> <span class=\"badge {}\">{}</span> \
         <span class=\"title\">{}</span> <span class=\"meta\">{} · {}</span></li>",
        escape(&(view.job_link)(job.id)),
        job.id,
        state_class(job.state),
        escape(&headline),
        escape(title),
        escape(&place),
        escape(&html::time(job.created_at_ms)),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn filters_come_from_the_address() {
        assert_eq!(Filters::parse(&query(&[])), Ok(Filters::default()));
        let all_empty = query(&[("repo", ""), ("state", " "), ("before", "")]);
        assert_eq!(Filters::parse(&all_empty), Ok(Filters::default()));
        let f = Filters::parse(&query(&[
            ("repo", "gitlab:acme/tools/widgets"),
            ("state", "flagged"),
            ("before", "90"),
            ("t", "ignored here"),
        ]))
        .expect("valid");
        assert_eq!(
            f.repo,
            Some((Some(Forge::GitLab), "acme/tools/widgets".to_owned()))
        );
        assert_eq!(
            f.store_filter(),
            JobFilter {
                repo: Some("acme/tools/widgets".to_owned()),
                forge: Some(Forge::GitLab),
                state: Some(JobState::Flagged),
                before: Some(JobId(90)),
                limit: PAGE_SIZE + 1,
            }
        );
        let any_forge = Filters::parse(&query(&[("repo", "acme/widgets")])).expect("valid");
        assert_eq!(any_forge.repo, Some((None, "acme/widgets".to_owned())));
        assert_eq!(any_forge.store_filter().forge, None);
    }

    #[test]
    fn a_bad_filter_is_said_in_one_line() {
        let e = Filters::parse(&query(&[("state", "weird")])).expect_err("bad state");
        assert_eq!(e, "unknown job state 'weird'");
        let e = Filters::parse(&query(&[("before", "1; drop")])).expect_err("bad before");
        assert_eq!(e, "before must be a job number, not '1; drop'");
        let e = Filters::parse(&query(&[("repo", "svn:acme/x")])).expect_err("bad forge");
        assert_eq!(e, "unknown forge 'svn' in repo");
    }

    #[test]
    fn paging_links_keep_the_filters_and_the_token() {
        let f = Filters {
            repo: Some((Some(Forge::GitHub), "acme/widgets".to_owned())),
            state: Some(JobState::Running),
            before: None,
        };
        assert_eq!(
            f.query("123.ab-_c", Some(JobId(40))),
            "t=123.ab-_c&repo=github%3Aacme%2Fwidgets&state=running&before=40"
        );
    }
}
