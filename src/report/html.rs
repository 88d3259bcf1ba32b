//! `check --html FILE`: one self-contained HTML page a reviewer can read.
//!
//! The page is rendered from the minijinja templates in `templates/`
//! (compiled into the binary) with HTML auto-escaping on for every
//! template, so every string that comes from a log, a config or a system
//! description is shown as text. Only the page's own stylesheet and script,
//! constants of this crate, are inserted unescaped, and a
//! Content-Security-Policy lets nothing but that script (by its SHA-256)
//! run: no network, no external fonts, no other script.
//!
//! The page's view is computed before any HTML is written: `page` builds
//! it from the outcome (summary, table, findings, glossary), `folder`
//! one card per benchmark folder; this file only renders the view.
//!
//! Charts are inline SVG computed here ([`svg`]), so the page reads fully
//! without JavaScript; the small script only sorts tables and filters the
//! findings. Output is deterministic: no timestamps, everything sorted.

pub mod findings;
mod folder;
mod page;
pub mod repeatability;
pub mod round;
pub mod svg;
pub mod target;

use crate::aggregate::stats::data::StatsConfig;
use crate::report::CheckOutcome;
use crate::rulebook::codes::CodeRegistry;
use minijinja::{context, AutoEscape, Environment, UndefinedBehavior, Value};
use std::collections::BTreeMap;
use std::path::Path;
use target::QualityTarget;

const PAGE: &str = include_str!("../../templates/report.html");
const CHART: &str = include_str!("../../templates/chart.html");
const STYLE: &str = include_str!("../../templates/report.css");
const SCRIPT: &str = include_str!("../../templates/report.js");

/// What the page needs besides the outcome: rule data already loaded by
/// the caller, and words it decided.
pub struct HtmlOptions<'a> {
    /// The statistics thresholds and RCP tables of the ruleset (for the
    /// reference points on the charts and the olympic roles).
    pub stats: &'a StatsConfig,
    /// The code registry (help text of the findings).
    pub codes: &'a CodeRegistry,
    /// Where the rules came from, in words.
    pub rules_source: String,
    /// The command that reproduces the verdict.
    pub command: String,
    /// Quality targets by compliance pack name (`closed_bert`), drawn on
    /// the evaluation charts ([`target::from_ruleset`]).
    pub targets: BTreeMap<String, QualityTarget>,
}

/// Renders and writes the page.
pub fn write_report(
    path: &Path,
    outcome: &CheckOutcome,
    opts: &HtmlOptions<'_>,
) -> anyhow::Result<()> {
    let html = render(outcome, opts)?;
    std::fs::write(path, html)
        .map_err(|e| anyhow::anyhow!("{}: cannot write the HTML report: {e}", path.display()))
}

/// The base64 SHA-256 digest of the page's script, which the
/// Content-Security-Policy names as the one script allowed to run.
fn script_hash() -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(SCRIPT.as_bytes()))
}

/// The page as a string.
pub fn render(outcome: &CheckOutcome, opts: &HtmlOptions<'_>) -> anyhow::Result<String> {
    let page = page::build(outcome, opts);
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.add_template("chart.html", CHART)?;
    env.add_template("report.html", PAGE)?;
    let tmpl = env.get_template("report.html")?;
    let csp = format!(
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{}'; base-uri 'none'; form-action 'none'",
        script_hash()
    );
    let html = tmpl.render(context! {
        page => Value::from_serialize(&page),
        csp => csp,
        // Constants of this crate, never data: the only unescaped text.
        style => Value::from_safe_string(STYLE.to_string()),
        script => Value::from_safe_string(SCRIPT.to_string()),
    })?;
    Ok(html)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_hash_is_sha256_in_base64() {
        // `printf '' | openssl dgst -sha256 -binary | base64` for the empty
        // string, and the hash is 44 characters of base64 for the script.
        use base64::Engine as _;
        use sha2::Digest as _;
        assert_eq!(
            base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(b"")),
            "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
        );
        assert_eq!(script_hash().len(), 44);
    }

    #[test]
    fn only_constants_are_unescaped() {
        for t in [PAGE, CHART] {
            assert!(!t.contains("|safe") && !t.contains("| safe"));
        }
        // The stylesheet and the script cannot close their elements.
        assert!(!SCRIPT.contains("</") && !STYLE.contains("</"));
    }
}
