//! Issue 13: nothing unchecked passes, and every verdict beyond the
//! official tools is right.
//!
//! - no silent default ruleset: the flag, the config, or a round the
//!   package leaves no doubt about (said on stderr and in the JSON), else
//!   exit 2 naming the candidates; `hook install` refuses a bad ruleset;
//! - nothing checked is exit 2 with one "nothing to check" line;
//! - a folder that is not a benchmark of the round fails mlaudit's verdict
//!   (PKG004, with a "did you mean"), never the official one;
//! - the run checks the official checker does not make (`RUN*`, fixtures
//!   under `tests/fixtures/run/<CODE>/`, each with the official checker's
//!   verdict in its header).

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Out {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", self.stdout, self.stderr))
    }
}

fn mlaudit(dir: &Path, args: &[&str]) -> Out {
    let out = Command::new(env!("CARGO_BIN_EXE_mlaudit"))
        .current_dir(dir)
        .args(args)
        .env_remove("CI")
        .output()
        .expect("run mlaudit");
    Out {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

#[cfg(unix)]
fn link(target: &Path, at: &Path) {
    std::fs::create_dir_all(at.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, at).unwrap();
}

// ---- 1. No silent default ruleset.

#[cfg(unix)]
#[test]
fn the_round_folder_names_the_ruleset() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    link(
        &corpus.join("v5.0/tinycorp"),
        &d.path().join("training_results_v5.0/tinycorp"),
    );
    let out = mlaudit(
        d.path(),
        &[
            "check",
            "--format",
            "json",
            "training_results_v5.0/tinycorp",
        ],
    );
    assert!(
        out.stderr.contains(
            "using ruleset training 5.0.0 (round folder 'training_results_v5.0' in the path)"
        ),
        "{}",
        out.stderr
    );
    let j = out.json();
    assert_eq!(j["ruleset"], "5.0.0");
    assert_eq!(j["ruleset_source"], "inferred");
    assert!(j["summary"]["logs"].as_u64().unwrap() > 0);
    let flagged = mlaudit(
        d.path(),
        &[
            "check",
            "--ruleset",
            "5.0.0",
            "--format",
            "json",
            "training_results_v5.0/tinycorp",
        ],
    );
    assert_eq!(out.code, flagged.code);
    assert_eq!(flagged.json()["ruleset_source"], "flag");
    assert_eq!(j["verdict"], flagged.json()["verdict"]);
}

#[cfg(unix)]
#[test]
fn the_benchmark_roster_names_the_ruleset_when_only_one_fits() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    // bert and retinanet are together only in 5.0.0.
    link(
        &corpus.join("v5.0/tinycorp"),
        &d.path().join("pkgs/tinycorp"),
    );
    let out = mlaudit(d.path(), &["check", "--format", "json", "pkgs/tinycorp"]);
    assert!(
        out.stderr
            .contains("using ruleset training 5.0.0 (benchmarks bert, retinanet"),
        "{}",
        out.stderr
    );
    assert_eq!(out.json()["ruleset"], "5.0.0");
}

#[cfg(unix)]
#[test]
fn an_undecided_round_stops_with_exit_2_naming_the_candidates() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    // krai v5.0 has only bert: 4.1.0 and 5.0.0 both have it.
    link(&corpus.join("v5.0/krai"), &d.path().join("pkgs/krai"));
    for cmd in ["check", "rcp", "score"] {
        let out = mlaudit(d.path(), &[cmd, "pkgs/krai"]);
        assert_eq!(out.code, Some(2), "{cmd}: {}", out.stderr);
        assert!(
            out.stderr.contains("cannot tell the round")
                && out.stderr.contains("4.1.0, 5.0.0")
                && out.stderr.contains("--ruleset"),
            "{cmd}: {}",
            out.stderr
        );
        assert!(out.stdout.is_empty(), "{}", out.stdout);
    }
    // A round folder that disagrees with the benchmarks is no answer either.
    link(&corpus.join("v5.0/krai"), &d.path().join("v6.1/krai"));
    let out = mlaudit(d.path(), &["check", "v6.1/krai"]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("round folder 'v6.1'"), "{}", out.stderr);
}

