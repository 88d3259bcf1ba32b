//! Framework settings a run logs itself: an MLLOG record whose key and
//! value are a setting the framework data knows (`"key": "kvstore",
//! "value": "dist_async"`, a logged DeepSpeed config object) is reported
//! as it would be in a config. The generic signal families are matched on
//! every record already ([`super::Collector`]); here each key's first
//! value (what [`super::LogFacts`] keeps) goes through the same scan as a
//! config's settings, and framework settings and optimizers are taken from
//! it (repeatability notes belong to configs). An optimizer a run logs
//! under a key of its own (`"key": "optimizer", "value":
//! "distributed_shampoo"`, a logged hyperparameter object's `optimizer`)
//! that is not the reference is POL003; `opt_name` has its own check.

use super::configs::{self, Entry, EntryKind, HitKind};
use super::interpolate::Env;
use super::{BenchmarkPolicy, LogFacts, PolicyRules};
use crate::finding::{code, Finding};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;

/// Most logged settings [`Quiet`] remembers.
const MAX_QUIET: usize = 20_000;
/// Longest value [`Quiet`] remembers (longer ones are scanned every time).
const MAX_QUIET_VALUE: usize = 256;

/// Logged scalar settings (values by key) that matched no framework
/// setting: the runs of a folder log the same settings, and each is
/// scanned once.
#[derive(Debug, Default)]
pub struct Quiet(Mutex<HashMap<String, HashSet<String>>>);

