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
use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};

/// What a change-driven check covers.
#[derive(Debug, Clone, Default)]
pub struct Checked {
    /// What to check, relative to the current directory (`""` is the
    /// current directory itself). Paths, not text: a name that is not
    /// UTF-8 is checked like any other.
    pub paths: Vec<PathBuf>,
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
    let paths: Vec<PathBuf> = t
        .packages
        .iter()
        .chain(t.folders.iter())
        .map(|p| wt.from_top_path(p))
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
            .map(|p| {
                if p.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    p.clone()
                }
            })
            .collect()
    }
}

/// The folders and packages a change touches, as paths relative to the
/// current directory (what [`changed_targets`] lists).
pub fn target_paths(changes: &Changes<'_>) -> anyhow::Result<Vec<PathBuf>> {
    Ok(changed_targets(changes)?.inputs())
}

/// What to check, as paths relative to the top of the work tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Targets {
    /// Packages to check whole (`""` is a package at the top itself).
    pub packages: BTreeSet<PathBuf>,
    /// Benchmark folders outside those packages.
    pub folders: BTreeSet<PathBuf>,
}

impl Targets {
    pub fn is_empty(&self) -> bool {
        self.packages.is_empty() && self.folders.is_empty()
    }
}

/// Maps changed paths (relative to `top`) to the folders and packages to
/// check; `top` is the work-tree top as a file-system path. Names are
/// compared as they are on disk (bytes), never as lossy text.
pub fn targets(top: &Path, changed: &[PathBuf]) -> Targets {
    let mut t = Targets::default();
    for path in changed {
        let parts: Vec<&OsStr> = path
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n),
                _ => None,
            })
            .collect();
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
                for f in system_folders(top, &package, &system) {
                    t.folders.insert(f);
                }
            }
        }
    }
    // A folder inside a package checked whole is checked with it.
    let packages = t.packages.clone();
    t.folders
        .retain(|f| !packages.iter().any(|p| f.starts_with(p)));
    // Only what exists can be checked: a deleted folder has nothing left.
    t.folders.retain(|f| top.join(f).is_dir());
    t.packages.retain(|p| top.join(p).is_dir());
    t
}

enum Touch {
    Package(PathBuf),
    Folder(PathBuf),
    System { package: PathBuf, system: OsString },
}

fn joined(parts: &[&OsStr]) -> PathBuf {
    parts.iter().collect()
}

fn classify(top: &Path, parts: &[&OsStr]) -> Option<Touch> {
    let n = parts.len();
    // `results/<sys>/<bm>/<file…>` or `results/<sys>/<file>` anywhere in the path.
    for i in 0..n {
        let package = joined(&parts[..i]);
        // HPC: `results/<sys>/<strong|weak>/<bm>/<file…>`.
        let scaling = i + 2 < n
            && crate::discover::tree::SCALING_FOLDERS
                .iter()
                .any(|s| parts[i + 2] == *s);
        if parts[i] == "results" && scaling && i + 4 < n {
            return Some(Touch::Folder(joined(&parts[..i + 4])));
        }
        if parts[i] == "results" && i + 3 < n && !scaling {
            return Some(Touch::Folder(joined(&parts[..i + 3])));
        }
        if parts[i] == "results" && (scaling || i + 3 == n) {
            // A file directly in results/<sys>/ or results/<sys>/<scaling>/,
            // or a folder that was removed as a whole (then it no longer
            // matters): the system.
            let system = parts[i + 1].to_os_string();
            return Some(Touch::System { package, system });
        }
        if parts[i] == "systems" && i + 2 == n {
            let name = Path::new(parts[i + 1]);
            if name.extension().is_some_and(|e| e == "json") {
                if let Some(system) = name.file_stem() {
                    return Some(Touch::System {
                        package,
                        system: system.to_os_string(),
                    });
                }
            }
            return Some(Touch::Package(package));
        }
    }
    // Anything else inside a package: the nearest enclosing folder that has
    // results/ or systems/.
    (0..n).rev().find_map(|i| {
        let dir = joined(&parts[..i]);
        let d = top.join(&dir);
        (d.join("results").is_dir() || d.join("systems").is_dir()).then_some(Touch::Package(dir))
    })
}

