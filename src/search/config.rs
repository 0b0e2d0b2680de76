//! The search's settings, declared once: the `[search]` section of the
//! configuration file deserialises straight into [`SearchConfig`].

use serde::{Deserialize, Serialize};

use crate::nn::settings::{auto_or_count, number_or_word, InvalidSetting};
use crate::nn::Backend;
use crate::search::select::{FinalMove, MoveChoice, PuctParams};
use crate::search::SafetyNetTime;

/// How the search plays: the `[search]` section of `config/wuzi.toml`,
/// read straight into this type (each parameter is declared here once, with
/// its default below), plus the thread count and memory limit, which come
/// from `[engine]` and `INFO`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchConfig {
    /// Search threads (`[engine] threads`, `INFO thread_num`).
    #[serde(skip)]
    pub threads: usize,
    /// Leaves a thread gathers before evaluating them.
    #[serde(deserialize_with = "number_or_word")]
    pub batch_size: SearchBatch,
    /// Batches a thread keeps with the network at once: with 2, it gathers
    /// the next batch while the network works. 1 is the deterministic mode
    /// (with 1 thread): batches are then always evaluated alone.
    pub pipeline: usize,
    /// Exploration constant of PUCT at a node's first visits.
    pub c_puct: f32,
    /// Growth of the exploration constant with a node's visits:
    /// `c_puct + c_puct_log * ln(1 + visits / c_puct_base)` (0: constant).
    pub c_puct_log: f32,
    /// The visits at which the constant has grown by `c_puct_log * ln 2`
    /// (Rapfi's value by default).
    pub c_puct_base: f32,
    /// Scales the exploration constant of a node by how much its values
    /// spread: `1 + scale * (stdev / prior - 1)`, KataGo's dynamic
    /// exploration (0: off). See [`PuctParams::spread_factor`].
    pub c_puct_stdev_scale: f32,
    /// The prior of that formula: the spread assumed before a node's
    /// visits say otherwise, and the one at which the constant is kept.
    pub c_puct_stdev_prior: f32,
    /// First-play urgency: an unvisited move is valued at its parent's
    /// value less this.
    pub fpu_reduction: f32,
    /// While searching, a move's value is lowered by this times its draw
    /// rate times the parent's chance of a decisive result (Rapfi's draw
    /// utility penalty; 0: none).
    pub draw_penalty: f32,
    /// Softmax temperature of the network's policy over the legal moves:
    /// priors are `p^(1/T)`, renormalised. Above 1 it flattens a policy
    /// that is too sure of itself, so that the search also tries the
    /// network's second thoughts.
    pub policy_temperature: f32,
    /// The root's priors from the network's policy averaged over every
    /// symmetry of the board (eight evaluations on a square board, once
    /// per root), not from the one symmetry each other node gets.
    pub root_symmetries: bool,
    /// 0 (defensive, P(win)+P(draw)) .. 2 (classic) .. 4 (offensive, P(win)).
    pub style: u8,
    /// How the move to play is picked from the root's statistics.
    pub final_move: FinalMove,
    /// Solver budget per new leaf (VCF of the side to move).
    pub leaf_vcf_nodes: u64,
    /// Solver budget at the root (VCT of the side to move).
    pub root_vct_nodes: u64,
    /// Solver budget per new leaf for the opponent's VCF (as if the side to
    /// move passed): a leaf where it has one keeps only the moves that
    /// could break it.
    pub opponent_vcf_nodes: u64,
    /// Solver budget for the side to move's VCT at every new node within
    /// `vct_plies` of the root (ply 1: the opponent's VCT after a root move).
    pub vct_nodes: u64,
    pub vct_plies: u8,
    /// Root safety net: budget for the opponent's VCF and VCT together after
    /// the move about to be played (capped by the time left).
    pub safety_vct_nodes: u64,
    /// The safety net's share of each move's target time, kept back from
    /// the tree search ([`SafetyNetTime`]).
    pub safety_share: f32,
    /// Solver nodes per millisecond that the safety net's budget assumes.
    pub safety_nodes_per_ms: u64,
    /// Own moves a game clock (`INFO timeout_match`) is planned over: each
    /// move's target is the time left over this many moves (fewer as the
    /// board fills).
    pub match_moves: u32,
    /// Under a game clock, a move whose expectation (P(win) + P(draw)/2)
    /// has fallen since our previous move gets its target stretched by
    /// this share per unit of fall, to twice at most (0: never).
    pub falling_value_time: f32,
    /// Candidate moves: within this many steps of a stone (plus threats).
    pub candidate_distance: u8,
    /// The process's memory limit in bytes (`[engine] max_memory_mb`,
    /// `INFO max_memory`; usize::MAX: none), counted as managers count it
    /// (see [`memory`]): the tree gets what the rest of the process leaves,
    /// and at that size the search stops.
    #[serde(skip)]
    pub max_memory: usize,
}

