//! Gomocup game records as TSV, parsed and printed here: the layout of the
//! Gomocup results archive (a `#` header naming the columns, one game a
//! line, moves `x,y` from the top left) and of self-play files, which add a
//! `search` column ([`crate::search_target`]).
//!
//! Reading is by column name, so files with fewer or reordered columns are
//! read too; `rule`, `board`, `winner` and `moves` are required. Each field
//! has its own parser, so that a reader can skip a game by its rule or size
//! before it parses the moves.

use wuzi_game::game::{BoardSize, BoardSizeError, Color, Outcome, Point, Rule, RuleError};

use crate::gomocup::Coord;
use crate::search_target::{self, SearchTarget, SearchTargetError};

/// Why a TSV header, game line or field could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TsvError {
    /// A first line that is not a `#` header.
    #[error("the first line must be a '#' header with the column names ({})", COLUMNS.join(" "))]
    NoHeader,
    /// A header without a required column (`rule`, `board`, `winner`,
    /// `moves`).
    #[error("the header has no column {name:?} (columns: {})", .columns.join(", "))]
    MissingColumn {
        name: &'static str,
        columns: Vec<String>,
    },
    /// A game line too short for the required columns.
    #[error("{found} fields, expected {expected}")]
    FieldCount { found: usize, expected: usize },
    /// A header with more columns than any record format has.
    #[error("the header names more than {MAX_COLUMNS} columns")]
    TooManyColumns,
    /// A `board` that is not `N` or `WIDTHxHEIGHT`.
    #[error("board size {text:?}: expected N or WIDTHxHEIGHT")]
    BoardSyntax { text: String },
    /// A board size the engine does not play.
    #[error(transparent)]
    BoardSize(#[from] BoardSizeError),
    #[error("rule {text:?} is not a rule")]
    Rule {
        text: String,
        #[source]
        error: RuleError,
    },
    #[error("winner {text:?}, expected B, W or D")]
    Winner { text: String },
    #[error("n_opening {text:?} is not a number")]
    Opening { text: String },
    /// The header names `n_opening` but the line has no such field.
    #[error("no n_opening field")]
    NoOpening,
    #[error(transparent)]
    Moves(#[from] MovesError),
    #[error(transparent)]
    Search(#[from] SearchTargetError),
}

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

/// Columns a header may name: far more than any record has, so that a
/// header of a million tabs is refused rather than held.
pub const MAX_COLUMNS: usize = 256;

/// The header line of [`COLUMNS`] (no newline).
pub fn header() -> String {
    format!("#{}", COLUMNS.join("\t"))
}

/// The header line of games recorded without our search: every column of
/// [`COLUMNS`] but `search` (no newline). A record with a `search` column
/// must give one entry per move after the opening, so games between other
/// engines leave the column out rather than leave it empty.
pub fn header_without_search() -> String {
    format!("#{}", COLUMNS[..COLUMNS.len() - 1].join("\t"))
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
pub fn parse_board(s: &str) -> Result<BoardSize, TsvError> {
    let s = s.trim();
    let (w, h) = match s.split_once(['x', 'X']) {
        Some((w, h)) => (w.trim(), h.trim()),
        None => (s, s),
    };
    let number = |t: &str| {
        t.parse::<u32>().map_err(|_| TsvError::BoardSyntax {
            text: s.to_string(),
        })
    };
    Ok(BoardSize::new(number(w)?, number(h)?)?)
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
pub fn parse_winner(s: &str) -> Result<Outcome, TsvError> {
    match s.trim() {
        "B" | "b" => Ok(Outcome::Win(Color::Black)),
        "W" | "w" => Ok(Outcome::Win(Color::White)),
        "D" | "d" => Ok(Outcome::Draw),
        other => Err(TsvError::Winner {
            text: other.to_string(),
        }),
    }
}

/// The `moves` column: `x,y` cells separated by blanks.
pub fn moves_text(moves: &[Point]) -> String {
    let cells: Vec<String> = moves.iter().map(|&p| Coord::from(p).to_string()).collect();
    cells.join(" ")
}

/// Why the `moves` column could not be read. Moves are numbered from 1.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MovesError {
    /// A move that is not an `x,y` cell.
    #[error("move {number} {text:?} is not x,y")]
    Malformed { number: usize, text: String },
    /// A cell off the board: a well-formed record of an illegal game.
    #[error("move {number} ({at}) is off the {size} board")]
    OffBoard {
        number: usize,
        at: Coord,
        size: BoardSize,
    },
    /// `n_moves` missing, not a number, or not the number of moves.
    #[error("n_moves does not match the {moves} moves")]
    Count { moves: usize },
}

/// Reads the `moves` column for a board of `size`.
pub fn parse_moves(text: &str, size: BoardSize) -> Result<Vec<Point>, MovesError> {
    let mut points = Vec::new();
    for (i, token) in text.split_whitespace().enumerate() {
        let Ok(at) = token.parse::<Coord>() else {
            return Err(MovesError::Malformed {
                number: i + 1,
                text: token.to_string(),
            });
        };
        match at.point_on(size) {
            Some(p) => points.push(p),
            None => {
                return Err(MovesError::OffBoard {
                    number: i + 1,
                    at,
                    size,
                })
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
    end: Option<usize>,
}

impl Columns {
    /// Reads the header line (`#` and tab-separated names).
    pub fn from_header(line: &str) -> Result<Columns, TsvError> {
        let Some(header) = line.trim_end_matches(['\r', '\n']).strip_prefix('#') else {
            return Err(TsvError::NoHeader);
        };
        if header.split('\t').nth(MAX_COLUMNS).is_some() {
            return Err(TsvError::TooManyColumns);
        }
        let names: Vec<String> = header.split('\t').map(|n| n.trim().to_string()).collect();
        let col = |name: &str| names.iter().position(|n| n == name);
        let need = |name: &'static str| {
            col(name).ok_or_else(|| TsvError::MissingColumn {
                name,
                columns: names.clone(),
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
            end: col("end"),
            names,
        })
    }

    /// The fields of one game line.
    pub fn row<'a>(&'a self, line: &'a str) -> Result<Row<'a>, TsvError> {
        // No more fields than the header names (and one for the rest): a
        // line of tabs is not millions of them in memory.
        let fields: Vec<&'a str> = line
            .trim_end_matches(['\r', '\n'])
            .splitn(self.names.len() + 1, '\t')
            .map(str::trim)
            .collect();
        let needed = [self.rule, self.board, self.winner, self.moves];
        if needed.iter().any(|&c| c >= fields.len()) {
            return Err(TsvError::FieldCount {
                found: fields.len(),
                expected: self.names.len(),
            });
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

    pub fn rule(&self) -> Result<Rule, TsvError> {
        let text = self.fields[self.columns.rule];
        text.parse::<Rule>().map_err(|error| TsvError::Rule {
            text: text.to_string(),
            error,
        })
    }

    pub fn board(&self) -> Result<BoardSize, TsvError> {
        parse_board(self.fields[self.columns.board])
    }

    pub fn winner(&self) -> Result<Outcome, TsvError> {
        parse_winner(self.fields[self.columns.winner])
    }

    /// Whether the `end` column says a five ended the game (then the moves
    /// must show it: the recorded winner is not taken on trust).
    pub fn claims_five(&self) -> bool {
        self.field(self.columns.end) == Some("five")
    }

    /// Whether the `end` column says the game was decided off the board:
    /// the Gomocup records' `other` (a time forfeit, a crash) and
    /// `illegal_move` (an engine's invalid answer). Its recorded winner
    /// says nothing of the position (renju's `black_forbidden` and
    /// `black_lost_to_move` are results of the rule, not forfeits).
    pub fn decided_off_the_board(&self) -> bool {
        matches!(self.field(self.columns.end), Some("other" | "illegal_move"))
    }

    /// Stones of the opening (0 without the column).
    pub fn opening(&self) -> Result<usize, TsvError> {
        let Some(column) = self.columns.opening else {
            return Ok(0);
        };
        match self.fields.get(column) {
            Some(text) => text.parse().map_err(|_| TsvError::Opening {
                text: text.to_string(),
            }),
            None => Err(TsvError::NoOpening),
        }
    }

    /// The moves, checked against `n_moves` where the file has it.
    pub fn moves(&self, size: BoardSize) -> Result<Vec<Point>, MovesError> {
        let moves = parse_moves(self.fields[self.columns.moves], size)?;
        if self.columns.count.is_some() {
            match self.field(self.columns.count).map(str::parse::<usize>) {
                Some(Ok(n)) if n == moves.len() => {}
                _ => return Err(MovesError::Count { moves: moves.len() }),
            }
        }
        Ok(moves)
    }

    /// The `game_id`, if the file has a non-empty one.
    pub fn id(&self) -> Option<&'a str> {
        self.field(self.columns.id).filter(|id| !id.is_empty())
    }

    /// The `search` field's entries: `None` when the line has no such field,
    /// `Some` (possibly empty) for a self-play record, whose entries must
    /// then match its moves.
    pub fn search(&self) -> Result<Option<Vec<Option<SearchTarget>>>, SearchTargetError> {
        self.field(self.columns.search)
            .map(search_target::parse_column)
            .transpose()
    }
}

/// One game as self-play writes it.
#[derive(Clone, Debug, PartialEq)]
pub struct TsvGame {
    pub id: String,
    /// The tournament's year, where one is known; `None` is written `-`,
    /// and a year column that holds no number (`2019-20`) reads as `None`:
    /// it is the record's provenance, not its game.
    pub year: Option<u16>,
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
    /// Self-play's `search` column: one entry per move after the opening.
    /// `None`: a game whose searches are not ours (a match's, say),
    /// written under [`header_without_search`].
    pub search: Option<Vec<Option<SearchTarget>>>,
}

impl TsvGame {
    /// The game as a line (no newline): under [`header`], or under
    /// [`header_without_search`] when it has no `search`.
    pub fn line(&self) -> String {
        // Fields are read trimmed: write them so, and a line reads back as written.
        let text = |s: &str| s.replace(['\t', '\r', '\n'], " ").trim().to_string();
        [
            text(&self.id),
            self.year
                .map_or_else(|| "-".to_string(), |year| year.to_string()),
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
        ]
        .into_iter()
        .chain(self.search.as_deref().map(search_target::format_column))
        .collect::<Vec<_>>()
        .join("\t")
    }

    /// Reads a line that [`TsvGame::line`] wrote, under `columns`.
    pub fn parse(columns: &Columns, line: &str) -> Result<TsvGame, TsvError> {
        let row = columns.row(line)?;
        let named = |name: &str| {
            let column = columns.names.iter().position(|n| n == name);
            row.field(column).unwrap_or_default().to_string()
        };
        let size = row.board()?;
        let year = named("year").parse().ok();
        Ok(TsvGame {
            id: row.id().unwrap_or_default().to_string(),
            year,
            league: named("league"),
            rule: row.rule()?,
            size,
            black: named("black"),
            white: named("white"),
            winner: row.winner()?,
            end: named("end"),
            opening: row.opening()?,
            moves: row.moves(size)?,
            search: row.search()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns() -> Columns {
        Columns::from_header(&header()).unwrap()
    }

    /// A self-play line with `field` (by column name) replaced by `value`.
    fn line_with(field: &str, value: &str) -> String {
        let mut fields = vec![
            "id", "-", "selfplay", "renju", "15", "a", "b", "B", "five", "1", "2", "7,7 8,8", "",
        ];
        let i = COLUMNS.iter().position(|&c| c == field).unwrap();
        fields[i] = value;
        fields.join("\t")
    }

    #[test]
    fn a_good_line_reads() {
        let game = TsvGame::parse(&columns(), &line_with("game_id", "g1")).unwrap();
        assert_eq!(game.rule, Rule::Renju);
        assert_eq!(game.moves.len(), 2);
        assert_eq!(game.opening, 1);
    }

    #[test]
    fn errors_carry_the_offending_field() {
        let parse = |field: &str, value: &str| TsvGame::parse(&columns(), &line_with(field, value));
        assert!(matches!(
            parse("rule", "go"),
            Err(TsvError::Rule { text, .. }) if text == "go"
        ));
        assert!(matches!(
            parse("board", "15x"),
            Err(TsvError::BoardSyntax { text }) if text == "15x"
        ));
        assert_eq!(
            parse("board", "4"),
            Err(TsvError::BoardSize(BoardSizeError {
                width: 4,
                height: 4
            }))
        );
        assert!(matches!(parse("winner", "X"), Err(TsvError::Winner { text }) if text == "X"));
        assert!(matches!(
            parse("n_opening", "one"),
            Err(TsvError::Opening { .. })
        ));
        assert_eq!(
            parse("moves", "7,7 15,0"),
            Err(TsvError::Moves(MovesError::OffBoard {
                number: 2,
                at: Coord { x: 15, y: 0 },
                size: BoardSize::FIFTEEN
            }))
        );
        let err = parse("moves", "7,7 8;8").unwrap_err();
        assert!(
            matches!(&err, TsvError::Moves(MovesError::Malformed { number: 2, text }) if text == "8;8")
        );
        assert_eq!(err.to_string(), "move 2 \"8;8\" is not x,y");
        assert_eq!(
            parse("n_moves", "3"),
            Err(TsvError::Moves(MovesError::Count { moves: 2 }))
        );
        assert!(matches!(
            parse("search", "1000:0:0/7,7"),
            Err(TsvError::Search(SearchTargetError::Move { .. }))
        ));
        assert_eq!(
            columns().row("id\t-").err(),
            Some(TsvError::FieldCount {
                found: 2,
                expected: 13
            })
        );
    }

    #[test]
    fn headers_need_the_four_columns() {
        assert_eq!(
            Columns::from_header("rule\tboard").err(),
            Some(TsvError::NoHeader)
        );
        let err = Columns::from_header("#rule\tboard\tmoves").unwrap_err();
        assert!(matches!(
            &err,
            TsvError::MissingColumn { name: "winner", .. }
        ));
        assert_eq!(
            err.to_string(),
            "the header has no column \"winner\" (columns: rule, board, moves)"
        );
        assert!(matches!(
            parse_board("20 x y"),
            Err(TsvError::BoardSyntax { text }) if text == "20 x y"
        ));
        assert_eq!(parse_board(" 20X15 "), Ok(BoardSize::new(20, 15).unwrap()));
    }

    /// What a line holds in memory is bounded by the header, not by the
    /// line: a line of tabs, a header of tabs, a search column of dashes.
    #[test]
    fn huge_lines_are_not_held_field_by_field() {
        let tabs = "\t".repeat(1 << 20);
        assert_eq!(
            Columns::from_header(&format!("#rule\tboard\twinner\tmoves{tabs}")).err(),
            Some(TsvError::TooManyColumns)
        );
        let columns = columns();
        let line = format!("g\t\t\tfreestyle\t15\t\t\tD\t\t0\t1\t7,7\t{tabs}");
        let row = columns.row(&line).unwrap();
        assert!(
            row.fields.len() <= COLUMNS.len() + 1,
            "{}",
            row.fields.len()
        );
        let dashes = "- ".repeat(search_target::MAX_ENTRIES + 1);
        let line = format!("g\t\t\tfreestyle\t15\t\t\tD\t\t0\t1\t7,7\t{dashes}");
        let row = columns.row(&line).unwrap();
        assert_eq!(row.search(), Err(SearchTargetError::TooMany));
    }
}
