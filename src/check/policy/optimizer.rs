//! The reference optimizer: the logged `opt_name`, or the optimizer the
//! logged `opt_<name>_*` keys imply when there is no `opt_name`.

use super::{BenchmarkPolicy, LogFacts, PolicyRules};
use crate::finding::code::{self, Code};
use crate::finding::Finding;
use std::collections::BTreeMap;

/// Optimizers whose own keys the log carries, with the first such key.
fn inferred<'a>(rules: &'a PolicyRules, facts: &'a LogFacts) -> BTreeMap<&'a str, &'a str> {
    let mut out = BTreeMap::new();
    for key in facts.first.keys() {
        for (name, prefixes) in &rules.optimizer_keys {
            if prefixes.iter().any(|p| key.starts_with(p.as_str())) {
                out.entry(name.as_str()).or_insert(key.as_str());
            }
        }
    }
    out
}

/// The mllog name of a logged `opt_name`: itself when it is one (an
/// mllog name means what it says: "adam" is not AdamW), else the name the
/// framework files give it (apex `FusedAdam`, `torch.optim.AdamW`, Hugging
/// Face `adamw_torch_fused`), else itself.
pub fn logged_name<'a>(rules: &'a PolicyRules, name: &'a str) -> &'a str {
    if rules.optimizer_keys.contains_key(name) {
        return name;
    }
    rules
        .frameworks
        .optimizer("opt_name", &super::signals::normalize(name), name)
        .unwrap_or(name)
}

pub fn check(
    rules: &PolicyRules,
    benchmark: &str,
    policy: &BenchmarkPolicy,
    facts: &LogFacts,
    path: &str,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let reference = policy.optimizer.as_str();
    let rule = rules.rule(&format!("benchmarks.{benchmark}.optimizer"));
    let keys = inferred(rules, facts);
    let finding = |code: Code, line: Option<u64>, msg: String| {
        Finding::of(code, path, msg)
            .at_line(line)
            .with_help(rules.help(code))
            .with_rule(rule.clone())
    };
    match facts.first.get("opt_name") {
        Some((value, line)) => {
            let name = value.as_str();
            if !policy.optimizer_checked_by_compliance {
                let is_reference =
                    |n: &str| n == reference || policy.optimizer_also.iter().any(|a| a == n);
                match name {
                    Some(n) if is_reference(n) => {}
                    Some(n) if n.eq_ignore_ascii_case(reference) => out.push(finding(
                        code::POL002,
                        Some(*line),
                        format!("opt_name '{n}' is the reference optimizer of {benchmark} spelled '{reference}' by the rules"),
                    )),
                    // A framework's name for the reference (apex FusedAdam,
                    // torch.optim.AdamW, Hugging Face adamw_torch_fused): the
                    // same optimizer, not logged under its mllog name. An
                    // mllog name means what it says ("adam" is not AdamW).
                    Some(n) if is_reference(logged_name(rules, n)) =>
                    {
                        out.push(finding(
                            code::POL002,
                            Some(*line),
                            format!("opt_name '{n}' is a framework's name for the reference optimizer of {benchmark}, logged by the rules as '{reference}'"),
                        ))
                    }
                    _ => out.push(finding(
                        code::POL001,
                        Some(*line),
                        format!("opt_name {value} is not the reference optimizer of {benchmark}, '{reference}'"),
                    )),
                }
            }
            let lower = name
                .map(|n| logged_name(rules, n).to_lowercase())
                .unwrap_or_default();
            // The reference and the names the rules allow beside it are one
            // optimizer (unet3d's "nag" is SGD with Nesterov momentum, and
            // logs opt_momentum): its keys are any of theirs.
            let family: Vec<String> = std::iter::once(reference)
                .chain(policy.optimizer_also.iter().map(String::as_str))
                .map(str::to_lowercase)
                .collect();
            let same = |k: &str| {
                let k = k.to_lowercase();
                k == lower || (family.contains(&lower) && family.contains(&k))
            };
            let others: Vec<String> = keys
                .iter()
                .filter(|(k, _)| !same(k))
                .map(|(k, key)| format!("{key} ({k})"))
                .collect();
            if !others.is_empty() {
                out.push(finding(
                    code::POL003,
                    Some(*line),
                    format!(
                        "opt_name {value} but the log has keys of another optimizer: {}",
                        others.join(", ")
                    ),
                ));
            }
        }
        None => {
            if keys.len() > 1 {
                let list: Vec<String> =
                    keys.iter().map(|(k, key)| format!("{key} ({k})")).collect();
                out.push(finding(
                    code::POL003,
                    None,
                    format!(
                        "no opt_name, and the keys name several optimizers: {}",
                        list.join(", ")
                    ),
                ));
            } else if let Some((name, key)) = keys.iter().next() {
                if !name.eq_ignore_ascii_case(reference) {
                    let line = facts.first.get(*key).map(|(_, l)| *l);
                    out.push(finding(
                        code::POL003,
                        line,
                        format!(
                            "no opt_name; {key} implies optimizer '{name}', the reference of {benchmark} is '{reference}'"
                        ),
                    ));
                }
            }
        }
    }
    out
}
