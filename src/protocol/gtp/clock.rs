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
    /// Time our own `genmove`s took per colour since the last
    /// `time_settings` or that colour's `time_left`: a controller need not
    /// send `time_left`, and main time must still run down.
    pub(super) used: [Duration; 2],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct TimeSettings {
    pub(super) main: Duration,
    pub(super) byo_yomi: Duration,
    pub(super) stones: u32,
}

impl GtpClock {
    /// No `time_settings` yet.
    pub(super) fn new() -> GtpClock {
        GtpClock {
            settings: None,
            left: [None; 2],
            used: [Duration::ZERO; 2],
        }
    }

    /// `time_settings`: the clocks start again.
    pub(super) fn set(&mut self, settings: TimeSettings) {
        *self = GtpClock {
            settings: Some(settings),
            ..GtpClock::new()
        };
    }

    /// A new game (`clear_board`, `boardsize`): the same settings, full
    /// clocks. What was spent or said last game is not this game's.
    pub(super) fn new_game(&mut self) {
        *self = GtpClock {
            settings: self.settings,
            ..GtpClock::new()
        };
    }

    /// `time_left` for `color`: what the controller says replaces what we
    /// counted.
    pub(super) fn set_left(&mut self, color: Color, time: Duration, stones: u32) {
        let index = usize::from(color == Color::White);
        self.left[index] = Some((time, stones));
        self.used[index] = Duration::ZERO;
    }

    /// Our `genmove` for `color` took `time`.
    pub(super) fn spend(&mut self, color: Color, time: Duration) {
        let index = usize::from(color == Color::White);
        self.used[index] = self.used[index].saturating_add(time);
    }

