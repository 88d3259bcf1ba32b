//! What the implementation configs gave, kept between runs.
//!
//! Scanning a package's configs (v5.1 GigaComputing: 1,022 files, 7.7 MB)
//! costs as much as checking its logs, and a package is checked again and
//! again while it is prepared and reviewed. When no config changed since
//! the last run with the same binary, rules and options, the configs'
//! findings, repeatability notes and the settings of the package's own
//! configs (what the config-against-log check reads) are taken from here.
//!
//! Nothing unchecked may pass, so a cache entry is used only when:
//! - it was written by this very binary (version, commit, rules digest,
//!   and the executable's size and modification time) for the same
//!   usage, ruleset and path as given, with the built-in rules;
//! - every config is the same file (device, inode) with the same size,
//!   modification and status-change times (the status-change time moves
//!   on every write and cannot be set back), and the list of configs is
//!   the same;
//! - no config changed shortly before the entry's files were read: a
//!   change within the file system's timestamp granularity of the read
//!   could leave every time as it was (git's "racy" files). The margin is
//!   0.1 s where times have sub-second digits, else 2 s.
//!
//! Anything else (no cache folder, a folder others can write to or that
//! is not the user's, an unreadable, foreign or corrupt entry) is a miss, and the configs are scanned as if there were no
//! cache. The library never decides where the cache lives: the caller
//! gives the folder (`mlaudit check` uses `$MLAUDIT_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/mlaudit`, else `~/.cache/mlaudit`; `--no-cache` turns
//! it off).

use super::cache_rows::{self, Own};
use super::repeatability::RepeatabilityNote;
use crate::discover::tree::ImplFile;
use crate::finding::Finding;
use serde::{Deserialize, Serialize};
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Largest cache entry read back.
const MAX_ENTRY_BYTES: u64 = 64 << 20;
/// Most entries kept in the folder: each binary, package and set of
/// options has its own, so the oldest go.
const MAX_ENTRIES: usize = 256;
/// Margins for a change close to the read (see the module docs), in
/// nanoseconds.
const FINE_MARGIN_NS: i128 = 100_000_000;
const COARSE_MARGIN_NS: i128 = 2_000_000_000;

/// What the configs stage gives: findings, repeatability notes, the
/// settings of the configs outside vendored trees, by file index, and
/// which files sit in a vendored tree (by index, as
/// [`super::vendored_files`] says).
#[derive(Debug, Clone, PartialEq)]
pub struct StageOutput {
    pub findings: Vec<Finding>,
    pub notes: Vec<RepeatabilityNote>,
    pub own: Own,
    pub vendored: Vec<bool>,
}

/// What an entry file begins with: the format's name and version.
const MAGIC: &[u8] = b"mlaudit-configs 2\n";

/// An entry file: [`MAGIC`], the length of this header as JSON (`u64`,
/// little-endian), the header, then the settings ([`cache_rows`]).
#[derive(Serialize, Deserialize)]
struct Stored {
    key: String,
    stamps: String,
    /// When the configs were read (nanoseconds since the epoch).
    read_at: i128,
    findings: Vec<Finding>,
    notes: Vec<RepeatabilityNote>,
}

/// One check's place in the cache.
pub struct Cache {
    file: PathBuf,
    key: String,
    stamps: String,
    /// The latest modification or status change of any config.
    newest: i128,
    /// Whether the file system keeps sub-second times.
    fine: bool,
}

/// Nanoseconds since the epoch (negative before it).
fn nanos(t: SystemTime) -> i128 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

/// The time to record as a stage's read time: now.
pub fn now() -> i128 {
    nanos(SystemTime::now())
}

fn hex(h: u64) -> String {
    format!("{h:016x}")
}

/// A stable 64-bit hash (the same in every run).
fn hasher() -> impl Hasher {
    foldhash::quality::FixedState::with_seed(0x6d6c_6175_6469_7400).build_hasher()
}

