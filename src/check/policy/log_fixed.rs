//! Fixed hyperparameters a run logs under a key of its own (POL009): a
//! result log whose record `"key": "gradient_clipping", "value": 0.5`, or a
//! logged hyperparameter object's `max_grad_norm`, gives a value the
//! closed rules fix (`policy.yaml`, `fixed:` and `reference:`, or the
//! closed compliance pack's `v.value == NUMBER`) another number than the
//! reference. The MLLOG key itself (`opt_gradient_clip_norm`) is the
//! compliance pack's to check; what another key is logged as comes from
//! the same data as configs (`rules/policy/config_log.yaml`), and numbers
//! are compared with its tolerance.

use super::configs::{Entry, EntryKind};
use super::{BenchmarkPolicy, LogFacts, PolicyRules};
use crate::finding::{code, Finding};

/// POL009 findings of one log (`path` names it) of benchmark `bm`.
pub(super) fn check(
    rules: &PolicyRules,
    path: &str,
    facts: &LogFacts,
    (bm, policy): (&str, &BenchmarkPolicy),
) -> Vec<Finding> {
    let mut out = Vec::new();
    let all = entries(rules, facts);
    if all.is_empty() || policy.config_fixed.get().is_empty() {
        return out;
    }
    let cl = &rules.config_log;
    // Each setting's numbers: a key's own value, and the items of a list
    // a mapping reads one of (a logged `betas: [0.9, 0.95]`).
    let mut numbers: Vec<(&Entry, String, Vec<&Vec<String>>)> = Vec::new();
    for (i, e) in all.iter().enumerate() {
        let number = e.value.trim();
        if e.kind == (EntryKind::Key { header: false }) && number.parse::<f64>().is_ok() {
            numbers.push((e, number.to_string(), cl.mllog_keys(&e.path, &[], bm)));
        }
        if !super::config_log::may_list(e) {
            continue;
        }
        let items = cl.mllog_items(&e.path, &[], bm);
        if !items.is_empty() {
            let listed = super::config_log::list_items(&all, i);
            for (keys, n) in items {
                if let Some(item) = listed.get(n) {
                    numbers.push((e, item.trim().to_string(), vec![keys]));
                }
            }
        }
    }
    for (e, number, mapped) in numbers {
        let number = number.as_str();
        if number.parse::<f64>().is_err() {
            continue;
        }
        for keys in mapped {
            // The first MLLOG key the benchmark fixes.
            let Some((key, pinned)) = keys
                .iter()
                .find_map(|k| policy.config_fixed.get().get(k).map(|w| (k, w)))
            else {
                continue;
            };
            let want = &pinned.value;
            if cl.agrees(number, want) {
                continue;
            }
            out.push(
                Finding::of(
                    code::POL009,
                    path,
                    format!(
                        "{} sets {key} to {number}; the reference of {bm} is {want}",
                        e.display
                    ),
                )
                .at_line(Some(e.line))
                .with_help(rules.help(code::POL009))
                .with_rule(pinned.rule.clone()),
            );
            break;
        }
    }
    out
}

/// The settings a log's records give under keys of their own: each key's
/// first scalar, and the nested keys of a logged object. A record whose
/// key is itself an MLLOG key a mapping names is left to the compliance
/// pack (nested in an object, it is read).
fn entries(rules: &PolicyRules, facts: &LogFacts) -> Vec<Entry> {
    let mut out = Vec::new();
    for (key, (value, line)) in &facts.first {
        match value {
            serde_json::Value::Object(_) | serde_json::Value::Array(_) => {
                let start = out.len();
                super::config_json::json_entries(
                    &value.to_string(),
                    std::slice::from_ref(key),
                    0,
                    &mut out,
                );
                for e in &mut out[start..] {
                    e.line = *line;
                    e.display = format!("MLLOG key '{key}': {}", e.display);
                }
            }
            _ if rules.config_log.maps(key) => {}
            scalar => {
                let text = match scalar {
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
    // Keys with a value, and lists with their items (what a mapping that
    // reads an item needs).
    out.retain(|e| {
        !matches!(
            e.kind,
            EntryKind::Guard | EntryKind::GuardEnd | EntryKind::Source
        )
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::policy::test_support::{facts, rules};

    fn found(records: &[(&str, serde_json::Value)]) -> Vec<String> {
        let r = rules();
        let Some(policy) = r.benchmarks.get("llama2_70b_lora") else {
            panic!("llama2_70b_lora has a policy");
        };
        let mut hits: Vec<String> = check(&r, "log", &facts(records), ("llama2_70b_lora", policy))
            .iter()
            .map(|f| format!("{} {} {}", f.line.unwrap_or(0), f.code, f.message))
            .collect();
        hits.sort();
        hits
    }

    /// Another clip norm, weight decay or LoRA alpha under a key of the
    /// run's own, alone or in a logged object, is POL009 at its line; the
    /// reference value, the MLLOG key itself (the compliance pack's),
    /// keys no mapping names and words are quiet.
    #[test]
    fn logged_fixed_values() {
        let hits = found(&[
            ("gradient_clipping", serde_json::json!(0.5)),
            (
                "hyperparameters",
                serde_json::json!({"max_grad_norm": 1.0, "lora": {"alpha": 16}}),
            ),
            ("weight_decay", serde_json::json!("0.1")),
            (
                "optimizer_config",
                serde_json::json!({"name": "adamw", "betas": [0.9, 0.95]}),
            ),
        ]);
        assert_eq!(
            hits,
            [
                "10 POL009 MLLOG key 'gradient_clipping' = 0.5 sets opt_gradient_clip_norm to 0.5; the reference of llama2_70b_lora is 0.3",
                "11 POL009 MLLOG key 'hyperparameters': \"alpha\": 16 sets lora_alpha to 16; the reference of llama2_70b_lora is 32",
                "11 POL009 MLLOG key 'hyperparameters': \"max_grad_norm\": 1.0 sets opt_gradient_clip_norm to 1.0; the reference of llama2_70b_lora is 0.3",
                "12 POL009 MLLOG key 'weight_decay' = 0.1 sets opt_adamw_weight_decay to 0.1; the reference of llama2_70b_lora is 0.0001",
                "13 POL009 MLLOG key 'optimizer_config': \"betas\" sets opt_adamw_beta_2 to 0.95; the reference of llama2_70b_lora is 0.999",
            ]
        );
        let quiet = found(&[
            ("gradient_clipping", serde_json::json!(0.3)),
            ("opt_gradient_clip_norm", serde_json::json!(1.0)),
            (
                "hyperparameters",
                serde_json::json!({"max_grad_norm": "0.3", "weight_decay": 1e-4, "betas": [0.9, 0.999]}),
            ),
            ("clip_norm", serde_json::json!("auto")),
            ("max_steps", serde_json::json!(1024)),
        ]);
        assert!(quiet.is_empty(), "{quiet:#?}");
    }
}
