//! Immediate threats: who can win now, what must be blocked, and the full
//! set of defences against a threat to make an unstoppable four.

use crate::game::{Board, CellKind, CellSet, Color, Direction, Point};

/// Whether `color` may play on empty `p` (renju black: not forbidden).
pub fn is_legal_for(board: &mut Board, p: Point, color: Color) -> bool {
    board.is_empty(p) && (color == Color::White || !board.is_forbidden(p))
}

/// The cells where `color` completes a winning line now. A five is never
/// forbidden, so all of them are legal.
pub fn winning_moves(board: &Board, color: Color) -> Vec<Point> {
    board.winning_moves(color).collect()
}

/// What the opponent of `attacker` must do about `attacker`'s fives: the
/// cells to block. Two or more cells mean one stone cannot stop them all.
pub fn five_blocks(board: &Board, attacker: Color) -> Vec<Point> {
    winning_moves(board, attacker)
}

/// The legal moves of `color` that make at least one four (including fives
/// only when they also make a four).
pub fn four_moves(board: &mut Board, color: Color) -> Vec<Point> {
    let candidates = *board.cells_of(CellKind::Four, color);
    candidates
        .iter()
        .filter(|&p| is_legal_for(board, p, color))
        .collect()
}

/// The legal moves after which `color` has two or more cells completing a
/// five, so that one stone cannot stop it: open fours, and where legal,
/// double fours (on one line or across lines).
pub fn unstoppable_four_moves(board: &mut Board, color: Color) -> Vec<Point> {
    let candidates = *board.cells_of(CellKind::Four, color);
    candidates
        .iter()
        .filter(|&p| board.five_cells_after(p, color) >= 2 && is_legal_for(board, p, color))
        .collect()
}

/// The full defence set against `attacker`'s threats to make an
/// unstoppable four on its next move (an open three, a four-four point):
/// every legal move of the other side after which `attacker` has no such
/// move left. Computed by trying every cell that could matter (each threat
/// cell and the cells within five steps of it on its four lines), so it is
/// exact, renju forbidden points included. Counter-attacks (the defender's
/// own fours) are not in it; see [`four_moves`].
///
/// Meaningful when `attacker` has no five to complete; returns an empty set
/// when `attacker` has no such threat.
pub fn unstoppable_four_defences(board: &mut Board, attacker: Color) -> Vec<Point> {
    let defender = attacker.opponent();
    let threats = unstoppable_four_moves(board, attacker);
    if threats.is_empty() {
        return Vec::new();
    }
    let mut candidates = CellSet::new();
    for &f in &threats {
        candidates.insert(f);
        for dir in Direction::ALL {
            for k in (-5..=5).filter(|&k| k != 0) {
                if let Some(q) = f.step(dir, k).filter(|&q| board.is_empty(q)) {
                    candidates.insert(q);
                }
            }
        }
    }
    let side = board.side_to_move();
    let mut defences = Vec::new();
    for e in candidates.iter() {
        if !is_legal_for(board, e, defender) {
            continue;
        }
        if board.place(e, defender).is_err() {
            continue;
        }
        if unstoppable_four_moves(board, attacker).is_empty() {
            defences.push(e);
        }
        board.undo();
    }
    board.set_side_to_move(side);
    defences
}
