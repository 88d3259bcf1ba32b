//! Hostile input, round two (issue 15): what mlaudit writes, what it
//! reads whole, what it prints, and how big a rule pack's values may grow.
//! Every input is built in a temporary folder; every run is bounded in
//! time and peak memory (generous bounds: a loaded 2-core machine, a debug
//! build) and must leave the checked tree byte-identical.

use std::collections::BTreeMap;
mod common;
use common::bounded::{self, copy_dir, example, tmp, Run};
use common::git;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_mlaudit");
/// Longest any run may take before it counts as a hang.
const DEADLINE: Duration = Duration::from_secs(90);
/// Peak resident memory any run may reach.
const MAX_RSS_KB: u64 = 400 * 1024;

/// Runs mlaudit in `dir` with `args` within the deadline; asserts no
/// panic, no abort and bounded memory.
fn mlaudit(dir: &Path, args: &[&str]) -> Run {
    let run = bounded::run(dir, args, DEADLINE);
    assert!(
        run.code.is_some() && !run.stderr.contains("panicked"),
        "mlaudit {args:?} crashed (exit {:?})\n{}",
        run.code,
        run.all()
    );
    if let Some(kb) = run.peak_kb {
        assert!(kb < MAX_RSS_KB, "mlaudit {args:?}: peak RSS {kb} kB");
    }
    run
}

/// Every entry under `dir`: file bytes, or a link's target, or a folder.
fn fingerprint(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read dir").flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).expect("inside").to_path_buf();
            let ft = e.file_type().expect("type");
            if ft.is_symlink() {
                let t = std::fs::read_link(&p).expect("link");
                out.insert(rel, format!("link:{}", t.display()).into_bytes());
            } else if ft.is_dir() {
                out.insert(rel, b"dir".to_vec());
                stack.push(p);
            } else if ft.is_file() {
                out.insert(rel, std::fs::read(&p).unwrap_or_default());
            } else {
                out.insert(rel, b"special".to_vec());
            }
        }
    }
    out
}

fn repo() -> tempfile::TempDir {
    let d = tmp();
    git(d.path(), &["init", "-q"]);
    git(d.path(), &["config", "user.name", "T"]);
    git(d.path(), &["config", "user.email", "t@example.org"]);
    git(d.path(), &["config", "commit.gpgsign", "false"]);
    d
}

const FOLDER: &str = "Example/results/example_system/retinanet";

/// A copy of the built-in rules in `dir/rules`, for `--rules`.
fn user_rules(dir: &Path) -> PathBuf {
    let r = dir.join("rules");
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("rules"), &r);
    r
}

// ---- 5. --changed-since REV is never an option to git.

#[test]
fn changed_since_a_rev_that_looks_like_an_option_is_refused() {
    let d = repo();
    let r = d.path();
    copy_dir(&example(), &r.join("Example"));
    git(r, &["add", "-A"]);
    git(r, &["commit", "-q", "-m", "package"]);
    let before = fingerprint(r);
    let run = mlaudit(
        r,
        &[
            "check",
            "--ruleset",
            "5.0.0",
            "--changed-since=--output=Example/systems/example_system.json",
        ],
    );
    assert_eq!(run.code, Some(2), "{}", run.all());
    assert!(run.stderr.contains("--output="), "{}", run.all());
    assert_eq!(fingerprint(r), before, "the checked tree was modified");
    // An ordinary revision still works.
    let run = mlaudit(
        r,
        &["check", "--ruleset", "5.0.0", "--changed-since", "HEAD"],
    );
    assert_eq!(run.code, Some(0), "{}", run.all());
}

// ---- 6. Reports never overwrite an input.

