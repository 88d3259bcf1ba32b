//! A config against the log of its own run (issue 16, item 3): the
//! optimizer and the hyperparameters an implementation config sets, as the
//! run logged them. A config that contradicts the log of the run it is
//! linked to is a POL008 warning at both places.
//!
//! The link (also in `mlaudit rules explain POL008`): the logs of
//! `results/<SYSTEM>/<bm>/` are the runs of the configs under
//! `benchmarks/<bm>/` (or `benchmark/<bm>/`) that sit in a folder named
//! `<SYSTEM>` (compared ignoring case, `-` the same as `_`), alone or with
//! more after it (AMD's `<SYSTEM>_llama2_70b`): NVIDIA's
//! `benchmarks/bert/implementations/<SYSTEM>/config_*.sh`. When no config
//! of the benchmark sits in such a folder and the package has one system
//! for the benchmark, every config of the benchmark is linked to it.
//! Vendored framework trees are never linked. A setting agrees when any
//! value a linked config gives it (defaults and the values the configs
//! assign to its variables included) is the logged one: a `config_common.sh`
//! default overridden by the system's config is no contradiction.
//!
//! What a config key is logged as is data (`rules/policy/config_log.yaml`);
//! optimizer names map to mllog names through the framework files (fused
//! and vendor variants are the same optimizer).

use super::configs::{self, Entry, EntryKind};
use super::interpolate::{self, Env};
use super::signals::normalize;
use super::{LogFacts, PolicyRules};
use crate::discover::tree::ImplFile;
use crate::finding::{code, Finding};
use regex::{Regex, RegexSet};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigLogFile {
    /// Two numbers agree when they differ by at most this fraction of the
    /// larger.
    relative_tolerance: f64,
    /// Top-level keys that mark a config saved with a checkpoint.
    checkpoint_keys: Vec<String>,
    /// Folders (patterns, lower case, `*` any run) whose configs are no
    /// run's: test data and checkpoints saved with a framework's tests.
    #[serde(default)]
    unlinked_folders: Vec<String>,
    /// Folders (patterns, lower case, `*` any run) of helper programs
    /// (checkpoint conversion, data preparation): a fixed value a config
    /// elsewhere in the implementation gives answers for theirs.
    #[serde(default)]
    helper_folders: Vec<String>,
    /// Implementation folders (patterns, lower case, `*` any run) of a
    /// package's open-division systems: the closed packs' checks of a
    /// value are not tried on their configs.
    #[serde(default)]
    open_folders: Vec<String>,
    /// Top-level keys (normal form) under which a config may name its
    /// division: one that says `open` is an open-division system's
    /// (Graphcore's `pod16-open.json`, `"submission_division": "open"`),
    /// and no closed-division policy but the repeatability notes reads it.
    #[serde(default)]
    division_keys: Vec<String>,
    /// Accelerator names (lower case) that system and config script names
    /// carry (`SR780aV3-8xB200_SXM_180GB`, `config_DGXB200_001x08x032.sh`):
    /// a script tied to a system by its product of scale alone must name
    /// an accelerator the system's name does.
    #[serde(default)]
    accelerators: Vec<String>,
    /// Keys (normal form) a config script gives its run's scale under
    /// (global batch size, accumulation steps, batch per device), with
    /// the MLLOG key a run logs it as: a script that gives another number
    /// than the runs logged is another scale's config, not compared with
    /// those runs.
    #[serde(default)]
    scale_keys: Vec<ScaleFile>,
    /// Measures of scale a config script gives only as a product (nodes
    /// times accelerators per node times the batch per device).
    #[serde(default)]
    scale_products: Vec<ScaleProduct>,
    /// Where the files a script sources (`source /etc/profile`) are the
    /// system's or the container image's, not the package's: path
    /// prefixes as written.
    #[serde(default)]
    external_sources: Vec<String>,
    /// Words a config gives for a value the rules pin to a string (a
    /// learning-rate schedule): what each means.
    #[serde(default)]
    named_values: Vec<NamedValues>,
    /// Flags (normal form) by which a launcher picks one named config of
    /// a YAML of several (`train.py --config NAME`,
    /// [`super::named_configs`]).
    #[serde(default)]
    named_config_flags: Vec<String>,
    hyperparameters: Vec<HyperFile>,
}

/// The names configs give the values of one MLLOG key that holds words.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NamedValues {
    mllog: String,
    /// Each logged value, with the names (normal form) that mean it.
    means: BTreeMap<String, Vec<String>>,
    /// Names (normal form) that mean none of them.
    #[serde(default)]
    others: Vec<String>,
    /// Every name not listed under `means` means another value (a date
    /// the pack pins: any other date is another).
    #[serde(default)]
    only: bool,
    /// A list of two or more numbers (`30,60,80`: the epochs where a step
    /// schedule drops the rate) means another value.
    #[serde(default)]
    number_lists: bool,
    #[allow(dead_code)]
    why: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HyperFile {
    /// The MLLOG keys the value is logged under, first found wins.
    mllog: Vec<String>,
    /// The config key, its last part (regex over the normal form, whole).
    key: String,
    /// When given, a regex one of the key's parents (normal form, whole)
    /// must match: `alpha` counts only under `lora_tuning`.
    #[serde(default)]
    parent: Option<String>,
    /// When given, the key holds a list and the value is its item at this
    /// index, from 0 (torch's `betas: [0.9, 0.999]`).
    #[serde(default)]
    item: Option<usize>,
    /// When given, the config's value may be one per so many samples: a
    /// run that scales it linearly logs it times its global batch size
    /// over one of these (a learning rate per 2048 samples).
    #[serde(default)]
    per_samples: Vec<f64>,
    /// When given, `per_samples` holds for the configs of these
    /// benchmarks only.
    #[serde(default)]
    per_samples_in: Vec<String>,
    /// When given, the mapping holds for the configs of these benchmarks
    /// only (NVIDIA's VAL_CHECK_INTERVAL is samples for LoRA, steps for
    /// Llama 3.1 8B).
    #[serde(default)]
    benchmarks: Vec<String>,
    /// When true, the key counts only with no parent: a script's variable,
    /// a launcher's flag or a config's top-level key (NVIDIA's MXNet
    /// `MOM`; a `momentum` nested elsewhere is a normalization's).
    #[serde(default)]
    top: bool,
    #[allow(dead_code)]
    why: String,
}

/// One compiled mapping: its parent when required, the MLLOG keys (its
/// key is in [`Mappings::keys`]).
#[derive(Debug)]
struct Hyper {
    /// (A forward lazy DFA: the regex crate's full build of one cost a
    /// million instructions or more on every `check`.)
    parent: Option<super::forward::Matcher>,
    mllog: Vec<String>,
    item: Option<usize>,
    per_samples: Vec<f64>,
    per_samples_in: Vec<String>,
    benchmarks: Vec<String>,
    top: bool,
}

/// Mappings with their keys in one set: every setting of every linked
/// config is tried against all of them, in one search.
#[derive(Debug)]
struct Mappings {
    list: Vec<Hyper>,
    /// Each mapping's whole key (`^(?:key)$`), in order.
    patterns: Vec<String>,
    /// Their set, built the first time a config is read (each key was
    /// compiled alone when loaded, so the set builds).
    keys: std::sync::OnceLock<Option<RegexSet>>,
}

impl Mappings {
    fn new(list: Vec<Hyper>, patterns: Vec<String>) -> Mappings {
        Mappings {
            list,
            patterns,
            keys: std::sync::OnceLock::new(),
        }
    }

    /// The mappings whose key matches `key` (normal form), in order.
    fn keyed(&self, key: &str) -> Vec<usize> {
        match self.keys.get_or_init(|| RegexSet::new(&self.patterns).ok()) {
            Some(set) => set.matches(key).into_iter().collect(),
            // Cannot happen (every key compiled alone): each is tried.
            None => self
                .patterns
                .iter()
                .enumerate()
                .filter(|(_, p)| Regex::new(p).is_ok_and(|r| r.is_match(key)))
                .map(|(i, _)| i)
                .collect(),
        }
    }

    fn iter(&self) -> std::slice::Iter<'_, Hyper> {
        self.list.iter()
    }

    fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// One measure of a run's scale: the MLLOG key it is logged as and the
/// keys (normal form) config scripts give it under.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ScaleFile {
    mllog: String,
    keys: Vec<String>,
    /// A script that gives another number is another run's even when it
    /// is the only one; else the measure only chooses among scripts.
    #[serde(default)]
    alone: bool,
    /// The measure counts only for runs that log it: a script that gives
    /// it a number says nothing of its scale otherwise (`DGXNNODES` in a
    /// training script, whose runs log no node count).
    #[serde(default)]
    when_logged: bool,
    /// Keys that, set to a number other than 1, make the script's number
    /// no measure of its runs (DeepCAM's weak-scaling
    /// TRAINING_INSTANCE_SIZE: the nodes are shared among instances).
    #[serde(default)]
    unless: Vec<String>,
    #[serde(default)]
    #[allow(dead_code)]
    why: String,
}

/// A measure of scale a config script gives as a product of its keys
/// (NVIDIA's DeepCAM `DGXNNODES` x `DGXNGPU` x `LOCAL_BATCH_SIZE` is the
/// global batch size), for a script that does not give it as a number.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ScaleProduct {
    /// The MLLOG key of the measure; one of `scale_keys`, whose `alone` it
    /// takes.
    mllog: String,
    /// The factors, each under any of its keys (normal form). The last
    /// one is the batch per device, which a script may also give as the
    /// whole measure (NVIDIA's DLRM `BATCHSIZE` is the global batch).
    factors: Vec<Vec<String>>,
    /// Factors that multiply when the script gives them (accumulation).
    #[serde(default)]
    optional: Vec<Vec<String>>,
    /// Keys that, set to a number other than 1, split the accelerators
    /// otherwise (tensor or pipeline parallelism, several training
    /// instances): no product is taken.
    #[serde(default)]
    unless: Vec<String>,
    /// Factors that divide when the script gives them: the accelerators
    /// that hold one copy of the model together (tensor, pipeline and
    /// context parallelism of NVIDIA's LLM scripts).
    #[serde(default)]
    divisors: Vec<Vec<String>>,
    #[serde(default)]
    #[allow(dead_code)]
    why: String,
}

/// The compiled data.
#[derive(Debug)]
pub struct ConfigLog {
    /// Mappings of a key's own value.
    hypers: Mappings,
    /// Mappings of one item of a list (`item:`).
    items: Mappings,
    tolerance: f64,
    checkpoint_keys: Vec<String>,
    unlinked_folders: Vec<String>,
    helper_folders: Vec<String>,
    open_folders: Vec<String>,
    division_keys: Vec<String>,
    accelerators: Vec<String>,
    scale_keys: Vec<ScaleFile>,
    scale_products: Vec<ScaleProduct>,
    external_sources: Vec<String>,
    /// For a logged word (`cosine with linear warmup`): the config names
    /// that mean it, and those that mean something else.
    named: Named,
    named_keys: Vec<String>,
    named_config_flags: Vec<String>,
}

impl ConfigLog {
    pub fn new(file: ConfigLogFile) -> Result<ConfigLog, String> {
        let whole = |what: &str, re: &str| {
            super::forward::Matcher::new(&[format!("^(?:{re})$")], false)
                .map_err(|e| format!("hyperparameter '{what}': {e}"))
        };
        let mut hypers = Vec::new();
        for h in file.hyperparameters {
            if h.mllog.is_empty() {
                return Err(format!("hyperparameter '{}': no mllog key", h.key));
            }
            if let Some(n) = h.per_samples.iter().find(|n| !n.is_finite() || **n <= 0.0) {
                return Err(format!(
                    "hyperparameter '{}': per_samples {n}: not a positive number",
                    h.key
                ));
            }
            // Each key is parsed alone first, to name a broken one (parsed,
            // not compiled: a key set is compiled when a config is read).
            regex_syntax::Parser::new()
                .parse(&format!("^(?:{})$", h.key))
                .map_err(|e| format!("hyperparameter '{}': {e}", h.key))?;
            hypers.push((
                format!("^(?:{})$", h.key),
                Hyper {
                    parent: h.parent.as_deref().map(|p| whole(&h.key, p)).transpose()?,
                    mllog: h.mllog,
                    item: h.item,
                    per_samples: h.per_samples,
                    per_samples_in: h.per_samples_in,
                    benchmarks: h.benchmarks,
                    top: h.top,
                },
            ));
        }
        let t = file.relative_tolerance;
        if !(0.0..1.0).contains(&t) {
            return Err(format!("relative_tolerance {t}: not in [0, 1)"));
        }
        for p in &file.scale_products {
            if !file.scale_keys.iter().any(|s| s.mllog == p.mllog) {
                return Err(format!(
                    "scale_products: '{}' is no measure of scale_keys",
                    p.mllog
                ));
            }
            if p.factors.len() < 2 || p.factors.iter().chain(&p.optional).any(Vec::is_empty) {
                return Err(format!(
                    "scale_products '{}': give two factors or more, each with a key",
                    p.mllog
                ));
            }
        }
        let (items, hypers): (Vec<_>, Vec<_>) =
            hypers.into_iter().partition(|(_, h)| h.item.is_some());
        let mappings = |v: Vec<(String, Hyper)>| {
            let (keys, list): (Vec<String>, Vec<Hyper>) = v.into_iter().unzip();
            Mappings::new(list, keys)
        };
        Ok(ConfigLog {
            hypers: mappings(hypers),
            items: mappings(items),
            tolerance: t,
            checkpoint_keys: file.checkpoint_keys,
            unlinked_folders: file.unlinked_folders,
            helper_folders: file.helper_folders,
            open_folders: file.open_folders,
            division_keys: file.division_keys,
            accelerators: file.accelerators,
            scale_keys: file.scale_keys,
            scale_products: file.scale_products,
            external_sources: file.external_sources,
            named_keys: file.named_values.iter().map(|n| n.mllog.clone()).collect(),
            named: named_values(file.named_values)?,
            named_config_flags: file.named_config_flags,
        })
    }

    /// The flags by which a launcher picks a named config
    /// ([`ConfigLogFile::named_config_flags`]).
    pub(super) fn named_config_flags(&self) -> &[String] {
        &self.named_config_flags
    }

    /// Whether the config at `path` sits in a folder whose configs are no
    /// run's ([`ConfigLogFile::unlinked_folders`]).
    pub(super) fn unlinked(&self, path: &str) -> bool {
        in_folder(path, &self.unlinked_folders)
    }

