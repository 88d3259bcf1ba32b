//! Shell settings under a condition: `if [ "${USE_POWERSGD:-0}" = 1 ];
//! then EXTRA="--comm-hook powersgd"; fi` switches PowerSGD on only when
//! the variable says so, and its default says no. A setting that is off,
//! or whose default is off, is quiet (issue 16, item 4); so is one under a
//! condition that no value the package gives its variable makes true.
//!
//! The reader ([`super::configs`]) marks where a condition over one
//! variable starts and ends ([`EntryKind::Guard`], [`EntryKind::GuardEnd`]);
//! the scan ([`super::configs::scan`]) asks [`is_off`] with the values the
//! implementation's configs give the variable (its default and every
//! assignment, as for any setting). Anything else is on: a condition over
//! two variables, `&&` or `||` inside it, an `elif` chain, a variable the
//! package never gives a value, an operator this file does not know.
//!
//! [`EntryKind::Guard`]: super::configs::EntryKind::Guard
//! [`EntryKind::GuardEnd`]: super::configs::EntryKind::GuardEnd

use super::configs::{Entry, EntryKind};
use super::interpolate::{self, Env};
use std::collections::BTreeMap;

/// Which entries sit under a guard that is off ([`is_off`] with `env` and
/// the file's own `local` values): what they set never runs, for the
/// checks of values (POL008, POL009) as for the signal families.
pub(super) fn guarded_off(entries: &[Entry], env: &Env) -> Vec<bool> {
    let mut out = vec![false; entries.len()];
    if !entries.iter().any(|e| e.kind == EntryKind::Guard) {
        return out;
    }
    let local = super::configs::local_values(entries);
    let mut guards: Vec<bool> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        match e.kind {
            EntryKind::Guard => guards.push(is_off(&e.value, env, &local)),
            EntryKind::GuardEnd => {
                guards.pop();
            }
            _ => out[i] = guards.iter().any(|&off| off),
        }
    }
    out
}

/// Separates the parts of a condition as the reader stores it.
const SEP: char = '\u{1}';

/// The condition of a test command (`[ A op B ]`, `[[ A op B ]]`, `test A
/// op B`, `-n A`, `-z A`) at the start of `code`, when it compares one
/// variable with a literal: stored as `EXPR SEP OP SEP LITERAL` (`EXPR`
/// the side with the variable, as written).
pub(super) fn condition(code: &str) -> Option<String> {
    let t = code.trim();
    // The commands `false` and `true` (`if false; then` keeps a block
    // from running): a comparison of two literals that never or always
    // holds.
    for (word, lit) in [("false", "1"), ("true", "0")] {
        if t.strip_prefix(word)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([';', ' ', '\t']))
        {
            return Some(format!("0{SEP}={SEP}{lit}"));
        }
    }
    let inner = if let Some(rest) = t.strip_prefix("[[") {
        rest.split_once("]]")?.0
    } else if let Some(rest) = t.strip_prefix('[') {
        let end = rest.find(" ]").or_else(|| rest.find("\t]"))?;
        &rest[..end]
    } else if let Some(rest) = t.strip_prefix("test ") {
        rest.split([';', '&', '|']).next()?
    } else {
        return None;
    };
    let words = shlex::split(inner)?;
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    if words
        .iter()
        .any(|w| matches!(*w, "&&" | "||" | "-a" | "-o" | "!" | "(" | ")"))
    {
        return None;
    }
    match words.as_slice() {
        [op @ ("-n" | "-z"), x] if x.contains('$') => Some(format!("{x}{SEP}{op}{SEP}")),
        [a, op, b] if known(op) => {
            let (var, lit) = match (a.contains('$'), b.contains('$')) {
                (true, false) => (a, b),
                (false, true) => (b, a),
                _ => return None,
            };
            // `[ 1 -lt "$X" ]` reads the other way round: keep the order
            // for the ordering operators, flipped.
            let op = if var == b { flipped(op)? } else { op };
            Some(format!("{var}{SEP}{op}{SEP}{lit}"))
        }
        _ => None,
    }
}

fn known(op: &str) -> bool {
    matches!(
        op,
        "=" | "==" | "!=" | "-eq" | "-ne" | "-gt" | "-ge" | "-lt" | "-le"
    )
}

fn flipped(op: &str) -> Option<&'static str> {
    Some(match op {
        "=" | "==" => "=",
        "!=" => "!=",
        "-eq" => "-eq",
        "-ne" => "-ne",
        "-gt" => "-lt",
        "-ge" => "-le",
        "-lt" => "-gt",
        "-le" => "-ge",
        _ => return None,
    })
}

/// The condition `cond` (as [`condition`] stores it; a leading `!` for the
/// `else` branch) negated.
pub(super) fn negated(cond: &str) -> String {
    match cond.strip_prefix('!') {
        Some(c) => c.to_string(),
        None => format!("!{cond}"),
    }
}