/// The benchmark folders of `system` in `package` (on disk now), sorted.
fn system_folders(top: &Path, package: &Path, system: &OsStr) -> Vec<PathBuf> {
    let rel = package.join("results").join(system);
    let sub_folders = |dir: &Path| -> Vec<OsString> {
        let Ok(rd) = std::fs::read_dir(top.join(dir)) else {
            return Vec::new();
        };
        rd.filter_map(|e| e.ok())
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name())
            .filter(|name| !name.as_encoded_bytes().starts_with(b"."))
            .collect()
    };
    let mut out = Vec::new();
    for name in sub_folders(&rel) {
        // HPC systems list strong/<bm> and weak/<bm>.
        if crate::discover::tree::SCALING_FOLDERS
            .iter()
            .any(|s| name == *s)
        {
            let scaling = rel.join(&name);
            out.extend(sub_folders(&scaling).into_iter().map(|b| scaling.join(b)));
        } else {
            out.push(rel.join(name));
        }
    }
    out.sort();
    out
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

    fn set(v: &[&str]) -> BTreeSet<PathBuf> {
        v.iter().map(PathBuf::from).collect()
    }

    fn paths(v: &[&str]) -> Vec<PathBuf> {
        v.iter().map(PathBuf::from).collect()
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
        let t = targets(d.path(), &paths(&["H/results/s/weak/oc20/result_0.txt"]));
        assert_eq!(t.folders, set(&["H/results/s/weak/oc20"]));
        let t = targets(d.path(), &paths(&["H/systems/s.json"]));
        assert_eq!(
            t.folders,
            set(&["H/results/s/strong/deepcam", "H/results/s/weak/oc20"])
        );
    }

    #[test]
    fn a_log_touches_its_folder() {
        let d = tree();
        let t = targets(d.path(), &paths(&["round/A/results/s1/bert/result_0.txt"]));
        assert_eq!(t.folders, set(&["round/A/results/s1/bert"]));
        assert!(t.packages.is_empty());
    }

    #[test]
    fn a_system_description_touches_every_folder_of_the_system() {
        let d = tree();
        let t = targets(d.path(), &paths(&["round/A/systems/s1.json"]));
        assert_eq!(
            t.folders,
            set(&["round/A/results/s1/bert", "round/A/results/s1/gnn"])
        );
        let t = targets(
            d.path(),
            &paths(&["round/A/results/s2/package_checker_params"]),
        );
        assert_eq!(t.folders, set(&["round/A/results/s2/bert"]));
    }

    #[test]
    fn other_package_files_touch_the_package_and_outside_files_nothing() {
        let d = tree();
        let t = targets(
            d.path(),
            &paths(&[
                "round/A/benchmarks/bert/implementations/x/run.sh",
                "round/A/results/s1/bert/result_0.txt",
                "B/results/s/bm/result_1.txt",
                "docs/notes.md",
                "README.md",
            ]),
        );
        assert_eq!(t.packages, set(&["round/A"]));
        assert_eq!(t.folders, set(&["B/results/s/bm"]));
    }

    #[test]
    fn deleted_folders_are_not_checked() {
        let d = tree();
        let t = targets(d.path(), &paths(&["round/A/results/s9/bert/result_0.txt"]));
        assert!(t.is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn names_that_are_not_utf8_are_kept_as_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let d = tempfile::tempdir().unwrap();
        let pkg = PathBuf::from(OsStr::from_bytes(b"P\xff"));
        for sys in [&b"s\xfe"[..], &b"s\xfd"[..]] {
            let sys = OsStr::from_bytes(sys);
            fs::create_dir_all(d.path().join(&pkg).join("results").join(sys).join("bm")).unwrap();
        }
        fs::create_dir_all(d.path().join(&pkg).join("systems")).unwrap();
        // A log in a package whose name is not UTF-8 touches its folder.
        let log = pkg
            .join("results")
            .join(OsStr::from_bytes(b"s\xfe"))
            .join("bm/result_0.txt");
        let t = targets(d.path(), std::slice::from_ref(&log));
        let folder = pkg
            .join("results")
            .join(OsStr::from_bytes(b"s\xfe"))
            .join("bm");
        assert_eq!(t.folders, BTreeSet::from([folder]));
        // A system description touches that system's folders only.
        let json = pkg.join("systems").join(OsStr::from_bytes(b"s\xfd.json"));
        let t = targets(d.path(), &[json]);
        let other = pkg
            .join("results")
            .join(OsStr::from_bytes(b"s\xfd"))
            .join("bm");
        assert_eq!(t.folders, BTreeSet::from([other]));
        // Anything else in it touches the package.
        let t = targets(d.path(), &[pkg.join("README.md")]);
        assert_eq!(t.packages, BTreeSet::from([pkg]));
    }

    #[test]
    fn a_package_at_the_top() {
        let d = tempfile::tempdir().unwrap();
        fs::create_dir_all(d.path().join("results/s/bm")).unwrap();
        let t = targets(d.path(), &paths(&["results/s/bm/result_0.txt"]));
        assert_eq!(t.folders, set(&["results/s/bm"]));
        let t = targets(d.path(), &paths(&["README.md"]));
        assert_eq!(t.packages, set(&[""]));
    }
}
