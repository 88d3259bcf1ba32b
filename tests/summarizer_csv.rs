//! `mlaudit score --csv FILE --csv-layout summarizer` (issue 19 item 7)
//! against what `result_summarizer --csv FILE` of mlperf_logging 4.1.68
//! wrote for the same corpus packages (run on copies; kept in
//! `tests/fixtures/summarizer/<round>/`: `<package>.csv` and
//! `<package>_detailed.csv`). Byte for byte: columns, order, rows, values.
//!
//! To refresh a fixture: copy the package to a temp folder, run
//! `python -m mlperf_logging.result_summarizer COPY/PKG training X.Y.0
//! --csv OUT/PKG.csv` and copy `PKG.csv` and `PKG_detailed.csv` here.
//! Not here on purpose: v2.0 HazyResearch, whose published scaling.json
//! (1.0) the summarizer uses for bert where mlaudit applies its own RCP
//! factor (the documented difference of `tests/stats_corpus.rs`).

mod common;

use std::path::Path;
use std::process::Command;

/// (round folder, package).
const PACKAGES: &[(&str, &str)] = &[
    ("v5.0", "MangoBoost"),
    ("v5.0", "Nebius"),
    ("v5.0", "QCT"),
    ("v5.0", "tinycorp"),
    ("v5.1", "Krai"),
    ("v4.1", "ASUSTeK"),
    ("v4.0", "tinycorp"),
    ("v3.1", "Ailiverse"),
    ("v2.1", "MosaicML"),
    ("v1.1", "Google"),
    ("v1.0", "NVIDIA"),
];

fn fixture(round: &str, name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/summarizer")
        .join(round)
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn summarizer_layout_is_what_the_official_summarizer_writes() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    for (round_name, pkg) in PACKAGES {
        let round = corpus.join(round_name);
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let out = tmp.path().join(format!("{pkg}.csv"));
        let run = Command::new(env!("CARGO_BIN_EXE_mlaudit"))
            .current_dir(&round)
            .args(["score", pkg, "--csv-layout", "summarizer", "--csv"])
            .arg(&out)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            run.status.code(),
            Some(0),
            "{round_name}/{pkg}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        for (ours, theirs) in [
            (out.clone(), format!("{pkg}.csv")),
            (
                tmp.path().join(format!("{pkg}_detailed.csv")),
                format!("{pkg}_detailed.csv"),
            ),
        ] {
            let got = std::fs::read_to_string(&ours)
                .unwrap_or_else(|e| panic!("{}: {e}", ours.display()));
            let want = fixture(round_name, &theirs);
            assert!(
                got == want,
                "{theirs} differs from result_summarizer's:\n--- ours\n{got}\n--- theirs\n{want}"
            );
        }
    }
    common::say(&format!(
        "summarizer CSV: {} packages, both files identical to result_summarizer 4.1.68",
        PACKAGES.len()
    ));
}

#[test]
fn summarizer_layout_to_stdout_is_the_summary_file() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let run = Command::new(env!("CARGO_BIN_EXE_mlaudit"))
        .current_dir(corpus.join("v5.0"))
        .args([
            "score",
            "Nebius",
            "--csv-layout",
            "summarizer",
            "--csv",
            "-",
        ])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        fixture("v5.0", "Nebius.csv")
    );
}
