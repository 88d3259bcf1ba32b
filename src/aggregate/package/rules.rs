//! Package rules of one round, read from `rules/<usage>/<version>/package.yaml`
//! (format: `rules/README-package.md`). No threshold or list lives in Rust.

use crate::rulebook::source::{load_yaml, rounds_with, DataError, RuleSource};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BenchmarkRule {
    /// Exact number of `result_*.txt` files a folder must hold.
    pub result_files: usize,
    /// Non-compliant logs tolerated under olympic scoring; defaults to the
    /// round's `olympic_tolerance`.
    #[serde(default)]
    pub olympic_tolerance: Option<usize>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SystemDescRules {
    /// Fields every `systems/<id>.json` must have (empty strings accepted).
    pub required_fields: Vec<String>,
    /// Allowed `status` values; empty means not enforced.
    #[serde(default)]
    pub status_values: Vec<String>,
    /// Fields that must be JSON strings when present (the official tool
    /// crashes on anything else).
    #[serde(default)]
    pub string_fields: Vec<String>,
    /// Fields the official result summarizer converts with `int()`.
    #[serde(default)]
    pub integer_fields: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SeedRules {
    /// Divisions (system JSON `division`, compared exactly) where seeds are checked.
    pub divisions: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ParamsRules {
    /// Lines a `package_checker_params` file may hold.
    pub flags: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct CrossCheckRules {
    /// Logged `submission_status` value → the system JSON `status` it means.
    #[serde(default)]
    pub status_aliases: BTreeMap<String, String>,
    /// Substrings that mark a `submission_*` value as a template placeholder.
    #[serde(default)]
    pub placeholders: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PackageRules {
    /// `<usage>/<version>`, e.g. `training/5.0.0`.
    pub ruleset: String,
    /// Benchmarks allowed in the round, with their rules.
    pub benchmarks: BTreeMap<String, BenchmarkRule>,
    /// Default number of non-compliant logs tolerated per folder.
    pub olympic_tolerance: usize,
    pub system_description: SystemDescRules,
    pub seeds: SeedRules,
    pub params: ParamsRules,
    #[serde(default)]
    pub cross_checks: CrossCheckRules,
    /// HPC layout: benchmark folders sit in `results/<system>/strong/` or
    /// `weak/`; a weak-scaling folder needs at least `result_files` logs.
    #[serde(default)]
    pub scaling_folders: bool,
}

impl PackageRules {
    /// Reads `<usage>/<version>/package.yaml` from `source`.
    pub fn load(source: &RuleSource, usage: &str, version: &str) -> Result<Self, DataError> {
        let rel = format!("{usage}/{version}/package.yaml");
        let Some(mut rules) = load_yaml::<PackageRules>(source, &rel)? else {
            let known = rounds_with(source, usage, "package.yaml");
            return Err(DataError::new(
                source,
                &rel,
                format!("no package rules for this ruleset (known: {known})"),
            ));
        };
        if rules.benchmarks.values().any(|b| b.result_files == 0) {
            return Err(DataError::new(
                source,
                &rel,
                "result_files must be at least 1",
            ));
        }
        // An inherited file (inherit.yaml) names the round that asked for it.
        rules.ruleset = format!("{usage}/{version}");
        Ok(rules)
    }

    pub fn tolerance(&self, benchmark: &str) -> usize {
        self.benchmarks
            .get(benchmark)
            .and_then(|b| b.olympic_tolerance)
            .unwrap_or(self.olympic_tolerance)
    }
}
