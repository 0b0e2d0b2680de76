//! Immediate threats: who can win now, what must be blocked, and the full
//! set of defences against a threat to make an unstoppable four.

use crate::game::{Board, CellKind, CellSet, Color, Direction, Point, Rule};

/// Whether `color` may play on empty `p` (renju black: not forbidden).
pub fn is_legal_for(board: &mut Board, p: Point, color: Color) -> bool {
    board.is_empty(p) && (color == Color::White || !board.is_forbidden(p))
}

/// The cells where `color` completes a winning line now. A five is never
/// forbidden, so all of them are legal.
pub fn winning_moves(board: &Board, color: Color) -> Vec<Point> {
    board.winning_moves(color).collect()
}

/// `attacker`'s five cells, which its opponent must block (outside caro,
/// two or more mean one stone cannot stop them all; [`five_defence`] gives
/// the exact answers under every rule).
pub fn five_blocks(board: &Board, attacker: Color) -> Vec<Point> {
    winning_moves(board, attacker)
}

/// What one stone of the defender can do against `attacker`'s fives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FiveDefence {
    /// `attacker` has no five to complete.
    NoFive,
    /// The defender's legal moves after which `attacker` has no five.
    Blocks(Vec<Point>),
    /// No single stone stops them: `attacker` makes five next.
    Unstoppable,
}

/// The defence against `attacker`'s fives. Outside caro that is the one
/// five cell if it is legal for the defender; under caro a five may also
/// be stopped by closing its run's other end (an exact five closed at both
/// ends does not win), so two five cells of one straight four can be one
/// threat, and one five cell has two answers.
pub fn five_defence(board: &mut Board, attacker: Color) -> FiveDefence {
    let defender = attacker.opponent();
    let fives: Vec<Point> = board.winning_moves(attacker).collect();
    if fives.is_empty() {
        return FiveDefence::NoFive;
    }
    if board.rule() != Rule::Caro {
        return match fives[..] {
            [block] if is_legal_for(board, block, defender) => FiveDefence::Blocks(vec![block]),
            _ => FiveDefence::Unstoppable,
        };
    }
    let mut candidates = CellSet::new();
    for &f in &fives {
        candidates.insert(f);
        insert_run_ends(board, f, attacker, &mut candidates);
    }
    let side = board.side_to_move();
    let mut blocks = Vec::new();
    for e in candidates.iter() {
        if board.place(e, defender).is_err() {
            continue;
        }
        if board.winning_moves(attacker).next().is_none() {
            blocks.push(e);
        }
        board.undo();
    }
    board.set_side_to_move(side);
    if blocks.is_empty() {
        FiveDefence::Unstoppable
    } else {
        FiveDefence::Blocks(blocks)
    }
}

/// The legal moves of `color` that make at least one four (including fives
/// only when they also make a four).
pub fn four_moves(board: &mut Board, color: Color) -> Vec<Point> {
    let candidates = *board.cells_of(CellKind::Four, color);
    candidates
        .iter()
        .filter(|&p| is_legal_for(board, p, color))
        .collect()
}

/// The legal moves after which `color` has two or more cells completing a
/// five, so that one stone cannot stop it: open fours, and where legal,
/// double fours (on one line or across lines); and in renju white's fours
/// whose one five cell black may not take, as an overline or a double four
/// (see [`trapping_four_cell`]).
pub fn unstoppable_four_moves(board: &mut Board, color: Color) -> Vec<Point> {
    let candidates = *board.cells_of(CellKind::Four, color);
    let caro = board.rule() == Rule::Caro;
    let traps = may_trap(board, color);
    candidates
        .iter()
        .filter(|&p| match board.five_cells_after(p, color) {
            0 => false,
            1 => traps && trapping_four_cell(board, p, color).is_some(),
            _ => {
                is_legal_for(board, p, color)
                    && (!caro || caro_four_is_unstoppable(board, p, color))
            }
        })
        .collect()
}

/// Whether a four of `color` may leave the defender no legal block: renju
/// white, with black holding a cell that may be forbidden.
fn may_trap(board: &Board, color: Color) -> bool {
    board.rule() == Rule::Renju
        && color == Color::White
        && !board
            .cells_of(CellKind::ForbidCandidate, Color::Black)
            .is_empty()
}

/// The five cell of white's four on `p` when black may not take it, being
/// an overline or a double four for black once the four stands: a four
/// black cannot block. Only such lines count, not a double three: their
/// verdict only a stone on the lines through the cell can change, which
/// keeps the defence sets local (and their search cheap).
fn trapping_four_cell(board: &Board, p: Point, color: Color) -> Option<Point> {
    Direction::ALL
        .iter()
        .filter(|&&dir| board.line_pattern(p, dir, color).four_count() > 0)
        .find_map(|&dir| five_cell_along(board, p, color, dir))
        .filter(|&f| board.forbidden_by_lines_with(f, p, color))
}

