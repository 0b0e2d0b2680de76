//! The evaluation service: search threads submit positions, evaluator
//! threads gather them into batches, run the network and send back each
//! position's policy and win/draw/loss.
//!
//! Encoding happens in the submitting thread, so it overlaps the network
//! work; an evaluator waits at most `max_wait` for a batch to fill.
//!
//! On a CPU the number of evaluators follows the search threads by default
//! ([`EvaluatorThreads::PerSearchThread`]): two search threads on two cores
//! keep two evaluators busy where one would leave a core idle, and the
//! engine with two beat one at 0.5 s per move (docs/tuning.md).
//!
//! The service does not know which backend evaluates ([`Model`]); board
//! symmetries are applied here to the encoded planes, the same for all.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

mod evaluator;
pub use evaluator::{failed_batches, non_finite_answers};

use evaluator::*;

use std::collections::VecDeque;

use crossbeam_channel::{bounded, unbounded, Receiver, Sender};
use parking_lot::Mutex;

use crate::game::Board;
use crate::nn::backend::{Backend, BatchEvaluator, Model};
use crate::nn::batch::{BatchOutput, EncodedBatch};
use crate::nn::features::{encode, INPUT_PLANES};
use crate::nn::network_file::NetConfig;
use crate::nn::precision::{Calibration, Precision, PrecisionSetting};
use crate::nn::symmetry::Symmetry;

/// Which board symmetries an evaluation averages over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SymmetryMode {
    /// The position as it is.
    None,
    /// One symmetry chosen at random per batch.
    Random,
    /// All symmetries of the board (8 on a square board, 4 otherwise), averaged.
    All,
}

impl std::str::FromStr for SymmetryMode {
    type Err = String;

    fn from_str(s: &str) -> Result<SymmetryMode, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "none" | "off" => Ok(SymmetryMode::None),
            "random" => Ok(SymmetryMode::Random),
            "all" => Ok(SymmetryMode::All),
            other => Err(format!(
                "unknown symmetry mode {other:?}: expected none, random or all"
            )),
        }
    }
}

/// How many evaluator threads a service runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvaluatorThreads {
    /// On a CPU, as many as the search has threads (each search keeps
    /// its batches with the network at once, so they are run side by side),
    /// at most the cores this process may run on; on a GPU, one.
    PerSearchThread,
    /// This many, whatever the search (at least 1).
    Fixed(usize),
}

impl EvaluatorThreads {
    /// The evaluators for a search with `search_threads`, on a GPU or not.
    pub fn for_search(self, search_threads: usize, on_gpu: bool) -> usize {
        match self {
            EvaluatorThreads::Fixed(n) => n.max(1),
            EvaluatorThreads::PerSearchThread if on_gpu => 1,
            EvaluatorThreads::PerSearchThread => {
                let cores = crate::cores::usable();
                search_threads.clamp(1, cores.max(1))
            }
        }
    }
}

impl std::str::FromStr for EvaluatorThreads {
    type Err = String;

    fn from_str(s: &str) -> Result<EvaluatorThreads, String> {
        Ok(crate::nn::settings::auto_or_count(s, "evaluator threads")?
            .map_or(EvaluatorThreads::PerSearchThread, EvaluatorThreads::Fixed))
    }
}

impl fmt::Display for EvaluatorThreads {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvaluatorThreads::PerSearchThread => f.write_str("auto"),
            EvaluatorThreads::Fixed(n) => write!(f, "{n}"),
        }
    }
}

/// How the service batches.
#[derive(Clone, Debug)]
pub struct ServiceConfig {
    /// Largest batch an evaluator runs.
    pub batch_size: usize,
    /// Evaluator threads (each runs whole batches).
    pub evaluator_threads: EvaluatorThreads,
    pub symmetry: SymmetryMode,
    /// How long an evaluator waits for a batch to fill. Zero (the default)
    /// takes what is queued: with several submitters, batches form while
    /// the network is busy, and a lone submitter is never kept waiting.
    pub max_wait: Duration,
    /// Seed of the random symmetries.
    pub seed: u64,
    /// Inference precision (`auto`: libtorch measures at start, see
    /// `precision`; the native kernels measure fp32 against bf16 where the
    /// CPU has it and their AVX-512 kernels run, `native::choose_precision`).
    pub precision: PrecisionSetting,
}

