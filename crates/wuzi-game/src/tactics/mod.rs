//! Threat-space tactics: immediate threats and the VCF/VCT solver.

mod dfpn;
mod solver;
mod threats;

pub use solver::{
    forced_win, forced_win_counted, solve, solve_with, win_plies, Algorithm, SolveLimits,
    SolveReport, ThreatKind,
};
pub use threats::{
    five_blocks, five_defence, four_moves, is_legal_for, line_breakers, unstoppable_four_defences,
    unstoppable_four_moves, winning_moves, FiveDefence,
};
