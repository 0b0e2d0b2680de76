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
    /// `INFO.DAT`'s `max_memory` in bytes, `usize::MAX` for its 0 (no
    /// limit); `None` where it gives none (the configured limit holds).
    pub max_memory: Option<usize>,
    /// `INFO.DAT`'s `folder`: where persistent files may go.
    pub folder: Option<PathBuf>,
}

/// Why the brain could not answer: the reason it writes into `MSG.DAT`.
#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    #[error("cannot read {name}: {source}")]
    Read {
        name: &'static str,
        source: std::io::Error,
    },
    #[error("PLOCHA.DAT: line {line} has {squares} squares where the first has {width}")]
    RaggedRow {
        line: usize,
        squares: usize,
        width: usize,
    },
    #[error("PLOCHA.DAT: a {width}x{height} board is not supported (each side 5..32)")]
    BoardSize { width: usize, height: usize },
    #[error("PLOCHA.DAT: '#' squares (the continuous game) are not supported")]
    ContinuousGame,
    #[error("PLOCHA.DAT: unexpected {square:?} at {x},{y}; expected x, o or -")]
    Square { square: char, x: usize, y: usize },
    #[error("PLOCHA.DAT: square off the board")]
    OffBoard,
    #[error("PLOCHA.DAT: {0}")]
    Stone(#[from] crate::game::MoveError),
    #[error("PLOCHA.DAT: the game is already over on this board")]
    GameOver,
    #[error("TIMEOUTS.DAT: missing the {0}")]
    MissingTimeout(&'static str),
    #[error("TIMEOUTS.DAT: the {what} {line:?} is not an integer")]
    Timeout { what: &'static str, line: String },
    #[error("TIMEOUTS.DAT: the time per move {0} s is negative (0 means as fast as possible)")]
    NegativeTurn(i64),
    #[error("INFO.DAT: {key} {value}: {source}")]
    ClockValue {
        key: String,
        value: String,
        source: crate::gomocup::ClockValueError,
    },
    #[error(
        "INFO.DAT: rule {0} is not supported (0 freestyle, 1 exactly five, 4 renju, 8 caro, \
         each with the continuous-game bit 2 or without)"
    )]
    Rule(String),
    #[error("INFO.DAT: timeout_turn {0} ms is negative (a one-shot brain needs a limit)")]
    NegativeInfoTurn(i64),
    #[error("INFO.DAT: max_memory {0:?} is not a number of bytes (0: no limit)")]
    MaxMemory(String),
    #[error(
        "PLOCHA.DAT: {own} '{mover}' and {theirs} '{other}' with '{mover}' to move (TAH.DAT): \
         no game of alternate moves"
    )]
    StoneCounts {
        mover: char,
        own: usize,
        other: char,
        theirs: usize,
    },
    #[error("TAH.DAT: {0:?} does not say who moves; expected x or o")]
    SideToMove(String),
    /// The rule's network could not be loaded and play without it is not
    /// allowed.
    #[error("{0}")]
    Network(String),
    #[error("the search did not finish")]
    NoResult,
    #[error("no move: the board is full")]
    BoardFull,
    #[error("cannot write TAH.DAT: {0}")]
    Write(std::io::Error),
    #[error("{0} is not a regular file")]
    NotAFile(&'static str),
    #[error("{0} is larger than 1 MiB: not a file of this protocol")]
    TooLarge(&'static str),
}

/// Largest file read: a 32x32 PLOCHA.DAT is about 1 KiB.
const MAX_FILE: u64 = 1 << 20;

/// The manager's file `name` in `dir`, whatever the case of its letters:
/// Piskvork writes `Plocha.dat`, `Tah.dat`, `TimeOuts.dat`, `Info.dat` and
/// `msg.dat`, the protocol's text names them in capitals, and only Windows
/// treats the two alike. A file that is not there keeps the protocol's name.
fn file_in(dir: &Path, name: &str) -> PathBuf {
    let exact = dir.join(name);
    if exact.exists() {
        return exact;
    }
    fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.file_name())
        .find(|found| found.to_str().is_some_and(|f| f.eq_ignore_ascii_case(name)))
        .map_or(exact, |found| dir.join(found))
}

