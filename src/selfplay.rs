//! `pbrain-wuzi selfplay`: games of the engine against itself with its real
//! search, written as training records.
//!
//! * Each game starts from an opening: a random line of an opening file
//!   (turned by a random board symmetry) or a random quiet opening, then its
//!   first moves are drawn from the search's visits (`visits^(1/T)`), so
//!   that games differ; after that the most visited move is played.
//! * Playout-cap randomisation (KataGo): a share of the moves is searched
//!   with the full playouts and becomes a training target (the visit
//!   distribution and the root's value); the others get a short search that
//!   only moves the game on.
//! * A game ends with a five, a full board, or as soon as the search proves
//!   its result (the solver's proofs are exact, as the tree treats them).
//! * The output is a Gomocup TSV (the columns of the shared game records)
//!   with a `search` column (see [`wuzi_formats::search_target`]), so `pbrain-
//!   wuzi train` and `wuzi-encode` read it alongside the Gomocup records.
//!   Each game is appended as it ends; a run on an existing file continues
//!   it up to `--games`.
//!
//! Games run in parallel, one search thread each, all on one evaluation
//! service, so that their requests share the network's batches.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::arena::openings::{self, OpeningFormat, RawOpening};
use crate::game::{Board, BoardSize, Color, Outcome, Point, Rule};
use crate::nn::EvalService;
use crate::search::node::Proven;
use crate::search::result::MoveStats;
use crate::search::{memory, RootNoise, SearchConfig, SearchLimits, Searcher};
use wuzi_data::held_out::{cells, EvaluationOpenings};
use wuzi_data::records::parse_board_size;
use wuzi_formats::search_target::SearchTarget;
use wuzi_formats::tsv::{self, TsvGame};
use wuzi_game::rng::{mix, Rng};
use wuzi_game::symmetry::Symmetry;

/// Options of `pbrain-wuzi selfplay`.
#[derive(clap::Args, Clone, Debug)]
pub struct SelfplayArgs {
    /// The TSV file to write (an existing one is continued).
    #[arg(long, value_name = "PATH")]
    pub out: PathBuf,
    /// Rule (freestyle, standard, renju, caro).
    #[arg(long, default_value = "freestyle")]
    pub rule: Rule,
    /// Board size: N or WIDTHxHEIGHT.
    #[arg(long, default_value = "15", value_parser = parse_board_size)]
    pub board: BoardSize,
    /// Games the file should hold when the run ends.
    #[arg(long, default_value_t = 100)]
    pub games: usize,
    /// Games played at once (one search thread each, one shared network).
    #[arg(long, default_value_t = 2, value_parser = crate::cli::count_at_most(crate::search::MAX_THREADS))]
    pub parallel: usize,
    /// Playouts of a full search (a training target).
    #[arg(long, default_value_t = 400)]
    pub playouts: u64,
    /// Playouts of a short search (no target).
    #[arg(long, default_value_t = 100)]
    pub fast_playouts: u64,
    /// Share of the moves searched with --playouts.
    #[arg(long, default_value_t = 0.25)]
    pub full_share: f64,
    /// Opening file (offset or letter-number lines, as `match` reads);
    /// without one, random quiet openings of --random-stones stones.
    #[arg(long, value_name = "PATH")]
    pub openings: Option<PathBuf>,
    #[arg(long, default_value_t = 4)]
    pub random_stones: usize,
    /// Moves after the opening drawn from the visits rather than the best.
    #[arg(long, default_value_t = 8)]
    pub sample_plies: usize,
    /// Temperature of those draws (visits^(1/T)); 0 plays the most
    /// visited move.
    #[arg(long, default_value_t = 1.0)]
    pub temperature: f64,
    /// Largest batch of the evaluation service (default: the configured one).
    #[arg(long, value_parser = crate::cli::count_at_most(crate::search::MAX_SETTING_COUNT))]
    pub eval_batch: Option<usize>,
    /// Share of Dirichlet noise in the root's priors of a full search, so
    /// that its targets can teach moves the network rates low (AlphaZero's
    /// exploration); 0 for none.
    #[arg(long, default_value_t = RootNoise::WEIGHT)]
    pub root_noise: f32,
    /// The noise's concentration, summed over the root's moves.
    #[arg(long, default_value_t = RootNoise::TOTAL_ALPHA)]
    pub root_noise_alpha: f32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// How a self-play game ended (the TSV `end` column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Five,
    FullBoard,
    /// Neither side can make five any more (`Board::is_dead_draw`): the
    /// rest would only fill the board.
    DeadDraw,
    /// The search proved the result.
    Proven,
}

