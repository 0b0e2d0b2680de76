//! The time manager: how long to think about a move, and within one
//! search, when to stop and how much of the time the solver may take.
//!
//! Everything the search knows about the clock goes through here: the
//! budget of a move ([`TimeControl::budget`]), the time gone before the
//! search started, the stop-or-extend decision after the target, the share
//! kept for the root safety net, and the solver's node budgets (the solver
//! cannot be interrupted, so its budgets follow the time it may take).

use std::time::{Duration, Instant};

/// The clock as the protocol describes it (`INFO timeout_turn`,
/// `timeout_match`, `time_left`, `time_increment`, `protocol_lag`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeControl {
    /// Longest time for one move; `None` for no limit.
    pub turn: Option<Duration>,
    /// Time left for the rest of the game; `None` for no limit.
    pub left: Option<Duration>,
    /// Time added after each move.
    pub increment: Duration,
    /// Time a move may take beyond `left` without losing: one stone's
    /// share of a Canadian byo-yomi period that follows the main time
    /// (GTP); none where the game clock is all there is.
    pub overtime: Duration,
    /// Communication overhead to keep in reserve on every move.
    pub lag: Duration,
}

impl Default for TimeControl {
    /// No limit until the manager sets one; 0.4 s of protocol lag (the
    /// extended protocol's default).
    fn default() -> TimeControl {
        TimeControl {
            turn: None,
            left: None,
            increment: Duration::ZERO,
            overtime: Duration::ZERO,
            lag: Duration::from_millis(400),
        }
    }
}

/// How long a search may run: it aims at `target`, may extend towards
/// `deadline` only if the best move is unclear, and never passes `deadline`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeBudget {
    pub target: Duration,
    pub deadline: Duration,
}

/// Floor for any budget: a move always gets a few milliseconds.
const MIN_BUDGET: Duration = Duration::from_millis(5);

/// What a move costs beyond its search, however short (threads starting,
/// the first evaluation, the pipe, a Windows manager's timer ticking every
/// 15.6 ms).
const MOVE_COST: Duration = Duration::from_millis(20);

/// Kept back from a game clock for each own move the board can still
/// take: the longest a move planned at the floor may run (three times its
/// target) and its cost, so that the longest game still ends on the clock.
const KEPT_PER_MOVE: Duration = MIN_BUDGET.saturating_mul(3).saturating_add(MOVE_COST);

impl TimeBudget {
    /// Exactly `time`: no extension (pondering for a given time, judging
    /// a candidate position).
    pub fn fixed(time: Duration) -> TimeBudget {
        TimeBudget {
            target: time,
            deadline: time,
        }
    }

    /// The first `share` (0..=1) of this budget, both limits scaled, for a
    /// search whose answer needs more work within the same turn.
    pub fn share(self, share: f64) -> TimeBudget {
        if share >= 1.0 {
            return self;
        }
        // Budgets reach near Duration::MAX (a turn without limit), where
        // mul_f64 would panic.
        let scale = |d: Duration| {
            Duration::try_from_secs_f64(d.as_secs_f64() * share.max(0.0))
                .unwrap_or(d)
                .max(MIN_BUDGET)
        };
        TimeBudget {
            target: scale(self.target),
            deadline: scale(self.deadline),
        }
    }
}

/// Solver speeds the budgets assume, in nodes per millisecond of the time
/// they may take. They are conservative (the solver runs faster on most
/// positions), so that an uninterruptible solve cannot overrun the clock.
mod solver_rate {
    /// The root's VCT: a tenth of the target at about 200,000 nodes/s.
    pub const ROOT_VCT: u64 = 20;
    /// The VCT at each new node just below the root, run many times per
    /// search: about 4 nodes per millisecond of the target.
    pub const SHALLOW_VCT: u64 = 4;
}

/// How much of the clock the root safety net gets (`[search]`
/// `safety_share` and `safety_nodes_per_ms`): its share of the target,
/// kept back from the tree search, and the solver speed its node budgets
/// assume within what is left of the deadline. The defaults are
/// conservative, so that a slow CPU still finishes the net in time
/// (measured speeds: docs/tuning.md).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SafetyNetTime {
    /// Share of the target kept for the safety net, at most 200 ms.
    pub share: f32,
    /// Solver nodes per millisecond left that its budget assumes.
    pub nodes_per_ms: u64,
}