impl Default for ServiceConfig {
    fn default() -> ServiceConfig {
        ServiceConfig {
            batch_size: 16,
            evaluator_threads: EvaluatorThreads::Fixed(1),
            symmetry: SymmetryMode::None,
            max_wait: Duration::ZERO,
            seed: 0x5755_5A49,
            precision: PrecisionSetting::Fixed(Precision::Fp32),
        }
    }
}

/// A network's judgement of one position.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// Move probabilities per cell, indexed `y * width + x` for the board's
    /// own width; zero on occupied and forbidden cells.
    pub policy: Vec<f32>,
    /// Probabilities of win, draw and loss for the side to move.
    pub wdl: [f32; 3],
}

/// The expected outcome P(win) + P(draw)/2 of a win/draw/loss triple.
pub fn expectation(wdl: [f32; 3]) -> f32 {
    wdl[0] + 0.5 * wdl[1]
}

/// The service stopped (its evaluators ended) before answering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the evaluation service has stopped")]
pub struct ServiceStopped;

struct Request {
    features: Vec<f32>,
    height: usize,
    width: usize,
    /// Averaged over every symmetry of the board, whatever the service's
    /// [`SymmetryMode`]; such requests share batches only with each other.
    all_symmetries: bool,
    /// Raised when the submitter no longer wants the answer: the request
    /// is then dropped from the queue unevaluated.
    cancel: Option<Arc<AtomicBool>>,
    reply: Sender<Evaluation>,
}

impl Request {
    fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|flag| flag.load(Ordering::Relaxed))
    }
}

/// What an evaluator takes from the queue.
enum Job {
    /// Positions submitted together.
    Positions(Vec<Request>),
    /// One evaluator ends (after what it holds): the pool shrinks by one.
    Retire,
}

/// The evaluator threads and what it takes to start more.
struct Pool {
    workers: Vec<JoinHandle<()>>,
    /// Evaluators running (retired ones may still be finishing).
    active: usize,
    /// Evaluators started so far (names and symmetry seeds).
    started: usize,
    /// The network new evaluators are made from, kept only where the pool
    /// follows the search on a CPU (on a GPU it stays at one).
    network: Option<Model>,
    on_gpu: bool,
    config: ServiceConfig,
    requests: Receiver<Job>,
}

/// A running evaluation service. Dropping it stops the evaluators once the
/// queued requests are answered.
pub struct EvalService {
    queue: Option<Sender<Job>>,
    pool: Mutex<Pool>,
    /// The network's precision (fp32 without a network).
    precision: Precision,
    /// The measurement behind an `auto` choice.
    calibration: Option<Calibration>,
    /// The network's size (none for the uniform evaluator).
    network: Option<NetConfig>,
    /// What evaluates it, for reports (none for the uniform evaluator).
    description: Option<String>,
    backend: Option<Backend>,
}

impl EvalService {
    /// Starts libtorch evaluators, each with its own copy of `network`, in
    /// the precision that `config.precision` resolves to.
    #[cfg(feature = "torch")]
    pub fn start(
        network: crate::nn::Network,
        config: ServiceConfig,
    ) -> std::io::Result<EvalService> {
        let (precision, calibration) =
            crate::nn::precision::resolve(config.precision, &network, config.batch_size);
        let mut service = Self::start_model(
            Model::Torch {
                network: Box::new(network),
                precision,
            },
            config,
        )?;
        service.calibration = calibration;
        Ok(service)
    }

    /// Starts the evaluators of `model`.
    pub fn start_model(model: Model, config: ServiceConfig) -> std::io::Result<EvalService> {
        let threads = config.evaluator_threads.for_search(1, model.on_gpu());
        let net_config = model.config();
        let description = model.describe();
        let backend = model.backend();
        let precision = model.precision();
        let on_gpu = model.on_gpu();
        let mut service = Self::spawn(Some(model), on_gpu, precision, threads, config)?;
        service.network = Some(net_config);
        service.description = Some(description);
        service.backend = Some(backend);
        Ok(service)
    }

    /// Evaluator threads running now.
    pub fn evaluators(&self) -> usize {
        self.pool.lock().active
    }