impl End {
    fn label(self) -> &'static str {
        match self {
            End::Five => "five",
            End::FullBoard => "draw",
            End::DeadDraw => "dead-draw",
            End::Proven => "proven",
        }
    }
}

/// One finished game.
#[derive(Clone, Debug)]
pub struct PlayedGame {
    pub index: usize,
    pub size: BoardSize,
    pub rule: Rule,
    pub opening: usize,
    pub moves: Vec<Point>,
    /// One entry per move after the opening.
    pub search: Vec<Option<SearchTarget>>,
    pub outcome: Outcome,
    pub end: End,
}

impl PlayedGame {
    /// The game as a line of the self-play TSV (no newline).
    pub fn tsv_line(&self, seed: u64, player: &str) -> String {
        TsvGame {
            id: format!("selfplay/{seed}/{}", self.index),
            year: None,
            league: "selfplay".to_string(),
            rule: self.rule,
            size: self.size,
            black: player.to_string(),
            white: player.to_string(),
            winner: self.outcome,
            end: self.end.label().to_string(),
            opening: self.opening,
            moves: self.moves.clone(),
            search: Some(self.search.clone()),
        }
        .line()
    }

    /// Positions that are training targets.
    pub fn targets(&self) -> usize {
        self.search.iter().filter(|s| s.is_some()).count()
    }
}

