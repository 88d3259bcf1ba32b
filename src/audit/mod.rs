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

pub mod listed;
pub mod progress;

pub use listed::MAX_FINDINGS_PER_FOLDER;

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
use crate::finding::{Finding, Severity};
use crate::report::{BenchmarkReport, Report};
use crate::rulebook::codes::CodeRegistry;
use crate::rulebook::source::RuleSource;
use listed::Listed;
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
    /// Keep each folder's runs in the outcome (the HTML page draws them);
    /// without it they are dropped once the folder's statistics are done.
    pub keep_runs: bool,
    /// Where the implementation configs' findings are kept between runs
    /// ([`policy::cache`]); `None`: scanned every time.
    pub cache_dir: Option<std::path::PathBuf>,
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
    /// Loaded from the built-in rules (the config cache is used only
    /// with them: a rule folder's files are not part of its key).
    pub built_in: bool,
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
            built_in: matches!(source, RuleSource::Embedded),
        })
    }
}

/// One folder's entry, runs and statistics findings.
type FolderResult<'a> = (BenchmarkReport, Option<FolderRuns>, Listed<'a>);

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
    let package = crate::discover::scope::is_package(input);
    if !package {
        let tree = discover::walk::discover_listed(input, None);
        return check_tree(rules, &tree, None, opts, progress);
    }
    // A package's folders are listed once, for both discovery and the
    // package's own walk (file names, sizes, links). `benchmarks/` (a
    // thousand configs and more) is listed, walked and checked beside the
    // logs, which do not need it; the rest first. Discovery walks
    // benchmarks/ last anyway, so what it finds is the same.
    let later = |e: &discover::listing::RawEntry| e.name == "benchmarks" || e.name == "benchmark";
    let (listing, left) =
        discover::listing::Listing::read_except(input, rules.repo.max_entries, &later);
    let (tree, benchmarks) = discover::walk::discover_listed_later(input, Some(&listing));
    let rest = LaterWalk {
        input,
        listing,
        left,
        benchmarks,
    };
    let mut outcome = check_tree(rules, &tree, Some(rest), opts, progress)?;
    {
        let summary = crate::report::PackageSummary::of(&outcome.report);
        outcome.report.packages = vec![summary];
    }
    Ok(outcome)
}

/// The part of a package's walk left to run beside the checks of the
/// logs: listing `benchmarks/` ([`discover::listing::Listing::add`]),
/// walking it for implementation files, and the repository checks (which
/// need every folder).
struct LaterWalk<'a> {
    input: &'a Path,
    listing: discover::listing::Listing,
    left: Vec<std::path::PathBuf>,
    benchmarks: Option<discover::walk::LaterBenchmarks>,
}

/// What [`LaterWalk::run`] gives.
struct Walked {
    listing: discover::listing::Listing,
    implementation_files: Vec<crate::discover::tree::ImplFile>,
    /// The walk's findings and the repository checks'.
    findings: Vec<Finding>,
}

impl LaterWalk<'_> {
    fn run(self, rules: &Rules) -> Walked {
        let max = rules.repo.max_entries;
        let mut listing = self.listing;
        if !listing.add(self.left, max) {
            // Over the limit of entries: which were listed depends on the
            // order, and the repository checks count in that of one walk.
            listing = discover::listing::Listing::read(self.input, max);
        }
        let ((implementation_files, mut findings), repo) = rayon::join(
            || match self.benchmarks {
                Some(b) => b.walk(Some(&listing)),
                None => (Vec::new(), Vec::new()),
            },
            || {
                // Shown under the root discovery names: the path as given
                // with its separators normalized (`tree.root`).
                let root = discover::paths::display_root(self.input);
                crate::aggregate::package::repo::check_repo_listed(
                    &rules.repo,
                    &listing,
                    self.input,
                    &root,
                    &rules.version,
                )
            },
        );
        findings.extend(repo);
        Walked {
            listing,
            implementation_files,
            findings,
        }
    }
}

