//! The policy pack's own rules, one per framework setting and signal
//! family, named as findings name them (`policy/frameworks/bagua.yaml#
//! async_algorithm`, `policy/signals.yaml#stale`): what `mlaudit rules
//! list --ruleset V` lists beside the compliance rules and what `mlaudit
//! rules explain RULE` prints.

use super::PolicyRules;

/// One rule of the policy pack.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyRule {
    /// As the `rule` field of its findings gives it.
    pub rule: String,
    pub code: String,
    /// Its own severity (a framework setting's), else the code's.
    pub severity: Option<String>,
    /// What it finds: a setting's reason, a family's title.
    pub what: String,
    /// The framework a setting belongs to.
    pub framework: Option<String>,
    /// Words that end the key path, in normal form (a setting's).
    pub key: Option<String>,
    /// Words in the value, in normal form (a setting's).
    pub value: Option<String>,
    /// A setting's threshold: on when the value is a number at least this.
    pub min: Option<f64>,
    /// A family's word patterns (any name or short value).
    pub patterns: Vec<String>,
    /// Where the framework documents the option.
    pub doc: Option<String>,
    /// `repeatable` or `not_repeatable` (repeatability notes).
    pub effect: Option<String>,
}

/// Every signal family, then every framework setting, in data order.
pub fn catalog(rules: &PolicyRules) -> Vec<PolicyRule> {
    let mut out: Vec<PolicyRule> = rules
        .signals
        .families
        .iter()
        .map(|f| PolicyRule {
            rule: rules.signal_rule(&f.name),
            code: f.code.clone(),
            severity: None,
            what: f.title.clone(),
            framework: None,
            key: None,
            value: None,
            min: None,
            patterns: f.patterns.clone(),
            doc: None,
            effect: None,
        })
        .collect();
    out.extend(rules.frameworks.settings.iter().map(|s| PolicyRule {
        rule: rules.framework_rule(&s.framework, &s.id),
        code: s.code.clone(),
        severity: Some(s.severity.as_str().to_string()),
        what: s.why.clone(),
        framework: Some(s.framework_name.clone()),
        key: s.key.clone(),
        value: s.value.clone(),
        min: s.min,
        patterns: Vec::new(),
        doc: Some(s.doc.clone()),
        effect: s.effect.clone(),
    }));
    out
}

/// The rule `name` names: its whole name, else the one rule whose name
/// ends with it after a `/` (`bagua.yaml#async_algorithm`) or whose file
/// stem and anchor it gives (`bagua#async_algorithm`). Letter case is
/// ignored. `Err` lists the candidates when more than one fits.
pub fn find<'a>(all: &'a [PolicyRule], name: &str) -> Result<Option<&'a PolicyRule>, Vec<String>> {
    let want = name.trim().to_ascii_lowercase();
    if let Some(r) = all.iter().find(|r| r.rule.to_ascii_lowercase() == want) {
        return Ok(Some(r));
    }
    let fits = |r: &PolicyRule| {
        let rule = r.rule.to_ascii_lowercase();
        let short = rule.replacen(".yaml#", "#", 1);
        [rule, short]
            .iter()
            .any(|n| n.ends_with(&want) && n[..n.len() - want.len()].ends_with('/'))
    };
    let found: Vec<&PolicyRule> = all.iter().filter(|r| fits(r)).collect();
    match found.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        many => Err(many.iter().map(|r| r.rule.clone()).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::policy::test_support::rules;

    #[test]
    fn every_setting_and_family_once() {
        let rules = rules();
        let all = catalog(&rules);
        assert_eq!(
            all.len(),
            rules.signals.families.len() + rules.frameworks.settings.len()
        );
        let mut names: Vec<&str> = all.iter().map(|r| r.rule.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len(), "rule names are unique");
        let r = all
            .iter()
            .find(|r| r.rule.ends_with("frameworks/bagua.yaml#async_algorithm"))
            .unwrap_or_else(|| panic!("no bagua rule"));
        assert_eq!(r.code, "POL011");
        assert_eq!(r.severity.as_deref(), Some("error"));
        assert_eq!(r.framework.as_deref(), Some("Bagua"));
        assert!(r.value.as_deref().is_some_and(|v| v.contains("async")));
    }

    #[test]
    fn found_by_whole_or_short_name() {
        let rules = rules();
        let all = catalog(&rules);
        let whole = all
            .iter()
            .find(|r| r.rule.ends_with("#async_algorithm"))
            .map(|r| r.rule.clone())
            .unwrap_or_default();
        for name in [
            whole.as_str(),
            "bagua.yaml#async_algorithm",
            "bagua#async_algorithm",
            "BAGUA#ASYNC_ALGORITHM",
            "frameworks/bagua.yaml#async_algorithm",
        ] {
            let got = find(&all, name).ok().flatten().map(|r| r.rule.clone());
            assert_eq!(got.as_deref(), Some(whole.as_str()), "{name}");
        }
        assert!(matches!(find(&all, "gua#async_algorithm"), Ok(None)));
        assert!(matches!(find(&all, "bagua#nothing"), Ok(None)));
        let stale = find(&all, "signals.yaml#stale").ok().flatten();
        assert_eq!(stale.map(|r| r.code.as_str()), Some("POL010"));
    }
}
