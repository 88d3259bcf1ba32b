//! Hostile input, round two (issue 15), the rest: memory that grows with
//! the number of logs no more than a report needs, and every file read
//! from user input read bounded. Inputs are built in temporary folders;
//! runs are bounded in time and peak memory (generous bounds for a loaded
//! 2-core machine; the inputs are smaller in a debug build).

mod common;
use common::bounded::{self, copy_dir, example, tmp, Run};
use common::git;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Longest any run may take before it counts as a hang.
const DEADLINE: Duration = Duration::from_secs(120);

/// Runs mlaudit in `dir` within the deadline; asserts no panic or abort.
fn mlaudit(dir: &Path, args: &[&str]) -> Run {
    bounded::run_ok(dir, args, DEADLINE)
}

const FOLDER: &str = "Example/results/example_system/retinanet";

// ---- Memory per log.

/// Peak RSS (kB) of `check` on the example package with `n` more result
/// logs of one unparsable line each in one benchmark folder.
fn peak_with_tiny_logs(n: usize) -> u64 {
    let d = tmp();
    let p = d.path();
    copy_dir(&example(), &p.join("Example"));
    let folder = p.join(FOLDER);
    for i in 5..5 + n {
        std::fs::write(folder.join(format!("result_{i}.txt")), "x\n").expect("log");
    }
    let run = bounded::run_with(
        p,
        &["check", "--ruleset", "5.0.0", "Example"],
        // As many threads as the slowest CI machine has: the figure does
        // not depend on it, the time does.
        &[("RAYON_NUM_THREADS", "2")],
        DEADLINE,
    );
    assert_eq!(run.code, Some(1), "{}", run.all());
    run.peak_kb.unwrap_or(0)
}

/// What is kept per log until the end of a run is what the report needs:
/// a log's own findings are listed or counted as soon as it is checked,
/// its run is moved (not copied) into its folder's statistics and dropped
/// after them unless the HTML page draws it, the package facts are dropped
/// after the package rules, and past the first 100 per folder and code a
/// finding is kept as a hash. Peak RSS per tiny log, between 5,000 and
/// 20,000 logs: 6.2 kB before (505 MB at 100,000 logs), 2.7 kB after.
#[cfg(target_os = "linux")]
#[test]
fn memory_grows_by_little_more_than_the_report_per_log() {
    let (small, large) = if cfg!(debug_assertions) {
        (2_000, 8_000)
    } else {
        (5_000, 20_000)
    };
    let a = peak_with_tiny_logs(small);
    let b = peak_with_tiny_logs(large);
    if a == 0 || b == 0 {
        common::say("hostile4: no peak RSS read from /proc, memory not checked");
        return;
    }
    let per_log = b.saturating_sub(a) * 1024 / (large - small) as u64;
    common::say(&format!(
        "hostile4: peak RSS {a} kB at {small} logs, {b} kB at {large}: {per_log} bytes per log"
    ));
    assert!(
        per_log < 4096,
        "{per_log} bytes of peak RSS per log ({a} kB at {small} logs, {b} kB at {large})"
    );
}

// ---- Files read from user input are read bounded.

/// A log whose third line is `hole` zero bytes long (a sparse file: no
/// disk used), then the example's other lines, with `edit` applied.
fn log_with_a_long_line(path: &Path, hole: u64, edit: impl Fn(&str) -> String) {
    let text =
        std::fs::read_to_string(example().join("results/example_system/retinanet/result_0.txt"))
            .expect("log");
    let mut lines = text.split_inclusive('\n');
    let mut f = std::fs::File::create(path).expect("create");
    for l in lines.by_ref().take(2) {
        f.write_all(l.as_bytes()).expect("write");
    }
    f.seek(SeekFrom::Current(hole as i64)).expect("seek");
    f.write_all(b"\n").expect("write");
    for l in lines {
        f.write_all(edit(l).as_bytes()).expect("write");
    }
}

