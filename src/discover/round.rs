//! Which ruleset a command runs with: the `--ruleset` flag, else the
//! project config, else the round the checked paths leave no doubt about.
//! There is no silent default: when the round cannot be told, the command
//! stops (exit 2) and names the candidates.
//!
//! Signals, all data-driven:
//! - a round folder in the path (`v5.0`, `training_results_v5.0`,
//!   `results-v5.0`), the layout of the public MLCommons repositories;
//! - the benchmark folder names (`results/<system>/<benchmark>`) and the
//!   `submission_benchmark` the logs record, against the roster of each
//!   ruleset (`rules/<usage>/<version>/package.yaml`).
//!
//! When several rulesets fit the rosters (6.0.0 and 6.1.0 share most of
//! theirs), a round folder in the path decides; otherwise nothing does.

use crate::discover::walk::is_result_log_name;
use crate::rulebook::source::RuleSource;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Where the ruleset came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RulesetSource {
    /// `--ruleset`.
    Flag,
    /// `ruleset` in the project config.
    Config,
    /// Told from the checked paths.
    Inferred,
}

impl RulesetSource {
    pub fn name(&self) -> &'static str {
        match self {
            RulesetSource::Flag => "flag",
            RulesetSource::Config => "config",
            RulesetSource::Inferred => "inferred",
        }
    }
}

/// The ruleset chosen and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    pub ruleset: String,
    pub source: RulesetSource,
    /// One line: why this ruleset (the flag, the config file, the signal).
    pub why: String,
}

/// Why no ruleset could be chosen.
#[derive(Debug, thiserror::Error)]
pub enum RoundError {
    #[error("{0}")]
    Undecided(String),
}

/// The rulesets of `usage` this rule data can check.
pub fn versions(source: &RuleSource, usage: &str) -> Vec<String> {
    crate::check::rules::available_rulesets(source)
        .into_iter()
        .filter(|(u, _)| u == usage)
        .map(|(_, v)| v)
        .collect()
}

/// The ruleset: the flag, else the config's, else inferred from `paths`.
pub fn choose(
    source: &RuleSource,
    usage: &str,
    flag: Option<&str>,
    config: Option<(&str, &Path)>,
    paths: &[PathBuf],
) -> Result<Chosen, RoundError> {
    if let Some(v) = flag {
        return Ok(Chosen {
            ruleset: v.to_string(),
            source: RulesetSource::Flag,
            why: "--ruleset".to_string(),
        });
    }
    if let Some((v, file)) = config {
        return Ok(Chosen {
            ruleset: v.to_string(),
            source: RulesetSource::Config,
            why: format!("ruleset in {}", file.display()),
        });
    }
    infer(source, usage, paths)
}

