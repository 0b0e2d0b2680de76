//! The evaluator threads: each takes whole batches from the service's
//! queue, encodes symmetries, runs the network and answers every request.

use super::*;

pub(super) fn start_evaluator(
    network: Option<Box<dyn BatchEvaluator>>,
    config: &ServiceConfig,
    requests: &Receiver<Job>,
    index: usize,
) -> std::io::Result<JoinHandle<()>> {
    let requests = requests.clone();
    let config = config.clone();
    std::thread::Builder::new()
        .name(format!("evaluator-{index}"))
        .spawn(move || evaluator(network, &config, &requests, config.seed ^ index as u64))
}

/// An evaluator thread: gathers batches of one board size and runs them.
pub(super) fn evaluator(
    mut network: Option<Box<dyn BatchEvaluator>>,
    config: &ServiceConfig,
    requests: &Receiver<Job>,
    seed: u64,
) {
    let mut rng = seed | 1;
    let batch_size = config.batch_size.max(1);
    let mut queued: VecDeque<Request> = VecDeque::new();
    let mut retiring = false;
    loop {
        if queued.is_empty() {
            if retiring {
                return;
            }
            match requests.recv() {
                Ok(Job::Positions(group)) => queued.extend(group),
                Ok(Job::Retire) | Err(_) => return,
            }
        }
        let deadline = Instant::now() + config.max_wait;
        while queued.len() < batch_size && !retiring {
            let more = if config.max_wait.is_zero() {
                requests.try_recv().ok()
            } else {
                requests.recv_deadline(deadline).ok()
            };
            match more {
                Some(Job::Positions(group)) => queued.extend(group),
                Some(Job::Retire) => retiring = true,
                None => break,
            }
        }
        // What the submitters gave up on goes unevaluated; dropping a
        // request tells its receiver.
        queued.retain(|request| !request.cancelled());
        let Some(first) = queued.front() else {
            continue;
        };
        let (height, width, all_symmetries) = (first.height, first.width, first.all_symmetries);
        // The first request's board size and kind, in queue order; others
        // wait.
        let mut batch = Vec::with_capacity(batch_size);
        let mut rest = VecDeque::with_capacity(queued.len());
        for request in queued.drain(..) {
            if batch.len() < batch_size
                && request.height == height
                && request.width == width
                && request.all_symmetries == all_symmetries
            {
                batch.push(request);
            } else {
                rest.push_back(request);
            }
        }
        queued = rest;
        let symmetries: Vec<Symmetry> = match config.symmetry {
            _ if all_symmetries => Symmetry::all_for(height, width).to_vec(),
            SymmetryMode::None => vec![Symmetry::IDENTITY],
            SymmetryMode::All => Symmetry::all_for(height, width).to_vec(),
            SymmetryMode::Random => {
                // xorshift64: cheap, and reproducible from the seed.
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let all = Symmetry::all_for(height, width);
                vec![all[(rng % all.len() as u64) as usize]]
            }
        };
        let results = match network.as_mut() {
            Some(network) => {
                // A network that panics (libtorch's errors surface as
                // panics) must not end this thread: the service would keep
                // queueing to no one and every search would wait forever.
                // The batch gets the no-knowledge answer instead.
                let run = || run_batch(&mut **network, &batch, height, width, &symmetries);
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|_| {
                    FAILED_BATCHES.fetch_add(1, Ordering::Relaxed);
                    if !PANIC_REPORTED.swap(true, Ordering::Relaxed) {
                        tracing::error!("the network failed on a batch; such batches are answered with uniform priors and an even value");
                    }
                    batch
                        .iter()
                        .map(|r| uniform(&r.features, height * width))
                        .collect()
                })
            }
            None => batch
                .iter()
                .map(|r| uniform(&r.features, height * width))
                .collect(),
        };
        for (request, evaluation) in batch.into_iter().zip(results) {
            // The submitter may have given up waiting; that is fine.
            let _ = request.reply.send(evaluation);
        }
    }
}

/// The uniform evaluation of encoded features: equal probability on every
/// legal cell, and an even value.
pub(super) fn uniform(features: &[f32], area: usize) -> Evaluation {
    let legal = &features[3 * area..4 * area];
    let count = legal.iter().filter(|&&v| v > 0.0).count().max(1) as f32;
    Evaluation {
        policy: legal
            .iter()
            .map(|&v| if v > 0.0 { 1.0 / count } else { 0.0 })
            .collect(),
        wdl: [0.35, 0.3, 0.35],
    }
}

