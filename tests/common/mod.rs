//! Helpers shared by the integration tests: the board and record helpers of
//! the core crate's tests, and a pbrain-wuzi process driver.
#![allow(dead_code)]

pub mod brain;

#[path = "../../crates/wuzi-core/tests/common/mod.rs"]
mod boards;

// Not every test binary uses the board helpers.
#[allow(unused_imports)]
pub use boards::*;