impl Default for SafetyNetTime {
    fn default() -> SafetyNetTime {
        SafetyNetTime {
            share: 0.1,
            nodes_per_ms: 100,
        }
    }
}

/// The longest reserve kept for the safety net.
const MAX_SAFETY_RESERVE: Duration = Duration::from_millis(200);

/// Kept beyond twice a measured check for a second one: the watch loop's
/// polling and the threads' stopping.
const NET_RECHECK_MARGIN: Duration = Duration::from_millis(3);

/// More time for a move whose value has fallen since our previous move
/// (`[search] falling_value_time`): the earlier search missed something,
/// and the position is likely one where the game is decided.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FallingValue {
    /// Our expectation (P(win) + P(draw)/2) at the end of our previous
    /// search in this game; `None` when there was none.
    pub previous: Option<f32>,
    /// The target grows by this share of itself per unit of fall (a fall
    /// from 0.6 to 0.5 with 5: by half), to twice the target at most.
    pub gain: f32,
}

impl FallingValue {
    /// The factor the target is stretched by, 1..=2, at `expectation`.
    fn stretch(&self, expectation: Option<f32>) -> f32 {
        let (Some(previous), Some(now)) = (self.previous, expectation) else {
            return 1.0;
        };
        let extra = (previous - now) * self.gain;
        if extra.is_finite() {
            1.0 + extra.clamp(0.0, 1.0)
        } else {
            1.0
        }
    }
}

/// The time manager of one search: the budget, counted from the moment
/// the request arrived.
#[derive(Clone, Copy, Debug)]
pub struct TimeManager {
    since: Instant,
    budget: Option<TimeBudget>,
    safety: SafetyNetTime,
    falling: FallingValue,
    /// How long the safety net's check took, once it has run.
    net_took: Option<Duration>,
}

/// What the manager needs to know of the root to decide whether to extend.
#[derive(Clone, Copy, Debug, Default)]
pub struct RootProgress {
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
    pub expectation: Option<f32>,
}

impl TimeManager {
    /// A manager for `budget` (`None`: no time limit), whose clock started
    /// at `since`: time gone before the search (settings read after the
    /// request, a network switch) comes off the budget.
    pub fn new(budget: Option<TimeBudget>, since: Instant) -> TimeManager {
        TimeManager {
            since,
            budget,
            safety: SafetyNetTime::default(),
            falling: FallingValue::default(),
            net_took: None,
        }
    }

    /// The same manager, stretching the target when the value falls.
    pub fn with_falling_value(self, falling: FallingValue) -> TimeManager {
        TimeManager { falling, ..self }
    }

    /// The same manager with the safety net's share of the clock set.
    pub fn with_safety_net(self, safety: SafetyNetTime) -> TimeManager {
        TimeManager { safety, ..self }
    }

    /// The same manager once the safety net's check has taken `took`:
    /// its reserve shrinks to what one more such check needs (twice
    /// `took`, and a little for the clock's granularity), never growing.
    pub fn after_safety_net(self, took: Duration) -> TimeManager {
        TimeManager {
            net_took: Some(took),
            ..self
        }
    }

    pub fn budget(&self) -> Option<TimeBudget> {
        self.budget
    }

    pub fn elapsed(&self) -> Duration {
        self.since.elapsed()
    }

    /// The share of the target kept for the root safety net (a tenth by
    /// default), at most 200 ms; once the net has run, what another check
    /// of the same cost needs, if less.
    fn safety_reserve(&self, budget: TimeBudget) -> Duration {
        let share = budget
            .target
            .mul_f32(self.safety.share.clamp(0.0, 0.5))
            .min(MAX_SAFETY_RESERVE);
        match self.net_took {
            Some(took) => share.min(took.saturating_mul(2).saturating_add(NET_RECHECK_MARGIN)),
            None => share,
        }
    }

