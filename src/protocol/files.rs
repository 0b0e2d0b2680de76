//! The old file protocol (`pbrain-wuzi files [DIR]`): a manager writes the
//! position into files, starts the brain once per move, and reads the move
//! back from `TAH.DAT` when the brain has exited.
//!
//! Read: `PLOCHA.DAT` (the board, its size detected from the lines: `x` the
//! first player, `o` the second, `-` empty; `#`, the continuous game's
//! blocked squares, is refused), `TAH.DAT` (`x` or `o`: the side to move),
//! `TIMEOUTS.DAT` (seconds per move, then milliseconds left for the match)
//! and, when present, `INFO.DAT` (`key value` lines, which override
//! `TIMEOUTS.DAT`). Written: the move, `x,y`, into `TAH.DAT`, and one line
//! into `MSG.DAT`. A missing or malformed file writes only its reason into
//! `MSG.DAT` and fails: `TAH.DAT` is left as it was.

use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::engine::SearchKind;
use crate::game::{Board, BoardSize, Color, Point, Rule};
use crate::gomocup::Clock;
use crate::nn::provider::NetworkProvider;
use crate::notation::Notation;
use crate::protocol::summary::summary_line;
use crate::search::TimeControl;

/// The brain's name: its folder for persistent files under INFO.DAT's
/// `folder` is named so, as the specification asks.
const BRAIN_NAME: &str = "Wuzi";

/// What the manager's files describe.
#[derive(Clone, Debug)]
pub struct FileRequest {
    /// The position, with the side to move from `TAH.DAT`.
    pub board: Board,
    pub clock: Clock,
    /// `INFO.DAT`'s `max_memory` in bytes (`None`: no limit given).
    pub max_memory: Option<usize>,
    /// `INFO.DAT`'s `folder`: where persistent files may go.
    pub folder: Option<PathBuf>,
}

fn read(dir: &Path, name: &str) -> Result<String, String> {
    let path = dir.join(name);
    fs::read(&path)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .map_err(|e| format!("cannot read {name}: {e}"))
}

/// The board of `PLOCHA.DAT` under `rule`.
fn parse_board(text: &str, rule: Rule) -> Result<Board, String> {
    let rows: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let width = rows.first().map_or(0, |r| r.chars().count());
    if let Some((i, row)) = rows
        .iter()
        .enumerate()
        .find(|(_, r)| r.chars().count() != width)
    {
        return Err(format!(
            "PLOCHA.DAT: line {} has {} squares where the first has {width}",
            i + 1,
            row.chars().count()
        ));
    }
    let size = BoardSize::new(width as u32, rows.len() as u32).map_err(|_| {
        format!(
            "PLOCHA.DAT: a {width}x{} board is not supported (each side 5..32)",
            rows.len()
        )
    })?;
    let mut board = Board::new(size, rule);
    for (y, row) in rows.iter().enumerate() {
        for (x, square) in row.chars().enumerate() {
            let color = match square {
                '-' => continue,
                'x' => Color::Black,
                'o' => Color::White,
                '#' => {
                    return Err(
                        "PLOCHA.DAT: '#' squares (the continuous game) are not supported".into(),
                    )
                }
                other => {
                    return Err(format!(
                        "PLOCHA.DAT: unexpected {other:?} at {x},{y}; expected x, o or -"
                    ))
                }
            };
            let p = Point::new(x as u8, y as u8).ok_or("PLOCHA.DAT: square off the board")?;
            board
                .place(p, color)
                .map_err(|e| format!("PLOCHA.DAT: {e}"))?;
        }
    }
    Ok(board)
}

