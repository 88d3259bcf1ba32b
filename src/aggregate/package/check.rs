//! `check_package`: the package rules over a discovered [`Submission`].
//!
//! The per-log compliance verdict is not computed here: it comes from the
//! caller's compliance engine through the `log_verdict` closure.

use super::crosscheck::cross_check;
use super::logscan::{scan_log, LogFacts};
use super::power::check_power;
use super::rules::PackageRules;
use super::seeds::check_seeds;
use super::system_desc::{check_system, SystemInfo};
use crate::discover::paths::join;
use crate::discover::tree::{BenchmarkDir, InputKind, ParamsFile, Submission};
use crate::finding::code;
use crate::finding::{sort_findings, Finding, Severity};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The compliance verdict of one log, from the caller's engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LogOutcome {
    pub pass: bool,
}

impl LogOutcome {
    pub const PASS: LogOutcome = LogOutcome { pass: true };
    pub const FAIL: LogOutcome = LogOutcome { pass: false };
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Fail,
    /// Not checked (benchmark not in the round), as the official tool skips it.
    Skipped,
}

/// Bypasses requested on the command line (the official `--rcp-bypass`,
/// `--seed-checker-bypass`).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct PackageOptions {
    pub rcp_bypass: bool,
    pub seed_checker_bypass: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct BenchmarkVerdict {
    pub path: String,
    pub system: String,
    pub benchmark: String,
    /// HPC: `strong` or `weak`, the scaling folder the benchmark sits in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaling: Option<String>,
    /// `division` of the system description, `None` when unknown.
    pub division: Option<String>,
    pub verdict: Verdict,
    pub logs: usize,
    /// Names (`result_3`) of runs that are not compliant (log or power).
    pub non_compliant: Vec<String>,
    /// The RCP check of this folder is bypassed (for the RCP engine).
    pub rcp_bypass: bool,
    pub seed_checker_bypass: bool,
    /// Whether the seed checks ran.
    pub seeds_checked: bool,
    /// Whether the official package_checker bypasses the RCP check too
    /// (command line, or a params line without a trailing newline).
    #[serde(skip)]
    pub rcp_bypass_official: bool,
}

/// One bypass request and where it came from.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct BypassUse {
    /// `package_checker_params` path, or `command line`.
    pub source: String,
    pub flag: String,
    /// Whether the official package_checker would honour it (it ignores a
    /// line that ends with a newline).
    pub official_honours: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct PackageReport {
    pub ruleset: String,
    pub verdict: Verdict,
    pub benchmarks: Vec<BenchmarkVerdict>,
    pub findings: Vec<Finding>,
    pub bypasses: Vec<BypassUse>,
}

#[derive(Default, Clone, Copy)]
struct Flags {
    rcp: bool,
    seed: bool,
    /// Requested by a line the official package_checker honours too.
    rcp_official: bool,
    seed_official: bool,
}

const RCP_FLAG: &str = "rcp-bypass";
const SEED_FLAG: &str = "seed-checker-bypass";

fn read_flags(
    p: &ParamsFile,
    rules: &PackageRules,
    out: &mut Vec<Finding>,
    uses: &mut Vec<BypassUse>,
) -> Flags {
    let mut flags = Flags::default();
    let n = p.lines.len();
    for (i, raw) in p.lines.iter().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let lineno = Some(i as u64 + 1);
        if !rules.params.flags.iter().any(|f| f == line) {
            out.push(
                Finding::of(
                    code::PKG008,
                    &p.path,
                    format!("unknown line '{line}' in package_checker_params; ignored"),
                )
                .at_line(lineno)
                .with_help(format!("allowed lines: {}", rules.params.flags.join(", "))),
            );
            continue;
        }
        let official = i + 1 == n && !p.trailing_newline && raw == line;
        match line {
            RCP_FLAG => {
                flags.rcp = true;
                flags.rcp_official |= official;
            }
            SEED_FLAG => {
                flags.seed = true;
                flags.seed_official |= official;
            }
            _ => {}
        }
        let mut msg = format!("{line} requested");
        if !official {
            msg.push_str(
                "; the official package_checker ignores this line (it honours only a last line with no trailing newline), mlaudit honours it",
            );
        }
        out.push(
            Finding::of(code::PKG007, &p.path, msg)
                .at_line(lineno)
                .with_help("a bypass must be approved by the review committee"),
        );
        uses.push(BypassUse {
            source: p.path.clone(),
            flag: line.to_string(),
            official_honours: official,
        });
    }
    flags
}

