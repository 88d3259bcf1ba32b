//! The report: everything a renderer needs, shaped as the JSON contract
//! (`shared/spec/json-report.md`). Renderers never compute; checks never print.

pub mod baseline;
pub mod escape;
pub mod github;
pub mod html;
pub mod json;
pub mod junit;
pub mod place;
pub mod rcp;
pub mod repeat;
pub mod repeatability;
pub mod sarif;
pub mod score;
pub mod summarizer;
pub mod text;

use crate::aggregate::package::{BenchmarkVerdict, BypassUse, Verdict as PackageVerdict};
use crate::aggregate::stats::reader::FolderRuns;
use crate::aggregate::stats::{olympic::Score, rcp::RcpResult, spread::Stats, FolderReport};
use crate::check::rules::{LogCheck, Verdict};
use crate::finding::{Finding, Severity};
use serde::Serialize;
use std::collections::BTreeMap;

pub const SCHEMA: u32 = 1;

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub errors: usize,
    pub warnings: usize,
    pub logs: usize,
    pub benchmarks: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema: u32,
    pub tool: &'static str,
    pub version: &'static str,
    pub usage: String,
    pub ruleset: String,
    /// Where the ruleset came from: `flag`, `config` or `inferred` (`none`
    /// for a change that touches no package, checked with no rules).
    pub ruleset_source: String,
    /// Why that ruleset, in one line (the config file, the inference signal).
    pub ruleset_reason: String,
    pub root: String,
    pub verdict: Verdict,
    /// What the official tools would conclude: `verdict` without the checks
    /// they do not make (codes marked `extra` in `rules/codes/`).
    pub official_verdict: Verdict,
    /// Why `verdict` and `official_verdict` differ, in one line; `null`
    /// when they agree.
    pub verdict_difference: Option<String>,
    pub summary: Summary,
    pub logs: Vec<LogCheck>,
    pub benchmarks: Vec<BenchmarkReport>,
    /// One entry per package checked (a round folder is its packages),
    /// sorted by path; empty when only benchmark folders or logs were
    /// checked.
    pub packages: Vec<PackageSummary>,
    pub findings: Vec<Finding>,
    /// Bypasses requested (command line or `package_checker_params`).
    pub bypasses: Vec<BypassUse>,
    /// Findings a waiver of the project config covers (reviewed exceptions).
    pub waived: Vec<Finding>,
    /// Implementation settings that decide run-to-run repeatability: notes
    /// apart from the findings, never a verdict.
    pub repeatability: Vec<crate::check::policy::repeatability::RepeatabilityNote>,
    /// What changed since `--baseline OLD.json`; absent without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<baseline::BaselineDiff>,
}

/// The report and the runs it was computed from (for renderers that draw
/// per-run pictures).
pub struct CheckOutcome {
    pub report: Report,
    /// The runs of each checked benchmark folder, by folder display path.
    pub runs: Vec<FolderRuns>,
    /// The system descriptions that could be read, by system id.
    pub systems: BTreeMap<String, serde_json::Value>,
}

/// One checked package in the report: its verdicts and counts, as the
/// report of that package alone would give them.
#[derive(Debug, Clone, Serialize)]
pub struct PackageSummary {
    /// The package folder, as typed (the root of its own report).
    pub path: String,
    pub verdict: Verdict,
    pub official_verdict: Verdict,
    /// Result logs checked.
    pub logs: usize,
    /// Benchmark folders.
    pub folders: usize,
    pub errors: usize,
    pub warnings: usize,
}

impl PackageSummary {
    /// The summary of `report`, the report of one package.
    pub fn of(report: &Report) -> PackageSummary {
        PackageSummary {
            path: report.root.clone(),
            verdict: report.verdict,
            official_verdict: report.official_verdict,
            logs: report.logs.len(),
            folders: report.benchmarks.len(),
            errors: report.summary.errors,
            warnings: report.summary.warnings,
        }
    }
}

