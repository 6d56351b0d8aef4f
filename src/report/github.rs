//! GitHub Actions workflow commands: `::warning file=…,line=…,title=…::message`.

use std::io::{self, Write};

use crate::detect::{Report, Severity};

/// Escapes a command's message (`%`, CR, LF), as the Actions runner decodes it.
fn data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a property value: as data, plus `:` and `,`.
fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

pub fn write_github(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    for f in &report.flags {
        let command = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "notice",
        };
        write!(out, "::{command} file={}", property(&f.path.display()))?;
        if let Some(line) = f.line {
            write!(out, ",line={line}")?;
        }
        writeln!(
            out,
            ",title={}::{}",
            property(&format!("forgeward {}", f.rule)),
            data(&f.message)
        )?;
    }
    Ok(())
}

/// A warning on no file: it shows in the run's summary (a range with nothing to compare).
pub fn write_github_warning(out: &mut dyn Write, message: &str) -> io::Result<()> {
    writeln!(out, "::warning title=forgeward::{}", data(message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(property("a,b:c%\n"), "a%2Cb%3Ac%25%0A");
        assert_eq!(data("50% a:b\r\n"), "50%25 a:b%0D%0A");
    }
}
