//! Where rule data lives: the `rules/` tree compiled into the binary, or a
//! folder the user names with `--rules DIR` (same layout).
//!
//! Layout (paths relative to the root):
//! - `codes/*.yaml`: documentation of every finding code (`rules explain`);
//! - `<usage>/<version>/compliance/*.yaml`: log compliance rule packs;
//! - `<usage>/<version>/package.yaml`: package rules of a round;
//! - `<usage>/<version>/rcp/*.yaml`: reference convergence points.

use include_dir::{include_dir, Dir};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

static EMBEDDED: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/rules");

/// A root of rule data.
#[derive(Debug, Clone)]
pub enum RuleSource {
    /// The `rules/` tree shipped inside the binary.
    Embedded,
    /// A folder on disk with the same layout.
    Dir(PathBuf),
}

impl RuleSource {
    /// A printable name for messages: `<built-in>/x.yaml` or the real path.
    pub fn display(&self, rel: &str) -> String {
        match self {
            RuleSource::Embedded => format!("rules/{rel}"),
            RuleSource::Dir(root) => root.join(rel).display().to_string(),
        }
    }

    /// The text of the file at `rel`, or `None` when it does not exist.
    pub fn read(&self, rel: &str) -> std::io::Result<Option<Cow<'static, str>>> {
        match self {
            RuleSource::Embedded => Ok(EMBEDDED
                .get_file(rel)
                .and_then(|f| f.contents_utf8())
                .map(Cow::Borrowed)),
            RuleSource::Dir(root) => {
                if !is_plain_relative(rel) {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        format!("'{rel}' leaves the rules folder"),
                    ));
                }
                let path = root.join(rel);
                // Absent is `None`; anything else that is not a regular
                // file (a folder, a broken link, a FIFO) is an error, never
                // an empty file.
                match std::fs::symlink_metadata(&path) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                    Err(e) => return Err(e),
                    Ok(_) => {}
                }
                if std::fs::metadata(&path).is_err() {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "is a symbolic link that leads nowhere",
                    ));
                }
                let bytes =
                    crate::safe_io::read_regular(&path, crate::safe_io::MAX_RULE_FILE_BYTES)?;
                String::from_utf8(bytes)
                    .map(|s| Some(Cow::Owned(s)))
                    .map_err(|_| {
                        std::io::Error::new(std::io::ErrorKind::InvalidData, "is not valid UTF-8")
                    })
            }
        }
    }

    /// Names (not paths) of the entries directly under `rel`, sorted;
    /// empty when `rel` is not a folder.
    pub fn list(&self, rel: &str) -> Vec<String> {
        let mut names: Vec<String> = match self {
            RuleSource::Embedded => {
                let dir = if rel.is_empty() {
                    Some(&EMBEDDED)
                } else {
                    EMBEDDED.get_dir(rel)
                };
                dir.map(|d| {
                    d.entries()
                        .iter()
                        .filter_map(|e| e.path().file_name())
                        .map(|n| n.to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default()
            }
            RuleSource::Dir(_) if !is_plain_relative(rel) => Vec::new(),
            RuleSource::Dir(root) => std::fs::read_dir(root.join(rel))
                .map(|rd| {
                    rd.filter_map(|e| e.ok())
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default(),
        };
        names.sort();
        names
    }

    pub fn from_option(dir: Option<&Path>) -> RuleSource {
        match dir {
            Some(d) => RuleSource::Dir(d.to_path_buf()),
            None => RuleSource::Embedded,
        }
    }
}

/// A path inside the rules folder: relative, without `..` (a ruleset or
/// usage name from a checked repository must not lead out of it).
fn is_plain_relative(rel: &str) -> bool {
    !rel.starts_with('/')
        && !rel.contains('\\')
        && rel
            .split('/')
            .all(|part| part != ".." && !part.contains(':'))
}

/// Whether `name` can be a usage or ruleset name: letters, digits, `.`,
/// `-` and `_`, not starting with `.` or `-`. A name is never a path.
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with(['.', '-'])
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
}
