//! A game as the WebSocket server referees it: the board (the rules decide
//! every move), the clocks, and the move log that is its checkpoint.
//!
//! Time is passed in, not read: the caller says how long the side to move
//! has been thinking, so the referee is exact and testable.

use std::time::Duration;

use wuzi_game::game::{Board, BoardSize, Color, MoveError, Outcome, Point, Rule};

use super::message::{
    EndReason, GameConfiguration, GameState, LogEntry, PerPlayer, PlayerState, ScoreAndTime,
    ServerMessage, WsColor, WsMove, WsPoint,
};

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ending {
    pub reason: EndReason,
    pub winner: Option<Color>,
    /// Whose time ran out (reason `timeout`).
    pub timed_out: Option<Color>,
}

/// The referee's game.
#[derive(Clone, Debug)]
pub struct WsGame {
    initial: Board,
    board: Board,
    /// Each player's time for the game.
    time: Duration,
    log: Vec<LogEntry>,
    /// Remaining time of each player after each move (index 0: before any).
    remaining: Vec<[Duration; 2]>,
    /// Time the side to move had spent when the game was paused (a
    /// disconnection): it comes off its clock when the game resumes.
    idle: Duration,
    ending: Option<Ending>,
    passes_in_a_row: u8,
}

fn index(c: Color) -> usize {
    match c {
        Color::Black => 0,
        Color::White => 1,
    }
}

fn ms(d: Duration) -> u64 {
    d.as_millis().min(u64::MAX as u128) as u64
}

impl WsGame {
    /// A new game on an empty board, `time` per player.
    pub fn new(size: BoardSize, rule: Rule, time: Duration) -> WsGame {
        let board = Board::new(size, rule);
        WsGame {
            initial: board.clone(),
            board,
            time,
            log: Vec::new(),
            remaining: vec![[time, time]],
            idle: Duration::ZERO,
            ending: None,
            passes_in_a_row: 0,
        }
    }

    pub fn board(&self) -> &Board {
        &self.board
    }

    pub fn turn(&self) -> Color {
        self.board.side_to_move()
    }

    pub fn ending(&self) -> Option<Ending> {
        self.ending
    }

    pub fn moves(&self) -> usize {
        self.log.len()
    }

    fn clocks(&self) -> [Duration; 2] {
        self.remaining
            .last()
            .copied()
            .unwrap_or([self.time, self.time])
    }

    /// The side to move's time left after thinking for `thinking` (the
    /// idle time of a pause included).
    pub fn time_left(&self, thinking: Duration) -> Duration {
        self.clocks()[index(self.turn())].saturating_sub(self.idle + thinking)
    }

    /// Both players' remaining milliseconds, the side to move's after
    /// `thinking`.
    pub fn remaining_time(&self, thinking: Duration) -> PerPlayer<u64> {
        let mut clocks = self.clocks();
        if self.ending.is_none() {
            let i = index(self.turn());
            clocks[i] = clocks[i].saturating_sub(self.idle + thinking);
        }
        PerPlayer {
            black: ms(clocks[0]),
            white: ms(clocks[1]),
        }
    }

