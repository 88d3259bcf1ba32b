//! Discovery: turn what the user named into a [`Submission`] tree.
//!
//! Reads folder listings and the few-byte `package_checker_params` files,
//! never log contents. Never writes. Symbolic links are followed only when
//! they resolve to a place inside the checked tree that has not been walked
//! yet; a link out of the tree, a broken link or a loop is a finding. An
//! unreadable file or folder is a finding, never an abort. Hidden entries
//! (names starting with `.`) are skipped, as the official `glob` does.

use super::listing::Listing;
use super::paths::{display_root, join};
use super::tree::*;
use crate::finding::code;
use crate::finding::Finding;
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;

/// The walker's sets are keyed by a path's bytes, hashed fast: hashing a
/// `Path` goes component by component (11.8M instructions on v5.1
/// GigaComputing). The paths are built the same way wherever they are
/// looked up; a miss only costs a `canonicalize`. Seeded per run: the
/// names come from the checked tree.
type Fast = foldhash::fast::RandomState;
use std::fs;
use std::path::{Path, PathBuf};

/// Official-tool output that submitters sometimes ship inside the package.
const SHIPPED_REPORTS: &[&str] = &["package_checker.log", "summary.json", "repo_checker.log"];
/// Files expected at the package root besides the three folders.
const ROOT_DOCS: &[&str] = &[
    "LICENSE",
    "LICENSE.md",
    "LICENSE.txt",
    "README.md",
    "README",
];
pub const PARAMS_FILE: &str = "package_checker_params";

/// Whether `name` matches the official glob `result_*.txt`.
pub fn is_result_log_name(name: &str) -> bool {
    name.starts_with("result_") && name.ends_with(".txt") && name.len() >= "result_.txt".len()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
    /// A socket, fifo or device: listed, never opened.
    Other,
}

struct Entry {
    name: String,
    fs: PathBuf,
    path: String,
    kind: Kind,
}

struct Walker<'l> {
    /// The package's folders, listed already (by the repository checks'
    /// walk): a folder found there is not listed again.
    listing: Option<&'l Listing>,
    root_canon: PathBuf,
    visited: HashSet<OsString, Fast>,
    /// Canonical path of every folder entered, by the path it was entered
    /// through: a real sub-folder's is its parent's plus its name, with no
    /// `canonicalize` (which reads every component: quadratic in depth).
    canon_of: HashMap<OsString, PathBuf, Fast>,
    /// Folders a listing saw as real folders (not links): entered without
    /// asking the file system again.
    real_dirs: HashSet<OsString, Fast>,
    findings: Vec<Finding>,
    /// Hidden entries (`.env`, `.hydra/`) are walked too, `.git` aside:
    /// set for implementation trees, whose hidden configs the policy reads.
    hidden: bool,
}

