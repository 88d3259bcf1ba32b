//! The closed-division policy pack (issue 5): what the official tools leave
//! to human reviewers, pointed out for them.
//!
//! - [`check_log`]: one result log: the reference optimizer ([`optimizer`]),
//!   fixed hyperparameters ([`hyperparams`]), update-consistency signals in
//!   MLLOG keys and values ([`signals`]), the 6.x precision/parallelism
//!   disclosure ([`disclosure`]), the eval schedule ([`eval_schedule`]),
//!   framework settings and optimizers the run logs under keys of its own
//!   ([`log_settings`]) and fixed hyperparameters among them ([`log_fixed`]);
//! - [`check_configs`]: the same signals in implementation configs
//!   ([`configs`]), with file and line, and fixed hyperparameters configs
//!   set to another value ([`config_fixed`]).
//!
//! All data (reference optimizers, values, patterns, thresholds) comes from
//! `rules/<usage>/<version>/policy.yaml` and `rules/policy/signals.yaml`
//! through [`PolicyRules`]. Codes are documented in `rules/codes/policy.yaml`.
//! Nothing here prints or panics on user input; output is sorted.

mod anchors;
pub mod cache;
mod cache_rows;
pub mod catalog;
pub mod config_fixed;
mod config_json;
pub mod config_log;
pub mod configs;
pub mod disclosure;
pub mod eval_schedule;
mod forward;
pub mod frameworks;
mod hydra_package;
pub mod hyperparams;
pub mod interpolate;
mod log_fixed;
mod log_settings;
pub mod named_configs;
pub mod optimizer;
pub mod parsed;
pub mod prefilter;
pub mod repeatability;
pub mod rules;
mod scope;
mod sed_edit;
mod shell_assign;
mod shell_guard;
mod shell_sed;
mod shell_unset;
pub mod signals;
mod yaml_alias;

pub use rules::{BenchmarkPolicy, PolicyRules};

use crate::discover::tree::ImplFile;
use crate::finding::code;
use crate::finding::{Finding, Severity};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read;
use std::path::Path;

/// Codes the policy checks emit besides the signal families (whose codes
/// come from the signal data). Every one must be documented.
pub const CODES: &[&str] = &[
    code::POL001.id,
    code::POL002.id,
    code::POL003.id,
    code::POL004.id,
    code::POL005.id,
    code::POL006.id,
    code::POL007.id,
    code::POL008.id,
    code::POL009.id,
    code::POL020.id,
    code::POL021.id,
    code::POL030.id,
    code::POL040.id,
    code::POL041.id,
    code::POL050.id,
    code::CFG001.id,
];

