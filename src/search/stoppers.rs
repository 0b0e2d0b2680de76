//! What ends a search: one type per stop condition, each judging a
//! snapshot of the search's progress, and [`Stoppers`], the list the
//! controlling loop checks in order (after lc0's `mcts/stoppers`).
//!
//! The order is part of the behaviour: when several conditions hold at
//! once, the first one names the [`StopReason`].

use std::time::Duration;

use crate::search::result::StopReason;
use crate::search::time::{RootProgress, TimeManager};
use crate::search::SearchLimits;

/// Idle rounds in a row after which the tree has nothing left to search:
/// enough that a thread waiting briefly for the network is not taken for
/// an exhausted tree.
pub const EXHAUSTED_IDLE_ROUNDS: u32 = 64;

/// The search at one moment, as the stop conditions see it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SearchProgress {
    /// A stop request arrived (STOP, END, a new position).
    pub stop_requested: bool,
    /// The root's value is proven.
    pub root_proven: bool,
    /// Moves at the root (edges of the expanded root).
    pub root_moves: usize,
    /// Visits of the root itself.
    pub root_visits: u32,
    /// Visits of the root move the search would play now (by `final_move`)
    /// and the most visits of a rival that could overtake it (not proven
    /// lost, not excluded): above the first when the rule plays a less
    /// visited move.
    pub chosen_visits: u32,
    pub rival_visits: u32,
    /// Playouts of this search so far.
    pub playouts: u64,
    /// The root's expectation for the side to move (`None` before its
    /// first visit).
    pub root_expectation: Option<f32>,
    /// Bytes the tree takes.
    pub tree_bytes: usize,
    /// The process's memory as last measured during this search (`None`
    /// where it is not watched: no limit, or not measurable here).
    pub process_bytes: Option<usize>,
    /// Rounds in a row in which no search thread found work.
    pub idle_rounds: u32,
    /// The search threads have stopped (see [`HaltedWorkers`]).
    pub workers_halted: bool,
    /// Time since the request arrived, on the time manager's clock.
    pub elapsed: Duration,
}

impl SearchProgress {
    /// What the time manager needs of the root.
    pub fn root(&self) -> RootProgress {
        RootProgress {
            chosen_visits: self.chosen_visits,
            rival_visits: self.rival_visits,
            playouts: self.playouts,
            expectation: self.root_expectation,
        }
    }
}

/// One reason to end a search.
pub trait StopCondition {
    /// The reason to stop now, if this condition holds.
    fn check(&self, progress: &SearchProgress) -> Option<StopReason>;
}

/// An external stop request.
pub struct StopRequest;

impl StopCondition for StopRequest {
    fn check(&self, progress: &SearchProgress) -> Option<StopReason> {
        progress.stop_requested.then_some(StopReason::Stopped)
    }
}

/// The root's value is known: more search cannot change the move.
pub struct ProvenRoot;

impl StopCondition for ProvenRoot {
    fn check(&self, progress: &SearchProgress) -> Option<StopReason> {
        progress.root_proven.then_some(StopReason::Proven)
    }
}

/// A single root move (a forced block). The root must have been visited
/// twice, so that the move has a value to report.
pub struct OnlyMove;

impl StopCondition for OnlyMove {
    fn check(&self, progress: &SearchProgress) -> Option<StopReason> {
        (progress.root_moves == 1 && progress.root_visits >= 2).then_some(StopReason::OnlyMove)
    }
}

/// The playout limit of [`SearchLimits::max_playouts`].
pub struct PlayoutLimit {
    pub max: u64,
}

impl StopCondition for PlayoutLimit {
    fn check(&self, progress: &SearchProgress) -> Option<StopReason> {
        (progress.playouts >= self.max).then_some(StopReason::Playouts)
    }
}

/// The tree has reached the bytes it may use in this search; never before
/// the root's first evaluation (a few kilobytes), for the reason given at
/// [`TimeLimit`]: a search that begins with a full tree and a new root
/// still plays the policy's choice.
pub struct TreeMemory {
    pub budget: usize,
}