/// The empty cell completing a five of `color` along `dir` once `p` is
/// played: the gap of a five-cell window holding four of its stones (`p`
/// among them) and no other.
fn five_cell_along(board: &Board, p: Point, color: Color, dir: Direction) -> Option<Point> {
    (-4..=0).find_map(|start| {
        let mut own = 0;
        let mut gap = None;
        for k in start..start + 5 {
            let q = p.step(dir, k).filter(|&q| board.size().contains(q))?;
            match board.stone(q) {
                _ if q == p => own += 1,
                Some(c) if c == color => own += 1,
                Some(_) => return None,
                None => gap = Some(q),
            }
        }
        gap.filter(|_| own == 4)
    })
}

/// Renju white (attacking): the moves that threaten a four black could not
/// block (see [`trapping_four_cell`]), beside the open threes, which
/// [`unstoppable_four_moves`] finds by pattern. Such a move and the four
/// after it share a five-cell window with a cell black may not take that
/// holds two white stones and no black one.
pub(crate) fn trapping_threats(board: &mut Board, attacker: Color) -> Vec<Point> {
    if !may_trap(board, attacker) {
        return Vec::new();
    }
    let traps: Vec<Point> = board
        .cells_of(CellKind::ForbidCandidate, Color::Black)
        .iter()
        .filter(|&f| board.forbidden_by_lines(f))
        .collect();
    let mut moves = CellSet::new();
    for f in traps {
        for dir in Direction::ALL {
            for start in -4..=0 {
                let window: Option<Vec<Point>> = (start..start + 5)
                    .map(|k| f.step(dir, k).filter(|&q| board.size().contains(q)))
                    .collect();
                let Some(window) = window else {
                    continue;
                };
                let white = window
                    .iter()
                    .filter(|&&q| board.stone(q) == Some(attacker))
                    .count();
                let empty: Vec<Point> = window
                    .iter()
                    .copied()
                    .filter(|&q| q != f && board.is_empty(q))
                    .collect();
                if white == 2 && empty.len() == 2 {
                    moves.insert(empty[0]);
                    moves.insert(empty[1]);
                }
            }
        }
    }
    let side = board.side_to_move();
    let mut threats = Vec::new();
    for q in moves.iter() {
        if board.place(q, attacker).is_err() {
            continue;
        }
        let fours = *board.cells_of(CellKind::Four, attacker);
        let traps = fours.iter().any(|r| {
            board.five_cells_after(r, attacker) == 1
                && trapping_four_cell(board, r, attacker).is_some()
        });
        board.undo();
        if traps {
            threats.push(q);
        }
    }
    board.set_side_to_move(side);
    threats
}

/// Under caro, whether `color`'s move on `p` leaves fives that no stone
/// stops (the line patterns count a straight four next to an opponent
/// stone as open, which closing its far end answers).
fn caro_four_is_unstoppable(board: &mut Board, p: Point, color: Color) -> bool {
    let side = board.side_to_move();
    if board.place(p, color).is_err() {
        return false;
    }
    let unstoppable = five_defence(board, color) == FiveDefence::Unstoppable;
    board.undo();
    board.set_side_to_move(side);
    unstoppable
}

