//! What a run script's `sed -i` does to a config of its implementation.
//!
//! `sed -i 's/LORA_DIM,16/LORA_DIM,8/' src/conf/peft.yaml` changes a
//! setting the script's own line does not name: only the edited file
//! tells that `adapter_dim` now defaults to 8. When a script edits a file
//! of its own implementation in place, the edit is run on that file's
//! text (line by line, as `sed` does), both texts are parsed, and every
//! setting the edit adds or changes (with its full key path) becomes a
//! setting of the script, at the `sed` line: the policy checks see it
//! there as they see what a `yq -i` line sets.
//!
//! Only what can be told is used: an edit whose script has a back
//! reference in its pattern, an occurrence number or GNU case conversion,
//! a file named through a variable or a glob, or a name that fits no file
//! (or more than one) of the implementation gives nothing here. The
//! replacement text is still read on its own ([`super::configs`]).

use super::configs::{Entry, EntryKind, Format};
use super::shell_sed;
use crate::discover::tree::ImplFile;

/// One `sed -i` line of a script: its line number and what it does.
pub(super) struct InPlace {
    pub line: u64,
    pub edits: Vec<shell_sed::Edit>,
    pub targets: Vec<String>,
}

/// The `sed -i` lines of a shell script's text.
pub(super) fn in_place_lines(text: &str) -> Vec<InPlace> {
    if !text.contains("sed") {
        return Vec::new();
    }
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.contains("sed") && !l.trim_start().starts_with('#'))
        .filter_map(|(i, l)| {
            let (edits, targets) = shell_sed::in_place(l)?;
            (!targets.is_empty()).then(|| InPlace {
                line: i as u64 + 1,
                edits,
                targets,
            })
        })
        .collect()
}

/// The file of `files` a script (file `script`) names as `target`: one
/// of its own implementation whose path ends with the name, tried from
/// the whole name to its last part (a container path such as
/// `/workspace/llm/src/conf/x.yaml` names the implementation's
/// `src/conf/x.yaml`); `None` when no file or more than one fits.
pub(super) fn target_of(files: &[ImplFile], script: usize, target: &str) -> Option<usize> {
    let me = files.get(script)?;
    let parts: Vec<&str> = target
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.is_empty() || parts.contains(&"..") {
        return None;
    }
    let here = |f: &ImplFile| f.benchmark == me.benchmark && f.implementation == me.implementation;
    let folder = me.file.path.rsplit_once('/').map_or("", |(d, _)| d);
    for k in 0..parts.len() {
        let tail = parts[k..].join("/");
        let fits: Vec<usize> = (0..files.len())
            .filter(|&j| here(&files[j]))
            .filter(|&j| {
                let p = files[j].file.path.as_str();
                p.len() > tail.len()
                    && p.ends_with(tail.as_str())
                    && p.as_bytes()[p.len() - tail.len() - 1] == b'/'
            })
            .collect();
        match fits.as_slice() {
            [] => continue,
            [one] => return Some(*one),
            many => {
                // The one beside the script, when there is one.
                let beside = format!("{folder}/{tail}");
                return many.iter().copied().find(|&j| files[j].file.path == beside);
            }
        }
    }
    None
}

/// `text` as the edits leave it, when they change it.
pub(super) fn edited(edits: &[shell_sed::Edit], text: &str) -> Option<String> {
    let mut changed = false;
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut l = std::borrow::Cow::Borrowed(line);
        for e in edits {
            if let std::borrow::Cow::Owned(o) = e.apply(&l) {
                l = std::borrow::Cow::Owned(o);
            }
        }
        changed |= l != line;
        out.push_str(&l);
        out.push('\n');
    }
    changed.then_some(out)
}

/// The settings of `after` that `before` lacks (as key path, value and
/// kind; each of `before` answers for one of `after`), placed at the
/// script's `line` and shown as the edit with the file and line it
/// changed.
pub(super) fn new_settings(
    before: &[Entry],
    after: &[Entry],
    line: u64,
    shown: &str,
    target: &str,
) -> Vec<Entry> {
    let setting = |e: &&Entry| {
        matches!(
            e.kind,
            EntryKind::Key { .. } | EntryKind::Flag | EntryKind::Value
        )
    };
    let mut left: Vec<&Entry> = before.iter().filter(setting).collect();
    let mut out = Vec::new();
    for e in after.iter().filter(setting) {
        let same = left
            .iter()
            .position(|b| b.path == e.path && b.value == e.value && b.kind == e.kind);
        match same {
            Some(k) => {
                left.swap_remove(k);
            }
            None => out.push(Entry {
                line,
                path: e.path.clone(),
                value: e.value.clone(),
                kind: e.kind,
                display: format!("{shown} ({target}:{})", e.line),
            }),
        }
    }
    out
}

