//! SGF game records (FF[4], GM[4]: gomoku and renju), written and read.

use std::fmt::Write as _;

use wuzi_game::game::{BoardSize, BoardSizeError, Color, Point, Rule};

use crate::notation::column_letter;
use crate::record::MoveRecord;

fn sgf_value(c: char) -> Option<u8> {
    match c {
        'a'..='z' => Some(c as u8 - b'a'),
        'A'..='Z' => Some(c as u8 - b'A' + 26),
        _ => None,
    }
}

/// Escapes `]`, `\` (and `:` when needed) in an SGF text value.
fn sgf_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c == ']' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// What an SGF record says about the end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SgfInfo<'a> {
    pub size: BoardSize,
    pub rule: Rule,
    pub black: &'a str,
    pub white: &'a str,
    /// `RE` value: `B+`, `W+T`, `0` ...
    pub result: &'a str,
    /// Free text for `GC` (the reason, the opening).
    pub comment: &'a str,
    pub game_name: &'a str,
}

/// One game as SGF (FF[4], GM[4]); every stone, the opening included, is a
/// move node.
pub fn sgf_text(info: &SgfInfo<'_>, moves: &[MoveRecord]) -> String {
    let mut text = String::with_capacity(160 + moves.len() * 6);
    let size = if info.size.width() == info.size.height() {
        info.size.width().to_string()
    } else {
        format!("{}:{}", info.size.width(), info.size.height())
    };
    let _ = write!(
        text,
        "(;FF[4]GM[4]CA[UTF-8]AP[wuzi:{}]SZ[{size}]RU[{}]GN[{}]PB[{}]PW[{}]RE[{}]GC[{}]",
        env!("CARGO_PKG_VERSION"),
        info.rule,
        sgf_escape(info.game_name),
        sgf_escape(info.black),
        sgf_escape(info.white),
        sgf_escape(info.result),
        sgf_escape(info.comment),
    );
    for (i, m) in moves.iter().enumerate() {
        if i % 12 == 0 {
            text.push('\n');
        }
        let tag = match m.color {
            Color::Black => 'B',
            Color::White => 'W',
        };
        let _ = write!(
            text,
            ";{tag}[{}{}]",
            column_letter(m.point.x()),
            column_letter(m.point.y())
        );
    }
    text.push_str(")\n");
    text
}

/// A game read back from SGF: the main line (the first variation at every
/// branch).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SgfGame {
    pub size: BoardSize,
    /// Set-up stones (`AB`, `AW`) placed before the first move.
    pub setup: Vec<(Color, Point)>,
    pub moves: Vec<(Color, Point)>,
    /// Other properties of the main line, in order (`SZ`, `RE`, `PB`, `C`, ...).
    pub properties: Vec<(String, String)>,
}