impl<'l> Walker<'l> {
    /// The same walk (what it walked, its findings), reading folders from
    /// another listing.
    fn relisted<'m>(self, listing: Option<&'m Listing>) -> Walker<'m> {
        Walker {
            listing,
            root_canon: self.root_canon,
            visited: self.visited,
            canon_of: self.canon_of,
            real_dirs: self.real_dirs,
            findings: self.findings,
            hidden: self.hidden,
        }
    }

    /// A walker that walked nothing, for [`finish`].
    fn new_empty() -> Walker<'l> {
        Walker {
            listing: None,
            root_canon: PathBuf::new(),
            visited: HashSet::default(),
            canon_of: HashMap::default(),
            real_dirs: HashSet::default(),
            findings: Vec::new(),
            hidden: false,
        }
    }

    fn new(root: &Path, listing: Option<&'l Listing>) -> Walker<'l> {
        Walker {
            listing,
            root_canon: fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf()),
            visited: HashSet::default(),
            canon_of: HashMap::default(),
            real_dirs: HashSet::default(),
            findings: Vec::new(),
            hidden: false,
        }
    }

    fn unreadable(&mut self, path: &str, what: &str, err: &dyn std::fmt::Display) {
        self.findings.push(
            Finding::of(code::PKG010, path, format!("cannot read {what}: {err}"))
                .with_help("make the file or folder readable, or remove it from the package"),
        );
    }

    fn link_skipped(&mut self, path: &str, why: String) {
        self.findings
            .push(Finding::of(code::PKG011, path, why).with_help(
                "replace the symbolic link by the file or folder it points to, inside the package",
            ));
    }

    /// Marks the folder as walked; false (and a finding) when it was walked
    /// already, i.e. a link led back into it.
    fn enter(&mut self, fs_path: &Path, path: &str) -> bool {
        let from_parent = match (fs_path.parent(), fs_path.file_name()) {
            (Some(parent), Some(name))
                if self.real_dirs.contains(fs_path.as_os_str())
                    || fs::symlink_metadata(fs_path).is_ok_and(|m| m.is_dir()) =>
            {
                self.canon_of.get(parent.as_os_str()).map(|c| c.join(name))
            }
            _ => None,
        };
        let canon = match from_parent.map_or_else(|| fs::canonicalize(fs_path), Ok) {
            Ok(c) => c,
            Err(e) => {
                self.unreadable(path, "folder", &e);
                return false;
            }
        };
        self.canon_of
            .insert(fs_path.as_os_str().to_owned(), canon.clone());
        if self.visited.insert(canon.clone().into_os_string()) {
            true
        } else {
            self.link_skipped(
                path,
                format!(
                    "folder already walked through another path ({}); not walked twice",
                    canon.display()
                ),
            );
            false
        }
    }

    /// Resolves a symbolic link; `None` (with a finding) when it must not be followed.
    fn follow_link(&mut self, fs_path: &Path, path: &str) -> Option<Kind> {
        let target = match fs::canonicalize(fs_path) {
            Ok(t) => t,
            Err(e) => {
                self.link_skipped(path, format!("broken symbolic link ({e}); not followed"));
                return None;
            }
        };
        if !target.starts_with(&self.root_canon) {
            self.link_skipped(
                path,
                format!(
                    "symbolic link points outside the checked tree ({}); not followed",
                    target.display()
                ),
            );
            return None;
        }
        let meta = match fs::metadata(&target) {
            Ok(m) => m,
            Err(e) => {
                self.unreadable(path, "link target", &e);
                return None;
            }
        };
        if meta.is_dir() {
            let here = fs_path
                .parent()
                .and_then(|p| fs::canonicalize(p).ok())
                .unwrap_or_default();
            if here.starts_with(&target) {
                self.link_skipped(
                    path,
                    format!(
                        "symbolic link loops back to {}; not followed",
                        target.display()
                    ),
                );
                return None;
            }
            if self.visited.contains(target.as_os_str()) {
                self.link_skipped(
                    path,
                    format!(
                        "symbolic link to {}, a folder walked already through another path; not followed",
                        target.display()
                    ),
                );
                return None;
            }
            Some(Kind::Dir)
        } else if meta.is_file() {
            Some(Kind::File)
        } else {
            Some(Kind::Other)
        }
    }

    /// The visible entries of a folder, sorted by name.
    fn list(&mut self, fs_path: &Path, path: &str) -> Vec<Entry> {
        let mut out = Vec::new();
        if let Some(folder) = self.listing.and_then(|l| l.folder(fs_path)) {
            let items = match folder {
                Ok(items) => items,
                Err(e) => {
                    self.unreadable(path, "folder", e);
                    return out;
                }
            };
            for item in items {
                let item = match item {
                    Ok(i) => i,
                    Err(e) => {
                        self.unreadable(path, "folder entry", e);
                        continue;
                    }
                };
                let kind = item
                    .kind
                    .as_ref()
                    .map(|k| *k)
                    .map_err(|e| e as &dyn std::fmt::Display);
                if let Some(e) = self.entry(fs_path, path, &item.name, kind) {
                    out.push(e);
                }
            }
        } else {
            let rd = match fs::read_dir(fs_path) {
                Ok(rd) => rd,
                Err(e) => {
                    self.unreadable(path, "folder", &e);
                    return Vec::new();
                }
            };
            for item in rd {
                let item = match item {
                    Ok(i) => i,
                    Err(e) => {
                        self.unreadable(path, "folder entry", &e);
                        continue;
                    }
                };
                let kind = item.file_type();
                let kind = kind
                    .as_ref()
                    .map(|k| *k)
                    .map_err(|e| e as &dyn std::fmt::Display);
                if let Some(e) = self.entry(fs_path, path, &item.file_name(), kind) {
                    out.push(e);
                }
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// One entry of the folder at `fs_path` (shown as `path`), with its own
    /// type: `None` for a hidden entry, a link not followed or an entry
    /// whose type could not be read (with its finding).
    fn entry(
        &mut self,
        fs_path: &Path,
        path: &str,
        file_name: &std::ffi::OsStr,
        kind: Result<fs::FileType, &dyn std::fmt::Display>,
    ) -> Option<Entry> {
        let name = super::paths::display_name(file_name);
        if name.starts_with('.') && !(self.hidden && name != ".git") {
            return None;
        }
        let child_fs = fs_path.join(file_name);
        let child = join(path, &name);
        let kind = match kind {
            Ok(t) if t.is_symlink() => self.follow_link(&child_fs, &child)?,
            Ok(t) if t.is_dir() => {
                self.real_dirs.insert(child_fs.as_os_str().to_owned());
                Kind::Dir
            }
            Ok(t) if t.is_file() => Kind::File,
            Ok(_) => Kind::Other,
            Err(e) => {
                self.unreadable(&child, "entry", e);
                return None;
            }
        };
        Some(Entry {
            name,
            fs: child_fs,
            path: child,
            kind,
        })
    }

    /// A finding about an entry the walk ignores (PKG012, PKG013: notes).
    fn note(&mut self, code: code::Code, path: &str, message: String, help: &str) {
        self.findings
            .push(Finding::of(code, path, message).with_help(help));
    }
}

fn read_params(w: &mut Walker, fs_path: &Path, path: &str) -> Option<ParamsFile> {
    match crate::safe_io::read_regular(fs_path, crate::safe_io::MAX_SMALL_FILE_BYTES) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let trailing_newline = text.ends_with('\n');
            let lines = text
                .split('\n')
                .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
                .collect::<Vec<_>>();
            // `split` yields a final empty piece after a trailing newline.
            let lines = if trailing_newline {
                lines[..lines.len() - 1].to_vec()
            } else {
                lines
            };
            Some(ParamsFile {
                path: path.to_string(),
                lines,
                trailing_newline,
            })
        }
        Err(e) => {
            w.unreadable(path, "file", &e);
            None
        }
    }
}