    /// Whether the config at `path` sits in an implementation folder of
    /// open-division systems ([`ConfigLogFile::open_folders`]).
    pub(super) fn open_division(&self, path: &str) -> bool {
        in_folder(path, &self.open_folders)
    }

    /// Whether a script reading `path` reads a file of the system or the
    /// container image ([`ConfigLogFile::external_sources`]).
    pub(super) fn external_source(&self, path: &str) -> bool {
        self.external_sources
            .iter()
            .any(|p| path.starts_with(p.as_str()))
    }

    /// Whether the config at `path` sits in a folder of helper programs
    /// ([`ConfigLogFile::helper_folders`]).
    pub(super) fn helper(&self, path: &str) -> bool {
        in_folder(path, &self.helper_folders)
    }

    /// Whether the config script `entries` gives a number to a measure
    /// of scale ([`ConfigLogFile::scale_keys`]), one `runs` log when it
    /// counts only then ([`ScaleFile::when_logged`]).
    pub(super) fn gives_scale(&self, entries: &[Entry], runs: &[&RunLog]) -> bool {
        let logs = |mllog: &str| runs.iter().any(|r| r.logged.values.contains_key(mllog));
        self.scale_keys.iter().any(|s| {
            self.measures(s, entries)
                && (!s.when_logged || logs(&s.mllog))
                && !numbers_of(entries, &s.keys).is_empty()
        }) || self
            .scale_products
            .iter()
            .any(|p| !p.divisors.is_empty() && logs(&p.mllog) && product(p, entries, &[]).is_some())
    }

    /// Whether the config script `entries` gives a number to a measure of
    /// scale, logged or not.
    pub(super) fn names_scale(&self, entries: &[Entry]) -> bool {
        self.scale_keys
            .iter()
            .any(|s| self.measures(s, entries) && !numbers_of(entries, &s.keys).is_empty())
    }

    /// Whether `entries` give every factor of a measure of scale
    /// ([`ConfigLogFile::scale_products`]).
    pub(super) fn gives_product(&self, entries: &[Entry]) -> bool {
        self.scale_products
            .iter()
            .any(|p| product(p, entries, &[]).is_some())
    }

    /// Whether the config script `entries` gives a number to a measure
    /// that counts only where logged and `runs` log it (an HPC run's node
    /// count): a measure that ties a script to runs, not one a script of
    /// another implementation may share by chance (a global batch).
    pub(super) fn gives_logged_count(&self, entries: &[Entry], runs: &[&RunLog]) -> bool {
        self.scale_keys.iter().any(|s| {
            s.when_logged
                && self.measures(s, entries)
                && runs.iter().any(|r| r.logged.values.contains_key(&s.mllog))
                && !numbers_of(entries, &s.keys).is_empty()
        })
    }

    /// The accelerators of [`ConfigLogFile::accelerators`] that `name`
    /// names: each where the text before it is no letter, or `dgx`, or a
    /// count (`8x`), so `b200` is in `8xB200` and `DGXB200`, not `GB200`.
    pub(super) fn accelerators_in(&self, name: &str) -> BTreeSet<&str> {
        let name = name.to_ascii_lowercase();
        let mut out = BTreeSet::new();
        for a in &self.accelerators {
            for (at, _) in name.match_indices(a.as_str()) {
                let before = &name[..at];
                let after = name[at + a.len()..].chars().next();
                let starts = !before.ends_with(|c: char| c.is_ascii_alphabetic())
                    || before.ends_with("dgx")
                    || (before.ends_with('x')
                        && before[..before.len() - 1].ends_with(|c: char| c.is_ascii_digit()));
                if starts && !after.is_some_and(|c| c.is_ascii_digit()) {
                    out.insert(a.as_str());
                }
            }
        }
        out
    }

    /// Whether the config script `entries` (with the files it sources,
    /// `sourced`) gives every factor of a product of scale that `runs` log
    /// (NVIDIA's DGXNNODES x DGXNGPU x BATCHSIZE, a global batch): enough
    /// to tell the runs of several systems apart, as a node count is.
    pub(super) fn gives_logged_product(
        &self,
        entries: &[Entry],
        sourced: &[&[Entry]],
        runs: &[&RunLog],
    ) -> bool {
        self.scale_products.iter().any(|p| {
            runs.iter().any(|r| r.logged.values.contains_key(&p.mllog))
                && product(p, entries, sourced).is_some()
        })
    }

    /// Whether the script `entries` may give measure `s`: no key of its
    /// `unless` is set to another number than 1.
    fn measures(&self, s: &ScaleFile, entries: &[Entry]) -> bool {
        s.unless.is_empty() || numbers_of(entries, &s.unless).iter().all(|&n| n == 1.0)
    }

    /// The number config `entries` give the measure of scale logged as
    /// `mllog` (`export GBS=2304`), the last one when several do.
    pub(super) fn scale_number(&self, mllog: &str, entries: &[Entry]) -> Option<f64> {
        let scale = self.scale_keys.iter().find(|s| s.mllog == mllog)?;
        entries
            .iter()
            .filter(|e| {
                e.kind == (EntryKind::Key { header: false })
                    && e.path
                        .last()
                        .is_some_and(|k| scale.keys.contains(&normalize(k)))
            })
            .filter_map(|e| e.value.trim().trim_matches(['"', '\'']).parse::<f64>().ok())
            .next_back()
    }

    /// Whether config word `word` (in normal form) is one the data knows
    /// as a value of some logged key (`named_values`), and the logged words
    /// it means.
    pub(super) fn known_word(&self, word: &str) -> Option<Vec<&str>> {
        let mut known = false;
        let mut means = Vec::new();
        for (logged, m) in &self.named {
            if m.names.iter().any(|w| w == word) {
                known = true;
                means.push(logged.as_str());
            }
            known |= m.others.iter().any(|w| w == word);
        }
        known.then_some(means)
    }

    /// Whether config value `value` (as written) is a list of numbers that
    /// some logged key's `named_values` know as another value.
    pub(super) fn known_number_list(&self, value: &str) -> bool {
        self.named.values().any(|m| m.number_lists) && is_number_list(value)
    }

    /// Whether the config script `entries` is another scale's than
    /// `runs`: it gives a measure of scale (global batch size,
    /// accumulation steps, batch per device) a number none of them logged
    /// (NVIDIA keeps one `config_<system>_<n>x...` per scale in a system's
    /// folder, `export GBS=2304`), or, giving none, a product of its keys
    /// and those of the files it sources (`sourced`) that none logged
    /// ([`ConfigLogFile::scale_products`]).
    /// `every`: every measure, else only those that decide alone
    /// ([`ScaleFile::alone`]).
    pub(super) fn other_scale(
        &self,
        entries: &[Entry],
        sourced: &[&[Entry]],
        runs: &[&RunLog],
        every: bool,
    ) -> bool {
        let same = |n: f64, b: f64| (n - b).abs() <= self.tolerance * n.abs().max(b.abs());
        let logged = |scale: &ScaleFile| -> Vec<f64> {
            runs.iter()
                .filter_map(|r| {
                    r.logged
                        .values
                        .get(&scale.mllog)
                        .and_then(|(v, _)| number(v))
                })
                .collect()
        };
        // A measure the script gives as a number and the runs logged
        // decides; a product is taken only when none does (NVIDIA's packed
        // BERT multiplies by PACKING_FACTOR too, but its BATCHSIZE is the
        // logged d_batch_size).
        let decided = self.scale_keys.iter().any(|s| {
            self.measures(s, entries)
                && !numbers_of(entries, &s.keys).is_empty()
                && !logged(s).is_empty()
        });
        self.scale_keys
            .iter()
            .filter(|s| every || s.alone)
            .filter(|s| self.measures(s, entries))
            .any(|scale| {
                let logged = logged(scale);
                if logged.is_empty() {
                    return false;
                }
                let given = numbers_of(entries, &scale.keys);
                if !given.is_empty() {
                    return given.iter().any(|&n| !logged.iter().any(|&b| same(n, b)));
                }
                !decided
                    && self
                        .scale_products
                        .iter()
                        .filter(|p| p.mllog == scale.mllog)
                        .filter_map(|p| product(p, entries, sourced))
                        .any(|candidates| {
                            !candidates
                                .iter()
                                .any(|&n| logged.iter().any(|&b| same(n, b)))
                        })
            })
    }

    /// Whether `entries` are a config saved with a checkpoint (NeMo's
    /// `model_config.yaml`, a top-level `nemo_version`): the model a run
    /// starts from, not the run's settings.
    pub(super) fn is_checkpoint(&self, entries: &[Entry]) -> bool {
        entries.iter().any(|e| {
            e.kind == (EntryKind::Key { header: false })
                && e.path.len() == 1
                && self.checkpoint_keys.iter().any(|k| *k == e.path[0])
        })
    }

    /// Whether `entries` are an open-division system's config: a top-level
    /// key of [`ConfigLogFile::division_keys`] says `open`.
    pub(super) fn declares_open(&self, entries: &[Entry]) -> bool {
        entries.iter().any(|e| {
            e.kind == (EntryKind::Key { header: false })
                && e.path.len() == 1
                && self.division_keys.contains(&normalize(&e.path[0]))
                && e.value
                    .trim()
                    .trim_matches(['"', '\''])
                    .eq_ignore_ascii_case("open")
        })
    }

    /// Whether configs name the logged words of MLLOG key `mllog`.
    pub(super) fn names(&self, mllog: &str) -> bool {
        self.named_keys.iter().any(|k| k == mllog)
    }

    /// The MLLOG keys whose logged words configs name (`named_values`).
    pub(super) fn named_keys(&self) -> Vec<String> {
        self.named_keys.clone()
    }

    /// Whether MLLOG key `mllog` has a config key mapped to it.
    pub fn maps(&self, mllog: &str) -> bool {
        self.hypers
            .iter()
            .chain(self.items.iter())
            .any(|h| h.mllog.iter().any(|k| k == mllog))
    }

    /// The MLLOG keys (each mapping's, first found wins) a setting at key
    /// path `path` is logged as: its whole last key matches a mapping's key,
    /// and one of its parents the mapping's parent when it names one
    /// (`min_lr` is not `lr`).
    pub(super) fn mllog_keys(
        &self,
        path: &[String],
        outer: &[String],
        bm: &str,
    ) -> Vec<&Vec<String>> {
        matching(&self.hypers, path, outer, bm)
            .map(|h| &h.mllog)
            .collect()
    }

    /// [`ConfigLog::mllog_keys`] of the mappings that read one item of a
    /// list the key holds: the MLLOG keys and the item's index.
    pub(super) fn mllog_items(
        &self,
        path: &[String],
        outer: &[String],
        bm: &str,
    ) -> Vec<(&Vec<String>, usize)> {
        if self.items.is_empty() {
            return Vec::new();
        }
        matching(&self.items, path, outer, bm)
            .filter_map(|h| h.item.map(|i| (&h.mllog, i)))
            .collect()
    }

    /// Whether config value `config` is the number `other` (within the
    /// tolerance); a value that is not a number agrees with everything.
    pub(super) fn agrees(&self, config: &str, other: &serde_json::Value) -> bool {
        match (config.trim().parse::<f64>(), number(other)) {
            (Ok(a), Some(b)) => (a - b).abs() <= self.tolerance * a.abs().max(b.abs()),
            _ => match other.as_str().and_then(|w| self.named.get(w)) {
                // A name known to mean another value disagrees; one known
                // to mean it, or unknown, does not (unless every other name
                // is another value).
                Some(m) => {
                    let n = super::signals::normalize(config.trim().trim_matches(['"', '\'']));
                    if m.number_lists && is_number_list(config) {
                        false
                    } else if m.only {
                        m.names.contains(&n)
                    } else {
                        !m.others.contains(&n)
                    }
                }
                None => true,
            },
        }
    }

    /// Whether config value `config`, one per `per_samples` samples, is
    /// `other` once scaled by a run's global batch size `batch` (within
    /// the tolerance).
    pub(super) fn agrees_scaled(
        &self,
        per_samples: &[f64],
        config: &str,
        other: &serde_json::Value,
        batch: Option<f64>,
    ) -> bool {
        let (Ok(a), Some(b), Some(batch)) = (config.trim().parse::<f64>(), number(other), batch)
        else {
            return false;
        };
        per_samples.iter().any(|n| {
            let scaled = a * batch / n;
            (scaled - b).abs() <= self.tolerance * scaled.abs().max(b.abs()) || rounds_to(scaled, b)
        })
    }

    /// The `per_samples` of the mappings of a key's own value that `path`
    /// matches.
    pub(super) fn per_samples(&self, path: &[String], outer: &[String], bm: &str) -> Vec<f64> {
        matching(&self.hypers, path, outer, bm)
            .filter(|h| h.per_samples_in.is_empty() || h.per_samples_in.iter().any(|b| b == bm))
            .flat_map(|h| h.per_samples.iter().copied())
            .collect()
    }

    /// The MLLOG keys a log's facts must keep for [`check`] (the global
    /// batch size for values given per so many samples).
    fn logged_keys(&self) -> impl Iterator<Item = &str> {
        std::iter::once("opt_name")
            .chain(std::iter::once(BATCH))
            .chain(self.scale_keys.iter().map(|s| s.mllog.as_str()))
            .chain(
                self.hypers
                    .iter()
                    .chain(self.items.iter())
                    .flat_map(|h| h.mllog.iter().map(String::as_str)),
            )
    }
}

/// Whether `scaled`, a value a run computes from a config's, is `logged`
/// once rounded to the few decimals the log wrote (Inspur's v0.7 SSD:
/// `--lr=3.2e-3` per 32 samples is 0.0912 at a batch of 912, logged as
/// 0.09). Only for a log of one to three decimals, not zero, and within
/// 2% of it (0.1 does not stand for 0.0912).
fn rounds_to(scaled: f64, logged: f64) -> bool {
    let written = logged.to_string();
    let Some((_, decimals)) = written.split_once('.') else {
        return false;
    };
    let d = decimals.len();
    if logged == 0.0 || !(1..=3).contains(&d) || written.contains('e') {
        return false;
    }
    let f = 10f64.powi(d as i32);
    ((scaled * f).round() / f - logged).abs() <= 1e-12
        && (scaled - logged).abs() <= 0.02 * logged.abs()
}

