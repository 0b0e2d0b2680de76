//! `pbrain-wuzi analyse`: a position or a whole game analysed from a shell.
//!
//! Positions come from a move list (`h8 i9 j10`, or Gomocup's 0-based
//! `7,7 8,8`), a game record (PSQ, SGF, Gomocup TSV) or stdin. Board
//! coordinates in text are a column letter from the left and a row number
//! from the bottom (`h8` is the centre of 15x15), as on printed diagrams.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use serde_json::{json, Value};

use crate::bench::blunders::refutation;
use crate::bounded_read;
use crate::game::{Board, BoardSize, Color, Outcome, Point, Rule};
use crate::gomocup::Coord;
use crate::notation::{column_letter, Notation};
use crate::search::node::Proven;
use crate::search::result::MoveStats;
use crate::search::{SearchLimits, SearchResult, Searcher, TimeBudget};
use wuzi_data::records::parse_board_size;
use wuzi_formats::record::parse_psq;
use wuzi_formats::record::{parse_first_sgf_game, SgfGame};
use wuzi_formats::tsv::TsvGame;

mod output;
mod review;

pub use output::diagram;
use output::*;
pub use review::{review, Reviewed};
use review::{review_json, review_text};

/// Options of `pbrain-wuzi analyse`.
#[derive(clap::Args, Clone, Debug)]
pub struct AnalyseArgs {
    /// The position: moves (`h8 i9` or `7,7 8,8`, black first), a game
    /// file (.psq, .sgf, .tsv), or `-` to read either from stdin.
    #[arg(value_name = "MOVES|FILE", required = true)]
    pub position: Vec<String>,
    /// Rule (freestyle, standard, renju, caro; default freestyle). TSV
    /// records and SGF records with RU carry their own, which --rule may
    /// repeat but not contradict.
    #[arg(long)]
    pub rule: Option<Rule>,
    /// Board size for move lists: N or WIDTHxHEIGHT (files carry theirs).
    #[arg(long, default_value = "15", value_parser = parse_board_size)]
    pub board: BoardSize,
    /// TSV files: the game_id of the game, or FILE:LINE for one without,
    /// as the training loader names it (default: the first game).
    #[arg(long)]
    pub game: Option<String>,
    /// Analyse the position after this many moves (default: all of them).
    #[arg(long)]
    pub ply: Option<usize>,
    /// Seconds of search per position.
    #[arg(long, default_value_t = 2.0, value_parser = crate::cli::parse_seconds)]
    pub time: f64,
    /// Playouts per position (instead of --time).
    #[arg(long, conflicts_with = "time", value_parser = clap::value_parser!(u64).range(1..))]
    pub playouts: Option<u64>,
    /// Moves listed with their statistics.
    #[arg(long, default_value_t = 5)]
    pub top: usize,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
    /// Evaluate every move of the game and mark the mistakes.
    #[arg(long)]
    pub review: bool,
    /// --review: a move is a mistake (`?`) when it loses more than this
    /// share of the expected score against the best move; `??` marks a move
    /// after which the opponent wins by force, from a position not lost.
    #[arg(long, default_value_t = 0.15, value_parser = parse_threshold, requires = "review")]
    pub threshold: f64,
    /// Colours in the diagram: auto (on a terminal without NO_COLOR),
    /// always or never.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorChoice,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// A game to analyse: its board, rule and moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameInput {
    pub size: BoardSize,
    pub rule: Rule,
    pub moves: Vec<Point>,
    /// Leading moves that are a tournament opening (a TSV's `n_opening`),
    /// not the players' choices: a review does not judge them.
    pub opening: usize,
}

/// A cell as text: column letter (a.., then A.. past z), row from the
/// bottom (1-based).
pub fn cell_name(p: Point, size: BoardSize) -> String {
    Notation::labels(size).cell(p)
}

/// Reads `h8` (column letter, row from the bottom) or `7,7` (Gomocup's
/// 0-based x,y from the top left).
pub fn parse_cell(text: &str, size: BoardSize) -> Result<Point, String> {
    let t = text.trim();
    if t.contains(',') {
        let bad = || format!("{t:?} is not a move (h8, or x,y counted from 0)");
        let c: Coord = t.parse().map_err(|_| bad())?;
        c.point_on(size)
            .ok_or_else(|| format!("{t:?} is off the {size} board"))
    } else {
        Notation::labels(size)
            .parse_cell(t)
            .map_err(|e| format!("{t:?} is not a move on the {size} board ({})", e.kind))
    }
}