    /// Judges `mv` by `color` after `thinking` on it: `Err` with a reason
    /// (the position unchanged, the clock still running), or the move is
    /// played and `Ok` says whether it ended the game.
    pub fn play(
        &mut self,
        color: Color,
        mv: WsMove,
        thinking: Duration,
    ) -> Result<Option<Ending>, String> {
        if self.ending.is_some() {
            return Err("the game is over".into());
        }
        if color != self.turn() {
            return Err("it is not your turn".into());
        }
        let spent = self.idle + thinking;
        let i = index(color);
        let mut clocks = self.clocks();
        if spent > clocks[i] {
            return Ok(Some(self.time_out()));
        }
        let other = color.opponent();
        let ending = match mv {
            WsMove::Resign => Some(Ending {
                reason: EndReason::Resign,
                winner: Some(other),
                timed_out: None,
            }),
            WsMove::Pass => {
                self.passes_in_a_row += 1;
                self.board.set_side_to_move(other);
                (self.passes_in_a_row >= 2).then_some(Ending {
                    reason: EndReason::Pass,
                    winner: None,
                    timed_out: None,
                })
            }
            WsMove::Place { point } => {
                let p = self.point(point)?;
                self.board
                    .check_move(i64::from(p.x()), i64::from(p.y()), color)
                    .map_err(|e| match e {
                        MoveError::Occupied(_) => format!("{} is occupied", self.named(point, p)),
                        MoveError::Forbidden(_) => format!(
                            "{} is forbidden for black under renju",
                            self.named(point, p)
                        ),
                        other => other.to_string(),
                    })?;
                self.board.play(p).map_err(|e| e.to_string())?;
                self.passes_in_a_row = 0;
                match self.board.outcome() {
                    Some(Outcome::Win(winner)) => Some(Ending {
                        reason: EndReason::Five,
                        winner: Some(winner),
                        timed_out: None,
                    }),
                    Some(Outcome::Draw) => Some(Ending {
                        reason: EndReason::Draw,
                        winner: None,
                        timed_out: None,
                    }),
                    None => None,
                }
            }
        };
        clocks[i] -= spent;
        self.remaining.push(clocks);
        self.log.push(LogEntry {
            mv,
            delta_time: ms(spent),
        });
        self.idle = Duration::ZERO;
        self.ending = ending;
        Ok(ending)
    }

    /// A cell as the web board labels it (`H8`: column letter, row from
    /// the bottom) and as the protocol numbers it, for a refusal's text.
    fn named(&self, point: WsPoint, p: Point) -> String {
        // The page's labels (page.html's columnLabel): A..Z, then AA, AB...
        let letter = |k: u8| char::from(b'A' + k);
        let column = match p.x() {
            x @ 0..=25 => letter(x).to_string(),
            x => format!("{}{}", letter(x / 26 - 1), letter(x % 26)),
        };
        let row = u32::from(self.board.size().height()) - u32::from(p.y());
        format!("{column}{row} (row {}, column {})", point.row, point.column)
    }

    /// The cells forbidden to black now: under renju with black to move
    /// in a game not over, else none.
    pub fn forbidden(&self) -> Vec<WsPoint> {
        if self.ending.is_some()
            || !self.board.rule().has_forbidden_moves(Color::Black)
            || self.board.side_to_move() != Color::Black
        {
            return Vec::new();
        }
        let mut board = self.board.clone();
        board
            .forbidden_points()
            .into_iter()
            .map(|p| WsPoint {
                row: u32::from(p.y()),
                column: u32::from(p.x()),
            })
            .collect()
    }

    fn point(&self, point: WsPoint) -> Result<Point, String> {
        let size = self.board.size();
        i32::try_from(point.column)
            .ok()
            .zip(i32::try_from(point.row).ok())
            .and_then(|(x, y)| size.point(x, y))
            .ok_or_else(|| {
                format!(
                    "row {}, column {} is off the {} board",
                    point.row, point.column, size
                )
            })
    }

    /// The side to move's time ran out.
    pub fn time_out(&mut self) -> Ending {
        let ending = Ending {
            reason: EndReason::Timeout,
            winner: None,
            timed_out: Some(self.turn()),
        };
        let mut clocks = self.clocks();
        clocks[index(self.turn())] = Duration::ZERO;
        self.remaining.push(clocks);
        self.ending = Some(ending);
        ending
    }

    /// Pauses the game (a player disconnected) after the side to move has
    /// been thinking for `thinking`: that time is kept as the idle time of
    /// the checkpoint.
    pub fn pause(&mut self, thinking: Duration) {
        self.idle += thinking;
    }

    fn state(&self, board: &Board, clocks: [Duration; 2]) -> GameState {
        let size = board.size();
        let rows = (0..size.height())
            .map(|y| {
                (0..size.width())
                    .map(|x| match Point::new(x, y).and_then(|p| board.stone(p)) {
                        Some(Color::Black) => "B".to_string(),
                        Some(Color::White) => "W".to_string(),
                        None => ".".to_string(),
                    })
                    .collect()
            })
            .collect();
        let player = |d: Duration| PlayerState {
            remaining_time: ms(d),
            prisoners: 0,
        };
        GameState {
            board: rows,
            players: PerPlayer {
                black: player(clocks[0]),
                white: player(clocks[1]),
            },
            turn: board.side_to_move().into(),
        }
    }

