//! A reference brain's verdict on a position: it is asked to move there
//! (BOARD, with the side to move's stones as its own), and whatever forced
//! win it announces while it thinks is read from its MESSAGE lines. The
//! blunder suite uses it to judge moves with an engine other than ours.
//!
//! Announcements understood: Rapfi's `Eval +M19` (a forced win in 19
//! plies) and PentaZen's `ev +v27`.

use std::time::{Duration, Instant};

use super::config::EngineSpec;
use super::engine::{EngineProcess, GameLog, Reply};
use crate::game::Board;

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

/// Asks the brain of `spec` (its time per move, threads and rule settings)
/// to move in `board` and returns what it announced. A brain that does not
/// answer within its time and ten seconds more is an error.
pub fn verdict(spec: &EngineSpec, board: &Board) -> Result<Verdict, String> {
    let mut engine =
        EngineProcess::spawn(spec, &spec.name).map_err(|e| format!("{}: {e}", spec.name))?;
    let mut log = GameLog::new(false);
    let size = board.size();
    let start = if size.width() == size.height() {
        format!("START {}\n", size.width())
    } else {
        format!("RECTSTART {},{}\n", size.width(), size.height())
    };
    let wait = |engine: &mut EngineProcess, log: &mut GameLog, deadline: Instant| loop {
        match engine.next_line(deadline, log) {
            Reply::Line(_, line) => return Ok(line),
            Reply::Closed => return Err(format!("{} exited", spec.name)),
            Reply::Timeout => return Err(format!("{} did not answer in time", spec.name)),
        }
    };
    engine
        .send(&start, &mut log)
        .map_err(|e| format!("{}: {e}", spec.name))?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let line = wait(&mut engine, &mut log, deadline)?;
        if line.starts_with("OK") {
            break;
        }
        if line.starts_with("ERROR") {
            return Err(format!("{}: {line}", spec.name));
        }
    }
    let to_move = board.side_to_move();
    let mut text = format!(
        "INFO timeout_turn {}\nINFO timeout_match 2147483647\nINFO time_left 2147483647\nINFO rule {}\n",
        spec.turn_ms,
        board.rule().gomocup_value()
    );
    if let Some(threads) = spec.thread_num {
        text.push_str(&format!("INFO thread_num {threads}\n"));
    }
    text.push_str("BOARD\n");
    for (p, color) in board.history() {
        let field = if *color == to_move { 1 } else { 2 };
        text.push_str(&format!("{},{},{field}\n", p.x(), p.y()));
    }
    text.push_str("DONE\n");
    engine
        .send(&text, &mut log)
        .map_err(|e| format!("{}: {e}", spec.name))?;
    let deadline = Instant::now() + Duration::from_millis(spec.turn_ms) + Duration::from_secs(10);
    let mut win_in = None;
    let answer = loop {
        let line = wait(&mut engine, &mut log, deadline)?;
        if let Some(plies) = announced_win(&line) {
            win_in = Some(plies);
        }
        let bare = line.trim();
        let is_move = bare
            .split_once(',')
            .is_some_and(|(x, y)| x.parse::<u32>().is_ok() && y.parse::<u32>().is_ok());
        if is_move {
            break Some(bare.to_string());
        }
        if bare.starts_with("ERROR") {
            return Err(format!("{}: {bare}", spec.name));
        }
    };
    engine.send_end(&mut log);
    engine.wait_exit(Instant::now() + Duration::from_secs(2), &mut log);
    Ok(Verdict { win_in, answer })
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