/// The rule of the game: the one its record names, which --rule may
/// repeat but not contradict (a record analysed under another rule than it
/// was played by would be judged by the wrong fives and forbidden moves);
/// else --rule's, by default freestyle.
fn rule_of(args: &AnalyseArgs, in_record: Option<Rule>) -> Result<Rule, String> {
    match (in_record, args.rule) {
        (Some(record), Some(given)) if record != given => Err(format!(
            "the game's record says {record}, --rule says {given}: leave --rule out \
             for a record that names its rule"
        )),
        (Some(record), _) => Ok(record),
        (None, given) => Ok(given.unwrap_or(Rule::Freestyle)),
    }
}

/// The rule an SGF record names (`RU`, as Wuzi's records and others write
/// it), if any.
fn sgf_rule(game: &SgfGame) -> Result<Option<Rule>, String> {
    let Some(ru) = game.property("RU") else {
        return Ok(None);
    };
    ru.trim()
        .parse::<Rule>()
        .map(Some)
        .map_err(|e| format!("SGF: RU[{ru}]: {e}"))
}

/// The first game of an SGF file as one sequence of alternate moves, black
/// first: its set-up stones (`AB`, `AW`) black and white in turn, then its
/// moves, which must go on alternating. A position set up in the record can
/// so be analysed whenever alternate play reaches it; otherwise the error
/// says why.
pub fn sgf_sequence(text: &str) -> Result<(BoardSize, Vec<Point>), String> {
    sequence_of(&first_sgf_game(text)?)
}

/// The first game tree of an SGF file.
fn first_sgf_game(text: &str) -> Result<SgfGame, String> {
    parse_first_sgf_game(text)
        .map_err(|e| format!("SGF: {e}"))?
        .ok_or_else(|| "SGF: no game tree".to_string())
}

/// [`sgf_sequence`] of a parsed game.
fn sequence_of(game: &SgfGame) -> Result<(BoardSize, Vec<Point>), String> {
    let stones = |color: Color| {
        game.setup
            .iter()
            .filter(move |(c, _)| *c == color)
            .map(|(_, p)| *p)
    };
    let (blacks, whites): (Vec<Point>, Vec<Point>) = (
        stones(Color::Black).collect(),
        stones(Color::White).collect(),
    );
    if blacks.len() != whites.len() && blacks.len() != whites.len() + 1 {
        return Err(format!(
            "SGF: set-up stones {} black (AB) and {} white (AW): alternate moves \
             reach only as many black stones as white ones, or one more",
            blacks.len(),
            whites.len()
        ));
    }
    let mut sequence = Vec::with_capacity(game.setup.len() + game.moves.len());
    for (k, b) in blacks.iter().enumerate() {
        sequence.push(*b);
        if let Some(w) = whites.get(k) {
            sequence.push(*w);
        }
    }
    let to_move = |placed: usize| {
        if placed.is_multiple_of(2) {
            Color::Black
        } else {
            Color::White
        }
    };
    if let Some(player) = game.property("PL").filter(|_| game.moves.is_empty()) {
        let wanted = match player.trim() {
            "B" | "b" => Color::Black,
            "W" | "w" => Color::White,
            other => return Err(format!("SGF: PL[{other}] is neither B nor W")),
        };
        if wanted != to_move(sequence.len()) {
            return Err(format!(
                "SGF: PL[{player}] after {} black and {} white set-up stones: \
                 alternate moves cannot reach that",
                blacks.len(),
                whites.len()
            ));
        }
    }
    for (n, &(color, point)) in game.moves.iter().enumerate() {
        if color != to_move(sequence.len()) {
            return Err(format!(
                "SGF: move {} ({point}) is {color}'s, but {} is to move",
                n + 1,
                to_move(sequence.len())
            ));
        }
        sequence.push(point);
    }
    Ok((game.size, sequence))
}

