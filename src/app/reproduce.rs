//! The `check` command that reproduces a verdict, shown in the HTML report:
//! the options that change the verdict, not the output options (`--format`,
//! `--html`), each word quoted for a POSIX shell.

use crate::app::cli::CheckArgs;
use crate::rulebook::source::RuleSource;

/// `mlaudit [--rules DIR] check [--usage U] --ruleset V [bypasses] -- PATH...`.
/// Paths come after `--`, so one that starts with `-` stays a path.
pub fn command_line(args: &CheckArgs, usage: &str, ruleset: &str, source: &RuleSource) -> String {
    let mut words: Vec<String> = vec!["mlaudit".into()];
    if let RuleSource::Dir(dir) = source {
        words.push("--rules".into());
        words.push(dir.display().to_string());
    }
    words.push("check".into());
    if usage != "training" {
        words.push("--usage".into());
        words.push(usage.to_string());
    }
    words.push("--ruleset".into());
    words.push(ruleset.to_string());
    for (on, flag) in [
        (args.rcp_bypass, "--rcp-bypass"),
        (args.seed_checker_bypass, "--seed-checker-bypass"),
        (args.rcp_bert_train_samples, "--rcp-bert-train-samples"),
    ] {
        if on {
            words.push(flag.into());
        }
    }
    if args
        .paths
        .iter()
        .any(|p| p.to_string_lossy().starts_with('-'))
    {
        words.push("--".into());
    }
    words.extend(args.paths.iter().map(|p| p.display().to_string()));
    words
        .iter()
        .map(|w| shell_word(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `w` quoted for a POSIX shell when it needs to be (shlex, which refuses
/// only a NUL byte: no path or flag holds one, and it is shown as a
/// replacement character then).
pub fn shell_word(w: &str) -> String {
    match shlex::try_quote(w) {
        Ok(q) => q.into_owned(),
        Err(_) => shell_word(&w.replace('\0', "\u{fffd}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("NVIDIA/results"), "NVIDIA/results");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), "\"it's\"");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("a\0b"), "'a\u{fffd}b'");
    }
}
