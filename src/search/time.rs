//! The time manager: how long to think about a move.

use std::time::Duration;

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

impl TimeControl {
    /// The budget for a move on a board with `empty` empty cells, or `None`
    /// when neither the move nor the game is timed.
    pub fn budget(&self, empty: usize) -> Option<TimeBudget> {
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
            let moves_left = (empty as u32 / 6).clamp(8, 30);
            let share = left / moves_left + self.increment.mul_f32(0.8);
            target = target.min(reserve(share));
            // Keep at least a tenth of the remaining time in any case.
            deadline = deadline.min(reserve(left.mul_f32(0.9)).max(MIN_BUDGET));
        }
        target = target.min(deadline);
        // In a timed game, allow up to three times the target when the
        // search is undecided, within the deadline.
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
        assert_eq!(TimeControl::default().budget(200), None);
        let turn_only = TimeControl {
            turn: Some(ms(5000)),
            lag: ms(400),
            ..TimeControl::default()
        };
        assert_eq!(
            turn_only.budget(200),
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
            lag: ms(100),
        };
        let b = game.budget(200).unwrap();
        assert_eq!(b.target, ms(180_000 / 30 - 100));
        assert!(b.deadline <= ms(29_900) && b.deadline >= b.target);
        // Almost no time left: tiny but positive, within the time left.
        let short = TimeControl {
            turn: Some(ms(30_000)),
            left: Some(ms(50)),
            increment: ms(0),
            lag: ms(100),
        };
        let b = short.budget(100).unwrap();
        assert!(b.target >= MIN_BUDGET && b.deadline <= ms(50));
        // A lag larger than the turn still leaves the minimum.
        let tight = TimeControl {
            turn: Some(ms(100)),
            lag: ms(400),
            ..TimeControl::default()
        };
        assert_eq!(tight.budget(10).unwrap().deadline, MIN_BUDGET);
    }
}
