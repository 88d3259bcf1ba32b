//! Repeatability notes (issue 16, item 5): the implementation settings that
//! decide whether two runs repeat bit for bit (`cudnn.benchmark`,
//! deterministic algorithms, `CUBLAS_WORKSPACE_CONFIG`, NCCL algorithm and
//! protocol pinning, TensorFlow and XLA determinism). The framework data
//! (`rules/policy/frameworks/repeatability.yaml`) finds them as POL050;
//! here they leave the findings for a section of their own in the report
//! (`check`) and in `mlaudit repeat`. They never change a verdict.

use super::PolicyRules;
use crate::discover::tree::ImplFile;
use crate::finding::{code, Finding};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One setting that decides run-to-run repeatability.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
pub struct RepeatabilityNote {
    /// The config file, as typed (see the report's *Paths*).
    pub path: String,
    /// 1-based line of the setting.
    pub line: Option<u64>,
    /// `repeatable` (the setting makes runs repeat) or `not_repeatable`
    /// (it makes them differ).
    pub effect: String,
    /// The framework data entry that found it
    /// (`policy/frameworks/repeatability.yaml#cudnn_benchmark`).
    pub setting: String,
    /// What was found, with the reason and where it is documented.
    pub message: String,
}

/// Moves the repeatability notes out of `findings` (what
/// [`super::check_configs`] returns): the findings left, and the notes in
/// path and line order.
pub fn split(
    rules: &PolicyRules,
    findings: Vec<Finding>,
) -> (Vec<Finding>, Vec<RepeatabilityNote>) {
    let (notes, rest): (Vec<Finding>, Vec<Finding>) =
        findings.into_iter().partition(|f| f.code == code::POL050);
    let mut out: Vec<RepeatabilityNote> = notes
        .into_iter()
        .map(|f| {
            let setting = f.rule.clone().unwrap_or_default();
            let data = rules
                .frameworks
                .settings
                .iter()
                .find(|s| rules.framework_rule(&s.framework, &s.id) == setting);
            let effect = data.and_then(|s| s.effect.clone()).unwrap_or_default();
            // The section says what these are: the data file's name
            // (`repeatability: `) before each would say it again.
            let message = data
                .and_then(|s| f.message.strip_prefix(&format!("{}: ", s.framework_name)))
                .map_or_else(|| f.message.clone(), str::to_string);
            RepeatabilityNote {
                path: f.path,
                line: f.line,
                effect,
                setting,
                message,
            }
        })
        .collect();
    out.sort();
    out.dedup();
    (rest, out)
}

/// For a result log inside a package (`<pkg>/results/<system>/<bm>/x.txt`,
/// or HPC's `<pkg>/results/<system>/<strong|weak>/<bm>/x.txt`): the package
/// folder (`.` for a path that starts at `results/`) and the benchmark.
pub fn package_of(log: &Path) -> Option<(PathBuf, String)> {
    place_of(log).map(|(pkg, bm, _)| (pkg, bm))
}

/// [`package_of`], and the system the run is of.
fn place_of(log: &Path) -> Option<(PathBuf, String, String)> {
    let bm_dir = log.parent()?;
    let benchmark = bm_dir.file_name()?.to_string_lossy().into_owned();
    let mut up = bm_dir.parent()?;
    if is_scaling(up) {
        up = up.parent()?;
    }
    let system = up.file_name()?.to_string_lossy().into_owned();
    let results = up.parent()?;
    if results.file_name()? != "results" {
        return None;
    }
    let pkg = results.parent()?;
    let pkg = if pkg.as_os_str().is_empty() {
        Path::new(".")
    } else {
        pkg
    };
    Some((pkg.to_path_buf(), benchmark, system))
}

/// The configs of benchmark `bm` that a run of `system` uses: never those
/// in a folder named after another of the package's `systems`; those in a
/// folder named after the system, those of no implementation folder
/// (shared), and those of the same implementation folder
/// (`mxnet/config_x.sh` beside `mxnet/<SYSTEM>/`); all the others when no
/// folder is named after the system.
fn of_system(
    files: &[ImplFile],
    bm: &str,
    system: &str,
    systems: &std::collections::BTreeSet<String>,
) -> Vec<ImplFile> {
    // A folder is a system's when it is named after it, alone or with
    // more after it (`MI350X_EPYC_9575F_pytorch_llama3_8b` is system
    // `MI350X_EPYC_9575F_pytorch`'s); of two systems whose names it starts
    // with, the longer one's.
    let owner = |d: &str| -> Option<&str> {
        std::iter::once(system)
            .chain(systems.iter().map(String::as_str))
            .filter(|s| super::config_log::named_after(d, s))
            .max_by_key(|s| s.len())
    };
    let named = |f: &ImplFile, s: &str| {
        super::config_log::folders(&f.file.path)
            .iter()
            .any(|d| owner(d).is_some_and(|o| super::config_log::same_name(o, s)))
    };
    let mine: Vec<&ImplFile> = files.iter().filter(|f| f.benchmark == bm).collect();
    let linked: std::collections::BTreeSet<Option<&str>> = mine
        .iter()
        .filter(|f| named(f, system))
        .map(|f| f.implementation.as_deref())
        .collect();
    mine.into_iter()
        .filter(|f| {
            if named(f, system) {
                return true;
            }
            if systems.iter().any(|s| named(f, s)) {
                return false;
            }
            linked.is_empty()
                || f.implementation.is_none()
                || linked.contains(&f.implementation.as_deref())
        })
        .cloned()
        .collect()
}