/// Discovers what `input` is and builds its tree.
pub fn discover(input: &Path) -> Submission {
    discover_listed(input, None)
}

/// [`discover`], reading folders from `listing` (a [`Listing`] of
/// `input`) where it holds them.
pub fn discover_listed(input: &Path, listing: Option<&Listing>) -> Submission {
    let root = display_root(input);
    let meta = match fs::metadata(input) {
        Ok(m) => m,
        Err(e) => {
            let mut s = Submission::empty(InputKind::Package, root.clone());
            s.findings.push(Finding::of(
                code::PKG010,
                &root,
                format!("cannot read the input: {e}"),
            ));
            return s;
        }
    };
    if meta.is_file() {
        return discover_logs(&[input.to_path_buf()]);
    }
    let has = |name: &str| input.join(name).is_dir();
    if has("results") || has("systems") {
        return discover_package(input, root, listing);
    }
    let looks_like_benchmark = fs::read_dir(input)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .any(|e| is_result_log_name(&e.file_name().to_string_lossy()))
        })
        .unwrap_or(false);
    if looks_like_benchmark {
        return discover_benchmark_folder(input, root);
    }
    let mut s = discover_package(input, root.clone(), listing);
    s.findings.push(
        Finding::of(
            code::PKG014,
            &root,
            "neither a submission package (no systems/ or results/ folder) nor a benchmark folder (no result_*.txt file)",
        )
        .with_help("name a submitter folder, a results/<system>/<benchmark> folder or log files"),
    );
    s
}

