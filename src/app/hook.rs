//! Git hooks that run `mlaudit check` on what a commit or a push changes.
//!
//! The hook is a short POSIX `sh` script carrying [`MARKER`]; mlaudit only
//! ever replaces or removes a hook file that carries it, unless told to
//! (`--force`). The script calls the mlaudit that installed it (its
//! absolute path), or `mlaudit` on `PATH` when that file is gone.
//!
//! - `pre-commit` runs `mlaudit check --staged`;
//! - `pre-push` reads the refs git passes on standard input
//!   (`<local ref> <local sha> <remote ref> <remote sha>`) and runs
//!   `mlaudit check --changed-since <remote sha>` for each pushed ref; a new
//!   branch (remote sha all zeros, or unknown here) is compared with the
//!   empty tree, i.e. everything is checked; a deleted ref is skipped.
//!
//! Git itself lets a user skip a hook once with `--no-verify`.
//!
//! This module writes and reads files; the caller finds the hooks folder
//! (`git rev-parse --git-path hooks`, see [`crate::discover::git::hooks_dir`]).

use std::path::{Path, PathBuf};

/// The line that marks a hook as written by mlaudit.
pub const MARKER: &str = "# mlaudit-hook: written by `mlaudit hook install`";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum HookKind {
    PreCommit,
    PrePush,
}

impl HookKind {
    pub const ALL: [HookKind; 2] = [HookKind::PreCommit, HookKind::PrePush];

    /// The hook's file name in the hooks folder.
    pub fn file_name(self) -> &'static str {
        match self {
            HookKind::PreCommit => "pre-commit",
            HookKind::PrePush => "pre-push",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("{}: a hook mlaudit did not write is already there; keep it, chain mlaudit from it (`mlaudit check --staged`), or replace it with --force", .0.display())]
    NotOurs(PathBuf),
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What `install` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Installed {
    /// No hook was there.
    New(PathBuf),
    /// An mlaudit hook was there and was rewritten.
    Updated(PathBuf),
    /// Someone else's hook was there and `force` replaced it.
    Replaced(PathBuf),
}

/// What `uninstall` did with one hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removed {
    Removed(PathBuf),
    /// A hook is there but mlaudit did not write it: left alone.
    NotOurs(PathBuf),
    Absent(PathBuf),
}

/// Whether the hook text was written by mlaudit.
pub fn is_ours(text: &str) -> bool {
    text.lines().any(|l| l.starts_with(MARKER))
}