/// Uniform in [0, 1).
fn uniform(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A root move drawn in proportion to `visits^(1/temperature)`, among the
/// visited moves not proven to lose; at temperature 0 the most visited.
fn sample_move(moves: &[MoveStats], temperature: f64, rng: &mut Rng) -> Option<Point> {
    let playable = || {
        moves
            .iter()
            .filter(|m| m.visits > 0 && !matches!(m.proven, Proven::Loss(_)))
    };
    // Relative to the most visited, so that a low temperature's power
    // cannot overflow to infinity (every pick would then be the last).
    let most = playable().map(|m| m.visits).max()?;
    if temperature <= 0.0 {
        return playable().find(|m| m.visits == most).map(|m| m.mv);
    }
    let candidates: Vec<(Point, f64)> = playable()
        .map(|m| {
            (
                m.mv,
                (f64::from(m.visits) / f64::from(most)).powf(1.0 / temperature),
            )
        })
        .collect();
    let total: f64 = candidates.iter().map(|c| c.1).sum();
    // NaN included: no candidate with a usable weight.
    if total.is_nan() || total <= 0.0 {
        return None;
    }
    let mut pick = uniform(rng) * total;
    for &(mv, w) in &candidates {
        if pick < w {
            return Some(mv);
        }
        pick -= w;
    }
    candidates.last().map(|c| c.0)
}

/// How games are played (everything but the output).
#[derive(Clone, Debug)]
pub struct GamePlan {
    pub size: BoardSize,
    pub rule: Rule,
    pub playouts: u64,
    pub fast_playouts: u64,
    pub full_share: f64,
    pub openings: Vec<RawOpening>,
    pub random_stones: usize,
    pub sample_plies: usize,
    pub temperature: f64,
    /// The noise of full searches (its seed is drawn per search).
    pub root_noise: Option<RootNoise>,
    pub seed: u64,
    /// Positions no game may be trained on.
    held_out: Arc<EvaluationOpenings>,
}

impl GamePlan {
    /// The starting position of game `index`.
    fn opening(&self, rng: &mut Rng) -> Result<Board, String> {
        if self.openings.is_empty() {
            // Redrawn while it passes through an evaluation opening (a few
            // random stones can form one).
            let mut stones =
                openings::random_opening(self.size, self.rule, self.random_stones, rng)?;
            let mut draws = 1;
            while self
                .held_out
                .passed_through(&cells(&stones), self.size)
                .is_some()
            {
                if draws == 1000 {
                    return Err("every random opening passes through an evaluation opening".into());
                }
                stones = openings::random_opening(self.size, self.rule, self.random_stones, rng)?;
                draws += 1;
            }
            let mut board = Board::new(self.size, self.rule);
            for p in stones {
                board.play(p).map_err(|e| e.to_string())?;
            }
            return Ok(board);
        }
        let raw = &self.openings[rng.below(self.openings.len())];
        let (h, w) = (self.size.height() as usize, self.size.width() as usize);
        let symmetries = Symmetry::all_for(h, w);
        let sym = symmetries[rng.below(symmetries.len())];
        let moves: Vec<(i64, i64)> = raw
            .moves
            .iter()
            .map(|&(x, y)| {
                if (0..w as i64).contains(&x) && (0..h as i64).contains(&y) {
                    let (x, y) = sym.map_cell(x as usize, y as usize, h, w);
                    (x as i64, y as i64)
                } else {
                    (x, y)
                }
            })
            .collect();
        openings::check_opening(self.size, self.rule, &moves)
            .map_err(|e| format!("opening of line {}: {e}", raw.line))
    }

    /// Plays game `index` with `searcher` (its cache is cleared first);
    /// `halt` stops it between two moves, as an error.
    pub fn play(
        &self,
        searcher: &Searcher,
        index: usize,
        halt: &AtomicBool,
    ) -> Result<PlayedGame, String> {
        let game_seed = mix(self.seed ^ mix(index as u64 + 1));
        let mut rng = Rng::new(game_seed);
        let mut board = self.opening(&mut rng)?;
        let opening = board.stone_count();
        let mut moves: Vec<Point> = board.history().iter().map(|&(p, _)| p).collect();
        let mut search = Vec::new();
        searcher.cache().clear();
        let mut held_out = None;
        let (outcome, end) = loop {
            if held_out.is_none() && moves.len() <= self.held_out.most_stones() {
                held_out = self.held_out.holds(&cells(&moves), self.size);
            }
            if let Some(outcome) = board.outcome() {
                let end = match outcome {
                    Outcome::Draw => End::FullBoard,
                    Outcome::Win(_) => End::Five,
                };
                break (outcome, end);
            }
            if board.is_dead_draw() {
                break (Outcome::Draw, End::DeadDraw);
            }
            let full = uniform(&mut rng) < self.full_share;
            let limits = SearchLimits {
                max_playouts: Some(
                    if full {
                        self.playouts
                    } else {
                        self.fast_playouts
                    }
                    .max(1),
                ),
                // Its own stream: the noise draws nothing from the game's
                // generator, whose openings and samples stay as they were.
                root_noise: self.root_noise.filter(|_| full).map(|noise| RootNoise {
                    seed: mix(game_seed ^ mix(0x6e_6f69_7365 + moves.len() as u64)),
                    ..noise
                }),
                ..SearchLimits::default()
            };
            let result = searcher.search(&board, &limits, halt);
            if halt.load(Ordering::Relaxed) {
                return Err(format!("game {index} stopped with the run"));
            }
            let sampled =
                moves.len() - opening < self.sample_plies && result.proven == Proven::Unknown;
            let choice = if sampled {
                sample_move(&result.moves, self.temperature, &mut rng).or(result.best_move)
            } else {
                result.best_move
            };
            let Some(mv) = choice else {
                // No legal move left on a board with empty cells: every one is
                // forbidden to black, which loses as under Piskvork's referee
                // (the search proved it so).
                break (Outcome::Win(board.side_to_move().opponent()), End::Proven);
            };
            let color = board.side_to_move();
            board
                .check_move(i64::from(mv.x()), i64::from(mv.y()), color)
                .map_err(|e| format!("game {index}: the search chose {mv}: {e}"))?;
            board.play(mv).map_err(|e| e.to_string())?;
            moves.push(mv);
            search.push(if full {
                search_target(&result.moves, result.wdl, result.proven, mv)
            } else {
                None
            });
            let proven = match result.proven {
                Proven::Win(_) => Some(Outcome::Win(color)),
                Proven::Loss(_) => Some(Outcome::Win(color.opponent())),
                Proven::Draw => Some(Outcome::Draw),
                Proven::Unknown => None,
            };
            if let Some(outcome) = proven {
                // A five, a full board or a dead board says so itself; otherwise
                // the proof ends the game. The dead board is checked here, not
                // only on the next turn, so that a game whose last move both
                // proved the draw and killed the board is labelled by the board.
                match board.outcome() {
                    Some(o) => {
                        let end = if o == Outcome::Draw {
                            End::FullBoard
                        } else {
                            End::Five
                        };
                        break (o, end);
                    }
                    None if outcome == Outcome::Draw && board.is_dead_draw() => {
                        break (Outcome::Draw, End::DeadDraw)
                    }
                    None => break (outcome, End::Proven),
                }
            }
        };
        if held_out.is_some() {
            // The game reached an evaluation opening after its own opening:
            // recorded (its number is taken), but without a target.
            search.iter_mut().for_each(|target| *target = None);
        }
        Ok(PlayedGame {
            index,
            size: self.size,
            rule: self.rule,
            opening,
            moves,
            search,
            outcome,
            end,
        })
    }
}

/// The longest line of a self-play file read back: a game of the largest
/// board with its search targets is some hundreds of kilobytes.
const MAX_LINE_BYTES: u64 = 16 << 20;

/// The name self-play records give the network at `path`: its file's
/// stem and the start of its SHA-256 (`freestyle-6x64@b9c96d99`), so that
/// a file of games says which network played them, whatever it was called.
pub fn player_label(path: &Path) -> Result<String, String> {
    use sha2::{Digest, Sha256};
    let stem = path
        .file_stem()
        .map_or_else(|| "wuzi".to_string(), |s| s.to_string_lossy().into_owned());
    let mut file = File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut hasher = Sha256::new();
    io::copy(&mut file, &mut hasher).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let digest = hasher.finalize();
    let start: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("{stem}@{start}"))
}

