//! Discover: what the user named (a package, a `results/<system>` or
//! benchmark folder, log files, or a git change) becomes a [`Submission`]
//! tree of systems, benchmark folders, result logs and implementation
//! files. Nothing here reads a log's contents or writes to the tree.
//!
//! - [`walk`]: the walk over a path;
//! - [`tree`]: the tree it returns; [`paths`]: display paths;
//! - [`git`] and [`changes`]: the folders a git change touches.

pub mod changes;
pub mod git;
pub mod listing;
pub mod paths;
pub mod round;
pub mod scope;
pub mod tree;
pub mod walk;

pub use tree::{BenchmarkDir, InputKind, Submission};
pub use walk::{discover, discover_logs};
