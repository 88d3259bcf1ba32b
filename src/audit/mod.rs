//! The `check` pipeline over a path: discover → check logs → package rules →
//! statistics → one [`Report`].
//!
//! 1. [`discover`](crate::discover::discover) says what the path is (a
//!    package, one benchmark folder or log files) and lists its files;
//! 2. every result log of a benchmark of the round goes through the
//!    compliance engine, in parallel;
//! 3. the package rules run with those verdicts;
//! 4. each benchmark folder gets the RCP check (closed division), the
//!    olympic score and the extra statistics;
//! 5. everything is gathered and sorted into a [`Report`].
//!
//! Nothing is written into the checked tree unless `write_scaling` asks
//! for the official `scaling.json` side effect.

pub mod progress;

use crate::aggregate::package::{
    self as submission, check_package_with,
    logscan::{self, LogFacts},
    LogOutcome, PackageOptions, PackageRules,
};
use crate::aggregate::stats::{
    self,
    data::StatsConfig,
    reader::{ContentHash, FolderRuns, RunCollector, RunInfo},
};
use crate::check::policy::{self, PolicyRules};
use crate::check::rules::{self, LogCheck, Ruleset, Verdict};
use crate::config::Config;
use crate::discover::{self, tree::FileRef, BenchmarkDir, InputKind};
use crate::finding::code;
use crate::finding::{sort_findings, Finding, Severity};
use crate::report::{BenchmarkReport, Report};
use crate::rulebook::codes::CodeRegistry;
use crate::rulebook::source::RuleSource;
use progress::{Progress, Silent};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// What `check` was asked to do.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    pub usage: String,
    pub ruleset: String,
    pub package: PackageOptions,
    /// BERT convergence from `train_samples` (`--rcp-bert-train-samples`).
    pub bert_train_samples: bool,
    /// Write `scaling.json` as the official tools do.
    pub write_scaling: bool,
    /// The project config, whose waivers apply to the findings.
    pub config: Option<Config>,
}

pub use crate::report::CheckOutcome;

/// The rule data `check` needs, loaded once.
pub struct Rules {
    pub compliance: Ruleset,
    pub package: PackageRules,
    pub stats: StatsConfig,
    pub codes: CodeRegistry,
    /// The closed-division policy pack; `None` for a round without one.
    pub policy: Option<PolicyRules>,
    /// The repository checks (`rules/repo.yaml`).
    pub repo: crate::aggregate::package::repo::RepoRules,
    /// The ruleset's version (the repository checks' severity depends on it).
    pub version: String,
}

impl Rules {
    pub fn load(source: &RuleSource, usage: &str, version: &str) -> anyhow::Result<Rules> {
        // The policy pack (regex sets) takes most of the start-up: it
        // loads on the other core while the rest loads here. Errors are
        // reported in the order the loads were written.
        // The code registry is read once and shared by both halves (after
        // the check that a `--rules DIR` is a folder, whose error comes first).
        crate::check::rules::load::check_dir(source)?;
        let codes = CodeRegistry::load(source)?;
        let (policy, rest) = rayon::join(
            || PolicyRules::find_with_codes(source, &codes, usage, version),
            || -> anyhow::Result<_> {
                Ok((
                    Ruleset::load_with_codes(source, &codes, usage, version)?,
                    PackageRules::load(source, usage, version)?,
                    StatsConfig::load(source, usage, version)?,
                ))
            },
        );
        let (compliance, package, stats) = rest?;
        Ok(Rules {
            compliance,
            package,
            stats,
            codes,
            policy: policy?,
            repo: crate::aggregate::package::repo::RepoRules::load(source)?,
            version: version.to_string(),
        })
    }
}

/// One folder's entry, runs and statistics findings.
type FolderResult = (BenchmarkReport, Option<FolderRuns>, Vec<Finding>);

/// Checks `input` (package, benchmark folder or log file).
pub fn check_path(
    rules: &Rules,
    input: &Path,
    opts: &CheckOptions,
) -> anyhow::Result<CheckOutcome> {
    check_path_with_progress(rules, input, opts, &Silent)
}