/// The mappings of `hypers` whose key (and parent, when named) `path`
/// matches, of those that hold for benchmark `bm`. `outer`: the parents
/// the file itself stands for (its name and its folder's, see
/// [`outer_parents`]), for a top-level key.
fn matching<'a, 'p>(
    hypers: &'a Mappings,
    path: &'p [String],
    outer: &'p [String],
    bm: &'p str,
) -> impl Iterator<Item = &'a Hyper> + use<'a, 'p> {
    let own = path.last().map(|k| normalize(k)).unwrap_or_default();
    // The file's own parents count for its top-level keys only: a nested
    // key's section is nearer (`model.norm.eps` in `optim.yaml` is a
    // layer norm's).
    let outer = if path.len() == 1 { outer } else { &[] };
    let parents = path[..path.len().saturating_sub(1)].iter().chain(outer);
    // In the mappings' order (the first found wins where one is taken).
    hypers
        .keyed(&own)
        .into_iter()
        .filter_map(|i| hypers.list.get(i))
        .filter(move |h| h.benchmarks.is_empty() || h.benchmarks.iter().any(|b| b == bm))
        .filter(move |h| !h.top || path.len() == 1)
        .filter(move |h| {
            // Parents are put in normal form only for a key that matched.
            h.parent
                .as_ref()
                .is_none_or(|p| parents.clone().any(|x| p.is_match(normalize(x).as_bytes())))
        })
}

/// Reads and compiles the data file `rel` of the rules.
pub fn load(
    source: &crate::rulebook::source::RuleSource,
    rel: &str,
) -> Result<ConfigLog, crate::rulebook::source::DataError> {
    use crate::rulebook::source::{load_yaml, DataError};
    let file: ConfigLogFile =
        load_yaml(source, rel)?.ok_or_else(|| DataError::new(source, rel, "cannot be read"))?;
    ConfigLog::new(file).map_err(|message| DataError::new(source, rel, message))
}

/// The MLLOG key of a run's global batch size.
const BATCH: &str = "global_batch_size";

/// What one log said that a config may contradict: the first value and
/// line of `opt_name` and of every key of the data.
#[derive(Debug, Clone, Default)]
pub struct Logged {
    values: BTreeMap<String, (serde_json::Value, u64)>,
}

/// Keeps what [`check`] needs of a log's facts.
pub fn logged(rules: &PolicyRules, facts: &LogFacts) -> Logged {
    let mut values = BTreeMap::new();
    for k in rules.config_log.logged_keys() {
        if let Some(v) = facts.first.get(k) {
            values.insert(k.to_string(), v.clone());
        }
    }
    Logged { values }
}

/// One result log of a benchmark folder.
#[derive(Debug, Clone)]
pub struct RunLog {
    pub path: String,
    pub system: String,
    pub benchmark: String,
    pub logged: Logged,
}

/// A value a linked config gives a logged key.
#[derive(Debug, Clone)]
pub(super) struct Set {
    pub(super) path: String,
    pub(super) line: u64,
    pub(super) display: String,
    pub(super) value: String,
    /// The value may be one per so many samples (its mapping's
    /// `per_samples`).
    pub(super) per_samples: Vec<f64>,
    /// The setting's own key in normal form (`hidden_dropout`): two keys
    /// of one file that map to one MLLOG key are two settings.
    pub(super) key: String,
    /// A shell default (`X=${X:-d}`, `${X:-d}`): an assignment of the
    /// variable in another script wins over it, in either order.
    pub(super) default: bool,
    /// The variables its value reads (`--beta1 ${OPT_LAMB_BETA_1}`): where
    /// one of them is given the value, the config says it there too.
    pub(super) refs: Vec<String>,
}

/// The sets of `given` that `agrees` rejects and that no set it accepts
/// stands for: one of the same file, or of a file that is no option of a
/// Hydra config group (an optimizer's `conf/optim/<name>.yaml`: a run
/// composes only one of them, under the primary config and the command
/// line, whose values win; [`super::hydra_package::stands_for`]). For an
/// option of a group some primary configs compose (`composers`, by
/// group), a primary config stands for it only when it is one of them: a
/// primary that keeps its own optimizer section inline never composes the
/// option (v4.1 Stable Diffusion's `sd2_mlperf_train_moments.yaml`
/// beside `sd2_mlperf_train_moments_encoded.yaml`, which composes
/// `optim@model.optim: megatron_fused_adam`).
pub(super) fn unanswered<'a>(
    rules: &PolicyRules,
    given: &[&'a Set],
    agrees: impl Fn(&Set) -> bool,
    composers: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<&'a Set> {
    let groups = &rules.signals.config_files.hydra_groups;
    let shell = |path: &str| {
        let name = path.rsplit('/').next().unwrap_or(path);
        rules.signals.config_files.format(name) == Some(configs::Format::Shell)
    };
    let (yes, no): (Vec<&Set>, Vec<&Set>) = given.iter().partition(|s| agrees(s));
    no.into_iter()
        .filter(|s| {
            let primaries = super::hydra_package::group_of(&s.path, groups)
                .and_then(|g| composers.get(&g))
                .filter(|p| !p.is_empty());
            !yes.iter().any(|a| {
                super::hydra_package::stands_for(&a.path, &s.path, groups)
                    && (a.path == s.path
                        || shell(&a.path)
                        || primaries.is_none_or(|p| p.contains(&a.path)))
            })
        })
        .collect()
}

/// [`unanswered`] for a value every config a run may use must give (a
/// fixed hyperparameter, POL009): a set that gives it stands for another
/// one in the same file, or from a place whose values win
/// ([`super::hydra_package::precedence`]):
/// - a shell config or command line, over any config (and one shell
///   config for another: `config_common.sh` and the system's config that
///   sources it), but a script's default (`X=${X:-d}`) never for another
///   script's assignment of `X`, which the run keeps in either order;
/// - a YAML, JSON or INI file for one in another folder only when that
///   one sits in a folder of helper programs (`scripts/`: the LoRA
///   packages keep NeMo's pretraining `megatron_llama_config.yaml` there
///   to convert a checkpoint); else never, in its folder or elsewhere: a
///   run may read either (MaxText's `configs/base.yml` gives defaults that
///   `configs/models/<model>.yml` overrides; a DeepSpeed or torchtitan
///   config beside NeMo's is the one its launcher reads);
/// - a primary config over an option of a Hydra config group, when every
///   primary config whose defaults list composes the group (`composers`,
///   by group) gives it; when none does, any primary config.
pub(super) fn unanswered_by_precedence<'a>(
    rules: &PolicyRules,
    given: &[&'a Set],
    agrees: impl Fn(&Set) -> bool,
    composers: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<&'a Set> {
    use super::hydra_package::{group_of, precedence};
    let groups = &rules.signals.config_files.hydra_groups;
    let rank = |path: &str| {
        let name = path.rsplit('/').next().unwrap_or(path);
        let shell = rules.signals.config_files.format(name) == Some(configs::Format::Shell);
        precedence(path, shell, groups)
    };
    let folder = |p: &str| p.rsplit_once('/').map_or("", |(d, _)| d).to_string();
    let (yes, no): (Vec<&Set>, Vec<&Set>) = given.iter().partition(|s| agrees(s));
    let gives = |path: &str| yes.iter().any(|a| a.path == path);
    no.into_iter()
        .filter(|s| {
            let r = rank(&s.path);
            !yes.iter().any(|a| match (rank(&a.path), r) {
                // In one file, the same setting written again (a default
                // and its override); another key of the file mapped to
                // the same MLLOG key (attention_dropout beside
                // hidden_dropout) is a setting of its own.
                _ if a.path == s.path => a.key == s.key,
                // A setting that reads the variable `s` assigns
                // (`--max_steps $MAX_STEPS`) takes every value the
                // configs give it: the reference among them answers for
                // none of the others.
                _ if !s.default && a.refs.iter().any(|r| normalize(r) == s.key) => false,
                // A script's default (`X=${X:-reference}`) for another
                // script's assignment of the same variable, which the run
                // keeps whichever script runs first.
                (3, 3) if a.default && !s.default && a.key == s.key => false,
                // Two config scripts of one folder, one per system or
                // scale (config_MI325X_1x8x1.sh beside
                // config_MI355X_1x8x1.sh): a run sources one of them, so
                // one's reference value does not answer for the other's
                // assignment (a script others source, config_common.sh,
                // does).
                (3, 3) if !s.default && alternative_scripts(&a.path, &s.path) => false,
                (3, _) => true,
                (2, 2) => rules.config_log.helper(&s.path) && folder(&a.path) != folder(&s.path),
                (2, 1) => match group_of(&s.path, groups).and_then(|g| composers.get(&g)) {
                    Some(primaries) if !primaries.is_empty() => primaries.iter().all(|p| gives(p)),
                    _ => true,
                },
                _ => false,
            })
        })
        .collect()
}

/// Whether a folder and a system are named alike (case, `-` and `_` do
/// not count).
/// Whether folder `dir` is named after system `s`: the same name (case,
/// `-` and `_` do not count), or that name then `_` or `-` and more.
pub(super) fn named_after(dir: &str, s: &str) -> bool {
    same_name(dir, s)
        || (dir.len() > s.len()
            && dir.is_char_boundary(s.len())
            && same_name(&dir[..s.len()], s)
            && matches!(dir.as_bytes()[s.len()], b'_' | b'-'))
}

pub(super) fn same_name(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes().zip(b.bytes()).all(|(x, y)| {
            let n = |c: u8| {
                if c == b'-' {
                    b'_'
                } else {
                    c.to_ascii_lowercase()
                }
            };
            n(x) == n(y)
        })
}

/// For each logged word: the config names that mean it, and those that
/// mean something else.
type Named = BTreeMap<String, Meaning>;

/// What [`Named`] says of one logged word.
#[derive(Debug)]
struct Meaning {
    names: BTreeSet<String>,
    others: BTreeSet<String>,
    /// Every name not in `names` means another value.
    only: bool,
    /// A list of numbers means another value ([`is_number_list`]).
    number_lists: bool,
}

/// Whether a config value is a list of two or more numbers, split by
/// commas or blanks (`30,60,80`, `"30 60 80"`).
fn is_number_list(value: &str) -> bool {
    let v = value.trim().trim_matches(['"', '\'']);
    let items: Vec<&str> = v
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|x| !x.is_empty())
        .collect();
    items.len() >= 2
        && items
            .iter()
            .all(|x| x.parse::<f64>().is_ok_and(f64::is_finite))
}

/// The named values by logged word; a name may not mean two things.
fn named_values(list: Vec<NamedValues>) -> Result<Named, String> {
    let mut out = BTreeMap::new();
    for nv in list {
        let all: Vec<&String> = nv.means.values().flatten().chain(&nv.others).collect();
        let mut seen = BTreeSet::new();
        for n in &all {
            if super::signals::normalize(n) != **n {
                return Err(format!(
                    "named_values {}: '{n}' is not in normal form",
                    nv.mllog
                ));
            }
            if !seen.insert(n.as_str()) {
                return Err(format!("named_values {}: '{n}' is listed twice", nv.mllog));
            }
        }
        for (word, names) in &nv.means {
            // A name that means another of the key's values is another.
            let others: BTreeSet<String> = nv
                .means
                .iter()
                .filter(|(w, _)| *w != word)
                .flat_map(|(_, n)| n.iter().cloned())
                .chain(nv.others.iter().cloned())
                .collect();
            out.insert(
                word.clone(),
                Meaning {
                    names: names.iter().cloned().collect(),
                    others,
                    only: nv.only,
                    number_lists: nv.number_lists,
                },
            );
        }
    }
    Ok(out)
}

/// Whether a folder between `benchmarks/<bm>/` and the file at `path`
/// matches one of `patterns` (lower case, `*` any run).
fn in_folder(path: &str, patterns: &[String]) -> bool {
    folders(path).iter().any(|d| {
        let d = d.to_ascii_lowercase();
        patterns.iter().any(|p| super::signals::wildcard(p, &d))
    })
}

/// The folders between `benchmarks/<bm>/` and the file.
pub(super) fn folders(path: &str) -> Vec<&str> {
    let parts: Vec<&str> = path.split('/').collect();
    let Some(b) = parts
        .iter()
        .position(|p| *p == "benchmarks" || *p == "benchmark")
    else {
        return Vec::new();
    };
    parts
        .get(b + 2..parts.len().saturating_sub(1))
        .unwrap_or(&[])
        .to_vec()
}

/// The numbers `entries` give any of `keys` (normal form).
fn numbers_of(entries: &[Entry], keys: &[String]) -> Vec<f64> {
    entries
        .iter()
        .filter(|e| {
            e.kind == (EntryKind::Key { header: false })
                && e.path.last().is_some_and(|k| keys.contains(&normalize(k)))
        })
        .filter_map(|e| e.value.trim().trim_matches(['"', '\'']).parse::<f64>().ok())
        .collect()
}

/// The number a script's `entries` give one of `keys`, the last one, else
/// the last one of the files it sources (`sourced`, which it reads first).
fn last_number(entries: &[Entry], sourced: &[&[Entry]], keys: &[String]) -> Option<f64> {
    numbers_of(entries, keys).last().copied().or_else(|| {
        sourced
            .iter()
            .rev()
            .find_map(|e| numbers_of(e, keys).last().copied())
    })
}

/// The measure `p` as the script `entries` (with the files it sources)
/// give it: the product of its factors, and the batch per device alone
/// (which some scripts give as the whole measure). `None` when a factor
/// is missing or a key of `unless` is set to another number than 1.
fn product(p: &ScaleProduct, entries: &[Entry], sourced: &[&[Entry]]) -> Option<Vec<f64>> {
    if last_number(entries, sourced, &p.unless).is_some_and(|n| n != 1.0) {
        return None;
    }
    let factors: Vec<f64> = p
        .factors
        .iter()
        .map(|keys| last_number(entries, sourced, keys))
        .collect::<Option<_>>()?;
    let optional: f64 = p
        .optional
        .iter()
        .filter_map(|keys| last_number(entries, sourced, keys))
        .product();
    let divisor: f64 = p
        .divisors
        .iter()
        .filter_map(|keys| last_number(entries, sourced, keys))
        .product();
    if divisor <= 0.0 {
        return None;
    }
    let per_device = *factors.last()?;
    Some(vec![
        factors.iter().product::<f64>() * optional / divisor,
        per_device,
    ])
}

