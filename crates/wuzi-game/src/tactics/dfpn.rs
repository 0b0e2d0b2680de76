//! Depth-first proof-number search (df-pn, Nagai 2002) over the threat
//! space: the VCT solver.
//!
//! The nodes and moves are those of the depth-first solver in `solver.rs`
//! (attacker threats; the defender's forced block, or the exact defence set
//! against a threat to make an unstoppable four plus its counter-fours), so
//! a proof is the same kind of proof. What differs is the order: df-pn
//! always works on the most-proving node, the one whose proof needs the
//! fewest further leaves, so it follows fours and threes that leave the
//! defender few answers and drops lines that keep widening. Measured on
//! 1,082 positions of our lost ladder games (both attackers, up to 11 moves
//! before each blunder): within 1,600 nodes it finds 372 wins where the
//! depth-first search finds 296, within 50,000 nodes 465 against 425, in
//! less time per solve; on the 34 positions after a blunder where PentaZen
//! announced a threat win, 15 against 7 within 2,000 nodes. Its wins are
//! not the shortest (it stops at the first proof).
//!
//! Each position's depth left (attacker moves) is a function of the
//! position within one solve, since every attacker stone costs one, so the
//! table needs no depth in its key.

use crate::game::{Board, Color, Point, Threat, ZobristMap};
use crate::tactics::solver::{
    attacker_moves, main_line, vct_replies, SolveLimits, SolveReport, ThreatKind,
};
use crate::tactics::threats::{five_defence, FiveDefence};

/// Proof and disproof numbers saturate here: a proven or disproven node.
const INFINITE: u32 = u32::MAX / 4;

/// A child not yet searched, as the parent sees it.
#[derive(Clone, Copy, Debug)]
struct Child {
    mv: Point,
    hash: u64,
    /// Initial proof and disproof numbers: a four or a double threat
    /// leaves the defender fewer answers than a single three, so its proof
    /// looks cheaper.
    pn: u32,
    dn: u32,
}

/// What is known of a position.
#[derive(Debug)]
struct Entry {
    pn: u32,
    dn: u32,
    /// Proven (pn 0): plies to the attacker's five; `best` is the winning
    /// move at an attacker node, the longest-resisting defence at a
    /// defender node, or `None` where the win needs no particular move.
    plies: u16,
    best: Option<Point>,
    /// The moves, once the node has been expanded.
    children: Option<Box<[Child]>>,
}

/// What the rules say of a node before any search.
enum Expansion {
    Won { plies: u16, best: Option<Point> },
    Lost,
    Moves(Vec<Child>),
}

pub(crate) struct Dfpn {
    attacker: Color,
    kind: ThreatKind,
    max_nodes: u64,
    nodes: u64,
    out_of_budget: bool,
    table: ZobristMap<Entry>,
}

/// Threshold for the best child's φ: above the second best's δ by half
/// (the "1 + ε" trick, Pawlewicz and Lew 2007), so that the search does not
/// switch back and forth between two children of almost equal promise. On
/// the blunder positions ε = 0.5 found 17 of 25 wins within 20,000 nodes,
/// ε = 0.25 15, ε = 0 11.
fn second_threshold(second: u32) -> u32 {
    second
        .saturating_add(1)
        .max(second.saturating_add(second / 2))
        .min(INFINITE)
}

impl Dfpn {
    /// Runs a solve with the attacker to move on `board` (the caller hands
    /// it the move).
    pub(crate) fn run(board: &mut Board, kind: ThreatKind, limits: SolveLimits) -> SolveReport {
        let mut search = Dfpn {
            attacker: board.side_to_move(),
            kind,
            max_nodes: limits.max_nodes,
            nodes: 0,
            out_of_budget: false,
            table: ZobristMap::default(),
        };
        let (pn, _dn) = search.mid(board, limits.max_depth, INFINITE, INFINITE);
        let win = (pn == 0).then(|| search.main_line(board));
        SolveReport {
            win,
            nodes: search.nodes,
            complete: !search.out_of_budget,
        }
    }

    fn is_attacker_node(&self, board: &Board) -> bool {
        board.side_to_move() == self.attacker
    }

    /// (pn, dn) of a position: the table's or the child's initial values.
    fn numbers(&self, child: &Child) -> (u32, u32) {
        self.table
            .get(&child.hash)
            .map_or((child.pn, child.dn), |e| (e.pn, e.dn))
    }

