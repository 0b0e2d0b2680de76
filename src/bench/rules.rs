//! `bench rules`: speed of the board, the forbidden-point scan and the solver.

use std::io::{self, Write};
use std::time::Duration;

use crate::bench::positions::{Record, GAMES, RENJU_MIDGAME};
use crate::bench::{format_rate, rate};
use crate::game::{Board, Point};
use crate::tactics::{solve_with, Algorithm, SolveLimits, ThreatKind};

/// Plays and takes back every empty cell of `board` once; returns the count.
pub fn make_unmake_all(board: &mut Board, cells: &[Point]) -> u64 {
    // Counted as made only when the move was legal: a refused one (a
    // forbidden point) costs a check, not a make and unmake.
    let mut made = 0;
    for &p in cells {
        if board.play(p).is_ok() {
            board.undo();
            made += 1;
        }
    }
    made
}

/// Positions a few plies before the end of each game, for the solver.
pub fn solver_positions() -> Result<Vec<Board>, String> {
    let mut boards = Vec::new();
    for record in GAMES {
        let n = record.moves().len();
        for back in 1..=12 {
            boards.push(record.board_after(n.saturating_sub(back))?);
        }
    }
    Ok(boards)
}

/// Runs one solve per position for both colours, returning the node count.
pub fn solve_all(boards: &mut [Board], kind: ThreatKind, limits: SolveLimits) -> u64 {
    solve_all_with(boards, kind, limits, Algorithm::default_for(kind))
}

/// [`solve_all`] with a chosen algorithm.
pub fn solve_all_with(
    boards: &mut [Board],
    kind: ThreatKind,
    limits: SolveLimits,
    algorithm: Algorithm,
) -> u64 {
    let mut nodes = 0;
    for board in boards.iter_mut() {
        for attacker in crate::game::Color::BOTH {
            nodes += solve_with(board, attacker, kind, limits, algorithm).nodes;
        }
    }
    nodes
}

/// Prints the figures, spending about `per_item` on each.
pub fn run(per_item: Duration, out: &mut impl Write) -> io::Result<()> {
    let fail = |e: String| io::Error::new(io::ErrorKind::InvalidData, e);
    writeln!(
        out,
        "bench rules (one thread, {:.1} s per figure)",
        per_item.as_secs_f64()
    )?;
    writeln!(out, "make+unmake with pattern update, per second:")?;
    for record in GAMES {
        let mut board = record.board_after(record_midgame(record)).map_err(fail)?;
        let cells: Vec<Point> = board.empty_cells().collect();
        let per_sec = rate(per_item, || make_unmake_all(&mut board, &cells));
        writeln!(
            out,
            "  {:<24} {:>3} stones  {:>12}",
            record.name,
            board.stone_count(),
            format_rate(per_sec)
        )?;
    }

    let mut renju = RENJU_MIDGAME.board().map_err(fail)?;
    let forbidden = renju.forbidden_points().len();
    let scans = rate(per_item, || {
        std::hint::black_box(renju.forbidden_points());
        1
    });
    writeln!(
        out,
        "full forbidden-point scans per second ({}, {forbidden} forbidden): {}",
        RENJU_MIDGAME.name,
        format_rate(scans)
    )?;

    let mut boards = solver_positions().map_err(fail)?;
    for (name, kind, algorithm, limits) in [
        (
            "VCF",
            ThreatKind::Vcf,
            Algorithm::DepthFirst,
            SolveLimits::new(100_000, 30),
        ),
        (
            "VCT (depth-first)",
            ThreatKind::Vct,
            Algorithm::DepthFirst,
            SolveLimits::new(20_000, 12),
        ),
        (
            "VCT (proof-number, the engine's)",
            ThreatKind::Vct,
            Algorithm::ProofNumber,
            SolveLimits::new(20_000, 12),
        ),
    ] {
        let per_sec = rate(per_item, || {
            solve_all_with(&mut boards, kind, limits, algorithm)
        });
        let depth = win_depths(&mut boards, kind, limits, algorithm);
        writeln!(
            out,
            "{name} nodes per second ({} positions x 2 attackers): {}; {} wins found, \
             the longest {} attacker moves, {} nodes at most",
            boards.len(),
            format_rate(per_sec),
            depth.wins,
            depth.longest,
            depth.most_nodes
        )?;
    }
    Ok(())
}

/// What the solver reaches within its limits.
struct WinDepths {
    wins: usize,
    /// Attacker moves in the longest win found.
    longest: usize,
    /// Nodes of the largest solve that found a win.
    most_nodes: u64,
}

fn win_depths(
    boards: &mut [Board],
    kind: ThreatKind,
    limits: SolveLimits,
    algorithm: Algorithm,
) -> WinDepths {
    let mut depths = WinDepths {
        wins: 0,
        longest: 0,
        most_nodes: 0,
    };
    for board in boards.iter_mut() {
        for attacker in crate::game::Color::BOTH {
            let report = solve_with(board, attacker, kind, limits, algorithm);
            if let Some(line) = report.win {
                depths.wins += 1;
                depths.longest = depths.longest.max(line.len().div_ceil(2));
                depths.most_nodes = depths.most_nodes.max(report.nodes);
            }
        }
    }
    depths
}

/// A mid-game ply count for `record`: two thirds of the game.
fn record_midgame(record: &Record) -> usize {
    record.moves().len() * 2 / 3
}
