//! What a new leaf is: over, won or lost by force, or a list of moves to
//! evaluate.

use crate::game::{Board, CellKind, CellSet, Color, Outcome, Point};
use crate::search::node::Proven;
use crate::tactics::{
    five_defence, forced_win, forced_win_counted, four_moves, is_legal_for, line_breakers,
    unstoppable_four_defences, unstoppable_four_moves, win_plies, FiveDefence,
};

/// The tactical verdict on a position, before any network evaluation.
#[derive(Clone, Debug, PartialEq)]
pub enum LeafAnalysis {
    /// Decided: by the rules, by a forced sequence, or by the solver (with
    /// its line, first move first).
    Proven { value: Proven, line: Vec<Point> },
    /// To be evaluated, with the moves to expand; `complete` when they are
    /// all the legal moves.
    Moves { moves: Vec<Point>, complete: bool },
}

/// Settings of the leaf analysis.
#[derive(Clone, Copy, Debug)]
pub struct LeafSettings {
    /// Solver budget for the side to move's VCF (0: no solver).
    pub vcf_nodes: u64,
    /// Solver budget for the side to move's VCT (0: none; the search gives
    /// it only to the nodes nearest the root).
    pub vct_nodes: u64,
    /// Solver budget for the opponent's VCF, as if the side to move passed
    /// (0: only the opponent's fours and open threes are answered).
    pub opponent_vcf_nodes: u64,
    /// Moves considered: empty cells within this many steps of a stone,
    /// plus every cell that makes a four or an open three for either side.
    pub candidate_distance: u8,
}

/// Analyses the position of `board` for the side to move, adding the
/// solver nodes it spent to `solver_nodes`.
pub fn analyse(board: &mut Board, settings: LeafSettings, solver_nodes: &mut u64) -> LeafAnalysis {
    let me = board.side_to_move();
    let opponent = me.opponent();
    match board.outcome() {
        Some(Outcome::Win(winner)) => {
            let value = if winner == me {
                Proven::Win(0)
            } else {
                Proven::Loss(0)
            };
            return LeafAnalysis::Proven {
                value,
                line: Vec::new(),
            };
        }
        Some(Outcome::Draw) => {
            return LeafAnalysis::Proven {
                value: Proven::Draw,
                line: Vec::new(),
            }
        }
        None => {}
    }
    if let Some(five) = board.winning_moves(me).next() {
        return LeafAnalysis::Proven {
            value: Proven::Win(1),
            line: vec![five],
        };
    }
    match five_defence(board, opponent) {
        FiveDefence::Unstoppable => {
            return LeafAnalysis::Proven {
                value: Proven::Loss(2),
                line: Vec::new(),
            }
        }
        FiveDefence::Blocks(moves) => {
            return LeafAnalysis::Moves {
                moves,
                complete: true,
            }
        }
        FiveDefence::NoFive => {}
    }
    if let Some(line) = forced_win_counted(
        board,
        me,
        settings.vcf_nodes,
        settings.vct_nodes,
        solver_nodes,
    ) {
        return LeafAnalysis::Proven {
            value: Proven::Win(win_plies(board, &line)),
            line,
        };
    }
    match answer_threats(board, settings.opponent_vcf_nodes, solver_nodes) {
        Defence::Lost(plies) => {
            return LeafAnalysis::Proven {
                value: Proven::Loss(plies),
                line: Vec::new(),
            }
        }
        Defence::Moves(moves) => {
            return LeafAnalysis::Moves {
                moves,
                complete: true,
            }
        }
        Defence::Free => {}
    }
    let (moves, complete) = candidate_moves(board, settings.candidate_distance);
    if moves.is_empty() {
        // Every empty cell is forbidden to black (a full board was a draw
        // above). The Gomocup protocols have no pass and Piskvork's referee
        // counts a forbidden move as a loss, so black loses with its move.
        return LeafAnalysis::Proven {
            value: Proven::Loss(1),
            line: Vec::new(),
        };
    }
    LeafAnalysis::Moves { moves, complete }
}