/// PKG030: the official package_checker ignores the `flag` line of a
/// `package_checker_params` that ends with a newline, runs the check
/// mlaudit bypassed, and fails the folder on these errors.
pub fn official_only_failure(path: &str, flag: &str, theirs: &[Finding]) -> Option<Finding> {
    let errors: Vec<String> = theirs
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| format!("{} {}", f.code, f.message))
        .collect();
    let first = errors.first()?;
    let more = if errors.len() > 1 {
        format!(" (and {} more)", errors.len() - 1)
    } else {
        String::new()
    };
    Some(
        Finding::of(
            code::PKG030,
            path,
            format!(
                "the official package_checker ignores the {flag} line (it ends with a newline), so it fails this folder: {first}{more}; mlaudit honours the bypass"
            ),
        )
        .with_help("remove the trailing newline after the last line of package_checker_params"),
    )
}

fn run_name(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.strip_suffix(".txt").unwrap_or(name).to_string()
}

/// Runs every package rule over `tree`, reading what the package checks need
/// from every log of a folder of the round, in parallel.
pub fn check_package(
    tree: &Submission,
    rules: &PackageRules,
    opts: &PackageOptions,
    log_verdict: &dyn Fn(&str) -> LogOutcome,
) -> PackageReport {
    let allowed = |b: &BenchmarkDir| rules.benchmarks.contains_key(&b.benchmark);
    let to_scan: Vec<_> = tree
        .benchmarks
        .iter()
        .filter(|b| allowed(b))
        .flat_map(|b| b.result_logs.iter())
        .collect();
    let facts: HashMap<String, LogFacts> = to_scan
        .par_iter()
        .map(|f| (f.path.clone(), scan_log(f)))
        .collect();
    check_package_with(tree, rules, opts, log_verdict, &facts)
}

