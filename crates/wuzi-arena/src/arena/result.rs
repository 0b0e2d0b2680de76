//! How a game of the match ended, and what that means for the score and
//! the records.

use std::fmt::Write as _;
use std::time::Duration;

use crate::arena::stats::Wld;
use wuzi_formats::record::MoveRecord;
use wuzi_game::game::{Color, Outcome, Point};

/// Why a game ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// The winner's last stone made a winning line under the rule.
    Five,
    /// No empty cell left: a draw.
    BoardFull,
    /// Drawn by the runner after this many stones (`--draw-after`).
    DrawAdjudicated { plies: usize },
    /// A renju-forbidden black move (double three, double four, overline):
    /// black loses; the stone is in the record.
    Forbidden { point: Point },
    /// The answer was an occupied cell.
    Occupied { x: i64, y: i64 },
    /// The answer was off the board.
    OffBoard { x: i64, y: i64 },
    /// The answer was not `x,y` (nor MESSAGE, DEBUG, UNKNOWN, ERROR, SUGGEST).
    Unparsable { line: String },
    /// No move within the turn or match time plus the tolerance (also a
    /// hung engine); the process is killed.
    TimeForfeit {
        elapsed_ms: u64,
        allowed_ms: u64,
        /// The last `ERROR`/`UNKNOWN` line the engine sent while thinking.
        last_error: Option<String>,
    },
    /// The process exited or closed its pipes.
    Crash { detail: String },
    /// It could not be started: no `OK` to START/RECTSTART in time, an
    /// `ERROR`, or an exit.
    StartFailure { detail: String },
}

impl EndReason {
    /// A short label for tables: `five`, `time forfeit`, ...
    pub fn label(&self) -> &'static str {
        match self {
            EndReason::Five => "five",
            EndReason::BoardFull => "board full",
            EndReason::DrawAdjudicated { .. } => "draw adjudication",
            EndReason::Forbidden { .. } => "forbidden move",
            EndReason::Occupied { .. } => "occupied cell",
            EndReason::OffBoard { .. } => "off board",
            EndReason::Unparsable { .. } => "unparsable answer",
            EndReason::TimeForfeit { .. } => "time forfeit",
            EndReason::Crash { .. } => "crash",
            EndReason::StartFailure { .. } => "start failure",
        }
    }

    /// Whether the loser lost by an error of its own (not on the board).
    pub fn is_fault(&self) -> bool {
        !matches!(
            self,
            EndReason::Five
                | EndReason::BoardFull
                | EndReason::DrawAdjudicated { .. }
                | EndReason::Forbidden { .. }
        )
    }

    /// The `end` column of a TSV record, in the Gomocup results archive's
    /// words where it has one (`other` for a forfeit or crash,
    /// `illegal_move`, `black_forbidden`): a trainer reading the record
    /// then tells a game decided off the board from one played out.
    pub fn tsv_end(&self) -> &'static str {
        match self {
            EndReason::Five => "five",
            EndReason::BoardFull => "draw",
            EndReason::DrawAdjudicated { .. } => "draw-adjudicated",
            EndReason::Forbidden { .. } => "black_forbidden",
            EndReason::Occupied { .. }
            | EndReason::OffBoard { .. }
            | EndReason::Unparsable { .. } => "illegal_move",
            EndReason::TimeForfeit { .. }
            | EndReason::Crash { .. }
            | EndReason::StartFailure { .. } => "other",
        }
    }

    /// SGF `RE` suffix: `T` time, `F` forfeit, empty otherwise.
    fn sgf_suffix(&self) -> &'static str {
        match self {
            EndReason::TimeForfeit { .. } => "T",
            r if r.is_fault() => "F",
            EndReason::Forbidden { .. } => "F",
            _ => "",
        }
    }

    fn detail(&self) -> String {
        match self {
            EndReason::Five => "five in a row".to_string(),
            EndReason::BoardFull => "board full".to_string(),
            EndReason::DrawAdjudicated { plies } => format!("adjudicated after {plies} stones"),
            EndReason::Forbidden { point } => format!("forbidden move {point}"),
            EndReason::Occupied { x, y } => format!("occupied cell {x},{y}"),
            EndReason::OffBoard { x, y } => format!("move {x},{y} off the board"),
            EndReason::Unparsable { line } => format!("unparsable answer {line:?}"),
            EndReason::TimeForfeit {
                elapsed_ms,
                allowed_ms,
                last_error,
            } => {
                let mut s = format!(
                    "time forfeit: no move after {elapsed_ms} ms (allowed {allowed_ms} ms)"
                );
                if let Some(e) = last_error {
                    let _ = write!(s, ", last said {e:?}");
                }
                s
            }
            EndReason::Crash { detail } => format!("crash: {detail}"),
            EndReason::StartFailure { detail } => format!("start failure: {detail}"),
        }
    }
}