#[test]
fn log_without_a_ruleset_infers_or_stops() {
    let d = tempfile::tempdir().unwrap();
    let log = fixture("run/RUN002/pass.txt");
    // llama2_70b_lora is in every round: no way to tell.
    let out = mlaudit(d.path(), &["log", log.to_str().unwrap()]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("cannot tell the round"),
        "{}",
        out.stderr
    );
    // The config decides, and the report says so.
    std::fs::write(d.path().join(".mlaudit.toml"), "ruleset = \"6.1.0\"\n").unwrap();
    let out = mlaudit(
        d.path(),
        &["log", "--format", "json", log.to_str().unwrap()],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let j = out.json();
    assert_eq!(j["ruleset_source"], "config");
    assert!(
        j["ruleset_reason"]
            .as_str()
            .unwrap()
            .contains(".mlaudit.toml"),
        "{j}"
    );
}

#[test]
fn hook_install_refuses_a_missing_or_unknown_ruleset() {
    let d = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .current_dir(d.path())
            .args(args)
            .output()
            .expect("git")
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    let out = mlaudit(d.path(), &["hook", "install", "--ruleset", "9.9.9"]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("unknown ruleset 'training 9.9.9'") && out.stderr.contains("5.0.0"),
        "{}",
        out.stderr
    );
    assert!(!d.path().join(".git/hooks/pre-commit").exists());
    let out = mlaudit(d.path(), &["hook", "install"]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("hook install needs the ruleset"),
        "{}",
        out.stderr
    );
    assert!(!d.path().join(".git/hooks/pre-commit").exists());
    let out = mlaudit(d.path(), &["hook", "install", "--ruleset", "5.0.0"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
}

// ---- 2. Nothing checked is never a pass.

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn nothing(dir: &Path, target: &str, why: &str) {
    let out = mlaudit(dir, &["check", "--ruleset", "5.0.0", target]);
    assert_eq!(out.code, Some(2), "{target}: {}{}", out.stdout, out.stderr);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{target}: one line expected: {}",
        out.stderr
    );
    assert!(
        lines[0].contains("nothing to check") && lines[0].contains(why),
        "{target}: {}",
        out.stderr
    );
    assert!(out.stdout.is_empty(), "{target}: {}", out.stdout);
}

#[test]
fn nothing_to_check_is_exit_2_with_one_line() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    let log = std::fs::read_to_string(fixture("run/RUN002/pass.txt")).unwrap();
    // Every benchmark folder misnamed.
    write(r, "mis/systems/sys.json", "{}");
    write(r, "mis/results/sys/BERT-large/result_0.txt", &log);
    write(r, "mis/results/sys/RetinaNet/result_0.txt", &log);
    nothing(
        r,
        "mis",
        "no folder of mis is a benchmark of training 5.0.0",
    );
    nothing(r, "mis", "BERT-large (did you mean 'bert'?)");
    // Oracle (package_checker 4.1.68 on copies of v5.0 tinycorp so broken):
    // misnamed folders and an empty results/ SUCCESS, a results file
    // NotADirectoryError, no results/ FileNotFoundError.
    nothing(
        r,
        "mis",
        "the official package_checker skips them and reports SUCCESS",
    );
    // An empty results/, a results/ that is a file, no results/ at all.
    std::fs::create_dir_all(r.join("empty/results")).unwrap();
    nothing(r, "empty", "empty/results holds no system folder");
    write(r, "filed/results", "x");
    nothing(r, "filed", "filed/results is not a folder");
    nothing(r, "filed", "crashes: NotADirectoryError");
    write(r, "sysonly/systems/sys.json", "{}");
    nothing(r, "sysonly", "sysonly has no results/ folder");
    nothing(r, "sysonly", "crashes: FileNotFoundError");
    // A results/<system> folder without benchmark folders, and a benchmark
    // folder without a log.
    std::fs::create_dir_all(r.join("bare/results/sys")).unwrap();
    nothing(r, "bare/results/sys", "no benchmark folder");
    std::fs::create_dir_all(r.join("nolog/results/sys/bert")).unwrap();
    write(r, "nolog/systems/sys.json", "{}");
    nothing(r, "nolog/results/sys/bert", "holds no result_*.txt log");
    // Oracle: "Incorrect number of files ... found 0, expected 10" (then a
    // KeyError None crash in the RCP check).
    nothing(
        r,
        "nolog",
        "hold no result_*.txt log (the official package_checker fails them",
    );
    // A folder that is not a package: one line, not a note per entry.
    for i in 0..20 {
        write(r, &format!("junk/file_{i}"), "x");
    }
    nothing(r, "junk", "junk is neither a package");
    // A benchmark folder of another round, given on its own.
    write(r, "other/results/sys/resnet/result_0.txt", &log);
    nothing(
        r,
        "other/results/sys/resnet",
        "no folder of other/results/sys/resnet is a benchmark of training 5.0.0",
    );
}

/// A link under `benchmarks/` into `results/` took a results folder out
/// of the check: discovery walked `benchmarks/` first, read the folder's
/// logs there as configs, and then skipped the results folder as walked
/// already (a PKG011 warning, the package passing on the logs left).
/// Results are walked first now: every log is checked, and the link is
/// the path reported as walked already.
#[cfg(unix)]
#[test]
fn a_link_under_benchmarks_hides_no_results_folder() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/Example");
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    copy_tree(&example, &r.join("plain"));
    copy_tree(&example, &r.join("linked"));
    let at = r.join("linked/benchmarks/retinanet/implementations/x/results");
    link(Path::new("../../../../results/example_system"), &at);
    assert!(at.join("retinanet").is_dir(), "the link resolves");
    let logs = |pkg: &str| -> (Value, Vec<String>) {
        let j = mlaudit(r, &["check", "--ruleset", "5.0.0", "--format", "json", pkg]).json();
        let mut paths: Vec<String> = j["logs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["path"].as_str().unwrap().replacen(pkg, "PKG", 1))
            .collect();
        paths.sort();
        (j, paths)
    };
    let (plain, plain_logs) = logs("plain");
    let (linked, linked_logs) = logs("linked");
    assert!(!plain_logs.is_empty());
    assert_eq!(linked_logs, plain_logs, "every log is checked");
    assert_eq!(linked["verdict"], plain["verdict"], "{linked}");
    let walked: Vec<&str> = linked["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "PKG011")
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        walked,
        ["linked/benchmarks/retinanet/implementations/x/results"],
        "{linked}"
    );
    let said = linked["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "PKG011")
        .and_then(|f| f["message"].as_str())
        .unwrap_or_default();
    assert!(
        said.contains("a folder walked already through another path; not followed"),
        "{said}"
    );
}

#[test]
fn a_folder_not_of_the_round_fails_mlaudits_verdict_only() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    let log = std::fs::read_to_string(fixture("run/RUN002/pass.txt")).unwrap();
    write(
        r,
        "pkg/systems/sys.json",
        r#"{"division": "open", "submitter": "x"}"#,
    );
    write(r, "pkg/results/sys/llama2_70b_lora/result_0.txt", &log);
    write(r, "pkg/results/sys/llama2-70b-lora/result_0.txt", &log);
    let out = mlaudit(
        r,
        &["check", "--ruleset", "6.1.0", "--format", "json", "pkg"],
    );
    let j = out.json();
    assert_eq!(j["verdict"], "fail", "{j}");
    let pkg004: Vec<&Value> = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "PKG004")
        .collect();
    assert_eq!(pkg004.len(), 1, "{j}");
    assert_eq!(pkg004[0]["severity"], "error");
    assert!(
        pkg004[0]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean 'llama2_70b_lora'?"),
        "{}",
        pkg004[0]
    );
    assert!(
        j["verdict_difference"]
            .as_str()
            .is_none_or(|s| s.contains("PKG004")),
        "{j}"
    );
    // The text summary says why the verdicts differ, when they do.
    let text = mlaudit(r, &["check", "--ruleset", "6.1.0", "pkg"]);
    if j["official_verdict"] == "pass" {
        assert!(
            text.stdout
                .contains("note: the official tools would say PASS: mlaudit fails on PKG004"),
            "{}",
            text.stdout
        );
    }
}

