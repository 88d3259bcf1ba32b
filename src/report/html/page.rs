//! The page's view: everything the report template shows, computed from
//! the check outcome before any HTML is written. [`build`] turns a
//! [`CheckOutcome`] into a [`Page`]; `html.rs` only renders it.

use super::findings::{self, FindingsView};
use super::folder::{self, FailedRun, FolderContext, FolderView, PackageHead, RcpTables};
use super::round;
use super::HtmlOptions;
use crate::aggregate::package::Verdict as FolderVerdict;
use crate::aggregate::stats::rcp::Verdict as RcpVerdict;
use crate::aggregate::stats::reader::FolderRuns;
use crate::check::rules::Verdict;
use crate::finding::{Finding, Severity};
use crate::report::{BenchmarkReport, CheckOutcome, Report};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

#[derive(Debug, Serialize)]
pub(super) struct Page {
    title: String,
    root: String,
    verdict: &'static str,
    /// The official tools' verdict when it differs.
    official_verdict: Option<&'static str>,
    /// Why it differs, in one line.
    official_why: String,
    tool: &'static str,
    version: &'static str,
    usage: String,
    ruleset: String,
    rules_source: String,
    command: String,
    summary: SummaryView,
    bypasses: Vec<String>,
    rows: Vec<Row>,
    /// The round at a glance and the tables per benchmark, when more than
    /// one package was checked.
    round: Option<round::RoundView>,
    /// What changed since `--baseline`.
    baseline: Option<crate::report::baseline::BaselineDiff>,
    findings: FindingsView,
    /// Codes found, and folders with findings.
    finding_codes: usize,
    finding_folders: usize,
    folders: Vec<FolderView>,
    glossary: Vec<CodeView>,
    charts: usize,
    repeatability: Vec<super::repeatability::NoteView>,
}

#[derive(Debug, Serialize)]
struct SummaryView {
    logs: usize,
    failed_logs: usize,
    benchmarks: usize,
    failed_benchmarks: usize,
    errors: usize,
    warnings: usize,
    notes: usize,
}

/// One line of the system × benchmark table.
#[derive(Debug, Serialize)]
struct Row {
    anchor: String,
    path: String,
    system: String,
    benchmark: String,
    division: String,
    verdict: &'static str,
    score: String,
    score_sort: String,
    rcp: &'static str,
    rcp_message: String,
    norm_factor: String,
    runs_passed: usize,
    runs_failed: usize,
    cv: String,
    cv_sort: String,
    errors: usize,
    warnings: usize,
}

#[derive(Debug, Serialize)]
struct CodeView {
    code: String,
    anchor: String,
    title: String,
    severity: String,
    help: String,
    policy: String,
    extra: bool,
    count: usize,
}

pub(super) fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
    }
}

pub(super) fn folder_verdict(v: FolderVerdict) -> &'static str {
    match v {
        FolderVerdict::Pass => "pass",
        FolderVerdict::Fail => "fail",
        FolderVerdict::Skipped => "skipped",
    }
}

pub(super) fn rcp_word(v: RcpVerdict) -> &'static str {
    match v {
        RcpVerdict::Pass => "pass",
        RcpVerdict::Fail => "fail",
        RcpVerdict::Bypassed => "bypassed",
        RcpVerdict::NotApplicable => "not_applicable",
    }
}

pub(super) fn fixed(v: Option<f64>, decimals: usize) -> String {
    match v.filter(|x| x.is_finite()) {
        Some(x) => format!("{x:.decimals$}"),
        None => String::new(),
    }
}

fn code_anchor(code: &str) -> String {
    let safe: String = code
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("code-{safe}")
}