/// The full defence set against `attacker`'s threats to make an
/// unstoppable four on its next move (an open three, a four-four point):
/// every legal move of the other side after which `attacker` has no such
/// move left. Computed by trying every cell that could matter, so it is
/// exact, renju forbidden points included. Counter-attacks (the defender's
/// own fours) are not in it; see [`four_moves`].
///
/// The cells that could matter are each threat cell and the cells within
/// five steps of it on the lines where it makes its fours: a stone on
/// another line through it changes none of those fours. (A stone there can
/// only take patterns away, and a renju black move that is forbidden is no
/// threat, so nothing else can stop it.) Except in renju, where a black
/// threat cell that may be a double three can become one through a white
/// stone anywhere (one that makes a fake three's four point legal, so the
/// three real): when every threat cell may, the other empty cells are
/// tried too, each first for whether it makes every threat forbidden.
///
/// Meaningful when `attacker` has no five to complete; returns an empty set
/// when `attacker` has no such threat.
pub fn unstoppable_four_defences(board: &mut Board, attacker: Color) -> Vec<Point> {
    let defender = attacker.opponent();
    let threats = unstoppable_four_moves(board, attacker);
    if threats.is_empty() {
        return Vec::new();
    }
    let mut candidates = CellSet::new();
    for &f in &threats {
        candidates.insert(f);
        for dir in Direction::ALL {
            if board.line_pattern(f, dir, attacker).four_count() == 0 {
                continue;
            }
            for k in (-5..=5).filter(|&k| k != 0) {
                if let Some(q) = f.step(dir, k).filter(|&q| board.is_empty(q)) {
                    candidates.insert(q);
                }
            }
        }
    }
    // A four black may not block is also stopped by a black stone that
    // makes its five cell legal, a five there: on the lines through it.
    if may_trap(board, attacker) {
        for &q in &threats {
            if board.five_cells_after(q, attacker) == 1 {
                if let Some(f) = trapping_four_cell(board, q, attacker) {
                    insert_line_cells(board, f, 5, &mut candidates);
                }
            }
        }
    }
    // Whether the line patterns show every threat stopped by a stone on
    // `e` (looked up with the stone in place, not played).
    let stopped_by_patterns = |board: &Board, e: Point| {
        threats
            .iter()
            .all(|&f| f == e || board.five_cells_after_with(f, attacker, e, defender) < 2)
    };
    if !matches!(board.rule(), Rule::Renju | Rule::Caro) {
        // Without forbidden points a stone of the defender only takes
        // patterns away from the attacker, so the threat cells after it
        // are among today's: look their lines up again with the stone in
        // place instead of playing it (the renju path below plays it, as
        // legality there depends on the whole neighbourhood; and caro's,
        // where closing an end answers a four the patterns call open).
        return candidates
            .iter()
            .filter(|&e| stopped_by_patterns(board, e))
            .collect();
    }
    // Off the threats' lines a stone stops a threat only by making it
    // forbidden, so it must do that to every one of them.
    let mut far = CellSet::new();
    if threats
        .iter()
        .all(|&f| legality_is_not_local(board, f, attacker))
    {
        insert_every_empty_cell(board, &mut far);
    }
    let caro = board.rule() == Rule::Caro;
    let side = board.side_to_move();
    let mut defences = Vec::new();
    for e in candidates
        .iter()
        .chain(far.iter().filter(|&e| !candidates.contains(e)))
    {
        let off_the_lines = !candidates.contains(e);
        if !is_legal_for(board, e, defender) {
            continue;
        }
        // Caro: what the line patterns show stopped is stopped (a stone
        // of the defender only closes lines, and adds no threat); only the
        // rest needs playing, for the ends it may close.
        if caro && stopped_by_patterns(board, e) {
            defences.push(e);
            continue;
        }
        if board.place(e, defender).is_err() {
            continue;
        }
        let stops_all = !off_the_lines || threats.iter().all(|&f| board.is_forbidden(f));
        if stops_all && unstoppable_four_moves(board, attacker).is_empty() {
            defences.push(e);
        }
        board.undo();
    }
    board.set_side_to_move(side);
    defences.sort_by_key(|p| p.index());
    defences
}