/// The implementation configs' own stage: read and parsed once, their
/// findings made and split from the repeatability notes; taken from the
/// cache when no config changed since a run that kept them.
fn configs_stage(
    rules: &Rules,
    p: &PolicyRules,
    tree: &discover::Submission,
    listing: Option<&discover::listing::Listing>,
    opts: &CheckOptions,
    configs: &[crate::discover::tree::ImplFile],
) -> (
    policy::parsed::ParsedConfigs,
    (Vec<Finding>, Vec<policy::repeatability::RepeatabilityNote>),
) {
    use policy::cache::{self, Cache, StageOutput};
    let cache = opts
        .cache_dir
        .as_deref()
        .filter(|_| rules.built_in && !configs.is_empty())
        .and_then(|dir| {
            let here = std::env::current_dir().unwrap_or_default();
            let root = format!("{}\0{}", here.display(), tree.root);
            // The walk read every file's metadata already.
            let mut listed = listing.map(|l| l.metadata_by_folder());
            let mut known = |p: &Path| listed.as_mut().and_then(|l| l(p)).cloned();
            Cache::open(dir, &root, &opts.usage, &opts.ruleset, configs, &mut known)
        });
    if let Some(out) = cache.as_ref().and_then(Cache::load) {
        let parsed = policy::parsed::ParsedConfigs::from_entries(p, configs, out.own, out.vendored);
        return (parsed, (out.findings, out.notes));
    }
    let read_at = cache::now();
    let parsed = policy::parsed::ParsedConfigs::read(p, configs);
    let found = policy::check_parsed_configs(p, configs, &parsed);
    let (findings, notes) = policy::repeatability::split(p, found);
    if let Some(c) = &cache {
        let out = StageOutput {
            findings,
            notes,
            own: parsed.own_entries(configs),
            vendored: (0..configs.len()).map(|i| parsed.vendored(i)).collect(),
        };
        c.store(&out, read_at);
        return (parsed, (out.findings, out.notes));
    }
    (parsed, (findings, notes))
}

/// Checks log files given one by one: compliance only.
pub fn check_logs(
    rules: &Rules,
    files: &[std::path::PathBuf],
    opts: &CheckOptions,
) -> anyhow::Result<CheckOutcome> {
    let tree = discover::discover_logs(files);
    check_tree(rules, &tree, None, opts, &Silent)
}

