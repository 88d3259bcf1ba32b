//! Policy pack fixtures: update-consistency signals in implementation
//! configs (a positive and a negative fixture per family, allowed neighbours
//! and switched-off features included; expectations in
//! `tests/fixtures/policy/configs/expected.txt`), and the log-level checks on
//! small generated logs.

mod common;

use mlaudit::check::policy::{check_configs, check_log, PolicyRules};
use mlaudit::discover::tree::{FileRef, ImplFile};
use mlaudit::finding::{Finding, Severity};
use mlaudit::rulebook::source::RuleSource;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn rules(v: &str) -> PolicyRules {
    PolicyRules::load(&RuleSource::Embedded, "training", v).expect("policy rules load")
}

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policy/configs")
}

fn impl_files(sub: &str) -> Vec<ImplFile> {
    let dir = fixture_dir().join(sub);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixture dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| ImplFile {
            benchmark: "bert".into(),
            implementation: Some("fixture".into()),
            file: FileRef {
                path: format!("{sub}/{n}"),
                fs: dir.join(&n),
            },
        })
        .collect()
}

/// A finding's path from below `benchmarks/`.
fn tail(p: &str) -> String {
    p.rsplit_once("/benchmarks/")
        .map_or(p, |(_, t)| t)
        .to_string()
}

fn keyed(findings: &[Finding]) -> BTreeSet<String> {
    findings
        .iter()
        .map(|f| format!("{}:{} {}", f.path, f.line.unwrap_or(0), f.code))
        .collect()
}

#[test]
fn positive_config_fixtures_give_exactly_the_expected_signals() {
    let r = rules("5.0.0");
    let found = check_configs(&r, &impl_files("positive"));
    // Generic signals are warnings; a setting the framework data knows
    // (powerSGD, a sync period) is an error where the rules forbid it.
    assert!(
        found.iter().all(|f| f.severity != Severity::Note),
        "{found:#?}"
    );
    assert!(found
        .iter()
        .all(|f| f.help.as_deref().is_some_and(|h| !h.is_empty())));
    let expected: BTreeSet<String> = std::fs::read_to_string(fixture_dir().join("expected.txt"))
        .expect("expected.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    let got = keyed(&found);
    let missing: Vec<_> = expected.difference(&got).collect();
    let extra: Vec<_> = got.difference(&expected).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:#?}\nextra {extra:#?}\nall {found:#?}"
    );
    let families: BTreeSet<&str> = found.iter().map(|f| f.code.as_str()).collect();
    assert_eq!(
        families,
        ["POL007", "POL010", "POL011", "POL012", "POL013", "POL014"]
            .into_iter()
            .collect()
    );
}

