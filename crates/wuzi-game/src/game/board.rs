//! The board: stones, move history, Zobrist hash, and incrementally updated
//! pattern knowledge for every empty cell.

use std::fmt;

mod consistency;

use crate::game::cellset::CellSet;
use crate::game::pattern::{
    flag, key_of_window, CellKind, LinePattern, PatternTable, Threat, EMPTY, HALF_WINDOW, WALL,
};
use crate::game::point::{BoardSize, Direction, Point, CELL_SLOTS};
use crate::game::zobrist;
use crate::game::{Color, Rule};

/// Line bit strings per direction: rows, columns and the two diagonals (at
/// most 63 of each on a 32x32 board).
const LINE_SLOTS: usize = 64;

/// Why a move cannot be placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    #[error("move {x},{y} is outside the {size} board")]
    OffBoard { x: i64, y: i64, size: BoardSize },
    #[error("cell {0} is already occupied")]
    Occupied(Point),
    #[error("move {0} is forbidden for black under renju")]
    Forbidden(Point),
}

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    Win(Color),
    Draw,
}

/// A position with its history.
///
/// Besides the stones, the board keeps for every empty cell the
/// [`LinePattern`] each colour would make there in each direction, the
/// combined [`Threat`], and per colour the sets of cells that make a five, a
/// four or an open three (and black's renju forbidden candidates). All of it
/// is updated on every move and undo, touching only the cells within five
/// steps of the move along its four lines.
#[derive(Clone)]
pub struct Board {
    size: BoardSize,
    rule: Rule,
    table: &'static PatternTable,
    /// Cell codes (EMPTY or a colour's code) indexed by `Point::index`.
    cells: [u8; CELL_SLOTS],
    /// Each line of the board as 2-bit cells, with `HALF_WINDOW` wall cells
    /// of padding before its first cell; cells off the board are walls.
    lines: [[u128; LINE_SLOTS]; 4],
    /// Per cell and direction: black's pattern (low nibble), white's (high).
    patterns: [[u8; 4]; CELL_SLOTS],
    /// Per cell and colour: threat code (threat | flags << 8); 0 on stones.
    threats: [[u16; 2]; CELL_SLOTS],
    /// Per colour and `CellKind`.
    sets: [[CellSet; 4]; 2],
    /// XOR of the stones' Zobrist keys.
    stone_hash: u64,
    side_to_move: Color,
    history: Vec<(Point, Color)>,
}

/// Which line of direction `dir` holds `p`, and `p`'s position on it.
#[inline]
fn line_slot(p: Point, dir: usize) -> (usize, usize) {
    let (x, y) = (p.x() as usize, p.y() as usize);
    match dir {
        0 => (y, x),
        1 => (x, y),
        2 => (x + 31 - y, x),
        _ => (x + y, x),
    }
}

/// The 20-bit key of the cell at `pos` on `line`.
#[inline]
fn key_at(line: u128, pos: usize) -> u32 {
    let window = (line >> (2 * pos)) as u32 & 0x3F_FFFF;
    (window & 0x3FF) | (window >> 12) << 10
}

impl Board {
    /// An empty board; black is to move.
    pub fn new(size: BoardSize, rule: Rule) -> Board {
        let mut board = Board {
            size,
            rule,
            table: PatternTable::get(rule),
            cells: [EMPTY; CELL_SLOTS],
            lines: [[u128::MAX; LINE_SLOTS]; 4],
            patterns: [[0; 4]; CELL_SLOTS],
            threats: [[0; 2]; CELL_SLOTS],
            sets: [[CellSet::new(); 4]; 2],
            stone_hash: 0,
            side_to_move: Color::Black,
            history: Vec::with_capacity(size.cell_count()),
        };
        for p in size.points() {
            for dir in 0..4 {
                let (line, pos) = line_slot(p, dir);
                board.lines[dir][line] &= !((WALL as u128) << (2 * (pos + HALF_WINDOW)));
            }
        }
        for p in size.points() {
            board.refresh_cell(p);
        }
        board
    }

    /// A board after playing `moves` in order, black first.
    pub fn from_moves(size: BoardSize, rule: Rule, moves: &[Point]) -> Result<Board, MoveError> {
        let mut board = Board::new(size, rule);
        for &p in moves {
            board.play(p)?;
        }
        Ok(board)
    }

    #[inline]
    pub fn size(&self) -> BoardSize {
        self.size
    }