    /// The `START` configuration: the initial state and the log (a resumed
    /// game replays it), the idle time, and for protocol v2 the last two
    /// states.
    pub fn configuration(&self, v2: bool) -> GameConfiguration {
        let final_states = v2.then(|| {
            let mut states = Vec::new();
            if let Some(before) = self.board_before_last() {
                let clocks = self.remaining[self.remaining.len().saturating_sub(2)];
                states.push(self.state(&before, clocks));
            }
            states.push(self.state(&self.board, self.clocks()));
            states
        });
        GameConfiguration {
            initial_state: self.state(&self.initial, [self.time, self.time]),
            move_log: self.log.clone(),
            komi: 0.0,
            ko: false,
            superko: false,
            mercy: 0,
            mercy_start: 0,
            scoring_method: "area".into(),
            prisoner_score: 0,
            idle_delta_time: ms(self.idle),
            final_states,
            rule: Some(self.board.rule().to_string()),
        }
    }

    /// The position before the last logged move, if any.
    fn board_before_last(&self) -> Option<Board> {
        let last = self.log.last()?;
        let mut board = self.board.clone();
        match last.mv {
            WsMove::Place { .. } => {
                board.undo();
            }
            WsMove::Pass | WsMove::Resign => {
                board.set_side_to_move(board.side_to_move().opponent());
            }
        }
        Some(board)
    }