/// Whether a file of `format` is one a `sed` edit is followed into.
pub(super) fn followed(format: Format) -> bool {
    matches!(
        format,
        Format::Shell | Format::Yaml | Format::Json | Format::Ini | Format::Proto
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::tree::FileRef;

    fn file(path: &str, implementation: &str) -> ImplFile {
        ImplFile {
            benchmark: "llama2_70b_lora".into(),
            implementation: Some(implementation.into()),
            file: FileRef {
                path: path.into(),
                fs: path.into(),
            },
        }
    }

    #[test]
    fn an_edited_yaml_gives_the_settings_it_changes() {
        let (edits, targets) =
            shell_sed::in_place("sed -i 's/LORA_DIM,16/LORA_DIM,8/' src/conf/peft.yaml").unwrap();
        assert_eq!(targets, ["src/conf/peft.yaml"]);
        let text = "model:\n  peft:\n    adapter_dim: ${oc.env:LORA_DIM,16}\n    dropout: 0.1\n";
        let after = edited(&edits, text).unwrap();
        assert!(after.contains("LORA_DIM,8"));
        let parse = |t: &str| super::super::configs::parse(t, Format::Yaml);
        let new = new_settings(&parse(text), &parse(&after), 3, "s/a/b/", "peft.yaml");
        // The setting, and the default it gives its variable.
        let paths: Vec<(String, &str)> = new
            .iter()
            .map(|e| (e.path.join("."), e.value.as_str()))
            .collect();
        assert!(
            paths.contains(&("model.peft.adapter_dim".into(), "${oc.env:LORA_DIM,8}")),
            "{paths:?}"
        );
        assert!(
            !paths.iter().any(|(p, _)| p.ends_with("dropout")),
            "{paths:?}"
        );
        assert!(new
            .iter()
            .all(|e| e.line == 3 && e.display == "s/a/b/ (peft.yaml:3)"));
        // An edit that matches nothing changes nothing.
        let (none, _) = shell_sed::in_place("sed -i 's/LORA_DIM,32/x/' f.yaml").unwrap();
        assert!(edited(&none, text).is_none());
    }

    #[test]
    fn basic_and_extended_regexes_run_as_sed_runs_them() {
        let run = |line: &str, text: &str| {
            let (edits, _) = shell_sed::in_place(line).unwrap();
            edited(&edits, text).unwrap_or_else(|| text.to_string())
        };
        assert_eq!(
            run(
                "sed -i 's/^export LORA_DIM=.*/export LORA_DIM=8/' c.sh",
                "export LORA_DIM=16\n"
            ),
            "export LORA_DIM=8\n"
        );
        assert_eq!(
            run(
                r"sed -i 's/\(name: \)fused_adam/\1sgd/' c.yaml",
                "  name: fused_adam\n"
            ),
            "  name: sgd\n"
        );
        assert_eq!(
            run("sed -i -E 's/(lr: )[0-9.]+/\\10.5/' c.yaml", "lr: 0.1\n"),
            "lr: 0.5\n"
        );
        // A basic regex's `+` and `(` are themselves.
        assert_eq!(run("sed -i 's/a+(b)/c/' f.txt", "xa+(b)\n"), "xc\n");
        assert_eq!(
            run("sed -i 's/[[:space:]]*x: 1/ x: 2/g' f.yaml", "  x: 1\n"),
            " x: 2\n"
        );
        assert_eq!(run("sed -i 's|a/b|c|' f", "a/b\n"), "c\n");
        // Not in place, or what it writes cannot be told: no edit.
        assert!(shell_sed::in_place("sed 's/a/b/' f.yaml > g.yaml").is_none());
        assert!(shell_sed::in_place(r"sed -i 's/\(a\)\1/b/' f").is_none());
        assert!(shell_sed::in_place(r"sed -i 's/a/\U&/' f").is_none());
    }

    #[test]
    fn the_file_a_script_names() {
        let files = [
            file("b/llama2_70b_lora/implementations/n/run.sh", "n"),
            file(
                "b/llama2_70b_lora/implementations/n/src/conf/peft.yaml",
                "n",
            ),
            file("b/llama2_70b_lora/implementations/n/a/c.yaml", "n"),
            file("b/llama2_70b_lora/implementations/n/b/c.yaml", "n"),
            file(
                "b/llama2_70b_lora/implementations/m/src/conf/peft.yaml",
                "m",
            ),
        ];
        assert_eq!(target_of(&files, 0, "src/conf/peft.yaml"), Some(1));
        assert_eq!(target_of(&files, 0, "./src/conf/peft.yaml"), Some(1));
        assert_eq!(
            target_of(&files, 0, "/workspace/llm/src/conf/peft.yaml"),
            Some(1)
        );
        // Two files fit and neither sits beside the script.
        assert_eq!(target_of(&files, 0, "c.yaml"), None);
        assert_eq!(target_of(&files, 0, "a/c.yaml"), Some(2));
        assert_eq!(target_of(&files, 0, "../x/peft.yaml"), None);
        assert_eq!(target_of(&files, 0, "other.yaml"), None);
    }
}