/// What one pass over a log collects for the policy checks.
#[derive(Debug, Default)]
pub struct LogFacts {
    /// First value and line of every key.
    pub first: BTreeMap<String, (serde_json::Value, u64)>,
    /// Every `eval_accuracy`: metadata and line.
    pub evals: Vec<(serde_json::Value, u64)>,
    /// Signals in keys and values: one per (key, family), at the first line.
    pub signals: Vec<LogSignal>,
    /// Line of the first `eval_accuracy` that met the quality target, as
    /// the compliance rules found it (`None` when unknown): the evaluation
    /// schedule ends there.
    pub target_met_at: Option<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LogSignal {
    pub line: u64,
    pub family: usize,
    pub key: String,
    pub value: String,
    pub word: String,
}

fn value_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Most distinct keys whose first value a log's facts keep.
pub const MAX_KEYS_KEPT: usize = 50_000;
/// Largest first value kept (JSON text bytes, approximately).
pub const MAX_VALUE_KEPT_BYTES: usize = 4096;
/// Most `eval_accuracy` records whose positions are kept.
pub const MAX_EVALS_KEPT: usize = 100_000;

/// The numeric fields of a metadata object (what the evaluation schedule
/// reads), nothing else.
fn numbers_only(meta: &serde_json::Value) -> serde_json::Value {
    match meta {
        serde_json::Value::Object(m) => serde_json::Value::Object(
            m.iter()
                .filter(|(_, v)| v.is_number())
                .take(16)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        _ => serde_json::Value::Null,
    }
}

/// Approximate size of `v` as JSON text, counted up to a little past `cap`.
fn json_size(v: &serde_json::Value, cap: usize) -> usize {
    let mut total = 0usize;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        // Every value waiting counts at least 2 bytes.
        if total > cap || stack.len() > cap / 2 {
            return total.max(cap + 1);
        }
        total += match v {
            serde_json::Value::String(s) => s.len() + 2,
            serde_json::Value::Array(a) => {
                stack.extend(a.iter().take(cap + 1));
                2
            }
            serde_json::Value::Object(m) => {
                for (k, x) in m.iter().take(cap + 1) {
                    total += k.len() + 4;
                    stack.push(x);
                }
                2
            }
            _ => 8,
        };
    }
    total
}

/// Reads the log once and collects the facts.
pub fn collect<R: Read>(rules: &PolicyRules, reader: R) -> std::io::Result<LogFacts> {
    let mut c = Collector::new(rules);
    crate::mllog::scan(reader, |_| true, |e| c.event(&e))?;
    Ok(c.finish())
}

/// Most distinct keys whose signal match one log's collector remembers.
const MAX_KEYS_CACHED: usize = 4096;

/// Collects [`LogFacts`] from events as a log streams by, so the policy
/// checks can share one pass over the file with other checks. Feed it every
/// record, in order.
pub struct Collector<'a> {
    rules: &'a PolicyRules,
    facts: LogFacts,
    key_cache: crate::check::KeyMap<Option<signals::SignalMatch>>,
    seen: BTreeSet<(String, usize)>,
}

impl<'a> Collector<'a> {
    pub fn new(rules: &'a PolicyRules) -> Collector<'a> {
        Collector {
            rules,
            facts: LogFacts::default(),
            key_cache: crate::check::KeyMap::default(),
            seen: BTreeSet::new(),
        }
    }

    /// Whether [`Collector::event`] reads the `metadata` of a record with
    /// this key (elsewhere it may be left `null`).
    pub fn reads_metadata(key: &str) -> bool {
        key == "eval_accuracy"
    }

    pub fn event(&mut self, e: &crate::mllog::Event) {
        let m = &self.rules.signals;
        let facts = &mut self.facts;
        if e.key == "eval_accuracy" && facts.evals.len() < MAX_EVALS_KEPT {
            // Only numbers are read (the evaluation's position).
            facts.evals.push((numbers_only(&e.metadata), e.line));
        }
        let key_hit = match self.key_cache.get(&e.key) {
            Some(hit) => hit.clone(),
            None => {
                let hit = m.match_name(&e.key);
                // Bounded: a log of a million distinct keys must not grow
                // the cache with it (real logs have about 100).
                if self.key_cache.len() < MAX_KEYS_CACHED {
                    self.key_cache.insert(e.key.clone(), hit.clone());
                }
                hit
            }
        };
        // The value as text is needed only for a key that signals
        // something or a string value; most records are neither.
        let mut hits = Vec::new();
        if let Some(h) = key_hit {
            let key_on = match &e.value {
                serde_json::Value::Bool(b) => *b,
                serde_json::Value::Null => true,
                v => !m.is_off(&value_text(v)),
            };
            if key_on {
                hits.push(h);
            }
        }
        if let serde_json::Value::String(s) = &e.value {
            if !s.is_empty() && s.len() <= 80 && !s.contains('/') {
                if let Some(h) = m.match_name(s) {
                    hits.push(h);
                }
            }
        }
        for h in hits {
            if self.seen.insert((e.key.clone(), h.family)) {
                facts.signals.push(LogSignal {
                    line: e.line,
                    family: h.family,
                    key: e.key.clone(),
                    value: value_text(&e.value).chars().take(80).collect(),
                    word: h.word,
                });
            }
        }
        if facts.first.len() < MAX_KEYS_KEPT && !facts.first.contains_key(&e.key) {
            let value = if json_size(&e.value, MAX_VALUE_KEPT_BYTES) > MAX_VALUE_KEPT_BYTES {
                // Not a hyperparameter: never equal to a reference value.
                serde_json::Value::String(format!(
                    "(a value larger than {MAX_VALUE_KEPT_BYTES} bytes, not kept)"
                ))
            } else {
                e.value.clone()
            };
            facts.first.insert(e.key.clone(), (value, e.line));
        }
    }

    pub fn finish(self) -> LogFacts {
        self.facts
    }
}

/// The division the closed rules are judged by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Division {
    Closed,
    Open,
    Unknown,
}

