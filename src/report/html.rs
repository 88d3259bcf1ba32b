//! `check --html FILE`: one self-contained HTML page a reviewer can read.
//!
//! The page is rendered from the minijinja templates in `templates/`
//! (compiled into the binary) with HTML auto-escaping on for every
//! template, so every string that comes from a log, a config or a system
//! description is shown as text. Only the page's own stylesheet and script,
//! constants of this crate, are inserted unescaped, and a
//! Content-Security-Policy lets nothing but that script (by its SHA-256)
//! run: no network, no external fonts, no other script.
//!
//! Charts are inline SVG computed here ([`svg`]), so the page reads fully
//! without JavaScript; the small script only sorts tables and filters the
//! findings. Output is deterministic: no timestamps, everything sorted.

pub mod findings;
pub mod repeatability;
pub mod round;
pub mod svg;
pub mod target;

use crate::aggregate::package::Verdict as FolderVerdict;
use crate::aggregate::stats::data::{RcpParams, RcpTable, StatsConfig};
use crate::aggregate::stats::olympic;
use crate::aggregate::stats::rcp::{PruneMode, RcpSet, Verdict as RcpVerdict};
use crate::aggregate::stats::reader::FolderRuns;
use crate::check::rules::Verdict;
use crate::finding::{Finding, Severity};
use crate::report::{BenchmarkReport, CheckOutcome, Report};
use crate::rulebook::codes::CodeRegistry;
use findings::{CodeLink, FindingsView, Why};
use minijinja::{context, AutoEscape, Environment, UndefinedBehavior, Value};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use svg::{Chart, Curve, RcpPicture, RefPoint, Role, TimedRun};
use target::QualityTarget;

const PAGE: &str = include_str!("../../templates/report.html");
const CHART: &str = include_str!("../../templates/chart.html");
const STYLE: &str = include_str!("../../templates/report.css");
const SCRIPT: &str = include_str!("../../templates/report.js");

/// What the page needs besides the outcome: rule data already loaded by
/// the caller, and words it decided.
pub struct HtmlOptions<'a> {
    /// The statistics thresholds and RCP tables of the ruleset (for the
    /// reference points on the charts and the olympic roles).
    pub stats: &'a StatsConfig,
    /// The code registry (help text of the findings).
    pub codes: &'a CodeRegistry,
    /// Where the rules came from, in words.
    pub rules_source: String,
    /// The command that reproduces the verdict.
    pub command: String,
    /// Quality targets by compliance pack name (`closed_bert`), drawn on
    /// the evaluation charts ([`target::from_ruleset`]).
    pub targets: BTreeMap<String, QualityTarget>,
}

/// Renders and writes the page.
pub fn write_report(
    path: &Path,
    outcome: &CheckOutcome,
    opts: &HtmlOptions<'_>,
) -> anyhow::Result<()> {
    let html = render(outcome, opts)?;
    std::fs::write(path, html)
        .map_err(|e| anyhow::anyhow!("{}: cannot write the HTML report: {e}", path.display()))
}

/// The base64 SHA-256 digest of the page's script, which the
/// Content-Security-Policy names as the one script allowed to run.
fn script_hash() -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(SCRIPT.as_bytes()))
}

/// The page as a string.
pub fn render(outcome: &CheckOutcome, opts: &HtmlOptions<'_>) -> anyhow::Result<String> {
    let page = build_page(outcome, opts);
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.add_template("chart.html", CHART)?;
    env.add_template("report.html", PAGE)?;
    let tmpl = env.get_template("report.html")?;
    let csp = format!(
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{}'; base-uri 'none'; form-action 'none'",
        script_hash()
    );
    let html = tmpl.render(context! {
        page => Value::from_serialize(&page),
        csp => csp,
        // Constants of this crate, never data: the only unescaped text.
        style => Value::from_safe_string(STYLE.to_string()),
        script => Value::from_safe_string(SCRIPT.to_string()),
    })?;
    Ok(html)
}

