//! The precision and parallelism disclosure keys of training 6.x
//! (policies#592): missing keys where the compliance pack does not require
//! them yet (POL020), and low-precision communication (POL021), which a
//! logger of any round may state.

use super::{LogFacts, PolicyRules};
use crate::finding::code;
use crate::finding::Finding;

pub fn check(rules: &PolicyRules, facts: &LogFacts, path: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(d) = &rules.disclosure else {
        return out;
    };
    if !d.required_by_compliance {
        let missing: Vec<&str> = d
            .keys
            .iter()
            .filter(|k| !facts.first.contains_key(k.as_str()))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            out.push(
                Finding::of(
                    code::POL020,
                    path,
                    format!(
                        "precision/parallelism disclosure not logged: {} (mandatory from training 6.1)",
                        missing.join(", ")
                    ),
                )
                .with_help(rules.help(code::POL020))
                .with_rule(rules.rule("disclosure")),
            );
        }
    }
    if let Some((v, line)) = facts.first.get(&d.comm_key) {
        if let Some(p) = v.as_str() {
            if d.low_precision_comm.iter().any(|l| l == p) {
                out.push(
                    Finding::of(
                        code::POL021,
                        path,
                        format!(
                            "{} is '{p}': gradients may be reduced in a low-precision format",
                            d.comm_key
                        ),
                    )
                    .at_line(Some(*line))
                    .with_help(rules.help(code::POL021))
                    .with_rule(rules.rule("disclosure.low_precision_comm")),
                );
            }
        }
    }
    out
}