/// The numbers of the games already in `path` (a run with `--parallel`
/// writes them as they finish, not in order); a partly written last line
/// (a run killed while writing) is cut off. Fails on a file that is not a
/// self-play file, and on games of another rule, board, seed or network
/// (`player`) than this run's, which continuing it would mix in (labels
/// without a fingerprint, written before there was one, pass).
fn existing_games(
    path: &Path,
    rule: Rule,
    size: BoardSize,
    seed: u64,
    player: &str,
) -> Result<HashSet<usize>, String> {
    // A pipe or a device would block the read below, or take no games.
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => {
            return Err(format!("{}: not a regular file", path.display()));
        }
        _ => {}
    }
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(HashSet::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let mut reader = BufReader::new(file);
    let mut line = String::new();
    let mut games = HashSet::new();
    let mut columns = None;
    let mut good_len = 0u64;
    let mut first = true;
    let mut number = 0usize;
    let id_prefix = format!("selfplay/{seed}/");
    loop {
        line.clear();
        let n = (&mut reader)
            .take(MAX_LINE_BYTES + 1)
            .read_line(&mut line)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        // Past the limit it is no game of ours (and not a partial last line
        // to cut: good lines may follow).
        if n as u64 > MAX_LINE_BYTES {
            return Err(format!(
                "{} line {}: longer than {} MiB, not a self-play file",
                path.display(),
                number + 1,
                MAX_LINE_BYTES >> 20
            ));
        }
        let partial = n > 0 && !line.ends_with('\n');
        // A first line cut short may be a header whose writing was
        // interrupted (cut below); anything else is someone else's file.
        if first && partial && !tsv::header().starts_with(line.as_str()) {
            return Err(format!(
                "{} exists and is not a self-play file (its first line is not the header)",
                path.display()
            ));
        }
        if n == 0 || partial {
            break;
        }
        number += 1;
        if first {
            if line.trim_end() != tsv::header() {
                return Err(format!(
                    "{} exists and is not a self-play file (its first line is not the header)",
                    path.display()
                ));
            }
            columns = tsv::Columns::from_header(&line).ok();
            first = false;
        } else if !line.trim().is_empty() {
            let at = |why: String| format!("{} line {number}: {why}", path.display());
            let game = columns
                .as_ref()
                .ok_or_else(|| at("no header".into()))
                .and_then(|c| tsv::TsvGame::parse(c, &line).map_err(|e| at(e.to_string())))?;
            if game.rule != rule || game.size != size {
                return Err(at(format!(
                    "a {} {} game, not {rule} {size}: give another --out",
                    game.rule, game.size
                )));
            }
            if game.black.contains('@') && game.black != player {
                return Err(at(format!(
                    "a game of {}, not of {player}: continue the file with its network, or \
                     give another --out",
                    game.black
                )));
            }
            let index = game
                .id
                .strip_prefix(&id_prefix)
                .and_then(|n| n.parse::<usize>().ok())
                .ok_or_else(|| {
                    at(format!(
                        "game {:?} is not one of --seed {seed}: continue the file with its seed, or give another --out",
                        game.id
                    ))
                })?;
            games.insert(index);
        }
        good_len += n as u64;
    }
    let len = std::fs::metadata(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .len();
    if len != good_len {
        OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| f.set_len(good_len))
            .map_err(|e| {
                format!(
                    "cannot cut the partial last line of {}: {e}",
                    path.display()
                )
            })?;
    }
    Ok(games)
}

/// Totals of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    pub games: usize,
    pub black_wins: usize,
    pub white_wins: usize,
    pub draws: usize,
    pub moves: usize,
    pub targets: usize,
    pub proven_ends: usize,
    pub failed: usize,
    pub elapsed: Duration,
}