/// `TIMEOUTS.DAT`: seconds per move, milliseconds left (both integers).
fn parse_timeouts(text: &str, clock: &mut Clock) -> Result<(), String> {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut number = |what: &str| -> Result<i64, String> {
        let line = lines
            .next()
            .ok_or_else(|| format!("TIMEOUTS.DAT: missing the {what}"))?;
        line.parse()
            .map_err(|_| format!("TIMEOUTS.DAT: the {what} {line:?} is not an integer"))
    };
    let turn_seconds = number("time per move (seconds)")?;
    let left_ms = number("time left (milliseconds)")?;
    clock.timeout_turn = turn_seconds.saturating_mul(1000);
    clock.time_left = left_ms;
    Ok(())
}

impl FileRequest {
    /// Reads the manager's files in `dir`.
    pub fn read(dir: &Path) -> Result<FileRequest, String> {
        let mut clock = Clock::default();
        // The manager always writes it: without it the brain would not know
        // its time and could lose on time.
        parse_timeouts(&read(dir, "TIMEOUTS.DAT")?, &mut clock)?;
        let mut rule = Rule::Freestyle;
        let mut max_memory = None;
        let mut folder = None;
        // INFO.DAT is optional: older managers do not write it.
        if let Ok(info) = read(dir, "INFO.DAT") {
            for line in info.lines().map(str::trim).filter(|l| !l.is_empty()) {
                let (key, value) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
                let value = value.trim();
                if let Some(set) = clock.set(key, value) {
                    set.map_err(|e| format!("INFO.DAT: {key} {value}: {e}"))?;
                    continue;
                }
                match key {
                    "rule" => {
                        rule = value
                            .parse::<u64>()
                            .ok()
                            .and_then(|v| Rule::from_gomocup(v).ok())
                            .ok_or_else(|| {
                                format!(
                                    "INFO.DAT: rule {value} is not supported (0 freestyle, \
                                     1 exactly five, 4 renju, 8 caro; not the continuous game)"
                                )
                            })?
                    }
                    "max_memory" => {
                        let bytes: i64 = value.parse().map_err(|_| {
                            format!("INFO.DAT: max_memory {value:?} is not a number")
                        })?;
                        max_memory = (bytes > 0).then_some(bytes as usize);
                    }
                    "folder" if !value.is_empty() => folder = Some(PathBuf::from(value)),
                    // game_type (human or brain opponent, tournament) changes
                    // nothing here; unknown keys are ignored.
                    _ => {}
                }
            }
        }
        let mut board = parse_board(&read(dir, "PLOCHA.DAT")?, rule)?;
        let tah = read(dir, "TAH.DAT")?;
        let to_move = match tah.trim() {
            "x" => Color::Black,
            "o" => Color::White,
            other => {
                return Err(format!(
                    "TAH.DAT: {other:?} does not say who moves; expected x or o"
                ))
            }
        };
        board.set_side_to_move(to_move);
        if board.outcome().is_some() {
            return Err("PLOCHA.DAT: the game is already over on this board".into());
        }
        Ok(FileRequest {
            board,
            clock,
            max_memory,
            folder,
        })
    }
}

/// Answers the request in `dir`: the move into `TAH.DAT`, a line into
/// `MSG.DAT`. `started`: when the process started (the manager's clock
/// runs from there). On error, the reason goes into `MSG.DAT` and is
/// returned; `TAH.DAT` is not touched.
pub fn run(config: Config, dir: &Path, started: Instant) -> Result<(), String> {
    let outcome = answer(config, dir, started);
    let message = match &outcome {
        Ok(line) | Err(line) => line.clone(),
    };
    // MSG.DAT gets one line; if even that fails, there is no one to tell
    // but the exit status.
    let _ = fs::write(dir.join("MSG.DAT"), format!("{message}\n"));
    outcome.map(|_| ())
}

