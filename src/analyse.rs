//! `pbrain-wuzi analyse`: a position or a whole game analysed from a shell.
//!
//! Positions come from a move list (`h8 i9 j10`, or Gomocup's 0-based
//! `7,7 8,8`), a game record (PSQ, SGF, Gomocup TSV) or stdin. Board
//! coordinates in text are a column letter from the left and a row number
//! from the bottom (`h8` is the centre of 15x15), as on printed diagrams.

use std::fmt::Write as _;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use serde_json::{json, Value};

use crate::bench::blunders::refutation;
use crate::game::{Board, BoardSize, Color, Point, Rule};
use crate::gomocup::Coord;
use crate::notation::{column_letter, Notation};
use crate::search::node::Proven;
use crate::search::result::MoveStats;
use crate::search::{SearchLimits, SearchResult, Searcher, TimeBudget};
use wuzi_data::records::{parse_board_size, Dataset};
use wuzi_formats::record::parse_psq;
use wuzi_formats::record::parse_sgf;

/// Options of `pbrain-wuzi analyse`.
#[derive(clap::Args, Clone, Debug)]
pub struct AnalyseArgs {
    /// The position: moves (`h8 i9` or `7,7 8,8`, black first), a game
    /// file (.psq, .sgf, .tsv), or `-` to read either from stdin.
    #[arg(value_name = "MOVES|FILE", required = true)]
    pub position: Vec<String>,
    /// Rule (freestyle, standard, renju, caro); TSV records carry their own.
    #[arg(long, default_value = "freestyle")]
    pub rule: Rule,
    /// Board size for move lists: N or WIDTHxHEIGHT (files carry theirs).
    #[arg(long, default_value = "15", value_parser = parse_board_size)]
    pub board: BoardSize,
    /// TSV files: the game_id of the game (default: the first game).
    #[arg(long)]
    pub game: Option<String>,
    /// Analyse the position after this many moves (default: all of them).
    #[arg(long)]
    pub ply: Option<usize>,
    /// Seconds of search per position.
    #[arg(long, default_value_t = 2.0, value_parser = crate::cli::parse_seconds)]
    pub time: f64,
    /// Playouts per position (instead of --time).
    #[arg(long)]
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
    #[arg(long, default_value_t = 0.15)]
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
            .map_err(|e| format!("{t:?} is not a move on the {size} board ({})", e.why))
    }
}