/// The settings of the files a config script at `path` of benchmark `bm`
/// sources by a name with no variable in it (`source
/// $(dirname ${BASH_SOURCE[0]})/config_DGXA100_common.sh`): the benchmark's
/// files of that name, those in the script's folder when some are.
fn sourced_of<'a>(
    files: &[ImplFile],
    parsed: &'a super::parsed::ParsedConfigs,
    bm: &str,
    path: &str,
    entries: &[Entry],
) -> Vec<&'a [Entry]> {
    let dir = |p: &str| {
        p.rsplit_once('/')
            .map(|(d, _)| d.to_string())
            .unwrap_or_default()
    };
    let here = dir(path);
    let mut out = Vec::new();
    for e in entries.iter().filter(|e| e.kind == EntryKind::Source) {
        let name = sourced_name(entries, e);
        let name = name.as_str();
        if name.contains('*') || name.is_empty() {
            continue;
        }
        let of_name: Vec<usize> = files
            .iter()
            .enumerate()
            .filter(|(_, f)| {
                f.benchmark == bm
                    && f.file.path != path
                    && f.file.path.rsplit('/').next() == Some(name)
            })
            .map(|(i, _)| i)
            .collect();
        let near: Vec<usize> = of_name
            .iter()
            .copied()
            .filter(|&i| dir(&files[i].file.path) == here)
            .collect();
        let pick = if near.is_empty() { of_name } else { near };
        out.extend(pick.iter().filter_map(|&i| parsed.entries(i)));
    }
    out
}

fn number(v: &serde_json::Value) -> Option<f64> {
    match v {
        serde_json::Value::Number(n) => n.as_f64(),
        serde_json::Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The runs of one (benchmark, system), the configs linked to them and
/// the benchmark's configs in no system's folder, by index into the files.
/// A benchmark, a system's runs, the configs linked to them, the
/// benchmark's other configs, and for a linked YAML of named configs the
/// one of the runs' scale ([`super::named_configs`]).
type Link<'a> = (
    &'a str,
    &'a [&'a RunLog],
    Vec<usize>,
    Vec<usize>,
    BTreeMap<usize, &'a [Entry]>,
);