/// The leaf analysis of a search's root whose moves in `excluded` may not be
/// played (Yixin-Board's `yxblock`, a move a game server refused). A win
/// of the side to move stands only through an allowed first move; one
/// through an excluded move (or a defence set that is all excluded) gives
/// way to the allowed candidates, for the tree to find what they are
/// worth. Losses and draws stand: excluding moves cannot save a position.
/// Where every candidate is excluded, the plain analysis stands.
pub fn analyse_root_except(
    board: &mut Board,
    settings: LeafSettings,
    excluded: &CellSet,
    solver_nodes: &mut u64,
) -> LeafAnalysis {
    let allowed = |p: &Point| !excluded.contains(*p);
    let plain = analyse(board, settings, solver_nodes);
    let moves = match &plain {
        LeafAnalysis::Proven {
            value: Proven::Win(_),
            line,
        } if line.first().is_some_and(|p| excluded.contains(*p)) => {
            // Another five, or another four, may win as well.
            let me = board.side_to_move();
            if let Some(five) = board.winning_moves(me).find(allowed) {
                return LeafAnalysis::Proven {
                    value: Proven::Win(1),
                    line: vec![five],
                };
            }
            for first in four_moves(board, me).into_iter().filter(allowed) {
                if let Some((line, plies)) =
                    vcf_from(board, first, settings.vcf_nodes, solver_nodes)
                {
                    return LeafAnalysis::Proven {
                        value: Proven::Win(plies),
                        line,
                    };
                }
            }
            None
        }
        LeafAnalysis::Proven { .. } => return plain,
        LeafAnalysis::Moves { moves, complete } => {
            let kept: Vec<Point> = moves.iter().copied().filter(allowed).collect();
            (!kept.is_empty()).then_some((kept, *complete))
        }
    };
    let (moves, complete) = moves.unwrap_or_else(|| {
        let (moves, complete) = candidate_moves(board, settings.candidate_distance);
        (moves.into_iter().filter(allowed).collect(), complete)
    });
    if !moves.is_empty() {
        return LeafAnalysis::Moves { moves, complete };
    }
    // Every cell near the stones excluded: the nearest allowed legal cells
    // further away (beside the centre on an empty board), for the tree to
    // search, rather than a win through an excluded move played without a
    // search.
    let me = board.side_to_move();
    let anchors: Vec<Point> = if board.stone_count() == 0 {
        vec![board.size().center()]
    } else {
        board.history().iter().map(|&(p, _)| p).collect()
    };
    let empty: Vec<Point> = board.empty_cells().filter(allowed).collect();
    let mut nearest = Vec::new();
    let mut least = u32::MAX;
    for q in empty {
        let away = anchors
            .iter()
            .map(|&a| u32::from(q.distance(a)))
            .min()
            .unwrap_or(0);
        if away > least || !is_legal_for(board, q, me) {
            continue;
        }
        if away < least {
            (least, nearest) = (away, Vec::new());
        }
        nearest.push(q);
    }
    if nearest.is_empty() {
        return plain;
    }
    LeafAnalysis::Moves {
        moves: nearest,
        complete: false,
    }
}

/// A VCF of the side to move that starts with the four `first`, found
/// within `vcf_nodes` after the opponent's forced block: its line, and the
/// plies to the five as [`analyse`] counts them.
fn vcf_from(
    board: &mut Board,
    first: Point,
    vcf_nodes: u64,
    solver_nodes: &mut u64,
) -> Option<(Vec<Point>, u16)> {
    let me = board.side_to_move();
    board.play(first).ok()?;
    let found = if board.winning_moves(me.opponent()).next().is_some() {
        // The opponent's own five comes first.
        None
    } else {
        match five_defence(board, me) {
            // Any block, then the five: a line with one of them, the block
            // where the defender may play (in renju, not on a cell
            // forbidden to black; with none, the line stops at the four).
            FiveDefence::Unstoppable => {
                let fives: Vec<Point> = board.winning_moves(me).collect();
                let defender = me.opponent();
                let block = fives
                    .iter()
                    .copied()
                    .find(|&p| is_legal_for(board, p, defender));
                let five = block.and_then(|b| fives.iter().copied().find(|&p| p != b));
                let line = match (block, five) {
                    (Some(block), Some(five)) => vec![first, block, five],
                    _ => vec![first],
                };
                Some((line, 3))
            }
            FiveDefence::Blocks(blocks) if blocks.len() == 1 => {
                let block = blocks[0];
                if board.play(block).is_ok() {
                    let rest = forced_win_counted(board, me, vcf_nodes, 0, solver_nodes)
                        .map(|rest| (win_plies(board, &rest), rest));
                    board.undo();
                    rest.map(|(plies, rest)| {
                        let line: Vec<Point> = [first, block].into_iter().chain(rest).collect();
                        (line, plies + 2)
                    })
                } else {
                    None
                }
            }
            _ => None,
        }
    };
    board.undo();
    found
}

/// What the opponent's threats leave the side to move.
#[derive(Clone, Debug, PartialEq)]
enum Defence {
    /// No threat: any move.
    Free,
    /// Only these moves can matter; every other move loses by force.
    Moves(Vec<Point>),
    /// Nothing stops the threat: lost in this many plies.
    Lost(u16),
}

