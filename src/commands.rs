//! What each subcommand does. Output goes to the writers given, so every
//! command can be tested without a process; `main.rs` only wires stdio.

use crate::audit::{self, CheckOptions};
use crate::cli::{CheckArgs, Cli, Command, Format, RulesCommand};
use crate::codes::CodeRegistry;
use crate::report::{self, Report};
use crate::ruledata::RuleSource;
use crate::rules::{self, Ruleset, Verdict};
use rayon::prelude::*;
use std::io::Write;

/// Exit status: 0 everything passed, 1 findings, 2 the tool could not do its job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Success = 0,
    Findings = 1,
    Error = 2,
}

/// Output settings decided by the binary.
pub struct Io<'a> {
    pub out: &'a mut dyn Write,
    pub err: &'a mut dyn Write,
    pub color: bool,
}

pub fn run(cli: Cli, io: &mut Io<'_>) -> Exit {
    let source = RuleSource::from_option(cli.rules.as_deref());
    let result = match cli.command {
        Command::Log {
            usage,
            ruleset,
            format,
            files,
        } => log(&source, &usage, &ruleset, format, &files, io),
        Command::Check(args) => check(&source, &args, io),
        Command::Rcp(args) => rcp(&source, &args, io),
        Command::Score { check, csv } => score(&source, &check, csv.as_deref(), io),
        Command::Repeat {
            tolerance,
            format,
            logs,
        } => repeat(&source, tolerance, format, &logs, io),
        Command::Rules { command } => rules_cmd(&source, command, io),
    };
    match result {
        Ok(exit) => exit,
        Err(e) => {
            // A broken pipe (`mlaudit ... | head`) is not an error.
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            {
                return Exit::Success;
            }
            let _ = writeln!(io.err, "mlaudit: error: {e:#}");
            Exit::Error
        }
    }
}

fn log(
    source: &RuleSource,
    usage: &str,
    version: &str,
    format: Format,
    files: &[std::path::PathBuf],
    io: &mut Io<'_>,
) -> anyhow::Result<Exit> {
    let ruleset = Ruleset::load(source, usage, version)?;
    for f in files {
        if f.is_dir() {
            anyhow::bail!("{}: is a folder, not a log file", f.display());
        }
        if !f.exists() {
            anyhow::bail!("{}: no such file", f.display());
        }
    }
    let logs: Vec<rules::LogCheck> = files
        .par_iter()
        .map(|f| rules::check_file(&ruleset, f, &f.to_string_lossy()))
        .collect();
    let report = Report::from_logs(usage, version, ".", logs);
    render(&report, format, io)?;
    Ok(exit_of(&report))
}

fn check(source: &RuleSource, args: &CheckArgs, io: &mut Io<'_>) -> anyhow::Result<Exit> {
    let outcome = run_check(source, args)?;
    render(&outcome.report, args.format, io)?;
    write_html(source, args, &outcome)?;
    Ok(exit_of(&outcome.report))
}

/// `--html FILE`: the HTML report of the outcome.
fn write_html(
    source: &RuleSource,
    args: &CheckArgs,
    outcome: &audit::CheckOutcome,
) -> anyhow::Result<()> {
    let Some(file) = &args.html else {
        return Ok(());
    };
    let rules = audit::Rules::load(source, &args.usage, &args.ruleset)?;
    let opts = report::html::HtmlOptions {
        source,
        rules: &rules,
        command: report::html::command_line(args, source),
    };
    report::html::write_report(file, outcome, &opts)
}

/// `rcp`: the check pipeline, reported as the RCP results; exit 1 when an
/// RCP check fails.
fn rcp(source: &RuleSource, args: &CheckArgs, io: &mut Io<'_>) -> anyhow::Result<Exit> {
    let outcome = run_check(source, args)?;
    match args.format {
        Format::Json => report::json::render(&outcome.report, io.out)?,
        Format::Text => report::rcp::render(&outcome.report, io.out)?,
    }
    write_html(source, args, &outcome)?;
    let failed = outcome.report.benchmarks.iter().any(|b| {
        b.rcp
            .as_ref()
            .is_some_and(|r| r.verdict == crate::stats::rcp::Verdict::Fail)
    });
    Ok(if failed {
        Exit::Findings
    } else {
        Exit::Success
    })
}

/// `score`: olympic scores per folder; `--csv` writes the summary columns.
/// Exit 1 when a checked folder has no valid score.
fn score(
    source: &RuleSource,
    args: &CheckArgs,
    csv: Option<&std::path::Path>,
    io: &mut Io<'_>,
) -> anyhow::Result<Exit> {
    let outcome = run_check(source, args)?;
    let to_stdout = csv.is_some_and(|p| p.as_os_str() == "-");
    match csv {
        Some(_) if to_stdout => {
            report::score::write_csv(&outcome.report, &outcome.systems, io.out)?
        }
        Some(path) => {
            let mut file = std::fs::File::create(path)
                .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", path.display()))?;
            report::score::write_csv(&outcome.report, &outcome.systems, &mut file)?;
        }
        None => {}
    }
    if !to_stdout {
        match args.format {
            Format::Json => report::json::render(&outcome.report, io.out)?,
            Format::Text => report::score::render(&outcome.report, io.out)?,
        }
    }
    write_html(source, args, &outcome)?;
    let invalid = outcome
        .report
        .benchmarks
        .iter()
        .any(|b| b.score.as_ref().is_some_and(|s| s.minutes.is_none()));
    Ok(if invalid {
        Exit::Findings
    } else {
        Exit::Success
    })
}