impl Default for SearchConfig {
    fn default() -> SearchConfig {
        let safety = SafetyNetTime::default();
        SearchConfig {
            threads: 2,
            batch_size: SearchBatch::Auto,
            pipeline: 2,
            c_puct: 0.7,
            c_puct_log: 0.0,
            c_puct_base: 328.0,
            c_puct_stdev_scale: 0.0,
            c_puct_stdev_prior: 0.4,
            fpu_reduction: 0.2,
            draw_penalty: 0.0,
            policy_temperature: 1.0,
            root_symmetries: false,
            style: 2,
            final_move: FinalMove::LowerConfidenceBound,
            leaf_vcf_nodes: 200,
            root_vct_nodes: 20_000,
            opponent_vcf_nodes: 200,
            vct_nodes: 2_000,
            vct_plies: 1,
            safety_vct_nodes: 20_000,
            safety_share: safety.share,
            safety_nodes_per_ms: safety.nodes_per_ms,
            match_moves: crate::search::time::DEFAULT_MATCH_MOVES,
            falling_value_time: 0.0,
            candidate_distance: 2,
            max_memory: 350 << 20,
        }
    }
}

/// The most of anything a file may count (leaves per batch, batches in
/// flight, threads): far past any use, small enough that the buffers sized
/// by them cannot overflow or exhaust memory.
pub const MAX_SETTING_COUNT: usize = 4096;

/// The most threads a setting may ask for (search, evaluator, libtorch;
/// a file, the command line or INFO thread_num): each is an OS thread
/// with its own buffers.
pub const MAX_THREADS: usize = 256;

/// The most nodes a solver run at the root may be given (several seconds
/// of a core; under a memory limit, a budget is also cut to what the limit
/// leaves the solver: [`crate::search::memory::solver_nodes_within`]).
pub const MAX_ROOT_SOLVER_NODES: u64 = 2_000_000;
/// The most nodes a solver run at a leaf may be given (it runs at every
/// expansion).
pub const MAX_LEAF_SOLVER_NODES: u64 = 100_000;

