//! What a search reports: the move, its value, statistics, and the
//! protocol's summary line.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use crate::game::{Board, BoardSize, CellSet, Color, Point};
use crate::search::expand::fallback_move;
use crate::search::node::{Edge, Node, Proven};
use crate::search::select::choose_edge;
use crate::search::Searcher;

/// Why a search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The root's value was proven.
    Proven,
    /// A stop request (STOP, END, a new position).
    Stopped,
    Time,
    Playouts,
    Memory,
    /// Nothing left to search within the limits (e.g. the depth limit).
    Exhausted,
    /// The root has a single move (a forced block).
    OnlyMove,
}

/// One root move.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveStats {
    pub mv: Point,
    pub visits: u32,
    pub prior: f32,
    /// Win, draw, loss for the player making the move.
    pub wdl: [f32; 3],
    pub proven: Proven,
}

impl MoveStats {
    /// The statistics of a node's edges, most visited first (ties: prior).
    pub fn of_edges(edges: &[Edge]) -> Vec<MoveStats> {
        let mut moves: Vec<MoveStats> = edges
            .iter()
            .map(|e| MoveStats {
                mv: e.mv,
                visits: e.visits,
                prior: e.prior,
                wdl: e.wdl(),
                proven: e.proven,
            })
            .collect();
        moves.sort_by(|a, b| b.visits.cmp(&a.visits).then(b.prior.total_cmp(&a.prior)));
        moves
    }
}

/// Counters of one search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub playouts: u64,
    pub evaluations: u64,
    /// Batches the search threads sent to the network.
    pub batches: u64,
    pub max_depth: u32,
    /// Descents that ended on a proven node or at the depth limit.
    pub revisits: u64,
    /// Descents that met a node another descent was evaluating.
    pub collisions: u64,
    /// Solver nodes spent analysing new leaves.
    pub solver_nodes: u64,
}

impl Counters {
    /// How full the batches sent to the network were, on average.
    pub fn leaves_per_batch(&self) -> f64 {
        self.evaluations as f64 / self.batches.max(1) as f64
    }
}

/// The outcome of a search.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult {
    /// The move to play (`None` only when the side to move has no move).
    pub best_move: Option<Point>,
    /// Win, draw, loss for the side to move at the root.
    pub wdl: [f32; 3],
    pub proven: Proven,
    /// Expected outcome `P(win) + P(draw)/2`, for the side to move.
    pub expectation: f32,
    pub pv: Vec<Point>,
    /// Root moves, most visited first.
    pub moves: Vec<MoveStats>,
    pub counters: Counters,
    pub elapsed: Duration,
    pub reason: StopReason,
    /// Who is to move at the root (for the PV's colours).
    pub side_to_move: Color,
    /// Moves the root safety net found refuted (the opponent wins by force
    /// after them) and replaced, in the order they were checked.
    pub refuted: Vec<Point>,
}

pub(crate) fn summarise(
    searcher: &Searcher,
    board: &Board,
    root: &Arc<Node>,
    excluded: &CellSet,
    counters: &Counters,
    elapsed: Duration,
    reason: StopReason,
) -> SearchResult {
    let draw_weight = searcher.config().draw_weight();
    let data = root.data.lock();
    let moves = MoveStats::of_edges(&data.edges);
    let best_move = match (&data.proof, data.proven) {
        (Some(proof), Proven::Win(_)) => proof.first().copied(),
        _ => choose_edge(&data, draw_weight, Some(excluded)).map(|i| data.edges[i].mv),
    }
    .or_else(|| fallback_move(&mut board.clone()));
    let wdl = data.wdl();
    let proven = data.proven;
    drop(data);
    let pv = searcher.principal_variation(board, root, 64);
    SearchResult {
        best_move,
        wdl,
        proven,
        expectation: wdl[0] + 0.5 * wdl[1],
        pv,
        moves,
        counters: *counters,
        elapsed,
        reason,
        side_to_move: board.side_to_move(),
        refuted: Vec::new(),
    }
}

