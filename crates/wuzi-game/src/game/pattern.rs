//! Line patterns and their tables.
//!
//! What a stone placed on an empty cell makes along one line depends only on
//! the five cells on each side of it in that line. Those ten cells, two bits
//! each, form a 20-bit *line key*; a table built once per rule maps every key
//! to the [`LinePattern`] that black and white would make there. The board
//! keeps each line as a bit string, so a cell's key is a shift and a mask,
//! and a move changes the keys (and patterns) of at most 40 cells.
//!
//! The four line patterns of a cell combine into a [`Threat`] per colour
//! through a second, 64K-entry table.
//!
//! Definitions (for the colour `c` placing at the centre; a "five" always
//! contains the centre stone):
//! * `Five`: the stone completes a winning line under the rule;
//! * `Overline`: it makes six or more that do not win (standard; renju black);
//! * `OpenFour`: two empty cells each complete a five, and they close a
//!   straight four `.XXXX.`;
//! * `DoubleFour`: two or more such cells that are not a straight four, i.e.
//!   two fours on one line such as `X.XXX.X`;
//! * `Four`: exactly one such cell;
//! * `OpenThree`: one more stone can make an `OpenFour` (or, where a double
//!   four is legal, a `DoubleFour`);
//! * `ClosedThree`: one more stone can make a `Four`;
//! * `OpenTwo`/`ClosedTwo`: one more stone can make an open/closed three.
//!
//! Renju's recursive double-three rule needs the whole board and lives in
//! `forbidden.rs`; here a black open three is one by the line alone.

use std::sync::OnceLock;

use crate::game::{Color, Rule};

/// Cells on each side of the centre that a line key covers.
pub const HALF_WINDOW: usize = 5;
/// Bits in a line key (10 cells x 2 bits).
pub const KEY_BITS: u32 = 20;
const KEY_COUNT: usize = 1 << KEY_BITS;

/// 2-bit cell codes inside line keys and line bit strings.
pub(crate) const EMPTY: u8 = 0;
pub(crate) const WALL: u8 = 3;

/// What placing a stone makes along one line. Ordered by strength, except
/// that `Overline` (a non-winning six) is ranked apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum LinePattern {
    None = 0,
    ClosedTwo = 1,
    OpenTwo = 2,
    ClosedThree = 3,
    OpenThree = 4,
    Four = 5,
    OpenFour = 6,
    DoubleFour = 7,
    Five = 8,
    Overline = 9,
}

impl LinePattern {
    const ALL: [LinePattern; 10] = [
        LinePattern::None,
        LinePattern::ClosedTwo,
        LinePattern::OpenTwo,
        LinePattern::ClosedThree,
        LinePattern::OpenThree,
        LinePattern::Four,
        LinePattern::OpenFour,
        LinePattern::DoubleFour,
        LinePattern::Five,
        LinePattern::Overline,
    ];

    #[inline]
    pub(crate) fn from_nibble(n: u8) -> LinePattern {
        Self::ALL[(n & 15) as usize % Self::ALL.len()]
    }

    /// How many fours this pattern makes (a one-line double four counts two).
    #[inline]
    pub const fn four_count(self) -> u8 {
        match self {
            LinePattern::Four | LinePattern::OpenFour => 1,
            LinePattern::DoubleFour => 2,
            _ => 0,
        }
    }
}

/// What placing a stone on a cell makes over all four lines, for one colour.
/// Ordered by strength for move ordering; `Forbidden` ranks just above `None`.
///
/// For renju black, `ThreeThree` means "two line open threes": the move is
/// forbidden only if at least two of them are real (see `Board::is_forbidden`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Threat {
    None = 0,
    Forbidden = 1,
    Two = 2,
    TwoTwo = 3,
    ClosedThree = 4,
    OpenThree = 5,
    Four = 6,
    ThreeThree = 7,
    FourThree = 8,
    FourFour = 9,
    OpenFour = 10,
    Five = 11,
}

impl Threat {
    const ALL: [Threat; 12] = [
        Threat::None,
        Threat::Forbidden,
        Threat::Two,
        Threat::TwoTwo,
        Threat::ClosedThree,
        Threat::OpenThree,
        Threat::Four,
        Threat::ThreeThree,
        Threat::FourThree,
        Threat::FourFour,
        Threat::OpenFour,
        Threat::Five,
    ];

