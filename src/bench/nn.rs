//! `bench nn`: network throughput per batch size, raw libtorch forward
//! against the evaluation service (encoding and queueing included).

use std::collections::VecDeque;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use tch::{Device, Tensor};

use crate::bench::format_rate;
use crate::game::{Board, BoardSize, Point, Rule};
use crate::nn::device::{select_device, tune_cpu};
use crate::nn::precision::forward_rate;
use crate::nn::{
    encode, EvalService, EvaluatorThreads, NetConfig, Network, Precision, PrecisionSetting,
    ServiceConfig, SymmetryMode, INPUT_PLANES,
};

/// What to measure.
#[derive(Clone, Debug)]
pub struct NnBenchOptions {
    /// A network file; without one, random weights of `net`'s size.
    pub weights: Option<PathBuf>,
    pub net: NetConfig,
    pub device: String,
    pub threads: usize,
    /// Evaluator threads of the service (each with `threads` torch
    /// threads); `None`: 1 for `bench nn`, as many as the search threads
    /// for `bench search` (the engine's `auto`).
    pub evaluators: Option<usize>,
    pub board_side: u32,
    pub batch_sizes: Vec<usize>,
    pub per_item: Duration,
    /// Precision of the service (`auto`: measured, as the engine does).
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

fn encoded_batch(boards: &mut [Board], batch: usize, side: usize, device: Device) -> Tensor {
    let area = INPUT_PLANES * side * side;
    let mut data = vec![0.0f32; batch * area];
    for (i, chunk) in data.chunks_mut(area).enumerate() {
        let n = boards.len();
        encode(&mut boards[i % n], chunk, side, side);
    }
    Tensor::from_slice(&data)
        .view([batch as i64, INPUT_PLANES as i64, side as i64, side as i64])
        .to_device(device)
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

/// Sets libtorch up as `options` say and loads (or creates) the network,
/// noting a device fallback in `out`.
pub fn bench_network(
    options: &NnBenchOptions,
    out: &mut impl Write,
) -> io::Result<(Network, Device)> {
    let fail = |e: String| io::Error::new(io::ErrorKind::InvalidInput, e);
    tune_cpu(options.threads);
    let (device, note) = select_device(&options.device).map_err(fail)?;
    if let Some(note) = note {
        writeln!(out, "note: {note}")?;
    }
    let network = match &options.weights {
        Some(path) => Network::load(path, device).map_err(|e| fail(e.to_string()))?,
        None => Network::new(options.net, device),
    };
    Ok((network, device))
}

/// Prints the figures.
pub fn run(options: &NnBenchOptions, out: &mut impl Write) -> io::Result<()> {
    let fail = |e: String| io::Error::new(io::ErrorKind::InvalidInput, e);
    let (network, device) = bench_network(options, out)?;
    let side = options.board_side as usize;
    let mut boards = bench_boards(options.board_side).map_err(fail)?;
    let evaluators = options.evaluators.unwrap_or(1).max(1);
    writeln!(
        out,
        "bench nn: net {} ({} parameters, {}), device {:?}, {} torch threads, service with {} evaluator(s), \
         {side}x{side} board, {:.1} s per figure",
        network.config(),
        network.parameter_count(),
        options.weights.as_ref().map_or("random weights".to_string(), |p| p.display().to_string()),
        device,
        options.threads,
        evaluators,
        options.per_item.as_secs_f64()
    )?;
    writeln!(
        out,
        "{:>6} {:>14} {:>14} {:>10} {:>14} {:>9} {:>8}",
        "batch",
        "fp32 raw pos/s",
        "bf16 raw pos/s",
        "bf16/fp32",
        "service pos/s",
        "precision",
        "service"
    )?;
    // Raw rates of the inference network the service runs (batch norms
    // folded), in each precision.
    let fp32_network = network.freeze(Precision::Fp32);
    let bf16_network = network.freeze(Precision::Bf16);
    for &batch in &options.batch_sizes {
        let batch = batch.max(1);
        // Raw: the forward pass (with softmax) of a ready tensor.
        let input = encoded_batch(&mut boards, batch, side, device);
        let raw = forward_rate(&fp32_network, &input, options.per_item);
        let raw_bf16 = forward_rate(&bf16_network, &input, options.per_item);

        // Service: encoding in this thread, batching and evaluation in the
        // evaluators; one batch more in flight than evaluators, so that
        // encoding overlaps evaluation.
        let config = ServiceConfig {
            batch_size: batch,
            evaluator_threads: EvaluatorThreads::Fixed(evaluators),
            symmetry: SymmetryMode::None,
            precision: options.precision,
            ..ServiceConfig::default()
        };
        let service = EvalService::start(network.duplicate(), config)?;
        let precision = service.precision();
        let chosen_raw = if precision == Precision::Bf16 {
            raw_bf16
        } else {
            raw
        };
        let mut in_flight = VecDeque::new();
        let mut answered = 0u64;
        let mut next = 0usize;
        let mut submit = |service: &EvalService, in_flight: &mut VecDeque<_>| {
            in_flight.extend(service.submit_features(encode_group(&mut boards, next, batch, side)));
            next += batch;
        };
        for _ in 0..evaluators {
            submit(&service, &mut in_flight);
        }
        let start = Instant::now();
        while start.elapsed() < options.per_item {
            submit(&service, &mut in_flight);
            for _ in 0..batch {
                if let Some(answer) = in_flight.pop_front() {
                    if answer.recv().is_ok() {
                        answered += 1;
                    }
                }
            }
        }
        let served = answered as f64 / start.elapsed().as_secs_f64();
        drop(in_flight);
        drop(service);
        writeln!(
            out,
            "{batch:>6} {:>14} {:>14} {:>9.2}x {:>14} {:>9} {:>7.0}%",
            format_rate(raw),
            format_rate(raw_bf16),
            raw_bf16 / raw.max(1e-9),
            format_rate(served),
            precision.to_string(),
            100.0 * served / chosen_raw.max(1e-9)
        )?;
    }
    Ok(())
}
