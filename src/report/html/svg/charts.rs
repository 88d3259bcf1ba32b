//! The three charts of a benchmark folder, drawn with the primitives of
//! [`super`]: evaluation curves, times to train with the olympic roles, and
//! the submission against the reference convergence points.

use super::*;
pub use crate::report::html::target::QualityTarget;

/// One run's evaluation curve.
#[derive(Debug, Clone)]
pub struct Curve {
    pub name: String,
    /// Colour index (the run's position in its folder).
    pub index: usize,
    pub points: Vec<(f64, f64)>,
    /// Where the run converged (the convergence value), when it did.
    pub target: Option<f64>,
}

/// The evaluation metric against epochs or samples; `None` without points.
pub fn eval_chart(
    id: &str,
    title: String,
    x_label: &str,
    y_label: &str,
    curves: &[Curve],
    target: Option<QualityTarget>,
) -> Option<Chart> {
    let all: Vec<(f64, f64)> = curves
        .iter()
        .flat_map(|c| c.points.iter().copied())
        .collect();
    if all.is_empty() {
        return None;
    }
    let (x0, x1) = minmax(all.iter().map(|p| p.0));
    // The target is inside the picture even when no run came near it.
    let (y0, y1) = minmax(
        all.iter()
            .map(|p| p.1)
            .chain(target.map(|t| t.value).filter(|v| v.is_finite())),
    );
    // Positions start at 0 unless the first evaluation comes late.
    let (x0, x1) = if x0 >= 0.0 && x0 <= 0.3 * x1 {
        (0.0, padded(x0, x1).1)
    } else {
        padded(x0, x1)
    };
    let (y0, y1) = padded(y0, y1);
    let (rx0, rx1) = x_range();
    let (ry0, ry1) = y_range();
    let axes = Axes {
        x: Scale::new(x0, x1, rx0, rx1, false),
        y: Scale::new(y0, y1, ry0, ry1, false),
    };
    let mut c = base_chart(id, "eval", title, x_label, y_label);
    c.frame = axes.frame();
    c.x_ticks = axes.x_ticks(&human);
    c.y_ticks = axes.y_ticks(&human);
    let converged = curves.iter().filter(|c| c.target.is_some()).count();
    // Runs whose evaluations are identical to an earlier run's: drawn
    // dashed over it (both colours show) and named in the legend.
    let same_as: Vec<Option<usize>> = curves
        .iter()
        .enumerate()
        .map(|(i, c)| {
            curves[..i]
                .iter()
                .position(|o| !c.points.is_empty() && o.points == c.points)
        })
        .collect();
    let identical = same_as.iter().filter(|s| s.is_some()).count();
    c.desc = format!(
        "{} runs, {converged} converged{}; each line is one run, a ringed dot marks where it reached the target",
        curves.len(),
        if identical > 0 {
            format!(", {identical} with evaluations identical to another run's (dashed)")
        } else {
            String::new()
        }
    );
    if let Some(t) = target {
        let y = axes.y.map(t.value);
        c.guides.push(Guide {
            class: "quality-target".into(),
            x1: px(LEFT),
            y1: px(y),
            x2: px(WIDTH - RIGHT),
            y2: px(y),
            title: format!(
                "quality target: {} {}",
                if t.higher_is_better { ">=" } else { "<=" },
                human(t.value)
            ),
        });
        // The label sits inside the frame, on the side away from the
        // curves' start.
        let below = if t.higher_is_better { 14.0 } else { -5.0 };
        let ly = (y + below).clamp(TOP + 12.0, HEIGHT - BOTTOM - 4.0);
        c.labels.push(Label {
            class: "target-label".into(),
            x: px(WIDTH - RIGHT - 6.0),
            y: px(ly),
            anchor: "end",
            transform: String::new(),
            text: format!(
                "target {} {}",
                if t.higher_is_better { "≥" } else { "≤" },
                human(t.value)
            ),
        });
    }
    for (k, curve) in curves.iter().enumerate() {
        if curve.points.is_empty() {
            continue;
        }
        let dup = same_as.get(k).copied().flatten();
        let class = match dup {
            Some(_) => format!("run s{} identical", curve.index % PALETTE),
            None => format!("run s{}", curve.index % PALETTE),
        };
        let pts = downsample(&curve.points, MAX_POINTS);
        let points: Vec<String> = pts.iter().map(|p| axes.point(*p)).collect();
        let status = match curve.target {
            Some(t) => format!("converged at {}", human(t)),
            None => "did not converge".to_string(),
        };
        c.lines.push(Line {
            class: if curve.target.is_some() {
                class.clone()
            } else {
                format!("{class} unconverged")
            },
            points: points.join(" "),
            title: format!("{}: {status}", curve.name),
        });
        if let Some(t) = curve.target {
            // The evaluation at (or nearest to) the convergence value.
            if let Some(p) = curve
                .points
                .iter()
                .min_by(|a, b| (a.0 - t).abs().total_cmp(&(b.0 - t).abs()))
            {
                c.dots.push(Dot {
                    class: format!("target s{}", curve.index % PALETTE),
                    cx: px(axes.x.map(p.0)),
                    cy: px(axes.y.map(p.1)),
                    r: "4.5".into(),
                    title: format!(
                        "{}: target reached at {} ({})",
                        curve.name,
                        human(p.0),
                        human(p.1)
                    ),
                });
            }
        }
        c.legend.push(LegendItem {
            class: match dup {
                Some(_) => format!("line s{} identical", curve.index % PALETTE),
                None => format!("line s{}", curve.index % PALETTE),
            },
            label: match dup.and_then(|d| curves.get(d)) {
                Some(first) => format!("{} (identical to {})", curve.name, first.name),
                None => curve.name.clone(),
            },
        });
    }
    c.legend.push(LegendItem {
        class: "target-key".into(),
        label: "target reached (convergence point)".into(),
    });
    if target.is_some() {
        c.legend.push(LegendItem {
            class: "quality-target".into(),
            label: "quality target".into(),
        });
    }
    c.keep_inside();
    Some(c)
}

