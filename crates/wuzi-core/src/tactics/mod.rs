//! Threat-space tactics: immediate threats and the VCF/VCT solver.

mod solver;
mod threats;

pub use solver::{forced_win, solve, SolveLimits, SolveReport, ThreatKind};
pub use threats::{
    five_blocks, four_moves, is_legal_for, line_breakers, unstoppable_four_defences,
    unstoppable_four_moves, winning_moves,
};
