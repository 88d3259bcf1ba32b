//! Aggregate: what needs more than one log.
//!
//! - [`package`]: file counts, system descriptions, seeds and the package
//!   verdict;
//! - [`stats`]: RCP convergence test, olympic score, spread of the runs;
//! - [`repeat`]: two runs of one configuration compared.

pub mod package;
pub mod repeat;
pub mod stats;
