//! `unset NAME` in a shell script: the variable is gone from that line on.
//!
//! `export BYTEPS_ENABLE_ASYNC=1`, then `unset BYTEPS_ENABLE_ASYNC`, sets
//! nothing for the command the script runs afterwards. The assignment is
//! dropped from the script's settings when nothing could have read it in
//! between: the `unset` stands outside any `if` or `case` and at the
//! start of its line (not in a function or loop body), and no line
//! between the assignment and it runs a command (every line between is
//! blank, a comment, or an assignment or `export` alone). Otherwise the
//! assignment may have been in force for a command, and stays.

use super::configs::{Entry, EntryKind};

/// The variables an `unset` line removes (`unset A B`, `unset -v A`), or
/// `None` when `code` is no such line (`unset -f` names functions).
pub(super) fn names(code: &str) -> Option<Vec<&str>> {
    let rest = code.trim_start().strip_prefix("unset")?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    // The command ends at `;`, `&` or `|`; what follows runs after it.
    let rest = &rest[..rest.find([';', '&', '|']).unwrap_or(rest.len())];
    let mut out = Vec::new();
    for w in rest.split_whitespace() {
        if w == "-v" {
            continue;
        }
        if !is_name(w) {
            return None;
        }
        out.push(w);
    }
    (!out.is_empty()).then_some(out)
}

fn is_name(w: &str) -> bool {
    w.bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Whether a line (comment stripped) runs no command: blank, an
/// assignment of one unquoted or quoted word alone (`export X=1`,
/// `X="a"`), a bare `export X`, another `unset`, or a word that only
/// closes a block (`fi`, `done`).
pub(super) fn runs_nothing(code: &str) -> bool {
    let t = code.trim();
    // Lines that only close or separate blocks run nothing themselves.
    if t.is_empty() || matches!(t, "fi" | "else" | "then" | "esac" | ";;" | "}" | "done") {
        return true;
    }
    if names(t).is_some() {
        return !t.contains([';', '&', '|']);
    }
    if let Some(rest) = t.strip_prefix("export ") {
        if rest.split_whitespace().all(is_name) {
            return true;
        }
    }
    match super::shell_assign::shell_assign(t) {
        Some((_, v)) => {
            let v = v.trim();
            let quoted = |q: char| {
                v.len() >= 2 && v.starts_with(q) && v.ends_with(q) && !v[1..v.len() - 1].contains(q)
            };
            quoted('"') || quoted('\'') || !v.contains(|c: char| c.is_whitespace() || c == ';')
        }
        None => false,
    }
}

/// Drops from `out` the assignments of `names` made on lines after
/// `since` (the last line that ran a command): settings whose key path
/// starts with the variable (a JSON held in it too), not the defaults of
/// references to it, which were read where they stand.
pub(super) fn apply(out: &mut Vec<Entry>, names: &[&str], since: u64) {
    out.retain(|e| {
        e.line <= since
            || !matches!(e.kind, EntryKind::Key { .. })
            || super::configs::is_default(e)
            || !e.path.first().is_some_and(|k| names.contains(&k.as_str()))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_lines_name_their_variables() {
        assert_eq!(names("unset A B"), Some(vec!["A", "B"]));
        assert_eq!(names("unset -v A"), Some(vec!["A"]));
        assert_eq!(names("unset -f fn"), None);
        assert_eq!(names("unsetA"), None);
        assert_eq!(names("unset ${X}"), None);
    }

    #[test]
    fn commands_are_told_from_assignments() {
        assert!(runs_nothing("export X=1"));
        assert!(runs_nothing("X=\"a b\""));
        assert!(runs_nothing("export X Y"));
        assert!(!runs_nothing("X=1 python train.py"));
        assert!(!runs_nothing("srun python train.py"));
        assert!(!runs_nothing("export X=1; srun python"));
    }
}
