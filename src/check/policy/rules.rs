//! The data of the policy pack: `rules/<usage>/<version>/policy.yaml` (the
//! round) and the shared signal patterns it names (`rules/policy/signals.yaml`).
//! Loading validates everything (regexes, expressions, codes) so a broken
//! pack fails at load with the file named, never while checking.

use super::frameworks::{FrameworkFile, Frameworks};
use super::prefilter::{Need, Prefilter};
use super::signals::{SignalMatcher, SignalsFile};
use crate::check::rules::expr::{self, Expr};
use crate::rulebook::codes::CodeRegistry;
use crate::rulebook::source::{load_yaml, rounds_with, DataError, RuleSource};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// `policy.yaml` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    ruleset: String,
    signals: String,
    #[serde(default)]
    optimizer_keys: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    disclosure: Option<Disclosure>,
    #[serde(default)]
    benchmarks: BTreeMap<String, BenchmarkFile>,
}

/// The 6.x precision and parallelism disclosure keys.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Disclosure {
    pub keys: Vec<String>,
    /// The common compliance pack already requires the keys: no POL020.
    pub required_by_compliance: bool,
    /// The key that gives the lowest precision of communication.
    pub comm_key: String,
    /// Values of `comm_key` that deserve a POL021 look.
    #[serde(default)]
    pub low_precision_comm: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BenchmarkFile {
    optimizer: String,
    #[serde(default)]
    optimizer_also: Vec<String>,
    optimizer_checked_by_compliance: bool,
    #[serde(default)]
    tunable: Vec<String>,
    #[serde(default)]
    fixed: BTreeMap<String, serde_json::Value>,
    /// Values the reference implementation sets that the rules do not let
    /// change and neither `fixed` nor the compliance pack checks (rules
    /// section 2.3: by default hyperparameters equal the reference).
    #[serde(default)]
    reference: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    checks: Vec<CheckFile>,
    #[serde(default)]
    eval_schedule: Option<ScheduleFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckFile {
    key: String,
    expr: String,
    severity: String,
    why: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScheduleFile {
    fields: Vec<String>,
    every: String,
    tolerance: String,
    #[serde(default)]
    first: Option<String>,
    #[serde(default)]
    first_tolerance: Option<String>,
    #[serde(default)]
    first_early_tolerance: Option<String>,
    #[serde(default)]
    drift: Option<String>,
    #[serde(default)]
    boundary: Option<String>,
}

/// A value check on one logged key: `expr` must be true, with `v` the event
/// and `s` the first logged value of every key.
#[derive(Debug)]
pub struct ValueCheck {
    pub key: String,
    pub source: String,
    pub expr: Expr,
    /// true: POL004 (error); false: POL005 (warning).
    pub definite: bool,
    pub why: String,
}

/// Where the rules put the evaluations (issue 5 item 6, logging#79).
#[derive(Debug)]
pub struct EvalSchedule {
    /// Metadata fields of `eval_accuracy` giving the position, first present wins.
    pub fields: Vec<String>,
    pub every: (String, Expr),
    pub tolerance: (String, Expr),
    pub first: Option<(String, Expr)>,
    /// Tolerance of the first position; defaults to `tolerance`.
    pub first_tolerance: Option<(String, Expr)>,
    /// Tolerance of a first position earlier than `first`; defaults to
    /// `first_tolerance`.
    pub first_early_tolerance: Option<(String, Expr)>,
    /// How much shorter than `every` each interval may be, over and over
    /// (an implementation that evaluates every whole number of steps
    /// rounds each interval down): the allowance of a position against
    /// the schedule grows by this every interval. Defaults to 0 (the
    /// schedule's places do not move: each evaluation is due at a whole
    /// number of intervals, within `tolerance`).
    pub drift: Option<(String, Expr)>,
    /// Positions at a multiple of this (epoch ends) are extra evaluations
    /// outside the interval schedule.
    pub boundary: Option<(String, Expr)>,
}

/// The policy of one benchmark in one round.
#[derive(Debug)]
pub struct BenchmarkPolicy {
    /// The mllog name of the reference optimizer, exact case.
    pub optimizer: String,
    /// Other `opt_name` values the rules allow (3D U-Net: `sgd` or `nag`).
    pub optimizer_also: Vec<String>,
    /// The closed compliance pack already checks `opt_name` (BMK003).
    pub optimizer_checked_by_compliance: bool,
    pub tunable: Vec<String>,
    /// Fixed values and relations, in key order (fixed first).
    pub checks: Vec<ValueCheck>,
    /// The rule table's fixed values (`fixed:`), by MLLOG key: the log
    /// checks compile them into `checks`, the config check (POL009)
    /// compares config values with them.
    pub fixed: BTreeMap<String, serde_json::Value>,
    /// Every value a config of the closed division must give a key, by
    /// MLLOG key (POL009): `fixed`, the plain `v.value == NUMBER` checks of
    /// the benchmark's closed compliance pack, and `reference:`, each with
    /// the rule it comes from.
    pub config_fixed: PinnedValues,
    pub eval_schedule: Option<EvalSchedule>,
}

/// [`BenchmarkPolicy::config_fixed`]: the pack's values are read the first
/// time they are asked for (a log that gives no setting under a key of
/// its own never asks, so a check of logs alone does not read the packs
/// twice). The compliance loader reads and validates the same packs.
#[derive(Debug)]
pub struct PinnedValues {
    source: RuleSource,
    /// `<usage>/<version>` and the benchmark, to find its pack.
    round: (String, String, String),
    /// `fixed:` and `reference:`, by MLLOG key (`fixed:` wins).
    own: BTreeMap<String, Pinned>,
    /// Keys whose words configs name: a pack's `v.value == 'word'` pins
    /// them too.
    words: Vec<String>,
    /// The policy's own `checks:` that read nothing but `v.value`: tried
    /// on configs as the pack's are.
    checks: Vec<Constraint>,
    all: std::sync::OnceLock<(BTreeMap<String, Pinned>, Vec<Constraint>)>,
}

impl PinnedValues {
    /// Every pinned value, by MLLOG key: `fixed:` over the pack's over
    /// `reference:`. A pack that cannot be read pins nothing here (the
    /// compliance loader reports it).
    pub fn get(&self) -> &BTreeMap<String, Pinned> {
        &self.both().0
    }

    /// The pack's other checks of a value a config can give
    /// ([`Constraint`]), for keys no value pins.
    pub fn constraints(&self) -> &[Constraint] {
        &self.both().1
    }

    fn both(&self) -> &(BTreeMap<String, Pinned>, Vec<Constraint>) {
        self.all.get_or_init(|| {
            let (usage, version, bm) = &self.round;
            let mut all: BTreeMap<String, Pinned> = self
                .own
                .iter()
                .filter(|(_, p)| p.rule.contains(".reference."))
                .map(|(k, p)| (k.clone(), p.clone()))
                .collect();
            let (pack, mut constraints) =
                pinned_by_pack(&self.source, usage, version, bm, &self.words).unwrap_or_default();
            all.extend(pack);
            all.extend(
                self.own
                    .iter()
                    .filter(|(_, p)| p.rule.contains(".fixed."))
                    .map(|(k, p)| (k.clone(), p.clone())),
            );
            constraints.retain(|c| !all.contains_key(&c.key));
            for c in &self.checks {
                if !all.contains_key(&c.key) && !constraints.iter().any(|x| x.key == c.key) {
                    constraints.push(c.clone());
                }
            }
            (all, constraints)
        })
    }
}

/// A closed pack's check of a key that no single value pins
/// (`is_integer(v.value / 0.02)`, `v.value in ['multistep',
/// 'cosine_annealing']`, `v.value * 1152 == s.global_batch_size * 8e-5`):
/// a config's value for the key is tried with it. Only checks that read
/// nothing but `v.value` and state variables another key's value sets as
/// it is (`set: {global_batch_size: "v.value"}`) are kept.
#[derive(Debug, Clone)]
pub struct Constraint {
    /// The MLLOG key.
    pub key: String,
    /// The check, as the pack words it.
    pub check: Arc<Expr>,
    /// Each state variable it reads, with the key whose value sets it.
    pub reads: BTreeMap<String, String>,
    /// `FILE#anchor`, for the `rule` field of findings.
    pub rule: String,
}

/// A value configs are compared with, and the rule that pins it.
#[derive(Debug, Clone)]
pub struct Pinned {
    pub value: serde_json::Value,
    /// `FILE#anchor`, for the `rule` field of findings.
    pub rule: String,
}

/// Everything the policy checks need for one ruleset.
#[derive(Debug)]
pub struct PolicyRules {
    /// `<usage>/<version>`.
    pub ruleset: String,
    /// Display path of the policy file, for the `rule` field of findings.
    pub(crate) policy_path: String,
    pub(crate) signals_path: String,
    pub optimizer_keys: BTreeMap<String, Vec<String>>,
    pub disclosure: Option<Disclosure>,
    pub benchmarks: BTreeMap<String, BenchmarkPolicy>,
    pub signals: SignalMatcher,
    /// Framework settings and optimizer names (`policy/frameworks/*.yaml`).
    pub frameworks: Frameworks,
    /// Decides which config texts are worth parsing.
    pub(crate) prefilter: Prefilter,
    /// The same test on one setting (key path and value in normal form),
    /// before the framework data and the families are tried on it.
    pub(crate) entry_gate: Prefilter,
    /// `policy/frameworks`, for the `rule` field of findings.
    pub(crate) frameworks_dir: String,
    /// Config keys and the MLLOG keys runs log them under (POL008).
    pub(crate) config_log: super::config_log::ConfigLog,
    pub(crate) config_log_path: String,
    /// Help text of every POL/CFG code, from `rules/codes/`.
    pub(crate) help: BTreeMap<String, String>,
    /// Logged settings found to match nothing, shared by the logs of a run.
    pub(crate) log_quiet: super::log_settings::Quiet,
}

/// The values the closed compliance pack of `bm` pins with a plain
/// `v.value == NUMBER` check (or `v.value == 'word'` for a key of `words`) (the pack of rounds before 0.7.0 is
/// `compliance/<bm>.yaml`), by key. A benchmark without a pack pins
/// nothing.
fn pinned_by_pack(
    source: &RuleSource,
    usage: &str,
    version: &str,
    bm: &str,
    words: &[String],
) -> Result<(BTreeMap<String, Pinned>, Vec<Constraint>), DataError> {
    static EQ: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^\s*v\.value\s*==\s*([-+]?[0-9][0-9.]*(?:[eE][-+]?[0-9]+)?)\s*$")
            .expect("literal regex")
    });
    // A word (`v.value == 'cosine with linear warmup'`): pinned for the
    // keys whose words configs name (config_log.yaml `named_values`).
    static WORD: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"^\s*v\.value\s*==\s*(?:'([^'\\]*)'|"([^"\\]*)")\s*$"#)
            .expect("literal regex")
    });
    /// What is read of a pack: its rules' keys and checks (the rest is
    /// the compliance loader's, which validates it).
    #[derive(Deserialize)]
    struct Pack {
        #[serde(default)]
        rules: Vec<PackRule>,
    }
    #[derive(Deserialize)]
    struct PackRule {
        #[serde(default)]
        key: Option<String>,
        #[serde(default)]
        check: crate::check::rules::pack::Exprs,
        #[serde(default)]
        include: Option<String>,
        #[serde(default)]
        set: BTreeMap<String, String>,
    }
    // A pack the closed one includes for a logged value (resnet's
    // `include: "'closed_resnet_' ~ v.value if v.value in ['sgd', 'lars']
    // else none"`): its keys are the variant's own (lars_epsilon), so
    // every variant's pins hold for a config that sets such a key.
    static INCLUDE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"^\s*'([A-Za-z0-9_]+)'\s*~\s*v\.value\s+if\s+v\.value\s+in\s+\[([^\]]*)\]",
        )
        .expect("literal regex")
    });
    let mut out = BTreeMap::new();
    let mut pack = None;
    for rel in [
        format!("{usage}/{version}/compliance/closed_{bm}.yaml"),
        format!("{usage}/{version}/compliance/{bm}.yaml"),
    ] {
        if let Some(doc) = load_yaml::<Pack>(source, &rel)? {
            pack = Some((rel, doc));
            break;
        }
    }
    let Some((rel, doc)) = pack else {
        return Ok((out, Vec::new()));
    };
    let mut packs = vec![(rel, doc)];
    let mut variants = Vec::new();
    for r in &packs[0].1.rules {
        let Some(m) = r.include.as_deref().and_then(|i| INCLUDE.captures(i)) else {
            continue;
        };
        for item in m[2].split(',') {
            let item = item.trim().trim_matches(['\'', '"']);
            if !item.is_empty() {
                variants.push(format!("{usage}/{version}/compliance/{}{item}.yaml", &m[1]));
            }
        }
    }
    for rel in variants {
        if let Some(doc) = load_yaml::<Pack>(source, &rel)? {
            packs.push((rel, doc));
        }
    }
    // State variables a key's value sets as it is (`set:
    // {global_batch_size: "v.value"}`), in these packs or the round's
    // common ones: a check that reads one is tried with the config's value
    // of that key.
    let mut setters: BTreeMap<String, String> = BTreeMap::new();
    let mut common = Vec::new();
    for name in ["closed_common.yaml", "common.yaml"] {
        if let Some(doc) =
            load_yaml::<Pack>(source, &format!("{usage}/{version}/compliance/{name}"))?
        {
            common.push(doc);
        }
    }
    for doc in packs.iter().map(|(_, d)| d).chain(&common) {
        for r in &doc.rules {
            let Some(key) = r.key.as_deref() else {
                continue;
            };
            for (var, e) in &r.set {
                if e.trim() == "v.value" {
                    setters
                        .entry(var.clone())
                        .or_insert_with(|| key.to_string());
                }
            }
        }
    }
    let mut constraints: Vec<Constraint> = Vec::new();
    for (rel, doc) in &packs {
        let display = source.display(rel);
        for r in &doc.rules {
            let Some(key) = r.key.as_deref() else {
                continue;
            };
            if out.contains_key(key) {
                // The closed pack's own pin, or the first variant's.
                continue;
            }
            for (c, _) in r.check.items() {
                if !EQ.is_match(&c) && !WORD.is_match(&c) {
                    if let Some(k) = constraint(key, &c, &setters, format!("{display}#{key}")) {
                        if !constraints.iter().any(|x| x.key == k.key) {
                            constraints.push(k);
                        }
                    }
                    continue;
                }
                if let Some(w) = WORD
                    .captures(&c)
                    .and_then(|m| m.get(1).or_else(|| m.get(2)))
                {
                    if words.iter().any(|w| w == key) {
                        out.insert(
                            key.to_string(),
                            Pinned {
                                value: serde_json::Value::String(w.as_str().to_string()),
                                rule: format!("{display}#{key}"),
                            },
                        );
                    }
                    continue;
                }
                let Some(lit) = EQ.captures(&c).map(|m| m[1].to_string()) else {
                    continue;
                };
                // An integer stays one (messages say 16, not 16.0).
                let value = match lit.parse::<i64>() {
                    Ok(i) => serde_json::Number::from(i),
                    Err(_) => match lit
                        .parse::<f64>()
                        .ok()
                        .and_then(serde_json::Number::from_f64)
                    {
                        Some(n) => n,
                        None => continue,
                    },
                };
                out.insert(
                    key.to_string(),
                    Pinned {
                        value: serde_json::Value::Number(value),
                        rule: format!("{display}#{key}"),
                    },
                );
            }
        }
    }
    Ok((out, constraints))
}