#[test]
fn reports_are_not_written_over_the_files_being_checked() {
    let d = tmp();
    copy_dir(&example(), &d.path().join("Example"));
    let before = fingerprint(d.path());
    let log = format!("{FOLDER}/result_0.txt");
    for args in [
        vec!["check", "--ruleset", "5.0.0", "Example", "--html", &log],
        vec![
            "check",
            "--ruleset",
            "5.0.0",
            "Example",
            "-o",
            "Example/systems/example_system.json",
        ],
        vec!["log", "--ruleset", "5.0.0", &log, "-o", &log],
        vec!["check", "--ruleset", "5.0.0", &log, "-o", &log],
    ] {
        let run = mlaudit(d.path(), &args);
        assert_eq!(run.code, Some(2), "{args:?}\n{}", run.all());
        assert!(
            run.stderr.contains("refusing to overwrite"),
            "{}",
            run.all()
        );
        assert_eq!(fingerprint(d.path()), before, "{args:?} modified the tree");
    }
    // A report beside the package is written as before.
    let run = mlaudit(
        d.path(),
        &["check", "--ruleset", "5.0.0", "Example", "-o", "out.txt"],
    );
    assert_eq!(run.code, Some(0), "{}", run.all());
    assert!(d.path().join("out.txt").is_file());
}

// ---- 7. --write-scaling never writes through a link.

#[cfg(unix)]
#[test]
fn write_scaling_never_follows_a_link() {
    let d = tmp();
    let p = d.path();
    copy_dir(&example(), &p.join("Example"));
    // RCPs slower than the example's runs: the folder gets a scaling factor.
    let rules = user_rules(p);
    let rcp = rules.join("training/5.0.0/rcp/retinanet.yaml");
    let text = std::fs::read_to_string(&rcp).expect("rcp");
    let slower = text.replacen(
        "runs: [4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4]",
        "runs: [5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5]",
        1,
    );
    assert_ne!(text, slower, "the retinanet RCP of batch 256 changed");
    std::fs::write(&rcp, slower).expect("write rcp");
    std::fs::write(p.join("victim.txt"), b"keep me").expect("victim");
    let scaling = p.join(FOLDER).join("scaling.json");
    std::os::unix::fs::symlink("../../../../victim.txt", &scaling).expect("symlink");
    let args = [
        "--rules",
        "rules",
        "check",
        "--ruleset",
        "5.0.0",
        "Example",
        "--write-scaling",
    ];
    let run = mlaudit(p, &args);
    assert_eq!(run.code, Some(2), "{}", run.all());
    assert!(run.stderr.contains("scaling.json"), "{}", run.all());
    assert_eq!(std::fs::read(p.join("victim.txt")).unwrap(), b"keep me");
    // A dangling link creates nothing outside the tree.
    std::fs::remove_file(&scaling).expect("rm");
    std::os::unix::fs::symlink("../../../../created.txt", &scaling).expect("symlink");
    let run = mlaudit(p, &args);
    assert_eq!(run.code, Some(2), "{}", run.all());
    assert!(
        !p.join("created.txt").exists(),
        "a file was created outside"
    );
    // Without a link, a regular scaling.json is written in the folder.
    std::fs::remove_file(&scaling).expect("rm");
    let run = mlaudit(p, &args);
    assert_eq!(run.code, Some(0), "{}", run.all());
    let meta = std::fs::symlink_metadata(&scaling).expect("scaling.json written");
    assert!(meta.is_file());
}

// ---- 8. A ruleset is a name, never a path.

#[test]
fn a_ruleset_from_the_config_that_is_a_path_is_refused() {
    let d = tmp();
    let p = d.path();
    user_rules(p);
    // "Rule data" planted inside the checked repository: no rules at all.
    let repo = p.join("repo");
    let evil = repo.join("evil/compliance");
    std::fs::create_dir_all(&evil).expect("mkdir");
    std::fs::write(evil.join("common.yaml"), "rules: []\n").expect("pack");
    copy_dir(&example(), &repo.join("Example"));
    std::fs::write(
        repo.join(".mlaudit.toml"),
        "ruleset = \"../../repo/evil\"\n",
    )
    .expect("config");
    std::fs::create_dir(repo.join(".git")).expect("a repository top");
    let before = fingerprint(p);
    let rules = p.join("rules");
    let rules = rules.to_str().expect("utf-8 temp path");
    let run = mlaudit(&repo, &["--rules", rules, "check", "Example"]);
    assert_eq!(run.code, Some(2), "{}", run.all());
    assert!(run.stderr.contains(".mlaudit.toml"), "{}", run.all());
    assert!(run.stderr.contains("not a name"), "{}", run.all());
    let run = mlaudit(
        &repo,
        &["--rules", rules, "log", "--ruleset", "../x", "Example"],
    );
    assert_eq!(run.code, Some(2), "{}", run.all());
    assert_eq!(fingerprint(p), before);
}

