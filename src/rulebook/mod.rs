//! The rule data: where it lives ([`source`]: built in or `--rules DIR`)
//! and the documentation of every finding code ([`codes`]).

pub mod codes;
pub mod source;
