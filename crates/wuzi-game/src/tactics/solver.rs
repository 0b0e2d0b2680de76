//! Threat-space search: VCF (victory by continuous fours) and VCT (victory
//! by continuous threats: fours and threes).
//!
//! An AND/OR search over forcing moves. At an attacker node the attacker
//! wins if it can complete a five, or if some threat move leads to a
//! defender node it wins. At a defender node the attacker wins if every
//! defence does; the defences considered are complete:
//! * against fives: the stones that stop them all, from [`five_defence`]
//!   (one five cell, unless renju forbids it to black; under caro also the
//!   cell that closes a five's far end); none is a win, unless the defender
//!   has a five;
//! * (VCT) against a threat to make an unstoppable four: the exact defence
//!   set from [`unstoppable_four_defences`] plus every counter-four.
//!
//! So a win found is a proof whatever the budget. Two searches walk these
//! nodes (see [`Algorithm`]): a depth-first one here (VCF), and
//! proof-number search in `dfpn.rs` (VCT). Both are deterministic: moves
//! are tried in a fixed order and the node budget is counted, not timed. A
//! transposition table keyed by the Zobrist hash shares results between
//! move orders.

use crate::game::{Board, CellKind, Color, Direction, LinePattern, Point, Threat, ZobristMap};
use crate::tactics::dfpn::Dfpn;
use crate::tactics::threats::{
    five_defence, four_moves, is_legal_for, trapping_threats, unstoppable_four_defences,
    unstoppable_four_moves, FiveDefence,
};

/// Which threats the attacker may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ThreatKind {
    /// Fours only.
    Vcf,
    /// Fours and threes.
    Vct,
}

/// How much a solve may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SolveLimits {
    /// Nodes (positions visited) before giving up.
    pub max_nodes: u64,
    /// Attacker moves in the longest line searched.
    pub max_depth: u8,
}

impl SolveLimits {
    pub const fn new(max_nodes: u64, max_depth: u8) -> SolveLimits {
        SolveLimits {
            max_nodes,
            max_depth,
        }
    }
}

impl Default for SolveLimits {
    fn default() -> SolveLimits {
        SolveLimits::new(100_000, 30)
    }
}

/// What a solve found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SolveReport {
    /// A proven win: the main line, attacker and defender moves
    /// alternately, starting with the attacker and ending with its five, or
    /// with the threat the defender has no legal answer to (two fives, an
    /// unstoppable four, a renju five cell forbidden to black). Defender
    /// moves are the forced block, or the defence that resists longest.
    pub win: Option<Vec<Point>>,
    /// Nodes visited.
    pub nodes: u64,
    /// Whether the search ran to its end within the node budget. With no
    /// win, a complete search shows there is none within `max_depth`.
    pub complete: bool,
}

impl SolveReport {
    /// The attacker's first move of the win.
    pub fn first_move(&self) -> Option<Point> {
        self.win.as_ref().and_then(|line| line.first().copied())
    }
}

/// How a solve searches. Both prove the same kind of win with the same
/// moves; they differ in which lines they look at first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// Depth-first, by iterative deepening for VCT: finds the shortest wins
    /// first, cheap per node. The default for VCF, which is narrow.
    DepthFirst,
    /// Depth-first proof-number search: works on the line whose proof needs
    /// the fewest leaves. The default for VCT, which is wide.
    ProofNumber,
}

impl Algorithm {
    /// The one [`solve`] uses for `kind`.
    pub fn default_for(kind: ThreatKind) -> Algorithm {
        match kind {
            ThreatKind::Vcf => Algorithm::DepthFirst,
            ThreatKind::Vct => Algorithm::ProofNumber,
        }
    }
}

/// Searches for a forced win of `attacker` (it need not be the side to
/// move: the other side then passes first, which is how one asks "what does
/// the opponent threaten?"). The board is restored before returning.
pub fn solve(
    board: &mut Board,
    attacker: Color,
    kind: ThreatKind,
    limits: SolveLimits,
) -> SolveReport {
    solve_with(board, attacker, kind, limits, Algorithm::default_for(kind))
}

/// [`solve`] with a chosen algorithm (benchmarks compare them).
pub fn solve_with(
    board: &mut Board,
    attacker: Color,
    kind: ThreatKind,
    limits: SolveLimits,
    algorithm: Algorithm,
) -> SolveReport {
    let side = board.side_to_move();
    board.set_side_to_move(attacker);
    let report = match algorithm {
        Algorithm::DepthFirst => Search::run(board, kind, limits),
        Algorithm::ProofNumber => Dfpn::run(board, kind, limits),
    };
    board.set_side_to_move(side);
    report
}