#[cfg(unix)]
#[test]
fn check_takes_a_system_folder_and_several_packages() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let one = |args: &[&str]| {
        let out = mlaudit(&corpus.join("v5.0"), args);
        assert!(
            matches!(out.code, Some(0) | Some(1)),
            "{args:?}: {}",
            out.stderr
        );
        out.json()["summary"]["logs"].as_u64().unwrap()
    };
    let sys = one(&[
        "check",
        "--ruleset",
        "5.0.0",
        "--format",
        "json",
        "tinycorp/results/tinybox_red",
    ]);
    assert!(sys > 0);
    let a = one(&[
        "check",
        "--ruleset",
        "5.0.0",
        "--format",
        "json",
        "tinycorp",
    ]);
    let b = one(&["check", "--ruleset", "5.0.0", "--format", "json", "krai"]);
    let both = one(&[
        "check",
        "--ruleset",
        "5.0.0",
        "--format",
        "json",
        "tinycorp",
        "krai",
    ]);
    assert_eq!(both, a + b);
    assert!(sys < a);
}

// ---- 4. Run checks beyond the official tools.

#[test]
fn run_fixtures_fail_mlaudit_and_keep_the_official_verdict() {
    let root = fixture("run");
    let d = tempfile::tempdir().unwrap();
    let mut seen = 0;
    for code in std::fs::read_dir(&root).unwrap() {
        let code = code.unwrap().path();
        let name = code.file_name().unwrap().to_string_lossy().into_owned();
        for f in std::fs::read_dir(&code).unwrap() {
            let f = f.unwrap().path();
            let text = std::fs::read_to_string(&f).unwrap();
            let header = |tag: &str| {
                text.lines()
                    .find_map(|l| l.strip_prefix(tag))
                    .unwrap_or_else(|| panic!("{}: no {tag}", f.display()))
                    .trim()
                    .to_string()
            };
            let ruleset = header("# ruleset ");
            let official = header("# official: ");
            let out = mlaudit(
                d.path(),
                &[
                    "check",
                    "--ruleset",
                    &ruleset,
                    "--format",
                    "json",
                    f.to_str().unwrap(),
                ],
            );
            let j = out.json();
            let shown = format!("{name}/{}", f.file_name().unwrap().to_string_lossy());
            let want_official = if official.starts_with("PASS") {
                "pass"
            } else {
                "fail"
            };
            assert_eq!(j["official_verdict"], want_official, "{shown}: {j}");
            let codes: Vec<&str> = j["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["severity"] == "error")
                .map(|f| f["code"].as_str().unwrap())
                .collect();
            let fails = f.file_name().unwrap().to_string_lossy().starts_with("fail");
            if fails {
                assert_eq!(out.code, Some(1), "{shown}: {}", out.stdout);
                assert_eq!(j["verdict"], "fail", "{shown}");
                assert!(codes.contains(&name.as_str()), "{shown}: {codes:?}");
                assert!(
                    codes.iter().all(|c| c.starts_with("RUN")),
                    "{shown}: {codes:?}"
                );
                assert!(
                    j["verdict_difference"]
                        .as_str()
                        .is_some_and(|s| s.contains(&name)),
                    "{shown}: {j}"
                );
            } else {
                assert_eq!(out.code, Some(0), "{shown}: {codes:?}");
                assert_eq!(j["verdict"], "pass", "{shown}");
            }
            seen += 1;
        }
    }
    assert!(seen >= 6, "{seen} run fixtures");
}

#[test]
fn a_run_that_did_not_converge_is_a_warning_in_a_folder() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    let log = std::fs::read_to_string(fixture("run/RUN002/fail.txt")).unwrap();
    write(
        r,
        "pkg/systems/sys.json",
        r#"{"division": "open", "submitter": "x"}"#,
    );
    write(r, "pkg/results/sys/llama2_70b_lora/result_0.txt", &log);
    let out = mlaudit(
        r,
        &["check", "--ruleset", "6.1.0", "--format", "json", "pkg"],
    );
    let j = out.json();
    let run002: Vec<&Value> = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "RUN002")
        .collect();
    assert_eq!(run002.len(), 1, "{j}");
    assert_eq!(run002[0]["severity"], "warning");
    assert!(run002[0]["message"]
        .as_str()
        .unwrap()
        .contains("did not converge"));
}

