//! Command-line interface (clap derive).

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// `mlaudit --version`: the crate version, the git commit it was built
/// from ("unknown" outside a checkout) and the digest of the built-in rules
/// (`--rules DIR` replaces them), both from build.rs.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("MLAUDIT_GIT_COMMIT"),
    ", built-in rules ",
    env!("MLAUDIT_RULES_DIGEST"),
    ")"
);

#[derive(Debug, Parser)]
#[command(
    name = "mlaudit",
    version = VERSION,
    about = "Checks MLPerf-style training submissions"
)]
pub struct Cli {
    /// Read rule data from this folder instead of the built-in rules.
    #[arg(long, global = true, value_name = "DIR")]
    pub rules: Option<PathBuf>,
    /// When to colour the text report: auto (a terminal, unless NO_COLOR is
    /// set or CLICOLOR_FORCE asks for it), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    pub color: ColorWhen,
    /// Quiet, as ruff's -q: print only the diagnostics. A text report
    /// becomes the findings that fail the run (errors; with --fail-on
    /// warning, warnings too), one per line, and nothing at all when the
    /// run passes; no progress bar, no notes on standard error (errors
    /// still). Other formats are unchanged. The exit status is unchanged.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

/// The formats of `repeat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RepeatFormat {
    Text,
    Json,
}

/// The formats of `rules list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    /// SARIF 2.1.0, for GitHub code scanning.
    Sarif,
    /// JUnit XML, for CI test reports.
    Junit,
    /// GitHub Actions annotations (workflow commands).
    Github,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check training logs against the compliance rules of a ruleset.
    Log {
        /// Benchmark family of the rules [default: project config, else training].
        #[arg(long)]
        usage: Option<String>,
        /// Rules version, e.g. 5.0.0 [default: project config, else 6.1.0].
        #[arg(long)]
        ruleset: Option<String>,
        #[command(flatten)]
        output: OutputArgs,
        /// Log files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Check a submission package, one results/<system>/<benchmark> folder,
    /// or log files: compliance, package rules, RCP, score and statistics.
    Check(CheckArgs),
    /// The RCP check of benchmark folders (or every folder of a package).
    Rcp(CheckArgs),
    /// Olympic scores of every benchmark folder of a package, as
    /// result_summarizer computes them.
    Score {
        #[command(flatten)]
        check: CheckArgs,
        /// Also write the scores as CSV to this file (`-` for stdout).
        #[arg(long, value_name = "FILE")]
        csv: Option<PathBuf>,
        /// `long`: one row per benchmark folder, mlaudit's columns.
        /// `summarizer`: what `result_summarizer --csv FILE` writes, FILE
        /// and FILE_detailed.csv (only FILE with `--csv -`).
        #[arg(long, value_enum, default_value = "long", value_name = "LAYOUT")]
        csv_layout: CsvLayout,
    },
    /// Compare runs made with the same seed, code and configuration: are
    /// their logged numbers identical, or within a tolerance?
    Repeat {
        /// Largest accepted relative deviation |a-b|/max(|a|,|b|).
        #[arg(long, default_value_t = 0.0)]
        tolerance: f64,
        #[arg(long, value_enum, default_value_t = RepeatFormat::Text)]
        format: RepeatFormat,
        /// The reference log, then the logs compared with it.
        #[arg(required = true, num_args = 2..)]
        logs: Vec<PathBuf>,
    },
    /// List or explain rules.
    Rules {
        #[command(subcommand)]
        command: RulesCommand,
    },
    /// Install or remove the git hook that checks what a commit or push changes.
    Hook {
        #[command(subcommand)]
        command: HookCommand,
    },
    /// Print a shell completion script, e.g.
    /// `mlaudit completions bash > ~/.local/share/bash-completion/completions/mlaudit`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), e.g. `mlaudit man > mlaudit.1`.
    Man,
}