    fn store(&mut self, hash: u64, pn: u32, dn: u32, proof: Option<(u16, Option<Point>)>) {
        let entry = self.table.entry(hash).or_insert(Entry {
            pn,
            dn,
            plies: 0,
            best: None,
            children: None,
        });
        entry.pn = pn;
        entry.dn = dn;
        if let Some((plies, best)) = proof {
            entry.plies = plies;
            entry.best = best;
        }
        if pn == 0 || dn == 0 {
            entry.children = None;
        }
    }

    /// Multiple-iterative deepening at one node: searches below it until its
    /// proof or disproof number reaches its threshold. Returns (pn, dn).
    fn mid(&mut self, board: &mut Board, depth: u8, th_pn: u32, th_dn: u32) -> (u32, u32) {
        let hash = board.hash();
        if let Some(e) = self.table.get(&hash) {
            if e.pn == 0 || e.dn == 0 {
                return (e.pn, e.dn);
            }
        }
        if self.nodes >= self.max_nodes {
            self.out_of_budget = true;
            return self.table.get(&hash).map_or((1, 1), |e| (e.pn, e.dn));
        }
        self.nodes += 1;
        let attacker_node = self.is_attacker_node(board);
        let cached = self.table.get_mut(&hash).and_then(|e| e.children.take());
        let children: Box<[Child]> = match cached {
            Some(children) => children,
            None => match self.expand(board, depth, attacker_node) {
                Expansion::Won { plies, best } => {
                    self.store(hash, 0, INFINITE, Some((plies, best)));
                    return (0, INFINITE);
                }
                Expansion::Lost => {
                    self.store(hash, INFINITE, 0, None);
                    return (INFINITE, 0);
                }
                Expansion::Moves(moves) => moves.into_boxed_slice(),
            },
        };
        // Seen from the player to move here: φ is the number that reaching
        // a win of ours needs, δ the other; a child's δ is our φ's term.
        let (th_phi, th_delta) = if attacker_node {
            (th_pn, th_dn)
        } else {
            (th_dn, th_pn)
        };
        let child_depth = if attacker_node { depth - 1 } else { depth };
        // The children's numbers, read once: between visits only the child
        // just searched changes (a transposition reached from elsewhere may
        // leave a sibling's copy stale until the next visit here, which
        // costs efficiency, never soundness: proofs are checked at storing).
        let mut numbers: Vec<(u32, u32)> = children.iter().map(|c| self.numbers(c)).collect();
        let (phi, delta) = loop {
            let mut phi = INFINITE;
            let mut second = INFINITE;
            let mut delta: u32 = 0;
            let mut delta_max: u32 = 0;
            let mut open: u32 = 0;
            let mut best = 0;
            let mut best_phi = 0;
            for (i, &(pn, dn)) in numbers.iter().enumerate() {
                // The child's own (φ, δ): its mover is our opponent.
                let (c_phi, c_delta) = if attacker_node { (dn, pn) } else { (pn, dn) };
                delta = delta.saturating_add(c_phi).min(INFINITE);
                delta_max = delta_max.max(c_phi);
                open += (c_phi > 0) as u32;
                if c_delta < phi {
                    second = phi;
                    phi = c_delta;
                    best = i;
                    best_phi = c_phi;
                } else if c_delta < second {
                    second = c_delta;
                }
            }
            // At a defender node δ is the proof number. Summed over the
            // replies it counts a transposed sub-proof once per path to it,
            // and threat lines transpose all the time; the weak proof number
            // (the largest child's plus one per other open reply, Ueda et
            // al. 2008) does not. Measured with the commit: more wins within
            // 1,600-8,000 nodes, 10 of the 16 first blunders within 200,000
            // nodes against 7. At attacker nodes the sum did better.
            let weak = !attacker_node;
            if weak {
                delta = delta_max
                    .saturating_add(open.saturating_sub(1))
                    .min(INFINITE);
            }
            if phi >= th_phi || delta >= th_delta || self.out_of_budget {
                break (phi, delta);
            }
            let child_th_phi = if weak {
                th_delta.saturating_sub(open.saturating_sub(1))
            } else {
                best_phi.saturating_add(th_delta - delta).min(INFINITE)
            };
            let child_th_delta = th_phi.min(second_threshold(second));
            let (c_th_pn, c_th_dn) = if attacker_node {
                (child_th_delta, child_th_phi)
            } else {
                (child_th_phi, child_th_delta)
            };
            board.play_unchecked(children[best].mv);
            numbers[best] = self.mid(board, child_depth, c_th_pn, c_th_dn);
            board.undo();
        };
        let (pn, dn) = if attacker_node {
            (phi, delta)
        } else {
            (delta, phi)
        };
        let proof = (pn == 0).then(|| self.proof_of(&children, attacker_node));
        self.store(hash, pn, dn, proof);
        if pn != 0 && dn != 0 {
            if let Some(e) = self.table.get_mut(&hash) {
                e.children = Some(children);
            }
        }
        (pn, dn)
    }

