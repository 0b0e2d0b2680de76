//! Fixed positions for benchmarks, from Gomocup games (gomocup.org
//! tournament results; see tests/fixtures/games/README.md).

use crate::game::{Board, BoardSize, MoveError, Point, Rule};
use crate::gomocup::Coord;

/// A game record: rule, board side, moves as `x,y` separated by spaces.
pub struct Record {
    pub name: &'static str,
    pub rule: Rule,
    pub side: u32,
    pub moves: &'static str,
}

/// 2019 renju, 48 moves: black to move with five forbidden points.
pub const RENJU_MIDGAME: Record = Record {
    name: "renju 15x15",
    rule: Rule::Renju,
    side: 15,
    moves: "7,7 8,6 8,7 6,7 5,6 7,5 6,4 6,6 5,8 5,7 4,8 9,6 10,6 9,5 9,3 6,8 6,9 8,5 \
            6,5 7,9 4,6 3,7 2,7 10,8 9,8 11,9 9,7 10,9 10,7 11,7 9,9 9,11 8,10 10,10 \
            5,4 7,6 12,8 11,5 10,5 11,8 11,6 10,11 10,12 11,11 11,10 12,11 8,11 13,11",
};

/// 2021 standard, 57 moves.
pub const STANDARD_GAME: Record = Record {
    name: "standard 15x15",
    rule: Rule::Standard,
    side: 15,
    moves: "8,7 8,6 7,4 7,6 6,5 5,6 6,6 6,7 7,8 9,6 9,4 6,4 11,6 7,5 5,3 10,5 10,4 11,4 \
            5,5 7,7 4,4 5,9 6,8 4,7 3,3 2,2 4,9 2,5 5,8 3,7 5,7 4,8 2,6 3,5 6,3 4,3 5,2 \
            8,5 5,1 5,4 7,1 6,1 4,2 9,7 10,8 6,10 7,11 9,5 11,5 9,9 9,8 12,3 13,2 7,9 \
            2,4 6,0 1,5",
};

/// 2021 freestyle 20x20, 139 moves.
pub const FREESTYLE20_GAME: Record = Record {
    name: "freestyle 20x20",
    rule: Rule::Freestyle,
    side: 20,
    moves: "15,15 16,16 15,17 13,15 12,14 15,16 13,16 17,16 18,16 14,13 16,15 12,15 \
            13,14 15,13 14,14 11,14 10,16 13,13 12,13 11,15 10,15 11,16 11,13 10,14 \
            9,13 10,11 9,12 9,14 10,12 8,14 7,14 7,13 12,10 12,12 8,11 8,10 6,12 11,18 \
            11,17 6,13 11,9 13,9 9,9 9,10 7,10 6,9 9,8 8,9 7,8 8,8 9,7 10,8 8,7 7,6 \
            5,9 6,10 10,7 11,7 12,8 9,6 5,11 6,11 6,8 8,6 6,6 4,8 13,10 12,11 16,13 \
            11,6 10,6 15,14 5,13 5,12 13,7 14,6 12,6 12,7 11,5 10,4 18,15 17,15 6,14 \
            4,12 6,15 8,13 5,15 4,14 4,15 3,15 4,10 7,7 11,10 14,10 3,12 7,12 5,10 \
            9,5 11,3 3,10 5,16 4,11 2,9 4,13 4,17 3,18 5,17 5,14 5,18 5,19 6,17 3,14 \
            2,15 1,14 2,14 7,17 13,3 12,4 5,7 5,8 2,8 3,9 14,8 15,9 10,10 9,11 3,11 \
            2,12 11,11 11,12 8,15 7,15 3,16 6,19 6,16 6,18 4,16 7,16 2,16",
};

/// 2024 freestyle 15x15, 34 moves, played along the edges.
pub const FREESTYLE15_GAME: Record = Record {
    name: "freestyle 15x15",
    rule: Rule::Freestyle,
    side: 15,
    moves: "0,12 2,14 0,11 3,14 0,10 4,14 5,14 0,9 6,14 0,8 7,14 0,7 5,13 3,11 0,14 \
            0,13 9,14 8,14 0,5 4,10 2,12 3,10 4,12 3,12 3,13 5,11 6,12 4,11 2,11 5,10 \
            2,13 6,10 2,10 7,10",
};

pub const GAMES: [&Record; 4] = [
    &RENJU_MIDGAME,
    &STANDARD_GAME,
    &FREESTYLE20_GAME,
    &FREESTYLE15_GAME,
];

impl Record {
    pub fn moves(&self) -> Vec<Point> {
        self.moves
            .split_whitespace()
            .filter_map(|m| m.parse::<Coord>().ok()?.point())
            .collect()
    }

    /// The position after the first `plies` moves (all of them if fewer).
    pub fn board_after(&self, plies: usize) -> Result<Board, String> {
        let size = BoardSize::square(self.side).map_err(|e| e.to_string())?;
        let moves = self.moves();
        Board::from_moves(size, self.rule, &moves[..plies.min(moves.len())])
            .map_err(|e: MoveError| format!("{}: {e}", self.name))
    }

    pub fn board(&self) -> Result<Board, String> {
        self.board_after(usize::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_parse_and_replay() {
        assert_eq!(RENJU_MIDGAME.moves().len(), 48);
        assert_eq!(STANDARD_GAME.moves().len(), 57);
        assert_eq!(FREESTYLE20_GAME.moves().len(), 139);
        assert_eq!(FREESTYLE15_GAME.moves().len(), 34);
        let mut renju = RENJU_MIDGAME.board().unwrap();
        assert_eq!(renju.forbidden_points().len(), 5);
        for record in &GAMES[1..] {
            let board = record.board().unwrap();
            assert!(board.outcome().is_some(), "{} ends in a five", record.name);
        }
    }
}