impl SearchConfig {
    /// Checks the values a file or a tuner may set; the error names the
    /// key as the configuration file spells it.
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        let check = |ok: bool, key: &str, why: &str| InvalidSetting::check(ok, "search", key, why);
        check(
            !matches!(self.batch_size, SearchBatch::Fixed(n) if n == 0 || n > MAX_SETTING_COUNT),
            "batch_size",
            &format!("must be 1..={MAX_SETTING_COUNT}"),
        )?;
        check(
            (1..=MAX_SETTING_COUNT).contains(&self.pipeline),
            "pipeline",
            &format!("must be 1..={MAX_SETTING_COUNT}"),
        )?;
        check(self.style <= 4, "style", "must be 0..=4")?;
        // Bounded, so that the exploration term never outweighs a proven
        // win's score or becomes infinite.
        check(
            self.c_puct.is_finite() && self.c_puct > 0.0 && self.c_puct <= 100.0,
            "c_puct",
            "must be above 0 and at most 100",
        )?;
        check(
            self.c_puct_log.is_finite() && self.c_puct_log >= 0.0,
            "c_puct_log",
            "must be 0 or more",
        )?;
        check(
            self.c_puct_base.is_finite() && self.c_puct_base >= 1.0,
            "c_puct_base",
            "must be at least 1",
        )?;
        check(
            self.c_puct_stdev_scale.is_finite() && (0.0..=10.0).contains(&self.c_puct_stdev_scale),
            "c_puct_stdev_scale",
            "must be 0..=10",
        )?;
        check(
            self.c_puct_stdev_prior.is_finite() && (0.01..=2.0).contains(&self.c_puct_stdev_prior),
            "c_puct_stdev_prior",
            "must be 0.01..=2",
        )?;
        // Finite at the most visits a node can hold, so that no score
        // becomes infinite (or NaN against a zero prior).
        let most_growth = self.c_puct_log * (u32::MAX as f32 / self.c_puct_base).ln_1p();
        check(most_growth < 1e6, "c_puct_log", "is too large")?;
        // Utilities are 0..1: a negative reduction would rate an unvisited
        // move above every value, a proven win's included.
        check(
            (0.0..=1.0).contains(&self.fpu_reduction),
            "fpu_reduction",
            "must be between 0 and 1",
        )?;
        check(
            (0.0..=1.0).contains(&self.draw_penalty),
            "draw_penalty",
            "must be between 0 and 1",
        )?;
        check(
            self.policy_temperature.is_finite() && self.policy_temperature > 0.0,
            "policy_temperature",
            "must be positive",
        )?;
        check(
            (0.0..=0.5).contains(&self.safety_share),
            "safety_share",
            "must be between 0 and 0.5",
        )?;
        check(
            self.safety_nodes_per_ms >= 1,
            "safety_nodes_per_ms",
            "must be at least 1",
        )?;
        check(self.match_moves >= 1, "match_moves", "must be at least 1")?;
        // The solvers cannot be interrupted and keep a table entry per
        // node: a budget past these would hold STOP (and a move's clock)
        // for minutes and take memory without bound.
        for (key, nodes, most) in [
            ("root_vct_nodes", self.root_vct_nodes, MAX_ROOT_SOLVER_NODES),
            (
                "safety_vct_nodes",
                self.safety_vct_nodes,
                MAX_ROOT_SOLVER_NODES,
            ),
            ("leaf_vcf_nodes", self.leaf_vcf_nodes, MAX_LEAF_SOLVER_NODES),
            (
                "opponent_vcf_nodes",
                self.opponent_vcf_nodes,
                MAX_LEAF_SOLVER_NODES,
            ),
            ("vct_nodes", self.vct_nodes, MAX_LEAF_SOLVER_NODES),
        ] {
            check(nodes <= most, key, &format!("must be at most {most}"))?;
        }
        // INFO caps it at 4 too: beyond, every expansion scans a wide
        // square around each stone for little.
        check(
            (1..=4).contains(&self.candidate_distance),
            "candidate_distance",
            "must be 1..=4",
        )?;
        check(
            self.falling_value_time.is_finite() && self.falling_value_time >= 0.0,
            "falling_value_time",
            "must be 0 or more",
        )?;
        Ok(())
    }

    /// The root safety net's time settings.
    pub fn safety_time(&self) -> SafetyNetTime {
        SafetyNetTime {
            share: self.safety_share,
            nodes_per_ms: self.safety_nodes_per_ms,
        }
    }

    /// The weight of a draw in the utility, from the style.
    pub fn draw_weight(&self) -> f32 {
        1.0 - self.style.min(4) as f32 / 4.0
    }

    /// What picks the move to play (and each move of a principal
    /// variation).
    pub fn move_choice(&self) -> MoveChoice {
        MoveChoice {
            rule: self.final_move,
            draw_weight: self.draw_weight(),
        }
    }

    pub(super) fn puct(&self) -> PuctParams {
        PuctParams {
            c_puct: self.c_puct,
            c_puct_log: self.c_puct_log,
            c_puct_base: self.c_puct_base,
            c_puct_stdev_scale: self.c_puct_stdev_scale,
            c_puct_stdev_prior: self.c_puct_stdev_prior,
            fpu_reduction: self.fpu_reduction,
            draw_weight: self.draw_weight(),
            draw_penalty: self.draw_penalty,
        }
    }
}

/// Leaves a search thread gathers per network call (`[search]
/// batch_size`): `"auto"` or a number of at least 1. Every leaf gathered
/// waits under a virtual visit (a loss) until the network answers, and
/// turns the next descents away from its path: the fewer in flight, the
/// closer the search is to one that waits for each leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchBatch {
    /// By what evaluates: [`SearchBatch::NATIVE`] leaves on the engine's own
    /// kernels, which evaluate one position about as fast per position as a
    /// batch, and [`SearchBatch::TORCH`] for libtorch, whose calls cost
    /// nearly as much for one position as for several.
    Auto,
    /// This many, whatever evaluates.
    Fixed(usize),
}

impl SearchBatch {
    /// Leaves per batch on the native kernels (and without a network).
    pub const NATIVE: usize = 2;
    /// Leaves per batch with libtorch, on a CPU or a GPU.
    pub const TORCH: usize = 8;

    /// The leaves per batch for a search evaluated by `backend` (none: the
    /// uniform evaluator of a rule without a network).
    pub fn leaves(self, backend: Option<Backend>) -> usize {
        match self {
            SearchBatch::Fixed(n) => n.max(1),
            SearchBatch::Auto => match backend {
                Some(Backend::Torch) => Self::TORCH,
                Some(Backend::Native) | None => Self::NATIVE,
            },
        }
    }
}

impl std::str::FromStr for SearchBatch {
    type Err = String;

    fn from_str(s: &str) -> Result<SearchBatch, String> {
        Ok(auto_or_count(s, "batch size")?.map_or(SearchBatch::Auto, SearchBatch::Fixed))
    }
}

impl Serialize for SearchBatch {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            SearchBatch::Auto => serializer.serialize_str("auto"),
            SearchBatch::Fixed(n) => serializer.serialize_u64(*n as u64),
        }
    }
}
