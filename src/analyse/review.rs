//! `analyse --review`: every position of a game searched, and the moves
//! that lose more than the threshold (or walk into a forced loss) marked.

use super::*;

/// One reviewed move.
#[derive(Clone, Debug)]
pub struct Reviewed {
    pub ply: usize,
    pub mover: Color,
    pub played: Point,
    /// Expected score of the played and of the best move, for the mover.
    pub played_score: f64,
    pub best: Option<Point>,
    pub best_score: f64,
    /// The opponent's forced win after the move (from a position not lost).
    pub forced_loss: Option<Vec<Point>>,
    /// `""`, `"?"` or `"??"`.
    pub mark: &'static str,
}

/// Solver budget of the forced-loss check after each reviewed move.
const REVIEW_SOLVER_NODES: u64 = crate::bench::blunders::CHECK_NODES;

/// Reviews every move of `game`.
pub fn review(
    searcher: &Searcher,
    game: &GameInput,
    args: &AnalyseArgs,
    mut progress: impl FnMut(usize),
) -> Result<Vec<Reviewed>, String> {
    let mut board = Board::new(game.size, game.rule);
    let limits = limits(args);
    let stop = AtomicBool::new(false);
    let mut out = Vec::new();
    for (ply, &played) in game.moves.iter().enumerate() {
        if ply < game.opening {
            board
                .play(played)
                .map_err(|e| format!("move {}: {e}", ply + 1))?;
            progress(ply + 1);
            continue;
        }
        let mover = board.side_to_move();
        let result = searcher.search(&board, &limits, &stop);
        // The score of the move the engine would play (the final-move rule
        // may prefer a move other than the most visited).
        let best_stats = result
            .best_move
            .and_then(|best| result.moves.iter().find(|m| m.mv == best))
            .or(result.moves.first());
        let best_score = best_stats
            .map_or(result.expectation as f64, move_score)
            .max(result.expectation as f64);
        let played_score = match result.moves.iter().find(|m| m.mv == played && m.visits > 0) {
            Some(m) => move_score(m),
            None => {
                // Not searched from here: its value is one minus the value of
                // the position after it.
                let mut after = board.clone();
                after
                    .play(played)
                    .map_err(|e| format!("move {}: {e}", ply + 1))?;
                if let Some(outcome) = after.outcome() {
                    match outcome {
                        Outcome::Draw => 0.5,
                        _ => 1.0,
                    }
                } else {
                    let r = searcher.search(&after, &limits, &stop);
                    1.0 - r.expectation as f64
                }
            }
        };
        let lost_before = matches!(result.proven, Proven::Loss(_));
        let forced_loss = if lost_before {
            None
        } else {
            refutation(&board, played, REVIEW_SOLVER_NODES)
        };
        // The engine's own choice is never marked `?`: the root's expectation
        // can exceed its chosen move's score, but no move was better.
        let chosen = result.best_move == Some(played);
        // `??` is for a position that was not lost: the search may not have
        // proven a loss that the review's larger solver budget finds, and
        // then the move the engine would play is refuted as well.
        let saveable = || match result.best_move {
            Some(best) if best != played => refutation(&board, best, REVIEW_SOLVER_NODES).is_none(),
            _ => false,
        };
        let mark = if forced_loss.is_some() && saveable() {
            "??"
        } else if !chosen && best_score - played_score > args.threshold {
            "?"
        } else {
            ""
        };
        out.push(Reviewed {
            ply,
            mover,
            played,
            played_score,
            best: result.best_move,
            best_score,
            forced_loss,
            mark,
        });
        board
            .play(played)
            .map_err(|e| format!("move {}: {e}", ply + 1))?;
        progress(ply + 1);
    }
    Ok(out)
}

pub(super) fn review_text(game: &GameInput, reviewed: &[Reviewed], threshold: f64) -> String {
    let size = game.size;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "review of {} moves ({} {}): ? loses more than {:.0}% of the expected score, \
         ?? walks into a forced loss",
        reviewed.len(),
        game.rule,
        size,
        100.0 * threshold
    );
    for r in reviewed {
        let stone = if r.mover == Color::Black { 'X' } else { 'O' };
        let best = r.best.map_or("-".to_string(), |b| cell_name(b, size));
        let _ = write!(
            out,
            "{:>3}. {stone}{:<4} {:5.1}%   best {:<4} {:5.1}%  {}",
            r.ply + 1,
            cell_name(r.played, size),
            100.0 * r.played_score,
            best,
            100.0 * r.best_score,
            r.mark
        );
        if let Some(line) = &r.forced_loss {
            let names: Vec<String> = line.iter().map(|&p| cell_name(p, size)).collect();
            let _ = write!(out, " (the opponent wins: {})", names.join(" "));
        }
        out.push('\n');
    }
    out
}

pub(super) fn review_json(game: &GameInput, reviewed: &[Reviewed]) -> Value {
    let size = game.size;
    let cell = |p: Point| cell_json(p, size);
    json!({
        "rule": game.rule.to_string(),
        "board": size.to_string(),
        "moves": reviewed.iter().map(|r| json!({
            "ply": r.ply + 1,
            "player": color_name(r.mover),
            "played": cell(r.played),
            "played_score": r.played_score,
            "best": r.best.map(cell),
            "best_score": r.best_score,
            "mark": r.mark,
            "forced_loss": r.forced_loss.as_ref().map(|l| l.iter().map(|&p| cell(p)).collect::<Vec<_>>()),
        })).collect::<Vec<_>>(),
    })
}