// ---- 5. `official_verdict` predicts the official quirks.

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

/// tinycorp v5.0 with the seeds of tinybox_red/bert removed and a
/// `seed-checker-bypass` params line. Oracle (package_checker 4.1.68 on a
/// copy): with a trailing newline "Seed checker failed ... logs no seed"
/// (FAIL); without one "PACKAGE CHECKER FOUND NO ERRORS, SUCCESS".
#[test]
fn a_params_line_with_a_newline_is_honoured_but_the_official_verdict_fails() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let pkg = d.path().join("tinycorp");
    copy_tree(&corpus.join("v5.0/tinycorp"), &pkg);
    let bm = pkg.join("results/tinybox_red/bert");
    for e in std::fs::read_dir(&bm).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        let kept: String = text
            .split_inclusive('\n')
            .filter(|l| !l.contains("\"key\": \"seed\""))
            .collect();
        std::fs::write(&p, kept).unwrap();
    }
    let params = bm.join("package_checker_params");
    let run = || {
        let out = mlaudit(
            d.path(),
            &[
                "check",
                "--ruleset",
                "5.0.0",
                "--format",
                "json",
                "tinycorp",
            ],
        );
        (out.code, out.json())
    };
    // Without the bypass both fail (SEED001).
    let (code, j) = run();
    assert_eq!(
        (code, &j["verdict"], &j["official_verdict"]),
        (Some(1), &"fail".into(), &"fail".into())
    );
    std::fs::write(&params, "seed-checker-bypass\n").unwrap();
    let (code, j) = run();
    assert_eq!(code, Some(0), "{j}");
    assert_eq!(j["verdict"], "pass");
    assert_eq!(j["official_verdict"], "fail");
    let why = j["verdict_difference"].as_str().unwrap();
    assert!(
        why.contains("ignores the seed-checker-bypass line (it ends with a newline)")
            && why.contains("SEED001"),
        "{why}"
    );
    assert!(j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["code"] == "PKG030"));
    let text = mlaudit(d.path(), &["check", "--ruleset", "5.0.0", "tinycorp"]);
    assert!(
        text.stdout.contains("note: the official tools would say FAIL: tinycorp/results/tinybox_red/bert: the official package_checker ignores"),
        "{}",
        text.stdout
    );
    let html = d.path().join("r.html");
    mlaudit(
        d.path(),
        &[
            "check",
            "--ruleset",
            "5.0.0",
            "tinycorp",
            "--html",
            html.to_str().unwrap(),
        ],
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("it ends with a newline"),
        "HTML does not say why"
    );
    std::fs::write(&params, "seed-checker-bypass").unwrap();
    let (code, j) = run();
    assert_eq!(
        (code, &j["verdict"], &j["official_verdict"]),
        (Some(0), &"pass".into(), &"pass".into())
    );
    assert!(j["verdict_difference"].is_null());
}