/// The first game of an SGF file as one sequence of alternate moves, black
/// first: its set-up stones (`AB`, `AW`) black and white in turn, then its
/// moves, which must go on alternating. A position set up in the record can
/// so be analysed whenever alternate play reaches it; otherwise the error
/// says why.
pub fn sgf_sequence(text: &str) -> Result<(BoardSize, Vec<Point>), String> {
    let games = parse_sgf(text).map_err(|e| format!("SGF: {e}"))?;
    let game = games.into_iter().next().ok_or("SGF: no game tree")?;
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
        if placed % 2 == 0 {
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

/// The game the arguments describe.
pub fn read_input(args: &AnalyseArgs) -> Result<GameInput, String> {
    let first = args.position[0].as_str();
    let mut game = if args.position.len() == 1 && (first == "-" || Path::new(first).is_file()) {
        let (text, name) = if first == "-" {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| format!("stdin: {e}"))?;
            (text, PathBuf::from("stdin"))
        } else {
            let path = PathBuf::from(first);
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            (text, path)
        };
        parse_text(&text, &name, args)?
    } else {
        let moves = args
            .position
            .iter()
            .flat_map(|t| t.split_whitespace())
            .map(|t| parse_cell(t, args.board))
            .collect::<Result<Vec<_>, _>>()?;
        GameInput {
            size: args.board,
            rule: args.rule,
            moves,
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
    // Every move must be legal.
    Board::from_moves(game.size, game.rule, &game.moves).map_err(|e| format!("the game: {e}"))?;
    Ok(game)
}

/// The game in `text` (a record read from `name`, or stdin).
fn parse_text(text: &str, name: &Path, args: &AnalyseArgs) -> Result<GameInput, String> {
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    let points = |size: BoardSize, moves: Vec<(i64, i64)>| -> Result<Vec<Point>, String> {
        moves
            .into_iter()
            .map(|(x, y)| {
                i32::try_from(x)
                    .ok()
                    .zip(i32::try_from(y).ok())
                    .and_then(|(x, y)| size.point(x, y))
                    .ok_or_else(|| format!("move {x},{y} is off the {size} board"))
            })
            .collect()
    };
    if trimmed.to_ascii_lowercase().starts_with("piskvork") {
        let (size, moves) = parse_psq(trimmed)?;
        return Ok(GameInput {
            size,
            rule: args.rule,
            moves: points(size, moves)?,
        });
    }
    if trimmed.starts_with('(') {
        let (size, moves) = sgf_sequence(trimmed)?;
        return Ok(GameInput {
            size,
            rule: args.rule,
            moves,
        });
    }
    if trimmed.starts_with("#game_id") || trimmed.lines().next().is_some_and(|l| l.contains('\t')) {
        // Gomocup TSV: loaded with the records' own checks, under each rule.
        let mut found = None;
        for rule in std::iter::once(args.rule).chain(Rule::ALL) {
            let data = Dataset::parse(name, text, rule, &[])?;
            let game = match &args.game {
                Some(id) => data.games.iter().find(|g| &g.id == id),
                None => data.games.first(),
            };
            if let Some(game) = game {
                found = Some(GameInput {
                    size: game.size,
                    rule,
                    moves: game.moves.clone(),
                });
                break;
            }
        }
        return found.ok_or_else(|| match &args.game {
            Some(id) => format!("no legal game {id:?} in the TSV"),
            None => "no legal game in the TSV".to_string(),
        });
    }
    let moves = trimmed
        .split_whitespace()
        .map(|t| parse_cell(t, args.board))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(GameInput {
        size: args.board,
        rule: args.rule,
        moves,
    })
}

/// The search limits of one position.
fn limits(args: &AnalyseArgs) -> SearchLimits {
    match args.playouts {
        Some(n) => SearchLimits {
            max_playouts: Some(n.max(1)),
            ..SearchLimits::default()
        },
        None => {
            let time = Duration::from_secs_f64(args.time.clamp(0.01, 86_400.0));
            SearchLimits {
                time: Some(TimeBudget::fixed(time)),
                ..SearchLimits::default()
            }
        }
    }
}

fn color_name(c: Color) -> &'static str {
    match c {
        Color::Black => "black",
        Color::White => "white",
    }
}

/// Expected score of a move for the player making it.
fn move_score(m: &MoveStats) -> f64 {
    match m.proven {
        Proven::Win(_) => 1.0,
        Proven::Loss(_) => 0.0,
        Proven::Draw => 0.5,
        Proven::Unknown => (m.wdl[0] + 0.5 * m.wdl[1]) as f64,
    }
}

fn proven_text(proven: Proven, mover: Color) -> Option<String> {
    let moves = |plies: u16| (plies as usize).div_ceil(2);
    match proven {
        Proven::Win(d) => Some(format!(
            "{} wins by force in {} move(s)",
            color_name(mover),
            moves(d)
        )),
        Proven::Loss(d) => Some(format!(
            "{} wins by force in {} move(s)",
            color_name(mover.opponent()),
            moves(d.saturating_sub(1)).max(1)
        )),
        Proven::Draw => Some("a proven draw".to_string()),
        Proven::Unknown => None,
    }
}

/// The diagram: rows numbered from the bottom, columns lettered; the last
/// move in brackets (and in red when `color`).
pub fn diagram(board: &Board, color: bool) -> String {
    let size = board.size();
    let (w, h) = (size.width() as u8, size.height() as u8);
    let last = board.last_move();
    let letters: String = (0..w).map(|x| format!(" {}", column_letter(x))).collect();
    let mut out = format!("   {letters}\n");
    for y in 0..h {
        let _ = write!(out, "{:>2} ", h - y);
        for x in 0..w {
            let Some(p) = Point::new(x, y) else { continue };
            let is_last = Some(p) == last;
            let after_last = x > 0 && last == Point::new(x - 1, y);
            out.push(if is_last {
                '['
            } else if after_last {
                ']'
            } else {
                ' '
            });
            let stone = match board.stone(p) {
                Some(Color::Black) => "X",
                Some(Color::White) => "O",
                None => ".",
            };
            match (color, board.stone(p)) {
                (true, Some(_)) if is_last => {
                    let _ = write!(out, "\x1b[1;31m{stone}\x1b[0m");
                }
                (true, Some(Color::Black)) => {
                    let _ = write!(out, "\x1b[1m{stone}\x1b[0m");
                }
                (true, Some(Color::White)) => {
                    let _ = write!(out, "\x1b[36m{stone}\x1b[0m");
                }
                _ => out.push_str(stone),
            }
        }
        let closes = last == Point::new(w - 1, y);
        let _ = writeln!(out, "{} {}", if closes { "]" } else { " " }, h - y);
    }
    let _ = writeln!(out, "   {letters}");
    out
}

fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none()
                && std::env::var("TERM").map_or(true, |t| t != "dumb")
        }
    }
}

