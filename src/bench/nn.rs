//! `bench nn`: network throughput per batch size and backend, the raw
//! forward pass against the evaluation service (encoding and queueing
//! included).

use std::collections::VecDeque;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::bench::format_rate;
use crate::game::{Board, BoardSize, Point, Rule};
use crate::nn::backend::{Backend, BatchEvaluator, Model};
use crate::nn::native::{NativeNetwork, Weights};
use crate::nn::{
    encode, measure_rate, EncodedBatch, EvalService, EvaluatorThreads, NetConfig, Precision,
    PrecisionSetting, ServiceConfig, SymmetryMode, INPUT_PLANES,
};

/// What to measure.
#[derive(Clone, Debug)]
pub struct NnBenchOptions {
    /// A network file; without one, random weights of `net`'s size.
    pub network: Option<PathBuf>,
    pub net: NetConfig,
    /// One backend, or (`None`) every backend built in, side by side.
    pub backend: Option<Backend>,
    /// The native kernels' instruction set (`None`: the widest here).
    pub isa: Option<crate::nn::Isa>,
    pub device: String,
    /// libtorch CPU threads per evaluator.
    pub torch_threads: usize,
    /// Evaluator threads of the service; `None`: 1 for `bench nn`, as many
    /// as the search threads for `bench search` (the engine's `auto`).
    pub evaluators: Option<usize>,
    pub board_side: u32,
    pub batch_sizes: Vec<usize>,
    pub per_item: Duration,
    /// The precision (`auto`: as the engine resolves it; libtorch's
    /// measured, the native kernels' bf16 where the CPU has AVX512-BF16 and
    /// their AVX-512 kernels run).
    pub precision: PrecisionSetting,
}

/// Mid-game positions of the bench games, replayed on a `side` board (moves
/// that fall off a smaller board are skipped).
fn bench_boards(side: u32) -> Result<Vec<Board>, String> {
    let size = BoardSize::square(side).map_err(|e| e.to_string())?;
    let mut boards = Vec::new();
    for record in crate::bench::positions::GAMES {
        let moves = record.moves();
        for plies in [8, 16, 24, 32] {
            let mut board = Board::new(size, Rule::Freestyle);
            let offset = (side as i32 - record.side as i32) / 2;
            for &p in moves.iter().take(plies) {
                if let Some(q) = Point::from_signed(p.x() as i32 + offset, p.y() as i32 + offset) {
                    if board.is_empty(q) && board.outcome().is_none() {
                        let _ = board.play(q);
                    }
                }
            }
            boards.push(board);
        }
    }
    Ok(boards)
}

/// Encodes `count` positions of the pool, from `start` on, as the search
/// threads do before submitting a batch.
pub fn encode_group(
    boards: &mut [Board],
    start: usize,
    count: usize,
    side: usize,
) -> Vec<(Vec<f32>, usize, usize)> {
    (0..count)
        .map(|i| {
            let n = boards.len();
            let mut features = vec![0.0; INPUT_PLANES * side * side];
            encode(&mut boards[(start + i) % n], &mut features, side, side);
            (features, side, side)
        })
        .collect()
}

/// The backends a bench measures: the one asked for, or every one built in.
fn backends(options: &NnBenchOptions) -> Vec<Backend> {
    match options.backend {
        Some(backend) => vec![backend],
        None if cfg!(feature = "torch") => vec![Backend::Native, Backend::Torch],
        None => vec![Backend::Native],
    }
}

/// The network of `options` for `backend`, with a note on a device
/// fallback in `out`. libtorch's precision is resolved as the engine does.
pub fn bench_model(
    options: &NnBenchOptions,
    backend: Backend,
    out: &mut impl Write,
) -> io::Result<Model> {
    let fail = |e: String| io::Error::new(io::ErrorKind::InvalidInput, e);
    match backend {
        Backend::Native => {
            let weights = match &options.network {
                Some(path) => Weights::read(path).map_err(|e| fail(e.to_string()))?,
                None => Weights::random(options.net, 1),
            };
            Ok(Model::native(
                Arc::new(NativeNetwork::new(&weights)),
                options.isa,
                options.precision,
                options.batch_sizes.first().copied().unwrap_or(8),
            ))
        }
        #[cfg(feature = "torch")]
        Backend::Torch => {
            crate::nn::device::tune_cpu(options.torch_threads);
            let (device, note) = crate::nn::device::select_device(&options.device).map_err(fail)?;
            if let Some(note) = note {
                writeln!(out, "note: {note}")?;
            }
            let network = match &options.network {
                Some(path) => {
                    crate::nn::Network::load(path, device).map_err(|e| fail(e.to_string()))?
                }
                None => crate::nn::Network::new(options.net, device),
            };
            let batch = options.batch_sizes.first().copied().unwrap_or(16);
            let (precision, _) = crate::nn::precision::resolve(options.precision, &network, batch);
            Ok(Model::Torch {
                network: Box::new(network),
                precision,
            })
        }
        #[cfg(not(feature = "torch"))]
        Backend::Torch => {
            let _ = out;
            Err(fail("this build has no libtorch (backend torch)".into()))
        }
    }
}