impl Summary {
    fn add(&mut self, game: &PlayedGame) {
        self.games += 1;
        match game.outcome {
            Outcome::Win(Color::Black) => self.black_wins += 1,
            Outcome::Win(Color::White) => self.white_wins += 1,
            Outcome::Draw => self.draws += 1,
        }
        self.moves += game.moves.len() - game.opening;
        self.targets += game.targets();
        self.proven_ends += usize::from(game.end == End::Proven);
    }
}

/// Checks the flags that need no file (the caller may check them before it
/// loads the network); the root noise they ask for.
pub fn check_args(args: &SelfplayArgs) -> Result<Option<RootNoise>, String> {
    // 0 would make every search a fast one: games with no target to learn.
    if !(args.full_share > 0.0 && args.full_share <= 1.0) {
        return Err(format!(
            "--full-share {}: the share of full searches (the training targets) must be above \
             0 and at most 1",
            args.full_share
        ));
    }
    if args.playouts == 0 || args.fast_playouts == 0 {
        return Err("--playouts and --fast-playouts must be at least 1".into());
    }
    if !(args.temperature.is_finite() && args.temperature >= 0.0) {
        return Err(format!(
            "--temperature {}: must be 0 (the most visited move) or more",
            args.temperature
        ));
    }
    if args.openings.is_none() {
        // Each game draws its own: a count that cannot be drawn would fail
        // every game rather than the run.
        openings::random_opening(
            args.board,
            args.rule,
            args.random_stones,
            &mut Rng::new(args.seed),
        )
        .map_err(|e| format!("--random-stones {}: {e}", args.random_stones))?;
    }
    if args.root_noise == 0.0 {
        return Ok(None);
    }
    RootNoise::new(args.root_noise, args.root_noise_alpha, 0)
        .map(Some)
        .map_err(|e| {
            format!(
                "--root-noise {} --root-noise-alpha {}: {e}",
                args.root_noise, args.root_noise_alpha
            )
        })
}

