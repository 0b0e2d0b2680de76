//! The match runner: plays Gomocup-protocol brains against each other, like
//! c-gomoku-cli or cutechess-cli.
//!
//! * Engines are any Gomocup (pipe protocol) brains, started as
//!   `program args...`, talked to as the Piskvork manager and c-gomoku-cli
//!   do: `START`/`RECTSTART`, the INFO block, `BEGIN`/`TURN`/`BOARD`,
//!   `RESTART` between games (a new process when it is not answered `OK`),
//!   `END` with a grace period, then a kill.
//! * A [`Board`](wuzi_game::game::Board) referees every move: fives per rule,
//!   renju fouls, illegal and unparsable answers, time forfeits (turn and
//!   match time plus a tolerance), crashes and hangs. Every read has a
//!   deadline, so the runner never waits on a dead or silent engine.
//! * Openings from files (offset or letter-number notation) or random
//!   quiet ones, each played twice with colours swapped.
//! * N games in parallel, a progress bar, a result table with Elo, LOS and
//!   an SPRT that stops the match early.
//! * Records as PSQ and SGF, a log per game of every line each way.
//!
//! The entry point is [`run`] with [`MatchArgs`] (clap); [`bench_overhead`]
//! measures the runner's own time per move.

mod brain;
mod config;
mod engine;
mod game;
pub mod interrupt;
#[cfg(windows)]
mod job;
pub mod judge;
pub mod openings;
mod records;
mod result;
mod runner;
pub mod stats;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Parser};

use wuzi_game::game::{BoardSize, Rule};

pub use config::{parse_engine, parse_tc, split_command, EngineSpec};
pub use game::PositionMode;
pub use openings::{OpeningFormat, OpeningOrder};
pub use result::{EndReason, GameSummary};
pub use stats::{EloEstimate, Pentanomial, SprtDecision, SprtModel, SprtParams, SprtStatus, Wld};
pub use wuzi_formats::record::MoveRecord;