/// Whether the settings under `cond` are off: no value the package gives
/// the variable makes it true. Unknown (a value nothing resolves, a
/// number an arithmetic test cannot read) is on.
pub(super) fn is_off(cond: &str, env: &Env, local: &BTreeMap<String, String>) -> bool {
    let (negate, cond) = match cond.strip_prefix('!') {
        Some(c) => (true, c),
        None => (false, cond),
    };
    let mut parts = cond.split(SEP);
    let (Some(expr), Some(op), Some(lit)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let values = interpolate::expand(expr, env, local);
    if values.is_empty() {
        return false;
    }
    values.iter().all(|v| {
        if v.contains('$') || interpolate::unresolved(v) {
            return false;
        }
        holds(v.trim(), op, lit).is_some_and(|h| h == negate)
    })
}

/// `env` less the assignments under a guard that `env` itself says is off
/// (`[ "${ASYNC:-0}" = 1 ] && KVSTORE=dist_async` gives `KVSTORE` no
/// value), from the entries of every file of an implementation. One pass:
/// a guard is decided with every assignment, its own branch's included.
pub(super) fn live_env(files: &[&[Entry]], env: &Env) -> Env {
    if !files
        .iter()
        .any(|e| e.iter().any(|x| x.kind == EntryKind::Guard))
    {
        return env.clone();
    }
    let mut out = Env::default();
    for entries in files {
        if !entries.iter().any(|x| x.kind == EntryKind::Guard) {
            out.add(entries);
            continue;
        }
        let local = super::configs::local_values(entries);
        // Depth of the guards open at each entry, and how many of them are
        // off; an entry under none that is off is kept.
        let mut guards: Vec<bool> = Vec::new();
        let mut off = 0usize;
        let mut dropped = vec![false; entries.len()];
        for (i, e) in entries.iter().enumerate() {
            match e.kind {
                EntryKind::Guard => {
                    let o = is_off(&e.value, env, &local);
                    off += usize::from(o);
                    guards.push(o);
                }
                EntryKind::GuardEnd => {
                    off -= usize::from(guards.pop().unwrap_or(false));
                }
                _ => dropped[i] = off > 0,
            }
        }
        if !dropped.contains(&true) {
            out.add(entries);
            continue;
        }
        let live: Vec<Entry> = entries
            .iter()
            .zip(&dropped)
            .filter(|(_, &d)| !d)
            .map(|(e, _)| e.clone())
            .collect();
        out.add(&live);
    }
    out
}

/// Whether `value op literal` holds; `None` when it cannot be told.
fn holds(value: &str, op: &str, lit: &str) -> Option<bool> {
    let num = |s: &str| s.trim().parse::<f64>().ok();
    Some(match op {
        "=" | "==" => value == lit,
        "!=" => value != lit,
        "-n" => !value.is_empty(),
        "-z" => value.is_empty(),
        _ => {
            let (a, b) = (num(value)?, num(lit)?);
            match op {
                "-eq" => a == b,
                "-ne" => a != b,
                "-gt" => a > b,
                "-ge" => a >= b,
                "-lt" => a < b,
                "-le" => a <= b,
                _ => return None,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn off(cond_line: &str, env_text: &str) -> Option<bool> {
        let cond = condition(cond_line)?;
        let entries = super::super::configs::parse(env_text, super::super::configs::Format::Shell);
        let mut env = Env::default();
        env.add(&entries);
        let local = super::super::configs::local_values(&entries);
        Some(is_off(&cond, &env, &local))
    }

    #[test]
    fn conditions_over_one_variable() {
        // The default is off and nothing switches it on.
        assert_eq!(off(r#"[ "${USE_PSGD:-0}" = 1 ]"#, ""), Some(true));
        assert_eq!(off(r#"[[ ${USE_PSGD:-0} -eq 1 ]]"#, ""), Some(true));
        assert_eq!(
            off(r#"[ "$USE_PSGD" = "1" ]"#, "USE_PSGD=${USE_PSGD:-0}\n"),
            Some(true)
        );
        assert_eq!(off(r#"test "${X:-false}" == true"#, ""), Some(true));
        assert_eq!(off(r#"[ 1 -le "${N:-0}" ]"#, ""), Some(true));
        assert_eq!(off(r#"[ -n "${ENABLE:-}" ]"#, ""), Some(true));
        // A config of the implementation switches it on: on.
        assert_eq!(
            off(r#"[ "${USE_PSGD:-0}" = 1 ]"#, "export USE_PSGD=1\n"),
            Some(false)
        );
        // A default that is on, a value nothing gives, an unknown test: on.
        assert_eq!(off(r#"[ "${USE_PSGD:-1}" = 1 ]"#, ""), Some(false));
        assert_eq!(off(r#"[ "$USE_PSGD" = 1 ]"#, ""), Some(false));
        assert_eq!(off(r#"[ "${N:-x}" -eq 1 ]"#, ""), Some(false));
        // Not a condition over one variable.
        assert_eq!(off(r#"[ "$A" = "$B" ]"#, ""), None);
        assert_eq!(off(r#"[[ ${A:-0} == 1 && ${B:-0} == 1 ]]"#, ""), None);
        assert_eq!(off(r#"[ -f "$FILE" ]"#, ""), None);
        // The commands false and true.
        assert_eq!(off("false; then", ""), Some(true));
        assert_eq!(off("false", ""), Some(true));
        assert_eq!(off("true; then", ""), Some(false));
        assert_eq!(off("falsely", ""), None);
    }

    #[test]
    fn else_branches_are_the_negation() {
        let cond = condition(r#"[ "${USE_PSGD:-0}" = 1 ]"#).expect("condition");
        let env = Env::default();
        let local = BTreeMap::new();
        assert!(is_off(&cond, &env, &local));
        assert!(!is_off(&negated(&cond), &env, &local));
        assert_eq!(negated(&negated(&cond)), cond);
    }
}
