//! The command-line habits of ruff and ripgrep (issue 19, item 9), run on
//! the binary: a closed pipe ends the process quietly, `-q`, shell
//! completions, the man page, `--version`, `rules list --format json`,
//! `repeat --help`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const FORMATS: &[&str] = &["text", "json", "sarif", "junit", "github"];

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mlaudit"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run mlaudit")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Every log of the compliance fixtures: enough output to overflow any
/// pipe or buffer.
fn fixture_logs() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "txt" || x == "log") {
                out.push(p);
            }
        }
    }
    let mut logs = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/log"),
        &mut logs,
    );
    logs.sort();
    logs
}

/// Runs mlaudit with standard output a pipe whose read end is closed
/// before the process starts (so its first write fails, however quickly
/// it writes); returns the exit code and standard error.
fn with_closed_pipe(args: &[&std::ffi::OsStr]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let out = bin()
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("run mlaudit");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn closed_pipe_ends_quietly_in_every_format() {
    let logs = fixture_logs();
    assert!(logs.len() > 20, "{} fixture logs", logs.len());
    for format in FORMATS {
        let small = [
            "check",
            "--ruleset",
            "5.0.0",
            "--format",
            format,
            "examples/Example",
        ];
        let small: Vec<&std::ffi::OsStr> = small.iter().map(|s| s.as_ref()).collect();
        let head = ["log", "--ruleset", "5.0.0", "--format", format];
        let mut big: Vec<&std::ffi::OsStr> = head.iter().map(|s| s.as_ref()).collect();
        big.extend(logs.iter().map(|p| p.as_os_str()));
        for args in [&small, &big] {
            let (code, err) = with_closed_pipe(args);
            assert_eq!(err, "", "{format}: {args:?}");
            assert!(matches!(code, Some(0 | 1)), "{format}: exit {code:?}");
        }
    }
    let (code, err) = with_closed_pipe(&["rules".as_ref(), "list".as_ref()]);
    assert_eq!((code, err.as_str()), (Some(0), ""));
}

#[test]
fn quiet_prints_nothing_for_a_passing_run() {
    let o = run(&["check", "-q", "--ruleset", "5.0.0", "examples/Example"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "");
    assert_eq!(String::from_utf8_lossy(&o.stderr), "");
    // The loud run of the same package says more.
    let loud = run(&["check", "--ruleset", "5.0.0", "examples/Example"]);
    assert_eq!(loud.status.code(), Some(0));
    assert!(stdout(&loud).contains("PASS"));
}

#[test]
fn quiet_prints_only_the_failing_findings() {
    // --fail-on warning: the example's warning and error fail it.
    let o = run(&[
        "check",
        "--quiet",
        "--fail-on",
        "warning",
        "--ruleset",
        "5.0.0",
        "examples/Example",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].contains("warning[PKG006]"), "{text}");
    assert!(
        lines[1].contains("result_1.txt:16: error[BMK004]"),
        "{text}"
    );
    assert!(!text.contains("PASS") && !text.contains("FAIL"), "{text}");

    let o = run(&[
        "log",
        "-q",
        "--ruleset",
        "5.0.0",
        "tests/fixtures/log/BMK004/fail.txt",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    assert!(text.lines().all(|l| l.contains(": error[")), "{text}");
    assert!(!text.is_empty() && !text.contains("FAIL"), "{text}");
}

#[test]
fn quiet_leaves_other_formats_alone() {
    let q = run(&[
        "check",
        "-q",
        "--format",
        "json",
        "--ruleset",
        "5.0.0",
        "examples/Example",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&q.stdout).expect("json");
    assert_eq!(v["tool"], "mlaudit");
}

#[test]
fn completions_for_every_shell_name_check() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let o = run(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}");
        let script = stdout(&o);
        assert!(script.contains("check"), "{shell}: {script}");
        assert!(script.contains("mlaudit"), "{shell}");
    }
    assert_eq!(run(&["completions", "tcsh"]).status.code(), Some(2));
}

#[test]
fn man_page_is_roff_and_names_check() {
    let o = run(&["man"]);
    assert_eq!(o.status.code(), Some(0));
    let page = stdout(&o);
    assert!(page.contains(".TH mlaudit 1"), "{page}");
    assert!(page.contains("check"), "{page}");
}

/// The digest build.rs computes, computed again: SHA-256 over the sorted
/// `rules/` paths with each file's length and bytes.
fn rules_digest() -> String {
    use sha2::{Digest, Sha256};
    fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, PathBuf)>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, root, out);
            } else {
                let rel = p.strip_prefix(root).unwrap();
                let parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.push((parts.join("/"), p));
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    files.sort();
    let mut h = Sha256::new();
    for (name, path) in &files {
        let bytes = std::fs::read(path).unwrap();
        h.update(name.as_bytes());
        h.update([0]);
        h.update(bytes.len().to_string().as_bytes());
        h.update([0]);
        h.update(&bytes);
    }
    h.finalize()[..6]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn version_names_the_commit_and_the_rules_digest() {
    let o = run(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
    let v = stdout(&o);
    let digest = rules_digest();
    assert_eq!(digest.len(), 12);
    assert!(
        v.starts_with(&format!("mlaudit {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{v}"
    );
    assert!(v.contains(&format!(", built-in rules {digest})")), "{v}");
    let commit = v
        .split("(commit ")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .unwrap();
    let head = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match head {
        Some(head) => assert_eq!(commit, head, "{v}"),
        None => assert_eq!(commit, "unknown", "{v}"),
    }
}

#[test]
fn rules_list_json_has_every_code() {
    let text = run(&["rules", "list"]);
    let o = run(&["rules", "list", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let list = v.as_array().expect("an array");
    assert_eq!(list.len(), stdout(&text).lines().count());
    let bmk004 = list.iter().find(|c| c["code"] == "BMK004").expect("BMK004");
    assert!(bmk004["title"].as_str().is_some_and(|t| !t.is_empty()));
    assert!(matches!(
        bmk004["severity"].as_str(),
        Some("error" | "warning" | "note")
    ));
    assert!(bmk004["extra"].is_boolean());
    assert!(bmk004.get("rules").is_none());
}

#[test]
fn rules_list_json_of_a_ruleset_names_the_rules() {
    let o = run(&["rules", "list", "--ruleset", "5.0.0", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let list = v.as_array().expect("an array");
    assert!(!list.is_empty());
    let text = stdout(&run(&["rules", "list", "--ruleset", "5.0.0"]));
    let rules: usize = list
        .iter()
        .map(|c| c["rules"].as_array().expect("rules").len())
        .sum();
    // One text line per rule.
    assert_eq!(rules, text.lines().count());
    for c in list {
        for r in c["rules"].as_array().unwrap() {
            let (pack, key) = (r["pack"].as_str().unwrap(), r["key"].as_str().unwrap());
            let code = c["code"].as_str().unwrap();
            assert!(
                text.lines()
                    .any(|l| l.starts_with(code) && l.contains(&format!("{pack}#{key}"))),
                "{code} {pack}#{key}"
            );
        }
    }
}

#[test]
fn repeat_help_lists_only_the_formats_it_writes() {
    let o = run(&["repeat", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    let help = stdout(&o);
    assert!(help.contains("[possible values: text, json]"), "{help}");
    for refused in ["sarif", "junit", "github"] {
        assert!(!help.contains(refused), "{refused}: {help}");
    }
    // Refused by clap now, as a usage error.
    let o = run(&["repeat", "--format", "sarif", "a.txt", "b.txt"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("invalid value 'sarif'"));
}

/// Runs `mlaudit ARGS` under `script`, which gives it a terminal as
/// standard error; returns what the terminal showed. `None` when `script`
/// (util-linux) is missing, which fails the test when `CI` is set.
fn on_a_terminal(args: &[String]) -> Option<String> {
    let cmd = std::iter::once(env!("CARGO_BIN_EXE_mlaudit").to_string())
        .chain(args.iter().cloned())
        .map(|a| shlex::try_quote(&a).expect("quotable").into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    match Command::new("script")
        .args(["-qec", &format!("{cmd} >/dev/null"), "/dev/null"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .output()
    {
        Ok(o) => Some(String::from_utf8_lossy(&o.stdout).into_owned()),
        Err(e) => {
            eprintln!("SKIPPED: no `script` to give mlaudit a terminal ({e})");
            assert!(
                std::env::var_os("CI").is_none(),
                "CI is set and `script` (util-linux) is missing"
            );
            None
        }
    }
}

#[test]
fn long_log_runs_draw_a_progress_bar_on_a_terminal_and_quiet_hides_it() {
    // 60 copies of the example's first log: more than the 40 a bar waits for.
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/Example/results/example_system/retinanet/result_0.txt");
    let mut args: Vec<String> = ["log", "--ruleset", "5.0.0"].map(String::from).to_vec();
    for i in 0..60 {
        let f = dir.path().join(format!("result_{i}.txt"));
        std::fs::copy(&src, &f).unwrap();
        args.push(f.to_string_lossy().into_owned());
    }
    let Some(shown) = on_a_terminal(&args) else {
        return;
    };
    assert!(shown.contains("checking logs"), "no bar: {shown:?}");
    assert!(
        shown.contains("/60"),
        "the bar does not count the logs: {shown:?}"
    );
    args.insert(1, "-q".into());
    let Some(quiet) = on_a_terminal(&args) else {
        return;
    };
    assert!(!quiet.contains("checking logs"), "-q drew a bar: {quiet:?}");
    // Short runs end before a bar would help.
    let Some(short) = on_a_terminal(
        &args[..5]
            .iter()
            .filter(|a| *a != "-q")
            .cloned()
            .collect::<Vec<_>>(),
    ) else {
        return;
    };
    assert!(
        !short.contains("checking logs"),
        "a bar for 1 log: {short:?}"
    );
}