const ENGINE_HELP: &str = "\
Engine settings (--engine1, --engine2, --each): KEY=VALUE words, several per flag:
  cmd=\"PROGRAM ARGS\"  the command (quotes and backslashes as in a shell); a bare
                      first word is the command too
  arg=ARG             one more argument (repeatable)
  name=NAME           display name (default: the program's file name)
  dir=DIR             working directory (default: the runner's)
  tc=M/T+I            c-gomoku-cli time control in seconds: match M, turn T,
                      increment I (tc=M alone: turn = match)
  turn=MS             time per move, INFO timeout_turn (default 5000)
  match=MS            time for the game, INFO timeout_match (0 = none, default)
  inc=MS              increment per move, INFO time_increment
  nodes=N depth=N threads=N   INFO max_node, max_depth, thread_num
  memory=BYTES        INFO max_memory (default 367001600)
  tolerance=MS init=MS   this engine's --tolerance and --init-timeout
  option.KEY=VALUE    INFO KEY VALUE
--each applies to both engines, before each engine's own settings.

Example:
  match --engine1 cmd=./pbrain-new name=new --engine2 cmd=./pbrain-old name=old \\
        --each tc=60/5 --rule 4 --board 15 --openings openings/gomocup2021_renju15.txt \\
        --concurrency 2 --sprt elo0=0 elo1=20 --psq games/ --tsv games.tsv --sgf games.sgf --log-dir logs/";

/// Plays two Gomocup brains against each other.
#[derive(Debug, Clone, Args)]
#[command(after_long_help = ENGINE_HELP)]
pub struct MatchArgs {
    /// First engine: KEY=VALUE settings (cmd=PROGRAM ... ; see --help).
    #[arg(long, num_args = 1.., required = true, value_name = "KEY=VALUE")]
    pub engine1: Vec<String>,
    /// Second engine, as --engine1.
    #[arg(long, num_args = 1.., required = true, value_name = "KEY=VALUE")]
    pub engine2: Vec<String>,
    /// Settings for both engines (e.g. tc=10/1 memory=...).
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    pub each: Vec<String>,
    /// Rule: 0 freestyle, 1 standard, 4 renju, 8 caro (or the names).
    #[arg(long, default_value = "0")]
    pub rule: Rule,
    /// Board size: N (square, 5..32) or WxH (RECTSTART).
    #[arg(long, default_value = "15", value_parser = wuzi_formats::tsv::parse_board)]
    pub board: BoardSize,
    /// Games to play (default: two per opening of the file, else 100),
    /// at most a million. Games 2k and 2k+1 share an opening with colours
    /// swapped.
    #[arg(long, value_parser = parse_games)]
    pub games: Option<usize>,
    /// Opening file, one opening per line.
    #[arg(long, value_name = "FILE")]
    pub openings: Option<PathBuf>,
    /// Notation of the opening file: offsets from the centre (`0,0, 1,-1`)
    /// or letter-number from the top-left (`h8i7`): auto, offset or pos.
    #[arg(long, default_value_t = OpeningFormat::Auto)]
    pub opening_format: OpeningFormat,
    /// Order of the file's openings.
    #[arg(long, value_enum, default_value_t = OpeningOrder::Sequential)]
    pub order: OpeningOrder,
    /// Play each opening of the file under every symmetry that keeps the
    /// board's shape (8 on a square board, 4 on a rectangle), each distinct
    /// position once: more different games from a small set.
    #[arg(long, requires = "openings")]
    pub symmetries: bool,
    /// Without a file: stones of the random quiet openings (0 = empty board).
    #[arg(long, default_value_t = 4)]
    pub random_stones: usize,
    /// Seed of the opening order and the random openings (default: the clock).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Games played at once, each with its own pair of processes.
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// Milliseconds an answer may be late before it is a time forfeit. 3 s,
    /// as c-gomoku-cli: some brains (Rapfi) allocate their hash on the
    /// first move after `INFO max_memory` and take over a second for it.
    #[arg(long, default_value_t = 3000, value_name = "MS")]
    pub tolerance: u64,
    /// Skip answer lines that are neither a move nor MESSAGE/DEBUG/ERROR/
    /// UNKNOWN/SUGGEST while waiting for a move, as c-gomoku-cli does; by
    /// default such a line loses the game, as under Piskvork. (PentaZen
    /// 0.4.17 prints its search depth as a raw byte, and depth 10 is a
    /// line break.)
    #[arg(long)]
    pub skip_unparsable: bool,
    /// Milliseconds for the OK to START/RECTSTART/RESTART (engine loading).
    #[arg(long, default_value_t = 10000, value_name = "MS")]
    pub init_timeout: u64,
    /// Milliseconds an engine may take to exit after END before it is killed.
    #[arg(long, default_value_t = 700, value_name = "MS")]
    pub end_grace: u64,
    /// Adjudicate a draw once the board holds this many stones (0 = never).
    /// Default: under renju 25 cells before the board is full, as the
    /// Gomocup's referee (GomocupJudge) and Piskvork draw; under the other
    /// rules never (the full board, as GomocupJudge and c-gomoku-cli).
    #[arg(long, value_name = "PLIES")]
    pub draw_after: Option<usize>,
    /// SPRT: elo0=E0 elo1=E1 [alpha=0.05] [beta=0.05]
    /// [model=bayeselo|gsprt|pentanomial] (pentanomial: over opening pairs);
    /// the match stops when a bound is crossed.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    pub sprt: Vec<String>,
    /// Directory for PSQ records (game_00001.psq, ...).
    #[arg(long, value_name = "DIR")]
    pub psq: Option<PathBuf>,
    /// Every game as a line of Gomocup TSV in this file (as the results
    /// archive writes, with the opening's stone count and no `search`
    /// column): records that `train` reads, the opening's stones not taken
    /// for moves.
    #[arg(long, value_name = "FILE")]
    pub tsv: Option<PathBuf>,
    /// SGF output: a file ending in .sgf (all games) or a directory.
    #[arg(long, value_name = "PATH")]
    pub sgf: Option<PathBuf>,
    /// Directory for per-game logs of every line sent and received.
    #[arg(long, value_name = "DIR")]
    pub log_dir: Option<PathBuf>,
    /// How positions are sent (piskvork: BEGIN/TURN/BOARD by stone count;
    /// cgc: BOARD first; board: BOARD every move).
    #[arg(long, value_enum, default_value_t = PositionMode::Piskvork)]
    pub position: PositionMode,
    /// New processes every game (END after each game, as a Piskvork
    /// tournament) instead of RESTART.
    #[arg(long)]
    pub new_process: bool,
    /// Do not send ABOUT to new processes.
    #[arg(long)]
    pub no_about: bool,
    /// No progress bar, game lines or final table on the terminal.
    #[arg(long)]
    pub quiet: bool,
}

#[derive(Parser)]
#[command(name = "match", no_binary_name = true)]
struct ArgvWrapper {
    #[command(flatten)]
    args: MatchArgs,
}

impl MatchArgs {
    /// Parses the match's command-line words (without a program name).
    pub fn from_words<I, T>(words: I) -> Result<MatchArgs, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        ArgvWrapper::try_parse_from(words).map(|w| w.args)
    }
}

/// Errors that stop a match.
#[derive(Debug, thiserror::Error)]
pub enum ArenaError {
    #[error("{0}")]
    Config(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start engine {engine} ({program}): {source}")]
    Spawn {
        engine: String,
        program: String,
        source: std::io::Error,
    },
}

/// The runner's own time: the games' move loops minus the engines'
/// response times.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overhead {
    /// Moves the engines answered.
    pub moves: u64,
    /// Wall time of the move loops.
    pub wall: Duration,
    /// Sum of the engines' response times (request written to answer read).
    pub engine: Duration,
}

impl Overhead {
    /// Runner time per move (zero without moves).
    pub fn per_move(&self) -> Duration {
        if self.moves == 0 {
            return Duration::ZERO;
        }
        self.wall.saturating_sub(self.engine) / self.moves as u32
    }
}

impl fmt::Display for Overhead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:.1} us per move ({} moves; move loops {:.3} s, engines {:.3} s)",
            self.per_move().as_secs_f64() * 1e6,
            self.moves,
            self.wall.as_secs_f64(),
            self.engine.as_secs_f64()
        )
    }
}