    /// Fits the evaluators to a search with `search_threads` threads, when
    /// the service's setting follows the search
    /// ([`EvaluatorThreads::PerSearchThread`]); otherwise does nothing.
    /// Starting one costs a frozen copy of the network (milliseconds);
    /// a retired one finishes the batch it holds first.
    pub fn fit_to_search(&self, search_threads: usize) -> std::io::Result<()> {
        let mut pool = self.pool.lock();
        if pool.config.evaluator_threads != EvaluatorThreads::PerSearchThread {
            return Ok(());
        }
        let wanted = pool
            .config
            .evaluator_threads
            .for_search(search_threads, pool.on_gpu);
        self.resize(&mut pool, wanted)
    }

    fn resize(&self, pool: &mut Pool, wanted: usize) -> std::io::Result<()> {
        let Some(queue) = &self.queue else {
            return Ok(());
        };
        while pool.active > wanted {
            if queue.send(Job::Retire).is_err() {
                break;
            }
            pool.active -= 1;
        }
        // A service with a network starts evaluators only from the kept
        // copy (never uniform ones in its place).
        if pool.network.is_none() && self.network.is_some() {
            return Ok(());
        }
        while pool.active < wanted {
            let evaluator = pool.network.as_ref().map(Model::evaluator);
            let worker = start_evaluator(evaluator, &pool.config, &pool.requests, pool.started)?;
            pool.workers.push(worker);
            pool.started += 1;
            pool.active += 1;
        }
        // Evaluators that have retired are done: forget their handles.
        pool.workers.retain(|w| !w.is_finished());
        Ok(())
    }

    /// The size of the network evaluating (none without a network).
    pub fn network_config(&self) -> Option<NetConfig> {
        self.network
    }

    /// The precision the network evaluates in.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// The backend evaluating (none for the uniform evaluator).
    pub fn backend(&self) -> Option<Backend> {
        self.backend
    }

    /// What evaluates: backend, network size, precision (none for the
    /// uniform evaluator).
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// Appends `note` (why this backend, say) to the description.
    pub fn add_to_description(&mut self, note: &str) {
        if let Some(description) = self.description.as_mut() {
            description.push_str(" (");
            description.push_str(note);
            description.push(')');
        }
    }

    /// fp32 and bf16 speeds measured at start, when the precision was `auto`.
    pub fn calibration(&self) -> Option<Calibration> {
        self.calibration
    }

    /// A service without a network (when none could be loaded): a uniform
    /// policy over the legal moves and an even value, so that the search
    /// still plays by its tactics.
    pub fn start_uniform(config: ServiceConfig) -> std::io::Result<EvalService> {
        Self::spawn(None, false, Precision::Fp32, 1, config)
    }

    /// A service with no evaluators: every submission is answered by a
    /// disconnection (searches then stop and play a legal move).
    pub fn stopped() -> EvalService {
        let (_, requests) = unbounded();
        EvalService {
            queue: None,
            pool: Mutex::new(Pool {
                workers: Vec::new(),
                active: 0,
                started: 0,
                network: None,
                on_gpu: false,
                config: ServiceConfig::default(),
                requests,
            }),
            precision: Precision::Fp32,
            calibration: None,
            network: None,
            description: None,
            backend: None,
        }
    }

