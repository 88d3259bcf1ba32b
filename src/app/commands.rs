//! What each subcommand does. Output goes to the writers given, so every
//! command can be tested without a process; `main.rs` only wires stdio.

use crate::app::cli::{CheckArgs, Cli, Command, Format, OutputArgs, RulesCommand};
use crate::app::output;
use crate::app::progress::TerminalBar;
use crate::app::{Exit, Io};
use crate::audit::progress::{Progress, Silent};
use crate::audit::{self, CheckOptions};
use crate::check::policy::{catalog, PolicyRules};
use crate::check::rules::{self, Ruleset};
use crate::report::{self, Report};
use crate::rulebook::codes::CodeRegistry;
use crate::rulebook::source::RuleSource;
use rayon::prelude::*;
use std::io::Write;

pub fn run(cli: Cli, io: &mut Io<'_>) -> Exit {
    let source = RuleSource::from_option(cli.rules.as_deref());
    if let Some(dir) = &cli.rules {
        // User packs may hold runaway expressions fuel cannot bound.
        let what = format!("the rule packs in {}", dir.display());
        crate::check::rules::watchdog::arm(crate::check::rules::watchdog::LIMIT, move |limit| {
            // Runs on the watchdog thread: the stuck evaluation cannot be
            // cancelled, so the process ends here.
            eprintln!(
                "mlaudit: error: a rule expression of {what} did not finish within {} s (a runaway expression, such as a huge repeated sequence); stopped",
                limit.as_secs()
            );
            std::process::exit(Exit::Error as i32);
        });
    }
    let result = match cli.command {
        Command::Log {
            usage,
            ruleset,
            output,
            files,
        } => log(
            &source,
            usage.as_deref(),
            ruleset.as_deref(),
            &output,
            &files,
            io,
        ),
        Command::Check(args) => check(&source, &args, io),
        Command::Rcp(args) => rcp(&source, &args, io),
        Command::Score {
            check,
            csv,
            csv_layout,
        } => score(&source, &check, csv.as_deref(), csv_layout, io),
        Command::Repeat {
            tolerance,
            format,
            logs,
        } => repeat(&source, tolerance, format, &logs, io),
        Command::Rules { command } => rules_cmd(&source, command, io),
        Command::Hook { command } => crate::app::ci::hook(cli.rules.as_deref(), command, io),
        Command::Completions { shell } => completions(shell, io),
        Command::Man => man(io),
    };
    match result {
        Ok(exit) => exit,
        Err(e) => {
            // A broken pipe (`mlaudit ... | head`) is not an error.
            if output::is_broken_pipe(&e) || output::stdout_closed() {
                return Exit::Success;
            }
            // Error messages quote file names and file contents.
            let message = format!("{e:#}");
            let _ = writeln!(io.err, "mlaudit: error: {}", report::escape::text(&message));
            Exit::Error
        }
    }
}

fn log(
    source: &RuleSource,
    usage: Option<&str>,
    version: Option<&str>,
    output: &OutputArgs,
    files: &[std::path::PathBuf],
    io: &mut Io<'_>,
) -> anyhow::Result<Exit> {
    let mut settings = crate::app::settings::resolve(usage, version, output.format)?;
    let chosen = settings.choose_ruleset(source, version, files)?;
    announce(&settings.usage, &chosen, io)?;
    let (usage, version) = (settings.usage.as_str(), chosen.ruleset.as_str());
    let ruleset = Ruleset::load(source, usage, version)?;
    for f in files {
        if f.is_dir() {
            anyhow::bail!("{}: is a folder, not a log file", f.display());
        }
        if !f.exists() {
            anyhow::bail!("{}: no such file", f.display());
        }
    }
    if let Some(out) = &output.output {
        crate::safe_io::refuse_overwriting_input(out, files)?;
    }
    // A bar on long runs when standard error is a terminal (the bar itself
    // stays hidden below `TerminalBar::MIN_LOGS` logs).
    let terminal = io.progress.then(TerminalBar::new);
    let bar: &dyn Progress = match &terminal {
        Some(t) => t,
        None => &Silent,
    };
    bar.start(files.len());
    let logs: Vec<rules::LogCheck> = files
        .par_iter()
        .map(|f| {
            let log = rules::check_file(&ruleset, f, &f.to_string_lossy());
            bar.advance();
            log
        })
        .collect();
    bar.finish();
    let mut report = Report::from_logs(usage, version, ".", logs);
    report.set_ruleset_source(&chosen);
    output::emit(source, &report, settings.format, output, io)?;
    Ok(output::exit_of(&report, output))
}