#[derive(Debug, Serialize)]
struct Page {
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
    repeatability: Vec<repeatability::NoteView>,
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

#[derive(Debug, Serialize)]
struct FolderView {
    anchor: String,
    /// Set on the first folder of each package of a round: the package's
    /// heading.
    package_head: Option<PackageHead>,
    path: String,
    path_segments: Vec<String>,
    verdict: &'static str,
    /// Its findings, per code, linking to them.
    links: Vec<CodeLink>,
    /// The runs that are not compliant and why.
    failed: Vec<FailedRun>,
    facts: Vec<Fact>,
    charts: Vec<Chart>,
    runs: Vec<RunRow>,
    note: String,
}

#[derive(Debug, Serialize)]
struct PackageHead {
    anchor: String,
    path: String,
    verdict: &'static str,
}

#[derive(Debug, Serialize)]
struct FailedRun {
    name: String,
    why: Vec<Why>,
}

#[derive(Debug, Serialize)]
struct Fact {
    name: &'static str,
    value: String,
}

#[derive(Debug, Serialize)]
struct RunRow {
    name: String,
    compliant: &'static str,
    status: String,
    minutes: String,
    minutes_sort: String,
    convergence: String,
    evals: usize,
    role: &'static str,
    role_class: &'static str,
    /// For a run that is not compliant: the errors that made it so.
    why: Vec<Why>,
}

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
    }
}

fn folder_verdict(v: FolderVerdict) -> &'static str {
    match v {
        FolderVerdict::Pass => "pass",
        FolderVerdict::Fail => "fail",
        FolderVerdict::Skipped => "skipped",
    }
}

fn rcp_word(v: RcpVerdict) -> &'static str {
    match v {
        RcpVerdict::Pass => "pass",
        RcpVerdict::Fail => "fail",
        RcpVerdict::Bypassed => "bypassed",
        RcpVerdict::NotApplicable => "not_applicable",
    }
}

fn fixed(v: Option<f64>, decimals: usize) -> String {
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

fn build_page(outcome: &CheckOutcome, opts: &HtmlOptions<'_>) -> Page {
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
        let mut view = folder_view(i, b, runs, &ctx, &mut tables);
        view.links = found.folder_links.remove(&i).unwrap_or_default();
        view.failed = b
            .non_compliant
            .iter()
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
            view.facts.splice(0..0, system_facts(desc));
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
        repeatability: repeatability::view(&report.repeatability),
    }
}

/// What the system description says about the hardware, as text.
fn system_facts(desc: &serde_json::Value) -> Vec<Fact> {
    let text = |key: &str| -> Option<String> {
        let t = match desc.get(key)? {
            serde_json::Value::String(s) => s.trim().to_string(),
            serde_json::Value::Null => return None,
            other => other.to_string(),
        };
        (!t.is_empty()).then_some(t)
    };
    let mut facts = Vec::new();
    if let Some(name) = text("system_name") {
        facts.push(Fact {
            name: "system",
            value: name,
        });
    }
    let accel = match (
        text("number_of_nodes"),
        text("accelerators_per_node"),
        text("accelerator_model_name"),
    ) {
        (Some(n), Some(a), Some(m)) => Some(format!(
            "{n} {} × {a} {m}",
            if n == "1" { "node" } else { "nodes" }
        )),
        (None, Some(a), Some(m)) => Some(format!("{a} × {m}")),
        (_, _, Some(m)) => Some(m),
        _ => None,
    };
    if let Some(a) = accel {
        facts.push(Fact {
            name: "accelerators",
            value: a,
        });
    }
    if let Some(f) = text("framework") {
        facts.push(Fact {
            name: "framework",
            value: f,
        });
    }
    facts
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

/// RCP sets by benchmark, built once each from the loaded tables.
struct RcpTables<'a> {
    tables: &'a BTreeMap<String, RcpTable>,
    params: &'a RcpParams,
    sets: BTreeMap<String, Option<RcpSet>>,
}

impl<'a> RcpTables<'a> {
    fn new(tables: &'a BTreeMap<String, RcpTable>, params: &'a RcpParams) -> Self {
        RcpTables {
            tables,
            params,
            sets: BTreeMap::new(),
        }
    }

    fn get(&mut self, benchmark: &str) -> Option<&RcpSet> {
        let (tables, params) = (self.tables, self.params);
        self.sets
            .entry(benchmark.to_string())
            .or_insert_with(|| {
                tables
                    .get(benchmark)
                    .and_then(|t| RcpSet::new(t, params, PruneMode::Official))
            })
            .as_ref()
    }
}

