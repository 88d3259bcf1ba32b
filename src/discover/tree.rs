//! The `Submission` tree: what discovery found on disk, before any check.
//!
//! Every path is a display path (see [`super::paths`]); `fs` fields hold the
//! path to open. Lists are sorted by display path, so output is
//! deterministic whatever order the file system lists entries in.

use crate::finding::Finding;
use serde::Serialize;
use std::path::PathBuf;

/// What the user pointed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InputKind {
    /// A submitter folder with `systems/` and/or `results/`.
    Package,
    /// One `results/<system>/<benchmark>` folder.
    BenchmarkFolder,
    /// One or more log files.
    Logs,
}

/// A file we will read, by display path and by file-system path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileRef {
    pub path: String,
    #[serde(skip)]
    pub fs: PathBuf,
}

/// `systems/<id>.json`.
#[derive(Debug, Clone, Serialize)]
pub struct SystemFile {
    /// The system description id: the file name without `.json`.
    pub id: String,
    pub file: FileRef,
}

/// A `package_checker_params` file, read at discovery (it is a few bytes).
#[derive(Debug, Clone, Serialize)]
pub struct ParamsFile {
    pub path: String,
    /// The lines, without their line endings.
    pub lines: Vec<String>,
    /// Whether the last line ends with a newline. The official tool honours
    /// only a line with no trailing newline.
    pub trailing_newline: bool,
}

/// `power/` inside a benchmark folder: `power/<result_name>/{node_*,sw_*}`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PowerDir {
    pub path: String,
    /// Sub-folder name (e.g. `result_0`) → names of the files in it, sorted.
    pub runs: std::collections::BTreeMap<String, Vec<String>>,
    /// Entries of `power/` that are files, not run folders.
    pub stray: Vec<String>,
}

/// `results/<system>/<benchmark>/`.
#[derive(Debug, Clone, Serialize)]
pub struct BenchmarkDir {
    pub path: String,
    #[serde(skip)]
    pub fs: PathBuf,
    pub system: String,
    pub benchmark: String,
    /// HPC: the scaling folder the benchmark folder sits in (`strong` or
    /// `weak`: `results/<system>/<scaling>/<benchmark>`); `None` for the
    /// training layout `results/<system>/<benchmark>`.
    pub scaling: Option<String>,
    /// Files whose name matches `result_*.txt` (the official glob), sorted.
    pub result_logs: Vec<FileRef>,
    /// Every other visible entry (files and folders, `scaling.json`,
    /// `power`, `package_checker_params` included), by name, sorted.
    pub other_entries: Vec<String>,
    pub power: Option<PowerDir>,
    pub scaling_json: Option<String>,
    pub params: Option<ParamsFile>,
}

/// The HPC scaling folders: `results/<system>/{strong,weak}/<benchmark>`.
pub const SCALING_FOLDERS: [&str; 2] = ["strong", "weak"];

impl BenchmarkDir {
    /// The folder's name as the result tables give it: `bert`, or for HPC
    /// `strong/deepcam`.
    pub fn label(&self) -> String {
        match &self.scaling {
            Some(s) => format!("{s}/{}", self.benchmark),
            None => self.benchmark.clone(),
        }
    }

    /// Whether this is an HPC weak-scaling folder.
    pub fn is_weak(&self) -> bool {
        self.scaling.as_deref() == Some("weak")
    }

    /// Visible entries in the folder, as the official `glob('<dir>/*')` counts them.
    pub fn entry_count(&self) -> usize {
        self.result_logs.len() + self.other_entries.len()
    }
}

/// A file under `benchmarks/<bm>/implementations/` (or the singular
/// `benchmark/` some packages use).
#[derive(Debug, Clone, Serialize)]
pub struct ImplFile {
    pub benchmark: String,
    /// The implementation folder (first level under `implementations/`),
    /// `None` for a file directly in `implementations/`.
    pub implementation: Option<String>,
    pub file: FileRef,
}

/// Everything discovery found.
#[derive(Debug, Clone, Serialize)]
pub struct Submission {
    pub kind: InputKind,
    /// The root as the user typed it (display form).
    pub root: String,
    /// The submitter folder name, when the input is (inside) a package.
    pub submitter: Option<String>,
    pub systems: Vec<SystemFile>,
    /// `results/<system>/package_checker_params`, by system.
    pub system_params: Vec<(String, ParamsFile)>,
    /// Systems that have a `results/<system>/` folder.
    pub result_systems: Vec<String>,
    pub benchmarks: Vec<BenchmarkDir>,
    pub implementation_files: Vec<ImplFile>,
    /// Log files given directly (kind `Logs`).
    pub logs: Vec<FileRef>,
    /// Output of the official tools shipped inside the package
    /// (`package_checker.log`, `summary.json`, `repo_checker.log`).
    pub shipped_reports: Vec<String>,
    /// Findings raised while walking the tree (unreadable entries, links
    /// not followed, stray files).
    pub findings: Vec<Finding>,
}

impl Submission {
    pub fn empty(kind: InputKind, root: String) -> Submission {
        Submission {
            kind,
            root,
            submitter: None,
            systems: Vec::new(),
            system_params: Vec::new(),
            result_systems: Vec::new(),
            benchmarks: Vec::new(),
            implementation_files: Vec::new(),
            logs: Vec::new(),
            shipped_reports: Vec::new(),
            findings: Vec::new(),
        }
    }

    pub fn system(&self, id: &str) -> Option<&SystemFile> {
        self.systems.iter().find(|s| s.id == id)
    }

    /// Every result log of every benchmark folder, in order.
    pub fn all_result_logs(&self) -> impl Iterator<Item = &FileRef> {
        self.benchmarks.iter().flat_map(|b| b.result_logs.iter())
    }
}
