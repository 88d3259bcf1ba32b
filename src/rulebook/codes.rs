//! The registry of finding codes: what each code means and how to fix it.
//!
//! Every code any check can emit is documented in `rules/codes/*.yaml`:
//!
//! ```yaml
//! CM003:
//!   title: init_stop must be logged exactly once, after init_start
//!   severity: error        # the default severity of the code
//!   help: log init_stop once, after every init_start and before run_start
//!   policy: training rules, section 1.5 (optional citation)
//!   extra: true            # optional: a check the official tools do not make
//!   official_fail: true    # optional: the official tools fail where it is reported
//! ```
//!
//! An `extra` error fails mlaudit's verdict but not the report's
//! `official_verdict`, which says what the official tools would conclude.
//!
//! `mlaudit rules explain CODE` prints the entry.

use crate::rulebook::source::{load_yaml, DataError, RuleSource};
use indexmap::IndexMap;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CodeDoc {
    pub title: String,
    pub severity: String,
    pub help: String,
    #[serde(default)]
    pub policy: Option<String>,
    /// A check beyond the official tools (their verdict ignores it).
    #[serde(default)]
    pub extra: bool,
    /// A finding on which the official tools fail although mlaudit does
    /// not (a quirk of theirs it does not share): `official_verdict` fails.
    #[serde(default)]
    pub official_fail: bool,
    /// The registry file that documents the code (`rules/codes/run.yaml`),
    /// for links (SARIF `helpUri`).
    #[serde(skip)]
    pub file: String,
}

/// All documented codes, sorted by code.
#[derive(Debug, Clone, Default)]
pub struct CodeRegistry {
    pub codes: BTreeMap<String, CodeDoc>,
}

/// A code file that cannot be read or parsed, or documents a code wrongly:
/// the one rule-data error ([`DataError`]), naming the file.
pub type CodesError = DataError;

impl CodeRegistry {
    /// Reads every `codes/*.yaml` of `source`. A code documented twice, or a
    /// severity that is not error/warning/note, is an error naming the file.
    pub fn load(source: &RuleSource) -> Result<CodeRegistry, DataError> {
        let mut reg = CodeRegistry::default();
        for name in source.list("codes") {
            if !name.ends_with(".yaml") {
                continue;
            }
            let rel = format!("codes/{name}");
            let invalid = |message: String| DataError::new(source, &rel, message);
            let entries: IndexMap<String, CodeDoc> = load_yaml(source, &rel)?.unwrap_or_default();
            for (code, mut doc) in entries {
                doc.file = format!("rules/codes/{name}");
                if crate::finding::Severity::parse(&doc.severity).is_none() {
                    return Err(invalid(format!(
                        "code {code}: severity must be error, warning or note, not '{}'",
                        doc.severity
                    )));
                }
                if reg.codes.insert(code.clone(), doc).is_some() {
                    return Err(invalid(format!("code {code} is documented twice")));
                }
            }
        }
        Ok(reg)
    }

    pub fn get(&self, code: &str) -> Option<&CodeDoc> {
        self.codes.get(code)
    }

    /// Whether the official tools fail where `code` is reported.
    pub fn is_official_fail(&self, code: &str) -> bool {
        self.get(code).is_some_and(|d| d.official_fail)
    }

    /// Whether `code` is a check the official tools do not make.
    pub fn is_extra(&self, code: &str) -> bool {
        self.get(code).is_some_and(|d| d.extra)
    }
}