/// The names of the folders of `<pkg>/results/`: the package's systems.
fn systems_of(pkg: &Path) -> std::collections::BTreeSet<String> {
    std::fs::read_dir(pkg.join("results"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `dir` is an HPC scaling folder (`strong`, `weak`).
fn is_scaling(dir: &Path) -> bool {
    dir.file_name()
        .is_some_and(|n| n == "strong" || n == "weak")
}

/// Whether a log sits where HPC packages keep results
/// (`results/<system>/<strong|weak>/<bm>/`).
fn is_hpc_log(log: &Path) -> bool {
    log.parent().and_then(Path::parent).is_some_and(is_scaling) && package_of(log).is_some()
}

/// The repeatability notes of the configs of `benchmark` among a
/// package's implementation files.
pub fn benchmark_notes(
    rules: &PolicyRules,
    files: &[ImplFile],
    benchmark: &str,
) -> Vec<RepeatabilityNote> {
    let mine: Vec<ImplFile> = files
        .iter()
        .filter(|f| f.benchmark == benchmark)
        .cloned()
        .collect();
    if mine.is_empty() {
        return Vec::new();
    }
    split(rules, super::check_configs(rules, &mine)).1
}

/// The repeatability notes of the packages `logs` sit in: for each log in
/// `<pkg>/results/<system>/<bm>/`, the configs of `<bm>` in that package
/// that a run of `<system>` uses (see [`of_system`]; what `mlaudit repeat`
/// shows when runs differ). The policy data of the
/// round the logs' paths name, else of the newest training round that has
/// one (the repeatability data is the same for every round). Logs outside
/// a package give nothing.
pub fn notes_for_logs(
    source: &crate::rulebook::source::RuleSource,
    logs: &[PathBuf],
) -> Vec<RepeatabilityNote> {
    let mut wanted: std::collections::BTreeSet<(PathBuf, String, String)> = Default::default();
    for l in logs {
        if let Some(place) = place_of(l) {
            wanted.insert(place);
        }
    }
    if wanted.is_empty() {
        return Vec::new();
    }
    let usage = if logs.iter().any(|l| is_hpc_log(l)) {
        "hpc"
    } else {
        "training"
    };
    let inferred = crate::discover::round::infer(source, usage, logs)
        .ok()
        .map(|c| c.ruleset);
    let rules = inferred
        .into_iter()
        .chain(
            crate::discover::round::versions(source, usage)
                .into_iter()
                .rev(),
        )
        .find_map(|v| PolicyRules::load(source, usage, &v).ok());
    let Some(rules) = rules else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut trees: std::collections::BTreeMap<PathBuf, Vec<ImplFile>> = Default::default();
    for (pkg, bm, system) in wanted {
        let files = trees
            .entry(pkg.clone())
            .or_insert_with(|| crate::discover::walk::discover(&pkg).implementation_files);
        let used = of_system(files, &bm, &system, &systems_of(&pkg));
        out.extend(benchmark_notes(&rules, &used, &bm));
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_and_benchmark_of_a_log() {
        let p = Path::new("round/Org/results/sys_a/bert/result_0.txt");
        assert_eq!(
            package_of(p),
            Some((PathBuf::from("round/Org"), "bert".to_string()))
        );
        assert_eq!(
            package_of(Path::new("r/Org/results/sys_a/strong/deepcam/result_0.txt")),
            Some((PathBuf::from("r/Org"), "deepcam".to_string()))
        );
        assert!(is_hpc_log(Path::new(
            "r/Org/results/sys_a/weak/cosmoflow/result_0.txt"
        )));
        assert!(!is_hpc_log(Path::new(
            "r/Org/results/sys_a/bert/result_0.txt"
        )));
        assert_eq!(
            package_of(Path::new("results/sys_a/bert/result_0.txt")),
            Some((PathBuf::from("."), "bert".to_string()))
        );
        assert_eq!(package_of(Path::new("x/result_0.txt")), None);
        assert_eq!(package_of(Path::new("a/b/c/result_0.txt")), None);
    }
}
