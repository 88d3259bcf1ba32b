//! Synthetic MLLOG fixtures: one pass/fail pair per finding code under
//! `tests/fixtures/log/<CODE>/`, and parity mutations under `parity/`.
//! Each file names its ruleset (`# ruleset X`, or `# ruleset hpc X`) and the official checker's
//! verdict (`# official: PASS|FAIL|CRASH (...)`, written by
//! `tests/fixtures/record_official.sh`); our verdict must match it, with a
//! crash counting as a failure. A `<CODE>/fail.txt` must fail with error
//! findings of that code only; a `pass.txt` must pass.

use mlaudit::check::rules::{check_file, LogCheck, Ruleset, Verdict};
use mlaudit::finding::Severity;
use mlaudit::rulebook::source::RuleSource;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

struct Fixture {
    path: PathBuf,
    name: String,
    ruleset: String,
    official: Verdict,
}

fn fixtures() -> Vec<Fixture> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/log");
    let mut out = Vec::new();
    for dir in std::fs::read_dir(&root).expect("tests/fixtures/log") {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&dir).unwrap() {
            let path = f.unwrap().path();
            if path.extension().is_none_or(|e| e != "txt") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let name = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let header = |tag: &str| {
                text.lines()
                    .take_while(|l| l.starts_with('#'))
                    .find_map(|l| l.strip_prefix(tag).map(str::trim).map(str::to_string))
                    .unwrap_or_else(|| panic!("{name}: no '{tag}' header line"))
            };
            let ruleset = header("# ruleset ");
            let official = header("# official: ");
            let official = if official.starts_with("PASS") {
                Verdict::Pass
            } else if official.starts_with("FAIL") || official.starts_with("CRASH") {
                Verdict::Fail
            } else {
                panic!("{name}: official verdict '{official}' is not PASS, FAIL or CRASH")
            };
            out.push(Fixture {
                path,
                name,
                ruleset,
                official,
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn describe(c: &LogCheck) -> String {
    c.findings
        .iter()
        .map(|f| format!("{} {:?} {}", f.code, f.severity, f.message))
        .collect::<Vec<_>>()
        .join("\n  ")
}

#[test]
fn fixtures_match_the_official_verdict() {
    let all = fixtures();
    assert!(all.len() >= 60, "only {} fixtures found", all.len());
    let mut rulesets: BTreeMap<String, Ruleset> = BTreeMap::new();
    let mut problems = Vec::new();
    for fx in &all {
        // `# ruleset hpc 3.0.0` names its usage; a bare version is training.
        let (usage, version) = fx
            .ruleset
            .split_once(' ')
            .unwrap_or(("training", fx.ruleset.as_str()));
        let rs = rulesets.entry(fx.ruleset.clone()).or_insert_with(|| {
            Ruleset::load(&RuleSource::Embedded, usage, version)
                .unwrap_or_else(|e| panic!("{}: {e}", fx.name))
        });
        let check = check_file(rs, &fx.path, &fx.name);
        if check.verdict != fx.official {
            problems.push(format!(
                "{}: ours {:?}, official {:?}\n  {}",
                fx.name,
                check.verdict,
                fx.official,
                describe(&check)
            ));
            continue;
        }
        let (family, file) = fx.name.split_once('/').unwrap();
        if family == "parity" {
            continue;
        }
        let expect_fail = match file {
            "fail.txt" => true,
            "pass.txt" => false,
            other => panic!("{}: unexpected file {other}", fx.name),
        };
        let errors: Vec<&str> = check
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| f.code.as_str())
            .collect();
        let ok = if expect_fail {
            check.verdict == Verdict::Fail
                && !errors.is_empty()
                && errors.iter().all(|c| *c == family)
        } else {
            check.verdict == Verdict::Pass && errors.is_empty()
        };
        if !ok {
            problems.push(format!(
                "{}: expected {} with code {family} only\n  {}",
                fx.name,
                if expect_fail { "FAIL" } else { "PASS" },
                describe(&check)
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