    #[inline]
    pub fn rule(&self) -> Rule {
        self.rule
    }

    #[inline]
    pub fn side_to_move(&self) -> Color {
        self.side_to_move
    }

    /// Hands the move to `color` without a stone (a pass or a null move, as
    /// threat analysis and set-up commands need). Undo restores the side of
    /// the move it takes back, so a caller that passes restores the side.
    pub fn set_side_to_move(&mut self, color: Color) {
        self.side_to_move = color;
    }

    /// Zobrist hash of the stones and the side to move.
    #[inline]
    pub fn hash(&self) -> u64 {
        match self.side_to_move {
            Color::Black => self.stone_hash,
            Color::White => self.stone_hash ^ zobrist::WHITE_TO_MOVE,
        }
    }

    /// The hash after the side to move plays on empty `p`, without playing.
    #[inline]
    pub fn hash_after(&self, p: Point) -> u64 {
        self.hash()
            ^ zobrist::stone_key(self.side_to_move.index(), p.index())
            ^ zobrist::WHITE_TO_MOVE
    }

    /// The moves played so far, in order, with their colours.
    #[inline]
    pub fn history(&self) -> &[(Point, Color)] {
        &self.history
    }

    #[inline]
    pub fn stone_count(&self) -> usize {
        self.history.len()
    }

    pub fn last_move(&self) -> Option<Point> {
        self.history.last().map(|&(p, _)| p)
    }

    pub fn is_full(&self) -> bool {
        self.history.len() >= self.size.cell_count()
    }

    /// The stone on `p`, `None` for an empty cell or a point off the board.
    #[inline]
    pub fn stone(&self, p: Point) -> Option<Color> {
        if !self.size.contains(p) {
            return None;
        }
        match self.cells[p.index()] {
            1 => Some(Color::Black),
            2 => Some(Color::White),
            _ => None,
        }
    }

    /// Whether `p` is on the board and empty.
    #[inline]
    pub fn is_empty(&self, p: Point) -> bool {
        self.size.contains(p) && self.cells[p.index()] == EMPTY
    }