/// [`check_path_with_progress`] on several inputs, one after the other,
/// merged into one report whose paths are relative to `root` (`""`: the
/// current directory). An empty input path is the current directory.
pub fn check_paths(
    rules: &Rules,
    inputs: &[std::path::PathBuf],
    root: &str,
    opts: &CheckOptions,
    progress: &dyn Progress,
) -> anyhow::Result<CheckOutcome> {
    let mut reports = Vec::new();
    let mut runs = Vec::new();
    let mut systems = BTreeMap::new();
    for path in inputs {
        let input = if path.as_os_str().is_empty() {
            Path::new(".")
        } else {
            path.as_path()
        };
        let part = check_path_with_progress(rules, input, opts, progress)?;
        reports.push(part.report);
        runs.extend(part.runs);
        systems.extend(part.systems);
    }
    Ok(CheckOutcome {
        report: Report::merge(&opts.usage, &opts.ruleset, root, reports),
        runs,
        systems,
    })
}

/// [`check_path`], telling `progress` about the logs as they are checked.
pub fn check_path_with_progress(
    rules: &Rules,
    input: &Path,
    opts: &CheckOptions,
    progress: &dyn Progress,
) -> anyhow::Result<CheckOutcome> {
    let mut tree = discover::discover(input);
    let package = crate::discover::scope::is_package(input);
    if package {
        let root = tree.root.clone();
        tree.findings
            .extend(crate::aggregate::package::repo::check_repo(
                &rules.repo,
                input,
                &root,
                &rules.version,
            ));
    }
    let mut outcome = check_tree(rules, &tree, opts, progress)?;
    if package {
        let summary = crate::report::PackageSummary::of(&outcome.report);
        outcome.report.packages = vec![summary];
    }
    Ok(outcome)
}

/// Checks log files given one by one: compliance only.
pub fn check_logs(
    rules: &Rules,
    files: &[std::path::PathBuf],
    opts: &CheckOptions,
) -> anyhow::Result<CheckOutcome> {
    let tree = discover::discover_logs(files);
    check_tree(rules, &tree, opts, &Silent)
}

