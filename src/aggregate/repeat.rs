//! Test-retest repeatability: do runs made with the same seed, code and
//! configuration log the same numbers?
//!
//! Every record with a numeric value becomes a point of its key's series,
//! placed at the position its metadata gives (`samples_count`, `epoch_num`,
//! ... in the order of `rules/repeat.yaml`), or at its occurrence number
//! when it has none. The first log is the reference; each other log is
//! aligned with it point by point. A point present in one log only is a
//! difference too (a run that stopped earlier is not the same run).

use crate::mllog;
use crate::rulebook::source::{load_yaml, DataError, RuleSource};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// `rules/repeat.yaml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepeatRules {
    /// Metadata fields that give a record's position, in order of preference.
    pub positions: Vec<String>,
    /// Keys never compared (values that legitimately differ between
    /// identical runs, such as measured throughput).
    #[serde(default)]
    pub ignore_keys: Vec<String>,
}

impl RepeatRules {
    pub fn load(source: &RuleSource) -> Result<RepeatRules, DataError> {
        let rel = "repeat.yaml";
        load_yaml(source, rel)?.ok_or_else(|| DataError::new(source, rel, "not found"))
    }
}

/// Where a point sits in its series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Position {
    /// The metadata field (`epoch_num`), or `occurrence`.
    pub kind: String,
    pub at: f64,
    /// 0 for the first point of the key at this position, 1 for the next...
    pub repeat: usize,
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.kind, self.at)?;
        if self.repeat > 0 {
            write!(f, " (#{})", self.repeat + 1)?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone)]
struct Point {
    pos: Position,
    value: f64,
    line: u64,
}

/// The numeric series of one log, by key.
#[derive(Debug, Clone)]
pub struct LogSeries {
    pub path: String,
    series: BTreeMap<String, Vec<Point>>,
    /// The run's configuration: every key logged with a value before
    /// `run_start` (first value), as JSON text. `seed` is among them.
    config: BTreeMap<String, String>,
}

/// Whether two runs can be a test-retest pair: same seed, same
/// configuration (the keys logged before `run_start`).
#[derive(Debug, Clone, Serialize)]
pub struct Pairing {
    /// Same seed and no configuration key differs.
    pub test_retest: bool,
    /// The seed each run logs (`null` when it logs none).
    pub reference_seed: Option<String>,
    pub other_seed: Option<String>,
    /// Configuration keys (seed included) whose values differ, or that one
    /// run logs and the other does not, sorted.
    pub differing_keys: Vec<String>,
}

/// One side of a difference.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    pub line: u64,
    pub value: f64,
    /// The log line as written (trimmed), when it could be read back.
    pub text: Option<String>,
}

/// The first point where two logs differ.
#[derive(Debug, Clone, Serialize)]
pub struct Divergence {
    pub key: String,
    pub position: String,
    /// `None` when the point is missing from that log.
    pub reference: Option<Side>,
    pub other: Option<Side>,
}

/// Per-key summary of a comparison.
#[derive(Debug, Clone, Serialize)]
pub struct KeySummary {
    pub key: String,
    /// Points present in both logs.
    pub compared: usize,
    /// Points that differ (beyond the tolerance) or are missing on one side.
    pub differing: usize,
    pub only_reference: usize,
    pub only_other: usize,
    pub max_abs: f64,
    pub max_rel: f64,
}

/// The comparison of one log with the reference log.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub reference: String,
    pub other: String,
    /// Whether the two runs can be a test-retest pair at all.
    pub pairing: Pairing,
    /// Every common point equal and no point missing on either side.
    pub identical: bool,
    /// Every common point within the tolerance and none missing.
    pub repeatable: bool,
    pub first_divergence: Option<Divergence>,
    pub max_abs: f64,
    pub max_rel: f64,
    /// Where the largest relative deviation is.
    pub max_rel_at: Option<Divergence>,
    pub keys: Vec<KeySummary>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RepeatReport {
    pub tolerance: f64,
    pub repeatable: bool,
    pub comparisons: Vec<Comparison>,
    /// When runs differ: the settings of their package's configs that
    /// decide repeatability (absent when there are none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub repeatability: Vec<crate::check::policy::repeatability::RepeatabilityNote>,
}

