//! Choosing edges: PUCT while searching, and the move to play at the end.

use serde::{Deserialize, Serialize};

use crate::game::CellSet;
use crate::search::node::{Edge, NodeData, Proven};

/// Settings of the selection rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PuctParams {
    /// Exploration constant at a node's first visits (see [`Self::exploration`]).
    pub c_puct: f32,
    /// Growth of the exploration constant with the node's visits.
    pub c_puct_log: f32,
    /// The visits at which the constant has grown by `c_puct_log * ln 2`.
    pub c_puct_base: f32,
    /// Weight of the node's value spread in its exploration constant (see
    /// [`Self::spread_factor`]); 0 leaves the constant as it is.
    pub c_puct_stdev_scale: f32,
    /// The spread a node is assumed to have before its visits say
    /// otherwise, and the spread at which the factor is 1.
    pub c_puct_stdev_prior: f32,
    /// First-play urgency: an unvisited move is valued at the parent's value
    /// minus this, scaled by the searched prior mass (see
    /// [`first_play_urgency`]).
    pub fpu_reduction: f32,
    /// Weight of a draw in the utility (1 defensive, 0.5 classic, 0 offensive).
    pub draw_weight: f32,
    /// A move's value while searching is lowered by this times its draw
    /// rate times the parent's chance of a decisive result (see
    /// [`select_edge`]); 0 leaves it as it is.
    pub draw_penalty: f32,
}

impl PuctParams {
    /// The exploration constant of a node with `visits` visits:
    /// `c_puct + c_puct_log * ln(1 + visits / c_puct_base)`, the form of
    /// AlphaZero's later versions, KataGo and Rapfi. A node seen a few times
    /// follows its best moves; a heavily searched one, where the priors'
    /// first choices have been looked at, widens its search.
    #[inline]
    pub fn exploration(&self, visits: u32) -> f32 {
        if self.c_puct_log == 0.0 {
            self.c_puct
        } else {
            self.c_puct + self.c_puct_log * (visits as f32 / self.c_puct_base).ln_1p()
        }
    }

    /// KataGo's dynamic exploration: the constant is scaled by
    /// `1 + c_puct_stdev_scale * (stdev / c_puct_stdev_prior - 1)`, where
    /// stdev is the spread of the balances (win less loss) backed up
    /// through the node, pulled towards `c_puct_stdev_prior` while it has
    /// few visits ([`SPREAD_PRIOR_WEIGHT`] of them). A
    /// node whose values agree (one side clearly ahead, or a quiet
    /// position) explores less; one whose lines disagree explores more.
    #[inline]
    pub fn spread_factor(&self, node: &NodeData) -> f32 {
        if self.c_puct_stdev_scale == 0.0 {
            return 1.0;
        }
        let prior = self.c_puct_stdev_prior;
        let stdev = if node.visits <= 1 {
            prior
        } else {
            let n = f64::from(node.visits);
            let mean = node.balance_sum / n;
            let mean_sq = mean * mean;
            // Rounding may leave the mean of squares below the square of
            // the mean.
            let sq_avg = (node.balance_sq_sum / n).max(mean_sq);
            let prior = f64::from(prior);
            let weight = f64::from(SPREAD_PRIOR_WEIGHT);
            let pooled = ((mean_sq + prior * prior) * weight + sq_avg * n) / (weight + n - 1.0);
            (pooled - mean_sq).max(0.0).sqrt() as f32
        };
        (1.0 + self.c_puct_stdev_scale * (stdev / prior - 1.0)).max(0.0)
    }
}

/// The visits that the assumed spread weighs (KataGo's
/// `cpuctUtilityStdevPriorWeight`).
const SPREAD_PRIOR_WEIGHT: f32 = 2.0;

/// How the move to play is picked from the root's statistics (`[search]
/// final_move`). Proven wins and losses decide first under either rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub enum FinalMove {
    /// The best lower confidence bound of the utility among the moves with
    /// at least a tenth of the most visits (and at least five, where the
    /// most visited has them): a move that won its few visits on luck is
    /// not played over one that held up under many.
    #[serde(rename = "lcb")]
    LowerConfidenceBound,
    /// The most visited move (ties: the higher prior), as AlphaZero.
    #[serde(rename = "visits")]
    MostVisits,
}

/// What [`choose_edge`] needs from the configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MoveChoice {
    pub rule: FinalMove,
    /// Weight of a draw in the utility.
    pub draw_weight: f32,
}

