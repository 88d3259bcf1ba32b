//! Which implementation a config belongs to: the unit within which
//! variables resolve (a YAML's `${oc.env:X}` sees what its own
//! `config_*.sh` exports, never another implementation's) and whose
//! configs are read together for fixed hyperparameters (POL009).
//!
//! An implementation is one folder under `benchmarks/<bm>/`
//! (`implementations/<impl>/` or the older `<bm>/<impl>/`). Files directly
//! in `implementations/` are shared by every implementation of the
//! benchmark. A benchmark folder that holds configs itself
//! (`benchmarks/<bm>/config_*.sh`) is one implementation with its folders
//! outside `implementations/`.

use crate::discover::tree::ImplFile;
use std::collections::{BTreeMap, BTreeSet};

/// Where a config sits below `benchmarks/<bm>/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Place<'a> {
    /// `implementations/<impl>/...`, or the older `<impl>/...`.
    Implementation(&'a str),
    /// Directly in `implementations/`: shared by every implementation.
    Shared,
    /// Directly in `benchmarks/<bm>/` (the benchmark folder is the
    /// implementation; its other folders, `implementations/` aside, are
    /// parts of it).
    Flat,
}

/// Where `path` sits, and whether it is below `implementations/`: read
/// from the first folders below `benchmarks/<bm>/` (the file name is not
/// a folder), without collecting the parts (called for every config).
fn folders(path: &str) -> (Place<'_>, bool) {
    let mut parts = path.split('/');
    if !parts
        .by_ref()
        .any(|p| p == "benchmarks" || p == "benchmark")
    {
        return (Place::Flat, false);
    }
    parts.next();
    match (parts.next(), parts.next(), parts.next()) {
        (Some("implementations"), Some(_), None) => (Place::Shared, true),
        (Some("implementations"), Some(imp), Some(_)) => (Place::Implementation(imp), true),
        (Some(imp), Some(_), _) => (Place::Implementation(imp), false),
        _ => (Place::Flat, false),
    }
}

/// One implementation of a benchmark.
pub(super) type Key<'a> = (&'a str, Place<'a>);

/// The implementations of the files `members` (indices into `files`), each
/// with its files' indices in the order given. A shared file (directly in
/// `implementations/`) is in every implementation of its benchmark, or in
/// one of its own when there is none.
pub(super) fn implementations<'a>(
    files: &'a [ImplFile],
    members: impl IntoIterator<Item = usize>,
) -> BTreeMap<Key<'a>, Vec<usize>> {
    let mut found: Vec<(&str, Place, bool, usize)> = Vec::new();
    let mut flat: BTreeSet<&str> = BTreeSet::new();
    for i in members {
        let Some(f) = files.get(i) else { continue };
        let bm = f.benchmark.as_str();
        let (p, under_impls) = folders(&f.file.path);
        if p == Place::Flat {
            flat.insert(bm);
        }
        found.push((bm, p, under_impls, i));
    }
    let mut groups: BTreeMap<Key, Vec<usize>> = BTreeMap::new();
    let mut shared: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (bm, p, under_impls, i) in found {
        let p = match p {
            Place::Implementation(_) if flat.contains(bm) && !under_impls => Place::Flat,
            p => p,
        };
        match p {
            Place::Shared => shared.entry(bm).or_default().push(i),
            p => groups.entry((bm, p)).or_default().push(i),
        }
    }
    for (bm, common) in shared {
        let mut joined = false;
        for ((b, p), g) in groups.iter_mut() {
            if *b == bm && *p != Place::Flat {
                g.extend(&common);
                joined = true;
            }
        }
        if !joined {
            groups.insert((bm, Place::Shared), common);
        }
    }
    groups
}

