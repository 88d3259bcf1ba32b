//! Framework knowledge as data (`rules/policy/frameworks/*.yaml`): the
//! options of DeepSpeed, PyTorch DDP, Horovod, BytePS, Bagua, ... that change
//! the update semantics, each with its code, severity, reason and doc link,
//! their allowed neighbours, and the framework optimizer names with their
//! mllog names. Matching is by key path and value, in normal form
//! ([`super::signals::normalize`]); this module only compiles and runs it.

use super::forward::Matcher;
use super::prefilter::Need;
use crate::finding::{code, Severity};
use regex::Regex;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrameworkFile {
    pub framework: String,
    pub docs: String,
    #[serde(default)]
    pub settings: Vec<SettingFile>,
    #[serde(default)]
    pub allowed: Vec<AllowedFile>,
    /// Framework optimizer name (any spelling; normalised) → mllog name.
    #[serde(default)]
    pub optimizers: BTreeMap<String, String>,
    /// Groups of mllog names configs use for the same optimizer (AdamW
    /// configured as "adam" with decoupled weight decay).
    #[serde(default)]
    pub same_optimizers: Vec<Vec<String>>,
    /// Switches that swap the optimizer when on (Fleet's `strategy.lars:
    /// true`): the words that end the key path (regex over the normal
    /// form) → mllog name.
    #[serde(default)]
    pub optimizer_switches: BTreeMap<String, String>,
    /// Switches that swap the optimizer when set off (apex and DeepSpeed
    /// `adam_w_mode: false` make AdamW plain Adam with L2 weight decay).
    #[serde(default)]
    pub optimizer_switches_off: BTreeMap<String, String>,
    /// Names that mean another optimizer under some keys than `optimizers`
    /// says: NeMo's `optim.name: adam` is torch.optim.Adam (L2 weight
    /// decay), where Megatron's `--optimizer adam` is AdamW.
    #[serde(default)]
    pub optimizers_at: Vec<OptimizersAtFile>,
}

/// Optimizer names read otherwise under the keys a pattern names.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptimizersAtFile {
    /// Words that end the key path (regex over the normal form).
    pub key: String,
    /// Framework optimizer name (any spelling; normalised) → mllog name.
    #[serde(default)]
    pub optimizers: BTreeMap<String, String>,
    /// Framework optimizer name exactly as written (case and all, quotes
    /// aside) → mllog name: for trainers that look the name up in a
    /// case-sensitive table where others under the same key path do not
    /// (torchtitan's `Adam` is torch.optim.Adam; fairseq's `adam` AdamW).
    #[serde(default)]
    pub written: BTreeMap<String, String>,
    pub why: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettingFile {
    pub id: String,
    pub code: String,
    pub severity: String,
    /// Words that end the key path (regex over the normal form).
    #[serde(default)]
    pub key: Option<String>,
    /// Words in the value (regex over the normal form).
    #[serde(default)]
    pub value: Option<String>,
    /// The setting is on only when its value is a number at least this.
    #[serde(default)]
    pub min: Option<f64>,
    /// The setting is on only when its value as written (not in normal
    /// form) matches this regex: `NCCL_ALGO=Ring` pins one algorithm,
    /// `Ring,Tree` or `^LL128` leaves the choice to NCCL.
    #[serde(default)]
    pub written: Option<String>,
    /// Words always in a file's text when the setting can match there
    /// (regex over the normal form), for a key pattern spanning nested keys
    /// that need not be next to each other in the text (TF_CONFIG's
    /// `cluster` ... `ps`). Defaults to the key and value patterns.
    #[serde(default)]
    pub trigger: Option<String>,
    pub why: String,
    pub doc: String,
    /// Repeatability notes (POL050): `repeatable` when the setting makes
    /// runs repeat bit for bit, `not_repeatable` when it makes them differ.
    #[serde(default)]
    pub effect: Option<String>,
    /// A setting of the same file that leaves this one unread (fairseq
    /// reads `slowmo_base_algorithm` only with `ddp_backend: slowmo`): a
    /// file that sets it gets nothing for this one.
    #[serde(default)]
    pub inert_beside: Option<BesideFile>,
    /// A setting of the same file without which this one is not read
    /// (torchtitan reads `fault_tolerance.sync_steps` only when
    /// `semi_sync_method` is set): a file that does not set it gets nothing
    /// for this one.
    #[serde(default)]
    pub read_beside: Option<BesideFile>,
}