/// The utility of win/draw/loss probabilities, in [0, 1].
#[inline]
pub fn utility(wdl: [f32; 3], draw_weight: f32) -> f32 {
    wdl[0] + draw_weight * wdl[1]
}

/// A network prior raised to `sharpen` (the inverse of the policy
/// temperature); the caller renormalises over the legal moves.
#[inline]
pub fn tempered_prior(policy: f32, sharpen: f32) -> f32 {
    if sharpen == 1.0 {
        policy
    } else {
        policy.max(0.0).powf(sharpen)
    }
}

/// The value an unvisited move is given: the parent's utility less
/// `reduction` scaled by the square root of the prior mass of the moves
/// already searched (as lc0 and KataGo do). While only the first choices
/// have been tried, the others are not yet assumed much worse than the
/// parent. Won by SPRT against the flat reduction (docs/tuning.md).
#[inline]
pub fn first_play_urgency(parent_utility: f32, reduction: f32, visited_policy: f32) -> f32 {
    (parent_utility - reduction * visited_policy.max(0.0).sqrt()).max(0.0)
}

/// The edge a descent should follow (PUCT with virtual visits counted as
/// losses), or `None` when the node has no edges (or all are `excluded`).
///
/// With a `draw_penalty`, a move that tends to a draw is searched as if it
/// were worth less, the more so where the parent is decisive: the search
/// then spends its visits on the lines that decide the game (Rapfi's draw
/// utility penalty). An unvisited move is taken to draw as its parent does.
/// Only the selection sees it: the move to play and the values backed up
/// are the plain ones.
pub fn select_edge(
    node: &NodeData,
    params: PuctParams,
    excluded: Option<&CellSet>,
) -> Option<usize> {
    let (mut total, mut visited_policy) = (0u32, 0f32);
    for e in &node.edges {
        let n = e.visits + e.virtual_visits;
        total += n;
        if n > 0 {
            visited_policy += e.prior;
        }
    }
    let sqrt_total = (total.max(1) as f32).sqrt();
    let c_puct = params.exploration(total) * params.spread_factor(node);
    let parent_wdl = node.wdl();
    let parent_utility = utility(parent_wdl, params.draw_weight);
    let parent_draw = parent_wdl[1];
    // Per unit of a move's draw rate.
    let draw_cost = params.draw_penalty * (1.0 - parent_draw);
    let fpu = first_play_urgency(parent_utility, params.fpu_reduction, visited_policy)
        - draw_cost * parent_draw;
    let mut best = None;
    let mut best_score = f32::NEG_INFINITY;
    for (i, edge) in node.edges.iter().enumerate() {
        if excluded.is_some_and(|set| set.contains(edge.mv)) {
            continue;
        }
        // Beyond any PUCT score, and small enough for an f32 to keep whole
        // plies apart (at 1e9 its steps are 64: every distance tied).
        let score = match edge.proven {
            // A proven win ends the search of this node anyway; take it.
            Proven::Win(d) => 1e6 - d as f32,
            // Only when every move loses: the longest resistance.
            Proven::Loss(d) => -1e6 + d as f32,
            _ => {
                let n = edge.visits + edge.virtual_visits;
                let q = match edge.proven {
                    Proven::Draw => params.draw_weight - draw_cost,
                    _ if n == 0 => fpu,
                    _ => {
                        (edge.win_sum + (params.draw_weight - draw_cost) * edge.draw_sum) / n as f32
                    }
                };
                q + c_puct * edge.prior * sqrt_total / (1 + n) as f32
            }
        };
        if score > best_score {
            best_score = score;
            best = Some(i);
        }
    }
    best
}

/// A pessimistic estimate of an edge's utility: its mean less about two
/// standard errors, so that a move with few visits is not chosen on luck.
pub fn lower_confidence_bound(edge: &Edge, draw_weight: f32) -> f32 {
    match edge.proven {
        Proven::Win(d) => 2.0 - d as f32 * 1e-4,
        // Below even an unvisited move (-5 as an ineligible one): a move
        // nobody has looked at may hold, a proven loss does not.
        Proven::Loss(d) => -10.0 + d as f32 * 1e-4,
        Proven::Draw => draw_weight,
        Proven::Unknown if edge.visits == 0 => -1.0,
        Proven::Unknown => lower_bound(utility(edge.wdl(), draw_weight), edge.visits),
    }
}