/// [`check_package`] with the logs' facts already read (by display path,
/// owned or borrowed from the tree), for a caller that reads each log once
/// for several checks.
pub fn check_package_with<K>(
    tree: &Submission,
    rules: &PackageRules,
    opts: &PackageOptions,
    log_verdict: &dyn Fn(&str) -> LogOutcome,
    facts: &HashMap<K, LogFacts>,
) -> PackageReport
where
    K: std::borrow::Borrow<str> + std::hash::Hash + Eq,
{
    let mut findings = tree.findings.clone();
    let mut bypasses = Vec::new();
    for (flag, on) in [
        (RCP_FLAG, opts.rcp_bypass),
        (SEED_FLAG, opts.seed_checker_bypass),
    ] {
        if on {
            bypasses.push(BypassUse {
                source: "command line".into(),
                flag: flag.into(),
                official_honours: true,
            });
        }
    }

    // System descriptions.
    let mut systems: HashMap<&str, SystemInfo> = HashMap::new();
    for s in &tree.systems {
        let info = check_system(s, &rules.system_description, &mut findings);
        systems.insert(s.id.as_str(), info);
    }
    for sys in &tree.result_systems {
        if systems.contains_key(sys.as_str()) {
            continue;
        }
        let at = tree
            .benchmarks
            .iter()
            .find(|b| &b.system == sys)
            .map(|b| b.path.clone())
            .unwrap_or_else(|| join(&join(&tree.root, "results"), sys));
        let in_package = tree.kind == InputKind::Package || tree.submitter.is_some();
        let (sev, msg) = if in_package {
            (
                Severity::Error,
                format!("no systems/{sys}.json for results/{sys}: division unknown, seed and cross-checks skipped (the official package_checker crashes here: FileNotFoundError opening systems/{sys}.json)"),
            )
        } else {
            (
                Severity::Note,
                format!("folder is not inside a package, no systems/{sys}.json: division unknown, seed and cross-checks skipped"),
            )
        };
        findings.push(
            // The registry's error, a note outside a package.
            Finding::new(code::PKG009.id, sev, &at, msg)
                .with_help(format!("add systems/{sys}.json describing the system")),
        );
    }

    // Bypass files per system.
    let mut system_flags: HashMap<&str, Flags> = HashMap::new();
    for (sys, p) in &tree.system_params {
        let f = read_flags(p, rules, &mut findings, &mut bypasses);
        system_flags.insert(sys.as_str(), f);
    }

    let mut verdicts = Vec::new();
    for b in &tree.benchmarks {
        let sys = systems.get(b.system.as_str());
        let division = sys.and_then(|s| s.division()).map(str::to_string);
        let mut out: Vec<Finding> = Vec::new();
        let mut v = BenchmarkVerdict {
            path: b.path.clone(),
            system: b.system.clone(),
            benchmark: b.benchmark.clone(),
            scaling: b.scaling.clone(),
            division: division.clone(),
            verdict: Verdict::Pass,
            logs: b.result_logs.len(),
            non_compliant: Vec::new(),
            rcp_bypass: opts.rcp_bypass,
            seed_checker_bypass: opts.seed_checker_bypass,
            seeds_checked: false,
            rcp_bypass_official: opts.rcp_bypass,
        };
        if rules.scaling_folders && b.scaling.is_none() {
            // HPC: the official checker reads this folder as a scaling
            // folder and checks only its sub-folders (none: nothing checked,
            // a pass; some: an AssertionError). An `extra` error here.
            out.push(
                Finding::of(
                    code::PKG031,
                    &b.path,
                    format!(
                        "'{}' sits directly in results/{}/; {} results go to results/{}/strong/{} or weak/{}; its logs are not checked (the official package_checker takes it for a scaling folder and checks nothing in it)",
                        b.benchmark, b.system, rules.ruleset, b.system, b.benchmark, b.benchmark
                    ),
                )
                .with_help("move the folder under strong/ or weak/"),
            );
            v.verdict = Verdict::Fail;
            findings.extend(out);
            verdicts.push(v);
            continue;
        }
        // A strong/ or weak/ folder in a training package is a benchmark
        // folder named `strong` to the official checker: skipped.
        let bm_rule = if b.scaling.is_some() == rules.scaling_folders {
            rules.benchmarks.get(&b.benchmark)
        } else {
            None
        };
        let Some(bm_rule) = bm_rule else {
            // The official tools skip the folder with a warning; in
            // mlaudit's own verdict a result nobody checks is an error
            // (code marked `extra`).
            let hint = crate::discover::scope::did_you_mean(&b.benchmark, rules.benchmarks.keys())
                .map(|m| format!(" (did you mean '{m}'?)"))
                .unwrap_or_default();
            out.push(
                Finding::of(
                    code::PKG004,
                    &b.path,
                    format!(
                        "'{}' is not a benchmark of {}{hint}; its {} not checked (the official package_checker skips the folder with a warning)",
                        b.label(),
                        rules.ruleset,
                        if b.result_logs.len() == 1 { "1 log is".to_string() } else { format!("{} logs are", b.result_logs.len()) }
                    ),
                )
                .with_help(format!(
                    "benchmarks of this round: {}",
                    rules
                        .benchmarks
                        .keys()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            );
            v.verdict = Verdict::Skipped;
            findings.extend(out);
            verdicts.push(v);
            continue;
        };

        // Bypass flags.
        let sf = system_flags
            .get(b.system.as_str())
            .copied()
            .unwrap_or_default();
        let ff = b
            .params
            .as_ref()
            .map(|p| read_flags(p, rules, &mut out, &mut bypasses))
            .unwrap_or_default();
        v.rcp_bypass |= sf.rcp || ff.rcp;
        v.seed_checker_bypass |= sf.seed || ff.seed;
        v.rcp_bypass_official |= sf.rcp_official || ff.rcp_official;
        let seed_bypass_official = opts.seed_checker_bypass || sf.seed_official || ff.seed_official;

        // File count and naming.
        let n = b.result_logs.len();
        let odd: Vec<&String> = b
            .other_entries
            .iter()
            .filter(|e| e.as_str() != crate::discover::walk::PARAMS_FILE)
            .collect();
        // HPC weak scaling: at least the count (official), exactly otherwise.
        let wrong_count = if b.is_weak() {
            n < bm_rule.result_files
        } else {
            n != bm_rule.result_files
        };
        if wrong_count {
            let at_least = if b.is_weak() { "at least " } else { "" };
            let mut msg = format!(
                "{n} result_*.txt {}, {at_least}{} expected for {}",
                if n == 1 { "file" } else { "files" },
                bm_rule.result_files,
                b.label()
            );
            let lookalikes: Vec<&str> = odd
                .iter()
                .map(|s| s.as_str())
                .filter(|s| s.contains("result") || s.ends_with(".txt") || s.ends_with(".log"))
                .collect();
            if !lookalikes.is_empty() {
                msg.push_str(&format!(
                    "; misnamed log(s)? {}",
                    crate::discover::paths::name_list(&lookalikes)
                ));
            }
            out.push(
                Finding::of(code::PKG001, &b.path, msg)
                    .with_help("submit exactly the required number of runs, named result_<i>.txt"),
            );
        }
        out.extend(unknown_entries(b, n));

        // Non-compliant runs: log verdicts, unreadable logs, power data.
        let mut bad: BTreeSet<String> = BTreeSet::new();
        let logs: Vec<&LogFacts> = b
            .result_logs
            .iter()
            .filter_map(|f| facts.get(f.path.as_str()))
            .collect();
        for log in &logs {
            if let Some(e) = &log.read_error {
                out.push(Finding::of(
                    code::PKG010,
                    &log.path,
                    format!("cannot read file: {e}"),
                ));
                bad.insert(run_name(&log.path));
            }
        }
        for f in &b.result_logs {
            if !log_verdict(&f.path).pass {
                bad.insert(run_name(&f.path));
            }
        }
        if let Some(p) = &b.power {
            bad.extend(check_power(b, p, &mut out));
        }
        let tolerance = rules.tolerance(&b.benchmark);
        if bad.len() > tolerance {
            out.push(
                Finding::of(
                    code::PKG005,
                    &b.path,
                    format!(
                        "{} runs do not comply ({}); at most {tolerance} accepted under olympic scoring",
                        bad.len(),
                        crate::discover::paths::name_list(bad.iter())
                    ),
                )
                .with_help("fix or re-run the failing runs"),
            );
        } else if !bad.is_empty() {
            out.push(
                Finding::of(
                    code::PKG006,
                    &b.path,
                    format!(
                        "{} ({}), accepted under olympic scoring (at most {tolerance})",
                        if bad.len() == 1 {
                            "1 run does not comply".to_string()
                        } else {
                            format!("{} runs do not comply", bad.len())
                        },
                        crate::discover::paths::name_list(bad.iter())
                    ),
                )
                .with_help("a failed run counts as the slowest and is dropped from the score"),
            );
        }
        v.non_compliant = bad.into_iter().collect();

        // Seeds (closed division).
        if division
            .as_deref()
            .is_some_and(|d| rules.seeds.divisions.iter().any(|x| x == d))
        {
            if v.seed_checker_bypass {
                out.push(Finding::of(
                    code::SEED007,
                    &b.path,
                    "seed checks bypassed (seed-checker-bypass)",
                ));
                if !seed_bypass_official {
                    // The official tool ignores the newline-terminated line
                    // and runs the seed checks: its verdict is theirs.
                    let mut theirs = Vec::new();
                    check_seeds(&logs, &mut theirs);
                    if let Some(f) = official_only_failure(&b.path, SEED_FLAG, &theirs) {
                        out.push(f);
                    }
                }
            } else {
                check_seeds(&logs, &mut out);
                v.seeds_checked = true;
            }
        }

        cross_check(b, sys, &logs, &rules.cross_checks, &mut out);

        if out.iter().any(|f| f.severity == Severity::Error) {
            v.verdict = Verdict::Fail;
        }
        findings.extend(out);
        verdicts.push(v);
    }

    sort_findings(&mut findings);
    bypasses.sort();
    bypasses.dedup();
    let verdict = if findings.iter().any(|f| f.severity == Severity::Error) {
        Verdict::Fail
    } else {
        Verdict::Pass
    };
    PackageReport {
        ruleset: rules.ruleset.clone(),
        verdict,
        benchmarks: verdicts,
        findings,
        bypasses,
    }
}

/// Counts of findings by code, for summaries and tests.
pub fn count_codes(findings: &[Finding]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for f in findings {
        *m.entry(f.code.clone()).or_insert(0) += 1;
    }
    m
}

/// Entries of a result folder the official tools write or read themselves:
/// `scaling.json` (the RCP checker writes it), `power/` (power results),
/// `package_checker_params` (bypass flags).
const EXPECTED_EXTRAS: &[&str] = &["scaling.json", "power", crate::discover::walk::PARAMS_FILE];

/// The entries of a result folder besides its `result_*.txt` logs, one
/// finding per kind of problem: PKG002 for entries that look like
/// misnamed logs, PKG003 for other unknown files, and a PKG040 note when
/// the only extras are the expected ones. The official package_checker
/// warns "Detected N total files ..." and "Unknown files in result
/// directory" for any extra (scaling.json included); those texts are kept
/// in the first finding's `official` field, so every official warning is
/// accounted for once.
fn unknown_entries(b: &BenchmarkDir, n: usize) -> Vec<Finding> {
    let mut official = Vec::new();
    let params_count = usize::from(b.params.is_some());
    if b.entry_count() > n + params_count {
        official.push(format!(
            "Detected {} total files in directory {}, but some do not conform to naming convention, should you rename them to result_*.txt ?",
            b.entry_count(),
            b.path
        ));
    }
    if n < b.entry_count() {
        official.push(format!("Unknown files in result directory: {}", b.path));
    }
    if official.is_empty() {
        return Vec::new();
    }
    let (extras, odd): (Vec<&String>, Vec<&String>) = b
        .other_entries
        .iter()
        .partition(|e| EXPECTED_EXTRAS.contains(&e.as_str()));
    let (misnamed, unknown): (Vec<&String>, Vec<&String>) = odd
        .into_iter()
        .partition(|s| s.contains("result") || s.ends_with(".txt") || s.ends_with(".log"));
    let names = |v: &[&String]| crate::discover::paths::name_list(v.iter());
    let mut out = Vec::new();
    if !misnamed.is_empty() {
        out.push(
            Finding::of(
                code::PKG002,
                &b.path,
                format!(
                    "{} not named result_<i>.txt: {}",
                    if misnamed.len() == 1 {
                        "1 file looks like a log but is"
                    } else {
                        "files look like logs but are"
                    },
                    names(&misnamed)
                ),
            )
            .with_help("rename logs to result_<i>.txt; the checks read only result_*.txt"),
        );
    }
    if !unknown.is_empty() {
        out.push(
            Finding::of(
                code::PKG003,
                &b.path,
                format!("unknown {} in the result folder: {}", if unknown.len() == 1 { "file" } else { "files" }, names(&unknown)),
            )
            .with_help("a result folder holds result_<i>.txt logs and the expected extras (scaling.json, power/, package_checker_params); remove other files"),
        );
    }
    if out.is_empty() {
        out.push(Finding::of(
            code::PKG040,
            &b.path,
            format!("expected extras, not checked as logs: {}", names(&extras)),
        ));
    }
    if let Some(first) = out.first_mut() {
        first.official = official;
    }
    out
}