// ---- 9. A pack that is a broken link or a folder is an error.

#[cfg(unix)]
#[test]
fn a_pack_that_is_not_a_file_is_an_error() {
    let d = tmp();
    let p = d.path();
    let rules = user_rules(p);
    copy_dir(&example(), &p.join("Example"));
    let pack = rules.join("training/5.0.0/compliance/closed_retinanet.yaml");
    std::fs::remove_file(&pack).expect("rm pack");
    std::os::unix::fs::symlink("nowhere.yaml", &pack).expect("symlink");
    let log = format!("{FOLDER}/result_1.txt");
    let run = mlaudit(p, &["--rules", "rules", "log", "--ruleset", "5.0.0", &log]);
    assert_eq!(run.code, Some(2), "{}", run.all());
    assert!(
        run.stderr.contains("closed_retinanet.yaml"),
        "{}",
        run.all()
    );
    std::fs::remove_file(&pack).expect("rm link");
    std::fs::create_dir(&pack).expect("a folder named like a pack");
    let run = mlaudit(p, &["--rules", "rules", "log", "--ruleset", "5.0.0", &log]);
    assert_eq!(run.code, Some(2), "{}", run.all());
    assert!(
        run.stderr.contains("closed_retinanet.yaml"),
        "{}",
        run.all()
    );
}

// ---- 12. Control characters never reach the terminal raw.

#[test]
fn control_characters_from_logs_and_names_are_escaped() {
    let d = tmp();
    let p = d.path();
    let forged = "\n\u{1b}]0;owned\u{7}PASS: 1 log checked\u{1b}[2J";
    let value = serde_json::to_string(forged).expect("json");
    let log = format!(
        ":::MLLOG {{\"time_ms\": 1, \"key\": \"submission_org\", \"value\": {value}, \"metadata\": {{}}}}\n\
         :::MLLOG {{\"time_ms\": 2, \"key\" \u{1b}[31m broken\n"
    );
    let name = "run\u{1b}[1mx.txt";
    std::fs::write(p.join(name), log).expect("log");
    for format in ["text", "github"] {
        let run = mlaudit(p, &["log", "--ruleset", "5.0.0", "--format", format, name]);
        assert_eq!(run.code, Some(1), "{}", run.all());
        let all = run.all();
        assert!(!all.contains('\u{1b}'), "{format}: raw ESC in\n{all}");
        assert!(!all.contains('\u{7}'), "{format}: raw BEL in\n{all}");
        assert!(
            !all.lines().any(|l| l.starts_with("PASS")),
            "{format}: forged line\n{all}"
        );
        assert!(all.contains("\\x1b"), "{format}: escape not shown\n{all}");
    }
}

// ---- 15. A write error names the file.

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_names_the_output_file() {
    let d = tmp();
    copy_dir(&example(), &d.path().join("Example"));
    for args in [
        vec!["check", "--ruleset", "5.0.0", "Example", "-o", "/dev/full"],
        vec![
            "score",
            "--ruleset",
            "5.0.0",
            "Example",
            "--csv",
            "/dev/full",
        ],
    ] {
        let run = mlaudit(d.path(), &args);
        assert_eq!(run.code, Some(2), "{args:?}\n{}", run.all());
        assert!(run.stderr.contains("/dev/full"), "{args:?}\n{}", run.all());
    }
}

// ---- 14. A log that cannot be read is not compared, and the run exits 2.

