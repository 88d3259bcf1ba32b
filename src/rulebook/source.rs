//! Where rule data lives: the `rules/` tree compiled into the binary, or a
//! folder the user names with `--rules DIR` (same layout).
//!
//! Layout (paths relative to the root):
//! - `codes/*.yaml`: documentation of every finding code (`rules explain`);
//! - `<usage>/<version>/compliance/*.yaml`: log compliance rule packs;
//! - `<usage>/<version>/package.yaml`: package rules of a round;
//! - `<usage>/<version>/rcp/*.yaml`: reference convergence points;
//! - `<usage>/<version>/inherit.yaml`: optional; files of the round that are
//!   missing are read from another round (see [`Inherit`]).

use include_dir::{include_dir, Dir, DirEntry, File};
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

static EMBEDDED: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/rules");

/// The embedded tree by path: `include_dir` finds a file by comparing
/// paths entry by entry down the tree, and rule loading asks thousands of
/// times (guessing the round cost 300M instructions in those lookups).
struct EmbeddedIndex {
    files: HashMap<&'static str, &'static File<'static>>,
    /// Folder (`""` for the root) -> the names of its entries.
    dirs: HashMap<&'static str, Vec<String>>,
}

fn embedded() -> &'static EmbeddedIndex {
    static INDEX: OnceLock<EmbeddedIndex> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut index = EmbeddedIndex {
            files: HashMap::new(),
            dirs: HashMap::new(),
        };
        let mut stack: Vec<&'static Dir<'static>> = vec![&EMBEDDED];
        while let Some(dir) = stack.pop() {
            let key = dir.path().to_str().unwrap_or_default();
            let mut names = Vec::new();
            for e in dir.entries() {
                if let Some(n) = e.path().file_name() {
                    names.push(n.to_string_lossy().into_owned());
                }
                match e {
                    DirEntry::Dir(d) => stack.push(d),
                    DirEntry::File(f) => {
                        if let Some(p) = f.path().to_str() {
                            index.files.insert(p, f);
                        }
                    }
                }
            }
            index.dirs.insert(key, names);
        }
        index
    })
}

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

    /// The text of the file at `rel`, or `None` when it does not exist. A
    /// file a round lacks is read from the round its `inherit.yaml` names,
    /// when the path is one that file lets it inherit.
    pub fn read(&self, rel: &str) -> std::io::Result<Option<Cow<'static, str>>> {
        let mut rel = rel.to_string();
        for _ in 0..=MAX_INHERIT_DEPTH {
            if let Some(text) = self.read_own(&rel)? {
                return Ok(Some(text));
            }
            match self.inherited(&rel)? {
                Some(base) => rel = base,
                None => return Ok(None),
            }
        }
        Err(too_deep(&rel))
    }

    /// Names of the entries directly under `rel`, sorted, the inherited
    /// ones included; empty when `rel` is not a folder.
    pub fn list(&self, rel: &str) -> Vec<String> {
        self.list_depth(rel, 0)
    }

    fn list_depth(&self, rel: &str, depth: usize) -> Vec<String> {
        let mut names = self.list_own(rel);
        if depth < MAX_INHERIT_DEPTH {
            if let Some(base) = self.inherited(rel).ok().flatten() {
                for name in self.list_depth(&base, depth + 1) {
                    let covered = self
                        .inherited(&format!("{rel}/{name}"))
                        .ok()
                        .flatten()
                        .is_some();
                    if covered && !names.contains(&name) {
                        names.push(name);
                    }
                }
                names.sort();
            }
        }
        names
    }

    /// Where a missing `<usage>/<version>/<rest>` is read from, when the
    /// round has an `inherit.yaml` that covers `rest`.
    fn inherited(&self, rel: &str) -> std::io::Result<Option<String>> {
        let mut parts = rel.splitn(3, '/');
        let (Some(usage), Some(version), Some(rest)) = (parts.next(), parts.next(), parts.next())
        else {
            return Ok(None);
        };
        if rest.is_empty() || rest == INHERIT_FILE {
            return Ok(None);
        }
        let file = format!("{usage}/{version}/{INHERIT_FILE}");
        let Some(spec) = self.inherit_spec(&file)? else {
            return Ok(None);
        };
        let under = |p: &String| {
            let p = p.trim_end_matches('/');
            rest == p || rest.starts_with(&format!("{p}/"))
        };
        if !spec.inherit.iter().any(under) || spec.except.iter().any(under) {
            return Ok(None);
        }
        Ok(Some(format!("{}/{rest}", spec.from.trim_end_matches('/'))))
    }

    /// The parsed `inherit.yaml` at `file`. The built-in ones are parsed
    /// once per run: listing a round asks for it once per name, and
    /// guessing the round lists every round (the YAML parses were 200M
    /// instructions of a `check`). A folder on disk is read every time.
    fn inherit_spec(&self, file: &str) -> std::io::Result<Option<Arc<Inherit>>> {
        type Cache = Mutex<HashMap<String, Option<Arc<Inherit>>>>;
        static CACHE: OnceLock<Cache> = OnceLock::new();
        let parse = |text: &str| {
            serde_yaml::from_str::<Inherit>(text)
                .map(Arc::new)
                .map_err(|e| {
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("{}: {e}", self.display(file)),
                    )
                })
        };
        if let RuleSource::Dir(_) = self {
            return self.read_own(file)?.map(|t| parse(&t)).transpose();
        }
        let cache = CACHE.get_or_init(Default::default);
        if let Some(hit) = cache.lock().ok().and_then(|c| c.get(file).cloned()) {
            return Ok(hit);
        }
        let spec = self.read_own(file)?.map(|t| parse(&t)).transpose()?;
        if let Ok(mut c) = cache.lock() {
            c.insert(file.to_string(), spec.clone());
        }
        Ok(spec)
    }

    fn read_own(&self, rel: &str) -> std::io::Result<Option<Cow<'static, str>>> {
        match self {
            RuleSource::Embedded => Ok(embedded()
                .files
                .get(rel)
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

    /// Names (not paths) of the entries directly under `rel` in this
    /// round's own folder.
    fn list_own(&self, rel: &str) -> Vec<String> {
        let mut names: Vec<String> = match self {
            RuleSource::Embedded => embedded()
                .dirs
                .get(rel.trim_end_matches('/'))
                .cloned()
                .unwrap_or_default(),
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

/// The versions of `usage` whose round has `file` (`package.yaml`), as
/// `4.1.0, 5.0.0`: what an error about a missing round file lists.
pub fn rounds_with(source: &RuleSource, usage: &str, file: &str) -> String {
    source
        .list(usage)
        .into_iter()
        .filter(|v| {
            source
                .read(&format!("{usage}/{v}/{file}"))
                .ok()
                .flatten()
                .is_some()
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `<usage>/<version>/inherit.yaml`: a round shares files with another one
/// instead of copying them. A file the round does not have itself, whose
/// path (relative to the round folder) is at or under an `inherit` entry and
/// not at or under an `except` entry, is read from the `from` round; folder
/// listings include those files. The `from` round may inherit in turn.
///
/// ```yaml
/// from: training/4.1.0
/// inherit: [compliance]
/// except: [compliance/open_gpt3.yaml]
/// ```
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Inherit {
    from: String,
    #[serde(default)]
    inherit: Vec<String>,
    #[serde(default)]
    except: Vec<String>,
}

const INHERIT_FILE: &str = "inherit.yaml";
const MAX_INHERIT_DEPTH: usize = 16;

fn too_deep(rel: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("{rel}: more than {MAX_INHERIT_DEPTH} inherit.yaml steps (a loop?)"),
    )
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

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn a_round_inherits_the_files_it_lacks_except_the_excluded() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "t/2/compliance/common.yaml", "base common");
        write(root, "t/2/compliance/closed_a.yaml", "base a");
        write(root, "t/2/compliance/closed_b.yaml", "base b");
        write(root, "t/2/package.yaml", "base package");
        write(root, "t/1/compliance/common.yaml", "own common");
        write(
            root,
            "t/1/inherit.yaml",
            "from: t/2\ninherit: [compliance]\nexcept: [compliance/closed_b.yaml]\n",
        );
        write(
            root,
            "t/0/inherit.yaml",
            "from: t/1\ninherit: [compliance/]\n",
        );
        let src = RuleSource::Dir(root.to_path_buf());
        let read = |rel: &str| src.read(rel).unwrap().map(|c| c.into_owned());
        assert_eq!(
            read("t/1/compliance/common.yaml").as_deref(),
            Some("own common")
        );
        assert_eq!(
            read("t/1/compliance/closed_a.yaml").as_deref(),
            Some("base a")
        );
        assert_eq!(read("t/1/compliance/closed_b.yaml"), None);
        assert_eq!(read("t/1/package.yaml"), None);
        assert_eq!(src.list("t/1/compliance"), ["closed_a.yaml", "common.yaml"]);
        // A chain: t/0 takes t/1's view of compliance/.
        assert_eq!(src.list("t/0/compliance"), ["closed_a.yaml", "common.yaml"]);
        assert_eq!(
            read("t/0/compliance/common.yaml").as_deref(),
            Some("own common")
        );
        // A loop is an error, not a hang.
        write(
            root,
            "t/2/inherit.yaml",
            "from: t/1\ninherit: [compliance]\n",
        );
        assert!(src.read("t/1/compliance/closed_c.yaml").is_err());
        assert!(src
            .list("t/1/compliance")
            .contains(&"closed_a.yaml".to_string()));
        // A broken inherit.yaml names itself.
        write(root, "t/3/inherit.yaml", "from: [\n");
        let e = src.read("t/3/compliance/common.yaml").unwrap_err();
        assert!(e.to_string().contains("inherit.yaml"), "{e}");
    }
}
