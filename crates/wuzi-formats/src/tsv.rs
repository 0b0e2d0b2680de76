//! Gomocup game records as TSV, parsed and printed here: the layout of the
//! Gomocup results archive (a `#` header naming the columns, one game a
//! line, moves `x,y` from the top left) and of self-play files, which add a
//! `search` column ([`crate::search_target`]).
//!
//! Reading is by column name, so files with fewer or reordered columns are
//! read too; `rule`, `board`, `winner` and `moves` are required. Each field
//! has its own parser, so that a reader can skip a game by its rule or size
//! before it parses the moves.

use std::fmt;

use wuzi_game::game::{BoardSize, Color, Outcome, Point, Rule};

use crate::gomocup::Coord;
use crate::search_target::{self, SearchTarget};

/// The columns that self-play writes, in order.
pub const COLUMNS: [&str; 13] = [
    "game_id",
    "year",
    "league",
    "rule",
    "board",
    "black",
    "white",
    "winner",
    "end",
    "n_opening",
    "n_moves",
    "moves",
    "search",
];

/// The header line of [`COLUMNS`] (no newline).
pub fn header() -> String {
    format!("#{}", COLUMNS.join("\t"))
}

/// A board size as the `board` column writes it: `15`, or `30x20`.
pub fn board_text(size: BoardSize) -> String {
    if size.width() == size.height() {
        size.width().to_string()
    } else {
        format!("{}x{}", size.width(), size.height())
    }
}

/// Reads `N` or `WIDTHxHEIGHT` (also what `--board` takes).
pub fn parse_board(s: &str) -> Result<BoardSize, String> {
    let s = s.trim();
    let (w, h) = match s.split_once(['x', 'X']) {
        Some((w, h)) => (w.trim(), h.trim()),
        None => (s, s),
    };
    let number = |t: &str| {
        t.parse::<u32>()
            .map_err(|_| format!("board size {s:?}: expected N or WIDTHxHEIGHT"))
    };
    BoardSize::new(number(w)?, number(h)?).map_err(|e| e.to_string())
}

/// The `winner` column: `B`, `W` or `D`.
pub fn winner_text(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Win(Color::Black) => "B",
        Outcome::Win(Color::White) => "W",
        Outcome::Draw => "D",
    }
}

/// Reads the `winner` column (either case).
pub fn parse_winner(s: &str) -> Result<Outcome, String> {
    match s.trim() {
        "B" | "b" => Ok(Outcome::Win(Color::Black)),
        "W" | "w" => Ok(Outcome::Win(Color::White)),
        "D" | "d" => Ok(Outcome::Draw),
        other => Err(format!("winner {other:?}, expected B, W or D")),
    }
}

/// The `moves` column: `x,y` cells separated by blanks.
pub fn moves_text(moves: &[Point]) -> String {
    let cells: Vec<String> = moves.iter().map(|&p| Coord::from(p).to_string()).collect();
    cells.join(" ")
}

/// Why the `moves` column could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MovesError {
    /// Not a list of `x,y` cells.
    Malformed(String),
    /// A cell is off the board: a well-formed record of an illegal game.
    OffBoard(String),
}

impl fmt::Display for MovesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MovesError::Malformed(why) | MovesError::OffBoard(why) => f.write_str(why),
        }
    }
}

/// Reads the `moves` column for a board of `size`.
pub fn parse_moves(text: &str, size: BoardSize) -> Result<Vec<Point>, MovesError> {
    let mut points = Vec::new();
    for (i, token) in text.split_whitespace().enumerate() {
        let Ok(c) = token.parse::<Coord>() else {
            return Err(MovesError::Malformed(format!(
                "move {} {token:?} is not x,y",
                i + 1
            )));
        };
        match c.point_on(size) {
            Some(p) => points.push(p),
            None => {
                return Err(MovesError::OffBoard(format!(
                    "move {} ({c}) is off the {size} board",
                    i + 1
                )))
            }
        }
    }
    Ok(points)
}

/// Where each column is, from the header.
#[derive(Clone, Debug)]
pub struct Columns {
    names: Vec<String>,
    rule: usize,
    board: usize,
    winner: usize,
    moves: usize,
    id: Option<usize>,
    opening: Option<usize>,
    count: Option<usize>,
    search: Option<usize>,
}

impl Columns {
    /// Reads the header line (`#` and tab-separated names).
    pub fn from_header(line: &str) -> Result<Columns, String> {
        let Some(header) = line.trim_end_matches(['\r', '\n']).strip_prefix('#') else {
            return Err(format!(
                "the first line must be a '#' header with the column names ({})",
                COLUMNS.join(" ")
            ));
        };
        let names: Vec<String> = header.split('\t').map(|n| n.trim().to_string()).collect();
        let col = |name: &str| names.iter().position(|n| n == name);
        let need = |name: &str| {
            col(name).ok_or_else(|| {
                format!(
                    "the header has no column {name:?} (columns: {})",
                    names.join(", ")
                )
            })
        };
        Ok(Columns {
            rule: need("rule")?,
            board: need("board")?,
            winner: need("winner")?,
            moves: need("moves")?,
            id: col("game_id"),
            opening: col("n_opening"),
            count: col("n_moves"),
            search: col("search"),
            names,
        })
    }

