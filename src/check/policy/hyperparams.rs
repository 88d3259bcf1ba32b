//! Hyperparameters the closed rules fix (or tie to others) and the official
//! compliance packs do not check: values and relations from `policy.yaml`.

use super::{BenchmarkPolicy, LogFacts, PolicyRules};
use crate::check::rules::engine::json_to_value;
use crate::finding::{code, Finding};
use minijinja::Value;
use std::collections::BTreeMap;

/// `s` of policy expressions: the first logged value of every key.
pub fn state(facts: &LogFacts) -> Value {
    Value::from_iter(
        facts
            .first
            .iter()
            .map(|(k, (v, _))| (k.clone(), json_to_value(v))),
    )
}

/// `v` of policy expressions for the first event of `key`.
pub fn event(key: &str, value: &serde_json::Value, line: u64) -> Value {
    let mut m: BTreeMap<&str, Value> = BTreeMap::new();
    m.insert("key", Value::from(key));
    m.insert("value", json_to_value(value));
    m.insert("line", Value::from(line));
    m.insert("metadata", Value::from(()));
    m.insert("time_ms", Value::from(()));
    m.insert("event_type", Value::from(()));
    Value::from_iter(m)
}

pub fn check(
    rules: &PolicyRules,
    benchmark: &str,
    policy: &BenchmarkPolicy,
    facts: &LogFacts,
    path: &str,
) -> Vec<Finding> {
    let mut out = Vec::new();
    if policy.checks.is_empty() {
        return out;
    }
    let s = state(facts);
    for c in &policy.checks {
        let Some((value, line)) = facts.first.get(&c.key) else {
            continue;
        };
        let v = event(&c.key, value, *line);
        let ctx = minijinja::context! { v => v, s => s.clone() };
        // An expression that cannot be evaluated (a key it needs is not
        // logged, a string where a number belongs) is the compliance
        // pack's business; the policy says nothing.
        let Ok(result) = c.expr.eval(ctx) else {
            continue;
        };
        if result.is_true() {
            continue;
        }
        let code = if c.definite {
            code::POL004
        } else {
            code::POL005
        };
        out.push(
            Finding::of(
                code,
                path,
                format!("{} = {} fails `{}` ({})", c.key, value, c.source, c.why),
            )
            .at_line(Some(*line))
            .with_help(rules.help(code))
            .with_rule(rules.rule(&format!("benchmarks.{benchmark}.{}", c.key))),
        );
    }
    out
}
