//! Rule expressions in user packs (`--rules DIR`) are sandboxed: they cannot
//! reach files or the network (the language has no such function, and names
//! other than `v`, `s` and the listed functions are refused when the pack
//! loads), and their evaluation is bounded (fuel), so no pack can hang the
//! tool or blow its stack.

use minijinja::Value;
use mlaudit::check::rules::expr::{compile, CompileError, MAX_EXPR_BYTES, MAX_UNARY_RUN};
use std::time::{Duration, Instant};

fn eval(src: &str) -> Result<Value, String> {
    let e = compile(src, &|_| true).map_err(|e| format!("compile: {e}"))?;
    let v = Value::from_serialize(serde_json::json!({"value": 1, "metadata": {"a": 1}}));
    e.eval(minijinja::context! { v => v, s => Value::from(()) })
        .map_err(|e| format!("eval: {e}"))
}

/// Evaluates `src` and checks it ends quickly (a generous bound: this is a
/// hang detector, not a benchmark).
fn bounded(src: &str) -> Result<Value, String> {
    let start = Instant::now();
    let out = eval(src);
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "`{}` took {:?}",
        &src[..src.len().min(60)],
        start.elapsed()
    );
    out
}

#[test]
fn template_statements_are_not_expressions() {
    for src in [
        "{% include 'secrets.txt' %}",
        "{% import 'x.html' as x %}",
        "{% extends 'base' %}",
        "{% for i in range(10) %}{% endfor %}",
        "{% macro f() %}{{ f() }}{% endmacro %}",
        "{{ v }}",
    ] {
        assert!(
            matches!(compile(src, &|_| true), Err(CompileError::Syntax { .. })),
            "`{src}` should not compile"
        );
    }
}

#[test]
fn no_name_reaches_outside_the_sandbox() {
    for name in [
        "range",
        "open",
        "include",
        "import",
        "env",
        "environ",
        "self",
        "namespace",
        "lipsum",
        "cycler",
        "joiner",
        "debug",
        "config",
        "request",
        "os",
        "loader",
        "__import__",
    ] {
        for src in [
            name.to_string(),
            format!("{name}('x')"),
            format!("{name}.x"),
        ] {
            assert!(
                matches!(
                    compile(&src, &|_| true),
                    Err(CompileError::UnknownName { .. })
                ),
                "`{src}` should be refused"
            );
        }
    }
    assert!(matches!(
        compile("v.__class__", &|_| true),
        Err(CompileError::UnknownField { .. })
    ));
}

#[test]
fn filters_tests_and_methods_do_not_exist() {
    // The environment has no filters, tests or string methods: loops
    // (`map`), file reads and the like cannot even be named.
    for src in [
        "v.value | list",
        "[1, 2] | map('x') | list",
        "v.metadata | items",
        "v.value is divisibleby(2)",
        "'a'.upper()",
        "'a' | replace('a', 'b')",
    ] {
        assert!(bounded(src).is_err(), "`{src}` should fail");
    }
}

#[test]
fn large_work_runs_out_of_fuel_or_is_refused() {
    let huge = vec!["1"; 200_000].join(" + ");
    assert!(matches!(
        compile(&huge, &|_| true),
        Err(CompileError::TooLong { .. })
    ));
    // The longest accepted shapes compile without trouble and run bounded.
    let fill = |unit: &str, last: &str| {
        let n = (MAX_EXPR_BYTES - last.len()) / unit.len();
        format!("{}{last}", unit.repeat(n))
    };
    for src in [
        fill("1 + ", "1"),
        fill("'aaaaaaaaaa' ~ ", "'a'"),
        fill("v.value * ", "1"),
        fill("1 if v.value else ", "2"),
        fill("(1) and ", "1"),
        fill("v.value < ", "1"),
        fill("[1, 2] + ", "[3]"),
        format!("[{}1]", "1, ".repeat((MAX_EXPR_BYTES - 3) / 3)),
        "'x' * 1000000000".to_string(),
        "[1] * 1000000000".to_string(),
        "10 ** 100000000".to_string(),
        "(v.value ~ v.value ~ v.value ~ v.value ~ v.value) * 100000000".to_string(),
    ] {
        assert!(src.len() <= MAX_EXPR_BYTES);
        let _ = bounded(&src);
    }
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    for (open, close) in [("(", ")"), ("[", "]"), ("{'a': ", "}"), ("f(", ")")] {
        let src = format!("{}1{}", open.repeat(1000), close.repeat(1000));
        assert!(
            bounded(&src).is_err(),
            "nesting 1000 deep should be refused"
        );
    }
    for unit in ["not ", "-", "+", "- ", "not -"] {
        let src = format!("{}v.value", unit.repeat(MAX_UNARY_RUN + 1));
        assert!(
            matches!(compile(&src, &|_| true), Err(CompileError::TooDeep { .. })),
            "`{src}`"
        );
        let src = format!("{}v.value", unit.repeat(MAX_UNARY_RUN / 2));
        let _ = bounded(&src);
    }
    // Unary signs inside strings are text, not operators.
    assert!(bounded(&format!("'{}' ~ 'x'", "-".repeat(100))).is_ok());
}