/// The round `paths` leave no doubt about.
pub fn infer(source: &RuleSource, usage: &str, paths: &[PathBuf]) -> Result<Chosen, RoundError> {
    let known = versions(source, usage);
    let hint = |what: &str| {
        format!(
            "{what}; give --ruleset (one of {}) or set `ruleset` in .mlaudit.toml",
            known.join(", ")
        )
    };
    let rosters: BTreeMap<String, BTreeSet<String>> = known
        .iter()
        .filter_map(|v| {
            crate::aggregate::package::PackageRules::load(source, usage, v)
                .ok()
                .map(|r| (v.clone(), r.benchmarks.keys().cloned().collect()))
        })
        .collect();
    let in_any: BTreeSet<&String> = rosters.values().flatten().collect();

    // The round folders named in the paths.
    let mut folders: BTreeMap<String, String> = BTreeMap::new();
    for p in paths {
        if let Some((name, version)) = round_folder(usage, p) {
            folders.insert(version, name);
        }
    }
    // The benchmark names the paths hold.
    let names: BTreeSet<String> = paths.iter().flat_map(|p| benchmark_names(p)).collect();
    let shown: Vec<&str> = names.iter().map(String::as_str).collect();
    let known_names: BTreeSet<&String> = names.iter().filter(|n| in_any.contains(n)).collect();
    let fitting: Vec<&String> = rosters
        .iter()
        .filter(|(_, roster)| known_names.iter().all(|n| roster.contains(*n)))
        .map(|(v, _)| v)
        .collect();

    if folders.len() > 1 {
        let list: Vec<String> = folders.values().cloned().collect();
        return Err(RoundError::Undecided(hint(&format!(
            "the paths name several rounds ({})",
            list.join(", ")
        ))));
    }
    if let Some((version, name)) = folders.into_iter().next() {
        if !known.contains(&version) {
            return Err(RoundError::Undecided(hint(&format!(
                "round folder '{name}' names ruleset {usage} {version}, which mlaudit has no rules for"
            ))));
        }
        if !known_names.is_empty() && !fitting.contains(&&version) {
            return Err(RoundError::Undecided(hint(&format!(
                "round folder '{name}' names {version}, but the benchmarks found ({}) are not all of its roster",
                shown.join(", ")
            ))));
        }
        return Ok(Chosen {
            ruleset: version,
            source: RulesetSource::Inferred,
            why: format!("round folder '{name}' in the path"),
        });
    }
    if known_names.is_empty() {
        let what = if names.is_empty() {
            "cannot tell the round: no round folder (like v5.0) in the path and no benchmark folder or logged submission_benchmark".to_string()
        } else {
            format!(
                "cannot tell the round: no ruleset has a benchmark named {}",
                shown.join(", ")
            )
        };
        return Err(RoundError::Undecided(hint(&what)));
    }
    let list: Vec<&str> = known_names.iter().map(|s| s.as_str()).collect();
    match fitting.as_slice() {
        [one] => Ok(Chosen {
            ruleset: (*one).clone(),
            source: RulesetSource::Inferred,
            why: format!(
                "benchmarks {} are in the roster of {usage} {one} only",
                list.join(", ")
            ),
        }),
        [] => Err(RoundError::Undecided(hint(&format!(
            "cannot tell the round: no single ruleset has all of the benchmarks {}",
            list.join(", ")
        )))),
        many => Err(RoundError::Undecided(format!(
            "cannot tell the round: benchmarks {} fit rulesets {} alike; give --ruleset (one of them) or set `ruleset` in .mlaudit.toml",
            list.join(", "),
            many.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The deepest component of `path` (made absolute) that names a round of
/// `usage`: `v5.0`, `v5.0.0`, `training_results_v5.0`, `results-v5.0`; as
/// (the folder name, the ruleset version `5.0.0`). Folders of another
/// usage (`hpc-v3.0`, `hpc_results_v3.0` for training) are not rounds of it.
pub fn round_folder(usage: &str, path: &Path) -> Option<(String, String)> {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    // Compiled once: this runs for every log `log` and `check` read.
    static ROUND: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)^(?:(?:training|hpc|inference)[_-])?(?:results[_-])?v(\d+)\.(\d+)(?:\.(\d+))?$",
        )
        .ok()
    });
    let re = ROUND.as_ref()?;
    let other_usages = ["hpc", "training", "inference"];
    for comp in abs.components().rev() {
        let name = comp.as_os_str().to_string_lossy();
        let Some(c) = re.captures(&name) else {
            continue;
        };
        let lower = name.to_ascii_lowercase();
        if other_usages
            .iter()
            .any(|u| *u != usage && lower.starts_with(u))
        {
            return None;
        }
        let patch = c.get(3).map_or("0", |m| m.as_str());
        return Some((name.to_string(), format!("{}.{}.{patch}", &c[1], &c[2])));
    }
    None
}

/// The usage the round folders of `paths` name (`hpc-v3.0` or
/// `hpc_results_v3.0`: `hpc`; `training_results_v5.0`: `training`), when
/// they name exactly one; a bare `v5.0` names none.
pub fn usage_of_paths(paths: &[PathBuf]) -> Option<&'static str> {
    let mut found: BTreeSet<&'static str> = BTreeSet::new();
    for p in paths {
        let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        let usages = ["hpc", "training", "inference"];
        // The deepest round folder of any usage, and the usage it names.
        let deepest = abs.components().rev().find_map(|c| {
            let name = c.as_os_str().to_string_lossy().to_ascii_lowercase();
            let alone = Path::new("/").join(&name);
            usages
                .iter()
                .any(|u| round_folder(u, &alone).is_some())
                .then(|| usages.into_iter().find(|u| name.starts_with(u)))
        });
        found.extend(deepest.flatten());
    }
    match found.len() {
        1 => found.into_iter().next(),
        _ => None,
    }
}

/// The benchmark names a path holds: its benchmark folders' names (a
/// package, a round folder of packages, a `results/<system>` folder, a
/// benchmark folder) or, for a
/// log file, its logged `submission_benchmark`.
fn benchmark_names(path: &Path) -> Vec<String> {
    if path.is_file() {
        return logged_benchmark(path).into_iter().collect();
    }
    if !path.is_dir() {
        return Vec::new();
    }
    if let Some(folders) = system_folder_benchmarks(path) {
        // The benchmark is the last component (`strong/deepcam`: deepcam).
        return folders
            .iter()
            .map(|f| f.rsplit('/').next().unwrap_or(f).to_string())
            .collect();
    }
    if let Some(packages) = crate::discover::scope::round_packages(path) {
        return packages.iter().flat_map(|p| benchmark_names(p)).collect();
    }
    let tree = crate::discover::discover(path);
    let mut names: Vec<String> = tree
        .benchmarks
        .iter()
        .map(|b| b.benchmark.clone())
        .collect();
    names.extend(tree.logs.iter().filter_map(|f| logged_benchmark(&f.fs)));
    names
}