/// Runs mlaudit as an unprivileged user when running as root (root reads
/// mode-000 files); `None` when that cannot be arranged.
#[cfg(target_os = "linux")]
fn mlaudit_unprivileged(dir: &Path, args: &[&str]) -> Option<Run> {
    let is_root = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .map(|v| v.split_whitespace().next() == Some("0"))
        })
        .unwrap_or(false);
    if !is_root {
        return Some(mlaudit(dir, args));
    }
    let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"]
        .into_iter()
        .find(|p| Path::new(p).exists())?;
    let out = Command::new(setpriv)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN])
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    Some(Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into(),
        stderr: String::from_utf8_lossy(&out.stderr).into(),
        peak_kb: None,
    })
}

#[cfg(target_os = "linux")]
#[test]
fn unreadable_logs_are_not_compared_and_exit_2() {
    use std::os::unix::fs::PermissionsExt;
    let d = tmp();
    let p = d.path();
    copy_dir(&example(), &p.join("Example"));
    // Readable by an unprivileged user, but for the two logs.
    let mut stack = vec![p.to_path_buf()];
    while let Some(dir) = stack.pop() {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        for e in std::fs::read_dir(&dir).expect("read dir").flatten() {
            if e.file_type().expect("type").is_dir() {
                stack.push(e.path());
            } else {
                std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o644))
                    .expect("chmod");
            }
        }
    }
    for n in [0, 3] {
        let log = p.join(FOLDER).join(format!("result_{n}.txt"));
        std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    }
    let Some(run) = mlaudit_unprivileged(p, &["check", "--ruleset", "5.0.0", "Example"]) else {
        eprintln!("skipped: running as root without setpriv, a log cannot be made unreadable");
        return;
    };
    assert_eq!(run.code, Some(2), "{}", run.all());
    assert!(run.stdout.contains("LOG005"), "{}", run.all());
    for code in ["STA001", "RCP005"] {
        assert!(!run.stdout.contains(code), "false {code}\n{}", run.all());
    }
}

// ---- 3. Only regular files of bounded size are read whole.

#[cfg(unix)]
#[test]
fn a_config_that_is_a_device_or_a_fifo_is_refused() {
    let d = tmp();
    let p = d.path();
    copy_dir(&example(), &p.join("Example"));
    std::fs::create_dir(p.join(".git")).expect("a repository top");
    let config = p.join(".mlaudit.toml");
    std::os::unix::fs::symlink("/dev/zero", &config).expect("symlink");
    let run = mlaudit(p, &["check", "--ruleset", "5.0.0", "Example"]);
    assert_eq!(run.code, Some(2), "{}", run.all());
    assert!(run.stderr.contains(".mlaudit.toml"), "{}", run.all());
    std::fs::remove_file(&config).expect("rm");
    let fifo = Command::new("mkfifo").arg(&config).status();
    if fifo.is_ok_and(|s| s.success()) {
        let run = mlaudit(p, &["check", "--ruleset", "5.0.0", "Example"]);
        assert_eq!(run.code, Some(2), "{}", run.all());
        assert!(run.stderr.contains(".mlaudit.toml"), "{}", run.all());
        // A log that is a FIFO or a device is refused, never waited on.
        std::fs::remove_file(&config).expect("rm");
        let log = p.join("fifo.txt");
        assert!(Command::new("mkfifo").arg(&log).status().is_ok());
        let run = mlaudit(p, &["log", "--ruleset", "5.0.0", "fifo.txt"]);
        assert_eq!(run.code, Some(2), "{}", run.all());
        assert!(run.stdout.contains("fifo.txt"), "{}", run.all());
    }
    std::os::unix::fs::symlink("/dev/zero", p.join("zero.txt")).expect("symlink");
    let run = mlaudit(p, &["log", "--ruleset", "5.0.0", "zero.txt"]);
    assert_eq!(run.code, Some(2), "{}", run.all());
}

