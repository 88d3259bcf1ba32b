//! Reads, once per result log, the few records package checks need: seeds,
//! the `submission_*` keys and `global_batch_size` (first occurrence each).

use crate::discover::tree::FileRef;
use crate::mllog::{self, Malformed};
use serde_json::Value;
use std::collections::BTreeMap;

/// Keys read by the package checks (MLLOG vocabulary, not thresholds).
pub const SEED: &str = "seed";
pub const ORG: &str = "submission_org";
pub const PLATFORM: &str = "submission_platform";
pub const DIVISION: &str = "submission_division";
pub const STATUS: &str = "submission_status";
pub const BENCHMARK: &str = "submission_benchmark";
pub const GBS: &str = "global_batch_size";
const FIRST_KEYS: &[&str] = &[ORG, PLATFORM, DIVISION, STATUS, BENCHMARK, GBS];

#[derive(Debug, Clone)]
pub struct SeedRecord {
    pub line: u64,
    pub value: Value,
    pub metadata: Value,
}

/// What one log says, as far as package checks care.
#[derive(Debug, Clone, Default)]
pub struct LogFacts {
    pub path: String,
    pub seeds: Vec<SeedRecord>,
    /// First occurrence of each key of interest: (line, value).
    pub first: BTreeMap<String, (u64, Value)>,
    pub malformed: Vec<Malformed>,
    /// Set when the file could not be read at all.
    pub read_error: Option<String>,
}

impl LogFacts {
    pub fn first_str(&self, key: &str) -> Option<(u64, &str)> {
        self.first
            .get(key)
            .and_then(|(l, v)| v.as_str().map(|s| (*l, s)))
    }
}

pub fn scan_log(file: &FileRef) -> LogFacts {
    let reader = match crate::safe_io::open_regular(&file.fs) {
        Ok(r) => r,
        Err(e) => return Collector::default().finish(&file.path, Err(e)),
    };
    let mut c = Collector::default();
    let result = mllog::scan(reader, wanted, |e| c.event(&e));
    c.finish(&file.path, result)
}

/// The keys the package checks read.
pub fn wanted(k: &str) -> bool {
    k == SEED || FIRST_KEYS.contains(&k)
}

/// Collects [`LogFacts`] as a log streams by, so the package checks can
/// share one pass over the file with other checks.
#[derive(Default)]
pub struct Collector {
    seeds: Vec<SeedRecord>,
    first: BTreeMap<String, (u64, Value)>,
}

impl Collector {
    /// A record (those [`wanted`] rejects are ignored).
    pub fn event(&mut self, e: &mllog::Event) {
        if e.key == SEED {
            // More than a few seeds is already a finding; keeping them all
            // would let a hostile log grow memory without bound.
            if self.seeds.len() < mllog::MAX_KEPT {
                self.seeds.push(SeedRecord {
                    line: e.line,
                    value: e.value.clone(),
                    metadata: e.metadata.clone(),
                });
            }
        } else if FIRST_KEYS.contains(&e.key.as_str()) && !self.first.contains_key(&e.key) {
            self.first.insert(e.key.clone(), (e.line, e.value.clone()));
        }
    }

    /// The facts of the log shown as `path`, given how the scan ended.
    pub fn finish(self, path: &str, result: std::io::Result<mllog::ScanSummary>) -> LogFacts {
        let mut facts = LogFacts {
            path: path.to_string(),
            seeds: self.seeds,
            first: self.first,
            ..LogFacts::default()
        };
        match result {
            Ok(summary) => {
                facts.malformed = summary.malformed;
                facts
                    .malformed
                    .extend(summary.long_lines.iter().map(|l| Malformed {
                        line: l.line,
                        error: format!(
                            "line of {} bytes is longer than the {} bytes a record may have",
                            l.bytes,
                            mllog::MAX_LINE_BYTES
                        ),
                        excerpt: String::new(),
                    }));
            }
            Err(e) => facts.read_error = Some(e.to_string()),
        }
        facts
    }
}