/// The mean `q` (in [0, 1]) of `visits` values less 1.96 standard errors,
/// the variance taken as q(1-q) and at least 0.01.
pub fn lower_bound(q: f32, visits: u32) -> f32 {
    let variance = (q * (1.0 - q)).max(0.01);
    q - 1.96 * (variance / visits.max(1) as f32).sqrt()
}

/// Visits a move needs to be played by its lower bound when the most
/// visited move has at least as many (a tenth of the most, past 50).
const MIN_LCB_VISITS: u32 = 5;

/// The move to play: the shortest proven win; else by the [`FinalMove`]
/// rule among the moves not proven lost; when every move is proven lost,
/// the longest resistance.
pub fn choose_edge(
    node: &NodeData,
    choice: MoveChoice,
    excluded: Option<&CellSet>,
) -> Option<usize> {
    let edges = &node.edges;
    let allowed = |i: &usize| !excluded.is_some_and(|set| set.contains(edges[*i].mv));
    if !(0..edges.len()).any(|i| allowed(&i)) {
        return None;
    }
    // The bar for "enough visits" among the moves that may be played: a
    // move proven lost or excluded, often the most visited, sets no bar.
    let max_visits = (0..edges.len())
        .filter(|i| allowed(i) && !matches!(edges[*i].proven, Proven::Loss(_)))
        .map(|i| edges[i].visits)
        .max()
        .unwrap_or(0);
    // A tenth of the most visits, and in a small search (under fifty
    // visits for the best) at least a few: one or two values are no
    // spread to bound, and a move the search barely tried would be played
    // on its network value alone.
    let threshold = (max_visits / 10).max(max_visits.min(MIN_LCB_VISITS)).max(1);
    // Compared first; equal scores fall to visits, then to the prior.
    let score = |e: &Edge| -> f32 {
        let lcb = lower_confidence_bound(e, choice.draw_weight);
        match choice.rule {
            FinalMove::LowerConfidenceBound => {
                let eligible = e.proven.is_known() || e.visits >= threshold;
                if eligible {
                    lcb
                } else {
                    lcb - 4.0
                }
            }
            FinalMove::MostVisits => match e.proven {
                Proven::Win(_) | Proven::Loss(_) => lcb,
                Proven::Draw | Proven::Unknown => 0.0,
            },
        }
    };
    // Each edge scored once: the time manager asks every millisecond.
    (0..edges.len())
        .filter(allowed)
        .map(|i| (score(&edges[i]), i))
        .max_by(|&(sa, a), &(sb, b)| {
            let (ea, eb) = (&edges[a], &edges[b]);
            sa.total_cmp(&sb)
                .then(ea.visits.cmp(&eb.visits))
                .then(ea.prior.total_cmp(&eb.prior))
        })
        .map(|(_, i)| i)
}