/// A user rules folder for ruleset 9.9.9 (it carries its code
/// documentation) and its compliance pack folder.
fn user_rules_dir() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let packs = dir.path().join("training/9.9.9/compliance");
    std::fs::create_dir_all(&packs).expect("mkdir");
    let codes = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/codes");
    std::fs::create_dir_all(dir.path().join("codes")).expect("mkdir");
    for f in std::fs::read_dir(&codes).expect("rules/codes") {
        let f = f.expect("entry").path();
        std::fs::copy(
            &f,
            dir.path().join("codes").join(f.file_name().expect("name")),
        )
        .expect("copy");
    }
    (dir, packs)
}

#[test]
fn a_hostile_user_pack_is_refused_or_bounded_through_the_cli() {
    let (dir, packs) = user_rules_dir();
    let log = dir.path().join("run.txt");
    std::fs::write(
        &log,
        ":::MLLOG {\"time_ms\": 1, \"key\": \"run_start\", \"value\": 1, \"metadata\": {}}\n"
            .repeat(1000),
    )
    .expect("write");
    // As long as allowed, and run on each of 1000 lines.
    let sum = vec!["v.value"; (MAX_EXPR_BYTES - 10) / 10].join(" + ");
    let cases = [
        // Refused when the pack loads (exit 2), naming the pack file.
        ("check: \"{% include '/etc/passwd' %}\"", Some(2)),
        ("check: \"open('/etc/passwd')\"", Some(2)),
        // Too long: refused when the pack loads.
        (
            format!("check: \"{}\"", vec!["1"; 5000].join(" + ")).leak() as &str,
            Some(2),
        ),
        // Loads and runs on every line without trouble (true: no finding).
        (format!("check: \"{sum} > 0\"").leak() as &str, Some(0)),
    ];
    for (rule, want) in cases {
        std::fs::write(
            packs.join("common.yaml"),
            format!("rules:\n  - key: run_start\n    code: CMN007\n    {rule}\n"),
        )
        .expect("write pack");
        let start = Instant::now();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mlaudit"))
            .args(["--rules"])
            .arg(dir.path())
            .args(["log", "--ruleset", "9.9.9"])
            .arg(&log)
            .output()
            .expect("run mlaudit");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            out.status.code(),
            want,
            "{}\n{text}",
            &rule[..rule.len().min(60)]
        );
        assert!(!text.contains("panicked"), "{text}");
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "took {:?}",
            start.elapsed()
        );
        if want == Some(2) {
            assert!(text.contains("common.yaml"), "{text}");
        }
    }
}

/// minijinja repeats a sequence lazily (`[1] * n` is not materialised), so
/// a user pack can build a sequence of 10^15 items and iterate it with `in`;
/// fuel does not count those iterations. The watchdog armed for user packs
/// (src/check/rules/watchdog.rs) stops the run with exit 2 and a message naming
/// the rules folder.
#[test]
fn lazy_sequence_repetition_is_stopped_by_the_watchdog() {
    let (dir, packs) = user_rules_dir();
    std::fs::write(
        packs.join("common.yaml"),
        "rules:\n  - key: run_start\n    code: CMN007\n    check: \"'x' in [1, 2, 3] * 1000000000000000\"\n",
    )
    .expect("write pack");
    let log = dir.path().join("run.txt");
    std::fs::write(
        &log,
        ":::MLLOG {\"time_ms\": 1, \"key\": \"run_start\", \"value\": 1, \"metadata\": {}}\n",
    )
    .expect("write");
    let start = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mlaudit"))
        .arg("--rules")
        .arg(dir.path())
        .args(["log", "--ruleset", "9.9.9"])
        .arg(&log)
        .output()
        .expect("run mlaudit");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("did not finish within"), "{err}");
    assert!(err.contains(&dir.path().display().to_string()), "{err}");
    assert!(
        start.elapsed() < Duration::from_secs(40),
        "took {:?}",
        start.elapsed()
    );
}
