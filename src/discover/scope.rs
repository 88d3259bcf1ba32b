//! What `check` is given, and why nothing checked is never a pass.
//!
//! An input is a package, a round folder (a folder of packages, checked
//! as its packages), a `results/<system>` folder (checked as its
//! benchmark folders), a benchmark folder or a log file. Anything else,
//! and any input in which not one log of the round is checked, is
//! "nothing to check": the command stops with exit 2 and one line saying
//! why, instead of a PASS over zero logs.

use crate::discover::walk::is_result_log_name;
use std::path::{Path, PathBuf};

/// One thing to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A package or a benchmark folder.
    Folder(PathBuf),
    /// A log file.
    Log(PathBuf),
}

/// The inputs `paths` name: a `results/<system>` folder becomes its
/// benchmark folders. Errors (one line each) for a path that does not
/// exist or is neither of the kinds `check` knows.
pub fn inputs(paths: &[PathBuf]) -> anyhow::Result<Vec<Input>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_file() {
            out.push(Input::Log(p.clone()));
            continue;
        }
        if !p.exists() {
            anyhow::bail!("{}: no such file or folder", p.display());
        }
        if !p.is_dir() {
            anyhow::bail!(
                "nothing to check: {} is not a regular file or a folder",
                p.display()
            );
        }
        if is_package(p) || is_benchmark_folder(p) {
            out.push(Input::Folder(p.clone()));
            continue;
        }
        if let Some(packages) = round_packages(p) {
            // A round folder: each package in it, checked as if named.
            out.extend(packages.into_iter().map(Input::Folder));
            continue;
        }
        if let Some(names) = crate::discover::round::system_folder_benchmarks(p) {
            if names.is_empty() {
                anyhow::bail!(
                    "nothing to check: {} is a results/<system> folder with no benchmark folder in it",
                    p.display()
                );
            }
            for n in names {
                out.push(Input::Folder(p.join(n)));
            }
            continue;
        }
        if p.join("results").exists() {
            anyhow::bail!(
                "nothing to check: {} is not a folder, so {} is not a package (the official package_checker crashes: NotADirectoryError)",
                p.join("results").display(),
                p.display()
            );
        }
        anyhow::bail!(
            "nothing to check: {} is neither a package (no results/ or systems/ folder), a round folder of packages, a results/<system> folder, a benchmark folder (no result_*.txt) nor a log file (the official package_checker crashes on it: FileNotFoundError)",
            p.display()
        );
    }
    Ok(out)
}

/// For a round folder (a folder that is not itself a package, a benchmark
/// folder or a `results/<system>` folder, with at least one package among
/// its sub-folders): its packages, sorted by name. Hidden sub-folders and
/// sub-folders that are not packages are left out.
pub fn round_packages(p: &Path) -> Option<Vec<PathBuf>> {
    if !p.is_dir()
        || is_package(p)
        || is_benchmark_folder(p)
        || crate::discover::round::is_system_folder(p)
    {
        return None;
    }
    let mut names: Vec<std::ffi::OsString> = std::fs::read_dir(p)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .filter(|n| !n.to_string_lossy().starts_with('.'))
        .filter(|n| is_package(&p.join(n)))
        .collect();
    if names.is_empty() {
        return None;
    }
    names.sort();
    Some(names.into_iter().map(|n| p.join(n)).collect())
}

/// A folder with `results/` or `systems/` (how discovery recognises one).
pub fn is_package(p: &Path) -> bool {
    p.join("results").is_dir() || p.join("systems").is_dir()
}

/// A folder with a `result_*.txt` file, or one at `results/<system>/<bm>`.
pub fn is_benchmark_folder(p: &Path) -> bool {
    let has_log = std::fs::read_dir(p).is_ok_and(|rd| {
        rd.filter_map(|e| e.ok())
            .any(|e| is_result_log_name(&e.file_name().to_string_lossy()))
    });
    let canon = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let under_results = canon
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .is_some_and(|n| n == "results");
    has_log || (under_results && !is_package(p))
}