/// Longest game text read from stdin (a game record is a few KiB; a TSV
/// of many games, read for one of them, may be larger).
const MAX_INPUT_BYTES: u64 = 64 << 20;

/// The game the arguments describe.
pub fn read_input(args: &AnalyseArgs) -> Result<GameInput, String> {
    let first = args.position[0].as_str();
    let mut game = if args.position.len() == 1 && (first == "-" || Path::new(first).is_file()) {
        let (bytes, name) = if first == "-" {
            let bytes = bounded_read::read_bytes(std::io::stdin(), MAX_INPUT_BYTES)
                .map_err(|e| format!("stdin: {e}"))?;
            (bytes, PathBuf::from("stdin"))
        } else {
            let path = PathBuf::from(first);
            let bytes = bounded_read::read_file_bytes(&path, MAX_INPUT_BYTES)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            (bytes, path)
        };
        // Read leniently, as the training loader reads records: moves are
        // ASCII in every format, and a player's name or a PSQ's brain path
        // in a Windows code page must not make the game unreadable.
        parse_text(&String::from_utf8_lossy(&bytes), &name, args)?
    } else if args.position.len() == 1 && Path::new(first).is_dir() {
        return Err(format!("{first}: a folder, not a game file"));
    } else if args.position.len() == 1 && first.contains(['.', '/', '\\']) {
        // No move has a dot or a slash: a file name, mistyped or gone.
        return Err(format!("{first}: no such file"));
    } else {
        if args.game.is_some() {
            return Err("--game picks a game of a TSV file, not of moves typed in".to_string());
        }
        let moves = args
            .position
            .iter()
            .flat_map(|t| t.split_whitespace())
            .map(|t| parse_cell(t, args.board))
            .collect::<Result<Vec<_>, _>>()?;
        GameInput {
            size: args.board,
            rule: rule_of(args, None)?,
            moves,
            opening: 0,
        }
    };
    if let Some(ply) = args.ply {
        if ply > game.moves.len() {
            return Err(format!(
                "--ply {ply}: the game has {} moves",
                game.moves.len()
            ));
        }
        game.moves.truncate(ply);
    }
    check_moves(&game)?;
    Ok(game)
}

/// Every move must be legal (a forbidden point included) and come before
/// the game ended: a record that goes on after a five, or ends in black's
/// forbidden move, is refused rather than analysed past its end.
fn check_moves(game: &GameInput) -> Result<(), String> {
    let mut board = Board::new(game.size, game.rule);
    for (i, &p) in game.moves.iter().enumerate() {
        if board.is_over() {
            return Err(format!(
                "the game: move {} comes after the game ended (--ply {i} analyses the position before it)",
                i + 1
            ));
        }
        let color = board.side_to_move();
        board
            .check_move(i64::from(p.x()), i64::from(p.y()), color)
            .and_then(|p| board.place(p, color))
            .map_err(|e| match i {
                0 => format!("the game: move 1: {e}"),
                _ => format!(
                    "the game: move {}: {e} (--ply {i} analyses the position before it)",
                    i + 1
                ),
            })?;
    }
    Ok(())
}

