//! Loading a ruleset: read every pack of `<usage>/<version>/compliance/`,
//! validate it and compile its expressions. Any problem is an error naming
//! the pack file and the rule, before a single log is read.

use super::expr::{self, CompileError, Expr};
use super::pack::{AggregateSpec, EndSpec, PackFile, Require, RuleSpec};
use crate::finding::Severity;
use crate::rulebook::codes::CodeRegistry;
use crate::rulebook::source::{load_yaml, DataError, RuleSource};
use std::collections::{BTreeMap, BTreeSet};

/// A ruleset ready to check logs: compiled once, shared read-only.
#[derive(Debug)]
pub struct Ruleset {
    pub usage: String,
    pub version: String,
    /// Packs by name (file stem); the root pack is `common`.
    pub packs: BTreeMap<String, Pack>,
    /// Every key some pack has a rule for or aggregates from.
    pub keys: BTreeSet<String>,
    /// The line format of the round's logs (`log_format.yaml`; MLLOG when
    /// the round has none).
    pub format: crate::mllog::Format,
}

/// `<usage>/<version>/log_format.yaml`: which line format the round's logs
/// use (`format: mll` for training 0.6.0).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LogFormatFile {
    format: crate::mllog::Format,
}

/// The line format of `usage`/`version`: MLLOG unless the round's
/// `log_format.yaml` says otherwise.
pub fn log_format(
    source: &RuleSource,
    usage: &str,
    version: &str,
) -> Result<crate::mllog::Format, DataError> {
    let rel = format!("{usage}/{version}/log_format.yaml");
    Ok(load_yaml::<LogFormatFile>(source, &rel)?
        .map(|f| f.format)
        .unwrap_or_default())
}

pub const ROOT_PACK: &str = "common";

/// Most expressions one pack may hold, counted after YAML aliases are
/// expanded (the largest shipped pack has a few hundred).
pub const MAX_PACK_EXPRS: usize = 5_000;
/// Most bytes of expression text one pack may hold, after aliases.
pub const MAX_PACK_EXPR_BYTES: usize = 256 << 10;

#[derive(Debug)]
pub struct Pack {
    pub name: String,
    /// `training/5.0.0/compliance/common.yaml`: the rule id prefix.
    pub id: String,
    pub state: Vec<(String, Expr)>,
    pub aggregates: Vec<Aggregate>,
    pub rules: Vec<Rule>,
    pub by_key: crate::check::KeyMap<usize>,
    pub end: Vec<End>,
}

#[derive(Debug)]
pub struct Rule {
    pub key: String,
    pub code: String,
    pub severity: Severity,
    pub help: String,
    pub require: Option<Require>,
    pub once: bool,
    pub before: Vec<(String, Expr)>,
    pub check: Vec<Check>,
    pub set: Vec<(String, Expr)>,
    pub include: Option<Expr>,
    pub first_check: Vec<Check>,
    pub at_least_one: Option<(String, Expr)>,
}

/// One check of a rule: its source text, compiled form, and the code its
/// failure is reported under when not the rule's.
#[derive(Debug)]
pub struct Check {
    pub src: String,
    pub expr: Expr,
    pub code: Option<CodeRef>,
}

#[derive(Debug, Clone)]
pub struct CodeRef {
    pub code: String,
    pub severity: Severity,
    pub help: String,
}

#[derive(Debug)]
pub struct Aggregate {
    pub key: String,
    pub from: String,
    pub when: Option<Expr>,
    pub group_by: Expr,
    pub group_field: String,
    pub field: Expr,
}

#[derive(Debug)]
pub struct End {
    pub code: String,
    pub severity: Severity,
    pub help: String,
    pub before: Vec<(String, Expr)>,
    pub check: Vec<(String, Expr)>,
}

/// A rules folder given by the user must be a readable folder.
pub(crate) fn check_dir(source: &RuleSource) -> Result<(), DataError> {
    if let RuleSource::Dir(root) = source {
        let message = match std::fs::metadata(root) {
            Ok(m) if m.is_dir() => return Ok(()),
            Ok(_) => "is a file, not a folder of rule data".to_string(),
            Err(e) => e.to_string(),
        };
        return Err(DataError {
            path: format!("--rules {}", root.display()),
            message,
        });
    }
    Ok(())
}