/// Log-level policy findings for one result log.
///
/// `benchmark` and `division` come from the caller (folder name, system
/// JSON); when `None`, the log's own `submission_benchmark` and
/// `submission_division` are used. Closed-division rules run when the
/// division is closed; when it is unknown they still run, but a POL006 note
/// says so and nothing is reported as an error. Open-division logs get no
/// policy findings.
pub fn check_log(
    rules: &PolicyRules,
    benchmark: Option<&str>,
    division: Option<&str>,
    display_path: &str,
    fs_path: &Path,
) -> Vec<Finding> {
    let facts = match crate::safe_io::open_regular(fs_path).and_then(|f| collect(rules, f)) {
        Ok(f) => f,
        Err(e) => {
            return vec![Finding::of(
                code::POL040,
                display_path,
                format!("cannot read the log for the policy checks: {e}"),
            )
            .with_help(rules.help(code::POL040))]
        }
    };
    check_facts(rules, benchmark, division, display_path, &facts)
}

fn logged_str<'a>(facts: &'a LogFacts, key: &str) -> Option<&'a str> {
    facts.first.get(key).and_then(|(v, _)| v.as_str())
}

/// [`check_log`] on facts already collected.
pub fn check_facts(
    rules: &PolicyRules,
    benchmark: Option<&str>,
    division: Option<&str>,
    path: &str,
    facts: &LogFacts,
) -> Vec<Finding> {
    let division_name = division.or_else(|| logged_str(facts, "submission_division"));
    let div = match division_name {
        Some("closed") => Division::Closed,
        Some("open") => Division::Open,
        _ => Division::Unknown,
    };
    let mut out = Vec::new();
    if div == Division::Open {
        return out;
    }
    if div == Division::Unknown {
        out.push(
            Finding::of(
                code::POL006,
                path,
                match division_name {
                    Some(d) => format!(
                        "division '{d}' is neither closed nor open: closed-division policy applied, errors reported as warnings"
                    ),
                    None => "division unknown: closed-division policy applied, errors reported as warnings".to_string(),
                },
            )
            .with_help(rules.help(code::POL006))
            .with_rule(rules.rule("division")),
        );
    }
    let bm_name = benchmark.or_else(|| logged_str(facts, "submission_benchmark"));
    let bm_policy = bm_name.and_then(|b| rules.benchmarks.get(b).map(|p| (b, p)));
    match bm_policy {
        Some((bm, policy)) => {
            out.extend(optimizer::check(rules, bm, policy, facts, path));
            out.extend(hyperparams::check(rules, bm, policy, facts, path));
            out.extend(eval_schedule::check(rules, bm, policy, facts, path));
            out.extend(log_fixed::check(rules, path, facts, (bm, policy)));
        }
        None => {
            // An unknown benchmark is the compliance pack's error (CMN002).
            if bm_name.is_none() {
                out.push(
                    Finding::of(
                        code::POL006,
                        path,
                        "benchmark unknown: optimizer, hyperparameter and eval-schedule policy not checked",
                    )
                    .with_help(rules.help(code::POL006))
                    .with_rule(rules.rule("benchmarks")),
                );
            }
        }
    }
    out.extend(disclosure::check(rules, facts, path));
    // A key the framework data knows decides alone, as in configs.
    let settings = log_settings::check(rules, path, facts, bm_policy);
    for s in &facts.signals {
        let Some(f) = rules.signals.families.get(s.family) else {
            continue;
        };
        if settings.iter().any(|x| x.line == Some(s.line)) {
            continue;
        }
        // Known to the framework data but not on, as it is set (a sync
        // period of 1 where one of 2 or more is local SGD): quiet, as in
        // configs.
        if !rules
            .frameworks
            .matches(&signals::normalize(&s.key), &signals::normalize(&s.value))
            .is_empty()
        {
            continue;
        }
        out.push(
            Finding::new(
                &f.code,
                Severity::Warning,
                path,
                format!(
                    "possible {}: MLLOG key '{}' = {} (matches '{}')",
                    f.title, s.key, s.value, s.word
                ),
            )
            .at_line(Some(s.line))
            .with_help(rules.help(&f.code))
            .with_rule(rules.signal_rule(&f.name)),
        );
    }
    out.extend(settings);
    if div == Division::Unknown {
        for f in &mut out {
            if f.severity == Severity::Error {
                f.severity = Severity::Warning;
                f.message.push_str(" (division unknown: not an error)");
            }
        }
    }
    crate::finding::sort_findings(&mut out);
    out
}

