//! Command-line interface (clap derive).

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "mlaudit",
    version,
    about = "Checks MLPerf-style training submissions"
)]
pub struct Cli {
    /// Read rule data from this folder instead of the built-in rules.
    #[arg(long, global = true, value_name = "DIR")]
    pub rules: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check training logs against the compliance rules of a ruleset.
    Log {
        /// Benchmark family of the rules.
        #[arg(long, default_value = "training")]
        usage: String,
        /// Rules version, e.g. 5.0.0.
        #[arg(long, default_value = "6.1.0")]
        ruleset: String,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
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
    },
    /// Compare runs made with the same seed, code and configuration: are
    /// their logged numbers identical, or within a tolerance?
    Repeat {
        /// Largest accepted relative deviation |a-b|/max(|a|,|b|).
        #[arg(long, default_value_t = 0.0)]
        tolerance: f64,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// The reference log, then the logs compared with it.
        #[arg(required = true, num_args = 2..)]
        logs: Vec<PathBuf>,
    },
    /// List or explain rules.
    Rules {
        #[command(subcommand)]
        command: RulesCommand,
    },
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
    },
    /// Print what a code means and how to fix it.
    Explain { code: String },
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Benchmark family of the rules.
    #[arg(long, default_value = "training")]
    pub usage: String,
    /// Rules version of the round, e.g. 5.0.0.
    #[arg(long, default_value = "6.1.0")]
    pub ruleset: String,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
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
    /// A package, a benchmark folder, or log files.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
}
