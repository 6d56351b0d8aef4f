//! Rendering a check's outcome for people and machines: text for a terminal, JSON (the stable
//! contract in DESIGN.md), SARIF 2.1.0 for code scanning, GitHub workflow commands, and GitLab's
//! Code Quality report.
//!
//! Renderers write to any [`std::io::Write`] and never fail on odd paths: text output keeps a
//! path's real bytes, formats that need UTF-8 show invalid bytes as U+FFFD.

mod codequality;
mod github;
mod json;
mod review;
mod sarif;
mod status;
mod text;

use std::io::{self, Write};

use crate::detect::Report;

pub use codequality::write_codequality;
pub use github::{write_github, write_github_warning};
pub use json::{json_value, write_json};
pub use review::{
    PullRequestBody, flag_key, posted_flag_key, pull_request_title, render_flag_comment,
    render_pull_request_body, render_review_body,
};
pub use sarif::write_sarif;
pub use status::{
    ChangeSummary, FileLinks, ForgeLinks, PullRequestLink, StatusComment, StatusState,
    VerificationView, WorkerExit, WorkerQuestion, human_duration, parse_status_marker,
    render_check_summary, render_status, status_marker,
};
pub use text::write_text;

/// A repository path as a URL path (SARIF's relative URIs, links to a forge's files): every
/// byte outside RFC 3986's unreserved set is percent-encoded, `/` kept, so spaces, `#`, `?` and
/// non-UTF-8 names survive in a URL and in a Markdown link alike.
pub(crate) fn encode_path(path: &crate::detect::RepoPath) -> String {
    let mut s = String::with_capacity(path.as_bytes().len());
    for &b in path.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            s.push(char::from(b));
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// The output formats of `forgeward check`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Sarif,
    Github,
    CodeQuality,
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Format, String> {
        match s {
            "text" => Ok(Format::Text),
            "json" => Ok(Format::Json),
            "sarif" => Ok(Format::Sarif),
            "github" => Ok(Format::Github),
            "codequality" => Ok(Format::CodeQuality),
            _ => Err(format!(
                "unknown format '{s}', expected text, json, sarif, github or codequality"
            )),
        }
    }
}

/// The range a report covers, for the formats that name it.
#[derive(Clone, Debug)]
pub struct Range {
    pub base: String,
    /// A commit sha, or `WORKTREE`.
    pub head: String,
    /// The range as git spells it (`origin/main...HEAD`).
    pub spelled: String,
    /// The commits the head has that the base does not.
    pub commits: usize,
}

/// Writes `report` in `format`. `color` only affects text.
pub fn write(
    out: &mut dyn Write,
    format: Format,
    report: &Report,
    range: &Range,
    color: bool,
) -> io::Result<()> {
    match format {
        Format::Text => write_text(out, report, color),
        Format::Json => write_json(out, report, range),
        Format::Sarif => write_sarif(out, report),
        Format::Github => write_github(out, report),
        Format::CodeQuality => write_codequality(out, report),
    }
}

#[cfg(test)]
mod tests;