/// A list of log files, checked one by one (no package rules apply).
pub fn discover_logs(files: &[PathBuf]) -> Submission {
    let mut s = Submission::empty(InputKind::Logs, String::new());
    for f in files {
        s.logs.push(FileRef {
            path: display_root(f),
            fs: f.clone(),
        });
    }
    s.logs.sort_by(|a, b| a.path.cmp(&b.path));
    s
}

fn file_name(p: &Path) -> Option<String> {
    p.file_name().map(super::paths::display_name)
}

fn discover_package(input: &Path, root: String, listing: Option<&Listing>) -> Submission {
    let (s, later) = discover_package_with(input, root, listing, false);
    debug_assert!(later.is_none());
    s
}

/// A package's `benchmarks/` folder, left to be walked later (beside the
/// checks of the logs, which do not need it): where the walk stood after
/// `systems/` and `results/`, which is where walking it in one go would
/// stand too, as it is walked last.
pub struct LaterBenchmarks {
    walker: Walker<'static>,
    dirs: Vec<Entry>,
}

impl LaterBenchmarks {
    /// Walks the folders left: the implementation files found (sorted as
    /// [`Submission::implementation_files`]) and the walk's findings.
    /// `listing` should hold the folders (else they are read here).
    pub fn walk(self, listing: Option<&Listing>) -> (Vec<ImplFile>, Vec<Finding>) {
        let mut w = self.walker.relisted(listing);
        let mut s = Submission::empty(InputKind::Package, String::new());
        for e in &self.dirs {
            walk_implementations(&mut w, &mut s, e);
        }
        let s = finish(s, w);
        (s.implementation_files, s.findings)
    }
}

/// [`discover_listed`], with a package's `benchmarks/` folder left for
/// [`LaterBenchmarks::walk`] (`None`: nothing left, the tree is whole).
pub fn discover_listed_later(
    input: &Path,
    listing: Option<&Listing>,
) -> (Submission, Option<LaterBenchmarks>) {
    let has = |name: &str| input.join(name).is_dir();
    if input.is_dir() && (has("results") || has("systems")) {
        return discover_package_with(input, display_root(input), listing, true);
    }
    (discover_listed(input, listing), None)
}

fn discover_package_with(
    input: &Path,
    root: String,
    listing: Option<&Listing>,
    later: bool,
) -> (Submission, Option<LaterBenchmarks>) {
    let mut s = Submission::empty(InputKind::Package, root.clone());
    s.submitter = fs::canonicalize(input).ok().as_deref().and_then(file_name);
    let mut w = Walker::new(input, listing);
    w.enter(input, &root);
    let mut left = Vec::new();
    // `benchmarks/` last: a folder reached twice (through a link) is
    // walked where it is met first, and a link under benchmarks/ into
    // results/ must not take a results folder's logs out of the check
    // (they would be read as configs, and the results walk would skip
    // the folder as walked already).
    let mut entries = w.list(input, &root);
    entries.sort_by_key(is_benchmarks);
    for e in entries {
        match (e.name.as_str(), e.kind) {
            ("systems", Kind::Dir) => walk_systems(&mut w, &mut s, &e),
            ("results", Kind::Dir) => walk_results(&mut w, &mut s, &e),
            ("benchmarks" | "benchmark", Kind::Dir) if later => left.push(e),
            ("benchmarks" | "benchmark", Kind::Dir) => walk_implementations(&mut w, &mut s, &e),
            (name, Kind::File) if SHIPPED_REPORTS.contains(&name) => {
                w.note(
                    code::PKG012,
                    &e.path,
                    format!("{name}: output of an official tool shipped in the package; ignored"),
                    "it is stale output; remove it, mlaudit recomputes everything",
                );
                s.shipped_reports.push(e.path);
            }
            (name, Kind::File) if ROOT_DOCS.contains(&name) => {}
            _ => w.note(
                code::PKG013,
                &e.path,
                format!("unexpected entry '{}' at the package root; ignored", e.name),
                "a package holds systems/, results/, benchmarks/ and optional licence/readme files",
            ),
        }
    }
    if left.is_empty() {
        return (finish(s, w), None);
    }
    // The walk's findings so far go with the tree; the walker goes on
    // with an empty list.
    let findings = std::mem::take(&mut w.findings);
    let walker = w.relisted(None);
    let mut s = finish(s, Walker::new_empty());
    s.findings.extend(findings);
    crate::finding::sort_findings(&mut s.findings);
    (s, Some(LaterBenchmarks { walker, dirs: left }))
}