/// Positions per second of `evaluator` on `batch` for about `time`, after
/// one warm-up batch.
pub fn raw_rate(
    evaluator: &mut dyn BatchEvaluator,
    batch: EncodedBatch<'_>,
    time: Duration,
) -> f64 {
    measure_rate(batch.positions(), time, || {
        let _ = evaluator.evaluate(batch);
    })
}

/// Positions per second of the service, fed by one thread that keeps one
/// batch more than there are evaluators in flight, so that encoding
/// overlaps evaluation.
pub fn service_rate(
    service: &EvalService,
    boards: &mut [Board],
    batch: usize,
    evaluators: usize,
    time: Duration,
) -> f64 {
    let mut in_flight = VecDeque::new();
    let mut next = 0;
    let side = boards.first().map_or(15, |b| b.size().width() as usize);
    let mut submit = |in_flight: &mut VecDeque<_>, boards: &mut [Board]| {
        in_flight.extend(service.submit_features(encode_group(boards, next, batch, side)));
        next += batch;
    };
    // Warm-up, untimed as the raw rate's: a batch per evaluator answered
    // (threads started, buffers allocated, libtorch's first pass).
    for _ in 0..evaluators {
        submit(&mut in_flight, boards);
    }
    while let Some(answer) = in_flight.pop_front() {
        let _ = answer.recv();
    }
    // Then a batch per evaluator in flight, as while measured.
    for _ in 0..evaluators {
        submit(&mut in_flight, boards);
    }
    let start = Instant::now();
    let mut answered = 0u64;
    while start.elapsed() < time {
        submit(&mut in_flight, boards);
        for _ in 0..batch {
            if in_flight.pop_front().is_some_and(|a| a.recv().is_ok()) {
                answered += 1;
            }
        }
    }
    answered as f64 / start.elapsed().as_secs_f64()
}

/// A service of `model` with `evaluators` fixed evaluator threads.
pub fn start_service(model: &Model, evaluators: usize, batch: usize) -> io::Result<EvalService> {
    EvalService::start_model(
        model.duplicate(),
        ServiceConfig {
            batch_size: batch,
            evaluator_threads: EvaluatorThreads::Fixed(evaluators),
            symmetry: SymmetryMode::None,
            ..ServiceConfig::default()
        },
    )
}

/// Prints the figures: per batch size, each backend's raw and service
/// rates, and (with more than one backend) the one `auto` would choose.
pub fn run(options: &NnBenchOptions, out: &mut impl Write) -> io::Result<()> {
    let fail = |e: String| io::Error::new(io::ErrorKind::InvalidInput, e);
    let side = options.board_side as usize;
    let mut boards = bench_boards(options.board_side).map_err(fail)?;
    let evaluators = options.evaluators.unwrap_or(1).max(1);
    let models = backends(options)
        .into_iter()
        .map(|b| bench_model(options, b, out))
        .collect::<io::Result<Vec<Model>>>()?;
    let Some(first) = models.first() else {
        return Ok(());
    };
    writeln!(
        out,
        "bench nn: net {} ({}), {side}x{side} board, service with {evaluators} evaluator(s), \
         {} libtorch thread(s), {:.1} s per figure",
        first.config(),
        options
            .network
            .as_ref()
            .map_or("random weights".to_string(), |p| p.display().to_string()),
        options.torch_threads,
        options.per_item.as_secs_f64()
    )?;
    for model in &models {
        writeln!(out, "  {}: {}", model.backend(), model.describe())?;
    }
    let mut header = format!("{:>6}", "batch");
    for model in &models {
        let b = model.backend();
        header += &format!(
            " {:>16} {:>16} {:>8}",
            format!("{b} raw pos/s"),
            format!("{b} service"),
            "service"
        );
    }
    if models.len() > 1 {
        header += &format!(" {:>7}", "auto");
    }
    writeln!(out, "{header}")?;
    for &batch in &options.batch_sizes {
        let batch = batch.max(1);
        let mut data = Vec::with_capacity(batch * INPUT_PLANES * side * side);
        for group in encode_group(&mut boards, 0, batch, side) {
            data.extend_from_slice(&group.0);
        }
        let encoded = EncodedBatch::new(&data, side, side)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        let mut line = format!("{batch:>6}");
        let mut raw_rates = Vec::new();
        for model in &models {
            let raw = raw_rate(&mut *model.evaluator(), encoded, options.per_item);
            let service = start_service(model, evaluators, batch)?;
            let served = service_rate(&service, &mut boards, batch, evaluators, options.per_item);
            line += &format!(
                " {:>16} {:>16} {:>7.0}%",
                format_rate(raw),
                format_rate(served),
                100.0 * served / raw.max(1e-9)
            );
            raw_rates.push(raw);
        }
        if let [native, torch] = raw_rates.as_slice() {
            // As the engine's `auto`: libtorch only when clearly faster.
            let choice = if *torch > 1.1 * native {
                "torch"
            } else {
                "native"
            };
            line += &format!(" {choice:>7}");
        }
        writeln!(out, "{line}")?;
    }
    for model in &models {
        if model.precision() != Precision::Fp32 {
            writeln!(
                out,
                "({} in {}, as resolved from --precision)",
                model.backend(),
                model.precision()
            )?;
        }
    }
    Ok(())
}