/// `check` of `key` as a [`Constraint`], when it reads nothing but
/// `v.value`, the rule functions and state variables in `setters`.
fn constraint(
    key: &str,
    check: &str,
    setters: &BTreeMap<String, String>,
    rule: String,
) -> Option<Constraint> {
    let e = expr::compile(check, &|_| true).ok()?;
    let mut reads = BTreeMap::new();
    for name in e.undeclared_variables(true) {
        if name == "v.value" || expr::FUNCTIONS.contains(&name.as_str()) {
            continue;
        }
        let var = name.strip_prefix("s.")?;
        reads.insert(var.to_string(), setters.get(var)?.clone());
    }
    let reads_value = e.undeclared_variables(true).contains("v.value");
    reads_value.then(|| Constraint {
        key: key.to_string(),
        check: Arc::new(e),
        reads,
        rule,
    })
}

fn compile(path: &str, what: &str, src: &str) -> Result<Expr, DataError> {
    expr::compile(src, &|_| true).map_err(|e| DataError {
        path: path.to_string(),
        message: format!("{what}: {e}"),
    })
}

impl PolicyRules {
    /// `files` with each `benchmarks/<name>/` folder that is no benchmark
    /// of the round read as the one its name stands for (`dlrm_v2`:
    /// dlrm_dcnv2), `None` when all are ([`super::scope`]).
    pub fn round_benchmarks(
        &self,
        files: &[crate::discover::tree::ImplFile],
    ) -> Option<Vec<crate::discover::tree::ImplFile>> {
        super::scope::with_round_benchmarks(files, &self.benchmarks)
    }