impl Search {
    /// Runs a depth-first solve with the attacker to move on `board`.
    fn run(board: &mut Board, kind: ThreatKind, limits: SolveLimits) -> SolveReport {
        let mut search = Search {
            kind,
            max_nodes: limits.max_nodes,
            nodes: 0,
            out_of_budget: false,
            table: ZobristMap::default(),
        };
        // VCT by iterative deepening: a depth-first search to the full depth
        // gets lost in long useless lines, while most wins are short (on lost
        // ladder games: a VCT of 6 attacker moves found in 20k nodes this way,
        // not in 3M nodes at depth 30). The table carries over, and the first
        // win found is among the shortest.
        let first_depth = match kind {
            ThreatKind::Vcf => limits.max_depth,
            ThreatKind::Vct => limits.max_depth.min(2),
        };
        let mut win = None;
        for depth in first_depth..=limits.max_depth {
            if search.attack(board, depth).is_some() {
                win = Some(search.main_line(board));
                break;
            }
            if search.out_of_budget {
                break;
            }
        }
        SolveReport {
            win,
            nodes: search.nodes,
            complete: !search.out_of_budget,
        }
    }
}

/// Longest lines searched: a VCF is cheap and narrow, a VCT wide.
const VCF_DEPTH: u8 = 40;
const VCT_DEPTH: u8 = 20;

/// A forced win of `attacker` (as in [`solve`]): a VCF within `vcf_nodes`,
/// else a VCT within `vct_nodes` (0 skips either). The line, first move
/// first.
pub fn forced_win(
    board: &mut Board,
    attacker: Color,
    vcf_nodes: u64,
    vct_nodes: u64,
) -> Option<Vec<Point>> {
    forced_win_counted(board, attacker, vcf_nodes, vct_nodes, &mut 0)
}

/// [`forced_win`], adding the nodes it visited to `nodes` (the search
/// reports what its solver costs).
pub fn forced_win_counted(
    board: &mut Board,
    attacker: Color,
    vcf_nodes: u64,
    vct_nodes: u64,
    nodes: &mut u64,
) -> Option<Vec<Point>> {
    [
        (ThreatKind::Vcf, vcf_nodes, VCF_DEPTH),
        (ThreatKind::Vct, vct_nodes, VCT_DEPTH),
    ]
    .into_iter()
    .filter(|&(_, budget, _)| budget > 0)
    .find_map(|(kind, budget, depth)| {
        let report = solve(board, attacker, kind, SolveLimits::new(budget, depth));
        *nodes += report.nodes;
        report.win
    })
}

/// The plies to the five of `line`, a proven win of the side to move on
/// `board` as [`SolveReport::win`] gives it. A line may end before the
/// five, on a threat the defender has no answer to: two fives or a five
/// cell it may not take (the defender's move, then the five: 2 plies
/// more), or a fork of threes nothing stops (any move, the open four, any
/// move, the five: 4 more), as the solver counts them. A line cut after a
/// defender's move (no recorded attack) counts the five's 1, or 3.
pub fn win_plies(board: &mut Board, line: &[Point]) -> u16 {
    let attacker = board.side_to_move();
    let mut played = 0;
    for &p in line {
        if board.play(p).is_err() {
            break;
        }
        played += 1;
    }
    let tail = if board.outcome().is_some() {
        0
    } else if board.side_to_move() == attacker {
        if board.winning_moves(attacker).next().is_some() {
            1
        } else {
            3
        }
    } else {
        match five_defence(board, attacker) {
            FiveDefence::Unstoppable => 2,
            _ => 4,
        }
    };
    for _ in 0..played {
        board.undo();
    }
    (line.len() as u16).saturating_add(tail)
}

/// A proven result in the table. Distances are in plies to the five.
#[derive(Clone, Copy, Debug)]
enum Entry {
    /// Won for the attacker; `best` is the attacker's winning move (at an
    /// attacker node) or the longest-resisting defence (at a defender node),
    /// `None` where the win needs no particular move.
    Win { plies: u16, best: Option<Point> },
    /// No win with this many attacker moves left (or fewer).
    NoWin { depth: u8 },
}