/// The opponent's threats decide which moves exist (the side to move has
/// no five and no five to block here):
/// * a threat to make an unstoppable four (an open three, a four-four
///   point, in renju a white four whose block black may not take): the
///   exact defence set;
/// * a VCF (found within `vcf_nodes`, as if the side to move passed): the
///   cells that could break its line.
///
/// The side to move's own fours are always kept: a counter-four may refute
/// anything. Both sets are sound (a move outside them loses to the threat
/// found), so a node restricted to them is still complete and can be
/// proven lost; the tree then checks each move that is left.
fn answer_threats(board: &mut Board, vcf_nodes: u64, solver_nodes: &mut u64) -> Defence {
    let me = board.side_to_move();
    let opponent = me.opponent();
    if board.cells_of(CellKind::Four, opponent).is_empty() {
        // Neither fours nor open threes: the opponent has no VCF.
        return Defence::Free;
    }
    let mut allowed: Option<CellSet> = None;
    let mut loss_plies = 4;
    if !unstoppable_four_moves(board, opponent).is_empty() {
        allowed = Some(
            unstoppable_four_defences(board, opponent)
                .into_iter()
                .collect(),
        );
    }
    if vcf_nodes > 0 {
        if let Some(line) = forced_win_counted(board, opponent, vcf_nodes, 0, solver_nodes) {
            let (breakers, plies) = line_breakers(board, opponent, &line);
            loss_plies = plies;
            allowed = Some(match allowed {
                Some(defences) => defences.intersection(&breakers),
                None => breakers,
            });
        }
    }
    let Some(allowed) = allowed else {
        return Defence::Free;
    };
    let mut moves: Vec<Point> = allowed
        .iter()
        .filter(|&p| is_legal_for(board, p, me))
        .collect();
    for p in four_moves(board, me) {
        if !allowed.contains(p) {
            moves.push(p);
        }
    }
    if moves.is_empty() {
        return Defence::Lost(loss_plies);
    }
    moves.sort_by_key(|p| p.index());
    Defence::Moves(moves)
}

/// The legal moves worth expanding, in cell order, and whether they are all
/// the legal moves.
pub fn candidate_moves(board: &mut Board, distance: u8) -> (Vec<Point>, bool) {
    let me = board.side_to_move();
    let size = board.size();
    let mut near = CellSet::new();
    if board.stone_count() == 0 {
        // The first move: the centre. Networks trained on tournament games
        // (which start from given openings) know nothing of empty boards.
        near.insert(size.center());
    }
    let d = distance as i32;
    for &(p, _) in board.history() {
        for dy in -d..=d {
            for dx in -d..=d {
                if let Some(q) = size.point(p.x() as i32 + dx, p.y() as i32 + dy) {
                    near.insert(q);
                }
            }
        }
    }
    for color in Color::BOTH {
        for kind in [CellKind::Four, CellKind::Three] {
            for q in board.cells_of(kind, color).iter() {
                near.insert(q);
            }
        }
    }
    let mut moves = Vec::new();
    let mut elsewhere = Vec::new();
    let empty: Vec<Point> = board.empty_cells().collect();
    for q in empty {
        if !is_legal_for(board, q, me) {
            continue;
        }
        if near.contains(q) {
            moves.push(q);
        } else {
            elsewhere.push(q);
        }
    }
    if moves.is_empty() {
        // Every cell near the stones is forbidden to black: the far ones
        // are all it has, and an empty list must mean no legal move at all.
        return (elsewhere, true);
    }
    (moves, elsewhere.is_empty())
}

/// [`fallback_move`] avoiding `excluded` (the root moves a GUI asked not to
/// consider) while any other legal move is left: a lost position still
/// gets an allowed move.
pub fn fallback_move_except(board: &mut Board, excluded: &CellSet) -> Option<Point> {
    let found = fallback_move(board);
    if found.is_none_or(|m| !excluded.contains(m)) {
        return found;
    }
    let me = board.side_to_move();
    if let Some(five) = board.winning_moves(me).find(|&p| !excluded.contains(p)) {
        return Some(five);
    }
    // Near the stones, as the search would play, rather than the first
    // free cell in board order (a corner): on an empty board with the
    // centre blocked, a cell beside it.
    let (moves, _) = candidate_moves(board, 2);
    if let Some(&near) = moves.iter().find(|&&p| !excluded.contains(p)) {
        return Some(near);
    }
    let centre = board.size().center();
    let allowed: Vec<Point> = board
        .empty_cells()
        .filter(|&p| !excluded.contains(p))
        .collect();
    allowed
        .into_iter()
        .filter(|&p| is_legal_for(board, p, me))
        .min_by_key(|&p| (p.distance(centre), p.index()))
        .or(found)
}

/// A move for a position the search has no edge for (lost by force, so
/// never expanded; or won by a move now blocked): a five of our own, else
/// a stone that stops the opponent's fives, else the first cell of the
/// opponent's VCF (the opponent may not see another), else the first
/// candidate move, else any legal move.
pub fn fallback_move(board: &mut Board) -> Option<Point> {
    let me = board.side_to_move();
    if let Some(five) = board.winning_moves(me).next() {
        return Some(five);
    }
    match five_defence(board, me.opponent()) {
        FiveDefence::Blocks(blocks) => return blocks.first().copied(),
        FiveDefence::Unstoppable => {
            // Lost: any five cell we may take, else play on below.
            let legal: Vec<Point> = board.winning_moves(me.opponent()).collect();
            if let Some(&block) = legal.iter().find(|&&p| is_legal_for(board, p, me)) {
                return Some(block);
            }
        }
        FiveDefence::NoFive => {}
    }
    let line = forced_win(board, me.opponent(), 10_000, 0);
    if let Some(first) = line
        .and_then(|l| l.first().copied())
        .filter(|&p| is_legal_for(board, p, me))
    {
        return Some(first);
    }
    let (moves, _) = candidate_moves(board, 2);
    if let Some(&first) = moves.first() {
        return Some(first);
    }
    let empty: Vec<Point> = board.empty_cells().collect();
    empty.into_iter().find(|&p| is_legal_for(board, p, me))
}