/// The files with each `benchmarks/<name>/` folder that is no benchmark
/// of the round read as the one benchmark its name stands for (`None`
/// when every folder is one): HPE's v5.0 `benchmarks/dlrm_v2/` holds its
/// dlrm_dcnv2 configs, Fujitsu's v4.1 `benchmarks/llama2_70b/` its
/// llama2_70b_lora ones. A name stands for a benchmark when the first
/// words of the two (up to the first `_` or `-`) are the same or one
/// starts with the other, and for no other benchmark of the round: an
/// ambiguous name (`llama3_8b`: llama31_8b or llama31_405b) stays as it
/// is, and its configs are held to no benchmark's optimizer or values.
pub(super) fn with_round_benchmarks<T>(
    files: &[ImplFile],
    round: &BTreeMap<String, T>,
) -> Option<Vec<ImplFile>> {
    let first =
        |s: &str| -> String { s.split(['_', '-']).next().unwrap_or(s).to_ascii_lowercase() };
    let stands_for = |name: &str| -> Option<&String> {
        if round.contains_key(name) {
            return None;
        }
        let w = first(name);
        if w.is_empty() {
            return None;
        }
        let mut hits = round.keys().filter(|b| {
            let v = first(b);
            v.starts_with(&w) || w.starts_with(&v)
        });
        match (hits.next(), hits.next()) {
            (Some(b), None) => Some(b),
            _ => None,
        }
    };
    let mut memo: BTreeMap<&str, Option<&String>> = BTreeMap::new();
    let mut changed = false;
    let out: Vec<ImplFile> = files
        .iter()
        .map(|f| {
            let to = *memo
                .entry(f.benchmark.as_str())
                .or_insert_with(|| stands_for(&f.benchmark));
            let mut f = f.clone();
            if let Some(b) = to {
                f.benchmark = b.clone();
                changed = true;
            }
            f
        })
        .collect();
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::tree::FileRef;

    #[test]
    fn places() {
        let p = |path| folders(path).0;
        assert_eq!(
            p("P/benchmarks/bm/implementations/nemo/conf/a.yaml"),
            Place::Implementation("nemo")
        );
        assert_eq!(p("P/benchmarks/bm/implementations/a.sh"), Place::Shared);
        assert_eq!(p("P/benchmarks/bm/config_common.sh"), Place::Flat);
        assert_eq!(
            p("P/benchmark/bm/pytorch/a.sh"),
            Place::Implementation("pytorch")
        );
        assert_eq!(p("P/results/x/a.sh"), Place::Flat);
        assert_eq!(p("benchmarks/bm/implementations"), Place::Flat);
        // As the config-against-log check reads folders.
        for path in [
            "P/benchmarks/bm/implementations/nemo/conf/a.yaml",
            "P/benchmarks/bm/implementations/a.sh",
            "P/benchmarks/bm/config_common.sh",
            "P/benchmarks/bm/pytorch/a.sh",
            "P/benchmarks/bm/implementations/x/a.sh",
        ] {
            let want = match super::super::config_log::folders(path).as_slice() {
                [] => Place::Flat,
                ["implementations"] => Place::Shared,
                ["implementations", imp, ..] | [imp, ..] => Place::Implementation(imp),
            };
            assert_eq!(p(path), want, "{path}");
        }
    }

    fn file(bm: &str, path: &str) -> ImplFile {
        ImplFile {
            benchmark: bm.into(),
            implementation: None,
            file: FileRef {
                path: format!("P/benchmarks/{bm}/{path}"),
                fs: path.into(),
            },
        }
    }

    #[test]
    fn groups() {
        let files = [
            file("a", "implementations/x/c.sh"),
            file("a", "implementations/y/c.sh"),
            file("a", "implementations/common.sh"),
            file("b", "config_common.sh"),
            file("b", "pytorch/conf/a.yaml"),
            file("b", "implementations/z/c.sh"),
            file("c", "implementations/only.sh"),
        ];
        let g = implementations(&files, 0..files.len());
        let got: Vec<(&str, Place, Vec<usize>)> =
            g.into_iter().map(|((b, p), v)| (b, p, v)).collect();
        assert_eq!(
            got,
            vec![
                ("a", Place::Implementation("x"), vec![0, 2]),
                ("a", Place::Implementation("y"), vec![1, 2]),
                ("b", Place::Implementation("z"), vec![5]),
                ("b", Place::Flat, vec![3, 4]),
                ("c", Place::Shared, vec![6]),
            ]
        );
    }

    /// A folder named otherwise stands for the one benchmark of the round
    /// its first word names; an ambiguous or unknown one stays as it is.
    #[test]
    fn round_benchmarks() {
        let round: BTreeMap<String, ()> = [
            "dlrm_dcnv2",
            "llama2_70b_lora",
            "llama31_8b",
            "llama31_405b",
            "retinanet",
        ]
        .into_iter()
        .map(|b| (b.to_string(), ()))
        .collect();
        let files = [
            file("dlrm_v2", "implementations/hugectr/c.sh"),
            file("llama2_70b", "implementations/x/c.sh"),
            file("llama3_8b", "implementations/x/c.sh"),
            file("retinanet", "implementations/x/c.sh"),
            file("ssd", "implementations/x/c.sh"),
        ];
        let got: Vec<String> = with_round_benchmarks(&files, &round)
            .expect("renamed")
            .into_iter()
            .map(|f| f.benchmark)
            .collect();
        assert_eq!(
            got,
            [
                "dlrm_dcnv2",
                "llama2_70b_lora",
                "llama3_8b",
                "retinanet",
                "ssd"
            ]
        );
        assert!(with_round_benchmarks(&files[3..4], &round).is_none());
    }
}