/// The view of the whole page.
pub(super) fn build(outcome: &CheckOutcome, opts: &HtmlOptions<'_>) -> Page {
    let report = &outcome.report;
    let verdict = verdict_word(report.verdict);
    let official_verdict =
        (report.official_verdict != report.verdict).then(|| verdict_word(report.official_verdict));
    let compliant: HashMap<&str, bool> = report
        .logs
        .iter()
        .map(|l| (l.path.as_str(), l.verdict == Verdict::Pass))
        .collect();
    let runs_by_dir: HashMap<String, &FolderRuns> = outcome
        .runs
        .iter()
        .map(|f| (f.dir.display().to_string(), f))
        .collect();
    let mut tables = RcpTables::new(&opts.stats.rcp_tables, &opts.stats.rcp);

    let rows: Vec<Row> = report
        .benchmarks
        .iter()
        .enumerate()
        .map(|(i, b)| row(i, b))
        .collect();
    let mut found = findings::build(
        &report.findings,
        &report.benchmarks,
        opts.codes,
        &|i| format!("folder-{i}"),
        &|c| code_anchor(c),
        &|f| {
            report
                .baseline
                .as_ref()
                .is_some_and(|d| d.new.iter().any(|n| n == f))
        },
    );
    let mut folders = Vec::new();
    for (i, b) in report.benchmarks.iter().enumerate() {
        let runs = runs_by_dir.get(b.path.as_str()).copied();
        let ctx = FolderContext {
            compliant: &compliant,
            params: &opts.stats.rcp,
            why: &found.why,
            target: b
                .division
                .as_deref()
                .and_then(|d| opts.targets.get(&format!("{d}_{}", b.benchmark)))
                .copied(),
        };
        let mut view = folder::view(i, b, runs, &ctx, &mut tables);
        view.links = found.folder_links.remove(&i).unwrap_or_default();
        view.failed = b
            .non_compliant
            .iter()
            .take(folder::MAX_RUNS_SHOWN)
            .map(|name| FailedRun {
                name: name.clone(),
                why: found
                    .why
                    .iter()
                    .filter(|(path, _)| {
                        b.covers(path)
                            && path
                                .rsplit('/')
                                .next()
                                .is_some_and(|f| f.trim_end_matches(".txt") == name)
                    })
                    .flat_map(|(_, w)| w.iter().cloned())
                    .collect(),
            })
            .collect();
        if let Some(desc) = outcome.systems.get(&b.system) {
            view.facts.splice(0..0, folder::system_facts(desc));
        }
        folders.push(view);
    }
    if report.packages.len() > 1 {
        let mut last = None;
        for (f, b) in folders.iter_mut().zip(&report.benchmarks) {
            let pkg = round::package_of(&b.path, &report.packages);
            if pkg.is_some() && pkg != last {
                f.package_head = pkg.and_then(|n| {
                    report.packages.get(n).map(|p| PackageHead {
                        anchor: round::package_anchor(n),
                        path: p.path.clone(),
                        verdict: verdict_word(p.verdict),
                    })
                });
            }
            last = pkg;
        }
    }
    let round = round::build(report, &outcome.systems, &|i| format!("folder-{i}"), &|b| {
        let r = row(0, b);
        round::Cells {
            verdict: r.verdict,
            score: r.score,
            score_sort: r.score_sort,
            rcp: r.rcp,
            rcp_message: r.rcp_message,
            norm_factor: r.norm_factor,
            cv: r.cv,
            cv_sort: r.cv_sort,
        }
    });
    let charts = folders.iter().map(|f| f.charts.len()).sum();
    let glossary = glossary(&report.findings, opts);
    let finding_codes = found.groups.len();
    let finding_folders = found.by_folder.len();
    let summary = SummaryView {
        logs: report.logs.len(),
        failed_logs: report
            .logs
            .iter()
            .filter(|l| l.verdict == Verdict::Fail)
            .count(),
        benchmarks: report.benchmarks.len(),
        failed_benchmarks: report
            .benchmarks
            .iter()
            .filter(|b| b.verdict == FolderVerdict::Fail)
            .count(),
        errors: report.summary.errors,
        warnings: report.summary.warnings,
        notes: crate::finding::count(&report.findings, Severity::Note),
    };
    // A round's report has no single root: name the folder its packages
    // are in.
    let root = if report.root.is_empty() {
        report
            .packages
            .first()
            .and_then(|p| p.path.rsplit_once('/'))
            .map(|(dir, _)| format!("round {dir}"))
            .unwrap_or_else(|| format!("{} packages", report.packages.len()))
    } else {
        report.root.clone()
    };
    Page {
        title: format!(
            "{} {} · mlaudit {} {}",
            verdict.to_ascii_uppercase(),
            root,
            report.usage,
            report.ruleset
        ),
        root,
        verdict,
        official_verdict,
        official_why: report.verdict_difference.clone().unwrap_or_else(|| {
            "the difference comes from checks they do not make (marked extra in the rule glossary)"
                .to_string()
        }),
        tool: report.tool,
        version: report.version,
        usage: report.usage.clone(),
        ruleset: report.ruleset.clone(),
        rules_source: opts.rules_source.clone(),
        command: opts.command.clone(),
        summary,
        bypasses: bypasses(report),
        rows,
        round,
        baseline: report.baseline.clone(),
        findings: found,
        finding_codes,
        finding_folders,
        folders,
        glossary,
        charts,
        repeatability: super::repeatability::view(&report.repeatability),
    }
}