/// The result of a match.
#[derive(Clone, Debug)]
pub struct MatchSummary {
    /// Engine names (engine 1, engine 2).
    pub names: [String; 2],
    pub board: BoardSize,
    pub rule: Rule,
    pub seed: u64,
    /// Where the openings came from.
    pub openings: String,
    /// Openings of the file that could not be played on this board.
    pub skipped_openings: Vec<String>,
    pub planned_games: usize,
    /// Finished games, by schedule index.
    pub games: Vec<GameSummary>,
    /// Engine 1's results.
    pub total: Wld,
    /// Engine i's results with black.
    pub as_black: [Wld; 2],
    /// Engine i's results with white.
    pub as_white: [Wld; 2],
    /// Black's results (wins = black wins).
    pub colors: Wld,
    /// Engine 1's Elo against engine 2.
    pub elo: Option<EloEstimate>,
    /// Engine 1's points from each completed opening pair (both games
    /// played; a pair's games may be played at once, or apart).
    pub pairs: Pentanomial,
    /// The SPRT's settings and verdict: frozen when a bound was crossed,
    /// else over all games.
    pub sprt: Option<(SprtParams, SprtStatus)>,
    /// Games the SPRT had tested when it crossed a bound: those of opening
    /// pairs with both games played (games still running then, and the
    /// first games of pairs not complete, are recorded and in the score,
    /// not in the test).
    pub sprt_decided_after: Option<usize>,
    /// The SPRT stopped the match before every game was played.
    pub stopped_early: bool,
    /// A signal stopped the match before every game was played
    /// ([`interrupt`]): no game was started once it was seen.
    pub interrupted: bool,
    /// Games neither engine started: not played, not in `games`.
    pub unstarted: usize,
    /// Engine processes killed because they did not exit after END.
    pub end_kills: [u32; 2],
    /// ABOUT answers, when the engines gave one.
    pub about: [Option<String>; 2],
    pub overhead: Overhead,
}