/// Reads the numeric series of a log.
pub fn read_series(rules: &RepeatRules, shown: &str, path: &Path) -> anyhow::Result<LogSeries> {
    let file = crate::safe_io::open_regular(path).map_err(|e| anyhow::anyhow!("{shown}: {e}"))?;
    let mut series: BTreeMap<String, Vec<Point>> = BTreeMap::new();
    let mut seen: HashMap<(String, String, u64), usize> = HashMap::new();
    // Points positioned by occurrence, per key (counting them on every
    // point was quadratic in the length of the log).
    let mut occurrences: HashMap<String, usize> = HashMap::new();
    let mut config: BTreeMap<String, String> = BTreeMap::new();
    let mut started = false;
    let summary = mllog::scan(
        file,
        |k| !rules.ignore_keys.iter().any(|i| i == k),
        |e| {
            if e.key == "run_start" {
                started = true;
            }
            if !started && !e.value.is_null() {
                config
                    .entry(e.key.clone())
                    .or_insert_with(|| e.value.to_string());
            }
            let Some(value) = e.value.as_f64() else {
                return;
            };
            let (kind, at) = rules
                .positions
                .iter()
                .find_map(|p| {
                    e.metadata
                        .get(p)
                        .and_then(|v| v.as_f64())
                        .map(|v| (p.clone(), v))
                })
                .unwrap_or_else(|| ("occurrence".to_string(), f64::NAN));
            let points = series.entry(e.key.clone()).or_default();
            let at = if at.is_nan() {
                let n = occurrences.entry(e.key.clone()).or_insert(0);
                *n += 1;
                *n as f64
            } else {
                at
            };
            let n = seen
                .entry((e.key.clone(), kind.clone(), at.to_bits()))
                .or_insert(0);
            points.push(Point {
                pos: Position {
                    kind,
                    at,
                    repeat: *n,
                },
                value,
                line: e.line,
            });
            *n += 1;
        },
    )
    .map_err(|e| anyhow::anyhow!("{shown}: {e}"))?;
    if summary.records == 0 {
        anyhow::bail!("{shown}: no MLLOG records");
    }
    Ok(LogSeries {
        path: shown.to_string(),
        series,
        config,
    })
}

/// Absolute and symmetric relative difference (0 when both are 0).
pub fn deviation(a: f64, b: f64) -> (f64, f64) {
    let abs = (a - b).abs();
    let scale = a.abs().max(b.abs());
    let rel = if abs == 0.0 {
        0.0
    } else if scale == 0.0 || !scale.is_finite() {
        f64::INFINITY
    } else {
        abs / scale
    };
    (abs, rel)
}

fn side(p: &Point) -> Side {
    Side {
        line: p.line,
        value: p.value,
        text: None,
    }
}

/// Compares `other` with `reference`; values whose relative deviation is at
/// most `tolerance` count as repeated.
pub fn compare(reference: &LogSeries, other: &LogSeries, tolerance: f64) -> Comparison {
    let mut keys = Vec::new();
    // (reference line or u64::MAX, other line) orders divergences in log order.
    let mut first: Option<((u64, u64), Divergence)> = None;
    let mut worst: Option<(f64, Divergence)> = None;
    let (mut max_abs, mut max_rel) = (0.0f64, 0.0f64);
    let mut identical = true;
    let mut repeatable = true;
    let empty = Vec::new();
    let names: std::collections::BTreeSet<&String> =
        reference.series.keys().chain(other.series.keys()).collect();
    for key in names {
        let a = reference.series.get(key).unwrap_or(&empty);
        let b = other.series.get(key).unwrap_or(&empty);
        let index: HashMap<(&str, u64, usize), &Point> = b
            .iter()
            .map(|p| ((p.pos.kind.as_str(), p.pos.at.to_bits(), p.pos.repeat), p))
            .collect();
        let mut ks = KeySummary {
            key: key.clone(),
            compared: 0,
            differing: 0,
            only_reference: 0,
            only_other: 0,
            max_abs: 0.0,
            max_rel: 0.0,
        };
        let mut matched = 0usize;
        let mut note = |order: (u64, u64), d: Divergence| {
            if first.as_ref().is_none_or(|(o, _)| order < *o) {
                first = Some((order, d));
            }
        };
        for pa in a {
            let Some(pb) = index.get(&(pa.pos.kind.as_str(), pa.pos.at.to_bits(), pa.pos.repeat))
            else {
                ks.only_reference += 1;
                ks.differing += 1;
                note(
                    (pa.line, u64::MAX),
                    Divergence {
                        key: key.clone(),
                        position: pa.pos.to_string(),
                        reference: Some(side(pa)),
                        other: None,
                    },
                );
                continue;
            };
            matched += 1;
            ks.compared += 1;
            let (abs, rel) = deviation(pa.value, pb.value);
            let same = pa.value.to_bits() == pb.value.to_bits() || pa.value == pb.value;
            if !same {
                identical = false;
            }
            ks.max_abs = ks.max_abs.max(abs);
            ks.max_rel = ks.max_rel.max(rel);
            let div = || Divergence {
                key: key.clone(),
                position: pa.pos.to_string(),
                reference: Some(side(pa)),
                other: Some(side(pb)),
            };
            if !same && worst.as_ref().is_none_or(|(w, _)| rel > *w) {
                worst = Some((rel, div()));
            }
            if rel > tolerance {
                ks.differing += 1;
                note((pa.line, pb.line), div());
            }
        }
        ks.only_other = b.len() - matched;
        if ks.only_other > 0 {
            ks.differing += ks.only_other;
            let keyset: std::collections::HashSet<(&str, u64, usize)> = a
                .iter()
                .map(|p| (p.pos.kind.as_str(), p.pos.at.to_bits(), p.pos.repeat))
                .collect();
            if let Some(pb) = b.iter().find(|p| {
                !keyset.contains(&(p.pos.kind.as_str(), p.pos.at.to_bits(), p.pos.repeat))
            }) {
                note(
                    (u64::MAX, pb.line),
                    Divergence {
                        key: key.clone(),
                        position: pb.pos.to_string(),
                        reference: None,
                        other: Some(side(pb)),
                    },
                );
            }
        }
        if ks.only_reference + ks.only_other > 0 {
            identical = false;
        }
        if ks.differing > 0 {
            repeatable = false;
        }
        max_abs = max_abs.max(ks.max_abs);
        max_rel = max_rel.max(ks.max_rel);
        keys.push(ks);
    }
    Comparison {
        reference: reference.path.clone(),
        other: other.path.clone(),
        pairing: pairing(reference, other),
        identical,
        repeatable,
        first_divergence: first.map(|(_, d)| d),
        max_abs,
        max_rel,
        max_rel_at: worst.map(|(_, d)| d),
        keys,
    }
}

