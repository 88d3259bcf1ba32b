//! The repeatability section of the HTML page: the implementation settings
//! that decide whether runs repeat bit for bit (notes, never a verdict).

use crate::check::policy::repeatability::RepeatabilityNote;
use serde::Serialize;

/// One note as the page shows it.
#[derive(Debug, Serialize)]
pub struct NoteView {
    pub path: String,
    pub path_segments: Vec<String>,
    /// Empty when the note has no line.
    pub line: String,
    /// `repeatable` or `not repeatable`.
    pub effect: &'static str,
    /// `repeatable` or `not-repeatable`, for the style.
    pub class: &'static str,
    pub setting: String,
    pub message: String,
}

/// The notes of the report, in report order.
pub fn view(notes: &[RepeatabilityNote]) -> Vec<NoteView> {
    notes
        .iter()
        .map(|n| {
            let repeatable = n.effect == "repeatable";
            NoteView {
                path: n.path.clone(),
                path_segments: super::findings::segments(&n.path),
                line: n.line.map(|l| l.to_string()).unwrap_or_default(),
                effect: if repeatable {
                    "repeatable"
                } else {
                    "not repeatable"
                },
                class: if repeatable {
                    "repeatable"
                } else {
                    "not-repeatable"
                },
                setting: n.setting.clone(),
                message: n.message.clone(),
            }
        })
        .collect()
}
