//! The schedule, the worker threads, progress, records and the summary.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use indicatif::{ProgressBar, ProgressStyle};

use crate::arena::brain::{retire_slots, GameSettings, Slot};
use crate::arena::config::{parse_engine, EngineSpec};
use crate::arena::engine::GameLog;
use crate::arena::game::{play_game, Job, Played};
use crate::arena::openings::{
    self as openings, check_opening, parse_file, random_opening, OpeningFormat, OpeningOrder,
};
use crate::arena::records::{io_error, write_log, RecordTargets, Recorder};
use crate::arena::result::GameSummary;
use crate::arena::stats::{EloEstimate, Pentanomial, SprtDecision, SprtParams, Wld};
use crate::arena::MAX_GAMES;
use crate::arena::{ArenaError, MatchArgs, MatchSummary, Overhead};
use wuzi_game::game::{BoardSize, Color, Outcome, Point};
use wuzi_game::symmetry::Symmetry;

/// Gives the opening (name, stones) of an opening pair.
type OpeningSource = dyn FnMut(usize) -> Result<(String, Vec<Point>), ArenaError>;

/// Games without an opening file when `--games` is not given.
const DEFAULT_GAMES: usize = 100;

/// A validated match.
pub(crate) struct Plan {
    engines: [EngineSpec; 2],
    labels: [String; 2],
    settings: GameSettings,
    jobs: Vec<Job>,
    concurrency: usize,
    sprt: Option<SprtParams>,
    records: RecordTargets,
    quiet: bool,
    seed: u64,
    openings: String,
    skipped_openings: Vec<String>,
}

/// Each opening under every symmetry that keeps the board's shape, each
/// distinct position once (the same stones of each colour, in whatever
/// order), in file order; the name says which symmetry (`file:3/s5`:
/// symmetry 5 of line 3).
fn under_symmetries(
    openings: Vec<(String, Vec<Point>)>,
    size: BoardSize,
) -> Vec<(String, Vec<Point>)> {
    let (height, width) = (size.height() as usize, size.width() as usize);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for (name, stones) in openings {
        for &symmetry in Symmetry::all_for(height, width) {
            // Every image of a cell of the board is on the board: these
            // symmetries keep its shape.
            let turned: Vec<Point> = stones
                .iter()
                .filter_map(|p| {
                    let (x, y) =
                        symmetry.map_cell(usize::from(p.x()), usize::from(p.y()), height, width);
                    Point::new(x as u8, y as u8)
                })
                .collect();
            // Black's stones and white's, each set in order: the position.
            let position: [Vec<Point>; 2] = [0, 1].map(|colour| {
                let mut own: Vec<Point> = turned.iter().skip(colour).step_by(2).copied().collect();
                own.sort();
                own
            });
            if seen.insert(position) {
                out.push((format!("{name}/s{}", symmetry.index()), turned));
            }
        }
    }
    out
}