#[test]
fn a_huge_system_description_is_refused_with_little_memory() {
    use std::io::Write;
    let d = tmp();
    let p = d.path();
    copy_dir(&example(), &p.join("Example"));
    let sys = p.join("Example/systems/example_system.json");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&sys).expect("create"));
    write!(f, "{{\"division\": \"closed\", \"padding\": [").expect("write");
    // ~32 MB of small objects: several hundred MB as a JSON tree.
    for i in 0..2_000_000u32 {
        write!(f, "{}{{\"a\": {i}}}", if i == 0 { "" } else { "," }).expect("write");
    }
    write!(f, "]}}").expect("write");
    drop(f);
    let run = mlaudit(p, &["check", "--ruleset", "5.0.0", "Example"]);
    assert_eq!(run.code, Some(1), "{}", run.all());
    assert!(run.stdout.contains("example_system.json"), "{}", run.all());
    assert!(
        run.stdout.contains("larger than the limit"),
        "{}",
        run.all()
    );
    if let Some(kb) = run.peak_kb {
        assert!(kb < 150 * 1024, "peak RSS {kb} kB for a 32 MB JSON file");
    }
}

// ---- 1. Values a rule expression builds, and rule state, are bounded.

/// A rules folder for ruleset 9.9.9 with `pack` as its common pack, and a
/// log of `lines` run_start records.
fn user_pack(pack: &str, lines: usize) -> tempfile::TempDir {
    let d = tmp();
    let rules = d.path().join("rules");
    let packs = rules.join("training/9.9.9/compliance");
    std::fs::create_dir_all(&packs).expect("mkdir");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/codes"),
        &rules.join("codes"),
    );
    std::fs::write(packs.join("common.yaml"), pack).expect("pack");
    std::fs::write(
        d.path().join("run.txt"),
        ":::MLLOG {\"time_ms\": 1, \"key\": \"run_start\", \"value\": 1, \"metadata\": {}}\n"
            .repeat(lines),
    )
    .expect("log");
    d
}

fn run_pack(d: &Path) -> Run {
    mlaudit(
        d,
        &["--rules", "rules", "log", "--ruleset", "9.9.9", "run.txt"],
    )
}

#[test]
fn state_that_doubles_on_every_event_stops_with_exit_2() {
    for (init, grow) in [("'x'", "s.x ~ s.x"), ("[1, 2, 3]", "s.x + s.x")] {
        let pack = format!(
            "state:\n  x: \"{init}\"\nrules:\n  - key: run_start\n    code: CMN007\n    set:\n      x: \"{grow}\"\n"
        );
        let d = user_pack(&pack, 200);
        let run = run_pack(d.path());
        assert_eq!(run.code, Some(2), "{grow}\n{}", run.all());
        assert!(run.stdout.contains("LOG009"), "{grow}\n{}", run.all());
        assert!(run.stdout.contains("'x'"), "{grow}\n{}", run.all());
    }
}

#[test]
fn one_expression_building_a_huge_string_stops_with_exit_2() {
    for expr in [
        "('x' * 100000000) ~ 'y'",
        "(('x' * v.value * 100000000) ~ 'y') != ''",
    ] {
        let pack = format!("rules:\n  - key: run_start\n    code: CMN007\n    check: \"{expr}\"\n");
        let d = user_pack(&pack, 3);
        let run = run_pack(d.path());
        assert_eq!(run.code, Some(2), "{expr}\n{}", run.all());
        assert!(run.stderr.contains("'x' * "), "{expr}\n{}", run.all());
        assert!(
            run.stderr.contains("MAX_EVAL_BYTES"),
            "{expr}\n{}",
            run.all()
        );
    }
}

mod packs {
    use super::*;
    use proptest::prelude::*;

    /// Pieces of expressions that build values: repetition, joining,
    /// concatenation of state, lists.
    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("s.x".to_string()),
            Just("v.value".to_string()),
            Just("'ab'".to_string()),
            Just("[s.x, s.x]".to_string()),
            (1u32..8).prop_map(|e| format!("('x' * 10 ** {e})")),
            (1u32..6).prop_map(|e| format!("([1] * 10 ** {e})")),
        ]
    }

    fn expr() -> impl Strategy<Value = String> {
        (
            piece(),
            piece(),
            prop_oneof![Just("~"), Just("+"), Just("*")],
        )
            .prop_map(|(a, b, op)| format!("{a} {op} {b}"))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
        /// Whatever a pack's `set:` builds on every event, the run ends
        /// within the deadline and the memory bound (checked by `mlaudit`),
        /// with exit 0, 1 or 2 and no crash.
        #[test]
        fn set_expressions_are_bounded_in_time_and_memory(e in expr()) {
            let pack = format!(
                "state:\n  x: \"'x'\"\nrules:\n  - key: run_start\n    code: CMN007\n    set:\n      x: \"{e}\"\n"
            );
            let d = user_pack(&pack, 60);
            let run = run_pack(d.path());
            prop_assert!(matches!(run.code, Some(0..=2)), "{e}: {:?}\n{}", run.code, run.all());
        }
    }
}