impl SgfGame {
    pub fn property(&self, key: &str) -> Option<&str> {
        self.properties
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Why an SGF text could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SgfError {
    #[error("unbalanced ')'")]
    Unbalanced,
    /// A node after the variations of its subtree (`(;B[aa](;W[bb]);W[cc])`).
    #[error("a node after the variations of its subtree")]
    NodeAfterVariations,
    #[error("unterminated property value")]
    UnterminatedValue,
    #[error("property outside a game tree")]
    PropertyOutsideTree,
    /// A property after `(` or `)` with no `;` to start its node
    /// (`(;B[aa](;W[bb])B[cc])`).
    #[error("a property outside a node (no ';' before it)")]
    PropertyOutsideNode,
    #[error("unterminated game tree")]
    UnterminatedTree,
    /// `AE`: removing stones.
    #[error("AE[{value}]: removing stones is not supported")]
    RemoveStones { value: String },
    /// `B[]` or `W[]` (`key` is the property).
    #[error("{key}[]: passes are not supported")]
    Pass { key: String },
    /// A stone's value that is not two letters.
    #[error("bad point {key}[{value}]")]
    BadPoint { key: String, value: String },
    /// `AB` or `AW` after the first move.
    #[error("{key}[{value}]: set-up stones after the first move are not supported")]
    SetupAfterMoves { key: String, value: String },
    /// `SZ` that is not `n` or `w:h`.
    #[error("bad SZ[{value}]")]
    BadSize { value: String },
    /// A board size the engine does not play.
    #[error(transparent)]
    Size(#[from] BoardSizeError),
    #[error("stone {point} is off the {size} board")]
    OffBoard { point: Point, size: BoardSize },
    /// `GM` other than 4 (gomoku and renju): a record of another game, a
    /// go game's `SZ[19]` and moves among them, must not be read as ours.
    #[error("GM[{value}] is not a gomoku or renju record (GM[4])")]
    OtherGame { value: String },
    /// An error in a game after the first of a collection (1-based).
    #[error("game {number}: {error}")]
    InGame { number: usize, error: Box<SgfError> },
}

/// One open `(` of an SGF collection.
struct Subtree {
    /// On the main line: the first variation of a main-line node.
    main: bool,
    /// A variation has been opened inside it (later ones are not main).
    branched: bool,
}

/// Reads every game of an SGF file (a collection of `(;...)` trees), each
/// as its main line. Values are read whole, escapes included, so that text
/// in comments (`C[... B[aa] ...]`) is never taken for a move. Set-up
/// stones are kept apart from the moves; removing stones (`AE`), passes and
/// set-up stones after the first move are refused with the reason.
pub fn parse_sgf(text: &str) -> Result<Vec<SgfGame>, SgfError> {
    parse_games(text, usize::MAX).map_err(|(games_before, error)| match games_before {
        0 => error,
        n => SgfError::InGame {
            number: n + 1,
            error: Box::new(error),
        },
    })
}

/// The first game of an SGF file, read as [`parse_sgf`] reads each; the
/// games after it are not read (a broken one does not stop the first).
pub fn parse_first_sgf_game(text: &str) -> Result<Option<SgfGame>, SgfError> {
    let games = parse_games(text, 1).map_err(|(_, error)| error)?;
    Ok(games.into_iter().next())
}

/// The games of `text` up to `most`; an error comes with the number of
/// games read before it.
fn parse_games(text: &str, most: usize) -> Result<Vec<SgfGame>, (usize, SgfError)> {
    let mut games = Vec::new();
    match read_games(text, most, &mut games) {
        Ok(()) => Ok(games),
        Err(error) => Err((games.len(), error)),
    }
}

fn read_games(text: &str, most: usize, games: &mut Vec<SgfGame>) -> Result<(), SgfError> {
    let mut chars = text.chars();
    let mut open: Vec<Subtree> = Vec::new();
    let mut game = SgfGame {
        size: BoardSize::FIFTEEN,
        setup: Vec::new(),
        moves: Vec::new(),
        properties: Vec::new(),
    };
    let mut key = String::new();
    let mut after_value = false;
    // Whether a `;` opened a node that the next property belongs to.
    let mut in_node = false;
    while let Some(c) = chars.next() {
        match c {
            '(' => {
                let main = match open.last_mut() {
                    None => {
                        game.setup.clear();
                        game.moves.clear();
                        game.properties.clear();
                        true
                    }
                    Some(parent) => {
                        let main = parent.main && !parent.branched;
                        parent.branched = true;
                        main
                    }
                };
                open.push(Subtree {
                    main,
                    branched: false,
                });
                key.clear();
                in_node = false;
            }
            ')' => {
                open.pop().ok_or(SgfError::Unbalanced)?;
                if open.is_empty() {
                    games.push(finish_sgf_game(&mut game)?);
                    if games.len() == most {
                        return Ok(());
                    }
                }
                key.clear();
                in_node = false;
            }
            ';' => {
                // A node after a subtree's variations belongs nowhere.
                if open.last().is_some_and(|t| t.branched) {
                    return Err(SgfError::NodeAfterVariations);
                }
                key.clear();
                after_value = false;
                in_node = true;
            }
            '[' => {
                let mut value = String::new();
                loop {
                    match chars.next() {
                        Some('\\') => {
                            if let Some(e) = chars.next() {
                                value.push(e);
                            }
                        }
                        Some(']') => break,
                        Some(v) => value.push(v),
                        None => return Err(SgfError::UnterminatedValue),
                    }
                }
                after_value = true;
                let Some(subtree) = open.last() else {
                    return Err(SgfError::PropertyOutsideTree);
                };
                if !in_node {
                    return Err(SgfError::PropertyOutsideNode);
                }
                if subtree.main {
                    sgf_property(&mut game, &key, value)?;
                }
            }
            c if c.is_ascii_uppercase() => {
                // After a value a letter starts a new property name;
                // consecutive values (`AB[aa][bb]`) share one name.
                if after_value {
                    key.clear();
                    after_value = false;
                }
                key.push(c);
            }
            _ => {}
        }
    }
    if !open.is_empty() {
        return Err(SgfError::UnterminatedTree);
    }
    Ok(())
}

/// One property value of a main-line node.
fn sgf_property(game: &mut SgfGame, key: &str, value: String) -> Result<(), SgfError> {
    let color = match key {
        "B" | "AB" => Color::Black,
        "W" | "AW" => Color::White,
        "AE" => return Err(SgfError::RemoveStones { value }),
        _ => {
            game.properties.push((key.to_string(), value));
            return Ok(());
        }
    };
    let mut cs = value.chars();
    let point = match (
        cs.next().map(sgf_value),
        cs.next().map(sgf_value),
        cs.next(),
    ) {
        (Some(Some(x)), Some(Some(y)), None) => Point::new(x, y),
        (None, _, _) => {
            return Err(SgfError::Pass {
                key: key.to_string(),
            })
        }
        _ => None,
    };
    let Some(point) = point else {
        return Err(SgfError::BadPoint {
            key: key.to_string(),
            value,
        });
    };
    if key.starts_with('A') {
        if !game.moves.is_empty() {
            return Err(SgfError::SetupAfterMoves {
                key: key.to_string(),
                value,
            });
        }
        game.setup.push((color, point));
    } else {
        game.moves.push((color, point));
    }
    Ok(())
}

/// The size (`SZ[n]` or `SZ[w:h]`, 15 without it), with every stone on the
/// board; the game is taken and `game` left empty.
fn finish_sgf_game(game: &mut SgfGame) -> Result<SgfGame, SgfError> {
    // A number: GM[04] is gomoku too.
    if let Some(gm) = game
        .property("GM")
        .filter(|gm| gm.trim().parse::<u32>() != Ok(4))
    {
        return Err(SgfError::OtherGame {
            value: gm.to_string(),
        });
    }
    let sz = game.property("SZ").unwrap_or("15").trim().to_string();
    let side = |v: &str| {
        v.trim()
            .parse()
            .map_err(|_| SgfError::BadSize { value: sz.clone() })
    };
    let (w, h) = match sz.split_once(':') {
        Some((w, h)) => (side(w)?, side(h)?),
        None => (side(&sz)?, side(&sz)?),
    };
    let size = BoardSize::new(w, h)?;
    if let Some(&(_, point)) = game
        .setup
        .iter()
        .chain(&game.moves)
        .find(|(_, p)| !size.contains(*p))
    {
        return Err(SgfError::OffBoard { point, size });
    }
    Ok(SgfGame {
        size,
        setup: std::mem::take(&mut game.setup),
        moves: std::mem::take(&mut game.moves),
        properties: std::mem::take(&mut game.properties),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::record::tests::rec;

    #[test]
    fn sgf_round_trip() {
        let size = BoardSize::new(30, 20).unwrap();
        let moves = vec![
            rec(0, 0, Color::Black),
            rec(29, 19, Color::White),
            rec(7, 7, Color::Black),
        ];
        let info = SgfInfo {
            size,
            rule: Rule::Renju,
            black: "a]b",
            white: "c\\d",
            result: "W+F",
            comment: "black: forbidden",
            game_name: "game 1",
        };
        let text = sgf_text(&info, &moves);
        let games = parse_sgf(&format!("{text}{text}")).unwrap();
        assert_eq!(games.len(), 2);
        let g = &games[0];
        assert_eq!(g.size, size);
        assert_eq!(
            g.moves,
            moves.iter().map(|m| (m.color, m.point)).collect::<Vec<_>>()
        );
        assert_eq!(g.property("PB"), Some("a]b"));
        assert_eq!(g.property("PW"), Some("c\\d"));
        assert_eq!(g.property("RE"), Some("W+F"));
        assert_eq!(g.property("RU"), Some("renju"));
    }

    #[test]
    fn sgf_main_line_set_up_stones_and_comments() {
        let p = |x, y| Point::new(x, y).unwrap();
        let games = parse_sgf(
            "(;GM[4]SZ[15]AB[hh][ii]AW[hi]C[not a move: B[aa\\] W[bb\\]]\n\
             ;W[jj](;B[kk];W[ll])(;B[aa]))",
        )
        .unwrap();
        let g = &games[0];
        assert_eq!(
            g.setup,
            vec![
                (Color::Black, p(7, 7)),
                (Color::Black, p(8, 8)),
                (Color::White, p(7, 8))
            ]
        );
        assert_eq!(
            g.moves,
            vec![
                (Color::White, p(9, 9)),
                (Color::Black, p(10, 10)),
                (Color::White, p(11, 11))
            ]
        );
        assert_eq!(g.property("C"), Some("not a move: B[aa] W[bb]"));
        for (bad, why) in [
            ("(;SZ[15];B[hh]AE[hh])", "AE"),
            ("(;SZ[15];B[hh];W[])", "pass"),
            ("(;SZ[15];B[hh];AB[ii])", "after the first move"),
            ("(;SZ[15];B[h])", "bad point"),
            ("(;SZ[9];B[jj])", "off the"),
            ("(;SZ[15];B[hh]", "unterminated"),
            ("(;SZ[15]C[open", "unterminated"),
            ("(;B[aa](;W[bb])(;W[cc]);B[dd])", "after the variations"),
        ] {
            let e = parse_sgf(bad).unwrap_err();
            assert!(e.to_string().contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn sgf_errors_carry_what_is_wrong() {
        let err = |text: &str| parse_sgf(text).unwrap_err();
        assert!(matches!(
            err("(;SZ[15];B[h])"),
            SgfError::BadPoint { key, value } if key == "B" && value == "h"
        ));
        assert!(matches!(err("(;SZ[15];W[])"), SgfError::Pass { key } if key == "W"));
        assert!(matches!(
            err("(;SZ[9];B[jj])"),
            SgfError::OffBoard { point, .. } if point == Point::new(9, 9).unwrap()
        ));
        assert!(matches!(err("(;SZ[x])"), SgfError::BadSize { value } if value == "x"));
        assert_eq!(
            err("(;SZ[3:40])"),
            SgfError::Size(BoardSizeError {
                width: 3,
                height: 40
            })
        );
        assert_eq!(err(")"), SgfError::Unbalanced);
        assert_eq!(err("B[aa]"), SgfError::PropertyOutsideTree);
        assert_eq!(err("(;B[aa](;W[bb])B[cc])"), SgfError::PropertyOutsideNode);
        assert_eq!(err("(B[aa])"), SgfError::PropertyOutsideNode);
        assert_eq!(err("(;B[aa]"), SgfError::UnterminatedTree);
        assert_eq!(err("(;C[x"), SgfError::UnterminatedValue);
        // A go record: its board and moves would read as a gomoku game.
        assert!(matches!(
            err("(;GM[1]FF[4]SZ[19];B[pd];W[dp])"),
            SgfError::OtherGame { value } if value == "1"
        ));
        // An error in a later game of a collection names the game; the
        // first game alone is read without it.
        let collection = "(;SZ[15];B[hh])(;SZ[15];B[ii])(;GM[1]SZ[19];B[pd])";
        let later = err(collection);
        assert_eq!(
            later.to_string(),
            "game 3: GM[1] is not a gomoku or renju record (GM[4])"
        );
        let first = parse_first_sgf_game(collection).unwrap().expect("a game");
        assert_eq!(first.moves, [(Color::Black, Point::new(7, 7).unwrap())]);
        assert!(parse_first_sgf_game("").unwrap().is_none());
        assert_eq!(
            parse_first_sgf_game("(;B[aa]").unwrap_err(),
            SgfError::UnterminatedTree
        );
    }

    #[test]
    fn sgf_of_gomoku_is_read_with_or_without_gm() {
        for text in [
            "(;GM[4]SZ[15];B[hh])",
            "(;GM[ 4 ]SZ[15];B[hh])",
            "(;GM[04]SZ[15];B[hh])",
            "(;SZ[15];B[hh])",
        ] {
            let games = parse_sgf(text).unwrap();
            assert_eq!(games[0].moves, [(Color::Black, Point::new(7, 7).unwrap())]);
        }
    }
}