/// A move in the extended protocol's PV notation: colour letter, column
/// letter from `a`, row number from 0 (e.g. `Xh7`).
pub fn pv_move(color: Color, mv: Point) -> String {
    format!(
        "{}{}{}",
        if color == Color::Black { 'X' } else { 'O' },
        column_letter(mv.x()),
        mv.y()
    )
}

/// How moves are written in text (summary lines, `INFO evaluate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notation {
    /// The extended Gomocup PV notation of [`pv_move`] (`Xh7`).
    Gomocup,
    /// A board diagram's labels: column letter from the left, row number
    /// from the bottom (`Xh8` is the centre of 15x15), as Yixin-Board draws
    /// them. Yixin-Board sends `row,col` where Piskvork sends `col,row`, so
    /// with `transposed` a point's x is the GUI's row and its y the column.
    Labels { size: BoardSize, transposed: bool },
}

impl Notation {
    /// A cell: `h8` (labels) or `7,7` (Gomocup's numbers).
    pub fn cell(self, mv: Point) -> String {
        match self {
            Notation::Gomocup => mv.to_string(),
            Notation::Labels { size, transposed } => {
                let (column, row, rows) = if transposed {
                    (mv.y(), mv.x(), size.width() as u8)
                } else {
                    (mv.x(), mv.y(), size.height() as u8)
                };
                format!("{}{}", column_letter(column), rows.saturating_sub(row))
            }
        }
    }

    /// A line of moves, `first` to play the first, each with a leading blank.
    pub fn line(self, first: Color, moves: &[Point]) -> String {
        let mut text = String::new();
        let mut color = first;
        for &mv in moves {
            text.push(' ');
            text.push_str(&self.stone(color, mv));
            color = color.opponent();
        }
        text
    }

    /// A stone of `color` on `mv`, for a line of moves.
    pub fn stone(self, color: Color, mv: Point) -> String {
        match self {
            Notation::Gomocup => pv_move(color, mv),
            Notation::Labels { .. } => format!(
                "{}{}",
                if color == Color::Black { 'X' } else { 'O' },
                self.cell(mv)
            ),
        }
    }
}

/// Column letters from `a`; beyond `z` (boards wider than 26) from `A`.
pub fn column_letter(x: u8) -> char {
    if x < 26 {
        (b'a' + x) as char
    } else {
        (b'A' + x - 26) as char
    }
}

impl SearchResult {
    /// Evaluations per second.
    pub fn nodes_per_second(&self) -> u64 {
        (self.counters.playouts as f64 / self.elapsed.as_secs_f64().max(1e-3)) as u64
    }

    /// The `ev` field: the expectation in %, or W/L/D with the plies to the end.
    pub fn ev_text(&self) -> String {
        self.proven.ev_text(self.expectation)
    }

    /// The summary line sent after a search (without the `MESSAGE` word):
    /// `depth 1-D ev E winrate W drawrate D n N n/s S tm T [refuted X,Y ...] pv ...`.
    pub fn summary(&self) -> String {
        self.summary_in(Notation::Gomocup)
    }

    /// [`SearchResult::summary`] with the moves in `notation`.
    pub fn summary_in(&self, notation: Notation) -> String {
        let mut line = format!(
            "depth 1-{} ev {} winrate {:.1} drawrate {:.1} n {} n/s {} tm {}",
            self.pv.len().max(1),
            self.ev_text(),
            100.0 * self.wdl[0],
            100.0 * self.wdl[1],
            self.counters.playouts,
            self.nodes_per_second(),
            self.elapsed.as_millis()
        );
        if !self.refuted.is_empty() {
            // Before the PV, which GUIs read to the end of the line.
            let refuted: Vec<String> = self.refuted.iter().map(|&p| notation.cell(p)).collect();
            let _ = write!(line, " refuted {}", refuted.join(" "));
        }
        line.push_str(" pv");
        line.push_str(&notation.line(self.side_to_move, &self.pv));
        line
    }
}
