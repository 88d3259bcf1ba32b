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
                let path = root.join(rel);
                if !path.is_file() {
                    return Ok(None);
                }
                std::fs::read_to_string(&path).map(|s| Some(Cow::Owned(s)))
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

/// A rule data file that cannot be read or does not parse, or whose content
/// breaks a rule of its format: the one error every loader of `rules/`
/// reports, naming the file.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct DataError {
    /// The file as [`RuleSource::display`] shows it.
    pub path: String,
    pub message: String,
}

impl DataError {
    pub fn new(source: &RuleSource, rel: &str, message: impl Into<String>) -> DataError {
        DataError {
            path: source.display(rel),
            message: message.into(),
        }
    }
}

/// Reads and parses the YAML file at `rel`: `Ok(None)` when it does not
/// exist, a [`DataError`] naming the file when it cannot be read or does
/// not parse as a `T`.
pub fn load_yaml<T: serde::de::DeserializeOwned>(
    source: &RuleSource,
    rel: &str,
) -> Result<Option<T>, DataError> {
    let Some(text) = source
        .read(rel)
        .map_err(|e| DataError::new(source, rel, e.to_string()))?
    else {
        return Ok(None);
    };
    serde_yaml::from_str(&text)
        .map(Some)
        .map_err(|e| DataError::new(source, rel, e.to_string()))
}
