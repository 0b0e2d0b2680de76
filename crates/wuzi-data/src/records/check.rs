//! Whether a recorded game is one the rules allow, and what it teaches:
//! its result, the first position that is a training target.

use std::fmt;

use wuzi_game::game::{Board, BoardSize, Color, Outcome, Point, Rule};

use super::*;

/// Why a game record is not used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reject {
    Illegal(String),
    Forbidden(usize),
    AfterWin(usize),
    Mismatch(String),
    NoTargets,
    /// A record without a result (PSQ), or one decided off the board (a
    /// Gomocup TSV's `other` or `illegal_move` end), that ends before a five
    /// or a full board: a forfeit, a crash or an adjournment, not a draw.
    Undecided,
}

impl fmt::Display for Reject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reject::Illegal(why) => write!(f, "illegal move: {why}"),
            Reject::Forbidden(ply) => write!(f, "black move {} is forbidden", ply + 1),
            Reject::AfterWin(ply) => write!(f, "the game goes on after move {}", ply + 1),
            Reject::Mismatch(why) => write!(f, "result mismatch: {why}"),
            Reject::NoTargets => write!(f, "no move after the opening"),
            Reject::Undecided => {
                write!(f, "no result: the game ends before a five or a full board")
            }
        }
    }
}

/// Replays a game under `rule` and decides its result.
///
/// `recorded`: the result written in the record (TSV); `None` (PSQ) takes
/// the result from the replay: a win when the last move makes a winning
/// line, a white win when it is a forbidden renju black move, a draw when
/// the board is full; any other end is refused as undecided.
/// The game is refused when a move is on an occupied cell, when black plays
/// a forbidden renju move before the last move, when moves follow a winning
/// line, or when the recorded result contradicts the replay (with
/// `claimed_five`, the record says a five ended it: the last move must make
/// one). A forbidden last move is kept as a white win, but it is not a
/// target.
pub fn check_game(
    id: String,
    size: BoardSize,
    rule: Rule,
    moves: Vec<Point>,
    opening: usize,
    recorded: Option<Outcome>,
    claimed_five: bool,
) -> Result<Game, Reject> {
    if moves.len() > size.cell_count() {
        return Err(Reject::Illegal("more moves than cells".into()));
    }
    let mut board = Board::new(size, rule);
    let last = moves.len().checked_sub(1);
    let mut forbidden_last = false;
    let mut winner = None;
    for (ply, &p) in moves.iter().enumerate() {
        if !size.contains(p) {
            return Err(Reject::Illegal(format!("{p} is off the {size} board")));
        }
        if !board.is_empty(p) {
            return Err(Reject::Illegal(format!(
                "{p} is occupied (move {})",
                ply + 1
            )));
        }
        let color = board.side_to_move();
        if color == Color::Black && board.is_forbidden(p) {
            if Some(ply) == last {
                forbidden_last = true;
            } else {
                return Err(Reject::Forbidden(ply));
            }
        } else if board.is_winning_move(p, color) {
            if Some(ply) != last {
                return Err(Reject::AfterWin(ply));
            }
            winner = Some(color);
        }
        board
            .play(p)
            .map_err(|e| Reject::Illegal(format!("{e} (move {})", ply + 1)))?;
    }
    let replayed = if forbidden_last {
        Some(Outcome::Win(Color::White))
    } else {
        winner.map(Outcome::Win)
    };
    if claimed_five && winner.is_none() {
        return Err(Reject::Mismatch(
            "recorded as ended by a five, but the last move makes none".into(),
        ));
    }
    let outcome = match (recorded, replayed) {
        (Some(r), Some(w)) if r != w => {
            return Err(Reject::Mismatch(format!(
                "recorded {}, the last move gives {}",
                outcome_name(r),
                outcome_name(w)
            )))
        }
        (Some(r), _) => r,
        (None, Some(w)) => w,
        (None, None) if moves.len() == size.cell_count() => Outcome::Draw,
        (None, None) => return Err(Reject::Undecided),
    };
    let end = moves.len() - usize::from(forbidden_last);
    let first = opening.min(end);
    if first >= end {
        return Err(Reject::NoTargets);
    }
    Ok(Game {
        id,
        size,
        // At most 32x32 = 1024 moves, so plies fit in u16.
        first_target: first as u16,
        end_target: end as u16,
        moves,
        outcome,
        search: Vec::new(),
    })
}

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Win(Color::Black) => "a black win",
        Outcome::Win(Color::White) => "a white win",
        Outcome::Draw => "a draw",
    }
}
