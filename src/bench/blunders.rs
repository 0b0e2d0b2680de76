//! The blunder suite: positions from lost ladder games where a peer
//! announced a forced win right after our move, although it had announced
//! none before. `bench blunders` and the tests measure the share of them in
//! which the engine now plays a move our solver cannot refute.
//!
//! Fixture lines (TSV, `#` comments), as `scripts/extract_blunders.py`
//! writes them: id, rule, board side, the moves before the blunder, the
//! blunder, the peer, its announcement, its winning line (moves `x,y`).

use std::io::{self, Write};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::arena::judge;
use crate::arena::EngineSpec;
use crate::game::{Board, BoardSize, Point, Rule};
use crate::gomocup::Coord;
use crate::search::{SearchConfig, SearchLimits, Searcher};
use crate::tactics::{forced_win, solve_with, Algorithm, SolveLimits, ThreatKind};

/// One position of the suite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blunder {
    pub id: String,
    pub rule: Rule,
    pub size: BoardSize,
    /// The game up to our move.
    pub moves: Vec<Point>,
    /// The move we played, after which the peer announced its win.
    pub blunder: Point,
    pub peer: String,
    /// The peer's winning line after the blunder, its move first.
    pub peer_line: Vec<Point>,
}

fn parse_point(text: &str) -> Result<Point, String> {
    let c: Coord = text.parse().map_err(|e| format!("bad move: {e}"))?;
    c.point()
        .ok_or_else(|| format!("move {text:?} off the board"))
}

fn parse_points(text: &str) -> Result<Vec<Point>, String> {
    text.split_whitespace().map(parse_point).collect()
}

/// The largest fixture file read (the suite's is a few kilobytes).
pub const MAX_FIXTURE_BYTES: u64 = 16 << 20;

/// Reads a fixture.
pub fn parse(text: &str) -> Result<Vec<Blunder>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let at = |e: String| format!("line {}: {e}", n + 1);
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 8 {
            return Err(at(format!("{} fields, expected 8", f.len())));
        }
        let side: u32 = f[2]
            .parse()
            .map_err(|_| at(format!("bad size {:?}", f[2])))?;
        out.push(Blunder {
            id: f[0].to_string(),
            rule: f[1].parse().map_err(|e| at(format!("{e:?}")))?,
            size: BoardSize::square(side).map_err(|e| at(e.to_string()))?,
            moves: parse_points(f[3]).map_err(at)?,
            blunder: parse_point(f[4]).map_err(at)?,
            peer: f[5].to_string(),
            peer_line: parse_points(f[7]).map_err(at)?,
        });
    }
    Ok(out)
}

impl Blunder {
    /// The position before our move.
    pub fn board(&self) -> Result<Board, String> {
        Board::from_moves(self.size, self.rule, &self.moves)
            .map_err(|e| format!("{}: {e}", self.id))
    }
}

/// The opponent's forced win after the side to move plays `mv`, if the
/// solver finds one within `nodes` (VCF, then VCT). None after a move that
/// ends the game: the solver does not look at whether the game is over, and
/// would find the loser's four to complete.
pub fn refutation(board: &Board, mv: Point, nodes: u64) -> Option<Vec<Point>> {
    let mut board = board.clone();
    let opponent = board.side_to_move().opponent();
    board.play(mv).ok()?;
    if board.is_over() {
        return None;
    }
    forced_win(&mut board, opponent, nodes, nodes)
}

/// Solver budget of the refutation checks.
pub const CHECK_NODES: u64 = 200_000;

/// What the engine did on one position.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub id: String,
    /// Our solver refutes the blunder too (only these positions count).
    pub confirmed: bool,
    pub played: Option<Point>,
    /// The move played is refuted by our solver.
    pub refuted: bool,
    /// With a reference brain: whether it announced a forced win after the
    /// move played (an independent judge; our solver is the engine's own).
    pub reference_refutes: Option<bool>,
    /// With a reference brain: whether its own move in the position holds
    /// by its own judgement (it announces no win for the opponent after
    /// it). When its own move falls too, the position was lost before the
    /// move, whatever the engine plays.
    pub reference_own_move_holds: Option<bool>,
}

/// The suite's figures.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub outcomes: Vec<Outcome>,
}

impl Summary {
    /// Positions whose blunder our solver refutes.
    pub fn confirmed(&self) -> usize {
        self.outcomes.iter().filter(|o| o.confirmed).count()
    }

    /// Of those, the positions where the move played now holds.
    pub fn held(&self) -> usize {
        self.outcomes
            .iter()
            .filter(|o| o.confirmed && !o.refuted)
            .count()
    }

    pub fn share_held(&self) -> f64 {
        self.held() as f64 / self.confirmed().max(1) as f64
    }