fn check_tree(
    rules: &Rules,
    tree: &discover::Submission,
    opts: &CheckOptions,
    progress: &dyn Progress,
) -> anyhow::Result<CheckOutcome> {
    let systems = read_systems(tree);
    let division_of = |system: &str| {
        systems
            .get(system)
            .and_then(|s| s.get("division"))
            .and_then(|d| d.as_str())
    };

    // 2. Compliance (and closed-division policy) of every log a verdict
    // depends on.
    let in_round = |b: &&BenchmarkDir| rules.package.benchmarks.contains_key(&b.benchmark);
    let files: Vec<(&FileRef, Option<&BenchmarkDir>)> = tree
        .benchmarks
        .iter()
        .filter(in_round)
        .flat_map(|b| b.result_logs.iter().map(move |f| (f, Some(b))))
        .chain(tree.logs.iter().map(|f| (f, None)))
        .collect();
    progress.start(files.len());
    let checked: Vec<(LogCheck, OnePass)> = files
        .par_iter()
        .map(|(f, dir)| {
            let division = dir.and_then(|d| division_of(&d.system));
            let mut collectors = Collectors::new(rules, opts, *dir);
            let log =
                rules::check_file_observed(&rules.compliance, &f.fs, &f.path, &mut collectors);
            let pass = collectors.finish(rules, f, *dir, division);
            progress.advance();
            (log, pass)
        })
        .collect();
    let mut logs = Vec::with_capacity(checked.len());
    let mut policy_findings = Vec::new();
    let mut run_infos: HashMap<String, RunInfo> = HashMap::new();
    let mut log_facts: HashMap<String, LogFacts> = HashMap::new();
    let mut run_logs = Vec::new();
    for (log, pass) in checked {
        if let Some(run) = pass.run {
            run_infos.insert(log.path.clone(), run);
        }
        if let Some(facts) = pass.facts {
            log_facts.insert(log.path.clone(), facts);
        }
        logs.push(log);
        policy_findings.extend(pass.policy);
        run_logs.extend(pass.logged);
    }
    logs.sort_by(|a, b| a.path.cmp(&b.path));
    // Implementation configs, unless every system is in the open division;
    // repeatability settings are notes of their own section.
    let mut repeatability = Vec::new();
    if let Some(p) = &rules.policy {
        let all_open = !systems.is_empty()
            && systems
                .values()
                .all(|s| s.get("division").and_then(|d| d.as_str()) == Some("open"));
        if !all_open {
            let found = policy::check_configs(p, &tree.implementation_files);
            let (rest, notes) = policy::repeatability::split(p, found);
            policy_findings.extend(rest);
            repeatability = notes;
            let linked = policy::config_log::check(p, &tree.implementation_files, &run_logs);
            policy_findings.extend(linked);
        }
    }
    let verdicts: HashMap<&str, bool> = logs
        .iter()
        .map(|l| (l.path.as_str(), l.verdict == Verdict::Pass))
        .collect();

    // 3. Package rules.
    let lookup = |p: &str| {
        if verdicts.get(p).copied().unwrap_or(false) {
            LogOutcome::PASS
        } else {
            LogOutcome::FAIL
        }
    };
    let mut package = check_package_with(tree, &rules.package, &opts.package, &lookup, &log_facts);

    // 4. Statistics per checked folder, in parallel.
    let dirs: HashMap<&str, &BenchmarkDir> = tree
        .benchmarks
        .iter()
        .map(|b| (b.path.as_str(), b))
        .collect();
    let per_folder: Vec<anyhow::Result<FolderResult>> = package
        .benchmarks
        .par_iter()
        .map(|bv| {
            let mut entry = BenchmarkReport::from_verdict(bv);
            let Some(dir) = dirs.get(bv.path.as_str()) else {
                return Ok((entry, None, Vec::new()));
            };
            if bv.verdict == submission::Verdict::Skipped {
                return Ok((entry, None, Vec::new()));
            }
            // A run that could not be read is not compared with the others
            // (it would look like a copy of every other unreadable run, and
            // differ from the readable ones): no statistics for the folder;
            // its LOG005 makes the run exit 2.
            if dir
                .result_logs
                .iter()
                .any(|f| !run_infos.contains_key(f.path.as_str()))
            {
                return Ok((entry, None, Vec::new()));
            }
            let runs = FolderRuns {
                dir: std::path::PathBuf::from(&bv.path),
                runs: dir
                    .result_logs
                    .iter()
                    .map(|f| match run_infos.get(f.path.as_str()) {
                        Some(r) => r.clone(),
                        None => RunCollector::new(&rules.stats.rcp, opts.bert_train_samples)
                            .finish(ContentHash::default(), std::path::Path::new(&f.path)),
                    })
                    .collect(),
            };
            let compliant: Vec<bool> = dir
                .result_logs
                .iter()
                .map(|f| verdicts.get(f.path.as_str()).copied().unwrap_or(false))
                .collect();
            let closed = bv.division.as_deref() != Some("open");
            let sopts = stats::Options {
                rcp_bypass: bv.rcp_bypass,
                bert_train_samples: opts.bert_train_samples,
                skip_rcp: !closed,
                weak_scaling: (bv.scaling.as_deref() == Some("weak"))
                    .then(|| rules.package.benchmarks.get(&bv.benchmark))
                    .flatten()
                    .map(|b| b.result_files),
                ..stats::Options::default()
            };
            let folder = stats::analyse(&rules.stats, &runs, &compliant, &sopts)?;
            entry.add_stats(&folder);
            let mut extra = folder.findings;
            // A bypass only mlaudit honours (params line with a trailing
            // newline): the official RCP check fails the folder.
            if folder.rcp.verdict == crate::aggregate::stats::rcp::Verdict::Bypassed
                && !bv.rcp_bypass_official
            {
                let theirs = [Finding::new(
                    "RCP",
                    Severity::Error,
                    &bv.path,
                    format!(
                        "RCP check fails without the bypass ({})",
                        folder.rcp.message
                    ),
                )];
                extra.extend(submission::check::official_only_failure(
                    &bv.path,
                    "rcp-bypass",
                    &theirs,
                ));
            }
            Ok((entry, Some(runs), extra))
        })
        .collect();

    let mut findings: Vec<Finding> = std::mem::take(&mut package.findings);
    findings.extend(policy_findings);
    let mut benchmarks = Vec::new();
    let mut runs = Vec::new();
    for r in per_folder {
        let (entry, folder_runs, extra) = r?;
        benchmarks.push(entry);
        runs.extend(folder_runs);
        findings.extend(extra);
    }

    // The verdicts: an error outside the logs' own compliance findings
    // fails (those reach the package through PKG005, which applies the
    // olympic tolerance). Log files given on their own have no folder to
    // tolerate them: their errors count directly. `official_verdict` leaves
    // out the checks the official tools do not make (codes marked `extra`)
    // and knows nothing of waivers; in `verdict`, a waiver of the project
    // config (a reviewed exception) silences an error of mlaudit's own
    // checks, never one the official tools would report.
    // Moved out of the logs, not copied: nothing reads them there later,
    // and a folder of 100,000 logs would hold every finding twice.
    let log_findings: Vec<Finding> = logs
        .iter_mut()
        .flat_map(|l| std::mem::take(&mut l.findings))
        .collect();
    let loose = tree.kind == InputKind::Logs;
    let waived_by = |f: &Finding| {
        opts.config
            .as_ref()
            .is_some_and(|c| c.waivers.iter().any(|w| w.matches(f)))
    };
    let error = |f: &&Finding| f.severity == Severity::Error;
    let official_fail = findings
        .iter()
        .chain(log_findings.iter().filter(|_| loose))
        .filter(error)
        .any(|f| !rules.codes.is_extra(&f.code))
        || findings
            .iter()
            .any(|f| rules.codes.is_official_fail(&f.code));
    let fail = findings
        .iter()
        .chain(log_findings.iter().filter(|_| loose))
        .filter(error)
        .any(|f| !(rules.codes.is_extra(&f.code) && waived_by(f)));
    let as_verdict = |fail: bool| if fail { Verdict::Fail } else { Verdict::Pass };
    // Why the two verdicts differ, in one line: the checks only mlaudit makes.
    let official_only: Vec<String> = findings
        .iter()
        .filter(|f| rules.codes.is_official_fail(&f.code))
        .map(|f| format!("{}: {}", f.path, f.message))
        .collect();
    let difference =
        (!fail && official_fail && !official_only.is_empty()).then(|| official_only.join("; "));
    let difference = difference.or_else(|| {
        (fail && !official_fail).then(|| {
            let mut codes: Vec<String> = findings
                .iter()
                .chain(log_findings.iter().filter(|_| loose))
                .filter(error)
                .filter(|f| rules.codes.is_extra(&f.code) && !waived_by(f))
                .map(|f| {
                    let title = rules.codes.get(&f.code).map_or("", |d| d.title.as_str());
                    format!("{} ({title})", f.code)
                })
                .collect();
            codes.sort();
            codes.dedup();
            format!(
                "mlaudit fails on {}, which the official tools do not check",
                codes.join(", ")
            )
        })
    });
    for b in &mut benchmarks {
        b.finish(&findings);
    }
    findings.extend(log_findings);
    let mut waived = Vec::new();
    if let Some(cfg) = &opts.config {
        // Shown relative to the current folder when it is below it.
        let cwd = std::env::current_dir()
            .ok()
            .and_then(|d| d.canonicalize().ok());
        let rel = cwd
            .as_deref()
            .and_then(|d| cfg.path.strip_prefix(d).ok())
            .unwrap_or(&cfg.path);
        let shown = crate::discover::paths::display_root(rel);
        let (kept, w) = crate::config::apply_waivers(findings, cfg, &shown);
        findings = kept;
        waived = w;
    }
    sort_findings(&mut findings);
    findings.dedup();
    let findings = cap_per_folder(findings);

    if opts.write_scaling {
        write_scaling(&benchmarks, &dirs)?;
    }

    let mut report = Report::new(&opts.usage, &opts.ruleset, &tree.root, logs, findings);
    report.verdict = as_verdict(fail);
    report.official_verdict = as_verdict(official_fail);
    report.verdict_difference = difference;
    report.waived = waived;
    report.repeatability = repeatability;
    report.summary.benchmarks = benchmarks.len();
    report.bypasses = std::mem::take(&mut package.bypasses);
    report.benchmarks = benchmarks;
    Ok(CheckOutcome {
        report,
        runs,
        systems,
    })
}