/// A cell in JSON: its label and its 0-based x, y.
fn cell_json(p: Point, size: BoardSize) -> Value {
    json!({"name": cell_name(p, size), "x": p.x(), "y": p.y()})
}

/// A proven value in JSON (null when not proven).
fn proven_json(proven: Proven) -> Value {
    match proven {
        Proven::Win(d) => json!({"result": "win", "plies": d}),
        Proven::Loss(d) => json!({"result": "loss", "plies": d}),
        Proven::Draw => json!({"result": "draw"}),
        Proven::Unknown => Value::Null,
    }
}

/// The analysis of one position as JSON.
fn position_json(board: &Board, result: &SearchResult) -> Value {
    let size = board.size();
    let cell = |p: Point| cell_json(p, size);
    let mover = result.side_to_move;
    json!({
        "rule": board.rule().to_string(),
        "board": size.to_string(),
        "moves_played": board.stone_count(),
        "to_move": color_name(mover),
        "winrate": result.wdl[0],
        "drawrate": result.wdl[1],
        "lossrate": result.wdl[2],
        "expected_score": result.expectation,
        "proven": proven_json(result.proven),
        "best_move": result.best_move.map(cell),
        "pv": result.pv.iter().map(|&p| cell(p)).collect::<Vec<_>>(),
        "top": result.moves.iter().map(|m| json!({
            "move": cell(m.mv),
            "visits": m.visits,
            "prior": m.prior,
            "winrate": m.wdl[0],
            "drawrate": m.wdl[1],
            "proven": proven_json(m.proven),
        })).collect::<Vec<_>>(),
        "playouts": result.counters.playouts,
        "seconds": result.elapsed.as_secs_f64(),
    })
}

/// The analysis of one position as text.
fn position_text(board: &Board, result: &SearchResult, top: usize, color: bool) -> String {
    let size = board.size();
    let mut out = diagram(board, color);
    let mover = result.side_to_move;
    let _ = writeln!(
        out,
        "{} {}, {} to move (move {})",
        board.rule(),
        size,
        color_name(mover),
        board.stone_count() + 1
    );
    let evaluation = match proven_text(result.proven, mover) {
        Some(text) => text,
        None => format!(
            "{} winrate {:.1}%, drawrate {:.1}%",
            color_name(mover),
            100.0 * result.wdl[0],
            100.0 * result.wdl[1]
        ),
    };
    let _ = writeln!(
        out,
        "evaluation: {evaluation} ({} playouts, {:.1} s)",
        result.counters.playouts,
        result.elapsed.as_secs_f64()
    );
    if let Some(best) = result.best_move {
        let _ = writeln!(out, "best move: {}", cell_name(best, size));
    }
    let pv = Notation::labels(size).line(mover, &result.pv);
    let _ = writeln!(out, "line:{pv}");
    let _ = writeln!(out, "top moves:");
    for m in result.moves.iter().take(top) {
        let value = match proven_text(m.proven, mover) {
            Some(t) => t,
            None => format!("winrate {:5.1}%", 100.0 * m.wdl[0]),
        };
        let _ = writeln!(
            out,
            "  {:<4} visits {:>7}  prior {:5.1}%  {value}",
            cell_name(m.mv, size),
            m.visits,
            100.0 * m.prior
        );
    }
    out
}

/// One reviewed move.
#[derive(Clone, Debug)]
pub struct Reviewed {
    pub ply: usize,
    pub mover: Color,
    pub played: Point,
    /// Expected score of the played and of the best move, for the mover.
    pub played_score: f64,
    pub best: Option<Point>,
    pub best_score: f64,
    /// The opponent's forced win after the move (from a position not lost).
    pub forced_loss: Option<Vec<Point>>,
    /// `""`, `"?"` or `"??"`.
    pub mark: &'static str,
}