struct Search {
    kind: ThreatKind,
    max_nodes: u64,
    nodes: u64,
    out_of_budget: bool,
    table: ZobristMap<Entry>,
}

impl Search {
    /// Counts a node; false when the budget is spent.
    fn visit(&mut self) -> bool {
        if self.nodes >= self.max_nodes {
            self.out_of_budget = true;
            return false;
        }
        self.nodes += 1;
        true
    }

    fn lookup(&self, board: &Board, depth: u8) -> Option<Option<u16>> {
        match self.table.get(&board.hash())? {
            Entry::Win { plies, .. } => Some(Some(*plies)),
            Entry::NoWin { depth: d } if *d >= depth => Some(None),
            Entry::NoWin { .. } => None,
        }
    }

    /// The attacker is to move. Returns the plies to its five if it wins.
    fn attack(&mut self, board: &mut Board, depth: u8) -> Option<u16> {
        if self.out_of_budget || !self.visit() {
            return None;
        }
        let attacker = board.side_to_move();
        if let Some(five) = board.winning_moves(attacker).next() {
            self.table.insert(
                board.hash(),
                Entry::Win {
                    plies: 1,
                    best: Some(five),
                },
            );
            return Some(1);
        }
        if depth == 0 {
            return None;
        }
        if let Some(known) = self.lookup(board, depth) {
            return known;
        }
        for m in attacker_moves(board, attacker, self.kind) {
            board.play_unchecked(m);
            let result = self.defend(board, depth - 1);
            board.undo();
            if let Some(plies) = result {
                let plies = plies + 1;
                self.table.insert(
                    board.hash(),
                    Entry::Win {
                        plies,
                        best: Some(m),
                    },
                );
                return Some(plies);
            }
            if self.out_of_budget {
                return None;
            }
        }
        self.table.insert(board.hash(), Entry::NoWin { depth });
        None
    }

    /// The defender is to move after an attacker threat. Returns the plies
    /// to the attacker's five if every defence loses.
    fn defend(&mut self, board: &mut Board, depth: u8) -> Option<u16> {
        if self.out_of_budget || !self.visit() {
            return None;
        }
        let defender = board.side_to_move();
        let attacker = defender.opponent();
        if board.winning_moves(defender).next().is_some() {
            return None;
        }
        let replies = match five_defence(board, attacker) {
            FiveDefence::Unstoppable => return Some(2),
            FiveDefence::Blocks(blocks) => blocks,
            FiveDefence::NoFive => {
                if self.kind == ThreatKind::Vcf || depth == 0 {
                    return None;
                }
                if let Some(known) = self.lookup(board, depth) {
                    return known;
                }
                let replies = vct_replies(board, attacker)?;
                if replies.is_empty() {
                    // Nothing stops the unstoppable four: four, any, five.
                    self.table.insert(
                        board.hash(),
                        Entry::Win {
                            plies: 4,
                            best: None,
                        },
                    );
                    return Some(4);
                }
                replies
            }
        };
        let mut longest: Option<(u16, Point)> = None;
        for r in replies {
            board.play_unchecked(r);
            let result = self.attack(board, depth);
            board.undo();
            match result {
                Some(plies) if longest.map_or(true, |(best, _)| plies > best) => {
                    longest = Some((plies, r));
                }
                Some(_) => {}
                None => {
                    if !self.out_of_budget {
                        self.table.insert(board.hash(), Entry::NoWin { depth });
                    }
                    return None;
                }
            }
        }
        let (plies, best) = longest?;
        let plies = plies + 1;
        self.table.insert(
            board.hash(),
            Entry::Win {
                plies,
                best: Some(best),
            },
        );
        Some(plies)
    }

    /// Follows the table from the root to the five.
    fn main_line(&self, board: &mut Board) -> Vec<Point> {
        let attacker = board.side_to_move();
        main_line(board, attacker, |hash| match self.table.get(&hash) {
            Some(Entry::Win { best, .. }) => *best,
            _ => None,
        })
    }
}

// ---- the nodes both searches walk -------------------------------------------

