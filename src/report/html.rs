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

mod sha256;
pub mod svg;

use crate::audit::{CheckOutcome, Rules};
use crate::cli::CheckArgs;
use crate::finding::{Finding, Severity};
use crate::report::{BenchmarkReport, Report};
use crate::ruledata::RuleSource;
use crate::rules::Verdict;
use crate::stats::data::{RcpParams, RcpTable};
use crate::stats::rcp::{PruneMode, RcpSet, Verdict as RcpVerdict};
use crate::stats::reader::{FolderRuns, RunInfo};
use crate::submission::Verdict as FolderVerdict;
use minijinja::{context, AutoEscape, Environment, UndefinedBehavior, Value};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use svg::{Chart, Curve, RcpPicture, RefPoint, Role, TimedRun};

const PAGE: &str = include_str!("../../templates/report.html");
const CHART: &str = include_str!("../../templates/chart.html");
const STYLE: &str = include_str!("../../templates/report.css");
const SCRIPT: &str = include_str!("../../templates/report.js");

/// Findings listed per severity; the rest are counted (the JSON report has
/// them all).
pub const MAX_FINDINGS_PER_SEVERITY: usize = 2000;

/// What the page needs besides the outcome.
pub struct HtmlOptions<'a> {
    pub source: &'a RuleSource,
    pub rules: &'a Rules,
    /// The command that reproduces the verdict (see [`command_line`]).
    pub command: String,
}

