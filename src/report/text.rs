//! `--format text`: one line per finding, `path:line: severity[CODE] message`,
//! then a one-line summary. Colour only when asked for.

use super::Report;
use crate::finding::Severity;
use crate::rules::Verdict;
use std::io::{self, Write};

pub fn render(report: &Report, color: bool, out: &mut dyn Write) -> io::Result<()> {
    let paint = |s: &str, code: &str| {
        if color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    };
    for f in &report.findings {
        let place = match f.line {
            Some(l) => format!("{}:{l}", f.path),
            None => f.path.clone(),
        };
        let sev = match f.severity {
            Severity::Error => paint(&format!("error[{}]", f.code), "1;31"),
            Severity::Warning => paint(&format!("warning[{}]", f.code), "1;33"),
            Severity::Note => paint(&format!("note[{}]", f.code), "1;36"),
        };
        writeln!(out, "{place}: {sev} {}", f.message)?;
    }
    let failed = report
        .logs
        .iter()
        .filter(|l| l.verdict == Verdict::Fail)
        .count();
    let verdict = match report.verdict {
        Verdict::Pass => paint("PASS", "1;32"),
        Verdict::Fail => paint("FAIL", "1;31"),
    };
    writeln!(
        out,
        "{verdict}: {} logs checked with training {} rules, {} failed; {} errors, {} warnings",
        report.logs.len(),
        report.ruleset,
        failed,
        report.summary.errors,
        report.summary.warnings
    )
}