fn check(source: &RuleSource, args: &CheckArgs, io: &mut Io<'_>) -> anyhow::Result<Exit> {
    let (outcome, settings, changes) = run_check(source, args, io)?;
    match changes {
        Some(changes) => {
            crate::app::ci::changed_only(source, args, &settings, &outcome, &changes, io)
        }
        None => {
            output::emit(source, &outcome.report, settings.format, &args.output, io)?;
            Ok(output::exit_of(&outcome.report, &args.output))
        }
    }
}

/// `--html FILE`: the HTML report of the outcome, with the rules it was
/// checked against.
fn write_html(
    source: &RuleSource,
    rules: &audit::Rules,
    args: &CheckArgs,
    outcome: &audit::CheckOutcome,
) -> anyhow::Result<()> {
    let Some(file) = &args.html else {
        return Ok(());
    };
    let opts = report::html::HtmlOptions {
        stats: &rules.stats,
        codes: &rules.codes,
        rules_source: match source {
            RuleSource::Embedded => format!(
                "rules built into mlaudit {} ({}/{}/)",
                env!("CARGO_PKG_VERSION"),
                outcome.report.usage,
                outcome.report.ruleset
            ),
            RuleSource::Dir(d) => format!("rules from {}", d.display()),
        },
        command: crate::app::reproduce::command_line(
            args,
            &outcome.report.usage,
            &outcome.report.ruleset,
            source,
        ),
        targets: report::html::target::from_ruleset(&rules.compliance),
    };
    report::html::write_report(file, outcome, &opts)
}

/// `rcp`: the check pipeline, reported as the RCP results; exit 1 when an
/// RCP check fails.
fn rcp(source: &RuleSource, args: &CheckArgs, io: &mut Io<'_>) -> anyhow::Result<Exit> {
    let (outcome, settings, _) = run_check(source, args, io)?;
    emit_view(
        source,
        args,
        &settings,
        &outcome.report,
        report::rcp::render,
        io,
    )?;
    let failed = outcome.report.benchmarks.iter().any(|b| {
        b.rcp
            .as_ref()
            .is_some_and(|r| r.verdict == crate::aggregate::stats::rcp::Verdict::Fail)
    });
    Ok(view_exit(&outcome.report, args, failed))
}

