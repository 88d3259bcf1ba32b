//! The YAML format of a compliance rule pack, as written by people.
//!
//! See `rules/README.md` for the user documentation. These structs only
//! describe the shape; `load.rs` validates and compiles them.

use indexmap::IndexMap;
use serde::Deserialize;

/// One rule pack file: `rules/<usage>/<version>/compliance/<name>.yaml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackFile {
    #[serde(default)]
    pub description: Option<String>,
    /// Initial state: name → expression, evaluated in order before any line.
    #[serde(default)]
    pub state: IndexMap<String, String>,
    /// Virtual events built from real ones before the lines are walked.
    #[serde(default)]
    pub aggregate: Vec<AggregateSpec>,
    #[serde(default)]
    pub rules: Vec<RuleSpec>,
    /// Checks after the last line.
    #[serde(default)]
    pub end: Vec<EndSpec>,
}

/// What a key requires of its number of occurrences. Written as
/// `exactly_one`, `at_least_one`, `optional`, `{at_least: N}` or
/// `{at_least_one_of: [key, ...]}`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(try_from = "RawRequire")]
pub enum Require {
    /// Exactly one occurrence; several with one identical value is a warning.
    ExactlyOne,
    AtLeastOne,
    /// No requirement: checks run on whatever occurrences there are.
    Optional,
    AtLeast(u32),
    /// At least one occurrence of this key or of one of the listed keys.
    AtLeastOneOf(Vec<String>),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawRequire {
    Name(String),
    Map(std::collections::BTreeMap<String, serde_yaml::Value>),
}

impl TryFrom<RawRequire> for Require {
    type Error = String;

    fn try_from(raw: RawRequire) -> Result<Require, String> {
        const EXPECTED: &str =
            "expected exactly_one, at_least_one, optional, {at_least: N} or {at_least_one_of: [keys]}";
        match raw {
            RawRequire::Name(n) => match n.as_str() {
                "exactly_one" => Ok(Require::ExactlyOne),
                "at_least_one" => Ok(Require::AtLeastOne),
                "optional" => Ok(Require::Optional),
                other => Err(format!("unknown requirement '{other}': {EXPECTED}")),
            },
            RawRequire::Map(m) if m.len() == 1 => {
                let (k, v) = m.into_iter().next().ok_or(EXPECTED)?;
                match k.as_str() {
                    "at_least" => v
                        .as_u64()
                        .and_then(|n| u32::try_from(n).ok())
                        .filter(|&n| n > 0)
                        .map(Require::AtLeast)
                        .ok_or_else(|| "at_least needs a whole number of 1 or more".to_string()),
                    "at_least_one_of" => serde_yaml::from_value::<Vec<String>>(v)
                        .map(Require::AtLeastOneOf)
                        .map_err(|e| format!("at_least_one_of needs a list of keys: {e}")),
                    other => Err(format!("unknown requirement '{other}': {EXPECTED}")),
                }
            }
            RawRequire::Map(_) => Err(EXPECTED.to_string()),
        }
    }
}

/// An expression list: one string or a list of strings.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(untagged)]
pub enum Exprs {
    #[default]
    None,
    One(String),
    Many(Vec<CheckItem>),
}

/// One entry of an expression list: an expression, or `{expr, code}` when
/// its failure is reported under another code than the rule's (an eval
/// schedule check inside the `eval_accuracy` rule, for instance).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum CheckItem {
    Plain(String),
    Coded { expr: String, code: String },
}

impl Exprs {
    /// The expressions with their own code, if any.
    pub fn items(&self) -> Vec<(String, Option<String>)> {
        match self {
            Exprs::None => Vec::new(),
            Exprs::One(s) => vec![(s.clone(), None)],
            Exprs::Many(v) => v
                .iter()
                .map(|i| match i {
                    CheckItem::Plain(s) => (s.clone(), None),
                    CheckItem::Coded { expr, code } => (expr.clone(), Some(code.clone())),
                })
                .collect(),
        }
    }

    /// The expressions alone.
    pub fn to_vec(&self) -> Vec<String> {
        self.items().into_iter().map(|(s, _)| s).collect()
    }
}

/// The rules for one key.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    pub key: String,
    pub code: String,
    #[serde(default)]
    pub require: Option<Require>,
    /// Run `before`, `check` and `set` on the first occurrence only.
    #[serde(default)]
    pub once: bool,
    /// State updates evaluated before the checks.
    #[serde(default)]
    pub before: IndexMap<String, String>,
    /// Expressions that must be true on every occurrence.
    #[serde(default)]
    pub check: Exprs,
    /// State updates evaluated after the checks.
    #[serde(default)]
    pub set: IndexMap<String, String>,
    /// Expression giving the name of another pack of the same ruleset to
    /// run after this one (or none / an empty string for no pack).
    #[serde(default)]
    pub include: Option<String>,
    /// Expressions checked on the first occurrence only.
    #[serde(default)]
    pub first_check: Exprs,
    /// An expression at least one occurrence must satisfy.
    #[serde(default)]
    pub at_least_one: Option<String>,
    /// Severity of this rule's findings, when not the code's default.
    #[serde(default)]
    pub severity: Option<String>,
}

/// Builds one virtual event per group of real events, appended after the
/// last line (used for stable diffusion's FID + CLIP pairs).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AggregateSpec {
    /// Key of the virtual events.
    pub key: String,
    /// Key of the real events they are built from.
    pub from: String,
    /// Which real events take part (default: all).
    #[serde(default)]
    pub when: Option<String>,
    /// Expression whose value groups the events.
    pub group_by: String,
    /// Field of the virtual value that holds the group value.
    pub group_field: String,
    /// Expression giving the field name under which an event's value is stored.
    pub field: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndSpec {
    pub code: String,
    #[serde(default)]
    pub before: IndexMap<String, String>,
    #[serde(default)]
    pub check: Exprs,
}