impl Plan {
    pub(crate) fn from_args(args: &MatchArgs) -> Result<Plan, ArenaError> {
        let config = ArenaError::Config;
        let e1 = parse_engine(&args.each, &args.engine1)
            .map_err(|e| config(format!("engine 1: {e}")))?;
        let e2 = parse_engine(&args.each, &args.engine2)
            .map_err(|e| config(format!("engine 2: {e}")))?;
        let mut labels = [e1.name.clone(), e2.name.clone()];
        if labels[0] == labels[1] {
            labels = [format!("{}#1", labels[0]), format!("{}#2", labels[1])];
        }
        let size = args.board;
        let rule = args.rule;
        let sprt = if args.sprt.is_empty() {
            None
        } else {
            Some(SprtParams::parse(&args.sprt).map_err(config)?)
        };
        if !(1..=MAX_CONCURRENCY).contains(&args.concurrency) {
            return Err(config(format!(
                "--concurrency {}: from 1 to {MAX_CONCURRENCY} games at once (each runs two \
                 engine processes)",
                args.concurrency
            )));
        }
        // The fewest stones a game can end with: black's five and white's
        // four between. Fewer draws every game before either can win.
        if let Some(plies @ 1..FEWEST_STONES_OF_A_WIN) = args.draw_after {
            return Err(config(format!(
                "--draw-after {plies}: a game needs {FEWEST_STONES_OF_A_WIN} stones for a five, \
                 so every game would be drawn (0 = never)"
            )));
        }
        for (flag, ms) in [
            ("--tolerance", args.tolerance),
            ("--init-timeout", args.init_timeout),
            ("--end-grace", args.end_grace),
        ] {
            if ms > MAX_WAIT_MS {
                return Err(config(format!(
                    "{flag} {ms} ms: at most {MAX_WAIT_MS} ms (an hour), or a silent engine \
                     is waited on for ever"
                )));
            }
        }
        let seed = args.seed.unwrap_or_else(wuzi_game::rng::unrepeatable_seed);
        let mut rng = openings::rng(seed);

        // Openings: (name, stones) per pair.
        let mut skipped = Vec::new();
        let (openings_desc, games, mut pick): (String, usize, Box<OpeningSource>) = match &args
            .openings
        {
            Some(path) => {
                let text = openings::read_file_text(path).map_err(io_error(path))?;
                let (raw, format) = parse_file(&text, args.opening_format, size)
                    .map_err(|e| config(format!("{}: {e}", path.display())))?;
                let file = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| path.display().to_string());
                let mut valid = Vec::new();
                for r in raw {
                    match check_opening(size, rule, &r.moves) {
                        Ok(board) => valid.push((
                            format!("{file}:{}", r.line),
                            board.history().iter().map(|&(p, _)| p).collect::<Vec<_>>(),
                        )),
                        Err(e) => skipped.push(format!("{file}:{}: {e}", r.line)),
                    }
                }
                if valid.is_empty() {
                    return Err(config(format!(
                        "{}: no opening fits a {size} {rule} board ({} skipped{})",
                        path.display(),
                        skipped.len(),
                        skipped
                            .first()
                            .map(|s| format!(", e.g. {s}"))
                            .unwrap_or_default()
                    )));
                }
                if args.games.is_none()
                    && valid.len() * if args.symmetries { 16 } else { 2 } > MAX_GAMES
                {
                    return Err(config(format!(
                        "{}: {} openings{} make more than {MAX_GAMES} games: give --games",
                        path.display(),
                        valid.len(),
                        if args.symmetries {
                            " under 8 symmetries"
                        } else {
                            ""
                        }
                    )));
                }
                if args.symmetries {
                    valid = under_symmetries(valid, size);
                }
                if args.order == OpeningOrder::Random {
                    rng.shuffle(&mut valid);
                }
                let games = args.games.unwrap_or(2 * valid.len());
                let desc = format!(
                    "{} ({} openings{}, {} notation, {} order)",
                    path.display(),
                    valid.len(),
                    if args.symmetries {
                        " with their symmetries"
                    } else {
                        ""
                    },
                    match format {
                        OpeningFormat::Pos => "letter-number",
                        _ => "offset",
                    },
                    match args.order {
                        OpeningOrder::Random => "random",
                        OpeningOrder::Sequential => "file",
                    }
                );
                let n = valid.len();
                (
                    desc,
                    games,
                    Box::new(move |pair| Ok(valid[pair % n].clone())),
                )
            }
            None => {
                let stones = args.random_stones;
                let games = args.games.unwrap_or(DEFAULT_GAMES);
                let desc = if stones == 0 {
                    "empty board".to_string()
                } else {
                    format!("random, {stones} stones")
                };
                (
                    desc,
                    games,
                    Box::new(move |pair| {
                        let moves = random_opening(size, rule, stones, &mut rng).map_err(config)?;
                        Ok((format!("random #{}", pair + 1), moves))
                    }),
                )
            }
        };
        let mut jobs = Vec::with_capacity(games);
        for pair in 0..games.div_ceil(2) {
            let (name, opening) = pick(pair)?;
            for black in 0..2 {
                let index = 2 * pair + black;
                if index < games {
                    jobs.push(Job {
                        index,
                        pair,
                        opening_name: name.clone(),
                        opening: opening.clone(),
                        black,
                    });
                }
            }
        }
        drop(pick);

