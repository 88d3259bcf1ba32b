//! `mlaudit repeat` as text: per compared log, identical / repeatable /
//! not, where the runs first part, the largest deviation, and a line per
//! key that differs.

use super::escape::text as esc;
use crate::aggregate::repeat::{Divergence, RepeatReport, Side};
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
            let mut extra = String::new();
            if k.only_reference > 0 {
                extra.push_str(&format!(", {} only in the reference", k.only_reference));
            }
            if k.only_other > 0 {
                extra.push_str(&format!(", {} only in the other", k.only_other));
            }
            writeln!(
                out,
                "  {}: {} points in both, {} differ{extra}; max abs {:.3e}, max rel {:.3e}",
                esc(&k.key),
                k.compared,
                k.differing,
                k.max_abs,
                k.max_rel
            )?;
        }
    }
    let n = report.comparisons.len();
    let bad = report.comparisons.iter().filter(|c| !c.repeatable).count();
    writeln!(
        out,
        "{}: {n} log(s) compared with the reference, {bad} not repeatable (tolerance {})",
        if bad == 0 { "PASS" } else { "FAIL" },
        report.tolerance
    )
}