    fn spawn(
        network: Option<Model>,
        on_gpu: bool,
        precision: Precision,
        threads: usize,
        config: ServiceConfig,
    ) -> std::io::Result<EvalService> {
        let (queue, requests) = unbounded::<Job>();
        let threads = threads.max(1);
        let workers = (0..threads)
            .map(|i| {
                let evaluator = network.as_ref().map(Model::evaluator);
                start_evaluator(evaluator, &config, &requests, i)
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        // Where evaluators may be added later, the service keeps the
        // network to make them from.
        let follows_search =
            config.evaluator_threads == EvaluatorThreads::PerSearchThread && !on_gpu;
        Ok(EvalService {
            queue: Some(queue),
            pool: Mutex::new(Pool {
                workers,
                active: threads,
                started: threads,
                network: network.filter(|_| follows_search),
                on_gpu,
                config,
                requests,
            }),
            precision,
            calibration: None,
            network: None,
            description: None,
            backend: None,
        })
    }

    /// Encodes `board` here and queues it; the answer arrives on the receiver.
    pub fn submit(&self, board: &mut Board) -> Receiver<Evaluation> {
        let mut answers = self.submit_boards(std::slice::from_mut(board));
        answers.pop().unwrap_or_else(|| bounded(1).1)
    }

    /// Encodes the boards here and queues them together, so that they can
    /// share a batch; one receiver per board, in order.
    pub fn submit_boards(&self, boards: &mut [Board]) -> Vec<Receiver<Evaluation>> {
        self.submit_boards_with(boards, false, None)
    }

    /// As [`EvalService::submit_boards`] (or, with `all_symmetries`,
    /// [`EvalService::submit_all_symmetries`]), for a submitter that may
    /// give up waiting: once `cancel` (if any) is raised, whatever of these
    /// boards is still queued is dropped unevaluated and its receiver
    /// reports a disconnection. A search that stops does not then leave the
    /// evaluators working through its abandoned leaves: with many search
    /// threads on few cores, that queue would hold the stop (and the move)
    /// back by as long as it takes to evaluate, and then delay the next
    /// search's leaves behind it.
    pub fn submit_cancellable(
        &self,
        boards: &mut [Board],
        all_symmetries: bool,
        cancel: Option<&Arc<AtomicBool>>,
    ) -> Vec<Receiver<Evaluation>> {
        self.submit_boards_with(boards, all_symmetries, cancel)
    }

    /// Encodes `board` and queues it to be evaluated under every symmetry
    /// of the board and averaged (eight network evaluations on a square
    /// board): a steadier evaluation where one is worth its cost, as at
    /// the root of a search.
    pub fn submit_all_symmetries(&self, board: &mut Board) -> Receiver<Evaluation> {
        let mut answers = self.submit_boards_with(std::slice::from_mut(board), true, None);
        answers.pop().unwrap_or_else(|| bounded(1).1)
    }

    fn submit_boards_with(
        &self,
        boards: &mut [Board],
        all_symmetries: bool,
        cancel: Option<&Arc<AtomicBool>>,
    ) -> Vec<Receiver<Evaluation>> {
        let encoded = boards
            .iter_mut()
            .map(|board| {
                let (height, width) = (
                    board.size().height() as usize,
                    board.size().width() as usize,
                );
                let mut features = vec![0.0; INPUT_PLANES * height * width];
                encode(board, &mut features, height, width);
                (features, height, width)
            })
            .collect();
        self.queue_features(encoded, all_symmetries, cancel)
    }

    /// Queues encoded positions (`INPUT_PLANES * height * width` floats
    /// each) together; one receiver per position, in order. A position of
    /// another length is not queued: its receiver reports a disconnection.
    pub fn submit_features(
        &self,
        positions: Vec<(Vec<f32>, usize, usize)>,
    ) -> Vec<Receiver<Evaluation>> {
        self.queue_features(positions, false, None)
    }

    fn queue_features(
        &self,
        positions: Vec<(Vec<f32>, usize, usize)>,
        all_symmetries: bool,
        cancel: Option<&Arc<AtomicBool>>,
    ) -> Vec<Receiver<Evaluation>> {
        let mut answers = Vec::with_capacity(positions.len());
        let group: Vec<Request> = positions
            .into_iter()
            .filter_map(|(features, height, width)| {
                let (reply, answer) = bounded(1);
                answers.push(answer);
                (features.len() == INPUT_PLANES * height * width).then_some(Request {
                    features,
                    height,
                    width,
                    all_symmetries,
                    cancel: cancel.cloned(),
                    reply,
                })
            })
            .collect();
        if let Some(queue) = &self.queue {
            // The pool keeps a receiver, so the send succeeds while the
            // service lives; evaluators survive a failing network
            // (`evaluator`), so every request is answered or dropped.
            let _ = queue.send(Job::Positions(group));
        }
        answers
    }

    /// Evaluates `board`, waiting for the answer.
    pub fn evaluate(&self, board: &mut Board) -> Result<Evaluation, ServiceStopped> {
        self.submit(board).recv().map_err(|_| ServiceStopped)
    }
}

impl Drop for EvalService {
    fn drop(&mut self) {
        self.queue = None;
        let mut pool = self.pool.lock();
        for worker in pool.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_position_of_the_wrong_length_is_refused_and_the_others_answered() {
        let service = EvalService::start_uniform(ServiceConfig::default()).expect("service");
        let (height, width) = (15, 15);
        let whole = vec![1.0; INPUT_PLANES * height * width];
        let short = vec![1.0; INPUT_PLANES * height * width - 1];
        let answers = service.submit_features(vec![
            (whole.clone(), height, width),
            (short, height, width),
            (whole, height, width),
        ]);
        assert_eq!(answers.len(), 3);
        let timeout = Duration::from_secs(30);
        for i in [0, 2] {
            let answer = answers[i].recv_timeout(timeout).expect("answered");
            assert_eq!(answer.policy.len(), height * width);
        }
        // No evaluation for the malformed one: its sender is gone.
        assert!(answers[1].recv_timeout(timeout).is_err());
    }

    /// Counts the positions it evaluates; answers uniform priors.
    struct Counting(Arc<std::sync::atomic::AtomicUsize>);

    impl BatchEvaluator for Counting {
        fn evaluate(&mut self, batch: EncodedBatch<'_>) -> BatchOutput {
            let n = batch.positions();
            self.0.fetch_add(n, Ordering::SeqCst);
            BatchOutput {
                policy: vec![1.0 / batch.area() as f32; n * batch.area()],
                wdl: [0.3, 0.4, 0.3].repeat(n),
            }
        }
    }

    /// A network that fails on its first batches, as libtorch's errors do.
    struct Failing(usize);

    impl BatchEvaluator for Failing {
        fn evaluate(&mut self, batch: EncodedBatch<'_>) -> BatchOutput {
            if self.0 > 0 {
                self.0 -= 1;
                panic!("the device is gone");
            }
            let n = batch.positions();
            BatchOutput {
                policy: vec![0.0; n * batch.area()],
                wdl: [0.0, 0.0, 1.0].repeat(n),
            }
        }
    }

    #[test]
    fn a_failing_network_answers_uniform_and_the_evaluator_goes_on() {
        let (height, width) = (9, 9);
        let (queue, requests) = unbounded::<Job>();
        let mut answers = Vec::new();
        for _ in 0..3 {
            let (reply, answer) = bounded(1);
            answers.push(answer);
            let request = Request {
                features: vec![1.0; INPUT_PLANES * height * width],
                height,
                width,
                all_symmetries: false,
                cancel: None,
                reply,
            };
            queue.send(Job::Positions(vec![request])).expect("queued");
        }
        queue.send(Job::Retire).expect("queued");
        let config = ServiceConfig {
            batch_size: 1,
            ..ServiceConfig::default()
        };
        evaluator(Some(Box::new(Failing(2))), &config, &requests, 1);
        let answers: Vec<Evaluation> = answers
            .iter()
            .map(|a| a.try_recv().expect("answered"))
            .collect();
        // The two failed batches: the no-knowledge answer.
        for failed in &answers[..2] {
            assert_eq!(failed.wdl, [0.35, 0.3, 0.35]);
            assert!((failed.policy.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        }
        // The thread lived on to run the network again.
        assert_eq!(answers[2].wdl, [0.0, 0.0, 1.0]);
    }

    #[test]
    fn cancelled_positions_are_dropped_unevaluated() {
        let (height, width) = (15, 15);
        let (queue, requests) = unbounded::<Job>();
        let cancel = Arc::new(AtomicBool::new(false));
        let mut answers = Vec::new();
        let mut group = |cancel: Option<&Arc<AtomicBool>>, n: usize| {
            let group = (0..n)
                .map(|_| {
                    let (reply, answer) = bounded(1);
                    answers.push(answer);
                    Request {
                        features: vec![1.0; INPUT_PLANES * height * width],
                        height,
                        width,
                        all_symmetries: false,
                        cancel: cancel.cloned(),
                        reply,
                    }
                })
                .collect();
            Job::Positions(group)
        };
        // A search's leaves, then another submitter's, then more of the
        // search's: the search stops before the evaluator reaches them.
        let first = group(Some(&cancel), 5);
        let other = group(None, 3);
        let last = group(Some(&cancel), 4);
        for job in [first, other, last, Job::Retire] {
            queue.send(job).expect("queued");
        }
        cancel.store(true, Ordering::SeqCst);
        let evaluated = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let config = ServiceConfig {
            batch_size: 4,
            ..ServiceConfig::default()
        };
        evaluator(
            Some(Box::new(Counting(evaluated.clone()))),
            &config,
            &requests,
            1,
        );
        assert_eq!(evaluated.load(Ordering::SeqCst), 3);
        let answered: Vec<bool> = answers.iter().map(|a| a.try_recv().is_ok()).collect();
        let mut expected = vec![false; 5];
        expected.extend([true; 3]);
        expected.extend([false; 4]);
        assert_eq!(answered, expected);
        // The dropped ones report the disconnection at once.
        assert!(answers[0].recv_timeout(Duration::from_secs(30)).is_err());
    }
}