/// The race the time manager watches: the visits of the move that would be
/// played now (not among `excluded`) and the most visits of any other move
/// that could still overtake it (neither excluded nor proven lost). When
/// the rule picks a move other than the most visited, the choice is
/// contested and the first figure is below the second, so the search does
/// not stop early.
pub fn choice_race(node: &NodeData, choice: MoveChoice, excluded: Option<&CellSet>) -> (u32, u32) {
    let Some(chosen) = choose_edge(node, choice, excluded) else {
        return (0, 0);
    };
    let others = node
        .edges
        .iter()
        .enumerate()
        .filter(|&(i, e)| {
            i != chosen
                && !matches!(e.proven, Proven::Loss(_))
                && !excluded.is_some_and(|set| set.contains(e.mv))
        })
        .map(|(_, e)| e.visits)
        .max()
        .unwrap_or(0);
    (node.edges[chosen].visits, others)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Point;
    use crate::search::node::Node;

    fn node_with(edges: Vec<Edge>) -> parking_lot::Mutex<NodeData> {
        let node = Node::new(crate::search::node::PositionKey::of(
            &crate::game::Board::new(
                crate::game::BoardSize::square(15).unwrap(),
                crate::game::Rule::Freestyle,
            ),
        ));
        node.data.lock().edges = edges;
        node.data
    }

    /// A node with `edges` whose own statistics are `visits` completed
    /// visits with these sums of win and draw probabilities.
    fn searched_node(
        edges: Vec<Edge>,
        visits: u32,
        win_sum: f32,
        draw_sum: f32,
    ) -> parking_lot::Mutex<NodeData> {
        let data = node_with(edges);
        {
            let mut d = data.lock();
            d.visits = visits;
            d.win_sum = win_sum;
            d.draw_sum = draw_sum;
        }
        data
    }

    fn edge(x: u8, prior: f32, visits: u32, wins: f32) -> Edge {
        let mut e = Edge::new(Point::new(x, 0).unwrap(), prior);
        e.visits = visits;
        e.win_sum = wins;
        e
    }

    #[test]
    fn exploration_follows_the_spread_of_a_nodes_values() {
        let params = PuctParams {
            c_puct: 0.7,
            c_puct_log: 0.0,
            c_puct_base: 328.0,
            c_puct_stdev_scale: 0.85,
            c_puct_stdev_prior: 0.4,
            fpu_reduction: 0.2,
            draw_weight: 0.5,
            draw_penalty: 0.0,
        };
        // 100 visits that all said 0.95 win, 0.05 loss: balance 0.9 each.
        let agreed = searched_node(vec![], 100, 95.0, 0.0);
        (agreed.lock().balance_sum, agreed.lock().balance_sq_sum) = (90.0, 81.0);
        // 100 visits, half won and half lost outright: balance +-1.
        let split = searched_node(vec![], 100, 50.0, 0.0);
        (split.lock().balance_sum, split.lock().balance_sq_sum) = (0.0, 100.0);
        // KataGo's pooled variance with the prior 0.4 weighing 2 visits:
        // ((0.81 + 0.16) * 2 + 81) / 101 - 0.81 and (0.32 + 100) / 101.
        let agreed_stdev = ((0.97f32 * 2.0 + 81.0) / 101.0 - 0.81).sqrt();
        let split_stdev = ((0.32f32 + 100.0) / 101.0).sqrt();
        let factor = |stdev: f32| 1.0 + 0.85 * (stdev / 0.4 - 1.0);
        let near = |a: f32, b: f32| (a - b).abs() < 1e-4;
        assert!(near(
            params.spread_factor(&agreed.lock()),
            factor(agreed_stdev)
        ));
        assert!(near(
            params.spread_factor(&split.lock()),
            factor(split_stdev)
        ));
        assert!(params.spread_factor(&agreed.lock()) < 0.5);
        assert!(params.spread_factor(&split.lock()) > 2.0);
        // One visit: the prior alone, so the constant is unchanged.
        let fresh = searched_node(vec![], 1, 1.0, 0.0);
        (fresh.lock().balance_sum, fresh.lock().balance_sq_sum) = (1.0, 1.0);
        assert_eq!(params.spread_factor(&fresh.lock()), 1.0);
        // Off: unchanged whatever the spread.
        let off = PuctParams {
            c_puct_stdev_scale: 0.0,
            ..params
        };
        assert_eq!(off.spread_factor(&split.lock()), 1.0);
        // A prior fitted to narrower spreads: a node whose balances spread
        // by that prior keeps its constant, where 0.4 cut it by a third.
        let fitted = PuctParams {
            c_puct_stdev_prior: 0.25,
            ..params
        };
        let narrow = searched_node(vec![], 100, 50.0, 0.0);
        (narrow.lock().balance_sum, narrow.lock().balance_sq_sum) = (0.0, 6.25);
        assert!((fitted.spread_factor(&narrow.lock()) - 1.0).abs() < 0.01);
        assert!(params.spread_factor(&narrow.lock()) < 0.7);
        let fitted_agreed = ((0.8725f32 * 2.0 + 81.0) / 101.0 - 0.81).sqrt();
        assert!(near(
            fitted.spread_factor(&agreed.lock()),
            1.0 + 0.85 * (fitted_agreed / 0.25 - 1.0)
        ));
        assert_eq!(fitted.spread_factor(&fresh.lock()), 1.0);

        // In selection: a well-searched first move (q 0.5) against an
        // unvisited second (first-play urgency about 0.30), under two nodes
        // of the same mean balance (0): one whose visits agreed (balances
        // near +-0.1), one whose visits were won or lost outright. The
        // unvisited move's bonus beats the gap only at c_puct above 0.98.
        let edges = || vec![edge(0, 0.97, 99, 49.5), edge(1, 0.03, 0, 0.0)];
        for (sq, expect) in [(1.0, 0), (100.0, 1)] {
            let node = searched_node(edges(), 100, 50.0, 0.0);
            (node.lock().balance_sum, node.lock().balance_sq_sum) = (0.0, sq);
            assert_eq!(select_edge(&node.lock(), params, None), Some(expect));
            assert_eq!(select_edge(&node.lock(), off, None), Some(0));
        }
    }

    const LCB: MoveChoice = MoveChoice {
        rule: FinalMove::LowerConfidenceBound,
        draw_weight: 0.5,
    };

    /// A move proven lost, or excluded, however many visits it holds, sets
    /// no bar for the others: the better move just under a tenth of its
    /// visits is still eligible.
    #[test]
    fn a_lost_or_excluded_move_sets_no_visit_bar() {
        let mut lost = edge(0, 0.5, 10_000, 0.0);
        lost.proven = Proven::Loss(5);
        let edges = |first: Edge| {
            vec![
                first,
                edge(1, 0.25, 999, 900.0),
                edge(2, 0.25, 1_000, 300.0),
            ]
        };
        let node = node_with(edges(lost));
        assert_eq!(choose_edge(&node.lock(), LCB, None), Some(1));
        let node = node_with(edges(edge(0, 0.5, 10_000, 5_000.0)));
        let mut excluded = CellSet::new();
        excluded.insert(Point::new(0, 0).unwrap());
        assert_eq!(choose_edge(&node.lock(), LCB, Some(&excluded)), Some(1));
    }
    const VISITS: MoveChoice = MoveChoice {
        rule: FinalMove::MostVisits,
        draw_weight: 0.5,
    };

    const PARAMS: PuctParams = PuctParams {
        c_puct: 1.5,
        c_puct_log: 0.0,
        c_puct_base: 328.0,
        c_puct_stdev_scale: 0.0,
        c_puct_stdev_prior: 0.4,
        fpu_reduction: 0.1,
        draw_weight: 0.5,
        draw_penalty: 0.0,
    };
    /// Values alone: no exploration term, no first-play reduction.
    const VALUES_ONLY: PuctParams = PuctParams {
        c_puct: 0.0,
        fpu_reduction: 0.0,
        ..PARAMS
    };
    const VALUES_ONLY_DRAW_PENALTY: PuctParams = PuctParams {
        draw_penalty: 0.175,
        ..VALUES_ONLY
    };

    /// Proven moves by their distance: the shortest win, and where every
    /// move loses, the longest resistance.
    #[test]
    fn proven_moves_are_chosen_by_distance() {
        let proven = |x: u8, value: Proven| {
            let mut e = edge(x, 0.5, 3, 1.0);
            e.proven = value;
            e
        };
        let lost = node_with(vec![
            proven(0, Proven::Loss(4)),
            proven(1, Proven::Loss(10)),
            proven(2, Proven::Loss(6)),
        ]);
        assert_eq!(select_edge(&lost.lock(), PARAMS, None), Some(1));
        let won = node_with(vec![proven(0, Proven::Win(9)), proven(1, Proven::Win(3))]);
        assert_eq!(select_edge(&won.lock(), PARAMS, None), Some(1));
    }

    #[test]
    fn unvisited_high_prior_moves_are_explored_and_virtual_visits_spread_descents() {
        let data = node_with(vec![
            edge(0, 0.1, 10, 6.0),
            edge(1, 0.8, 0, 0.0),
            edge(2, 0.1, 0, 0.0),
        ]);
        let mut d = data.lock();
        assert_eq!(select_edge(&d, PARAMS, None), Some(1));
        d.edges[1].virtual_visits = 20;
        assert_ne!(select_edge(&d, PARAMS, None), Some(1));
    }

    #[test]
    fn first_play_urgency_falls_as_more_of_the_policy_is_searched() {
        assert_eq!(first_play_urgency(0.6, 0.2, 0.0), 0.6);
        assert!((first_play_urgency(0.6, 0.2, 0.25) - 0.5).abs() < 1e-6);
        assert!((first_play_urgency(0.6, 0.2, 1.0) - 0.4).abs() < 1e-6);
        assert_eq!(first_play_urgency(0.1, 0.2, 1.0), 0.0, "never below a loss");
        // Through the selection, values only (c_puct 0): the parent stands
        // at 0.55, the visited move at 0.50. With 4% of the policy searched
        // the unvisited move is worth 0.55 - 0.2 * 0.2 = 0.51 and is tried;
        // with 81% searched it is worth 0.55 - 0.2 * 0.9 = 0.37 and the
        // visited move goes on. (The flat reduction gave 0.35 in both cases.)
        let params = PuctParams {
            c_puct: 0.0,
            c_puct_log: 0.0,
            c_puct_stdev_scale: 0.0,
            c_puct_stdev_prior: 0.4,
            c_puct_base: 328.0,
            fpu_reduction: 0.2,
            draw_weight: 0.5,
            draw_penalty: 0.0,
        };
        let data = searched_node(
            vec![edge(0, 0.04, 10, 5.0), edge(1, 0.5, 0, 0.0)],
            10,
            5.5,
            0.0,
        );
        let mut d = data.lock();
        assert_eq!(select_edge(&d, params, None), Some(1));
        d.edges[0].prior = 0.81;
        d.edges[1].prior = 0.19;
        assert_eq!(select_edge(&d, params, None), Some(0));
    }

    #[test]
    fn a_draw_penalty_turns_the_search_from_drawish_moves() {
        // Values only (c_puct 0). The parent: 20 visits, 5.4 wins and 9.5
        // draws (draw rate 0.475). Move 0 won 4.9 of its 10 visits (0.49);
        // move 1 drew 9.5 and won 0.5 of its 10 (0.525), so it is searched
        // first without a penalty. With 0.175 its value is lowered by
        // 0.175 * (1 - 0.475) * 0.95 = 0.087, to 0.438, and move 0 is
        // searched.
        let mut drawish = edge(1, 0.5, 10, 0.5);
        drawish.draw_sum = 9.5;
        let data = searched_node(vec![edge(0, 0.5, 10, 4.9), drawish], 20, 5.4, 9.5);
        let mut d = data.lock();
        let (plain, penalised) = (VALUES_ONLY, VALUES_ONLY_DRAW_PENALTY);
        assert_eq!(select_edge(&d, plain, None), Some(1));
        assert_eq!(select_edge(&d, penalised, None), Some(0));
        // A proven draw (0.5) is lowered the same way: 0.5 - 0.175 * (1 -
        // 0.475) = 0.408, below the other move's 0.49.
        d.edges[1].proven = Proven::Draw;
        assert_eq!(select_edge(&d, plain, None), Some(1));
        assert_eq!(select_edge(&d, penalised, None), Some(0));
        // Where the parent itself is a draw (0.5 wins and 19 draws in 20:
        // rate 0.95), there is little to decide: the drawish move loses only
        // 0.175 * 0.05 * 0.95 = 0.008, keeps 0.517, and is still searched.
        d.edges[1].proven = Proven::Unknown;
        d.win_sum = 0.5;
        d.draw_sum = 19.0;
        assert_eq!(select_edge(&d, penalised, None), Some(1));
    }

    #[test]
    fn a_draw_penalty_lowers_the_first_play_urgency_by_the_parents_draw_rate() {
        // Values only, no first-play reduction. The parent: 10 visits, 3
        // wins and 5 draws (0.55, draw rate 0.5). Move 0 won 5.3 of 10
        // (0.53); move 1 is unvisited, worth the parent's 0.55 and tried
        // first. With 0.175 it is taken to draw as its parent does and is
        // worth 0.55 - 0.175 * 0.5 * 0.5 = 0.506: move 0 goes on.
        let data = searched_node(
            vec![edge(0, 0.5, 10, 5.3), edge(1, 0.5, 0, 0.0)],
            10,
            3.0,
            5.0,
        );
        let d = data.lock();
        let (plain, penalised) = (VALUES_ONLY, VALUES_ONLY_DRAW_PENALTY);
        assert_eq!(select_edge(&d, plain, None), Some(1));
        assert_eq!(select_edge(&d, penalised, None), Some(0));
    }

    #[test]
    fn exploration_grows_with_the_nodes_visits() {
        let growing = PuctParams {
            c_puct: 0.2,
            c_puct_log: 0.5,
            c_puct_stdev_scale: 0.0,
            ..PARAMS
        };
        assert_eq!(growing.exploration(0), 0.2);
        // ln(1 + 328 / 328) = ln 2.
        assert!((growing.exploration(328) - (0.2 + 0.5 * 2f32.ln())).abs() < 1e-6);
        assert!(growing.exploration(10_000) > growing.exploration(1_000));
        assert_eq!(
            PARAMS.exploration(1_000_000),
            1.5,
            "constant without growth"
        );
        // A searched move holding at 0.6 (prior 0.7) and an unvisited one
        // (prior 0.3) at the first-play urgency, 0.6 - 0.1 * sqrt(0.7) =
        // 0.516. At 5,000 visits a near-constant 0.002 keeps to the searched
        // move (the other scores 0.516 + 0.002 * 0.3 * 70.7 = 0.559). With
        // c_puct_log 0.1 the node keeps to it at 50 visits (constant 0.016:
        // 0.551) and tries the other at 5,000 (0.281: 6.5).
        let node = |visits: u32| {
            let wins = 0.6 * visits as f32;
            searched_node(
                vec![edge(0, 0.7, visits, wins), edge(1, 0.3, 0, 0.0)],
                visits,
                wins,
                0.0,
            )
        };
        let constant = PuctParams {
            c_puct: 0.002,
            c_puct_log: 0.0,
            c_puct_stdev_scale: 0.0,
            fpu_reduction: 0.1,
            ..PARAMS
        };
        let widening = PuctParams {
            c_puct_log: 0.1,
            c_puct_stdev_scale: 0.0,
            ..constant
        };
        assert_eq!(select_edge(&node(5_000).lock(), constant, None), Some(0));
        assert_eq!(select_edge(&node(50).lock(), widening, None), Some(0));
        assert_eq!(select_edge(&node(5_000).lock(), widening, None), Some(1));
    }

    #[test]
    fn proven_edges_decide() {
        let data = node_with(vec![edge(0, 0.5, 100, 90.0), edge(1, 0.5, 1, 0.0)]);
        let mut d = data.lock();
        d.edges[1].proven = Proven::Win(7);
        assert_eq!(select_edge(&d, PARAMS, None), Some(1));
        assert_eq!(choose_edge(&d, LCB, None), Some(1));
        d.edges[1].proven = Proven::Loss(3);
        assert_eq!(select_edge(&d, PARAMS, None), Some(0));
        d.edges[0].proven = Proven::Loss(9);
        assert_eq!(choose_edge(&d, LCB, None), Some(0), "longest resistance");
        // An unvisited move is preferred to a proven loss.
        d.edges[1].proven = Proven::Unknown;
        d.edges[1].visits = 0;
        assert_eq!(choose_edge(&d, LCB, None), Some(1), "not a known loss");
    }

    #[test]
    fn a_policy_temperature_above_one_flattens_the_priors_and_keeps_their_order() {
        let policy = [0.7f32, 0.2, 0.1];
        let normalised = |sharpen: f32| {
            let raw: Vec<f32> = policy.iter().map(|&p| tempered_prior(p, sharpen)).collect();
            let total: f32 = raw.iter().sum();
            raw.into_iter().map(|p| p / total).collect::<Vec<f32>>()
        };
        assert_eq!(
            normalised(1.0),
            policy.to_vec(),
            "temperature 1 is the policy"
        );
        let flat = normalised(1.0 / 2.0);
        // 0.7^0.5 : 0.2^0.5 : 0.1^0.5 = 0.8367 : 0.4472 : 0.3162.
        let expected = [0.5229f32, 0.2795, 0.1976];
        for (got, want) in flat.iter().zip(expected) {
            assert!((got - want).abs() < 1e-3, "{flat:?}");
        }
        let sharp = normalised(2.0);
        assert!(sharp[0] > 0.9 && sharp[2] < 0.02, "{sharp:?}");
        assert_eq!(tempered_prior(-0.0, 0.5), 0.0);
    }

    #[test]
    fn in_a_small_search_a_move_of_one_or_two_visits_is_not_chosen() {
        // 19 playouts: move 0 holds 50% over 16, move 1 won its 2 and
        // move 2 its 1; their bounds (about 0.86 and 0.80 against 0.26)
        // would play them.
        let data = node_with(vec![
            edge(0, 0.6, 16, 8.0),
            edge(1, 0.2, 2, 2.0),
            edge(2, 0.2, 1, 1.0),
        ]);
        let mut d = data.lock();
        assert_eq!(choose_edge(&d, LCB, None), Some(0));
        // With the few visits the floor asks for, the record counts.
        d.edges[1].visits = 5;
        d.edges[1].win_sum = 5.0;
        assert_eq!(choose_edge(&d, LCB, None), Some(1));
        // A search of five playouts: the floor is the most visits.
        d.edges[0].visits = 2;
        d.edges[0].win_sum = 1.0;
        d.edges[1].visits = 2;
        d.edges[1].win_sum = 2.0;
        assert_eq!(choose_edge(&d, LCB, None), Some(1));
    }

    #[test]
    fn a_lucky_move_with_few_visits_is_not_chosen() {
        // Move 1 won its only 3 visits; move 0 has 1000 visits at 60%.
        let data = node_with(vec![edge(0, 0.5, 1000, 600.0), edge(1, 0.5, 3, 3.0)]);
        let d = data.lock();
        assert_eq!(choose_edge(&d, LCB, None), Some(0));
    }

    #[test]
    fn most_visits_plays_the_most_visited_move_and_still_trusts_proofs() {
        // Move 1 has fewer visits but the better record: the lower bound
        // plays it, the visit count does not.
        let data = node_with(vec![edge(0, 0.5, 500, 250.0), edge(1, 0.3, 400, 300.0)]);
        let mut d = data.lock();
        assert_eq!(choose_edge(&d, LCB, None), Some(1));
        assert_eq!(choose_edge(&d, VISITS, None), Some(0));
        // A proven draw is ranked by its visits, not above the others.
        d.edges[0].proven = Proven::Draw;
        assert_eq!(choose_edge(&d, VISITS, None), Some(0));
        d.edges[0].visits = 100;
        assert_eq!(choose_edge(&d, VISITS, None), Some(1));
        // Proofs decide under either rule.
        d.edges[0].proven = Proven::Win(5);
        assert_eq!(choose_edge(&d, VISITS, None), Some(0));
        d.edges[0].visits = 500;
        d.edges[0].proven = Proven::Loss(3);
        assert_eq!(choose_edge(&d, VISITS, None), Some(1));
        // Equal visits: the higher prior.
        d.edges[0].proven = Proven::Unknown;
        d.edges[1].visits = 500;
        assert_eq!(choose_edge(&d, VISITS, None), Some(0));
    }

    #[test]
    fn the_final_move_rule_is_read_by_its_configuration_name() {
        #[derive(Deserialize)]
        struct Section {
            final_move: FinalMove,
        }
        let read = |text: &str| toml::from_str::<Section>(text).map(|s| s.final_move);
        assert_eq!(
            read("final_move = \"lcb\"").ok(),
            Some(FinalMove::LowerConfidenceBound)
        );
        assert_eq!(
            read("final_move = \"visits\"").ok(),
            Some(FinalMove::MostVisits)
        );
        assert!(read("final_move = \"mean\"").is_err());
    }

    #[test]
    fn the_race_the_clock_watches_is_the_chosen_moves_lead() {
        // The lower bound plays move 1 with fewer visits: no lead.
        let data = node_with(vec![
            edge(0, 0.5, 500, 250.0),
            edge(1, 0.3, 400, 300.0),
            edge(2, 0.2, 50, 20.0),
        ]);
        let mut d = data.lock();
        assert_eq!(choice_race(&d, LCB, None), (400, 500));
        assert_eq!(choice_race(&d, VISITS, None), (500, 400));
        // Once the most visited move also has the best bound, the lead is
        // over the runner-up in visits, as under the visits rule.
        d.edges[0].win_sum = 400.0;
        assert_eq!(choice_race(&d, LCB, None), (500, 400));
        // A tie in visits is no lead.
        d.edges[1].visits = 500;
        let (chosen, others) = choice_race(&d, VISITS, None);
        assert_eq!(chosen, others);
        // A proven loss cannot overtake, however many visits it kept.
        d.edges[1].visits = 900;
        d.edges[1].proven = Proven::Loss(4);
        assert_eq!(choice_race(&d, LCB, None), (500, 50));
        assert_eq!(choice_race(&d, VISITS, None), (500, 50));
        // Nor can a move the caller excluded; and an excluded move is not
        // the one watched.
        d.edges[1].proven = Proven::Unknown;
        let mut excluded = CellSet::new();
        excluded.insert(d.edges[1].mv);
        assert_eq!(choice_race(&d, VISITS, Some(&excluded)), (500, 50));
        excluded.insert(d.edges[0].mv);
        assert_eq!(choice_race(&d, VISITS, Some(&excluded)), (50, 0));
        d.edges.clear();
        assert_eq!(choice_race(&d, LCB, None), (0, 0));
    }
}
