//! The few git questions mlaudit asks, answered by running `git`.
//!
//! Every function runs `git` in the current directory (or the one given)
//! and returns data or a [`GitError`] that quotes git's own message.

use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run git: {0}")]
    Spawn(std::io::Error),
    #[error("`git {args}` failed: {message}")]
    Failed { args: String, message: String },
}

/// Runs `git ARGS` in `dir` (the current directory when `None`) and returns
/// its standard output.
pub fn run(dir: Option<&Path>, args: &[&str]) -> Result<Vec<u8>, GitError> {
    let mut cmd = Command::new("git");
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    let out = cmd
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(GitError::Spawn)?;
    if !out.status.success() {
        let message = String::from_utf8_lossy(&out.stderr).trim().to_string();
        return Err(GitError::Failed {
            args: args.join(" "),
            message: if message.is_empty() {
                format!("exit status {}", out.status)
            } else {
                message
            },
        });
    }
    Ok(out.stdout)
}

/// Standard output of `git ARGS` as one trimmed line.
fn line(dir: Option<&Path>, args: &[&str]) -> Result<String, GitError> {
    let out = run(dir, args)?;
    Ok(String::from_utf8_lossy(&out)
        .trim_end_matches(['\n', '\r'])
        .to_string())
}

/// Where the current directory sits in its work tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkTree {
    /// `git rev-parse --show-cdup`: `../..` from the current directory up to
    /// the top of the work tree, empty at the top.
    pub cdup: String,
    /// `git rev-parse --show-prefix`: the current directory relative to the
    /// top, with a trailing `/`, empty at the top.
    pub prefix: String,
}

impl WorkTree {
    /// The work tree of the current directory; an error outside one.
    pub fn current() -> Result<WorkTree, GitError> {
        let out = line(None, &["rev-parse", "--show-cdup", "--show-prefix"])?;
        let mut lines = out.lines();
        Ok(WorkTree {
            cdup: lines.next().unwrap_or_default().to_string(),
            prefix: lines.next().unwrap_or_default().to_string(),
        })
    }

    /// A path relative to the top of the work tree (as `git diff` prints
    /// it), written relative to the current directory.
    pub fn from_top(&self, top_relative: &str) -> String {
        match top_relative.strip_prefix(self.prefix.as_str()) {
            Some(rest) if !self.prefix.is_empty() => rest.to_string(),
            _ => format!("{}{top_relative}", self.cdup),
        }
    }

    /// [`WorkTree::from_top`] on file-system paths: a path relative to the
    /// top, relative to the current directory (`""` is the current one).
    pub fn from_top_path(&self, top_relative: &Path) -> PathBuf {
        if !self.prefix.is_empty() {
            if let Ok(rest) = top_relative.strip_prefix(self.prefix.trim_end_matches('/')) {
                return rest.to_path_buf();
            }
        }
        let cdup = Path::new(self.cdup.trim_end_matches('/'));
        if top_relative.as_os_str().is_empty() {
            cdup.to_path_buf()
        } else {
            cdup.join(top_relative)
        }
    }

    /// [`WorkTree::to_top`] on file-system paths.
    pub fn to_top_path(&self, cwd_relative: &Path) -> Option<PathBuf> {
        normalize_path(&Path::new(&self.prefix).join(cwd_relative))
    }

    /// A path relative to the current directory, written relative to the
    /// top of the work tree, with `/` separators; `None` when it leaves the
    /// work tree or is absolute.
    pub fn to_top(&self, cwd_relative: &str) -> Option<String> {
        let joined = format!("{}{}", self.prefix, cwd_relative.replace('\\', "/"));
        normalize(&joined)
    }
}

