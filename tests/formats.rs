//! The CI output formats end to end: SARIF (the structure GitHub code
//! scanning needs), JUnit (parsed back), GitHub annotations (escaping),
//! `-o FILE`, `--fail-on` and `--exit-zero`, on `check` and `log`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_mlaudit");
const FOLDER: &str = "Example/results/example_system/retinanet";

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/Example")
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

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_DIR")
        .output()
        .expect("mlaudit runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The example package in `<tmp>/repo/sub/Example`, `<tmp>/repo` a git
/// repository; result_1 logs a weight decay whose value carries markup,
/// a `%`, a line break and a control character.
fn hostile_repo() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    copy_dir(&example(), &repo.join("sub/Example"));
    let st = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&repo)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .expect("git runs");
    assert!(st.success());
    let log = repo.join("sub").join(FOLDER).join("result_1.txt");
    let t = std::fs::read_to_string(&log).unwrap();
    let hostile = t.replace(
        r#""key": "opt_weight_decay", "value": 0.0001,"#,
        r#""key": "opt_weight_decay", "value": "</failure>&'50%\n:,\u0001","#,
    );
    assert_ne!(t, hostile);
    std::fs::write(&log, hostile).unwrap();
    d
}

#[test]
fn sarif_has_what_code_scanning_needs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let out = run(
        &root,
        &[
            "check",
            "--ruleset",
            "5.0.0",
            "--format",
            "sarif",
            "Example",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["version"], "2.1.0");
    assert!(v["$schema"].as_str().unwrap().contains("sarif-2.1.0"));
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    let driver = &runs[0]["tool"]["driver"];
    assert_eq!(driver["name"], "mlaudit");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    let rules = driver["rules"].as_array().unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["BMK004", "PKG006"]);
    assert!(driver["informationUri"]
        .as_str()
        .unwrap()
        .starts_with("https://"));
    for r in rules {
        assert!(!r["shortDescription"]["text"].as_str().unwrap().is_empty());
        assert!(!r["help"]["text"].as_str().unwrap().is_empty());
        assert!(r["helpUri"].as_str().unwrap().ends_with(".yaml"), "{r}");
    }
    let results = runs[0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    for r in results {
        let id = r["ruleId"].as_str().unwrap();
        let idx = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[idx]["id"], id);
        assert!(["error", "warning", "note"].contains(&r["level"].as_str().unwrap()));
        assert!(!r["message"]["text"].as_str().unwrap().is_empty());
        let loc = &r["locations"][0]["physicalLocation"];
        let uri = loc["artifactLocation"]["uri"].as_str().unwrap();
        assert!(!uri.starts_with('/') && !uri.contains('\\') && !uri.starts_with(".."));
        assert_eq!(loc["artifactLocation"]["uriBaseId"], "%SRCROOT%");
        // Every result is on a line, and identified across runs.
        assert!(loc["region"]["startLine"].as_u64().unwrap() >= 1, "{r}");
        assert_eq!(
            r["partialFingerprints"]["mlauditFinding/v1"]
                .as_str()
                .unwrap()
                .len(),
            32
        );
    }
    // Relative to the repository top, not to where the command ran.
    let bmk = results.iter().find(|r| r["ruleId"] == "BMK004").unwrap();
    let loc = &bmk["locations"][0]["physicalLocation"];
    assert_eq!(
        loc["artifactLocation"]["uri"],
        format!("examples/{FOLDER}/result_1.txt")
    );
    assert_eq!(loc["region"]["startLine"], 16);
    assert_eq!(bmk["level"], "error");
    // A finding about a folder is placed on line 1 of its first log; the
    // message and `properties.path` name the folder.
    let pkg = results.iter().find(|r| r["ruleId"] == "PKG006").unwrap();
    let loc = &pkg["locations"][0]["physicalLocation"];
    assert_eq!(
        loc["artifactLocation"]["uri"],
        format!("examples/{FOLDER}/result_0.txt")
    );
    assert_eq!(loc["region"]["startLine"], 1);
    assert_eq!(pkg["properties"]["path"], format!("examples/{FOLDER}"));
    assert!(pkg["message"]["text"]
        .as_str()
        .unwrap()
        .starts_with(&format!("examples/{FOLDER}: 1 run does not comply")));
    assert_eq!(pkg["level"], "warning");
}