/// One `results/<system>/<benchmark>` folder in the report.
#[derive(Debug, Clone, Serialize)]
pub struct BenchmarkReport {
    pub path: String,
    pub system: String,
    pub benchmark: String,
    /// `division` of the system description; `null` when unknown.
    pub division: Option<String>,
    /// `pass`, `fail`, or `skipped` (benchmark not in the round).
    pub verdict: PackageVerdict,
    /// Number of `result_*.txt` files.
    pub logs: usize,
    /// Runs (`result_3`) that are not compliant.
    pub non_compliant: Vec<String>,
    pub rcp_bypass: bool,
    pub seed_checker_bypass: bool,
    /// `null` for a skipped folder.
    pub rcp: Option<RcpResult>,
    pub score: Option<Score>,
    /// HPC: `strong` or `weak`, the scaling folder the benchmark sits in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaling: Option<String>,
    /// HPC weak scaling: time to train all models, their number and scale
    /// (`score` is `null` for such a folder).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weak_score: Option<crate::aggregate::stats::weak::WeakScore>,
    pub stats: Option<Stats>,
    /// Error and warning findings about the folder and its files.
    pub errors: usize,
    pub warnings: usize,
}

impl BenchmarkReport {
    pub fn from_verdict(v: &BenchmarkVerdict) -> BenchmarkReport {
        BenchmarkReport {
            path: v.path.clone(),
            system: v.system.clone(),
            benchmark: v.benchmark.clone(),
            division: v.division.clone(),
            verdict: v.verdict,
            logs: v.logs,
            non_compliant: v.non_compliant.clone(),
            rcp_bypass: v.rcp_bypass,
            seed_checker_bypass: v.seed_checker_bypass,
            rcp: None,
            score: None,
            scaling: v.scaling.clone(),
            weak_score: None,
            stats: None,
            errors: 0,
            warnings: 0,
        }
    }

    pub fn add_stats(&mut self, f: &FolderReport) {
        self.rcp = Some(f.rcp.clone());
        // A weak-scaling folder has its own score, no olympic one.
        self.score = f.weak.is_none().then(|| f.score.clone());
        self.weak_score = f.weak.clone();
        self.stats = Some(f.stats.clone());
    }

    /// Whether a finding is about this folder or a file in it.
    pub fn covers(&self, path: &str) -> bool {
        path == self.path
            || path
                .strip_prefix(self.path.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    }

    /// Counts the folder-level findings (package rules, statistics) and
    /// fails the folder on an error among them.
    pub fn finish(&mut self, findings: &[Finding]) {
        let mine: Vec<&Finding> = findings.iter().filter(|f| self.covers(&f.path)).collect();
        let errors = mine
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count();
        let warnings = mine
            .iter()
            .filter(|f| f.severity == Severity::Warning)
            .count();
        self.set_counts(errors, warnings);
    }

    /// [`finish`](Self::finish) with the findings counted already.
    pub fn set_counts(&mut self, errors: usize, warnings: usize) {
        self.errors = errors;
        self.warnings = warnings;
        if self.errors > 0 && self.verdict == PackageVerdict::Pass {
            self.verdict = PackageVerdict::Fail;
        }
    }
}

impl Report {
    /// Builds the report of a set of checked logs; findings are gathered from
    /// the logs and sorted.
    pub fn from_logs(usage: &str, ruleset: &str, root: &str, logs: Vec<LogCheck>) -> Report {
        let mut findings: Vec<Finding> = logs
            .iter()
            .flat_map(|l| l.findings.iter().cloned())
            .collect();
        crate::finding::sort_findings(&mut findings);
        Report::new(usage, ruleset, root, logs, findings)
    }