#[derive(Debug, Subcommand)]
pub enum RulesCommand {
    /// List the rules of a ruleset (or every documented code).
    List {
        #[arg(long, default_value = "training")]
        usage: String,
        /// Rules version; without it, every documented code is listed.
        #[arg(long)]
        ruleset: Option<String>,
        /// text, or json: an array of codes (code, title, severity, extra,
        /// official_fail, policy), each with the rules that report it
        /// (pack, key) when a ruleset is given.
        #[arg(long, value_enum, default_value_t = ListFormat::Text)]
        format: ListFormat,
    },
    /// Print what a code means and how to fix it.
    Explain { code: String },
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Benchmark family of the rules [default: project config, else training].
    #[arg(long)]
    pub usage: Option<String>,
    /// Rules version of the round, e.g. 5.0.0 [default: project config, else 6.1.0].
    #[arg(long)]
    pub ruleset: Option<String>,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub changes: ChangeArgs,
    /// Accept a bypassable RCP failure (as package_checker --rcp-bypass).
    #[arg(long)]
    pub rcp_bypass: bool,
    /// Skip the seed checks (as package_checker --seed-checker-bypass).
    #[arg(long)]
    pub seed_checker_bypass: bool,
    /// BERT: read convergence from train_samples (--rcp-bert-train-samples).
    #[arg(long)]
    pub rcp_bert_train_samples: bool,
    /// Write scaling.json into each folder where the official RCP checker
    /// would (off by default: mlaudit never modifies what it checks).
    #[arg(long)]
    pub write_scaling: bool,
    /// Also write a self-contained HTML report (verdicts, findings, charts).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Scan every implementation config, even when none changed since the
    /// last run (whose findings are otherwise kept in $MLAUDIT_CACHE_DIR,
    /// else $XDG_CACHE_HOME/mlaudit, else ~/.cache/mlaudit).
    #[arg(long, env = "MLAUDIT_NO_CACHE", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_cache: bool,
    /// Compare with an earlier `--format json` report: findings new,
    /// resolved or unchanged, packages whose verdict changed.
    #[arg(long, value_name = "OLD.json")]
    pub baseline: Option<PathBuf>,
    /// A package, a benchmark folder, or log files.
    #[arg(required_unless_present_any = ["staged", "changed_since", "changed_files"])]
    pub paths: Vec<PathBuf>,
}

// ---- CI integration (issue 7): output formats, changed-only checks, hooks.

/// Where the report goes and what makes the run fail.
#[derive(Debug, Clone, clap::Args)]
pub struct OutputArgs {
    /// Report format [default: project config, else text].
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Write the report to FILE instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Exit 1 on a failing verdict (error), or also on any warning.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
    /// Exit 0 even when the checks fail (2 still means mlaudit could not check).
    #[arg(long)]
    pub exit_zero: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Error,
    Warning,
}

/// Check only what a git change touches.
#[derive(Debug, Clone, clap::Args)]
pub struct ChangeArgs {
    /// Check the benchmark folders and packages the staged changes touch
    /// (their working-tree files, whole folders).
    #[arg(long, conflicts_with_all = ["paths", "changed_since"])]
    pub staged: bool,
    /// Check the benchmark folders and packages changed since REV
    /// (`git diff REV`: commits and uncommitted changes).
    #[arg(long, value_name = "REV", conflicts_with = "paths")]
    pub changed_since: Option<String>,
    /// The paths given are changed files (as the pre-commit framework
    /// passes them): check the benchmark folders and packages they touch.
    #[arg(long, conflicts_with_all = ["staged", "changed_since"])]
    pub changed_files: bool,
}

impl ChangeArgs {
    /// The change to check, when one was asked for.
    pub fn selection(&self) -> Option<crate::discover::git::Changes<'_>> {
        if self.staged {
            Some(crate::discover::git::Changes::Staged)
        } else {
            self.changed_since
                .as_deref()
                .map(crate::discover::git::Changes::Since)
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Write a git hook that runs `mlaudit check` on what a commit (or push) changes.
    Install {
        /// Benchmark family of the rules, written into the hook.
        #[arg(long)]
        usage: Option<String>,
        /// Rules version written into the hook (else the project config or the default).
        #[arg(long)]
        ruleset: Option<String>,
        #[arg(long, value_enum, default_value_t = crate::app::hook::HookKind::PreCommit)]
        hook: crate::app::hook::HookKind,
        /// Replace a hook mlaudit did not write.
        #[arg(long)]
        force: bool,
    },
    /// Remove the hooks mlaudit wrote (others are left alone).
    Uninstall {
        /// Only this hook [default: both].
        #[arg(long, value_enum)]
        hook: Option<crate::app::hook::HookKind>,
    },
}

/// The shape of `score --csv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CsvLayout {
    /// One row per benchmark folder, mlaudit's column names.
    Long,
    /// result_summarizer's wide CSV (one row per system) and its detailed
    /// file.
    Summarizer,
}