    /// The engine's time control for `color`'s next move (section 4.2 of
    /// the specification: Canadian byo-yomi; `byo_yomi_stones` 0 with a
    /// byo-yomi time is no limit, played at the default time a move as
    /// without `time_settings`, so that a genmove always ends by itself).
    pub(super) fn time_control(&self, color: Color, lag: Duration) -> TimeControl {
        // Byo-yomi while main time lasts: its share a move as an increment
        // (the main time need not last), and as the overtime a move may run
        // into once the main time is out.
        let limited = |turn, left, increment| TimeControl {
            turn,
            left,
            increment,
            overtime: increment,
            lag,
        };
        let index = usize::from(color == Color::White);
        let Some(settings) = self.settings else {
            // No settings, but the controller said what is left: a period
            // of byo-yomi over its stones, or sudden death.
            return match self.left[index] {
                // Nothing left and no stones: controllers without a clock
                // say so; no information.
                Some((time, 0)) if time.is_zero() => {
                    limited(Some(DEFAULT_MOVE_TIME), None, Duration::ZERO)
                }
                Some((time, stones)) if stones > 0 => {
                    limited(Some(time / stones), None, Duration::ZERO)
                }
                Some((time, _)) => limited(
                    None,
                    Some(time.saturating_sub(self.used[index])),
                    Duration::ZERO,
                ),
                None => limited(Some(DEFAULT_MOVE_TIME), None, Duration::ZERO),
            };
        };
        if settings.stones == 0 && !settings.byo_yomi.is_zero() {
            return limited(Some(DEFAULT_MOVE_TIME), None, Duration::ZERO);
        }
        let per_stone = |time: Duration, stones: u32| time / stones.max(1);
        let byo_per_move = per_stone(settings.byo_yomi, settings.stones);
        let used = self.used[index];
        // Main time less what our moves took since the controller last said.
        let main_left = |main: Duration| {
            let left = main.saturating_sub(used);
            if left.is_zero() && settings.stones > 0 {
                // Into byo-yomi: a period's share a move.
                limited(Some(byo_per_move), None, Duration::ZERO)
            } else {
                limited(None, Some(left), byo_per_move)
            }
        };
        match self.left[index] {
            // In byo-yomi: the period's time over its stones.
            Some((time, stones)) if stones > 0 => {
                limited(Some(per_stone(time, stones)), None, Duration::ZERO)
            }
            // Main time left, then byo-yomi per move as a guaranteed share.
            Some((time, _)) => main_left(time),
            None if settings.main.is_zero() => limited(Some(byo_per_move), None, Duration::ZERO),
            None => main_left(settings.main),
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
        let mut clock = GtpClock::new();
        let tc = clock.time_control(Color::Black, lag);
        assert_eq!((tc.turn, tc.left), (Some(DEFAULT_MOVE_TIME), None));
        // time_left without time_settings: what it says is the limit.
        clock.set_left(Color::Black, secs(3), 0);
        clock.spend(Color::Black, secs(1));
        let tc = clock.time_control(Color::Black, lag);
        assert_eq!((tc.turn, tc.left), (None, Some(secs(2))));
        clock.set_left(Color::White, secs(20), 4);
        let tc = clock.time_control(Color::White, lag);
        assert_eq!((tc.turn, tc.left), (Some(secs(5)), None));
        // time_left 0 0 without settings: no clock, the default time.
        clock.set_left(Color::Black, secs(0), 0);
        let tc = clock.time_control(Color::Black, lag);
        assert_eq!((tc.turn, tc.left), (Some(DEFAULT_MOVE_TIME), None));
        clock.left = [None; 2];
        // Byo-yomi time without stones: no limit, played at the default
        // time a move.
        clock.settings = Some(TimeSettings {
            main: secs(0),
            byo_yomi: secs(1),
            stones: 0,
        });
        let tc = clock.time_control(Color::Black, lag);
        assert_eq!((tc.turn, tc.left), (Some(DEFAULT_MOVE_TIME), None));
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
        // The main time's last move may run into a stone's share of it.
        assert_eq!(tc.overtime, secs(6));
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

    #[test]
    fn main_time_runs_down_with_our_moves_until_the_controller_says() {
        let lag = Duration::from_millis(100);
        let mut clock = GtpClock::new();
        // Sudden death, 6 s, and no time_left ever.
        clock.set(TimeSettings {
            main: secs(6),
            byo_yomi: secs(0),
            stones: 0,
        });
        clock.spend(Color::Black, secs(2));
        clock.spend(Color::Black, Duration::from_millis(1500));
        assert_eq!(
            clock.time_control(Color::Black, lag).left,
            Some(Duration::from_millis(2500))
        );
        // Sudden death: nothing after the clock.
        assert_eq!(clock.time_control(Color::Black, lag).overtime, secs(0));
        assert_eq!(clock.time_control(Color::White, lag).left, Some(secs(6)));
        // time_left replaces our count.
        clock.set_left(Color::Black, secs(4), 0);
        assert_eq!(clock.time_control(Color::Black, lag).left, Some(secs(4)));
        clock.spend(Color::Black, secs(1));
        assert_eq!(clock.time_control(Color::Black, lag).left, Some(secs(3)));
        // With byo-yomi, main time spent means a period's share a move.
        clock.set(TimeSettings {
            main: secs(2),
            byo_yomi: secs(10),
            stones: 5,
        });
        clock.spend(Color::White, secs(3));
        let tc = clock.time_control(Color::White, lag);
        assert_eq!((tc.turn, tc.left), (Some(secs(2)), None));
        // A new game keeps the settings and fills the clocks again.
        clock.set_left(Color::Black, secs(1), 0);
        clock.new_game();
        for color in [Color::Black, Color::White] {
            let tc = clock.time_control(color, lag);
            assert_eq!((tc.turn, tc.left), (None, Some(secs(2))), "{color:?}");
        }
        // time_settings starts the count again.
        clock.set(TimeSettings {
            main: secs(6),
            byo_yomi: secs(0),
            stones: 0,
        });
        assert_eq!(clock.time_control(Color::White, lag).left, Some(secs(6)));
    }
}