/// The game in `text` (a record read from `name`, or stdin).
fn parse_text(text: &str, name: &Path, args: &AnalyseArgs) -> Result<GameInput, String> {
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.is_empty() {
        // Most likely the wrong file, or nothing piped in, rather than a
        // wish to analyse the empty board.
        return Err(format!(
            "{}: empty, no game in it (the empty board: any move with --ply 0)",
            name.display()
        ));
    }
    let no_game_flag = |what: &str| match &args.game {
        Some(_) => Err(format!(
            "--game picks a game of a TSV file; {} is {what}",
            name.display()
        )),
        None => Ok(()),
    };
    if trimmed.to_ascii_lowercase().starts_with("piskvork") {
        no_game_flag("a PSQ record")?;
        let (size, moves) = parse_psq(trimmed).map_err(|e| e.to_string())?;
        // Said in the file's own numbers: PSQ counts from 1.
        let moves = moves
            .into_iter()
            .enumerate()
            .map(|(i, (x, y))| {
                size.point_from_i64(x, y).ok_or_else(|| {
                    format!(
                        "PSQ move {}: {},{} is off the {size} board",
                        i + 1,
                        x.saturating_add(1),
                        y.saturating_add(1)
                    )
                })
            })
            .collect::<Result<Vec<Point>, String>>()?;
        return Ok(GameInput {
            size,
            rule: rule_of(args, None)?,
            moves,
            opening: 0,
        });
    }
    if trimmed.starts_with('(') {
        no_game_flag("an SGF record")?;
        let game = first_sgf_game(trimmed)?;
        let (size, moves) = sequence_of(&game)?;
        return Ok(GameInput {
            size,
            rule: rule_of(args, sgf_rule(&game)?)?,
            moves,
            // The set-up stones come first: nobody chose them in the game.
            opening: game.setup.len(),
        });
    }
    if trimmed.starts_with("#game_id") || trimmed.lines().next().is_some_and(|l| l.contains('\t')) {
        // Gomocup TSV: the game wanted (the file's first record, or
        // --game's). Only that game: when the first record cannot be read,
        // the next one is not analysed in its place. Lines are numbered and
        // headers read as the training loader reads them, so that an id it
        // names (`FILE:LINE` for a record without a game_id) finds its game.
        let mut lines = text
            .trim_start_matches('\u{feff}')
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim_end_matches('\r')))
            .filter(|(_, l)| !l.trim().is_empty());
        let (_, header) = lines.next().ok_or("no game in the TSV")?;
        let mut columns = wuzi_formats::tsv::Columns::from_header(header)
            .map_err(|e| format!("{}: {e}", name.display()))?;
        let mut wanted = None;
        for (line_no, line) in lines {
            if line.starts_with('#') {
                // Files joined end to end: a header names the columns of
                // the lines after it; any other '#' line is a comment.
                if let Ok(next) = wuzi_formats::tsv::Columns::from_header(line) {
                    columns = next;
                }
                continue;
            }
            let read = |what: String| {
                TsvGame::parse(&columns, line).map_err(|e| format!("{what} (line {line_no}): {e}"))
            };
            match &args.game {
                None => {
                    wanted = Some(read("the TSV's first game".to_string())?);
                    break;
                }
                Some(id) => {
                    // Its id as the loader gives it: the game_id, or
                    // without one the file and line.
                    let here = columns
                        .row(line)
                        .ok()
                        .and_then(|row| row.id().map(str::to_string))
                        .unwrap_or_else(|| format!("{}:{line_no}", name.display()));
                    if here == *id {
                        // Found but unreadable: its fault, not "no such game".
                        wanted = Some(read(format!("game {id:?}"))?);
                        break;
                    }
                }
            }
        }
        let game = match (wanted, &args.game) {
            (Some(game), _) => game,
            (None, Some(id)) => return Err(format!("no game {id:?} in the TSV")),
            (None, None) => return Err("no game in the TSV".to_string()),
        };
        // Under the rule and on the board its line says; its moves are
        // checked as any record's (a forbidden move or a move after the
        // five is named, with the --ply that stops before it), and a game
        // lost on time or by a crash is analysed as far as it went.
        return Ok(GameInput {
            size: game.size,
            rule: rule_of(args, Some(game.rule))?,
            opening: game.opening.min(game.moves.len()),
            moves: game.moves,
        });
    }
    no_game_flag("a list of moves")?;
    let moves = trimmed
        .split_whitespace()
        .map(|t| parse_cell(t, args.board))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(GameInput {
        size: args.board,
        rule: rule_of(args, None)?,
        moves,
        opening: 0,
    })
}

/// `--threshold`: a share of the expected score, 0 to 1.
fn parse_threshold(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(t) if (0.0..=1.0).contains(&t) => Ok(t),
        _ => Err(format!("{s:?}: a share of the expected score, 0 to 1")),
    }
}

/// The search limits of one position.
fn limits(args: &AnalyseArgs) -> SearchLimits {
    match args.playouts {
        Some(n) => SearchLimits {
            max_playouts: Some(n),
            ..SearchLimits::default()
        },
        None => {
            // At least 10 ms; --time is at most a year (cli::parse_seconds).
            let time = Duration::from_secs_f64(args.time.max(0.01));
            SearchLimits {
                time: Some(TimeBudget::fixed(time)),
                ..SearchLimits::default()
            }
        }
    }
}

