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

mod charts;
pub use charts::*;

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

impl Chart {
    /// Keeps every marker and guide inside the frame: a point at the edge
    /// of the domain is drawn at the edge, never over the axis labels.
    pub fn keep_inside(&mut self) {
        let num = |s: &str| s.parse::<f64>().ok();
        let (Some(x), Some(y), Some(w), Some(h)) = (
            num(&self.frame.x),
            num(&self.frame.y),
            num(&self.frame.w),
            num(&self.frame.h),
        ) else {
            return;
        };
        let clamp = |v: &mut String, lo: f64, hi: f64| {
            if let Some(n) = num(v) {
                let c = n.clamp(lo, hi);
                if c != n {
                    *v = px(c);
                }
            }
        };
        for d in &mut self.dots {
            let r = num(&d.r).unwrap_or(0.0).min(w / 2.0).min(h / 2.0);
            clamp(&mut d.cx, x + r, x + w - r);
            clamp(&mut d.cy, y + r, y + h - r);
        }
        for g in &mut self.guides {
            clamp(&mut g.x1, x, x + w);
            clamp(&mut g.x2, x, x + w);
            clamp(&mut g.y1, y, y + h);
            clamp(&mut g.y2, y, y + h);
        }
    }
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