/// Why a folder input gave no log to check, in one line (after
/// "nothing to check: "). `report` is its check; `roster` the benchmarks
/// of the round.
pub fn why_nothing(
    input: &Path,
    report: &crate::report::Report,
    roster: &[String],
    ruleset: &str,
) -> String {
    let shown = input.display();
    let results = input.join("results");
    if is_package(input) {
        if !results.exists() {
            return format!(
                "{shown} has no results/ folder (the official package_checker crashes: FileNotFoundError)"
            );
        }
        if !results.is_dir() {
            return format!(
                "{} is not a folder (the official package_checker crashes: NotADirectoryError)",
                results.display()
            );
        }
        let systems = std::fs::read_dir(&results)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .filter(|e| e.path().is_dir())
                    .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                    .count()
            })
            .unwrap_or(0);
        if systems == 0 {
            return format!(
                "{} holds no system folder (the official package_checker reports SUCCESS)",
                results.display()
            );
        }
    }
    if report.benchmarks.is_empty() {
        if !is_package(input) && is_benchmark_folder(input) {
            return format!("the benchmark folder {shown} holds no result_*.txt log");
        }
        return format!("{shown} holds no benchmark folder");
    }
    let skipped: Vec<&str> = report
        .benchmarks
        .iter()
        .filter(|b| b.verdict == crate::aggregate::package::Verdict::Skipped)
        .map(|b| b.benchmark.as_str())
        .collect();
    if skipped.len() == report.benchmarks.len() {
        let mut names: Vec<&str> = skipped.clone();
        names.sort();
        names.dedup();
        let names: Vec<String> = names
            .iter()
            .map(|n| match did_you_mean(n, roster) {
                Some(m) => format!("{n} (did you mean '{m}'?)"),
                None => n.to_string(),
            })
            .collect();
        return format!(
            "no folder of {shown} is a benchmark of {ruleset} (found {}; the round has {}); the official package_checker skips them and reports SUCCESS",
            names.join(", "),
            roster.join(", ")
        );
    }
    format!(
        "the benchmark folders of {shown} hold no result_*.txt log (the official package_checker fails them: wrong number of result files)"
    )
}

/// The benchmark of `roster` closest to `name`, when it is close enough to
/// be a misspelling (`BERT-large` → `bert`, `RetinaNet` → `retinanet`).
pub fn did_you_mean<'a>(
    name: &str,
    roster: impl IntoIterator<Item = &'a String>,
) -> Option<&'a str> {
    let norm = |s: &str| {
        s.to_ascii_lowercase()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
    };
    let n = norm(name);
    if n.is_empty() {
        return None;
    }
    let mut best: Option<(usize, &str)> = None;
    for b in roster {
        let m = norm(b);
        let d = if n.starts_with(&m) || m.starts_with(&n) {
            // A prefix (bert / bertlarge) is close whatever the length.
            1
        } else {
            edit_distance(&n, &m)
        };
        let limit = (m.len().max(n.len()) / 3).max(1);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) && !m.is_empty() {
            best = Some((d, b.as_str()));
        }
    }
    best.map(|(_, b)| b)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_are_suggested() {
        let roster: Vec<String> = ["bert", "retinanet", "llama2_70b_lora", "rgat"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(did_you_mean("BERT-large", &roster), Some("bert"));
        assert_eq!(did_you_mean("RetinaNet", &roster), Some("retinanet"));
        assert_eq!(
            did_you_mean("llama2-70b-lora", &roster),
            Some("llama2_70b_lora")
        );
        assert_eq!(did_you_mean("resnet", &roster), None);
    }

    #[test]
    fn a_round_folder_is_its_packages() {
        let round = tempfile::tempdir().unwrap();
        let r = round.path();
        for d in ["B/results", "A/systems", ".hidden/results", "notes"] {
            std::fs::create_dir_all(r.join(d)).unwrap();
        }
        let want = vec![r.join("A"), r.join("B")];
        assert_eq!(round_packages(r), Some(want.clone()));
        assert_eq!(round_packages(&r.join("A")), None, "a package");
        assert_eq!(round_packages(&r.join("notes")), None, "no package in it");
        let got = inputs(&[r.to_path_buf()]).unwrap();
        assert_eq!(got, want.into_iter().map(Input::Folder).collect::<Vec<_>>());
    }
}
