//! The commands a manager sends, every protocol line of the Gomocup family
//! (Gomocup, extended Gomocup, Yixin-Board) parsed into one [`Command`] and
//! printed back by its `Display`. Multi-line commands (BOARD ... DONE and
//! the like) are gathered by [`CommandParser`].
//!
//! Commands and keys are matched case-insensitively; lines may end in CR LF
//! and carry extra blanks. A malformed line becomes [`Command::Malformed`]
//! with the reason, never a panic.

use std::fmt;

use super::Coord;

/// A stone in a position block: its cell and field (1 = the side to move,
/// 2 = the other side, 3 = a blocked stone of a continuous game); position
/// blocks without fields give `None`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stone {
    pub at: Coord,
    pub field: Option<u8>,
}

/// Which multi-line command a block belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockKind {
    /// BOARD: set the position and search.
    Board,
    /// YXBOARD: set the position only.
    YxBoard,
    Swap2Board,
    SwapBoard,
    ShowForbid,
    Balance(u32),
    YxBlock,
    YxBlockUndo,
    /// A Yixin-Board command whose block the engine reads and ignores
    /// (database queries and edits, block paths), by its command word.
    Ignored(String),
}

impl fmt::Display for BlockKind {
    /// The command word that opens the block (`BALANCE 2`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlockKind::Board => f.write_str("BOARD"),
            BlockKind::YxBoard => f.write_str("YXBOARD"),
            BlockKind::Swap2Board => f.write_str("SWAP2BOARD"),
            BlockKind::SwapBoard => f.write_str("SWAPBOARD"),
            BlockKind::ShowForbid => f.write_str("SHOWFORBID"),
            BlockKind::Balance(n) => write!(f, "BALANCE {n}"),
            BlockKind::YxBlock => f.write_str("YXBLOCK"),
            BlockKind::YxBlockUndo => f.write_str("YXBLOCKUNDO"),
            BlockKind::Ignored(word) => f.write_str(word),
        }
    }
}

impl fmt::Display for Stone {
    /// `x,y,field` or `x,y`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.field {
            Some(field) => write!(f, "{},{field}", self.at),
            None => write!(f, "{}", self.at),
        }
    }
}

/// One protocol command.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// START n (optionally n n), RECTSTART w,h.
    Start {
        width: i64,
        height: i64,
    },
    Restart,
    Begin,
    Turn(Coord),
    /// A completed block.
    Block {
        kind: BlockKind,
        stones: Vec<Stone>,
    },
    Takeback(Coord),
    Info {
        key: String,
        value: String,
    },
    End,
    About,
    Play(Coord),
    /// PONDER [ms]: `None` for no limit.
    Ponder(Option<i64>),
    /// STOP, YXSTOP.
    Stop,
    ClearHash,
    ProtocolVersion,
    YxShowInfo,
    YxShowForbid,
    YxNbest(u32),
    /// YXBALANCEONE / YXBALANCETWO with a bias.
    YxBalance {
        moves: u32,
        bias: i64,
    },
    YxSearchDefend,
    YxBlockReset,
    /// YXSWAP2STEP1..3.
    YxSwap2Step(u8),
    /// A known command with nothing to do (e.g. yxhashdump, yxdraw).
    Ignored(String),
    /// Not a command we know: answered `UNKNOWN <line>`.
    Unknown(String),
    /// A known command with bad arguments: answered `ERROR <reason>`.
    Malformed(CommandError),
}

/// Why a known command cannot be carried out as written: the reason that
/// `ERROR` answers.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// START without one or two integer sizes.
    #[error("START expects a board size, got {args:?}")]
    StartSize { args: String },
    #[error("RECTSTART expects width,height, got {args:?}")]
    RectStartSize { args: String },
    /// TURN, PLAY or TAKEBACK without `x,y`.
    #[error("{command} expects x,y, got {args:?}")]
    Coord { command: String, args: String },
    /// A command whose argument must be an integer.
    #[error("{command} expects an integer, got {args:?}")]
    Integer { command: String, args: String },
    #[error("BALANCE {moves}: the number of moves must be 1..=64")]
    BalanceMoves { moves: i64 },
    #[error("INFO expects a key and a value")]
    InfoKey,
    #[error("YXNBEST {n}: expects at least 1")]
    NBest { n: i64 },
    /// A line in a block that is neither a stone nor DONE.
    #[error("{block}: bad line {line:?} (expected x,y,field or DONE)")]
    BlockLine { block: String, line: String },
    /// A command word before the DONE of an open block.
    #[error("{block} block not closed by DONE before {line:?}")]
    Unclosed { block: String, line: String },
    /// More stone lines than the largest board has cells.
    #[error("{block}: more than {MAX_BLOCK_STONES} stones")]
    TooManyStones { block: String },
}

