//! The round part of the HTML page (`check ROUND_FOLDER --html FILE`):
//! the round at a glance (one line per package with its verdict), then
//! per benchmark one table across submitters and systems, each row linking
//! to its package and its folder card.
//!
//! Scores are shown with the scale they were reached at (the accelerator
//! count of the system description) and nothing is divided by it: MLCommons
//! does not allow derived per-accelerator figures to be presented as
//! results.

use crate::aggregate::package::Verdict as FolderVerdict;
use crate::check::rules::Verdict;
use crate::report::{BenchmarkReport, PackageSummary, Report};
use serde::Serialize;
use std::collections::BTreeMap;

/// One line of the round at a glance.
#[derive(Debug, Serialize)]
pub struct PackageRow {
    pub anchor: String,
    pub path: String,
    pub verdict: &'static str,
    /// The official tools' verdict when it differs.
    pub official: &'static str,
    pub logs: usize,
    pub folders: usize,
    pub failed_folders: usize,
    pub errors: usize,
    pub warnings: usize,
    pub benchmarks: Vec<String>,
}

/// One benchmark across the round.
#[derive(Debug, Serialize)]
pub struct BenchmarkTable {
    pub benchmark: String,
    pub id: String,
    pub rows: Vec<RoundRow>,
}

/// One benchmark folder in its benchmark's table.
#[derive(Debug, Serialize)]
pub struct RoundRow {
    pub package_anchor: String,
    pub folder_anchor: String,
    pub submitter: String,
    pub system: String,
    pub system_name: String,
    /// Accelerators of the system (nodes × per node), as the description
    /// gives them; empty when it does not.
    pub accelerators: String,
    pub accelerator_model: String,
    pub framework: String,
    pub division: String,
    pub availability: String,
    pub verdict: &'static str,
    pub score: String,
    pub score_sort: String,
    pub rcp: &'static str,
    pub rcp_message: String,
    pub norm_factor: String,
    pub runs: usize,
    pub runs_failed: usize,
    pub cv: String,
    pub cv_sort: String,
    pub errors: usize,
    pub warnings: usize,
}

/// The round view; `None` unless more than one package was checked.
#[derive(Debug, Serialize)]
pub struct RoundView {
    pub packages: Vec<PackageRow>,
    pub benchmarks: Vec<BenchmarkTable>,
    pub submitters: Vec<String>,
    pub passed: usize,
    pub failed: usize,
}

/// The anchor of the `n`th package's section.
pub fn package_anchor(n: usize) -> String {
    format!("package-{n}")
}

/// The package (index in `packages`) a folder belongs to.
pub fn package_of(path: &str, packages: &[PackageSummary]) -> Option<usize> {
    packages.iter().position(|p| {
        p.path == "."
            || path
                .strip_prefix(p.path.as_str())
                .is_some_and(|r| r.starts_with('/'))
    })
}

