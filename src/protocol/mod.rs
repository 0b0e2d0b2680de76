//! The protocol front ends over stdin/stdout: Gomocup, extended Gomocup
//! and Yixin-Board ([`gomocup`], one command model: [`crate::gomocup`]),
//! each a thin adapter over the session core ([`session`]), which drives
//! the one engine API ([`crate::engine::Engine`]).
//!
//! A reader thread turns input into lines, so that END, STOP and YXSTOP are
//! seen while a search runs; the session runs searches in the background
//! and the front end writes every answer as one flushed line.

pub mod files;
pub mod gomocup;
pub mod gtp;
pub mod log;
mod reader;
mod report;
pub mod session;
pub mod summary;
pub mod ws_client;

use std::io::{BufRead, Write};
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, never, select, Receiver, RecvTimeoutError};

use crate::config::Config;
use crate::engine::Engine;
use crate::game::{BoardSize, Rule};
use crate::gomocup::CommandParser;
use crate::nn::provider::NetworkProvider;
use crate::nn::EvalService;
pub use gomocup::{Dialect, Gomocup};
pub use gtp::Gtp;
use reader::LineEnds;
use session::{Driver, FrontEnd};
use std::sync::Arc;

/// Why `limit` (bytes, the whole process's, set by `setting`) is too low,
/// when it is below what the engine holds without a tree plus its solvers'
/// tables, the margin and the smallest tree: the search then keeps to the
/// smallest tree.
pub fn memory_limit_note(engine: &Engine, setting: &str, limit: usize) -> Option<String> {
    use crate::search::memory;
    const MB: f64 = (1 << 20) as f64;
    let used = memory::process_private_bytes()?;
    // The tree's share as the search's budget counts it: a tree pruned or
    // cleared since (Piskvork repeats every INFO after each START) would
    // otherwise make the engine look larger than the budget finds it.
    let baseline = used.saturating_sub(engine.tree_share_of_measure(used));
    let solvers = engine.solver_reserve();
    let floor = memory::minimum_limit(baseline, solvers);
    (limit < floor).then(|| {
        format!(
            "{setting} {:.0} MB is below the {:.0} MB this engine needs ({:.0} MB for its \
             code and network, {:.0} MB for its solvers' tables): searching with the \
             smallest tree ({:.0} MB)",
            limit as f64 / MB,
            floor as f64 / MB,
            baseline as f64 / MB,
            solvers as f64 / MB,
            memory::MIN_TREE as f64 / MB
        )
    })
}

/// An engine on an empty `size` board under `rule`, evaluating with the
/// network `networks` names for them; the note says when the network fell
/// back or the rule is refused (the engine then has a service that
/// evaluates nothing, and the front end refuses to search:
/// [`NetworkProvider::refusal`]).
fn engine_for(
    config: &Config,
    networks: &mut NetworkProvider,
    size: BoardSize,
    rule: Rule,
) -> (Engine, Option<String>) {
    let (service, note) = service_or_refusal(networks, rule, size);
    (
        Engine::new(service, config.search_config(), size, rule),
        note,
    )
}

/// Switches `engine` to `rule` and the network for it on the game's board
/// (the same stones); nothing when it is the rule already. The note says
/// when the network fell back or the rule is refused.
fn switch_rule(engine: &mut Engine, networks: &mut NetworkProvider, rule: Rule) -> Option<String> {
    if rule == engine.rule() {
        return None;
    }
    let (service, note) = service_or_refusal(networks, rule, engine.board().size());
    engine.set_rule(rule, service);
    note
}

/// Starts a new game on `engine`, an empty `size` board under `rule`, with
/// the network for them (another board size may have its own). The note
/// says when the network fell back or the rule is refused.
fn new_game(
    engine: &mut Engine,
    networks: &mut NetworkProvider,
    size: BoardSize,
    rule: Rule,
) -> Option<String> {
    let (service, note) = service_or_refusal(networks, rule, size);
    engine.new_game(size, rule);
    engine.use_service(service);
    note
}