/// `score`: olympic scores per folder; `--csv` writes the summary columns.
/// Exit 1 when a checked folder has no valid score.
fn score(
    source: &RuleSource,
    args: &CheckArgs,
    csv: Option<&std::path::Path>,
    layout: crate::app::cli::CsvLayout,
    io: &mut Io<'_>,
) -> anyhow::Result<Exit> {
    let (outcome, settings, _) = run_check(source, args, io)?;
    let to_stdout = csv.is_some_and(|p| p.as_os_str() == "-");
    if layout == crate::app::cli::CsvLayout::Summarizer {
        if let Some(path) = csv {
            let layout = report::summarizer::Layout::load(
                source,
                &outcome.report.usage,
                &outcome.report.ruleset,
            )?;
            let (summary, detailed) =
                report::summarizer::render(&outcome.report, &outcome.systems, &layout);
            if to_stdout {
                io.out.write_all(summary.as_bytes())?;
            } else {
                let second = report::summarizer::detailed_path(path);
                for (file, text) in [(path, &summary), (second.as_path(), &detailed)] {
                    crate::safe_io::refuse_overwriting_input(file, &args.paths)?;
                    std::fs::write(file, text)
                        .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", file.display()))?;
                }
            }
        }
    }
    let csv = csv.filter(|_| layout == crate::app::cli::CsvLayout::Long);
    match csv {
        Some(_) if to_stdout => {
            report::score::write_csv(&outcome.report, &outcome.systems, io.out)?
        }
        Some(path) => {
            crate::safe_io::refuse_overwriting_input(path, &args.paths)?;
            let cannot =
                |e: std::io::Error| anyhow::anyhow!("{}: cannot write: {e}", path.display());
            let file = std::fs::File::create(path).map_err(cannot)?;
            let mut file = std::io::BufWriter::new(file);
            report::score::write_csv(&outcome.report, &outcome.systems, &mut file)
                .map_err(|e| cannot(e.into()))?;
            file.flush().map_err(cannot)?;
        }
        None => {}
    }
    if !to_stdout {
        emit_view(
            source,
            args,
            &settings,
            &outcome.report,
            report::score::render,
            io,
        )?;
    }
    let invalid = outcome
        .report
        .benchmarks
        .iter()
        .any(|b| b.score.as_ref().is_some_and(|s| s.minutes.is_none()));
    Ok(view_exit(&outcome.report, args, invalid))
}

/// The report of `rcp` or `score`: `text` (their own view of it) in the
/// text format, the findings that fail the run with `-q`, or any other
/// format as `check` writes it.
fn emit_view(
    source: &RuleSource,
    args: &CheckArgs,
    settings: &crate::app::settings::Settings,
    report: &Report,
    text: fn(&Report, &mut dyn Write) -> std::io::Result<()>,
    io: &mut Io<'_>,
) -> anyhow::Result<()> {
    let quiet = io.quiet;
    output::write_to(&args.output, io, &mut |w, color| match settings.format {
        Format::Text if quiet => Ok(output::quiet_text(report, args.output.fail_on, color, w)?),
        Format::Text => Ok(text(report, w)?),
        other => output::render(source, report, other, color, w),
    })
}

/// The exit status of `rcp` or `score`: 2 when a log could not be read,
/// else 1 when `failed` (unless `--exit-zero`), else 0.
fn view_exit(report: &Report, args: &CheckArgs, failed: bool) -> Exit {
    if output::unreadable(report) {
        Exit::Error
    } else if failed && !args.output.exit_zero {
        Exit::Findings
    } else {
        Exit::Success
    }
}

fn repeat(
    source: &RuleSource,
    tolerance: f64,
    format: crate::app::cli::RepeatFormat,
    logs: &[std::path::PathBuf],
    io: &mut Io<'_>,
) -> anyhow::Result<Exit> {
    let rules = crate::aggregate::repeat::RepeatRules::load(source)?;
    let files: Vec<(String, std::path::PathBuf)> = logs
        .iter()
        .map(|p| {
            if p.is_dir() {
                anyhow::bail!("{}: is a folder, not a log file", p.display());
            }
            Ok((crate::discover::paths::display_root(p), p.clone()))
        })
        .collect::<anyhow::Result<_>>()?;
    let mut rep = crate::aggregate::repeat::repeat(&rules, &files, tolerance)?;
    // The repeatability notes, when runs differ (never with -q: notes are
    // what a quiet report leaves out).
    let text_quiet = io.quiet && matches!(format, crate::app::cli::RepeatFormat::Text);
    if rep.comparisons.iter().any(|c| !c.identical) && !text_quiet {
        rep.repeatability = crate::check::policy::repeatability::notes_for_logs(source, logs);
    }
    match format {
        crate::app::cli::RepeatFormat::Json => {
            serde_json::to_writer_pretty(&mut *io.out, &rep)?;
            writeln!(io.out)?;
        }
        crate::app::cli::RepeatFormat::Text => report::repeat::render(&rep, io.out)?,
    }
    Ok(if rep.repeatable {
        Exit::Success
    } else {
        Exit::Findings
    })
}