// ---- 13. Commands shown for copying separate paths that look like options.

#[test]
fn shown_commands_separate_paths_that_start_with_a_dash() {
    let d = repo();
    let r = d.path();
    copy_dir(&example(), &r.join("--seed-checker-bypass"));
    let run = mlaudit(
        r,
        &[
            "check",
            "--ruleset",
            "5.0.0",
            "--html",
            "report.html",
            "--",
            "--seed-checker-bypass",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.all());
    let html = std::fs::read_to_string(r.join("report.html")).expect("html");
    assert!(
        html.contains("mlaudit check --ruleset 5.0.0 -- --seed-checker-bypass"),
        "reproduce command without --"
    );
    // The hook's details line.
    git(r, &["add", "-A"]);
    git(r, &["commit", "-q", "-m", "package"]);
    let folder = r.join("--seed-checker-bypass/results/example_system/retinanet");
    for n in [0, 2] {
        let p = folder.join(format!("result_{n}.txt"));
        let t = std::fs::read_to_string(&p).expect("log");
        let broken = t.replace(
            r#""key": "opt_weight_decay", "value": 0.0,"#,
            r#""key": "opt_weight_decay", "value": 0.0001,"#,
        );
        assert_ne!(t, broken);
        std::fs::write(&p, broken).expect("write");
    }
    git(r, &["add", "-A"]);
    let run = mlaudit(r, &["check", "--ruleset", "5.0.0", "--staged"]);
    assert_eq!(run.code, Some(1), "{}", run.all());
    assert!(
        run.stderr.contains(
            "details: mlaudit check --ruleset 5.0.0 --html report.html -- --seed-checker-bypass/results/example_system/retinanet"
        ),
        "{}",
        run.all()
    );
}

// ---- 4. Work that grows faster than the input: YAML aliases, deep folders.
// (Waivers: `config::tests::thousands_of_waivers_on_hundreds_of_findings_are_quick`.)

#[test]
fn a_pack_multiplied_by_yaml_aliases_is_refused_quickly() {
    let long = vec!["v.value"; 400].join(" + ") + " > 0";
    let mut pack = format!(
        "rules:\n  - key: run_start\n    code: CMN007\n    check:\n      - &e \"{long}\"\n"
    );
    for _ in 0..20_000 {
        pack.push_str("      - *e\n");
    }
    let d = user_pack(&pack, 40);
    let start = Instant::now();
    let run = run_pack(d.path());
    assert_eq!(run.code, Some(2), "{}", run.all());
    assert!(run.stderr.contains("common.yaml"), "{}", run.all());
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "took {:?}",
        start.elapsed()
    );
}

#[test]
fn a_deep_folder_chain_is_walked_in_linear_time() {
    let d = tmp();
    let p = d.path();
    copy_dir(&example(), &p.join("Example"));
    let mut deep = p.join("Example/benchmarks/retinanet/implementations");
    for _ in 0..1500 {
        deep.push("d");
    }
    std::fs::create_dir_all(&deep).expect("deep folders");
    std::fs::write(deep.join("train.py"), "x = 1\n").expect("file");
    let start = Instant::now();
    let run = mlaudit(p, &["check", "--ruleset", "5.0.0", "Example"]);
    assert!(matches!(run.code, Some(0) | Some(1)), "{}", run.all());
    // Canonicalizing every folder took ~30 s at this depth.
    assert!(
        start.elapsed() < Duration::from_secs(15),
        "took {:?}",
        start.elapsed()
    );
}

