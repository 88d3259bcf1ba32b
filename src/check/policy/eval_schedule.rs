//! Where the evaluations are, against the schedule the rules define
//! (issue 5 item 6, logging#79): the interval between consecutive
//! `eval_accuracy` positions, and the first position where the rules skip
//! early evaluations.

use super::hyperparams::state;
use super::{BenchmarkPolicy, LogFacts, PolicyRules};
use crate::check::rules::expr::{number, Expr};
use crate::finding::code;
use crate::finding::{Finding, Severity};

fn eval_num(e: &Expr, s: &minijinja::Value) -> Option<f64> {
    let ctx = minijinja::context! { s => s.clone(), v => minijinja::Value::from(()) };
    e.eval(ctx).ok().and_then(|v| number(&v).ok())
}

fn fmt(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

pub fn check(
    rules: &PolicyRules,
    benchmark: &str,
    policy: &BenchmarkPolicy,
    facts: &LogFacts,
    path: &str,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(sch) = &policy.eval_schedule else {
        return out;
    };
    let s = state(facts);
    let (Some(every), Some(tol)) = (eval_num(&sch.every.1, &s), eval_num(&sch.tolerance.1, &s))
    else {
        return out;
    };
    let slack = 1e-9 * every.abs().max(1.0);
    // Positions in log order; repeated positions (several metrics per eval,
    // ranks that all log) count once.
    let mut pos: Vec<(f64, u64, &str)> = Vec::new();
    for (meta, line) in &facts.evals {
        let found = sch.fields.iter().find_map(|f| {
            meta.get(f)
                .and_then(|v| v.as_f64())
                .map(|x| (x, f.as_str()))
        });
        if let Some((x, field)) = found {
            if pos.last().is_none_or(|(p, _, _)| *p != x) {
                pos.push((x, *line, field));
            }
        }
    }
    // Extra evaluations at a boundary (the end of an epoch) are outside the
    // interval schedule.
    if let Some(b) = sch.boundary.as_ref().and_then(|(_, e)| eval_num(e, &s)) {
        if b > 0.0 {
            // A boundary evaluation closer to the one before than an
            // interval is the extra one; the schedule goes on from before it.
            let mut kept: Vec<(f64, u64, &str)> = Vec::with_capacity(pos.len());
            for p in pos {
                let at_boundary = ((p.0 / b).round() * b - p.0).abs() <= slack.max(1e-9);
                let early = kept
                    .last()
                    .is_some_and(|(q, _, _)| p.0 - q < every - tol - slack);
                if !(at_boundary && early) {
                    kept.push(p);
                }
            }
            pos = kept;
        }
    }
    // Positions all below one interval are not in the schedule's unit (an
    // epoch count where samples are expected): nothing to compare.
    if pos.iter().all(|(p, _, _)| *p < every - tol) {
        return out;
    }
    let rule = rules.rule(&format!("benchmarks.{benchmark}.eval_schedule"));
    // Evaluating earlier or more often than the schedule can stop the clock
    // early: a warning. Later or less often cannot: a note.
    let finding = |line: u64, early: bool, msg: String| {
        let mut f = Finding::of(code::POL030, path, msg)
            .at_line(Some(line))
            .with_help(rules.help(code::POL030))
            .with_rule(rule.clone());
        if !early {
            f.severity = Severity::Note;
        }
        f
    };
    let first_tol = match &sch.first_tolerance {
        Some((_, e)) => eval_num(e, &s),
        None => Some(tol),
    };
    if let (Some((first_expr_src, first_expr)), Some((p0, line, field))) = (&sch.first, pos.first())
    {
        if let (Some(want), Some(ftol)) = (eval_num(first_expr, &s), first_tol) {
            if (p0 - want).abs() > ftol + slack {
                out.push(finding(
                    *line,
                    *p0 < want,
                    format!(
                        "first evaluation at {field} {}, {} than the rules' {} (`{first_expr_src}`, tolerance {})",
                        fmt(*p0),
                        if *p0 < want { "earlier" } else { "later" },
                        fmt(want),
                        fmt(ftol)
                    ),
                ));
            }
        }
    }
    // Without a first position of their own, the rules' schedule starts
    // one interval in: a first evaluation before that came earlier than
    // the schedule allows, though no interval after it is short (only
    // the first place: each interval may round down to a step, and those
    // roundings add up over a run).
    // (One at 0 is counted from 0: `epoch_num` 0, 1, 2 for the ends of
    // the first three epochs.)
    let early_at = pos
        .first()
        .filter(|_| sch.first.is_none())
        .filter(|(x, _, _)| *x > slack && *x < every - tol - slack)
        .copied();
    // The first interval may round to a step boundary at both ends of the
    // skipped evaluations: it gets the first position's tolerance.
    let bad: Vec<(f64, f64, u64, &str)> = pos
        .windows(2)
        .enumerate()
        .filter_map(|(i, w)| {
            let d = w[1].0 - w[0].0;
            let t = if i == 0 && sch.first.is_some() {
                first_tol.unwrap_or(tol).max(tol)
            } else {
                tol
            };
            ((d - every).abs() > t + slack).then_some((w[0].0, w[1].0, w[1].1, w[1].2))
        })
        .collect();
    let shorter: Vec<&(f64, f64, u64, &str)> =
        bad.iter().filter(|(a, b, _, _)| b - a < every).collect();
    let longer = bad.len() - shorter.len();
    // Report the first shorter interval when there is one (the one that
    // matters), else the first longer one.
    if let Some((a, b, line, field)) = shorter.first().copied().or(bad.first()) {
        out.push(finding(
            *line,
            !shorter.is_empty(),
            format!(
                "{} of {} evaluation intervals are not {} (`{}`, tolerance {}; {} shorter, {longer} longer); first: {field} {} -> {}",
                bad.len(),
                pos.len().saturating_sub(1),
                fmt(every),
                sch.every.0,
                fmt(tol),
                shorter.len(),
                fmt(*a),
                fmt(*b)
            ),
        ));
    }
    let warned = out.iter().any(|f| f.severity != Severity::Note);
    if let Some((x, line, field)) = early_at.filter(|_| !warned) {
        // No interval shorter than the tolerance allows, yet the first
        // evaluation ahead of the schedule.
        out.push(finding(
            line,
            true,
            format!(
                "first evaluation at {field} {}, earlier than the schedule's first, {} (`{}`, tolerance {})",
                fmt(x),
                fmt(every),
                sch.every.0,
                fmt(tol)
            ),
        ));
    }
    out
}