/// The most stones a block can describe: every cell of a 32x32 board.
/// Lines past it are dropped (the block is an error), so that input
/// without DONE cannot grow memory without bound.
pub const MAX_BLOCK_STONES: usize = 32 * 32;

impl fmt::Display for Command {
    /// The command as a manager writes it; a block spans its lines (joined
    /// by `\n`, no final newline). Unknown and ignored lines print as they
    /// came; a malformed one prints its reason.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Command::Start { width, height } if width == height => write!(f, "START {width}"),
            Command::Start { width, height } => write!(f, "RECTSTART {width},{height}"),
            Command::Restart => f.write_str("RESTART"),
            Command::Begin => f.write_str("BEGIN"),
            Command::Turn(c) => write!(f, "TURN {c}"),
            Command::Block { kind, stones } => {
                write!(f, "{kind}")?;
                for stone in stones {
                    write!(f, "\n{stone}")?;
                }
                f.write_str("\nDONE")
            }
            Command::Takeback(c) => write!(f, "TAKEBACK {c}"),
            Command::Info { key, value } => write!(f, "INFO {key} {value}"),
            Command::End => f.write_str("END"),
            Command::About => f.write_str("ABOUT"),
            Command::Play(c) => write!(f, "PLAY {c}"),
            Command::Ponder(None) => f.write_str("PONDER"),
            Command::Ponder(Some(ms)) => write!(f, "PONDER {ms}"),
            Command::Stop => f.write_str("STOP"),
            Command::ClearHash => f.write_str("CLEARHASH"),
            Command::ProtocolVersion => f.write_str("PROTOCOLVERSION"),
            Command::YxShowInfo => f.write_str("YXSHOWINFO"),
            Command::YxShowForbid => f.write_str("YXSHOWFORBID"),
            Command::YxNbest(n) => write!(f, "YXNBEST {n}"),
            Command::YxBalance { moves, bias } => {
                let word = if *moves == 1 {
                    "YXBALANCEONE"
                } else {
                    "YXBALANCETWO"
                };
                write!(f, "{word} {bias}")
            }
            Command::YxSearchDefend => f.write_str("YXSEARCHDEFEND"),
            Command::YxBlockReset => f.write_str("YXBLOCKRESET"),
            Command::YxSwap2Step(n) => write!(f, "YXSWAP2STEP{n}"),
            Command::Ignored(line) | Command::Unknown(line) => f.write_str(line),
            Command::Malformed(why) => write!(f, "{why}"),
        }
    }
}

/// Parses a block line: `x,y,f` or `x,y` (or `x y` as some GUIs write).
fn parse_stone(s: &str) -> Option<Stone> {
    let parts: Vec<&str> = s
        .split([',', ' ', '\t'])
        .filter(|p| !p.is_empty())
        .collect();
    let number = |p: &str| p.trim().parse::<i64>().ok();
    match parts[..] {
        [x, y] => Some(Stone {
            at: Coord {
                x: number(x)?,
                y: number(y)?,
            },
            field: None,
        }),
        [x, y, f] => Some(Stone {
            at: Coord {
                x: number(x)?,
                y: number(y)?,
            },
            field: Some(u8::try_from(number(f)?).ok()?),
        }),
        _ => None,
    }
}

/// An integer argument of `command`.
fn int_arg(rest: &str, command: &str) -> Result<i64, CommandError> {
    rest.trim()
        .parse::<i64>()
        .map_err(|_| CommandError::Integer {
            command: command.to_string(),
            args: rest.trim().to_string(),
        })
}