/// Whether a package root entry is its `benchmarks/` (or `benchmark/`)
/// folder.
fn is_benchmarks(e: &Entry) -> bool {
    e.kind == Kind::Dir && matches!(e.name.as_str(), "benchmarks" | "benchmark")
}

fn finish(mut s: Submission, w: Walker) -> Submission {
    s.findings.extend(w.findings);
    s.systems.sort_by(|a, b| a.id.cmp(&b.id));
    s.system_params.sort_by(|a, b| a.0.cmp(&b.0));
    s.result_systems.sort();
    s.benchmarks.sort_by(|a, b| a.path.cmp(&b.path));
    s.implementation_files
        .sort_by(|a, b| a.file.path.cmp(&b.file.path));
    s.shipped_reports.sort();
    crate::finding::sort_findings(&mut s.findings);
    s
}

fn walk_systems(w: &mut Walker, s: &mut Submission, dir: &Entry) {
    if !w.enter(&dir.fs, &dir.path) {
        return;
    }
    for e in w.list(&dir.fs, &dir.path) {
        match (e.name.strip_suffix(".json"), e.kind) {
            (Some(id), Kind::File) => s.systems.push(SystemFile {
                id: id.to_string(),
                file: FileRef {
                    path: e.path,
                    fs: e.fs,
                },
            }),
            _ => w.note(
                code::PKG013,
                &e.path,
                format!(
                    "'{}' in systems/ is not a system description (*.json); ignored",
                    e.name
                ),
                "systems/ holds one <system_desc_id>.json per system",
            ),
        }
    }
}

fn walk_results(w: &mut Walker, s: &mut Submission, dir: &Entry) {
    if !w.enter(&dir.fs, &dir.path) {
        return;
    }
    for sys in w.list(&dir.fs, &dir.path) {
        if sys.kind != Kind::Dir {
            w.note(
                code::PKG013,
                &sys.path,
                format!("'{}' in results/ is not a system folder; ignored", sys.name),
                "results/ holds one folder per system description id",
            );
            continue;
        }
        if !w.enter(&sys.fs, &sys.path) {
            continue;
        }
        s.result_systems.push(sys.name.clone());
        for bm in w.list(&sys.fs, &sys.path) {
            match bm.kind {
                // HPC: results/<system>/{strong,weak}/<benchmark>.
                Kind::Dir if SCALING_FOLDERS.contains(&bm.name.as_str()) => {
                    walk_scaling(w, s, &sys.name, &bm)
                }
                Kind::Dir => {
                    if let Some(b) =
                        walk_benchmark(w, &sys.name, None, &bm.name, &bm.fs, &bm.path)
                    {
                        s.benchmarks.push(b);
                    }
                }
                Kind::File if bm.name == PARAMS_FILE => {
                    if let Some(p) = read_params(w, &bm.fs, &bm.path) {
                        s.system_params.push((sys.name.clone(), p));
                    }
                }
                _ => w.note(
                    code::PKG013,
                    &bm.path,
                    format!(
                        "'{}' in results/{}/ is not a benchmark folder; ignored",
                        bm.name, sys.name
                    ),
                    "results/<system>/ holds one folder per benchmark and an optional package_checker_params",
                ),
            }
        }
    }
}

