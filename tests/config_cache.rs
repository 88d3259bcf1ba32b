//! `mlaudit check` keeps the implementation configs' findings between runs
//! (src/check/policy/cache.rs): a kept entry is what the next run reports
//! while no config changes, and any change to a config, even one that
//! keeps its size, is scanned again.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

fn check(dir: &Path, cache: &Path, extra: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_mlaudit"))
        .current_dir(dir)
        .env("MLAUDIT_CACHE_DIR", cache)
        .env_remove("MLAUDIT_NO_CACHE")
        .args(["check", "--format", "json", "--ruleset", "5.1.0"])
        .args(extra)
        .arg("Example")
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

/// The example package copied into `work`, with an implementation folder
/// (returned) holding `bagua.yaml` as given.
fn package(work: &Path, bagua: &str) -> std::path::PathBuf {
    let pkg = work.join("Example");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/Example"),
        &pkg,
    );
    let imp = pkg.join("benchmarks/retinanet/implementations/pytorch");
    std::fs::create_dir_all(&imp).unwrap();
    std::fs::write(imp.join("bagua.yaml"), bagua).unwrap();
    imp
}

/// The POL findings of a report, as `path:line CODE`.
fn policy(report: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut walk = |v: &Value| {
        if let Some(list) = v.get("findings").and_then(Value::as_array) {
            for f in list {
                let code = f["code"].as_str().unwrap_or("");
                if code.starts_with("POL") {
                    out.push(format!(
                        "{}:{} {code}",
                        f["path"].as_str().unwrap_or(""),
                        f["line"]
                    ));
                }
            }
        }
    };
    walk(report);
    for b in report["benchmarks"].as_array().into_iter().flatten() {
        walk(b);
    }
    out.sort();
    out
}

#[test]
fn kept_findings_are_used_until_a_config_changes() {
    let work = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let imp = package(work.path(), "distributed:\n  algorithm: xsync\n");
    std::fs::write(imp.join("config_x.sh"), "export DGXNNODES=1\n").unwrap();
    let conf = imp.join("bagua.yaml");
    // Older than the margin around a read (2 s on a file system without
    // sub-second times): the entry is kept.
    std::thread::sleep(std::time::Duration::from_millis(2200));

    let first = check(work.path(), cache.path(), &[]);
    assert!(policy(&first).is_empty(), "{:?}", policy(&first));
    let kept: Vec<_> = std::fs::read_dir(cache.path()).unwrap().flatten().collect();
    assert_eq!(kept.len(), 1, "one entry kept");
    assert_eq!(check(work.path(), cache.path(), &[]), first);

    // The entry is what the next run reports: one planted in it shows.
    // An entry: a first line naming the format, the header's length
    // (8 bytes, little-endian), the header as JSON, then the settings.
    let entry = kept[0].path();
    let bytes = std::fs::read(&entry).unwrap();
    let magic = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    assert_eq!(&bytes[..magic], b"mlaudit-configs 2\n");
    let len = u64::from_le_bytes(bytes[magic..magic + 8].try_into().unwrap()) as usize;
    let (header, rows) = bytes[magic + 8..].split_at(len);
    let mut stored: Value = serde_json::from_slice(header).unwrap();
    stored["findings"] = serde_json::json!([{
        "code": "POL011", "severity": "error", "message": "planted",
        "path": "Example/benchmarks/retinanet/implementations/pytorch/bagua.yaml",
        "line": 2, "rule": null, "help": null
    }]);
    let header = serde_json::to_vec(&stored).unwrap();
    let mut planted_entry = bytes[..magic].to_vec();
    planted_entry.extend_from_slice(&(header.len() as u64).to_le_bytes());
    planted_entry.extend_from_slice(&header);
    planted_entry.extend_from_slice(rows);
    std::fs::write(&entry, planted_entry).unwrap();
    let planted = check(work.path(), cache.path(), &[]);
    assert_eq!(
        policy(&planted),
        ["Example/benchmarks/retinanet/implementations/pytorch/bagua.yaml:2 POL011"]
    );
    // --no-cache scans.
    assert_eq!(check(work.path(), cache.path(), &["--no-cache"]), first);

    // The same size, another value, right away: scanned again.
    std::fs::write(&conf, "distributed:\n  algorithm: async\n").unwrap();
    let changed = check(work.path(), cache.path(), &[]);
    assert_eq!(
        policy(&changed),
        ["Example/benchmarks/retinanet/implementations/pytorch/bagua.yaml:2 POL011"]
    );
    assert_ne!(
        changed, planted,
        "the finding is the scan's, not the planted one"
    );
    // A config removed: scanned again.
    std::fs::remove_file(&conf).unwrap();
    assert_eq!(
        policy(&check(work.path(), cache.path(), &[])),
        Vec::<String>::new()
    );
}

#[test]
fn an_unwritable_cache_folder_changes_nothing() {
    let work = tempfile::tempdir().unwrap();
    package(work.path(), "distributed:\n  algorithm: async\n");
    // A file where the cache folder should be.
    let blocked = work.path().join("not-a-folder");
    std::fs::write(&blocked, "").unwrap();
    let report = check(work.path(), &blocked.join("cache"), &[]);
    assert_eq!(
        policy(&report),
        ["Example/benchmarks/retinanet/implementations/pytorch/bagua.yaml:2 POL011"]
    );
}