/// A key and value pattern (normal form) of [`SettingFile::inert_beside`]
/// and [`SettingFile::read_beside`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BesideFile {
    pub key: String,
    pub value: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllowedFile {
    #[serde(default)]
    pub key: Option<String>,
    #[serde(default)]
    pub value: Option<String>,
    #[allow(dead_code)]
    pub why: String,
}

/// One compiled setting.
#[derive(Debug)]
pub struct Setting {
    /// File stem of its framework file (`deepspeed`).
    pub framework: String,
    /// The framework's display name.
    pub framework_name: String,
    pub id: String,
    pub code: String,
    pub severity: Severity,
    pub min: Option<f64>,
    /// The value as written must match this ([`SettingFile::written`]).
    pub written: Option<regex::Regex>,
    pub why: String,
    pub doc: String,
    /// `repeatable` or `not_repeatable` for a repeatability note.
    pub effect: Option<String>,
    /// Key and value of a setting beside it that leaves it unread
    /// ([`SettingFile::inert_beside`]).
    pub inert_beside: Option<(Matcher, Matcher)>,
    /// Key and value of a setting beside it without which it is not read
    /// ([`SettingFile::read_beside`]).
    pub read_beside: Option<(Matcher, Matcher)>,
    /// Its patterns, as written (for `rules explain`).
    pub key: Option<String>,
    pub value: Option<String>,
    has_key: bool,
    has_value: bool,
}

#[derive(Debug)]
struct Neighbour {
    has_key: bool,
    has_value: bool,
}

/// Every framework file, compiled into two regex sets per kind (key, value)
/// so one pass over a name finds every candidate.
#[derive(Debug)]
pub struct Frameworks {
    pub settings: Vec<Setting>,
    /// Key patterns of settings; index `i` of the set is setting `key_idx[i]`.
    keys: PatternSet,
    key_idx: Vec<usize>,
    values: PatternSet,
    value_idx: Vec<usize>,
    /// The same for the allowed neighbours.
    neighbours: Vec<Neighbour>,
    n_keys: PatternSet,
    n_key_idx: Vec<usize>,
    n_values: PatternSet,
    n_value_idx: Vec<usize>,
    /// Framework optimizer name (normal form without `_`, [`squash`]) →
    /// mllog name.
    pub optimizers: BTreeMap<String, String>,
    same_optimizers: Vec<Vec<String>>,
    /// What a file's normalised text must contain for each setting to
    /// match in it (see [`super::prefilter`]).
    pub text_patterns: Vec<Need>,
    /// Word patterns one setting's key path and value (normal form) must
    /// contain for any framework setting to match it: each setting's key,
    /// else its value (a setting with both needs its key to match).
    pub entry_patterns: Vec<String>,
    /// The same for what is reported only outside vendored trees.
    pub own_entry_patterns: Vec<String>,
    /// Key paths that name an optimizer (normal form, suffix).
    optimizer_key: Regex,
    /// Keys that swap the optimizer when on, with its mllog name.
    optimizer_switches: Vec<(Matcher, String)>,
    optimizer_switches_off: Vec<(Matcher, String)>,
    /// Names read otherwise under some keys ([`OptimizersAtFile`]): names
    /// in [`squash`]ed normal form, and names as written.
    optimizers_at: Vec<OptimizersAt>,
}

/// Compiled [`OptimizersAtFile`].
#[derive(Debug)]
struct OptimizersAt {
    key: Matcher,
    /// Squashed normal form → mllog name.
    names: BTreeMap<String, String>,
    /// As written → mllog name.
    written: BTreeMap<String, String>,
}

fn key_re(p: &str) -> String {
    format!("(?:^|_)(?:{p})$")
}

fn value_re(p: &str) -> String {
    format!("(?:^|_)(?:{p})(?:_|$)")
}

/// Patterns tried together, telling which match (as `regex::RegexSet`),
/// forwards only ([`super::forward::Matcher`]): key paths and values are a
/// few dozen bytes, where neither a literal prefilter nor a reverse
/// automaton saves anything, and building them was most of what the four
/// sets cost on every `check`.
#[derive(Debug)]
struct PatternSet {
    re: super::forward::Matcher,
}

impl PatternSet {
    fn is_match(&self, text: &str) -> bool {
        self.re.is_match(text.as_bytes())
    }

