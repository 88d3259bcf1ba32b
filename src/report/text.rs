//! `--format text`: findings about no benchmark folder first; then each
//! benchmark folder, its verdict first (`PASS path [division]`), a line of
//! what its runs gave (score, RCP, spread), and its findings, errors before
//! warnings before notes, paths relative to the folder; then a one-line
//! summary. Colour only when asked for.

use super::escape::text as esc;
use super::{BenchmarkReport, PackageSummary, Report};
use crate::aggregate::package::Verdict as FolderVerdict;
use crate::check::rules::Verdict;
use crate::finding::{Finding, Severity};
use std::io::{self, Write};

pub fn render(report: &Report, color: bool, out: &mut dyn Write) -> io::Result<()> {
    let paint = |s: &str, code: &str| {
        if color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    };
    // Findings about no benchmark folder (system descriptions, the package
    // root, logs named alone) first, most severe first; then each folder,
    // its verdict first, then its findings.
    let (loose, _) = split_findings(report);
    for f in &loose {
        writeln!(out, "{}", finding_line(f, &paint))?;
    }
    if !loose.is_empty() && !report.benchmarks.is_empty() {
        writeln!(out)?;
    }
    for b in &report.benchmarks {
        let mut mine: Vec<&Finding> = report
            .findings
            .iter()
            .filter(|f| b.covers(&f.path))
            .collect();
        mine.sort_by(|x, y| {
            y.severity
                .cmp(&x.severity)
                .then(x.sort_key().cmp(&y.sort_key()))
        });
        writeln!(out, "{}", benchmark_line(b, &mine, &paint))?;
        if let Some(details) = benchmark_details(b) {
            writeln!(out, "  {details}")?;
        }
        for f in mine {
            writeln!(out, "  {}", folder_finding_line(f, &b.path, &paint))?;
        }
        writeln!(out)?;
    }
    // Settings that decide repeatability: notes of their own, never a verdict.
    for line in super::repeatability::text_lines(&report.repeatability) {
        writeln!(out, "{line}")?;
    }
    if !report.repeatability.is_empty() {
        writeln!(out)?;
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

/// The findings about no benchmark folder of the report, most severe
/// first, then in path order; and those about a folder.
fn split_findings(report: &Report) -> (Vec<&Finding>, Vec<&Finding>) {
    let (mut loose, foldered): (Vec<&Finding>, Vec<&Finding>) = report
        .findings
        .iter()
        .partition(|f| !report.benchmarks.iter().any(|b| b.covers(&f.path)));
    loose.sort_by(|x, y| {
        y.severity
            .cmp(&x.severity)
            .then(x.sort_key().cmp(&y.sort_key()))
    });
    (loose, foldered)
}

/// `PASS NVIDIA/results/sys/bert [closed]`: the verdict first.
fn benchmark_line(
    b: &BenchmarkReport,
    findings: &[&Finding],
    paint: &dyn Fn(&str, &str) -> String,
) -> String {
    let verdict = match b.verdict {
        FolderVerdict::Pass => paint("PASS", "32"),
        FolderVerdict::Fail => paint("FAIL", "31"),
        FolderVerdict::Skipped => paint("SKIP", "33"),
    };
    let n = |sev: Severity| findings.iter().filter(|f| f.severity == sev).count();
    let counts = match (n(Severity::Error), n(Severity::Warning)) {
        (0, 0) => String::new(),
        (e, 0) => format!(": {}", plural(e, "error", "errors")),
        (0, w) => format!(": {}", plural(w, "warning", "warnings")),
        (e, w) => format!(
            ": {}, {}",
            plural(e, "error", "errors"),
            plural(w, "warning", "warnings")
        ),
    };
    format!(
        "{verdict} {} [{}]{counts}",
        esc(&b.path),
        esc(b.division.as_deref().unwrap_or("division unknown")),
    )
}

/// `score 5.086 min (5 runs read: 3 counted, ...); RCP pass (RCP found,
/// normalisation factor 1.0595); 1 non-compliant run (result_1); cv 2.1%`
fn benchmark_details(b: &BenchmarkReport) -> Option<String> {
    let mut parts = Vec::new();
    match &b.score {
        Some(s) => match s.minutes {
            Some(m) => parts.push(format!("score {m:.3} min ({})", s.describe())),
            None => parts.push(format!("no score ({})", s.describe())),
        },
        None => parts.push(plural(b.logs, "run", "runs")),
    }
    if let Some(r) = &b.rcp {
        let v = serde_json::to_value(r.verdict)
            .ok()
            .and_then(|v| v.as_str().map(|s| s.replace('_', " ")))
            .unwrap_or_default();
        match r.norm_factor {
            Some(f) => parts.push(format!(
                "RCP {v} ({}, normalisation factor {f:.4})",
                esc(&r.message)
            )),
            None => parts.push(format!("RCP {v} ({})", esc(&r.message))),
        }
    }
    if !b.non_compliant.is_empty() {
        parts.push(format!(
            "{} ({})",
            plural(
                b.non_compliant.len(),
                "non-compliant run",
                "non-compliant runs"
            ),
            esc(&crate::discover::paths::name_list(&b.non_compliant))
        ));
    }
    if let Some(w) = &b.weak_score {
        match (w.time_to_train_all, w.instance_scale) {
            (Some(m), Some(s)) => parts.push(format!(
                "weak score {m:.3} min for {} models x {s} accelerators",
                w.number_of_models
            )),
            (Some(m), None) => parts.push(format!(
                "weak score {m:.3} min for {} models",
                w.number_of_models
            )),
            _ => parts.push("no weak score".to_string()),
        }
    }
    if let Some(cv) = b.stats.as_ref().and_then(|s| s.cv) {
        parts.push(format!("cv {:.1}%", cv * 100.0));
    }
    if b.score.is_none() && b.rcp.is_none() && b.verdict == FolderVerdict::Skipped {
        return None;
    }
    Some(parts.join("; "))
}

/// A finding under its folder's line: the path relative to the folder
/// (`result_1.txt:16: error[BMK004] ...`), nothing for the folder itself.
fn folder_finding_line(f: &Finding, folder: &str, paint: &dyn Fn(&str, &str) -> String) -> String {
    let rel = f
        .path
        .strip_prefix(folder)
        .map(|r| r.trim_start_matches('/'))
        .unwrap_or(&f.path);
    let place = match (rel.is_empty(), f.line) {
        (true, _) => String::new(),
        (false, Some(l)) => format!("{}:{l}: ", esc(rel)),
        (false, None) => format!("{}: ", esc(rel)),
    };
    format!("{place}{} {}", severity_tag(f, paint), esc(&f.message))
}

fn severity_tag(f: &Finding, paint: &dyn Fn(&str, &str) -> String) -> String {
    match f.severity {
        Severity::Error => paint(&format!("error[{}]", f.code), "1;31"),
        Severity::Warning => paint(&format!("warning[{}]", f.code), "1;33"),
        Severity::Note => paint(&format!("note[{}]", f.code), "1;36"),
    }
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
    let sev = severity_tag(f, paint);
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
