//! A reference brain's verdict on a position: it is asked to move there
//! (BOARD, with the side to move's stones as its own), and whatever forced
//! win it announces while it thinks is read from its MESSAGE lines. The
//! blunder suite uses it to judge moves with an engine other than ours.
//!
//! Announcements understood: Rapfi's `Eval +M19` (a forced win in 19
//! plies) and PentaZen's `ev +v27`.

use std::time::{Duration, Instant};

use super::brain::info_block;
use super::config::EngineSpec;
use super::engine::{EngineProcess, GameLog, Reply};
use super::game::board_command;
use wuzi_formats::gomocup::{BrainLine, Command, UNLIMITED_MS};
use wuzi_game::game::Board;

/// What the brain said of a position it had to move in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The plies of the forced win it announced last (for the side to
    /// move), if any.
    pub win_in: Option<u32>,
    /// Its move line (`x,y`), if it answered one.
    pub answer: Option<String>,
}

/// The plies of a forced win a MESSAGE line announces, if it does.
pub fn announced_win(line: &str) -> Option<u32> {
    let after = |mark: &str| {
        let at = line.find(mark)? + mark.len();
        let digits: String = line[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    };
    after("Eval +M").or_else(|| after("ev +v"))
}

/// Asks the brain of `spec` (its time per move and the INFO settings a
/// match would send) to move in `board` and returns what it announced. A
/// brain that does not answer within its time and ten seconds more is an
/// error.
pub fn verdict(spec: &EngineSpec, board: &Board) -> Result<Verdict, String> {
    let fail = |what: String| format!("{}: {what}", spec.name);
    let mut engine = EngineProcess::spawn(spec, &spec.name).map_err(|e| fail(e.to_string()))?;
    let mut log = GameLog::new(false);
    let mut send = |engine: &mut EngineProcess, text: String| {
        engine
            .send(&text, &mut log)
            .map(|_| ())
            .map_err(|e| fail(e.to_string()))
    };
    let size = board.size();
    let start = Command::Start {
        width: i64::from(size.width()),
        height: i64::from(size.height()),
    };
    send(&mut engine, format!("{start}\n"))?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match next(&mut engine, deadline, &spec.name)?.1 {
            BrainLine::Ok => break,
            BrainLine::Error(why) => return Err(fail(why)),
            _ => {}
        }
    }
    // As a match sends them: its INFO lines, the time left before the
    // move (without it a brain may take its game time as spent), the
    // position.
    let position = board_command(board, board.side_to_move());
    let left = if spec.match_ms > 0 {
        i64::try_from(spec.match_ms).unwrap_or(UNLIMITED_MS)
    } else {
        UNLIMITED_MS
    };
    send(
        &mut engine,
        format!(
            "{}INFO time_left {left}\n{position}\n",
            info_block(spec, board.rule())
        ),
    )?;
    let deadline = Instant::now() + Duration::from_millis(spec.turn_ms) + Duration::from_secs(10);
    let mut win_in = None;
    let answer = loop {
        let (line, read) = next(&mut engine, deadline, &spec.name)?;
        // Every line, not only MESSAGE ones: PentaZen's depth byte can
        // break the MESSAGE word of its announcements.
        win_in = announced_win(&line).or(win_in);
        match read {
            BrainLine::Move(c) => break Some(c.to_string()),
            BrainLine::Error(why) => return Err(fail(why)),
            _ => {}
        }
    };
    engine.send_end(&mut log);
    engine.wait_exit(Instant::now() + Duration::from_secs(2), &mut log);
    Ok(Verdict { win_in, answer })
}

/// The brain's next line, as it came and as the Gomocup protocol reads it.
fn next(
    engine: &mut EngineProcess,
    deadline: Instant,
    name: &str,
) -> Result<(String, BrainLine), String> {
    match engine.next_line(deadline, &mut GameLog::new(false)) {
        Reply::Line(_, line) => {
            let read = BrainLine::parse(&line);
            Ok((line, read))
        }
        Reply::Closed => Err(format!("{name} exited")),
        Reply::Timeout => Err(format!("{name} did not answer in time")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announcements_of_rapfi_and_pentazen() {
        assert_eq!(
            announced_win("MESSAGE Depth 17-30 | Eval +M19 | Time 5ms | H6 I7"),
            Some(19)
        );
        assert_eq!(
            announced_win("MESSAGE dep 13 ev +v27 nd 11k tm 4"),
            Some(27)
        );
        assert_eq!(
            announced_win("MESSAGE Depth 4-5 | Eval 132 | Time 1ms"),
            None
        );
        assert_eq!(announced_win("MESSAGE Depth 9 | Eval -M8 | Time 1ms"), None);
    }
}
