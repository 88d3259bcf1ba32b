//! Writing a report where and how the command line asked (`--format`,
//! `-o FILE`), and the exit status it gives (`--fail-on`, `--exit-zero`).

use crate::app::cli::{FailOn, Format, OutputArgs};
use crate::app::{Exit, Io};
use crate::check::rules::Verdict;
use crate::finding::{Finding, Severity};
use crate::report::escape::text as esc;
use crate::report::{self, Report};
use crate::rulebook::codes::CodeRegistry;
use crate::rulebook::source::RuleSource;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Renders `report` in `format` to `out`. `color` applies to text only.
pub fn render(
    source: &RuleSource,
    report: &Report,
    format: Format,
    color: bool,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    match format {
        Format::Json => report::json::render(report, out)?,
        Format::Text => report::text::render(report, color, out)?,
        Format::Sarif => {
            let codes = CodeRegistry::load(source)?;
            report::sarif::render(report, &codes, &repo_prefix(), out)?
        }
        Format::Junit => report::junit::render(report, out)?,
        Format::Github => report::github::render(report, &repo_prefix(), out)?,
    }
    Ok(())
}

/// Writes the report in `format` to `-o FILE`, or to standard output.
pub fn emit(
    source: &RuleSource,
    report: &Report,
    format: Format,
    args: &OutputArgs,
    io: &mut Io<'_>,
) -> anyhow::Result<()> {
    let quiet = io.quiet && format == Format::Text;
    write_to(args, io, &mut |w, color| {
        if quiet {
            Ok(quiet_text(report, args.fail_on, color, w)?)
        } else {
            render(source, report, format, color, w)
        }
    })
}

/// Runs `write` on `-o FILE` (created or truncated), or on standard
/// output; the flag tells whether colour may be used.
pub fn write_to(
    args: &OutputArgs,
    io: &mut Io<'_>,
    write: &mut dyn FnMut(&mut dyn Write, bool) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    match &args.output {
        None => write(io.out, io.color),
        Some(path) => {
            let cannot = |e: std::io::Error| {
                anyhow::anyhow!("{}: cannot write the report: {e}", path.display())
            };
            let file = std::fs::File::create(path).map_err(cannot)?;
            let mut w = std::io::BufWriter::new(file);
            // An error while writing (a full disk) names the file too.
            write(&mut w, false).map_err(|e| match e.downcast::<std::io::Error>() {
                Ok(io) => cannot(io),
                Err(other) => other,
            })?;
            w.flush().map_err(cannot)?;
            Ok(())
        }
    }
}

/// The current directory relative to the repository top (empty outside a
/// repository, or at its top), so paths can be made repository-relative.
fn repo_prefix() -> String {
    crate::discover::git::WorkTree::current()
        .map(|w| w.prefix)
        .unwrap_or_default()
}

/// The text report of `-q`: the findings that fail the run under
/// `--fail-on`, and nothing when it passes.
pub fn quiet_text(
    report: &Report,
    fail_on: FailOn,
    color: bool,
    w: &mut dyn Write,
) -> std::io::Result<()> {
    let threshold = match fail_on {
        FailOn::Error => Severity::Error,
        FailOn::Warning => Severity::Warning,
    };
    report::text::render_quiet(report, fails(report, fail_on), threshold, color, w)
}

/// Whether the report fails the run: a failing verdict, or with
/// `--fail-on warning` any warning or error finding.
pub fn fails(report: &Report, fail_on: FailOn) -> bool {
    report.verdict == Verdict::Fail
        || (fail_on == FailOn::Warning
            && report
                .findings
                .iter()
                .any(|f| f.severity >= Severity::Warning))
}

/// Whether a log could not be read (LOG005) or checked as its rule pack
/// intends (LOG009, a value too big to keep): mlaudit could not do its job,
/// whatever the other findings say.
pub fn unreadable(report: &Report) -> bool {
    report
        .findings
        .iter()
        .any(|f| f.code == crate::finding::code::LOG005 || f.code == crate::finding::code::LOG009)
}