/// Plays games into `args.out` until it holds `args.games`, with `service`
/// and `config` (run with one thread per game); `player` names the network
/// in the records.
pub fn run(
    args: &SelfplayArgs,
    service: Arc<EvalService>,
    config: SearchConfig,
    player: &str,
    log: &mut impl Write,
) -> Result<Summary, String> {
    let root_noise = check_args(args)?;
    let held_out = EvaluationOpenings::of(args.rule, args.board);
    let openings = match &args.openings {
        Some(path) => {
            let text = openings::read_file_text(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let (list, _) = openings::parse_file(&text, OpeningFormat::Auto, args.board)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            if list.is_empty() {
                return Err(format!("{}: no openings", path.display()));
            }
            // Check them all now rather than fail in the middle of the run.
            for raw in &list {
                openings::check_opening(args.board, args.rule, &raw.moves)
                    .map_err(|e| format!("{} line {}: {e}", path.display(), raw.line))?;
                if let Some(file) = held_out.holds(&raw.moves, args.board) {
                    return Err(format!(
                        "{} line {}: an opening of {file}, kept out of self-play (every \
                         strength figure is played from it, and a network learns the \
                         openings it was trained from)",
                        path.display(),
                        raw.line
                    ));
                }
            }
            // Openings that pass through an evaluation opening on their way
            // (its stones first, then more) are left out.
            let before = list.len();
            let list: Vec<RawOpening> = list
                .into_iter()
                .filter(|raw| held_out.passed_through(&raw.moves, args.board).is_none())
                .collect();
            if list.len() < before {
                writeln!(
                    log,
                    "selfplay: {} of the openings of {} pass through an opening of {}: left out",
                    before - list.len(),
                    path.display(),
                    held_out.file()
                )
                .map_err(|e| e.to_string())?;
            }
            if list.is_empty() {
                return Err(format!("{}: no openings left", path.display()));
            }
            list
        }
        None => Vec::new(),
    };
    let plan = GamePlan {
        size: args.board,
        rule: args.rule,
        playouts: args.playouts,
        fast_playouts: args.fast_playouts,
        full_share: args.full_share,
        openings,
        random_stones: args.random_stones,
        sample_plies: args.sample_plies,
        temperature: args.temperature,
        root_noise,
        seed: args.seed,
        held_out: Arc::new(held_out),
    };
    let played = existing_games(&args.out, args.rule, args.board, args.seed, player)?;
    let done = played.iter().filter(|&&i| i < args.games).count();
    let mut summary = Summary::default();
    if done >= args.games {
        writeln!(
            log,
            "selfplay: {} already holds {done} games",
            args.out.display()
        )
        .map_err(|e| e.to_string())?;
        return Ok(summary);
    }
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let mut out = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&args.out)
        .map_err(|e| format!("cannot open {}: {e}", args.out.display()))?;
    // A new file, or one whose header was cut short (and so cut away).
    let has_header = std::fs::metadata(&args.out).is_ok_and(|m| m.len() > 0);
    if !has_header {
        writeln!(out, "{}", tsv::header())
            .map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    }
    let todo = args.games - done;
    let threads = args.parallel.clamp(1, todo);
    writeln!(
        log,
        "selfplay: {} {}, games {}..{} into {}, {threads} at once, {} / {} playouts ({:.0}% full), {}",
        args.rule,
        args.board,
        done,
        args.games,
        args.out.display(),
        args.playouts,
        args.fast_playouts,
        100.0 * args.full_share,
        match root_noise {
            Some(n) => format!(
                "root noise {} (concentration {}) in full searches",
                n.weight, n.total_alpha
            ),
            None => "no root noise".to_string(),
        }
    )
    .map_err(|e| e.to_string())?;
    let bar = ProgressBar::new(todo as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:30} {pos}/{len} games {elapsed_precise} (eta {eta}) {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let start = Instant::now();
    // Game numbers are taken in order, skipping those in the file: a
    // resumed run fills the gaps that games still running when it stopped
    // left.
    let next = AtomicUsize::new(0);
    let (tx, rx) = crossbeam_channel::unbounded::<Result<PlayedGame, String>>();
    let mut config = config;
    config.threads = 1;
    // The games' searches share the service: with `auto` evaluators, one
    // per game in parallel (at most the cores).
    if let Err(e) = service.fit_to_search(threads) {
        writeln!(log, "note: could not start every evaluator thread: {e}")
            .map_err(|e| e.to_string())?;
    }
    // Each game's tree is cleared at its start; rather than the process
    // limit (measured once for all the games' trees), each game's tree
    // keeps to its share of half the memory the process may use.
    let tree_budget = memory::available_bytes().map(|bytes| bytes / 2 / threads);
    // Set when the run must end (its file cannot be written): the games
    // under way stop at their next move.
    let halt = AtomicBool::new(false);
    let failure = std::thread::scope(|s| -> Result<(), String> {
        for game in 0..threads {
            let tx = tx.clone();
            let mut searcher = Searcher::new(Arc::clone(&service), config.clone());
            if let Some(bytes) = tree_budget {
                searcher.fix_tree_budget(bytes);
            }
            let (plan, next, played, halt) = (&plan, &next, &played, &halt);
            let total = args.games;
            let spawned = std::thread::Builder::new()
                .name(format!("selfplay-{game}"))
                .spawn_scoped(s, move || loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= total || halt.load(Ordering::Relaxed) {
                        break;
                    }
                    if played.contains(&index) {
                        continue;
                    }
                    if tx.send(plan.play(&searcher, index, halt)).is_err() {
                        break;
                    }
                });
            if let Err(e) = spawned {
                // The games already started go on; fewer at once.
                if game == 0 {
                    return Err(format!("cannot start a game thread: {e}"));
                }
                bar.println(format!(
                    "selfplay: {game} games at once, not {threads}: cannot start another thread: {e}"
                ));
                break;
            }
        }
        drop(tx);
        for result in rx {
            match result {
                Ok(game) => {
                    let line = game.tsv_line(args.seed, player);
                    let whole = out.metadata().map(|m| m.len());
                    let written = out
                        .write_all(format!("{line}\n").as_bytes())
                        .and_then(|()| out.flush());
                    if let Err(e) = written {
                        // The games under way stop rather than play on for
                        // a file that takes none, and a line cut short (a
                        // full disk) goes; a resumed run would cut it too.
                        halt.store(true, Ordering::Relaxed);
                        if let Ok(len) = whole {
                            let _ = out.set_len(len);
                        }
                        return Err(format!("cannot write {}: {e}", args.out.display()));
                    }
                    summary.add(&game);
                }
                Err(why) => {
                    summary.failed += 1;
                    // The bar prints nothing where stderr is no terminal.
                    let said = format!("selfplay: a game failed: {why}");
                    if bar.is_hidden() {
                        let _ = writeln!(io::stderr(), "{said}");
                    } else {
                        bar.println(said);
                    }
                }
            }
            bar.inc(1);
            bar.set_message(format!(
                "B {} W {} D {}, {:.1} moves/game, {} targets",
                summary.black_wins,
                summary.white_wins,
                summary.draws,
                summary.moves as f64 / summary.games.max(1) as f64,
                summary.targets
            ));
        }
        Ok(())
    });
    bar.finish_and_clear();
    summary.elapsed = start.elapsed();
    failure?;
    writeln!(
        log,
        "selfplay: {} games in {:.1} s ({:.2} games/s): black {} white {} draw {}, \
         {:.1} moves a game, {} targets, {} ended by a proof, {} failed",
        summary.games,
        summary.elapsed.as_secs_f64(),
        summary.games as f64 / summary.elapsed.as_secs_f64().max(1e-9),
        summary.black_wins,
        summary.white_wins,
        summary.draws,
        summary.moves as f64 / summary.games.max(1) as f64,
        summary.targets,
        summary.proven_ends,
        summary.failed
    )
    .map_err(|e| e.to_string())?;
    Ok(summary)
}

