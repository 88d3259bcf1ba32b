//! The git integration end to end, in real repositories in temporary
//! folders: `mlaudit hook install|uninstall`, the pre-commit and pre-push
//! hooks, `check --staged` and `--changed-since`.
//!
//! Git is run with the user's and the system's configuration switched off,
//! so a global `core.hooksPath` or template cannot change the outcome.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_mlaudit");

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/Example")
}

fn git_cmd(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE");
    c
}

fn git(dir: &Path, args: &[&str]) -> Output {
    let out = git_cmd(dir).args(args).output().expect("git runs");
    out
}

fn git_ok(dir: &Path, args: &[&str]) -> String {
    let out = git(dir, args);
    assert!(
        out.status.success(),
        "git {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn mlaudit(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("mlaudit runs")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A fresh repository with a local identity.
fn repo() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    git_ok(d.path(), &["init", "-q"]);
    git_ok(d.path(), &["config", "user.name", "Test Submitter"]);
    git_ok(d.path(), &["config", "user.email", "submitter@example.org"]);
    git_ok(d.path(), &["config", "commit.gpgsign", "false"]);
    d
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

const FOLDER: &str = "Example/results/example_system/retinanet";

/// Logs a weight decay the closed division forbids in `result_<n>`.
fn break_run(repo: &Path, n: u32) {
    let p = repo.join(FOLDER).join(format!("result_{n}.txt"));
    let t = std::fs::read_to_string(&p).unwrap();
    let broken = t.replace(
        r#""key": "opt_weight_decay", "value": 0.0,"#,
        r#""key": "opt_weight_decay", "value": 0.0001,"#,
    );
    assert_ne!(t, broken, "the example logs opt_weight_decay 0.0");
    std::fs::write(&p, broken).unwrap();
}

#[test]
fn pre_commit_hook_accepts_a_compliant_package_refuses_two_broken_runs_and_no_verify_passes() {
    let d = repo();
    let r = d.path();
    let out = mlaudit(r, &["hook", "install", "--ruleset", "5.0.0"]);
    assert!(out.status.success(), "{}", text(&out));
    let hook = r.join(".git/hooks/pre-commit");
    let script = std::fs::read_to_string(&hook).unwrap();
    assert!(script.contains("# mlaudit-hook"), "{script}");
    assert!(
        script.contains(BIN),
        "the hook calls the binary that installed it"
    );

    // The example package: one non-compliant run, tolerated.
    copy_dir(&example(), &r.join("Example"));
    git_ok(r, &["add", "-A"]);
    let out = git(r, &["commit", "-q", "-m", "example package"]);
    assert!(out.status.success(), "accepted:\n{}", text(&out));

    // Two more runs of the folder break: three of five fail, over the
    // olympic tolerance: the folder fails (PKG005) and the commit is refused.
    break_run(r, 0);
    break_run(r, 2);
    git_ok(r, &["add", "-A"]);
    let out = git(r, &["commit", "-q", "-m", "two broken runs"]);
    let said = text(&out);
    assert!(!out.status.success(), "refused:\n{said}");
    for log in ["result_0.txt:16", "result_2.txt:16"] {
        assert!(
            said.contains(&format!("  {FOLDER}/{log}: error[BMK004]\n")),
            "names {log}:\n{said}"
        );
    }
    assert!(said.contains("PKG005"), "{said}");
    assert!(
        said.contains(&format!(
            "  details: mlaudit check --ruleset 5.0.0 {FOLDER}"
        )),
        "{said}"
    );
    assert!(said.contains("commit refused"), "{said}");
    assert!(said.contains("git commit --no-verify"), "{said}");
    // Nothing was committed.
    assert_eq!(git_ok(r, &["rev-list", "--count", "HEAD"]).trim(), "1");

    let out = git(r, &["commit", "-q", "--no-verify", "-m", "anyway"]);
    assert!(out.status.success(), "--no-verify passes:\n{}", text(&out));
    assert_eq!(git_ok(r, &["rev-list", "--count", "HEAD"]).trim(), "2");

    // A change outside any package checks nothing and passes.
    std::fs::write(r.join("NOTES.md"), "notes\n").unwrap();
    git_ok(r, &["add", "NOTES.md"]);
    let out = git(r, &["commit", "-q", "-m", "notes"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("nothing to check"), "{}", text(&out));

    let out = mlaudit(r, &["hook", "uninstall"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!hook.exists());
}

#[test]
fn staged_and_changed_since_check_only_the_touched_folders() {
    let d = repo();
    let r = d.path();
    copy_dir(&example(), &r.join("Example"));
    // A second package with the same folder, untouched by the change.
    copy_dir(&example(), &r.join("Other"));
    git_ok(r, &["add", "-A"]);
    git_ok(r, &["commit", "-q", "-m", "two packages"]);

    break_run(r, 0);
    break_run(r, 2);
    git_ok(r, &["add", "-A"]);
    for mode in [&["--staged"][..], &["--changed-since", "HEAD"][..]] {
        let mut args = vec!["check", "--ruleset", "5.0.0", "--format", "json"];
        args.extend_from_slice(mode);
        let out = mlaudit(r, &args);
        assert_eq!(out.status.code(), Some(1), "{mode:?}: {}", text(&out));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let folders: Vec<&str> = v["benchmarks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["path"].as_str().unwrap())
            .collect();
        assert_eq!(folders, [FOLDER], "{mode:?}");
        assert_eq!(v["verdict"], "fail");
        assert_eq!(v["summary"]["logs"], 5, "the folder is checked whole");
        assert!(v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["path"].as_str().unwrap().starts_with("Example/")));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("{FOLDER}/result_0.txt:16")), "{err}");
    }

    // From a subfolder, paths stay relative to where the command runs.
    let out = mlaudit(
        &r.join("Example"),
        &[
            "check",
            "--ruleset",
            "5.0.0",
            "--staged",
            "--format",
            "json",
        ],
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["benchmarks"][0]["path"],
        "results/example_system/retinanet"
    );

    // A system description touches every folder of its system.
    git_ok(r, &["commit", "-q", "-m", "broken", "--no-verify"]);
    let sys = r.join("Other/systems/example_system.json");
    let mut t = std::fs::read_to_string(&sys).unwrap();
    t.push('\n');
    std::fs::write(&sys, t).unwrap();
    let out = mlaudit(
        r,
        &[
            "check",
            "--ruleset",
            "5.0.0",
            "--changed-since",
            "HEAD",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["benchmarks"][0]["path"],
        "Other/results/example_system/retinanet"
    );

    // Outside a repository: the tool cannot do its job.
    let outside = tempfile::tempdir().unwrap();
    let out = mlaudit(outside.path(), &["check", "--staged"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[test]
fn hooks_folder_comes_from_git_and_foreign_hooks_are_kept() {
    let d = repo();
    let r = d.path();
    git_ok(r, &["config", "core.hooksPath", "shared-hooks"]);
    std::fs::create_dir_all(r.join("shared-hooks")).unwrap();
    let foreign = r.join("shared-hooks/pre-commit");
    std::fs::write(&foreign, "#!/bin/sh\nexit 0\n").unwrap();

    let out = mlaudit(r, &["hook", "install", "--ruleset", "5.0.0"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--force"), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(&foreign).unwrap(),
        "#!/bin/sh\nexit 0\n"
    );

    // uninstall leaves a hook it did not write alone.
    let out = mlaudit(r, &["hook", "uninstall"]);
    assert!(out.status.success());
    assert!(text(&out).contains("left alone"), "{}", text(&out));
    assert!(foreign.exists());

    let out = mlaudit(
        r,
        &[
            "hook",
            "install",
            "--force",
            "--hook",
            "pre-commit",
            "--ruleset",
            "5.0.0",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(std::fs::read_to_string(&foreign)
        .unwrap()
        .contains("# mlaudit-hook"));
    assert!(!r.join(".git/hooks/pre-commit").exists());

    // Reinstalling over its own hook needs no --force.
    let out = mlaudit(r, &["hook", "install", "--ruleset", "5.0.0"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("updated"), "{}", text(&out));

    let out = mlaudit(r, &["hook", "uninstall", "--hook", "pre-commit"]);
    assert!(out.status.success());
    assert!(!foreign.exists());

    // Outside a repository there is no hooks folder.
    let outside = tempfile::tempdir().unwrap();
    let out = mlaudit(outside.path(), &["hook", "install"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[test]
fn pre_push_hook_checks_what_the_push_changes() {
    let remote = tempfile::tempdir().unwrap();
    git_ok(remote.path(), &["init", "-q", "--bare"]);
    let d = repo();
    let r = d.path();
    let url = remote.path().to_string_lossy().into_owned();
    git_ok(r, &["remote", "add", "origin", &url]);
    let out = mlaudit(
        r,
        &[
            "hook",
            "install",
            "--hook",
            "pre-push",
            "--ruleset",
            "5.0.0",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(r.join(".git/hooks/pre-push").exists());

    copy_dir(&example(), &r.join("Example"));
    git_ok(r, &["add", "-A"]);
    git_ok(r, &["commit", "-q", "-m", "example package"]);
    // A new branch on the remote: compared with the empty tree.
    let out = git(r, &["push", "-q", "origin", "HEAD:refs/heads/main"]);
    assert!(out.status.success(), "accepted:\n{}", text(&out));

    break_run(r, 0);
    break_run(r, 2);
    git_ok(r, &["commit", "-q", "-a", "-m", "broken", "--no-verify"]);
    let out = git(r, &["push", "-q", "origin", "HEAD:refs/heads/main"]);
    let said = text(&out);
    assert!(!out.status.success(), "refused:\n{said}");
    assert!(said.contains("result_2.txt:16"), "{said}");
    assert!(said.contains("push refused"), "{said}");

    let out = git(
        r,
        &[
            "push",
            "-q",
            "--no-verify",
            "origin",
            "HEAD:refs/heads/main",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn project_config_supplies_ruleset_and_format_and_flags_override_it() {
    let d = repo();
    let r = d.path();
    copy_dir(&example(), &r.join("Example"));
    std::fs::write(
        r.join(".mlaudit.toml"),
        "ruleset = \"5.0.0\"\nformat = \"json\"\n",
    )
    .unwrap();
    // Read from the repository top, also when run in a subfolder.
    for (dir, path) in [
        (r.to_path_buf(), FOLDER),
        (r.join("Example/results"), "example_system/retinanet"),
    ] {
        let out = mlaudit(&dir, &["check", path]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let v: Value = serde_json::from_slice(&out.stdout).expect("json from the config");
        assert_eq!(v["ruleset"], "5.0.0");
    }
    let out = mlaudit(
        &r.join("Example"),
        &["check", "--ruleset", "5.1.0", "--format", "sarif", "."],
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["version"], "2.1.0");
    assert_eq!(v["runs"][0]["properties"]["ruleset"], "5.1.0");

    // The hook installed without --ruleset reads the config at each run.
    let out = mlaudit(r, &["hook", "install"]);
    assert!(text(&out).contains("read from"), "{}", text(&out));
    let script = std::fs::read_to_string(r.join(".git/hooks/pre-commit")).unwrap();
    assert!(!script.contains("--ruleset"), "{script}");
    git_ok(r, &["add", "-A"]);
    let out = git(r, &["commit", "-q", "-m", "example"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("training 5.0.0 rules"),
        "{}",
        text(&out)
    );

    // A broken config is an error naming the file.
    std::fs::write(r.join(".mlaudit.toml"), "format = \"xml\"\n").unwrap();
    let out = mlaudit(r, &["check", "Example"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains(".mlaudit.toml: format 'xml'"),
        "{}",
        text(&out)
    );
}