/// Solver budget of the forced-loss check after each reviewed move.
const REVIEW_SOLVER_NODES: u64 = crate::bench::blunders::CHECK_NODES;

/// Reviews every move of `game`.
pub fn review(
    searcher: &Searcher,
    game: &GameInput,
    args: &AnalyseArgs,
    mut progress: impl FnMut(usize),
) -> Result<Vec<Reviewed>, String> {
    let mut board = Board::new(game.size, game.rule);
    let limits = limits(args);
    let stop = AtomicBool::new(false);
    let mut out = Vec::new();
    for (ply, &played) in game.moves.iter().enumerate() {
        let mover = board.side_to_move();
        let result = searcher.search(&board, &limits, &stop);
        let best_score = result
            .moves
            .first()
            .map_or(result.expectation as f64, move_score)
            .max(result.expectation as f64);
        let played_score = match result.moves.iter().find(|m| m.mv == played && m.visits > 0) {
            Some(m) => move_score(m),
            None => {
                // Not searched from here: its value is one minus the value of
                // the position after it.
                let mut after = board.clone();
                after
                    .play(played)
                    .map_err(|e| format!("move {}: {e}", ply + 1))?;
                if after.outcome().is_some() {
                    1.0
                } else {
                    let r = searcher.search(&after, &limits, &stop);
                    1.0 - r.expectation as f64
                }
            }
        };
        let lost_before = matches!(result.proven, Proven::Loss(_));
        let forced_loss = if lost_before {
            None
        } else {
            refutation(&board, played, REVIEW_SOLVER_NODES)
        };
        let mark = if forced_loss.is_some() {
            "??"
        } else if best_score - played_score > args.threshold {
            "?"
        } else {
            ""
        };
        out.push(Reviewed {
            ply,
            mover,
            played,
            played_score,
            best: result.best_move,
            best_score,
            forced_loss,
            mark,
        });
        board
            .play(played)
            .map_err(|e| format!("move {}: {e}", ply + 1))?;
        progress(ply + 1);
    }
    Ok(out)
}

fn review_text(game: &GameInput, reviewed: &[Reviewed], threshold: f64) -> String {
    let size = game.size;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "review of {} moves ({} {}): ? loses more than {:.0}% of the expected score, \
         ?? walks into a forced loss",
        reviewed.len(),
        game.rule,
        size,
        100.0 * threshold
    );
    for r in reviewed {
        let stone = if r.mover == Color::Black { 'X' } else { 'O' };
        let best = r.best.map_or("-".to_string(), |b| cell_name(b, size));
        let _ = write!(
            out,
            "{:>3}. {stone}{:<4} {:5.1}%   best {:<4} {:5.1}%  {}",
            r.ply + 1,
            cell_name(r.played, size),
            100.0 * r.played_score,
            best,
            100.0 * r.best_score,
            r.mark
        );
        if let Some(line) = &r.forced_loss {
            let names: Vec<String> = line.iter().map(|&p| cell_name(p, size)).collect();
            let _ = write!(out, " (the opponent wins: {})", names.join(" "));
        }
        out.push('\n');
    }
    out
}

fn review_json(game: &GameInput, reviewed: &[Reviewed]) -> Value {
    let size = game.size;
    let cell = |p: Point| cell_json(p, size);
    json!({
        "rule": game.rule.to_string(),
        "board": size.to_string(),
        "moves": reviewed.iter().map(|r| json!({
            "ply": r.ply + 1,
            "player": color_name(r.mover),
            "played": cell(r.played),
            "played_score": r.played_score,
            "best": r.best.map(cell),
            "best_score": r.best_score,
            "mark": r.mark,
            "forced_loss": r.forced_loss.as_ref().map(|l| l.iter().map(|&p| cell(p)).collect::<Vec<_>>()),
        })).collect::<Vec<_>>(),
    })
}

/// Runs `analyse` with `searcher_for` giving the search of a rule; returns
/// what to print.
pub fn run(
    args: &AnalyseArgs,
    searcher_for: impl FnOnce(Rule) -> Result<Searcher, String>,
) -> Result<String, String> {
    let game = read_input(args)?;
    let searcher = searcher_for(game.rule)?;
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
        return Err(format!(
            "the game is over ({outcome:?}): nothing to analyse"
        ));
    }
    let result = searcher.search(&board, &limits(args), &AtomicBool::new(false));
    Ok(if args.json {
        format!("{}\n", position_json(&board, &result))
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