    #[inline]
    pub(crate) fn from_code(code: u16) -> Threat {
        Self::ALL[(code & 0xF) as usize % Self::ALL.len()]
    }
}

/// Flags kept beside each cell's [`Threat`]; the first four are also kept as
/// per-colour cell sets on the board (see [`CellKind`]).
pub(crate) mod flag {
    /// The move completes a winning line.
    pub const FIVE: u8 = 1;
    /// The move makes at least one four (of any kind).
    pub const FOUR: u8 = 2;
    /// The move makes at least one open three.
    pub const THREE: u8 = 4;
    /// Renju black: the move may be forbidden (definitely, or if its threes are real).
    pub const FORBID_CANDIDATE: u8 = 8;
    /// Renju black: the move is forbidden whatever else holds (overline or double four, no five).
    pub const FORBIDDEN: u8 = 16;
}

/// The kinds of cell the board keeps a set of, per colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CellKind {
    /// Completes a winning line (under caro, see `Board::winning_moves` for
    /// the exact list).
    Five = 0,
    /// Makes at least one four.
    Four = 1,
    /// Makes at least one open three.
    Three = 2,
    /// Renju black: possibly forbidden (check with `Board::is_forbidden`).
    ForbidCandidate = 3,
}

impl CellKind {
    pub const ALL: [CellKind; 4] = [
        CellKind::Five,
        CellKind::Four,
        CellKind::Three,
        CellKind::ForbidCandidate,
    ];
}

/// The line and combination tables of one rule.
pub struct PatternTable {
    /// Per line key: black's pattern in the low nibble, white's in the high.
    line: Box<[u8]>,
    /// Per colour, indexed by the four line patterns (a nibble each):
    /// the threat in the low byte, flags in the high byte.
    combo: [Box<[u16]>; 2],
}

impl PatternTable {
    /// The tables of `rule`, built on first use (about 0.1 s) and shared.
    pub fn get(rule: Rule) -> &'static PatternTable {
        static TABLES: [OnceLock<PatternTable>; 4] = [
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
        ];
        TABLES[rule.index()].get_or_init(|| PatternTable::build(rule))
    }

    fn build(rule: Rule) -> PatternTable {
        let black = LineClassifier::new(rule, Color::Black).classify_all();
        let white = LineClassifier::new(rule, Color::White).classify_all();
        let line = black
            .iter()
            .zip(white.iter())
            .map(|(&b, &w)| b | w << 4)
            .collect();
        let combo = [
            combo_table(rule, Color::Black),
            combo_table(rule, Color::White),
        ];
        PatternTable { line, combo }
    }

    /// Both colours' patterns for a line key (black low nibble, white high).
    #[inline]
    pub(crate) fn line(&self, key: u32) -> u8 {
        self.line[key as usize & (KEY_COUNT - 1)]
    }

    /// The combined threat code for `color` given four packed line-pattern bytes.
    #[inline]
    pub(crate) fn combine(&self, color: Color, packed: [u8; 4]) -> u16 {
        let shift = 4 * color.index() as u32;
        let nib = |b: u8| ((b >> shift) & 15) as usize;
        let index =
            nib(packed[0]) | nib(packed[1]) << 4 | nib(packed[2]) << 8 | nib(packed[3]) << 12;
        self.combo[color.index()][index]
    }

    /// The pattern `color` makes at the centre of a line described cell by
    /// cell (`window[5]` is the centre and must be empty). For tests and tools.
    pub fn pattern_of_window(&self, color: Color, window: &[u8; 11]) -> LinePattern {
        let packed = self.line(key_of_window(window));
        LinePattern::from_nibble(packed >> (4 * color.index()))
    }
}

/// The key of an 11-cell window (centre excluded).
pub(crate) fn key_of_window(window: &[u8; 11]) -> u32 {
    let mut key = 0u32;
    let mut shift = 0;
    for (i, &cell) in window.iter().enumerate() {
        if i != HALF_WINDOW {
            key |= ((cell & 3) as u32) << shift;
            shift += 2;
        }
    }
    key
}

/// Computes the line pattern of every key for one colour, by dynamic
/// programming over keys: the pattern of a line depends on the patterns of
/// the lines with one more stone of the same colour.
struct LineClassifier {
    rule: Rule,
    color: Color,
    me: u8,
    opponent: u8,
    /// Whether a one-line double four is a usable threat (not for renju black).
    double_four_allowed: bool,
    memo: Vec<u8>,
    window: [u8; 11],
}

