//! The position a block of stones (BOARD, YXBOARD, the swap and balance
//! blocks) describes.

use wuzi_game::game::{Board, BoardSize, Color, MoveError, Rule};

use super::{Coord, Stone};

/// Why a block of stones is not a position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    /// Field 3: a continuous game's blocked stone.
    #[error("stone {at} has field 3 (a continuous-game blocked stone), which is not supported")]
    BlockedStone { at: Coord },
    /// A field other than 1, 2 or 3.
    #[error("stone {at} has field {field}; expected 1 or 2")]
    Field { at: Coord, field: u8 },
    /// A stone off the board or on an occupied cell.
    #[error(transparent)]
    Move(#[from] MoveError),
}

/// The position `stones` describe on an empty board of `size` under
/// `rule`: field 1 for the side to move and 2 for the other (missing
/// fields alternate from black, in playing order), in any numbers. The
/// side to move is black when both sides have as many stones and white
/// when the other side has one more, whatever order the stones come in
/// (the protocol promises playing order only for renju); other counts
/// (puzzles, renju problems, a GUI's edit mode) take the first stone as
/// black, as Rapfi reads them. The error says what is wrong, for the
/// command's name to precede.
pub fn position(size: BoardSize, rule: Rule, stones: &[Stone]) -> Result<Board, PositionError> {
    let mut board = Board::new(size, rule);
    for stone in stones {
        match stone.field {
            None | Some(1 | 2) => {}
            Some(3) => return Err(PositionError::BlockedStone { at: stone.at }),
            Some(field) => {
                return Err(PositionError::Field {
                    at: stone.at,
                    field,
                })
            }
        }
    }
    let fielded = stones.iter().any(|s| s.field.is_some());
    let own = stones.iter().filter(|s| s.field == Some(1)).count();
    let other = stones.iter().filter(|s| s.field == Some(2)).count();
    let to_move = if !fielded {
        if stones.len() % 2 == 0 {
            Color::Black
        } else {
            Color::White
        }
    } else if own == other {
        Color::Black
    } else if other == own + 1 {
        Color::White
    } else {
        match stones.first().and_then(|s| s.field) {
            Some(2) => Color::White,
            _ => Color::Black,
        }
    };
    for (i, stone) in stones.iter().enumerate() {
        let color = match stone.field {
            Some(1) => to_move,
            Some(_) => to_move.opponent(),
            None if i % 2 == 0 => Color::Black,
            None => Color::White,
        };
        let p = board.point(stone.at.x, stone.at.y)?;
        board.place(p, color)?;
    }
    board.set_side_to_move(to_move);
    Ok(board)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gomocup::Coord;
    use wuzi_game::game::Point;

    fn stone(x: i64, y: i64, field: Option<u8>) -> Stone {
        Stone {
            at: Coord { x, y },
            field,
        }
    }

    #[test]
    fn fields_give_colours_and_the_side_to_move() {
        let size = BoardSize::FIFTEEN;
        // Fields: the first stone is black; field 1 is the side to move.
        let board = position(
            size,
            Rule::Freestyle,
            &[
                stone(7, 7, Some(2)),
                stone(8, 8, Some(1)),
                stone(9, 9, Some(2)),
            ],
        )
        .unwrap();
        assert_eq!(board.side_to_move(), Color::White);
        assert_eq!(board.stone(Point::new(7, 7).unwrap()), Some(Color::Black));
        assert_eq!(board.stone(Point::new(8, 8).unwrap()), Some(Color::White));
        // Out of playing order, the counts still decide: two stones of the
        // other side against one of the side to move make it white.
        let board = position(
            size,
            Rule::Freestyle,
            &[
                stone(8, 8, Some(1)),
                stone(7, 7, Some(2)),
                stone(9, 9, Some(2)),
            ],
        )
        .unwrap();
        assert_eq!(board.side_to_move(), Color::White);
        assert_eq!(board.stone(Point::new(8, 8).unwrap()), Some(Color::White));
        assert_eq!(board.stone(Point::new(9, 9).unwrap()), Some(Color::Black));
        // Counts no game reaches (a puzzle): the first stone is black.
        let board = position(
            size,
            Rule::Freestyle,
            &[
                stone(7, 7, Some(2)),
                stone(8, 8, Some(2)),
                stone(9, 9, Some(2)),
                stone(1, 1, Some(1)),
            ],
        )
        .unwrap();
        assert_eq!(board.side_to_move(), Color::White);
        assert_eq!(board.stone(Point::new(7, 7).unwrap()), Some(Color::Black));
        // No fields: alternate from black.
        let board = position(size, Rule::Freestyle, &[stone(1, 1, None)]).unwrap();
        assert_eq!(board.side_to_move(), Color::White);
        // Bad blocks say why.
        let err = position(size, Rule::Freestyle, &[stone(1, 1, Some(3))]).unwrap_err();
        assert!(err.to_string().contains("field 3"), "{err}");
        assert!(matches!(err, PositionError::BlockedStone { at } if at == Coord { x: 1, y: 1 }));
        assert!(matches!(
            position(size, Rule::Freestyle, &[stone(1, 1, Some(7))]),
            Err(PositionError::Field { field: 7, .. })
        ));
        let err = position(
            size,
            Rule::Freestyle,
            &[stone(1, 1, None), stone(1, 1, None)],
        );
        assert!(matches!(
            err,
            Err(PositionError::Move(MoveError::Occupied(_)))
        ));
        assert!(matches!(
            position(size, Rule::Freestyle, &[stone(15, 0, None)]),
            Err(PositionError::Move(MoveError::OffBoard { x: 15, y: 0, .. }))
        ));
    }
}
