//! `--format text`: one line per finding, `path:line: severity[CODE] message`,
//! then a one-line summary. Colour only when asked for.

use super::escape::text as esc;
use super::{BenchmarkReport, PackageSummary, Report};
use crate::aggregate::package::Verdict as FolderVerdict;
use crate::check::rules::Verdict;
use crate::finding::Severity;
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
        writeln!(out, "{}", finding_line(f, &paint))?;
    }
    for b in &report.benchmarks {
        writeln!(out, "{}", benchmark_line(b, &paint))?;
    }
    // A round (several packages): one line per package, then the totals.
    if report.packages.len() > 1 {
        for p in &report.packages {
            writeln!(out, "{}", package_line(p, &paint))?;
        }
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
    let folders = if report.packages.len() > 1 {
        format!(
            " in {} of {}",
            plural(
                report.benchmarks.len(),
                "benchmark folder",
                "benchmark folders"
            ),
            plural(report.packages.len(), "package", "packages")
        )
    } else if report.benchmarks.is_empty() {
        String::new()
    } else {
        format!(
            " in {}",
            plural(
                report.benchmarks.len(),
                "benchmark folder",
                "benchmark folders"
            )
        )
    };
    writeln!(
        out,
        "{verdict}: {}{folders} checked with {} rules, {} failed; {}, {}",
        plural(report.logs.len(), "log", "logs"),
        if report.ruleset.is_empty() {
            "no".to_string()
        } else {
            format!("{} {}", report.usage, report.ruleset)
        },
        failed,
        plural(report.summary.errors, "error", "errors"),
        plural(report.summary.warnings, "warning", "warnings")
    )?;
    let tolerated: usize = report
        .benchmarks
        .iter()
        .filter(|b| b.verdict == FolderVerdict::Pass)
        .map(|b| b.non_compliant.len())
        .sum();
    if tolerated > 0 && report.verdict == Verdict::Pass {
        writeln!(
            out,
            "note: {} accepted under olympic scoring (a failed run counts as the slowest)",
            plural(tolerated, "non-compliant run", "non-compliant runs")
        )?;
    }
    if !report.waived.is_empty() {
        writeln!(
            out,
            "note: {} waived by the project config (listed in the JSON report)",
            plural(report.waived.len(), "finding", "findings")
        )?;
    }
    if report.official_verdict != report.verdict {
        let official = match report.official_verdict {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
        };
        writeln!(
            out,
            "note: the official tools would say {official}: {}",
            report
                .verdict_difference
                .as_deref()
                .unwrap_or("the difference comes from checks they do not make")
        )?;
    }
    if let Some(d) = &report.baseline {
        for line in super::baseline::text_lines(d) {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

/// `FAIL package NVIDIA: 40 logs in 4 benchmark folders; 2 errors, 1 warning`
fn package_line(p: &PackageSummary, paint: &dyn Fn(&str, &str) -> String) -> String {
    let verdict = match p.verdict {
        Verdict::Pass => paint("PASS", "32"),
        Verdict::Fail => paint("FAIL", "31"),
    };
    let official = if p.official_verdict != p.verdict {
        match p.official_verdict {
            Verdict::Pass => " (the official tools would say PASS)",
            Verdict::Fail => " (the official tools would say FAIL)",
        }
    } else {
        ""
    };
    format!(
        "{verdict} package {}: {} in {}; {}, {}{official}",
        esc(if p.path.is_empty() { "." } else { &p.path }),
        plural(p.logs, "log", "logs"),
        plural(p.folders, "benchmark folder", "benchmark folders"),
        plural(p.errors, "error", "errors"),
        plural(p.warnings, "warning", "warnings")
    )
}

/// `PASS  path  closed  10 runs, 1 failed  RCP pass x1.0123  score 5.43 min  cv 3.1%`
fn benchmark_line(b: &BenchmarkReport, paint: &dyn Fn(&str, &str) -> String) -> String {
    let verdict = match b.verdict {
        FolderVerdict::Pass => paint("PASS", "32"),
        FolderVerdict::Fail => paint("FAIL", "31"),
        FolderVerdict::Skipped => paint("SKIP", "33"),
    };
    let mut parts = vec![format!(
        "{} runs, {} non-compliant",
        b.logs,
        b.non_compliant.len()
    )];
    if let Some(r) = &b.rcp {
        let v = serde_json::to_value(r.verdict)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        match r.norm_factor {
            Some(f) => parts.push(format!("RCP {v} ({}), x{f:.4}", esc(&r.message))),
            None => parts.push(format!("RCP {v} ({})", esc(&r.message))),
        }
    }
    if let Some(s) = &b.score {
        match s.minutes {
            Some(m) => parts.push(format!("score {m:.3} min")),
            None => parts.push("no score".to_string()),
        }
    }
    if let Some(cv) = b.stats.as_ref().and_then(|s| s.cv) {
        parts.push(format!("cv {:.1}%", cv * 100.0));
    }
    format!(
        "{verdict} {} [{}] {}",
        esc(&b.path),
        esc(b.division.as_deref().unwrap_or("division unknown")),
        parts.join("; ")
    )
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `path:line: severity[CODE] message`, as the report and `-q` print it.
pub fn finding_line(f: &crate::finding::Finding, paint: &dyn Fn(&str, &str) -> String) -> String {
    let place = match f.line {
        Some(l) => format!("{}:{l}", esc(&f.path)),
        None => esc(&f.path).into_owned(),
    };
    let sev = match f.severity {
        Severity::Error => paint(&format!("error[{}]", f.code), "1;31"),
        Severity::Warning => paint(&format!("warning[{}]", f.code), "1;33"),
        Severity::Note => paint(&format!("note[{}]", f.code), "1;36"),
    };
    format!("{place}: {sev} {}", esc(&f.message))
}

/// The text report of `-q`: nothing for a passing run; for a failing one
/// the findings at or above `threshold`, one line each.
pub fn render_quiet(
    report: &Report,
    fails: bool,
    threshold: Severity,
    color: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    if !fails {
        return Ok(());
    }
    let paint = |s: &str, code: &str| {
        if color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    };
    for f in report.findings.iter().filter(|f| f.severity >= threshold) {
        writeln!(out, "{}", finding_line(f, &paint))?;
    }
    Ok(())
}
