//! Network input: planes encoded from a board, from the side to move's view.
//!
//! The rule is not an input plane: each rule has its own network (the rules
//! differ in strategy as much as in tactics, and small per-rule networks
//! train faster than one that must cover all four), and the pattern planes
//! are computed under the rule, so they already carry what it changes.
//!
//! Planes, each `height x width` (the board at the top left, zero padding
//! beyond it when the tensor is larger than the board):
//!
//! | plane | meaning |
//! |---|---|
//! | 0 | stones of the side to move |
//! | 1 | stones of the opponent |
//! | 2 | ones if black is to move |
//! | 3 | legal moves of the side to move (renju forbidden points excluded) |
//! | 4 | renju points forbidden to black (zero under other rules) |
//! | 5 | ones on the board (its real extent) |
//! | 6.. | per side (to move, then opponent), per direction (horizontal, vertical, diagonal, anti-diagonal): five, any four, unstoppable four (open or double), open three |

use crate::game::{Board, Color, Direction, LinePattern};

/// Planes before the pattern planes.
pub const PATTERN_BASE: usize = 6;
/// Pattern planes per side and direction.
pub const PATTERN_KINDS: usize = 4;
/// Number of input planes.
pub const INPUT_PLANES: usize = PATTERN_BASE + 2 * 4 * PATTERN_KINDS;

/// Writes the planes of `board` into `out` (`INPUT_PLANES * height * width`
/// floats, overwritten entirely). `height` and `width` must be at least the
/// board's.
pub fn encode(board: &mut Board, out: &mut [f32], height: usize, width: usize) {
    let size = board.size();
    debug_assert!(height >= size.height() as usize && width >= size.width() as usize);
    let area = height * width;
    debug_assert_eq!(out.len(), INPUT_PLANES * area);
    out.fill(0.0);
    let me = board.side_to_move();
    let black_to_move = me == Color::Black;
    let forbidden = board.forbidden_points();
    for p in size.points() {
        let cell = p.y() as usize * width + p.x() as usize;
        let plane = |k: usize| k * area + cell;
        out[plane(5)] = 1.0;
        if black_to_move {
            out[plane(2)] = 1.0;
        }
        match board.stone(p) {
            Some(c) if c == me => out[plane(0)] = 1.0,
            Some(_) => out[plane(1)] = 1.0,
            None => {
                for (side, color) in [me, me.opponent()].into_iter().enumerate() {
                    for dir in Direction::ALL {
                        let base = PATTERN_BASE + (side * 4 + dir.index()) * PATTERN_KINDS;
                        let pattern = board.line_pattern(p, dir, color);
                        let bits = [
                            pattern == LinePattern::Five,
                            pattern.four_count() > 0,
                            matches!(pattern, LinePattern::OpenFour | LinePattern::DoubleFour),
                            pattern == LinePattern::OpenThree,
                        ];
                        for (k, on) in bits.into_iter().enumerate() {
                            if on {
                                out[plane(base + k)] = 1.0;
                            }
                        }
                    }
                }
            }
        }
    }
    for &p in &forbidden {
        out[4 * area + p.y() as usize * width + p.x() as usize] = 1.0;
    }
    for p in size.points() {
        let cell = p.y() as usize * width + p.x() as usize;
        let legal = board.stone(p).is_none() && !(black_to_move && forbidden.contains(&p));
        if legal {
            out[3 * area + cell] = 1.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{BoardSize, Point, Rule};

    fn at(out: &[f32], plane: usize, width: usize, area: usize, x: usize, y: usize) -> f32 {
        out[plane * area + y * width + x]
    }

    #[test]
    fn planes_follow_the_side_to_move() {
        let size = BoardSize::new(15, 10).unwrap();
        let p = |x, y| Point::new(x, y).unwrap();
        let mut board =
            Board::from_moves(size, Rule::Freestyle, &[p(7, 5), p(0, 0), p(8, 5), p(0, 1)])
                .unwrap();
        let (h, w) = (12, 16);
        let mut out = vec![9.0; INPUT_PLANES * h * w];
        encode(&mut board, &mut out, h, w);
        let area = h * w;
        // Black to move: black stones are "own".
        assert_eq!(at(&out, 0, w, area, 7, 5), 1.0);
        assert_eq!(at(&out, 1, w, area, 0, 0), 1.0);
        assert_eq!(at(&out, 2, w, area, 3, 3), 1.0);
        assert_eq!(at(&out, 3, w, area, 7, 5), 0.0);
        assert_eq!(at(&out, 3, w, area, 3, 3), 1.0);
        // Padding is zero in every plane, the board extent is one.
        assert_eq!(at(&out, 5, w, area, 14, 9), 1.0);
        for k in 0..INPUT_PLANES {
            assert_eq!(at(&out, k, w, area, 15, 0), 0.0);
            assert_eq!(at(&out, k, w, area, 0, 10), 0.0);
        }
        // (9,5) makes an open three for black along the row (plane: side 0, horizontal, open three).
        assert_eq!(at(&out, PATTERN_BASE + 3, w, area, 9, 5), 1.0);
        board.play(p(3, 3)).unwrap();
        encode(&mut board, &mut out, h, w);
        assert_eq!(
            at(&out, 0, w, area, 0, 0),
            1.0,
            "white to move: white stones are own"
        );
        assert_eq!(at(&out, 2, w, area, 5, 5), 0.0);
        // The opponent's (black's) open three, side 1.
        assert_eq!(at(&out, PATTERN_BASE + 16 + 3, w, area, 9, 5), 1.0);
    }

    #[test]
    fn renju_forbidden_points_are_marked_and_not_legal() {
        let p = |x, y| Point::new(x, y).unwrap();
        let size = BoardSize::square(15).unwrap();
        let mut board = Board::new(size, Rule::Renju);
        for (x, y, c) in [
            (1, 7, Color::Black),
            (2, 7, Color::Black),
            (3, 7, Color::Black),
            (5, 7, Color::Black),
            (6, 7, Color::Black),
        ] {
            board.place(p(x, y), c).unwrap();
        }
        for q in [p(0, 0), p(14, 0), p(0, 14), p(14, 14), p(10, 10)] {
            board.place(q, Color::White).unwrap();
        }
        board.set_side_to_move(Color::Black);
        let mut out = vec![0.0; INPUT_PLANES * 225];
        encode(&mut board, &mut out, 15, 15);
        assert_eq!(at(&out, 4, 15, 225, 4, 7), 1.0, "overline point");
        assert_eq!(at(&out, 3, 15, 225, 4, 7), 0.0);
        board.set_side_to_move(Color::White);
        encode(&mut board, &mut out, 15, 15);
        assert_eq!(at(&out, 4, 15, 225, 4, 7), 1.0);
        assert_eq!(at(&out, 3, 15, 225, 4, 7), 1.0, "white may play there");
    }
}
