//! The evaluation openings of each league (`openings/*-eval.txt`, compiled
//! in): every strength figure is played from them, and a network learns
//! the openings it was trained from, so self-play refuses them and the
//! training data leaves out every game that passes through one, in any
//! place on the board and under any symmetry.

use std::collections::BTreeSet;

use wuzi_formats::opening::{canonical_shape, parse_file, OpeningFormat, OpeningShape};
use wuzi_game::game::{BoardSize, Point, Rule};

const EVALUATION_SETS: [(Rule, u32, &str, &str); 4] = [
    (
        Rule::Freestyle,
        15,
        "openings/freestyle15-eval.txt",
        include_str!("../../../openings/freestyle15-eval.txt"),
    ),
    (
        Rule::Freestyle,
        20,
        "openings/freestyle20-eval.txt",
        include_str!("../../../openings/freestyle20-eval.txt"),
    ),
    (
        Rule::Standard,
        15,
        "openings/standard15-eval.txt",
        include_str!("../../../openings/standard15-eval.txt"),
    ),
    (
        Rule::Renju,
        15,
        "openings/renju15-eval.txt",
        include_str!("../../../openings/renju15-eval.txt"),
    ),
];

/// The evaluation openings of one rule and board, by shape.
#[derive(Clone, Debug, Default)]
pub struct EvaluationOpenings {
    file: &'static str,
    shapes: OpeningShapes,
}

impl EvaluationOpenings {
    /// Those of `rule` on `size` (none for a league without a set).
    pub fn of(rule: Rule, size: BoardSize) -> EvaluationOpenings {
        let set = EVALUATION_SETS
            .iter()
            .find(|(r, side, _, _)| *r == rule && BoardSize::square(*side).ok() == Some(size));
        let Some(&(_, _, file, text)) = set else {
            return EvaluationOpenings::default();
        };
        // The files are the repository's own, checked by its tests.
        let list = parse_file(text, OpeningFormat::Auto, size)
            .map(|(list, _)| list)
            .unwrap_or_default();
        let openings: Vec<Vec<(i64, i64)>> = list.into_iter().map(|raw| raw.moves).collect();
        EvaluationOpenings::named(file, &openings, size)
    }

    /// `openings` (cells in playing order) as the set `file`.
    pub fn named(file: &'static str, openings: &[Vec<(i64, i64)>], size: BoardSize) -> Self {
        EvaluationOpenings {
            file,
            shapes: OpeningShapes::new(openings, size),
        }
    }

    /// The file the openings come from.
    pub fn file(&self) -> &'static str {
        self.file
    }

    /// Stones of the longest opening.
    pub fn most_stones(&self) -> usize {
        self.shapes.most_stones()
    }

    /// The evaluation file that holds `moves`' shape, if one does.
    pub fn holds(&self, moves: &[(i64, i64)], size: BoardSize) -> Option<&'static str> {
        self.shapes.contains(moves, size).then_some(self.file)
    }

    /// The evaluation file one of whose openings `moves` passes through
    /// (a first part of `moves` in playing order has its shape), if one
    /// does: every position after it is one the evaluation games reach.
    pub fn passed_through(&self, moves: &[(i64, i64)], size: BoardSize) -> Option<&'static str> {
        self.shapes.shortest_opening(moves, size).map(|_| self.file)
    }
}

/// Something computed once per board size, as the sizes are met (a
/// loader's files hold one or two sizes: a list is enough).
#[derive(Clone, Debug)]
pub(crate) struct PerBoardSize<T> {
    computed: Vec<(BoardSize, T)>,
}

impl<T> Default for PerBoardSize<T> {
    fn default() -> Self {
        PerBoardSize {
            computed: Vec::new(),
        }
    }
}

impl<T> PerBoardSize<T> {
    /// The value for `size`, made by `make` the first time.
    pub(crate) fn get_or_make(&mut self, size: BoardSize, make: impl FnOnce() -> T) -> &T {
        let index = match self.computed.iter().position(|(s, _)| *s == size) {
            Some(i) => i,
            None => {
                self.computed.push((size, make()));
                self.computed.len() - 1
            }
        };
        &self.computed[index].1
    }
}

/// A set of openings by their shape on one board (the board's symmetries
/// and shifts taken out: `wuzi_formats::opening::canonical_shape`).
#[derive(Clone, Debug, Default)]
pub struct OpeningShapes {
    shapes: BTreeSet<OpeningShape>,
    /// The openings' numbers of stones, longest first.
    lengths: Vec<usize>,
}

impl OpeningShapes {
    /// `openings` (cells in playing order) on a board of `size`, wherever
    /// they are placed. One wider or taller than the board is left out: cut
    /// to the board, it would be the shape of its first stones.
    pub fn new(openings: &[Vec<(i64, i64)>], size: BoardSize) -> OpeningShapes {
        let (width, height) = (i64::from(size.width()), i64::from(size.height()));
        let mut shapes = BTreeSet::new();
        let mut lengths = BTreeSet::new();
        for cells in openings {
            let (Some(min_x), Some(min_y)) = (
                cells.iter().map(|c| c.0).min(),
                cells.iter().map(|c| c.1).min(),
            ) else {
                continue;
            };
            let placed: Vec<(i64, i64)> = (cells.iter())
                .map(|&(x, y)| (x.saturating_sub(min_x), y.saturating_sub(min_y)))
                .collect();
            if placed.iter().all(|&(x, y)| x < width && y < height) {
                shapes.insert(canonical_shape(&placed, size));
                lengths.insert(placed.len());
            }
        }
        OpeningShapes {
            shapes,
            lengths: lengths.into_iter().rev().collect(),
        }
    }

    /// Stones of the longest opening.
    pub fn most_stones(&self) -> usize {
        self.lengths.first().copied().unwrap_or(0)
    }

    /// Whether `moves`, as a whole, have the shape of one of the openings.
    pub fn contains(&self, moves: &[(i64, i64)], size: BoardSize) -> bool {
        self.shapes.contains(&canonical_shape(moves, size))
    }

    /// The length of the shortest first part of `moves` that is one of the
    /// openings, if one is.
    pub fn shortest_opening(&self, moves: &[(i64, i64)], size: BoardSize) -> Option<usize> {
        (self.lengths.iter().rev())
            .copied()
            .find(|&n| n <= moves.len() && self.contains(&moves[..n], size))
    }

    /// The length of the longest first part of `moves` that is one of the
    /// openings, if one is.
    pub fn longest_opening(&self, moves: &[(i64, i64)], size: BoardSize) -> Option<usize> {
        (self.lengths.iter())
            .copied()
            .find(|&n| n <= moves.len() && self.contains(&moves[..n], size))
    }
}

/// Points as the opening files number their cells, for [`EvaluationOpenings`].
pub fn cells(points: &[Point]) -> Vec<(i64, i64)> {
    points
        .iter()
        .map(|p| (i64::from(p.x()), i64::from(p.y())))
        .collect()
}
