//! Which parts of the submissions in a repository a change touches
//! (`mlaudit check --staged`, `--changed-since REV`).
//!
//! A folder's verdict needs all its runs, so the unit of checking is the
//! whole `results/<system>/<benchmark>` folder, never a single log:
//!
//! | changed path (relative to the work-tree top) | touches |
//! |---|---|
//! | `<pkg>/results/<sys>/<bm>/…` | that benchmark folder |
//! | `<pkg>/results/<sys>/<file>` (e.g. `package_checker_params`) | every folder of `<sys>` |
//! | `<pkg>/systems/<sys>.json` | every folder of `<sys>` |
//! | anything else under a package (`benchmarks/`, a README, …) | the whole package |
//! | anything outside a package | nothing |
//!
//! A package is a folder with `results/` or `systems/` (how `mlaudit check`
//! recognises one). The folders of a system are those on disk now: the
//! working-tree files are what gets checked.

use crate::discover::git::{Changes, WorkTree};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What a change-driven check covers.
#[derive(Debug, Clone, Default)]
pub struct Checked {
    /// What to check, as display paths (relative to the current directory;
    /// `""` is the current directory itself).
    pub paths: Vec<String>,
    /// How many paths the change lists.
    pub changed: usize,
    /// The work-tree top relative to the current directory (`""` when the
    /// current directory is the top): the report's root.
    pub root: String,
}

/// Lists the changed paths with git and maps them to the folders and
/// packages to check, each whole (their working-tree files). The caller
/// runs the checks ([`crate::audit::check_paths`]).
pub fn changed_targets(changes: &Changes<'_>) -> anyhow::Result<Checked> {
    let wt = WorkTree::current()?;
    let changed = crate::discover::git::changed_paths(changes)?;
    let top = if wt.cdup.is_empty() {
        PathBuf::from(".")
    } else {
        PathBuf::from(&wt.cdup)
    };
    let t = targets(&top, &changed);
    let paths: Vec<String> = t
        .packages
        .iter()
        .chain(t.folders.iter())
        .map(|p| shown(&wt, p))
        .collect();
    Ok(Checked {
        paths,
        changed: changed.len(),
        root: wt.cdup.trim_end_matches('/').to_string(),
    })
}

impl Checked {
    /// The paths to check as file-system paths (`""` becomes `.`).
    pub fn inputs(&self) -> Vec<PathBuf> {
        self.paths
            .iter()
            .map(|p| PathBuf::from(if p.is_empty() { "." } else { p.as_str() }))
            .collect()
    }
}

/// The folders and packages a change touches, as paths relative to the
/// current directory (what [`changed_targets`] lists).
pub fn target_paths(changes: &Changes<'_>) -> anyhow::Result<Vec<PathBuf>> {
    Ok(changed_targets(changes)?.inputs())
}

/// A top-relative path written relative to the current directory.
fn shown(wt: &WorkTree, top_relative: &str) -> String {
    let p = wt.from_top(top_relative);
    p.trim_end_matches('/').to_string()
}

/// What to check, as paths relative to the top of the work tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Targets {
    /// Packages to check whole (`""` is a package at the top itself).
    pub packages: BTreeSet<String>,
    /// Benchmark folders outside those packages.
    pub folders: BTreeSet<String>,
}

impl Targets {
    pub fn is_empty(&self) -> bool {
        self.packages.is_empty() && self.folders.is_empty()
    }
}

/// Maps changed paths (relative to `top`, with `/`) to the folders and
/// packages to check; `top` is the work-tree top as a file-system path.
pub fn targets(top: &Path, changed: &[String]) -> Targets {
    let mut t = Targets::default();
    for path in changed {
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        let Some(touch) = classify(top, &parts) else {
            continue;
        };
        match touch {
            Touch::Package(p) => {
                t.packages.insert(p);
            }
            Touch::Folder(f) => {
                t.folders.insert(f);
            }
            Touch::System { package, system } => {
                if has_non_utf8_name(&top.join(join(&join(&package, "results"), &system))) {
                    // Such a folder cannot be named as text: the whole
                    // package is checked instead of skipping it.
                    t.packages.insert(package);
                    continue;
                }
                for f in system_folders(top, &package, &system) {
                    t.folders.insert(f);
                }
            }
        }
    }
    // A folder inside a package checked whole is checked with it.
    let packages = t.packages.clone();
    t.folders.retain(|f| !packages.iter().any(|p| within(f, p)));
    // Only what exists can be checked: a deleted folder has nothing left.
    t.folders.retain(|f| top.join(f).is_dir());
    t.packages.retain(|p| top.join(p).is_dir());
    t
}

enum Touch {
    Package(String),
    Folder(String),
    System { package: String, system: String },
}

