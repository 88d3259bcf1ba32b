//! The repeatability notes as text, for `check` and `repeat`: one line per
//! setting, under a heading that says they never change a verdict.

use super::escape::text as esc;
use crate::check::policy::repeatability::RepeatabilityNote;

/// `path:line: repeatable|not repeatable: message`.
pub fn line(n: &RepeatabilityNote) -> String {
    let effect = if n.effect == "repeatable" {
        "repeatable"
    } else {
        "not repeatable"
    };
    let at = match n.line {
        Some(l) => format!("{}:{l}", esc(&n.path)),
        None => esc(&n.path).to_string(),
    };
    format!("{at}: {effect}: {}", esc(&n.message))
}

/// The section: a heading and one indented line per note; nothing when
/// there are none.
pub fn text_lines(notes: &[RepeatabilityNote]) -> Vec<String> {
    if notes.is_empty() {
        return Vec::new();
    }
    let mut out = vec![format!(
        "Repeatability ({} in the implementation configs; notes, never a verdict):",
        if notes.len() == 1 {
            "1 setting".to_string()
        } else {
            format!("{} settings", notes.len())
        }
    )];
    out.extend(notes.iter().map(|n| format!("  {}", line(n))));
    out
}