fn bypasses(report: &Report) -> Vec<String> {
    report
        .bypasses
        .iter()
        .map(|b| {
            format!(
                "{} from {}{}",
                b.flag,
                b.source,
                if b.official_honours {
                    ""
                } else {
                    " (the official package_checker ignores it)"
                }
            )
        })
        .collect()
}

fn row(i: usize, b: &BenchmarkReport) -> Row {
    let score = b.score.as_ref().and_then(|s| s.minutes);
    let cv = b.stats.as_ref().and_then(|s| s.cv);
    Row {
        anchor: format!("folder-{i}"),
        path: b.path.clone(),
        system: b.system.clone(),
        benchmark: b.benchmark.clone(),
        division: b.division.clone().unwrap_or_default(),
        verdict: folder_verdict(b.verdict),
        score: fixed(score, 3),
        score_sort: fixed(score, 6),
        rcp: b.rcp.as_ref().map_or("", |r| rcp_word(r.verdict)),
        rcp_message: b
            .rcp
            .as_ref()
            .map(|r| r.message.clone())
            .unwrap_or_default(),
        norm_factor: fixed(b.rcp.as_ref().and_then(|r| r.norm_factor), 4),
        runs_passed: b.logs.saturating_sub(b.non_compliant.len()),
        runs_failed: b.non_compliant.len(),
        cv: fixed(cv.map(|c| c * 100.0), 1),
        cv_sort: fixed(cv, 6),
        errors: b.errors,
        warnings: b.warnings,
    }
}

/// The rule glossary: each code found, its help text once.
fn glossary(findings: &[Finding], opts: &HtmlOptions<'_>) -> Vec<CodeView> {
    let codes = opts.codes;
    let mut used: BTreeMap<&str, usize> = BTreeMap::new();
    for f in findings {
        *used.entry(f.code.as_str()).or_default() += 1;
    }
    used.into_iter()
        .map(|(code, count)| {
            let doc = codes.get(code);
            CodeView {
                code: code.to_string(),
                anchor: code_anchor(code),
                title: doc
                    .map(|d| d.title.clone())
                    .unwrap_or_else(|| "(not documented)".into()),
                severity: doc.map(|d| d.severity.clone()).unwrap_or_default(),
                help: doc.map(|d| d.help.clone()).unwrap_or_default(),
                policy: doc.and_then(|d| d.policy.clone()).unwrap_or_default(),
                extra: doc.is_some_and(|d| d.extra),
                count,
            }
        })
        .collect()
}