/// The `check` command that reproduces a verdict: the options that change
/// it, not the output options (`--format`, `--html`).
pub fn command_line(args: &CheckArgs, usage: &str, ruleset: &str, source: &RuleSource) -> String {
    let mut words: Vec<String> = vec!["mlaudit".into()];
    if let RuleSource::Dir(dir) = source {
        words.push("--rules".into());
        words.push(dir.display().to_string());
    }
    words.push("check".into());
    if usage != "training" {
        words.push("--usage".into());
        words.push(usage.to_string());
    }
    words.push("--ruleset".into());
    words.push(ruleset.to_string());
    for (on, flag) in [
        (args.rcp_bypass, "--rcp-bypass"),
        (args.seed_checker_bypass, "--seed-checker-bypass"),
        (args.rcp_bert_train_samples, "--rcp-bert-train-samples"),
    ] {
        if on {
            words.push(flag.into());
        }
    }
    // A path starting with '-' would be read as an option: end the options.
    if args
        .paths
        .iter()
        .any(|p| p.as_os_str().as_encoded_bytes().starts_with(b"-"))
    {
        words.push("--".into());
    }
    words.extend(args.paths.iter().map(|p| p.display().to_string()));
    words
        .iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `w` as a POSIX shell word.
fn shell_quote(w: &str) -> String {
    let plain = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./=:,+@%".contains(c));
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
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
        sha256::base64(&sha256::digest(SCRIPT.as_bytes()))
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
    tool: &'static str,
    version: &'static str,
    usage: String,
    ruleset: String,
    rules_source: String,
    command: String,
    summary: SummaryView,
    bypasses: Vec<String>,
    rows: Vec<Row>,
    groups: Vec<Group>,
    folders: Vec<FolderView>,
    glossary: Vec<CodeView>,
    charts: usize,
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
struct Group {
    severity: &'static str,
    count: usize,
    findings: Vec<FindingView>,
    /// Findings beyond [`MAX_FINDINGS_PER_SEVERITY`].
    more: usize,
}

#[derive(Debug, Serialize)]
struct FindingView {
    location: String,
    code: String,
    code_anchor: String,
    title: String,
    message: String,
    help: String,
    rule: String,
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
    path: String,
    verdict: &'static str,
    facts: Vec<Fact>,
    charts: Vec<Chart>,
    runs: Vec<RunRow>,
    note: String,
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
    let mut tables = RcpTables::new(opts.source, &report.ruleset, &opts.rules.stats.rcp);

    let rows: Vec<Row> = report
        .benchmarks
        .iter()
        .enumerate()
        .map(|(i, b)| row(i, b))
        .collect();
    let mut folders = Vec::new();
    for (i, b) in report.benchmarks.iter().enumerate() {
        let runs = runs_by_dir.get(b.path.as_str()).copied();
        let mut view = folder_view(i, b, runs, &compliant, &opts.rules.stats.rcp, &mut tables);
        if let Some(desc) = outcome.systems.get(&b.system) {
            view.facts.splice(0..0, system_facts(desc));
        }
        folders.push(view);
    }
    let charts = folders.iter().map(|f| f.charts.len()).sum();
    let (groups, glossary) = findings_views(&report.findings, opts);
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
    Page {
        title: format!(
            "{} {} · mlaudit {} {}",
            verdict.to_ascii_uppercase(),
            report.root,
            report.usage,
            report.ruleset
        ),
        root: report.root.clone(),
        verdict,
        official_verdict,
        tool: report.tool,
        version: report.version,
        usage: report.usage.clone(),
        ruleset: report.ruleset.clone(),
        rules_source: match opts.source {
            RuleSource::Embedded => format!(
                "rules built into mlaudit {} (training/{}/)",
                report.version, report.ruleset
            ),
            RuleSource::Dir(d) => format!("rules from {}", d.display()),
        },
        command: opts.command.clone(),
        summary,
        bypasses: bypasses(report),
        rows,
        groups,
        folders,
        glossary,
        charts,
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

fn findings_views(findings: &[Finding], opts: &HtmlOptions<'_>) -> (Vec<Group>, Vec<CodeView>) {
    let codes = &opts.rules.codes;
    let mut groups = Vec::new();
    for sev in [Severity::Error, Severity::Warning, Severity::Note] {
        let mine: Vec<&Finding> = findings.iter().filter(|f| f.severity == sev).collect();
        if mine.is_empty() {
            continue;
        }
        let views = mine
            .iter()
            .take(MAX_FINDINGS_PER_SEVERITY)
            .map(|f| {
                let doc = codes.get(&f.code);
                FindingView {
                    location: match f.line {
                        Some(l) => format!("{}:{l}", f.path),
                        None => f.path.clone(),
                    },
                    code: f.code.clone(),
                    code_anchor: code_anchor(&f.code),
                    title: doc.map(|d| d.title.clone()).unwrap_or_default(),
                    message: f.message.clone(),
                    help: f
                        .help
                        .clone()
                        .or_else(|| doc.map(|d| d.help.clone()))
                        .unwrap_or_default(),
                    rule: f.rule.clone().unwrap_or_default(),
                }
            })
            .collect();
        groups.push(Group {
            severity: sev.as_str(),
            count: mine.len(),
            more: mine.len().saturating_sub(MAX_FINDINGS_PER_SEVERITY),
            findings: views,
        });
    }
    let mut used: BTreeMap<&str, usize> = BTreeMap::new();
    for f in findings {
        *used.entry(f.code.as_str()).or_default() += 1;
    }
    let glossary = used
        .into_iter()
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
        .collect();
    (groups, glossary)
}

/// RCP sets by benchmark, loaded once each.
struct RcpTables<'a> {
    source: &'a RuleSource,
    ruleset: &'a str,
    params: &'a RcpParams,
    sets: BTreeMap<String, Option<RcpSet>>,
}

impl<'a> RcpTables<'a> {
    fn new(source: &'a RuleSource, ruleset: &'a str, params: &'a RcpParams) -> Self {
        RcpTables {
            source,
            ruleset,
            params,
            sets: BTreeMap::new(),
        }
    }

    fn get(&mut self, benchmark: &str) -> Option<&RcpSet> {
        let (source, ruleset, params) = (self.source, self.ruleset, self.params);
        self.sets
            .entry(benchmark.to_string())
            .or_insert_with(|| {
                // A missing or broken table already shows as an RCP finding.
                RcpTable::load(source, ruleset, benchmark)
                    .ok()
                    .flatten()
                    .and_then(|t| RcpSet::new(&t, params, PruneMode::Official))
            })
            .as_ref()
    }
}

/// What the olympic score does with each run (`runs[i]`): the `trim`
/// fastest and the slowest are dropped, failed runs replace the slowest.
fn olympic_roles(runs: &[RunInfo], compliant: &[bool], trim: usize) -> Vec<Role> {
    let mut roles = vec![Role::Failed; runs.len()];
    let mut scored: Vec<(usize, f64)> = runs
        .iter()
        .enumerate()
        .filter(|(i, _)| compliant.get(*i).copied().unwrap_or(false))
        .filter_map(|(i, r)| r.minutes().map(|m| (i, m)))
        .collect();
    let failed = runs.len() - scored.len();
    if failed > trim {
        for (i, _) in &scored {
            roles[*i] = Role::Unscored;
        }
        return roles;
    }
    scored.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    let len = scored.len();
    let start = trim.min(len);
    let end = (len as i64 - (trim as i64 - failed as i64)).clamp(0, len as i64) as usize;
    for (k, (i, _)) in scored.iter().enumerate() {
        roles[*i] = if k < start {
            Role::DroppedFastest
        } else if k >= end {
            Role::DroppedSlowest
        } else {
            Role::Counted
        };
    }
    roles
}

fn folder_view(
    i: usize,
    b: &BenchmarkReport,
    runs: Option<&FolderRuns>,
    compliant_by_path: &HashMap<&str, bool>,
    params: &RcpParams,
    tables: &mut RcpTables<'_>,
) -> FolderView {
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
        path: b.path.clone(),
        verdict: folder_verdict(b.verdict),
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
    let roles = olympic_roles(&folder.runs, &compliant, params.trim(&bm));
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
    fn only_constants_are_unescaped() {
        for t in [PAGE, CHART] {
            assert!(!t.contains("|safe") && !t.contains("| safe"));
        }
        // The stylesheet and the script cannot close their elements.
        assert!(!SCRIPT.contains("</") && !STYLE.contains("</"));
    }

    #[test]
    fn shell_words() {
        assert_eq!(shell_quote("NVIDIA/results"), "NVIDIA/results");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    fn run(name: &str, minutes: Option<f64>) -> RunInfo {
        RunInfo {
            path: name.into(),
            name: name.into(),
            benchmark: None,
            global_batch_size: None,
            gbs_line: None,
            convergence: None,
            run_start_ms: minutes.map(|_| 0.0),
            run_stop_ms: minutes.map(|m| m * 60_000.0),
            run_stop_status: None,
            evals: vec![],
            eval_steps: vec![],
            eval_points: vec![],
            eval_metric: None,
            content_hash: 0,
            findings: vec![],
        }
    }

    #[test]
    fn olympic_roles_follow_the_score() {
        use Role::*;
        let runs: Vec<RunInfo> = [3.0, 1.0, 5.0, 2.0, 4.0]
            .iter()
            .enumerate()
            .map(|(i, m)| run(&format!("r{i}"), Some(*m)))
            .collect();
        assert_eq!(
            olympic_roles(&runs, &[true; 5], 1),
            vec![Counted, DroppedFastest, DroppedSlowest, Counted, Counted]
        );
        // A failed run replaces the slowest: only the fastest is dropped.
        assert_eq!(
            olympic_roles(&runs, &[true, true, false, true, true], 1),
            vec![Counted, DroppedFastest, Failed, Counted, Counted]
        );
        assert_eq!(
            olympic_roles(&runs, &[false, true, false, true, true], 1),
            vec![Failed, Unscored, Failed, Unscored, Unscored]
        );
    }
}