/// The versions of `usage` that have compliance packs, sorted.
pub fn available_versions(source: &RuleSource, usage: &str) -> Vec<String> {
    source
        .list(usage)
        .into_iter()
        .filter(|v| !source.list(&format!("{usage}/{v}/compliance")).is_empty())
        .collect()
}

/// Every (usage, version) that has compliance packs, sorted: the rulesets
/// this rule data can check. Usages are the top-level folders of the rule
/// data that hold versions (`training`, `hpc`).
pub fn available_rulesets(source: &RuleSource) -> Vec<(String, String)> {
    source
        .list("")
        .into_iter()
        .flat_map(|usage| {
            available_versions(source, &usage)
                .into_iter()
                .map(move |v| (usage.clone(), v))
        })
        .collect()
}

/// Every ruleset this rule data can check, by usage, the asked usage first:
/// `training 0.7.0, 1.0.0; hpc 1.0.0 (--usage hpc)`.
fn available_by_usage(source: &RuleSource, usage: &str) -> String {
    let mut usages: Vec<String> = source
        .list("")
        .into_iter()
        .filter(|u| !available_versions(source, u).is_empty())
        .collect();
    usages.sort_by_key(|u| (u != usage, u.clone()));
    usages
        .iter()
        .map(|u| {
            let flag = if u == usage {
                String::new()
            } else {
                format!(" (--usage {u})")
            };
            format!("{u} {}{flag}", available_versions(source, u).join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

impl Ruleset {
    /// Why a ruleset cannot be loaded is a [`DataError`] naming the file (or
    /// the missing round's compliance folder); the app exits with status 2.
    pub fn load(source: &RuleSource, usage: &str, version: &str) -> Result<Ruleset, DataError> {
        check_dir(source)?;
        let codes = CodeRegistry::load(source)?;
        Self::load_with_codes(source, &codes, usage, version)
    }

    pub fn load_with_codes(
        source: &RuleSource,
        codes: &CodeRegistry,
        usage: &str,
        version: &str,
    ) -> Result<Ruleset, DataError> {
        check_dir(source)?;
        let dir = format!("{usage}/{version}/compliance");
        let files: Vec<String> = source
            .list(&dir)
            .into_iter()
            .filter(|n| n.ends_with(".yaml"))
            .collect();
        if files.is_empty() || !files.iter().any(|f| f == "common.yaml") {
            return Err(DataError::new(
                source,
                &dir,
                format!(
                    "unknown ruleset '{usage} {version}'; available: {}",
                    available_by_usage(source, usage)
                ),
            ));
        }
        let mut packs = BTreeMap::new();
        let mut keys = BTreeSet::new();
        for file in files {
            let rel = format!("{dir}/{file}");
            let spec: PackFile = load_yaml(source, &rel)?
                .ok_or_else(|| DataError::new(source, &rel, "cannot be read"))?;
            let name = file.trim_end_matches(".yaml").to_string();
            let pack = compile_pack(&name, &rel, spec, codes)
                .map_err(|message| DataError::new(source, &rel, message))?;
            for r in &pack.rules {
                keys.insert(r.key.clone());
            }
            for a in &pack.aggregates {
                keys.insert(a.from.clone());
            }
            packs.insert(name, pack);
        }
        let format = log_format(source, usage, version)?;
        Ok(Ruleset {
            usage: usage.to_string(),
            version: version.to_string(),
            packs,
            keys,
            format,
        })
    }
}

fn compile_pack(
    name: &str,
    id: &str,
    spec: PackFile,
    codes: &CodeRegistry,
) -> Result<Pack, String> {
    // State variables: declared under `state:` or assigned by some rule.
    let mut vars: BTreeSet<String> = spec.state.keys().cloned().collect();
    for r in &spec.rules {
        vars.extend(r.before.keys().cloned());
        vars.extend(r.set.keys().cloned());
    }
    for e in &spec.end {
        vars.extend(e.before.keys().cloned());
    }
    let known = |n: &str| vars.contains(n);
    // YAML aliases can repeat one long expression thousands of times in a
    // small file: bound what a pack compiles (and then runs on every event).
    let budget = std::cell::Cell::new((0usize, 0usize));
    let one = |src: &str, ctx: &str| -> Result<Expr, String> {
        let (count, bytes) = budget.get();
        let (count, bytes) = (count + 1, bytes + src.len());
        budget.set((count, bytes));
        if count > MAX_PACK_EXPRS || bytes > MAX_PACK_EXPR_BYTES {
            return Err(format!(
                "{ctx}: the pack holds more than {MAX_PACK_EXPRS} expressions or {MAX_PACK_EXPR_BYTES} bytes of them (after YAML aliases are expanded); split or shorten it"
            ));
        }
        expr::compile(src, &known).map_err(|e: CompileError| format!("{ctx}: {e}"))
    };
    let many = |list: Vec<String>, ctx: &str| -> Result<Vec<(String, Expr)>, String> {
        list.into_iter()
            .map(|s| one(&s, ctx).map(|e| (s.trim().to_string(), e)))
            .collect()
    };
    let checks = |list: Vec<(String, Option<String>)>, ctx: &str| -> Result<Vec<Check>, String> {
        list.into_iter()
            .map(|(s, code)| {
                let code = match code {
                    Some(c) => {
                        let (severity, help) = code_info(codes, &c, None, ctx)?;
                        Some(CodeRef {
                            code: c,
                            severity,
                            help,
                        })
                    }
                    None => None,
                };
                Ok(Check {
                    expr: one(&s, ctx)?,
                    src: s.trim().to_string(),
                    code,
                })
            })
            .collect()
    };
    let assigns = |map: indexmap::IndexMap<String, String>, ctx: &str| {
        map.into_iter()
            .map(|(k, s)| one(&s, &format!("{ctx}, '{k}'")).map(|e| (k, e)))
            .collect::<Result<Vec<_>, String>>()
    };

    let state = assigns(spec.state, "state")?;
    let mut aggregates = Vec::new();
    for AggregateSpec {
        key,
        from,
        when,
        group_by,
        group_field,
        field,
    } in spec.aggregate
    {
        let ctx = format!("aggregate '{key}'");
        aggregates.push(Aggregate {
            when: when.map(|w| one(&w, &ctx)).transpose()?,
            group_by: one(&group_by, &ctx)?,
            field: one(&field, &ctx)?,
            key,
            from,
            group_field,
        });
    }

    let mut rules = Vec::new();
    let mut by_key = crate::check::KeyMap::default();
    for RuleSpec {
        key,
        code,
        require,
        once,
        before,
        check,
        set,
        include,
        first_check,
        at_least_one,
        severity,
    } in spec.rules
    {
        let ctx = format!("rule for '{key}'");
        let (severity, help) = code_info(codes, &code, severity.as_deref(), &ctx)?;
        if by_key.insert(key.clone(), rules.len()).is_some() {
            return Err(format!("{ctx}: the key has two rules in one pack"));
        }
        if let Some(Require::AtLeast(0)) = require {
            return Err(format!("{ctx}: at_least needs a count of 1 or more"));
        }
        rules.push(Rule {
            before: assigns(before, &ctx)?,
            check: checks(check.items(), &ctx)?,
            set: assigns(set, &ctx)?,
            include: include.map(|s| one(&s, &ctx)).transpose()?,
            first_check: checks(first_check.items(), &ctx)?,
            at_least_one: at_least_one
                .map(|s| one(&s, &ctx).map(|e| (s.trim().to_string(), e)))
                .transpose()?,
            key,
            code,
            severity,
            help,
            require,
            once,
        });
    }
    let mut end = Vec::new();
    for EndSpec {
        code,
        before,
        check,
    } in spec.end
    {
        let (severity, help) = code_info(codes, &code, None, "end")?;
        end.push(End {
            before: assigns(before, "end")?,
            check: many(check.to_vec(), "end")?,
            code,
            severity,
            help,
        });
    }
    Ok(Pack {
        name: name.to_string(),
        id: id.to_string(),
        state,
        aggregates,
        rules,
        by_key,
        end,
    })
}

fn code_info(
    codes: &CodeRegistry,
    code: &str,
    severity: Option<&str>,
    ctx: &str,
) -> Result<(Severity, String), String> {
    let doc = codes
        .get(code)
        .ok_or_else(|| format!("{ctx}: code {code} is not documented in rules/codes/*.yaml"))?;
    let sev = severity.unwrap_or(&doc.severity);
    let sev = Severity::parse(sev)
        .ok_or_else(|| format!("{ctx}: severity must be error, warning or note, not '{sev}'"))?;
    Ok((sev, doc.help.clone()))
}