/// What the one pass over a result log besides compliance gives.
struct OnePass {
    policy: Vec<Finding>,
    /// For a log in a benchmark folder: what the statistics read...
    run: Option<RunInfo>,
    /// ... and what the package rules read.
    facts: Option<LogFacts>,
    /// What its configs may contradict (POL008).
    logged: Option<policy::config_log::RunLog>,
}

/// Everything besides compliance that reads a result log, fed by the
/// compliance engine's own read ([`rules::Observer`]), so each log is read
/// once: the policy signals and, for a log in a benchmark folder, what the
/// statistics and the package rules need.
struct Collectors<'a> {
    pol: Option<policy::Collector<'a>>,
    run: Option<RunCollector<'a>>,
    pkg: Option<logscan::Collector>,
    hash: ContentHash,
    want_all: bool,
    /// The checks of one run beyond the official ones (`RUN*`).
    extra: crate::check::runcheck::Collector,
    /// How the read ended: its summary, or why it failed.
    read: Option<Result<crate::mllog::ScanSummary, std::io::Error>>,
    /// Which collectors besides policy read the record being handed over,
    /// and its key.
    readers: Option<Readers>,
    readers_key: String,
}

/// Which collectors besides policy (which reads every record) read a
/// record with a given key.
#[derive(Debug, Clone, Copy)]
struct Readers {
    /// The `RUN*` checks.
    extra: bool,
    /// The package facts.
    pkg: bool,
    /// The run statistics.
    run: bool,
}

