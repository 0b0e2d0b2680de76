//! Tree nodes and edges.
//!
//! The tree is a graph: a node is a position (whatever the move order that
//! reached it), kept in the node cache; an edge is a move with its prior and
//! its own statistics. Edge statistics are from the point of view of the
//! player making the move; node statistics from the side to move there.

use parking_lot::Mutex;

use crate::game::{Board, BoardSize, CellSet, Color, Point, Rule};

/// A game-theoretic value proven by the rules or the solver, with the
/// number of plies to the end of the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Proven {
    #[default]
    Unknown,
    Win(u16),
    Loss(u16),
    Draw,
}

impl Proven {
    /// The value of the move leading to a node with this value, for the
    /// player making it: one ply longer, the other way round.
    pub fn for_parent(self) -> Proven {
        match self {
            Proven::Unknown => Proven::Unknown,
            Proven::Win(d) => Proven::Loss(d.saturating_add(1)),
            Proven::Loss(d) => Proven::Win(d.saturating_add(1)),
            Proven::Draw => Proven::Draw,
        }
    }

    pub fn is_known(self) -> bool {
        self != Proven::Unknown
    }

    /// Win, draw and loss probabilities of a proven value.
    pub fn wdl(self) -> Option<[f32; 3]> {
        match self {
            Proven::Unknown => None,
            Proven::Win(_) => Some([1.0, 0.0, 0.0]),
            Proven::Draw => Some([0.0, 1.0, 0.0]),
            Proven::Loss(_) => Some([0.0, 0.0, 1.0]),
        }
    }

    /// The expected score (a win 1, a draw a half) of a position or move
    /// with this value and the searched `wdl`: the proof when there is one,
    /// else the search's expectation.
    pub fn expected_score(self, wdl: [f32; 3]) -> f32 {
        match self {
            Proven::Win(_) => 1.0,
            Proven::Loss(_) => 0.0,
            Proven::Draw => 0.5,
            Proven::Unknown => crate::nn::expectation(wdl),
        }
    }
}

/// A move from a node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Edge {
    pub mv: Point,
    /// Network policy, renormalised over the node's edges.
    pub prior: f32,
    /// Completed visits through this edge.
    pub visits: u32,
    /// Descents under way through this edge (counted as losses meanwhile).
    pub virtual_visits: u32,
    /// Sums of the win and draw probabilities backed up through this edge,
    /// for the player making the move (losses are the rest of `visits`).
    pub win_sum: f32,
    pub draw_sum: f32,
    /// The proven value of the move for the player making it.
    pub proven: Proven,
}

impl Edge {
    pub fn new(mv: Point, prior: f32) -> Edge {
        Edge {
            mv,
            prior,
            visits: 0,
            virtual_visits: 0,
            win_sum: 0.0,
            draw_sum: 0.0,
            proven: Proven::Unknown,
        }
    }

    /// Mean win, draw, loss over the completed visits.
    pub fn wdl(&self) -> [f32; 3] {
        if let Some(wdl) = self.proven.wdl() {
            return wdl;
        }
        if self.visits == 0 {
            return [0.0, 0.0, 0.0];
        }
        let n = self.visits as f32;
        let (w, d) = (self.win_sum / n, self.draw_sum / n);
        [w, d, (1.0 - w - d).max(0.0)]
    }
}

/// Where a node is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeState {
    /// Created, not evaluated.
    Fresh,
    /// One descent is evaluating it; others must go elsewhere.
    Expanding,
    /// Evaluated, with its edges.
    Expanded,
}

/// The mutable part of a node.
#[derive(Debug)]
pub struct NodeData {
    pub state: NodeState,
    pub edges: Vec<Edge>,
    /// Whether the edges cover every legal move (only then can the node be
    /// proven lost by its edges).
    pub complete: bool,
    /// Whether the priors come from the policy averaged over the board's
    /// symmetries (`root_symmetries`), so that a root need not be
    /// evaluated so again.
    pub averaged_priors: bool,
    /// Completed visits (evaluations backed up through the node).
    pub visits: u32,
    pub virtual_visits: u32,
    /// Sums of win and draw probabilities for the side to move here.
    pub win_sum: f32,
    pub draw_sum: f32,
    /// Sums of the balances (win less loss probability) backed up and of
    /// their squares, for the spread of the node's values. In f64: the
    /// variance is a small difference of large sums, which f32 rounds
    /// away at the visits a root reaches.
    pub balance_sum: f64,
    pub balance_sq_sum: f64,
    pub proven: Proven,
    /// For a win proven by the solver: its line, first move first.
    pub proof: Option<Box<[Point]>>,
    /// The network's evaluation, for the side to move.
    pub nn_wdl: [f32; 3],
}

