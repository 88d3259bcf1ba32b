//! The pre-commit framework runs mlaudit on what it hands the hook: on a
//! commit (the staged files), with `--all-files` and with
//! `--from-ref/--to-ref` (how CI and pre-commit.ci run hooks), a committed
//! broken package fails.
//!
//! The framework test needs `pre-commit` (pip): `$MLAUDIT_PRE_COMMIT`, else
//! `pre-commit` on PATH, else `/tmp/pc-venv/bin/pre-commit`. Without it the
//! test says it is skipped on the terminal, and fails when `CI` is set.
//! It runs the shipped hook's entry and `pass_filenames` through a
//! `repo: local`, `language: system` hook calling the built binary (a
//! `language: rust` hook would `cargo install` the repository).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_mlaudit");

fn manifest() -> serde_yaml::Value {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(".pre-commit-hooks.yaml"),
    )
    .unwrap();
    let v: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    v[0].clone()
}

#[test]
fn the_shipped_hook_checks_the_files_pre_commit_passes() {
    let hook = manifest();
    assert_eq!(hook["id"].as_str(), Some("mlaudit"));
    assert_eq!(
        hook["entry"].as_str(),
        Some("mlaudit check --changed-files")
    );
    assert_eq!(hook["pass_filenames"].as_bool(), Some(true));
    // always_run with no file would check nothing: the hook runs when a
    // file changes.
    assert_ne!(hook["always_run"].as_bool(), Some(true));
    assert_eq!(hook["language"].as_str(), Some("rust"));
}

fn pre_commit() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("MLAUDIT_PRE_COMMIT").map(PathBuf::from),
        Some(PathBuf::from("pre-commit")),
        Some(PathBuf::from("/tmp/pc-venv/bin/pre-commit")),
    ];
    for c in candidates.into_iter().flatten() {
        let ok = Command::new(&c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Some(c);
        }
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "pre-commit not found ($MLAUDIT_PRE_COMMIT, PATH, /tmp/pc-venv/bin/pre-commit) and CI is set"
    );
    common::say(
        "skipped: pre-commit not found (set MLAUDIT_PRE_COMMIT or `python3 -m venv /tmp/pc-venv && /tmp/pc-venv/bin/pip install pre-commit`)",
    );
    None
}

fn run(dir: &Path, cmd: &Path, args: &[&str], home: &Path) -> Output {
    Command::new(cmd)
        .current_dir(dir)
        .args(args)
        .env("PRE_COMMIT_HOME", home.join("cache"))
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .env_remove("PRE_COMMIT_FROM_REF")
        .env_remove("PRE_COMMIT_TO_REF")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", cmd.display()))
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn write(root: &Path, rel: &str, content: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

#[test]
fn pre_commit_all_files_from_ref_and_commit_fail_a_broken_package() {
    let Some(pc) = pre_commit() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    let git = Path::new("git");
    let ok = |o: Output| {
        assert!(o.status.success(), "{}", text(&o));
        o
    };
    ok(run(r, git, &["init", "-q", "-b", "main"], home.path()));
    // The shipped hook, with the built binary for `mlaudit`.
    let hook = manifest();
    let entry = hook["entry"].as_str().unwrap().replacen("mlaudit", BIN, 1);
    let config = format!(
        "repos:\n  - repo: local\n    hooks:\n      - id: mlaudit\n        name: mlaudit\n        entry: {entry}\n        language: system\n        pass_filenames: {}\n        require_serial: true\n        args: [--ruleset, \"6.1.0\"]\n",
        hook["pass_filenames"].as_bool().unwrap()
    );
    write(r, ".pre-commit-config.yaml", &config);
    write(r, "README.md", "submissions\n");
    ok(run(r, git, &["add", "-A"], home.path()));
    ok(run(r, git, &["commit", "-q", "-m", "start"], home.path()));

    // A broken package (one run where llama2_70b_lora needs 10), committed
    // without the hook.
    let log = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run/RUN002/pass.txt"),
    )
    .unwrap();
    write(
        r,
        "Org/systems/sys.json",
        r#"{"division": "open", "submitter": "Org"}"#,
    );
    write(r, "Org/results/sys/llama2_70b_lora/result_0.txt", &log);
    ok(run(r, git, &["add", "-A"], home.path()));
    ok(run(r, git, &["commit", "-q", "-m", "package"], home.path()));

    let all = run(r, &pc, &["run", "--all-files"], home.path());
    assert!(!all.status.success(), "--all-files passed:\n{}", text(&all));
    assert!(text(&all).contains("PKG001"), "{}", text(&all));

    let refs = run(
        r,
        &pc,
        &["run", "--from-ref", "HEAD~1", "--to-ref", "HEAD"],
        home.path(),
    );
    assert!(
        !refs.status.success(),
        "--from-ref passed:\n{}",
        text(&refs)
    );
    assert!(text(&refs).contains("PKG001"), "{}", text(&refs));

    // Only the README between the first two commits: nothing to check.
    let none = run(
        r,
        &pc,
        &["run", "--from-ref", "HEAD~1", "--to-ref", "HEAD~1"],
        home.path(),
    );
    assert!(none.status.success(), "{}", text(&none));

    // On a commit: the hook installed by pre-commit refuses a change to
    // the package and lets a README change through.
    ok(run(r, &pc, &["install"], home.path()));
    write(
        r,
        "Org/results/sys/llama2_70b_lora/result_0.txt",
        &format!("{log}\n"),
    );
    ok(run(r, git, &["add", "-A"], home.path()));
    let commit = run(r, git, &["commit", "-q", "-m", "touch a log"], home.path());
    assert!(
        !commit.status.success(),
        "commit passed:\n{}",
        text(&commit)
    );
    assert!(text(&commit).contains("PKG001"), "{}", text(&commit));
    ok(run(r, git, &["reset", "-q", "--hard"], home.path()));
    write(r, "README.md", "submissions, v2\n");
    ok(run(r, git, &["add", "-A"], home.path()));
    let readme = run(r, git, &["commit", "-q", "-m", "readme"], home.path());
    assert!(readme.status.success(), "{}", text(&readme));
}