/// What a folder card needs besides its own folder.
struct FolderContext<'a> {
    compliant: &'a HashMap<&'a str, bool>,
    params: &'a RcpParams,
    why: &'a BTreeMap<String, Vec<Why>>,
    target: Option<QualityTarget>,
}

fn folder_view(
    i: usize,
    b: &BenchmarkReport,
    runs: Option<&FolderRuns>,
    ctx: &FolderContext<'_>,
    tables: &mut RcpTables<'_>,
) -> FolderView {
    let (compliant_by_path, params) = (ctx.compliant, ctx.params);
    let anchor = format!("folder-{i}");
    let mut facts = vec![Fact {
        name: "division",
        value: b.division.clone().unwrap_or_else(|| "unknown".to_string()),
    }];
    if let Some(r) = &b.rcp {
        facts.push(Fact {
            name: "RCP",
            value: format!("{}: {}", rcp_word(r.verdict), r.message),
        });
        if let Some(bs) = r.global_batch_size {
            facts.push(Fact {
                name: "global batch size",
                value: svg::whole(bs),
            });
        }
        if let (Some(m), Some(min), Some(rm)) = (r.mean_epochs, r.min_epochs, r.rcp_mean) {
            facts.push(Fact {
                name: "convergence",
                value: format!(
                    "submission mean {}, RCP mean {}, minimum acceptable {}",
                    svg::human(m),
                    svg::human(rm),
                    svg::human(min)
                ),
            });
        }
        if let Some(nf) = r.norm_factor {
            facts.push(Fact {
                name: "norm factor",
                value: format!("{nf:.4}"),
            });
        }
    }
    if let Some(s) = &b.score {
        facts.push(Fact {
            name: "score",
            value: match s.minutes {
                Some(m) => format!(
                    "{m:.3} min ({} runs used, {} failed)",
                    s.runs_used, s.runs_failed
                ),
                None => format!("none ({} runs used, {} failed)", s.runs_used, s.runs_failed),
            },
        });
    }
    if let Some(st) = &b.stats {
        let mut v = format!("{} converged runs", st.n);
        if let Some(cv) = st.cv {
            v.push_str(&format!(", CV {:.1}%", cv * 100.0));
        }
        if let Some([lo, hi]) = st.ci95_minutes {
            v.push_str(&format!(", 95% CI of the mean {lo:.3}–{hi:.3} min"));
        }
        facts.push(Fact {
            name: "spread",
            value: v,
        });
    }
    let mut view = FolderView {
        anchor: anchor.clone(),
        package_head: None,
        path: b.path.clone(),
        path_segments: findings::segments(&b.path),
        verdict: folder_verdict(b.verdict),
        links: Vec::new(),
        failed: Vec::new(),
        facts,
        charts: Vec::new(),
        runs: Vec::new(),
        note: String::new(),
    };
    let Some(folder) = runs else {
        view.note = if b.verdict == FolderVerdict::Skipped {
            "not checked: the benchmark is not part of this round".into()
        } else {
            "no runs were read from this folder".into()
        };
        return view;
    };
    let bm = folder
        .benchmark()
        .map(str::to_string)
        .unwrap_or_else(|| b.benchmark.clone());
    let compliant: Vec<bool> = folder
        .runs
        .iter()
        .map(|r| {
            compliant_by_path
                .get(r.path.to_string_lossy().as_ref())
                .copied()
                .unwrap_or(false)
        })
        .collect();
    let roles = olympic::roles(&folder.runs, &compliant, params.trim(&bm));
    let unit = if params.in_samples(&bm) || bm == "stable_diffusion" {
        "samples_count"
    } else {
        "epoch_num"
    };

    // Evaluation curves.
    let metric = folder.runs.iter().find_map(|r| r.eval_metric.clone());
    let curves: Vec<Curve> = folder
        .runs
        .iter()
        .enumerate()
        .map(|(k, r)| Curve {
            name: r.name.clone(),
            index: k,
            points: r.eval_points.clone(),
            target: r.convergence,
        })
        .collect();
    let y_label = match &metric {
        Some(m) => format!("eval_accuracy ({m})"),
        None => "eval_accuracy".to_string(),
    };
    if let Some(c) = svg::eval_chart(
        &format!("{anchor}-eval"),
        format!("{y_label} by {unit}"),
        unit,
        &y_label,
        &curves,
        ctx.target,
    ) {
        view.charts.push(c);
    }

    // Time to train.
    let timed: Vec<TimedRun> = folder
        .runs
        .iter()
        .zip(&roles)
        .map(|(r, role)| TimedRun {
            name: r.name.clone(),
            minutes: r.minutes(),
            role: *role,
        })
        .collect();
    let mean = b
        .score
        .as_ref()
        .and_then(|s| s.minutes.map(|m| m / s.scaling_factor));
    if let Some(c) = svg::time_chart(
        &format!("{anchor}-time"),
        "time to train per run".into(),
        &timed,
        mean,
    ) {
        view.charts.push(c);
    }

    // RCP picture.
    if let Some(set) = tables.get(&bm) {
        let active: BTreeSet<&str> = set.active.iter().map(|p| p.name.as_str()).collect();
        let refs = set
            .all
            .iter()
            .map(|p| RefPoint {
                name: p.name.clone(),
                batch_size: p.batch_size,
                mean: p.mean,
                min_mean: p.min_epochs,
                active: active.contains(p.name.as_str()),
            })
            .collect();
        let rcp = b.rcp.as_ref();
        let used = rcp
            .and_then(|r| r.rcp.as_ref())
            .filter(|p| p.interpolated)
            .map(|p| RefPoint {
                name: p.name.clone(),
                batch_size: p.batch_size,
                mean: p.mean,
                min_mean: rcp.and_then(|r| r.min_epochs).unwrap_or(p.min_epochs),
                active: true,
            });
        let submission = rcp.and_then(|r| {
            Some((
                r.global_batch_size?,
                r.mean_epochs.filter(|m| *m < params.not_converged_value)?,
                r.passed(),
            ))
        });
        let pic = RcpPicture {
            unit: unit.to_string(),
            refs,
            used,
            submission,
            runs: folder.runs.iter().filter_map(|r| r.convergence).collect(),
        };
        if let Some(c) = svg::rcp_chart(
            &format!("{anchor}-rcp"),
            format!("RCP: {bm} convergence by batch size"),
            &pic,
        ) {
            view.charts.push(c);
        }
    }

    view.runs = folder
        .runs
        .iter()
        .zip(&compliant)
        .zip(&roles)
        .map(|((r, ok), role)| {
            let m = r.minutes();
            RunRow {
                name: r.name.clone(),
                compliant: if *ok { "pass" } else { "fail" },
                status: r.run_stop_status.clone().unwrap_or_default(),
                minutes: fixed(m, 3),
                minutes_sort: fixed(m, 6),
                convergence: r.convergence.map(svg::human).unwrap_or_default(),
                evals: r.eval_points.len(),
                role: role.describe(),
                why: if *ok {
                    Vec::new()
                } else {
                    ctx.why
                        .get(r.path.to_string_lossy().as_ref())
                        .cloned()
                        .unwrap_or_default()
                },
                role_class: match role {
                    Role::Counted => "counted",
                    Role::DroppedFastest => "dropped-fast",
                    Role::DroppedSlowest => "dropped-slow",
                    Role::Failed => "failed",
                    Role::Unscored => "unscored",
                },
            }
        })
        .collect();
    view
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_hash_is_sha256_in_base64() {
        // `printf '' | openssl dgst -sha256 -binary | base64` for the empty
        // string, and the hash is 44 characters of base64 for the script.
        use base64::Engine as _;
        use sha2::Digest as _;
        assert_eq!(
            base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(b"")),
            "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
        );
        assert_eq!(script_hash().len(), 44);
    }

    #[test]
    fn only_constants_are_unescaped() {
        for t in [PAGE, CHART] {
            assert!(!t.contains("|safe") && !t.contains("| safe"));
        }
        // The stylesheet and the script cannot close their elements.
        assert!(!SCRIPT.contains("</") && !STYLE.contains("</"));
    }
}
