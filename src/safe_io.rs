//! Bounded reading of whole files, and writing that never goes through a
//! link or over an input.
//!
//! Everything mlaudit reads whole (the project config, rule data, system
//! descriptions, `package_checker_params`, implementation configs, an
//! existing git hook) is read
//! with [`read_regular`]: only a regular file (after following links) is
//! opened, so a FIFO cannot block and `/dev/zero` cannot fill memory, and
//! no more than a limit is read. The limits are named here and listed in
//! `rules/README.md`.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Largest project config `.mlaudit.toml`.
pub const MAX_CONFIG_BYTES: u64 = 4 << 20;
/// Largest rule-data file under `--rules DIR` (a pack, codes, RCP data).
pub const MAX_RULE_FILE_BYTES: u64 = 16 << 20;
/// Largest system description JSON (real ones are a few kB).
pub const MAX_SYSTEM_JSON_BYTES: u64 = 1 << 20;
/// Largest `package_checker_params` or other small package file read whole.
pub const MAX_SMALL_FILE_BYTES: u64 = 1 << 20;

/// Largest existing git hook `hook install` and `uninstall` read, to tell
/// whether mlaudit wrote it (real hooks are a few kB).
pub const MAX_HOOK_BYTES: u64 = 1 << 20;
/// Most of a log read to guess its round from `submission_benchmark`.
pub const MAX_ROUND_GUESS_BYTES: u64 = 16 << 20;
/// Longest log line read back to quote it (`repeat`).
pub const MAX_QUOTED_LINE_BYTES: u64 = 64 << 10;

/// Reads the whole of `path`, which must be a regular file (links are
/// followed) of at most `limit` bytes. The error says which rule was broken;
/// callers name the file.
pub fn read_regular(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let meta = file.metadata()?;
    if meta.len() > limit {
        return Err(too_big(limit));
    }
    let mut bytes = Vec::with_capacity(meta.len().min(limit) as usize);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_big(limit));
    }
    Ok(bytes)
}

/// What [`read_walked`] found.
pub enum Walked {
    Bytes(Vec<u8>),
    /// Larger than the limit: its size, nothing read.
    TooBig(u64),
}

/// Reads a file a folder walk has just listed as a regular file (or a link
/// to one): as [`read_regular`], without the look before opening (the walk
/// looked; the open does not block and the file is checked again once
/// open), and up to the size it has when opened. Thousands of vendored
/// configs are read this way, each in four system calls instead of seven.
pub fn read_walked(path: &Path, limit: u64) -> std::io::Result<Walked> {
    let mut file = open_nonblocking(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    if meta.len() > limit {
        return Ok(Walked::TooBig(meta.len()));
    }
    let size = meta.len() as usize;
    let mut bytes = vec![0; size];
    let mut filled = 0;
    while filled < size {
        match file.read(&mut bytes[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    // A file that shrank since it was opened gives what it still holds.
    bytes.truncate(filled);
    Ok(Walked::Bytes(bytes))
}

/// Opens `path` for streaming, which must be a regular file (links are
/// followed): a log that is a FIFO, `/dev/zero` or a terminal would block
/// or never end.
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    let file = open_nonblocking(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    Ok(file)
}

/// [`read_regular`] as text; invalid UTF-8 is an error.
pub fn read_regular_string(path: &Path, limit: u64) -> std::io::Result<String> {
    let bytes = read_regular(path, limit)?;
    String::from_utf8(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "is not valid UTF-8"))
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: opening a FIFO swapped in after the check does not wait
    // for a writer; on a regular file the flag changes nothing.
    const O_NONBLOCK: i32 = if cfg!(any(target_os = "macos", target_os = "ios")) {
        0x0004
    } else {
        0o4000
    };
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

fn not_regular(meta: &std::fs::Metadata) -> std::io::Error {
    let what = if meta.is_dir() {
        "a folder"
    } else {
        "a special file (device, FIFO or socket)"
    };
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("is {what}, not a regular file"),
    )
}

fn too_big(limit: u64) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("is larger than the limit of {limit} bytes"),
    )
}

/// Where a report goes must not be one of the inputs being checked: refuses
/// `out` when it already exists and is (after following links) one of
/// `inputs` or lies inside one of them. A new file is always accepted.
pub fn refuse_overwriting_input(out: &Path, inputs: &[PathBuf]) -> anyhow::Result<()> {
    let Ok(target) = out.canonicalize() else {
        // Does not exist yet (or cannot be resolved): nothing to overwrite.
        if std::fs::symlink_metadata(out).is_ok() {
            anyhow::bail!(
                "{}: is a link that leads nowhere; refusing to write through it",
                out.display()
            );
        }
        return Ok(());
    };
    for input in inputs {
        let Ok(input) = input.canonicalize() else {
            continue;
        };
        if target == input || target.starts_with(&input) {
            anyhow::bail!(
                "{}: is one of the files being checked; refusing to overwrite it (write the report elsewhere)",
                out.display()
            );
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` as a new regular file, never through a link:
/// the bytes go to a temporary file in the same folder that then replaces
/// `path`. An existing `path` that is a link or not a regular file is
/// refused.
pub fn write_regular(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if meta.file_type().is_symlink() {
            anyhow::bail!(
                "{}: is a symbolic link; refusing to write through it",
                path.display()
            );
        }
        if !meta.is_file() {
            anyhow::bail!(
                "{}: exists and is not a regular file; refusing to replace it",
                path.display()
            );
        }
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.mlaudit-tmp-{}", std::process::id()));
    let cannot = |e: std::io::Error| anyhow::anyhow!("{}: cannot write: {e}", path.display());
    {
        use std::io::Write;
        // create_new: fails rather than following a link planted at `tmp`.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(cannot)?;
        if let Err(e) = f.write_all(bytes).and_then(|_| f.flush()) {
            let _ = std::fs::remove_file(&tmp);
            return Err(cannot(e));
        }
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        cannot(e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_regular_files_within_the_limit() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a");
        std::fs::write(&p, b"hello").unwrap();
        assert_eq!(read_regular(&p, 5).unwrap(), b"hello");
        assert!(read_regular(&p, 4)
            .unwrap_err()
            .to_string()
            .contains("larger"));
        assert!(read_regular(d.path(), 4)
            .unwrap_err()
            .to_string()
            .contains("folder"));
    }

    #[cfg(unix)]
    #[test]
    fn refuses_devices() {
        let e = read_regular(Path::new("/dev/zero"), 10).unwrap_err();
        assert!(e.to_string().contains("special file"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn never_writes_through_a_link() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("target");
        std::fs::write(&target, b"keep").unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(write_regular(&link, b"x").is_err());
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        let plain = d.path().join("plain");
        write_regular(&plain, b"one").unwrap();
        write_regular(&plain, b"two").unwrap();
        assert_eq!(std::fs::read(&plain).unwrap(), b"two");
    }
}