        Ok(Plan {
            engines: [e1, e2],
            labels,
            settings: GameSettings {
                size,
                rule,
                tolerance: Duration::from_millis(args.tolerance),
                init_timeout: Duration::from_millis(args.init_timeout),
                end_grace: Duration::from_millis(args.end_grace),
                draw_after: args.draw_after.unwrap_or(match rule {
                    wuzi_game::game::Rule::Renju => size.cell_count().saturating_sub(25),
                    _ => 0,
                }),
                position: args.position,
                new_process: args.new_process,
                about: !args.no_about,
                skip_unparsable: args.skip_unparsable,
            },
            concurrency: args.concurrency.min(jobs.len().max(1)),
            jobs,
            sprt,
            records: RecordTargets::new(
                args.psq.clone(),
                args.sgf.clone(),
                args.tsv.clone(),
                args.log_dir.clone(),
            ),
            quiet: args.quiet,
            seed,
            openings: openings_desc,
            skipped_openings: skipped,
        })
    }
}

enum WorkerMsg {
    /// A finished game; `recorded` is answered once the game is counted
    /// and the SPRT has seen it.
    Game {
        summary: Box<GameSummary>,
        recorded: crossbeam_channel::Sender<()>,
    },
    /// A game neither engine started (why each failed): no result.
    Unstarted {
        index: usize,
        detail: String,
    },
    Failed(ArenaError),
    Done {
        end_kills: [u32; 2],
        about: [Option<String>; 2],
    },
}

fn worker(
    plan: &Plan,
    next: &AtomicUsize,
    stop: &AtomicBool,
    tx: crossbeam_channel::Sender<WorkerMsg>,
) {
    let mut slots = [
        Slot::new(&plan.engines[0], plan.labels[0].clone()),
        Slot::new(&plan.engines[1], plan.labels[1].clone()),
    ];
    let mut last_game = None;
    let logging = plan.records.log_dir.is_some();
    loop {
        if stop.load(Ordering::Relaxed) || super::interrupt::requested() {
            break;
        }
        let j = next.fetch_add(1, Ordering::Relaxed);
        let Some(job) = plan.jobs.get(j) else { break };
        let mut log = GameLog::new(logging);
        if logging {
            let wall = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default();
            log.note(
                "runner",
                &format!(
                    "game {} at unix time {:.3}: {} black, {} white, {} {}, opening {} ({} stones)",
                    job.index + 1,
                    wall.as_secs_f64(),
                    plan.labels[job.black],
                    plan.labels[1 - job.black],
                    plan.settings.size,
                    plan.settings.rule,
                    job.opening_name,
                    job.opening.len()
                ),
            );
        }
        let played = play_game(&plan.settings, &mut slots, job, &mut log);
        // Every game's log is written, an unstarted one's too (the engines'
        // own words on why they did not start are there).
        let log_failure = match (&plan.records.log_dir, log.take()) {
            (Some(dir), Some(text)) => write_log(dir, job.index, &text, false).err(),
            _ => None,
        };
        match played {
            Ok(Played::Unstarted(detail)) => {
                let msg = WorkerMsg::Unstarted {
                    index: job.index,
                    detail,
                };
                if tx.send(msg).is_err() {
                    break;
                }
            }
            Ok(Played::Game(summary)) => {
                last_game = Some(job.index);
                // A channel per game, so that a message dropped unanswered
                // (the process quitting) disconnects it.
                let (recorded_tx, recorded) = crossbeam_channel::bounded(1);
                let msg = WorkerMsg::Game {
                    summary: Box::new(summary),
                    recorded: recorded_tx,
                };
                if tx.send(msg).is_err() {
                    break;
                }
                // The next game waits for this one's verdict: an SPRT that
                // stops the match must not find a game already begun behind
                // it (on a busy machine this thread could otherwise play
                // several).
                let _ = recorded.recv();
                // A log that cannot be written stops the match, after the
                // game it logged is counted: it was played.
                if let Some(e) = log_failure {
                    let _ = tx.send(WorkerMsg::Failed(e));
                    break;
                }
            }
            Err(e) => {
                let _ = tx.send(WorkerMsg::Failed(e));
                break;
            }
        }
    }
    let mut log = GameLog::new(logging);
    // Kills during games are in the game summaries; count only these.
    let before = [slots[0].end_kills, slots[1].end_kills];
    retire_slots(&mut slots, plan.settings.end_grace, &mut log);
    if let (Some(dir), Some(text), Some(index)) = (&plan.records.log_dir, log.take(), last_game) {
        if !text.is_empty() {
            let _ = write_log(dir, index, &format!("# match over\n{text}"), true);
        }
    }
    let [a, b] = slots;
    let _ = tx.send(WorkerMsg::Done {
        end_kills: [a.end_kills - before[0], b.end_kills - before[1]],
        about: [a.about, b.about],
    });
}