fn read(dir: &Path, name: &'static str) -> Result<String, FilesError> {
    let path = file_in(dir, name);
    let failed = |source| FilesError::Read { name, source };
    // Not a FIFO or a device: opening one may block for good.
    let metadata = fs::metadata(&path).map_err(failed)?;
    if !metadata.is_file() {
        return Err(FilesError::NotAFile(name));
    }
    let bytes = fs::File::open(&path)
        .and_then(|file| crate::bounded_read::read_bytes(file, MAX_FILE))
        .map_err(|source| match source.kind() {
            std::io::ErrorKind::FileTooLarge => FilesError::TooLarge(name),
            _ => failed(source),
        })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The board of `PLOCHA.DAT` under `rule`.
/// The board of PLOCHA.DAT with `mover`'s symbol to move. The protocol
/// says `x` is the first player, but managers differ: GomocupJudge writes
/// the brain's own stones as `x` whether it moved first or not, Piskvork
/// writes them by seat, and either seat may start. So the colours come
/// from the counts, as a BOARD's do: with as many stones each, the side to
/// move is black; otherwise the side with one stone more is, and it is
/// the other side's move.
fn parse_board(text: &str, rule: Rule, mover: char) -> Result<Board, FilesError> {
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
        return Err(FilesError::RaggedRow {
            line: i + 1,
            squares: row.chars().count(),
            width,
        });
    }
    let size =
        BoardSize::new(width as u32, rows.len() as u32).map_err(|_| FilesError::BoardSize {
            width,
            height: rows.len(),
        })?;
    let mut stones = Vec::new();
    for (y, row) in rows.iter().enumerate() {
        for (x, square) in row.chars().enumerate() {
            match square {
                '-' => continue,
                'x' | 'o' => {}
                '#' => return Err(FilesError::ContinuousGame),
                square => return Err(FilesError::Square { square, x, y }),
            }
            let p = Point::new(x as u8, y as u8).ok_or(FilesError::OffBoard)?;
            stones.push((p, square));
        }
    }
    let count = |symbol| stones.iter().filter(|(_, s)| *s == symbol).count();
    let other = if mover == 'x' { 'o' } else { 'x' };
    let (own, theirs) = (count(mover), count(other));
    let mover_color = if own == theirs {
        Color::Black
    } else if own + 1 == theirs {
        Color::White
    } else {
        return Err(FilesError::StoneCounts {
            mover,
            own,
            other,
            theirs,
        });
    };
    let mut board = Board::new(size, rule);
    for (p, symbol) in stones {
        let color = if symbol == mover {
            mover_color
        } else {
            mover_color.opponent()
        };
        board.place(p, color)?;
    }
    board.set_side_to_move(mover_color);
    Ok(board)
}

/// `TIMEOUTS.DAT`: seconds per move, milliseconds left (both integers).
fn parse_timeouts(text: &str, clock: &mut Clock) -> Result<(), FilesError> {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut number = |what: &'static str| -> Result<i64, FilesError> {
        let line = lines.next().ok_or(FilesError::MissingTimeout(what))?;
        line.parse().map_err(|_| FilesError::Timeout {
            what,
            line: line.to_string(),
        })
    };
    // 0 is "as fast as possible"; a negative turn is refused once INFO.DAT,
    // whose timeout_turn takes precedence, has been read.
    let turn_seconds = number("time per move (seconds)")?;
    let left_ms = number("time left (milliseconds)")?;
    clock.timeout_turn = Some(turn_seconds.saturating_mul(1000));
    clock.time_left = left_ms;
    Ok(())
}