    /// The `END` message of an ending.
    pub fn end_message(&self, ending: Ending) -> ServerMessage {
        let remaining = self.remaining_time(Duration::ZERO);
        let score = |c: Color| match ending.winner {
            Some(w) if w == c => 1.0,
            Some(_) => 0.0,
            // Two passes end a game no one won (gomoku counts no
            // territory): a draw, as a full board is.
            None if matches!(ending.reason, EndReason::Draw | EndReason::Pass) => 0.5,
            None => 0.0,
        };
        ServerMessage::End {
            reason: ending.reason,
            winner: match ending.winner {
                Some(Color::Black) => "B".into(),
                Some(Color::White) => "W".into(),
                None => ".".into(),
            },
            players: PerPlayer {
                black: ScoreAndTime {
                    score: score(Color::Black),
                    remaining_time: remaining.black,
                },
                white: ScoreAndTime {
                    score: score(Color::White),
                    remaining_time: remaining.white,
                },
            },
            timed_out: ending.timed_out.map(WsColor::from),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(row: u32, column: u32) -> WsMove {
        WsMove::Place {
            point: WsPoint { row, column },
        }
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn moves_are_refereed_and_clocks_kept() {
        let mut g = WsGame::new(BoardSize::FIFTEEN, Rule::Freestyle, ms(10_000));
        assert_eq!(
            g.play(Color::White, at(7, 7), ms(5)),
            Err("it is not your turn".into())
        );
        assert_eq!(g.play(Color::Black, at(7, 7), ms(300)), Ok(None));
        // Named as the web board labels it: column H, row 8 from the bottom.
        assert_eq!(
            g.play(Color::White, at(7, 7), ms(10)),
            Err("H8 (row 7, column 7) is occupied".into())
        );
        let mut wide = WsGame::new(BoardSize::new(30, 20).unwrap(), Rule::Freestyle, ms(10_000));
        assert_eq!(wide.play(Color::Black, at(2, 27), ms(5)), Ok(None));
        assert_eq!(
            wide.play(Color::White, at(2, 27), ms(5)),
            Err("AB18 (row 2, column 27) is occupied".into())
        );
        assert!(g
            .play(Color::White, at(15, 0), ms(10))
            .unwrap_err()
            .contains("off the"));
        let r = g.remaining_time(ms(200));
        assert_eq!((r.black, r.white), (9_700, 9_800));
        // Black makes five on row 7 while white plays far away.
        for i in 1..5u32 {
            assert_eq!(g.play(Color::White, at(0, i * 2), ms(1)), Ok(None));
            let result = g.play(Color::Black, at(7, 7 + i), ms(1));
            if i < 4 {
                assert_eq!(result, Ok(None));
            } else {
                let ending = result.unwrap().unwrap();
                assert_eq!(
                    (ending.reason, ending.winner),
                    (EndReason::Five, Some(Color::Black))
                );
            }
        }
        assert_eq!(
            g.play(Color::White, at(1, 1), ms(1)),
            Err("the game is over".into())
        );
        assert_eq!(g.moves(), 9);
        let ServerMessage::End {
            winner, players, ..
        } = g.end_message(g.ending().unwrap())
        else {
            panic!("not END")
        };
        assert_eq!(winner, "B");
        assert_eq!((players.black.score, players.white.score), (1.0, 0.0));
    }

    #[test]
    fn renju_forbidden_points_are_invalid_and_time_runs_out() {
        let mut g = WsGame::new(BoardSize::FIFTEEN, Rule::Renju, ms(1_000));
        // Black's double three at row 7, column 7.
        for (b, w) in [
            ((7, 5), (0, 0)),
            ((7, 6), (0, 2)),
            ((8, 7), (0, 4)),
            ((9, 7), (0, 6)),
        ] {
            g.play(Color::Black, at(b.0, b.1), ms(1)).unwrap();
            g.play(Color::White, at(w.0, w.1), ms(1)).unwrap();
        }
        let err = g.play(Color::Black, at(7, 7), ms(1)).unwrap_err();
        assert!(err.contains("forbidden"), "{err}");
        // The boards are told: the cell is forbidden while black is to
        // move, and only then.
        assert_eq!(g.forbidden(), [WsPoint { row: 7, column: 7 }]);
        let mut after = g.clone();
        after.play(Color::Black, at(14, 14), ms(1)).unwrap();
        assert!(after.forbidden().is_empty());
        // Black thinks past its time: a timeout, no winner in the message.
        let ending = g.play(Color::Black, at(7, 8), ms(2_000)).unwrap().unwrap();
        assert_eq!(ending.reason, EndReason::Timeout);
        assert_eq!(ending.timed_out, Some(Color::Black));
        let ServerMessage::End {
            winner, timed_out, ..
        } = g.end_message(ending)
        else {
            panic!("not END")
        };
        assert_eq!((winner.as_str(), timed_out), (".", Some(WsColor::B)));
    }

    #[test]
    fn a_checkpoint_replays_to_the_same_game() {
        let mut g = WsGame::new(BoardSize::new(9, 9).unwrap(), Rule::Standard, ms(60_000));
        g.play(Color::Black, at(4, 4), ms(1_000)).unwrap();
        g.play(Color::White, at(4, 5), ms(2_000)).unwrap();
        g.pause(ms(500));
        let config = g.configuration(true);
        assert_eq!(config.move_log.len(), 2);
        assert_eq!(config.move_log[1].delta_time, 2_000);
        assert_eq!(config.idle_delta_time, 500);
        assert_eq!(config.rule.as_deref(), Some("standard"));
        let states = config.final_states.expect("v2");
        assert_eq!(states.len(), 2);
        assert_eq!(states[1].board[4][5], "W");
        assert_eq!(states[0].board[4][5], ".");
        assert_eq!(states[1].turn, WsColor::B);
        // Replaying the log on the initial state gives the same board and
        // clocks; the idle time comes off the side to move.
        let mut replay = WsGame::new(BoardSize::new(9, 9).unwrap(), Rule::Standard, ms(60_000));
        for entry in &config.move_log {
            let who = replay.turn();
            replay.play(who, entry.mv, ms(entry.delta_time)).unwrap();
        }
        assert_eq!(replay.board().hash(), g.board().hash());
        let r = g.remaining_time(Duration::ZERO);
        assert_eq!((r.black, r.white), (58_500, 58_000));
        // Two passes in a row end the game without a winner.
        g.play(Color::Black, WsMove::Pass, ms(1)).unwrap();
        let end = g.play(Color::White, WsMove::Pass, ms(1)).unwrap().unwrap();
        assert_eq!((end.reason, end.winner), (EndReason::Pass, None));
        assert!(g.configuration(false).final_states.is_none());
        // Scored as a draw.
        let ServerMessage::End { players, .. } = g.end_message(end) else {
            panic!("not END");
        };
        assert_eq!((players.black.score, players.white.score), (0.5, 0.5));
    }
}