    /// The indices of the patterns that match `text`, in order.
    fn matches(&self, text: &str) -> Vec<usize> {
        self.re.which(text.as_bytes())
    }
}

fn set(pats: &[String]) -> Result<PatternSet, String> {
    super::forward::Matcher::new(pats, true).map(|re| PatternSet { re })
}

/// What [`Frameworks::matches`] found for one setting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SettingHit {
    pub setting: usize,
    /// Whether the setting's value pattern matched (else its key alone did).
    pub by_value: bool,
}

impl Frameworks {
    /// Compiles the files (name, parsed file), in name order. Codes are
    /// checked by the caller.
    /// `optimizer_key`: the end of a key path that names the optimizer
    /// (`signals.yaml`).
    pub fn new(
        files: Vec<(String, FrameworkFile)>,
        optimizer_key: &str,
    ) -> Result<Frameworks, String> {
        let mut settings = Vec::new();
        let (mut kp, mut ki, mut vp, mut vi) = (vec![], vec![], vec![], vec![]);
        let mut neighbours = Vec::new();
        let (mut nkp, mut nki, mut nvp, mut nvi) = (vec![], vec![], vec![], vec![]);
        let mut optimizers = BTreeMap::new();
        let mut text_patterns = Vec::new();
        let mut entry_patterns = Vec::new();
        let mut own_entry_patterns = Vec::new();
        let mut same_optimizers = Vec::new();
        let mut named_optimizers: Vec<(String, String, String)> = Vec::new();
        // Every pattern with the setting it belongs to: compiled one by one
        // only when a combined regex fails, to name the culprit (compiling
        // the hundred of them on every run cost 65M instructions).
        let mut named: Vec<(String, String)> = Vec::new();
        let mut triggers: Vec<String> = Vec::new();
        let mut switches: Vec<(Matcher, String)> = Vec::new();
        let mut switches_off: Vec<(Matcher, String)> = Vec::new();
        let mut optimizers_at = Vec::new();
        for (stem, f) in files {
            for at in &f.optimizers_at {
                let re = Matcher::new(&[key_re(&at.key)], false)
                    .map_err(|e| format!("{stem}: optimizers_at key '{}': {e}", at.key))?;
                if at.optimizers.is_empty() && at.written.is_empty() {
                    return Err(format!(
                        "{stem}: optimizers_at key '{}' names no optimizer",
                        at.key
                    ));
                }
                let names = at
                    .optimizers
                    .iter()
                    .map(|(name, mllog)| (squash(&super::signals::normalize(name)), mllog.clone()))
                    .collect();
                optimizers_at.push(OptimizersAt {
                    key: re,
                    names,
                    written: at.written.clone(),
                });
            }
            for (on, list) in [
                (true, &f.optimizer_switches),
                (false, &f.optimizer_switches_off),
            ] {
                for (key, mllog) in list {
                    let re = Matcher::new(&[key_re(key)], false)
                        .map_err(|e| format!("{stem}: optimizer switch '{key}': {e}"))?;
                    if on { &mut switches } else { &mut switches_off }.push((re, mllog.clone()));
                    // Optimizers are reported outside vendored trees only.
                    own_entry_patterns.push(key.clone());
                }
            }
            for s in f.settings {
                let where_ = format!("{stem}: setting {}", s.id);
                let severity = Severity::parse(&s.severity)
                    .ok_or_else(|| format!("{where_}: severity '{}'", s.severity))?;
                if s.key.is_none() && s.value.is_none() {
                    return Err(format!("{where_}: needs a key or a value pattern"));
                }
                match (s.code == code::POL050, s.effect.as_deref()) {
                    (true, Some("repeatable" | "not_repeatable")) | (false, None) => {}
                    (true, _) => {
                        return Err(format!(
                            "{where_}: a {} setting needs `effect: repeatable` or `effect: not_repeatable`", code::POL050.id
                        ))
                    }
                    (false, Some(_)) => {
                        return Err(format!(
                            "{where_}: `effect` is for {} settings only", code::POL050.id
                        ))
                    }
                }
                let i = settings.len();
                // What a vendored file's text must contain (its settings
                // are notes; a vendored tree is read only through this):
                // the trigger and the key, else the key (a value alone may
                // be as common as `true`), with the value when it is given,
                // else the value. A value is a run of the text, or of
                // another config's when it refers to a variable (such a
                // file is scanned once one is set).
                let text = match (&s.trigger, &s.key, &s.value) {
                    (Some(t), k, _) => {
                        named.push((format!("{where_}: trigger"), value_re(t)));
                        triggers.push(value_re(t));
                        Need(std::iter::once(t).chain(k).cloned().collect())
                    }
                    (None, Some(k), v) => Need(std::iter::once(k).chain(v).cloned().collect()),
                    (None, None, Some(v)) => Need::one(v.clone()),
                    (None, None, None) => Need(Vec::new()),
                };
                // Repeatability notes are only reported outside vendored trees.
                let entry = s
                    .key
                    .clone()
                    .or_else(|| s.value.clone())
                    .unwrap_or_default();
                if s.code == code::POL050 {
                    own_entry_patterns.push(entry);
                } else {
                    text_patterns.push(text);
                    entry_patterns.push(entry);
                }
                if let Some(k) = &s.key {
                    named.push((format!("{where_}: key"), key_re(k)));
                    kp.push(key_re(k));
                    ki.push(i);
                }
                if let Some(v) = &s.value {
                    named.push((format!("{where_}: value"), value_re(v)));
                    vp.push(value_re(v));
                    vi.push(i);
                }
                let written = match &s.written {
                    Some(w) => {
                        Some(regex::Regex::new(w).map_err(|e| format!("{where_}: written: {e}"))?)
                    }
                    None => None,
                };
                let beside = |b: &Option<BesideFile>, field: &str| match b {
                    Some(b) => Ok(Some((
                        Matcher::new(&[key_re(&b.key)], false)
                            .map_err(|e| format!("{where_}: {field}: key: {e}"))?,
                        Matcher::new(&[value_re(&b.value)], false)
                            .map_err(|e| format!("{where_}: {field}: value: {e}"))?,
                    ))),
                    None => Ok::<_, String>(None),
                };
                let inert_beside = beside(&s.inert_beside, "inert_beside")?;
                let read_beside = beside(&s.read_beside, "read_beside")?;
                settings.push(Setting {
                    framework: stem.clone(),
                    inert_beside,
                    read_beside,
                    framework_name: f.framework.clone(),
                    id: s.id,
                    code: s.code,
                    severity,
                    min: s.min,
                    written,
                    why: s.why,
                    doc: s.doc,
                    effect: s.effect,
                    has_key: s.key.is_some(),
                    has_value: s.value.is_some(),
                    key: s.key,
                    value: s.value,
                });
            }
            for a in f.allowed {
                let where_ = format!("{stem}: allowed");
                if a.key.is_none() && a.value.is_none() {
                    return Err(format!("{where_}: needs a key or a value pattern"));
                }
                let i = neighbours.len();
                if let Some(k) = &a.key {
                    named.push((format!("{where_}: key"), key_re(k)));
                    nkp.push(key_re(k));
                    nki.push(i);
                }
                if let Some(v) = &a.value {
                    named.push((format!("{where_}: value"), value_re(v)));
                    nvp.push(value_re(v));
                    nvi.push(i);
                }
                neighbours.push(Neighbour {
                    has_key: a.key.is_some(),
                    has_value: a.value.is_some(),
                });
            }
            same_optimizers.extend(f.same_optimizers);
            for (name, mllog) in f.optimizers {
                named_optimizers.push((stem.clone(), name, mllog));
            }
        }
        // Spellings that differ only in case or separators are one name: they
        // must agree, up to the optimizers declared the same (`adam` is
        // adamw in NeMo's configs); the later file's wins, as files are read
        // in name order.
        for (stem, name, mllog) in named_optimizers {
            let key = squash(&super::signals::normalize(&name));
            if let Some(other) = optimizers.get(&key) {
                let same = *other == mllog
                    || same_optimizers
                        .iter()
                        .any(|g: &Vec<String>| g.contains(other) && g.contains(&mllog));
                if !same {
                    return Err(format!(
                        "{stem}: optimizer {name} is {mllog}, but a name that differs from it \
                         only in case or separators is {other}"
                    ));
                }
            }
            optimizers.insert(key, mllog);
        }
        let culprit = |e: String| -> String {
            named
                .iter()
                .find_map(|(w, p)| Regex::new(p).err().map(|e| format!("{w}: {e}")))
                .unwrap_or(e)
        };
        // The triggers run in the prefilter's regex; checked here, where a
        // broken one can be named.
        // Parsing is the whole check: compiling them here as well cost 2M
        // instructions on every run.
        if !triggers.is_empty() {
            regex_syntax::Parser::new()
                .parse(&triggers.join("|"))
                .map_err(|e| culprit(e.to_string()))?;
        }
        let built = Self::build(
            settings,
            kp,
            ki,
            vp,
            vi,
            neighbours,
            nkp,
            nki,
            nvp,
            nvi,
            optimizers,
            same_optimizers,
            text_patterns,
        );
        let optimizer_key = Regex::new(&key_re(optimizer_key))
            .map_err(|e| format!("optimizer_key (signals.yaml): {e}"))?;
        let mut built = built.map_err(culprit)?;
        built.entry_patterns = entry_patterns;
        built.own_entry_patterns = own_entry_patterns;
        built.optimizer_key = optimizer_key;
        built.optimizer_switches = switches;
        built.optimizer_switches_off = switches_off;
        built.optimizers_at = optimizers_at;
        Ok(built)
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        settings: Vec<Setting>,
        kp: Vec<String>,
        ki: Vec<usize>,
        vp: Vec<String>,
        vi: Vec<usize>,
        neighbours: Vec<Neighbour>,
        nkp: Vec<String>,
        nki: Vec<usize>,
        nvp: Vec<String>,
        nvi: Vec<usize>,
        optimizers: BTreeMap<String, String>,
        same_optimizers: Vec<Vec<String>>,
        text_patterns: Vec<Need>,
    ) -> Result<Frameworks, String> {
        // The four sets are compiled in parallel (the largest part of the
        // policy pack's start-up), errors in this order.
        let ((keys, values), (n_keys, n_values)) = rayon::join(
            || rayon::join(|| set(&kp), || set(&vp)),
            || rayon::join(|| set(&nkp), || set(&nvp)),
        );
        Ok(Frameworks {
            text_patterns,
            entry_patterns: Vec::new(),
            own_entry_patterns: Vec::new(),
            settings,
            keys: keys?,
            key_idx: ki,
            values: values?,
            value_idx: vi,
            neighbours,
            n_keys: n_keys?,
            n_key_idx: nki,
            n_values: n_values?,
            n_value_idx: nvi,
            optimizers,
            same_optimizers,
            // Set by the caller from the data.
            optimizer_key: Regex::new("$^").map_err(|e| e.to_string())?,
            optimizer_switches: Vec::new(),
            optimizer_switches_off: Vec::new(),
            optimizers_at: Vec::new(),
        })
    }

