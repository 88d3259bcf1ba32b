//! `--format github`: GitHub Actions workflow commands, one annotation per
//! finding, then a one-line summary:
//!
//! ```text
//! ::error file=A/results/s/bert/result_3.txt,line=57,title=LOG001::required exactly one 'init_stop' but found 0
//! ```
//!
//! Every annotation has a file and a line, so GitHub can place it on a
//! diff: a finding about a folder goes to line 1 of the folder's first
//! result log (or its system description) and its message starts with the
//! folder (`place.rs`).
//!
//! Severity `note` is a `::notice`. Paths are relative to the repository
//! top. Values are escaped as the runner expects: in the message `%`, CR
//! and LF; in properties also `:` and `,`.

use super::Report;
use crate::check::rules::Verdict;
use crate::finding::Severity;
use std::io::{self, Write};

/// Renders `report`; `repo_prefix` as in [`super::sarif::render`].
pub fn render(report: &Report, repo_prefix: &str, out: &mut dyn Write) -> io::Result<()> {
    for f in &report.findings {
        let command = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "notice",
        };
        let at = super::place::place(report, f);
        let file = crate::discover::git::repo_relative(repo_prefix, &at.path);
        let props = format!(
            "file={},line={},title={}",
            escape_property(&file),
            at.line,
            escape_property(&f.code)
        );
        let mut message = match &at.moved_from {
            Some(folder) => format!(
                "{}: {}",
                crate::discover::git::repo_relative(repo_prefix, folder),
                f.message
            ),
            None => f.message.clone(),
        };
        if let Some(help) = &f.help {
            message.push_str("\nhelp: ");
            message.push_str(help);
        }
        writeln!(out, "::{command} {props}::{}", escape_data(&message))?;
    }
    let verdict = match report.verdict {
        Verdict::Pass => "PASS",
        Verdict::Fail => "FAIL",
    };
    let n = |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    writeln!(
        out,
        "mlaudit {verdict}: {} in {} checked with {} {} rules; {}, {}",
        n(report.summary.logs, "log", "logs"),
        n(
            report.summary.benchmarks,
            "benchmark folder",
            "benchmark folders"
        ),
        report.usage,
        report.ruleset,
        n(report.summary.errors, "error", "errors"),
        n(report.summary.warnings, "warning", "warnings")
    )
}

/// Escapes a workflow-command message: `%`, `\r`, `\n`.
/// Other control characters (ESC, ...) are written as text escapes
/// ([`super::escape`]): the runner would pass them to the log viewer.
pub fn escape_data(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            c => super::escape::push(&mut out, c),
        }
    }
    out
}

/// Escapes a workflow-command property value: as [`escape_data`], plus
/// `:` and `,`.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_escapes_percent_and_line_breaks_only() {
        assert_eq!(escape_data("100% done"), "100%25 done");
        assert_eq!(escape_data("a\r\nb"), "a%0D%0Ab");
        assert_eq!(escape_data("a:b,c"), "a:b,c");
        // `%` first, so an escape in the input is not decoded later.
        assert_eq!(escape_data("%0A"), "%250A");
    }

    #[test]
    fn properties_also_escape_colon_and_comma() {
        assert_eq!(escape_property("C:\\x,y"), "C%3A\\x%2Cy");
        assert_eq!(escape_property("a%\n"), "a%25%0A");
        assert_eq!(escape_property("results/s/bm"), "results/s/bm");
    }
}