/// Runs one batch through the network under each symmetry and averages.
pub(super) fn run_batch(
    network: &mut dyn BatchEvaluator,
    batch: &[Request],
    height: usize,
    width: usize,
    symmetries: &[Symmetry],
) -> Vec<Evaluation> {
    let n = batch.len();
    let area = height * width;
    let mut data = Vec::with_capacity(n * INPUT_PLANES * area);
    for request in batch {
        data.extend_from_slice(&request.features);
    }
    // Every request was checked to be one position of this size when it
    // was queued (`submit_features`).
    let Ok(encoded) = EncodedBatch::new(&data, height, width) else {
        tracing::error!("a batch of {n} positions is not whole {width}x{height} positions");
        return batch.iter().map(|r| uniform(&r.features, area)).collect();
    };
    let BatchOutput { policy, wdl } = evaluate_symmetries(network, encoded, symmetries);
    (0..n)
        .map(|i| {
            let evaluation = Evaluation {
                policy: policy[i * area..(i + 1) * area].to_vec(),
                wdl: [wdl[3 * i], wdl[3 * i + 1], wdl[3 * i + 2]],
            };
            let finite = evaluation.wdl.iter().all(|v| v.is_finite())
                && evaluation.policy.iter().all(|v| v.is_finite());
            if finite {
                return evaluation;
            }
            // Weights that load (all finite) may still overflow on some
            // input; a NaN would spread through every value it is averaged
            // into, so the position gets the no-knowledge answer.
            NON_FINITE_ANSWERS.fetch_add(1, Ordering::Relaxed);
            if !NON_FINITE_REPORTED.swap(true, Ordering::Relaxed) {
                tracing::error!("the network answered a value that is not finite; such answers are replaced by uniform priors and an even value");
            }
            uniform(&batch[i].features, area)
        })
        .collect()
}

/// Whether a non-finite network output was logged (once per process).
static NON_FINITE_REPORTED: AtomicBool = AtomicBool::new(false);

/// Network answers replaced because they were not finite, in this process.
static NON_FINITE_ANSWERS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many network answers of this process were not finite (and replaced
/// by no knowledge): a network loaded is checked by it on its warm-up.
pub fn non_finite_answers() -> u64 {
    NON_FINITE_ANSWERS.load(Ordering::Relaxed)
}

/// Batches the network failed on (answered with no knowledge), in this
/// process.
static FAILED_BATCHES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many batches of this process the network failed on: a network
/// loaded is checked by it on its warm-up, as by [`non_finite_answers`].
pub fn failed_batches() -> u64 {
    FAILED_BATCHES.load(Ordering::Relaxed)
}

/// Whether a network failure was logged (once per process).
static PANIC_REPORTED: AtomicBool = AtomicBool::new(false);

/// Evaluates encoded positions, averaged over `symmetries` (evaluated as
/// one batch of `positions * symmetries.len()`).
pub fn evaluate_symmetries(
    network: &mut dyn BatchEvaluator,
    encoded: EncodedBatch<'_>,
    symmetries: &[Symmetry],
) -> BatchOutput {
    if let [Symmetry::IDENTITY] = symmetries {
        return network.evaluate(encoded);
    }
    let (data, n) = (encoded.planes(), encoded.positions());
    let (height, width, area) = (encoded.height(), encoded.width(), encoded.area());
    let position = INPUT_PLANES * area;
    let mut transformed = vec![0.0f32; symmetries.len() * data.len()];
    // Where each cell goes under each symmetry.
    let maps: Vec<Vec<usize>> = symmetries
        .iter()
        .map(|s| {
            (0..area)
                .map(|cell| {
                    let (x, y) = s.map_cell(cell % width, cell / width, height, width);
                    y * width + x
                })
                .collect()
        })
        .collect();
    for (k, s) in symmetries.iter().enumerate() {
        let order = s.plane_order();
        for i in 0..n {
            let src = &data[i * position..][..position];
            let dst = &mut transformed[(k * n + i) * position..][..position];
            for (plane, &from) in order.iter().enumerate() {
                let src = &src[from * area..][..area];
                let dst = &mut dst[plane * area..][..area];
                for (cell, &to) in maps[k].iter().enumerate() {
                    dst[to] = src[cell];
                }
            }
        }
    }
    let Ok(transformed) = EncodedBatch::new(&transformed, height, width) else {
        // Whole positions in, whole positions out: cannot happen.
        return network.evaluate(encoded);
    };
    let BatchOutput { policy, wdl } = network.evaluate(transformed);
    let share = 1.0 / symmetries.len() as f32;
    let mut mean_policy = vec![0.0f32; n * area];
    let mut mean_wdl = vec![0.0f32; n * 3];
    for k in 0..symmetries.len() {
        for i in 0..n {
            let evaluated = &policy[(k * n + i) * area..][..area];
            let out = &mut mean_policy[i * area..][..area];
            for (cell, &to) in maps[k].iter().enumerate() {
                out[cell] += evaluated[to] * share;
            }
            for j in 0..3 {
                mean_wdl[i * 3 + j] += wdl[(k * n + i) * 3 + j] * share;
            }
        }
    }
    BatchOutput {
        policy: mean_policy,
        wdl: mean_wdl,
    }
}
