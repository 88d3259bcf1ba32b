//! The settings a command runs with: its flags, else the project config
//! (`.mlaudit.toml`, see [`crate::config`]), else the built-in defaults.
//!
//! The config is the first `.mlaudit.toml` found from the current
//! directory up to the root of the git repository ([`Config::find`]).

use crate::app::cli::Format;
use crate::config::Config;
use clap::ValueEnum;

pub const DEFAULT_USAGE: &str = "training";

/// What a command runs with, once flags, config and defaults are merged.
/// There is no default ruleset: see [`Settings::choose_ruleset`].
#[derive(Debug, Clone)]
pub struct Settings {
    pub usage: String,
    /// Whether the flag or the config named the usage; when neither does,
    /// a usage round folder in the checked paths (`hpc-v3.0`) names it.
    pub usage_given: bool,
    /// The flag's or the config's; `None`: neither gives one, and the
    /// command infers the round from what it checks ([`crate::round`]).
    pub ruleset: Option<String>,
    pub format: Format,
    /// The project config, when one was found.
    pub config: Option<Config>,
}

/// The project config that applies in the current directory, if any
/// ([`Config::find`]).
pub fn find_config() -> anyhow::Result<Option<Config>> {
    Ok(Config::find(&std::env::current_dir()?)?)
}

/// Merges flags (`None`: not given) with the config found from the current
/// directory and the defaults.
pub fn resolve(
    usage: Option<&str>,
    ruleset: Option<&str>,
    format: Option<Format>,
) -> anyhow::Result<Settings> {
    let config = find_config()?;
    merge(usage, ruleset, format, config)
}

/// [`resolve`] with the config given.
pub fn merge(
    usage: Option<&str>,
    ruleset: Option<&str>,
    format: Option<Format>,
    config: Option<Config>,
) -> anyhow::Result<Settings> {
    let (usage_flag, ruleset_flag) = (usage.is_some(), ruleset.is_some());
    let from_config =
        |get: fn(&Config) -> Option<&String>| config.as_ref().and_then(get).map(String::as_str);
    let format = match (format, config.as_ref().and_then(|c| c.format.as_ref())) {
        (Some(f), _) => f,
        (None, Some(name)) => Format::from_str(name, true).map_err(|_| {
            anyhow::anyhow!(
                "{}: format '{name}' is not one of text, json, sarif, junit, github",
                config
                    .as_ref()
                    .map(|c| c.path.display().to_string())
                    .unwrap_or_default()
            )
        })?,
        (None, None) => Format::Text,
    };
    let usage = usage.or(from_config(|c| c.usage.as_ref()));
    let ruleset = ruleset.or(from_config(|c| c.ruleset.as_ref()));
    for (what, value, flag) in [
        ("usage", usage, usage_flag),
        ("ruleset", ruleset, ruleset_flag),
    ] {
        if let Some(v) = value.filter(|v| !crate::rulebook::source::is_valid_name(v)) {
            let from = if flag {
                format!("--{what}")
            } else {
                config
                    .as_ref()
                    .map(|c| c.path.display().to_string())
                    .unwrap_or_default()
            };
            anyhow::bail!(
                "{from}: {what} '{}' is not a name (letters, digits, '.', '-', '_'; never a path)",
                crate::report::escape::text(v)
            );
        }
    }
    Ok(Settings {
        usage_given: usage.is_some(),
        usage: usage
            .or(from_config(|c| c.usage.as_ref()))
            .unwrap_or(DEFAULT_USAGE)
            .to_string(),
        ruleset: ruleset
            .or(from_config(|c| c.ruleset.as_ref()))
            .map(str::to_string),
        format,
        config,
    })
}

impl Settings {
    /// The ruleset: the flag, else the config's, else the round `paths`
    /// leave no doubt about ([`crate::discover::round::choose`]).
    ///
    /// When neither the flag nor the config names the usage, a usage round
    /// folder in `paths` does (`hpc-v3.0`, `hpc_results_v3.0`: `hpc`), before
    /// the ruleset is chosen.
    pub fn choose_ruleset(
        &mut self,
        source: &crate::rulebook::source::RuleSource,
        flag: Option<&str>,
        paths: &[std::path::PathBuf],
    ) -> Result<crate::discover::round::Chosen, crate::discover::round::RoundError> {
        let config = match (flag, &self.config) {
            (None, Some(c)) => c.ruleset.as_deref().map(|r| (r, c.path.as_path())),
            _ => None,
        };
        if !self.usage_given {
            if let Some(u) = crate::discover::round::usage_of_paths(paths) {
                self.usage = u.to_string();
            }
        }
        crate::discover::round::choose(source, &self.usage, flag, config, paths)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn cfg(text: &str) -> Option<Config> {
        Some(Config::parse(text, Path::new(".mlaudit.toml")).unwrap())
    }

    #[test]
    fn flags_override_the_config_which_overrides_the_defaults() {
        let s = merge(None, None, None, None).unwrap();
        assert_eq!((s.usage.as_str(), s.ruleset.as_deref()), ("training", None));
        assert_eq!(s.format, Format::Text);
        let c = cfg("ruleset = \"5.0.0\"\nformat = \"sarif\"\n");
        let s = merge(None, None, None, c.clone()).unwrap();
        assert_eq!(s.ruleset.as_deref(), Some("5.0.0"));
        assert_eq!(s.format, Format::Sarif);
        let s = merge(None, Some("5.1.0"), Some(Format::Json), c).unwrap();
        assert_eq!(s.ruleset.as_deref(), Some("5.1.0"));
        assert_eq!(s.format, Format::Json);
    }

    #[test]
    fn an_unknown_format_in_the_config_is_an_error_naming_the_file() {
        let e = merge(None, None, None, cfg("format = \"xml\"\n")).unwrap_err();
        assert!(e.to_string().contains(".mlaudit.toml: format 'xml'"), "{e}");
    }
}