/// An HPC scaling folder (`strong/`, `weak/`): one benchmark folder per
/// sub-folder. The official checker lists only its sub-folders; a file
/// there is a note.
fn walk_scaling(w: &mut Walker, s: &mut Submission, system: &str, dir: &Entry) {
    if !w.enter(&dir.fs, &dir.path) {
        return;
    }
    for bm in w.list(&dir.fs, &dir.path) {
        if bm.kind != Kind::Dir {
            w.note(
                code::PKG013,
                &bm.path,
                format!(
                    "'{}' in results/{system}/{}/ is not a benchmark folder; ignored",
                    bm.name, dir.name
                ),
                "results/<system>/<strong|weak>/ holds one folder per benchmark",
            );
            continue;
        }
        if let Some(b) = walk_benchmark(w, system, Some(&dir.name), &bm.name, &bm.fs, &bm.path) {
            s.benchmarks.push(b);
        }
    }
}

fn walk_benchmark(
    w: &mut Walker,
    system: &str,
    scaling: Option<&str>,
    benchmark: &str,
    fs_path: &Path,
    path: &str,
) -> Option<BenchmarkDir> {
    if !w.enter(fs_path, path) {
        return None;
    }
    let mut b = BenchmarkDir {
        path: path.to_string(),
        fs: fs_path.to_path_buf(),
        system: system.to_string(),
        benchmark: benchmark.to_string(),
        scaling: scaling.map(str::to_string),
        result_logs: Vec::new(),
        other_entries: Vec::new(),
        power: None,
        scaling_json: None,
        params: None,
    };
    for e in w.list(fs_path, path) {
        match (e.name.as_str(), e.kind) {
            (name, Kind::File) if is_result_log_name(name) => b.result_logs.push(FileRef {
                path: e.path,
                fs: e.fs,
            }),
            (PARAMS_FILE, Kind::File) => {
                b.params = read_params(w, &e.fs, &e.path);
                b.other_entries.push(e.name);
            }
            ("scaling.json", Kind::File) => {
                b.scaling_json = Some(e.path);
                b.other_entries.push(e.name);
            }
            ("power", Kind::Dir) => {
                b.power = walk_power(w, &e);
                b.other_entries.push(e.name);
            }
            _ => b.other_entries.push(e.name),
        }
    }
    Some(b)
}

fn walk_power(w: &mut Walker, dir: &Entry) -> Option<PowerDir> {
    if !w.enter(&dir.fs, &dir.path) {
        return None;
    }
    let mut p = PowerDir {
        path: dir.path.clone(),
        ..PowerDir::default()
    };
    for run in w.list(&dir.fs, &dir.path) {
        if run.kind != Kind::Dir || !w.enter(&run.fs, &run.path) {
            p.stray.push(run.name);
            continue;
        }
        let files = w
            .list(&run.fs, &run.path)
            .into_iter()
            .map(|e| e.name)
            .collect();
        p.runs.insert(run.name, files);
    }
    Some(p)
}

fn walk_implementations(w: &mut Walker, s: &mut Submission, dir: &Entry) {
    if !w.enter(&dir.fs, &dir.path) {
        return;
    }
    for bm in w.list(&dir.fs, &dir.path) {
        if bm.kind != Kind::Dir {
            continue;
        }
        // A config may be hidden (`.env`, Hydra's `.hydra/config.yaml`).
        w.hidden = true;
        walk_files(w, &bm.fs, &bm.path, &mut |_, e, dirs| {
            // dirs: the folders below benchmarks/<bm>/ holding the file.
            // Implementations sit in implementations/<impl>/, but older
            // rounds keep them directly in benchmarks/<bm>/<impl>/: every
            // file counts (issue 16).
            let implementation = match dirs.first().map(String::as_str) {
                Some("implementations") => dirs.get(1).cloned(),
                Some(first) => Some(first.to_string()),
                None => None,
            };
            s.implementation_files.push(ImplFile {
                benchmark: bm.name.clone(),
                implementation,
                file: FileRef {
                    path: e.path,
                    fs: e.fs,
                },
            });
        });
        w.hidden = false;
    }
}