impl NodeData {
    /// Counts a completed visit that backed up `wdl` (for the side to
    /// move here) and releases its virtual visit.
    pub fn record_visit(&mut self, wdl: [f32; 3]) {
        self.visits += 1;
        self.virtual_visits = self.virtual_visits.saturating_sub(1);
        self.win_sum += wdl[0];
        self.draw_sum += wdl[1];
        let balance = f64::from(wdl[0] - wdl[2]);
        self.balance_sum += balance;
        self.balance_sq_sum += balance * balance;
    }

    fn new() -> NodeData {
        NodeData {
            state: NodeState::Fresh,
            edges: Vec::new(),
            complete: false,
            averaged_priors: false,
            visits: 0,
            virtual_visits: 0,
            win_sum: 0.0,
            draw_sum: 0.0,
            balance_sum: 0.0,
            balance_sq_sum: 0.0,
            proven: Proven::Unknown,
            proof: None,
            nn_wdl: [0.0; 3],
        }
    }

    /// Mean win, draw, loss for the side to move.
    pub fn wdl(&self) -> [f32; 3] {
        if let Some(wdl) = self.proven.wdl() {
            return wdl;
        }
        if self.visits == 0 {
            return self.network_wdl();
        }
        let n = self.visits as f32;
        let (w, d) = (self.win_sum / n, self.draw_sum / n);
        [w, d, (1.0 - w - d).max(0.0)]
    }

    /// The network's win, draw, loss for the side to move; even (half won,
    /// half lost) before the network has answered: a search stopped before
    /// its root's first evaluation knows nothing, and its zeros would read
    /// as a lost position (a swap decision would take the other colour).
    pub fn network_wdl(&self) -> [f32; 3] {
        if self.nn_wdl == [0.0; 3] {
            [0.5, 0.0, 0.5]
        } else {
            self.nn_wdl
        }
    }

    /// Whether this node's proof holds only through moves in `excluded`
    /// (Yixin-Board's yxblock, a refused move): a win whose proof's first
    /// move and every edge proven won are excluded, or a draw proven from
    /// its edges whose every drawing edge is (the moves left then lose).
    /// A draw proven otherwise (no five left for either side) holds
    /// whatever is played.
    pub fn proof_blocked_by(&self, excluded: &CellSet) -> bool {
        let allowed = |mv: Point| !excluded.contains(mv);
        if excluded.is_empty() {
            return false;
        }
        match self.proven {
            Proven::Win(_) => {
                !self
                    .proof
                    .as_ref()
                    .and_then(|proof| proof.first())
                    .is_some_and(|&mv| allowed(mv))
                    && !self
                        .edges
                        .iter()
                        .any(|e| matches!(e.proven, Proven::Win(_)) && allowed(e.mv))
            }
            Proven::Draw => {
                let drawing = |e: &&Edge| e.proven == Proven::Draw;
                self.edges.iter().filter(drawing).any(|e| !allowed(e.mv))
                    && !self.edges.iter().filter(drawing).any(|e| allowed(e.mv))
            }
            Proven::Loss(_) | Proven::Unknown => false,
        }
    }

    /// Recomputes the proven value from the edges (MCTS-solver): won if any
    /// move wins (the shortest), lost if every move of a complete edge list
    /// loses (the longest), drawn if the best of a complete list draws.
    pub fn prove_from_edges(&mut self) {
        if self.proven.is_known() || self.edges.is_empty() {
            return;
        }
        let mut shortest_win: Option<u16> = None;
        let mut all_known = true;
        let mut any_draw = false;
        let mut longest_loss = 0;
        for edge in &self.edges {
            match edge.proven {
                Proven::Win(d) => shortest_win = Some(shortest_win.map_or(d, |s| s.min(d))),
                Proven::Loss(d) => longest_loss = longest_loss.max(d),
                Proven::Draw => any_draw = true,
                Proven::Unknown => all_known = false,
            }
        }
        if let Some(d) = shortest_win {
            self.proven = Proven::Win(d);
        } else if all_known && self.complete {
            self.proven = if any_draw {
                Proven::Draw
            } else {
                Proven::Loss(longest_loss)
            };
        }
    }
}

/// A position's identity beyond its hash: its stones, sorted, and the side
/// to move. Two positions with the same hash are the same node only if
/// their keys are equal.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PositionKey {
    stones: Box<[u16]>,
    side: Color,
    /// The same stones on another board, or under another rule, are
    /// another position.
    size: BoardSize,
    rule: Rule,
}

