//! Bounded property tests (run in CI, a few seconds in release): the MLLOG
//! reader, the JSON reader, the rule-pack loader and package discovery never
//! panic on random input, and the reader gives the same answer whatever the
//! size of the reads.

use mlaudit::check::rules::{check_bytes, Ruleset};
use mlaudit::mllog::{self, json};
use mlaudit::rulebook::codes::CodeRegistry;
use mlaudit::rulebook::source::RuleSource;
use proptest::prelude::*;
use std::io::Read;
use std::path::Path;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Hands out at most `step` bytes per read.
struct Dribble<'a>(&'a [u8], usize);
impl Read for Dribble<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let k = self.0.len().min(self.1).min(out.len());
        out[..k].copy_from_slice(&self.0[..k]);
        self.0 = &self.0[k..];
        Ok(k)
    }
}

type Seen = (Vec<(u64, String, String)>, u64, u64, u64, u64);

fn scan(reader: impl Read) -> Seen {
    let mut got = Vec::new();
    let s = mllog::scan_records(
        reader,
        |_| true,
        |r| got.push((r.line, r.key.to_string(), r.value.to_string())),
    )
    .unwrap_or_default();
    (
        got,
        s.lines,
        s.records,
        s.malformed_total,
        s.non_string_total,
    )
}

/// Log-like bytes: pieces of real records, markers, line ends and noise.
fn log_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b":::MLLOG ".to_vec()),
        Just(
            br#"{"time_ms": 1, "key": "seed", "value": 42, "metadata": {"a": [1, NaN]}}"#.to_vec()
        ),
        Just(br#"{"time_ms": "2", "key": 5, "value": null, "metadata": {}}"#.to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\\u00e9\"{}[],:".to_vec()),
        proptest::collection::vec(any::<u8>(), 0..40),
    ];
    proptest::collection::vec(piece, 0..60).prop_map(|v| v.concat())
}

/// Strings that are JSON, almost JSON, or Python's extensions of it.
fn json_text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("NaN".to_string()),
        Just("-Infinity".to_string()),
        Just("1e999".to_string()),
        any::<i64>().prop_map(|i| i.to_string()),
        any::<f64>().prop_map(|f| format!("{f:?}")),
        "[a-z\\\\\"é\\u{1}]{0,6}".prop_map(|s| format!("\"{s}\"")),
    ];
    leaf.prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5)
                .prop_map(|v| format!("[{}]", v.join(", "))),
            proptest::collection::vec(("[a-z]{0,3}", inner), 0..5).prop_map(|v| {
                let items: Vec<String> = v.iter().map(|(k, x)| format!("\"{k}\": {x}")).collect();
                format!("{{{}}}", items.join(", "))
            }),
        ]
    })
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn reader_never_panics_and_ignores_read_sizes(bytes in log_bytes(), step in 1usize..64) {
        let whole = scan(&bytes[..]);
        let dribbled = scan(Dribble(&bytes, step));
        prop_assert_eq!(&whole, &dribbled);
        prop_assert!(whole.2 >= whole.0.len() as u64);
    }

    #[test]
    fn json_reader_never_panics(text in json_text(), cut in any::<prop::sample::Index>()) {
        // Whole: valid unless a string holds a control character.
        let ok = json::parse(&text).is_ok();
        prop_assert_eq!(ok, json::skip(&text).is_ok());
        let strict = serde_json::from_str::<serde_json::Value>(&text).is_ok();
        if strict {
            prop_assert!(ok, "serde_json reads {} but we do not", text);
        }
        // Cut anywhere (on a char boundary): an error or a value, no panic.
        let mut at = cut.index(text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let _ = json::parse(&text[..at]);
        let _ = json::record_fields(&text[..at]);
    }

    #[test]
    fn json_reader_takes_random_text(text in "\\PC{0,80}") {
        let _ = json::parse(&text);
        let _ = json::record_fields(&text);
    }
}

fn codes() -> CodeRegistry {
    match CodeRegistry::load(&RuleSource::Embedded) {
        Ok(c) => c,
        Err(e) => panic!("built-in codes: {e}"),
    }
}

/// Loads a user ruleset made of one `common.yaml`.
fn load_pack(dir: &Path, codes: &CodeRegistry, text: &str) -> Result<Ruleset, String> {
    let packs = dir.join("training/9.9.9/compliance");
    std::fs::create_dir_all(&packs).map_err(|e| e.to_string())?;
    std::fs::write(packs.join("common.yaml"), text).map_err(|e| e.to_string())?;
    Ruleset::load_with_codes(
        &RuleSource::Dir(dir.to_path_buf()),
        codes,
        "training",
        "9.9.9",
    )
    .map_err(|e| e.to_string())
}

const PACK: &str = r#"description: a small pack
state:
  started: "false"
  n: "0"
rules:
  - key: run_start
    code: CMN007
    require: exactly_one
    check: "not s.started"
    set:
      started: "true"
      n: "s.n + 1"
  - key: eval_accuracy
    code: BMK001
    require: {at_least: 1}
    at_least_one: "v.value >= 0.5 and v.metadata.epoch_num > 0"
end:
  - code: CMN008
    check: "s.n == 1"