/// Bytes of zeros on one line: more than the bound below.
const HOLE: u64 = 128 << 20;
/// Peak RSS a run over such a log may take (10 to 30 MB).
const BOUND_KB: u64 = 96 << 10;

/// `repeat` quotes the line of the first difference: it read every line
/// up to it whole (272 MB for a line of 256 MB before it, now 10 MB).
#[test]
fn repeat_quotes_a_line_without_reading_long_lines_whole() {
    let d = tmp();
    let p = d.path();
    log_with_a_long_line(&p.join("a.txt"), HOLE, str::to_string);
    log_with_a_long_line(&p.join("b.txt"), HOLE, |l| {
        l.replace(
            "\"opt_weight_decay\", \"value\": 0.0,",
            "\"opt_weight_decay\", \"value\": 0.5,",
        )
    });
    let run = mlaudit(p, &["repeat", "a.txt", "b.txt"]);
    assert_eq!(run.code, Some(1), "{}", run.all());
    assert!(
        run.stdout.contains("\"opt_weight_decay\", \"value\": 0.5,"),
        "the differing line is quoted: {}",
        run.all()
    );
    if let Some(kb) = run.peak_kb {
        assert!(kb < BOUND_KB, "peak RSS {kb} kB");
    }
}

/// Guessing the round of a log given alone reads its first lines for
/// `submission_benchmark`: a first line of 256 MB was read whole (271 MB,
/// now 26 MB).
#[test]
fn guessing_the_round_reads_a_bounded_part_of_a_log() {
    let d = tmp();
    let p = d.path();
    log_with_a_long_line(&p.join("result_0.txt"), HOLE, str::to_string);
    let run = mlaudit(p, &["check", "result_0.txt"]);
    assert_eq!(run.code, Some(2), "{}", run.all());
    assert!(
        run.stderr.contains("cannot tell the round"),
        "{}",
        run.all()
    );
    if let Some(kb) = run.peak_kb {
        assert!(kb < BOUND_KB, "peak RSS {kb} kB");
    }
}

/// An existing hook is read to tell whether mlaudit wrote it: a hook that
/// is a link to /dev/zero filled memory, a FIFO blocked forever. Both are
/// refused (exit 2, the hook named), by `install` and `uninstall`.
#[cfg(unix)]
#[test]
fn a_hook_that_is_a_device_or_a_fifo_is_refused() {
    let d = tmp();
    let r = d.path();
    git(r, &["init", "-q"]);
    let hooks = r.join(".git/hooks");
    std::fs::create_dir_all(&hooks).expect("hooks");
    let hook = hooks.join("pre-commit");
    let mut cases = vec!["/dev/zero"];
    if Command::new("mkfifo")
        .arg(r.join("fifo"))
        .status()
        .is_ok_and(|s| s.success())
    {
        cases.push("FIFO");
    }
    for case in cases {
        let _ = std::fs::remove_file(&hook);
        if case == "FIFO" {
            std::fs::rename(r.join("fifo"), &hook).expect("fifo");
        } else {
            std::os::unix::fs::symlink(case, &hook).expect("symlink");
        }
        for args in [
            &["hook", "install", "--ruleset", "5.0.0"][..],
            &["hook", "install", "--ruleset", "5.0.0", "--force"][..],
            &["hook", "uninstall"][..],
        ] {
            let started = std::time::Instant::now();
            let run = mlaudit(r, args);
            assert_eq!(run.code, Some(2), "{case} {args:?}: {}", run.all());
            assert!(
                run.stderr.contains("pre-commit") && run.stderr.contains("not a regular file"),
                "{case} {args:?}: {}",
                run.all()
            );
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "{case} {args:?}: {:?}",
                started.elapsed()
            );
            if let Some(kb) = run.peak_kb {
                assert!(kb < BOUND_KB, "{case} {args:?}: peak RSS {kb} kB");
            }
        }
        // Left as it was.
        let meta = std::fs::symlink_metadata(&hook).expect("still there");
        assert!(!meta.is_file(), "{case}: replaced");
    }
}