/// Update-consistency signals, framework settings, optimizers and
/// repeatability settings in implementation configs. Files the signal data
/// does not list as configs are skipped, binary files silently, files over
/// the size limit with a POL041 note; a file that cannot be read is a
/// POL040 warning. Variables are resolved across the configs of the same
/// implementation ([`scope`]). The caller decides whether the division is closed.
pub fn check_configs(rules: &PolicyRules, files: &[ImplFile]) -> Vec<Finding> {
    check_parsed_configs(rules, files, &parsed::ParsedConfigs::read(rules, files))
}

/// [`check_configs`] over configs already read (`parsed` was read from
/// `files`).
pub fn check_parsed_configs(
    rules: &PolicyRules,
    files: &[ImplFile],
    parsed: &parsed::ParsedConfigs,
) -> Vec<Finding> {
    use rayon::prelude::*;
    // Packages vendor whole framework trees (thousands of files): read and
    // parsed in parallel before; here variables are resolved per
    // implementation (a config sees what its own implementation's configs
    // assign, and the shared ones'), then settings matched.
    let read = (0..files.len()).filter(|&i| matches!(parsed.for_scan(i), Some(Ok(_))));
    let mut envs: Vec<interpolate::Env> = Vec::new();
    let mut env_of: Vec<Option<usize>> = vec![None; files.len()];
    let mut shared: BTreeMap<usize, interpolate::Env> = BTreeMap::new();
    for members in scope::implementations(files, read).into_values() {
        let mut env = interpolate::Env::default();
        // What a later assignment of a script replaces is not the
        // variable's value (`KVSTORE=dist_async`, then `KVSTORE=dist_sync`),
        // nor is a default after an assignment (`${KVSTORE:-dist_async}`).
        let live: Vec<std::borrow::Cow<'_, [configs::Entry]>> = members
            .iter()
            .filter_map(|&i| match parsed.for_scan(i) {
                Some(Ok(entries)) => Some((i, entries)),
                _ => None,
            })
            .map(|(i, entries)| {
                let name = files[i].file.path.rsplit('/').next().unwrap_or_default();
                if !parsed.is_shell(rules, i, name) {
                    return std::borrow::Cow::Borrowed(entries);
                }
                match configs::settled(entries) {
                    Some(live) => std::borrow::Cow::Owned(live),
                    None => std::borrow::Cow::Borrowed(entries),
                }
            })
            .collect();
        let texts: Vec<&[configs::Entry]> = live.iter().map(|t| t.as_ref()).collect();
        for t in &texts {
            env.add(t);
        }
        // What a shell condition switches off assigns nothing.
        let env = shell_guard::live_env(&texts, &env);
        for &i in &members {
            if let Some(Some(prev)) = env_of.get(i) {
                // In more than one implementation (a shared file): it sees
                // what each of them assigns.
                shared
                    .entry(i)
                    .or_insert_with(|| envs[*prev].clone())
                    .extend(&env);
            }
            env_of[i] = Some(envs.len());
        }
        envs.push(env);
    }
    let empty = interpolate::Env::default();
    let mut out: Vec<Finding> = files
        .par_iter()
        .enumerate()
        .flat_map_iter(|(i, f)| match parsed.for_scan(i) {
            None => Vec::new(),
            Some(Err(finding)) => vec![finding.clone()],
            Some(Ok(entries)) => {
                let env = shared
                    .get(&i)
                    .or_else(|| env_of[i].and_then(|g| envs.get(g)))
                    .unwrap_or(&empty);
                let mut found = entry_findings(
                    rules,
                    f,
                    (parsed.vendored(i), parsed.shell_text(i)),
                    entries,
                    env,
                    false,
                );
                // An open-division system's config: closed rules do not
                // apply; what makes runs repeatable or not still shows.
                if rules.config_log.declares_open(entries) {
                    found.retain(|x| x.code == code::POL050);
                    return found;
                }
                // Ruled out by its text, but a variable it refers to is
                // set by another config: its settings that refer to one
                // are scanned with the values they take.
                if parsed.references(i).iter().any(|n| env.assigns(n)) {
                    if let Some(all) = parsed.referring(i) {
                        found.extend(entry_findings(
                            rules,
                            f,
                            (parsed.vendored(i), parsed.shell_text(i)),
                            &all,
                            env,
                            true,
                        ));
                    }
                }
                found
            }
        })
        .collect();
    out.extend(config_fixed::check(rules, files, parsed));
    // A YAML of named configs (Graphcore's `configs.yml`): the optimizer
    // and the pinned values of a block no launcher picks are another
    // model's (EfficientNet's RMSprop beside ResNet-50's LARS).
    let sections = named_configs::picked_sections(rules, files, parsed);
    if !sections.is_empty() {
        let picked: HashMap<&str, BTreeSet<u64>> = sections
            .iter()
            .map(|(&i, s)| (files[i].file.path.as_str(), named_configs::lines(s)))
            .collect();
        out.retain(|f| {
            !(f.code == code::POL007.id || f.code == code::POL009.id)
                || match (picked.get(f.path.as_str()), f.line) {
                    (Some(lines), Some(line)) => lines.contains(&line),
                    _ => true,
                }
        });
    }
    crate::finding::sort_findings(&mut out);
    // Repeatability notes: one per setting as written and implementation
    // (the first file that writes it: twenty configs of one implementation
    // exporting NCCL_ALGO=Ring are one note), every different one kept
    // (NCCL_PROTO beside NCCL_ALGO, benchmark: True in one file and False
    // in another).
    let mut seen: BTreeSet<(String, Option<String>, String, String)> = BTreeSet::new();
    let by_path: HashMap<&str, &ImplFile> =
        files.iter().map(|f| (f.file.path.as_str(), f)).collect();
    // A note whose setting is part of another's on the same line
    // (`${X:-:4096:8}` inside `export X=${X:-:4096:8}`) is that one.
    let notes: Vec<&Finding> = out.iter().filter(|x| x.code == code::POL050).collect();
    let inner: BTreeSet<(String, Option<u64>, String)> = notes
        .iter()
        .filter(|a| {
            notes.iter().any(|b| {
                b.path == a.path
                    && b.line == a.line
                    && b.rule == a.rule
                    && b.message != a.message
                    && written_within(&a.message, &b.message)
            })
        })
        .map(|a| (a.path.clone(), a.line, a.message.clone()))
        .collect();
    out.retain(|x| {
        if x.code != code::POL050 {
            return true;
        }
        if inner.contains(&(x.path.clone(), x.line, x.message.clone())) {
            return false;
        }
        let (bm, imp) = by_path
            .get(x.path.as_str())
            .map(|f| (f.benchmark.clone(), f.implementation.clone()))
            .unwrap_or_default();
        seen.insert((
            bm,
            imp,
            x.rule.clone().unwrap_or_default(),
            x.message.clone(),
        ))
    });
    out
}