impl MatchSummary {
    /// Games per end reason (label, count), most frequent first.
    pub fn reasons(&self) -> Vec<(&'static str, u32)> {
        count_labels(self.games.iter().map(|g| g.reason.label()))
    }

    /// Engine `e`'s losses by its own error (label, count).
    pub fn faults(&self, e: usize) -> Vec<(&'static str, u32)> {
        count_labels(
            self.games
                .iter()
                .filter(|g| g.loser() == Some(e) && g.reason.is_fault())
                .map(|g| g.reason.label()),
        )
    }
}

fn count_labels<'a>(labels: impl Iterator<Item = &'a str>) -> Vec<(&'a str, u32)> {
    let mut counts: Vec<(&str, u32)> = Vec::new();
    for l in labels {
        match counts.iter_mut().find(|(k, _)| *k == l) {
            Some((_, n)) => *n += 1,
            None => counts.push((l, 1)),
        }
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    counts
}

fn fmt_elo(v: f64) -> String {
    if v.is_finite() {
        format!("{v:+.1}")
    } else if v.is_nan() {
        "n/a".to_string()
    } else if v > 0.0 {
        "+inf".to_string()
    } else {
        "-inf".to_string()
    }
}

impl fmt::Display for MatchSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b] = &self.names;
        let width = a.len().max(b.len()).max(8) + 10;
        writeln!(
            f,
            "{a} vs {b}: {} {}, {} of {} games, openings: {}, seed {}",
            self.board,
            self.rule,
            self.games.len(),
            self.planned_games,
            self.openings,
            self.seed
        )?;
        writeln!(
            f,
            "{:<w$}  {:>6} {:>6} {:>6} {:>6} {:>7}",
            "",
            "games",
            "wins",
            "losses",
            "draws",
            "score",
            w = width
        )?;
        let row = |f: &mut fmt::Formatter<'_>, label: String, r: Wld| {
            writeln!(
                f,
                "{label:<w$}  {:>6} {:>6} {:>6} {:>6} {:>7.3}",
                r.games(),
                r.wins,
                r.losses,
                r.draws,
                r.score(),
                w = width
            )
        };
        for (e, name) in self.names.iter().enumerate() {
            row(f, format!("{name} as black"), self.as_black[e])?;
            row(f, format!("{name} as white"), self.as_white[e])?;
        }
        row(f, format!("{a} total"), self.total)?;
        row(f, "black".to_string(), self.colors)?;
        writeln!(
            f,
            "Score of {a} vs {b}: {}  {}",
            self.total,
            self.total.games()
        )?;
        if let Some(e) = &self.elo {
            writeln!(
                f,
                "Elo difference: {} +/- {}, LOS: {:.1} %, draw ratio: {:.1} %",
                fmt_elo(e.elo),
                fmt_elo(e.margin).trim_start_matches('+'),
                e.los * 100.0,
                e.draw_ratio * 100.0
            )?;
            // None after a clean sweep (no spread to estimate it from).
            if e.lower < e.upper {
                writeln!(
                    f,
                    "Elo 95% interval: {} .. {}",
                    fmt_elo(e.lower),
                    fmt_elo(e.upper)
                )?;
            }
        }
        if self.pairs.pairs() > 0 {
            write!(f, "Pairs (points 0, 1/2, 1, 3/2, 2): {}", self.pairs)?;
            // None while every pair is alike (no spread to estimate it from).
            if let Some((elo, lower, upper)) = self.pairs.elo_interval() {
                write!(
                    f,
                    "; Elo from pairs: {} (95% {} .. {})",
                    fmt_elo(elo),
                    fmt_elo(lower),
                    fmt_elo(upper)
                )?;
            }
            writeln!(f)?;
        }
        if let Some((p, s)) = &self.sprt {
            let mut verdict = match s.decision {
                SprtDecision::Continue => "no decision yet",
                SprtDecision::AcceptH0 => "H0 accepted",
                SprtDecision::AcceptH1 => "H1 accepted",
            }
            .to_string();
            if let Some(n) = self.sprt_decided_after {
                verdict.push_str(&format!(" after {n} games"));
            }
            writeln!(
                f,
                "SPRT ({}, elo0 {}, elo1 {}, alpha {}, beta {}): LLR {:.3} [{:.3}, {:.3}]: {verdict}{}",
                p.model,
                p.elo0,
                p.elo1,
                p.alpha,
                p.beta,
                s.llr,
                s.lower,
                s.upper,
                if self.stopped_early { ", match stopped" } else { "" }
            )?;
        }
        if self.unstarted > 0 {
            writeln!(
                f,
                "Not played: {} games that neither engine started (no result)",
                self.unstarted
            )?;
        }
        if self.interrupted {
            writeln!(
                f,
                "Interrupted: no game started once the signal was seen; {} of {} games played",
                self.games.len(),
                self.planned_games
            )?;
        }
        let list = |v: Vec<(&str, u32)>| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.iter()
                    .map(|(k, n)| format!("{k} {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        writeln!(f, "Endings: {}", list(self.reasons()))?;
        for (e, name) in self.names.iter().enumerate() {
            writeln!(
                f,
                "{name}: losses by error: {}; killed after END: {}",
                list(self.faults(e)),
                self.end_kills[e]
            )?;
        }
        let faulted = self.games.iter().filter(|g| g.reason.is_fault()).count();
        if faulted > 0 {
            // A game won by the other side's fault says nothing of strength.
            writeln!(
                f,
                "Warning: {faulted} game(s) ended by an engine fault (forfeit, crash, bad answer): \
                 not evidence of strength until explained (see the logs)"
            )?;
        }
        if !self.skipped_openings.is_empty() {
            writeln!(f, "Skipped openings: {}", self.skipped_openings.len())?;
        }
        writeln!(f, "Runner overhead: {}", self.overhead)
    }
}

