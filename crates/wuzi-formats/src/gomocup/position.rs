//! The position a block of stones (BOARD, YXBOARD, the swap and balance
//! blocks) describes.

use wuzi_game::game::{Board, BoardSize, Color, Rule};

use super::Stone;

/// The position `stones` describe on an empty board of `size` under
/// `rule`: stones in playing order, field 1 for the side to move and 2 for
/// the other (missing fields alternate from black), in any numbers; the
/// first stone is black (as Rapfi reads it). The error says what is wrong,
/// for the command's name to precede.
pub fn position(size: BoardSize, rule: Rule, stones: &[Stone]) -> Result<Board, String> {
    let mut board = Board::new(size, rule);
    if let Some(stone) = stones
        .iter()
        .find(|s| s.field.is_some_and(|f| f != 1 && f != 2))
    {
        return Err(match stone.field {
            Some(3) => format!(
                "stone {} has field 3 (a continuous-game blocked stone), which is not supported",
                stone.at
            ),
            Some(f) => format!("stone {} has field {f}; expected 1 or 2", stone.at),
            None => String::new(),
        });
    }
    let fielded = stones.iter().any(|s| s.field.is_some());
    // The first stone is black (the stones come in playing order), which
    // gives the side to move its colour. The fields need not alternate:
    // puzzles, renju problems and a GUI's edit mode send any position, and
    // it is then the side to move's turn whatever the counts.
    let to_move = if !fielded {
        if stones.len() % 2 == 0 {
            Color::Black
        } else {
            Color::White
        }
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
        let p = board
            .point(stone.at.x, stone.at.y)
            .map_err(|e| e.to_string())?;
        board.place(p, color).map_err(|e| e.to_string())?;
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
        // No fields: alternate from black.
        let board = position(size, Rule::Freestyle, &[stone(1, 1, None)]).unwrap();
        assert_eq!(board.side_to_move(), Color::White);
        // Bad blocks say why.
        let err = position(size, Rule::Freestyle, &[stone(1, 1, Some(3))]).unwrap_err();
        assert!(err.contains("field 3"), "{err}");
        let err = position(
            size,
            Rule::Freestyle,
            &[stone(1, 1, None), stone(1, 1, None)],
        );
        assert!(err.is_err());
        assert!(position(size, Rule::Freestyle, &[stone(15, 0, None)]).is_err());
    }
}
