//! The `forgeward` binary: argument parsing, exit codes and human output. The work is in the
//! library.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    match cli::run() {
        Ok(code) => code,
        Err(e) => {
            // A reader that went away (`forgeward check | head`) is not an error.
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            let message = format!("{e:#}").replace('\n', " ");
            eprintln!("forgeward: error: {message}");
            ExitCode::from(cli::EXIT_ERROR)
        }
    }
}