/// Same seed, same configuration keys?
pub fn pairing(reference: &LogSeries, other: &LogSeries) -> Pairing {
    let keys: std::collections::BTreeSet<&String> =
        reference.config.keys().chain(other.config.keys()).collect();
    let differing_keys: Vec<String> = keys
        .into_iter()
        .filter(|k| reference.config.get(*k) != other.config.get(*k))
        .cloned()
        .collect();
    Pairing {
        test_retest: differing_keys.is_empty() && reference.config.contains_key("seed"),
        reference_seed: reference.config.get("seed").cloned(),
        other_seed: other.config.get("seed").cloned(),
        differing_keys,
    }
}

/// Fills `text` of each side with the log line it names.
fn add_text(d: &mut Divergence, reference: &Path, other: &Path) {
    for (side, path) in [(&mut d.reference, reference), (&mut d.other, other)] {
        if let Some(s) = side {
            s.text = read_line(path, s.line);
        }
    }
}

fn read_line(path: &Path, line: u64) -> Option<String> {
    use std::io::BufRead;
    let file = crate::safe_io::open_regular(path).ok()?;
    let mut reader = std::io::BufReader::new(file);
    let mut buf = Vec::new();
    for _ in 0..line {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).ok()? == 0 {
            return None;
        }
    }
    let text = String::from_utf8_lossy(&buf).trim().to_string();
    Some(text.chars().take(400).collect())
}

/// Compares every log of `files` (display path, file path) with the first.
pub fn repeat(
    rules: &RepeatRules,
    files: &[(String, PathBuf)],
    tolerance: f64,
) -> anyhow::Result<RepeatReport> {
    if files.len() < 2 {
        anyhow::bail!("repeat needs at least two logs");
    }
    if tolerance.is_nan() || tolerance < 0.0 {
        anyhow::bail!("--tolerance must be a number >= 0, not {tolerance}");
    }
    let series: Vec<LogSeries> = files
        .iter()
        .map(|(shown, path)| read_series(rules, shown, path))
        .collect::<anyhow::Result<_>>()?;
    let mut comparisons = Vec::new();
    for (i, s) in series.iter().enumerate().skip(1) {
        let mut c = compare(&series[0], s, tolerance);
        for d in c.first_divergence.iter_mut().chain(c.max_rel_at.iter_mut()) {
            add_text(d, &files[0].1, &files[i].1);
        }
        comparisons.push(c);
    }
    Ok(RepeatReport {
        tolerance,
        repeatable: comparisons.iter().all(|c| c.repeatable),
        repeatability: Vec::new(),
        comparisons,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(path: &str, config: &[(&str, &str)]) -> LogSeries {
        LogSeries {
            path: path.into(),
            series: BTreeMap::new(),
            config: config
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn a_pair_needs_the_same_seed_and_config() {
        let a = series("a", &[("seed", "1"), ("opt_base_learning_rate", "0.1")]);
        let b = series("b", &[("seed", "1"), ("opt_base_learning_rate", "0.1")]);
        assert!(pairing(&a, &b).test_retest);
        let c = series("c", &[("seed", "2"), ("global_batch_size", "8")]);
        let p = pairing(&a, &c);
        assert!(!p.test_retest);
        assert_eq!(
            p.differing_keys,
            ["global_batch_size", "opt_base_learning_rate", "seed"]
        );
        assert_eq!(p.other_seed.as_deref(), Some("2"));
        // No seed logged: nothing says the runs are a pair.
        assert!(!pairing(&series("x", &[]), &series("y", &[])).test_retest);
    }

    #[test]
    fn relative_deviation_is_symmetric_and_zero_safe() {
        assert_eq!(deviation(0.0, 0.0), (0.0, 0.0));
        assert_eq!(deviation(1.0, 0.5), (0.5, 0.5));
        assert_eq!(deviation(0.5, 1.0), (0.5, 0.5));
        assert_eq!(deviation(0.0, 1.0).1, 1.0);
    }
}