/// The check pipeline of `check`, `rcp` and `score`, over the paths given
/// or over what a git change touches (`--staged`, `--changed-since`), with
/// the settings of the flags and the project config.
fn run_check(
    source: &RuleSource,
    args: &CheckArgs,
    io: &mut Io<'_>,
) -> anyhow::Result<(
    audit::CheckOutcome,
    crate::app::settings::Settings,
    Option<crate::discover::changes::Checked>,
)> {
    // A baseline that cannot be read stops the run before any log is.
    let baseline = args
        .baseline
        .as_deref()
        .map(report::baseline::Baseline::load)
        .transpose()?;
    let mut settings = crate::app::settings::resolve(
        args.usage.as_deref(),
        args.ruleset.as_deref(),
        args.output.format,
    )?;
    let selection = if args.changes.changed_files {
        Some(crate::discover::git::Changes::Files(&args.paths))
    } else {
        args.changes.selection()
    };
    // The paths the round is told from, when no flag or config names it.
    let round_paths = match (&selection, &settings.ruleset) {
        (Some(changes), None) => crate::discover::changes::target_paths(changes)?,
        _ => args.paths.clone(),
    };
    if let (Some(changes), None, true) = (&selection, &settings.ruleset, round_paths.is_empty()) {
        // A change that touches no package needs no rules: nothing to check,
        // whatever the round (a README commit must not stop on the ruleset).
        let changed = crate::discover::git::changed_paths(changes)?.len();
        let mut report = Report::new(&settings.usage, "", ".", Vec::new(), Vec::new());
        report.ruleset_source = "none".to_string();
        report.ruleset_reason = "the change touches no package: no rules needed".to_string();
        let outcome = audit::CheckOutcome {
            report,
            runs: Vec::new(),
            systems: Default::default(),
        };
        let checked = crate::discover::changes::Checked {
            paths: Vec::new(),
            changed,
            root: String::new(),
        };
        return Ok((outcome, settings, Some(checked)));
    }
    let chosen = settings.choose_ruleset(source, args.ruleset.as_deref(), &round_paths)?;
    announce(&settings.usage, &chosen, io)?;
    let progress = io.progress;
    settings.ruleset = Some(chosen.ruleset.clone());
    let rules = audit::Rules::load(source, &settings.usage, &chosen.ruleset)?;
    let opts = CheckOptions {
        usage: settings.usage.clone(),
        ruleset: chosen.ruleset.clone(),
        package: crate::aggregate::package::PackageOptions {
            rcp_bypass: args.rcp_bypass,
            seed_checker_bypass: args.seed_checker_bypass,
        },
        bert_train_samples: args.rcp_bert_train_samples,
        write_scaling: args.write_scaling,
        config: settings.config.clone(),
        keep_runs: args.html.is_some(),
        cache_dir: (!args.no_cache).then(cache_dir).flatten(),
    };
    let terminal = progress.then(TerminalBar::new);
    let bar: &dyn Progress = match &terminal {
        Some(t) => t,
        None => &Silent,
    };
    if let Some(changes) = selection {
        let checked = crate::discover::changes::changed_targets(&changes)?;
        let result = audit::check_paths(&rules, &checked.paths, &checked.root, &opts, bar);
        bar.finish();
        let mut outcome = result?;
        outcome.report.set_ruleset_source(&chosen);
        refuse_writing_over(args, &checked.inputs())?;
        if let Some(b) = &baseline {
            outcome.report.baseline = Some(b.compare(&outcome.report));
        }
        write_html(source, &rules, args, &outcome)?;
        return Ok((outcome, settings, Some(checked)));
    }
    let inputs = crate::discover::scope::inputs(&args.paths)?;
    let (folders, files): (Vec<_>, Vec<_>) = inputs
        .into_iter()
        .partition(|i| matches!(i, crate::discover::scope::Input::Folder(_)));
    let files: Vec<std::path::PathBuf> = files
        .into_iter()
        .filter_map(|i| match i {
            crate::discover::scope::Input::Log(p) => Some(p),
            crate::discover::scope::Input::Folder(_) => None,
        })
        .collect();
    let roster: Vec<String> = rules.package.benchmarks.keys().cloned().collect();
    let dirs: Vec<&std::path::PathBuf> = folders
        .iter()
        .filter_map(|i| match i {
            crate::discover::scope::Input::Folder(p) => Some(p),
            crate::discover::scope::Input::Log(_) => None,
        })
        .collect();
    if let Some(t) = &terminal {
        t.packages(dirs.len());
    }
    // Packages (a round's) in parallel, each with its logs in parallel.
    let checked: Vec<anyhow::Result<audit::CheckOutcome>> = dirs
        .par_iter()
        .map(|dir| {
            let part = audit::check_path_with_progress(&rules, dir, &opts, bar);
            if let Some(t) = &terminal {
                t.package_done();
            }
            part
        })
        .collect();
    let mut parts = Vec::new();
    for (dir, part) in dirs.iter().zip(checked) {
        let part = match part {
            Ok(p) => p,
            Err(e) => {
                bar.finish();
                return Err(e);
            }
        };
        if part.report.logs.is_empty() {
            bar.finish();
            anyhow::bail!(
                "nothing to check: {}",
                crate::discover::scope::why_nothing(
                    dir,
                    &part.report,
                    &roster,
                    &format!("{} {}", settings.usage, chosen.ruleset)
                )
            );
        }
        parts.push(part);
    }
    bar.finish();
    if !files.is_empty() {
        parts.push(audit::check_logs(&rules, &files, &opts)?);
    }
    let mut outcome = if parts.len() == 1 {
        parts.remove(0)
    } else {
        let mut runs = Vec::new();
        let mut systems = std::collections::BTreeMap::new();
        let mut reports = Vec::new();
        for p in parts {
            reports.push(p.report);
            runs.extend(p.runs);
            systems.extend(p.systems);
        }
        audit::CheckOutcome {
            report: Report::merge(&opts.usage, &opts.ruleset, "", reports),
            runs,
            systems,
        }
    };
    outcome.report.set_ruleset_source(&chosen);
    refuse_writing_over(args, &args.paths)?;
    if let Some(b) = &baseline {
        outcome.report.baseline = Some(b.compare(&outcome.report));
    }
    write_html(source, &rules, args, &outcome)?;
    Ok((outcome, settings, None))
}