#[test]
fn sarif_uris_are_repository_relative_from_a_subfolder() {
    let d = hostile_repo();
    let sub = d.path().join("repo/sub");
    let out = run(
        &sub,
        &[
            "check",
            "--ruleset",
            "5.0.0",
            "--format",
            "sarif",
            "Example",
        ],
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let uris: Vec<&str> = v["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert!(
        uris.contains(&format!("sub/{FOLDER}/result_1.txt").as_str()),
        "{uris:?}"
    );
}

fn junit(xml: &str) -> roxmltree::Document<'_> {
    roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("not XML: {e}\n{xml}"))
}

#[test]
fn junit_parses_back_with_a_suite_per_folder_and_a_case_per_log() {
    let d = hostile_repo();
    let sub = d.path().join("repo/sub");
    let out = run(
        &sub,
        &[
            "check",
            "--ruleset",
            "5.0.0",
            "--format",
            "junit",
            "Example",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let xml = stdout(&out);
    let doc = junit(&xml);
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let suites: Vec<_> = root
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    let names: Vec<&str> = suites.iter().filter_map(|s| s.attribute("name")).collect();
    assert_eq!(names, [FOLDER, "package"]);
    let folder = suites[0];
    let cases: Vec<_> = folder
        .children()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    let case_names: Vec<&str> = cases.iter().filter_map(|c| c.attribute("name")).collect();
    assert_eq!(
        case_names,
        [
            "result_0.txt",
            "result_1.txt",
            "result_2.txt",
            "result_3.txt",
            "result_4.txt",
            "folder checks"
        ]
    );
    assert_eq!(folder.attribute("tests"), Some("6"));
    // result_1 is not compliant, but olympic scoring accepts it and the
    // package passes: no failed test case.
    assert_eq!(folder.attribute("failures"), Some("0"));
    assert_eq!(root.attribute("tests"), Some("7"));
    assert_eq!(root.attribute("failures"), Some("0"));
    // Class names hold no dots (Jenkins splits them); `time` is the run's
    // time to train, and a suite's the sum of its cases.
    for c in &cases {
        assert!(!c.attribute("classname").unwrap().contains('.'), "{c:?}");
        assert!(c.attribute("time").unwrap().parse::<f64>().is_ok(), "{c:?}");
    }
    assert!(cases[0].attribute("time").unwrap().parse::<f64>().unwrap() > 0.0);
    assert!(folder.attribute("time").unwrap().parse::<f64>().unwrap() > 0.0);
    // The accepted log says so, and carries its finding, markup and all,
    // read back intact.
    assert!(cases[1].children().all(|n| !n.has_tag_name("failure")));
    let body = cases[1]
        .children()
        .find(|n| n.has_tag_name("system-out"))
        .and_then(|n| n.text())
        .expect("result_1 says why it passes");
    assert!(
        body.starts_with("not compliant, accepted under olympic scoring"),
        "{body}"
    );
    assert!(
        body.contains(&format!("{FOLDER}/result_1.txt:16: error[BMK004]")),
        "{body}"
    );
    assert!(
        body.contains(r#"logged "</failure>&'50%\n:,\u{1}""#),
        "{body}"
    );
    // The folder passes; its warning is in system-out.
    let folder_case = cases[5];
    assert!(folder_case.children().all(|n| !n.has_tag_name("failure")));
    let out_text = folder_case
        .children()
        .find(|n| n.has_tag_name("system-out"))
        .and_then(|n| n.text())
        .unwrap();
    assert!(out_text.contains("PKG006"));
}

#[test]
fn junit_of_loose_logs_and_a_failing_folder() {
    let d = hostile_repo();
    let sub = d.path().join("repo/sub");
    let logs: Vec<String> = (0..5).map(|i| format!("{FOLDER}/result_{i}.txt")).collect();
    let mut args = vec!["log", "--ruleset", "5.0.0", "--format", "junit"];
    args.extend(logs.iter().map(String::as_str));
    let out = run(&sub, &args);
    assert_eq!(out.status.code(), Some(1));
    let xml = stdout(&out);
    let doc = junit(&xml);
    let suites: Vec<_> = doc
        .root_element()
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    assert_eq!(suites.len(), 1);
    assert_eq!(suites[0].attribute("name"), Some("logs"));
    assert_eq!(suites[0].attribute("tests"), Some("5"));
    assert_eq!(suites[0].attribute("failures"), Some("1"));
    // Outside a folder olympic scoring does not apply: result_1 fails, and
    // the failure message is its first error.
    let failure = doc
        .descendants()
        .find(|n| n.has_tag_name("failure"))
        .expect("result_1 fails");
    assert_eq!(failure.attribute("type"), Some("BMK004"));
    let message = failure.attribute("message").unwrap();
    assert!(
        message.starts_with("[BMK004] 'opt_weight_decay' logged "),
        "{message}"
    );
}

#[test]
fn github_annotations_are_escaped() {
    let d = hostile_repo();
    let sub = d.path().join("repo/sub");
    let out = run(
        &sub,
        &[
            "check",
            "--ruleset",
            "5.0.0",
            "--format",
            "github",
            "Example",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with(&format!(
            "::warning file=sub/{FOLDER}/result_0.txt,line=1,title=PKG006::sub/{FOLDER}: 1 run does not comply"
        )),
        "{text}"
    );
    let err = lines[1];
    assert!(
        err.starts_with(&format!(
            "::error file=sub/{FOLDER}/result_1.txt,line=16,title=BMK004::"
        )),
        "{text}"
    );
    // One line per annotation: `%` is escaped (line breaks too, see the
    // unit tests); `:` and `,` stay as they are in the message.
    assert!(err.contains(r#"50%25\n:,"#), "{err}");
    assert!(err.contains("%0Ahelp: "), "{err}");
    assert!(lines.last().unwrap().starts_with("mlaudit PASS: 5 logs"));
    assert_eq!(lines.len(), 3, "{text}");
}

#[test]
fn output_file_fail_on_and_exit_zero() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.sarif");
    let file_s = file.to_string_lossy().into_owned();
    let out = run(
        &root,
        &[
            "check",
            "--ruleset",
            "5.0.0",
            "--format",
            "sarif",
            "-o",
            &file_s,
            "Example",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty(), "the report goes to the file only");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(v["version"], "2.1.0");

    // The example has a warning (PKG006): --fail-on warning fails it.
    let out = run(
        &root,
        &[
            "check",
            "--ruleset",
            "5.0.0",
            "--fail-on",
            "warning",
            "Example",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let out = run(
        &root,
        &[
            "check",
            "--ruleset",
            "5.0.0",
            "--fail-on",
            "warning",
            "--exit-zero",
            "Example",
        ],
    );
    assert_eq!(out.status.code(), Some(0));

    // log: a failing log exits 1, or 0 with --exit-zero; -o works there too.
    let log = format!("{FOLDER}/result_1.txt");
    let out = run(&root, &["log", "--ruleset", "5.0.0", &log]);
    assert_eq!(out.status.code(), Some(1));
    let out = run(
        &root,
        &[
            "log",
            "--ruleset",
            "5.0.0",
            "--exit-zero",
            "--format",
            "json",
            "-o",
            &file_s,
            &log,
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(v["verdict"], "fail");

    // An unwritable output file: the tool could not do its job.
    let bad = dir.path().join("no/such/folder/r.json");
    let out = run(
        &root,
        &[
            "check",
            "--ruleset",
            "5.0.0",
            "-o",
            &bad.to_string_lossy(),
            "Example",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write the report"));
}
