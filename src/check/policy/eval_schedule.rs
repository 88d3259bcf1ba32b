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
        // Evaluations after the one that met the quality target cannot
        // have stopped the clock (the run was over): not the schedule's.
        if facts.target_met_at.is_some_and(|t| *line > t) {
            break;
        }
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
    // Positions all below one interval of a schedule counted in samples are
    // not in its unit (an epoch count where samples are expected): nothing
    // to compare. A schedule of at most one epoch is in the positions'
    // unit: evaluations within the first epoch are positions of its own.
    if every > 1.0 && pos.iter().all(|(p, _, _)| *p < every - tol) {
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
    let first_early_tol = match &sch.first_early_tolerance {
        Some((_, e)) => eval_num(e, &s),
        None => first_tol,
    };
    let drift = sch
        .drift
        .as_ref()
        .and_then(|(_, e)| eval_num(e, &s))
        .unwrap_or(0.0)
        .max(0.0);
    // The rules' own first position, when they skip early evaluations.
    let want = sch.first.as_ref().and_then(|(src, e)| {
        let w = eval_num(e, &s)?;
        Some((src.as_str(), w))
    });
    if let (Some((first_expr_src, want)), Some((p0, line, field))) = (want, pos.first()) {
        if let (Some(ftol), Some(etol)) = (first_tol, first_early_tol) {
            let early = *p0 < want;
            let t = if early { etol } else { ftol };
            if (p0 - want).abs() > t + slack {
                out.push(finding(
                    *line,
                    early,
                    format!(
                        "first evaluation at {field} {}, {} than the rules' {} (`{first_expr_src}`, tolerance {}{})",
                        fmt(*p0),
                        if early { "earlier" } else { "later" },
                        fmt(want),
                        fmt(t),
                        if etol == ftol { "" } else if early { " on the early side" } else { " on the late side" }
                    ),
                ));
            }
        }
    }
    // Without a first position of their own, the rules' schedule starts
    // one interval in: a first evaluation before that came earlier than
    // the schedule allows, though no interval after it is short.
    // (One at 0 is counted from 0: `epoch_num` 0, 1, 2 for the ends of
    // the first three epochs.)
    let early_at = pos
        .first()
        .filter(|_| want.is_none())
        .filter(|(x, _, _)| *x > slack && *x < every - tol - slack)
        .copied();
    // The first interval may round to a step boundary at both ends of the
    // skipped evaluations: it gets the first position's tolerance.
    let first_gap_tol = first_tol.unwrap_or(tol).max(tol);
    let grid = Grid::new(
        &pos,
        every,
        tol,
        drift,
        slack,
        want.map(|(_, w)| (w, first_gap_tol)),
    );
    let bad: Vec<Gap> = pos
        .windows(2)
        .enumerate()
        .filter_map(|(i, w)| {
            let d = w[1].0 - w[0].0;
            let t = if i == 0 && want.is_some() {
                first_gap_tol
            } else {
                tol
            };
            ((d - every).abs() > t + slack).then(|| Gap {
                from: w[0].0,
                to: w[1].0,
                line: w[1].1,
                field: w[1].2,
                shorter: d < every,
                // A short interval after a late evaluation that brings the
                // next back to the schedule is not early.
                early: d < every && grid.early(i + 1),
            })
        })
        .collect();
    let shorter = bad.iter().filter(|g| g.shorter).count();
    let early = bad.iter().filter(|g| g.early).count();
    let longer = bad.len() - shorter;
    // Report the first early interval when there is one (the one that
    // matters), else the first shorter one, else the first longer one.
    let shown = bad
        .iter()
        .find(|g| g.early)
        .or(bad.iter().find(|g| g.shorter))
        .or(bad.first());
    if let Some(g) = shown {
        let late_only = if shorter > 0 && early == 0 {
            ", each shorter one after a late evaluation, none earlier than the schedule"
        } else {
            ""
        };
        out.push(finding(
            g.line,
            early > 0,
            format!(
                "{} of {} evaluation intervals are not {} (`{}`, tolerance {}; {shorter} shorter, {longer} longer{late_only}); first: {} {} -> {}",
                bad.len(),
                pos.len().saturating_sub(1),
                fmt(every),
                sch.every.0,
                fmt(tol),
                g.field,
                fmt(g.from),
                fmt(g.to)
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
    let warned = out.iter().any(|f| f.severity != Severity::Note);
    if !warned {
        // Every interval within the tolerance, yet more often than the
        // schedule over many of them (320 where 384 is due, each a batch
        // short): the positions run ahead of the schedule.
        if let Some(i) = (1..pos.len()).find(|&i| grid.early(i)) {
            let (x, line, field) = pos[i];
            let (n, at, anchor) = grid.at(i);
            let rounding = if drift > slack {
                format!(", and {} an interval for rounding to a step", fmt(drift))
            } else {
                String::new()
            };
            out.push(finding(
                line,
                true,
                format!(
                    "evaluation at {field} {} is earlier than the schedule: {n} intervals of {} (`{}`) after {} put it at {} (tolerance {}{rounding})",
                    fmt(x),
                    fmt(every),
                    sch.every.0,
                    fmt(anchor),
                    fmt(at),
                    fmt(tol)
                ),
            ));
        }
    }
    // A first evaluation an interval or more late, where the rules give
    // no first position of their own: it cannot stop the clock early, a
    // note (only when nothing else is said of the log).
    if out.is_empty() && want.is_none() {
        if let Some((x, line, field)) = pos.first() {
            if *x > every + tol + slack {
                out.push(finding(
                    *line,
                    false,
                    format!(
                        "first evaluation at {field} {}, later than the schedule's first, {} (`{}`, tolerance {})",
                        fmt(*x),
                        fmt(every),
                        sch.every.0,
                        fmt(tol)
                    ),
                ));
            }
        }
    }
    out
}

/// One interval outside the tolerance.
struct Gap<'a> {
    from: f64,
    to: f64,
    line: u64,
    field: &'a str,
    shorter: bool,
    /// Its end is earlier than the schedule's grid allows.
    early: bool,
}

/// Where the schedule puts each evaluation: whole intervals from an
/// anchor, each position allowed `tol` plus `drift` for every interval
/// (step rounding that adds up). An evaluation before the next place the
/// schedule has after the one before it is early, and takes no place of
/// the schedule (an extra one); any other takes the next place, or a later
/// one when whole intervals were skipped. Positions are never moved onto
/// the grid: a short interval after a late evaluation is not early.
struct Grid {
    /// For each position after the anchor's: early, and the place (in
    /// intervals from the anchor) it was due at.
    slots: Vec<Option<(bool, u32)>>,
    anchor: f64,
    every: f64,
}

impl Grid {
    fn new(
        pos: &[(f64, u64, &str)],
        every: f64,
        tol: f64,
        drift: f64,
        slack: f64,
        want: Option<(f64, f64)>,
    ) -> Grid {
        let xs: Vec<f64> = pos.iter().map(|p| p.0).collect();
        let mut slots = vec![None; xs.len()];
        let whole = |x: f64, anchor: f64| ((x - anchor + tol + slack) / every).floor().max(0.0);
        // Where counting starts. With a first position of the rules' own,
        // the interval after the first evaluation rounds at both ends: the
        // grid starts at the second evaluation, or where it was due when it
        // came later. Without one, the schedule counts from 0.
        let start = match want {
            // The second evaluation before the rules' first place and one
            // interval (less the first interval's tolerance) is an extra
            // one: early, and it takes no place; counting starts where the
            // second was due.
            Some((w, t1)) if xs.len() >= 2 && xs[1] < w + every - t1 - slack => {
                slots[1] = Some((true, 1));
                Some((1, xs[0].max(w) + every, -1.0))
            }
            Some((w, _)) if xs.len() >= 2 => {
                let due = xs[0].max(w) + every;
                let anchor = xs[1].min(due);
                Some((1, anchor, whole(xs[1], anchor)))
            }
            Some(_) => None,
            None => xs.first().map(|&x0| (0, 0.0, whole(x0, 0.0))),
        };
        let Some((i0, anchor, n0)) = start else {
            return Grid {
                slots,
                anchor: 0.0,
                every,
            };
        };
        let mut n = n0;
        for i in i0 + 1..xs.len() {
            let next = n + 1.0;
            let due = anchor + next * every - tol - next * drift - slack;
            let early = xs[i] < due;
            slots[i] = Some((early, next.max(0.0) as u32));
            if !early {
                n = next.max(whole(xs[i], anchor));
            }
        }
        Grid {
            slots,
            anchor,
            every,
        }
    }

    /// The place position `i` was due at: intervals from the anchor, the
    /// position, and the anchor.
    fn at(&self, i: usize) -> (u32, f64, f64) {
        let n = self.slots.get(i).copied().flatten().map_or(0, |(_, n)| n);
        (n, self.anchor + f64::from(n) * self.every, self.anchor)
    }

    /// Whether position `i` is earlier than the grid allows.
    fn early(&self, i: usize) -> bool {
        self.slots
            .get(i)
            .copied()
            .flatten()
            .is_some_and(|(early, _)| early)
    }
}
