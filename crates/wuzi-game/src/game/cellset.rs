//! A set of board cells as a 1024-bit mask (cells indexed `y * 32 + x`).

use crate::game::point::{Point, CELL_SLOTS};

const WORDS: usize = CELL_SLOTS / 64;

#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CellSet {
    words: [u64; WORDS],
}

impl CellSet {
    pub const fn new() -> CellSet {
        CellSet { words: [0; WORDS] }
    }

    #[inline]
    pub fn insert(&mut self, p: Point) {
        let i = p.index();
        self.words[i >> 6] |= 1 << (i & 63);
    }

    #[inline]
    pub fn remove(&mut self, p: Point) {
        let i = p.index();
        self.words[i >> 6] &= !(1 << (i & 63));
    }

    #[inline]
    pub(crate) fn toggle_index(&mut self, i: usize) {
        self.words[i >> 6] ^= 1 << (i & 63);
    }

    #[inline]
    pub fn contains(&self, p: Point) -> bool {
        let i = p.index();
        self.words[i >> 6] >> (i & 63) & 1 != 0
    }

    /// The cells in both sets.
    pub fn intersection(&self, other: &CellSet) -> CellSet {
        let mut both = *self;
        for (w, o) in both.words.iter_mut().zip(other.words) {
            *w &= o;
        }
        both
    }

    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The first cell in index order (row by row).
    pub fn first(&self) -> Option<Point> {
        self.iter().next()
    }

    /// Cells in index order (row by row), so iteration is deterministic.
    pub fn iter(&self) -> impl Iterator<Item = Point> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(Point::from_index(w * 64 + b))
            })
        })
    }
}

impl std::fmt::Debug for CellSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set()
            .entries(self.iter().map(|p| (p.x(), p.y())))
            .finish()
    }
}

impl FromIterator<Point> for CellSet {
    fn from_iter<I: IntoIterator<Item = Point>>(iter: I) -> CellSet {
        let mut set = CellSet::new();
        for p in iter {
            set.insert(p);
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intersection_keeps_the_common_cells() {
        let p = |x, y| Point::new(x, y).expect("on the board");
        let a: CellSet = [p(0, 0), p(5, 7), p(31, 31), p(3, 2)].into_iter().collect();
        let b: CellSet = [p(5, 7), p(31, 31), p(4, 2)].into_iter().collect();
        let both = a.intersection(&b);
        assert_eq!(both.iter().collect::<Vec<_>>(), vec![p(5, 7), p(31, 31)]);
        assert!(a.intersection(&CellSet::new()).is_empty());
    }
}