/// Says on standard error which ruleset was inferred and why (a flag or
/// the config names it explicitly).
fn announce(
    usage: &str,
    chosen: &crate::discover::round::Chosen,
    io: &mut Io<'_>,
) -> anyhow::Result<()> {
    if chosen.source == crate::discover::round::RulesetSource::Inferred && !io.quiet {
        writeln!(
            io.err,
            "mlaudit: using ruleset {usage} {} ({}); give --ruleset to choose another",
            chosen.ruleset, chosen.why
        )?;
    }
    Ok(())
}

/// `--html FILE`, `-o FILE` and `--csv FILE` must not overwrite what was
/// checked.
fn refuse_writing_over(args: &CheckArgs, inputs: &[std::path::PathBuf]) -> anyhow::Result<()> {
    for out in [args.html.as_ref(), args.output.output.as_ref()]
        .into_iter()
        .flatten()
    {
        crate::safe_io::refuse_overwriting_input(out, inputs)?;
    }
    Ok(())
}

fn rules_cmd(source: &RuleSource, command: RulesCommand, io: &mut Io<'_>) -> anyhow::Result<Exit> {
    let codes = CodeRegistry::load(source)?;
    match command {
        RulesCommand::Explain { code } if code.contains('#') => {
            explain_policy_rule(source, &codes, &code, io)
        }
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
            // Which rounds' compliance packs report it (package, statistics
            // and repository codes are not reported by a pack).
            let mut used = Vec::new();
            for (usage, version) in crate::check::rules::available_rulesets(source) {
                let Ok(rs) = Ruleset::load_with_codes(source, &codes, &usage, &version) else {
                    continue;
                };
                let hit = rs.packs.values().any(|p| {
                    p.rules.iter().any(|r| {
                        r.code == wanted
                            || r.check
                                .iter()
                                .any(|c| c.code.as_ref().is_some_and(|c| c.code == wanted))
                    }) || p.end.iter().any(|e| e.code == wanted)
                });
                if hit {
                    used.push(format!("{usage} {version}"));
                }
            }
            if !used.is_empty() {
                writeln!(io.out, "\nrule packs that report it: {}", used.join(", "))?;
            }
            Ok(Exit::Success)
        }
        RulesCommand::List {
            usage,
            ruleset,
            format: crate::app::cli::ListFormat::Json,
        } => rules_list_json(source, &codes, &usage, ruleset.as_deref(), io),
        RulesCommand::List {
            usage,
            ruleset: None,
            ..
        } => {
            let _ = usage;
            for (code, doc) in &codes.codes {
                writeln!(io.out, "{code:<8} {:<8} {}", doc.severity, doc.title)?;
            }
            // The list first: a closed pipe ends the command here, quietly.
            io.out.flush()?;
            if !io.quiet {
                let all: Vec<String> = crate::check::rules::available_rulesets(source)
                    .into_iter()
                    .map(|(u, v)| format!("{u} {v}"))
                    .collect();
                writeln!(
                    io.err,
                    "rulesets: {} (`mlaudit rules list --usage U --ruleset V` lists one's rules)",
                    all.join(", ")
                )?;
            }
            Ok(Exit::Success)
        }
        RulesCommand::List {
            usage,
            ruleset: Some(version),
            ..
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
            // The policy pack's own rules: signal families and framework
            // settings, with what each finds.
            if let Some(p) = PolicyRules::find_with_codes(source, &codes, &usage, &version)? {
                for r in catalog::catalog(&p) {
                    writeln!(io.out, "{:<8} {:<48} {}", r.code, r.rule, r.what)?;
                }
            }
            Ok(Exit::Success)
        }
    }
}