/// The service and note for `rule` on a board of `size`, or for a refused
/// rule a service that evaluates nothing and the reason: front ends keep
/// running so that they can answer every later command with that reason.
fn service_or_refusal(
    networks: &mut NetworkProvider,
    rule: Rule,
    size: BoardSize,
) -> (Arc<EvalService>, Option<String>) {
    networks
        .service_for(rule, size)
        .unwrap_or_else(|why| (Arc::new(EvalService::stopped()), Some(why)))
}

/// Runs the Gomocup brain until END or the end of input. Returns the
/// stopped brain, search tree included, for the caller to free or to leave
/// to the operating system (see [`Retired`]).
pub fn run(
    config: Config,
    input: impl BufRead + Send + 'static,
    output: impl Write + Send + 'static,
) -> Retired {
    // Reading starts before the networks load, so that each line is
    // stamped when it came: a manager that does not wait for START's OK
    // (GomocupJudge) counts the first move's time from its request.
    let lines = reader::spawn(input, LineEnds::Any);
    let brain = Gomocup::brain(config, Box::new(output));
    let mut parser = CommandParser::new();
    Retired::new(drive(brain, lines, move |line| parser.feed(line)))
}

/// Runs the GTP engine until `quit` or the end of input; returns it
/// stopped, as [`run`] does.
pub fn run_gtp(
    config: Config,
    input: impl BufRead + Send + 'static,
    output: impl Write + Send + 'static,
) -> Retired {
    log::LogFile::for_process(&config.log);
    let lines = reader::spawn(input, LineEnds::LfOnly);
    let engine = Gtp::engine(config, Box::new(output));
    Retired::new(drive(engine, lines, |line| vec![gtp::GtpLine::parse(line)]))
}

/// A front end that has answered its last command and stopped searching,
/// with everything it holds. A process that is exiting anyway need not free
/// it (Piskvork kills a brain 700 ms after END): it leaves it to the
/// operating system with [`Retired::leave_to_exit`].
#[must_use]
pub struct Retired {
    // Held only to be dropped (or forgotten).
    _front_end: Box<dyn std::any::Any>,
}

impl Retired {
    fn new<F: FrontEnd + 'static>(driver: Driver<F>) -> Retired {
        Retired {
            _front_end: Box::new(driver),
        }
    }

    /// Forgets the state without freeing it: only for a process that
    /// exits next.
    pub fn leave_to_exit(self) {
        std::mem::forget(self);
    }
}

/// The loop every front end shares: input lines become commands (`parse`
/// may hold lines back, as a Gomocup block does), the driver handles them
/// and ticks between lines.
fn drive<F: FrontEnd>(
    mut driver: Driver<F>,
    lines: Receiver<(String, Instant)>,
    mut parse: impl FnMut(&str) -> Vec<F::Command>,
) -> Driver<F> {
    // A search that ends wakes the loop, so that its answer goes out at
    // once rather than at the next poll: on Windows a 5 ms wait may last a
    // whole 15.6 ms timer tick, half the manager's lag allowance.
    let (ended, mut search_ended) = bounded(1);
    driver.session.engine.notify_search_end(ended);
    let paused = never();
    loop {
        let input = if driver.input_paused() {
            &paused
        } else {
            &lines
        };
        let next = select! {
            recv(input) -> line => line.map_err(|_| RecvTimeoutError::Disconnected),
            recv(search_ended) -> wake => {
                // Were the engine's sender ever dropped, a closed channel
                // would be ready forever: fall back to polling.
                if wake.is_err() {
                    search_ended = never();
                }
                Err(RecvTimeoutError::Timeout)
            }
            default(Duration::from_millis(5)) => Err(RecvTimeoutError::Timeout),
        };
        match next {
            Ok((line, received)) => {
                tracing::info!("< {}", line.trim_end());
                driver.session.set_received(received);
                for command in parse(&line) {
                    if !driver.handle(command) {
                        driver.shutdown();
                        return driver;
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                // End of input: what was asked is still answered (each
                // search within its own time), as `printf ... | pbrain-wuzi`
                // expects; END would have stopped at once.
                driver.drain();
                driver.shutdown();
                return driver;
            }
        }
        driver.tick();
        if driver.wants_exit() {
            driver.shutdown();
            return driver;
        }
    }
}