impl Readers {
    fn of(key: &str) -> Readers {
        Readers {
            extra: crate::check::runcheck::wanted(key),
            pkg: logscan::wanted(key),
            run: stats::reader::wanted(key),
        }
    }

    fn any(self) -> bool {
        self.extra || self.pkg || self.run
    }
}

impl<'a> Collectors<'a> {
    fn new(rules: &'a Rules, opts: &CheckOptions, dir: Option<&BenchmarkDir>) -> Collectors<'a> {
        let pol = rules.policy.as_ref().map(policy::Collector::new);
        Collectors {
            want_all: pol.is_some(),
            pol,
            run: dir.map(|_| RunCollector::new(&rules.stats.rcp, opts.bert_train_samples)),
            pkg: dir.map(|_| logscan::Collector::default()),
            hash: ContentHash::default(),
            extra: crate::check::runcheck::Collector::default(),
            read: None,
            readers: None,
            readers_key: String::new(),
        }
    }

    /// The policy findings, the run and the package facts. An unreadable
    /// log gives a POL040 warning, no run (its folder gets no statistics),
    /// and facts with the read error (PKG010).
    fn finish(
        self,
        rules: &Rules,
        f: &FileRef,
        dir: Option<&BenchmarkDir>,
        division: Option<&str>,
    ) -> OnePass {
        let shown = std::path::Path::new(&f.path);
        let read = self
            .read
            .unwrap_or_else(|| Err(std::io::Error::other("the log was not read")));
        // Only a log read to its end gives a run.
        let run = self
            .run
            .filter(|_| read.is_ok())
            .map(|c| c.finish(self.hash, shown));
        let extra = if read.is_ok() {
            self.extra.finish(&rules.codes, &f.path, dir.is_none())
        } else {
            Vec::new()
        };
        let (read, facts) = match read {
            Ok(summary) => {
                let facts = self.pkg.map(|c| c.finish(&f.path, Ok(summary)));
                (Ok(()), facts)
            }
            Err(e) => {
                let msg = e.to_string();
                let facts = self.pkg.map(|c| c.finish(&f.path, Err(e)));
                (Err(msg), facts)
            }
        };
        let mut logged = None;
        let mut policy = match (rules.policy.as_ref(), self.pol, read) {
            (Some(p), Some(c), Ok(_)) => {
                let facts = c.finish();
                // Open-division runs may change what the configs set.
                let closed = division != Some("open");
                logged = dir.filter(|_| closed).map(|d| policy::config_log::RunLog {
                    path: f.path.clone(),
                    system: d.system.clone(),
                    benchmark: d.benchmark.clone(),
                    logged: policy::config_log::logged(p, &facts),
                });
                policy::check_facts(
                    p,
                    dir.map(|d| d.benchmark.as_str()),
                    division,
                    &f.path,
                    &facts,
                )
            }
            (Some(p), _, Err(e)) => vec![Finding::of(
                code::POL040,
                &f.path,
                format!("cannot read the log for the policy checks: {e}"),
            )
            .with_help(p.help(code::POL040))],
            _ => Vec::new(),
        };
        policy.extend(extra);
        OnePass {
            policy,
            run,
            facts,
            logged,
        }
    }
}

impl rules::Observer for Collectors<'_> {
    fn wants(&mut self, key: &str) -> bool {
        self.want_all
            || stats::reader::wanted(key)
            || logscan::wanted(key)
            || crate::check::runcheck::wanted(key)
    }

    fn wants_metadata(&mut self, key: &str) -> bool {
        let readers = Readers::of(key);
        // Kept for the record() call that follows (the key tests are
        // substring searches: worth doing once per record).
        self.readers_key.clear();
        self.readers_key.push_str(key);
        self.readers = Some(readers);
        readers.any() || (self.pol.is_some() && policy::Collector::reads_metadata(key))
    }