fn check_tree(
    rules: &Rules,
    tree: &discover::Submission,
    later: Option<LaterWalk>,
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
    // The findings as they are made: a log's own are moved here as soon as
    // it is checked (only its counts stay in `logs`).
    let loose = tree.kind == InputKind::Logs;
    let listed = std::sync::Mutex::new(Listed::new(&rules.codes, opts.config.as_ref(), &[]));
    // Unzipped at once: the per-log results besides the report's entry are
    // boxed, and consumed below in one pass.
    // Implementation configs (unless every system is in the open
    // division) are read and parsed while the logs are checked: neither
    // needs the other.
    let all_open = !systems.is_empty()
        && systems
            .values()
            .all(|s| s.get("division").and_then(|d| d.as_str()) == Some("open"));
    let policy_rules = rules.policy.as_ref().filter(|_| !all_open);
    let check_logs = || -> (Vec<LogCheck>, Vec<OnePass>) {
        files
            .par_iter()
            .map(|(f, dir)| {
                let division = dir.and_then(|d| division_of(&d.system));
                let mut collectors = Collectors::new(rules, opts, *dir);
                let mut log =
                    rules::check_file_observed(&rules.compliance, &f.fs, &f.path, &mut collectors);
                let pass = collectors.finish(rules, f, *dir, division, log.target_met_at);
                let own = std::mem::take(&mut log.findings);
                if !own.is_empty() {
                    let mut listed = listed.lock().unwrap_or_else(|e| e.into_inner());
                    for finding in own {
                        listed.add_log(finding, loose);
                    }
                }
                progress.advance();
                (log, pass)
            })
            .unzip()
    };
    // The rest of the package's walk and the configs' own findings need
    // no log: they are made on this side of the join, while the logs are
    // checked.
    let ((mut logs, passes), (walked, closed, configs_done)) = rayon::join(check_logs, || {
        let walked = later.map(|l| l.run(rules));
        let found = walked
            .as_ref()
            .map_or(&tree.implementation_files, |w| &w.implementation_files);
        let closed = closed_only(found, &systems);
        let configs = closed.as_deref().unwrap_or(found);
        // A benchmark folder named otherwise (`dlrm_v2`) holds the configs
        // of the round's benchmark its name stands for.
        let named = policy_rules.and_then(|p| p.round_benchmarks(configs));
        let closed = named.or(closed);
        let configs = closed.as_deref().unwrap_or(found);
        let listing = walked.as_ref().map(|w| &w.listing);
        let done = policy_rules.map(|p| configs_stage(rules, p, tree, listing, opts, configs));
        (walked, closed, done)
    });
    let found = walked
        .as_ref()
        .map_or(&tree.implementation_files, |w| &w.implementation_files);
    let configs = closed.as_deref().unwrap_or(found);
    let mut listed = listed.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut policy_findings = Vec::new();
    // Each folder's runs, in the order of its logs; `None` once one of its
    // logs gave no run (it could not be read).
    let mut folder_runs: HashMap<&str, Option<Vec<RunInfo>>> = HashMap::new();
    let mut log_facts: HashMap<&str, LogFacts> = HashMap::new();
    let mut run_logs = Vec::new();
    for (pass, (f, dir)) in passes.into_iter().zip(&files) {
        if let Some(dir) = dir {
            let runs = folder_runs
                .entry(dir.path.as_str())
                .or_insert_with(|| Some(Vec::with_capacity(dir.result_logs.len())));
            match (runs.as_mut(), pass.run) {
                (Some(runs), Some(run)) => runs.push(*run),
                _ => *runs = None,
            }
        }
        if let Some(facts) = pass.facts {
            log_facts.insert(f.path.as_str(), *facts);
        }
        policy_findings.extend(pass.policy);
        run_logs.extend(pass.logged);
    }
    logs.sort_by(|a, b| a.path.cmp(&b.path));
    // Implementation configs, unless every system is in the open division;
    // repeatability settings are notes of their own section.
    let mut repeatability = Vec::new();
    if let (Some(p), Some((parsed, (rest, notes)))) = (policy_rules, configs_done) {
        // Read and parsed once for both checks.
        policy_findings.extend(rest);
        repeatability = notes;
        let linked = policy::config_log::check(p, configs, &parsed, &run_logs);
        policy_findings.extend(linked);
    }
    drop(run_logs);
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
    drop(log_facts);
    let folders: Vec<&str> = package.benchmarks.iter().map(|b| b.path.as_str()).collect();
    listed.count_folders(&folders);
    for f in std::mem::take(&mut package.findings) {
        listed.add(f);
    }
    // What the walk of benchmarks/ and the repository checks found: the
    // tree's own findings, as the package rules' are.
    for f in walked.map(|w| w.findings).unwrap_or_default() {
        listed.add(f);
    }
    for f in policy_findings {
        listed.add(f);
    }

    // 4. Statistics per checked folder, in parallel. Each folder's runs
    // were gathered as its logs were, not copied; a folder with a run that
    // could not be read gets none (a run that could not be read is not
    // compared with the others: it would look like a copy of every other
    // unreadable run, and differ from the readable ones; its LOG005 makes
    // the run exit 2).
    let dirs: HashMap<&str, &BenchmarkDir> = tree
        .benchmarks
        .iter()
        .map(|b| (b.path.as_str(), b))
        .collect();
    let inputs: Vec<(&submission::BenchmarkVerdict, Option<Vec<RunInfo>>)> = package
        .benchmarks
        .iter()
        .map(|bv| {
            let runs = dirs.get(bv.path.as_str()).and_then(|dir| {
                folder_runs
                    .remove(bv.path.as_str())
                    .unwrap_or_else(|| dir.result_logs.is_empty().then(Vec::new))
            });
            (bv, runs)
        })
        .collect();
    drop(folder_runs);
    let per_folder: Vec<anyhow::Result<FolderResult>> = inputs
        .into_par_iter()
        .map(|(bv, runs)| {
            let mut entry = BenchmarkReport::from_verdict(bv);
            let mut mine = listed.fork();
            let (Some(dir), Some(runs)) = (dirs.get(bv.path.as_str()), runs) else {
                return Ok((entry, None, mine));
            };
            if bv.verdict == submission::Verdict::Skipped {
                return Ok((entry, None, mine));
            }
            let runs = FolderRuns {
                dir: std::path::PathBuf::from(&bv.path),
                runs,
            };
            let compliant: Vec<bool> = dir
                .result_logs
                .iter()
                .map(|f| verdicts.get(f.path.as_str()).copied().unwrap_or(false))
                .collect();
            let sopts = stats_options(rules, opts, bv);
            let folder = stats::analyse_into(&rules.stats, &runs, &compliant, &sopts, &mut |f| {
                mine.add(f)
            })?;
            entry.add_stats(&folder);
            // A bypass only mlaudit honours (params line with a trailing
            // newline): the official RCP check fails the folder.
            let bypassed = folder.rcp.verdict == crate::aggregate::stats::rcp::Verdict::Bypassed
                && !bv.rcp_bypass_official;
            let message = folder.rcp.message.clone();
            if bypassed {
                let theirs = [Finding::new(
                    "RCP",
                    Severity::Error,
                    &bv.path,
                    format!("RCP check fails without the bypass ({message})"),
                )];
                if let Some(f) =
                    submission::check::official_only_failure(&bv.path, "rcp-bypass", &theirs)
                {
                    mine.add(f);
                }
            }
            // Only the HTML page reads the runs again.
            Ok((entry, opts.keep_runs.then_some(runs), mine))
        })
        .collect();

    let mut benchmarks = Vec::new();
    let mut runs = Vec::new();
    for r in per_folder {
        let (entry, folder_runs, mine) = r?;
        benchmarks.push(entry);
        runs.extend(folder_runs);
        listed.merge(mine);
    }

    // The verdicts: an error outside the logs' own compliance findings
    // fails (those reach the package through PKG005, which applies the
    // olympic tolerance). Log files given on their own have no folder to
    // tolerate them: their errors count directly. `official_verdict` leaves
    // out the checks the official tools do not make (codes marked `extra`)
    // and knows nothing of waivers; in `verdict`, a waiver of the project
    // config (a reviewed exception) silences an error of mlaudit's own
    // checks, never one the official tools would report.
    let mut shown = String::new();
    if let Some(cfg) = &opts.config {
        // Shown relative to the current folder when it is below it.
        let cwd = std::env::current_dir()
            .ok()
            .and_then(|d| d.canonicalize().ok());
        let rel = cwd
            .as_deref()
            .and_then(|d| cfg.path.strip_prefix(d).ok())
            .unwrap_or(&cfg.path);
        shown = crate::discover::paths::display_root(rel);
    }
    let done = listed.finish(&shown);
    for (b, (errors, warnings)) in benchmarks.iter_mut().zip(&done.folders) {
        b.set_counts(*errors, *warnings);
    }
    let findings = done.findings;
    let waived = done.waived;
    let as_verdict = |fail: bool| if fail { Verdict::Fail } else { Verdict::Pass };
    let (fail, official_fail, difference) = (done.fail, done.official_fail, done.difference);

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
    run: Option<Box<RunInfo>>,
    /// ... and what the package rules read.
    facts: Option<Box<LogFacts>>,
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
        target_met_at: Option<u64>,
    ) -> OnePass {
        let shown = std::path::Path::new(&f.path);
        let read = self
            .read
            .unwrap_or_else(|| Err(std::io::Error::other("the log was not read")));
        // Only a log read to its end gives a run.
        let run = self
            .run
            .filter(|_| read.is_ok())
            .map(|c| Box::new(c.finish(self.hash, shown)));
        let extra = if read.is_ok() {
            self.extra.finish(&rules.codes, &f.path, dir.is_none())
        } else {
            Vec::new()
        };
        let (read, facts) = match read {
            Ok(summary) => {
                let facts = self.pkg.map(|c| Box::new(c.finish(&f.path, Ok(summary))));
                (Ok(()), facts)
            }
            Err(e) => {
                let msg = e.to_string();
                let facts = self.pkg.map(|c| Box::new(c.finish(&f.path, Err(e))));
                (Err(msg), facts)
            }
        };
        let mut logged = None;
        let mut policy = match (rules.policy.as_ref(), self.pol, read) {
            (Some(p), Some(c), Ok(_)) => {
                let mut facts = c.finish();
                facts.target_met_at = target_met_at;
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
/// The implementation configs the closed-division policy reads: all but
/// those of an implementation named after a system of the open division
/// (Google's v1.0 `tpu-v4-256-JAX-Distributed-Shampoo`, whose system is
/// open, may name Shampoo). Packages do not otherwise say which system an
/// implementation belongs to, so any other implementation is read.
fn closed_configs<'a>(
    files: &'a [crate::discover::tree::ImplFile],
    systems: &BTreeMap<String, serde_json::Value>,
) -> std::borrow::Cow<'a, [crate::discover::tree::ImplFile]> {
    match closed_only(files, systems) {
        Some(closed) => std::borrow::Cow::Owned(closed),
        None => std::borrow::Cow::Borrowed(files),
    }
}

/// The files of `files` not in an open-division implementation, when
/// some are (`None`: all of them).
fn closed_only(
    files: &[crate::discover::tree::ImplFile],
    systems: &BTreeMap<String, serde_json::Value>,
) -> Option<Vec<crate::discover::tree::ImplFile>> {
    let open = |f: &crate::discover::tree::ImplFile| {
        f.implementation.as_deref().is_some_and(|i| {
            systems
                .get(i)
                .and_then(|s| s.get("division"))
                .and_then(|d| d.as_str())
                == Some("open")
        })
    };
    files
        .iter()
        .any(open)
        .then(|| files.iter().filter(|f| !open(f)).cloned().collect())
}

/// [`closed_configs`] of a discovered package: the implementation configs
/// `check` holds to the closed division's policy.
pub fn policy_configs(
    tree: &discover::Submission,
) -> std::borrow::Cow<'_, [crate::discover::tree::ImplFile]> {
    closed_configs(&tree.implementation_files, &read_systems(tree))
}