/// The exit status of a report under the output settings: 2 when a log
/// could not be read (even with `--exit-zero`).
pub fn exit_of(report: &Report, args: &OutputArgs) -> Exit {
    if unreadable(report) {
        Exit::Error
    } else if args.exit_zero || !fails(report, args.fail_on) {
        Exit::Success
    } else {
        Exit::Findings
    }
}

/// What to tell someone whose change fails the checks, after the report:
/// each failing folder with the codes that fail it, every failing file and
/// line in it, and the command that shows the details. `check_cmd` is how
/// to run `mlaudit check` with the same rules (`mlaudit check --ruleset 5.0.0`).
pub fn refusal(report: &Report, fail_on: FailOn, check_cmd: &str) -> Vec<String> {
    let threshold = match fail_on {
        FailOn::Error => Severity::Error,
        FailOn::Warning => Severity::Warning,
    };
    let listed: Vec<&Finding> = report
        .findings
        .iter()
        .filter(|f| f.severity >= threshold)
        .collect();
    let mut lines = Vec::new();
    let mut shown = vec![false; listed.len()];
    for b in &report.benchmarks {
        let failing = b.verdict == crate::aggregate::package::Verdict::Fail;
        let mine: Vec<usize> = (0..listed.len())
            .filter(|i| !shown[*i] && b.covers(&listed[*i].path))
            .collect();
        if !failing && mine.is_empty() {
            continue;
        }
        let folder_codes: Vec<&str> = mine
            .iter()
            .map(|i| listed[*i])
            .filter(|f| f.path == b.path)
            .map(|f| f.code.as_str())
            .collect();
        lines.push(format!(
            "{}: {}{}",
            esc(&b.path),
            if failing { "fails" } else { "has findings" },
            if folder_codes.is_empty() {
                String::new()
            } else {
                format!(" ({})", esc(&folder_codes.join(", ")))
            }
        ));
        for i in &mine {
            shown[*i] = true;
            let f = listed[*i];
            if f.path != b.path {
                lines.push(format!("  {}: {}[{}]", place(f), f.severity, esc(&f.code)));
            }
        }
        let folder = if b.path.is_empty() {
            "."
        } else {
            b.path.as_str()
        };
        let quoted = esc(&crate::app::reproduce::shell_display_path(folder)).into_owned();
        lines.push(if folder.starts_with('-') {
            // Would be read as an option: after the options end.
            format!("  details: {check_cmd} --html report.html -- {quoted}")
        } else {
            format!("  details: {check_cmd} {quoted} --html report.html")
        });
    }
    for (i, f) in listed.iter().enumerate() {
        if !shown[i] {
            lines.push(format!(
                "{}: {}[{}] {}",
                place(f),
                f.severity,
                esc(&f.code),
                esc(&f.message)
            ));
        }
    }
    if !lines.is_empty() {
        lines.insert(0, "mlaudit: the change fails the checks:".to_string());
    }
    lines
}

fn place(f: &Finding) -> String {
    match f.line {
        Some(l) => format!("{}:{l}", esc(&f.path)),
        None => esc(&f.path).into_owned(),
    }
}

/// Set once a write to standard output failed with a broken pipe.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether standard output was closed by its reader (`mlaudit ... | head`):
/// what failed after that is no error to report, as with ripgrep.
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

/// Whether an error is, somewhere in its chain, a broken pipe: an
/// `io::Error` of that kind, or one inside a serde_json error (the JSON
/// and SARIF renderers write through serde_json).
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<serde_json::Error>()
                .is_some_and(|j| j.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe))
    })
}

/// Standard output for `main.rs`: remembers a broken pipe
/// ([`stdout_closed`]) so the command ends quietly however the error
/// reached it.
pub struct PipeWatch<W>(pub W);

impl<W: Write> PipeWatch<W> {
    fn note<T>(r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                STDOUT_CLOSED.store(true, Ordering::Relaxed);
            }
        }
        r
    }
}

impl<W: Write> Write for PipeWatch<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Self::note(self.0.write(buf))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Self::note(self.0.flush())
    }
}