/// Plays the match described by `args`; prints progress and the final table
/// unless `--quiet`.
pub fn run(args: &MatchArgs) -> Result<MatchSummary, ArenaError> {
    let plan = runner::Plan::from_args(args)?;
    let summary = runner::run_plan(&plan)?;
    if !args.quiet && !interrupt::aborted() {
        print_out(&summary.to_string());
    }
    Ok(summary)
}

/// Writes `text` to stdout, ignoring a closed pipe (`match ... | head`):
/// the games go on and are recorded, where `print!` would panic.
pub(crate) fn print_out(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// Plays `games` games between two instances of an instant brain (for
/// example `wuzi-test-brain --mode random`) and returns the runner's
/// overhead per move: move-loop wall time minus the engines' measured
/// response times. With `log_dir`, per-game logs are written too (their
/// cost is part of the overhead).
pub fn bench_overhead(
    brain: &Path,
    brain_args: &[&str],
    games: usize,
    board: u32,
    rule: Rule,
    log_dir: Option<&Path>,
) -> Result<Overhead, ArenaError> {
    let mut cmd = vec![format!("cmd={}", brain.display())];
    cmd.extend(brain_args.iter().map(|a| format!("arg={a}")));
    let mut words: Vec<String> = vec!["--engine1".into()];
    words.extend(cmd.iter().cloned());
    words.push("name=first".into());
    words.push("--engine2".into());
    words.extend(cmd.iter().cloned());
    words.push("name=second".into());
    for w in [
        "--board",
        &board.to_string(),
        "--rule",
        &rule.gomocup_value().to_string(),
        "--games",
        &games.to_string(),
        "--random-stones",
        "2",
        "--seed",
        "1",
        "--no-about",
        "--quiet",
    ] {
        words.push(w.to_string());
    }
    if let Some(dir) = log_dir {
        words.push("--log-dir".into());
        words.push(dir.display().to_string());
    }
    let args = MatchArgs::from_words(&words).map_err(|e| ArenaError::Config(e.to_string()))?;
    let summary = run(&args)?;
    Ok(summary.overhead)
}

/// `--games`: 1 to a million (the plan is made up front).
/// Most games in a match: the schedule is made whole before the first.
pub(crate) const MAX_GAMES: usize = 1_000_000;

fn parse_games(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n @ 1..=MAX_GAMES) => Ok(n),
        _ => Err(format!(
            "{s:?}: expected a number of games from 1 to {MAX_GAMES}"
        )),
    }
}