/// `rules explain RULE` for a compliance rule as findings and `rules list
/// --ruleset V` name it (`training/5.1.0/compliance/closed_bert.yaml#
/// opt_lamb_beta_1`): its code, severity, checks and how to fix it.
/// `false` when `name` is not such a rule.
fn explain_compliance_rule(
    source: &RuleSource,
    codes: &CodeRegistry,
    name: &str,
    io: &mut Io<'_>,
) -> anyhow::Result<bool> {
    let name = name.trim();
    let name = name.strip_prefix("rules/").unwrap_or(name);
    let Some((pack_id, key)) = name.split_once('#') else {
        return Ok(false);
    };
    let mut parts = pack_id.split('/');
    let (Some(usage), Some(version)) = (parts.next(), parts.next()) else {
        return Ok(false);
    };
    let Ok(rs) = Ruleset::load_with_codes(source, codes, usage, version) else {
        return Ok(false);
    };
    let Some(pack) = rs.packs.values().find(|p| p.id == pack_id) else {
        return Ok(false);
    };
    let title = |code: &str| codes.get(code).map(|d| d.title.clone()).unwrap_or_default();
    if key == "end" && !pack.end.is_empty() {
        for end in &pack.end {
            writeln!(io.out, "{pack_id}#end: {}", title(&end.code))?;
            writeln!(io.out, "code: {}", end.code)?;
        }
        return Ok(true);
    }
    let Some(rule) = pack.rules.iter().find(|r| r.key == key) else {
        return Ok(false);
    };
    writeln!(io.out, "{pack_id}#{key}: {}", title(&rule.code))?;
    writeln!(io.out, "code: {}", rule.code)?;
    writeln!(io.out, "severity: {}", rule.severity.as_str())?;
    for c in &rule.check {
        writeln!(io.out, "checks: {}", c.src.trim())?;
    }
    let help = if rule.help.trim().is_empty() {
        codes
            .get(&rule.code)
            .map(|d| d.help.clone())
            .unwrap_or_default()
    } else {
        rule.help.clone()
    };
    if !help.trim().is_empty() {
        writeln!(io.out, "\nhow to fix:\n  {}", help.trim())?;
    }
    Ok(true)
}