/// POL008 findings: every linked config setting that no linked config
/// gives the logged value (an option of a Hydra config group counts for
/// its own file only, see [`unanswered`]), at the config's line and at the
/// log's.
pub fn check(
    rules: &PolicyRules,
    files: &[ImplFile],
    parsed: &super::parsed::ParsedConfigs,
    logs: &[RunLog],
) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut by_bm: BTreeMap<&str, BTreeMap<&str, Vec<&RunLog>>> = BTreeMap::new();
    for l in logs {
        by_bm
            .entry(l.benchmark.as_str())
            .or_default()
            .entry(l.system.as_str())
            .or_default()
            .push(l);
    }
    let all_systems: BTreeSet<&str> = logs.iter().map(|l| l.system.as_str()).collect();
    // YAMLs of named configs: the blocks the launchers pick, together
    // (those of a system's scale are picked out below).
    let sections = super::named_configs::picked_sections(rules, files, parsed);
    let picked: BTreeMap<usize, Vec<Entry>> = sections
        .iter()
        .map(|(&i, s)| (i, super::named_configs::together(s)))
        .collect();
    // Which configs each (benchmark, system) links, by index into `files`,
    // and the benchmark's other configs.
    let mut links: Vec<Link> = Vec::new();
    for (bm, systems) in &by_bm {
        // The benchmark's own files, and the configs among them.
        let own: Vec<usize> = files
            .iter()
            .enumerate()
            .filter(|&(i, f)| {
                f.benchmark == *bm
                    && !parsed.vendored(i)
                    && !rules.config_log.unlinked(&f.file.path)
            })
            .map(|(i, _)| i)
            .collect();
        // (An empty file, such as LBNL's 0-byte implementation JSON beside
        // a README in its system's folder, gives nothing and links nothing.)
        // A folder is a system's when it is named after it, alone or with
        // more after it (AMD's `MI350X_EPYC_9575F_pytorch_llama2_70b` is
        // system `MI350X_EPYC_9575F_pytorch`'s); of two systems whose names
        // it starts with, the longer one's.
        let owner = |d: &str| -> Option<&str> {
            all_systems
                .iter()
                .copied()
                .filter(|s| named_after(d, s))
                .max_by_key(|s| s.len())
        };
        // A JSON named after a system (`<system>_<implementation>.json`,
        // Inspur's v0.7 `nf5488_mxnet_implementation_closed.json`) describes
        // the implementation for the submission; it sets nothing a run
        // reads.
        let description = |i: usize| {
            let name = files[i].file.path.rsplit('/').next().unwrap_or_default();
            name.to_ascii_lowercase()
                .strip_suffix(".json")
                .is_some_and(|stem| owner(stem).is_some())
        };
        let mine: Vec<usize> = own
            .iter()
            .copied()
            .filter(|&i| parsed.entries(i).is_some_and(|e| !e.is_empty()) && !description(i))
            .collect();
        if mine.is_empty() {
            continue;
        }
        for (system, runs) in systems {
            let mut linked: Vec<usize> = mine
                .iter()
                .copied()
                .filter(|&i| {
                    folders(&files[i].file.path)
                        .iter()
                        .any(|d| owner(d).is_some_and(|o| same_name(o, system)))
                })
                .collect();
            // The one system of the benchmark with no config in a folder
            // of its own: the configs are its. When it has a folder (a
            // README alone), only when the benchmark has one config, or
            // the scale its runs logged picks out one config script of it ([`ConfigLog::other_scale`]):
            // HazyResearch's v2.0 BERT keeps five beside a README-only
            // system folder, and four are of another accumulation or batch
            // per device. NVIDIA's v0.6 SSD keeps six that say nothing of
            // the logged global batch: none is the run's for sure.
            let has_folder = || {
                own.iter().any(|&i| {
                    folders(&files[i].file.path)
                        .iter()
                        .any(|d| owner(d).is_some_and(|o| same_name(o, system)))
                })
            };
            // Scripts that give a scale, of the runs' scale; a file another
            // one sources is part of that one (HPE's OpenFold
            // config_pm_common.sh, which gives the batch per GPU to each
            // config_pm_<n>x4x1x4_dap.sh).
            let one_script_of_scale = || {
                mine.iter()
                    .filter(|&&i| {
                        let name = files[i].file.path.rsplit('/').next().unwrap_or_default();
                        !mine.iter().any(|&j| {
                            j != i
                                && parsed
                                    .entries(j)
                                    .is_some_and(|e| source_line(e, name).is_some())
                        })
                    })
                    .filter(|&&i| {
                        is_config_script(&files[i].file.path)
                            && parsed.entries(i).is_some_and(|e| {
                                let src = sourced_of(files, parsed, bm, &files[i].file.path, e);
                                rules.config_log.gives_scale(e, runs)
                                    && !rules.config_log.other_scale(e, &src, runs, true)
                            })
                    })
                    .count()
                    == 1
            };
            // The benchmark's one config, or its one config script, is the
            // run's (LBNL's hpc-v1.0 OC20 keeps configs/pm_b2048.yml beside a
            // README-only system folder, Inspur's v0.7 GNMT
            // implementation_closed/config_NF5488.sh).
            let one_script = || {
                mine.iter()
                    .filter(|&&i| is_config_script(&files[i].file.path))
                    .count()
                    == 1
            };
            if linked.is_empty()
                && systems.len() == 1
                && (!has_folder() || mine.len() == 1 || one_script() || one_script_of_scale())
            {
                linked = mine.clone();
            }
            // Several systems and no folder of this one: a config script of
            // its runs' scale and of no other system's (by a measure they
            // log: NVIDIA's HPC CosmoFlow config_DGXA100_64x8x1.sh,
            // DGXNNODES=64, for the runs that log 64 nodes) is its, with
            // the files it sources and the configs it names
            // (`CONFIG_FILE="submission_dgxa100_64x8x1.yaml"`).
            if linked.is_empty() && systems.len() > 1 && !has_folder() {
                linked = scale_picked(rules, files, parsed, bm, &mine, system, systems);
            }
            // Still none: the configs named after this system and no other
            // (Graphcore's v1.1 BERT configs/mk2/pod16-closed.json for
            // system ipu-pod16-POPART-closed, beside pod64-closed.json).
            if linked.is_empty() && systems.len() > 1 && !has_folder() {
                let stem_of = |i: usize| {
                    let name = files[i].file.path.rsplit('/').next().unwrap_or_default();
                    name.rsplit_once('.').map_or(name, |(s, _)| s).to_string()
                };
                linked = mine
                    .iter()
                    .copied()
                    .filter(|&i| {
                        let stem = stem_of(i);
                        config_named_after(&stem, system)
                            && !systems
                                .keys()
                                .any(|o| o != system && config_named_after(&stem, o))
                    })
                    .collect();
            }
            // A YAML of named configs: the one block of this system's
            // scale, and of no other system's, is its (Graphcore's
            // `mk2_resnet50_mlperf_pod16_lars`, 16 replicas x 20 x 10
            // accumulated, for the runs that log a global batch of 3200).
            let mut blocks: BTreeMap<usize, &[Entry]> = BTreeMap::new();
            for &i in &mine {
                let Some(secs) = sections.get(&i) else {
                    continue;
                };
                if !(linked.is_empty() || linked.contains(&i)) {
                    continue;
                }
                let of_scale = |s: &super::named_configs::Section, runs: &[&RunLog]| {
                    rules.config_log.gives_product(&s.entries)
                        && !rules.config_log.other_scale(&s.entries, &[], runs, true)
                };
                let mine_only: Vec<&super::named_configs::Section> = secs
                    .iter()
                    .filter(|s| of_scale(s, runs))
                    .filter(|s| {
                        !systems
                            .iter()
                            .any(|(o, r)| o != system && of_scale(s, r.as_slice()))
                    })
                    .collect();
                if let [one] = mine_only.as_slice() {
                    blocks.insert(i, one.entries.as_slice());
                    if !linked.contains(&i) {
                        linked.push(i);
                    }
                }
            }
            // Configs in no system's folder (`mxnet/config_gigabyte.sh`
            // beside `<SYSTEM>/run_and_time.sh`); the configs of a system
            // with runs in the package are that system's.
            let mut rest: Vec<usize> = mine
                .iter()
                .copied()
                .filter(|&i| {
                    !linked.contains(&i)
                        && !folders(&files[i].file.path)
                            .iter()
                            .any(|d| owner(d).is_some())
                })
                .collect();
            // A system folder with run scripts and no config script
            // (GIGABYTE's `<SYSTEM>/run_and_time.sh` beside
            // `pytorch/config_gigabyte.sh`, which the launcher sources):
            // the one config script of those in no system's folder that is
            // of the runs' scale is the run's, as for a README alone.
            if systems.len() == 1
                && !linked.is_empty()
                && !linked
                    .iter()
                    .any(|&i| is_config_script(&files[i].file.path))
            {
                let of_scale: Vec<usize> = rest
                    .iter()
                    .copied()
                    .filter(|&i| {
                        is_config_script(&files[i].file.path)
                            && parsed.entries(i).is_some_and(|e| {
                                let src = sourced_of(files, parsed, bm, &files[i].file.path, e);
                                rules.config_log.gives_scale(e, runs)
                                    && !rules.config_log.other_scale(e, &src, runs, true)
                            })
                    })
                    .collect();
                if let [one] = of_scale.as_slice() {
                    linked.push(*one);
                    rest.retain(|i| i != one);
                }
            }
            links.push((bm, runs.as_slice(), linked, rest, blocks));
        }
    }
    for (bm, runs, linked, rest, blocks) in &links {
        // A config saved with a checkpoint describes the model the run
        // starts from (its pretraining), not the run: not compared. Of a
        // YAML of named configs, the block of the runs' scale, else the
        // blocks the launchers pick.
        let usable = |ids: &[usize]| -> Vec<(&ImplFile, &[Entry])> {
            ids.iter()
                .filter_map(|&i| {
                    blocks
                        .get(&i)
                        .copied()
                        .or_else(|| picked.get(&i).map(Vec::as_slice))
                        .or_else(|| parsed.entries(i))
                        .map(|e| (&files[i], e))
                })
                .filter(|(_, e)| {
                    !rules.config_log.is_checkpoint(e) && !rules.config_log.declares_open(e)
                })
                .collect()
        };
        // A config script of another scale than the runs' is another
        // run's (its learning rate and warmup are that batch size's).
        // A script that gives another global batch size is another run's
        // (NVIDIA's one script per scale). Accumulation steps and the batch
        // per device only choose among scripts: when none is of the runs'
        // scale by them, the scripts shipped do not describe the runs
        // (Baidu's v2.1 BERT holds NVIDIA's 1x8x56x1 script beside runs of
        // 8 nodes at 48 per device), and that is what is compared.
        let script = |c: &(&ImplFile, &[Entry])| is_config_script(&c.0.file.path);
        let other = |c: &(&ImplFile, &[Entry]), every: bool| {
            script(c) && {
                let src = sourced_of(files, parsed, bm, &c.0.file.path, c.1);
                rules.config_log.other_scale(c.1, &src, runs, every)
            }
        };
        let linked_files: Vec<(&ImplFile, &[Entry])> = usable(linked)
            .into_iter()
            .filter(|c| !other(c, false))
            .collect();
        let some_of_scale = linked_files
            .iter()
            .any(|c| script(c) && rules.config_log.gives_scale(c.1, runs) && !other(c, true));
        let (mut mine, gone): (Vec<Config>, Vec<Config>) = usable(linked)
            .into_iter()
            .partition(|c| !other(c, false) && (!some_of_scale || !other(c, true)));
        // A file that only those other scales' scripts source goes with
        // them (NVIDIA's v5.1 config_common_405b.sh, MIN_LR=8e-7, which the
        // 405B-sized scripts beside the 8B ones source).
        let name_of = |c: &(&ImplFile, &[Entry])| {
            c.0.file
                .path
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_string()
        };
        let theirs: Vec<String> = mine
            .iter()
            .map(name_of)
            .filter(|n| {
                gone.iter()
                    .any(|g| script(g) && source_line(g.1, n).is_some())
                    && !mine
                        .iter()
                        .any(|k| name_of(k) != *n && source_line(k.1, n).is_some())
            })
            .collect();
        mine.retain(|c| !theirs.contains(&name_of(c)));
        // Of several config scripts of the runs' scale in one folder, the
        // one named after the system is the runs' (ASUSTeK's
        // config_ESC_N8_H200.sh for system ESC_N8_E11, beside NVIDIA's
        // config_DGXH200_1x8x2048.sh, which it was made from).
        let system = runs.first().map_or("", |r| r.system.as_str());
        let named: Vec<&str> = mine
            .iter()
            .filter(|c| script(c) && script_named_after(&c.0.file.path, system))
            .map(|c| c.0.file.path.as_str())
            .collect();
        if let [own] = named.as_slice() {
            let own = own.to_string();
            mine.retain(|c| !alternative_scripts(&c.0.file.path, &own));
        }
        // A linked script that sources one of a family of files by a
        // variable it sets (`config_common_gbs_${BATCHSIZE}.sh` after
        // `BATCHSIZE=2048`) reads that one: the others are other scales'.
        let others_of_family: BTreeSet<String> = mine
            .iter()
            .filter(|c| script(c))
            .flat_map(|(_, e)| {
                e.iter()
                    .filter(|x| x.kind == EntryKind::Source)
                    .map(|x| {
                        let n = x.value.rsplit('/').next().unwrap_or(&x.value);
                        (variable_parts_as_star(n), sourced_name(e, x))
                    })
                    .filter(|(star, name)| star != name && !name.contains('*'))
            })
            .flat_map(|(star, name)| {
                mine.iter()
                    .map(|c| c.0.file.path.as_str())
                    .filter(move |p| {
                        let n = p.rsplit('/').next().unwrap_or_default();
                        n != name && super::signals::wildcard(&star, n)
                    })
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect();
        mine.retain(|c| !others_of_family.contains(&c.0.file.path));
        // What a sourced file assigns and every linked script that sources
        // it assigns again afterwards is not the run's.
        let trimmed = overridden_out(&mine);
        let mine: Vec<(&ImplFile, &[Entry])> = mine
            .iter()
            .zip(&trimmed)
            .map(|((f, _), e)| (*f, e.as_slice()))
            .collect();
        // The benchmark's other configs may be the ones the run sourced
        // (`config_<vendor>.sh` beside the system's folder, exporting what
        // its `run_and_time.sh` reads as `${LR:-0.004}`): what they assign
        // is one more value of those variables, never a setting of its own.
        // A run sources one config script: when its own is linked, the
        // benchmark's other scripts are other runs' unless it sources them
        // (Fujitsu's v4.1 SSD system folder holds the system's
        // config_GX2560M7_001x04x064.sh, whose `LR=${LR:-0.000085}` is the
        // run's; the scripts of the sibling pytorch/ folder are DGX's).
        let own_script = mine.iter().any(&script);
        let sourced: BTreeSet<String> = mine
            .iter()
            .flat_map(|(_, e)| {
                e.iter()
                    .filter(|x| x.kind == EntryKind::Source)
                    .map(|x| sourced_name(e, x))
            })
            .collect();
        let is_sourced = |path: &str| {
            let name = path.rsplit('/').next().unwrap_or_default();
            sourced.iter().any(|p| super::signals::wildcard(p, name))
        };
        let rest_files: Vec<(&ImplFile, &[Entry])> = usable(rest)
            .into_iter()
            .filter(|c| !(own_script && script(c) && !is_sourced(&c.0.file.path)))
            .collect();
        // What each of those config scripts (`config_*.sh`, what a run
        // sources) sets once the files it sources are read
        // (`config_gigabyte.sh` with its `config_gigabyte_common.sh`); a
        // file another one sources is part of that one.
        let scripts: Vec<(&ImplFile, &[Entry])> = rest_files
            .iter()
            .copied()
            .filter(|(f, _)| is_config_script(&f.file.path))
            .collect();
        let whole: Vec<Vec<Entry>> = with_sourced(&scripts);
        // A script that reads a file the package lacks (GIGABYTE's
        // `source .../hyperparameters_2048.sh`) may have set any variable
        // there: a shell default is no value of the run.
        let open = linked
            .iter()
            .chain(rest)
            .any(|&i| lacks_sourced(rules, files, bm, parsed.entries(i).unwrap_or_default()));
        let whole: Vec<&[Entry]> = whole.iter().map(Vec::as_slice).collect();
        out.extend(contradictions(
            rules,
            bm,
            &mine,
            (&rest_files, &whole),
            runs,
            open,
        ));
    }
    crate::finding::sort_findings(&mut out);
    out.dedup();
    out
}

/// Whether a script of benchmark `bm` with settings `entries` reads a
/// shell config (`source FILE`, `. FILE`) that no implementation file of
/// the benchmark is: its name, or a variable's part of it (`config_${DGXSYSTEM}.sh`)
/// any run of characters. A file of the system or the container image
/// (`external_sources`) is not the package's to hold.
fn lacks_sourced(rules: &PolicyRules, files: &[ImplFile], bm: &str, entries: &[Entry]) -> bool {
    entries
        .iter()
        .filter(|e| e.kind == EntryKind::Source)
        .any(|e| {
            let path = e.value.as_str();
            if rules.config_log.external_source(path) {
                return false;
            }
            let name = path.rsplit('/').next().unwrap_or(path);
            if rules.signals.config_files.format(&name.replace('$', "x"))
                != Some(configs::Format::Shell)
            {
                return false;
            }
            let pattern = variable_parts_as_star(name);
            !files.iter().any(|f| {
                f.benchmark == bm
                    && f.file
                        .path
                        .rsplit('/')
                        .next()
                        .is_some_and(|n| super::signals::wildcard(&pattern, n))
            })
        })
}

/// The settings of each config of `files` that no other of them sources,
/// with those of the files it sources (by name; one level).
fn with_sourced(files: &[(&ImplFile, &[Entry])]) -> Vec<Vec<Entry>> {
    let name = |f: &ImplFile| {
        f.file
            .path
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_string()
    };
    let sources = |e: &[Entry]| -> Vec<String> {
        e.iter()
            .filter(|x| x.kind == EntryKind::Source)
            .map(|x| sourced_name(e, x))
            .collect()
    };
    let reads = |e: &[Entry], f: &ImplFile| {
        let n = name(f);
        sources(e).iter().any(|p| super::signals::wildcard(p, &n))
    };
    files
        .iter()
        .filter(|(f, _)| {
            !files
                .iter()
                .any(|(g, e)| g.file.path != f.file.path && reads(e, f))
        })
        .map(|(f, e)| {
            let mut all = e.to_vec();
            for (g, ge) in files {
                if g.file.path != f.file.path && reads(e, g) {
                    all.extend(ge.iter().cloned());
                }
            }
            all
        })
        .collect()
}

/// The configs of benchmark `bm` (`mine`, by index into `files`) that
/// belong to `system` of the benchmark's `systems` by scale: the one
/// config script (not sourced by another) that gives a count its runs log
/// ([`ConfigLog::gives_logged_count`]), of their scale and of no other
/// system's (a global batch alone may match another implementation's
/// runs by chance: Google's v5.0 Stable Diffusion TPU runs and the H200
/// NeMo scripts beside them), with the files of `mine` it sources and those whose
/// name one of its values ends with. None when no script or several are.
fn scale_picked(
    rules: &PolicyRules,
    files: &[ImplFile],
    parsed: &super::parsed::ParsedConfigs,
    bm: &str,
    mine: &[usize],
    system: &str,
    systems: &BTreeMap<&str, Vec<&RunLog>>,
) -> Vec<usize> {
    let name = |i: usize| files[i].file.path.rsplit('/').next().unwrap_or_default();
    let sourced = |i: usize| {
        mine.iter().any(|&j| {
            j != i
                && parsed
                    .entries(j)
                    .is_some_and(|e| source_line(e, name(i)).is_some())
        })
    };
    // A global batch is shared by chance more often than a node count:
    // a script it ties to the system must also be of its accelerator
    // (v5.0 Google's TPU runs share their 1024 with DGX H100 scripts).
    let of_system = rules.config_log.accelerators_in(system);
    let same_accelerator = |n: &str| {
        rules
            .config_log
            .accelerators_in(n)
            .iter()
            .any(|a| of_system.contains(a))
    };
    let picked: Vec<usize> = mine
        .iter()
        .copied()
        .filter(|&i| is_config_script(&files[i].file.path) && !sourced(i))
        .filter(|&i| {
            let Some(e) = parsed.entries(i) else {
                return false;
            };
            let src = sourced_of(files, parsed, bm, &files[i].file.path, e);
            (rules.config_log.gives_logged_count(e, &systems[system])
                || (rules
                    .config_log
                    .gives_logged_product(e, &src, &systems[system])
                    && same_accelerator(name(i))))
                && systems.iter().all(|(s, runs)| {
                    let of_scale = rules.config_log.gives_scale(e, runs)
                        && !rules.config_log.other_scale(e, &src, runs, true);
                    let other = rules.config_log.other_scale(e, &src, runs, true);
                    if *s == system {
                        of_scale
                    } else {
                        other
                    }
                })
        })
        .collect();
    let [one] = picked.as_slice() else {
        return Vec::new();
    };
    let e = parsed.entries(*one).unwrap_or_default();
    let mut out = vec![*one];
    for &j in mine {
        if j == *one {
            continue;
        }
        let n = name(j);
        let named = e.iter().any(|x| {
            x.kind == (EntryKind::Key { header: false })
                && x.value.trim().trim_matches(['"', '\'']).rsplit('/').next() == Some(n)
        });
        if source_line(e, n).is_some() || named {
            out.push(j);
        }
    }
    out
}

/// The line where the script `entries` sources a file named `name`
/// (`source $(dirname ${BASH_SOURCE[0]})/config_pm_common.sh`; a variable
/// part of the name matches any run of characters).
fn source_line(entries: &[Entry], name: &str) -> Option<u64> {
    entries
        .iter()
        .find(|x| {
            x.kind == EntryKind::Source && super::signals::wildcard(&sourced_name(entries, x), name)
        })
        .map(|x| x.line)
}

/// The settings of the linked configs `mine`, less the assignments of a
/// file that the scripts among them source (by name) when every one of
/// those scripts assigns the variable again after sourcing it: HPE's
/// OpenFold `config_pm_224x4x1x4_dap.sh` sources `config_pm_common.sh`
/// (`BASE_LR=0.001`) first, so an `export BASE_LR=0.002` after it is what
/// the run takes, and the common file's value answers for nothing.
fn overridden_out(mine: &[(&ImplFile, &[Entry])]) -> Vec<Vec<Entry>> {
    let assignment = |x: &Entry| {
        x.kind == (EntryKind::Key { header: false }) && x.path.len() == 1 && !configs::is_default(x)
    };
    mine.iter()
        .enumerate()
        .map(|(i, (f, e))| {
            let name = f.file.path.rsplit('/').next().unwrap_or_default();
            // The scripts that source this file, and the line each does.
            let sourcing: Vec<(&[Entry], u64)> = mine
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .filter_map(|(_, (_, g))| source_line(g, name).map(|at| (*g, at)))
                .collect();
            if sourcing.is_empty() {
                return e.to_vec();
            }
            e.iter()
                .filter(|x| {
                    !(assignment(x)
                        && sourcing.iter().all(|(g, at)| {
                            g.iter()
                                .any(|y| assignment(y) && y.path == x.path && y.line > *at)
                        }))
                })
                .cloned()
                .collect()
        })
        .collect()
}

/// `name` with each variable (`$X`, `${X}`, `$(...)`) as `*`.
fn variable_parts_as_star(name: &str) -> String {
    name_with_values(name, |_| None)
}

/// The name of the file a `source` line `x` of the script `entries` reads,
/// each variable the script assigns a plain value before that line filled
/// in, any other as `*`: `config_common_gbs_${BATCHSIZE}.sh` after
/// `export BATCHSIZE=2048` is `config_common_gbs_2048.sh` (NVIDIA's v5.1
/// Flux scripts: the other `config_common_gbs_*.sh` are other scales').
fn sourced_name(entries: &[Entry], x: &Entry) -> String {
    let name = x.value.rsplit('/').next().unwrap_or(&x.value);
    name_with_values(name, |var| {
        entries
            .iter()
            .rev()
            .filter(|y| y.line < x.line)
            .find(|y| {
                y.kind == (EntryKind::Key { header: false })
                    && y.path.len() == 1
                    && y.path[0] == var
            })
            .map(|y| y.value.as_str())
            .filter(|v| {
                !v.is_empty()
                    && v.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
            })
            .map(str::to_string)
    })
}

/// `name` with each variable given the value `value` has for its name
/// (`$X`, `${X}`), any other (none, `${X:-d}`, `$(...)`) as `*`.
fn name_with_values(name: &str, value: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::new();
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        let mut inner = String::new();
        match chars.peek() {
            Some(&open @ ('{' | '(')) => {
                let close = if open == '{' { '}' } else { ')' };
                let mut depth = 0usize;
                for d in chars.by_ref() {
                    if d == open {
                        depth += 1;
                    } else if d == close {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            break;
                        }
                    }
                    inner.push(d);
                }
                // `{NAME`: a plain reference; anything else is no name.
                inner = inner
                    .strip_prefix('{')
                    .filter(|n| n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
                    .unwrap_or_default()
                    .to_string();
            }
            _ => {
                while let Some(d) = chars
                    .peek()
                    .copied()
                    .filter(|d| d.is_ascii_alphanumeric() || *d == '_')
                {
                    inner.push(d);
                    chars.next();
                }
            }
        }
        match (!inner.is_empty()).then(|| value(&inner)).flatten() {
            Some(v) => out.push_str(&v),
            None if !out.ends_with('*') => out.push('*'),
            None => {}
        }
    }
    out
}

/// Whether the file at `path` is a run's config script (`config_*.sh`,
/// NVIDIA's and AMD's convention: the one `run_and_time.sh` sources).
/// Whether two paths are config scripts of one folder that a run sources
/// one of (neither is a common part others source).
fn alternative_scripts(a: &str, b: &str) -> bool {
    let common = |p: &str| {
        let name = p.rsplit('/').next().unwrap_or(p).to_ascii_lowercase();
        name.contains("common") || name.contains("base") || name.contains("default")
    };
    fn folder(p: &str) -> &str {
        p.rsplit_once('/').map_or("", |(d, _)| d)
    }
    a != b
        && folder(a) == folder(b)
        && is_config_script(a)
        && is_config_script(b)
        && !common(a)
        && !common(b)
}

/// Whether the config script at `path` is named after `system`: its name
/// after `config_` opens with the system's first two parts or more
/// (`config_ESC_N8_H200.sh` for `ESC_N8_E11`; [`name_parts`]).
fn script_named_after(path: &str, system: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let Some(stem) = name
        .strip_prefix("config_")
        .and_then(|n| n.strip_suffix(".sh"))
    else {
        return false;
    };
    let (a, b) = (name_parts(stem), name_parts(system));
    let shared = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    shared >= 2 || (shared >= 1 && shared == b.len())
}