"#;

const LOG: &[u8] = b":::MLLOG {\"time_ms\": 1, \"key\": \"run_start\", \"value\": null, \"metadata\": {}}\n\
:::MLLOG {\"time_ms\": 2, \"key\": \"eval_accuracy\", \"value\": 0.7, \"metadata\": {\"epoch_num\": 1}}\n";

/// Expression-like strings: fragments of the expression language.
fn expression() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        Just("v.value".to_string()),
        Just("v.metadata.epoch_num".to_string()),
        Just("s.n".to_string()),
        Just("s.started".to_string()),
        Just("1".to_string()),
        Just("'x' ~ 'y'".to_string()),
        Just("[1, 2, 3]".to_string()),
        Just("none".to_string()),
        Just("range(1000000000)".to_string()),
        Just("max(1, 2)".to_string()),
        Just("sqrt(-1)".to_string()),
        Just("int('9' * 50)".to_string()),
        Just("v".to_string()),
        "[a-z_.()'\\[\\]0-9 +*/%~|-]{0,12}",
    ];
    atom.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} + {b}")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) * ({b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} if {b} else none")),
            inner.clone().prop_map(|a| format!("not {a}")),
            inner.clone().prop_map(|a| format!("{a} | length")),
            (inner.clone(), inner).prop_map(|(a, b)| format!("{a} in {b}")),
        ]
    })
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn pack_loader_never_panics_on_random_yaml(text in "\\PC{0,200}") {
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let _ = load_pack(dir.path(), &codes(), &text);
    }

    #[test]
    fn pack_loader_never_panics_on_mutated_packs(
        cuts in proptest::collection::vec((any::<prop::sample::Index>(), "[ :\\-\\[\\]{}'\"a-z0-9\n]{0,4}"), 1..6)
    ) {
        let mut text = PACK.to_string();
        for (at, insert) in cuts {
            let mut i = at.index(text.len() + 1);
            while !text.is_char_boundary(i) {
                i -= 1;
            }
            let end = (i + 3).min(text.len());
            let end = (end..=text.len()).find(|&e| text.is_char_boundary(e)).unwrap_or(text.len());
            text.replace_range(i..end, &insert);
        }
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        if let Ok(rs) = load_pack(dir.path(), &codes(), &text) {
            let _ = check_bytes(&rs, LOG, "log.txt");
        }
    }

    #[test]
    fn random_expressions_load_or_fail_and_never_hang(check in expression(), set in expression()) {
        let text = PACK
            .replace("check: \"not s.started\"", &format!("check: {:?}", check))
            .replace("n: \"s.n + 1\"", &format!("n: {:?}", set));
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        if let Ok(rs) = load_pack(dir.path(), &codes(), &text) {
            let c = check_bytes(&rs, LOG, "log.txt");
            prop_assert_eq!(c.path, "log.txt");
        }
    }
}

/// A random small tree: folders and files with names a package uses, random
/// contents, and symbolic links that may loop.
#[derive(Debug, Clone)]
enum Node {
    Dir(String),
    File(String, Vec<u8>),
    Link(String, String),
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("results".to_string()),
        Just("systems".to_string()),
        Just("benchmarks".to_string()),
        Just("sys".to_string()),
        Just("bert".to_string()),
        Just("retinanet".to_string()),
        Just("result_0.txt".to_string()),
        Just("result_1.txt".to_string()),
        Just("sys.json".to_string()),
        Just("..".to_string()),
        "[a-z_.]{1,6}",
    ]
}

fn tree() -> impl Strategy<Value = Vec<Node>> {
    let path = || proptest::collection::vec(name(), 1..4).prop_map(|v| v.join("/"));
    let node = prop_oneof![
        path().prop_map(Node::Dir),
        (
            path(),
            prop_oneof![
                Just(
                    br#"{"submitter": "x", "division": "closed", "status": "available"}"#.to_vec()
                ),
                Just(LOG.to_vec()),
                proptest::collection::vec(any::<u8>(), 0..64),
            ]
        )
            .prop_map(|(p, c)| Node::File(p, c)),
        (path(), path()).prop_map(|(p, t)| Node::Link(p, t)),
    ];
    proptest::collection::vec(node, 0..24)
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn discovery_never_panics_on_random_trees(nodes in tree()) {
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let root = dir.path().join("pkg");
        let _ = std::fs::create_dir_all(&root);
        for n in &nodes {
            match n {
                Node::Dir(p) => {
                    let _ = std::fs::create_dir_all(root.join(p));
                }
                Node::File(p, c) => {
                    let p = root.join(p);
                    if let Some(parent) = p.parent() {
                        let _ = std::fs::create_dir_all(parent);
                    }
                    let _ = std::fs::write(p, c);
                }
                Node::Link(_p, _t) => {
                    #[cfg(unix)]
                    {
                        let p = root.join(_p);
                        if let Some(parent) = p.parent() {
                            let _ = std::fs::create_dir_all(parent);
                        }
                        let _ = std::os::unix::fs::symlink(_t, p);
                    }
                }
            }
        }
        let found = mlaudit::discover::discover(&root);
        // Something came back and naming it works.
        let _ = format!("{found:?}");
    }
}