impl Quiet {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, HashSet<String>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Entries of the logged keys not known to be quiet: one per scalar value,
/// nested keys for an object (read as JSON, so a logged config object is a
/// config).
fn entries(facts: &LogFacts, quiet: &HashMap<String, HashSet<String>>) -> Vec<Entry> {
    let mut out = Vec::new();
    for (key, (value, line)) in &facts.first {
        // JSON held in a logged string (`"value": "{\"cluster\": ...}"`,
        // a TF_CONFIG) is read as a logged object.
        let held = value
            .as_str()
            .map(str::trim)
            .filter(|s| s.starts_with('{') && s.ends_with('}'));
        let text: std::borrow::Cow<str> = match value {
            _ if held.is_some() || value.is_object() || value.is_array() => {
                let text = held.map_or_else(|| value.to_string(), str::to_string);
                if text.starts_with('{') {
                    // The record's key heads its object, as a config's
                    // section does (`curriculum_learning: {enabled: true}`
                    // is on, `{enabled: false}` off).
                    out.push(Entry {
                        line: *line,
                        path: vec![key.clone()],
                        display: format!("MLLOG key '{key}'"),
                        value: String::new(),
                        kind: EntryKind::Key { header: true },
                    });
                }
                let start = out.len();
                super::config_json::json_entries(&text, std::slice::from_ref(key), 0, &mut out);
                for e in &mut out[start..] {
                    // One line of the log holds the whole object.
                    e.line = *line;
                }
                continue;
            }
            serde_json::Value::String(s) => s.as_str().into(),
            other => other.to_string().into(),
        };
        if quiet.get(key).is_some_and(|q| q.contains(text.as_ref())) {
            continue;
        }
        out.push(Entry {
            line: *line,
            path: vec![key.clone()],
            display: format!("MLLOG key '{key}' = {text}"),
            value: text.into_owned(),
            kind: EntryKind::Key { header: false },
        });
    }
    out
}

/// Framework-setting and optimizer findings of one log (`path` names it;
/// `bm`: its benchmark and that benchmark's policy, when known).
pub(super) fn check(
    rules: &PolicyRules,
    path: &str,
    facts: &LogFacts,
    bm: Option<(&str, &BenchmarkPolicy)>,
) -> Vec<Finding> {
    let entries = entries(facts, &rules.log_quiet.lock());
    let hits = configs::scan(
        &entries,
        &rules.signals,
        &rules.frameworks,
        // No gate: a log holds about a hundred keys, and building the
        // gate's search costs more than matching them all (it is built
        // only when configs are scanned).
        None,
        // As a package's own config: optimizers are named (repeatability
        // notes are dropped below).
        true,
        &Env::default(),
        &BTreeMap::new(),
        false,
    );
    let opt_name_line = facts.first.get("opt_name").map(|(_, l)| *l);
    let mut optimizers: Vec<Finding> = Vec::new();
    let mut settings: Vec<(u64, usize, String)> = Vec::new();
    // Signal families inside a logged object (`"ddp_config": {...,
    // "gradient_compression": "int8"}`): the record's own key and value
    // are matched as it streams by; what the object holds only here.
    let mut nested: Vec<(u64, usize, String, String)> = Vec::new();
    for h in hits {
        match &h.kind {
            HitKind::Setting(i) => settings.push((h.line, *i, h.display)),
            HitKind::Family(i) if !h.display.starts_with("MLLOG key '") => {
                nested.push((h.line, *i, h.display, h.word))
            }
            HitKind::Optimizer(mllog) if Some(h.line) != opt_name_line => {
                if let Some(f) = optimizer_finding(rules, path, bm, mllog, &h) {
                    optimizers.push(f);
                }
            }
            _ => {}
        }
    }
    {
        // A setting that matched nothing here matches nothing in the next
        // log (no variables, no sections switched off: a log is flat but
        // for objects, whose entries are not remembered).
        let mut quiet = rules.log_quiet.lock();
        let mut kept: usize = quiet.values().map(HashSet::len).sum();
        for e in &entries {
            if kept >= MAX_QUIET {
                break;
            }
            // Only a record's own scalar (what `entries` looks up), not an
            // item of a logged list, which is matched as a value alone.
            if let ([key], false) = (
                e.path.as_slice(),
                e.kind != (EntryKind::Key { header: false })
                    || e.value.len() > MAX_QUIET_VALUE
                    || settings.iter().any(|(line, _, _)| *line == e.line),
            ) {
                if quiet
                    .entry(key.clone())
                    .or_default()
                    .insert(e.value.clone())
                {
                    kept += 1;
                }
            }
        }
    }
    let mut out: Vec<Finding> = settings
        .into_iter()
        .filter_map(|(line, i, display)| {
            let s = rules.frameworks.settings.get(i)?;
            if s.code == code::POL050 {
                return None;
            }
            Some(
                Finding::new(
                    &s.code,
                    s.severity,
                    path,
                    format!("{}: {} ({}; {})", s.framework_name, display, s.why, s.doc),
                )
                .at_line(Some(line))
                .with_help(rules.help(&s.code))
                .with_rule(rules.framework_rule(&s.framework, &s.id)),
            )
        })
        .collect();
    for (line, i, display, word) in nested {
        let Some(f) = rules.signals.families.get(i) else {
            continue;
        };
        if out.iter().any(|x| x.line == Some(line)) {
            continue;
        }
        out.push(
            Finding::new(
                &f.code,
                crate::finding::Severity::Warning,
                path,
                format!(
                    "possible {}: {display} in a logged object (matches '{word}')",
                    f.title
                ),
            )
            .at_line(Some(line))
            .with_help(rules.help(&f.code))
            .with_rule(rules.signal_rule(&f.name)),
        );
    }
    out.extend(optimizers);
    out
}

/// POL003 for an optimizer a log names under a key other than `opt_name`,
/// when it is not the benchmark's reference (nor one the rules allow
/// beside it, nor the same optimizer under another name).
fn optimizer_finding(
    rules: &PolicyRules,
    path: &str,
    bm: Option<(&str, &BenchmarkPolicy)>,
    mllog: &str,
    h: &configs::Hit,
) -> Option<Finding> {
    let (benchmark, policy) = bm?;
    let fw = &rules.frameworks;
    if fw.same_optimizer(mllog, &policy.optimizer)
        || policy
            .optimizer_also
            .iter()
            .any(|a| fw.same_optimizer(mllog, a))
    {
        return None;
    }
    Some(
        Finding::of(
            code::POL003,
            path,
            format!(
                "{} names optimizer '{}' (mllog '{mllog}'); the reference of {benchmark} is '{}'",
                h.display, h.word, policy.optimizer
            ),
        )
        .at_line(Some(h.line))
        .with_help(rules.help(code::POL003))
        .with_rule(rules.rule(&format!("benchmarks.{benchmark}.optimizer"))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::policy::test_support::{facts, rules};

    /// A signal family inside a logged object (a DDP config a run logs)
    /// is a warning at the record's line; the same object with the
    /// technique off, or allowed values, is quiet.
    #[test]
    fn families_inside_logged_objects() {
        let r = rules();
        let on = facts(&[(
            "ddp_config",
            serde_json::json!({"grad_reduce_in_fp32": false, "gradient_compression": "int8"}),
        )]);
        let f = check(&r, "result_0.txt", &on, None);
        assert!(
            f.iter()
                .any(|x| x.code == "POL014" && x.message.contains("in a logged object")),
            "{f:#?}"
        );
        let off = facts(&[(
            "ddp_config",
            serde_json::json!({"grad_reduce_in_fp32": false, "gradient_compression": "none", "bucket_cap_mb": 25}),
        )]);
        assert!(check(&r, "result_0.txt", &off, None).is_empty());
    }

    /// Logged settings the framework data knows are found at their line;
    /// allowed neighbours, standard keys and switched-off values are not.
    #[test]
    fn logged_framework_settings() {
        let r = rules();
        let on = facts(&[
            ("kvstore", serde_json::json!("dist_async")),
            ("algorithm", serde_json::json!("decentralized")),
            ("consistency_model", serde_json::json!("eventual")),
            (
                "deepspeed_config",
                serde_json::json!({"optimizer": {"type": "OneBitLamb"}, "zero_optimization": {"stage": 2}}),
            ),
            ("fp8_communication", serde_json::json!(true)),
        ]);
        let got: Vec<String> = check(&r, "log", &on, None)
            .iter()
            .map(|f| {
                format!(
                    "{} {} {}",
                    f.line.unwrap_or(0),
                    f.code,
                    f.rule.as_deref().unwrap_or("")
                )
            })
            .collect();
        let lines: Vec<u64> = check(&r, "log", &on, None)
            .iter()
            .filter_map(|f| f.line)
            .collect();
        assert_eq!(got.len(), 5, "{got:#?}");
        // Each at its own record's line (the map is sorted by key).
        let mut want: Vec<u64> = (10..15).collect();
        let mut have = lines.clone();
        have.sort_unstable();
        want.sort_unstable();
        assert_eq!(have, want, "{got:#?}");
        let off = facts(&[
            ("kvstore", serde_json::json!("dist_sync")),
            ("algorithm", serde_json::json!("gradient_allreduce")),
            ("consistency_model", serde_json::json!("bsp")),
            ("fp8_communication", serde_json::json!(false)),
            ("opt_name", serde_json::json!("lamb")),
            ("overlap_grad_reduce", serde_json::json!(true)),
            (
                "deepspeed_config",
                serde_json::json!({"zero_optimization": {"stage": 3}}),
            ),
        ]);
        let got = check(&r, "log", &off, None);
        assert!(got.is_empty(), "{got:#?}");
        // What a log found quiet is remembered, and changes nothing.
        assert!(check(&r, "log", &off, None).is_empty());
        assert_eq!(check(&r, "log", &on, None).len(), 5);
        assert!(!r.log_quiet.lock().is_empty());
    }

    /// JSON a log holds in a string (a TF_CONFIG) is read as an object:
    /// a parameter server in its cluster is found, a cluster of workers
    /// is quiet.
    #[test]
    fn json_in_a_logged_string() {
        let r = rules();
        let ps = facts(&[(
            "TF_CONFIG",
            serde_json::json!("{\"cluster\": {\"ps\": [\"h:1\"], \"worker\": [\"h:2\"]}}"),
        )]);
        let got: Vec<String> = check(&r, "log", &ps, None)
            .iter()
            .map(|f| format!("{} {}", f.line.unwrap_or(0), f.code))
            .collect();
        assert_eq!(got, ["10 POL011"], "{got:#?}");
        let workers = facts(&[(
            "TF_CONFIG",
            serde_json::json!(" {\"cluster\": {\"worker\": [\"h:2\"]}} "),
        )]);
        assert!(check(&r, "log", &workers, None).is_empty());
    }

    /// A logged object's key heads it as a config's section does: a
    /// setting named by the key alone is on unless the object says
    /// `enabled: false`.
    #[test]
    fn a_logged_object_is_a_section() {
        let r = rules();
        let on = facts(&[(
            "curriculum_learning",
            serde_json::json!({"enabled": true, "curriculum_type": "seqlen"}),
        )]);
        let got: Vec<String> = check(&r, "log", &on, None)
            .iter()
            .map(|f| format!("{} {}", f.line.unwrap_or(0), f.code))
            .collect();
        assert_eq!(got, ["10 POL015"], "{got:#?}");
        let off = facts(&[(
            "curriculum_learning",
            serde_json::json!({"enabled": false, "curriculum_type": "seqlen"}),
        )]);
        assert!(check(&r, "log", &off, None).is_empty());
    }

    /// An optimizer logged under a key of its own, or in a logged object,
    /// is POL003 when it is not the reference (llama2_70b_lora: AdamW); `opt_name` has
    /// its own check, and without a benchmark nothing is compared. A
    /// logged list is a list of values of its key.
    #[test]
    fn logged_optimizers_and_lists() {
        let r = rules();
        let bm = r
            .benchmarks
            .get("llama2_70b_lora")
            .map(|p| ("llama2_70b_lora", p));
        assert!(bm.is_some());
        let f = facts(&[
            ("algorithms", serde_json::json!(["sam", "channels_last"])),
            (
                "hyperparameters",
                serde_json::json!({"optim": "torch.optim.SGD"}),
            ),
            ("opt_name", serde_json::json!("sgd")),
            ("optimizer", serde_json::json!("distributed_shampoo")),
            ("optimizer_type", serde_json::json!("adamw_torch_fused")),
            // The name inside a block for the optimizer's settings.
            (
                "optimizer_config",
                serde_json::json!({"name": "lion", "lr": 0.0004}),
            ),
        ]);
        let got: Vec<String> = check(&r, "log", &f, bm)
            .iter()
            .map(|f| format!("{} {}", f.line.unwrap_or(0), f.code))
            .collect();
        assert_eq!(
            got,
            ["10 POL007", "11 POL003", "13 POL003", "15 POL003"],
            "{got:#?}"
        );
        let got: Vec<String> = check(&r, "log", &f, None)
            .iter()
            .map(|f| format!("{} {}", f.line.unwrap_or(0), f.code))
            .collect();
        assert_eq!(got, ["10 POL007"], "{got:#?}");
    }
}