/// Whether a config's file name without its extension (`pod16-closed`)
/// names `system` (`ipu-pod16-POPART-closed`): two parts or more, each a
/// part of the system's name, in its order ([`name_parts`]).
fn config_named_after(stem: &str, system: &str) -> bool {
    let (a, b) = (name_parts(stem), name_parts(system));
    let mut rest = b.iter();
    a.len() >= 2 && a.iter().all(|p| rest.any(|q| q == p))
}

/// A name's parts, split at `_` and `-`, in lower case.
fn name_parts(s: &str) -> Vec<String> {
    s.split(['_', '-'])
        .filter(|p| !p.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

fn is_config_script(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    name.starts_with("config") && name.ends_with(".sh")
}

/// How a setting's variables become values: [`interpolate::expand`]
/// (defaults and every assigned value) or
/// [`interpolate::expand_assigned`] (assignments override defaults).
pub(super) type Expand = fn(&str, &Env, &BTreeMap<String, String>) -> Vec<String>;

/// The settings of the linked configs by MLLOG keys (the mapping's keys
/// joined with `|`; `opt_name` for an optimizer, its value the mllog name).
/// Values are the numbers a setting can take once `expand` resolves its
/// variables across `parsed`; an unresolved one is left out.
pub(super) fn settings(
    rules: &PolicyRules,
    parsed: &[(&ImplFile, &[Entry])],
    expand: Expand,
) -> BTreeMap<String, Vec<Set>> {
    settings_with(rules, parsed, &[], &[], expand)
}

/// [`settings`], with the variables `others` assign as further values: a
/// default (`${LR:-0.004}`) of a variable they assign is no setting of its
/// own, and a reference to it takes their values too.
fn settings_with(
    rules: &PolicyRules,
    parsed: &[(&ImplFile, &[Entry])],
    others: &[&[Entry]],
    whole: &[&[Entry]],
    expand: Expand,
) -> BTreeMap<String, Vec<Set>> {
    // What a later assignment in the same script overrides is no value of
    // the run (`export WEIGHT_DECAY=0.0001` then `export WEIGHT_DECAY=0.05`),
    // nor is what a shell branch that never runs sets (`if false; then`,
    // `if [ "${USE_CLIP:-0}" = 1 ]` where nothing sets USE_CLIP).
    let mut every = Env::default();
    for (_, e) in parsed {
        every.add_where(e, |_| true);
    }
    for e in others {
        every.add_where(e, |_| true);
    }
    let live: Vec<std::borrow::Cow<[Entry]>> = parsed
        .iter()
        .map(|(f, e)| {
            let name = f.file.path.rsplit('/').next().unwrap_or_default();
            // (An .ini-like file's keys outside a section too: Habana's
            // `defaults.cfg` is a list of `export NAME=value` lines.)
            let shell = matches!(
                rules.signals.config_files.format(name),
                Some(configs::Format::Shell | configs::Format::Ini)
            );
            let mut gone = if shell {
                configs::shadowed(e)
            } else {
                Vec::new()
            };
            let off = super::shell_guard::guarded_off(e, &every);
            if off.iter().any(|&o| o) {
                gone.resize(off.len(), false);
                for (g, o) in gone.iter_mut().zip(off) {
                    *g |= o;
                }
            }
            if gone.iter().any(|&g| g) {
                std::borrow::Cow::Owned(
                    e.iter()
                        .zip(&gone)
                        .filter(|(_, &g)| !g)
                        .map(|(x, _)| x.clone())
                        .collect(),
                )
            } else {
                std::borrow::Cow::Borrowed(*e)
            }
        })
        .collect();
    let parsed: Vec<(&ImplFile, &[Entry])> = parsed
        .iter()
        .zip(&live)
        .map(|((f, _), e)| (*f, e.as_ref()))
        .collect();
    let parsed = parsed.as_slice();
    // The one config script of the run (`config_<system>.sh`), when the
    // configs hold one only: what it assigns is the run's, and a default
    // of the same variable elsewhere (`${oc.env:LR,0.0004}` in the YAML it
    // feeds) is no value of the run. With several (one per scale), the run
    // sourced one of them, and a default may be the value of another's run.
    // A script another one sources (`config_common.sh`) is part of it.
    let scripts: Vec<(&ImplFile, &[Entry])> = parsed
        .iter()
        .filter(|(f, _)| is_config_script(&f.file.path))
        .copied()
        .collect();
    let scripts = with_sourced(&scripts);
    // Of several, the one that gives a scale when the others give none
    // (NVIDIA's v5.1 Flux config_GB300_128x04x16xtp4.sh beside
    // config_mounts.sh): the others set up the machine, not the run.
    let of_scale: Vec<&Vec<Entry>> = scripts
        .iter()
        .filter(|e| rules.config_log.names_scale(e))
        .collect();
    let mut sole = Env::default();
    if let [only] = scripts.as_slice() {
        sole.add_where(only, |x| !configs::is_default(x));
    } else if let [only] = of_scale.as_slice() {
        sole.add_where(only, |x| !configs::is_default(x));
    }
    // A variable every one of the other configs assigns is overridden
    // whichever of them the run sourced: the run script's default for it
    // (`: "${OPT_LAMB_BETA_1:=0.9}"` beside `config_gigabyte.sh`'s
    // `export OPT_LAMB_BETA_1=0.8`) is no value of the run. Where only some
    // assign it, the default may still be.
    let each_other: Vec<Env> = whole
        .iter()
        .map(|e| {
            let mut one = Env::default();
            one.add_where(e, |x| !configs::is_default(x));
            one
        })
        .collect();
    let every_other = |k: &str| !each_other.is_empty() && each_other.iter().all(|o| o.assigns(k));
    let mut env = Env::default();
    for (_, e) in parsed {
        env.add_where(e, |x| {
            !configs::is_default(x)
                || x.path
                    .last()
                    .is_some_and(|k| !sole.assigns(k) && !every_other(k))
        });
    }
    let mut elsewhere = Env::default();
    for e in others {
        env.add_where(e, |x| !configs::is_default(x));
        elsewhere.add_where(e, |x| !configs::is_default(x));
    }
    let mut out: BTreeMap<String, Vec<Set>> = BTreeMap::new();
    for &(f, entries) in parsed {
        let local = configs::local_values(entries);
        let outer = outer_parents(rules, &f.file.path);
        for (i, e) in entries.iter().enumerate() {
            let items = if may_list(e) {
                rules.config_log.mllog_items(&e.path, &outer, &f.benchmark)
            } else {
                Vec::new()
            };
            if !items.is_empty() {
                let listed = list_items(entries, i);
                for (keys, n) in items {
                    let Some(item) = listed.get(n) else {
                        continue;
                    };
                    for v in expand(item, &env, &local) {
                        if v.trim().parse::<f64>().is_ok() {
                            out.entry(keys.join("|")).or_default().push(Set {
                                path: f.file.path.clone(),
                                line: e.line,
                                display: list_display(e, &listed),
                                value: v.trim().to_string(),
                                per_samples: Vec::new(),
                                key: own_key(e),
                                default: shell_default(e),
                                refs: interpolate::env_references(item.as_bytes()),
                            });
                        }
                    }
                }
            }
            if !matches!(e.kind, EntryKind::Key { header: false } | EntryKind::Flag) {
                continue;
            }
            if configs::is_default(e)
                && e.path
                    .last()
                    .is_some_and(|k| elsewhere.assigns(k) || sole.assigns(k))
            {
                continue;
            }
            let key_n: String = e
                .path
                .iter()
                .map(|p| normalize(p))
                .filter(|p| !p.is_empty())
                .collect::<Vec<_>>()
                .join("_");
            let hypers = rules.config_log.mllog_keys(&e.path, &outer, &f.benchmark);
            if hypers.is_empty()
                && !rules.frameworks.is_optimizer_key(&key_n)
                && rules.frameworks.optimizer_switch_off(&key_n).is_none()
            {
                continue;
            }
            let per_samples = rules.config_log.per_samples(&e.path, &outer, &f.benchmark);
            let refs = interpolate::env_references(e.value.as_bytes());
            for v in expand(&e.value, &env, &local) {
                let set = |value: String| Set {
                    path: f.file.path.clone(),
                    line: e.line,
                    display: e.display.chars().take(120).collect(),
                    value,
                    per_samples: per_samples.clone(),
                    key: own_key(e),
                    default: shell_default(e),
                    refs: refs.clone(),
                };
                if let Some(m) = rules.frameworks.optimizer(&key_n, &normalize(&v), &v) {
                    out.entry("opt_name".into())
                        .or_default()
                        .push(set(m.to_string()));
                } else if let Some(m) = rules
                    .frameworks
                    .optimizer_switch_off(&key_n)
                    .filter(|_| !v.trim().is_empty() && rules.signals.is_off(&v))
                {
                    // A switch set off puts another optimizer in place
                    // (`--enable_lars=False`: momentum SGD).
                    out.entry("opt_name".into())
                        .or_default()
                        .push(set(m.to_string()));
                }
                let number = v.trim().parse::<f64>().is_ok();
                // A word only for a key whose words configs name (a
                // schedule's), compared through `named_values`.
                let word = v.trim().trim_matches(['"', '\'']);
                for keys in &hypers {
                    let named = !number
                        && !word.is_empty()
                        && !word.contains(['$', '{'])
                        && keys.iter().any(|k| rules.config_log.names(k));
                    if number || named {
                        let tag = keys.join("|");
                        let value = if number { v.trim() } else { word };
                        out.entry(tag).or_default().push(set(value.to_string()));
                    }
                }
            }
        }
    }
    out
}

/// Whether `e` is a shell default of its variable: `${X:-d}` read alone,
/// or an assignment that keeps what the variable holds (`X=${X:-d}`).
/// The parents a structured config's file stands for, outside its own
/// keys: its name (a PEFT `adapter_config.json` is the LoRA adapter's
/// section, a top-level `r` its rank) and its folder's (a Hydra config
/// group: `conf/optim/adamw.yaml` is loaded under `optim`). None for a
/// shell script, whose variables are the run's whatever the file is named.
fn outer_parents(rules: &PolicyRules, path: &str) -> Vec<String> {
    let mut parts = path.rsplit('/');
    let name = parts.next().unwrap_or_default();
    if !matches!(
        rules.signals.config_files.format(name),
        Some(configs::Format::Yaml | configs::Format::Json | configs::Format::Ini)
    ) {
        return Vec::new();
    }
    let stem = name.split_once('.').map_or(name, |(s, _)| s);
    std::iter::once(stem)
        .chain(parts.next())
        .map(str::to_string)
        .collect()
}

fn shell_default(e: &Entry) -> bool {
    configs::is_default(e)
        || e.path.last().is_some_and(|k| {
            let v = e.value.trim().trim_matches(['"', '\'']);
            v.strip_prefix("${")
                .and_then(|r| r.strip_prefix(k.as_str()))
                .is_some_and(|r| r.starts_with([':', '-', '=']))
        })
}

/// A setting's own key (the last part of its path) in normal form.
fn own_key(e: &Entry) -> String {
    e.path.last().map(|k| normalize(k)).unwrap_or_default()
}

/// How a list setting reads in a message: as written, or, for a block
/// list, its key and items (`betas: [0.9, 0.98]`).
pub(super) fn list_display(e: &Entry, items: &[String]) -> String {
    let shown = match (e.kind, e.path.last()) {
        (EntryKind::Key { header: true }, Some(k)) => format!("{k}: [{}]", items.join(", ")),
        _ => e.display.clone(),
    };
    shown.chars().take(120).collect()
}

/// Whether `e` may hold a list [`list_items`] reads: a key whose value is
/// a block, or a value written in brackets.
pub(super) fn may_list(e: &Entry) -> bool {
    match e.kind {
        EntryKind::Key { header: true } => true,
        EntryKind::Key { header: false } | EntryKind::Flag => {
            let v = e.value.trim_start();
            v.starts_with('[') || v.starts_with('(')
        }
        _ => false,
    }
}

/// The items of the list setting `entries[i]` holds: written in its value
/// (`[0.9, 0.999]`, `(0.9, 0.98)`), or, for a key whose value is a block,
/// the list items under it (a YAML block list, a JSON array).
pub(super) fn list_items(entries: &[Entry], i: usize) -> Vec<String> {
    let e = &entries[i];
    match e.kind {
        EntryKind::Key { header: true } => entries[i + 1..]
            .iter()
            .take_while(|x| x.kind == EntryKind::Value && x.path == e.path)
            .map(|x| x.value.clone())
            .collect(),
        EntryKind::Key { header: false } | EntryKind::Flag => {
            let v = e.value.trim();
            let inner = v
                .strip_prefix('[')
                .and_then(|v| v.strip_suffix(']'))
                .or_else(|| v.strip_prefix('(').and_then(|v| v.strip_suffix(')')));
            inner
                .map(|v| {
                    v.split(',')
                        .map(|x| x.trim().trim_matches(|c| c == '"' || c == '\'').to_string())
                        .collect()
                })
                .unwrap_or_default()
        }
        EntryKind::Value | EntryKind::Guard | EntryKind::GuardEnd | EntryKind::Source => Vec::new(),
    }
}

/// A config file with its settings.
type Config<'a> = (&'a ImplFile, &'a [Entry]);

fn contradictions(
    rules: &PolicyRules,
    bm: &str,
    parsed: &[(&ImplFile, &[Entry])],
    (rest, whole): (&[Config], &[&[Entry]]),
    runs: &[&RunLog],
    open: bool,
) -> Vec<Finding> {
    let mut out = Vec::new();
    // Findings at the lines that give a variable its value, kept apart
    // until every key is done.
    let mut from: Vec<Finding> = Vec::new();
    let others: Vec<&[Entry]> = rest.iter().map(|(_, e)| *e).collect();
    // With a sourced file missing, the defaults are left out: neither a
    // setting nor a value of a variable another setting reads.
    let kept: Vec<Vec<Entry>>;
    let parsed: Vec<(&ImplFile, &[Entry])> = if open {
        kept = parsed
            .iter()
            .map(|(_, e)| e.iter().filter(|x| !shell_default(x)).cloned().collect())
            .collect();
        parsed
            .iter()
            .zip(&kept)
            .map(|((f, _), e)| (*f, e.as_slice()))
            .collect()
    } else {
        parsed.to_vec()
    };
    let parsed = parsed.as_slice();
    let sets = settings_with(rules, parsed, &others, whole, interpolate::expand_assigned);
    // Where a variable a setting reads is given its value: the run's own
    // configs, then the benchmark's other ones.
    let sources: Vec<(&ImplFile, &[Entry])> = parsed.iter().chain(rest).copied().collect();
    // Every value the configs give (for the shell branches that never run).
    let mut every = Env::default();
    for (_, e) in &sources {
        every.add_where(e, |_| true);
    }
    if sets.is_empty() {
        return out;
    }
    let help = rules.help(code::POL008);
    let rule = rules.config_log_rule();
    // The primary configs that compose each Hydra config group.
    let mut composers: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (f, e) in parsed {
        for g in super::hydra_package::composed_groups(e) {
            composers.entry(g).or_default().insert(f.file.path.clone());
        }
    }
    // The runs of the folder that contradict each key, in path order: one
    // finding at the first run's line and one per config place, not one per
    // run (a folder of ten runs made with one config says it ten times).
    let mut sorted: Vec<&RunLog> = runs.to_vec();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    for (tag, given) in &sets {
        let given: Vec<&Set> = given.iter().collect();
        let mut against: Vec<(&RunLog, &str, &serde_json::Value, u64, Vec<&Set>)> = Vec::new();
        for run in &sorted {
            let found = if tag == "opt_name" {
                run.logged.values.get("opt_name").map(|v| ("opt_name", v))
            } else {
                tag.split('|')
                    .find_map(|k| run.logged.values.get(k).map(|v| (k, v)))
            };
            let Some((mllog, (value, line))) = found else {
                continue;
            };
            let bad = if mllog == "opt_name" {
                let name = value.as_str().unwrap_or_default();
                let mapped = super::optimizer::logged_name(rules, name);
                let agrees = |s: &Set| {
                    [name, mapped].iter().any(|n| {
                        s.value.eq_ignore_ascii_case(n)
                            || rules.frameworks.same_optimizer(&s.value, n)
                    })
                };
                unanswered(rules, &given, agrees, &composers)
            } else {
                let batch = run.logged.values.get(BATCH).and_then(|(v, _)| number(v));
                let agrees = |s: &Set| {
                    rules.config_log.agrees(&s.value, value)
                        || rules
                            .config_log
                            .agrees_scaled(&s.per_samples, &s.value, value, batch)
                };
                unanswered(rules, &given, agrees, &composers)
            };
            if !bad.is_empty() {
                against.push((run, mllog, value, *line, bad));
            }
        }
        let Some((run, mllog, value, line, given)) = against.first().cloned() else {
            continue;
        };
        let others = match against.len() - 1 {
            0 => String::new(),
            1 => "; 1 more run of the folder logs another value too".to_string(),
            n => format!("; {n} more runs of the folder log another value too"),
        };
        // Where the variables those settings read are given the logged-
        // against value (`export LR=0.0002` in the config script the run
        // sources): each once, and not a place that is a setting itself.
        let mut seen: BTreeSet<(&str, u64)> =
            given.iter().map(|s| (s.path.as_str(), s.line)).collect();
        let mut sources_of: Vec<(&Set, &str, &str, &Entry)> = Vec::new();
        for s in &given {
            for var in &s.refs {
                for (path, x) in origins(&sources, parsed.len(), var, &s.value, &every) {
                    if seen.insert((path, x.line)) {
                        sources_of.push((s, var.as_str(), path, x));
                    }
                }
            }
        }
        let mut places: Vec<String> = Vec::new();
        for s in &given {
            // One place once, whatever values its variables take.
            let place = format!("{}:{} ({})", s.path, s.line, s.display);
            if !places.contains(&place) {
                places.push(place);
            }
        }
        for (_, var, path, x) in &sources_of {
            places.push(format!(
                "{var} at {path}:{} ({})",
                x.line,
                short(&x.display)
            ));
        }
        out.push(
            Finding::of(
                code::POL008,
                &run.path,
                format!(
                    "{mllog} logged {value}, but the config of this run ({bm}) sets {}{others}",
                    places.join(", ")
                ),
            )
            .at_line(Some(line))
            .with_help(help.clone())
            .with_rule(rule.clone()),
        );
        let also = if against.len() > 1 {
            format!(", and {} more runs", against.len() - 1)
        } else {
            String::new()
        };
        for (s, var, path, x) in &sources_of {
            from.push(
                Finding::of(
                    code::POL008,
                    path,
                    format!(
                        "{}: sets {var}, which {} reads ({}:{}); the run logs {mllog} {value} ({}:{line}{also})",
                        short(&x.display),
                        s.display,
                        s.path,
                        s.line,
                        run.path,
                    ),
                )
                .at_line(Some(x.line))
                .with_help(help.clone())
                .with_rule(rule.clone()),
            );
        }
        let mut reported: BTreeSet<(&str, u64)> = BTreeSet::new();
        for s in &given {
            if !reported.insert((s.path.as_str(), s.line)) {
                continue;
            }
            out.push(
                Finding::of(
                    code::POL008,
                    &s.path,
                    format!(
                        "{}: the run logs {mllog} {value} ({}:{line}{})",
                        s.display,
                        run.path,
                        if against.len() > 1 {
                            format!(", and {} more runs", against.len() - 1)
                        } else {
                            String::new()
                        }
                    ),
                )
                .at_line(Some(s.line))
                .with_help(help.clone())
                .with_rule(rule.clone()),
            );
        }
    }
    // A line that is a setting of one key and gives a variable another
    // key's setting reads (`LR=4e-4`, read by `--learning_rate=${LR}`) is
    // said once, as the setting; a line that gives several, once.
    let mut said: BTreeSet<(String, Option<u64>)> =
        out.iter().map(|f| (f.path.clone(), f.line)).collect();
    for f in from {
        if said.insert((f.path.clone(), f.line)) {
            out.push(f);
        }
    }
    out
}

/// A config line as a finding quotes it: its first 120 characters.
fn short(display: &str) -> String {
    display.chars().take(120).collect()
}

/// The assignments among `files` that give variable `var` the value
/// `value`, following a variable assigned from another (`LR=${BASE_LR}`)
/// a few steps: where a contradicting value of a setting comes from. A
/// shell default (`${LR:-0.4}`) only when no plain assignment gives it,
/// and only in the run's own configs (the first `own` of `files`): the
/// same default in another copy of the run script is not where the run's
/// value came from. Where the run's own configs assign the variable, the
/// other configs (another system's scripts) are not looked at.
fn origins<'a>(
    files: &[(&'a ImplFile, &'a [Entry])],
    own: usize,
    var: &str,
    value: &str,
    env: &Env,
) -> Vec<(&'a str, &'a Entry)> {
    // What a shell branch that never runs assigns is nobody's value.
    let off: Vec<Vec<bool>> = files
        .iter()
        .map(|(_, es)| super::shell_guard::guarded_off(es, env))
        .collect();
    let mut plain: Vec<(&str, &Entry)> = Vec::new();
    let mut defaults: Vec<(&str, &Entry)> = Vec::new();
    let mut names: Vec<String> = vec![var.to_string()];
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for _ in 0..4 {
        let mut next: Vec<String> = Vec::new();
        for name in names.drain(..) {
            if !seen.insert(name.clone()) {
                continue;
            }
            // The run's own configs assign it: what another system's
            // script gives it is not where the run's value came from.
            let assigns = |e: &Entry| {
                e.kind == (EntryKind::Key { header: false })
                    && e.path.len() == 1
                    && e.path[0] == name
                    && !shell_default(e)
            };
            let reach = if files[..own.min(files.len())]
                .iter()
                .any(|(_, es)| es.iter().any(assigns))
            {
                own
            } else {
                files.len()
            };
            for (k, &(f, entries)) in files.iter().enumerate().take(reach) {
                for (j, e) in entries.iter().enumerate() {
                    if off[k].get(j).copied().unwrap_or(false)
                        || e.kind != (EntryKind::Key { header: false })
                        || e.path.len() != 1
                        || e.path[0] != name
                    {
                        continue;
                    }
                    let v = e.value.trim().trim_matches(['"', '\'']);
                    if v.contains('$') {
                        next.extend(interpolate::env_references(v.as_bytes()));
                    } else if v == value.trim() {
                        if !configs::is_default(e) {
                            plain.push((f.file.path.as_str(), e));
                        } else if k < own {
                            defaults.push((f.file.path.as_str(), e));
                        }
                    }
                }
            }
        }
        names = next;
    }
    if plain.is_empty() {
        plain = defaults;
    }
    plain.sort_by(|a, b| (a.0, a.1.line).cmp(&(b.0, b.1.line)));
    plain.dedup_by(|a, b| (a.0, a.1.line) == (b.0, b.1.line));
    plain
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where a variable gets a value: a plain assignment, through a
    /// variable assigned from another (`LR=${BASE_LR}`), a default of the
    /// run's own script only when nothing assigns it, and another
    /// system's script only when the run's own configs do not assign it.
    #[test]
    fn where_a_variable_gets_its_value() {
        use crate::discover::tree::FileRef;
        let file = |p: &str| ImplFile {
            benchmark: "bm".into(),
            implementation: None,
            file: FileRef {
                path: p.to_string(),
                fs: std::path::PathBuf::from(p),
            },
        };
        let sh = |t: &str| configs::parse(t, configs::Format::Shell);
        let (own, cfg, other) = (file("own/run.sh"), file("cfg.sh"), file("sys2/config.sh"));
        let lines = |found: Vec<(&str, &Entry)>| -> Vec<(String, u64)> {
            found
                .into_iter()
                .map(|(p, e)| (p.to_string(), e.line))
                .collect()
        };
        // Through BASE_LR, in the other script; not the default.
        let run = sh(": \"${LR:=0.1}\"\npython t.py --lr \"${LR}\"\n");
        let conf = sh("export BASE_LR=0.2\nexport LR=${BASE_LR}\n");
        let files = [(&own, run.as_slice()), (&cfg, conf.as_slice())];
        assert_eq!(
            lines(origins(&files, 1, "LR", "0.2", &Env::default())),
            [("cfg.sh".into(), 1)]
        );
        assert_eq!(
            lines(origins(&files, 1, "LR", "0.1", &Env::default())),
            [("own/run.sh".into(), 1)]
        );
        assert!(origins(&files, 1, "LR", "0.3", &Env::default()).is_empty());
        // The run's own script assigns LR: another system's is not read.
        let run = sh("export LR=0.1\npython t.py --lr ${LR}\n");
        let theirs = sh("export LR=0.2\n");
        let files = [(&own, run.as_slice()), (&other, theirs.as_slice())];
        assert!(origins(&files, 1, "LR", "0.2", &Env::default()).is_empty());
        assert_eq!(
            lines(origins(&files, 1, "LR", "0.1", &Env::default())),
            [("own/run.sh".into(), 1)]
        );
    }

    /// A switch set off names the optimizer it leaves in place
    /// (`--enable_lars=False`: momentum SGD); on, or alone, it names none
    /// here (the scan reports it, POL007).
    #[test]
    fn a_switch_set_off_names_an_optimizer() {
        use crate::discover::tree::FileRef;
        let rules = crate::check::policy::test_support::rules();
        let f = ImplFile {
            benchmark: "resnet".into(),
            implementation: None,
            file: FileRef {
                path: "resnet/run_and_time.sh".into(),
                fs: std::path::PathBuf::from("run_and_time.sh"),
            },
        };
        let opt = |line: &str| -> Vec<String> {
            let e = configs::parse(line, configs::Format::Shell);
            settings(&rules, &[(&f, e.as_slice())], interpolate::expand)
                .get("opt_name")
                .map(|v| v.iter().map(|s| s.value.clone()).collect())
                .unwrap_or_default()
        };
        assert_eq!(
            opt("python resnet_main.py --enable_lars=False --momentum=0.9\n"),
            ["sgd"]
        );
        assert_eq!(opt("python resnet_main.py --enable_lars=0\n"), ["sgd"]);
        assert!(opt("python resnet_main.py --enable_lars=True\n").is_empty());
        assert!(opt("python resnet_main.py --enable_lars --momentum=0.9\n").is_empty());
    }

    /// A sourced file's name with its variables as wildcards.
    #[test]
    fn variables_become_wildcards() {
        for (name, want) in [
            ("config_${DGXSYSTEM}.sh", "config_*.sh"),
            ("config_$SYS.sh", "config_*.sh"),
            ("x_$(hostname)_${A}${B}.sh", "x_*_*.sh"),
            ("plain.sh", "plain.sh"),
        ] {
            assert_eq!(variable_parts_as_star(name), want, "{name}");
        }
    }

    /// A value is answered by a setting that agrees in the same file or in
    /// any file that is no option of a Hydra config group (a run composes
    /// one of `conf/optim/a.yaml` and `conf/optim/b.yaml`, under the
    /// primary config, whose own values win).
    #[test]
    fn group_options_do_not_answer_for_each_other() {
        let rules = crate::check::policy::test_support::rules();
        let set = |path: &str, value: &str| Set {
            path: path.into(),
            line: 1,
            display: String::new(),
            value: value.into(),
            per_samples: Vec::new(),
            key: "weight_decay".into(),
            default: false,
            refs: Vec::new(),
        };
        let a = set("i/conf/optim/a.yaml", "0.0001");
        let b = set("i/conf/optim/b.yaml", "0.01");
        let base = set("i/conf/base.yaml", "0.0001");
        let same = set("i/conf/optim/b.yaml", "0.0001");
        let ok = |s: &Set| s.value == "0.0001";
        let paths = |v: Vec<&Set>| v.iter().map(|s| s.path.clone()).collect::<Vec<_>>();
        let none = BTreeMap::new();
        let open = |g: &[&Set]| paths(unanswered(&rules, g, ok, &none));
        assert_eq!(open(&[&a, &b]), ["i/conf/optim/b.yaml"]);
        assert!(open(&[&a, &b, &base]).is_empty());
        assert!(open(&[&a, &b, &same]).is_empty());
        assert_eq!(open(&[&b]), ["i/conf/optim/b.yaml"]);
        // The primary config sets another value than the group's option:
        // its own wins in the run.
        let primary = set("i/conf/train.yaml", "0.01");
        assert_eq!(open(&[&a, &primary]), ["i/conf/train.yaml"]);
        // Another primary composes the optim group: base.yaml, which keeps
        // its optimizer inline, does not answer for the option b.yaml.
        let composed = BTreeMap::from([(
            "optim".to_string(),
            BTreeSet::from(["i/conf/encoded.yaml".to_string()]),
        )]);
        assert_eq!(
            paths(unanswered(&rules, &[&b, &base], ok, &composed)),
            ["i/conf/optim/b.yaml"]
        );
        let encoded = set("i/conf/encoded.yaml", "0.0001");
        assert!(unanswered(&rules, &[&b, &encoded], ok, &composed).is_empty());
    }

    /// Frameworks' own names of the fixed hyperparameters map to the MLLOG
    /// keys runs log them under (MaxText, Megatron-LM, Detectron), in one
    /// search over the data's keys; a near name maps to nothing.
    #[test]
    fn framework_names_map_to_mllog_keys() {
        let rules = crate::check::policy::test_support::rules();
        let c = &rules.config_log;
        let keys = |path: &[&str]| -> Vec<String> {
            let path: Vec<String> = path.iter().map(|p| p.to_string()).collect();
            c.mllog_keys(&path, &[], "llama2_70b_lora")
                .into_iter()
                .flat_map(|k| k.iter().cloned())
                .collect()
        };
        let warmup = vec!["opt_learning_rate_warmup_steps".to_string()];
        assert_eq!(keys(&["lr-warmup-iters"]), warmup);
        assert_eq!(keys(&["SOLVER", "WARMUP_ITERS"]), warmup);
        assert_eq!(keys(&["optim", "sched", "warmup_steps"]), warmup);
        assert_eq!(
            keys(&["gradient_clipping_threshold"]),
            ["opt_gradient_clip_norm"]
        );
        assert!(keys(&["adam_weight_decay"]).contains(&"opt_adamw_weight_decay".to_string()));
        assert!(keys(&["lr_warmup_fraction"]).is_empty());
        assert!(keys(&["warmup_steps_fraction"]).is_empty());
        // Another parent: torchtitan's [training] max_norm is the clipping,
        // an embedding's max_norm is not.
        assert_eq!(keys(&["training", "max_norm"]), ["opt_gradient_clip_norm"]);
        assert!(keys(&["embedding", "max_norm"]).is_empty());
        // Open Catalyst's optim.lr_initial, for OC20 only.
        let path = ["optim".to_string(), "lr_initial".to_string()];
        let oc20: Vec<String> = c
            .mllog_keys(&path, &[], "oc20")
            .into_iter()
            .flat_map(|k| k.iter().cloned())
            .collect();
        assert_eq!(oc20, ["opt_base_learning_rate"]);
        assert!(keys(&["optim", "lr_initial"]).is_empty());
        assert!(c.mllog_keys(&path[1..], &[], "oc20").is_empty());
    }

    /// A learning rate given per 2048 samples (Google's TF DLRM
    /// `--learning_rate 0.887`) agrees with the 23.949 a run of 55296
    /// samples a step logs, through the data's `per_samples` of the
    /// `learning_rate` key; `lr` keys and betas do not scale.
    #[test]
    fn values_per_samples_scale_with_the_batch() {
        let rules = crate::check::policy::test_support::rules();
        let c = &rules.config_log;
        let per = c.per_samples(&["learning_rate".to_string()], &[], "dlrm");
        assert_eq!(per, [2048.0]);
        let v = serde_json::json!(23.949);
        assert!(c.agrees_scaled(&per, "0.887", &v, Some(55296.0)));
        assert!(!c.agrees_scaled(&per, "0.887", &v, Some(65536.0)));
        assert!(!c.agrees_scaled(&per, "0.887", &v, None));
        // A log that rounds to few decimals: 3.2e-3 per 32 samples at 912
        // is 0.0912, logged 0.09 (Inspur's v0.7 SSD); not 0.1, not 0.08.
        assert!(c.agrees_scaled(&[32.0], "3.2e-3", &serde_json::json!(0.09), Some(912.0)));
        assert!(!c.agrees_scaled(&[32.0], "3.2e-3", &serde_json::json!(0.1), Some(912.0)));
        assert!(!c.agrees_scaled(&[32.0], "3.2e-3", &serde_json::json!(0.08), Some(912.0)));
        assert!(!c.agrees_scaled(&[32.0], "3.2e-3", &serde_json::json!(0.092), Some(912.0)));
        // NVIDIA's LR, NeMo's optim.lr and betas are the value itself.
        assert!(c.per_samples(&["LR".to_string()], &[], "dlrm").is_empty());
        assert!(c
            .per_samples(&["optim".to_string(), "lr".to_string()], &[], "dlrm")
            .is_empty());
        assert!(c
            .per_samples(&["opt_lamb_beta_1".to_string()], &[], "dlrm")
            .is_empty());
        // NVIDIA's MXNet SSD takes --lr per 32 samples (per_samples_in).
        assert_eq!(c.per_samples(&["lr".to_string()], &[], "ssd"), [32.0]);
    }

    /// A data file with nothing in it, for the tests to fill in.
    fn bare() -> ConfigLogFile {
        ConfigLogFile {
            relative_tolerance: 1e-6,
            checkpoint_keys: Vec::new(),
            unlinked_folders: Vec::new(),
            helper_folders: Vec::new(),
            open_folders: Vec::new(),
            division_keys: Vec::new(),
            accelerators: Vec::new(),
            scale_keys: Vec::new(),
            scale_products: Vec::new(),
            external_sources: Vec::new(),
            named_values: Vec::new(),
            named_config_flags: Vec::new(),
            hyperparameters: Vec::new(),
        }
    }

    #[test]
    fn accelerators_in_names() {
        let c = ConfigLog::new(ConfigLogFile {
            accelerators: ["b200", "gb200", "h200", "mi300x"]
                .map(String::from)
                .to_vec(),
            ..bare()
        })
        .expect("valid");
        let of = |n: &str| c.accelerators_in(n).into_iter().collect::<Vec<_>>();
        assert_eq!(of("SR780aV3-8xB200_SXM_180GB"), ["b200"]);
        assert_eq!(of("config_DGXB200_001x08x032.sh"), ["b200"]);
        assert_eq!(of("GB200_NVL72"), ["gb200"]);
        assert_eq!(of("4xSR680Ax8H200-SXM-141GB"), ["h200"]);
        assert_eq!(of("xe9680_mi300x"), ["mi300x"]);
        assert!(of("cloud-tpu-trillium-256").is_empty());
        assert!(of("b2000").is_empty());
    }

    #[test]
    fn scripts_named_after_a_system() {
        let p = "benchmarks/gnn/implementations/dgl/";
        assert!(script_named_after(
            &format!("{p}config_ESC_N8_H200.sh"),
            "ESC_N8_E11"
        ));
        assert!(script_named_after(
            &format!("{p}config_xe9680-1x8.sh"),
            "XE9680"
        ));
        assert!(!script_named_after(
            &format!("{p}config_DGXH200_1x8x2048.sh"),
            "ESC_N8_E11"
        ));
        assert!(!script_named_after(
            &format!("{p}config_ESC_N9.sh"),
            "ESC_N8_E11"
        ));
        assert!(!script_named_after(
            &format!("{p}run_ESC_N8.sh"),
            "ESC_N8_E11"
        ));
    }

    #[test]
    fn configs_named_after_a_system() {
        assert!(config_named_after(
            "pod16-closed",
            "ipu-pod16-POPART-closed"
        ));
        assert!(!config_named_after(
            "pod64-closed-12288",
            "ipu-pod64-POPART-closed"
        ));
        assert!(!config_named_after(
            "closed-pod16",
            "ipu-pod16-POPART-closed"
        ));
        assert!(!config_named_after("pod16", "ipu-pod16-POPART-closed"));
        assert!(!config_named_after("pod16-open", "ipu-pod16-POPART-closed"));
    }

    /// `per_samples` must be positive numbers: a zero would divide by it.
    #[test]
    fn per_samples_must_be_positive() {
        for bad in [0.0, -2048.0, f64::NAN, f64::INFINITY] {
            let e = ConfigLog::new(ConfigLogFile {
                hyperparameters: vec![HyperFile {
                    mllog: vec!["opt_base_learning_rate".into()],
                    key: "learning_rate".into(),
                    parent: None,
                    item: None,
                    per_samples: vec![2048.0, bad],
                    per_samples_in: Vec::new(),
                    benchmarks: Vec::new(),
                    top: false,
                    why: String::new(),
                }],
                ..bare()
            })
            .expect_err("a bad per_samples is an error");
            assert!(
                e.contains("learning_rate") && e.contains("per_samples"),
                "{e}"
            );
        }
    }

    /// A global batch given as nodes x GPUs per node x batch per GPU
    /// (x accumulation), a factor from a sourced file when the script
    /// lacks it, the batch per GPU alone as a second candidate, and no
    /// product when a key of `unless` splits the GPUs otherwise.
    #[test]
    fn scale_as_a_product_of_keys() {
        let keys = |k: &[&str]| k.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let p = ScaleProduct {
            mllog: "global_batch_size".into(),
            factors: vec![
                keys(&["dgxnnodes"]),
                keys(&["dgxngpu"]),
                keys(&["batchsize", "local_batch_size"]),
            ],
            optional: vec![keys(&["gradient_steps"])],
            unless: keys(&["tp"]),
            divisors: Vec::new(),
            why: String::new(),
        };
        let sh = |t: &str| configs::parse(t, configs::Format::Shell);
        // Model-parallel accelerators divide: 18 x 4 x 1 / (1 x 1 x 2).
        let llm = ScaleProduct {
            factors: vec![keys(&["dgxnnodes"]), keys(&["dgxngpu"]), keys(&["minibs"])],
            optional: Vec::new(),
            unless: Vec::new(),
            divisors: vec![
                keys(&["tensor_model_parallel"]),
                keys(&["context_parallel"]),
            ],
            ..p.clone()
        };
        let cp = sh("export DGXNNODES=18\nexport DGXNGPU=4\nexport MINIBS=1\nexport TENSOR_MODEL_PARALLEL=1\nexport CONTEXT_PARALLEL=2\n");
        assert_eq!(product(&llm, &cp, &[]), Some(vec![36.0, 1.0]));
        let dp = sh("export DGXNNODES=18\nexport DGXNGPU=4\nexport MINIBS=1\n");
        assert_eq!(product(&llm, &dp, &[]), Some(vec![72.0, 1.0]));
        let zero = sh(
            "export DGXNNODES=18\nexport DGXNGPU=4\nexport MINIBS=1\nexport CONTEXT_PARALLEL=0\n",
        );
        assert_eq!(product(&llm, &zero, &[]), None);
        let common = sh("export DGXNGPU=8\nexport DGXNNODES=99\n");
        let script = sh("export DGXNNODES=16\nexport LOCAL_BATCH_SIZE=2\n");
        assert_eq!(product(&p, &script, &[&common]), Some(vec![256.0, 2.0]));
        let accum = sh("export DGXNNODES=2\nexport BATCHSIZE=4\nexport GRADIENT_STEPS=3\n");
        assert_eq!(product(&p, &accum, &[&common]), Some(vec![192.0, 4.0]));
        // A factor missing everywhere, or tensor parallelism: none.
        assert_eq!(product(&p, &script, &[]), None);
        let tp = sh("export DGXNNODES=16\nexport LOCAL_BATCH_SIZE=2\nexport TP=2\n");
        assert_eq!(product(&p, &tp, &[&common]), None);
        let tp1 = sh("export DGXNNODES=16\nexport LOCAL_BATCH_SIZE=2\nexport TP=1\n");
        assert_eq!(product(&p, &tp1, &[&common]), Some(vec![256.0, 2.0]));
        // A product of a measure scale_keys lacks is refused.
        let e = ConfigLog::new(ConfigLogFile {
            scale_products: vec![p],
            ..bare()
        })
        .expect_err("no such measure");
        assert!(e.contains("global_batch_size"), "{e}");
    }

    #[test]
    fn names_and_folders() {
        assert!(same_name("G894-AD1_pytorch", "g894_ad1_PyTorch"));
        assert!(!same_name("G894-AD1", "G894-AD2"));
        assert_eq!(
            folders("P/benchmarks/bert/implementations/sys_a/x/config.sh"),
            ["implementations", "sys_a", "x"]
        );
        let c = ConfigLog::new(ConfigLogFile {
            unlinked_folders: vec!["test_data".into()],
            helper_folders: vec!["scripts".into()],
            named_values: vec![NamedValues {
                mllog: "opt_learning_rate_decay_schedule".into(),
                means: BTreeMap::from([(
                    "cosine with linear warmup".to_string(),
                    vec!["cosine".to_string(), "cosine_annealing".to_string()],
                )]),
                others: vec!["linear".into(), "warmup_hold_policy".into()],
                only: false,
                number_lists: true,
                why: String::new(),
            }],
            ..bare()
        })
        .expect("compiles");
        // Step boundaries are another schedule; one number is no list.
        let cosine = serde_json::json!("cosine with linear warmup");
        assert!(!c.agrees("30,60,80", &cosine));
        assert!(!c.agrees("\"30 60 80\"", &cosine));
        assert!(c.agrees("CosineAnnealing", &cosine));
        assert!(c.known_number_list("30,60,80"));
        assert!(!c.known_number_list("30"));
        assert!(!c.known_number_list("30,sixty"));
        assert!(c.unlinked("P/benchmarks/t/implementations/s/t/test_data/c/hparams.json"));
        assert!(!c.unlinked("P/benchmarks/t/implementations/s/config.sh"));
        assert!(c.helper("P/benchmarks/t/implementations/s/scripts/m.yaml"));
        assert!(!c.helper("P/benchmarks/t/implementations/s/conf/m.yaml"));
        assert!(named_after(
            "MI350X_EPYC_pytorch_llama2_70b",
            "mi350x_epyc_pytorch"
        ));
        assert!(!named_after("MI350X_EPYC_pytorchx", "MI350X_EPYC_pytorch"));
        assert!(c.agrees("0.00096", &serde_json::json!(0.00096)));
        assert!(c.agrees("1e-4", &serde_json::json!(0.0001)));
        assert!(!c.agrees("0.001", &serde_json::json!(0.002)));
        assert!(c.agrees("adam", &serde_json::json!("lamb")));
        // Named values: a name known to mean another value disagrees.
        let cosine = serde_json::json!("cosine with linear warmup");
        assert!(c.agrees("CosineAnnealing", &cosine));
        assert!(c.agrees("'cosine'", &cosine));
        assert!(!c.agrees("WarmupHoldPolicy", &cosine));
        assert!(!c.agrees("linear", &cosine));
        assert!(
            c.agrees("my_schedule", &cosine),
            "unknown names are not compared"
        );
    }
}