/// Runs `analyse` with `searcher_for` giving the search of a rule on a
/// board size; returns what to print.
pub fn run(
    args: &AnalyseArgs,
    searcher_for: impl FnOnce(Rule, BoardSize) -> Result<Searcher, String>,
) -> Result<String, String> {
    let game = read_input(args)?;
    let searcher = searcher_for(game.rule, game.size)?;
    if args.review {
        let bar = (!args.json && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::new(game.moves.len() as u64);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "reviewing {bar:30} {pos}/{len} moves {eta}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar
        });
        let reviewed = review(&searcher, &game, args, |done| {
            if let Some(bar) = &bar {
                bar.set_position(done as u64);
            }
        })?;
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        return Ok(if args.json {
            format!("{}\n", review_json(&game, &reviewed))
        } else {
            review_text(&game, &reviewed, args.threshold)
        });
    }
    let board = Board::from_moves(game.size, game.rule, &game.moves)
        .map_err(|e| format!("the game: {e}"))?;
    if let Some(outcome) = board.outcome() {
        // A downloaded record mostly ends in its five: say how to get at
        // the positions it does have.
        let last = game.moves.len();
        let how = match outcome {
            Outcome::Win(Color::Black) => format!("black won with move {last}"),
            Outcome::Win(Color::White) => format!("white won with move {last}"),
            Outcome::Draw => format!("move {last} filled the board (a draw)"),
        };
        return Err(format!(
            "the game is over: {how}; --ply {} analyses the position before it, --review every move",
            last.saturating_sub(1)
        ));
    }
    let result = searcher.search(&board, &limits(args), &AtomicBool::new(false));
    Ok(if args.json {
        format!("{}\n", position_json(&board, &result, args.top))
    } else {
        position_text(&board, &result, args.top, use_color(args.color))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_read_and_print_both_ways() {
        let size = BoardSize::square(15).unwrap();
        let centre = Point::new(7, 7).unwrap();
        assert_eq!(cell_name(centre, size), "h8");
        assert_eq!(parse_cell("h8", size), Ok(centre));
        assert_eq!(parse_cell("H8", size), Ok(centre));
        assert_eq!(parse_cell("7,7", size), Ok(centre));
        assert_eq!(parse_cell("a15", size), Ok(Point::new(0, 0).unwrap()));
        assert_eq!(cell_name(Point::new(0, 14).unwrap(), size), "a1");
        assert!(parse_cell("p8", size).is_err());
        assert!(parse_cell("h16", size).is_err());
        assert!(parse_cell("zz", size).is_err());
        assert!(parse_cell("", size).is_err());
    }

    #[test]
    fn sgf_moves_set_up_stones_and_size_are_read() {
        let p = |x, y| Point::new(x, y).unwrap();
        let (size, moves) =
            sgf_sequence("(;GM[4]SZ[15]PB[a]PW[b]C[B[aa]];B[hh];W[ii];B[jj])").unwrap();
        assert_eq!(size, BoardSize::square(15).unwrap());
        assert_eq!(moves, vec![p(7, 7), p(8, 8), p(9, 9)]);
        let (size, _) = sgf_sequence("(;SZ[20:15];B[aa])").unwrap();
        assert_eq!(size, BoardSize::new(20, 15).unwrap());
        // Set-up stones first, black and white in turn, then the moves.
        let (_, moves) = sgf_sequence("(;SZ[15]AB[hh][jj]AW[ii];W[kk])").unwrap();
        assert_eq!(moves, vec![p(7, 7), p(8, 8), p(9, 9), p(10, 10)]);
        for (bad, why) in [
            ("(;SZ[99];B[aa])", "board size 99x99"),
            ("(;SZ[15]AB[aa][bb][cc]AW[dd])", "set-up stones 3 black"),
            ("(;SZ[15]AB[aa]AW[bb]PL[W])", "PL[W]"),
            ("(;SZ[15];B[aa];B[bb])", "move 2"),
            ("(;SZ[15]AB[aa];B[bb])", "move 1"),
        ] {
            let e = sgf_sequence(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