    /// Positions where the reference's own move holds, and of those, the
    /// ones where the engine's move holds too (by the reference's
    /// judgement): what the engine saves of what can be saved.
    pub fn reference_savable(&self) -> (usize, usize) {
        let savable = self
            .outcomes
            .iter()
            .filter(|o| o.reference_own_move_holds == Some(true));
        let (mut all, mut saved) = (0, 0);
        for o in savable {
            all += 1;
            saved += usize::from(o.reference_refutes == Some(false));
        }
        (all, saved)
    }

    /// Positions the reference judged, and those where it announced no win
    /// after the move played.
    pub fn reference_held(&self) -> (usize, usize) {
        let judged = self.outcomes.iter().filter_map(|o| o.reference_refutes);
        let (mut all, mut held) = (0, 0);
        for refutes in judged {
            all += 1;
            held += usize::from(!refutes);
        }
        (all, held)
    }
}

/// Searches each position with `playouts` (one thread, deterministic) and
/// checks the move with the solver. `searcher_for` gives the searcher of a
/// rule. With a `reference` brain, every position is searched (those our
/// solver does not confirm too) and the move played is also judged by it.
pub fn evaluate(
    blunders: &[Blunder],
    mut searcher_for: impl FnMut(Rule, BoardSize) -> Result<Arc<Searcher>, String>,
    playouts: u64,
    reference: Option<&EngineSpec>,
) -> Result<Summary, String> {
    let mut summary = Summary::default();
    for blunder in blunders {
        let board = blunder.board()?;
        let confirmed = refutation(&board, blunder.blunder, CHECK_NODES).is_some();
        if !confirmed && reference.is_none() {
            // Beyond our solver: nothing to measure the engine's move by.
            summary.outcomes.push(Outcome {
                id: blunder.id.clone(),
                confirmed,
                played: None,
                refuted: false,
                reference_refutes: None,
                reference_own_move_holds: None,
            });
            continue;
        }
        let searcher = searcher_for(blunder.rule, board.size())?;
        searcher.cache().clear();
        let limits = SearchLimits {
            max_playouts: Some(playouts),
            ..SearchLimits::default()
        };
        let result = searcher.search(&board, &limits, &AtomicBool::new(false));
        let refuted = result
            .best_move
            .is_none_or(|mv| refutation(&board, mv, CHECK_NODES).is_some());
        let reference_refutes = match (reference, result.best_move) {
            (Some(spec), Some(mv)) => Some(
                refuted_by_reference(spec, &board, mv)
                    .map_err(|e| format!("{}: reference: {e}", blunder.id))?
                    .ok_or_else(|| format!("{}: the engine's move {mv} is illegal", blunder.id))?,
            ),
            _ => None,
        };
        let reference_own_move_holds = match reference {
            // A failure here costs this one figure, not the run.
            Some(spec) => own_move_holds(spec, &board, result.best_move, reference_refutes)
                .unwrap_or_else(|e| {
                    eprintln!("{}: reference, its own move: {e}", blunder.id);
                    None
                }),
            None => None,
        };
        summary.outcomes.push(Outcome {
            id: blunder.id.clone(),
            confirmed,
            played: result.best_move,
            refuted,
            reference_refutes,
            reference_own_move_holds,
        });
    }
    Ok(summary)
}

/// Whether the reference brain's own move in `board` holds by its own
/// judgement; `None` when it answers no move on the board. The engine's
/// move and its verdict are reused when the reference plays the same.
fn own_move_holds(
    spec: &EngineSpec,
    board: &Board,
    engine_move: Option<Point>,
    engine_move_refuted: Option<bool>,
) -> Result<Option<bool>, String> {
    let own = judge::verdict(spec, board)?;
    let Some(mv) = own.answer.as_deref().and_then(|a| parse_point(a).ok()) else {
        return Ok(None);
    };
    if let (Some(same), Some(refuted)) = (engine_move, engine_move_refuted) {
        if same == mv {
            return Ok(Some(!refuted));
        }
    }
    // A move off the board or on a stone loses.
    Ok(Some(refuted_by_reference(spec, board, mv)? == Some(false)))
}

/// Whether the reference brain announces a forced win for the opponent
/// after `mv` in `board`; `None` when `mv` cannot be played there.
fn refuted_by_reference(
    spec: &EngineSpec,
    board: &Board,
    mv: Point,
) -> Result<Option<bool>, String> {
    let mut after = board.clone();
    if after.play(mv).is_err() {
        return Ok(None);
    }
    Ok(Some(judge::verdict(spec, &after)?.win_in.is_some()))
}

/// The deterministic search settings of the suite.
pub fn suite_config(base: &SearchConfig) -> SearchConfig {
    SearchConfig {
        threads: 1,
        pipeline: 1,
        ..base.clone()
    }
}