    /// The fields of one game line.
    pub fn row<'a>(&'a self, line: &'a str) -> Result<Row<'a>, String> {
        let fields: Vec<&'a str> = line
            .trim_end_matches(['\r', '\n'])
            .split('\t')
            .map(str::trim)
            .collect();
        let needed = [self.rule, self.board, self.winner, self.moves];
        if needed.iter().any(|&c| c >= fields.len()) {
            return Err(format!(
                "{} fields, expected {}",
                fields.len(),
                self.names.len()
            ));
        }
        Ok(Row {
            fields,
            columns: self,
        })
    }
}

/// One game line, its fields read on demand.
pub struct Row<'a> {
    fields: Vec<&'a str>,
    columns: &'a Columns,
}

impl<'a> Row<'a> {
    fn field(&self, column: Option<usize>) -> Option<&'a str> {
        column.and_then(|c| self.fields.get(c).copied())
    }

    pub fn rule(&self) -> Result<Rule, String> {
        let text = self.fields[self.columns.rule];
        text.parse::<Rule>()
            .map_err(|_| format!("rule {text:?} is not a rule"))
    }

    pub fn board(&self) -> Result<BoardSize, String> {
        parse_board(self.fields[self.columns.board])
    }

    pub fn winner(&self) -> Result<Outcome, String> {
        parse_winner(self.fields[self.columns.winner])
    }

    /// Stones of the opening (0 without the column).
    pub fn opening(&self) -> Result<usize, String> {
        let Some(column) = self.columns.opening else {
            return Ok(0);
        };
        match self.fields.get(column) {
            Some(text) => text
                .parse()
                .map_err(|_| format!("n_opening {text:?} is not a number")),
            None => Err("no n_opening field".to_string()),
        }
    }

    /// The moves, checked against `n_moves` where the file has it.
    pub fn moves(&self, size: BoardSize) -> Result<Vec<Point>, MovesError> {
        let moves = parse_moves(self.fields[self.columns.moves], size)?;
        if self.columns.count.is_some() {
            match self.field(self.columns.count).map(str::parse::<usize>) {
                Some(Ok(n)) if n == moves.len() => {}
                _ => {
                    return Err(MovesError::Malformed(format!(
                        "n_moves does not match the {} moves",
                        moves.len()
                    )))
                }
            }
        }
        Ok(moves)
    }

    /// The `game_id`, if the file has a non-empty one.
    pub fn id(&self) -> Option<&'a str> {
        self.field(self.columns.id).filter(|id| !id.is_empty())
    }

    /// The `search` column's entries (none without the column).
    pub fn search(&self) -> Result<Vec<Option<SearchTarget>>, String> {
        match self.field(self.columns.search) {
            None => Ok(Vec::new()),
            Some(text) => search_target::parse_column(text),
        }
    }
}

/// One game as self-play writes it.
#[derive(Clone, Debug, PartialEq)]
pub struct TsvGame {
    pub id: String,
    pub league: String,
    pub rule: Rule,
    pub size: BoardSize,
    pub black: String,
    pub white: String,
    pub winner: Outcome,
    /// How it ended (`five`, `draw`, ...).
    pub end: String,
    pub opening: usize,
    pub moves: Vec<Point>,
    /// One entry per move after the opening, or none at all.
    pub search: Vec<Option<SearchTarget>>,
}

impl TsvGame {
    /// The game as a line under [`header`] (no newline; no year: `-`).
    pub fn line(&self) -> String {
        let text = |s: &str| s.replace(['\t', '\r', '\n'], " ");
        [
            text(&self.id),
            "-".to_string(),
            text(&self.league),
            self.rule.to_string(),
            board_text(self.size),
            text(&self.black),
            text(&self.white),
            winner_text(self.winner).to_string(),
            text(&self.end),
            self.opening.to_string(),
            self.moves.len().to_string(),
            moves_text(&self.moves),
            search_target::format_column(&self.search),
        ]
        .join("\t")
    }

    /// Reads a line that [`TsvGame::line`] wrote, under `columns`.
    pub fn parse(columns: &Columns, line: &str) -> Result<TsvGame, String> {
        let row = columns.row(line)?;
        let named = |name: &str| {
            let column = columns.names.iter().position(|n| n == name);
            row.field(column).unwrap_or_default().to_string()
        };
        let size = row.board()?;
        Ok(TsvGame {
            id: row.id().unwrap_or_default().to_string(),
            league: named("league"),
            rule: row.rule()?,
            size,
            black: named("black"),
            white: named("white"),
            winner: row.winner()?,
            end: named("end"),
            opening: row.opening()?,
            moves: row.moves(size).map_err(|e| e.to_string())?,
            search: row.search()?,
        })
    }
}