impl Cache {
    /// The cache entry for checking `files` under `root` (the path as
    /// given) with `usage` and `ruleset`, in folder `dir`. `known`: the
    /// metadata a walk read already, by path (the rest is read here).
    /// `None` when a config's metadata cannot be read (nothing is cached
    /// then).
    pub fn open(
        dir: &Path,
        root: &str,
        usage: &str,
        ruleset: &str,
        files: &[ImplFile],
        known: &mut dyn FnMut(&Path) -> Option<std::fs::Metadata>,
    ) -> Option<Cache> {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        let exe = std::env::current_exe().and_then(std::fs::metadata).ok()?;
        let mut k = hasher();
        for part in [
            env!("CARGO_PKG_VERSION"),
            env!("MLAUDIT_GIT_COMMIT"),
            env!("MLAUDIT_RULES_DIGEST"),
            usage,
            ruleset,
            root,
        ] {
            k.write(part.as_bytes());
            k.write_u8(0);
        }
        k.write_u64(exe.len());
        k.write_i128(exe.modified().map(nanos).unwrap_or(0));
        let key = hex(k.finish());
        // One at a time: `known` answers from the package's listing
        // (a lookup, no system call), where waking a second thread costs
        // more than the lookups.
        let stamps: Vec<(u64, [i128; 2], [u64; 2])> = files
            .iter()
            .map(|f| {
                let m = match known(&f.file.fs) {
                    Some(m) => m,
                    None => std::fs::symlink_metadata(&f.file.fs).ok()?,
                };
                #[cfg(unix)]
                let (changed, id) = (
                    i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()),
                    [m.dev(), m.ino()],
                );
                #[cfg(not(unix))]
                let (changed, id) = (nanos(m.modified().ok()?), [0, 0]);
                Some((m.len(), [nanos(m.modified().ok()?), changed], id))
            })
            .collect::<Option<Vec<_>>>()?;
        let mut s = hasher();
        let mut newest = i128::MIN;
        let mut fine = false;
        for (f, (len, times, id)) in files.iter().zip(&stamps) {
            s.write(f.file.path.as_bytes());
            s.write_u8(0);
            s.write(f.file.fs.as_os_str().as_encoded_bytes());
            s.write_u8(0);
            s.write_u64(*len);
            for t in times {
                s.write_i128(*t);
                newest = newest.max(*t);
                fine |= t.rem_euclid(1_000_000_000) != 0;
            }
            s.write_u64(id[0]);
            s.write_u64(id[1]);
        }
        s.write_usize(files.len());
        Some(Cache {
            file: dir.join(format!("configs-{key}.bin")),
            key,
            stamps: hex(s.finish()),
            newest,
            fine,
        })
    }

    fn settled(&self, read_at: i128) -> bool {
        let margin = if self.fine {
            FINE_MARGIN_NS
        } else {
            COARSE_MARGIN_NS
        };
        self.newest < read_at - margin
    }

    /// The stage's output, when a usable entry is there.
    pub fn load(&self) -> Option<StageOutput> {
        if !self.file.parent().is_some_and(trusted) {
            return None;
        }
        let bytes = crate::safe_io::read_regular(&self.file, MAX_ENTRY_BYTES).ok()?;
        let rest = bytes.strip_prefix(MAGIC)?;
        let (len, rest) = rest.split_first_chunk::<8>()?;
        let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
        if len > rest.len() {
            return None;
        }
        let (header, rows) = rest.split_at(len);
        let stored: Stored = serde_json::from_slice(header).ok()?;
        if !(stored.key == self.key && stored.stamps == self.stamps && self.settled(stored.read_at))
        {
            return None;
        }
        let (vendored, own) = cache_rows::read(rows)?;
        Some(StageOutput {
            findings: stored.findings,
            notes: stored.notes,
            own,
            vendored,
        })
    }

    /// Keeps `output`, the stage's output for configs read at `read_at`
    /// (see [`now`]); quietly nothing when the folder cannot be written.
    /// Written to a file of its own, then renamed into place.
    pub fn store(&self, output: &StageOutput, read_at: i128) {
        if !self.settled(read_at) {
            // A later change could keep every time: not kept.
            return;
        }
        let stored = Stored {
            key: self.key.clone(),
            stamps: self.stamps.clone(),
            read_at,
            findings: output.findings.clone(),
            notes: output.notes.clone(),
        };
        let Ok(header) = serde_json::to_vec(&stored) else {
            return;
        };
        let mut text = MAGIC.to_vec();
        text.extend_from_slice(&(header.len() as u64).to_le_bytes());
        text.extend_from_slice(&header);
        if cache_rows::write(&output.vendored, &output.own, &mut text).is_none() {
            return;
        }
        let Some(dir) = self.file.parent() else {
            return;
        };
        if create_private(dir).is_err() || !trusted(dir) {
            return;
        }
        let tmp = self
            .file
            .with_extension(format!("{}.tmp", std::process::id()));
        if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, &self.file).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        prune(dir, MAX_ENTRIES);
    }
}

/// Creates `dir` (and its parents) readable by its owner only.
fn create_private(dir: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
}

/// Whether entries in `dir` can be trusted: on Unix, a real folder owned
/// by this user that no one else can write to (a shared `/tmp` folder
/// named in `MLAUDIT_CACHE_DIR` could otherwise hold planted entries).
fn trusted(dir: &Path) -> bool {
    let Ok(m) = std::fs::symlink_metadata(dir) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        m.is_dir() && m.uid() == me && m.mode() & 0o022 == 0
    }
    #[cfg(not(unix))]
    {
        m.is_dir()
    }
}

