//! Submission packages: discovery of the tree on disk and the package rules.
//!
//! - [`discover`](discover::discover) turns a path into a [`Submission`]
//!   (a submitter package, one benchmark folder, or log files);
//! - [`PackageRules`] are the round's package rules, read from
//!   `rules/<usage>/<version>/package.yaml`;
//! - [`check_package`] runs them; the per-log compliance verdict comes from
//!   the caller's engine through a closure.
//!
//! Nothing here writes to the checked tree.

pub mod check;
pub mod crosscheck;
pub mod discover;
pub mod logscan;
pub mod paths;
pub mod power;
pub mod rules;
pub mod seeds;
pub mod system_desc;
pub mod tree;

pub use check::{
    check_package, check_package_with, BenchmarkVerdict, BypassUse, LogOutcome, PackageOptions,
    PackageReport, Verdict,
};
pub use discover::{discover, discover_logs};
pub use rules::PackageRules;
pub use tree::{BenchmarkDir, InputKind, Submission};