/// The written rule the official 5.x/6.x LoRA pack erases: closed_common's
/// `gradient_accumulation_steps > 0` (policy pack, POL004). Oracle: the
/// official compliance checker 4.1.68 says SUCCESS on both fixtures.
#[test]
fn lora_gradient_accumulation_must_be_positive() {
    let d = tempfile::tempdir().unwrap();
    let run = |name: &str| {
        let f = fixture(&format!("trust/{name}.txt"));
        let out = mlaudit(
            d.path(),
            &[
                "check",
                "--ruleset",
                "6.1.0",
                "--format",
                "json",
                f.to_str().unwrap(),
            ],
        );
        (out.code, out.json())
    };
    let (code, j) = run("lora_ga_one");
    assert_eq!(code, Some(0), "{j}");
    let (code, j) = run("lora_ga_zero");
    assert_eq!(code, Some(1), "{j}");
    assert_eq!(j["official_verdict"], "pass");
    let errors: Vec<&Value> = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .collect();
    assert_eq!(errors.len(), 1, "{j}");
    assert_eq!(errors[0]["code"], "POL004");
    assert!(errors[0]["message"]
        .as_str()
        .unwrap()
        .contains("gradient_accumulation_steps = 0"));
}

/// The official RCP checker's batch-size lookup matches any key that
/// contains `global_batch_size`. Oracle: compliance SUCCESS on the fixture;
/// on a copy of v5.0 tinycorp with `global_batch_size_per_device` logged
/// after `global_batch_size` in tinybox_red/bert, package_checker and
/// mlaudit both pass the RCP check on the smaller batch size.
#[test]
fn a_batch_size_read_from_another_key_is_reported() {
    let d = tempfile::tempdir().unwrap();
    let f = fixture("trust/gbs_other_key.txt");
    let out = mlaudit(
        d.path(),
        &[
            "check",
            "--ruleset",
            "6.1.0",
            "--format",
            "json",
            f.to_str().unwrap(),
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stdout);
    let j = out.json();
    assert_eq!(j["official_verdict"], "pass");
    let run004: Vec<&Value> = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "RUN004")
        .collect();
    assert_eq!(run004.len(), 1, "{j}");
    assert!(run004[0]["message"]
        .as_str()
        .unwrap()
        .contains("'global_batch_size_per_device' = 4"));
}