    /// Whether the tree search must stop now. It stops at the deadline
    /// less the safety net's share; after the target (stretched if the
    /// value has fallen, see [`FallingValue`]) less that share, it stops
    /// unless another move could still overtake the chosen one in visits
    /// at the current speed in the time left (never while another move has at
    /// least its visits), and in any case at twice that target.
    pub fn tree_search_done(&self, root: RootProgress) -> bool {
        self.tree_search_done_at(root, self.elapsed())
    }

    /// [`Self::tree_search_done`] with the clock read by the caller, so
    /// that a snapshot of the search is judged at the moment it was taken.
    pub fn tree_search_done_at(&self, root: RootProgress, elapsed: Duration) -> bool {
        let Some(budget) = self.budget else {
            return false;
        };
        let reserve = self.safety_reserve(budget);
        // In f64 and checked: a turn-only budget may be near Duration::MAX.
        let stretch = self.falling.stretch(root.expectation);
        let stretched = if stretch > 1.0 {
            Duration::try_from_secs_f64(budget.target.as_secs_f64() * f64::from(stretch))
                .map_or(budget.deadline, |t| t.min(budget.deadline))
        } else {
            budget.target
        };
        let (target, deadline) = (
            stretched.saturating_sub(reserve),
            budget.deadline.saturating_sub(reserve),
        );
        if elapsed >= deadline {
            return true;
        }
        if elapsed < target {
            return false;
        }
        let rate = root.playouts as f64 / elapsed.as_secs_f64().max(1e-3);
        let catchable = deadline.saturating_sub(elapsed).as_secs_f64() * rate;
        let lead = root.chosen_visits.saturating_sub(root.rival_visits);
        lead as f64 > catchable || elapsed >= target.saturating_mul(2)
    }

    /// The root VCT's node budget: `configured`, less on a short clock or
    /// what is left of it (the solver cannot be interrupted, and a request
    /// that waited behind another may begin with its target spent).
    pub fn root_vct_nodes(&self, configured: u64) -> u64 {
        self.root_vct_nodes_at(configured, self.elapsed())
    }

    fn root_vct_nodes_at(&self, configured: u64, elapsed: Duration) -> u64 {
        match self.budget {
            Some(budget) => {
                let left = budget.target.saturating_sub(elapsed);
                configured.min(millis(left).saturating_mul(solver_rate::ROOT_VCT))
            }
            None => configured,
        }
    }

    /// The VCT budget of a new node just below the root.
    pub fn shallow_vct_nodes(&self, configured: u64) -> u64 {
        self.of_target(configured, solver_rate::SHALLOW_VCT)
    }

    /// The safety net's budget for its next check: `configured`, less when
    /// the deadline is near; 0 when the deadline has passed.
    pub fn safety_net_nodes(&self, configured: u64) -> u64 {
        self.safety_net_nodes_at(configured, self.elapsed())
    }

    /// `safety_net_nodes` with `elapsed` of the turn gone.
    fn safety_net_nodes_at(&self, configured: u64, elapsed: Duration) -> u64 {
        match self.budget {
            Some(budget) => {
                let left = budget.deadline.saturating_sub(elapsed);
                configured.min(millis(left).saturating_mul(self.safety.nodes_per_ms))
            }
            None => configured,
        }
    }

    fn of_target(&self, configured: u64, per_ms: u64) -> u64 {
        match self.budget {
            // A turn of any length the manager may send (INFO timeout_turn
            // up to i64::MAX ms) must not overflow.
            Some(budget) => configured.min(millis(budget.target).saturating_mul(per_ms)),
            None => configured,
        }
    }
}

/// Whole milliseconds of `d`, saturating at `u64::MAX`.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Own moves a game's clock is planned over by default
/// (`[search] match_moves`): games between strong engines are mostly
/// decided within a few dozen moves, so the early moves, where they are
/// decided, get the larger share (the match behind it: docs/tuning.md).
pub const DEFAULT_MATCH_MOVES: u32 = 15;