/// Gathers block commands line by line; everything else is one line.
#[derive(Debug, Default)]
pub struct CommandParser {
    block: Option<OpenBlock>,
    /// A command whose argument is the next line (e.g. a file path).
    awaiting_argument: Option<String>,
    /// Inside a quoted text that runs over lines (a Yixin-Board database
    /// comment with line breaks): its lines are text, not commands. The
    /// count of those lines, so that a quote never closed does not take
    /// every later command as text.
    in_quote: Option<usize>,
}

/// Lines a quoted text may run over before its quote is taken as lost.
const MAX_QUOTED_LINES: usize = 256;

#[derive(Debug)]
struct OpenBlock {
    kind: BlockKind,
    name: String,
    stones: Vec<Stone>,
    error: Option<CommandError>,
}

impl CommandParser {
    pub fn new() -> CommandParser {
        CommandParser::default()
    }

    /// Whether a block is being gathered.
    pub fn in_block(&self) -> bool {
        self.block.is_some()
    }

    /// Feeds one input line; returns the commands it completes (a line can
    /// both abort an unfinished block and start a command).
    pub fn feed(&mut self, raw: &str) -> Vec<Command> {
        if let Some(lines) = self.in_quote.take() {
            // The text goes on to its closing quote; what follows it on
            // that line is the block's first line.
            let Some(close) = closing_quote(raw) else {
                if lines < MAX_QUOTED_LINES {
                    self.in_quote = Some(lines + 1);
                    return Vec::new();
                }
                // A quote never closed: this line is read as a line again.
                return self.feed(raw);
            };
            let after = raw[close + 1..].trim();
            return if after.is_empty() {
                Vec::new()
            } else {
                self.feed(after)
            };
        }
        let line = raw.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
        if let Some(command) = self.awaiting_argument.take() {
            return vec![Command::Ignored(format!("{command} {line}"))];
        }
        if line.is_empty() {
            return Vec::new();
        }
        if let Some(mut block) = self.block.take() {
            if line.eq_ignore_ascii_case("done") {
                return vec![match block.error {
                    Some(error) => Command::Malformed(error),
                    None => Command::Block {
                        kind: block.kind,
                        stones: block.stones,
                    },
                }];
            }
            let starts_like_a_stone =
                line.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+');
            if starts_like_a_stone {
                match parse_stone(line) {
                    Some(_) if block.stones.len() >= MAX_BLOCK_STONES => {
                        block
                            .error
                            .get_or_insert_with(|| CommandError::TooManyStones {
                                block: block.name.clone(),
                            });
                    }
                    Some(stone) => block.stones.push(stone),
                    None => {
                        block.error.get_or_insert_with(|| CommandError::BlockLine {
                            block: block.name.clone(),
                            line: line.to_string(),
                        });
                    }
                }
                self.block = Some(block);
                return Vec::new();
            }
            // A command word inside a block: the block was never closed.
            let mut out = vec![Command::Malformed(CommandError::Unclosed {
                block: block.name,
                line: line.to_string(),
            })];
            out.extend(self.feed(line));
            return out;
        }
        self.parse_line(line)
    }

    fn open(&mut self, kind: BlockKind, name: &str) {
        self.block = Some(OpenBlock {
            kind,
            name: name.to_string(),
            stones: Vec::new(),
            error: None,
        });
    }

