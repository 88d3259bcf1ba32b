//! `mlaudit rcp`: the RCP result of each benchmark folder, in words.

use super::escape::text as esc;
use super::Report;
use crate::aggregate::stats::rcp::Verdict as RcpVerdict;
use std::io::{self, Write};

fn num(x: Option<f64>) -> String {
    match x {
        Some(v) if v.fract() == 0.0 && v.abs() < 1e15 => format!("{v:.0}"),
        Some(v) => format!("{v:.4}"),
        None => "n/a".to_string(),
    }
}

pub fn render(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let mut failed = 0;
    let mut checked = 0;
    for b in &report.benchmarks {
        let Some(r) = &b.rcp else {
            writeln!(
                out,
                "{}: skipped ({} is not a benchmark of {})",
                esc(&b.path),
                esc(&b.benchmark),
                report.ruleset
            )?;
            continue;
        };
        checked += 1;
        let verdict = match r.verdict {
            RcpVerdict::Pass => "pass",
            RcpVerdict::Fail => {
                failed += 1;
                "FAIL"
            }
            RcpVerdict::Bypassed => "bypassed",
            RcpVerdict::NotApplicable => "not applicable",
        };
        writeln!(out, "{}: RCP {verdict}: {}", esc(&b.path), esc(&r.message))?;
        if r.mean_epochs.is_some() || r.rcp_mean.is_some() {
            writeln!(
                out,
                "  global batch size {}; submission mean {}; RCP mean {}; minimum acceptable {}",
                num(r.global_batch_size),
                num(r.mean_epochs),
                num(r.rcp_mean),
                num(r.min_epochs)
            )?;
        }
        if let Some(p) = &r.rcp {
            writeln!(
                out,
                "  reference {} (batch size {}{}): stdev {}, max speedup {:.2}%",
                esc(&p.name),
                num(Some(p.batch_size)),
                if p.interpolated { ", interpolated" } else { "" },
                num(Some(p.stdev)),
                (p.max_speedup - 1.0) * 100.0
            )?;
        }
        if let Some(f) = r.norm_factor {
            writeln!(out, "  normalisation factor {f:.6} (scaling.json)")?;
        }
    }
    writeln!(
        out,
        "{}: {checked} folders checked against training {} RCPs, {failed} failed",
        if failed == 0 { "PASS" } else { "FAIL" },
        report.ruleset
    )
}
