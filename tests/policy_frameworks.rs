//! Framework knowledge (`rules/policy/frameworks/*.yaml`, issue 16): for
//! every framework, planted settings written in the framework's documented
//! syntax (`tests/fixtures/policy/frameworks/<framework>/positive/`) give
//! exactly the findings of `expected.txt` (code, severity, setting), their
//! allowed neighbours and switched-off forms (`negative/`) give none, and
//! every setting of the data has at least one planted positive.

use mlaudit::check::policy::{check_configs, PolicyRules};
use mlaudit::discover::tree::{FileRef, ImplFile};
use mlaudit::finding::Finding;
use mlaudit::rulebook::source::RuleSource;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn rules() -> PolicyRules {
    PolicyRules::load(&RuleSource::Embedded, "training", "5.1.0").expect("policy rules load")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policy/frameworks")
}

fn sorted_dir(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The files of `<framework>/<side>/` as one implementation of a benchmark
/// of their own (variables resolve within it only).
fn files(side: &str) -> Vec<ImplFile> {
    let mut out = Vec::new();
    for fw in sorted_dir(&root()) {
        let dir = root().join(&fw).join(side);
        if !dir.is_dir() {
            continue;
        }
        for n in sorted_dir(&dir) {
            out.push(ImplFile {
                benchmark: format!("{fw}-{side}"),
                implementation: Some("impl".into()),
                file: FileRef {
                    path: format!(
                        "Org/benchmarks/{fw}-{side}/implementations/impl/{fw}/{side}/{n}"
                    ),
                    fs: dir.join(&n),
                },
            });
        }
    }
    out
}

/// `<framework>/<side>/<file>:<line> <CODE> <severity> <what>`, `what` the
/// setting (`deepspeed#onebit_optimizer`) or the signal family.
fn keyed(findings: &[Finding]) -> BTreeSet<String> {
    findings
        .iter()
        .map(|f| {
            let short = f
                .path
                .split_once("/impl/")
                .map(|(_, p)| p)
                .unwrap_or(&f.path);
            let what = f
                .rule
                .as_deref()
                .and_then(|r| r.rsplit('/').next())
                .unwrap_or("")
                .replace(".yaml", "");
            format!(
                "{short}:{} {} {} {what}",
                f.line.unwrap_or(0),
                f.code,
                f.severity
            )
        })
        .collect()
}

#[test]
fn planted_settings_give_exactly_the_expected_findings() {
    let found = keyed(&check_configs(&rules(), &files("positive")));
    let text = std::fs::read_to_string(root().join("expected.txt")).expect("expected.txt");
    let want: BTreeSet<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    let missing: Vec<&String> = want.difference(&found).collect();
    let extra: Vec<&String> = found.difference(&want).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing:\n{}\nextra:\n{}",
        missing
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        extra
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn allowed_neighbours_and_off_settings_give_nothing() {
    let found = check_configs(&rules(), &files("negative"));
    assert!(found.is_empty(), "{:#?}", keyed(&found));
}

#[test]
fn every_setting_has_a_planted_positive() {
    let r = rules();
    let text = std::fs::read_to_string(root().join("expected.txt")).expect("expected.txt");
    let mut missing = Vec::new();
    for s in &r.frameworks.settings {
        let tag = format!(" {}#{}", s.framework, s.id);
        if !text.lines().any(|l| l.ends_with(&tag)) {
            missing.push(tag);
        }
    }
    assert!(
        missing.is_empty(),
        "settings without a fixture: {missing:?}"
    );
    // And every framework file has a negative fixture (its neighbours).
    for fw in sorted_dir(&root()) {
        if root().join(&fw).is_dir() {
            assert!(
                root().join(&fw).join("negative").is_dir(),
                "{fw}: no negative fixture"
            );
        }
    }
}

/// The key and value patterns are compiled into one matcher; a group
/// repeated without bound inside a pattern (`(_[a-z0-9]+)*_fp8`) made it
/// cost a fifth more of a whole first check once. Bounded repetitions
/// (`{0,2}`) and repeated characters (`[a-z]*`) are fine.
#[test]
fn patterns_repeat_no_group_without_bound() {
    let r = rules();
    let unbounded: Vec<String> = r
        .frameworks
        .settings
        .iter()
        .flat_map(|s| {
            [s.key.as_deref(), s.value.as_deref()]
                .into_iter()
                .flatten()
                .filter(|p| p.contains(")*") || p.contains(")+"))
                .map(|p| format!("{}#{}: {p}", s.framework, s.id))
        })
        .collect();
    assert!(unbounded.is_empty(), "{unbounded:#?}");
}