    /// One line outside a block: its command, or none when it opened a block
    /// (and, for a block line glued to it, what that line gave).
    fn parse_line(&mut self, line: &str) -> Vec<Command> {
        let (word, rest) = match line.split_once(char::is_whitespace) {
            Some((w, r)) => (w, r.trim()),
            None => (line, ""),
        };
        let upper = word.to_ascii_uppercase();
        let command = match upper.as_str() {
            "START" => {
                let sizes: Vec<&str> = rest.split_whitespace().collect();
                match sizes[..] {
                    [n] | [n, _] => {
                        match (n.parse::<i64>(), sizes.get(1).map(|m| m.parse::<i64>())) {
                            (Ok(w), None) => Command::Start {
                                width: w,
                                height: w,
                            },
                            (Ok(w), Some(Ok(h))) => Command::Start {
                                width: w,
                                height: h,
                            },
                            _ => Command::Malformed(CommandError::StartSize {
                                args: rest.to_string(),
                            }),
                        }
                    }
                    _ => Command::Malformed(CommandError::StartSize {
                        args: rest.to_string(),
                    }),
                }
            }
            "RECTSTART" => match rest.parse::<Coord>().ok() {
                Some(c) => Command::Start {
                    width: c.x,
                    height: c.y,
                },
                None => Command::Malformed(CommandError::RectStartSize {
                    args: rest.to_string(),
                }),
            },
            "RESTART" => Command::Restart,
            "BEGIN" => Command::Begin,
            "TURN" | "PLAY" | "TAKEBACK" => match rest.parse::<Coord>().ok() {
                Some(c) => match upper.as_str() {
                    "TURN" => Command::Turn(c),
                    "PLAY" => Command::Play(c),
                    _ => Command::Takeback(c),
                },
                None => Command::Malformed(CommandError::Coord {
                    command: upper.clone(),
                    args: rest.to_string(),
                }),
            },
            "BOARD" => {
                self.open(BlockKind::Board, "BOARD");
                return Vec::new();
            }
            "YXBOARD" => {
                self.open(BlockKind::YxBoard, "YXBOARD");
                return Vec::new();
            }
            "SWAP2BOARD" => {
                self.open(BlockKind::Swap2Board, "SWAP2BOARD");
                return Vec::new();
            }
            "SWAPBOARD" => {
                self.open(BlockKind::SwapBoard, "SWAPBOARD");
                return Vec::new();
            }
            "SHOWFORBID" => {
                self.open(BlockKind::ShowForbid, "SHOWFORBID");
                return Vec::new();
            }
            "BALANCE" => match int_arg(rest, "BALANCE") {
                Ok(n) if (1..=64).contains(&n) => {
                    self.open(BlockKind::Balance(n as u32), "BALANCE");
                    return Vec::new();
                }
                Ok(n) => {
                    // Still read the block, so that its lines are not taken as commands.
                    self.open(BlockKind::Ignored("BALANCE".to_string()), "BALANCE");
                    if let Some(block) = &mut self.block {
                        block.error = Some(CommandError::BalanceMoves { moves: n });
                    }
                    return Vec::new();
                }
                Err(e) => {
                    // A bad count still opens the block: its stone lines and
                    // DONE are the request's, and get one ERROR, not an
                    // UNKNOWN each.
                    self.open(BlockKind::Ignored("BALANCE".to_string()), "BALANCE");
                    if let Some(block) = &mut self.block {
                        block.error = Some(e);
                    }
                    return Vec::new();
                }
            },
            "INFO" => {
                let (key, value) = match rest.split_once(char::is_whitespace) {
                    Some((k, v)) => (k, v.trim()),
                    None => (rest, ""),
                };
                if key.is_empty() {
                    Command::Malformed(CommandError::InfoKey)
                } else {
                    Command::Info {
                        key: key.to_ascii_lowercase(),
                        value: value.to_string(),
                    }
                }
            }
            "END" => Command::End,
            "ABOUT" => Command::About,
            "PONDER" => {
                if rest.is_empty() {
                    Command::Ponder(None)
                } else {
                    match int_arg(rest, "PONDER") {
                        Ok(ms) if ms < 0 => Command::Ponder(None),
                        Ok(ms) => Command::Ponder(Some(ms)),
                        Err(e) => Command::Malformed(e),
                    }
                }
            }
            "STOP" | "YXSTOP" => Command::Stop,
            "CLEARHASH" | "YXHASHCLEAR" => Command::ClearHash,
            "PROTOCOLVERSION" => Command::ProtocolVersion,
            "YXSHOWINFO" => Command::YxShowInfo,
            "YXSHOWFORBID" => Command::YxShowForbid,
            "YXNBEST" => match int_arg(rest, "YXNBEST") {
                Ok(n) if n >= 1 => Command::YxNbest(n.min(256) as u32),
                Ok(n) => Command::Malformed(CommandError::NBest { n }),
                Err(e) => Command::Malformed(e),
            },
            "YXBALANCEONE" | "YXBALANCETWO" => {
                let bias = if rest.is_empty() {
                    Ok(0)
                } else {
                    int_arg(rest, &upper)
                };
                match bias {
                    Ok(bias) => Command::YxBalance {
                        moves: if upper == "YXBALANCEONE" { 1 } else { 2 },
                        bias,
                    },
                    Err(e) => Command::Malformed(e),
                }
            }
            "YXSEARCHDEFEND" => Command::YxSearchDefend,
            "YXBLOCK" => {
                self.open(BlockKind::YxBlock, "YXBLOCK");
                return Vec::new();
            }
            "YXBLOCKUNDO" => {
                self.open(BlockKind::YxBlockUndo, "YXBLOCKUNDO");
                return Vec::new();
            }
            "YXBLOCKRESET" => Command::YxBlockReset,
            "YXSWAP2STEP1" | "YXSWAP2STEP2" | "YXSWAP2STEP3" => {
                Command::YxSwap2Step(upper.as_bytes()[11] - b'0')
            }
            // Yixin-Board commands followed by a position block we ignore.
            w if w.starts_with("YXQUERYDATABASE")
                || w.starts_with("YXEDIT")
                || w.starts_with("YXDELETEDATABASE")
                || w.starts_with("YXBLOCKPATH") && w != "YXBLOCKPATHRESET"
                || w == "YXSETBESTMOVEDATABASE"
                || w == "YXCLEARBESTMOVEDATABASE"
                || w.starts_with("YXSOOSORVSTEP") && w != "YXSOOSORVSTEP1" =>
            {
                self.open(BlockKind::Ignored(w.to_string()), w);
                // `yxedittextdatabase "text"7,7`: the block's first line is
                // glued after the closing quote. Its text (the only quoted
                // one: labels are written as they are) may run over lines:
                // they are its text, never commands (a comment line "End
                // game" would end the engine).
                if let Some(text) = rest
                    .trim_start()
                    .strip_prefix('"')
                    .filter(|_| w == "YXEDITTEXTDATABASE")
                {
                    match closing_quote(text) {
                        Some(close) => {
                            let after = text[close + 1..].trim();
                            if !after.is_empty() {
                                return self.feed(after);
                            }
                        }
                        None => self.in_quote = Some(0),
                    }
                }
                return Vec::new();
            }
            // Commands whose argument (a path) comes on the next line.
            "YXSETDATABASE" | "YXHASHDUMP" | "YXHASHLOAD" | "YXDBTOTXT" | "YXDBTOTXTALL"
            | "YXLIBTODB" | "YXDBMERGE" | "YXDBSPLIT" | "YXTXTTODB" | "YXDBTOPOS" => {
                self.awaiting_argument = Some(upper.clone());
                return Vec::new();
            }
            // Yixin-Board's commands we have nothing to do for (its game
            // result notes, hash and database tools, Soosorv's first step:
            // a note says why). Any other word, YX or not, is answered
            // UNKNOWN, which the GUI only logs.
            "YXDRAW" | "YXRESIGN" | "YXPRINTFEATURE" | "YXSHOWHASHUSAGE" | "YXDBCHECK"
            | "YXDBFIX" | "YXDBTOLIB" | "YXSAVEDATABASE" | "YXBLOCKPATHRESET"
            | "YXSOOSORVSTEP1" => Command::Ignored(line.to_string()),
            _ => Command::Unknown(line.to_string()),
        };
        vec![command]
    }
}

