//! The quality target of each benchmark, for the line on the evaluation
//! chart. It is read from the compliance rules themselves (the
//! `at_least_one` condition of the `eval_accuracy` rule of the pack
//! `<division>_<benchmark>`, such as `v.value >= 0.720 and v.value < 1.0`),
//! so the chart shows the threshold the check applies and the number lives
//! in one place. A condition of another shape (stable diffusion's FID and
//! CLIP pair) gives no line rather than a guess.

use crate::check::rules::load::Ruleset;
use std::collections::BTreeMap;

/// A benchmark's quality target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QualityTarget {
    pub value: f64,
    /// Whether a run must reach at least `value` (accuracy) rather than at
    /// most (loss, perplexity).
    pub higher_is_better: bool,
}

/// Targets by pack name (`closed_bert`).
pub fn from_ruleset(rules: &Ruleset) -> BTreeMap<String, QualityTarget> {
    rules
        .packs
        .iter()
        .filter_map(|(name, pack)| {
            let src = pack
                .rules
                .iter()
                .filter(|r| r.key == "eval_accuracy")
                .find_map(|r| r.at_least_one.as_ref().map(|(s, _)| s.as_str()))?;
            Some((name.clone(), parse(src)?))
        })
        .collect()
}

/// The first `v.value <op> <number>` clause of a condition.
pub fn parse(src: &str) -> Option<QualityTarget> {
    let rest = src.trim_start().strip_prefix("v.value")?;
    if !rest.starts_with(' ') {
        return None;
    }
    let rest = rest.trim_start();
    let (higher, rest) = if let Some(r) = rest.strip_prefix(">=") {
        (true, r)
    } else if let Some(r) = rest.strip_prefix("<=") {
        (false, r)
    } else if let Some(r) = rest.strip_prefix('>') {
        (true, r)
    } else if let Some(r) = rest.strip_prefix('<') {
        (false, r)
    } else {
        return None;
    };
    let number: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+'))
        .collect();
    let value: f64 = number.parse().ok()?;
    value.is_finite().then_some(QualityTarget {
        value,
        higher_is_better: higher,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_shipped_shapes() {
        assert_eq!(
            parse("v.value >= 0.720 and v.value < 1.0"),
            Some(QualityTarget {
                value: 0.72,
                higher_is_better: true
            })
        );
        assert_eq!(
            parse("v.value <= 5.6 and v.value > 0.0"),
            Some(QualityTarget {
                value: 5.6,
                higher_is_better: false
            })
        );
        assert_eq!(
            parse("(0.0 <= v.value.FID <= 90.0) and (0.15 <= v.value.CLIP <= 1.0)"),
            None
        );
        assert_eq!(parse("v.values >= 1"), None);
    }
}
