//! Where the evaluations are, against the schedule the rules define
//! (issue 5 item 6, logging#79): the interval between consecutive
//! `eval_accuracy` positions, and the first position where the rules skip
//! early evaluations.

use super::hyperparams::state;
use super::{BenchmarkPolicy, LogFacts, PolicyRules};
use crate::check::rules::expr::{number, Expr};
use crate::finding::code;
use crate::finding::Finding;

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
    let rule = rules.rule(&format!("benchmarks.{benchmark}.eval_schedule"));
    let warn = |line: u64, msg: String| {
        Finding::of(code::POL030, path, msg)
            .at_line(Some(line))
            .with_help(rules.help("POL030"))
            .with_rule(rule.clone())
    };
    if let (Some((first_expr_src, first_expr)), Some((p0, line, field))) = (&sch.first, pos.first())
    {
        let first_tol = match &sch.first_tolerance {
            Some((_, e)) => eval_num(e, &s),
            None => Some(tol),
        };
        if let (Some(want), Some(ftol)) = (eval_num(first_expr, &s), first_tol) {
            if (p0 - want).abs() > ftol + slack {
                out.push(warn(
                    *line,
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
    let bad: Vec<(f64, f64, u64, &str)> = pos
        .windows(2)
        .filter_map(|w| {
            let d = w[1].0 - w[0].0;
            ((d - every).abs() > tol + slack).then_some((w[0].0, w[1].0, w[1].1, w[1].2))
        })
        .collect();
    if let Some((a, b, line, field)) = bad.first() {
        let shorter = bad.iter().filter(|(a, b, _, _)| b - a < every).count();
        out.push(warn(
            *line,
            format!(
                "{} of {} evaluation intervals are not {} (`{}`, tolerance {}; {shorter} shorter, {} longer); first: {field} {} -> {}",
                bad.len(),
                pos.len().saturating_sub(1),
                fmt(every),
                sch.every.0,
                fmt(tol),
                bad.len() - shorter,
                fmt(*a),
                fmt(*b)
            ),
        ));
    }
    out
}
