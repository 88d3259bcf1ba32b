//! Hostile input: every case must end with exit 1 (a finding) or 2 (a tool
//! error) and a message that names the input; never a panic, a hang or
//! memory that grows with the input. Inputs are generated in a temporary
//! folder at test time (nothing big is committed).

use std::io::Write;
mod common;
use common::bounded::{self, Run};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Longest any case may run before it counts as a hang.
const DEADLINE: Duration = Duration::from_secs(60);
/// Peak resident memory any case may reach (the log engine needs ~30 MB).
const MAX_RSS_KB: u64 = 200 * 1024;

/// Runs mlaudit in `dir`, killing it at the deadline.
fn mlaudit(dir: &Path, args: &[&str]) -> Run {
    bounded::run(dir, args, DEADLINE)
}

/// Exit 1 or 2, no panic, the input named, memory bounded.
fn assert_handled(run: &Run, name: &str) {
    assert!(
        matches!(run.code, Some(1) | Some(2)),
        "{name}: exit {:?}, expected 1 or 2\n{}",
        run.code,
        run.all()
    );
    assert!(
        !run.stderr.contains("panicked"),
        "{name}: panic\n{}",
        run.stderr
    );
    assert!(
        run.all().contains(name),
        "{name}: the message does not name the input\n{}",
        run.all()
    );
    if let Some(kb) = run.peak_kb {
        assert!(kb < MAX_RSS_KB, "{name}: peak RSS {kb} kB");
    }
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write input");
    p
}

fn log(dir: &Path, name: &str) -> Run {
    mlaudit(dir, &["log", "--ruleset", "5.0.0", name])
}

/// A few deterministic pseudo-random bytes (xorshift), no dependency.
fn noise(n: usize, mut seed: u64) -> Vec<u8> {
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 24) as u8
        })
        .collect()
}

const REC: &str = r#":::MLLOG {"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "cache_clear", "value": true, "metadata": {"file": "t.py", "lineno": 1}}"#;

#[test]
fn empty_file() {
    let d = tmp();
    write(d.path(), "empty.txt", b"");
    let r = log(d.path(), "empty.txt");
    assert_handled(&r, "empty.txt");
    assert!(r.stdout.contains("LOG002"), "{}", r.all());
}

#[test]
fn random_bytes() {
    let d = tmp();
    let mut bytes = noise(1 << 20, 0x9e37_79b9_7f4a_7c15);
    // With markers sprinkled in, the JSON after them is garbage.
    for i in (0..bytes.len() - 16).step_by(4096) {
        bytes[i..i + 9].copy_from_slice(b":::MLLOG ");
    }
    write(d.path(), "random.txt", &bytes);
    let r = log(d.path(), "random.txt");
    assert_handled(&r, "random.txt");
    assert!(r.stdout.contains("LOG001"), "{}", r.all());
}

#[test]
fn a_64_mib_line() {
    let d = tmp();
    let p = d.path().join("long.txt");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&p).expect("create"));
    writeln!(f, "{REC}").expect("write");
    write!(f, r#":::MLLOG {{"time_ms": 1, "key": "x", "value": ""#).expect("write");
    let block = vec![b'a'; 1 << 20];
    for _ in 0..64 {
        f.write_all(&block).expect("write");
    }
    writeln!(f, r#"", "metadata": {{}}}}"#).expect("write");
    writeln!(f, "{REC}").expect("write");
    drop(f);
    let r = log(d.path(), "long.txt");
    assert_handled(&r, "long.txt");
    assert!(
        r.stdout.contains("long.txt:2: error[LOG007]"),
        "{}",
        r.all()
    );
}

#[test]
fn a_64_mib_line_without_line_ends_or_marker() {
    let d = tmp();
    let p = d.path().join("blob.txt");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&p).expect("create"));
    let block = vec![b'z'; 1 << 20];
    for _ in 0..64 {
        f.write_all(&block).expect("write");
    }
    drop(f);
    let r = log(d.path(), "blob.txt");
    assert_handled(&r, "blob.txt");
    assert!(r.stdout.contains("LOG002"), "{}", r.all());
}