#[test]
fn unterminated_here_documents_are_read_in_linear_time() {
    let d = tmp();
    let p = d.path();
    copy_dir(&example(), &p.join("Example"));
    let dir = p.join("Example/benchmarks/retinanet/implementations/x");
    std::fs::create_dir_all(&dir).expect("folders");
    // 200,000 lines (3.9 MB, under the config size limit) that each open a
    // here-document no line ends: finding each one's end by reading the
    // rest of the file took 82 s.
    let text: String = (0..200_000)
        .map(|i| format!("x=$((1 << Y{i}))\n"))
        .collect();
    std::fs::write(dir.join("run.sh"), text).expect("config");
    let start = Instant::now();
    let run = mlaudit(p, &["check", "--no-cache", "--ruleset", "5.0.0", "Example"]);
    assert!(matches!(run.code, Some(0) | Some(1)), "{}", run.all());
    assert!(
        start.elapsed() < Duration::from_secs(40),
        "took {:?}",
        start.elapsed()
    );
}

// ---- 2. Memory does not grow with what a log holds.

#[test]
fn big_values_under_new_keys_are_not_all_kept() {
    use std::io::Write;
    let d = tmp();
    let p = d.path();
    copy_dir(&example(), &p.join("Example"));
    let log = p.join(FOLDER).join("result_0.txt");
    let text = std::fs::read_to_string(&log).expect("log");
    let (head, stop) = text.trim_end().rsplit_once('\n').expect("lines");
    let array = format!("[{}0]", "0,".repeat(480_000));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&log).expect("create"));
    writeln!(f, "{head}").expect("write");
    // 60 lines of just under 1 MB, each a new key holding a big array:
    // the policy facts kept every first value (~16 MB each as JSON values).
    for i in 0..60 {
        writeln!(
            f,
            ":::MLLOG {{\"namespace\": \"\", \"time_ms\": 1760000000100, \"event_type\": \"POINT_IN_TIME\", \"key\": \"junk_{i}\", \"value\": {array}, \"metadata\": {{}}}}"
        )
        .expect("write");
    }
    writeln!(f, "{stop}").expect("write");
    drop(f);
    let run = mlaudit(p, &["check", "--ruleset", "5.0.0", "Example"]);
    assert!(matches!(run.code, Some(0) | Some(1)), "{}", run.all());
    if let Some(kb) = run.peak_kb {
        assert!(kb < 150 * 1024, "peak RSS {kb} kB");
    }
}

// ---- 10. Names that are not UTF-8 stay distinct, and changes to them are checked.

#[cfg(target_os = "linux")]
fn non_utf8_package(root: &Path) {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let pkg = root.join("Example");
    copy_dir(&example(), &pkg);
    let results = pkg.join("results");
    let systems = pkg.join("systems");
    for tag in [0xffu8, 0xfe] {
        let bytes = [b's', b'y', b's', tag];
        let name = OsStr::from_bytes(&bytes);
        copy_dir(&results.join("example_system"), &results.join(name));
        let mut json = name.to_os_string();
        json.push(".json");
        std::fs::copy(systems.join("example_system.json"), systems.join(json)).expect("copy");
    }
    std::fs::remove_dir_all(results.join("example_system")).expect("rm");
    std::fs::remove_file(systems.join("example_system.json")).expect("rm");
}