/// The byte index of the quote that closes a quoted text in `s` (the text
/// after its opening quote), `\"` and `\\` being escapes (Yixin-Board's
/// quoted database texts).
fn closing_quote(s: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some(i),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(lines: &[&str]) -> Vec<Command> {
        let mut parser = CommandParser::new();
        lines.iter().flat_map(|l| parser.feed(l)).collect()
    }

    fn c(x: i64, y: i64) -> Coord {
        Coord { x, y }
    }

    #[test]
    fn simple_commands_in_any_case_and_spacing() {
        assert_eq!(
            parse(&["start 15\r"]),
            vec![Command::Start {
                width: 15,
                height: 15
            }]
        );
        assert_eq!(
            parse(&["START 15 15"]),
            vec![Command::Start {
                width: 15,
                height: 15
            }]
        );
        assert_eq!(
            parse(&["RECTSTART 20,15"]),
            vec![Command::Start {
                width: 20,
                height: 15
            }]
        );
        assert_eq!(parse(&["  Turn  7, 8 "]), vec![Command::Turn(c(7, 8))]);
        assert_eq!(
            parse(&["INFO Timeout_Turn 5000"]),
            vec![Command::Info {
                key: "timeout_turn".into(),
                value: "5000".into()
            }]
        );
        assert_eq!(
            parse(&["INFO evaluate 3,4 5,6"]),
            vec![Command::Info {
                key: "evaluate".into(),
                value: "3,4 5,6".into()
            }]
        );
        assert_eq!(parse(&["PONDER"]), vec![Command::Ponder(None)]);
        assert_eq!(parse(&["PONDER 1500"]), vec![Command::Ponder(Some(1500))]);
        assert_eq!(
            parse(&["yxstop", "STOP"]),
            vec![Command::Stop, Command::Stop]
        );
        assert_eq!(
            parse(&["hello world"]),
            vec![Command::Unknown("hello world".into())]
        );
        assert!(matches!(
            &parse(&["TURN 7"])[..],
            [Command::Malformed(CommandError::Coord { command, args })]
                if command == "TURN" && args == "7"
        ));
        assert!(matches!(
            parse(&["START x"])[..],
            [Command::Malformed(CommandError::StartSize { .. })]
        ));
        assert!(matches!(
            &parse(&["ponder soon"])[..],
            [Command::Malformed(CommandError::Integer { command, .. })] if command == "PONDER"
        ));
        assert_eq!(
            parse(&["YXNBEST 0"]),
            vec![Command::Malformed(CommandError::NBest { n: 0 })]
        );
        assert_eq!(
            parse(&["YXBALANCETWO x"])[0].to_string(),
            "YXBALANCETWO expects an integer, got \"x\""
        );
        assert_eq!(
            parse(&["INFO"]),
            vec![Command::Malformed(CommandError::InfoKey)]
        );
        assert!(matches!(
            parse(&["TURN 99999999999999999999,1"])[..],
            [Command::Malformed(_)]
        ));
        assert_eq!(parse(&["", "   "]), vec![]);
    }

    #[test]
    fn blocks_gather_until_done() {
        let got = parse(&["BOARD", "7,7,1", "8,8,2", "done"]);
        assert_eq!(
            got,
            vec![Command::Block {
                kind: BlockKind::Board,
                stones: vec![
                    Stone {
                        at: c(7, 7),
                        field: Some(1)
                    },
                    Stone {
                        at: c(8, 8),
                        field: Some(2)
                    }
                ]
            }]
        );
        assert_eq!(
            parse(&["SWAP2BOARD", "DONE"]),
            vec![Command::Block {
                kind: BlockKind::Swap2Board,
                stones: vec![]
            }]
        );
        let swap = parse(&["SWAP2BOARD", "7,7", "8,8", "9, 9", "DONE"]);
        assert!(
            matches!(&swap[..], [Command::Block { kind: BlockKind::Swap2Board, stones }] if stones.len() == 3)
        );
        assert!(matches!(
            &parse(&["BALANCE 2", "7,7,2", "DONE"])[..],
            [Command::Block {
                kind: BlockKind::Balance(2),
                ..
            }]
        ));
        assert!(matches!(
            &parse(&["BALANCE 0", "7,7,2", "DONE"])[..],
            [Command::Malformed(CommandError::BalanceMoves { moves: 0 })]
        ));
        assert!(matches!(
            &parse(&["BALANCE x", "7,7,2", "DONE", "ABOUT"])[..],
            [
                Command::Malformed(CommandError::Integer { .. }),
                Command::About
            ]
        ));
        // A block line glued after a quoted text, then a command: the
        // unclosed block's error and the command both come out.
        let glued = parse(&["yxedittextdatabase \"x\"TURN 7,7"]);
        assert!(
            matches!(
                &glued[..],
                [
                    Command::Malformed(CommandError::Unclosed { .. }),
                    Command::Turn(_)
                ]
            ),
            "{glued:?}"
        );
    }

    #[test]
    fn a_bad_block_line_is_reported_at_done_and_an_unclosed_block_before_the_next_command() {
        let got = parse(&["BOARD", "7,7,1", "7;7", "DONE", "TURN 1,1"]);
        assert!(matches!(&got[0], Command::Malformed(e) if e.to_string().contains("7;7")));
        assert!(
            matches!(&got[0], Command::Malformed(CommandError::BlockLine { block, line })
                if block == "BOARD" && line == "7;7")
        );
        assert_eq!(got[1], Command::Turn(c(1, 1)));
        let got = parse(&["BOARD", "7,7,1", "START 15"]);
        assert!(matches!(&got[0], Command::Malformed(e) if e.to_string().contains("not closed")));
        assert!(
            matches!(&got[0], Command::Malformed(CommandError::Unclosed { line, .. })
                if line == "START 15")
        );
        assert_eq!(
            got[1],
            Command::Start {
                width: 15,
                height: 15
            }
        );
    }

    #[test]
    fn a_block_holds_at_most_a_full_boards_stones() {
        let mut parser = CommandParser::new();
        assert!(parser.feed("BOARD").is_empty());
        for _ in 0..MAX_BLOCK_STONES + 10_000 {
            assert!(parser.feed("1,1,1").is_empty());
        }
        assert_eq!(
            parser.block.as_ref().map(|b| b.stones.len()),
            Some(MAX_BLOCK_STONES)
        );
        assert!(matches!(
            &parser.feed("DONE")[..],
            [Command::Malformed(CommandError::TooManyStones { block })] if block == "BOARD"
        ));
    }

    #[test]
    fn yixin_database_blocks_and_path_arguments_are_consumed() {
        let got = parse(&[
            "yxquerydatabaseallt",
            "7,7",
            "8,8",
            "done",
            "yxsetdatabase",
            "C:\\db\\x.db",
            "turn 1,2",
        ]);
        assert!(matches!(
            &got[0],
            Command::Block {
                kind: BlockKind::Ignored(_),
                ..
            }
        ));
        assert!(matches!(&got[1], Command::Ignored(s) if s.contains("x.db")));
        assert_eq!(got[2], Command::Turn(c(1, 2)));
        let got = parse(&["yxdraw", "yxsoosorvstep1", "yxfrobnicate 3", "YXNBESTX"]);
        assert!(
            matches!(&got[0], Command::Ignored(s) if s == "yxdraw"),
            "{got:?}"
        );
        assert!(matches!(&got[1], Command::Ignored(_)), "{got:?}");
        assert_eq!(got[2], Command::Unknown("yxfrobnicate 3".to_string()));
        assert_eq!(got[3], Command::Unknown("YXNBESTX".to_string()));
        let got = parse(&["yxedittextdatabase \"note\"7,7", "8,8", "done"]);
        assert!(
            matches!(&got[..], [Command::Block { kind: BlockKind::Ignored(_), stones }] if stones.len() == 2),
            "{got:?}"
        );
        // A comment typed with line breaks, quotes escaped: its lines are
        // text, not commands ("End game" used to end the engine).
        let got = parse(&[
            "yxedittextdatabase \"a \\\"quoted\\\" word",
            "End game",
            "start 15",
            "\"7,7",
            "8,8",
            "done",
            "about",
        ]);
        assert!(
            matches!(
                &got[..],
                [Command::Block { kind: BlockKind::Ignored(_), stones }, Command::About]
                    if stones.len() == 2
            ),
            "{got:?}"
        );
        // The text's own line may end it, with nothing glued after.
        let got = parse(&["yxedittextdatabase \"one", "two\"", "7,7", "done"]);
        assert!(
            matches!(&got[..], [Command::Block { stones, .. }] if stones.len() == 1),
            "{got:?}"
        );
        // Labels are not quoted: a quote in one is a character.
        let got = parse(&["yxeditlabeldatabase 7,7 a\"b", "7,7", "done", "about"]);
        assert!(
            matches!(&got[..], [Command::Block { stones, .. }, Command::About] if stones.len() == 1),
            "{got:?}"
        );
        // A quote never closed holds at most MAX_QUOTED_LINES lines.
        let mut lines = vec!["yxedittextdatabase \"lost"];
        lines.extend(std::iter::repeat_n("text", MAX_QUOTED_LINES));
        lines.push("about");
        let got = parse(&lines);
        assert!(got.contains(&Command::About), "{got:?}");
    }
}