impl TimeControl {
    /// The budget for a move on a board with `empty` empty cells, or `None`
    /// when neither the move nor the game is timed. Under a game clock each
    /// move's target is the time left over `match_moves` moves, fewer as
    /// the board fills.
    pub fn budget(&self, empty: usize, match_moves: u32) -> Option<TimeBudget> {
        if self.turn.is_none() && self.left.is_none() {
            return None;
        }
        let reserve = |d: Duration| d.saturating_sub(self.lag).max(MIN_BUDGET);
        // The hard limit: the turn limit, and never the whole remaining time.
        let mut deadline = self.turn.map(reserve).unwrap_or(Duration::MAX);
        let mut target = deadline;
        if let Some(left) = self.left {
            // Games rarely last beyond a few dozen moves each, and fewer as
            // the board fills: spend a share of what is left accordingly.
            let most = match_moves.max(1);
            let moves_left = (empty as u32 / 6).clamp(most.min(8), most);
            let kept = KEPT_PER_MOVE.saturating_mul((empty as u32).div_ceil(2));
            let share = (left.saturating_sub(kept) / moves_left)
                .saturating_add(self.increment.mul_f32(0.8));
            target = target.min(reserve(share));
            // Keep at least a tenth of the remaining time in any case; with
            // byo-yomi to follow, the move may run into a share of it
            // instead: a period that starts during this move still has the
            // share of each of its other stones.
            let hard = if self.overtime.is_zero() {
                left.mul_f32(0.9)
            } else {
                left.saturating_add(self.overtime.mul_f32(0.9))
            };
            deadline = deadline.min(reserve(hard).max(MIN_BUDGET));
        }
        target = target.min(deadline);
        // In a timed game, a hard limit of three times the target: an
        // undecided tree search goes on to twice the target at most
        // (`tree_search_done_at`), and the rest is the solver's margin.
        let extended = if self.left.is_some() {
            target.saturating_mul(3)
        } else {
            target
        };
        Some(TimeBudget {
            target,
            deadline: deadline.min(extended).max(target),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn budgets() {
        let m = DEFAULT_MATCH_MOVES;
        assert_eq!(TimeControl::default().budget(200, m), None);
        let turn_only = TimeControl {
            turn: Some(ms(5000)),
            lag: ms(400),
            ..TimeControl::default()
        };
        assert_eq!(
            turn_only.budget(200, m),
            Some(TimeBudget {
                target: ms(4600),
                deadline: ms(4600)
            })
        );
        // A match clock: a share of it, never past the turn limit.
        let game = TimeControl {
            turn: Some(ms(30_000)),
            left: Some(ms(180_000)),
            increment: ms(0),
            overtime: ms(0),
            lag: ms(100),
        };
        // What is kept back for the own moves left (half the empty cells).
        let spendable = |empty: u64| 180_000 - empty.div_ceil(2) * 35;
        let b = game.budget(200, 30).unwrap();
        assert_eq!(b.target, ms(spendable(200)) / 30 - ms(100));
        assert!(b.deadline <= ms(29_900) && b.deadline >= b.target);
        // Planned over fewer moves: twice the target, the same limits.
        let b15 = game.budget(200, 15).unwrap();
        assert_eq!(b15.target, ms(spendable(200)) / 15 - ms(100));
        assert!(b15.deadline <= ms(29_900) && b15.deadline >= b15.target);
        // A full board plans over fewer moves still (a sixth of the empty
        // cells), never fewer than 8 (or `match_moves`, if fewer).
        assert_eq!(
            game.budget(60, m).unwrap().target,
            ms(spendable(60)) / 10 - ms(100)
        );
        assert_eq!(
            game.budget(12, m).unwrap().target,
            ms(spendable(12)) / 8 - ms(100)
        );
        let no_turn_limit = TimeControl { turn: None, ..game };
        assert_eq!(
            no_turn_limit.budget(12, 4).unwrap().target,
            ms(spendable(12)) / 4 - ms(100)
        );
        // Almost no time left: tiny but positive, within the time left.
        let short = TimeControl {
            turn: Some(ms(30_000)),
            left: Some(ms(50)),
            increment: ms(0),
            overtime: ms(0),
            lag: ms(100),
        };
        let b = short.budget(100, m).unwrap();
        assert!(b.target >= MIN_BUDGET && b.deadline <= ms(50));
        // A lag larger than the turn still leaves the minimum.
        let tight = TimeControl {
            turn: Some(ms(100)),
            lag: ms(400),
            ..TimeControl::default()
        };
        assert_eq!(tight.budget(10, m).unwrap().deadline, MIN_BUDGET);
    }

    /// With Canadian byo-yomi after the main time, the main time's last
    /// moves may run into a stone's share of the period (which still
    /// leaves each later stone its share); a Fischer increment, added
    /// after the move, keeps a tenth of the clock back as before.
    #[test]
    fn byo_yomi_lets_the_main_times_last_moves_run_into_it() {
        let canadian = TimeControl {
            turn: None,
            left: Some(ms(500)),
            increment: ms(6000),
            overtime: ms(6000),
            lag: ms(100),
        };
        let b = canadian.budget(200, DEFAULT_MATCH_MOVES).unwrap();
        assert!(b.deadline > ms(500), "{b:?}");
        assert!(b.deadline <= ms(500 + 5400 - 100), "{b:?}");
        assert!(b.target > ms(500) && b.target <= b.deadline, "{b:?}");
        let fischer = TimeControl {
            overtime: ms(0),
            ..canadian
        };
        let b = fischer.budget(200, DEFAULT_MATCH_MOVES).unwrap();
        assert!(b.deadline <= ms(450), "{b:?}");
    }

    /// A game that fills a 20x20 board, each move running to its hard
    /// limit and costing 20 ms more, ends with time on the clock.
    #[test]
    fn the_longest_game_ends_on_the_clock() {
        for (match_ms, lag_ms) in [(120_000, 0), (180_000, 100), (10_000, 0)] {
            let mut left = ms(match_ms);
            for empty in (1..=400usize).rev().step_by(2) {
                let clock = TimeControl {
                    turn: Some(ms(5000)),
                    left: Some(left),
                    increment: Duration::ZERO,
                    overtime: Duration::ZERO,
                    lag: ms(lag_ms),
                };
                let b = clock.budget(empty, DEFAULT_MATCH_MOVES).unwrap();
                let used = b.deadline + MOVE_COST;
                assert!(
                    used < left,
                    "{match_ms} ms: out of time with {empty} empty cells ({left:?} left)"
                );
                left -= used;
            }
        }
    }

    #[test]
    fn solver_budgets_hold_at_the_longest_turn() {
        // A turn whose milliseconds times 20 pass u64::MAX (by 4: the
        // product once wrapped to a budget of 4 nodes): the node budgets
        // saturate at the configured ones.
        let longest = TimeControl {
            turn: Some(ms(922_337_203_685_477_581)),
            lag: ms(0),
            ..TimeControl::default()
        };
        let budget = longest.budget(200, DEFAULT_MATCH_MOVES);
        assert_eq!(budget.map(|b| b.target), Some(ms(922_337_203_685_477_581)));
        let manager = TimeManager::new(budget, Instant::now());
        assert_eq!(manager.root_vct_nodes(20_000), 20_000);
        assert_eq!(manager.shallow_vct_nodes(2_000), 2_000);
        assert_eq!(manager.safety_net_nodes(20_000), 20_000);
        // The root VCT gets what is left of the target: none once it is
        // spent (a request that waited behind another).
        let half_second = TimeManager::new(Some(TimeBudget::fixed(ms(500))), Instant::now());
        assert_eq!(half_second.root_vct_nodes_at(20_000, ms(0)), 10_000);
        assert_eq!(half_second.root_vct_nodes_at(20_000, ms(400)), 2_000);
        assert_eq!(half_second.root_vct_nodes_at(20_000, ms(600)), 0);
        // A share of a budget scales both limits, never below the floor.
        let whole = TimeBudget {
            target: ms(1000),
            deadline: ms(4000),
        };
        assert_eq!(
            whole.share(0.5),
            TimeBudget {
                target: ms(500),
                deadline: ms(2000)
            }
        );
        assert_eq!(whole.share(1.0), whole);
        let endless = TimeBudget::fixed(Duration::MAX);
        assert_eq!(endless.share(1.0), endless);
        assert!(endless.share(0.5).target > ms(u64::MAX / 4));
        assert_eq!(whole.share(0.0).deadline, MIN_BUDGET);
        // A short turn still scales them down.
        let short = TimeControl {
            turn: Some(ms(10)),
            lag: ms(0),
            ..TimeControl::default()
        };
        let manager = TimeManager::new(short.budget(200, DEFAULT_MATCH_MOVES), Instant::now());
        assert!(manager.root_vct_nodes(u64::MAX) < 10 * 1000);
    }

    fn progress(chosen_visits: u32, rival_visits: u32, playouts: u64) -> RootProgress {
        RootProgress {
            chosen_visits,
            rival_visits,
            playouts,
            expectation: None,
        }
    }

    #[test]
    fn a_falling_value_stretches_the_target() {
        let budget = TimeBudget {
            target: ms(1000),
            deadline: ms(5000),
        };
        let manager = |previous| {
            TimeManager::new(Some(budget), Instant::now()).with_falling_value(FallingValue {
                previous,
                gain: 5.0,
            })
        };
        // A clear best move (1000 playouts/s): stops once past the target.
        let clear = |expectation| RootProgress {
            expectation,
            ..progress(4500, 10, 1000)
        };
        let done =
            |previous, root, elapsed| manager(previous).tree_search_done_at(root, ms(elapsed));
        // No previous search, or a value that held or rose: the target
        // less the 100 ms reserve, as before.
        for (previous, now) in [
            (None, Some(0.3)),
            (Some(0.5), Some(0.5)),
            (Some(0.5), Some(0.9)),
        ] {
            assert!(!done(previous, clear(now), 850), "{previous:?} {now:?}");
            assert!(done(previous, clear(now), 950), "{previous:?} {now:?}");
        }
        // A root not yet visited has no value to compare.
        assert!(done(Some(0.9), clear(None), 950));
        // 0.6 -> 0.5: half as long again (1.5 s less the reserve).
        assert!(!done(Some(0.6), clear(Some(0.5)), 1350));
        assert!(done(Some(0.6), clear(Some(0.5)), 1450));
        // A large fall at most doubles the target.
        assert!(!done(Some(0.9), clear(Some(0.1)), 1850));
        assert!(done(Some(0.9), clear(Some(0.1)), 1950));
        // A close race goes on to twice the stretched target (3.8 s with
        // the reserve), within the deadline.
        let race = |expectation| RootProgress {
            expectation,
            ..progress(500, 499, 1000)
        };
        assert!(!done(Some(0.6), race(Some(0.5)), 2750));
        assert!(done(Some(0.6), race(Some(0.5)), 2850));
        assert!(!done(Some(0.9), race(Some(0.1)), 3750));
        assert!(done(Some(0.9), race(Some(0.1)), 3850));
        // The deadline holds whatever the stretch: with the deadline at
        // the target, the same fall stops at the target.
        let tight = TimeBudget {
            target: ms(1000),
            deadline: ms(1000),
        };
        let fixed =
            TimeManager::new(Some(tight), Instant::now()).with_falling_value(FallingValue {
                previous: Some(0.9),
                gain: 5.0,
            });
        assert!(!fixed.tree_search_done_at(race(Some(0.1)), ms(850)));
        assert!(fixed.tree_search_done_at(race(Some(0.1)), ms(950)));
        // A budget near the largest Duration is stretched without overflow.
        let endless = TimeBudget::fixed(Duration::MAX);
        let endless =
            TimeManager::new(Some(endless), Instant::now()).with_falling_value(FallingValue {
                previous: Some(0.9),
                gain: 5.0,
            });
        assert!(!endless.tree_search_done_at(clear(Some(0.1)), Duration::from_secs(3600)));
        // Nothing a search reports can break the clock.
        for odd in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            assert!(done(Some(0.5), clear(Some(odd)), 950));
            assert!(done(Some(odd), clear(Some(0.5)), 950));
        }
    }

    #[test]
    fn stop_and_extend() {
        let unlimited = TimeManager::new(None, Instant::now());
        assert!(!unlimited.tree_search_done(progress(0, 0, 0)));
        let budget = TimeBudget {
            target: ms(1000),
            deadline: ms(3000),
        };
        // Judged at given moments, not by the machine's clock: a loaded
        // machine would move the moment past a bound.
        let clock = TimeManager::new(Some(budget), Instant::now());
        let done = |p, at| clock.tree_search_done_at(p, ms(at));
        // Before the target (less the safety reserve of 100 ms): go on.
        assert!(!done(progress(1000, 0, 1000), 800));
        // Past the target: a best the runner-up cannot catch at this speed
        // (1000 playouts/s, 1.9 s left) stops, a close race extends.
        assert!(done(progress(2500, 10, 1000), 1000));
        assert!(!done(progress(500, 450, 1000), 1000));
        // Twice the target ends even a close race; the deadline ends all.
        assert!(done(progress(500, 499, 1000), 1900));
        let fixed = TimeManager::new(Some(TimeBudget::fixed(ms(100))), Instant::now());
        assert!(fixed.tree_search_done_at(progress(0, 0, 0), ms(95)));
    }

    #[test]
    fn solver_budgets_follow_the_clock() {
        let now = Instant::now();
        let unlimited = TimeManager::new(None, now);
        assert_eq!(unlimited.root_vct_nodes(20_000), 20_000);
        assert_eq!(unlimited.safety_net_nodes(20_000), 20_000);
        let short = TimeManager::new(Some(TimeBudget::fixed(ms(100))), now);
        assert_eq!(short.root_vct_nodes_at(20_000, ms(0)), 2_000);
        assert_eq!(short.shallow_vct_nodes(2_000), 400);
        assert!(short.safety_net_nodes(20_000) <= 10_000);
        // Past the deadline the safety net and the root VCT have nothing
        // left.
        let late = TimeManager::new(Some(TimeBudget::fixed(ms(100))), now - ms(200));
        assert_eq!(late.safety_net_nodes(20_000), 0);
        assert_eq!(late.root_vct_nodes(20_000), 0);
    }

    #[test]
    fn after_the_safety_net_the_tree_search_takes_what_it_left() {
        let budget = TimeBudget::fixed(ms(400));
        let clock = TimeManager::new(Some(budget), Instant::now());
        let done = |clock: TimeManager, at| clock.tree_search_done_at(progress(10, 0, 10), ms(at));
        // The default reserve (a tenth, 40 ms) stops the tree at 360 ms.
        assert!(!done(clock, 359));
        assert!(done(clock, 360));
        // A net that took 4 ms leaves 2 x 4 + 3 = 11 ms: on to 389 ms.
        let quick = clock.after_safety_net(ms(4));
        assert!(!done(quick, 388));
        assert!(done(quick, 389));
        // A slow net never makes the reserve larger than the share.
        let slow = clock.after_safety_net(ms(100));
        assert!(!done(slow, 359));
        assert!(done(slow, 360));
    }

    #[test]
    fn the_safety_net_share_is_set_by_the_configuration() {
        let budget = TimeBudget::fixed(ms(1000));
        let now = Instant::now();
        // 850 ms gone: the default tenth (100 ms) stops the tree at 900 ms,
        // a fifth at 800 ms.
        let clock = TimeManager::new(Some(budget), now);
        assert!(!clock.tree_search_done_at(progress(10, 0, 10), ms(850)));
        let fifth = SafetyNetTime {
            share: 0.2,
            nodes_per_ms: 100,
        };
        assert!(clock
            .with_safety_net(fifth)
            .tree_search_done_at(progress(10, 0, 10), ms(850)));
        // The reserve never passes 200 ms, whatever the share.
        let long = TimeManager::new(Some(TimeBudget::fixed(ms(10_000))), now);
        let half = SafetyNetTime {
            share: 0.5,
            nodes_per_ms: 100,
        };
        assert!(!long
            .with_safety_net(half)
            .tree_search_done_at(progress(10, 0, 10), ms(9_700)));
        // The assumed speed scales the budget within the time left.
        let fresh = TimeManager::new(Some(budget), now);
        let nodes = |nodes_per_ms, elapsed| {
            fresh
                .with_safety_net(SafetyNetTime {
                    share: 0.1,
                    nodes_per_ms,
                })
                .safety_net_nodes_at(u64::MAX, elapsed)
        };
        assert_eq!(nodes(100, ms(0)), 100_000);
        assert_eq!(nodes(300, ms(0)), 300_000);
        assert_eq!(nodes(300, ms(900)), 30_000);
        assert_eq!(nodes(300, ms(1200)), 0);
    }
}