/// Removes the least recently written entries of `dir` beyond `keep`.
fn prune(dir: &Path, keep: usize) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<(SystemTime, PathBuf)> = rd
        .flatten()
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            // `.json`: the entries of binaries before the settings were
            // kept as rows of our own; they age out with the rest.
            n.starts_with("configs-") && (n.ends_with(".bin") || n.ends_with(".json"))
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if entries.len() <= keep {
        return;
    }
    entries.sort();
    for (_, p) in &entries[..entries.len() - keep] {
        let _ = std::fs::remove_file(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::tree::FileRef;

    fn files(dir: &Path, names: &[&str]) -> Vec<ImplFile> {
        names
            .iter()
            .map(|n| ImplFile {
                benchmark: "bert".into(),
                implementation: Some("impl".into()),
                file: FileRef {
                    path: format!("PKG/benchmarks/bert/implementations/impl/{n}"),
                    fs: dir.join(n),
                },
            })
            .collect()
    }

    fn output() -> StageOutput {
        StageOutput {
            findings: vec![Finding::new(
                "POL011",
                crate::finding::Severity::Error,
                "PKG/x.yaml",
                "possible asynchronous updates",
            )
            .at_line(Some(3))],
            notes: Vec::new(),
            own: vec![(
                0,
                crate::check::policy::configs::parse(
                    "A=1\n",
                    crate::check::policy::configs::Format::Shell,
                ),
            )],
            vendored: vec![false, false],
        }
    }

    #[test]
    fn an_entry_is_used_only_for_the_same_settled_files() {
        let work = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        std::fs::write(work.path().join("a.sh"), "A=1\n").unwrap();
        std::fs::write(work.path().join("b.yaml"), "x: 1\n").unwrap();
        let fs = files(work.path(), &["a.sh", "b.yaml"]);
        let open = |fs: &[ImplFile]| {
            Cache::open(cache.path(), "PKG", "training", "5.1.0", fs, &mut |_| None).unwrap()
        };
        let c = open(&fs);
        // Read right after the files were written: not kept.
        c.store(&output(), now());
        assert!(c.load().is_none());
        // Read well after: kept, and given back as it was.
        let later = c.newest + 3 * COARSE_MARGIN_NS;
        c.store(&output(), later);
        assert_eq!(c.load(), Some(output()));
        // Another list of configs, or other options: a miss.
        assert!(open(&fs[..1]).load().is_none());
        assert!(
            Cache::open(cache.path(), "PKG", "training", "5.0.0", &fs, &mut |_| None)
                .unwrap()
                .load()
                .is_none()
        );
        // A config written again (same size): its status-change time moves.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(work.path().join("b.yaml"), "x: 2\n").unwrap();
        assert!(open(&fs).load().is_none());
        // A corrupt entry is a miss.
        let c = open(&fs);
        c.store(&output(), c.newest + 3 * COARSE_MARGIN_NS);
        assert!(c.load().is_some());
        std::fs::write(&c.file, "{not json").unwrap();
        assert!(c.load().is_none());
        // So is one whose settings are cut short.
        c.store(&output(), c.newest + 3 * COARSE_MARGIN_NS);
        let whole = std::fs::read(&c.file).unwrap();
        std::fs::write(&c.file, &whole[..whole.len() - 1]).unwrap();
        assert!(c.load().is_none());
    }

    #[test]
    #[cfg(unix)]
    fn a_folder_others_can_write_to_is_not_used() {
        use std::os::unix::fs::PermissionsExt;
        let work = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        std::fs::write(work.path().join("a.sh"), "A=1\n").unwrap();
        let fs = files(work.path(), &["a.sh"]);
        let c = Cache::open(cache.path(), "PKG", "training", "5.1.0", &fs, &mut |_| None).unwrap();
        let later = c.newest + 3 * COARSE_MARGIN_NS;
        c.store(&output(), later);
        assert!(c.load().is_some());
        std::fs::set_permissions(cache.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(c.load().is_none(), "a world-writable folder is not read");
        std::fs::remove_file(&c.file).unwrap();
        c.store(&output(), later);
        assert!(!c.file.exists(), "nor written");
        // A new folder is made private.
        let fresh = cache.path().join("a/b");
        let c = Cache::open(&fresh, "PKG", "training", "5.1.0", &fs, &mut |_| None).unwrap();
        std::fs::set_permissions(cache.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        c.store(&output(), later);
        let mode = std::fs::metadata(&fresh).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
        assert!(c.load().is_some());
    }

    #[test]
    fn the_oldest_entries_go() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..5 {
            std::fs::write(dir.path().join(format!("configs-{i}.json")), "{}").unwrap();
            std::thread::sleep(std::time::Duration::from_millis(15));
        }
        std::fs::write(dir.path().join("other.txt"), "").unwrap();
        prune(dir.path(), 3);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "configs-2.json",
                "configs-3.json",
                "configs-4.json",
                "other.txt"
            ]
        );
    }
}