    fn record(
        &mut self,
        r: &crate::mllog::Record<'_>,
        value: &minijinja::Value,
        metadata: Option<&minijinja::Value>,
    ) {
        // The serde values the collectors read, converted from the
        // engine's decode; `metadata` is null where no collector reads it.
        let e = r.to_event_with(value, metadata);
        let readers = match self.readers.take() {
            Some(k) if self.readers_key == e.key => k,
            _ => Readers::of(&e.key),
        };
        if readers.extra {
            self.extra.event(&e);
        }
        if let Some(p) = self.pol.as_mut() {
            p.event(&e);
        }
        if let Some(c) = self.pkg.as_mut() {
            if readers.pkg {
                c.event(&e);
            }
        }
        if let Some(run) = self.run.as_mut() {
            if readers.run {
                run.event(e);
            }
        }
    }

    fn raw(&mut self, bytes: &[u8]) {
        self.hash.add(bytes);
    }

    fn done(&mut self, read: Result<&crate::mllog::ScanSummary, &std::io::Error>) {
        self.read = Some(match read {
            Ok(s) => Ok(s.clone()),
            Err(e) => Err(std::io::Error::new(e.kind(), e.to_string())),
        });
    }
}

/// The system descriptions that parse as JSON objects, by id (the system
/// checks report the others).
fn read_systems(tree: &discover::Submission) -> BTreeMap<String, serde_json::Value> {
    tree.systems
        .iter()
        .filter_map(|s| {
            let text =
                crate::safe_io::read_regular(&s.file.fs, crate::safe_io::MAX_SYSTEM_JSON_BYTES)
                    .ok()?;
            let v: serde_json::Value = serde_json::from_slice(&text).ok()?;
            v.is_object().then(|| (s.id.clone(), v))
        })
        .collect()
}

/// Writes `scaling.json` where the official RCP checker would.
fn write_scaling(
    benchmarks: &[BenchmarkReport],
    dirs: &HashMap<&str, &BenchmarkDir>,
) -> anyhow::Result<()> {
    for b in benchmarks {
        let (Some(factor), Some(dir)) = (
            b.rcp.as_ref().and_then(|r| r.norm_factor),
            dirs.get(b.path.as_str()),
        ) else {
            continue;
        };
        let path = dir.fs.join("scaling.json");
        let text = serde_json::to_string(&serde_json::json!({ "scaling_factor": factor }))?;
        // Never through a link (it could lead anywhere the reviewer can
        // write): a regular file replaces whatever regular file was there.
        crate::safe_io::write_regular(&path, text.as_bytes())?;
    }
    Ok(())
}

/// Most findings of one code listed for the files of one folder; verdicts
/// are decided before, from all of them. A folder of 100,000 broken logs
/// made 89 MB of text and a 53 MB HTML page.
pub const MAX_FINDINGS_PER_FOLDER: usize = 100;

/// Keeps the first [`MAX_FINDINGS_PER_FOLDER`] findings of each code in
/// each folder (findings are sorted) and says how many more there were.
fn cap_per_folder(findings: Vec<Finding>) -> Vec<Finding> {
    let folder = |f: &Finding| -> String {
        f.path
            .rsplit_once('/')
            .map_or(String::new(), |(d, _)| d.to_string())
    };
    let mut seen: HashMap<(String, String), usize> = HashMap::new();
    let mut out = Vec::with_capacity(findings.len().min(4096));
    for f in findings {
        let n = seen.entry((f.code.clone(), folder(&f))).or_insert(0);
        *n += 1;
        if *n <= MAX_FINDINGS_PER_FOLDER {
            out.push(f);
        }
    }
    let mut more: Vec<((String, String), usize)> = seen
        .into_iter()
        .filter(|(_, n)| *n > MAX_FINDINGS_PER_FOLDER)
        .collect();
    more.sort();
    for ((code, dir), n) in more {
        out.push(Finding::new(
            &code,
            Severity::Note,
            &dir,
            format!(
                "{} more {code} findings in the files of this folder are not listed (the first {MAX_FINDINGS_PER_FOLDER} are)",
                n - MAX_FINDINGS_PER_FOLDER
            ),
        ));
    }
    sort_findings(&mut out);
    out
}
