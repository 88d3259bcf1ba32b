//! The commands of the CI integration: `check --staged` / `--changed-since`
//! reporting, and `hook install` / `hook uninstall`. Like
//! [`crate::app::commands`], they write to the writers they are given.

use crate::app::cli::{CheckArgs, HookCommand};
use crate::app::hook::{self, HookKind, Installed, Removed};
use crate::app::output;
use crate::app::settings::Settings;
use crate::app::{Exit, Io};
use crate::audit::CheckOutcome;
use crate::discover::changes::Checked;
use crate::rulebook::source::RuleSource;
use std::path::{Path, PathBuf};

/// `check --staged` / `--changed-since`: the report, then (on standard
/// error) what was checked and, when it fails, every failing file and line
/// and the command that shows the details.
pub fn changed_only(
    source: &RuleSource,
    args: &CheckArgs,
    settings: &Settings,
    outcome: &CheckOutcome,
    checked: &Checked,
    io: &mut Io<'_>,
) -> anyhow::Result<Exit> {
    if checked.paths.is_empty() && !io.quiet {
        writeln!(
            io.err,
            "mlaudit: the change ({} path(s)) touches no benchmark folder or package; nothing to check",
            checked.changed
        )?;
    }
    let report = &outcome.report;
    output::emit(source, report, settings.format, &args.output, io)?;
    let exit = output::exit_of(report, &args.output);
    if output::fails(report, args.output.fail_on) {
        io.out.flush()?;
        let mut cmd = String::from("mlaudit check");
        if settings.usage != crate::app::settings::DEFAULT_USAGE {
            cmd.push_str(&format!(
                " --usage {}",
                crate::app::reproduce::shell_word(&settings.usage)
            ));
        }
        if let Some(r) = &settings.ruleset {
            cmd.push_str(&format!(
                " --ruleset {}",
                crate::app::reproduce::shell_word(r)
            ));
        }
        for line in output::refusal(report, args.output.fail_on, &cmd) {
            writeln!(io.err, "{line}")?;
        }
    }
    Ok(exit)
}

/// `mlaudit hook install|uninstall`. `rules` is the global `--rules DIR`,
/// passed on to the hook (made absolute).
pub fn hook(rules: Option<&Path>, command: HookCommand, io: &mut Io<'_>) -> anyhow::Result<Exit> {
    let dir = crate::discover::git::hooks_dir()?;
    match command {
        HookCommand::Install {
            usage,
            ruleset,
            hook: kind,
            force,
        } => {
            let (usage_flag, ruleset_flag) = (usage.clone(), ruleset.clone());
            // Refused now, not at the first commit: a hook with no ruleset
            // or one that does not exist would stop every commit.
            let settings = crate::app::settings::resolve(
                usage_flag.as_deref(),
                ruleset_flag.as_deref(),
                None,
            )?;
            let source = RuleSource::from_option(rules);
            let known = crate::discover::round::versions(&source, &settings.usage);
            let Some(version) = settings.ruleset.clone() else {
                anyhow::bail!(
                    "hook install needs the ruleset of the round: give --ruleset (one of {}) or set `ruleset` in .mlaudit.toml",
                    known.join(", ")
                );
            };
            crate::check::rules::Ruleset::load(&source, &settings.usage, &version)?;
            let mut args = Vec::new();
            if let Some(r) = rules {
                let abs = std::path::absolute(r).unwrap_or_else(|_| r.to_path_buf());
                args.push("--rules".to_string());
                args.push(abs.to_string_lossy().into_owned());
            }
            if let Some(u) = usage {
                args.push("--usage".to_string());
                args.push(u);
            }
            if let Some(r) = ruleset {
                args.push("--ruleset".to_string());
                args.push(r);
            }
            let exe = current_exe();
            let text = hook::script(kind, exe.as_deref(), &args);
            let (verb, path) = match hook::install(&dir, kind, &text, force)? {
                Installed::New(p) => ("installed", p),
                Installed::Updated(p) => ("updated", p),
                Installed::Replaced(p) => ("replaced the existing hook with", p),
            };
            writeln!(io.out, "mlaudit: {verb} {}", path.display())?;
            let from = match (&ruleset_flag, &settings.config) {
                (None, Some(c)) => format!("read from {} at each run", c.path.display()),
                _ => "written into the hook".to_string(),
            };
            writeln!(io.out, "rules: {} {version} ({from})", settings.usage)?;
            let skip = match kind {
                HookKind::PreCommit => "git commit --no-verify",
                HookKind::PrePush => "git push --no-verify",
            };
            writeln!(
                io.out,
                "it runs {}; skip it once with `{skip}`",
                exe.as_deref()
                    .map_or("mlaudit (on PATH)".to_string(), |p| p.display().to_string())
            )?;
            Ok(Exit::Success)
        }
        HookCommand::Uninstall { hook: kind } => {
            let kinds: Vec<HookKind> = kind.map_or(HookKind::ALL.to_vec(), |k| vec![k]);
            for k in kinds {
                match hook::uninstall(&dir, k)? {
                    Removed::Removed(p) => writeln!(io.out, "mlaudit: removed {}", p.display())?,
                    Removed::NotOurs(p) => writeln!(
                        io.out,
                        "mlaudit: {} was not written by mlaudit; left alone",
                        p.display()
                    )?,
                    Removed::Absent(_) => {}
                }
            }
            Ok(Exit::Success)
        }
    }
}

/// The running mlaudit, absolute, for the hook to call.
fn current_exe() -> Option<PathBuf> {
    std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::canonicalize(&p).ok().or(Some(p)))
}
