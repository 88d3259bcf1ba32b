//! Reads, once per result log, the few records package checks need: seeds,
//! the `submission_*` keys and `global_batch_size` (first occurrence each).

use super::tree::FileRef;
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
    let mut facts = LogFacts {
        path: file.path.clone(),
        ..LogFacts::default()
    };
    let reader = match std::fs::File::open(&file.fs) {
        Ok(r) => r,
        Err(e) => {
            facts.read_error = Some(e.to_string());
            return facts;
        }
    };
    let mut seeds = Vec::new();
    let mut first: BTreeMap<String, (u64, Value)> = BTreeMap::new();
    let wanted = |k: &str| k == SEED || FIRST_KEYS.contains(&k);
    let result = mllog::scan(reader, wanted, |e| {
        if e.key == SEED {
            // More than a few seeds is already a finding; keeping them all
            // would let a hostile log grow memory without bound.
            if seeds.len() >= mllog::MAX_KEPT {
                return;
            }
            seeds.push(SeedRecord {
                line: e.line,
                value: e.value,
                metadata: e.metadata,
            });
        } else {
            first.entry(e.key).or_insert((e.line, e.value));
        }
    });
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
    facts.seeds = seeds;
    facts.first = first;
    facts
}