#[test]
fn json_nested_200000_deep() {
    let d = tmp();
    let text = format!(
        ":::MLLOG {{\"time_ms\": 1, \"key\": \"x\", \"value\": {}{}, \"metadata\": {{}}}}\n",
        "[".repeat(200_000),
        "]".repeat(200_000)
    );
    write(d.path(), "deep.txt", text.as_bytes());
    let r = log(d.path(), "deep.txt");
    assert_handled(&r, "deep.txt");
    assert!(
        r.stdout.contains("deep.txt:1: error[LOG001]"),
        "{}",
        r.all()
    );
    assert!(r.stdout.contains("nested too deeply"), "{}", r.all());
}

#[test]
fn huge_numbers_nan_and_infinity_are_numbers_as_in_python() {
    let d = tmp();
    let text = format!(
        "{REC}\n:::MLLOG {{\"time_ms\": 1e999, \"key\": \"train_loss\", \"value\": 1e999, \"metadata\": {{\"x\": NaN, \"y\": -Infinity}}}}\n"
    );
    write(d.path(), "big_numbers.txt", text.as_bytes());
    let r = log(d.path(), "big_numbers.txt");
    // The log lacks the required keys (exit 1), but no record is malformed.
    assert_handled(&r, "big_numbers.txt");
    assert!(!r.stdout.contains("LOG001"), "{}", r.all());
}

#[test]
fn nul_bytes() {
    let d = tmp();
    let mut bytes = REC.as_bytes().to_vec();
    bytes.extend_from_slice(b"\n\0\0\0:::MLLOG {\"time_ms\": 1,\0 \"key\": \"x\"}\n\0");
    write(d.path(), "nul.txt", &bytes);
    let r = log(d.path(), "nul.txt");
    assert_handled(&r, "nul.txt");
    assert!(r.stdout.contains("nul.txt:2: error[LOG001]"), "{}", r.all());
}

#[test]
fn invalid_utf8_is_read_as_latin1() {
    let d = tmp();
    let mut bytes = REC.as_bytes().to_vec();
    bytes.extend_from_slice(b"\n\xff\xfe:::MLLOG {\"time_ms\": 1, \"key\": \"submission_org\", \"value\": \"Caf\xe9\xc3\", \"metadata\": {}}\n");
    write(d.path(), "latin1.txt", &bytes);
    let r = log(d.path(), "latin1.txt");
    assert_handled(&r, "latin1.txt");
    assert!(!r.stdout.contains("LOG001"), "{}", r.all());
}

#[test]
fn wrong_json_types() {
    let d = tmp();
    let text = format!(
        "{REC}\n:::MLLOG {{\"time_ms\": 1, \"key\": 5, \"value\": 1, \"metadata\": {{}}}}\n\
         :::MLLOG {{\"time_ms\": 2, \"key\": \"eval_accuracy\", \"value\": 0.5, \"metadata\": \"x\"}}\n\
         :::MLLOG {{\"time_ms\": \"soon\", \"key\": \"run_stop\", \"value\": null, \"metadata\": {{}}}}\n\
         :::MLLOG [1, 2, 3]\n:::MLLOG \"just a string\"\n"
    );
    write(d.path(), "types.txt", text.as_bytes());
    let r = log(d.path(), "types.txt");
    assert_handled(&r, "types.txt");
    assert!(
        r.stdout.contains("types.txt:2: warning[LOG004]"),
        "{}",
        r.all()
    );
    for line in [4, 5, 6] {
        assert!(
            r.stdout
                .contains(&format!("types.txt:{line}: error[LOG001]")),
            "line {line}\n{}",
            r.all()
        );
    }
}