/// Where a stone of the defender could break `line`, a forced win of
/// `attacker` found with the defender to move first (it "passed"): the
/// attacker's win still works, move for move, after any defender stone
/// elsewhere. Returns those cells (empty, not checked for legality) and the
/// plies to the five when the defender plays elsewhere.
///
/// The line alternates attacker threats and forced defender replies, as
/// [`solve`](crate::tactics::solve) reports a VCF. A stone can break it by
/// * taking one of the line's cells;
/// * taking a cell that completes a five after one of the attacker's
///   moves (an open four's other end, a four's block);
/// * turning one of the defender's forced blocks into a four or a five of
///   its own (a counter-threat inside the sequence), or a renju block that
///   would be forbidden into a legal one;
/// * under caro, closing an end of a five, which is then no win if the
///   other end is closed too;
/// * (renju) making a forbidden block legal.
///
/// Counter-fours the defender can make at once are not in the set (see
/// [`four_moves`]): they break anything and are found separately.
pub fn line_breakers(board: &mut Board, attacker: Color, line: &[Point]) -> (CellSet, u16) {
    let defender = attacker.opponent();
    let side = board.side_to_move();
    board.set_side_to_move(attacker);
    let caro = board.rule() == Rule::Caro;
    let mut cells = CellSet::new();
    let mut played = 0;
    // Renju: a black move of the line (the attacker's threat or the
    // defender's block) that may be a double three can change legality
    // through a stone anywhere, so any cell may break the line.
    let mut anywhere = false;
    for (i, &p) in line.iter().enumerate() {
        if !board.is_empty(p) {
            break;
        }
        cells.insert(p);
        let by_attacker = i % 2 == 0;
        let mover = if by_attacker { attacker } else { defender };
        anywhere |= legality_is_not_local(board, p, mover);
        if !by_attacker {
            insert_counter_cells(board, p, defender, &mut cells);
        }
        board.play_unchecked(p);
        played += 1;
        // Caro: a four closed at one end by the defender has two answers
        // (its five cell, or the other end, which makes that five a closed
        // one). The line goes on after one of them; the other branch's
        // own line is not known here, so any stone may break it.
        if caro && by_attacker {
            if let FiveDefence::Blocks(blocks) = five_defence(board, attacker) {
                anywhere |= blocks.len() > 1;
            }
        }
        if by_attacker {
            let fives: Vec<Point> = board.winning_moves(attacker).collect();
            for f in fives {
                cells.insert(f);
                if caro {
                    insert_run_ends(board, f, attacker, &mut cells);
                }
                if !is_legal_for(board, f, defender) {
                    // A stone that makes the block legal (renju) is
                    // somewhere on the lines through it, or anywhere for
                    // a double three.
                    insert_line_cells(board, f, 5, &mut cells);
                    anywhere |= legality_is_not_local(board, f, defender);
                }
            }
        }
    }
    let won = board.outcome().is_some();
    for _ in 0..played {
        board.undo();
    }
    board.set_side_to_move(side);
    if anywhere {
        insert_every_empty_cell(board, &mut cells);
    }
    // Without a five at the end, the line ends with a threat no move
    // stops: the defender's move, the five's threat's answer and the five.
    let tail = if won { 1 } else { 3 };
    (cells, line.len() as u16 + tail)
}

/// Whether `color`'s move on `p` may be a renju double three: its legality
/// then hangs on whether each three is real, which a stone anywhere can
/// change (through the recursion on the threes' four points), unlike a
/// four-four or an overline, which only the lines through `p` decide.
fn legality_is_not_local(board: &Board, p: Point, color: Color) -> bool {
    board.rule() == Rule::Renju && color == Color::Black && board.may_be_double_three(p)
}

fn insert_every_empty_cell(board: &Board, cells: &mut CellSet) {
    for q in board.empty_cells() {
        cells.insert(q);
    }
}

/// The empty cells within `reach` of `p` on its four lines.
fn insert_line_cells(board: &Board, p: Point, reach: i32, cells: &mut CellSet) {
    for dir in Direction::ALL {
        for k in (-reach..=reach).filter(|&k| k != 0) {
            if let Some(q) = p.step(dir, k).filter(|&q| board.is_empty(q)) {
                cells.insert(q);
            }
        }
    }
}

/// The empty cells just beyond the runs of `color` that a stone on `f`
/// would make five or longer: under caro, a stone of the other side there
/// closes an end (an exact five closed at both ends does not win).
fn insert_run_ends(board: &Board, f: Point, color: Color, cells: &mut CellSet) {
    for dir in Direction::ALL {
        let end = |sign: i32| {
            let mut k = 1;
            while f
                .step(dir, sign * k)
                .is_some_and(|q| board.stone(q) == Some(color))
            {
                k += 1;
            }
            (k - 1, f.step(dir, sign * k))
        };
        let (ahead, beyond_ahead) = end(1);
        let (behind, beyond_behind) = end(-1);
        if ahead + behind + 1 >= 5 {
            for q in [beyond_ahead, beyond_behind].into_iter().flatten() {
                if board.is_empty(q) {
                    cells.insert(q);
                }
            }
        }
    }
}

/// The empty cells where a stone of `defender` would make its forced block
/// on `block` a four or a five (which the attacker then has to answer), or
/// make a forbidden block legal.
fn insert_counter_cells(board: &mut Board, block: Point, defender: Color, cells: &mut CellSet) {
    let side = board.side_to_move();
    let was_legal = is_legal_for(board, block, defender);
    for dir in Direction::ALL {
        for k in (-4..=4).filter(|&k| k != 0) {
            let Some(q) = block.step(dir, k).filter(|&q| board.is_empty(q)) else {
                continue;
            };
            if cells.contains(q) || board.place(q, defender).is_err() {
                continue;
            }
            let counter = board.line_pattern(block, dir, defender).four_count() > 0
                || board.is_winning_move(block, defender)
                || (!was_legal && is_legal_for(board, block, defender));
            board.undo();
            if counter {
                cells.insert(q);
            }
        }
    }
    board.set_side_to_move(side);
}