fn repeat(
    source: &RuleSource,
    tolerance: f64,
    format: Format,
    logs: &[std::path::PathBuf],
    io: &mut Io<'_>,
) -> anyhow::Result<Exit> {
    let rules = crate::repeat::RepeatRules::load(source)?;
    let files: Vec<(String, std::path::PathBuf)> = logs
        .iter()
        .map(|p| {
            if p.is_dir() {
                anyhow::bail!("{}: is a folder, not a log file", p.display());
            }
            Ok((crate::submission::paths::display_root(p), p.clone()))
        })
        .collect::<anyhow::Result<_>>()?;
    let rep = crate::repeat::repeat(&rules, &files, tolerance)?;
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *io.out, &rep)?;
            writeln!(io.out)?;
        }
        Format::Text => report::repeat::render(&rep, io.out)?,
    }
    Ok(if rep.repeatable {
        Exit::Success
    } else {
        Exit::Findings
    })
}

fn run_check(source: &RuleSource, args: &CheckArgs) -> anyhow::Result<audit::CheckOutcome> {
    let rules = audit::Rules::load(source, &args.usage, &args.ruleset)?;
    let opts = CheckOptions {
        usage: args.usage.clone(),
        ruleset: args.ruleset.clone(),
        package: crate::submission::PackageOptions {
            rcp_bypass: args.rcp_bypass,
            seed_checker_bypass: args.seed_checker_bypass,
        },
        bert_train_samples: args.rcp_bert_train_samples,
        write_scaling: args.write_scaling,
        config: crate::config::Config::find(&std::env::current_dir()?)?,
    };
    let outcome = match args.paths.as_slice() {
        [one] if !one.is_file() => {
            if !one.exists() {
                anyhow::bail!("{}: no such file or folder", one.display());
            }
            audit::check_path(source, &rules, one, &opts)?
        }
        many => {
            if let Some(d) = many.iter().find(|p| !p.is_file()) {
                anyhow::bail!(
                    "{}: {}; give one package or folder, or log files",
                    d.display(),
                    if d.exists() {
                        "is a folder"
                    } else {
                        "no such file"
                    }
                );
            }
            audit::check_logs(source, &rules, many, &opts)?
        }
    };
    Ok(outcome)
}

fn render(report: &Report, format: Format, io: &mut Io<'_>) -> anyhow::Result<()> {
    match format {
        Format::Json => report::json::render(report, io.out)?,
        Format::Text => report::text::render(report, io.color, io.out)?,
    }
    Ok(())
}

fn exit_of(report: &Report) -> Exit {
    if report.verdict == Verdict::Pass {
        Exit::Success
    } else {
        Exit::Findings
    }
}

fn rules_cmd(source: &RuleSource, command: RulesCommand, io: &mut Io<'_>) -> anyhow::Result<Exit> {
    let codes = CodeRegistry::load(source)?;
    match command {
        RulesCommand::Explain { code } => {
            let wanted = code.to_ascii_uppercase();
            let Some(doc) = codes.get(&wanted) else {
                anyhow::bail!("unknown code '{code}'; `mlaudit rules list` shows every code");
            };
            writeln!(io.out, "{wanted}: {}", doc.title)?;
            writeln!(io.out, "severity: {}", doc.severity)?;
            if let Some(p) = &doc.policy {
                writeln!(io.out, "policy: {p}")?;
            }
            writeln!(io.out, "\nhow to fix:\n  {}", doc.help)?;
            Ok(Exit::Success)
        }
        RulesCommand::List {
            usage,
            ruleset: None,
        } => {
            let _ = usage;
            for (code, doc) in &codes.codes {
                writeln!(io.out, "{code:<8} {:<8} {}", doc.severity, doc.title)?;
            }
            Ok(Exit::Success)
        }
        RulesCommand::List {
            usage,
            ruleset: Some(version),
        } => {
            let rs = Ruleset::load_with_codes(source, &codes, &usage, &version)?;
            for pack in rs.packs.values() {
                for rule in &pack.rules {
                    let title = codes
                        .get(&rule.code)
                        .map(|d| d.title.as_str())
                        .unwrap_or("");
                    writeln!(
                        io.out,
                        "{:<8} {}#{:<40} {title}",
                        rule.code, pack.id, rule.key
                    )?;
                }
                for end in &pack.end {
                    let title = codes.get(&end.code).map(|d| d.title.as_str()).unwrap_or("");
                    writeln!(io.out, "{:<8} {}#end {title}", end.code, pack.id)?;
                }
            }
            Ok(Exit::Success)
        }
    }
}