/// A package on which the official tool crashes is an official FAIL, and
/// the finding says which crash. Oracle: package_checker 4.1.68 on a copy
/// of v5.0 tinycorp without systems/tinybox_8xMI300X.json exits 1 with
/// "FileNotFoundError: ... tinycorp/systems/tinybox_8xMI300X.json".
#[test]
fn an_official_crash_is_an_official_fail_naming_the_crash() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let pkg = d.path().join("tinycorp");
    copy_tree(&corpus.join("v5.0/tinycorp"), &pkg);
    std::fs::remove_file(pkg.join("systems/tinybox_8xMI300X.json")).unwrap();
    let out = mlaudit(
        d.path(),
        &[
            "check",
            "--ruleset",
            "5.0.0",
            "--format",
            "json",
            "tinycorp",
        ],
    );
    assert_eq!(out.code, Some(1));
    let j = out.json();
    assert_eq!(j["official_verdict"], "fail");
    assert!(j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["code"] == "PKG009"
            && f["message"]
                .as_str()
                .unwrap()
                .contains("the official package_checker crashes here: FileNotFoundError")));
}

/// A change that touches no package needs no ruleset (a README commit in a
/// repository without `.mlaudit.toml`); one that touches a package whose
/// round cannot be told stops with exit 2.
#[test]
fn a_change_outside_packages_needs_no_ruleset() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    let ok = Command::new("git")
        .current_dir(r)
        .args(["init", "-q"])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    write(r, "README.md", "x\n");
    let out = mlaudit(r, &["check", "--changed-files", "README.md"]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("nothing to check"), "{}", out.stderr);
    let log = std::fs::read_to_string(fixture("run/RUN002/pass.txt")).unwrap();
    write(r, "Org/systems/sys.json", "{}");
    write(r, "Org/results/sys/llama31_8b/result_0.txt", &log);
    let out = mlaudit(
        r,
        &[
            "check",
            "--changed-files",
            "Org/results/sys/llama31_8b/result_0.txt",
        ],
    );
    assert_eq!(out.code, Some(2), "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("cannot tell the round"),
        "{}",
        out.stderr
    );
}