/// Whether the part in which messages `a` and `b` differ is, in `a`, a
/// part of `b`'s: two messages of one rule differ only in the setting as
/// written, and `a`'s is within `b`'s.
fn written_within(a: &str, b: &str) -> bool {
    let pre = a
        .char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map_or(a.len().min(b.len()), |((i, _), _)| i);
    let suf = a
        .chars()
        .rev()
        .zip(b.chars().rev())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x.len_utf8())
        .sum::<usize>()
        .min(a.len() - pre)
        .min(b.len() - pre);
    let (Some(mid_a), Some(mid_b)) = (a.get(pre..a.len() - suf), b.get(pre..b.len() - suf)) else {
        return false;
    };
    mid_b.contains(mid_a)
}

/// Which of `files` sit in a vendored framework tree inside their
/// implementation (`<impl>/NeMo/examples/...`), by index. A folder named
/// like a vendored tree (`nemo`, `megatron`) that holds the
/// implementation's own run scripts (`config_files.implementation_markers`:
/// `run_and_time.sh`, `config_*.sh`) is the implementation's framework
/// folder (`implementations/MI355X/nemo/`), not a copy of upstream: what
/// its configs set is the run's, with its full severity.
pub(crate) fn vendored_files(rules: &PolicyRules, files: &[ImplFile]) -> Vec<bool> {
    let cf = &rules.signals.config_files;
    let named = |d: &str| cf.vendored.iter().any(|x| x.eq_ignore_ascii_case(d));
    // Only a folder named like a vendored tree needs to be told apart.
    let own: std::collections::HashSet<&str> = files
        .iter()
        .filter_map(|f| {
            let (dir, name) = f.file.path.rsplit_once('/')?;
            let last = dir.rsplit_once('/').map_or(dir, |(_, d)| d);
            (named(last) && cf.marks_implementation(name)).then_some(dir)
        })
        .collect();
    // Files come folder by folder: the answer is the folder's, worked out
    // once per run of files in it.
    let mut last: Option<(&str, bool)> = None;
    files
        .iter()
        .map(|f| {
            let dir = f.file.path.rsplit_once('/').map_or("", |(d, _)| d);
            match last {
                Some((d, v)) if d == dir => v,
                _ => {
                    let v = vendored_in(&f.file.path, &named, &own);
                    last = Some((dir, v));
                    v
                }
            }
        })
        .collect()
}