impl StopCondition for TreeMemory {
    fn check(&self, progress: &SearchProgress) -> Option<StopReason> {
        (progress.root_visits > 0 && progress.tree_bytes >= self.budget)
            .then_some(StopReason::Memory)
    }
}

/// The process as a tournament manager measures it has reached `ceiling`,
/// whatever the tree's own count says: the tree's budget is set once, at
/// the search's start, on the assumption that nodes freed by the prune
/// before it are reused and that the rest of the process stays as it was;
/// an allocator that keeps freed pages, or memory outside the tree (the
/// evaluators' buffers, the solvers' tables), would otherwise take the
/// process over the limit by the end of a long search. Never before the
/// root's first evaluation, as [`TreeMemory`].
pub struct ProcessMemory {
    pub ceiling: usize,
}

impl StopCondition for ProcessMemory {
    fn check(&self, progress: &SearchProgress) -> Option<StopReason> {
        (progress.root_visits > 0 && progress.process_bytes.is_some_and(|b| b >= self.ceiling))
            .then_some(StopReason::Memory)
    }
}

/// Threads that stopped by themselves (the network service gone, a panic)
/// search nothing more: waiting for the clock would be a hang under a
/// playout limit, pondering or analysis.
pub struct HaltedWorkers;

impl StopCondition for HaltedWorkers {
    fn check(&self, progress: &SearchProgress) -> Option<StopReason> {
        progress.workers_halted.then_some(StopReason::WorkersHalted)
    }
}

/// No thread has found work for a while: every leaf within the limits
/// (the depth limit, proven lines) is searched.
pub struct ExhaustedTree;

impl StopCondition for ExhaustedTree {
    fn check(&self, progress: &SearchProgress) -> Option<StopReason> {
        (progress.idle_rounds > EXHAUSTED_IDLE_ROUNDS).then_some(StopReason::Exhausted)
    }
}

/// The clock, as the search's one time manager judges it; never before
/// the root's first evaluation.
pub struct TimeLimit<'a> {
    pub clock: &'a TimeManager,
}

impl StopCondition for TimeLimit<'_> {
    fn check(&self, progress: &SearchProgress) -> Option<StopReason> {
        // A clock spent before the search began (the request waited behind
        // another, or the machine stalled) would otherwise halt the threads
        // before they had gathered the root, and the move would be the
        // fallback's first candidate cell: one network evaluation costs far
        // less than the reserves below the deadline, and gives the policy's
        // choice. A root that cannot be evaluated stops by the conditions
        // before this one.
        if progress.root_visits == 0 {
            return None;
        }
        self.clock
            .tree_search_done_at(progress.root(), progress.elapsed)
            .then_some(StopReason::Time)
    }
}

/// Stop conditions checked in order: the first that holds ends the search.
#[derive(Default)]
pub struct Stoppers<'a> {
    conditions: Vec<Box<dyn StopCondition + 'a>>,
}

impl<'a> Stoppers<'a> {
    /// No condition: a search that only ends when told to by its caller.
    pub fn new() -> Stoppers<'a> {
        Stoppers::default()
    }

    /// The list with `condition` checked after those already in it.
    pub fn with(mut self, condition: impl StopCondition + 'a) -> Stoppers<'a> {
        self.conditions.push(Box::new(condition));
        self
    }

    /// The conditions of one search. A stop request comes first so that
    /// a caller who stops hears that it was obeyed; a proven root before
    /// the limits, as its move is certain whatever else holds.
    pub fn for_search(
        limits: &SearchLimits,
        clock: &'a TimeManager,
        tree_budget: usize,
    ) -> Stoppers<'a> {
        let mut stoppers = Stoppers::new().with(StopRequest).with(ProvenRoot);
        // A ponder or an analysis goes on into the line after a forced
        // move: its tree is what the next move or the user sees.
        if !(limits.pondering || limits.analysing) {
            stoppers = stoppers.with(OnlyMove);
        }
        if let Some(max) = limits.max_playouts {
            stoppers = stoppers.with(PlayoutLimit { max });
        }
        stoppers
            .with(HaltedWorkers)
            .with(TreeMemory {
                budget: tree_budget,
            })
            .with(ExhaustedTree)
            .with(TimeLimit { clock })
    }
}