/// Prints the figures of `bench blunders`.
pub fn print(summary: &Summary, playouts: u64, out: &mut impl Write) -> io::Result<()> {
    writeln!(
        out,
        "bench blunders: {} positions, {} whose blunder our solver refutes ({} nodes); \
         {playouts} playouts, one thread",
        summary.outcomes.len(),
        summary.confirmed(),
        CHECK_NODES
    )?;
    for o in &summary.outcomes {
        let played = o.played.map_or("none".to_string(), |p| p.to_string());
        let verdict = match (o.confirmed, o.refuted) {
            (false, _) => "not counted",
            (true, false) => "holds",
            (true, true) => "refuted",
        };
        let reference = match o.reference_refutes {
            Some(true) => "; the reference announces a win",
            Some(false) => "; the reference announces none",
            None => "",
        };
        let lost_before = match (o.reference_own_move_holds, o.reference_refutes) {
            (Some(false), Some(true)) => " (its own move falls too: lost before the move)",
            (Some(false), _) => " (its own move falls)",
            _ => "",
        };
        writeln!(
            out,
            "  {:<28} plays {:<6} {verdict}{reference}{lost_before}",
            o.id, played
        )?;
    }
    writeln!(
        out,
        "moves not refuted: {} of {} ({:.0}%)",
        summary.held(),
        summary.confirmed(),
        100.0 * summary.share_held()
    )?;
    let (judged, held) = summary.reference_held();
    if judged > 0 {
        writeln!(
            out,
            "moves after which the reference announces no win: {held} of {judged} ({:.0}%)",
            100.0 * held as f64 / judged as f64
        )?;
        let (savable, saved) = summary.reference_savable();
        writeln!(
            out,
            "positions where the reference's own move holds: {savable}; the engine's holds in {saved} of them"
        )?;
    }
    Ok(())
}

/// Node budgets of the solver figures: about what the engine's checks get
/// at 0.5 s per move, ten times that, and the suite's own check.
pub const REACH_BUDGETS: [u64; 3] = [2_000, 20_000, CHECK_NODES];

/// How far each VCT algorithm reaches on the suite: for each budget of
/// [`REACH_BUDGETS`], the positions after the blunder (the peer to move)
/// where the depth-first and the proof-number solver find the peer's win.
pub fn solver_reach(blunders: &[Blunder]) -> Result<Vec<(u64, usize, usize)>, String> {
    let mut rows: Vec<(u64, usize, usize)> = REACH_BUDGETS.iter().map(|&b| (b, 0, 0)).collect();
    for blunder in blunders {
        let mut board = blunder.board()?;
        board
            .play(blunder.blunder)
            .map_err(|e| format!("{}: {e}", blunder.id))?;
        let peer = board.side_to_move();
        for row in rows.iter_mut() {
            let limits = SolveLimits::new(row.0, 20);
            let found = |algorithm, board: &mut Board| {
                solve_with(board, peer, ThreatKind::Vct, limits, algorithm)
                    .win
                    .is_some()
            };
            row.1 += usize::from(found(Algorithm::DepthFirst, &mut board));
            row.2 += usize::from(found(Algorithm::ProofNumber, &mut board));
        }
    }
    Ok(rows)
}

/// Prints [`solver_reach`]'s figures.
pub fn print_reach(
    rows: &[(u64, usize, usize)],
    positions: usize,
    out: &mut impl Write,
) -> io::Result<()> {
    writeln!(
        out,
        "the peer's win after the blunder, found by our VCT (depth 20) in {positions} positions:"
    )?;
    writeln!(
        out,
        "  {:>9}  {:>11}  {:>12}",
        "nodes", "depth-first", "proof-number"
    )?;
    for (nodes, depth_first, proof_number) in rows {
        writeln!(out, "  {nodes:>9}  {depth_first:>11}  {proof_number:>12}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(refutes: Option<bool>, own_holds: Option<bool>) -> Outcome {
        Outcome {
            id: String::new(),
            confirmed: false,
            played: None,
            refuted: false,
            reference_refutes: refutes,
            reference_own_move_holds: own_holds,
        }
    }

    /// Only the positions the reference itself holds count as savable;
    /// the engine saves those where the reference announces no win after
    /// the engine's move.
    #[test]
    fn savable_positions_are_those_the_reference_holds() {
        let summary = Summary {
            outcomes: vec![
                outcome(Some(false), Some(true)),
                outcome(Some(true), Some(true)),
                outcome(Some(false), Some(false)),
                outcome(Some(true), Some(false)),
                outcome(Some(false), None),
                outcome(None, None),
            ],
        };
        assert_eq!(summary.reference_savable(), (2, 1));
        assert_eq!(summary.reference_held(), (5, 3));
    }
}