fn read_systems(tree: &discover::Submission) -> BTreeMap<String, serde_json::Value> {
    tree.systems
        .iter()
        .filter_map(|s| {
            let text =
                crate::safe_io::read_regular(&s.file.fs, crate::safe_io::MAX_SYSTEM_JSON_BYTES)
                    .ok()?;
            let mut v: serde_json::Value = serde_json::from_slice(&text).ok()?;
            let obj = v.as_object_mut()?;
            // A description without a division (SIAT's v0.7 ones spell the
            // key "divison"): the division its runs log decides which
            // policy its implementation's configs are held to.
            if !obj.get("division").is_some_and(|d| d.is_string()) {
                if let Some(d) = logged_division(tree, &s.id) {
                    obj.insert("division".into(), serde_json::Value::String(d));
                }
            }
            Some((s.id.clone(), v))
        })
        .collect()
}

/// The `submission_division` the first result log of `system` gives (in
/// its first megabyte), when it is `closed` or `open`.
fn logged_division(tree: &discover::Submission, system: &str) -> Option<String> {
    let log = tree
        .benchmarks
        .iter()
        .filter(|b| b.system == system)
        .find_map(|b| b.result_logs.first())?;
    let mut head = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(crate::safe_io::open_regular(&log.fs).ok()?, 1 << 20),
        &mut head,
    )
    .ok()?;
    let text = String::from_utf8_lossy(&head);
    text.lines().take(5000).find_map(|line| {
        let json = line.split_once(":::MLLOG")?.1;
        let v: serde_json::Value = serde_json::from_str(json.trim()).ok()?;
        (v.get("key")?.as_str()? == "submission_division")
            .then(|| v.get("value")?.as_str().map(str::to_string))
            .flatten()
            .filter(|d| d == "closed" || d == "open")
    })
}

/// The statistics options of folder `bv`.
fn stats_options(
    rules: &Rules,
    opts: &CheckOptions,
    bv: &submission::BenchmarkVerdict,
) -> stats::Options {
    let closed = bv.division.as_deref() != Some("open");
    stats::Options {
        rcp_bypass: bv.rcp_bypass,
        bert_train_samples: opts.bert_train_samples,
        skip_rcp: !closed,
        weak_scaling: (bv.scaling.as_deref() == Some("weak"))
            .then(|| rules.package.benchmarks.get(&bv.benchmark))
            .flatten()
            .map(|b| b.result_files),
        ..stats::Options::default()
    }
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
