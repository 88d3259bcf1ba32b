//! The package rules over a discovered [`Submission`](crate::discover::Submission):
//!
//! - [`PackageRules`] are the round's package rules, read from
//!   `rules/<usage>/<version>/package.yaml`;
//! - [`check_package`] runs them; the per-log compliance verdict comes from
//!   the caller's engine through a closure.
//!
//! Nothing here writes to the checked tree.

pub mod check;
pub mod crosscheck;
pub mod logscan;
pub mod power;
pub mod repo;
pub mod rules;
pub mod seeds;
pub mod system_desc;

pub use check::{
    check_package, check_package_with, BenchmarkVerdict, BypassUse, LogOutcome, PackageOptions,
    PackageReport, Verdict,
};
pub use rules::PackageRules;
