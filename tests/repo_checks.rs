//! The repository checks (REPO001-REPO003, `rules/repo.yaml`) against the
//! official `repo_checker`: fixtures built in a temporary folder (a clean
//! package passes; each bad entry fails with its own code; older rounds get
//! warnings), the negative case recorded with the official tool, and every
//! corpus package of the rounds it accepts (`tests/fixtures/repo/official.tsv`).

mod common;

use mlaudit::aggregate::package::repo::{check_repo, RepoRules};
use mlaudit::finding::{Finding, Severity};
use mlaudit::rulebook::source::RuleSource;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

fn rules() -> RepoRules {
    RepoRules::load(&RuleSource::Embedded).expect("rules/repo.yaml")
}

/// A small valid-looking package.
fn package(root: &Path) {
    fs::create_dir_all(root.join("systems")).unwrap();
    fs::create_dir_all(root.join("results/sys/bert")).unwrap();
    fs::create_dir_all(root.join("benchmarks/bert/implementations/pytorch")).unwrap();
    fs::write(root.join("systems/sys.json"), "{}").unwrap();
    fs::write(root.join("results/sys/bert/result_0.txt"), "").unwrap();
    fs::write(
        root.join("benchmarks/bert/implementations/pytorch/README.md"),
        "x",
    )
    .unwrap();
}

fn codes(findings: &[Finding]) -> Vec<(String, String, Severity)> {
    findings
        .iter()
        .map(|f| (f.code.clone(), f.path.clone(), f.severity))
        .collect()
}

#[test]
fn a_clean_package_passes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("PKG");
    package(&root);
    // A link to an existing folder and a 50 MiB file (not over) are fine.
    fs::write(root.join("benchmarks/edge.bin"), "").unwrap();
    fs::File::options()
        .write(true)
        .open(root.join("benchmarks/edge.bin"))
        .unwrap()
        .set_len(50 * 1024 * 1024)
        .unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("../systems", root.join("benchmarks/link")).unwrap();
    let found = check_repo(&rules(), &root, "PKG", "5.1.0");
    assert!(found.is_empty(), "{:?}", codes(&found));
}

#[test]
fn each_bad_entry_fails_with_its_code() {
    let cases: &[(&str, &str)] = &[
        ("REPO001", "benchmarks/.hidden"),
        ("REPO001", "benchmarks/my file.txt"),
        ("REPO001", "benchmarks/.github"),
        ("REPO002", "benchmarks/big.bin"),
        #[cfg(unix)]
        ("REPO003", "benchmarks/broken"),
    ];
    for (code, rel) in cases {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("PKG");
        package(&root);
        let path = root.join(rel);
        match *code {
            "REPO002" => {
                let f = fs::File::create(&path).unwrap();
                f.set_len(50 * 1024 * 1024 + 1).unwrap();
            }
            #[cfg(unix)]
            "REPO003" => std::os::unix::fs::symlink("does-not-exist", &path).unwrap(),
            _ if rel.ends_with(".github") => fs::create_dir_all(&path).unwrap(),
            _ => fs::write(&path, "x").unwrap(),
        }
        let want = vec![(code.to_string(), format!("PKG/{rel}"), Severity::Error)];
        assert_eq!(codes(&check_repo(&rules(), &root, "PKG", "5.1.0")), want);
        // A round the official repo_checker refuses: a warning.
        let old = check_repo(&rules(), &root, "PKG", "0.7.0");
        assert!(
            old.iter().all(|f| f.severity == Severity::Warning),
            "{old:?}"
        );
        assert_eq!(old.len(), 1);
    }
}

/// The negative case run through the official tool (see the end of
/// `tests/fixtures/repo/official.tsv`), rebuilt here without corpus files.
#[test]
#[cfg(unix)]
fn the_official_negative_case() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("NEG");
    package(&root);
    let b = root.join("benchmarks");
    fs::create_dir_all(b.join("x/my dir")).unwrap();
    fs::write(b.join(".hidden"), "hi").unwrap();
    fs::write(b.join("x/my dir/ok.txt"), "hi").unwrap();
    fs::File::create(b.join("big.bin"))
        .unwrap()
        .set_len(52_428_801)
        .unwrap();
    fs::File::create(b.join("edge.bin"))
        .unwrap()
        .set_len(52_428_800)
        .unwrap();
    std::os::unix::fs::symlink("/nonexistent/target", b.join("broken_abs")).unwrap();
    std::os::unix::fs::symlink("../../systems", b.join("x/dir_link")).unwrap();
    let got: BTreeSet<String> = check_repo(&rules(), &root, "NEG", "5.1.0")
        .iter()
        .map(|f| {
            assert_eq!(f.severity, Severity::Error);
            f.path.clone()
        })
        .collect();
    let official: BTreeSet<String> = [
        "NEG/benchmarks/x/my dir",
        "NEG/benchmarks/.hidden",
        "NEG/benchmarks/big.bin",
        "NEG/benchmarks/broken_abs",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(got, official);
}

/// Every corpus package of a round the official tool accepts gets its
/// verdict, flagging the same entries.
#[test]
fn corpus_packages_match_the_official_repo_checker() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let text = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/repo/official.tsv"),
    )
    .unwrap();
    let mut official: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let cells: Vec<&str> = line.split('\t').collect();
        let set = official
            .entry((cells[0].to_string(), cells[1].to_string()))
            .or_default();
        if cells[2] == "FAIL" {
            set.insert(cells[3].to_string());
        }
    }
    let rules = rules();
    let mut bad = Vec::new();
    let mut failing = 0;
    for ((round, sub), want) in &official {
        let (_, version) = common::round_ruleset(round);
        let shown = sub.clone();
        let found = check_repo(&rules, &corpus.join(round).join(sub), &shown, &version);
        let got: BTreeSet<String> = found
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| f.path.clone())
            .collect();
        failing += usize::from(!got.is_empty());
        if &got != want {
            bad.push(format!("{round}/{sub}: official {want:?}, mlaudit {got:?}"));
        }
    }
    common::say(&format!(
        "repo_checks: {} corpus packages agree with the official repo_checker ({failing} fail), {} differ",
        official.len() - bad.len(),
        bad.len()
    ));
    assert!(official.len() >= 40);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
