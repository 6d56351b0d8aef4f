//! Integration tests: the real `forgeward` binary against real git repositories.
//!
//! - `check`: `forgeward check` on a range, in each output format, with configuration and odd
//!   inputs.
//! - `hook`: `forgeward hook install|uninstall`.
//! - `push`: real `git push`es to a local bare remote with the hook installed.
//! - `serve`: `forgeward serve` as a process: signed deliveries, refusals, a crash mid-burst.
//! - `sandbox_docker`: the Docker sandbox and its images against a real daemon.

mod util;

mod check;
mod hook;
mod push;
mod sandbox_docker;
mod serve;