    /// Reads `<usage>/<version>/policy.yaml`, the signal file it names and
    /// the code documentation from `source`; a round without a policy pack
    /// is an error naming the rounds that have one.
    pub fn load(source: &RuleSource, usage: &str, version: &str) -> Result<Self, DataError> {
        Self::find(source, usage, version)?.ok_or_else(|| {
            let known = rounds_with(source, usage, "policy.yaml");
            DataError::new(
                source,
                &format!("{usage}/{version}/policy.yaml"),
                format!("no policy pack for this ruleset (known: {known})"),
            )
        })
    }

    /// As [`PolicyRules::load`], `Ok(None)` when the round has no policy
    /// pack (HPC rounds: `check` runs no policy checks there).
    pub fn find(
        source: &RuleSource,
        usage: &str,
        version: &str,
    ) -> Result<Option<Self>, DataError> {
        let registry = CodeRegistry::load(source)?;
        Self::find_with_codes(source, &registry, usage, version)
    }

    /// As [`PolicyRules::find`], with the code registry already loaded.
    pub fn find_with_codes(
        source: &RuleSource,
        registry: &CodeRegistry,
        usage: &str,
        version: &str,
    ) -> Result<Option<Self>, DataError> {
        let rel = format!("{usage}/{version}/policy.yaml");
        let path = source.display(&rel);
        let invalid = |message: String| DataError {
            path: path.clone(),
            message,
        };
        let Some(file) = load_yaml::<PolicyFile>(source, &rel)? else {
            return Ok(None);
        };
        let signals_path = source.display(&file.signals);
        let signals_file: SignalsFile = load_yaml(source, &file.signals)?
            .ok_or_else(|| invalid(format!("signals file {} not found", file.signals)))?;
        let fw_dir = signals_file.frameworks.trim_end_matches('/').to_string();
        let config_log_rel = signals_file.config_log.clone();
        // The framework files are read before anything is compiled, so the
        // two largest compilations (the signal regexes and the framework
        // regex sets) run side by side; errors are still reported in the
        // order the parts are written: signals, config_log, frameworks.
        let config_log = super::config_log::load(source, &config_log_rel);
        let fw_files = (|| -> Result<Vec<(String, FrameworkFile)>, DataError> {
            let mut fw_files = Vec::new();
            for name in source.list(&fw_dir) {
                let Some(stem) = name.strip_suffix(".yaml") else {
                    continue;
                };
                let rel = format!("{fw_dir}/{name}");
                let file: FrameworkFile = load_yaml(source, &rel)?
                    .ok_or_else(|| DataError::new(source, &rel, "cannot be read"))?;
                fw_files.push((stem.to_string(), file));
            }
            if fw_files.is_empty() {
                return Err(invalid(format!("no framework files in {fw_dir}")));
            }
            Ok(fw_files)
        })();
        let optimizer_key = signals_file.optimizer_key.clone();
        let (signals, frameworks) = rayon::join(
            || SignalMatcher::new(signals_file),
            || fw_files.map(|f| Frameworks::new(f, &optimizer_key)),
        );
        let signals = signals.map_err(|message| DataError {
            path: signals_path.clone(),
            message,
        })?;
        let config_log = config_log?;
        let frameworks = frameworks?.map_err(|message| DataError::new(source, &fw_dir, message))?;
        let mut words: Vec<Need> = signals.patterns.iter().cloned().map(Need::one).collect();
        words.extend(frameworks.text_patterns.iter().cloned());
        let common = &signals.config_files.word_frequency;
        let analyses = std::sync::Arc::default();
        let prefilter = Prefilter::new(&words, &[], common, &analyses);
        let entry_words: Vec<Need> = signals
            .patterns
            .iter()
            .chain(&frameworks.entry_patterns)
            .cloned()
            .map(Need::one)
            .collect();
        let entry_own: Vec<Need> = frameworks
            .own_entry_patterns
            .iter()
            .chain(std::iter::once(&optimizer_key))
            .cloned()
            .map(Need::one)
            .collect();
        let entry_gate = Prefilter::new(&entry_words, &entry_own, common, &analyses);
        let mut help = BTreeMap::new();
        let fw_codes: Vec<String> = frameworks.settings.iter().map(|s| s.code.clone()).collect();
        for code in signals
            .codes()
            .chain(super::CODES.iter().copied())
            .chain(fw_codes.iter().map(String::as_str))
        {
            let doc = registry
                .get(code)
                .ok_or_else(|| invalid(format!("code {code} is not documented in codes/")))?;
            help.insert(code.to_string(), doc.help.clone());
        }
        let mut benchmarks = BTreeMap::new();
        for (name, b) in file.benchmarks {
            // `fixed:` (POL004) and `reference:` (POL005) values: checks
            // of the logs, and values configs are compared with (POL009).
            let mut config_fixed: BTreeMap<String, Pinned> = BTreeMap::new();
            let mut checks = Vec::new();
            for (field, values, definite, why) in [
                (
                    "reference",
                    &b.reference,
                    false,
                    "the reference's value: hyperparameters the rules table does not make tunable equal the reference",
                ),
                (
                    "fixed",
                    &b.fixed,
                    true,
                    "rules table: the value is fixed for the closed division",
                ),
            ] {
                for (key, want) in values {
                    let literal =
                        serde_json::to_string(want).map_err(|e| invalid(e.to_string()))?;
                    let source = match want {
                        serde_json::Value::Number(_) => {
                            format!("isclose(v.value, {literal}, rel_tol=1e-9)")
                        }
                        _ => format!("v.value == {literal}"),
                    };
                    checks.push(ValueCheck {
                        key: key.clone(),
                        expr: compile(&path, &format!("{name}.{field}.{key}"), &source)?,
                        source: format!("{key} == {literal}"),
                        definite,
                        why: why.into(),
                    });
                    config_fixed.insert(
                        key.clone(),
                        Pinned {
                            value: want.clone(),
                            rule: format!("{path}#benchmarks.{name}.{field}.{key}"),
                        },
                    );
                }
            }
            // Fixed values first, as the file lists them.
            checks.sort_by_key(|c| !c.definite);
            let mut own_checks = Vec::new();
            for c in b.checks {
                own_checks.extend(constraint(
                    &c.key,
                    &c.expr,
                    &BTreeMap::new(),
                    format!("{path}#benchmarks.{name}.checks.{}", c.key),
                ));
                let definite = match c.severity.as_str() {
                    "error" => true,
                    "warning" => false,
                    other => {
                        return Err(invalid(format!(
                            "{name}.checks.{}: severity must be error or warning, not '{other}'",
                            c.key
                        )))
                    }
                };
                checks.push(ValueCheck {
                    expr: compile(&path, &format!("{name}.checks.{}", c.key), &c.expr)?,
                    key: c.key,
                    source: c.expr,
                    definite,
                    why: c.why,
                });
            }
            let eval_schedule = match b.eval_schedule {
                None => None,
                Some(s) => {
                    let what = format!("{name}.eval_schedule");
                    if s.fields.is_empty() {
                        return Err(invalid(format!("{what}.fields must not be empty")));
                    }
                    // An expression with its source text; an optional one
                    // stays `None`.
                    let expr = |src: String| -> Result<(String, Expr), DataError> {
                        let e = compile(&path, &what, &src)?;
                        Ok((src, e))
                    };
                    let optional = |src: Option<String>| src.map(expr).transpose();
                    Some(EvalSchedule {
                        fields: s.fields,
                        every: expr(s.every)?,
                        tolerance: expr(s.tolerance)?,
                        first: optional(s.first)?,
                        first_tolerance: optional(s.first_tolerance)?,
                        first_early_tolerance: optional(s.first_early_tolerance)?,
                        drift: optional(s.drift)?,
                        boundary: optional(s.boundary)?,
                    })
                }
            };
            let round = (usage.to_string(), version.to_string(), name.clone());
            benchmarks.insert(
                name,
                BenchmarkPolicy {
                    optimizer: b.optimizer,
                    optimizer_also: b.optimizer_also,
                    optimizer_checked_by_compliance: b.optimizer_checked_by_compliance,
                    tunable: b.tunable,
                    checks,
                    fixed: b.fixed,
                    config_fixed: PinnedValues {
                        source: source.clone(),
                        round,
                        own: config_fixed,
                        words: config_log.named_keys(),
                        checks: own_checks,
                        all: std::sync::OnceLock::new(),
                    },
                    eval_schedule,
                },
            );
        }
        Ok(Some(PolicyRules {
            ruleset: file.ruleset,
            policy_path: path,
            signals_path,
            optimizer_keys: file.optimizer_keys,
            disclosure: file.disclosure,
            benchmarks,
            signals,
            frameworks,
            prefilter,
            entry_gate,
            frameworks_dir: source.display(&fw_dir),
            config_log,
            config_log_path: source.display(&config_log_rel),
            help,
            log_quiet: Default::default(),
        }))
    }

    pub(crate) fn help(&self, code: impl AsRef<str>) -> String {
        self.help.get(code.as_ref()).cloned().unwrap_or_default()
    }

    pub(crate) fn rule(&self, anchor: &str) -> String {
        format!("{}#{anchor}", self.policy_path)
    }

    pub(crate) fn framework_rule(&self, stem: &str, id: &str) -> String {
        format!("{}/{stem}.yaml#{id}", self.frameworks_dir)
    }

    pub(crate) fn config_log_rule(&self) -> String {
        self.config_log_path.clone()
    }

    pub(crate) fn signal_rule(&self, anchor: &str) -> String {
        format!("{}#{anchor}", self.signals_path)
    }
}
