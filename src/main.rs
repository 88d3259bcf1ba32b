use clap::Parser;
use mlaudit::app::cli::Cli;
use mlaudit::app::commands::run;
use mlaudit::app::Io;
use std::io::IsTerminal;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let color = stdout.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut out = std::io::BufWriter::new(stdout.lock());
    let progress = std::io::stderr().is_terminal();
    let mut err = std::io::stderr();
    let exit = run(
        cli,
        &mut Io {
            out: &mut out,
            err: &mut err,
            color,
            progress,
        },
    );
    let _ = std::io::Write::flush(&mut out);
    ExitCode::from(exit as u8)
}