/// `a/./b/../c` → `a/c`; `None` when `..` climbs above the start or the
/// path is absolute. The empty path and `.` give the empty string.
pub fn normalize(path: &str) -> Option<String> {
    if path.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

/// A display path (relative to the current directory, or absolute) written
/// relative to the repository top, given the current directory's
/// `prefix` (see [`WorkTree::prefix`]; empty outside a repository). An
/// absolute path, or one that leaves the repository, is returned as it is;
/// the top itself is `.`.
pub fn repo_relative(prefix: &str, path: &str) -> String {
    let path = path.replace('\\', "/");
    if path.starts_with('/') {
        return path;
    }
    match normalize(&format!("{prefix}{path}")) {
        Some(p) if p.is_empty() => ".".to_string(),
        Some(p) => p,
        None => path,
    }
}

/// The hooks folder of the current repository as git resolves it
/// (`git rev-parse --git-path hooks`): honours worktrees and `core.hooksPath`.
pub fn hooks_dir() -> Result<PathBuf, GitError> {
    Ok(PathBuf::from(line(
        None,
        &["rev-parse", "--git-path", "hooks"],
    )?))
}

/// What changed, as `git diff --name-only`: paths relative to the top of
/// the work tree. Renames are listed as a deletion and an addition, so the
/// folder a file left counts as touched too.
pub enum Changes<'a> {
    /// The index against `HEAD` (`git diff --cached`).
    Staged,
    /// The work tree against a revision (`git diff REV`).
    Since(&'a str),
    /// Files named by the caller, relative to the current directory (what
    /// the pre-commit framework passes a hook: the staged files, the files
    /// between `--from-ref` and `--to-ref`, or every file with `--all-files`).
    Files(&'a [PathBuf]),
}

pub fn changed_paths(changes: &Changes<'_>) -> Result<Vec<PathBuf>, GitError> {
    let mut args = vec!["diff", "--name-only", "-z", "--no-renames", "--no-ext-diff"];
    match changes {
        Changes::Staged => args.push("--cached"),
        Changes::Since(rev) => {
            // A REV such as `--output=FILE` must never be read as an option
            // (git would write that file): refuse it, and mark where the
            // options end.
            if rev.starts_with('-') {
                return Err(GitError::Failed {
                    args: format!("diff {rev}"),
                    message: format!("'{rev}' is not a revision (it starts with '-')"),
                });
            }
            args.push("--end-of-options");
            args.push(rev);
            args.push("--");
        }
        Changes::Files(files) => {
            let wt = WorkTree::current()?;
            let mut paths: Vec<PathBuf> = files.iter().filter_map(|f| wt.to_top_path(f)).collect();
            paths.sort();
            paths.dedup();
            return Ok(paths);
        }
    }
    let out = run(None, &args)?;
    let mut paths: Vec<PathBuf> = out
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(path_of_bytes)
        .collect();
    paths.sort();
    paths.dedup();
    Ok(paths)
}

/// A path as git prints it (`-z`: raw bytes), kept as bytes: a name that is
/// not UTF-8 is still the name of that one file, never cut or merged with
/// another that displays alike.
#[cfg(unix)]
fn path_of_bytes(p: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(p))
}

#[cfg(not(unix))]
fn path_of_bytes(p: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(p).into_owned())
}

/// [`normalize`] on file-system paths, component by component (names that
/// are not UTF-8 stay as they are).
pub fn normalize_path(path: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(n) => out.push(n),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_lexically() {
        assert_eq!(normalize("a/./b/../c").as_deref(), Some("a/c"));
        assert_eq!(normalize("").as_deref(), Some(""));
        assert_eq!(normalize(".").as_deref(), Some(""));
        assert_eq!(normalize("a/"), Some("a".to_string()));
        assert_eq!(normalize("../a"), None);
        assert_eq!(normalize("/a"), None);
    }

    #[test]
    fn repository_relative_paths() {
        assert_eq!(repo_relative("", "A/results/x.txt"), "A/results/x.txt");
        assert_eq!(repo_relative("round/", "A/x.txt"), "round/A/x.txt");
        assert_eq!(repo_relative("round/", ""), "round");
        assert_eq!(repo_relative("", ""), ".");
        assert_eq!(repo_relative("", "../out/x"), "../out/x");
        assert_eq!(repo_relative("r/", "/abs/x"), "/abs/x");
    }

    #[test]
    fn paths_between_top_and_cwd() {
        let at_top = WorkTree {
            cdup: String::new(),
            prefix: String::new(),
        };
        assert_eq!(at_top.from_top("A/results/x"), "A/results/x");
        assert_eq!(at_top.to_top("A/results").as_deref(), Some("A/results"));
        let below = WorkTree {
            cdup: "../".to_string(),
            prefix: "round/".to_string(),
        };
        assert_eq!(below.from_top("round/A/x.txt"), "A/x.txt");
        assert_eq!(below.from_top("other/y.txt"), "../other/y.txt");
        assert_eq!(below.to_top("A/x.txt").as_deref(), Some("round/A/x.txt"));
        assert_eq!(below.to_top("../other").as_deref(), Some("other"));
        assert_eq!(below.to_top("../../out"), None);
    }
}
