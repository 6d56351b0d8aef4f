//! Integration tests: the real `forgeward` binary against real git repositories.
//!
//! - `check`: `forgeward check` on a range, in each output format, with configuration and odd
//!   inputs; `check_range`: the range it says it compared (`A..B`, `A...B`, the default
//!   base), an empty range explained, conflicting or unknown revisions as one-line errors.
//! - `ci`: the CI workflows of deploy/ through actionlint and GitLab's CI schema, and the
//!   commands they run on a shallow, detached checkout: the pull request's range, SARIF,
//!   annotations, a Code Quality report.
//! - `deploy`: deploy/ through the real tools: the systemd units verified and run by a systemd
//!   in a container, the Kubernetes manifests against the schemas, the Compose stack up with a
//!   signed delivery and a Docker sandbox, down again.
//! - `github_prism`: the GitHub client against GitHub's OpenAPI description, served by Prism.
//! - `forgejo_prism`: the Forgejo client against Forgejo's Swagger description, served by Prism.
//! - `e2e`: a labelled issue through `forgeward serve`, a real sandbox and a scripted worker to
//!   the pull request, review flags and status comment on the fake forge.
//! - `doctor`: `forgeward doctor` on a healthy set-up, a broken one, a configuration that does
//!   not parse, a PostgreSQL store, the Docker sandbox, and against GitHub's description.
//! - `e2e_checks`: the same as a GitHub App: each check a check run, annotated on the flagged
//!   lines, with the story as its summary and its conclusion.
//! - `hook`: `forgeward hook install|uninstall`.
//! - `job_page`: the job pages through `forgeward serve`: the signed links (403 without, with a
//!   forged, foreign or expired token), the log streamed as Server-Sent Events while a worker
//!   runs and resumed with `Last-Event-ID`, the list, and no token in the bot's log;
//!   `job_page_browser` the same page in a real headless Chromium over WebDriver
//!   (`webdriver`): phases and lines arriving live, then a screenshot of the flagged job.
//! - `layering`: no two files of a crate's `src/` import each other; the detector's crate
//!   depends on no git, runtime, HTTP, forge or database crate.
//! - `mirror`: the bot's git layer: mirror fetches, job checkouts, the commit built from a
//!   worker's files, pushes with a lease, credentials over HTTP.
//! - `push`: real `git push`es to a local bare remote with the hook installed.
//! - `question`: a worker that asks instead of changing: no pull request, the question in the
//!   status comment (GitHub and GitLab), the answer in the next job's task.
//! - `run`: `forgeward run`, one job on a local repository in a real sandbox.
//! - `sandbox`: the sandbox backends against one conformance suite of escapes and limits.
//! - `serve`: `forgeward serve` as a process: signed deliveries from GitHub, GitLab and Forgejo
//!   (or Gitea), refusals, a crash mid-burst.
//! - `workers`: two `forgeward worker` processes on one PostgreSQL store: no job runs twice at
//!   once, a killed worker's job is finished by the other, SIGTERM lets a job finish.
//! - `e2e_forgejo`: the same flows on Forgejo: a flagged pull request, a pull request checked, a
//!   stranger answered.
//! - `e2e_review`: pull requests that others opened, on each of the three forges: an agent's
//!   cheat caught by verification and its flags resolved by the push that undoes it, an agent's
//!   honest fix verified, a person's pull request checked statically only.
//! - `fake_forge`: the in-memory GitHub, GitLab and Forgejo the forge clients are tested against;
//!   `fake_forge_github` checks its GitHub side keeps to GitHub's documented shapes, and
//!   `forge_gitlab` drives the GitLab client through every call it makes.
//! - `setup_github`: `forgeward setup github` through the binary, a client playing the browser
//!   and Prism playing GitHub: the form, the manifest, the App's files and configuration lines.
//! - `sandbox_docker`: the Docker sandbox and its images against a real daemon.

mod fake_forge;
mod git_http;
mod util;
mod webdriver;
mod world;

mod check;
mod check_range;
mod ci;
mod deploy;
mod doctor;
mod e2e;
mod e2e_checks;
mod e2e_forgejo;
mod e2e_review;
mod egress;
mod environment;
mod environment_lending;
mod fake_forge_github;
mod forge_gitlab;
mod forgejo_prism;
mod github_prism;
mod hook;
mod hostile;
mod job_page;
mod job_page_browser;
mod layering;
mod mirror;
mod push;
mod question;
mod run;
mod sandbox;
mod sandbox_docker;
mod serve;
mod setup_github;
mod verify;
mod verify_runners;
mod workers;