fn text(desc: Option<&serde_json::Value>, key: &str) -> String {
    match desc.and_then(|d| d.get(key)) {
        Some(serde_json::Value::String(s)) => s.trim().to_string(),
        Some(serde_json::Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn accelerators(desc: Option<&serde_json::Value>) -> String {
    let n = |k: &str| text(desc, k).parse::<u64>().ok();
    match (n("number_of_nodes"), n("accelerators_per_node")) {
        (Some(a), Some(b)) => a.saturating_mul(b).to_string(),
        _ => String::new(),
    }
}

fn word(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
    }
}

fn last_segment(path: &str) -> String {
    path.rsplit('/')
        .find(|s| !s.is_empty() && *s != ".")
        .unwrap_or(path)
        .to_string()
}

/// Builds the round view from the report; `folder_anchor(i)` is the card
/// of the `i`th benchmark folder; `row_cells` the per-folder figures the
/// system × benchmark table already computed (score, RCP, CV as text).
pub fn build(
    report: &Report,
    systems: &BTreeMap<String, serde_json::Value>,
    folder_anchor: &dyn Fn(usize) -> String,
    cells: &dyn Fn(&BenchmarkReport) -> Cells,
) -> Option<RoundView> {
    if report.packages.len() < 2 {
        return None;
    }
    let mut packages: Vec<PackageRow> = report
        .packages
        .iter()
        .enumerate()
        .map(|(n, p)| PackageRow {
            anchor: package_anchor(n),
            path: p.path.clone(),
            verdict: word(p.verdict),
            official: if p.official_verdict != p.verdict {
                word(p.official_verdict)
            } else {
                ""
            },
            logs: p.logs,
            folders: p.folders,
            failed_folders: 0,
            errors: p.errors,
            warnings: p.warnings,
            benchmarks: Vec::new(),
        })
        .collect();
    let mut tables: BTreeMap<String, Vec<RoundRow>> = BTreeMap::new();
    let mut submitters: Vec<String> = Vec::new();
    for (i, b) in report.benchmarks.iter().enumerate() {
        let pkg = package_of(&b.path, &report.packages);
        let desc = systems.get(&b.system);
        let submitter = match text(desc, "submitter") {
            s if !s.is_empty() => s,
            _ => pkg
                .map(|n| last_segment(&report.packages[n].path))
                .unwrap_or_default(),
        };
        if let Some(row) = pkg.and_then(|n| packages.get_mut(n)) {
            if b.verdict == FolderVerdict::Fail {
                row.failed_folders += 1;
            }
            if !row.benchmarks.contains(&b.benchmark) {
                row.benchmarks.push(b.benchmark.clone());
            }
        }
        if !submitters.contains(&submitter) {
            submitters.push(submitter.clone());
        }
        let c = cells(b);
        tables
            .entry(b.benchmark.clone())
            .or_default()
            .push(RoundRow {
                package_anchor: pkg.map(package_anchor).unwrap_or_default(),
                folder_anchor: folder_anchor(i),
                submitter,
                system: b.system.clone(),
                system_name: text(desc, "system_name"),
                accelerators: accelerators(desc),
                accelerator_model: text(desc, "accelerator_model_name"),
                framework: text(desc, "framework"),
                division: b.division.clone().unwrap_or_default(),
                availability: text(desc, "status"),
                verdict: c.verdict,
                score: c.score,
                score_sort: c.score_sort,
                rcp: c.rcp,
                rcp_message: c.rcp_message,
                norm_factor: c.norm_factor,
                runs: b.logs,
                runs_failed: b.non_compliant.len(),
                cv: c.cv,
                cv_sort: c.cv_sort,
                errors: b.errors,
                warnings: b.warnings,
            });
    }
    for p in &mut packages {
        p.benchmarks.sort();
    }
    submitters.sort();
    let passed = packages.iter().filter(|p| p.verdict == "pass").count();
    Some(RoundView {
        failed: packages.len() - passed,
        passed,
        packages,
        benchmarks: tables
            .into_iter()
            .map(|(benchmark, mut rows)| {
                // Fastest first; folders without a score after them.
                rows.sort_by(|a, b| {
                    let key = |r: &RoundRow| r.score_sort.parse::<f64>().unwrap_or(f64::INFINITY);
                    key(a)
                        .total_cmp(&key(b))
                        .then_with(|| a.submitter.cmp(&b.submitter))
                        .then_with(|| a.system.cmp(&b.system))
                });
                BenchmarkTable {
                    id: format!("round-{benchmark}"),
                    benchmark,
                    rows,
                }
            })
            .collect(),
        submitters,
    })
}

/// The figures of a folder as the page shows them.
pub struct Cells {
    pub verdict: &'static str,
    pub score: String,
    pub score_sort: String,
    pub rcp: &'static str,
    pub rcp_message: String,
    pub norm_factor: String,
    pub cv: String,
    pub cv_sort: String,
}
