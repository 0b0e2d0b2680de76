//! Board coordinates, board sizes and line directions.

use std::fmt;

/// Largest board side the engine supports (the Gomocup protocol allows 5..=32).
pub const MAX_SIDE: u8 = 32;
/// Smallest board side the engine supports.
pub const MIN_SIDE: u8 = 5;
/// Number of cell slots in per-cell arrays: cells are indexed `y * 32 + x`
/// whatever the board size, so one index works for every size.
pub const CELL_SLOTS: usize = MAX_SIDE as usize * MAX_SIDE as usize;

/// A cell of the board: `x` is the column (0 = left), `y` the row (0 = top),
/// both 0-based as in the Gomocup protocol. A `Point` says nothing about a
/// particular board; [`BoardSize::contains`] tells whether it lies on one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Point {
    x: u8,
    y: u8,
}

impl Point {
    /// A point with both coordinates below [`MAX_SIDE`], or `None`.
    #[inline]
    pub const fn new(x: u8, y: u8) -> Option<Point> {
        if x < MAX_SIDE && y < MAX_SIDE {
            Some(Point { x, y })
        } else {
            None
        }
    }

    /// From signed coordinates, `None` when outside `0..MAX_SIDE`.
    #[inline]
    pub fn from_signed(x: i32, y: i32) -> Option<Point> {
        if (0..MAX_SIDE as i32).contains(&x) && (0..MAX_SIDE as i32).contains(&y) {
            Some(Point {
                x: x as u8,
                y: y as u8,
            })
        } else {
            None
        }
    }

    #[inline]
    pub const fn x(self) -> u8 {
        self.x
    }

    #[inline]
    pub const fn y(self) -> u8 {
        self.y
    }

    /// Index into per-cell arrays of [`CELL_SLOTS`] entries.
    #[inline]
    pub const fn index(self) -> usize {
        (self.y as usize) << 5 | self.x as usize
    }

    /// Inverse of [`Point::index`].
    #[inline]
    pub const fn from_index(index: usize) -> Point {
        Point {
            x: (index & 31) as u8,
            y: ((index >> 5) & 31) as u8,
        }
    }

    /// The point `steps` cells away in `dir` (negative steps go backwards),
    /// `None` when that leaves `0..MAX_SIDE`.
    #[inline]
    pub fn step(self, dir: Direction, steps: i32) -> Option<Point> {
        let (dx, dy) = dir.delta();
        Point::from_signed(self.x as i32 + dx * steps, self.y as i32 + dy * steps)
    }

    /// Chebyshev distance (king moves) between two points.
    pub fn distance(self, other: Point) -> u8 {
        self.x.abs_diff(other.x).max(self.y.abs_diff(other.y))
    }
}

impl fmt::Display for Point {
    /// Gomocup notation: `x,y`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{}", self.x, self.y)
    }
}

/// The four line directions. Every line of the board runs along one of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Along a row: (+1, 0).
    Horizontal,
    /// Along a column: (0, +1).
    Vertical,
    /// Down-right: (+1, +1).
    Diagonal,
    /// Up-right: (+1, -1).
    AntiDiagonal,
}

impl Direction {
    pub const ALL: [Direction; 4] = [
        Direction::Horizontal,
        Direction::Vertical,
        Direction::Diagonal,
        Direction::AntiDiagonal,
    ];

    #[inline]
    pub const fn delta(self) -> (i32, i32) {
        match self {
            Direction::Horizontal => (1, 0),
            Direction::Vertical => (0, 1),
            Direction::Diagonal => (1, 1),
            Direction::AntiDiagonal => (1, -1),
        }
    }

    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// A board's dimensions, each within `MIN_SIDE..=MAX_SIDE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BoardSize {
    width: u8,
    height: u8,
}

/// Why a board size was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unsupported board size {width}x{height}: each side must be {MIN_SIDE}..={MAX_SIDE}")]
pub struct BoardSizeError {
    pub width: u32,
    pub height: u32,
}

impl BoardSize {
    /// 15x15, the size of standard and renju play.
    pub const FIFTEEN: BoardSize = BoardSize {
        width: 15,
        height: 15,
    };

    pub fn new(width: u32, height: u32) -> Result<BoardSize, BoardSizeError> {
        let ok = |side: u32| (MIN_SIDE as u32..=MAX_SIDE as u32).contains(&side);
        if ok(width) && ok(height) {
            Ok(BoardSize {
                width: width as u8,
                height: height as u8,
            })
        } else {
            Err(BoardSizeError { width, height })
        }
    }

    pub fn square(side: u32) -> Result<BoardSize, BoardSizeError> {
        BoardSize::new(side, side)
    }

    #[inline]
    pub const fn width(self) -> u8 {
        self.width
    }

    #[inline]
    pub const fn height(self) -> u8 {
        self.height
    }

    #[inline]
    pub const fn cell_count(self) -> usize {
        self.width as usize * self.height as usize
    }

    #[inline]
    pub const fn contains(self, p: Point) -> bool {
        p.x < self.width && p.y < self.height
    }

    /// `Some(point)` when (x, y) lies on this board.
    #[inline]
    pub fn point(self, x: i32, y: i32) -> Option<Point> {
        Point::from_signed(x, y).filter(|&p| self.contains(p))
    }

    /// [`BoardSize::point`] for the wide coordinates that record parsers
    /// read (a file can say anything).
    pub fn point_from_i64(self, x: i64, y: i64) -> Option<Point> {
        self.point(i32::try_from(x).ok()?, i32::try_from(y).ok()?)
    }

    /// All points of the board, row by row.
    pub fn points(self) -> impl Iterator<Item = Point> {
        let (w, h) = (self.width, self.height);
        (0..h).flat_map(move |y| (0..w).map(move |x| Point { x, y }))
    }

    /// The centre cell (rounded towards the top left on even sides).
    pub fn center(self) -> Point {
        Point {
            x: (self.width - 1) / 2,
            y: (self.height - 1) / 2,
        }
    }
}

impl fmt::Display for BoardSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.width, self.height)
    }
}