/// One finished game.
#[derive(Clone, Debug)]
pub struct GameSummary {
    /// 0-based index in the schedule (files are numbered from 1).
    pub index: usize,
    /// Opening pair: games `2k` and `2k + 1` share an opening.
    pub pair: usize,
    /// Where the opening came from: `file.txt:12` or `random #3`.
    pub opening: String,
    pub opening_stones: usize,
    /// Which engine (0 or 1) played black.
    pub black: usize,
    pub outcome: Outcome,
    pub reason: EndReason,
    /// Every stone, the opening's first.
    pub moves: Vec<MoveRecord>,
    /// Moves the engines answered.
    pub engine_moves: u32,
    /// Wall time of the move loop (first request to the referee's verdict).
    pub wall: Duration,
    /// Sum of the engines' response times (request written to answer read).
    pub engine_time: Duration,
    /// Engines whose process had to be killed after END (per engine index).
    pub killed_after_end: [u32; 2],
    /// Engines (per index) that answered their START (or RESTART) this game.
    pub started: [bool; 2],
}

impl GameSummary {
    /// The engine (0 or 1) that played `color`.
    pub fn engine_of(&self, color: Color) -> usize {
        match color {
            Color::Black => self.black,
            Color::White => 1 - self.black,
        }
    }

    pub fn winner(&self) -> Option<usize> {
        match self.outcome {
            Outcome::Win(c) => Some(self.engine_of(c)),
            Outcome::Draw => None,
        }
    }

    pub fn loser(&self) -> Option<usize> {
        self.winner().map(|w| 1 - w)
    }

    /// The result from engine `engine`'s point of view, as one game.
    pub fn result_for(&self, engine: usize) -> Wld {
        match self.winner() {
            Some(w) if w == engine => Wld::new(1, 0, 0),
            Some(_) => Wld::new(0, 1, 0),
            None => Wld::new(0, 0, 1),
        }
    }

    /// `1-0`, `0-1` or `1/2-1/2` from black's point of view.
    pub fn score_text(&self) -> &'static str {
        match self.outcome {
            Outcome::Win(Color::Black) => "1-0",
            Outcome::Win(Color::White) => "0-1",
            Outcome::Draw => "1/2-1/2",
        }
    }

    /// SGF `RE`: `B+`, `W+T`, `B+F`, `0`.
    pub fn sgf_result(&self) -> String {
        match self.outcome {
            Outcome::Win(Color::Black) => format!("B+{}", self.reason.sgf_suffix()),
            Outcome::Win(Color::White) => format!("W+{}", self.reason.sgf_suffix()),
            Outcome::Draw => "0".to_string(),
        }
    }

    /// `black (A) wins: five in a row`, `white (B) loses: crash: ...`.
    pub fn describe(&self, names: &[String; 2]) -> String {
        let side = |c: Color| format!("{c} ({})", names[self.engine_of(c)]);
        match self.outcome {
            Outcome::Draw => format!("draw: {}", self.reason.detail()),
            Outcome::Win(c)
                if self.reason.is_fault() || matches!(self.reason, EndReason::Forbidden { .. }) =>
            {
                format!("{} loses: {}", side(c.opponent()), self.reason.detail())
            }
            Outcome::Win(c) => format!("{} wins: {}", side(c), self.reason.detail()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wuzi_formats::tsv::{self, Columns, TsvGame};
    use wuzi_game::game::{BoardSize, Rule};

    /// A trainer reading a match's TSV takes the winner of a game played
    /// out, and leaves undecided one that a fault ended.
    #[test]
    fn tsv_end_words_tell_faults_from_games_played_out() {
        let point = Point::new(3, 4).unwrap();
        let reasons = [
            EndReason::Five,
            EndReason::BoardFull,
            EndReason::DrawAdjudicated { plies: 200 },
            EndReason::Forbidden { point },
            EndReason::Occupied { x: 1, y: 1 },
            EndReason::OffBoard { x: -1, y: 0 },
            EndReason::Unparsable {
                line: "hello".to_string(),
            },
            EndReason::TimeForfeit {
                elapsed_ms: 9,
                allowed_ms: 5,
                last_error: None,
            },
            EndReason::Crash {
                detail: "exit".to_string(),
            },
            EndReason::StartFailure {
                detail: "no OK".to_string(),
            },
        ];
        let columns = Columns::from_header(&tsv::header_without_search()).unwrap();
        for reason in reasons {
            let line = TsvGame {
                id: "g".to_string(),
                year: None,
                league: "match".to_string(),
                rule: Rule::Renju,
                size: BoardSize::square(15).unwrap(),
                black: "a".to_string(),
                white: "b".to_string(),
                winner: Outcome::Win(Color::White),
                end: reason.tsv_end().to_string(),
                opening: 0,
                moves: vec![point],
                search: None,
            }
            .line();
            let row = columns.row(&line).unwrap();
            assert_eq!(row.decided_off_the_board(), reason.is_fault(), "{reason:?}");
            assert_eq!(row.claims_five(), reason == EndReason::Five, "{reason:?}");
        }
    }
}