    /// Whether a key path (normal form) and value (normal form) is an
    /// allowed neighbour.
    pub fn allowed(&self, key: &str, value: &str) -> bool {
        if self.neighbours.is_empty() {
            return false;
        }
        let mut key_ok = vec![false; self.neighbours.len()];
        if !key.is_empty() {
            for m in self.n_keys.matches(key) {
                key_ok[self.n_key_idx[m]] = true;
            }
        }
        let mut value_ok = vec![false; self.neighbours.len()];
        if !value.is_empty() {
            for m in self.n_values.matches(value) {
                value_ok[self.n_value_idx[m]] = true;
            }
        }
        self.neighbours.iter().enumerate().any(|(i, n)| {
            (!n.has_key || key_ok[i]) && (!n.has_value || value_ok[i]) && (key_ok[i] || value_ok[i])
        })
    }

    /// The settings a key path and value match (both in normal form). A
    /// setting with a key and a value needs both; one with only a value
    /// matches that value under any key.
    pub fn matches(&self, key: &str, value: &str) -> Vec<SettingHit> {
        let mut out = Vec::new();
        if self.settings.is_empty() {
            return out;
        }
        let key_any = !key.is_empty() && self.keys.is_match(key);
        let value_any = !value.is_empty() && self.values.is_match(value);
        if !key_any && !value_any {
            return out;
        }
        let key_hits: Vec<usize> = if !key_any {
            Vec::new()
        } else {
            self.keys
                .matches(key)
                .into_iter()
                .map(|m| self.key_idx[m])
                .collect()
        };
        let value_hits: Vec<usize> = if !value_any {
            Vec::new()
        } else {
            self.values
                .matches(value)
                .into_iter()
                .map(|m| self.value_idx[m])
                .collect()
        };
        if key_hits.is_empty() && value_hits.is_empty() {
            return out;
        }
        for (i, s) in self.settings.iter().enumerate() {
            let k = key_hits.contains(&i);
            let v = value_hits.contains(&i);
            let hit = match (s.has_key, s.has_value) {
                (true, true) => k && v,
                (true, false) => k,
                (false, true) => v,
                (false, false) => false,
            };
            if hit {
                out.push(SettingHit {
                    setting: i,
                    by_value: s.has_value,
                });
            }
        }
        out
    }

