//! Check: one log (or one implementation config) at a time.
//!
//! - [`rules`]: the compliance engine over a log's events, with the rule
//!   packs of `rules/<usage>/<version>/compliance/`;
//! - [`policy`]: closed-division policy signals in logs and configs.

pub mod policy;
pub mod rules;
pub mod runcheck;