impl PositionKey {
    pub fn of(board: &Board) -> PositionKey {
        let mut stones: Vec<u16> = board
            .history()
            .iter()
            .map(|&(p, c)| Self::stone(p, c))
            .collect();
        stones.sort_unstable();
        PositionKey {
            stones: stones.into_boxed_slice(),
            side: board.side_to_move(),
            size: board.size(),
            rule: board.rule(),
        }
    }

    /// The cache's hash of a position: the board's Zobrist hash mixed with
    /// its size and rule (an empty 15x15 and an empty 20x20 board have the
    /// same stones, none).
    pub fn hash_of(board: &Board) -> u64 {
        let size = board.size();
        let extra = (size.width() as u64) << 8
            | (size.height() as u64) << 16
            | (board.rule().index() as u64) << 24;
        board.hash() ^ extra.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    fn stone(p: Point, c: Color) -> u16 {
        p.index() as u16 | (c.index() as u16) << 10
    }

    /// Whether `board` holds this position, without building its key (a
    /// descent looks a node up at every step). A position's stones are on
    /// distinct cells, so as many stones, each of them here, is the same set.
    pub fn matches(&self, board: &Board) -> bool {
        self.side == board.side_to_move()
            && self.size == board.size()
            && self.rule == board.rule()
            && self.stones.len() == board.history().len()
            && board
                .history()
                .iter()
                .all(|&(p, c)| self.stones.binary_search(&Self::stone(p, c)).is_ok())
    }

    pub fn stone_count(&self) -> usize {
        self.stones.len()
    }

    /// Same board size and rule.
    pub fn same_game_as(&self, other: &PositionKey) -> bool {
        self.size == other.size && self.rule == other.rule
    }

    pub(crate) fn stones(&self) -> &[u16] {
        &self.stones
    }

    pub fn heap_bytes(&self) -> usize {
        self.stones.len() * std::mem::size_of::<u16>()
    }
}

/// A position in the search graph.
#[derive(Debug)]
pub struct Node {
    key: PositionKey,
    pub data: Mutex<NodeData>,
}

impl Node {
    pub fn new(key: PositionKey) -> Node {
        Node {
            key,
            data: Mutex::new(NodeData::new()),
        }
    }

    pub fn key(&self) -> &PositionKey {
        &self.key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(proven: Proven) -> Edge {
        let mut e = Edge::new(Point::new(0, 0).unwrap(), 0.1);
        e.proven = proven;
        e
    }

    #[test]
    fn a_proof_decides_the_expected_score_and_the_search_the_rest() {
        let wdl = [0.3, 0.6, 0.1];
        assert_eq!(Proven::Win(3).expected_score(wdl), 1.0);
        assert_eq!(Proven::Loss(2).expected_score(wdl), 0.0);
        assert_eq!(Proven::Draw.expected_score([0.9, 0.0, 0.1]), 0.5);
        assert!((Proven::Unknown.expected_score(wdl) - 0.6).abs() < 1e-6);
    }

    /// A node the network has not answered for is even, not lost.
    #[test]
    fn an_unevaluated_node_is_even() {
        let mut d = NodeData::new();
        assert_eq!(Proven::Unknown.expected_score(d.wdl()), 0.5);
        d.nn_wdl = [0.2, 0.1, 0.7];
        assert_eq!(d.wdl(), [0.2, 0.1, 0.7]);
    }

    #[test]
    fn solver_rules() {
        let mut d = NodeData::new();
        d.edges = vec![
            edge(Proven::Loss(3)),
            edge(Proven::Unknown),
            edge(Proven::Win(5)),
            edge(Proven::Win(3)),
        ];
        d.prove_from_edges();
        assert_eq!(d.proven, Proven::Win(3), "the shortest win");

        let mut d = NodeData::new();
        d.edges = vec![edge(Proven::Loss(3)), edge(Proven::Loss(9))];
        d.prove_from_edges();
        assert_eq!(
            d.proven,
            Proven::Unknown,
            "incomplete edge list proves no loss"
        );
        d.complete = true;
        d.prove_from_edges();
        assert_eq!(d.proven, Proven::Loss(9), "the longest resistance");

        let mut d = NodeData::new();
        d.complete = true;
        d.edges = vec![edge(Proven::Loss(3)), edge(Proven::Draw)];
        d.prove_from_edges();
        assert_eq!(d.proven, Proven::Draw);

        let mut d = NodeData::new();
        d.complete = true;
        d.edges = vec![edge(Proven::Loss(3)), edge(Proven::Unknown)];
        d.prove_from_edges();
        assert_eq!(d.proven, Proven::Unknown);
        assert_eq!(Proven::Win(4).for_parent(), Proven::Loss(5));
        assert_eq!(Proven::Loss(0).for_parent(), Proven::Win(1));
    }
}