    /// Plies and best move of a proven node, from its proven children: the
    /// shortest win at an attacker node, the longest defence at a defender
    /// node.
    fn proof_of(&self, children: &[Child], attacker_node: bool) -> (u16, Option<Point>) {
        let proven = children.iter().filter_map(|c| {
            self.table
                .get(&c.hash)
                .filter(|e| e.pn == 0)
                .map(|e| (e.plies, c.mv))
        });
        let chosen = if attacker_node {
            proven.min_by_key(|&(plies, _)| plies)
        } else {
            proven.max_by_key(|&(plies, _)| plies)
        };
        chosen.map_or((0, None), |(plies, mv)| (plies + 1, Some(mv)))
    }

    fn expand(&self, board: &mut Board, depth: u8, attacker_node: bool) -> Expansion {
        if attacker_node {
            self.expand_attack(board, depth)
        } else {
            self.expand_defence(board, depth)
        }
    }

    fn expand_attack(&self, board: &mut Board, depth: u8) -> Expansion {
        let attacker = self.attacker;
        if let Some(five) = board.winning_moves(attacker).next() {
            return Expansion::Won {
                plies: 1,
                best: Some(five),
            };
        }
        if depth == 0 {
            return Expansion::Lost;
        }
        let moves = attacker_moves(board, attacker, self.kind);
        if moves.is_empty() {
            return Expansion::Lost;
        }
        let children = moves
            .into_iter()
            .map(|mv| {
                // A four leaves one answer and a double threat few; a
                // single open three leaves three or more. (On the 1,082
                // positions of the commit: 372 wins within 1,600 nodes
                // against 361 with 2 for every three.)
                let single_three = board.five_cells_after(mv, attacker) == 0
                    && board.threat(mv, attacker) < Threat::ThreeThree;
                let pn = if single_three { 3 } else { 1 };
                Child {
                    mv,
                    hash: board.hash_after(mv),
                    pn,
                    dn: 1,
                }
            })
            .collect();
        Expansion::Moves(children)
    }

    fn expand_defence(&self, board: &mut Board, depth: u8) -> Expansion {
        let attacker = self.attacker;
        let defender = attacker.opponent();
        if board.winning_moves(defender).next().is_some() {
            return Expansion::Lost;
        }
        let replies = match five_defence(board, attacker) {
            FiveDefence::Unstoppable => {
                return Expansion::Won {
                    plies: 2,
                    best: None,
                }
            }
            FiveDefence::Blocks(blocks) => blocks,
            FiveDefence::NoFive => {
                if self.kind == ThreatKind::Vcf || depth == 0 {
                    return Expansion::Lost;
                }
                let Some(replies) = vct_replies(board, attacker) else {
                    return Expansion::Lost;
                };
                if replies.is_empty() {
                    // Nothing stops the unstoppable four: four, any, five.
                    return Expansion::Won {
                        plies: 4,
                        best: None,
                    };
                }
                replies
            }
        };
        let children = replies
            .into_iter()
            .map(|mv| Child {
                mv,
                hash: board.hash_after(mv),
                pn: 1,
                dn: 1,
            })
            .collect();
        Expansion::Moves(children)
    }

    /// Follows the proven entries from the root to the five.
    fn main_line(&self, board: &mut Board) -> Vec<Point> {
        main_line(board, self.attacker, |hash| {
            self.table
                .get(&hash)
                .filter(|e| e.pn == 0)
                .and_then(|e| e.best)
        })
    }
}