#[cfg(target_os = "linux")]
fn break_two_runs(folder: &Path) {
    for n in [0, 2] {
        let p = folder.join(format!("result_{n}.txt"));
        let t = std::fs::read_to_string(&p).expect("log");
        let broken = t.replace(
            r#""key": "opt_weight_decay", "value": 0.0,"#,
            r#""key": "opt_weight_decay", "value": 0.0001,"#,
        );
        assert_ne!(t, broken);
        std::fs::write(&p, broken).expect("write");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn folders_whose_names_are_not_utf8_are_not_merged() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let d = repo();
    let r = d.path();
    non_utf8_package(r);
    let run = mlaudit(r, &["check", "--ruleset", "5.0.0", "Example"]);
    assert_eq!(run.code, Some(0), "{}", run.all());
    assert!(
        run.stdout.contains("results/sys\\xff/retinanet"),
        "{}",
        run.all()
    );
    assert!(
        run.stdout.contains("results/sys\\xfe/retinanet"),
        "{}",
        run.all()
    );
    // Either one failing fails the package, whatever the directory order.
    for tag in [0xffu8, 0xfe] {
        let d2 = tmp();
        non_utf8_package(d2.path());
        let bytes = [b's', b'y', b's', tag];
        let name = OsStr::from_bytes(&bytes);
        break_two_runs(
            &d2.path()
                .join("Example/results")
                .join(name)
                .join("retinanet"),
        );
        let run = mlaudit(d2.path(), &["check", "--ruleset", "5.0.0", "Example"]);
        assert_eq!(run.code, Some(1), "sys\\x{tag:02x}\n{}", run.all());
    }
    // A staged change inside such a folder is checked, not skipped.
    git(r, &["add", "-A"]);
    git(r, &["commit", "-q", "-m", "package"]);
    let name = OsStr::from_bytes(b"sys\xfe");
    break_two_runs(&r.join("Example/results").join(name).join("retinanet"));
    git(r, &["add", "-A"]);
    let run = mlaudit(r, &["check", "--ruleset", "5.0.0", "--staged"]);
    assert_eq!(run.code, Some(1), "{}", run.all());
}

#[test]
fn a_folder_of_thousands_of_files_gives_a_short_report() {
    let d = tmp();
    let p = d.path();
    copy_dir(&example(), &p.join("Example"));
    let folder = p.join(FOLDER);
    for i in 5..2005 {
        std::fs::write(folder.join(format!("result_{i}.txt")), "x\n").expect("log");
        std::fs::write(folder.join(format!("junk_{i}")), "x\n").expect("junk");
    }
    let run = mlaudit(p, &["check", "--ruleset", "5.0.0", "Example"]);
    assert_eq!(run.code, Some(1), "{}", &run.stderr);
    let longest = run.stdout.lines().map(str::len).max().unwrap_or(0);
    assert!(longest < 4096, "a line of {longest} bytes");
    assert!(
        run.stdout.len() < 256 << 10,
        "{} bytes of text",
        run.stdout.len()
    );
    assert!(
        run.stdout.contains("more LOG002 findings"),
        "{}",
        &run.stdout[..2000.min(run.stdout.len())]
    );
}

#[test]
fn repeat_on_long_logs_without_positions_is_linear() {
    use std::io::Write;
    let d = tmp();
    for name in ["a.txt", "b.txt"] {
        let mut f =
            std::io::BufWriter::new(std::fs::File::create(d.path().join(name)).expect("log"));
        for i in 0..200_000u32 {
            writeln!(
                f,
                ":::MLLOG {{\"time_ms\": {i}, \"key\": \"train_loss\", \"value\": 0.5, \"metadata\": {{}}}}"
            )
            .expect("write");
        }
    }
    let start = Instant::now();
    let run = mlaudit(d.path(), &["repeat", "a.txt", "b.txt"]);
    assert_eq!(run.code, Some(0), "{}", run.all());
    // Counting earlier points for every point took minutes.
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "took {:?}",
        start.elapsed()
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_staged_change_in_a_package_whose_name_is_not_utf8_is_checked() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let d = repo();
    let r = d.path();
    let pkg = r.join(OsStr::from_bytes(b"Pkg\xff"));
    copy_dir(&example(), &pkg);
    git(r, &["add", "-A"]);
    git(r, &["commit", "-q", "-m", "package"]);
    let folder = pkg.join("results/example_system/retinanet");
    break_two_runs(&folder);
    git(r, &["add", "-A"]);
    // The whole name was cut before: the change touched "nothing" and passed.
    let run = mlaudit(r, &["check", "--ruleset", "5.0.0", "--staged"]);
    assert_eq!(run.code, Some(1), "{}", run.all());
    assert!(
        run.stdout
            .contains("Pkg\\xff/results/example_system/retinanet"),
        "{}",
        run.all()
    );
    // The details line names the real folder, as bash reads it.
    assert!(
        run.all()
            .contains("$'Pkg\\xff/results/example_system/retinanet'"),
        "{}",
        run.all()
    );
}
