//! `mlaudit repeat` as text: per compared log, identical / repeatable /
//! not, where the runs first part, the largest deviation, and a line per
//! key that differs.

use super::escape::text as esc;
use crate::aggregate::repeat::{Divergence, KeySummary, Pairing, RepeatReport, Side};
use std::io::{self, Write};

fn side(label: &str, s: &Option<Side>, path: &str, out: &mut dyn Write) -> io::Result<()> {
    match s {
        Some(s) => {
            writeln!(out, "    {label} {}:{}: {}", esc(path), s.line, s.value)?;
            if let Some(t) = &s.text {
                writeln!(out, "      {}", esc(t))?;
            }
            Ok(())
        }
        None => writeln!(out, "    {label} {}: no such point", esc(path)),
    }
}

fn divergence(d: &Divergence, a: &str, b: &str, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "  first difference: {} at {}",
        esc(&d.key),
        esc(&d.position)
    )?;
    side("reference", &d.reference, a, out)?;
    side("other    ", &d.other, b, out)
}

pub fn render(report: &RepeatReport, out: &mut dyn Write) -> io::Result<()> {
    for c in &report.comparisons {
        let verdict = if c.identical {
            "identical".to_string()
        } else if c.repeatable {
            format!("repeatable within {}", report.tolerance)
        } else {
            "NOT repeatable".to_string()
        };
        writeln!(out, "{} vs {}: {verdict}", esc(&c.other), esc(&c.reference))?;
        writeln!(out, "  {}", pairing_line(&c.pairing))?;
        if c.identical {
            continue;
        }
        if let Some(d) = &c.first_divergence {
            divergence(d, &c.reference, &c.other, out)?;
        }
        if let Some(w) = &c.max_rel_at {
            if let (Some(a), Some(b)) = (&w.reference, &w.other) {
                let (abs, rel) = crate::aggregate::repeat::deviation(a.value, b.value);
                writeln!(
                    out,
                    "  largest relative deviation: {} at {}: {} vs {} (absolute {abs:.3e}, relative {rel:.3e})",
                    esc(&w.key),
                    esc(&w.position),
                    a.value,
                    b.value
                )?;
            }
        }
        for k in c.keys.iter().filter(|k| k.differing > 0 || k.max_abs > 0.0) {
            writeln!(out, "  {}", key_line(k, report.tolerance))?;
        }
    }
    for line in super::repeatability::text_lines(&report.repeatability) {
        writeln!(out, "{line}")?;
    }
    let n = report.comparisons.len();
    let bad = report.comparisons.iter().filter(|c| !c.repeatable).count();
    writeln!(
        out,
        "{}: {} compared with the reference, {bad} not repeatable (tolerance {})",
        if bad == 0 { "PASS" } else { "FAIL" },
        if n == 1 {
            "1 log".to_string()
        } else {
            format!("{n} logs")
        },
        report.tolerance
    )
}

/// `a test-retest pair: same seed (1234), same configuration`, or why not.
fn pairing_line(p: &Pairing) -> String {
    if p.test_retest {
        return format!(
            "a test-retest pair: same seed ({}), same configuration",
            esc(p.reference_seed.as_deref().unwrap_or("?"))
        );
    }
    let seed = match (&p.reference_seed, &p.other_seed) {
        (Some(a), Some(b)) if a == b => format!("same seed ({})", esc(a)),
        (Some(a), Some(b)) => format!("different seeds, {} vs {}", esc(a), esc(b)),
        (None, None) => "no seed logged".to_string(),
        (a, b) => format!(
            "seed {} vs {}",
            esc(a.as_deref().unwrap_or("not logged")),
            esc(b.as_deref().unwrap_or("not logged"))
        ),
    };
    let config: Vec<&String> = p.differing_keys.iter().filter(|k| *k != "seed").collect();
    let config = if config.is_empty() {
        "same configuration".to_string()
    } else {
        format!(
            "configuration differs in {}: {}",
            if config.len() == 1 {
                "1 key".to_string()
            } else {
                format!("{} keys", config.len())
            },
            esc(&config
                .iter()
                .map(|k| k.as_str())
                .collect::<Vec<_>>()
                .join(", "))
        )
    };
    format!("NOT a test-retest pair: {seed}; {config}. The differences below are expected.")
}

/// `eval_accuracy: 35 points in both runs, 3 differ beyond the tolerance
/// (by up to 1.2e-3, 0.15%); 2 only in the reference`
fn key_line(k: &KeySummary, tolerance: f64) -> String {
    let points = |n: usize| {
        if n == 1 {
            "1 point".to_string()
        } else {
            format!("{n} points")
        }
    };
    let mut text = if k.compared == 0 {
        format!(
            "{}: no point at the same position in both runs",
            esc(&k.key)
        )
    } else {
        let beyond = k.differing - k.only_reference - k.only_other;
        let by = if k.max_abs > 0.0 {
            format!(
                " (largest difference {:.3e}, {:.3}% of the value)",
                k.max_abs,
                k.max_rel * 100.0
            )
        } else {
            String::new()
        };
        let differ = match beyond {
            0 if tolerance > 0.0 => "all within the tolerance".to_string(),
            0 => "all equal".to_string(),
            n if n == k.compared => "all differ".to_string(),
            1 => "1 differs".to_string(),
            n => format!("{n} differ"),
        };
        format!(
            "{}: {} in both runs, {differ}{by}",
            esc(&k.key),
            points(k.compared)
        )
    };
    let mut only = Vec::new();
    if k.only_reference > 0 {
        only.push(format!(
            "{} only in the reference",
            points(k.only_reference)
        ));
    }
    if k.only_other > 0 {
        only.push(format!("{} only in the other", points(k.only_other)));
    }
    if !only.is_empty() {
        text.push_str("; ");
        text.push_str(&only.join(", "));
    }
    text
}