/// Whether the file at `path` sits in a vendored tree: a folder below its
/// implementation folder (benchmarks/<bm>/[implementations/]<impl>/
/// <dirs...>/<file>) is `named` like one and is not in `own` (folders
/// holding run scripts).
fn vendored_in(
    path: &str,
    named: &impl Fn(&str) -> bool,
    own: &std::collections::HashSet<&str>,
) -> bool {
    let Some((dirs, _)) = path.rsplit_once('/') else {
        return false;
    };
    // Where the walk is: before `benchmarks/`, at `<bm>`, at
    // `implementations/` or the implementation, at the implementation
    // after `implementations/`, below the implementation.
    let mut at = 0;
    let mut end = 0;
    for d in dirs.split('/') {
        end += d.len();
        match at {
            0 if d == "benchmarks" || d == "benchmark" => at = 1,
            0 => {}
            1 => at = 2,
            2 if d == "implementations" => at = 3,
            2 | 3 => at = 4,
            _ if named(d) && !own.contains(&path[..end]) => return true,
            _ => {}
        }
        end += 1;
    }
    false
}

/// The findings of one config text (`path` names it), read alone (no
/// variables from other files).
pub fn config_text_findings(
    rules: &PolicyRules,
    path: &str,
    text: &str,
    format: configs::Format,
) -> Vec<Finding> {
    let groups = &rules.signals.config_files.hydra_groups;
    let package = (format == configs::Format::Yaml)
        .then(|| hydra_package::package(path, text.as_bytes(), groups))
        .flatten();
    let entries = hydra_package::under(configs::parse(text, format), package.as_deref());
    let mut env = interpolate::Env::default();
    env.add(&entries);
    let f = ImplFile {
        benchmark: String::new(),
        implementation: None,
        file: crate::discover::tree::FileRef {
            path: path.to_string(),
            fs: std::path::PathBuf::from(path),
        },
    };
    let vendored = vendored_files(rules, std::slice::from_ref(&f))[0];
    entry_findings(rules, &f, (vendored, false), &entries, &env, false)
}