fn classify(top: &Path, parts: &[&str]) -> Option<Touch> {
    let n = parts.len();
    // `results/<sys>/<bm>/<file…>` or `results/<sys>/<file>` anywhere in the path.
    for i in 0..n {
        let package = parts[..i].join("/");
        // HPC: `results/<sys>/<strong|weak>/<bm>/<file…>`.
        let scaling = i + 2 < n && crate::discover::tree::SCALING_FOLDERS.contains(&parts[i + 2]);
        match parts[i] {
            "results" if scaling && i + 4 < n => {
                return Some(Touch::Folder(parts[..i + 4].join("/")));
            }
            "results" if i + 3 < n && !scaling => {
                return Some(Touch::Folder(parts[..i + 3].join("/")));
            }
            "results" if scaling => {
                // A file directly in results/<sys>/<scaling>/: the system.
                let system = parts[i + 1].to_string();
                return Some(Touch::System { package, system });
            }
            "results" if i + 3 == n => {
                // A file directly in results/<sys>/, or a folder that was
                // removed as a whole (then it no longer matters).
                let system = parts[i + 1].to_string();
                return Some(Touch::System { package, system });
            }
            "systems" if i + 2 == n => {
                if let Some(system) = parts[i + 1].strip_suffix(".json") {
                    return Some(Touch::System {
                        package,
                        system: system.to_string(),
                    });
                }
                return Some(Touch::Package(package));
            }
            _ => {}
        }
    }
    // Anything else inside a package: the nearest enclosing folder that has
    // results/ or systems/.
    (0..n).rev().find_map(|i| {
        let dir = parts[..i].join("/");
        let d = top.join(&dir);
        (d.join("results").is_dir() || d.join("systems").is_dir()).then_some(Touch::Package(dir))
    })
}

/// Whether a name in `dir` is not UTF-8.
fn has_non_utf8_name(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|rd| {
        rd.filter_map(|e| e.ok())
            .any(|e| e.file_name().to_str().is_none())
    })
}

/// The benchmark folders of `system` in `package` (on disk now), sorted.
fn system_folders(top: &Path, package: &str, system: &str) -> Vec<String> {
    let rel = join(&join(package, "results"), system);
    // HPC systems list strong/<bm> and weak/<bm>.
    let mut out: Vec<String> = crate::discover::round::system_folder_benchmarks(&top.join(&rel))
        .unwrap_or_default()
        .into_iter()
        .map(|name| join(&rel, &name))
        .collect();
    out.sort();
    out
}

fn join(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a}/{b}")
    }
}

/// Whether `path` is `dir` or inside it (`dir` empty: everything is).
fn within(path: &str, dir: &str) -> bool {
    dir.is_empty()
        || path == dir
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn tree() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for p in [
            "round/A/results/s1/bert",
            "round/A/results/s1/gnn",
            "round/A/results/s2/bert",
            "round/A/systems",
            "round/A/benchmarks/bert",
            "B/results/s/bm",
            "docs",
        ] {
            fs::create_dir_all(d.path().join(p)).unwrap();
        }
        d
    }

    fn set(v: &[&str]) -> BTreeSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn an_hpc_log_touches_its_scaling_folder() {
        let d = tree();
        for p in [
            "H/results/s/strong/deepcam",
            "H/results/s/weak/oc20",
            "H/systems",
        ] {
            fs::create_dir_all(d.path().join(p)).unwrap();
        }
        let t = targets(
            d.path(),
            &["H/results/s/weak/oc20/result_0.txt".to_string()],
        );
        assert_eq!(t.folders, set(&["H/results/s/weak/oc20"]));
        let t = targets(d.path(), &["H/systems/s.json".to_string()]);
        assert_eq!(
            t.folders,
            set(&["H/results/s/strong/deepcam", "H/results/s/weak/oc20"])
        );
    }

    #[test]
    fn a_log_touches_its_folder() {
        let d = tree();
        let t = targets(
            d.path(),
            &["round/A/results/s1/bert/result_0.txt".to_string()],
        );
        assert_eq!(t.folders, set(&["round/A/results/s1/bert"]));
        assert!(t.packages.is_empty());
    }

    #[test]
    fn a_system_description_touches_every_folder_of_the_system() {
        let d = tree();
        let t = targets(d.path(), &["round/A/systems/s1.json".to_string()]);
        assert_eq!(
            t.folders,
            set(&["round/A/results/s1/bert", "round/A/results/s1/gnn"])
        );
        let t = targets(
            d.path(),
            &["round/A/results/s2/package_checker_params".to_string()],
        );
        assert_eq!(t.folders, set(&["round/A/results/s2/bert"]));
    }

    #[test]
    fn other_package_files_touch_the_package_and_outside_files_nothing() {
        let d = tree();
        let t = targets(
            d.path(),
            &[
                "round/A/benchmarks/bert/implementations/x/run.sh".to_string(),
                "round/A/results/s1/bert/result_0.txt".to_string(),
                "B/results/s/bm/result_1.txt".to_string(),
                "docs/notes.md".to_string(),
                "README.md".to_string(),
            ],
        );
        assert_eq!(t.packages, set(&["round/A"]));
        assert_eq!(t.folders, set(&["B/results/s/bm"]));
    }

    #[test]
    fn deleted_folders_are_not_checked() {
        let d = tree();
        let t = targets(
            d.path(),
            &["round/A/results/s9/bert/result_0.txt".to_string()],
        );
        assert!(t.is_empty());
    }

    #[test]
    fn a_package_at_the_top() {
        let d = tempfile::tempdir().unwrap();
        fs::create_dir_all(d.path().join("results/s/bm")).unwrap();
        let t = targets(d.path(), &["results/s/bm/result_0.txt".to_string()]);
        assert_eq!(t.folders, set(&["results/s/bm"]));
        let t = targets(d.path(), &["README.md".to_string()]);
        assert_eq!(t.packages, set(&[""]));
    }
}