    /// A report of `logs` and `findings` (already sorted); the verdict is
    /// `fail` when a log fails, and callers with more to say override it.
    pub fn new(
        usage: &str,
        ruleset: &str,
        root: &str,
        logs: Vec<LogCheck>,
        findings: Vec<Finding>,
    ) -> Report {
        let errors = crate::finding::count(&findings, Severity::Error);
        let warnings = crate::finding::count(&findings, Severity::Warning);
        let verdict = if logs.iter().all(|l| l.verdict == Verdict::Pass) {
            Verdict::Pass
        } else {
            Verdict::Fail
        };
        Report {
            schema: SCHEMA,
            tool: "mlaudit",
            version: env!("CARGO_PKG_VERSION"),
            usage: usage.to_string(),
            ruleset: ruleset.to_string(),
            ruleset_source: "flag".to_string(),
            ruleset_reason: "--ruleset".to_string(),
            root: if root.is_empty() {
                ".".to_string()
            } else {
                root.to_string()
            },
            verdict,
            official_verdict: verdict,
            verdict_difference: None,
            summary: Summary {
                errors,
                warnings,
                logs: logs.len(),
                benchmarks: 0,
            },
            logs,
            benchmarks: Vec::new(),
            packages: Vec::new(),
            findings,
            bypasses: Vec::new(),
            waived: Vec::new(),
            repeatability: Vec::new(),
            baseline: None,
        }
    }
}

impl Report {
    /// Records where the ruleset came from.
    pub fn set_ruleset_source(&mut self, chosen: &crate::discover::round::Chosen) {
        self.ruleset_source = chosen.source.name().to_string();
        self.ruleset_reason = chosen.why.clone();
    }

    /// One report of several checks made with the same rules (the folders
    /// and packages a change touches): logs, folders and findings
    /// gathered and sorted, counts recomputed, and the verdicts failing
    /// when any part fails. `root` names what was checked as a whole.
    pub fn merge(usage: &str, ruleset: &str, root: &str, parts: Vec<Report>) -> Report {
        let mut logs = Vec::new();
        let mut benchmarks = Vec::new();
        let mut packages = Vec::new();
        let mut findings = Vec::new();
        let mut bypasses = Vec::new();
        let mut waived = Vec::new();
        let mut repeatability = Vec::new();
        let mut verdict = Verdict::Pass;
        let mut official = Verdict::Pass;
        let mut differences: Vec<String> = Vec::new();
        for p in parts {
            logs.extend(p.logs);
            benchmarks.extend(p.benchmarks);
            packages.extend(p.packages);
            findings.extend(p.findings);
            bypasses.extend(p.bypasses);
            waived.extend(p.waived);
            repeatability.extend(p.repeatability);
            if p.verdict == Verdict::Fail {
                verdict = Verdict::Fail;
            }
            if p.official_verdict == Verdict::Fail {
                official = Verdict::Fail;
            }
            if let Some(d) = p.verdict_difference {
                if !differences.contains(&d) {
                    differences.push(d);
                }
            }
        }
        logs.sort_by(|a, b| a.path.cmp(&b.path));
        logs.dedup_by(|a, b| a.path == b.path);
        benchmarks.sort_by(|a, b| a.path.cmp(&b.path));
        benchmarks.dedup_by(|a, b| a.path == b.path);
        packages.sort_by(|a: &PackageSummary, b: &PackageSummary| a.path.cmp(&b.path));
        packages.dedup_by(|a, b| a.path == b.path);
        crate::finding::sort_findings(&mut findings);
        bypasses.sort();
        bypasses.dedup();
        let mut report = Report::new(usage, ruleset, root, logs, findings);
        report.verdict = verdict;
        report.official_verdict = official;
        if verdict != official {
            report.verdict_difference = Some(differences.join("; "));
        }
        report.summary.benchmarks = benchmarks.len();
        report.benchmarks = benchmarks;
        report.packages = packages;
        report.bypasses = bypasses;
        crate::finding::sort_findings(&mut waived);
        report.waived = waived;
        repeatability.sort();
        repeatability.dedup();
        report.repeatability = repeatability;
        report
    }
}