/// The findings of one config's settings; `refs_only`: only the settings
/// whose value refers to a variable.
/// `(vendored, shell_text)`: whether `f` sits in a vendored tree, and
/// whether it is read as shell for its `#!` line though its name says
/// otherwise.
fn entry_findings(
    rules: &PolicyRules,
    f: &ImplFile,
    (vendored, shell_text): (bool, bool),
    entries: &[configs::Entry],
    env: &interpolate::Env,
    refs_only: bool,
) -> Vec<Finding> {
    let path = f.file.path.as_str();
    let name = path.rsplit('/').next().unwrap_or(path);
    let shell =
        shell_text || rules.signals.config_files.format(name) == Some(configs::Format::Shell);
    // A script's assignment a later one of the same variable replaces
    // (`NCCL_ALGO=Ring`, then `NCCL_ALGO=Tree,Ring`) is not what runs.
    // A default to a variable the script set before is never taken.
    let live: Vec<configs::Entry>;
    let entries = match shell.then(|| configs::settled(entries)).flatten() {
        Some(l) => {
            live = l;
            live.as_slice()
        }
        None => entries,
    };
    let local = if entries.iter().any(|e| e.value.contains("${")) {
        // In a YAML, JSON or INI file `${mode}` may be a top-level key of
        // the file (OmegaConf); in a shell file it is a variable.
        let keyed = rules.signals.config_files.format(name).is_some() && !shell;
        configs::local_values_with(entries, keyed)
    } else {
        BTreeMap::new()
    };
    let bm = rules.benchmarks.get(f.benchmark.as_str());
    configs::scan(
        entries,
        &rules.signals,
        &rules.frameworks,
        Some(&rules.entry_gate),
        !vendored,
        env,
        &local,
        refs_only,
    )
        .into_iter()
        .filter_map(|h| match &h.kind {
            configs::HitKind::Family(i) => {
                let fam = rules.signals.families.get(*i)?;
                let (severity, tail) = if vendored {
                    (
                        Severity::Note,
                        "; in a vendored framework tree, an example the run need not use",
                    )
                } else {
                    (Severity::Warning, "")
                };
                Some(
                    Finding::new(
                        &fam.code,
                        severity,
                        path,
                        format!(
                            "possible {}: {} (matches '{}'{tail})",
                            fam.title, h.display, h.word
                        ),
                    )
                    .at_line(Some(h.line))
                    .with_help(rules.help(&fam.code))
                    .with_rule(rules.signal_rule(&fam.name)),
                )
            }
            configs::HitKind::Setting(i) => {
                let s = rules.frameworks.settings.get(*i)?;
                if vendored && s.code == code::POL050 {
                    return None;
                }
                let (severity, tail) = if vendored && s.severity != Severity::Note {
                    (
                        Severity::Note,
                        "; in a vendored framework tree, an example the run need not use",
                    )
                } else {
                    (s.severity, "")
                };
                Some(
                    Finding::new(
                        &s.code,
                        severity,
                        path,
                        format!(
                            "{}: {} ({}; {}{tail})",
                            s.framework_name, h.display, s.why, s.doc
                        ),
                    )
                    .at_line(Some(h.line))
                    .with_help(rules.help(&s.code))
                    .with_rule(rules.framework_rule(&s.framework, &s.id)),
                )
            }
            configs::HitKind::Optimizer(mllog) => {
                if vendored {
                    return None;
                }
                let policy = bm?;
                let fw = &rules.frameworks;
                let same = |n: &str| {
                    fw.same_optimizer(n, &policy.optimizer)
                        || policy.optimizer_also.iter().any(|a| fw.same_optimizer(n, a))
                };
                if same(mllog) {
                    return None;
                }
                Some(
                    Finding::of(
                        code::POL007,
                        path,
                        format!(
                            "{}: the config names optimizer '{}' (mllog '{mllog}'); the reference of {} is '{}'",
                            h.display, h.word, f.benchmark, policy.optimizer
                        ),
                    )
                    .at_line(Some(h.line))
                    .with_help(rules.help(code::POL007))
                    .with_rule(rules.rule(&format!("benchmarks.{}.optimizer", f.benchmark))),
                )
            }
        })
        .collect()
}

/// What the policy unit tests share: the built-in rules of the newest
/// round, and every file below a folder.
#[cfg(test)]
pub(crate) mod test_support {
    use std::path::{Path, PathBuf};

