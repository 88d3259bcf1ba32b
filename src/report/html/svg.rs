//! Chart geometry for the HTML report, computed here and drawn by
//! `templates/chart.html`. A [`Chart`] holds only coordinates (formatted
//! numbers) and text; the template escapes every text, so a run name or a
//! metric name from a log is shown, never interpreted.
//!
//! Three pictures per benchmark folder:
//! - [`eval_chart`]: the evaluation metric against epochs or samples, one
//!   polyline per run, a marker where the run converged;
//! - [`time_chart`]: time to train per run, with the runs the olympic score
//!   drops (fastest, slowest, failed) marked;
//! - [`rcp_chart`]: reference mean and minimum acceptable mean against batch
//!   size, and the submission's point.

use serde::Serialize;

/// Most points drawn per polyline; longer series are downsampled.
pub const MAX_POINTS: usize = 240;

const WIDTH: f64 = 560.0;
const HEIGHT: f64 = 300.0;
const LEFT: f64 = 66.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 46.0;
/// Runs get `s0`..`s9` colour classes.
const PALETTE: usize = 10;

#[derive(Debug, Clone, Serialize, Default)]
pub struct Chart {
    pub id: String,
    /// `eval`, `time` or `rcp` (CSS class `chart-<kind>`).
    pub kind: &'static str,
    pub title: String,
    /// A sentence for screen readers and print.
    pub desc: String,
    pub width: String,
    pub height: String,
    pub frame: Frame,
    pub x_label: Label,
    pub y_label: Label,
    pub x_ticks: Vec<Tick>,
    pub y_ticks: Vec<Tick>,
    pub bars: Vec<Bar>,
    pub guides: Vec<Guide>,
    pub lines: Vec<Line>,
    pub dots: Vec<Dot>,
    pub labels: Vec<Label>,
    pub legend: Vec<LegendItem>,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct Frame {
    pub x: String,
    pub y: String,
    pub w: String,
    pub h: String,
}

/// A grid line from (x1, y1) to (x2, y2) and its label at (tx, ty).
#[derive(Debug, Clone, Serialize)]
pub struct Tick {
    pub x1: String,
    pub y1: String,
    pub x2: String,
    pub y2: String,
    pub tx: String,
    pub ty: String,
    pub anchor: &'static str,
    pub label: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Bar {
    pub class: String,
    pub x: String,
    pub y: String,
    pub w: String,
    pub h: String,
    pub title: String,
}

/// A straight reference line (olympic mean, convergence target).
#[derive(Debug, Clone, Serialize)]
pub struct Guide {
    pub class: String,
    pub x1: String,
    pub y1: String,
    pub x2: String,
    pub y2: String,
    pub title: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Line {
    pub class: String,
    /// `x,y x,y ...`
    pub points: String,
    pub title: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Dot {
    pub class: String,
    pub cx: String,
    pub cy: String,
    pub r: String,
    pub title: String,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct Label {
    pub class: String,
    pub x: String,
    pub y: String,
    pub anchor: &'static str,
    /// `rotate(-90 x y)` for the y-axis label, else empty.
    pub transform: String,
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct LegendItem {
    pub class: String,
    pub label: String,
}

/// A coordinate with at most one decimal, without a trailing `.0`.
pub fn px(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r == r.trunc() {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// A number for people: 4 significant digits, `k`/`M`/`G` for large ones.
pub fn human(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    if a == 0.0 {
        return "0".into();
    }
    let digits = scaled.abs().log10().floor() as i32 + 1;
    let decimals = (4 - digits).clamp(0, 6) as usize;
    let t = format!("{scaled:.decimals$}");
    let t = if t.contains('.') {
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        t
    };
    format!("{t}{suffix}")
}

/// Whole numbers below a million in full (batch sizes), else [`human`].
pub fn whole(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e6 {
        format!("{}", v as i64)
    } else {
        human(v)
    }
}

/// A linear or base-2 logarithmic map from data to pixels.
#[derive(Debug, Clone, Copy)]
struct Scale {
    d0: f64,
    d1: f64,
    r0: f64,
    r1: f64,
    log: bool,
}

impl Scale {
    fn new(mut d0: f64, mut d1: f64, r0: f64, r1: f64, log: bool) -> Scale {
        if log {
            d0 = d0.max(f64::MIN_POSITIVE).log2();
            d1 = d1.max(f64::MIN_POSITIVE).log2();
        }
        if (d1 - d0).abs() < 1e-12 {
            let pad = if d0 == 0.0 { 1.0 } else { d0.abs() * 0.05 };
            d0 -= pad;
            d1 += pad;
        }
        Scale {
            d0,
            d1,
            r0,
            r1,
            log,
        }
    }

    fn map(&self, v: f64) -> f64 {
        let v = if self.log {
            v.max(f64::MIN_POSITIVE).log2()
        } else {
            v
        };
        self.r0 + (v - self.d0) / (self.d1 - self.d0) * (self.r1 - self.r0)
    }

    /// Tick values inside the domain.
    fn ticks(&self) -> Vec<f64> {
        if self.log {
            let lo = self.d0.ceil() as i64;
            let hi = self.d1.floor() as i64;
            let step = ((hi - lo) / 6 + 1).max(1);
            return (lo..=hi)
                .step_by(step as usize)
                .map(|e| 2f64.powi(e as i32))
                .collect();
        }
        nice_ticks(self.d0, self.d1, 6)
    }
}

/// Round tick values (1, 2, 5 times a power of ten) covering [lo, hi].
fn nice_ticks(lo: f64, hi: f64, want: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return vec![];
    }
    let raw = (hi - lo) / want as f64;
    let exp = raw.log10().floor() as i32;
    let m = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .find(|m| m * 10f64.powi(exp) >= raw)
        .unwrap_or(10.0);
    // i × m × 10^exp, dividing by 10^-exp when exp < 0 so that 0.6 is 0.6.
    let value = |i: i64| {
        let v = if exp < 0 {
            i as f64 * m / 10f64.powi(-exp)
        } else {
            i as f64 * m * 10f64.powi(exp)
        };
        if v == 0.0 {
            0.0
        } else {
            v
        }
    };
    let step = value(1);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).take(50).map(value).collect()
}

/// Domain with a little padding, rounded out to nice ticks.
fn padded(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite()) {
        return (0.0, 1.0);
    }
    let span = (hi - lo).abs();
    let pad = if span == 0.0 {
        lo.abs().max(1.0) * 0.05
    } else {
        span * 0.05
    };
    (lo - pad, hi + pad)
}

/// Keeps at most `max` points: the first, the last, and per bucket the
/// lowest and the highest value (so peaks and dips survive).
pub fn downsample(points: &[(f64, f64)], max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max || max < 4 {
        return points.to_vec();
    }
    let inner = &points[1..points.len() - 1];
    let buckets = (max - 2) / 2;
    let size = inner.len().div_ceil(buckets);
    let mut out = vec![points[0]];
    for chunk in inner.chunks(size.max(1)) {
        let lo = chunk
            .iter()
            .enumerate()
            .min_by(|a, b| a.1 .1.total_cmp(&b.1 .1))
            .map(|(i, _)| i)
            .unwrap_or(0);
        let hi = chunk
            .iter()
            .enumerate()
            .max_by(|a, b| a.1 .1.total_cmp(&b.1 .1))
            .map(|(i, _)| i)
            .unwrap_or(0);
        let (a, b) = if lo <= hi { (lo, hi) } else { (hi, lo) };
        out.push(chunk[a]);
        if b != a {
            out.push(chunk[b]);
        }
    }
    out.push(points[points.len() - 1]);
    out
}

struct Axes {
    x: Scale,
    y: Scale,
}

impl Axes {
    fn frame(&self) -> Frame {
        Frame {
            x: px(LEFT),
            y: px(TOP),
            w: px(WIDTH - LEFT - RIGHT),
            h: px(HEIGHT - TOP - BOTTOM),
        }
    }

    fn x_ticks(&self, fmt: &dyn Fn(f64) -> String) -> Vec<Tick> {
        self.x
            .ticks()
            .into_iter()
            .map(|v| {
                let x = self.x.map(v);
                Tick {
                    x1: px(x),
                    y1: px(TOP),
                    x2: px(x),
                    y2: px(HEIGHT - BOTTOM),
                    tx: px(x),
                    ty: px(HEIGHT - BOTTOM + 15.0),
                    anchor: "middle",
                    label: fmt(v),
                }
            })
            .collect()
    }

    fn y_ticks(&self, fmt: &dyn Fn(f64) -> String) -> Vec<Tick> {
        self.y
            .ticks()
            .into_iter()
            .map(|v| {
                let y = self.y.map(v);
                Tick {
                    x1: px(LEFT),
                    y1: px(y),
                    x2: px(WIDTH - RIGHT),
                    y2: px(y),
                    tx: px(LEFT - 5.0),
                    ty: px(y + 4.0),
                    anchor: "end",
                    label: fmt(v),
                }
            })
            .collect()
    }

    fn point(&self, p: (f64, f64)) -> String {
        format!("{},{}", px(self.x.map(p.0)), px(self.y.map(p.1)))
    }
}

fn base_chart(id: &str, kind: &'static str, title: String, x_label: &str, y_label: &str) -> Chart {
    Chart {
        id: id.to_string(),
        kind,
        title,
        width: px(WIDTH),
        height: px(HEIGHT),
        x_label: Label {
            class: "axis-label".into(),
            x: px(LEFT + (WIDTH - LEFT - RIGHT) / 2.0),
            y: px(HEIGHT - 8.0),
            anchor: "middle",
            transform: String::new(),
            text: x_label.to_string(),
        },
        y_label: Label {
            class: "axis-label".into(),
            x: px(14.0),
            y: px(TOP + (HEIGHT - TOP - BOTTOM) / 2.0),
            anchor: "middle",
            transform: format!(
                "rotate(-90 {} {})",
                px(14.0),
                px(TOP + (HEIGHT - TOP - BOTTOM) / 2.0)
            ),
            text: y_label.to_string(),
        },
        ..Chart::default()
    }
}

fn x_range() -> (f64, f64) {
    (LEFT, WIDTH - RIGHT)
}

fn y_range() -> (f64, f64) {
    (HEIGHT - BOTTOM, TOP)
}

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
) -> Option<Chart> {
    let all: Vec<(f64, f64)> = curves
        .iter()
        .flat_map(|c| c.points.iter().copied())
        .collect();
    if all.is_empty() {
        return None;
    }
    let (x0, x1) = minmax(all.iter().map(|p| p.0));
    let (y0, y1) = minmax(all.iter().map(|p| p.1));
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
    c.desc = format!(
        "{} runs, {converged} converged; each line is one run, a ringed dot marks where it reached the target",
        curves.len()
    );
    for curve in curves {
        if curve.points.is_empty() {
            continue;
        }
        let class = format!("run s{}", curve.index % PALETTE);
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
            class: format!("line s{}", curve.index % PALETTE),
            label: curve.name.clone(),
        });
    }
    c.legend.push(LegendItem {
        class: "target-key".into(),
        label: "target reached (convergence point)".into(),
    });
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
            y1: px(TOP - 4.0),
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
        ys.push(u.min_mean);
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
    Some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short() {
        assert_eq!(px(12.0), "12");
        assert_eq!(px(12.04), "12");
        assert_eq!(px(12.06), "12.1");
        assert_eq!(human(0.0), "0");
        assert_eq!(human(0.75712), "0.7571");
        assert_eq!(human(46080.0), "46.08k");
        assert_eq!(human(1_536_000.0), "1.536M");
        assert_eq!(human(12.5), "12.5");
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(nice_ticks(0.0, 1.0, 5), vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert_eq!(nice_ticks(3.0, 27.0, 6), vec![5.0, 10.0, 15.0, 20.0, 25.0]);
    }

    #[test]
    fn downsample_keeps_ends_and_extremes() {
        let pts: Vec<(f64, f64)> = (0..10_000)
            .map(|i| (i as f64, if i == 5000 { 100.0 } else { (i % 7) as f64 }))
            .collect();
        let d = downsample(&pts, 100);
        assert!(d.len() <= 100, "{}", d.len());
        assert_eq!(d.first(), pts.first());
        assert_eq!(d.last(), pts.last());
        assert!(d.contains(&(5000.0, 100.0)));
        assert!(d.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
