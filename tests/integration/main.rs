//! Integration tests: the real `forgeward` binary against real git repositories.
//!
//! - `check`: `forgeward check` on a range, in each output format, with configuration and odd
//!   inputs.
//! - `github_prism`: the GitHub client against GitHub's OpenAPI description, served by Prism.
//! - `hook`: `forgeward hook install|uninstall`.
//! - `push`: real `git push`es to a local bare remote with the hook installed.
//! - `serve`: `forgeward serve` as a process: signed deliveries, refusals, a crash mid-burst.

mod util;

mod check;
mod github_prism;
mod hook;
mod push;
mod serve;