/// `rules explain RULE` for a rule of the policy pack (a signal family or
/// a framework setting, as a finding's `rule` names it; the short form
/// `bagua#async_algorithm` too): what it matches, why, where the framework
/// documents it, and the help of its code.
fn explain_policy_rule(
    source: &RuleSource,
    codes: &CodeRegistry,
    name: &str,
    io: &mut Io<'_>,
) -> anyhow::Result<Exit> {
    // The framework files and signals are shared by every round's pack:
    // the newest training round that has one reads them.
    let mut rounds = crate::check::rules::available_rulesets(source);
    rounds.sort_by_key(|(u, v)| {
        let parts: Vec<u32> = v.split('.').map(|x| x.parse().unwrap_or(0)).collect();
        (u == "training", parts)
    });
    let mut policy = None;
    for (usage, version) in rounds.iter().rev() {
        if let Some(p) = PolicyRules::find_with_codes(source, codes, usage, version)? {
            policy = Some(p);
            break;
        }
    }
    let Some(policy) = policy else {
        anyhow::bail!("no ruleset has a policy pack, so there is no rule '{name}'");
    };
    let all = catalog::catalog(&policy);
    let rule = match catalog::find(&all, name) {
        Ok(Some(r)) => r,
        Ok(None) => {
            if explain_compliance_rule(source, codes, name, io)? {
                return Ok(Exit::Success);
            }
            anyhow::bail!(
                "unknown rule '{name}'; `mlaudit rules list --ruleset V` lists a round's rules"
            )
        }
        Err(many) => anyhow::bail!("'{name}' names {}: give one whole", many.join(", ")),
    };
    let doc = codes.get(&rule.code);
    writeln!(io.out, "{}: {}", rule.rule, rule.what)?;
    writeln!(
        io.out,
        "code: {} ({})",
        rule.code,
        doc.map(|d| d.title.as_str()).unwrap_or("undocumented")
    )?;
    let severity = rule
        .severity
        .as_deref()
        .or(doc.map(|d| d.severity.as_str()))
        .unwrap_or("");
    writeln!(io.out, "severity: {severity}")?;
    if let Some(f) = &rule.framework {
        writeln!(io.out, "framework: {f}")?;
    }
    // Patterns are regexes over names in normal form (lower case, words
    // joined by `_`), matching whole words.
    if let Some(k) = &rule.key {
        writeln!(io.out, "key path ends with: {k}")?;
    }
    if let Some(v) = &rule.value {
        writeln!(io.out, "value holds: {v}")?;
    }
    if let Some(m) = rule.min {
        writeln!(io.out, "on when the value is a number of at least {m}")?;
    }
    for p in &rule.patterns {
        writeln!(io.out, "name or value holds: {p}")?;
    }
    if let Some(e) = &rule.effect {
        writeln!(io.out, "effect: {}", e.replace('_', " "))?;
    }
    if let Some(d) = &rule.doc {
        writeln!(io.out, "documented at: {d}")?;
    }
    if let Some(d) = doc {
        writeln!(io.out, "\nhow to fix:\n  {}", d.help)?;
    }
    Ok(Exit::Success)
}