/// The most games at once: each is two engine processes and a thread.
const MAX_CONCURRENCY: usize = 256;

/// Stones on the board when the first five can be made (black's five,
/// white's four).
const FEWEST_STONES_OF_A_WIN: usize = 9;

/// The longest wait a setting may ask for: every read has a deadline.
const MAX_WAIT_MS: u64 = 3_600_000;

/// Running tallies.
#[derive(Default)]
struct Tally {
    total: Wld,
    as_black: [Wld; 2],
    as_white: [Wld; 2],
    colors: Wld,
    overhead: Overhead,
}

impl Tally {
    fn add(&mut self, g: &GameSummary) {
        self.total.add(g.result_for(0));
        for e in 0..2 {
            if g.black == e {
                self.as_black[e].add(g.result_for(e));
            } else {
                self.as_white[e].add(g.result_for(e));
            }
        }
        self.colors.add(match g.outcome {
            Outcome::Win(Color::Black) => Wld::new(1, 0, 0),
            Outcome::Win(Color::White) => Wld::new(0, 1, 0),
            Outcome::Draw => Wld::new(0, 0, 1),
        });
        self.overhead.moves += g.engine_moves as u64;
        self.overhead.wall += g.wall;
        self.overhead.engine += g.engine_time;
    }
}

fn progress_bar(plan: &Plan) -> ProgressBar {
    if plan.quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(plan.jobs.len() as u64);
    if let Ok(style) = ProgressStyle::with_template(
        "{elapsed_precise} [{bar:30.cyan/blue}] {pos}/{len} games  {msg}",
    ) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb
}

fn score_message(labels: &[String; 2], t: &Tally) -> String {
    let mut msg = format!(
        "{} {} - {} {} ({} draws) [{:.3}]",
        labels[0],
        t.total.wins,
        t.total.losses,
        labels[1],
        t.total.draws,
        t.total.score()
    );
    if let Some(e) = EloEstimate::new(t.total) {
        if e.elo.is_finite() {
            msg.push_str(&format!(" Elo {:+.0}", e.elo));
            if e.margin.is_finite() {
                msg.push_str(&format!(" +/- {:.0}", e.margin));
            }
        }
    }
    msg
}

/// How often the runner looks for an interrupt while no game ends.
const INTERRUPT_POLL: Duration = Duration::from_millis(100);