    /// The built-in policy pack of training 5.1.0.
    pub(crate) fn rules() -> super::PolicyRules {
        super::PolicyRules::find(
            &crate::rulebook::source::RuleSource::Embedded,
            "training",
            "5.1.0",
        )
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("no policy pack"))
    }

    /// Every file below `root`, at any depth, sorted.
    pub(crate) fn files_under(root: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
                let path = e.unwrap_or_else(|e| panic!("{e}")).path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    out.push(path);
                }
            }
        }
        out.sort();
        out
    }

    /// The policy fixtures' folder.
    /// A log's facts: each record's key with its value, at lines 10, 11, ...
    pub(crate) fn facts(records: &[(&str, serde_json::Value)]) -> super::LogFacts {
        let mut f = super::LogFacts::default();
        for (i, (k, v)) in records.iter().enumerate() {
            f.first.insert(k.to_string(), (v.clone(), i as u64 + 10));
        }
        f
    }

    pub(crate) fn fixtures() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policy")
    }
}

#[cfg(test)]
mod vendored_tests {
    use super::test_support::rules;
    use crate::discover::tree::{FileRef, ImplFile};

    fn files(paths: &[&str]) -> Vec<ImplFile> {
        paths
            .iter()
            .map(|p| ImplFile {
                benchmark: "bm".into(),
                implementation: None,
                file: FileRef {
                    path: p.to_string(),
                    fs: std::path::PathBuf::from(p),
                },
            })
            .collect()
    }

    /// Which paths are vendored, among others that hold run scripts.
    fn vendored(paths: &[&str]) -> Vec<String> {
        let f = files(paths);
        super::vendored_files(&rules(), &f)
            .into_iter()
            .zip(paths)
            .filter(|(v, _)| *v)
            .map(|(_, p)| p.to_string())
            .collect()
    }

    #[test]
    fn vendored_trees_below_the_implementation() {
        let got = vendored(&[
            // A NeMo clone beside the run scripts, and one in a folder
            // without `implementations/` (v5.1 MiTAC) or `benchmark/`.
            "O/benchmarks/bm/implementations/pytorch/NeMo/examples/a.yaml",
            "O/benchmarks/bm/implementations/pytorch/run_and_time.sh",
            "O/benchmarks/bm/implementations/pytorch/TransformerEngine/pyproject.toml",
            "O/benchmarks/bm/implementations/pytorch/mlperf_logging/rules/h.yaml",
            "O/benchmarks/bm/nemo/Megatron-LM/examples/b.yaml",
            "O/benchmark/bm/implementations/x/tests/c.yaml",
            // The implementation folder itself is never a vendored tree.
            "O/benchmarks/bm/implementations/nemo/config_A.sh",
            "O/benchmarks/bm/nemo/run_and_time.sh",
            // A framework folder with the run scripts (v5.1 GigaComputing),
            // what is below it, and a clone inside it.
            "O/benchmarks/bm/implementations/MI355X/nemo/config_MI355X_1x8x1.sh",
            "O/benchmarks/bm/implementations/MI355X/nemo/conf/d.yaml",
            "O/benchmarks/bm/implementations/MI355X/nemo/NeMo/examples/e.yaml",
            // The same name without a run script: a vendored tree.
            "O/benchmarks/bm/implementations/B200/nemo/f.yaml",
            // Outside benchmarks/: never vendored.
            "O/results/sys/bm/examples/g.json",
        ]);
        assert_eq!(
            got,
            [
                "O/benchmarks/bm/implementations/pytorch/NeMo/examples/a.yaml",
                "O/benchmarks/bm/implementations/pytorch/TransformerEngine/pyproject.toml",
                "O/benchmarks/bm/implementations/pytorch/mlperf_logging/rules/h.yaml",
                "O/benchmarks/bm/nemo/Megatron-LM/examples/b.yaml",
                "O/benchmark/bm/implementations/x/tests/c.yaml",
                "O/benchmarks/bm/implementations/MI355X/nemo/NeMo/examples/e.yaml",
                "O/benchmarks/bm/implementations/B200/nemo/f.yaml",
            ]
        );
    }
}
