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
use std::collections::{BTreeMap, HashMap, HashSet};
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

/// The keys of the logs compared, each named once.
#[derive(Default)]
struct Keys {
    ids: HashMap<String, u32>,
    names: Vec<String>,
}

impl Keys {
    fn id(&mut self, key: &str) -> u32 {
        if let Some(&i) = self.ids.get(key) {
            return i;
        }
        let i = self.names.len() as u32;
        self.ids.insert(key.to_string(), i);
        self.names.push(key.to_string());
        i
    }
}

/// Where a point sits: its key, its position kind (an index into
/// `positions`, or `positions.len()` for `occurrence`) and the position.
type Place = (u32, u32, u64);

/// No point (the end of a chain).
const NONE: u32 = u32::MAX;

/// A point of the reference log, with what the other log being compared
/// has at the same place.
struct RefPoint {
    key: u32,
    kind: u32,
    repeat: u32,
    /// The next reference point at the same place.
    next: u32,
    at: f64,
    value: f64,
    line: u64,
    /// The other log's point here: (value, line).
    matched: Option<(f64, u64)>,
}

/// The reference points at one place, and how many of the other log's
/// points at that place were seen so far.
struct Group {
    first: u32,
    last: u32,
    count: u32,
    seen: u32,
    /// The reference point the next point of the other log matches.
    cursor: u32,
}

/// The reference log, kept compactly: every point is needed, as the other
/// logs may log theirs in any order. The other logs are read one at a time
/// and matched point by point as they stream by (keeping every point of
/// every log took 850 MB for two 300 MB logs).
struct Reference {
    path: String,
    points: Vec<RefPoint>,
    groups: HashMap<Place, Group>,
    config: BTreeMap<String, String>,
}

/// A numeric record of a log: its key, position kind and position (the
/// occurrence number when its metadata gives none), value and line.
struct Numeric {
    key: u32,
    kind: u32,
    at: f64,
    value: f64,
    line: u64,
}

/// Streams the numeric records of a log to `f`; returns the run's
/// configuration: every key logged with a value before `run_start` (first
/// value), as JSON text. `seed` is among them.
fn scan_numeric(
    rules: &RepeatRules,
    keys: &mut Keys,
    shown: &str,
    path: &Path,
    mut f: impl FnMut(Numeric),
) -> anyhow::Result<BTreeMap<String, String>> {
    let file = crate::safe_io::open_regular(path).map_err(|e| anyhow::anyhow!("{shown}: {e}"))?;
    // Points positioned by occurrence, per key (counting them on every
    // point was quadratic in the length of the log).
    let mut occurrences: HashMap<u32, usize> = HashMap::new();
    let mut config: BTreeMap<String, String> = BTreeMap::new();
    let mut started = false;
    let occurrence = rules.positions.len() as u32;
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
            let key = keys.id(&e.key);
            let (kind, at) = rules
                .positions
                .iter()
                .enumerate()
                .find_map(|(i, p)| {
                    e.metadata
                        .get(p)
                        .and_then(|v| v.as_f64())
                        .map(|v| (i as u32, v))
                })
                .unwrap_or((occurrence, f64::NAN));
            let at = if at.is_nan() {
                let n = occurrences.entry(key).or_insert(0);
                *n += 1;
                *n as f64
            } else {
                at
            };
            f(Numeric {
                key,
                kind,
                at,
                value,
                line: e.line,
            });
        },
    )
    .map_err(|e| anyhow::anyhow!("{shown}: {e}"))?;
    if summary.records == 0 {
        anyhow::bail!("{shown}: no MLLOG records");
    }
    Ok(config)
}

impl Reference {
    fn read(
        rules: &RepeatRules,
        keys: &mut Keys,
        shown: &str,
        path: &Path,
    ) -> anyhow::Result<Reference> {
        let mut points: Vec<RefPoint> = Vec::new();
        let mut groups: HashMap<Place, Group> = HashMap::new();
        let config = scan_numeric(rules, keys, shown, path, |n| {
            let i = points.len() as u32;
            let g = groups
                .entry((n.key, n.kind, n.at.to_bits()))
                .or_insert(Group {
                    first: i,
                    last: NONE,
                    count: 0,
                    seen: 0,
                    cursor: i,
                });
            if g.last != NONE {
                points[g.last as usize].next = i;
            }
            points.push(RefPoint {
                key: n.key,
                kind: n.kind,
                repeat: g.count,
                next: NONE,
                at: n.at,
                value: n.value,
                line: n.line,
                matched: None,
            });
            g.last = i;
            g.count += 1;
        })?;
        Ok(Reference {
            path: shown.to_string(),
            points,
            groups,
            config,
        })
    }