/// The training target of a root search that played `played`: its visits
/// and value, less what the search proved wrong. A move proven lost (the
/// safety net refutes the most visited move and keeps its visits) is no
/// example to follow, and its optimistic values leave the root's value; a
/// proven win teaches the winning move, whatever the visits say.
fn search_target(
    moves: &[MoveStats],
    wdl: [f32; 3],
    proven: Proven,
    played: Point,
) -> Option<SearchTarget> {
    match proven {
        Proven::Win(_) => {
            let visits = moves.iter().map(|m| m.visits).max().unwrap_or(0).max(1);
            return SearchTarget::new([1.0, 0.0, 0.0], [(played, visits)]);
        }
        Proven::Loss(_) => {
            return SearchTarget::new([0.0, 0.0, 1.0], moves.iter().map(|m| (m.mv, m.visits)))
        }
        Proven::Draw | Proven::Unknown => {}
    }
    let draw = [0.0, 1.0, 0.0];
    let kept: Vec<&MoveStats> = moves
        .iter()
        .filter(|m| !matches!(m.proven, Proven::Loss(_)) && m.visits > 0)
        .collect();
    let dropped = moves
        .iter()
        .any(|m| m.visits > 0 && matches!(m.proven, Proven::Loss(_)));
    if kept.is_empty() || !dropped {
        let wdl = if proven == Proven::Draw { draw } else { wdl };
        return SearchTarget::new(wdl, moves.iter().map(|m| (m.mv, m.visits)));
    }
    let total: f32 = kept.iter().map(|m| m.visits as f32).sum();
    let mut value = [0.0f32; 3];
    for m in &kept {
        for (v, w) in value.iter_mut().zip(m.wdl) {
            *v += w * m.visits as f32 / total;
        }
    }
    let value = if proven == Proven::Draw { draw } else { value };
    SearchTarget::new(value, kept.iter().map(|m| (m.mv, m.visits)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A game that reaches an evaluation opening (here its own opening's
    /// shape, the check at the first ply) is recorded without a target;
    /// the same game without the held-out shape has its targets.
    #[test]
    fn a_game_through_an_evaluation_opening_has_no_targets() {
        use crate::nn::{EvalService, ServiceConfig};
        use crate::search::SearchConfig;
        let service = EvalService::start_uniform(ServiceConfig::default()).expect("service");
        let searcher = Searcher::new(
            Arc::new(service),
            SearchConfig {
                threads: 1,
                ..SearchConfig::default()
            },
        );
        let size = BoardSize::square(15).expect("size");
        let moves = vec![(7, 7), (8, 7), (7, 9)];
        let held = EvaluationOpenings::named("eval.txt", std::slice::from_ref(&moves), size);
        let plan = |held_out: EvaluationOpenings| GamePlan {
            size,
            rule: Rule::Freestyle,
            playouts: 16,
            fast_playouts: 8,
            full_share: 1.0,
            openings: vec![RawOpening {
                line: 1,
                moves: moves.clone(),
            }],
            random_stones: 0,
            sample_plies: 0,
            temperature: 1.0,
            root_noise: None,
            seed: 5,
            held_out: Arc::new(held_out),
        };
        let kept = plan(EvaluationOpenings::default())
            .play(&searcher, 0, &AtomicBool::new(false))
            .expect("a game");
        assert!(kept.search.iter().any(Option::is_some));
        let through = plan(held)
            .play(&searcher, 0, &AtomicBool::new(false))
            .expect("a game");
        assert!(through.moves.len() > 3);
        assert!(
            through.search.iter().all(Option::is_none),
            "{:?}",
            through.search
        );
        // A run that must end (its file takes no more games) halts the
        // games under way at their next move.
        let halted = plan(EvaluationOpenings::default()).play(&searcher, 0, &AtomicBool::new(true));
        assert!(halted.is_err_and(|why| why.contains("stopped")));
    }

    #[test]
    fn targets_leave_out_moves_proven_lost() {
        let x = |i: u8| Point::new(i, 0).expect("on the board");
        let mut refuted = stats(0, 300, Proven::Loss(3));
        refuted.wdl = [0.9, 0.0, 0.1];
        let mut other = stats(1, 100, Proven::Unknown);
        other.wdl = [0.2, 0.2, 0.6];
        let moves = [refuted, other, stats(2, 0, Proven::Unknown)];
        let target =
            search_target(&moves, [0.7, 0.05, 0.25], Proven::Unknown, x(1)).expect("a target");
        assert_eq!(target.best(), x(1));
        assert_eq!(target.visits, vec![(x(1), 100)]);
        // The value of what is left, not the refuted move's hopes.
        assert_eq!(target.wdl, [200, 200, 600]);
        // Nothing refuted: the search's own figures.
        let moves = [
            stats(0, 300, Proven::Unknown),
            stats(1, 100, Proven::Unknown),
        ];
        let target =
            search_target(&moves, [0.7, 0.05, 0.25], Proven::Unknown, x(0)).expect("a target");
        assert_eq!(target.visits, vec![(x(0), 300), (x(1), 100)]);
        assert_eq!(target.wdl, [700, 50, 250]);
    }

    #[test]
    fn a_proven_win_teaches_the_winning_move() {
        let x = |i: u8| Point::new(i, 0).expect("on the board");
        let moves = [stats(0, 300, Proven::Unknown), stats(1, 4, Proven::Win(3))];
        let target =
            search_target(&moves, [0.6, 0.1, 0.3], Proven::Win(3), x(1)).expect("a target");
        assert_eq!(target.visits, vec![(x(1), 300)]);
        assert_eq!(target.wdl, [1000, 0, 0]);
        // Every move lost: the visits stay, the value is a loss.
        let moves = [stats(0, 30, Proven::Loss(2)), stats(1, 10, Proven::Loss(4))];
        let target =
            search_target(&moves, [0.3, 0.1, 0.6], Proven::Loss(4), x(1)).expect("a target");
        assert_eq!(target.visits.len(), 2);
        assert_eq!(target.wdl, [0, 0, 1000]);
    }

    fn stats(x: u8, visits: u32, proven: Proven) -> MoveStats {
        MoveStats {
            mv: Point::new(x, 0).expect("on the board"),
            visits,
            prior: 0.1,
            wdl: [0.3, 0.4, 0.3],
            proven,
        }
    }

    #[test]
    fn draws_follow_the_visits_and_skip_lost_and_unvisited_moves() {
        let moves = [
            stats(0, 300, Proven::Unknown),
            stats(1, 100, Proven::Unknown),
            stats(2, 500, Proven::Loss(3)),
            stats(3, 0, Proven::Unknown),
        ];
        let mut rng = Rng::new(5);
        let mut counts = [0usize; 4];
        for _ in 0..4000 {
            let p = sample_move(&moves, 1.0, &mut rng).expect("a move");
            counts[p.x() as usize] += 1;
        }
        assert_eq!((counts[2], counts[3]), (0, 0));
        // 3:1 in expectation.
        assert!((2700..=3300).contains(&counts[0]), "{counts:?}");
        // A low temperature all but always takes the most visited.
        let cold = (0..200)
            .filter(|_| sample_move(&moves, 0.1, &mut rng).map(|p| p.x()) == Some(0))
            .count();
        assert!(cold >= 198, "{cold}");
        assert_eq!(sample_move(&moves[2..], 1.0, &mut rng), None);
        // Temperature 0 is the most visited move (it was a draw at 0.05,
        // 300 against 299 visits about even), and one so low that
        // visits^(1/T) would overflow is all but the same.
        let close = [
            stats(0, 300, Proven::Unknown),
            stats(1, 299, Proven::Unknown),
            stats(2, 5, Proven::Unknown),
        ];
        for _ in 0..100 {
            assert_eq!(sample_move(&close, 0.0, &mut rng).map(|p| p.x()), Some(0));
            assert_eq!(sample_move(&close, 1e-4, &mut rng).map(|p| p.x()), Some(0));
        }
        assert_eq!(sample_move(&moves, 0.0, &mut rng).map(|p| p.x()), Some(0));
    }
}