fn minmax(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        })
}

pub use crate::aggregate::stats::olympic::Role;

/// The CSS class of a run's role on the page.
fn role_class(role: Role) -> &'static str {
    match role {
        Role::Counted => "counted",
        Role::DroppedFastest => "dropped-fast",
        Role::DroppedSlowest => "dropped-slow",
        Role::Failed => "failed",
        Role::Unscored => "unscored",
    }
}

/// One run's time to train.
#[derive(Debug, Clone)]
pub struct TimedRun {
    pub name: String,
    pub minutes: Option<f64>,
    pub role: Role,
}

/// Time to train per run, one bar per run; `mean` is the olympic mean
/// (unscaled), drawn as a line.
pub fn time_chart(id: &str, title: String, runs: &[TimedRun], mean: Option<f64>) -> Option<Chart> {
    if runs.is_empty() {
        return None;
    }
    let max = runs
        .iter()
        .filter_map(|r| r.minutes)
        .chain(mean)
        .filter(|m| m.is_finite())
        .fold(0.0f64, f64::max);
    let max = if max > 0.0 { max * 1.08 } else { 1.0 };
    let row = 22.0f64;
    let height = (TOP + BOTTOM + row * runs.len() as f64).max(120.0);
    let left = 92.0;
    let x = Scale::new(0.0, max, left, WIDTH - RIGHT, false);
    let mut c = base_chart(id, "time", title, "minutes (run_stop − run_start)", "");
    c.height = px(height);
    c.frame = Frame {
        x: px(left),
        y: px(TOP),
        w: px(WIDTH - RIGHT - left),
        h: px(height - TOP - BOTTOM),
    };
    c.x_label.y = px(height - 8.0);
    c.x_label.x = px(left + (WIDTH - RIGHT - left) / 2.0);
    c.y_label = Label::default();
    c.x_ticks = x
        .ticks()
        .into_iter()
        .map(|v| Tick {
            x1: px(x.map(v)),
            y1: px(TOP),
            x2: px(x.map(v)),
            y2: px(height - BOTTOM),
            tx: px(x.map(v)),
            ty: px(height - BOTTOM + 15.0),
            anchor: "middle",
            label: human(v),
        })
        .collect();
    for (i, r) in runs.iter().enumerate() {
        let y = TOP + row * i as f64;
        c.labels.push(Label {
            class: format!("run-name {}", role_class(r.role)),
            x: px(left - 6.0),
            y: px(y + row / 2.0 + 4.0),
            anchor: "end",
            transform: String::new(),
            text: r.name.clone(),
        });
        match r.minutes.filter(|m| m.is_finite() && *m >= 0.0) {
            Some(m) => c.bars.push(Bar {
                class: format!("bar {}", role_class(r.role)),
                x: px(left),
                y: px(y + 4.0),
                w: px((x.map(m) - left).max(1.0)),
                h: px(row - 8.0),
                title: format!("{}: {} min, {}", r.name, human(m), r.role.describe()),
            }),
            None => c.labels.push(Label {
                class: "no-time".into(),
                x: px(left + 4.0),
                y: px(y + row / 2.0 + 4.0),
                anchor: "start",
                transform: String::new(),
                text: format!("no time to train ({})", r.role.describe()),
            }),
        }
    }
    if let Some(m) = mean.filter(|m| m.is_finite()) {
        c.guides.push(Guide {
            class: "mean".into(),
            x1: px(x.map(m)),
            y1: px(TOP),
            x2: px(x.map(m)),
            y2: px(height - BOTTOM),
            title: format!("olympic mean {} min", human(m)),
        });
    }
    let mut roles: Vec<Role> = runs.iter().map(|r| r.role).collect();
    roles.sort_by_key(|r| *r as u8);
    roles.dedup();
    c.desc = format!(
        "time to train of {} runs; {}",
        runs.len(),
        roles
            .iter()
            .map(|r| format!(
                "{} {}",
                runs.iter().filter(|x| x.role == *r).count(),
                r.describe()
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for r in roles {
        c.legend.push(LegendItem {
            class: role_class(r).into(),
            label: r.describe().into(),
        });
    }
    if mean.is_some() {
        c.legend.push(LegendItem {
            class: "mean-key".into(),
            label: "olympic mean".into(),
        });
    }
    c.keep_inside();
    Some(c)
}

/// One reference point of the RCP table.
#[derive(Debug, Clone)]
pub struct RefPoint {
    pub name: String,
    pub batch_size: f64,
    pub mean: f64,
    pub min_mean: f64,
    /// Kept by pruning (what the check matches against).
    pub active: bool,
}

/// What the RCP picture shows.
#[derive(Debug, Clone)]
pub struct RcpPicture {
    pub unit: String,
    pub refs: Vec<RefPoint>,
    /// The reference the check used when it is not a record (interpolated).
    pub used: Option<RefPoint>,
    /// Submission: global batch size, olympic mean of the convergence
    /// values, whether the check passed.
    pub submission: Option<(f64, f64, bool)>,
    /// The runs' convergence values (converged runs only).
    pub runs: Vec<f64>,
}

/// Reference mean and minimum acceptable mean against batch size, and the
/// submission's point; `None` without reference points.
pub fn rcp_chart(id: &str, title: String, p: &RcpPicture) -> Option<Chart> {
    if p.refs.is_empty() {
        return None;
    }
    let mut xs: Vec<f64> = p.refs.iter().map(|r| r.batch_size).collect();
    let mut ys: Vec<f64> = p.refs.iter().flat_map(|r| [r.mean, r.min_mean]).collect();
    if let Some((bs, m, _)) = p.submission {
        xs.push(bs);
        ys.push(m);
    }
    if let Some(u) = &p.used {
        xs.push(u.batch_size);
        ys.extend([u.mean, u.min_mean]);
    }
    ys.extend(p.runs.iter().copied());
    let (x0, x1) = minmax(xs.iter().copied());
    let (y0, y1) = minmax(ys.iter().copied());
    if !x0.is_finite() || !y0.is_finite() {
        return None;
    }
    let log = x0 > 0.0 && x1 / x0 > 8.0;
    let (x0, x1) = if log {
        (x0 / 1.25, x1 * 1.25)
    } else {
        padded(x0, x1)
    };
    let (y0, y1) = padded(y0, y1);
    let (rx0, rx1) = x_range();
    let (ry0, ry1) = y_range();
    let axes = Axes {
        x: Scale::new(x0, x1, rx0, rx1, log),
        y: Scale::new(y0, y1, ry0, ry1, false),
    };
    let x_label = if log {
        "global batch size (log scale)"
    } else {
        "global batch size"
    };
    let y_label = format!("convergence ({})", p.unit);
    let mut c = base_chart(id, "rcp", title, x_label, &y_label);
    c.frame = axes.frame();
    c.x_ticks = axes.x_ticks(&whole);
    c.y_ticks = axes.y_ticks(&human);
    let active: Vec<&RefPoint> = p.refs.iter().filter(|r| r.active).collect();
    if active.len() > 1 {
        c.lines.push(Line {
            class: "ref-mean".into(),
            points: active
                .iter()
                .map(|r| axes.point((r.batch_size, r.mean)))
                .collect::<Vec<_>>()
                .join(" "),
            title: "reference mean (pruned RCPs)".into(),
        });
        c.lines.push(Line {
            class: "ref-min".into(),
            points: active
                .iter()
                .map(|r| axes.point((r.batch_size, r.min_mean)))
                .collect::<Vec<_>>()
                .join(" "),
            title: "minimum acceptable mean".into(),
        });
    }
    for r in &p.refs {
        let class = if r.active { "ref" } else { "ref pruned" };
        c.dots.push(Dot {
            class: format!("{class} mean-dot"),
            cx: px(axes.x.map(r.batch_size)),
            cy: px(axes.y.map(r.mean)),
            r: "3.5".into(),
            title: format!(
                "{}: batch size {}, mean {}, minimum acceptable {}{}",
                r.name,
                whole(r.batch_size),
                human(r.mean),
                human(r.min_mean),
                if r.active { "" } else { " (pruned)" }
            ),
        });
        c.dots.push(Dot {
            class: format!("{class} min-dot"),
            cx: px(axes.x.map(r.batch_size)),
            cy: px(axes.y.map(r.min_mean)),
            r: "2.5".into(),
            title: format!("{}: minimum acceptable mean {}", r.name, human(r.min_mean)),
        });
    }
    if let Some(u) = &p.used {
        c.dots.push(Dot {
            class: "interp".into(),
            cx: px(axes.x.map(u.batch_size)),
            cy: px(axes.y.map(u.mean)),
            r: "3.5".into(),
            title: format!(
                "{}: interpolated mean {}, minimum acceptable {}",
                u.name,
                human(u.mean),
                human(u.min_mean)
            ),
        });
        c.guides.push(Guide {
            class: "threshold".into(),
            x1: px(axes.x.map(u.batch_size) - 10.0),
            y1: px(axes.y.map(u.min_mean)),
            x2: px(axes.x.map(u.batch_size) + 10.0),
            y2: px(axes.y.map(u.min_mean)),
            title: format!("minimum acceptable mean {}", human(u.min_mean)),
        });
    }
    if let Some((bs, _, _)) = p.submission {
        for v in &p.runs {
            c.dots.push(Dot {
                class: "run-conv".into(),
                cx: px(axes.x.map(bs)),
                cy: px(axes.y.map(*v)),
                r: "2".into(),
                title: format!("a run converged at {}", human(*v)),
            });
        }
    }
    if let Some((bs, m, passed)) = p.submission {
        c.dots.push(Dot {
            class: if passed {
                "subm pass".into()
            } else {
                "subm fail".into()
            },
            cx: px(axes.x.map(bs)),
            cy: px(axes.y.map(m)),
            r: "6".into(),
            title: format!(
                "submission: batch size {}, olympic mean {} ({})",
                whole(bs),
                human(m),
                if passed { "passes" } else { "fails" }
            ),
        });
    }
    c.desc = format!(
        "{} reference points ({} after pruning){}",
        p.refs.len(),
        active.len(),
        match p.submission {
            Some((bs, m, ok)) => format!(
                "; submission at batch size {} with mean {} {}",
                whole(bs),
                human(m),
                if ok { "passes" } else { "fails" }
            ),
            None => "; no submission point".into(),
        }
    );
    for (class, label) in [
        ("ref-mean", "reference mean"),
        ("ref-min", "minimum acceptable mean"),
        ("pruned", "pruned reference"),
        ("subm", "submission mean"),
        ("run-conv", "runs"),
    ] {
        if class == "pruned" && p.refs.iter().all(|r| r.active) {
            continue;
        }
        c.legend.push(LegendItem {
            class: class.into(),
            label: label.into(),
        });
    }
    if p.used.is_some() {
        c.legend.push(LegendItem {
            class: "interp".into(),
            label: "interpolated reference".into(),
        });
    }
    c.keep_inside();
    Some(c)
}