const UNKNOWN: u8 = 0xFF;

impl LineClassifier {
    fn new(rule: Rule, color: Color) -> LineClassifier {
        LineClassifier {
            rule,
            color,
            me: color.code(),
            opponent: color.opponent().code(),
            double_four_allowed: !rule.has_forbidden_moves(color),
            memo: vec![UNKNOWN; KEY_COUNT],
            window: [EMPTY; 11],
        }
    }

    fn classify_all(mut self) -> Vec<u8> {
        for key in 0..KEY_COUNT as u32 {
            let mut shift = 0;
            for i in 0..11 {
                if i == HALF_WINDOW {
                    self.window[i] = self.me;
                } else {
                    self.window[i] = ((key >> shift) & 3) as u8;
                    shift += 2;
                }
            }
            self.classify();
        }
        self.memo
    }

    /// The pattern of the current window (centre = own stone), memoised.
    fn classify(&mut self) -> LinePattern {
        let key = key_of_window(&self.window) as usize;
        if self.memo[key] == UNKNOWN {
            let pattern = self.compute();
            self.memo[key] = pattern as u8;
        }
        LinePattern::from_nibble(self.memo[key])
    }

    fn compute(&mut self) -> LinePattern {
        let w = &self.window;
        let (me, c) = (self.me, HALF_WINDOW);
        let mut left = c;
        while left > 0 && w[left - 1] == me {
            left -= 1;
        }
        let mut right = c;
        while right < 10 && w[right + 1] == me {
            right += 1;
        }
        let run = right - left + 1;
        if run >= 5 {
            // A run of exactly five never touches the window's edge, so both
            // of its end cells are visible here.
            let closed_both = left > 0
                && right < 10
                && w[left - 1] == self.opponent
                && w[right + 1] == self.opponent;
            let wins = match self.rule {
                Rule::Freestyle => true,
                Rule::Standard => run == 5,
                Rule::Renju => run == 5 || self.color == Color::White,
                Rule::Caro => run >= 6 || !closed_both,
            };
            if wins {
                return LinePattern::Five;
            }
            if run >= 6 {
                return LinePattern::Overline;
            }
            // Caro's closed five: no stone can make it win; fall through.
        }

        // Try every empty cell that could share a five with the centre.
        let mut five_cells = [0usize; 8];
        let mut fives = 0;
        let (mut open_four, mut four, mut double_four) = (false, false, false);
        let (mut open_three, mut closed_three) = (false, false);
        for e in 1..10 {
            if e == c || self.window[e] != EMPTY {
                continue;
            }
            self.window[e] = me;
            let child = self.classify();
            self.window[e] = EMPTY;
            match child {
                LinePattern::Five => {
                    five_cells[fives] = e;
                    fives += 1;
                }
                LinePattern::OpenFour => open_four = true,
                LinePattern::DoubleFour => double_four = true,
                LinePattern::Four => four = true,
                LinePattern::OpenThree => open_three = true,
                LinePattern::ClosedThree => closed_three = true,
                _ => {}
            }
        }
        if fives >= 2 {
            let w = &self.window;
            let straight = five_cells[..fives].iter().any(|&a| {
                five_cells[..fives]
                    .iter()
                    .any(|&b| b == a + 5 && (a + 1..b).all(|i| w[i] == me))
            });
            return if straight {
                LinePattern::OpenFour
            } else {
                LinePattern::DoubleFour
            };
        }
        if fives == 1 {
            return LinePattern::Four;
        }
        let double_four_usable = double_four && self.double_four_allowed;
        if open_four || double_four_usable {
            LinePattern::OpenThree
        } else if four {
            LinePattern::ClosedThree
        } else if open_three {
            LinePattern::OpenTwo
        } else if closed_three {
            LinePattern::ClosedTwo
        } else {
            LinePattern::None
        }
    }
}