/// `completions SHELL`: the completion script clap_complete writes.
fn completions(shell: clap_complete::Shell, io: &mut Io<'_>) -> anyhow::Result<Exit> {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    clap_complete::generate(shell, &mut cmd, "mlaudit", io.out);
    Ok(Exit::Success)
}

/// `man`: the man page of mlaudit in roff (options, and the subcommands
/// with their one-line descriptions; `mlaudit help CMD` has the rest).
fn man(io: &mut Io<'_>) -> anyhow::Result<Exit> {
    let cmd = <Cli as clap::CommandFactory>::command();
    clap_mangen::Man::new(cmd).render(io.out)?;
    Ok(Exit::Success)
}

/// `rules list --format json`: every documented code, or with a ruleset
/// the codes its packs report, each with the rules (pack, key; `end` for a
/// pack's end-of-log checks) that report it.
fn rules_list_json(
    source: &RuleSource,
    codes: &CodeRegistry,
    usage: &str,
    ruleset: Option<&str>,
    io: &mut Io<'_>,
) -> anyhow::Result<Exit> {
    use std::collections::BTreeMap;
    let entry = |code: &str| {
        let doc = codes.get(code);
        serde_json::json!({
            "code": code,
            "title": doc.map(|d| d.title.as_str()),
            "severity": doc.map(|d| d.severity.as_str()),
            "extra": doc.is_some_and(|d| d.extra),
            "official_fail": doc.is_some_and(|d| d.official_fail),
            "policy": doc.and_then(|d| d.policy.as_deref()),
        })
    };
    let list: Vec<serde_json::Value> = match ruleset {
        None => codes.codes.keys().map(|c| entry(c)).collect(),
        Some(version) => {
            let rs = Ruleset::load_with_codes(source, codes, usage, version)?;
            let mut by_code: BTreeMap<&str, Vec<serde_json::Value>> = BTreeMap::new();
            for pack in rs.packs.values() {
                for rule in &pack.rules {
                    by_code
                        .entry(&rule.code)
                        .or_default()
                        .push(serde_json::json!({
                            "pack": pack.id,
                            "key": rule.key,
                            "severity": rule.severity,
                        }));
                }
                for end in &pack.end {
                    by_code
                        .entry(&end.code)
                        .or_default()
                        .push(serde_json::json!({ "pack": pack.id, "key": "end" }));
                }
            }
            // The policy pack's signal families and framework settings,
            // named as their findings name them (file#anchor).
            let policy = PolicyRules::find_with_codes(source, codes, usage, version)?;
            let policy_rules = policy.as_ref().map(catalog::catalog).unwrap_or_default();
            for r in &policy_rules {
                let (pack, key) = r.rule.split_once('#').unwrap_or((&r.rule, ""));
                by_code.entry(&r.code).or_default().push(serde_json::json!({
                    "pack": pack,
                    "key": key,
                    "severity": r.severity,
                }));
            }
            by_code
                .into_iter()
                .map(|(code, rules)| {
                    let mut e = entry(code);
                    e["rules"] = serde_json::Value::Array(rules);
                    e
                })
                .collect()
        }
    };
    serde_json::to_writer_pretty(&mut *io.out, &list)?;
    writeln!(io.out)?;
    Ok(Exit::Success)
}

/// Where `check` keeps the implementation configs' findings between runs:
/// `$MLAUDIT_CACHE_DIR`, else `$XDG_CACHE_HOME/mlaudit`, else
/// `~/.cache/mlaudit`; `None` when none of them is set.
fn cache_dir() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("MLAUDIT_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("mlaudit")))
        .or_else(|| var("HOME").map(|h| h.join(".cache").join("mlaudit")))
}