/// Quotes `s` for a POSIX shell (single quotes; `'` as `'\''`).
pub fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The hook script. `exe` is the mlaudit to call (falling back to
/// `mlaudit` on `PATH` when it is not executable); `args` go to
/// `mlaudit check` after the change selection (e.g. `--ruleset 5.0.0`).
pub fn script(kind: HookKind, exe: Option<&Path>, args: &[String]) -> String {
    let mut s = String::new();
    s.push_str("#!/bin/sh\n");
    s.push_str(MARKER);
    s.push_str("; `mlaudit hook uninstall` removes it.\n");
    let exe = exe
        .map(|p| sh_quote(&p.to_string_lossy()))
        .unwrap_or_else(|| "mlaudit".to_string());
    let extra: String = args.iter().map(|a| format!(" {}", sh_quote(a))).collect();
    match kind {
        HookKind::PreCommit => {
            s.push_str(
                "# Checks the benchmark folders the commit touches (their working-tree files).\n\
                 # Skip it once with `git commit --no-verify`.\n",
            );
            s.push_str(&format!("mlaudit={exe}\n"));
            s.push_str("[ -x \"$mlaudit\" ] || mlaudit=mlaudit\n");
            s.push_str(&format!(
                "\"$mlaudit\" check --staged --format text{extra} </dev/null\n"
            ));
            s.push_str("status=$?\n");
            s.push_str(&refusal("commit", "git commit --no-verify"));
        }
        HookKind::PrePush => {
            s.push_str(
                "# Checks the benchmark folders each pushed ref changes (their working-tree files).\n\
                 # Skip it once with `git push --no-verify`.\n",
            );
            s.push_str(&format!("mlaudit={exe}\n"));
            s.push_str("[ -x \"$mlaudit\" ] || mlaudit=mlaudit\n");
            s.push_str("empty_tree=$(git hash-object -t tree /dev/null)\n");
            s.push_str("status=0\n");
            s.push_str("while read -r local_ref local_sha remote_ref remote_sha; do\n");
            s.push_str("    case \"$local_sha\" in *[!0]*) ;; *) continue ;; esac\n");
            s.push_str("    base=$empty_tree\n");
            s.push_str("    case \"$remote_sha\" in\n");
            s.push_str("        *[!0]*) git cat-file -e \"$remote_sha^{commit}\" 2>/dev/null && base=$remote_sha ;;\n");
            s.push_str("    esac\n");
            s.push_str(&format!(
                "    \"$mlaudit\" check --changed-since \"$base\" --format text{extra} </dev/null || status=$?\n"
            ));
            s.push_str("done\n");
            s.push_str(&refusal("push", "git push --no-verify"));
        }
    }
    s.push_str("exit \"$status\"\n");
    s
}

fn refusal(what: &str, skip: &str) -> String {
    format!(
        "if [ \"$status\" -eq 1 ]; then\n    \
             echo \"mlaudit: {what} refused: the checks above fail. To {what} anyway: {skip}\" >&2\n\
         elif [ \"$status\" -ne 0 ]; then\n    \
             echo \"mlaudit: could not check the {what} (exit status $status). To {what} anyway: {skip}\" >&2\n\
         fi\n"
    )
}

/// Writes `text` as hook `kind` in `dir` (created if missing). An existing
/// hook without [`MARKER`] is kept unless `force`.
pub fn install(
    dir: &Path,
    kind: HookKind,
    text: &str,
    force: bool,
) -> Result<Installed, HookError> {
    let path = dir.join(kind.file_name());
    let io = |source| HookError::Io {
        path: path.clone(),
        source,
    };
    // Bounded, and only a regular file (a link to one is followed): a hook
    // that is a link to /dev/zero or a FIFO is refused, not read forever.
    let outcome = match crate::safe_io::read_regular(&path, crate::safe_io::MAX_HOOK_BYTES) {
        Ok(old) if is_ours(&String::from_utf8_lossy(&old)) => Installed::Updated(path.clone()),
        Ok(_) if force => Installed::Replaced(path.clone()),
        Ok(_) => return Err(HookError::NotOurs(path)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Installed::New(path.clone()),
        Err(e) => return Err(io(e)),
    };
    std::fs::create_dir_all(dir).map_err(|source| HookError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    // Replace, never write through: a hook that is a link to a shared
    // script must not change that script.
    if path.is_symlink() {
        std::fs::remove_file(&path).map_err(io)?;
    }
    std::fs::write(&path, text).map_err(io)?;
    make_executable(&path).map_err(io)?;
    Ok(outcome)
}

/// Removes hook `kind` from `dir` if mlaudit wrote it.
pub fn uninstall(dir: &Path, kind: HookKind) -> Result<Removed, HookError> {
    let path = dir.join(kind.file_name());
    match crate::safe_io::read_regular(&path, crate::safe_io::MAX_HOOK_BYTES) {
        Ok(text) if is_ours(&String::from_utf8_lossy(&text)) => {
            std::fs::remove_file(&path).map_err(|source| HookError::Io {
                path: path.clone(),
                source,
            })?;
            Ok(Removed::Removed(path))
        }
        Ok(_) => Ok(Removed::NotOurs(path)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Removed::Absent(path)),
        Err(source) => Err(HookError::Io { path, source }),
    }
}

#[cfg(unix)]
fn make_executable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut perm = std::fs::metadata(path)?.permissions();
    perm.set_mode(perm.mode() | 0o755);
    std::fs::set_permissions(path, perm)
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_for_sh() {
        assert_eq!(sh_quote("/a b/ml"), "'/a b/ml'");
        assert_eq!(sh_quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn scripts_carry_the_marker_and_the_arguments() {
        let args = vec!["--ruleset".to_string(), "5.0.0".to_string()];
        let pre = script(HookKind::PreCommit, Some(Path::new("/x/mlaudit")), &args);
        assert!(pre.starts_with("#!/bin/sh\n"));
        assert!(is_ours(&pre));
        assert!(pre.contains("mlaudit='/x/mlaudit'"));
        assert!(pre.contains("check --staged --format text '--ruleset' '5.0.0'"));
        let push = script(HookKind::PrePush, None, &[]);
        assert!(is_ours(&push));
        assert!(push.contains("--changed-since \"$base\""));
        assert!(push.contains("mlaudit=mlaudit\n"));
    }

    #[test]
    fn never_replaces_or_removes_a_foreign_hook() {
        let d = tempfile::tempdir().unwrap();
        let foreign = d.path().join("pre-commit");
        std::fs::write(&foreign, "#!/bin/sh\necho mine\n").unwrap();
        let text = script(HookKind::PreCommit, None, &[]);
        assert!(matches!(
            install(d.path(), HookKind::PreCommit, &text, false),
            Err(HookError::NotOurs(_))
        ));
        assert_eq!(
            uninstall(d.path(), HookKind::PreCommit).unwrap(),
            Removed::NotOurs(foreign.clone())
        );
        assert_eq!(
            std::fs::read_to_string(&foreign).unwrap(),
            "#!/bin/sh\necho mine\n"
        );
        assert_eq!(
            install(d.path(), HookKind::PreCommit, &text, true).unwrap(),
            Installed::Replaced(foreign.clone())
        );
        assert_eq!(
            install(d.path(), HookKind::PreCommit, &text, false).unwrap(),
            Installed::Updated(foreign.clone())
        );
        assert_eq!(
            uninstall(d.path(), HookKind::PreCommit).unwrap(),
            Removed::Removed(foreign.clone())
        );
        assert_eq!(
            uninstall(d.path(), HookKind::PreCommit).unwrap(),
            Removed::Absent(foreign)
        );
    }
}