/// The threat code (threat | flags << 8) of four line patterns for `color`.
pub(crate) fn combine_patterns(rule: Rule, color: Color, lines: [LinePattern; 4]) -> u16 {
    let count = |p: LinePattern| lines.iter().filter(|&&l| l == p).count();
    let fives = count(LinePattern::Five);
    let overlines = count(LinePattern::Overline);
    let fours: u32 = lines.iter().map(|l| l.four_count() as u32).sum();
    let open_fours = count(LinePattern::OpenFour);
    let threes = count(LinePattern::OpenThree);
    let closed_threes = count(LinePattern::ClosedThree);
    let open_twos = count(LinePattern::OpenTwo);
    let twos = open_twos + count(LinePattern::ClosedTwo);
    let renju_black = rule.has_forbidden_moves(color);

    let mut flags = 0u8;
    if fives > 0 {
        flags |= flag::FIVE;
    }
    if fours > 0 {
        flags |= flag::FOUR;
    }
    if threes > 0 {
        flags |= flag::THREE;
    }
    let threat = if fives > 0 {
        Threat::Five
    } else if renju_black && (overlines > 0 || fours >= 2) {
        flags |= flag::FORBIDDEN | flag::FORBID_CANDIDATE;
        Threat::Forbidden
    } else if renju_black && threes >= 2 {
        flags |= flag::FORBID_CANDIDATE;
        Threat::ThreeThree
    } else if open_fours > 0 {
        Threat::OpenFour
    } else if fours >= 2 {
        Threat::FourFour
    } else if fours == 1 && threes > 0 {
        Threat::FourThree
    } else if threes >= 2 {
        Threat::ThreeThree
    } else if fours == 1 {
        Threat::Four
    } else if threes == 1 {
        Threat::OpenThree
    } else if closed_threes > 0 {
        Threat::ClosedThree
    } else if open_twos >= 2 {
        Threat::TwoTwo
    } else if twos > 0 {
        Threat::Two
    } else {
        Threat::None
    };
    threat as u16 | (flags as u16) << 8
}

