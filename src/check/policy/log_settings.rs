//! Framework settings a run logs itself: an MLLOG record whose key and
//! value are a setting the framework data knows (`"key": "kvstore",
//! "value": "dist_async"`, a logged DeepSpeed config object) is reported
//! as it would be in a config. The generic signal families are matched on
//! every record already ([`super::Collector`]); here each key's first
//! value (what [`super::LogFacts`] keeps) goes through the same scan as a
//! config's settings, and only framework settings are taken from it: the
//! optimizer has its own check, and repeatability notes belong to configs.

use super::configs::{self, Entry, EntryKind, HitKind};
use super::interpolate::Env;
use super::{LogFacts, PolicyRules};
use crate::finding::{code, Finding};
use std::collections::BTreeMap;

/// Entries of the logged keys: one per scalar value, nested keys for an
/// object (read as JSON, so a logged config object is a config).
fn entries(facts: &LogFacts) -> Vec<Entry> {
    let mut out = Vec::new();
    for (key, (value, line)) in &facts.first {
        match value {
            serde_json::Value::Object(_) | serde_json::Value::Array(_) => {
                let text = value.to_string();
                let start = out.len();
                super::config_json::json_entries(&text, std::slice::from_ref(key), 0, &mut out);
                for e in &mut out[start..] {
                    // One line of the log holds the whole object.
                    e.line = *line;
                }
            }
            v => {
                let text = match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                out.push(Entry {
                    line: *line,
                    path: vec![key.clone()],
                    display: format!("MLLOG key '{key}' = {text}"),
                    value: text,
                    kind: EntryKind::Key { header: false },
                });
            }
        }
    }
    out
}

/// Framework-setting findings of one log (`path` names it).
pub(super) fn check(rules: &PolicyRules, path: &str, facts: &LogFacts) -> Vec<Finding> {
    let entries = entries(facts);
    let hits = configs::scan(
        &entries,
        &rules.signals,
        &rules.frameworks,
        &rules.entry_gate,
        false,
        &Env::default(),
        &BTreeMap::new(),
        false,
    );
    hits.into_iter()
        .filter_map(|h| {
            let HitKind::Setting(i) = h.kind else {
                return None;
            };
            let s = rules.frameworks.settings.get(i)?;
            if s.code == code::POL050 {
                return None;
            }
            Some(
                Finding::new(
                    &s.code,
                    s.severity,
                    path,
                    format!("{}: {} ({}; {})", s.framework_name, h.display, s.why, s.doc),
                )
                .at_line(Some(h.line))
                .with_help(rules.help(&s.code))
                .with_rule(rules.framework_rule(&s.framework, &s.id)),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::policy::test_support::rules;

    fn facts(records: &[(&str, serde_json::Value)]) -> LogFacts {
        let mut f = LogFacts::default();
        for (i, (k, v)) in records.iter().enumerate() {
            f.first.insert(k.to_string(), (v.clone(), i as u64 + 10));
        }
        f
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
        let got: Vec<String> = check(&r, "log", &on)
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
        let lines: Vec<u64> = check(&r, "log", &on)
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
        let got = check(&r, "log", &off);
        assert!(got.is_empty(), "{got:#?}");
    }
}