    /// Whether two mllog names are the same optimizer as configs name it.
    /// Letter case does not count: configs are read in normal form (lower
    /// case), and a reference may be spelled otherwise (dlrmv4's `Adam`);
    /// the case of a logged opt_name is POL002's.
    pub fn same_optimizer(&self, a: &str, b: &str) -> bool {
        let is = |x: &String, y: &str| x.eq_ignore_ascii_case(y);
        a.eq_ignore_ascii_case(b)
            || self
                .same_optimizers
                .iter()
                .any(|g| g.iter().any(|x| is(x, a)) && g.iter().any(|x| is(x, b)))
    }

    /// The mllog name of the optimizer a switch at key path `key` (normal
    /// form) puts in place when it is on.
    pub fn optimizer_switch(&self, key: &str) -> Option<&str> {
        self.optimizer_switches
            .iter()
            .find(|(re, _)| re.is_match(key.as_bytes()))
            .map(|(_, m)| m.as_str())
    }

    /// The mllog name of the optimizer a switch at key path `key` (normal
    /// form) puts in place when it is set off.
    pub fn optimizer_switch_off(&self, key: &str) -> Option<&str> {
        self.optimizer_switches_off
            .iter()
            .find(|(re, _)| re.is_match(key.as_bytes()))
            .map(|(_, m)| m.as_str())
    }

