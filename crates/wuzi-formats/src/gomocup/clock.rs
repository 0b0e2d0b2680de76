//! The clock as a Gomocup manager describes it, in its own terms.

use std::time::Duration;

use super::UNLIMITED_MS;

/// The five `INFO` clock keys, as the manager sent them (milliseconds).
/// What they mean together (which value says "no limit") is decided here,
/// once, for the brain and the test brain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    /// `INFO timeout_turn`: time for one move; negative (or, for
    /// Yixin-Board, 0) is no limit. `None` until the manager sends one:
    /// Piskvork's 5 s then, or no turn limit where a match limit is known
    /// (c-gomoku-cli sends timeout_turn only when its games have one).
    pub timeout_turn: Option<i64>,
    /// `INFO timeout_match`: time for the whole game; 0 or negative is no
    /// limit (Piskvork sends 0, Yixin-Board documents any value up to 0).
    pub timeout_match: i64,
    /// `INFO time_left`: time left for the game; [`UNLIMITED_MS`] is none.
    pub time_left: i64,
    /// `INFO time_increment`.
    pub increment: i64,
    /// `INFO protocol_lag` (extended protocol): reserve per move.
    pub lag: i64,
}

impl Default for Clock {
    /// Piskvork's defaults before any INFO: 5 s per move unless a match
    /// limit is known, no match limit known (so a `time_left` alone is
    /// obeyed), 0.4 s of lag.
    fn default() -> Clock {
        Clock {
            timeout_turn: None,
            timeout_match: i64::MAX,
            time_left: UNLIMITED_MS,
            increment: 0,
            lag: 400,
        }
    }
}

/// Piskvork's turn limit before any `INFO timeout_turn`.
const DEFAULT_TURN_MS: i64 = 5000;

/// The longest `protocol_lag` taken, in INFO or the configuration: more
/// would leave every move the minimum budget.
pub const MAX_PROTOCOL_LAG_MS: i64 = 60_000;

/// An `INFO` clock key with a value it cannot take.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ClockValueError {
    #[error("expected an integer (milliseconds)")]
    NotAnInteger,
    #[error("the protocol lag may be at most {MAX_PROTOCOL_LAG_MS} ms")]
    LagTooLong,
}

impl Clock {
    /// Whether `key` is one of the clock's `INFO` keys.
    pub fn is_clock_key(key: &str) -> bool {
        matches!(
            key,
            "timeout_turn" | "timeout_match" | "time_left" | "time_increment" | "protocol_lag"
        )
    }

    /// Applies `INFO key value`: `None` when `key` is not a clock key, an
    /// error (and no change) when the value is not a number, or a lag
    /// longer than [`MAX_PROTOCOL_LAG_MS`].
    pub fn set(&mut self, key: &str, value: &str) -> Option<Result<(), ClockValueError>> {
        if !Clock::is_clock_key(key) {
            return None;
        }
        let Ok(v) = value.trim().parse::<i64>() else {
            return Some(Err(ClockValueError::NotAnInteger));
        };
        match key {
            "timeout_turn" => self.timeout_turn = Some(v),
            "timeout_match" => {
                self.timeout_match = v;
                // A manager that never sends time_left still has its match
                // limit kept: the clock starts full and runs down with the
                // brain's own moves (`spend`).
                if self.time_left == UNLIMITED_MS {
                    self.new_game();
                }
            }
            "time_left" => self.time_left = v,
            "time_increment" => self.increment = v.max(0),
            _ if v > MAX_PROTOCOL_LAG_MS => return Some(Err(ClockValueError::LagTooLong)),
            _ => self.lag = v.max(0),
        }
        Some(Ok(()))
    }

    /// A new game in the same process (RESTART) starts with the whole
    /// match clock: the last game's `time_left` would otherwise hold until
    /// the manager sends another. Not at START, which Yixin-Board sends
    /// after the `time_left` of the position that follows.
    pub fn new_game(&mut self) {
        self.time_left = if self.timeout_match > 0 && self.timeout_match < UNLIMITED_MS {
            self.timeout_match
        } else {
            UNLIMITED_MS
        };
    }

    /// Counts `elapsed`, the brain's time on one request, off the time left
    /// of a timed game. A manager that sends `time_left` before each move
    /// overwrites it; one that sends it once, or never, still has the
    /// match limit kept.
    pub fn spend(&mut self, elapsed: Duration) {
        if self.time_left < UNLIMITED_MS {
            let spent = i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX);
            self.time_left = self.time_left.saturating_sub(spent).max(0);
        }
    }

    /// The limit for one move; `None` for none. `zero_is_unlimited`:
    /// Yixin-Board sends `timeout_turn 0` for "no limit", where Piskvork's
    /// 0 during a search means "move now".
    pub fn turn_limit(&self, zero_is_unlimited: bool) -> Option<Duration> {
        let turn = match self.timeout_turn {
            Some(turn) => turn,
            None if self.game_left().is_some() => return None,
            None => DEFAULT_TURN_MS,
        };
        if turn < 0 || (zero_is_unlimited && turn == 0) {
            None
        } else {
            Some(ms(turn))
        }
    }

    /// The time left for the game; `None` when the game is not timed.
    pub fn game_left(&self) -> Option<Duration> {
        (self.timeout_match > 0 && self.time_left < UNLIMITED_MS).then(|| ms(self.time_left))
    }

    pub fn increment(&self) -> Duration {
        ms(self.increment)
    }

    pub fn lag(&self) -> Duration {
        ms(self.lag)
    }
}

