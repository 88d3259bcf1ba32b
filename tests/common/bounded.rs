//! Running the mlaudit binary with a time bound and watching its peak
//! memory, for the hostile-input tests.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one bounded run gave.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// Peak RSS seen while it ran (Linux only).
    pub peak_kb: Option<u64>,
}

impl Run {
    pub fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

/// The peak resident memory of a running process, from /proc.
pub fn peak_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Runs mlaudit in `dir` with `args` (no standard input, no user or system
/// git config), its output kept outside `dir`; kills it and fails the test
/// when it runs past `deadline` (a hang).
pub fn run(dir: &Path, args: &[&str], deadline: Duration) -> Run {
    run_with(dir, args, &[], deadline)
}

/// [`run`] with `env` set for mlaudit.
pub fn run_with(dir: &Path, args: &[&str], env: &[(&str, &str)], deadline: Duration) -> Run {
    let out_dir = tempfile::tempdir().expect("temp dir");
    let out_path = out_dir.path().join("stdout");
    let err_path = out_dir.path().join("stderr");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mlaudit"))
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).expect("stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("stderr file"))
        .spawn()
        .expect("run mlaudit");
    let start = Instant::now();
    let mut peak = None;
    let code = loop {
        if let Some(kb) = peak_kb(child.id()) {
            peak = Some(kb);
        }
        if let Some(status) = child.try_wait().expect("wait") {
            break status.code();
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mlaudit {args:?} still running after {deadline:?}: a hang");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Run {
        code,
        stdout: String::from_utf8_lossy(&std::fs::read(&out_path).unwrap_or_default()).into(),
        stderr: String::from_utf8_lossy(&std::fs::read(&err_path).unwrap_or_default()).into(),
        peak_kb: peak,
    }
}

/// [`run`], asserting that mlaudit did not crash (a panic or an abort).
pub fn run_ok(dir: &Path, args: &[&str], deadline: Duration) -> Run {
    let run = run(dir, args, deadline);
    assert!(
        run.code.is_some() && !run.stderr.contains("panicked"),
        "mlaudit {args:?} crashed (exit {:?})\n{}",
        run.code,
        run.all()
    );
    run
}

/// A temporary folder for one test's input.
pub fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// The bundled example package.
pub fn example() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/Example")
}

/// Copies the folder `from` to `to`, recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir") {
        let e = e.expect("entry");
        let target = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).expect("copy");
        }
    }
}