/// Walks every file below `fs_path` (depth-first, sorted), calling `f` with
/// the entry and the names of the folders between the start folder and
/// the file.
fn walk_files(
    w: &mut Walker,
    fs_path: &Path,
    path: &str,
    f: &mut dyn FnMut(&mut Walker, Entry, &[String]),
) {
    fn go(
        w: &mut Walker,
        fs_path: &Path,
        path: &str,
        rel: &mut Vec<String>,
        f: &mut dyn FnMut(&mut Walker, Entry, &[String]),
    ) {
        if !w.enter(fs_path, path) {
            return;
        }
        for e in w.list(fs_path, path) {
            match e.kind {
                Kind::Dir => {
                    rel.push(e.name);
                    go(w, &e.fs, &e.path, rel, f);
                    rel.pop();
                }
                Kind::File => f(w, e, rel),
                Kind::Other => {}
            }
        }
    }
    go(w, fs_path, path, &mut Vec::new(), f);
}

/// One `results/<system>/<benchmark>` folder. When it sits inside a package
/// (`<pkg>/results/<system>/<benchmark>`), the package's
/// `systems/<system>.json` is picked up too.
fn discover_benchmark_folder(input: &Path, root: String) -> Submission {
    let mut s = Submission::empty(InputKind::BenchmarkFolder, root.clone());
    let canon = fs::canonicalize(input).unwrap_or_else(|_| input.to_path_buf());
    let benchmark = file_name(&canon).unwrap_or_default();
    // HPC: results/<system>/<strong|weak>/<benchmark>.
    let scaling = canon
        .parent()
        .and_then(file_name)
        .filter(|n| SCALING_FOLDERS.contains(&n.as_str()));
    let up = usize::from(scaling.is_some());
    let system_dir = canon.parent().map(Path::to_path_buf);
    let system_dir = match scaling {
        Some(_) => system_dir
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf),
        None => system_dir,
    };
    let system = system_dir
        .as_deref()
        .and_then(file_name)
        .unwrap_or_default();
    let results_dir = system_dir.as_deref().and_then(Path::parent);
    let package = results_dir
        .filter(|r| file_name(r).as_deref() == Some("results"))
        .and_then(Path::parent)
        .map(Path::to_path_buf);
    let mut w = Walker::new(package.as_deref().unwrap_or(input), None);
    if let Some(pkg) = &package {
        s.submitter = file_name(pkg);
        let json_fs = pkg.join("systems").join(format!("{system}.json"));
        if json_fs.is_file() {
            let dots = vec![".."; 3 + up].join("/");
            let prefix = if root.is_empty() {
                dots
            } else {
                join(&root, &dots)
            };
            let shown = lexical_parent(&root, 3 + up).unwrap_or(prefix);
            s.systems.push(SystemFile {
                id: system.clone(),
                file: FileRef {
                    path: join(&join(&shown, "systems"), &format!("{system}.json")),
                    fs: json_fs,
                },
            });
        }
        let params_fs = system_dir.as_deref().map(|p| p.join(PARAMS_FILE));
        if let Some(pf) = params_fs.filter(|p| p.is_file()) {
            let dots = vec![".."; 1 + up].join("/");
            let shown = lexical_parent(&root, 1 + up).unwrap_or_else(|| join(&root, &dots));
            if let Some(p) = read_params(&mut w, &pf, &join(&shown, PARAMS_FILE)) {
                s.system_params.push((system.clone(), p));
            }
        }
    }
    s.result_systems.push(system.clone());
    if let Some(b) = walk_benchmark(
        &mut w,
        &system,
        scaling.as_deref(),
        &benchmark,
        input,
        &root,
    ) {
        s.benchmarks.push(b);
    }
    finish(s, w)
}