impl FileRequest {
    /// Reads the manager's files in `dir`; `lag` is the reserve per move
    /// unless INFO.DAT gives its `protocol_lag`.
    pub fn read(dir: &Path, lag: Duration) -> Result<FileRequest, FilesError> {
        let mut clock = Clock {
            lag: i64::try_from(lag.as_millis()).unwrap_or(i64::MAX),
            ..Clock::default()
        };
        // The manager always writes it: without it the brain would not know
        // its time and could lose on time.
        parse_timeouts(&read(dir, "TIMEOUTS.DAT")?, &mut clock)?;
        let mut rule = Rule::Freestyle;
        let mut max_memory = None;
        let mut folder = None;
        let mut info_turn = false;
        // INFO.DAT is optional: older managers do not write it. One that
        // is there but cannot be read is an error: its rule or clock
        // ignored would play another game than the manager's.
        let info = match read(dir, "INFO.DAT") {
            Err(FilesError::Read { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                None
            }
            other => Some(other?),
        };
        if let Some(info) = info {
            for line in info.lines().map(str::trim).filter(|l| !l.is_empty()) {
                let (key, value) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
                let value = value.trim();
                info_turn |= key == "timeout_turn";
                if let Some(set) = clock.set(key, value) {
                    set.map_err(|source| FilesError::ClockValue {
                        key: key.to_string(),
                        value: value.to_string(),
                        source,
                    })?;
                    continue;
                }
                match key {
                    "rule" => {
                        rule = value
                            .parse::<u64>()
                            .ok()
                            .and_then(|v| Rule::from_gomocup(v).ok())
                            .ok_or_else(|| FilesError::Rule(value.to_string()))?
                    }
                    "max_memory" => {
                        let bytes: u64 = value
                            .parse()
                            .map_err(|_| FilesError::MaxMemory(value.to_string()))?;
                        // 0: no limit (the protocol's word).
                        max_memory = Some(match bytes {
                            0 => usize::MAX,
                            bytes => usize::try_from(bytes).unwrap_or(usize::MAX),
                        });
                    }
                    "folder" if !value.is_empty() => folder = Some(PathBuf::from(value)),
                    // game_type (human or brain opponent, tournament) changes
                    // nothing here; unknown keys are ignored.
                    _ => {}
                }
            }
        }
        // A negative turn would read as no limit, and the search would
        // never end.
        if let Some(turn) = clock.timeout_turn.filter(|&turn| turn < 0) {
            return Err(if info_turn {
                FilesError::NegativeInfoTurn(turn)
            } else {
                FilesError::NegativeTurn(turn / 1000)
            });
        }
        let tah = read(dir, "TAH.DAT")?;
        let mover = match tah.trim() {
            "x" => 'x',
            "o" => 'o',
            other => return Err(FilesError::SideToMove(other.to_string())),
        };
        let board = parse_board(&read(dir, "PLOCHA.DAT")?, rule, mover)?;
        if board.is_over() {
            return Err(FilesError::GameOver);
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
pub fn run(config: Config, dir: &Path, started: Instant) -> Result<(), FilesError> {
    super::log::LogFile::for_process(&config.log);
    let outcome = answer(config, dir, started);
    let message = match &outcome {
        Ok(line) => line.clone(),
        Err(e) => e.to_string(),
    };
    write_message(dir, &message);
    outcome.map(|_| ())
}

/// `message` as `MSG.DAT`'s one line, under the name the manager gave the
/// file (a manager on a case-sensitive file system that made `msg.dat`
/// reads that one). If even that fails, there is no one to tell but the
/// exit status.
pub fn write_message(dir: &Path, message: &str) {
    let _ = fs::write(file_in(dir, "MSG.DAT"), format!("{message}\n"));
}

/// The search and `TAH.DAT`; the message line for `MSG.DAT`.
fn answer(config: Config, dir: &Path, started: Instant) -> Result<String, FilesError> {
    let request = FileRequest::read(dir, Duration::from_millis(config.time.protocol_lag_ms))?;
    let rule = request.board.rule();
    let mut networks = NetworkProvider::new(&config.network);
    let (mut engine, note) = super::engine_for(&config, &mut networks, request.board.size(), rule);
    if let Some(why) = networks.refusal(rule, request.board.size()) {
        return Err(FilesError::Network(why));
    }
    let mut memory_note = None;
    if let Some(bytes) = request.max_memory {
        engine.configure(|c| c.max_memory = bytes);
        memory_note = super::memory_limit_note(&engine, "max_memory", bytes);
    }
    engine.set_board(request.board.clone());
    let clock = request.clock;
    engine.time = TimeControl {
        // 0 s per move: play at once (the shortest search).
        turn: clock.turn_limit(false),
        left: clock.game_left(),
        increment: clock.increment(),
        overtime: Duration::ZERO,
        lag: clock.lag(),
    };
    engine.start_since(SearchKind::Think, started);
    let result = engine
        .wait()
        .map(|f| f.result)
        .ok_or(FilesError::NoResult)?;
    let mv = engine
        .move_or_forbidden(&result)
        .ok_or(FilesError::BoardFull)?;
    fs::write(file_in(dir, "TAH.DAT"), format!("{mv}\n")).map_err(FilesError::Write)?;
    let mut line = format!(
        "{BRAIN_NAME} {}: {}",
        env!("CARGO_PKG_VERSION"),
        summary_line(&result, Notation::Gomocup)
    );
    for note in note.iter().chain(&memory_note) {
        let _ = write!(line, " ({note})");
    }
    if let Some(folder) = &request.folder {
        if let Err(e) = keep_record(folder, &request.board, mv, &line) {
            let _ = write!(line, " (persistent folder: {e})");
        }
    }
    // The process exits after MSG.DAT, and the manager's clock runs until
    // it does: the search tree is left to the exit rather than freed node
    // by node (as the stdin brain does at END).
    std::mem::forget(engine);
    std::mem::forget(networks);
    Ok(line)
}

/// The size at which `moves.log` is rotated.
const MAX_RECORD_LOG: u64 = 1 << 20;

/// Appends the move to `FOLDER/Wuzi/moves.log`, the brain's persistent
/// record of the games it was asked about (the specification's folder for
/// persistent files, named after the brain).
fn keep_record(folder: &Path, board: &Board, mv: Point, summary: &str) -> std::io::Result<()> {
    let own = folder.join(BRAIN_NAME);
    fs::create_dir_all(&own)?;
    let log = own.join("moves.log");
    // Bounded: the manager runs the brain for every move of every game it
    // ever plays. Past the limit the log becomes moves.log.1 (the one
    // before is dropped) and starts again.
    // The folder is shared with other programs: a moves.log that is not a
    // regular file (a named pipe would block the open past the turn) is
    // left alone.
    if fs::symlink_metadata(&log).is_ok_and(|m| !m.is_file()) {
        return Err(std::io::Error::other("moves.log is not a regular file"));
    }
    if fs::metadata(&log).is_ok_and(|m| m.len() >= MAX_RECORD_LOG) {
        fs::rename(&log, own.join("moves.log.1"))?;
    }
    let mut file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)?;
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

    const LAG: Duration = Duration::from_millis(30);

    /// Piskvork names its files `Plocha.dat`, `Tah.dat`, `TimeOuts.dat`,
    /// `Info.dat` and `msg.dat`: found whatever their case, and the move
    /// written back under the name the manager reads.
    #[test]
    fn the_managers_files_are_found_whatever_their_case() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("TimeOuts.dat"), "1\n120000\n").unwrap();
        std::fs::write(dir.path().join("Plocha.dat"), "-----\n".repeat(5)).unwrap();
        std::fs::write(dir.path().join("Tah.dat"), "x").unwrap();
        std::fs::write(dir.path().join("Info.dat"), "rule 4\ntimeout_turn 300\n").unwrap();
        let request = FileRequest::read(dir.path(), LAG).unwrap();
        assert_eq!(request.board.rule(), Rule::Renju);
        assert_eq!(request.clock.timeout_turn, Some(300));
        assert_eq!(file_in(dir.path(), "TAH.DAT"), dir.path().join("Tah.dat"));
        assert_eq!(file_in(dir.path(), "MSG.DAT"), dir.path().join("MSG.DAT"));
    }

    /// INFO.DAT's clock keys are the ones played: its timeout_turn over
    /// TIMEOUTS.DAT's (a negative one there is then no error), its
    /// protocol_lag over the configured one.
    #[test]
    fn info_dat_clock_keys_are_played() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("TIMEOUTS.DAT"), "-1\n120000\n").unwrap();
        std::fs::write(dir.path().join("PLOCHA.DAT"), "-----\n".repeat(5)).unwrap();
        std::fs::write(dir.path().join("TAH.DAT"), "x").unwrap();
        assert!(matches!(
            FileRequest::read(dir.path(), LAG),
            Err(FilesError::NegativeTurn(-1))
        ));
        let info = dir.path().join("INFO.DAT");
        std::fs::write(&info, "timeout_turn 500\n").unwrap();
        let request = FileRequest::read(dir.path(), LAG).unwrap();
        assert_eq!(request.clock.timeout_turn, Some(500));
        assert_eq!(request.clock.lag(), LAG);
        std::fs::write(
            &info,
            "timeout_turn 500\nprotocol_lag 90\ntime_increment 2000\n",
        )
        .unwrap();
        let request = FileRequest::read(dir.path(), LAG).unwrap();
        assert_eq!(request.clock.lag(), Duration::from_millis(90));
        assert_eq!(request.clock.increment(), Duration::from_secs(2));
    }

    #[test]
    fn boards_and_timeouts_parse_or_say_why() {
        let text = "-----\n--x--\n--o--\n-----\n-----\n";
        let board = parse_board(text, Rule::Freestyle, 'x').unwrap();
        assert_eq!(board.size(), BoardSize::new(5, 5).unwrap());
        assert_eq!(board.stone(Point::new(2, 1).unwrap()), Some(Color::Black));
        assert_eq!(board.stone(Point::new(2, 2).unwrap()), Some(Color::White));
        assert_eq!(board.side_to_move(), Color::Black);
        // The colours come from the counts, not the symbols: as many
        // stones each, the mover is black; one fewer, white.
        let board = parse_board(text, Rule::Freestyle, 'o').unwrap();
        assert_eq!(board.stone(Point::new(2, 2).unwrap()), Some(Color::Black));
        assert_eq!(board.side_to_move(), Color::Black);
        let text = "-----\n--x--\n--o--\n---o-\n-----\n";
        let board = parse_board(text, Rule::Freestyle, 'x').unwrap();
        assert_eq!(board.stone(Point::new(2, 1).unwrap()), Some(Color::White));
        assert_eq!(board.stone(Point::new(3, 3).unwrap()), Some(Color::Black));
        assert_eq!(board.side_to_move(), Color::White);
        let err = parse_board(text, Rule::Freestyle, 'o').unwrap_err();
        assert!(
            err.to_string().contains("no game of alternate moves"),
            "{err}"
        );
        // Rectangular, CR LF, blank lines around.
        let wide = parse_board(
            "\r\n------\r\n------\r\n------\r\n------\r\n------\r\n\r\n",
            Rule::Freestyle,
            'x',
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
            let err = parse_board(text, Rule::Freestyle, 'x')
                .unwrap_err()
                .to_string();
            assert!(err.contains(why), "{text:?}: {err}");
        }
        let mut clock = Clock::default();
        parse_timeouts("5\n120000\n", &mut clock).unwrap();
        assert_eq!((clock.timeout_turn, clock.time_left), (Some(5000), 120_000));
        assert!(matches!(
            parse_timeouts("5\n", &mut clock),
            Err(FilesError::MissingTimeout(what)) if what.contains("time left")
        ));
        assert!(parse_timeouts("five\n1\n", &mut clock)
            .unwrap_err()
            .to_string()
            .contains("not an integer"));
    }

    #[cfg(unix)]
    #[test]
    fn a_record_log_that_is_no_file_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join(BRAIN_NAME);
        std::fs::create_dir_all(&own).unwrap();
        let fifo = own.join("moves.log");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            return;
        }
        let board = Board::new(BoardSize::FIFTEEN, Rule::Freestyle);
        let started = Instant::now();
        let e = keep_record(dir.path(), &board, Point::new(7, 7).unwrap(), "x").unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn the_record_log_is_rotated_at_its_limit() {
        let dir = tempfile::tempdir().unwrap();
        let board = Board::new(BoardSize::FIFTEEN, Rule::Freestyle);
        let mv = Point::new(7, 7).unwrap();
        keep_record(dir.path(), &board, mv, "first").unwrap();
        let log = dir.path().join(BRAIN_NAME).join("moves.log");
        let big = vec![b'x'; MAX_RECORD_LOG as usize];
        std::fs::write(&log, &big).unwrap();
        keep_record(dir.path(), &board, mv, "after").unwrap();
        let old = dir.path().join(BRAIN_NAME).join("moves.log.1");
        assert_eq!(std::fs::metadata(&old).unwrap().len(), MAX_RECORD_LOG);
        let now = std::fs::read_to_string(&log).unwrap();
        assert!(now.contains("after") && now.len() < 200, "{now}");
    }

    /// INFO.DAT may be missing; one that is there but cannot be read is
    /// an error, not a freestyle game on TIMEOUTS.DAT's clock.
    #[test]
    fn an_info_dat_that_cannot_be_read_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("TIMEOUTS.DAT"), "5\n120000\n").unwrap();
        std::fs::write(dir.path().join("PLOCHA.DAT"), "-----\n".repeat(5)).unwrap();
        std::fs::write(dir.path().join("TAH.DAT"), "x").unwrap();
        let request = FileRequest::read(dir.path(), LAG).unwrap();
        assert_eq!(request.board.rule(), Rule::Freestyle);
        std::fs::create_dir(dir.path().join("INFO.DAT")).unwrap();
        assert!(matches!(
            FileRequest::read(dir.path(), LAG),
            Err(FilesError::NotAFile("INFO.DAT"))
        ));
        std::fs::remove_dir(dir.path().join("INFO.DAT")).unwrap();
        let too_large = "rule 4\n".repeat(MAX_FILE as usize / 7 + 1);
        std::fs::write(dir.path().join("INFO.DAT"), too_large).unwrap();
        assert!(matches!(
            FileRequest::read(dir.path(), LAG),
            Err(FilesError::TooLarge("INFO.DAT"))
        ));
    }

    /// `max_memory 0` is the protocol's "no limit", not the configured
    /// limit; a negative one is not a size.
    #[test]
    fn max_memory_zero_is_no_limit() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("TIMEOUTS.DAT"), "5\n120000\n").unwrap();
        std::fs::write(dir.path().join("PLOCHA.DAT"), "-----\n".repeat(5)).unwrap();
        std::fs::write(dir.path().join("TAH.DAT"), "x").unwrap();
        let info = dir.path().join("INFO.DAT");
        for (text, limit) in [
            ("max_memory 83886080\n", Some(83_886_080)),
            ("max_memory 0\n", Some(usize::MAX)),
            ("rule 0\n", None),
        ] {
            std::fs::write(&info, text).unwrap();
            assert_eq!(
                FileRequest::read(dir.path(), LAG).unwrap().max_memory,
                limit,
                "{text}"
            );
        }
        std::fs::write(&info, "max_memory -5\n").unwrap();
        assert!(matches!(
            FileRequest::read(dir.path(), LAG),
            Err(FilesError::MaxMemory(v)) if v == "-5"
        ));
    }
}