/// The attacker's moves at its node (it has no five): its threats,
/// strongest first (ties in cell order), or the block of the defender's
/// five (in VCF only a block that is itself a four); none when it cannot
/// block.
pub(crate) fn attacker_moves(board: &mut Board, attacker: Color, kind: ThreatKind) -> Vec<Point> {
    match five_defence(board, attacker.opponent()) {
        FiveDefence::NoFive => threat_moves(board, attacker, kind),
        FiveDefence::Blocks(blocks) => blocks
            .into_iter()
            .filter(|&block| kind == ThreatKind::Vct || board.five_cells_after(block, attacker) > 0)
            .collect(),
        FiveDefence::Unstoppable => Vec::new(),
    }
}

/// The attacker's fours, and in VCT its open threes, strongest first; among
/// equal threats, the one that builds most first (see [`potential`]).
fn threat_moves(board: &mut Board, attacker: Color, kind: ThreatKind) -> Vec<Point> {
    let mut moves = four_moves(board, attacker);
    if kind == ThreatKind::Vct {
        let threes = *board.cells_of(CellKind::Three, attacker);
        for p in threes.iter() {
            if !moves.contains(&p) && is_legal_for(board, p, attacker) {
                moves.push(p);
            }
        }
        for p in trapping_threats(board, attacker) {
            if !moves.contains(&p) {
                moves.push(p);
            }
        }
    }
    moves.sort_by_key(|&p| {
        (
            std::cmp::Reverse(board.threat(p, attacker)),
            std::cmp::Reverse(potential(board, p, attacker)),
            p.index(),
        )
    });
    moves
}

/// What a threat on `p` builds besides itself (threat-space search's
/// "gains"): the attacker's lines through `p` that already hold two or
/// more stones, where the next threats will come from, weighing twice the
/// defender's lines through `p` that it cuts. Only an order among equal
/// threats: the proof-number search tries the first of equally promising
/// moves first. Measured with the commit (VCT, 1,092 solves on positions
/// of lost ladder games): 323, 381 and 428 wins within 200, 1,600 and
/// 8,000 nodes where cell order gave 316, 372 and 415.
fn potential(board: &Board, p: Point, attacker: Color) -> u32 {
    let weight = |line: LinePattern| match line {
        LinePattern::None => 0,
        LinePattern::ClosedTwo => 1,
        LinePattern::OpenTwo | LinePattern::ClosedThree => 3,
        _ => 4,
    };
    Direction::ALL
        .iter()
        .map(|&d| {
            2 * weight(board.line_pattern(p, d, attacker))
                + weight(board.line_pattern(p, d, attacker.opponent()))
        })
        .sum()
}

/// The defender's replies to a VCT threat (no five on the board): `None`
/// when the attacker threatens no unstoppable four, else the exact defence
/// set and every counter-four, counter-fours and strong blocks first (they
/// refute soonest). Empty: nothing stops the unstoppable four.
pub(crate) fn vct_replies(board: &mut Board, attacker: Color) -> Option<Vec<Point>> {
    let defender = attacker.opponent();
    if unstoppable_four_moves(board, attacker).is_empty() {
        return None;
    }
    let mut replies = unstoppable_four_defences(board, attacker);
    for p in four_moves(board, defender) {
        if !replies.contains(&p) {
            replies.push(p);
        }
    }
    replies.sort_by_key(|&p| {
        let own = board.threat(p, defender).max(Threat::None);
        (std::cmp::Reverse(own), p.index())
    });
    Some(replies)
}

/// A proven win's line, from the attacker to move on `board` to the five:
/// `best` gives a position's recorded move (by its hash), the winning move
/// or the longest defence.
pub(crate) fn main_line(
    board: &mut Board,
    attacker: Color,
    best: impl Fn(u64) -> Option<Point>,
) -> Vec<Point> {
    let mut line = Vec::new();
    loop {
        let to_move = board.side_to_move();
        let five = board.winning_moves(attacker).next();
        let next = match (five, best(board.hash())) {
            (Some(five), _) if to_move == attacker => Some(five),
            (_, Some(p)) => Some(p),
            // A defender facing two fives blocks the first; one with no
            // legal block (renju: a forbidden cell), or facing an
            // unstoppable four it cannot prevent, has no move to show.
            (Some(five), _) if to_move != attacker && is_legal_for(board, five, to_move) => {
                Some(five)
            }
            _ => None,
        };
        let Some(p) = next.filter(|&p| board.is_empty(p)) else {
            break;
        };
        board.play_unchecked(p);
        line.push(p);
        if to_move == attacker && board.outcome().is_some() {
            break;
        }
    }
    for _ in 0..line.len() {
        board.undo();
    }
    line
}