impl StopCondition for Stoppers<'_> {
    fn check(&self, progress: &SearchProgress) -> Option<StopReason> {
        self.conditions.iter().find_map(|c| c.check(progress))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::search::time::TimeBudget;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// Nothing holds: a search well under way, under every limit.
    fn running() -> SearchProgress {
        SearchProgress {
            stop_requested: false,
            root_proven: false,
            root_moves: 30,
            root_visits: 500,
            chosen_visits: 200,
            rival_visits: 150,
            playouts: 500,
            root_expectation: Some(0.5),
            tree_bytes: 1 << 20,
            process_bytes: None,
            idle_rounds: 0,
            workers_halted: false,
            elapsed: ms(10),
        }
    }

    #[test]
    fn a_stop_request_stops() {
        assert_eq!(StopRequest.check(&running()), None);
        let stopped = SearchProgress {
            stop_requested: true,
            ..running()
        };
        assert_eq!(StopRequest.check(&stopped), Some(StopReason::Stopped));
    }

    #[test]
    fn a_proven_root_stops() {
        assert_eq!(ProvenRoot.check(&running()), None);
        let proven = SearchProgress {
            root_proven: true,
            ..running()
        };
        assert_eq!(ProvenRoot.check(&proven), Some(StopReason::Proven));
    }

    #[test]
    fn an_only_move_stops_once_the_root_has_a_value() {
        let only = |root_visits| SearchProgress {
            root_moves: 1,
            root_visits,
            ..running()
        };
        assert_eq!(OnlyMove.check(&only(0)), None);
        assert_eq!(OnlyMove.check(&only(1)), None);
        assert_eq!(OnlyMove.check(&only(2)), Some(StopReason::OnlyMove));
        // Two moves, or a root not yet expanded, go on.
        for root_moves in [0, 2] {
            let many = SearchProgress {
                root_moves,
                ..only(100)
            };
            assert_eq!(OnlyMove.check(&many), None);
        }
    }

    #[test]
    fn the_playout_limit_stops_at_exactly_max() {
        let limit = PlayoutLimit { max: 100 };
        let at = |playouts| SearchProgress {
            playouts,
            ..running()
        };
        assert_eq!(limit.check(&at(99)), None);
        assert_eq!(limit.check(&at(100)), Some(StopReason::Playouts));
        assert_eq!(limit.check(&at(101)), Some(StopReason::Playouts));
    }

    #[test]
    fn the_tree_memory_stops_at_the_budget() {
        let memory = TreeMemory { budget: 4096 };
        let at = |tree_bytes| SearchProgress {
            tree_bytes,
            ..running()
        };
        assert_eq!(memory.check(&at(4095)), None);
        assert_eq!(memory.check(&at(4096)), Some(StopReason::Memory));
        // No budget: the largest tree goes on.
        let unlimited = TreeMemory { budget: usize::MAX };
        assert_eq!(unlimited.check(&at(usize::MAX - 1)), None);
    }

    #[test]
    fn the_process_memory_stops_at_its_ceiling_once_the_root_is_evaluated() {
        let memory = ProcessMemory { ceiling: 4096 };
        let at = |root_visits, process_bytes| SearchProgress {
            root_visits,
            process_bytes,
            ..running()
        };
        assert_eq!(memory.check(&at(1, Some(4095))), None);
        assert_eq!(memory.check(&at(1, Some(4096))), Some(StopReason::Memory));
        // Not measured: nothing to judge.
        assert_eq!(memory.check(&at(1, None)), None);
        // A root not yet evaluated is evaluated first.
        assert_eq!(memory.check(&at(0, Some(1 << 30))), None);
    }

    #[test]
    fn an_exhausted_tree_stops_after_the_idle_rounds() {
        let at = |idle_rounds| SearchProgress {
            idle_rounds,
            ..running()
        };
        assert_eq!(ExhaustedTree.check(&at(EXHAUSTED_IDLE_ROUNDS)), None);
        assert_eq!(
            ExhaustedTree.check(&at(EXHAUSTED_IDLE_ROUNDS + 1)),
            Some(StopReason::Exhausted)
        );
    }

    #[test]
    fn the_time_limit_asks_the_time_manager() {
        let now = Instant::now();
        let unlimited = TimeManager::new(None, now);
        let late = SearchProgress {
            elapsed: Duration::from_secs(3600),
            ..running()
        };
        assert_eq!(TimeLimit { clock: &unlimited }.check(&late), None);
        // A fixed budget stops at its end less the safety net's share.
        let fixed = TimeManager::new(Some(TimeBudget::fixed(ms(100))), now);
        let at = |elapsed| SearchProgress {
            elapsed,
            ..running()
        };
        let time = TimeLimit { clock: &fixed };
        assert_eq!(time.check(&at(ms(50))), None);
        assert_eq!(time.check(&at(ms(95))), Some(StopReason::Time));
        // Past the target the root's race decides: a lead the runner-up
        // cannot close stops, a close race extends.
        let budget = TimeBudget {
            target: ms(1000),
            deadline: ms(3000),
        };
        let extensible = TimeManager::new(Some(budget), now);
        let time = TimeLimit { clock: &extensible };
        let race = |chosen_visits, rival_visits| SearchProgress {
            chosen_visits,
            rival_visits,
            playouts: 1000,
            elapsed: ms(1000),
            ..running()
        };
        assert_eq!(time.check(&race(2500, 10)), Some(StopReason::Time));
        assert_eq!(time.check(&race(500, 450)), None);
    }

    #[test]
    fn the_clock_and_the_memory_limit_wait_for_the_roots_first_evaluation() {
        let fixed = TimeManager::new(Some(TimeBudget::fixed(ms(100))), Instant::now());
        let time = TimeLimit { clock: &fixed };
        let spent = |root_visits| SearchProgress {
            root_moves: if root_visits == 0 { 0 } else { 30 },
            root_visits,
            chosen_visits: 0,
            rival_visits: 0,
            playouts: u64::from(root_visits),
            root_expectation: (root_visits > 0).then_some(0.5),
            elapsed: Duration::from_secs(5),
            ..running()
        };
        assert_eq!(time.check(&spent(0)), None);
        assert_eq!(time.check(&spent(1)), Some(StopReason::Time));
        // Nor the memory limit: a full tree still gets its new root's
        // evaluation.
        let memory = TreeMemory { budget: 4096 };
        let full = |root_visits| SearchProgress {
            tree_bytes: 1 << 20,
            ..spent(root_visits)
        };
        assert_eq!(memory.check(&full(0)), None);
        assert_eq!(memory.check(&full(1)), Some(StopReason::Memory));
        // A stop request, a halted search or an exhausted tree still ends
        // a search whose root was never evaluated.
        let limits = SearchLimits::default();
        let stoppers = Stoppers::for_search(&limits, &fixed, 4096);
        assert_eq!(stoppers.check(&full(0)), None);
        for (reason, progress) in [
            (
                StopReason::Stopped,
                SearchProgress {
                    stop_requested: true,
                    ..full(0)
                },
            ),
            (
                StopReason::WorkersHalted,
                SearchProgress {
                    workers_halted: true,
                    ..full(0)
                },
            ),
            (
                StopReason::Exhausted,
                SearchProgress {
                    idle_rounds: EXHAUSTED_IDLE_ROUNDS + 1,
                    ..full(0)
                },
            ),
        ] {
            assert_eq!(stoppers.check(&progress), Some(reason));
        }
    }

    #[test]
    fn the_chain_keeps_the_order_of_the_reasons() {
        let clock = TimeManager::new(Some(TimeBudget::fixed(ms(100))), Instant::now());
        let limits = SearchLimits {
            max_playouts: Some(100),
            ..SearchLimits::default()
        };
        let stoppers = Stoppers::for_search(&limits, &clock, 4096);
        // Every condition holds; each step clears the one that answered,
        // and the next in the order must answer.
        let mut progress = SearchProgress {
            stop_requested: true,
            root_proven: true,
            root_moves: 1,
            root_visits: 2,
            chosen_visits: 2,
            rival_visits: 0,
            playouts: 100,
            root_expectation: Some(0.5),
            tree_bytes: 4096,
            process_bytes: None,
            idle_rounds: EXHAUSTED_IDLE_ROUNDS + 1,
            workers_halted: true,
            elapsed: ms(95),
        };
        type Clear = fn(&mut SearchProgress);
        let clears: [(StopReason, Clear); 8] = [
            (StopReason::Stopped, |p| p.stop_requested = false),
            (StopReason::Proven, |p| p.root_proven = false),
            (StopReason::OnlyMove, |p| p.root_moves = 2),
            (StopReason::Playouts, |p| p.playouts = 99),
            (StopReason::WorkersHalted, |p| p.workers_halted = false),
            (StopReason::Memory, |p| p.tree_bytes = 4095),
            (StopReason::Exhausted, |p| p.idle_rounds = 0),
            (StopReason::Time, |p| p.elapsed = ms(10)),
        ];
        for (reason, clear) in clears {
            assert_eq!(stoppers.check(&progress), Some(reason));
            clear(&mut progress);
        }
        assert_eq!(stoppers.check(&progress), None);
    }

    #[test]
    fn a_single_move_ends_a_search_for_a_move_but_not_a_ponder_or_an_analysis() {
        let clock = TimeManager::new(None, Instant::now());
        let only = SearchProgress {
            root_moves: 1,
            root_visits: 10,
            ..running()
        };
        let think = Stoppers::for_search(&SearchLimits::default(), &clock, usize::MAX);
        assert_eq!(think.check(&only), Some(StopReason::OnlyMove));
        for limits in [
            SearchLimits {
                pondering: true,
                ..SearchLimits::default()
            },
            SearchLimits {
                analysing: true,
                ..SearchLimits::default()
            },
        ] {
            let stoppers = Stoppers::for_search(&limits, &clock, usize::MAX);
            assert_eq!(stoppers.check(&only), None, "{limits:?}");
        }
    }

    #[test]
    fn a_proven_root_wins_over_an_exceeded_playout_limit() {
        let clock = TimeManager::new(None, Instant::now());
        let limits = SearchLimits {
            max_playouts: Some(10),
            ..SearchLimits::default()
        };
        let stoppers = Stoppers::for_search(&limits, &clock, usize::MAX);
        let proven = SearchProgress {
            root_proven: true,
            playouts: 1000,
            ..running()
        };
        assert_eq!(stoppers.check(&proven), Some(StopReason::Proven));
    }

    #[test]
    fn the_chain_follows_the_limits() {
        let clock = TimeManager::new(None, Instant::now());
        let many = SearchProgress {
            playouts: u64::MAX,
            tree_bytes: usize::MAX - 1,
            elapsed: Duration::from_secs(3600),
            ..running()
        };
        // No playout, memory or time limit: nothing stops but the search.
        let unlimited = Stoppers::for_search(&SearchLimits::default(), &clock, usize::MAX);
        assert_eq!(unlimited.check(&many), None);
        let limited = SearchLimits {
            max_playouts: Some(u64::MAX),
            ..SearchLimits::default()
        };
        let stoppers = Stoppers::for_search(&limited, &clock, usize::MAX);
        assert_eq!(stoppers.check(&many), Some(StopReason::Playouts));
        // An empty list never stops; a list nests in another, in order.
        assert_eq!(Stoppers::new().check(&many), None);
        let nested = Stoppers::new()
            .with(Stoppers::new().with(ExhaustedTree))
            .with(PlayoutLimit { max: 1 });
        assert_eq!(nested.check(&many), Some(StopReason::Playouts));
        let idle = SearchProgress {
            idle_rounds: EXHAUSTED_IDLE_ROUNDS + 1,
            ..many
        };
        assert_eq!(nested.check(&idle), Some(StopReason::Exhausted));
    }
}