fn ms(v: i64) -> Duration {
    Duration::from_millis(v.max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_game_starts_with_the_whole_match_clock() {
        let mut clock = Clock::default();
        clock.set("time_left", "1500");
        clock.new_game();
        assert_eq!(clock.game_left(), None, "no match limit was given");
        clock.set("timeout_match", "120000");
        clock.set("time_left", "1500");
        assert_eq!(clock.game_left(), Some(Duration::from_millis(1500)));
        clock.new_game();
        assert_eq!(clock.game_left(), Some(Duration::from_millis(120_000)));
        clock.set("timeout_match", "0");
        clock.new_game();
        assert_eq!(clock.game_left(), None, "timeout_match 0 is no limit");
    }

    #[test]
    fn the_match_clock_runs_down_with_the_brains_moves() {
        let mut clock = Clock::default();
        // Only the match limit given: the game starts with all of it.
        clock.set("timeout_match", "180000");
        assert_eq!(clock.game_left(), Some(Duration::from_millis(180_000)));
        clock.spend(Duration::from_millis(12_345));
        assert_eq!(clock.game_left(), Some(Duration::from_millis(167_655)));
        // The manager's figure replaces the count.
        clock.set("time_left", "100000");
        clock.spend(Duration::from_secs(1));
        assert_eq!(clock.game_left(), Some(Duration::from_millis(99_000)));
        // A time_left sent before the match limit is kept.
        let mut clock = Clock::default();
        clock.set("time_left", "5000");
        clock.set("timeout_match", "180000");
        assert_eq!(clock.game_left(), Some(Duration::from_millis(5000)));
        // Spending past the end leaves nothing, not a negative time.
        clock.spend(Duration::from_secs(3600));
        assert_eq!(clock.game_left(), Some(Duration::ZERO));
        // No limit: nothing to count.
        let mut untimed = Clock::default();
        untimed.set("timeout_match", "0");
        untimed.spend(Duration::from_secs(1));
        assert_eq!(untimed.game_left(), None);
        assert_eq!(untimed.time_left, UNLIMITED_MS);
    }

    #[test]
    fn keys_set_the_clock_and_bad_values_leave_it() {
        let mut clock = Clock::default();
        assert_eq!(clock.set("rule", "1"), None);
        assert_eq!(clock.set("timeout_turn", "2000"), Some(Ok(())));
        assert_eq!(clock.set("time_left", " 90000 "), Some(Ok(())));
        assert_eq!(
            clock.set("timeout_match", "1.5"),
            Some(Err(ClockValueError::NotAnInteger))
        );
        assert_eq!(clock.set("protocol_lag", "60000"), Some(Ok(())));
        assert_eq!(
            clock.set("protocol_lag", "60001"),
            Some(Err(ClockValueError::LagTooLong))
        );
        assert_eq!(clock.lag, 60_000);
        assert_eq!(clock.timeout_match, i64::MAX);
        assert_eq!(clock.turn_limit(false), Some(Duration::from_millis(2000)));
        assert_eq!(clock.game_left(), Some(Duration::from_millis(90_000)));
        clock.set("time_increment", "-5");
        assert_eq!(clock.increment(), Duration::ZERO);
    }

    /// c-gomoku-cli sends no timeout_turn when its games have no turn
    /// limit: the match clock alone then rules each move, not a default 5 s.
    #[test]
    fn without_a_turn_limit_sent_a_match_clock_alone_rules() {
        let mut clock = Clock::default();
        assert_eq!(clock.turn_limit(false), Some(Duration::from_secs(5)));
        clock.set("timeout_match", "120000");
        clock.set("time_left", "120000");
        assert_eq!(clock.turn_limit(false), None);
        assert_eq!(clock.game_left(), Some(Duration::from_secs(120)));
        clock.set("timeout_turn", "5000");
        assert_eq!(clock.turn_limit(false), Some(Duration::from_secs(5)));
        // No match limit either: Piskvork's default turn.
        let mut untimed = Clock::default();
        untimed.set("timeout_match", "0");
        assert_eq!(untimed.turn_limit(false), Some(Duration::from_secs(5)));
    }

    #[test]
    fn what_means_no_limit() {
        let mut clock = Clock::default();
        assert_eq!(clock.game_left(), None, "time_left unlimited");
        clock.set("time_left", "1000");
        clock.set("timeout_match", "0");
        assert_eq!(clock.game_left(), None, "timeout_match 0");
        clock.set("timeout_match", "-1");
        assert_eq!(clock.game_left(), None, "timeout_match below 0");
        clock.set("timeout_match", "60000");
        assert_eq!(clock.game_left(), Some(Duration::from_millis(1000)));
        clock.set("timeout_turn", "0");
        assert_eq!(clock.turn_limit(false), Some(Duration::ZERO));
        assert_eq!(clock.turn_limit(true), None);
        clock.set("timeout_turn", "-1");
        assert_eq!(clock.turn_limit(false), None);
    }
}