    /// All empty cells, row by row.
    pub fn empty_cells(&self) -> impl Iterator<Item = Point> + '_ {
        self.size
            .points()
            .filter(|&p| self.cells[p.index()] == EMPTY)
    }

    /// Checks that `color` may place a stone on (x, y): on the board, empty,
    /// and not forbidden.
    pub fn check_move(&mut self, x: i64, y: i64, color: Color) -> Result<Point, MoveError> {
        let p = self.point(x, y)?;
        if !self.is_empty(p) {
            return Err(MoveError::Occupied(p));
        }
        if color == Color::Black && self.is_forbidden(p) {
            return Err(MoveError::Forbidden(p));
        }
        Ok(p)
    }

    /// The point (x, y) if it lies on this board.
    pub fn point(&self, x: i64, y: i64) -> Result<Point, MoveError> {
        let off = MoveError::OffBoard {
            x,
            y,
            size: self.size,
        };
        self.size.point_from_i64(x, y).ok_or(off)
    }

    /// Plays `p` for the side to move. Forbidden moves are *not* refused
    /// here (a forbidden renju move loses rather than being illegal to
    /// place); use [`Board::check_move`] or [`Board::is_forbidden`] first.
    pub fn play(&mut self, p: Point) -> Result<(), MoveError> {
        self.place(p, self.side_to_move)
    }

    /// Places a stone of `color` on `p`; the other colour is then to move.
    pub fn place(&mut self, p: Point, color: Color) -> Result<(), MoveError> {
        if !self.size.contains(p) {
            return Err(MoveError::OffBoard {
                x: p.x() as i64,
                y: p.y() as i64,
                size: self.size,
            });
        }
        if self.cells[p.index()] != EMPTY {
            return Err(MoveError::Occupied(p));
        }
        self.put_stone(p, color);
        self.history.push((p, color));
        self.side_to_move = color.opponent();
        Ok(())
    }

    /// Takes back the last move, returning it; its player is to move again.
    pub fn undo(&mut self) -> Option<(Point, Color)> {
        let (p, color) = self.history.pop()?;
        self.take_stone(p);
        self.side_to_move = color;
        Some((p, color))
    }

    /// Plays a move known to be on the board and empty (search hot path).
    #[inline]
    pub fn play_unchecked(&mut self, p: Point) {
        debug_assert!(self.is_empty(p));
        let color = self.side_to_move;
        self.put_stone(p, color);
        self.history.push((p, color));
        self.side_to_move = color.opponent();
    }

    // ---- pattern knowledge -------------------------------------------------

    /// The pattern `color` would make on empty cell `p` along `dir`.
    #[inline]
    pub fn line_pattern(&self, p: Point, dir: Direction, color: Color) -> LinePattern {
        let packed = self.patterns[p.index()][dir.index()];
        LinePattern::from_nibble(packed >> (4 * color.index()))
    }

    /// What `color` would make on `p` over all four lines (`None` on stones).
    #[inline]
    pub fn threat(&self, p: Point, color: Color) -> Threat {
        Threat::from_code(self.threats[p.index()][color.index()])
    }

    #[inline]
    pub(crate) fn flags(&self, p: Point, color: Color) -> u8 {
        (self.threats[p.index()][color.index()] >> 8) as u8
    }

    /// The empty cells of `kind` for `color` (see [`CellKind`]).
    #[inline]
    pub fn cells_of(&self, kind: CellKind, color: Color) -> &CellSet {
        &self.sets[color.index()][kind as usize]
    }

    /// The cells where `color` completes a winning line, exactly.
    pub fn winning_moves(&self, color: Color) -> impl Iterator<Item = Point> + '_ {
        self.cells_of(CellKind::Five, color).iter()
    }

    /// Whether placing `color` on empty cell `p` completes a winning line.
    /// Computed from the stones alone (not the pattern tables), so it also
    /// serves as the referee's check.
    pub fn is_winning_move(&self, p: Point, color: Color) -> bool {
        Direction::ALL
            .iter()
            .any(|&dir| self.run_wins(p, color, dir))
    }

    /// How the game stands: a win for the player whose last move completed a
    /// winning line, a draw on a full board, otherwise `None`.
    pub fn outcome(&self) -> Option<Outcome> {
        if let Some(&(p, color)) = self.history.last() {
            if self.is_winning_move(p, color) {
                return Some(Outcome::Win(color));
            }
        }
        self.is_full().then_some(Outcome::Draw)
    }

    /// A colour with a winning line anywhere on the board. [`Board::outcome`]
    /// looks only at the last stone, which is enough for a game played
    /// move by move; a position set up stone by stone (a file, a GUI's
    /// board) may hold a five made by an earlier stone.
    pub fn completed_five(&self) -> Option<Color> {
        self.history
            .iter()
            .find(|&&(p, color)| self.is_winning_move(p, color))
            .map(|&(_, color)| color)
    }

    /// The same stones, in the same order and with the same side to move,
    /// under `rule`. A stone the new rule would forbid is kept: it is on
    /// the board.
    pub fn under_rule(&self, rule: Rule) -> Board {
        let mut board = Board::new(self.size(), rule);
        for &(p, c) in self.history() {
            let _ = board.place(p, c);
        }
        board.set_side_to_move(self.side_to_move());
        board
    }

    /// Whether the game on this board has ended: a five anywhere, not only
    /// by the last stone ([`Board::completed_five`]), or a full board. For
    /// positions set up from outside; a game played move by move needs only
    /// [`Board::outcome`].
    pub fn is_over(&self) -> bool {
        self.outcome().is_some() || self.completed_five().is_some()
    }

    /// Whether some line of five cells on the board holds none of the
    /// other colour's stones: a five needs one under every rule, so when
    /// this is false `color` can never win from here.
    pub fn five_still_possible(&self, color: Color) -> bool {
        // One bit a cell: the low bit of each 2-bit code. Walls (3) and the
        // other colour's stones block a line of five; empty cells and
        // `color`'s own stones do not.
        const LOW_BITS: u128 = 0x5555_5555_5555_5555_5555_5555_5555_5555;
        let shift = match color {
            Color::Black => 1, // blocked by white (2) and walls (3)
            Color::White => 0, // blocked by black (1) and walls (3)
        };
        self.lines.iter().flatten().any(|&line| {
            let free = !(line >> shift) & LOW_BITS;
            free & free >> 2 & free >> 4 & free >> 6 & free >> 8 != 0
        })
    }

    /// Whether neither side can ever make five: the game can only end
    /// drawn, whatever is played (the referee still plays it out).
    pub fn is_dead_draw(&self) -> bool {
        !self.five_still_possible(Color::Black) && !self.five_still_possible(Color::White)
    }

    /// Whether the run of `color` through `p` along `dir` (with `p` counted
    /// as `color`) wins under the rule.
    fn run_wins(&self, p: Point, color: Color, dir: Direction) -> bool {
        let code = color.code();
        let mut run = 1;
        let mut ends = [None; 2];
        for (side, sign) in [(0, -1), (1, 1)] {
            let mut k = 1;
            loop {
                match self.size_point(p, dir, sign * k) {
                    Some(q) if self.cells[q.index()] == code => {
                        run += 1;
                        k += 1;
                    }
                    Some(q) => {
                        ends[side] = Some(self.cells[q.index()]);
                        break;
                    }
                    None => break,
                }
            }
        }
        if run < 5 {
            return false;
        }
        let opponent = Some(color.opponent().code());
        match self.rule {
            Rule::Freestyle => true,
            Rule::Standard => run == 5,
            Rule::Renju => run == 5 || color == Color::White,
            Rule::Caro => run >= 6 || !(ends[0] == opponent && ends[1] == opponent),
        }
    }

    #[inline]
    fn size_point(&self, p: Point, dir: Direction, steps: i32) -> Option<Point> {
        p.step(dir, steps).filter(|&q| self.size.contains(q))
    }

    // ---- incremental update ----------------------------------------------

    /// Puts a stone on an empty cell and updates every derived structure.
    pub(crate) fn put_stone(&mut self, p: Point, color: Color) {
        let i = p.index();
        self.cells[i] = color.code();
        self.stone_hash ^= zobrist::stone_key(color.index(), i);
        for c in 0..2 {
            let old = (self.threats[i][c] >> 8) as u8;
            self.toggle_sets(i, c, old);
            self.threats[i][c] = 0;
        }
        for dir in 0..4 {
            let (line, pos) = line_slot(p, dir);
            self.lines[dir][line] |= (color.code() as u128) << (2 * (pos + HALF_WINDOW));
            self.refresh_neighbours(p, dir);
        }
    }

    /// Removes the stone on `p` and updates every derived structure.
    pub(crate) fn take_stone(&mut self, p: Point) {
        let i = p.index();
        let color = if self.cells[i] == Color::Black.code() {
            0
        } else {
            1
        };
        self.cells[i] = EMPTY;
        self.stone_hash ^= zobrist::stone_key(color, i);
        for dir in 0..4 {
            let (line, pos) = line_slot(p, dir);
            self.lines[dir][line] &= !((WALL as u128) << (2 * (pos + HALF_WINDOW)));
            self.refresh_neighbours(p, dir);
        }
        self.refresh_cell(p);
    }

    /// Recomputes the patterns of the empty cells within `HALF_WINDOW` of `p`
    /// along `dir`: exactly the cells whose key along `dir` contains `p`.
    #[inline]
    fn refresh_neighbours(&mut self, p: Point, dir: usize) {
        let (line_index, pos) = line_slot(p, dir);
        let line = self.lines[dir][line_index];
        let (dx, dy) = Direction::ALL[dir].delta();
        let (x, y) = (p.x() as i32, p.y() as i32);
        let (w, h) = (self.size.width() as i32, self.size.height() as i32);
        for k in -(HALF_WINDOW as i32)..=HALF_WINDOW as i32 {
            let (qx, qy) = (x + k * dx, y + k * dy);
            if k == 0 || qx < 0 || qy < 0 || qx >= w || qy >= h {
                continue;
            }
            let q = (qy as usize) << 5 | qx as usize;
            if self.cells[q] != EMPTY {
                continue;
            }
            let packed = self.table.line(key_at(line, (pos as i32 + k) as usize));
            // Work on a copy and store it whole: re-reading the four bytes
            // right after a one-byte store stalls on store forwarding.
            let mut patterns = self.patterns[q];
            if packed != patterns[dir] {
                patterns[dir] = packed;
                self.patterns[q] = patterns;
                self.refresh_threat(q, patterns);
            }
        }
    }

    /// Recomputes all four line patterns and the threats of empty cell `p`.
    fn refresh_cell(&mut self, p: Point) {
        let i = p.index();
        let mut patterns = [0u8; 4];
        for (dir, packed) in patterns.iter_mut().enumerate() {
            let (line, pos) = line_slot(p, dir);
            *packed = self.table.line(key_at(self.lines[dir][line], pos));
        }
        self.patterns[i] = patterns;
        self.refresh_threat(i, patterns);
    }

    /// Recomputes the threats of empty cell `i` from its line `patterns`.
    #[inline]
    fn refresh_threat(&mut self, i: usize, patterns: [u8; 4]) {
        for color in Color::BOTH {
            let c = color.index();
            let new = self.table.combine(color, patterns);
            let old = self.threats[i][c];
            if new != old {
                self.toggle_sets(i, c, ((old ^ new) >> 8) as u8);
                self.threats[i][c] = new;
            }
        }
    }

    /// Flips cell `i` in the sets of colour `c` named by the low four flag bits.
    #[inline]
    fn toggle_sets(&mut self, i: usize, c: usize, flags: u8) {
        let mut bits = flags & 0xF;
        while bits != 0 {
            let kind = bits.trailing_zeros() as usize;
            self.sets[c][kind].toggle_index(i);
            bits &= bits - 1;
        }
    }

    /// [`Board::five_cells_after`] as it would be with one more stone of
    /// `other_color` on empty `other` (not `p`), without placing it: only
    /// the lines through `p` that hold `other` within the pattern window
    /// are looked up again. For the defence sets, which ask this of every
    /// threat cell for every candidate defence.
    pub fn five_cells_after_with(
        &self,
        p: Point,
        color: Color,
        other: Point,
        other_color: Color,
    ) -> u8 {
        let mut count = 0;
        for (dir, &d) in Direction::ALL.iter().enumerate() {
            let (line_p, pos_p) = line_slot(p, dir);
            let (line_o, pos_o) = line_slot(other, dir);
            let packed = if line_p == line_o && pos_p.abs_diff(pos_o) <= HALF_WINDOW {
                let line = self.lines[dir][line_p]
                    | (other_color.code() as u128) << (2 * (pos_o + HALF_WINDOW));
                self.table.line(key_at(line, pos_p))
            } else {
                self.patterns[p.index()][d.index()]
            };
            count += match LinePattern::from_nibble(packed >> (4 * color.index())) {
                LinePattern::OpenFour | LinePattern::DoubleFour => 2,
                LinePattern::Four => 1,
                _ => 0,
            };
        }
        count
    }

    /// Whether black's move on empty `p` would be forbidden by its lines
    /// alone (an overline or a double four, and no five) with one more
    /// stone of `other_color` on empty `other` (not `p`), without placing
    /// it: renju only. Such a verdict, unlike a double three's, no stone off
    /// the lines through `p` can change.
    pub fn forbidden_by_lines_with(&self, p: Point, other: Point, other_color: Color) -> bool {
        if !self.rule.has_forbidden_moves(Color::Black) || !self.is_empty(p) {
            return false;
        }
        let mut patterns = self.patterns[p.index()];
        for (dir, &d) in Direction::ALL.iter().enumerate() {
            let (line_p, pos_p) = line_slot(p, dir);
            let (line_o, pos_o) = line_slot(other, dir);
            if line_p == line_o && pos_p.abs_diff(pos_o) <= HALF_WINDOW {
                let line = self.lines[dir][line_p]
                    | (other_color.code() as u128) << (2 * (pos_o + HALF_WINDOW));
                patterns[d.index()] = self.table.line(key_at(line, pos_p));
            }
        }
        let flags = (self.table.combine(Color::Black, patterns) >> 8) as u8;
        flags & flag::FORBIDDEN != 0 && flags & flag::FIVE == 0
    }

    /// How many cells would complete a five for `color` after it plays on
    /// empty `p`. Fours on different lines never share their five cell (two
    /// lines cross only at `p`), so the count is the sum over the lines.
    pub fn five_cells_after(&self, p: Point, color: Color) -> u8 {
        Direction::ALL
            .iter()
            .map(|&d| self.line_pattern(p, d, color))
            .map(|l| match l {
                LinePattern::OpenFour | LinePattern::DoubleFour => 2,
                LinePattern::Four => 1,
                _ => 0,
            })
            .sum()
    }
}

impl fmt::Display for Board {
    /// The board as text: `X` black, `O` white, `.` empty, top row first.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for y in 0..self.size.height() {
            for x in 0..self.size.width() {
                let p = Point::new(x, y).ok_or(fmt::Error)?;
                let ch = match self.stone(p) {
                    Some(Color::Black) => 'X',
                    Some(Color::White) => 'O',
                    None => '.',
                };
                write!(f, "{ch}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

impl fmt::Debug for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Board({}, {}, {} to move)\n{self}",
            self.size, self.rule, self.side_to_move
        )
    }
}