pub(crate) fn run_plan(plan: &Plan) -> Result<MatchSummary, ArenaError> {
    let mut recorder = Recorder::new(&plan.records, &plan.labels, &plan.settings)?;
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = crossbeam_channel::unbounded();
    let pb = progress_bar(plan);
    pb.set_message(score_message(&plan.labels, &Tally::default()));

    let mut tally = Tally::default();
    let mut games: Vec<GameSummary> = Vec::with_capacity(plan.jobs.len());
    let mut failure: Option<ArenaError> = None;
    let mut end_kills = [0u32; 2];
    let mut about: [Option<String>; 2] = [None, None];
    let mut sprt_status = None;
    // The SPRT tests completed opening pairs only: the two games of a
    // pair (colours swapped) are correlated through the opening, and a
    // test stopped between them would weigh the first game's colour.
    let mut first_of_pair: std::collections::HashMap<usize, Wld> = Default::default();
    let mut paired = Wld::default();
    let mut pairs = Pentanomial::default();
    let mut stopped_early = false;
    let mut sprt_decided_after = None;
    let mut interrupted = false;
    let mut unstarted = 0;

    std::thread::scope(|scope| {
        for w in 0..plan.concurrency {
            let tx = tx.clone();
            let (next, stop) = (&next, &stop);
            let spawned = std::thread::Builder::new()
                .name(format!("arena-worker-{w}"))
                .spawn_scoped(scope, move || worker(plan, next, stop, tx));
            if let Err(e) = spawned {
                // The workers already started finish their games and stop.
                failure = Some(ArenaError::Config(format!(
                    "cannot start worker thread {} of {} (--concurrency): {e}",
                    w + 1,
                    plan.concurrency
                )));
                stop.store(true, Ordering::Relaxed);
                break;
            }
        }
        drop(tx);
        // Dropped after the guard below on a panic: the games then queued
        // go with it, which answers the workers waiting on them.
        let rx = rx;
        // A panic here (a bug) stops the schedule: the workers would
        // otherwise play every remaining game with no one to record it.
        let _stop_on_unwind = StopOnUnwind(&stop);
        let mut start_failures = [0u32; 2];
        let mut recording_failed = false;
        loop {
            if !interrupted && super::interrupt::requested() {
                interrupted = true;
                stop.store(true, Ordering::Relaxed);
            }
            let msg = match rx.recv_timeout(INTERRUPT_POLL) {
                Ok(msg) => msg,
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => continue,
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
            };
            if super::interrupt::aborted() {
                // The process is quitting; nothing after this is a result.
                continue;
            }
            match msg {
                WorkerMsg::Game {
                    summary: g,
                    recorded,
                } => {
                    tally.add(&g);
                    // An engine that fails to start game after game is
                    // broken (its network missing, say), not weak: its
                    // losses would decide the SPRT within a few dozen games.
                    for (e, failures) in start_failures.iter_mut().enumerate() {
                        let why = || g.describe(&plan.labels);
                        if let Some(err) = count_start(failures, g.started[e], &plan.labels[e], why)
                        {
                            failure.get_or_insert(err);
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                    let result = g.result_for(0);
                    let pair_done = match first_of_pair.remove(&g.pair) {
                        Some(first) => {
                            paired.add(first);
                            paired.add(result);
                            pairs.add_pair(first, result);
                            true
                        }
                        None => {
                            first_of_pair.insert(g.pair, result);
                            false
                        }
                    };
                    // Every game counted is recorded, the one that stops
                    // the match included; only a recording error stops the
                    // recording.
                    if !recording_failed {
                        if let Err(e) = recorder.record(&g) {
                            recording_failed = true;
                            failure.get_or_insert(e);
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                    if !plan.quiet {
                        let line = format!(
                            "{}: {} {}",
                            game_heading(&plan.labels, g.index, g.black, &g.opening),
                            g.score_text(),
                            g.describe(&plan.labels)
                        );
                        pb.suspend(|| super::print_out(&format!("{line}\n")));
                    }
                    games.push(*g);
                    pb.inc(1);
                    pb.set_message(score_message(&plan.labels, &tally));
                    // The verdict is frozen when a bound is crossed; games
                    // already running finish and are recorded, not tested.
                    if let (Some(params), None, true) = (&plan.sprt, sprt_decided_after, pair_done)
                    {
                        let status = params.status(paired, &pairs);
                        sprt_status = Some((*params, status));
                        if status.decision != SprtDecision::Continue {
                            sprt_decided_after = Some(paired.games() as usize);
                            stop.store(true, Ordering::Relaxed);
                            stopped_early = games.len() + unstarted < plan.jobs.len();
                        }
                    }
                    let _ = recorded.send(());
                }
                WorkerMsg::Unstarted { index, detail } => {
                    unstarted += 1;
                    for (e, failures) in start_failures.iter_mut().enumerate() {
                        let why = || format!("game {}: {detail}", index + 1);
                        if let Some(err) = count_start(failures, false, &plan.labels[e], why) {
                            failure.get_or_insert(err);
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                    if !plan.quiet {
                        let job = &plan.jobs[index];
                        let line = format!(
                            "{}: no result, {detail}",
                            game_heading(&plan.labels, index, job.black, &job.opening_name)
                        );
                        pb.suspend(|| super::print_out(&format!("{line}\n")));
                    }
                    pb.inc(1);
                }
                WorkerMsg::Failed(e) => {
                    if failure.is_none() {
                        failure = Some(e);
                    }
                    stop.store(true, Ordering::Relaxed);
                }
                WorkerMsg::Done {
                    end_kills: kills,
                    about: ab,
                } => {
                    for e in 0..2 {
                        end_kills[e] += kills[e];
                        if about[e].is_none() {
                            about[e] = ab[e].clone();
                        }
                    }
                }
            }
        }
    });
    pb.finish_and_clear();
    for g in &games {
        for (total, kills) in end_kills.iter_mut().zip(g.killed_after_end) {
            *total += kills;
        }
    }
    games.sort_by_key(|g| g.index);
    if let (Some(params), None) = (&plan.sprt, sprt_decided_after) {
        sprt_status = Some((*params, params.status(paired, &pairs)));
    }
    // Only when the signal left games unplayed.
    let interrupted = interrupted && games.len() + unstarted < plan.jobs.len();
    let summary = MatchSummary {
        names: plan.labels.clone(),
        board: plan.settings.size,
        rule: plan.settings.rule,
        seed: plan.seed,
        openings: plan.openings.clone(),
        skipped_openings: plan.skipped_openings.clone(),
        planned_games: plan.jobs.len(),
        games,
        total: tally.total,
        as_black: tally.as_black,
        as_white: tally.as_white,
        colors: tally.colors,
        elo: EloEstimate::new(tally.total),
        pairs,
        sprt: sprt_status,
        sprt_decided_after,
        stopped_early,
        interrupted,
        unstarted,
        end_kills,
        about,
        overhead: tally.overhead,
    };
    if let Some(e) = failure {
        // The games played before the error are results all the same.
        if !plan.quiet && !summary.games.is_empty() && !super::interrupt::aborted() {
            super::print_out(&summary.to_string());
        }
        return Err(e);
    }
    Ok(summary)
}

/// Games in a row an engine may fail to start before the match stops.
const START_FAILURES_STOP: u32 = 3;

/// Counts whether engine `label` `started` a game into its run of
/// `failures`; the error that stops the match once the run reaches
/// [`START_FAILURES_STOP`] (`why` describes the last game).
fn count_start(
    failures: &mut u32,
    started: bool,
    label: &str,
    why: impl FnOnce() -> String,
) -> Option<ArenaError> {
    *failures = if started { 0 } else { *failures + 1 };
    (*failures == START_FAILURES_STOP).then(|| {
        ArenaError::Config(format!(
            "{label} failed to start {START_FAILURES_STOP} games in a row ({}): the match stops",
            why()
        ))
    })
}

/// "Game N (BLACK vs WHITE, OPENING)", as each game's line begins.
fn game_heading(labels: &[String; 2], index: usize, black: usize, opening: &str) -> String {
    format!(
        "Game {} ({} vs {}, {opening})",
        index + 1,
        labels[black],
        labels[1 - black]
    )
}

/// Raises the stop flag if dropped while the thread panics.
struct StopOnUnwind<'a>(&'a AtomicBool);

impl Drop for StopOnUnwind<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}