/// The search and `TAH.DAT`; the message line for `MSG.DAT`.
fn answer(config: Config, dir: &Path, started: Instant) -> Result<String, String> {
    let request = FileRequest::read(dir)?;
    let rule = request.board.rule();
    let mut networks = NetworkProvider::new(&config.network);
    let (mut engine, note) = super::engine_for(&config, &mut networks, request.board.size(), rule);
    if let Some(why) = networks.refusal(rule) {
        return Err(why.to_string());
    }
    if let Some(bytes) = request.max_memory {
        engine.configure(|c| c.max_memory = bytes);
    }
    engine.set_board(request.board.clone());
    let clock = request.clock;
    engine.time = TimeControl {
        // 0 s per move: play at once (the shortest search).
        turn: clock.turn_limit(false),
        left: clock.game_left(),
        increment: Duration::ZERO,
        lag: Duration::from_millis(config.time.protocol_lag_ms),
    };
    engine.start_since(SearchKind::Think, started);
    let result = engine
        .wait()
        .map(|f| f.result)
        .ok_or("the search did not finish")?;
    let mv = engine
        .move_or_forbidden(&result)
        .ok_or("no move: the board is full")?;
    fs::write(dir.join("TAH.DAT"), format!("{mv}\n"))
        .map_err(|e| format!("cannot write TAH.DAT: {e}"))?;
    let mut line = format!(
        "{BRAIN_NAME} {}: {}",
        env!("CARGO_PKG_VERSION"),
        summary_line(&result, Notation::Gomocup)
    );
    if let Some(note) = note {
        let _ = write!(line, " ({note})");
    }
    if let Some(folder) = &request.folder {
        if let Err(e) = keep_record(folder, &request.board, mv, &line) {
            let _ = write!(line, " (persistent folder: {e})");
        }
    }
    Ok(line)
}

/// Appends the move to `FOLDER/Wuzi/moves.log`, the brain's persistent
/// record of the games it was asked about (the specification's folder for
/// persistent files, named after the brain).
fn keep_record(folder: &Path, board: &Board, mv: Point, summary: &str) -> std::io::Result<()> {
    let own = folder.join(BRAIN_NAME);
    fs::create_dir_all(&own)?;
    let mut file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(own.join("moves.log"))?;
    writeln!(
        file,
        "{} stones, {} {} to move: {mv}; {summary}",
        board.stone_count(),
        board.size(),
        match board.side_to_move() {
            Color::Black => "x",
            Color::White => "o",
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boards_and_timeouts_parse_or_say_why() {
        let board = parse_board("-----\n--x--\n--o--\n-----\n-----\n", Rule::Freestyle).unwrap();
        assert_eq!(board.size(), BoardSize::new(5, 5).unwrap());
        assert_eq!(board.stone(Point::new(2, 1).unwrap()), Some(Color::Black));
        assert_eq!(board.stone(Point::new(2, 2).unwrap()), Some(Color::White));
        // Rectangular, CR LF, blank lines around.
        let wide = parse_board(
            "\r\n------\r\n------\r\n------\r\n------\r\n------\r\n\r\n",
            Rule::Freestyle,
        )
        .unwrap();
        assert_eq!(wide.size(), BoardSize::new(6, 5).unwrap());
        for (text, why) in [
            ("-----\n----\n-----\n-----\n-----\n", "line 2 has 4"),
            ("-----\n--#--\n-----\n-----\n-----\n", "continuous"),
            ("-----\n--X--\n-----\n-----\n-----\n", "unexpected 'X'"),
            ("----\n----\n----\n----\n", "4x4"),
            ("", "0x0"),
        ] {
            let err = parse_board(text, Rule::Freestyle).unwrap_err();
            assert!(err.contains(why), "{text:?}: {err}");
        }
        let mut clock = Clock::default();
        parse_timeouts("5\n120000\n", &mut clock).unwrap();
        assert_eq!((clock.timeout_turn, clock.time_left), (5000, 120_000));
        assert!(parse_timeouts("5\n", &mut clock)
            .unwrap_err()
            .contains("time left"));
        assert!(parse_timeouts("five\n1\n", &mut clock)
            .unwrap_err()
            .contains("not an integer"));
    }
}
