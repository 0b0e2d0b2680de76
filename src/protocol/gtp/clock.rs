//! GTP's clock: `time_settings` (Canadian byo-yomi) and `time_left`, as
//! the engine's time control for the next move.

use super::*;

/// The clock as `time_settings` and `time_left` describe it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct GtpClock {
    /// `None`: no `time_settings` yet.
    pub(super) settings: Option<TimeSettings>,
    /// The last `time_left` per colour: time, and stones (0: main time).
    pub(super) left: [Option<(Duration, u32)>; 2],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct TimeSettings {
    pub(super) main: Duration,
    pub(super) byo_yomi: Duration,
    pub(super) stones: u32,
}

impl GtpClock {
    /// The engine's time control for `color`'s next move (section 4.2 of
    /// the specification: Canadian byo-yomi, `byo_yomi_stones` 0 with a
    /// byo-yomi time is no limit).
    pub(super) fn time_control(&self, color: Color, lag: Duration) -> TimeControl {
        let limited = |turn, left, increment| TimeControl {
            turn,
            left,
            increment,
            lag,
        };
        let Some(settings) = self.settings else {
            return limited(Some(DEFAULT_MOVE_TIME), None, Duration::ZERO);
        };
        if settings.stones == 0 && !settings.byo_yomi.is_zero() {
            return limited(None, None, Duration::ZERO);
        }
        let per_stone = |time: Duration, stones: u32| time / stones.max(1);
        let byo_per_move = per_stone(settings.byo_yomi, settings.stones);
        let index = usize::from(color == Color::White);
        match self.left[index] {
            // In byo-yomi: the period's time over its stones.
            Some((time, stones)) if stones > 0 => {
                limited(Some(per_stone(time, stones)), None, Duration::ZERO)
            }
            // Main time left, then byo-yomi per move as a guaranteed share.
            Some((time, _)) => limited(None, Some(time), byo_per_move),
            None if settings.main.is_zero() => limited(Some(byo_per_move), None, Duration::ZERO),
            None => limited(None, Some(settings.main), byo_per_move),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn time_settings_become_time_controls() {
        let lag = Duration::from_millis(100);
        let mut clock = GtpClock {
            settings: None,
            left: [None; 2],
        };
        let tc = clock.time_control(Color::Black, lag);
        assert_eq!((tc.turn, tc.left), (Some(DEFAULT_MOVE_TIME), None));
        // Byo-yomi time without stones: no limit.
        clock.settings = Some(TimeSettings {
            main: secs(0),
            byo_yomi: secs(1),
            stones: 0,
        });
        let tc = clock.time_control(Color::Black, lag);
        assert_eq!((tc.turn, tc.left), (None, None));
        // 10 minutes, then 30 s per 5 stones.
        clock.settings = Some(TimeSettings {
            main: secs(600),
            byo_yomi: secs(30),
            stones: 5,
        });
        let tc = clock.time_control(Color::White, lag);
        assert_eq!(
            (tc.turn, tc.left, tc.increment),
            (None, Some(secs(600)), secs(6))
        );
        // time_left per colour: main time, then a byo-yomi period.
        clock.left[1] = Some((secs(42), 0));
        assert_eq!(clock.time_control(Color::White, lag).left, Some(secs(42)));
        clock.left[0] = Some((secs(20), 4));
        let tc = clock.time_control(Color::Black, lag);
        assert_eq!((tc.turn, tc.left), (Some(secs(5)), None));
        assert_eq!(tc.lag, lag);
        // Byo-yomi from the start (no main time).
        clock.settings = Some(TimeSettings {
            main: secs(0),
            byo_yomi: secs(1),
            stones: 5,
        });
        clock.left = [None; 2];
        let tc = clock.time_control(Color::Black, lag);
        assert_eq!(tc.turn, Some(Duration::from_millis(200)));
    }
}
