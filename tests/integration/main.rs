//! Integration tests: the real `forgeward` binary against real git repositories.
//!
//! - `check`: `forgeward check` on a range, in each output format, with configuration and odd
//!   inputs.
//! - `hook`: `forgeward hook install|uninstall`.
//! - `mirror`: the bot's git layer: mirror fetches, job checkouts, the commit built from a
//!   worker's files, pushes with a lease, credentials over HTTP.
//! - `push`: real `git push`es to a local bare remote with the hook installed.
//! - `serve`: `forgeward serve` as a process: signed deliveries, refusals, a crash mid-burst.

mod git_http;
mod util;

mod check;
mod hook;
mod mirror;
mod push;
mod serve;