    /// Forgets the last log compared.
    fn reset(&mut self) {
        for g in self.groups.values_mut() {
            g.seen = 0;
            g.cursor = g.first;
        }
        for p in &mut self.points {
            p.matched = None;
        }
    }
}

/// What the other log has that the reference does not, per key: how many
/// points, and the first of them (position, value, line).
#[derive(Default)]
struct Extra {
    count: usize,
    first: Option<(Position, f64, u64)>,
}

fn position(rules: &RepeatRules, kind: u32, at: f64, repeat: u32) -> Position {
    Position {
        kind: rules
            .positions
            .get(kind as usize)
            .cloned()
            .unwrap_or_else(|| "occurrence".to_string()),
        at,
        repeat: repeat as usize,
    }
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

fn side(value: f64, line: u64) -> Side {
    Side {
        line,
        value,
        text: None,
    }
}

/// Reads `path` (shown as `shown`) and compares it with `reference`,
/// matching its points as they stream by; values whose relative deviation
/// is at most `tolerance` count as repeated.
fn compare(
    rules: &RepeatRules,
    keys: &mut Keys,
    reference: &mut Reference,
    (shown, path): (&str, &Path),
    tolerance: f64,
) -> anyhow::Result<Comparison> {
    reference.reset();
    let mut extra: HashMap<u32, Extra> = HashMap::new();
    let mut other_keys: HashSet<u32> = HashSet::new();
    let (points, groups) = (&mut reference.points, &mut reference.groups);
    let config = scan_numeric(rules, keys, shown, path, |n| {
        other_keys.insert(n.key);
        // The point of the reference at the same place and repeat, if any.
        let repeat = match groups.get_mut(&(n.key, n.kind, n.at.to_bits())) {
            Some(g) if g.seen < g.count => {
                let i = g.cursor as usize;
                g.cursor = points[i].next;
                g.seen += 1;
                points[i].matched = Some((n.value, n.line));
                return;
            }
            Some(g) => {
                g.seen += 1;
                g.seen - 1
            }
            // The first point of the other log at a place the reference
            // does not have is its first there.
            None => 0,
        };
        let x = extra.entry(n.key).or_default();
        x.count += 1;
        if x.first.is_none() {
            x.first = Some((position(rules, n.kind, n.at, repeat), n.value, n.line));
        }
    })?;
    let mut by_key: HashMap<u32, Vec<&RefPoint>> = HashMap::new();
    for p in &reference.points {
        by_key.entry(p.key).or_default().push(p);
    }
    let mut names: Vec<(&str, u32)> = by_key
        .keys()
        .chain(other_keys.iter())
        .map(|&k| (keys.names[k as usize].as_str(), k))
        .collect();
    names.sort();
    names.dedup();
    let mut out = Vec::new();
    // (reference line or u64::MAX, other line) orders divergences in log order.
    let mut first: Option<((u64, u64), Divergence)> = None;
    let mut worst: Option<(f64, Divergence)> = None;
    let (mut max_abs, mut max_rel) = (0.0f64, 0.0f64);
    let mut identical = true;
    let mut repeatable = true;
    let empty = Vec::new();
    for (key, id) in names {
        let a = by_key.get(&id).unwrap_or(&empty);
        let mut ks = KeySummary {
            key: key.to_string(),
            compared: 0,
            differing: 0,
            only_reference: 0,
            only_other: 0,
            max_abs: 0.0,
            max_rel: 0.0,
        };
        let mut note = |order: (u64, u64), d: Divergence| {
            if first.as_ref().is_none_or(|(o, _)| order < *o) {
                first = Some((order, d));
            }
        };
        for pa in a {
            let at = || position(rules, pa.kind, pa.at, pa.repeat).to_string();
            let Some((vb, lb)) = pa.matched else {
                ks.only_reference += 1;
                ks.differing += 1;
                note(
                    (pa.line, u64::MAX),
                    Divergence {
                        key: key.to_string(),
                        position: at(),
                        reference: Some(side(pa.value, pa.line)),
                        other: None,
                    },
                );
                continue;
            };
            ks.compared += 1;
            let (abs, rel) = deviation(pa.value, vb);
            let same = pa.value.to_bits() == vb.to_bits() || pa.value == vb;
            if !same {
                identical = false;
            }
            ks.max_abs = ks.max_abs.max(abs);
            ks.max_rel = ks.max_rel.max(rel);
            let div = || Divergence {
                key: key.to_string(),
                position: at(),
                reference: Some(side(pa.value, pa.line)),
                other: Some(side(vb, lb)),
            };
            if !same && worst.as_ref().is_none_or(|(w, _)| rel > *w) {
                worst = Some((rel, div()));
            }
            if rel > tolerance {
                ks.differing += 1;
                note((pa.line, lb), div());
            }
        }
        if let Some(x) = extra.get(&id) {
            ks.only_other = x.count;
            ks.differing += x.count;
            if let Some((pos, value, line)) = &x.first {
                note(
                    (u64::MAX, *line),
                    Divergence {
                        key: key.to_string(),
                        position: pos.to_string(),
                        reference: None,
                        other: Some(side(*value, *line)),
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
        out.push(ks);
    }
    Ok(Comparison {
        reference: reference.path.clone(),
        other: shown.to_string(),
        pairing: pairing(&reference.config, &config),
        identical,
        repeatable,
        first_divergence: first.map(|(_, d)| d),
        max_abs,
        max_rel,
        max_rel_at: worst.map(|(_, d)| d),
        keys: out,
    })
}

/// Same seed, same configuration keys?
pub fn pairing(reference: &BTreeMap<String, String>, other: &BTreeMap<String, String>) -> Pairing {
    let keys: std::collections::BTreeSet<&String> = reference.keys().chain(other.keys()).collect();
    let differing_keys: Vec<String> = keys
        .into_iter()
        .filter(|k| reference.get(*k) != other.get(*k))
        .cloned()
        .collect();
    Pairing {
        test_retest: differing_keys.is_empty() && reference.contains_key("seed"),
        reference_seed: reference.get("seed").cloned(),
        other_seed: other.get("seed").cloned(),
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

/// Line `line` of `path`, its first 400 characters. Lines are skipped
/// without being kept, and at most
/// [`MAX_QUOTED_LINE_BYTES`](crate::safe_io::MAX_QUOTED_LINE_BYTES) of the
/// one quoted are read: a log of one endless line is not read whole.
fn read_line(path: &Path, line: u64) -> Option<String> {
    use std::io::{BufRead, Read};
    let file = crate::safe_io::open_regular(path).ok()?;
    if line == 0 {
        return Some(String::new());
    }
    let mut reader = std::io::BufReader::new(file);
    for _ in 1..line {
        // Skip a line: consume up to its newline, holding nothing.
        loop {
            let chunk = reader.fill_buf().ok()?;
            if chunk.is_empty() {
                return None;
            }
            match chunk.iter().position(|&b| b == b'\n') {
                Some(at) => {
                    reader.consume(at + 1);
                    break;
                }
                None => {
                    let n = chunk.len();
                    reader.consume(n);
                }
            }
        }
    }
    let mut buf = Vec::new();
    if (&mut reader)
        .take(crate::safe_io::MAX_QUOTED_LINE_BYTES)
        .read_until(b'\n', &mut buf)
        .ok()?
        == 0
    {
        return None;
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
    let mut keys = Keys::default();
    let mut reference = Reference::read(rules, &mut keys, &files[0].0, &files[0].1)?;
    let mut comparisons = Vec::new();
    for (shown, path) in &files[1..] {
        let mut c = compare(rules, &mut keys, &mut reference, (shown, path), tolerance)?;
        for d in c.first_divergence.iter_mut().chain(c.max_rel_at.iter_mut()) {
            add_text(d, &files[0].1, path);
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

    fn series(_path: &str, config: &[(&str, &str)]) -> BTreeMap<String, String> {
        config
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
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