    /// Whether a key path (normal form) names an optimizer.
    pub fn is_optimizer_key(&self, key: &str) -> bool {
        self.optimizer_key.is_match(key)
    }

    /// The mllog name of the optimizer a setting names, when its key path
    /// names an optimizer and the value (`value` in normal form, `raw` as
    /// written) is a known framework optimizer, or a dotted path whose
    /// last part is one (`torch.optim.SGD`, `optax.lion`,
    /// `apex.optimizers.FusedLAMB`, gin's `@adafactor.Adafactor()`, PyYAML's
    /// `!!python/name:torch.optim.SGD ''`).
    pub fn optimizer(&self, key: &str, value: &str, raw: &str) -> Option<&str> {
        if !self.optimizer_key.is_match(key) {
            return None;
        }
        let name = squash(value);
        let written = raw.trim().trim_matches(|c| c == '"' || c == '\'');
        if let Some(m) = self
            .optimizers_at
            .iter()
            .filter(|at| at.key.is_match(key.as_bytes()))
            .find_map(|at| at.written.get(written).or_else(|| at.names.get(&name)))
        {
            return Some(m);
        }
        if let Some(m) = self.optimizers.get(&name) {
            return Some(m);
        }
        // (A file name's last part is its extension, a number's digits:
        // neither names an optimizer.) A gin reference names it as a
        // configurable, maybe called: `@adafactor.Adafactor()`.
        // A PyYAML tag naming a Python object (`!!python/name:torch.optim.SGD
        // ''`) names it after the tag's colon.
        let raw = raw.trim();
        let raw = raw
            .strip_prefix("!!python/")
            .and_then(|r| r.split_once(':'))
            .map_or(raw, |(_, r)| r.split_whitespace().next().unwrap_or(""));
        let raw = raw.trim_start_matches('@').trim_end_matches("()");
        let (path, last) = raw.rsplit_once('.')?;
        if path.is_empty() || !last.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        self.optimizers
            .get(&squash(&super::signals::normalize(last)))
            .map(String::as_str)
    }
}

/// A normal-form optimizer name without its word breaks: class names split
/// where their capitals fall (`RMSprop` is `rm_sprop`, `NAdam` `n_adam`,
/// `AdamW8bit` `adam_w8bit`), options where their authors put `_`
/// (`rmsprop`, `nadam`, `adamw_8bit`); the letters are the same.
fn squash(name: &str) -> String {
    name.chars().filter(|c| *c != '_').collect()
}