fn combo_table(rule: Rule, color: Color) -> Box<[u16]> {
    (0..1usize << 16)
        .map(|index| {
            let nib = |i: usize| LinePattern::from_nibble((index >> (4 * i)) as u8);
            combine_patterns(rule, color, [nib(0), nib(1), nib(2), nib(3)])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses a line like "..X.[.]XX.." where `[.]` marks the centre; `X`
    /// black, `O` white, `|` a wall, `.` empty. Exactly five cells each side.
    fn window(s: &str) -> [u8; 11] {
        let cells: Vec<u8> = s
            .replace("[.]", "C")
            .chars()
            .map(|ch| match ch {
                'X' => 1,
                'O' => 2,
                '|' => WALL,
                'C' => 4,
                _ => EMPTY,
            })
            .collect();
        assert_eq!(cells.len(), 11, "{s}");
        assert_eq!(cells[HALF_WINDOW], 4, "{s}: centre must be [.]");
        let mut w = [0u8; 11];
        for (i, c) in cells.iter().enumerate() {
            w[i] = if *c == 4 { EMPTY } else { *c };
        }
        w
    }

    fn pat(rule: Rule, color: Color, s: &str) -> LinePattern {
        PatternTable::get(rule).pattern_of_window(color, &window(s))
    }

    use LinePattern as P;

    #[test]
    fn fives_per_rule() {
        // Exactly five.
        for rule in Rule::ALL {
            assert_eq!(pat(rule, Color::Black, "...XX[.]XX..."), P::Five, "{rule}");
        }
        // Six in a row.
        assert_eq!(pat(Rule::Freestyle, Color::Black, "..XXX[.]XX..."), P::Five);
        assert_eq!(
            pat(Rule::Standard, Color::Black, "..XXX[.]XX..."),
            P::Overline
        );
        assert_eq!(
            pat(Rule::Standard, Color::White, "..OOO[.]OO..."),
            P::Overline
        );
        assert_eq!(pat(Rule::Renju, Color::Black, "..XXX[.]XX..."), P::Overline);
        assert_eq!(pat(Rule::Renju, Color::White, "..OOO[.]OO..."), P::Five);
        assert_eq!(pat(Rule::Caro, Color::Black, "..XXX[.]XX..."), P::Five);
    }

    #[test]
    fn caro_closed_five_does_not_win() {
        assert_eq!(pat(Rule::Caro, Color::Black, "..OXX[.]XXO.."), P::None);
        assert_eq!(pat(Rule::Caro, Color::Black, "..OXX[.]XX..."), P::Five);
        // The board edge does not close a run.
        assert_eq!(pat(Rule::Caro, Color::Black, "|||XX[.]XXO.."), P::Five);
        // Six or more wins even when closed at both ends.
        assert_eq!(pat(Rule::Caro, Color::Black, ".OXXX[.]XXO.."), P::Five);
        // XOOOO. : the five at the open end is closed on one side only.
        assert_eq!(pat(Rule::Caro, Color::White, "..XOO[.]O...."), P::Four);
        // XOOOO.X : that five would be closed at both ends.
        assert_eq!(pat(Rule::Caro, Color::White, "..XOO[.]O.X.."), P::None);
        assert_eq!(pat(Rule::Freestyle, Color::White, "..XOO[.]O.X.."), P::Four);
    }

    #[test]
    fn fours() {
        let r = Rule::Freestyle;
        assert_eq!(pat(r, Color::Black, "...XX[.]X...."), P::OpenFour);
        assert_eq!(pat(r, Color::Black, "..OXX[.]X...."), P::Four);
        assert_eq!(pat(r, Color::Black, "...XX[.].X..."), P::Four);
        assert_eq!(pat(r, Color::Black, "..X.X[.]X.X.."), P::DoubleFour);
        assert_eq!(pat(r, Color::Black, "|||XX[.]X...."), P::Four);
        // Standard: .XXXX.X -> the right end would make six, so only one five.
        assert_eq!(pat(Rule::Standard, Color::Black, "...XX[.]X.X.."), P::Four);
        assert_eq!(
            pat(Rule::Freestyle, Color::Black, "...XX[.]X.X.."),
            P::OpenFour
        );
    }

    #[test]
    fn threes_and_twos() {
        let r = Rule::Freestyle;
        assert_eq!(pat(r, Color::Black, "....X[.]X...."), P::OpenThree);
        assert_eq!(pat(r, Color::Black, "...OX[.]X...."), P::ClosedThree);
        assert_eq!(pat(r, Color::Black, "....X[.].X..."), P::OpenThree);
        assert_eq!(pat(r, Color::Black, "...|X[.]X...."), P::ClosedThree);
        assert_eq!(pat(r, Color::Black, "....X[.]....."), P::OpenTwo);
        assert_eq!(pat(r, Color::Black, "...OX[.]....."), P::ClosedTwo);
        assert_eq!(pat(r, Color::Black, "....O[.]O...."), P::None);
        // Renju: in X..XX[.]..X every four black can make has one end that
        // would be an overline, so it is only a closed three for black.
        assert_eq!(
            pat(Rule::Renju, Color::Black, "X..XX[.]..X.."),
            P::ClosedThree
        );
        assert_eq!(
            pat(Rule::Freestyle, Color::Black, "X..XX[.]..X.."),
            P::OpenThree
        );
        assert_eq!(
            pat(Rule::Renju, Color::White, "O..OO[.]..O.."),
            P::OpenThree
        );
    }

    #[test]
    fn combination() {
        use LinePattern::*;
        let code = |rule, color, l| Threat::from_code(combine_patterns(rule, color, l));
        assert_eq!(
            code(Rule::Renju, Color::Black, [Four, Four, None, None]),
            Threat::Forbidden
        );
        assert_eq!(
            code(Rule::Renju, Color::Black, [DoubleFour, None, None, None]),
            Threat::Forbidden
        );
        assert_eq!(
            code(Rule::Renju, Color::Black, [Five, Overline, None, None]),
            Threat::Five
        );
        assert_eq!(
            code(
                Rule::Renju,
                Color::Black,
                [OpenThree, OpenThree, None, None]
            ),
            Threat::ThreeThree
        );
        assert_eq!(
            code(Rule::Renju, Color::Black, [Four, OpenThree, None, None]),
            Threat::FourThree
        );
        assert_eq!(
            code(Rule::Renju, Color::White, [Four, Four, None, None]),
            Threat::FourFour
        );
        assert_eq!(
            code(
                Rule::Standard,
                Color::Black,
                [Overline, OpenThree, None, None]
            ),
            Threat::OpenThree
        );
        assert_eq!(
            code(
                Rule::Freestyle,
                Color::Black,
                [OpenTwo, OpenTwo, None, None]
            ),
            Threat::TwoTwo
        );
    }
}