#[test]
fn missing_file() {
    let d = tmp();
    let r = log(d.path(), "nowhere.txt");
    assert_handled(&r, "nowhere.txt");
    let r = mlaudit(d.path(), &["check", "--ruleset", "5.0.0", "nowhere"]);
    assert_handled(&r, "nowhere");
}

#[test]
fn folder_where_a_file_is_expected() {
    let d = tmp();
    std::fs::create_dir(d.path().join("a_folder.txt")).expect("mkdir");
    let r = log(d.path(), "a_folder.txt");
    assert_handled(&r, "a_folder.txt");
    // A result log that is a folder inside a package.
    let bench = d.path().join("pkg/results/sys/bert");
    std::fs::create_dir_all(bench.join("result_0.txt")).expect("mkdir");
    std::fs::create_dir_all(d.path().join("pkg/systems")).expect("mkdir");
    let r = mlaudit(d.path(), &["check", "--ruleset", "5.0.0", "pkg"]);
    assert_handled(&r, "pkg");
}

#[test]
fn file_where_a_folder_is_expected() {
    let d = tmp();
    write(d.path(), "rules.txt", b"not a folder");
    write(d.path(), "run.txt", REC.as_bytes());
    let r = mlaudit(
        d.path(),
        &[
            "--rules",
            "rules.txt",
            "log",
            "--ruleset",
            "5.0.0",
            "run.txt",
        ],
    );
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert_handled(&r, "rules.txt");
    // A package whose results/ and systems/ are files.
    std::fs::create_dir(d.path().join("pkg")).expect("mkdir");
    write(d.path(), "pkg/results", b"x");
    write(d.path(), "pkg/systems", b"x");
    let r = mlaudit(d.path(), &["check", "--ruleset", "5.0.0", "pkg"]);
    assert_handled(&r, "pkg");
}

#[cfg(unix)]
#[test]
fn symbolic_link_loops_in_a_package() {
    let d = tmp();
    let bench = d.path().join("pkg/results/sys/bert");
    std::fs::create_dir_all(&bench).expect("mkdir");
    std::fs::create_dir_all(d.path().join("pkg/systems")).expect("mkdir");
    write(&bench, "result_0.txt", REC.as_bytes());
    std::os::unix::fs::symlink("..", bench.join("up")).expect("symlink");
    std::os::unix::fs::symlink("b", d.path().join("pkg/results/a")).expect("symlink");
    std::os::unix::fs::symlink("a", d.path().join("pkg/results/b")).expect("symlink");
    std::os::unix::fs::symlink("self.txt", bench.join("self.txt")).expect("symlink");
    let r = mlaudit(d.path(), &["check", "--ruleset", "5.0.0", "pkg"]);
    assert_handled(&r, "pkg");
    let r = log(d.path(), "pkg/results/sys/bert/self.txt");
    assert_handled(&r, "self.txt");
}

#[cfg(unix)]
#[test]
fn unreadable_file() {
    use std::os::unix::fs::PermissionsExt;
    let d = tmp();
    let p = write(d.path(), "secret.txt", REC.as_bytes());
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    if std::fs::File::open(&p).is_ok() {
        // Root (and CAP_DAC_OVERRIDE) reads a mode-000 file anyway.
        eprintln!(
            "unreadable_file: running with permission to read mode-000 files (root?); \
             the unreadable case cannot be produced here, checking it is read instead"
        );
        let r = log(d.path(), "secret.txt");
        assert_handled(&r, "secret.txt");
        return;
    }
    let r = log(d.path(), "secret.txt");
    assert_handled(&r, "secret.txt");
    assert!(
        r.all().contains("LOG005") || r.code == Some(2),
        "{}",
        r.all()
    );
}

