//! Opening positions for matches and self-play: the files' notations are
//! `wuzi_formats::opening`'s; here they are checked against a board, and
//! random quiet openings are drawn.

use clap::ValueEnum;

use wuzi_game::game::{Board, BoardSize, CellKind, Color, MoveError, Point, Rule};

pub use wuzi_formats::opening::{
    detect_format, parse_file, parse_line, read_file_text, OpeningFormat, RawOpening,
};

/// How openings are taken from the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OpeningOrder {
    /// In file order.
    Sequential,
    /// Shuffled with the match seed.
    Random,
}

/// Plays an opening on a fresh board: every stone on the board and on an
/// empty cell, no renju-forbidden black stone, and no five on the board.
pub fn check_opening(size: BoardSize, rule: Rule, moves: &[(i64, i64)]) -> Result<Board, String> {
    let mut board = Board::new(size, rule);
    for (i, &(x, y)) in moves.iter().enumerate() {
        let color = board.side_to_move();
        let p = board.check_move(x, y, color).map_err(|e| match e {
            MoveError::OffBoard { .. } => {
                format!("stone {} ({x},{y}) is off the {size} board", i + 1)
            }
            other => format!("stone {}: {other}", i + 1),
        })?;
        board.place(p, color).map_err(|e| e.to_string())?;
        if board.outcome().is_some() {
            return Err(format!("the game is over after stone {}", i + 1));
        }
    }
    Ok(board)
}

pub use wuzi_game::rng::Rng;

/// The generator of openings and their order, from the match seed.
pub fn rng(seed: u64) -> Rng {
    Rng::new(seed ^ 0x2545_F491_4F6C_DD1D)
}

/// Whether neither side can make a four or a five with its next stone (so
/// there is no three and no four on the board: nothing is decided).
fn is_quiet(board: &Board) -> bool {
    Color::BOTH.iter().all(|&c| {
        board.cells_of(CellKind::Five, c).is_empty() && board.cells_of(CellKind::Four, c).is_empty()
    })
}

/// A random opening of `stones` stones near the centre, black first: legal
/// stones (no renju foul) in a square around the centre that grows when it
/// gets crowded, such that after every stone neither side has a four or can
/// make one (no threes, no fours, no five). Never a decided position.
pub fn random_opening(
    size: BoardSize,
    rule: Rule,
    stones: usize,
    rng: &mut Rng,
) -> Result<Vec<Point>, String> {
    if stones == 0 {
        return Ok(Vec::new());
    }
    if stones.saturating_mul(2) > size.cell_count() {
        return Err(format!(
            "a random opening of {stones} stones does not fit a {size} board"
        ));
    }
    let centre = size.center();
    let max_radius = size.width().max(size.height()) as i32;
    // Start with about three cells per stone around the centre.
    let mut radius = 1;
    while (2 * radius + 1) * (2 * radius + 1) < 3 * stones as i32 {
        radius += 1;
    }
    for attempt in 0..200 {
        let r = (radius + attempt / 20).min(max_radius);
        let mut board = Board::new(size, rule);
        let mut moves = Vec::with_capacity(stones);
        'stones: for _ in 0..stones {
            for _ in 0..100 {
                let dx = rng.below(2 * r as usize + 1) as i32 - r;
                let dy = rng.below(2 * r as usize + 1) as i32 - r;
                let Some(p) = size.point(centre.x() as i32 + dx, centre.y() as i32 + dy) else {
                    continue;
                };
                let color = board.side_to_move();
                if board.check_move(p.x() as i64, p.y() as i64, color).is_err() {
                    continue;
                }
                board.place(p, color).map_err(|e| e.to_string())?;
                if is_quiet(&board) && board.outcome().is_none() {
                    moves.push(p);
                    continue 'stones;
                }
                board.undo();
            }
            break;
        }
        if moves.len() == stones {
            return Ok(moves);
        }
    }
    Err(format!(
        "could not find a quiet random opening of {stones} stones on a {size} board"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_openings_are_quiet_and_legal() {
        let mut rng = rng(1);
        for rule in Rule::ALL {
            for (side, stones) in [(9, 4), (15, 6), (15, 10), (5, 3)] {
                let size = BoardSize::square(side).unwrap();
                let moves = random_opening(size, rule, stones, &mut rng).unwrap();
                assert_eq!(moves.len(), stones);
                let raw: Vec<(i64, i64)> =
                    moves.iter().map(|p| (p.x() as i64, p.y() as i64)).collect();
                let board = check_opening(size, rule, &raw).unwrap();
                assert!(is_quiet(&board));
            }
        }
    }
}