/// `root` with its last `n` components removed, when it has that many
/// plain components (`a/results/s/bm`, 3 → `a`); `None` otherwise.
fn lexical_parent(root: &str, n: usize) -> Option<String> {
    let parts: Vec<&str> = root.split('/').collect();
    if parts.len() < n
        || parts[parts.len() - n..]
            .iter()
            .any(|p| p.is_empty() || *p == "..")
    {
        return None;
    }
    let kept = parts[..parts.len() - n].join("/");
    if kept.is_empty() && root.starts_with('/') {
        return Some("/".to_string());
    }
    Some(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_glob() {
        assert!(is_result_log_name("result_0.txt"));
        assert!(is_result_log_name("result_.txt"));
        assert!(is_result_log_name("result_abc.txt"));
        assert!(!is_result_log_name("results_0.txt"));
        assert!(!is_result_log_name("result_0.log"));
        assert!(!is_result_log_name("result0.txt"));
    }

    #[test]
    fn lexical_parents() {
        assert_eq!(lexical_parent("A/results/s/bm", 3).as_deref(), Some("A"));
        assert_eq!(lexical_parent("results/s/bm", 3).as_deref(), Some(""));
        assert_eq!(lexical_parent("/results/s/bm", 3).as_deref(), Some("/"));
        assert_eq!(lexical_parent("s/bm", 3), None);
        assert_eq!(lexical_parent("../s/bm", 3), None);
    }

    /// Discovery with `benchmarks/` walked later finds what one walk does:
    /// the same tree, implementation files and findings (a link under
    /// benchmarks/ into results/ included).
    #[test]
    fn benchmarks_walked_later_give_the_same_tree() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("PKG");
        for d in [
            "benchmarks/bm/implementations/impl/conf",
            "results/sys/bm",
            "systems",
        ] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        fs::write(root.join("systems/sys.json"), "{}").unwrap();
        fs::write(root.join("results/sys/bm/result_0.txt"), "x").unwrap();
        fs::write(
            root.join("benchmarks/bm/implementations/impl/run_and_time.sh"),
            "x",
        )
        .unwrap();
        fs::write(
            root.join("benchmarks/bm/implementations/impl/conf/a.yaml"),
            "a: 1",
        )
        .unwrap();
        fs::write(root.join("stray.txt"), "").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(
            "../../../../results/sys",
            root.join("benchmarks/bm/implementations/impl/linked"),
        )
        .unwrap();
        let listing = Listing::read(&root, 1000);
        let whole = discover_listed(&root, Some(&listing));
        let (mut tree, later) = discover_listed_later(&root, Some(&listing));
        assert!(tree.implementation_files.is_empty(), "not walked yet");
        let (files, findings) = later.expect("benchmarks/ left").walk(Some(&listing));
        tree.implementation_files = files;
        tree.findings.extend(findings);
        crate::finding::sort_findings(&mut tree.findings);
        let show = |s: &Submission| {
            (
                serde_json::to_string(&s.benchmarks).unwrap(),
                s.implementation_files
                    .iter()
                    .map(|f| (f.file.path.clone(), f.implementation.clone()))
                    .collect::<Vec<_>>(),
                s.findings
                    .iter()
                    .map(|f| format!("{} {} {}", f.code, f.path, f.message))
                    .collect::<Vec<_>>(),
            )
        };
        assert_eq!(show(&tree), show(&whole));
        assert_eq!(whole.implementation_files.len(), 2, "{:?}", show(&whole));
        #[cfg(unix)]
        assert!(
            whole
                .findings
                .iter()
                .any(|f| f.code == "PKG011" && f.path.ends_with("impl/linked")),
            "{:?}",
            show(&whole)
        );
        assert_eq!(whole.benchmarks.len(), 1, "the results folder is walked");
    }
}