#[test]
fn unknown_format_and_ruleset() {
    let d = tmp();
    write(d.path(), "run.txt", REC.as_bytes());
    let r = mlaudit(
        d.path(),
        &["log", "--ruleset", "5.0.0", "--format", "xml", "run.txt"],
    );
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert_handled(&r, "xml");
    let r = mlaudit(d.path(), &["log", "--ruleset", "9.9.9", "run.txt"]);
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert_handled(&r, "9.9.9");
    let r = mlaudit(d.path(), &["check", "--ruleset", "0.0.1", "run.txt"]);
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert_handled(&r, "0.0.1");
}

#[test]
fn a_million_failing_records_keep_memory_flat() {
    let d = tmp();
    let p = d.path().join("many.txt");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&p).expect("create"));
    writeln!(f, "{REC}").expect("write");
    writeln!(
        f,
        r#":::MLLOG {{"time_ms": 0, "key": "run_start", "value": null, "metadata": {{}}}}"#
    )
    .expect("write");
    for i in 0..400_000u32 {
        // init_start after run_start fails a check on every line; a broken
        // record on every other line.
        writeln!(
            f,
            r#":::MLLOG {{"time_ms": {i}, "key": "init_start", "value": null, "metadata": {{}}}}"#
        )
        .expect("write");
        writeln!(f, ":::MLLOG {{\"time_ms\": {i}, \"key\"").expect("write");
    }
    drop(f);
    let r = log(d.path(), "many.txt");
    assert_handled(&r, "many.txt");
    assert!(
        r.stdout.contains("more malformed MLLOG records"),
        "{}",
        r.stdout.len()
    );
    assert!(
        r.stdout.contains("more CMN005 findings"),
        "{}",
        r.stdout.len()
    );
    assert!(
        r.stdout.len() < 1 << 20,
        "output of {} bytes",
        r.stdout.len()
    );
}

/// `check` reads a log in one streaming pass besides compliance: a folder
/// with a 96 MiB log is checked with far less memory than the log's size.
#[test]
fn check_memory_does_not_grow_with_log_length() {
    use std::io::Write;
    let dir = tmp();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/Example");
    let dst = dir.path().join("Example");
    for sub in ["systems", "results/example_system/retinanet"] {
        std::fs::create_dir_all(dst.join(sub)).expect("mkdir");
        for e in std::fs::read_dir(src.join(sub))
            .expect("read example")
            .flatten()
        {
            std::fs::copy(e.path(), dst.join(sub).join(e.file_name())).expect("copy");
        }
    }
    let log = dst.join("results/example_system/retinanet/result_0.txt");
    let text = std::fs::read_to_string(&log).expect("read log");
    let (head, stop) = text
        .trim_end()
        .rsplit_once('\n')
        .expect("a log with several lines");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&log).expect("create"));
    writeln!(out, "{head}").expect("write");
    let mut written = 0usize;
    let mut step = 0u64;
    while written < 96 << 20 {
        let line = format!(":::MLLOG {{\"namespace\": \"\", \"time_ms\": 1760000000500, \"event_type\": \"POINT_IN_TIME\", \"key\": \"train_loss\", \"value\": 0.25, \"metadata\": {{\"file\": \"train.py\", \"lineno\": 200, \"step\": {step}}}}}\n");
        out.write_all(line.as_bytes()).expect("write");
        written += line.len();
        step += 1;
    }
    writeln!(out, "{stop}").expect("write");
    drop(out);
    let run = mlaudit(dir.path(), &["check", "--ruleset", "5.0.0", "Example"]);
    // A 96 MiB log is over the repository size limit (REPO002, 50 MiB): that
    // error fails the run; the big log has no other (result_1's BMK004 is
    // the example's tolerated run).
    let all = run.all();
    let big: Vec<&str> = all
        .lines()
        .filter(|l| l.contains("result_0.txt") && l.contains(": error["))
        .collect();
    assert_eq!(run.code, Some(1), "{all}");
    assert!(big.len() == 1 && big[0].contains("error[REPO002]"), "{all}");
    if let Some(kb) = run.peak_kb {
        assert!(kb < 64 * 1024, "peak RSS {kb} kB for a 96 MiB log");
    }
}