#[test]
fn negative_config_fixtures_give_nothing() {
    let r = rules("5.0.0");
    let found = check_configs(&r, &impl_files("negative"));
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn unreadable_huge_and_binary_configs() {
    let r = rules("5.0.0");
    let dir = tempfile::tempdir().expect("tempdir");
    let big = dir.path().join("big.yaml");
    std::fs::write(&big, "a: 1\n".repeat(1_000_000)).expect("write");
    let bin = dir.path().join("bin.json");
    std::fs::write(&bin, b"{\"dgc\": 1}\0\0\0").expect("write");
    let skipped = dir.path().join("model.pt");
    std::fs::write(&skipped, b"USE_DGC=1").expect("write");
    // UTF-16 with a byte order mark (both orders) is text, not binary.
    let utf16 = |name: &str, little: bool| {
        let p = dir.path().join(name);
        let mut b: Vec<u8> = if little {
            vec![0xFF, 0xFE]
        } else {
            vec![0xFE, 0xFF]
        };
        for u in "{\"dgc\": true}\n".encode_utf16() {
            b.extend(if little {
                u.to_le_bytes()
            } else {
                u.to_be_bytes()
            });
        }
        std::fs::write(&p, b).expect("write");
        p
    };
    let le = utf16("le.json", true);
    let be = utf16("be.json", false);
    let f = |name: &str, fs: PathBuf| ImplFile {
        benchmark: "bert".into(),
        implementation: None,
        file: FileRef {
            path: name.to_string(),
            fs,
        },
    };
    let files = vec![
        f("big.yaml", big),
        f("bin.json", bin),
        f("gone.sh", dir.path().join("gone.sh")),
        f("model.pt", skipped),
        f("le.json", le),
        f("be.json", be),
    ];
    let found = check_configs(&r, &files);
    let got: Vec<(&str, &str)> = found
        .iter()
        .map(|f| (f.path.as_str(), f.code.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("be.json", "POL014"),
            ("big.yaml", "POL041"),
            ("gone.sh", "POL040"),
            ("le.json", "POL014")
        ]
    );
}

/// One MLLOG line.
fn rec(key: &str, value: &str, meta: &str) -> String {
    format!(
        ":::MLLOG {{\"namespace\": \"\", \"time_ms\": 1, \"event_type\": \"POINT_IN_TIME\", \"key\": \"{key}\", \"value\": {value}, \"metadata\": {{{meta}}}}}\n"
    )
}

fn log(lines: &[(&str, &str)]) -> String {
    lines.iter().map(|(k, v)| rec(k, v, "")).collect()
}

fn run(v: &str, bm: Option<&str>, div: Option<&str>, text: &str) -> Vec<Finding> {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("result_0.txt");
    std::fs::write(&p, text).expect("write");
    check_log(&rules(v), bm, div, "result_0.txt", &p)
}

fn codes(f: &[Finding]) -> Vec<(String, Severity)> {
    f.iter().map(|f| (f.code.clone(), f.severity)).collect()
}

fn has(f: &[Finding], code: &str, sev: Severity) -> bool {
    f.iter().any(|x| x.code == code && x.severity == sev)
}

const CLOSED: (&str, &str) = ("submission_division", "\"closed\"");

#[test]
fn optimizer_checks() {
    let lora = ("submission_benchmark", "\"llama2_70b_lora\"");
    // Wrong opt_name where the compliance pack does not check it: error.
    let f = run(
        "5.0.0",
        None,
        None,
        &log(&[CLOSED, lora, ("opt_name", "\"sgd\"")]),
    );
    assert!(has(&f, "POL001", Severity::Error), "{f:#?}");
    // The reference: nothing.
    let f = run(
        "5.0.0",
        None,
        None,
        &log(&[
            CLOSED,
            lora,
            ("opt_name", "\"adamw\""),
            ("opt_adamw_weight_decay", "0.0001"),
        ]),
    );
    assert!(f.is_empty(), "{f:#?}");
    // Case only: a note (the update is the reference's).
    let f = run(
        "5.0.0",
        Some("bert"),
        Some("closed"),
        &log(&[("opt_name", "\"LAMB\""), ("opt_lamb_beta_1", "0.9")]),
    );
    assert_eq!(codes(&f), vec![("POL002".into(), Severity::Note)], "{f:#?}");
    // A framework's name for the reference (fused, vendor, a class path):
    // the same optimizer, a note; its keys are the reference's.
    for name in ["FusedLAMB", "apex.optimizers.FusedLAMB", "fused_lamb"] {
        let f = run(
            "5.0.0",
            Some("bert"),
            Some("closed"),
            &log(&[
                ("opt_name", &format!("\"{name}\"")),
                ("opt_lamb_beta_1", "0.9"),
            ]),
        );
        assert_eq!(
            codes(&f),
            vec![("POL002".into(), Severity::Note)],
            "{name}: {f:#?}"
        );
    }
    for name in [
        "FusedAdam",
        "fused_adam",
        "torch.optim.AdamW",
        "adamw_torch_fused",
    ] {
        let f = run(
            "5.1.0",
            None,
            None,
            &log(&[
                CLOSED,
                lora,
                ("opt_name", &format!("\"{name}\"")),
                ("opt_adamw_weight_decay", "0.0001"),
            ]),
        );
        assert_eq!(
            codes(&f),
            vec![("POL002".into(), Severity::Note)],
            "{name}: {f:#?}"
        );
    }
    // An mllog name means what it says: Adam is not the reference AdamW.
    let f = run(
        "5.1.0",
        None,
        None,
        &log(&[CLOSED, lora, ("opt_name", "\"adam\"")]),
    );
    assert!(has(&f, "POL001", Severity::Error), "{f:#?}");
    // opt_name contradicted by the keys of another optimizer.
    let f = run(
        "5.0.0",
        Some("bert"),
        Some("closed"),
        &log(&[("opt_name", "\"adamw\""), ("opt_lamb_beta_1", "0.9")]),
    );
    assert!(
        has(&f, "POL001", Severity::Error) && has(&f, "POL003", Severity::Warning),
        "{f:#?}"
    );
    // unet3d's reference "nag" is SGD with Nesterov momentum (the rules
    // allow "sgd" beside it): its opt_momentum is no other optimizer's
    // key; a LAMB key is.
    let f = run(
        "4.0.0",
        Some("unet3d"),
        Some("closed"),
        &log(&[("opt_name", "\"nag\""), ("opt_momentum", "0.9")]),
    );
    assert!(f.is_empty(), "{f:#?}");
    let f = run(
        "4.0.0",
        Some("unet3d"),
        Some("closed"),
        &log(&[("opt_name", "\"nag\""), ("opt_lamb_beta_1", "0.9")]),
    );
    assert_eq!(
        codes(&f),
        vec![("POL003".into(), Severity::Warning)],
        "{f:#?}"
    );
    // No opt_name: inferred from the keys.
    let f = run(
        "5.0.0",
        Some("bert"),
        Some("closed"),
        &log(&[("opt_adam_beta_1", "0.9")]),
    );
    assert_eq!(
        codes(&f),
        vec![("POL003".into(), Severity::Warning)],
        "{f:#?}"
    );
    let f = run(
        "5.0.0",
        Some("bert"),
        Some("closed"),
        &log(&[("opt_lamb_beta_1", "0.9")]),
    );
    assert!(f.is_empty(), "{f:#?}");
    // The compliance pack checks dlrm's opt_name (BMK003): no duplicate error.
    let f = run(
        "5.0.0",
        Some("dlrm_dcnv2"),
        Some("closed"),
        &log(&[("opt_name", "\"sgd\"")]),
    );
    assert!(!f.iter().any(|x| x.code == "POL001"), "{f:#?}");
}

#[test]
fn hyperparameter_checks() {
    let bm = Some("llama2_70b_lora");
    let f = run(
        "5.1.0",
        bm,
        Some("closed"),
        &log(&[
            ("opt_gradient_clip_norm", "1.0"),
            ("lora_alpha", "32"),
            ("opt_adamw_weight_decay", "0.0001"),
        ]),
    );
    assert_eq!(
        codes(&f),
        vec![("POL004".into(), Severity::Error)],
        "{f:#?}"
    );
    assert_eq!(f[0].line, Some(1));
    let f = run(
        "5.1.0",
        bm,
        Some("closed"),
        &log(&[("opt_gradient_clip_norm", "0.3"), ("lora_alpha", "32")]),
    );
    assert!(f.is_empty(), "{f:#?}");
    // A relation: llama31_8b end LR is 0.1 of the base LR.
    let l8 = Some("llama31_8b");
    let f = run(
        "5.1.0",
        l8,
        Some("closed"),
        &log(&[
            ("opt_base_learning_rate", "0.001"),
            ("opt_end_learning_rate", "0.0001"),
        ]),
    );
    assert!(f.is_empty(), "{f:#?}");
    let f = run(
        "5.1.0",
        l8,
        Some("closed"),
        &log(&[
            ("opt_base_learning_rate", "0.001"),
            ("opt_end_learning_rate", "0.0"),
        ]),
    );
    assert_eq!(
        codes(&f),
        vec![("POL004".into(), Severity::Error)],
        "{f:#?}"
    );
    // A relation that needs review: warning. Not computable: silent.
    let l405 = Some("llama31_405b");
    let f = run(
        "5.0.0",
        l405,
        Some("closed"),
        &log(&[
            ("global_batch_size", "1152"),
            ("opt_learning_rate_warmup_steps", "100"),
        ]),
    );
    assert_eq!(
        codes(&f),
        vec![("POL005".into(), Severity::Warning)],
        "{f:#?}"
    );
    let f = run(
        "5.0.0",
        l405,
        Some("closed"),
        &log(&[("opt_learning_rate_warmup_steps", "100")]),
    );
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn division_decides() {
    let wrong = log(&[("opt_name", "\"sgd\"")]);
    // Open division: no closed-division policy.
    assert!(run("5.0.0", Some("bert"), Some("open"), &wrong).is_empty());
    // Unknown: a note, and the error becomes a warning.
    let f = run("5.0.0", Some("bert"), None, &wrong);
    assert!(has(&f, "POL006", Severity::Note), "{f:#?}");
    assert!(has(&f, "POL001", Severity::Warning), "{f:#?}");
    assert!(!f.iter().any(|x| x.severity == Severity::Error), "{f:#?}");
    // The caller's division wins over the log's.
    let f = run(
        "5.0.0",
        Some("bert"),
        Some("closed"),
        &log(&[("submission_division", "\"open\""), ("opt_name", "\"sgd\"")]),
    );
    assert!(has(&f, "POL001", Severity::Error), "{f:#?}");
    // Benchmark unknown: a note only.
    let f = run("5.0.0", None, Some("closed"), &wrong);
    assert_eq!(codes(&f), vec![("POL006".into(), Severity::Note)], "{f:#?}");
    // Unreadable log: a warning, no panic.
    let r = rules("5.0.0");
    let f = check_log(
        &r,
        None,
        None,
        "missing.txt",
        Path::new("/nonexistent/x.txt"),
    );
    assert_eq!(codes(&f), vec![("POL040".into(), Severity::Warning)]);
}

#[test]
fn signals_in_log_keys_and_values() {
    let text = log(&[
        CLOSED,
        ("async_updates", "true"),
        ("gradient_compression", "\"PowerSGD\""),
        ("comm_method", "\"dgc\""),
        ("stale_gradients", "false"),
        ("localSGD", "0"),
        ("async_eval", "true"),
        ("ckpt_async_save", "true"),
        ("weights_initialization", "null"),
        ("async_updates", "true"),
        // A sync period of one step is every step (the framework data's
        // minimum for local SGD is 2); 8 is not.
        ("local_sgd_sync_every", "1"),
        ("model_averager_period", "1"),
        ("localsgd_frequency", "8"),
    ]);
    let f = run("5.0.0", Some("bert"), None, &text);
    let got: Vec<(u64, &str)> = f
        .iter()
        .map(|f| (f.line.unwrap_or(0), f.code.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![(2, "POL011"), (3, "POL014"), (4, "POL014"), (13, "POL012")],
        "{f:#?}"
    );
}

#[test]
fn disclosure_6x() {
    let bm = Some("llama31_8b");
    let keys = [
        ("lowest_numerical_precision_in_linear", "\"fp8\""),
        ("lowest_numerical_precision_in_attn", "\"bfloat16\""),
        ("lowest_numerical_precision_in_comm", "\"fp8\""),
        ("tensor_parallelism", "1"),
        ("pipeline_parallelism", "1"),
        ("context_parallelism", "1"),
        ("expert_parallelism", "1"),
        ("micro_batch_size", "1"),
        ("config_filename", "\"c.sh\""),
    ];
    // 6.0: optional in the compliance pack, so a note when missing.
    let f = run("6.0.0", bm, Some("closed"), &log(&[]));
    assert_eq!(codes(&f), vec![("POL020".into(), Severity::Note)], "{f:#?}");
    let f = run("6.0.0", bm, Some("closed"), &log(&keys));
    assert_eq!(
        codes(&f),
        vec![("POL021".into(), Severity::Warning)],
        "{f:#?}"
    );
    // 6.1: required by the compliance pack (CMN013/CMN014), no duplicate.
    let f = run("6.1.0", bm, Some("closed"), &log(&[]));
    assert!(f.is_empty(), "{f:#?}");
    let mut bf16 = keys.to_vec();
    bf16[2].1 = "\"bfloat16\"";
    assert!(run("6.1.0", bm, Some("closed"), &log(&bf16)).is_empty());
    // Before 6.0 the key is not required, but a logger may give it: int8
    // or fp8 communication still deserves a look (and nothing is missing).
    for round in ["5.1.0", "4.1.0"] {
        let f = run(
            round,
            Some("bert"),
            Some("closed"),
            &log(&[("lowest_numerical_precision_in_comm", "\"int8\"")]),
        );
        assert!(has(&f, "POL021", Severity::Warning), "{round}: {f:#?}");
        assert!(!has(&f, "POL020", Severity::Note), "{round}: {f:#?}");
        let f = run(
            round,
            Some("bert"),
            Some("closed"),
            &log(&[("lowest_numerical_precision_in_comm", "\"bfloat16\"")]),
        );
        assert!(!f.iter().any(|x| x.code == "POL021"), "{round}: {f:#?}");
    }
}

#[test]
fn eval_schedule() {
    let evals = |positions: &[u64]| -> String {
        let mut t = log(&[CLOSED, ("global_batch_size", "32")]);
        for p in positions {
            t.push_str(&rec(
                "eval_accuracy",
                "3.5",
                &format!("\"samples_count\": {p}"),
            ));
        }
        t
    };
    let bm = Some("llama31_8b");
    // Every 12288 within one batch: fine (12256 is a step before).
    assert!(run("5.1.0", bm, None, &evals(&[12256, 24544, 36832, 36832])).is_empty());
    // Twice as often: one warning naming the first bad interval.
    let f = run("5.1.0", bm, None, &evals(&[12288, 18432, 24576, 30720]));
    assert_eq!(
        codes(&f),
        vec![("POL030".into(), Severity::Warning)],
        "{f:#?}"
    );
    assert!(f[0].message.contains("3 of 3"), "{}", f[0].message);
    assert_eq!(f[0].line, Some(4));
    // The first evaluation where the rules skip early ones (405B, 5.1).
    let mut t = log(&[CLOSED, ("global_batch_size", "1152")]);
    for p in [18432u64, 36864] {
        t.push_str(&rec(
            "eval_accuracy",
            "5.0",
            &format!("\"samples_count\": {p}"),
        ));
    }
    let f = run("5.1.0", Some("llama31_405b"), None, &t);
    assert_eq!(
        codes(&f),
        vec![("POL030".into(), Severity::Warning)],
        "{f:#?}"
    );
    assert!(f[0].message.contains("earlier"), "{}", f[0].message);
    // Less often than the schedule cannot stop the clock early: a note.
    let f = run("5.1.0", bm, None, &evals(&[12288, 36864, 61440]));
    assert_eq!(codes(&f), vec![("POL030".into(), Severity::Note)], "{f:#?}");
    // Positions all below one interval are not samples (an epoch count).
    assert!(run("5.1.0", bm, None, &evals(&[6, 7, 8])).is_empty());
    // The first evaluation half an interval in, every interval after it
    // right: earlier than the schedule, a warning.
    let f = run("5.1.0", bm, None, &evals(&[6112, 18400, 30688]));
    assert_eq!(
        codes(&f),
        vec![("POL030".into(), Severity::Warning)],
        "{f:#?}"
    );
    assert!(
        f[0].message
            .starts_with("first evaluation at samples_count 6112, earlier"),
        "{}",
        f[0].message
    );
    // LoRA, GBS 8: first at (3+1)*384, then a first interval of 360 (the
    // first position rounds to a step boundary), then every 384: quiet.
    let mut t = log(&[CLOSED, ("global_batch_size", "8")]);
    for p in [1560u64, 1920, 2304, 2688] {
        t.push_str(&rec(
            "eval_accuracy",
            "0.93",
            &format!("\"samples_count\": {p}"),
        ));
    }
    let f = run("5.1.0", Some("llama2_70b_lora"), None, &t);
    assert!(f.is_empty(), "{f:#?}");
    // R-GAT (NVIDIA 5.0): epoch_num rounded to two decimals and an extra
    // evaluation at the end of the epoch: quiet; twice as often is not.
    let rgat = |ps: &[&str]| {
        let mut t = log(&[CLOSED, ("global_batch_size", "4096")]);
        for p in ps {
            t.push_str(&rec("eval_accuracy", "0.7", &format!("\"epoch_num\": {p}")));
        }
        run("5.1.0", Some("rgat"), None, &t)
    };
    let mut real: Vec<String> = (1..=16)
        .map(|k| format!("{:.2}", f64::from(k) * 0.05))
        .collect();
    real.extend(["0.84", "0.89", "0.94", "0.99", "1", "1.05", "1.1"].map(String::from));
    let real: Vec<&str> = real.iter().map(String::as_str).collect();
    let f = rgat(&real);
    assert!(f.is_empty(), "{f:#?}");
    let f = rgat(&["0.75", "0.775", "0.8", "0.825"]);
    assert_eq!(
        codes(&f),
        vec![("POL030".into(), Severity::Warning)],
        "{f:#?}"
    );
}

/// POL030 against the schedule's grid, not only interval by interval:
/// a cadence a little faster than the schedule in every interval adds up
/// (a warning), rounding every interval down to a step does not, and a
/// short interval that only brings a late evaluation back is a note.
#[test]
fn eval_schedule_grid() {
    let samples = |bm: &str, gbs: &str, positions: &[u64]| {
        let mut t = log(&[CLOSED, ("global_batch_size", gbs)]);
        for p in positions {
            t.push_str(&rec(
                "eval_accuracy",
                "0.93",
                &format!("\"samples_count\": {p}"),
            ));
        }
        run("5.1.0", Some(bm), None, &t)
    };
    let lora = |gbs: &str, positions: &[u64]| samples("llama2_70b_lora", gbs, positions);
    let only = |f: &[Finding], sev: Severity| {
        assert_eq!(codes(f), vec![("POL030".into(), sev)], "{f:#?}");
    };
    // LoRA, GBS 64 (NVIDIA 5.1): every 384 from 4224, quiet.
    assert!(lora("64", &[4224, 4608, 4992, 5376, 5760, 6144]).is_empty());
    // Every 320 (5 steps where 6 are due): each interval one batch short,
    // within the tolerance, but the evaluations run ahead of the schedule.
    let f = lora("64", &[4224, 4544, 4864, 5184, 5504, 5824]);
    only(&f, Severity::Warning);
    assert!(
        f[0].message
            .starts_with("evaluation at samples_count 5184 is earlier than the schedule"),
        "{}",
        f[0].message
    );
    // The first evaluation one interval early: a batch divides 384, so no
    // rounding explains it.
    let f = lora("64", &[3840, 4224, 4608, 4992]);
    only(&f, Severity::Warning);
    assert!(
        f[0].message.contains("tolerance 0 on the early side"),
        "{}",
        f[0].message
    );
    // GBS 18 (NVIDIA 5.0): every 21 steps (378), each interval rounded
    // down to a step: quiet.
    assert!(lora("18", &[1908, 2268, 2646, 3024, 3402, 3780]).is_empty());
    // A dropped evaluation, then an extra one between two due: a warning.
    let f = lora("8", &[1536, 2304, 2496, 2688, 3072]);
    only(&f, Severity::Warning);
    // The first evaluation on its place, the second half an interval after
    // it (where the run converged): early, though the first is not late.
    let f = lora("8", &[1536, 1728]);
    only(&f, Severity::Warning);
    // ... and one extra evaluation there, the schedule kept after it.
    let f = lora("8", &[1536, 1728, 1920, 2304]);
    only(&f, Severity::Warning);
    // FLUX.1: one evaluation a step late, the next where it was due: the
    // short interval after it is a note.
    let f = samples("flux1", "1152", &[262656, 527616, 787968, 1050624]);
    only(&f, Severity::Note);
    assert!(
        f[0].message.contains("none earlier than the schedule"),
        "{}",
        f[0].message
    );
    // Llama 3.1 8B: the first evaluation an interval late, the rest on
    // the schedule after it: a note of its own.
    let f = samples("llama31_8b", "32", &[24576, 36864, 49152]);
    only(&f, Severity::Note);
    assert!(
        f[0].message.contains("later than the schedule's first"),
        "{}",
        f[0].message
    );
    // RetinaNet: four evaluations within the first epoch, where the
    // schedule has one an epoch.
    let mut t = log(&[CLOSED, ("global_batch_size", "256")]);
    for p in ["0.25", "0.5", "0.75", "0.95"] {
        t.push_str(&rec("eval_accuracy", "0.3", &format!("\"epoch_num\": {p}")));
    }
    only(
        &run("5.1.0", Some("retinanet"), None, &t),
        Severity::Warning,
    );
    // DLRM: every 0.04998 epoch (a step short of 0.05 each time, as real
    // runs are), quiet; every 0.0492, each within 0.001 of 0.05, is not.
    let dlrm = |step: f64| {
        let mut t = log(&[
            CLOSED,
            ("global_batch_size", "55296"),
            ("train_samples", "4195197692"),
        ]);
        for k in 1..=16 {
            t.push_str(&rec(
                "eval_accuracy",
                "0.8",
                &format!("\"epoch_num\": {}", f64::from(k) * step),
            ));
        }
        run("5.1.0", Some("dlrm_dcnv2"), None, &t)
    };
    assert!(dlrm(0.049_98).is_empty());
    only(&dlrm(0.0492), Severity::Warning);
}

/// Evaluations after the one that met the quality target (as the
/// compliance rules find it) cannot have stopped the clock: an extra one a
/// step after it is outside the schedule. Before the target, the same
/// short interval is a warning. Checked through `mlaudit check`, where
/// the compliance rules and the policy read the log in one pass.
#[test]
fn evaluations_after_the_target_are_not_the_schedules() {
    let bin = env!("CARGO_BIN_EXE_mlaudit");
    let pol030 = |values: &[(u64, &str)]| -> Vec<(String, u64)> {
        let mut t = log(&[
            ("submission_benchmark", "\"llama31_8b\""),
            CLOSED,
            ("global_batch_size", "32"),
        ]);
        for (p, v) in values {
            t.push_str(&rec("eval_accuracy", v, &format!("\"samples_count\": {p}")));
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("result_0.txt");
        std::fs::write(&p, t).expect("write");
        let out = std::process::Command::new(bin)
            .args(["check", "--ruleset", "5.1.0", "--format", "json"])
            .arg(&p)
            .output()
            .expect("mlaudit runs");
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        j["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter(|f| f["code"] == "POL030")
            .map(|f| {
                (
                    f["severity"].as_str().unwrap_or_default().to_string(),
                    f["line"].as_u64().unwrap_or(0),
                )
            })
            .collect()
    };
    // The target (3.3) met at 36864; one more evaluation a step later.
    let after = [
        (12288, "3.5"),
        (24576, "3.4"),
        (36864, "3.2"),
        (36928, "3.1"),
    ];
    assert_eq!(pol030(&after), vec![]);
    // The same positions, the target met only at the last: the short
    // interval could have stopped the clock.
    let before = [
        (12288, "3.5"),
        (24576, "3.4"),
        (36864, "3.35"),
        (36928, "3.2"),
    ];
    assert_eq!(pol030(&before), vec![("warning".to_string(), 7)]);
}

/// Issue 16, item 5: repeatability settings of a package's configs are
/// notes of the report's own section (JSON `repeatability[]`, text), never
/// findings and never a verdict; `repeat` lists them when runs differ.
#[test]
fn repeatability_notes_are_a_section_of_their_own() {
    let bin = env!("CARGO_BIN_EXE_mlaudit");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pkg = root.join("tests/fixtures/policy/repeatability/Org");
    let run = |args: &[&str]| {
        std::process::Command::new(bin)
            .args(args)
            .output()
            .expect("mlaudit runs")
    };
    let pkg_s = pkg.to_string_lossy().into_owned();
    let out = run(&["check", "--ruleset", "5.0.0", "--format", "json", &pkg_s]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let notes = j["repeatability"].as_array().expect("repeatability[]");
    let got: Vec<(u64, &str, &str)> = notes
        .iter()
        .map(|n| {
            (
                n["line"].as_u64().unwrap_or(0),
                n["effect"].as_str().unwrap_or(""),
                n["setting"]
                    .as_str()
                    .unwrap_or("")
                    .rsplit('#')
                    .next()
                    .unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (4, "repeatable", "cublas_workspace"),
            (5, "repeatable", "nccl_pinning"),
            (6, "not_repeatable", "cudnn_benchmark"),
        ]
    );
    let findings = j["findings"].as_array().expect("findings[]");
    assert!(
        findings.iter().all(|f| f["code"] != "POL050"),
        "{findings:?}"
    );
    // The same package without its configs: the same verdicts.
    let example = root.join("examples/Example").to_string_lossy().into_owned();
    let bare = run(&["check", "--ruleset", "5.0.0", "--format", "json", &example]);
    let b: serde_json::Value = serde_json::from_slice(&bare.stdout).expect("JSON");
    assert_eq!(j["verdict"], b["verdict"]);
    assert_eq!(j["official_verdict"], b["official_verdict"]);
    assert_eq!(j["summary"], b["summary"]);
    assert_eq!(b["repeatability"], serde_json::json!([]));
    let text = run(&["check", "--ruleset", "5.0.0", "--color", "never", &pkg_s]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(
            "Repeatability (3 settings in the implementation configs; notes, never a verdict):"
        ),
        "{text}"
    );
    assert!(text.contains("config_example_system.sh:6: not repeatable: --cudnn-benchmark"));

    // `repeat`: shown when the runs differ, not when they are identical.
    let log = |n: u32| {
        pkg.join(format!("results/example_system/retinanet/result_{n}.txt"))
            .to_string_lossy()
            .into_owned()
    };
    let differ = run(&["repeat", &log(0), &log(2)]);
    let differ = String::from_utf8_lossy(&differ.stdout);
    assert!(differ.contains("Repeatability (3 settings"), "{differ}");
    let same = run(&["repeat", &log(0), &log(0)]);
    let same = String::from_utf8_lossy(&same.stdout);
    assert!(!same.contains("Repeatability"), "{same}");
    let json = run(&["repeat", "--format", "json", &log(0), &log(2)]);
    let r: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(r["repeatability"].as_array().map(Vec::len), Some(3));
    // Run from inside the package, the logs named from `results/`.
    let inside = std::process::Command::new(env!("CARGO_BIN_EXE_mlaudit"))
        .current_dir(&pkg)
        .args([
            "repeat",
            "--format",
            "json",
            "results/example_system/retinanet/result_0.txt",
            "results/example_system/retinanet/result_2.txt",
        ])
        .output()
        .expect("mlaudit runs");
    let r: serde_json::Value = serde_json::from_slice(&inside.stdout).expect("JSON");
    assert_eq!(r["repeatability"].as_array().map(Vec::len), Some(3));
}

/// `repeat` shows the configs a run of the logs' system uses: not those in
/// another system's folder; when a folder is named after the system, not
/// the other implementations either.
#[test]
fn repeat_shows_the_configs_of_the_runs_system() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pkg = dir.path().join("Org");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policy/repeatability/Org");
    common::bounded::copy_dir(&fixture, &pkg);
    let impls = pkg.join("benchmarks/retinanet/implementations");
    let write = |rel: &str, text: &str| {
        let p = impls.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    };
    // Another system of the package, with a config of its own.
    write("other_system/run.sh", "export NCCL_ALGO=Tree\n");
    std::fs::create_dir_all(pkg.join("results/other_system/retinanet")).expect("mkdir");
    let notes = || -> Vec<String> {
        let log = |n: u32| {
            pkg.join(format!("results/example_system/retinanet/result_{n}.txt"))
                .to_string_lossy()
                .into_owned()
        };
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mlaudit"))
            .args(["repeat", "--format", "json", &log(0), &log(2)])
            .output()
            .expect("mlaudit runs");
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        r["repeatability"]
            .as_array()
            .expect("repeatability[]")
            .iter()
            .map(|n| {
                let p = n["path"].as_str().unwrap_or_default();
                p.rsplit_once("/implementations/")
                    .map_or(p, |(_, t)| t)
                    .to_string()
            })
            .collect()
    };
    let got = notes();
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(got.iter().all(|p| p.starts_with("pytorch/")), "{got:?}");
    // A folder named after the logs' system: its configs, not the other
    // implementation's.
    write(
        "example_system/run.sh",
        "export CUBLAS_WORKSPACE_CONFIG=:4096:8\n",
    );
    assert_eq!(notes(), ["example_system/run.sh"]);
    // Folders named after a system with more after it
    // (`<system>_pytorch_llama3_8b`): the logs' system's, not the other's.
    std::fs::remove_dir_all(impls.join("example_system")).expect("rm");
    std::fs::remove_dir_all(impls.join("other_system")).expect("rm");
    write(
        "example_system_pytorch/run.sh",
        "export CUBLAS_WORKSPACE_CONFIG=:4096:8\n",
    );
    write("other_system_pytorch/run.sh", "export NCCL_ALGO=Tree\n");
    assert_eq!(notes(), ["example_system_pytorch/run.sh"]);
    // -q leaves the notes out of the text report.
    let text = |quiet: bool| -> String {
        let log = |n: u32| {
            pkg.join(format!("results/example_system/retinanet/result_{n}.txt"))
                .to_string_lossy()
                .into_owned()
        };
        let mut args = vec!["--color", "never"];
        if quiet {
            args.push("-q");
        }
        let (a, b) = (log(0), log(2));
        args.extend(["repeat", a.as_str(), b.as_str()]);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mlaudit"))
            .args(&args)
            .output()
            .expect("mlaudit runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(text(false).contains("Repeatability ("), "{}", text(false));
    assert!(!text(true).contains("Repeatability"), "{}", text(true));
}

/// Issue 16, item 3: a config linked to its run's logs
/// (`benchmarks/<bm>/implementations/<SYSTEM>/`) that sets another learning
/// rate or optimizer than the run logged is POL008 at the config line and
/// at the log line; defaults overridden by the system's config, fused
/// variants of the logged optimizer, a learning rate per 2048 samples the
/// run scales by its batch and another system's config are quiet.
#[test]
fn a_config_against_the_log_of_its_own_run() {
    let bin = env!("CARGO_BIN_EXE_mlaudit");
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policy/config_log");
    // The findings of one code: the path below Org/ and the line.
    let found = |case: &str, code: &str| -> Vec<(String, u64)> {
        let out = std::process::Command::new(bin)
            .args(["check", "--ruleset", "5.0.0", "--format", "json"])
            .arg(base.join(case).join("Org"))
            .output()
            .expect("mlaudit runs");
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let mut got: Vec<(String, u64)> = j["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter(|f| f["code"] == code)
            .map(|f| {
                let p = f["path"].as_str().unwrap_or_default();
                let tail = p.rsplit_once("/Org/").map_or(p, |(_, t)| t);
                (tail.to_string(), f["line"].as_u64().unwrap_or(0))
            })
            .collect();
        got.sort();
        got
    };
    let pol008 = |case: &str| found(case, "POL008");
    assert_eq!(pol008("agree"), Vec::<(String, u64)>::new());
    // The system's folder holds its own config script: its defaults
    // (`LR=${LR:-0.0002}`) are the run's, and a sibling folder's script of
    // another system that exports the logged value neither answers them
    // nor is to blame (Fujitsu's v4.1 SSD beside pytorch/).
    let own = "benchmarks/retinanet/implementations/example_system/config_example_system_1x8x32.sh";
    assert_eq!(
        pol008("own_script"),
        vec![
            (own.to_string(), 5),
            (own.to_string(), 6),
            (
                "results/example_system/retinanet/result_0.txt".to_string(),
                15
            ),
            (
                "results/example_system/retinanet/result_1.txt".to_string(),
                16
            ),
        ]
    );
    // Unless it sources that script first, which sets LR: the default is
    // never taken.
    assert_eq!(pol008("own_script_sources"), Vec::<(String, u64)>::new());
    // The system's run_and_time.sh reads ${LR:-0.0004}, and a config in no
    // system's folder (pytorch/config_vendor.sh) exports the logged value:
    // the default is not the run's.
    assert_eq!(pol008("sourced"), Vec::<(String, u64)>::new());
    // The same system folder (a run script, no config script) beside the
    // one config script of the runs' scale in no system's folder: that
    // script is the run's, and its own WEIGHT_DECAY=0.01 contradicts the
    // logged 0.0.
    assert_eq!(
        pol008("sourced_own"),
        vec![
            (
                "benchmarks/retinanet/implementations/pytorch/config_vendor.sh".to_string(),
                6
            ),
            (
                "results/example_system/retinanet/result_0.txt".to_string(),
                16
            ),
        ]
    );
    // The config the run sources reads a script the package lacks
    // (`source $(dirname ...)/hyperparameters_2048.sh`), which may set LR:
    // the default `${LR:=0.0004}` is not compared. With the script there
    // (setting no LR) and `/etc/profile` the system's, it is.
    assert_eq!(pol008("source_missing"), Vec::<(String, u64)>::new());
    // The one config script beside the system's folder (with the file it
    // sources) sets LR=0.0002: whichever way the run sourced it, the
    // system script's default 0.0001 is not the run's value, and the
    // logged 0.0001 contradicts the config: at the flag that reads LR and
    // at the line that gives LR its value.
    assert_eq!(
        pol008("sourced_overrides"),
        vec![
            (
                "benchmarks/retinanet/implementations/example_system/run_and_time.sh".to_string(),
                3
            ),
            (
                "benchmarks/retinanet/implementations/pytorch/config_vendor.sh".to_string(),
                5
            ),
            (
                "results/example_system/retinanet/result_0.txt".to_string(),
                15
            ),
        ]
    );
    // The system's folder holds a README alone; pytorch/ keeps one config
    // script per scale. The runs logged no accumulation: the 1x8x32x1
    // script is theirs (with the common script it sources), its LR 0.0002
    // contradicts the logged 0.0001, and the 1x8x16x2 script's 0.0001 is
    // another scale's and answers nothing. With the two values the other
    // way round, quiet.
    let scripts = "benchmarks/retinanet/implementations/pytorch/";
    // A POL008 at a config line of pytorch/ and at the first run's
    // learning-rate line (15) of a system.
    let config_and_log = |config: &str, line: u64, system: &str| {
        vec![
            (format!("{scripts}{config}"), line),
            (format!("results/{system}/retinanet/result_0.txt"), 15),
        ]
    };
    assert_eq!(
        pol008("per_scale"),
        vec![
            (format!("{scripts}config_X_1x8x32x1.sh"), 5),
            (format!("{scripts}run_and_time.sh"), 3),
            (
                "results/example_system/retinanet/result_0.txt".to_string(),
                15
            ),
        ]
    );
    assert_eq!(pol008("per_scale_agree"), Vec::<(String, u64)>::new());
    // A script that gives the global batch only as nodes x GPUs per node
    // (in the file it sources) x batch per GPU: 4 x 8 x 16 is another
    // scale than the logged 256, so its LR answers nothing and the runs'
    // 1 x 8 x 32 script is to blame (NVIDIA's HPC DeepCAM scripts).
    assert_eq!(
        pol008("product_scale"),
        vec![
            (format!("{scripts}config_X_1x8x32.sh"), 7),
            (format!("{scripts}run_and_time.sh"), 3),
            (
                "results/example_system/retinanet/result_0.txt".to_string(),
                15
            ),
        ]
    );
    // With tensor parallelism set, the product is not the global batch:
    // the script may be the runs', and its LR answers the log.
    assert_eq!(pol008("product_scale_unless"), Vec::<(String, u64)>::new());
    // Runs that log their node count (HPC): the script of another node
    // count is another run's even at the same global batch; the file the
    // scripts source is part of each, not a script of its own; and what
    // it assigns, the runs' script assigns again after sourcing it (HPE's
    // OpenFold config_pm_224x4x1x4_dap.sh over config_pm_common.sh).
    assert_eq!(
        pol008("node_scale"),
        vec![
            (format!("{scripts}config_X_2x8x16.sh"), 6),
            (format!("{scripts}run_and_time.sh"), 3),
            (
                "results/example_system/retinanet/result_0.txt".to_string(),
                15
            ),
        ]
    );
    assert_eq!(pol008("node_scale_agree"), Vec::<(String, u64)>::new());
    // Two systems and no folder of either: the script of one system's
    // node count and not the other's is that system's, with the YAML its
    // CONFIG_FILE names (NVIDIA's HPC CosmoFlow); when both systems' runs
    // log that node count, it is neither's.
    assert_eq!(
        pol008("node_pick"),
        config_and_log("run_2x8x16.yaml", 2, "example_system")
    );
    assert_eq!(pol008("node_pick_shared"), Vec::<(String, u64)>::new());
    // A YAML of named configs that run_and_time.sh picks from with
    // `--config NAME` (Graphcore's configs.yml): of the picked blocks,
    // the one of a system's scale (replicas x batch size: 16 x 16 = 256
    // for example_system, 32 x 16 for other_system) is its runs'. Its
    // abs_learning_rate 0.0002 contradicts the logged 0.0001, though a
    // block no launcher picks gives 0.0001; the 32-replica block merges
    // the 16's and sets its own 0.0001, which other_system logs.
    assert_eq!(
        pol008("named_pick"),
        config_and_log("configs.yml", 13, "example_system")
    );
    assert_eq!(pol008("named_pick_agree"), Vec::<(String, u64)>::new());
    // Two config scripts of the runs' scale: NVIDIA's, and the system's
    // own named after it (ASUSTeK's config_ESC_N8_H200.sh beside
    // config_DGXH200_1x8x2048.sh). The system's is the runs': its LR
    // 0.0002 contradicts the logged 0.0001, which NVIDIA's gives; the
    // other way round, NVIDIA's value is not blamed.
    let mut expected = config_and_log("config_EXAMPLE_SYSTEM_8GPU.sh", 5, "example_system");
    expected.insert(1, (format!("{scripts}run_and_time.sh"), 3));
    assert_eq!(pol008("system_named"), expected);
    assert_eq!(pol008("system_named_agree"), Vec::<(String, u64)>::new());
    // Two systems and no folder of theirs; the configs are named after
    // them (Graphcore's v1.1 BERT configs/mk2/pod16-closed.json for system
    // ipu-pod16-POPART-closed): each is its system's runs'. pod16's
    // init_lr 0.0002 contradicts the logged 0.0001; pod64's agrees.
    assert_eq!(
        pol008("system_config"),
        config_and_log("configs/pod16-closed.json", 2, "ex-pod16-closed")
    );
    assert_eq!(pol008("system_config_agree"), Vec::<(String, u64)>::new());
    // The run's script sources `config_common_bs_${BATCHSIZE}.sh` after
    // `BATCHSIZE=32` (NVIDIA's v5.1 Flux config_common_gbs_*.sh): the bs_32
    // file is part of it and its LR 0.0002 contradicts the logged 0.0001,
    // though bs_64 (another batch's) gives 0.0001; the other way round,
    // bs_64's value is not blamed. config_mounts.sh, which gives no
    // scale, does not make the run's script one of several.
    let mut expected = config_and_log("config_common_bs_32.sh", 2, "example_system");
    expected.insert(1, (format!("{scripts}run_and_time.sh"), 2));
    assert_eq!(pol008("sourced_family"), expected);
    assert_eq!(pol008("sourced_family_agree"), Vec::<(String, u64)>::new());
    // Warmup in epochs and the optimizer's momentum are compared with the
    // log (opt_learning_rate_warmup_epochs 1, opt_momentum 0.9); a
    // normalization's nested momentum (0.1) is not the optimizer's.
    assert_eq!(
        pol008("epochs_momentum"),
        vec![
            (format!("{scripts}config_DGXH100_1x8x32.sh"), 5),
            (format!("{scripts}config_DGXH100_1x8x32.sh"), 6),
            // --warmup-epochs and --momentum, on one launcher line.
            (format!("{scripts}run_and_time.sh"), 2),
            (format!("{scripts}run_and_time.sh"), 2),
            (
                "results/example_system/retinanet/result_0.txt".to_string(),
                17
            ),
            (
                "results/example_system/retinanet/result_0.txt".to_string(),
                18
            ),
        ]
    );
    assert_eq!(pol008("epochs_momentum_agree"), Vec::<(String, u64)>::new());
    // NVIDIA's LLM scripts give their scale as nodes x GPUs / (tensor x
    // context parallel) x MINIBS: 32 x 4 / 4 x 8 = 256, the logged global
    // batch. The 1024 script is another scale's, and so is the common
    // file only it sources (config_common_big.sh's WEIGHT_DECAY=0.05,
    // like v5.1 llama31_8b's config_common_405b.sh); the run's own
    // WEIGHT_DECAY=0.1 contradicts the logged 0.0.
    assert_eq!(
        pol008("model_parallel"),
        vec![
            (format!("{scripts}config_X_32x4x8xtp1cp4.sh"), 9),
            (
                "results/example_system/retinanet/result_0.txt".to_string(),
                16
            ),
        ]
    );
    assert_eq!(pol008("model_parallel_agree"), Vec::<(String, u64)>::new());
    // Two systems, their scripts in no system's folder (Lenovo's v5.0
    // RetinaNet): 1 x 8 x 32 is the B200 runs' global batch of 256 and
    // not the H200 runs' 512, and the script names their accelerator, so
    // its LR 0.0002 contradicts their logged 0.0001. A script of another
    // accelerator (config_DGXH100_*) is not tied to them by its batch.
    assert_eq!(
        pol008("batch_pick"),
        vec![
            (format!("{scripts}config_DGXB200_1x8x32.sh"), 6),
            ("results/ex-8xB200/retinanet/result_0.txt".to_string(), 15),
        ]
    );
    assert_eq!(
        pol008("batch_pick_accelerator"),
        Vec::<(String, u64)>::new()
    );
    // The block no launcher picks is another model's: its RMSprop is no
    // POL007 (the picked blocks' adam is the reference).
    for case in ["named_pick", "named_pick_agree"] {
        assert_eq!(found(case, "POL007"), Vec::<(String, u64)>::new(), "{case}");
    }
    // The system's folder holds a README and a description of the
    // implementation (a JSON named after the system, Inspur's v0.7
    // `nf5488_pytorch_implementation_closed.json`) or an empty one (LBNL's
    // hpc-v1.0 OC20): neither is a config. The benchmark's one config script
    // is the runs', and its WEIGHT_DECAY=0.01 contradicts the logged 0.0.
    for case in ["described", "empty_description"] {
        assert_eq!(
            pol008(case),
            vec![
                (format!("{scripts}config_vendor.sh"), 6),
                (format!("{scripts}run_and_time.sh"), 2),
                (
                    "results/example_system/retinanet/result_0.txt".to_string(),
                    16
                ),
            ],
            "{case}"
        );
    }
    let own = "benchmarks/retinanet/implementations/example_system/run_and_time.sh";
    assert_eq!(
        pol008("source_present"),
        vec![
            (own.to_string(), 3),
            (own.to_string(), 4),
            (
                "results/example_system/retinanet/result_0.txt".to_string(),
                15
            ),
        ]
    );
    // A learning rate given per 2048 samples, which the run scales by its
    // global batch (Google's TF DLRM): the same setting.
    assert_eq!(pol008("per_samples"), Vec::<(String, u64)>::new());
    // A config script of another scale (GBS=1024 where the runs log 256)
    // is another run's: its LR is not compared; one at the runs' own
    // batch size is.
    assert_eq!(pol008("other_scale"), Vec::<(String, u64)>::new());
    let own = "benchmarks/retinanet/implementations/example_system/";
    assert_eq!(
        pol008("same_scale"),
        vec![
            (format!("{own}config_example_system_1x.sh"), 4),
            (
                "results/example_system/retinanet/result_0.txt".to_string(),
                15
            ),
        ]
    );
    // A folder named after the system with more after it is the system's
    // (AMD's <SYSTEM>_llama2_70b); its one config script's LR overrides the
    // YAML's ${oc.env:LR,...} default; test data is no run's config.
    let sfx = "benchmarks/retinanet/implementations/example_system_retinanet/";
    let log = "results/example_system/retinanet/result_0.txt".to_string();
    assert_eq!(
        pol008("suffixed"),
        vec![
            (format!("{sfx}config_example_system.sh"), 6),
            (format!("{sfx}train.yaml"), 2),
            (log, 15),
        ]
    );
    let got = pol008("contradict");
    let cfg = "benchmarks/retinanet/implementations/example_system/";
    let mut want: Vec<(String, u64)> = vec![
        (format!("{cfg}config_example_system.sh"), 4),
        (format!("{cfg}config_example_system.sh"), 5),
        (format!("{cfg}train.yaml"), 2),
        // An .ini-like file of `export` lines: the later value is the run's.
        (format!("{cfg}defaults.cfg"), 3),
    ];
    // Once per folder and key, at the first run (the message counts the others).
    let log = "results/example_system/retinanet/result_0.txt".to_string();
    want.push((log.clone(), 14));
    want.push((log.clone(), 15));
    want.push((log, 16));
    want.sort();
    assert_eq!(got, want);
}

/// Issue 16, item 3 (POL009): a config of the package's own implementation
/// that sets a fixed hyperparameter (llama2_70b_lora's weight decay, LoRA
/// alpha and rank and gradient clipping, llama31_405b's end learning rate) to
/// another value, in a shell config, a NeMo or MaxText YAML or command-line flags, is
/// a warning once per file and key (also where only another option of the
/// same Hydra config group gives the reference: a run composes one of
/// them). Quiet: the reference in another form,
/// a default the system's config overrides with the reference, unresolved
/// variables and words, a vendored framework copy, a checkpoint's config.
#[test]
fn fixed_hyperparameters_set_in_configs() {
    let r = rules("5.0.0");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policy/config_fixed/Org");
    let sub = mlaudit::discover::discover(&root);
    let found = check_configs(&r, &sub.implementation_files);
    let others: Vec<&Finding> = found.iter().filter(|f| f.code != "POL009").collect();
    let pol009: Vec<&Finding> = found.iter().filter(|f| f.code == "POL009").collect();
    assert!(others.iter().all(|f| f.code != "POL008"), "{others:#?}");
    assert!(pol009.iter().all(
        |f| f.severity == Severity::Warning && f.help.as_deref().is_some_and(|h| !h.is_empty())
    ));
    let got: BTreeSet<(String, u64)> = pol009
        .iter()
        .map(|f| (tail(&f.path), f.line.unwrap_or(0)))
        .collect();
    let lora = "llama2_70b_lora/implementations/";
    let want: BTreeSet<(String, u64)> = [
        ("wrong_shell/config_common.sh", 2),
        ("wrong_shell/config_common.sh", 3),
        ("wrong_shell/config_common.sh", 4),
        ("wrong_shell/config_common.sh", 6),
        ("wrong_yaml/conf/peft.yaml", 3),
        ("wrong_yaml/conf/peft.yaml", 7),
        ("wrong_yaml/conf/peft.yaml", 8),
        ("wrong_yaml/conf/peft.yaml", 11),
        ("wrong_flags/run.sh", 4),
        ("wrong_flags/run.sh", 5),
        ("wrong_flags/run.sh", 6),
        ("wrong_flags/run.sh", 7),
        ("wrong_maxtext/base.yml", 5),
        ("wrong_maxtext/base.yml", 6),
        ("shadowed/conf/peft.yaml", 4),
        ("shadowed/config_SYS_1x8x1.sh", 1),
        // A script's later assignment replaces its earlier one.
        ("reassigned/config_SYS_1x8x1.sh", 4),
        ("reassigned/config_SYS_1x8x1.sh", 5),
        ("group_options/conf/optim/sweep.yaml", 5),
        // Shell defaults the run's environment holds (`X=${X:-d}`,
        // `: "${X:=d}"`) beat a YAML's `${oc.env:X,reference}`.
        ("shell_defaults/config_SYS_1x8x1.sh", 1),
        ("shell_defaults/config_SYS_1x8x1.sh", 2),
        ("shell_defaults/conf/peft.yaml", 4),
        ("shell_defaults/conf/peft.yaml", 7),
        // An anchored value, and an alias of one.
        ("yaml_anchors/conf/peft.yaml", 5),
        ("yaml_anchors/conf/peft.yaml", 8),
        // What answers for what (POL009): a group option the only
        // composing primary config leaves as it is; one primary config
        // beside another; a command line's override over the YAML.
        ("hydra_composed/conf/optim/fused_adam.yaml", 4),
        ("primaries_one_folder/conf/train_encoded.yaml", 5),
        ("shell_over_yaml/run_and_time.sh", 2),
        // One YAML or JSON file does not answer for another: MaxText's
        // model file overrides base.yml; a DeepSpeed config beside NeMo's
        // is the one DeepSpeed reads (a config under scripts/, a helper
        // program's, is answered: `elsewhere`).
        ("model_over_base/configs/models/llama2-70b.yml", 2),
        ("beside_nemo/deepspeed/ds_config.json", 3),
        // Fiddle's `--fdl_set=path=v` on a continued line and `--fdl.path=v`;
        // a gin binding written with spaces.
        ("jax_flags/run.sh", 4),
        ("jax_flags/run.sh", 5),
        ("jax_flags/run.sh", 6),
        // The rules table's sequence length.
        ("wrong_seq/config_SYS_1x8x1.sh", 1),
        // A structured config's file stands for a section: PEFT's
        // adapter_config.json is the LoRA adapter's (a top-level r is its
        // rank); a Hydra group's folder is the key it is loaded under.
        ("peft_adapter/adapter_config.json", 4),
        ("hydra_group/conf/optim/adamw.yaml", 3),
    ]
    .into_iter()
    .map(|(p, l)| (format!("{lora}{p}"), l))
    .chain([
        (
            "llama31_405b/implementations/wrong/conf/custom.yaml".to_string(),
            5,
        ),
        // The pack pins the schedule to a word: NeMo's WarmupAnnealing and
        // Megatron's WSD name others (CosineAnnealing, `right/`, is it).
        (
            "llama31_405b/implementations/wrong_sched/conf/custom.yaml".to_string(),
            4,
        ),
        (
            "llama31_405b/implementations/wrong_sched/run.sh".to_string(),
            2,
        ),
        // Pinned by the DLRM pack: the decay's start; HugeCTR's AdaGrad
        // epsilon. The reference's Adam betas of RetinaNet.
        (
            "dlrm_dcnv2/implementations/hugectr/config_SYS.sh".to_string(),
            3,
        ),
        (
            "dlrm_dcnv2/implementations/hugectr/solver.json".to_string(),
            2,
        ),
        (
            "retinanet/implementations/pytorch/optimizer.yaml".to_string(),
            3,
        ),
    ])
    .collect();
    assert_eq!(got, want, "{pol009:#?}");
    assert_eq!(pol009.len(), want.len(), "one finding per file and key");
    // T5X's `--gin.OPTIMIZER=@adafactor.Adafactor()` names the optimizer;
    // `@optax.adamw` is the reference.
    let pol007: Vec<(String, u64)> = others
        .iter()
        .filter(|f| f.code == "POL007" && f.path.contains("jax_flags"))
        .map(|f| (tail(&f.path), f.line.unwrap_or(0)))
        .collect();
    assert_eq!(
        pol007,
        [(format!("{lora}jax_flags/run.sh"), 7)],
        "{others:#?}"
    );
    let msg = |path: &str, line: u64| {
        pol009
            .iter()
            .find(|f| tail(&f.path) == format!("{lora}{path}") && f.line == Some(line))
            .map(|f| (f.message.clone(), f.rule.clone().unwrap_or_default()))
            .unwrap_or_default()
    };
    assert_eq!(
        msg("wrong_shell/config_common.sh", 2).0,
        "WEIGHT_DECAY=0.01: config_common.sh:2 sets opt_adamw_weight_decay to 0.01; the reference of llama2_70b_lora is 0.0001 and no config of the implementation gives it"
    );
    assert!(msg("wrong_shell/config_common.sh", 2)
        .1
        .ends_with("policy.yaml#benchmarks.llama2_70b_lora.fixed.opt_adamw_weight_decay"));
    assert_eq!(
        msg("wrong_flags/run.sh", 4).0,
        "--lora_alpha 16: run.sh:4 sets lora_alpha to 16; the reference of llama2_70b_lora is 32 and no config of the implementation gives it"
    );
    // Pinned by the compliance pack (`v.value == 16`): an integer, said so.
    assert_eq!(
        msg("wrong_yaml/conf/peft.yaml", 8).0,
        "adapter_dim: 8: peft.yaml:8 sets lora_rank to 8; the reference of llama2_70b_lora is 16 and no config of the implementation gives it"
    );
    assert_eq!(
        msg("group_options/conf/optim/sweep.yaml", 5).0,
        "weight_decay: 0.01: sweep.yaml:5 sets opt_adamw_weight_decay to 0.01; the reference of llama2_70b_lora is 0.0001 and only fused_adam.yaml:4, another option of its config group, gives it"
    );
    assert_eq!(
        msg("primaries_one_folder/conf/train_encoded.yaml", 5).0,
        "weight_decay: 0.01: train_encoded.yaml:5 sets opt_adamw_weight_decay to 0.01; the reference of llama2_70b_lora is 0.0001 and only train.yaml:3 gives it, and a run may read this config rather than that one, or this one overrides it"
    );
    assert_eq!(
        msg("shadowed/conf/peft.yaml", 4).0,
        "weight_decay: ${oc.decode:${oc.env:WEIGHT_DECAY,0.0001}}: peft.yaml:4 sets opt_adamw_weight_decay to 0.01; the reference of llama2_70b_lora is 0.0001 and no config of the implementation gives it"
    );
    // Rounds without fixed values for the benchmark say nothing (3.1.0
    // has no LoRA, 405B or RetinaNet policy; its DLRM pack pins the same).
    let old = check_configs(&rules("3.1.0"), &sub.implementation_files);
    let pol009: Vec<String> = old
        .iter()
        .filter(|f| f.code == "POL009")
        .map(|f| tail(&f.path))
        .collect();
    assert_eq!(
        pol009,
        vec![
            "dlrm_dcnv2/implementations/hugectr/config_SYS.sh".to_string(),
            "dlrm_dcnv2/implementations/hugectr/solver.json".to_string()
        ],
        "{old:#?}"
    );
}

/// flux1's pack pins evaluation_frequency (samples between evaluations,
/// NVIDIA's VAL_CHECK_INTERVAL): a system config that assigns another
/// value is POL009, though config_common.sh keeps the reference as its
/// default (`X=${X:-262144}` keeps whatever the system config assigns).
#[test]
fn a_script_default_does_not_answer_for_an_assignment() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policy/config_fixed/Org");
    let sub = mlaudit::discover::discover(&root);
    let found = check_configs(&rules("5.1.0"), &sub.implementation_files);
    let got: Vec<(String, u64)> = found
        .iter()
        .filter(|f| f.code == "POL009" && f.path.contains("flux1"))
        .map(|f| (tail(&f.path), f.line.unwrap_or(0)))
        .collect();
    assert_eq!(
        got,
        [(
            "flux1/implementations/wrong/config_SYS_18x04x32.sh".to_string(),
            3
        )],
        "{found:#?}"
    );
}

/// A value the rules table fixes that no pack checks (llama31_8b's
/// dropout of 0, 5.1.0 on): a config that gives another is POL009.
#[test]
fn rules_table_dropout_set_in_configs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policy/config_fixed/Org");
    let sub = mlaudit::discover::discover(&root);
    let found = check_configs(&rules("5.1.0"), &sub.implementation_files);
    let got: Vec<(String, u64, String)> = found
        .iter()
        .filter(|f| f.code == "POL009" && f.path.contains("llama31_8b"))
        .map(|f| (tail(&f.path), f.line.unwrap_or(0), f.message.clone()))
        .collect();
    assert_eq!(
        got,
        [(
            "llama31_8b/implementations/dropout/conf/llama3_8b.yaml".to_string(),
            4,
            "hidden_dropout: 0.1: llama3_8b.yaml:4 sets dropout to 0.1; the reference of llama31_8b is 0.0 and only attention_dropout: 0.0 (line 5), another setting of the same file, gives it".to_string()
        ),
        (
            "llama31_8b/implementations/seq_length/conf/llama3_8b.yaml".to_string(),
            4,
            "encoder_seq_length: 4096: llama3_8b.yaml:4 sets max_sequence_length to 4096; the reference of llama31_8b is 8192 and no config of the implementation gives it".to_string()
        )]
    );
}

/// Variables resolve within one implementation (and the files shared by
/// every implementation of the benchmark): a YAML sees what its own
/// implementation's shell configs export, never another implementation's.
#[test]
fn variables_resolve_within_their_implementation() {
    let r = rules("5.1.0");
    let dir = tempfile::tempdir().expect("tempdir");
    let files: Vec<ImplFile> = [
        (
            "a/config_a.sh",
            "export MODE=async\nexport BYTEPS_ENABLE_ASYNC=1\n",
        ),
        ("a/bagua.yaml", "algorithm: ${oc.env:MODE}\n"),
        ("b/bagua.yaml", "algorithm: ${oc.env:MODE}\n"),
        ("b/bagua2.yaml", "algorithm: ${oc.env:SHARED_MODE}\n"),
        (
            "c/config_c.sh",
            "export BYTEPS_ENABLE_ASYNC=${BYTEPS_ENABLE_ASYNC:-0}\n",
        ),
        ("common.sh", "export SHARED_MODE=decentralized\n"),
    ]
    .iter()
    .map(|(rel, text)| {
        let fs = dir.path().join(rel.replace('/', "_"));
        std::fs::write(&fs, text).expect("write");
        let implementation = rel.split_once('/').map(|(i, _)| i.to_string());
        ImplFile {
            benchmark: "llama31_8b".into(),
            implementation,
            file: FileRef {
                path: format!("Org/benchmarks/llama31_8b/implementations/{rel}"),
                fs,
            },
        }
    })
    .collect();
    let found = check_configs(&r, &files);
    let got: Vec<String> = found
        .iter()
        .map(|f| {
            let p = f.path.rsplit("implementations/").next().unwrap_or("");
            format!("{p}:{} {}", f.line.unwrap_or(0), f.code)
        })
        .collect();
    assert_eq!(
        got,
        [
            "a/bagua.yaml:1 POL011",
            "a/config_a.sh:2 POL011",
            "b/bagua2.yaml:1 POL012"
        ],
        "{found:#?}"
    );
}

/// Issue 16, item 3 (POL009): the values configs are compared with are
/// the rules table's (`fixed:`), the reference's own where the table does
/// not make them tunable (`reference:`: llama2_70b_lora's AdamW betas and
/// epsilon, LoRA's dropout) and those the benchmark's closed compliance
/// pack pins in logs (llama31_8b's beta2 and epsilon), in every form a
/// config gives them: torch's `betas` list (flow, block, JSON array),
/// Hugging Face flags, NeMo's `lora_tuning.adapter_dropout`. Quiet: the
/// reference's values in any of those forms, a model's own dropout.
#[test]
fn reference_values_set_in_configs() {
    let r = rules("5.1.0");
    let root =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policy/config_reference/Org");
    let sub = mlaudit::discover::discover(&root);
    let found = check_configs(&r, &sub.implementation_files);
    let pol009: Vec<&Finding> = found.iter().filter(|f| f.code == "POL009").collect();
    let got: BTreeSet<(String, u64, String)> = pol009
        .iter()
        .map(|f| {
            let key = f
                .message
                .split(" sets ")
                .nth(1)
                .and_then(|m| m.split(' ').next())
                .unwrap_or_default()
                .to_string();
            (tail(&f.path), f.line.unwrap_or(0), key)
        })
        .collect();
    let lora = "llama2_70b_lora/implementations/";
    let want: BTreeSet<(String, u64, String)> = [
        ("betas_yaml/conf/peft.yaml", 7, "lora_dropout"),
        ("betas_yaml/conf/peft.yaml", 11, "opt_adamw_beta_2"),
        ("betas_block/conf.yaml", 3, "opt_adamw_beta_2"),
        ("betas_json/ds_config.json", 6, "opt_adamw_beta_1"),
        ("hf_flags/run.sh", 3, "opt_adamw_beta_2"),
        ("hf_flags/run.sh", 4, "opt_adamw_epsilon"),
        ("hf_flags/run.sh", 5, "lora_dropout"),
        ("eps_nemo/conf/optim.yaml", 8, "opt_adamw_epsilon"),
    ]
    .into_iter()
    .map(|(p, l, k)| (format!("{lora}{p}"), l, k.to_string()))
    .chain([
        (
            "llama31_8b/implementations/wrong/config.yaml".to_string(),
            4,
            "opt_adamw_beta_2".to_string(),
        ),
        (
            "llama31_8b/implementations/wrong/config.yaml".to_string(),
            5,
            "opt_adamw_epsilon".to_string(),
        ),
    ])
    .collect();
    assert_eq!(got, want, "{pol009:#?}");
    assert!(pol009.iter().all(|f| f.severity == Severity::Warning));
    let rule_of = |path: &str, line: u64| {
        pol009
            .iter()
            .find(|f| tail(&f.path) == path && f.line == Some(line))
            .and_then(|f| f.rule.clone())
            .unwrap_or_default()
    };
    assert!(
        rule_of(&format!("{lora}betas_block/conf.yaml"), 3)
            .ends_with("policy.yaml#benchmarks.llama2_70b_lora.reference.opt_adamw_beta_2"),
        "{pol009:#?}"
    );
    assert!(
        rule_of("llama31_8b/implementations/wrong/config.yaml", 4)
            .ends_with("compliance/closed_llama31_8b.yaml#opt_adamw_beta_2"),
        "{pol009:#?}"
    );
    let msg = pol009
        .iter()
        .find(|f| tail(&f.path) == format!("{lora}betas_yaml/conf/peft.yaml") && f.line == Some(11))
        .map(|f| f.message.clone())
        .unwrap_or_default();
    assert_eq!(
        msg,
        "betas: [0.9, 0.95]: peft.yaml:11 sets opt_adamw_beta_2 to 0.95; the reference of llama2_70b_lora is 0.999 and no config of the implementation gives it"
    );
    // A block list reads as its items.
    let block = pol009
        .iter()
        .find(|f| tail(&f.path) == format!("{lora}betas_block/conf.yaml"))
        .map(|f| f.message.clone())
        .unwrap_or_default();
    assert!(
        block.starts_with("betas: [0.9, 0.98]: conf.yaml:3 sets opt_adamw_beta_2 to 0.98;"),
        "{block}"
    );
}

/// Shell settings under a condition (issue 16, item 4: a setting that is
/// off, or whose default is off, is quiet): `if`/`else`/`fi`, one-line
/// `if ...; fi` and `[ ... ] && ...` over one variable are off when no
/// value the implementation's configs give the variable makes the
/// condition true, and found when one does; a variable nothing gives and
/// an `elif` branch are on.
#[test]
fn settings_under_a_shell_condition() {
    let r = rules("5.0.0");
    let off = check_configs(&r, &impl_files("guard_off"));
    assert!(off.is_empty(), "{off:#?}");
    let on = check_configs(&r, &impl_files("guard_on"));
    let got: BTreeSet<String> = keyed(&on)
        .into_iter()
        .filter(|k| k.starts_with("guard_on/run.sh:"))
        .collect();
    let want: BTreeSet<String> = [
        // USE_POWERSGD=${USE_POWERSGD:-0}, which config_SYS.sh sets to 1.
        "guard_on/run.sh:4 POL014",
        "guard_on/run.sh:5 POL014",
        "guard_on/run.sh:7 POL012",
        "guard_on/run.sh:9 POL011",
        "guard_on/run.sh:13 POL011",
        "guard_on/run.sh:16 POL011",
        "guard_on/run.sh:21 POL010",
    ]
    .into_iter()
    .map(str::to_string)
    .collect();
    assert_eq!(got, want, "{on:#?}");
}

/// A folder named like a vendored framework tree (`nemo`) that holds the
/// implementation's own run scripts is the implementation's framework
/// folder (v5.1 GigaComputing: `implementations/MI355X/nemo/`; a
/// `megatron/train_*.sh` launch script): a
/// forbidden setting there, or below it, keeps its full severity. A NeMo
/// clone inside it, or beside another implementation's run script, is
/// still vendored: the same setting there is a note.
#[test]
fn a_framework_folder_with_run_scripts_is_not_vendored() {
    let r = rules("5.1.0");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policy/vendored/Org");
    let sub = mlaudit::discover::discover(&root);
    let found = check_configs(&r, &sub.implementation_files);
    let got: BTreeSet<(String, String, Severity)> = found
        .iter()
        .map(|f| (tail(&f.path), f.code.to_string(), f.severity))
        .collect();
    let i = "llama31_8b/implementations/";
    let want: BTreeSet<(String, String, Severity)> = [
        ("MI355X/nemo/config_MI355X_1x8x1.sh", Severity::Error),
        ("MI355X/nemo/conf/train.yaml", Severity::Error),
        (
            "MI355X/nemo/NeMo/examples/conf/example.yaml",
            Severity::Note,
        ),
        (
            "B200/pytorch/NeMo/examples/conf/example.yaml",
            Severity::Note,
        ),
        // A launch script marks its folder too; an upstream one inside
        // a clone's examples/ is still a note.
        ("H100/megatron/train_llama31_8b.sh", Severity::Error),
        (
            "H100/Megatron-LM/examples/gpt3/train_gpt3_175b_distributed.sh",
            Severity::Note,
        ),
    ]
    .into_iter()
    .map(|(p, s)| (format!("{i}{p}"), "POL014".to_string(), s))
    .collect();
    assert_eq!(got, want, "{found:#?}");
}

/// Row-wise Adagrad (one accumulator per embedding row) named in a config
/// is another optimizer than dlrm_dcnv2's Adagrad (POL007), and the
/// sparse optimizer dlrmv4's rules name beside Adam (quiet).
#[test]
fn rowwise_adagrad_is_dlrmv4s_not_dlrm_dcnv2s() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pol007 = |ruleset: &str, bm: &str, dense: &str| -> Vec<(u64, Severity)> {
        let cfg = dir.path().join(format!("{bm}.yaml"));
        std::fs::write(
            &cfg,
            format!("dense:\n  optimizer: {dense}\nsparse:\n  optimizer: EmbOptimType.EXACT_ROWWISE_ADAGRAD\n"),
        )
        .expect("write");
        let files = vec![ImplFile {
            benchmark: bm.into(),
            implementation: Some("torchrec".into()),
            file: FileRef {
                path: format!("Org/benchmarks/{bm}/implementations/torchrec/train.yaml"),
                fs: cfg,
            },
        }];
        check_configs(&rules(ruleset), &files)
            .into_iter()
            .filter(|f| f.code == "POL007")
            .map(|f| (f.line.unwrap_or(0), f.severity))
            .collect()
    };
    assert_eq!(
        pol007("5.1.0", "dlrm_dcnv2", "adagrad"),
        vec![(4, Severity::Warning)]
    );
    assert_eq!(pol007("6.1.0", "dlrmv4", "adam"), Vec::new());
    // dlrmv4's dense optimizer is Adam: Adagrad there is another one.
    assert_eq!(
        pol007("6.1.0", "dlrmv4", "adagrad"),
        vec![(2, Severity::Warning)]
    );
}

/// DeepSpeed's 1-bit optimizers are Adam and LAMB with compressed
/// communication (POL014 always): against another reference they are
/// another optimizer too (POL007), against their own they are not.
#[test]
fn one_bit_optimizers_are_their_base_optimizer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let codes = |bm: &str, ty: &str| -> Vec<String> {
        let cfg = dir.path().join(format!("{bm}_{ty}.json"));
        std::fs::write(
            &cfg,
            format!(
                "{{\n  \"optimizer\": {{\"type\": \"{ty}\", \"params\": {{\"lr\": 0.001}}}}\n}}\n"
            ),
        )
        .expect("write");
        let files = vec![ImplFile {
            benchmark: bm.into(),
            implementation: Some("pytorch".into()),
            file: FileRef {
                path: format!("Org/benchmarks/{bm}/implementations/pytorch/ds_config.json"),
                fs: cfg,
            },
        }];
        let mut codes: Vec<String> = check_configs(&rules("4.1.0"), &files)
            .into_iter()
            .map(|f| format!("{} {:?}", f.code, f.severity))
            .collect();
        codes.sort();
        codes.dedup();
        codes
    };
    // BERT's reference is LAMB.
    assert_eq!(
        codes("bert", "OneBitAdam"),
        ["POL007 Warning", "POL014 Error"]
    );
    assert_eq!(
        codes("bert", "ZeroOneAdam"),
        ["POL007 Warning", "POL014 Error"]
    );
    assert_eq!(codes("bert", "OneBitLamb"), ["POL014 Error"]);
    // GPT-3's is Adam.
    assert_eq!(codes("gpt3", "OneBitAdam"), ["POL014 Error"]);
    assert_eq!(
        codes("gpt3", "OneBitLamb"),
        ["POL007 Warning", "POL014 Error"]
    );
}

/// AdamW is the reference of the LLM benchmarks, Adam of RetinaNet: apex
/// FusedAdam with `adam_w_mode` off, or torch.optim.Adam by its class
/// path, is Adam with L2 weight decay (another optimizer than AdamW, the
/// same as Adam); other vendor names are other updates.
#[test]
fn adam_with_l2_weight_decay_is_not_adamw() {
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).expect("write");
        p
    };
    let files = [
        (
            "fused_off.yaml",
            "optim:\n  name: fused_adam\n  adam_w_mode: False\n",
        ),
        (
            "fused_on.yaml",
            "optim:\n  name: fused_adam\n  adam_w_mode: true\n",
        ),
        (
            "torch_adam.yaml",
            "optimizer:\n  _target_: torch.optim.Adam\n",
        ),
        (
            "torch_adamw.yaml",
            "optimizer:\n  _target_: torch.optim.AdamW\n",
        ),
        ("vendor.yaml", "optimizer:\n  name: stable_adamw\n"),
        (
            "ds.json",
            "{\"optimizer\": {\"type\": \"Adam\", \"params\": {\"adam_w_mode\": false}}}\n",
        ),
    ]
    .map(|(n, t)| (n, write(n, t)));
    let pol007 = |bm: &str| -> Vec<String> {
        let impl_files: Vec<ImplFile> = files
            .iter()
            .map(|(n, p)| ImplFile {
                benchmark: bm.to_string(),
                implementation: Some("impl".into()),
                file: FileRef {
                    path: format!("Org/benchmarks/{bm}/implementations/impl/{n}"),
                    fs: p.clone(),
                },
            })
            .collect();
        let mut got: Vec<String> = check_configs(&rules("5.1.0"), &impl_files)
            .iter()
            .filter(|f| f.code == "POL007")
            .map(|f| {
                format!(
                    "{}:{}",
                    tail(&f.path).rsplit('/').next().unwrap_or(""),
                    f.line.unwrap_or(0)
                )
            })
            .collect();
        got.sort();
        got
    };
    assert_eq!(
        pol007("llama2_70b_lora"),
        [
            "ds.json:1",
            "fused_off.yaml:3",
            "torch_adam.yaml:2",
            "vendor.yaml:2"
        ]
    );
    // RetinaNet's Adam: Adam with L2 is the reference; AdamW is one with
    // it as far as a name tells (its weight decay is pinned at 0, where
    // the two are one update).
    assert_eq!(pol007("retinanet"), ["vendor.yaml:2"]);
}

/// Rounds before 5.0 fix values their packs pin (`v.value == N`), also in
/// a pack the closed one includes for the logged optimizer (ResNet's
/// `closed_resnet_lars.yaml`): LARS' end learning rate and epsilon, Mask
/// R-CNN's decay factor given as a yacs option in a shell string
/// (`SOLVER.GAMMA 0.5`), RNN-T's LAMB minimum learning rate, speed
/// perturbation and SpecAugment. `right/` gives the pinned values.
#[test]
fn older_rounds_fixed_values_set_in_configs() {
    let root =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policy/config_fixed_old/Org");
    let sub = mlaudit::discover::discover(&root);
    let found = check_configs(&rules("1.0.0"), &sub.implementation_files);
    let got: BTreeSet<(String, u64, String)> = found
        .iter()
        .filter(|f| f.code == "POL009")
        .map(|f| {
            let key = f
                .message
                .split(" sets ")
                .nth(1)
                .and_then(|m| m.split(" to ").next())
                .unwrap_or_default()
                .to_string();
            (tail(&f.path), f.line.unwrap_or(0), key)
        })
        .collect();
    let want: BTreeSet<(String, u64, String)> = [
        (
            "resnet/implementations/wrong/config_SYS.sh",
            2,
            "lars_opt_end_learning_rate",
        ),
        (
            "resnet/implementations/wrong/config_SYS.sh",
            3,
            "lars_epsilon",
        ),
        (
            "maskrcnn/implementations/wrong/config_SYS.sh",
            1,
            "opt_learning_rate_decay_factor",
        ),
        (
            "rnnt/implementations/wrong/run_and_time.sh",
            3,
            "opt_lamb_learning_rate_min",
        ),
        (
            "rnnt/implementations/wrong/configs/baseline.yaml",
            4,
            "data_speed_perturbaton_min",
        ),
        (
            "rnnt/implementations/wrong/configs/baseline.yaml",
            7,
            "data_spec_augment_freq_n",
        ),
    ]
    .into_iter()
    .map(|(p, l, k)| (p.to_string(), l, k.to_string()))
    .collect();
    assert_eq!(got, want, "{found:#?}");
}

/// Issue 16, item 3 (POL009): a closed pack's check of a value that pins
/// no single number, tried on the value a config gives: Mask R-CNN's base
/// learning rate a multiple of 0.02 (yacs options in NVIDIA's
/// EXTRA_CONFIG), ResNet's weight decay 0.0001 times a power of two,
/// Llama 3.1 405B's learning rate proportional to the global batch size of
/// the same script, DeepCAM's scheduler one of two (HPC). Quiet: values
/// the checks allow (`right/`), a library's YAML recipes, an open-division
/// system's implementation, a word the data does not know, a check that
/// reads a batch size no config gives. A word pinned with every other word
/// another value (`only:`, OpenFold's training set release date) is
/// POL009 too, as is a value the round policy's own check rejects
/// (ResNet's polynomial schedule: LRSCHED=cosine, or a list of step
/// boundaries a config sets, `LRSCHED="30,60,80"`; pow2 is it; a run
/// script's default of the boundaries, `LRSCHED=${LRSCHED:-"30,60,80"}`,
/// takes the config's value, alone or beside one; a YAML of other recipes
/// is not tried).
#[test]
fn pack_checks_tried_on_config_values() {
    let root =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policy/config_constraints/Org");
    let sub = mlaudit::discover::discover(&root);
    let mut got: Vec<(String, u64, String)> = Vec::new();
    for (usage, round) in [
        ("training", "1.0.0"),
        ("training", "5.0.0"),
        ("hpc", "1.0.0"),
        ("hpc", "3.0.0"),
    ] {
        let r = PolicyRules::load(&RuleSource::Embedded, usage, round).expect("policy rules load");
        let files: Vec<ImplFile> = sub
            .implementation_files
            .iter()
            .filter(|f| r.benchmarks.contains_key(f.benchmark.as_str()))
            .cloned()
            .collect();
        got.extend(
            check_configs(&r, &files)
                .iter()
                .filter(|f| f.code == "POL009")
                .map(|f| (tail(&f.path), f.line.unwrap_or(0), f.message.clone())),
        );
    }
    got.sort();
    let want = [
        (
            "deepcam/implementations/wrong/config_SYS.sh",
            3,
            "LR_SCHEDULE_TYPE=exponential: config_SYS.sh:3 sets scheduler_type to exponential, which the closed rules of deepcam do not allow: they require `v.value in ['multistep', 'cosine_annealing']`",
        ),
        // HPC 3.0 keeps DeepCAM's check.
        (
            "deepcam/implementations/wrong/config_SYS.sh",
            3,
            "LR_SCHEDULE_TYPE=exponential: config_SYS.sh:3 sets scheduler_type to exponential, which the closed rules of deepcam do not allow: they require `v.value in ['multistep', 'cosine_annealing']`",
        ),
        (
            "llama31_405b/implementations/wrong/config_SYS_64x8x4.sh",
            2,
            "LR=0.0003: config_SYS_64x8x4.sh:2 sets opt_base_learning_rate to 0.0003, which the closed rules of llama31_405b do not allow: they require `v.value * 1152 == s.global_batch_size * 8e-5` with global_batch_size 2304",
        ),
        (
            "maskrcnn/implementations/wrong/config_SYS.sh",
            1,
            "SOLVER.BASE_LR 0.15: config_SYS.sh:1 sets opt_base_learning_rate to 0.15, which the closed rules of maskrcnn do not allow: they require `is_integer(v.value / 0.02)`",
        ),
        (
            "openfold/implementations/wrong/config_SYS.sh",
            1,
            "TRAIN_MAX_PDB_RELEASE_DATE=2022-01-01: config_SYS.sh:1 sets train_max_pdb_release_date to 2022-01-01; the reference of openfold is \"2021-09-16\" and no config of the implementation gives it",
        ),
        // OpenFold's other pins, under their MLLOG names: the target and
        // the validation set's last date.
        (
            "openfold/implementations/wrong/config_SYS.sh",
            3,
            "TARGET_AVG_LDDT_CA_VALUE=0.75: config_SYS.sh:3 sets target_avg_lddt_ca_value to 0.75; the reference of openfold is 0.8 and no config of the implementation gives it",
        ),
        (
            "openfold/implementations/wrong/config_SYS.sh",
            4,
            "VAL_MAX_CAMEO_SUBMISSION_DATE=2022-06-30: config_SYS.sh:4 sets val_max_cameo_submission_date to 2022-06-30; the reference of openfold is \"2021-12-11\" and no config of the implementation gives it",
        ),
        // The round policy's own check (a schedule no run logs).
        (
            "resnet/implementations/cosine/config_SYS.sh",
            1,
            "LRSCHED=cosine: config_SYS.sh:1 sets opt_learning_rate_decay_schedule to cosine, which the closed rules of resnet do not allow: they require `v.value in ['polynomial', 'poly', 'polynomial_decay', 'pow2']`",
        ),
        (
            "resnet/implementations/step_list/config_SYS.sh",
            1,
            "LRSCHED=30,60,80: config_SYS.sh:1 sets opt_learning_rate_decay_schedule to 30,60,80, which the closed rules of resnet do not allow: they require `v.value in ['polynomial', 'poly', 'polynomial_decay', 'pow2']`",
        ),
        (
            "resnet/implementations/wrong/config_SYS.sh",
            3,
            "WD=3.0e-05: config_SYS.sh:3 sets lars_opt_weight_decay to 3.0e-05, which the closed rules of resnet do not allow: they require `is_integer(log2(v.value / 0.0001))`",
        ),
    ]
    .map(|(p, l, m)| (p.to_string(), l, m.to_string()));
    assert_eq!(got, want, "{got:#?}");
}

/// The rules fix where LoRA and Llama 3.1 8B evaluate (every 384 and 12288
/// sequences) and no run logs the interval: a config script that sets
/// another number of samples between evaluations is POL009 (NVIDIA's
/// LoRA VAL_CHECK_INTERVAL, AMD's 8B EVAL_EVERY). NVIDIA's 8B
/// VAL_CHECK_INTERVAL counts steps and is not read as samples.
#[test]
fn a_config_that_moves_the_evaluations_is_pol009() {
    let root =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policy/eval_interval/Org");
    let sub = mlaudit::discover::discover(&root);
    let found = check_configs(&rules("5.1.0"), &sub.implementation_files);
    let got: Vec<(String, u64)> = found
        .iter()
        .filter(|f| f.code.starts_with("POL"))
        .map(|f| (tail(&f.path), f.line.unwrap_or(0)))
        .collect();
    assert_eq!(
        got,
        [
            (
                "llama2_70b_lora/implementations/samples_768/config_SYS_1x8x1.sh".to_string(),
                5
            ),
            (
                "llama31_8b/implementations/eval_every_24576/config_SYS_1x8x1_8b.sh".to_string(),
                4
            )
        ],
        "{found:#?}"
    );
}

/// A config that names its division `open` (Graphcore's v1.1
/// `pod16-open.json`, beside the closed systems' configs in one folder)
/// is an open-division system's: the closed rules' findings are not
/// reported on it (the same optimizer in the closed config is POL007);
/// its repeatability settings still are.
#[test]
fn a_config_that_says_it_is_open_is_not_held_to_closed_rules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policy/open_config/Org");
    let sub = mlaudit::discover::discover(&root);
    let found = check_configs(&rules("1.1.0"), &sub.implementation_files);
    let got: Vec<(String, String)> = found
        .iter()
        .map(|f| (tail(&f.path), f.code.to_string()))
        .collect();
    let file = |n: &str| format!("bert/implementations/popart/configs/mk2/{n}");
    assert!(
        got.contains(&(file("pod16-closed.json"), "POL007".to_string())),
        "{found:#?}"
    );
    assert!(
        got.iter()
            .filter(|(p, _)| *p == file("pod16-open.json"))
            .all(|(_, c)| c == "POL050"),
        "{found:#?}"
    );
    assert!(
        got.contains(&(file("pod16-open.json"), "POL050".to_string())),
        "{found:#?}"
    );
}