/// For a `results/<system>` folder (its parent is named `results`, it is
/// not itself a package or a benchmark folder): its benchmark folders,
/// relative to it (`bert`; HPC `strong/deepcam`).
pub fn system_folder_benchmarks(path: &Path) -> Option<Vec<String>> {
    if !is_system_folder(path) {
        return None;
    }
    let sub_folders = |dir: &Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .filter(|e| e.path().is_dir())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| !n.starts_with('.'))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut names = Vec::new();
    for n in sub_folders(path) {
        // HPC: the benchmarks sit one level deeper, in strong/ and weak/.
        if crate::discover::tree::SCALING_FOLDERS.contains(&n.as_str()) {
            names.extend(
                sub_folders(&path.join(&n))
                    .into_iter()
                    .map(|b| format!("{n}/{b}")),
            );
        } else {
            names.push(n);
        }
    }
    names.sort();
    names.dedup();
    Some(names)
}

/// Whether `path` is a `results/<system>` folder: a folder in a folder
/// named `results`, with neither `results/` nor `systems/` nor a result
/// log of its own.
pub fn is_system_folder(path: &Path) -> bool {
    let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let parent_is_results = canon
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|n| n == "results");
    parent_is_results
        && path.is_dir()
        && !path.join("results").is_dir()
        && !path.join("systems").is_dir()
        && !std::fs::read_dir(path).is_ok_and(|rd| {
            rd.filter_map(|e| e.ok())
                .any(|e| is_result_log_name(&e.file_name().to_string_lossy()))
        })
}

/// The `submission_benchmark` a log records (first 2000 lines, at most
/// [`MAX_ROUND_GUESS_BYTES`](crate::safe_io::MAX_ROUND_GUESS_BYTES): a log
/// of one endless line is not read into memory whole).
fn logged_benchmark(path: &Path) -> Option<String> {
    use std::io::{BufRead, Read};
    let file = crate::safe_io::open_regular(path).ok()?;
    let mut reader = std::io::BufReader::new(file.take(crate::safe_io::MAX_ROUND_GUESS_BYTES));
    let mut buf = Vec::new();
    for _ in 0..2000 {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).ok()? == 0 {
            break;
        }
        let line = std::str::from_utf8(&buf).ok()?;
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let Some(at) = line.find(":::MLLOG ") else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&line[at + 9..]) else {
            continue;
        };
        if v.get("key").and_then(|k| k.as_str()) == Some("submission_benchmark") {
            return v.get("value").and_then(|v| v.as_str()).map(str::to_string);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_from_round_folders() {
        let u = |ps: &[&str]| usage_of_paths(&ps.iter().map(PathBuf::from).collect::<Vec<_>>());
        assert_eq!(u(&["/c/hpc-v3.0/NVIDIA"]), Some("hpc"));
        assert_eq!(u(&["/c/hpc_results_v1.0/ANL/results"]), Some("hpc"));
        assert_eq!(u(&["/c/training_results_v5.0/NVIDIA"]), Some("training"));
        // A bare round folder names no usage; the deepest round folder counts.
        assert_eq!(u(&["/c/v5.0/NVIDIA"]), None);
        assert_eq!(u(&["/hpc-v3.0/x/v5.0/NVIDIA"]), None);
        assert_eq!(u(&["/c/hpc-v3.0/A", "/c/training_results_v5.0/B"]), None);
        assert_eq!(u(&["/c/NVIDIA"]), None);
    }

    #[test]
    fn round_folders() {
        let r = |p: &str| round_folder("training", Path::new(p)).map(|(_, v)| v);
        assert_eq!(
            r("/x/training_results_v5.0/NVIDIA").as_deref(),
            Some("5.0.0")
        );
        assert_eq!(r("/corpus/v5.1/AMD/results").as_deref(), Some("5.1.0"));
        assert_eq!(r("/x/v6.0.0/pkg").as_deref(), Some("6.0.0"));
        assert_eq!(r("/corpus/hpc-v3.0/NVIDIA"), None);
        assert_eq!(r("/x/NVIDIA"), None);
        assert_eq!(r("/x/dev5.0/NVIDIA"), None);
        assert_eq!(r("/x/NVIDIA-v5.0"), None);
        assert_eq!(r("/x/results_v4.1/NVIDIA").as_deref(), Some("4.1.0"));
    }
}
