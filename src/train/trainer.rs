//! The training loop: batches prepared on CPU threads ahead of the
//! optimiser, AdamW with a warm-up and a learning-rate schedule, metrics,
//! validation, checkpoints, the loss curve.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

mod producer;
mod progress;

use producer::Producer;
pub use producer::MAX_LOADER_THREADS;
use progress::{Interval, Logger};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tch::nn::OptimizerConfig;
use tch::{nn, Device, Kind, Tensor};

use crate::nn::symmetry::Symmetry;
use crate::nn::Network;
use crate::train::data::{make_batch_with, rng, Batch, Dataset, Sample};
use crate::train::plot::{self, CsvLog, Record};

/// How the learning rate changes over the run (after the warm-up).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Schedule {
    /// Half a cosine from the base rate down to 1% of it.
    Cosine,
    /// The base rate, a tenth of it after half the steps, a hundredth after
    /// three quarters.
    Step,
    /// The base rate throughout.
    Constant,
}

/// The steps a schedule should plan for when `step` are done, they run at
/// `rate` a second and `left` seconds remain: what fits (less a margin for
/// the validations and checkpoints), never more than `planned`, at least
/// one more.
pub fn fitted_total(step: u64, rate: f64, left: f64, planned: u64) -> u64 {
    let more = if rate.is_finite() && left.is_finite() {
        (0.97 * rate.max(0.0) * left.max(0.0)) as u64
    } else {
        u64::MAX
    };
    planned.min(step.saturating_add(more)).max(step + 1)
}

/// The learning rate at `step` (0-based) of `total`.
pub fn learning_rate(base: f64, schedule: Schedule, warmup: u64, step: u64, total: u64) -> f64 {
    let warm = if step < warmup {
        (step + 1) as f64 / warmup as f64
    } else {
        1.0
    };
    let span = total.saturating_sub(warmup).max(1) as f64;
    let progress = (step.saturating_sub(warmup) as f64 / span).clamp(0.0, 1.0);
    let factor = match schedule {
        Schedule::Cosine => 0.01 + 0.99 * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos()),
        Schedule::Step if progress < 0.5 => 1.0,
        Schedule::Step if progress < 0.75 => 0.1,
        Schedule::Step => 0.01,
        Schedule::Constant => 1.0,
    };
    base * warm * factor
}

/// Settings of the loop (from `TrainArgs`, checked).
#[derive(Clone, Debug)]
pub struct LoopConfig {
    pub epochs: usize,
    pub max_steps: Option<u64>,
    /// Stop when this instant is passed.
    pub deadline: Option<Instant>,
    pub batch_size: usize,
    pub lr: f64,
    pub schedule: Schedule,
    pub warmup_steps: u64,
    pub weight_decay: f64,
    pub value_weight: f64,
    /// Weight of a self-play position's search value in its value target.
    pub search_value_weight: f32,
    pub augment: bool,
    pub checkpoint_every: u64,
    pub log_every: u64,
    pub val_positions: usize,
    pub loader_threads: usize,
    pub seed: u64,
    pub quiet: bool,
    pub out: PathBuf,
    /// The kind convolutions and linear layers compute in (mixed precision
    /// when not Float; the weights and the optimiser stay fp32).
    pub compute: Kind,
}

/// Validation figures, averaged over positions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValMetrics {
    pub positions: usize,
    pub policy_loss: f64,
    /// Top-1 policy accuracy.
    pub accuracy: f64,
    pub value_loss: f64,
    /// How often the most likely WDL class is the game's result.
    pub value_accuracy: f64,
}

impl std::fmt::Display for ValMetrics {
    /// `validation (N positions): policy loss ..., value accuracy ...%`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "validation ({} positions): policy loss {:.4}, policy accuracy {:.2}%, \
             value loss {:.4}, value accuracy {:.2}%",
            self.positions,
            self.policy_loss,
            100.0 * self.accuracy,
            self.value_loss,
            100.0 * self.value_accuracy
        )
    }
}

/// What the loop did.
#[derive(Clone, Debug)]
pub struct LoopResult {
    pub steps: u64,
    pub samples: u64,
    pub epochs_done: f64,
    /// Seconds spent in training steps (validation and saving excluded).
    pub train_seconds: f64,
    /// Training samples per second over those seconds.
    pub samples_per_second: f64,
    /// Why the loop ended.
    pub stop: String,
    /// Mean training losses and accuracy over the last logged interval.
    pub last_train: Option<(f64, f64, f64)>,
    pub final_val: Option<ValMetrics>,
    pub checkpoints: Vec<PathBuf>,
    pub final_network: PathBuf,
    pub csv: PathBuf,
    pub png: PathBuf,
    /// False when no font was found and the plot has no text.
    pub png_has_text: bool,
    pub records: Vec<Record>,
}

type Produced = (usize, Result<Batch, String>);

fn scalar(t: &Tensor) -> Result<f64, String> {
    t.f_double_value(&[])
        .map_err(|e| format!("libtorch: {}", e.to_string().lines().next().unwrap_or("")))
}

/// Runs the validation positions through the network (batch statistics
/// frozen, no gradients).
pub fn validate(
    net: &Network,
    data: &Arc<Dataset>,
    samples: &[Sample],
    batch_size: usize,
    threads: usize,
    search_value_weight: f32,
) -> Result<Option<ValMetrics>, String> {
    if samples.is_empty() {
        return Ok(None);
    }
    let groups = data.by_size(samples);
    let mut plan = Vec::new();
    for group in groups.values() {
        for chunk in group.chunks(batch_size.max(1)) {
            plan.push(
                chunk
                    .iter()
                    .map(|&s| (s, Symmetry::IDENTITY))
                    .collect::<Vec<_>>(),
            );
        }
    }
    let device = net.device();
    let mut producer = Producer::start(data.clone(), plan, threads, search_value_weight);
    let (mut n, mut pl, mut vl, mut correct, mut value_correct) = (0usize, 0.0, 0.0, 0.0, 0.0);
    tch::no_grad(|| -> Result<(), String> {
        while let Some(batch) = producer.next_batch() {
            let batch = batch?;
            let input = batch.input.to_device(device);
            let policy = batch.policy.to_device(device);
            let wdl = batch.wdl.to_device(device);
            let (p, v) = net.forward(&input, false);
            let k = batch.len as f64;
            pl += scalar(&soft_cross_entropy(
                &p,
                &batch.policy_dist.to_device(device),
            ))? * k;
            vl += scalar(&soft_cross_entropy(&v, &batch.wdl_dist.to_device(device)))? * k;
            correct += scalar(&p.argmax(-1, false).eq_tensor(&policy).sum(Kind::Float))?;
            value_correct += scalar(&v.argmax(-1, false).eq_tensor(&wdl).sum(Kind::Float))?;
            n += batch.len;
        }
        Ok(())
    })?;
    if n == 0 {
        return Ok(None);
    }
    let n_f = n as f64;
    Ok(Some(ValMetrics {
        positions: n,
        policy_loss: pl / n_f,
        accuracy: correct / n_f,
        value_loss: vl / n_f,
        value_accuracy: value_correct / n_f,
    }))
}

fn save(net: &Network, path: &Path) -> Result<PathBuf, String> {
    net.save(path).map_err(|e| e.to_string())?;
    Ok(path.to_path_buf())
}

/// Trains `net` on the training samples, validating on `val_samples` at
/// the end of each epoch (and at an early stop).
pub fn train(
    net: &mut Network,
    data: Arc<Dataset>,
    train_samples: &[Sample],
    val_samples: &[Sample],
    config: &LoopConfig,
) -> Result<LoopResult, String> {
    if train_samples.is_empty() {
        return Err("no training positions".into());
    }
    let device: Device = net.device();
    let groups = data.by_size(train_samples);
    let batches_per_epoch: u64 = groups
        .values()
        .map(|g| g.len().div_ceil(config.batch_size.max(1)) as u64)
        .sum();
    let planned = batches_per_epoch.saturating_mul(config.epochs as u64);
    let planned_steps = config.max_steps.map_or(planned, |m| m.min(planned)).max(1);
    let mut total_steps = planned_steps;
    let mut warmup = config.warmup_steps.min(total_steps / 10);
    // When and at which step the speed was last measured (for a deadline).
    let mut timed_from: Option<(Instant, u64)> = None;
    let mut opt = nn::AdamW {
        wd: config.weight_decay,
        ..Default::default()
    }
    .build(net.var_store(), config.lr)
    .map_err(|e| format!("cannot build the optimiser: {e}"))?;

    // Validation positions: all of them, or an evenly spread subset.
    let val_subset: Vec<Sample> =
        if config.val_positions > 0 && val_samples.len() > config.val_positions {
            let (n, k) = (val_samples.len(), config.val_positions);
            (0..k).map(|i| val_samples[i * n / k]).collect()
        } else {
            val_samples.to_vec()
        };
    let validate_net = |net: &Network| {
        validate(
            net,
            &data,
            &val_subset,
            config.batch_size,
            config.loader_threads,
            config.search_value_weight,
        )
    };

    let csv_path = config.out.join("loss.csv");
    let png_path = config.out.join("loss.png");
    let mut csv = CsvLog::create(&csv_path)?;
    let mut records: Vec<Record> = Vec::new();
    let mut checkpoints = Vec::new();
    let mut rng = rng(config.seed ^ 0x7261_696E);
    let mut log = Logger::new(config.quiet);
    let log_every = config.log_every.max(1);

    let mut step: u64 = 0;
    let mut samples_seen: u64 = 0;
    let mut train_seconds = 0.0;
    let mut interval = Interval::default();
    let mut last_train = None;
    let mut final_val = None;
    let mut val_current = false;
    let mut ema: Option<(f64, f64, f64)> = None;
    let mut stop = format!("{} epochs done", config.epochs);
    let mut epochs_done = 0.0;

    'epochs: for epoch in 1..=config.epochs {
        if config.max_steps.is_some_and(|m| step >= m)
            || config.deadline.is_some_and(|d| Instant::now() >= d)
        {
            stop = if config.max_steps.is_some_and(|m| step >= m) {
                format!("--max-steps {step} reached")
            } else {
                "--max-minutes reached".into()
            };
            break;
        }
        let plan = data.epoch_plan(&groups, config.batch_size, config.augment, &mut rng);
        let batches = plan.len();
        log.start_epoch(epoch, config.epochs, batches);
        let mut producer = Producer::start(
            data.clone(),
            plan,
            config.loader_threads,
            config.search_value_weight,
        );
        let mut done_in_epoch = 0usize;
        loop {
            if config.max_steps.is_some_and(|m| step >= m) {
                stop = format!("--max-steps {} reached", step);
                break;
            }
            if config.deadline.is_some_and(|d| Instant::now() >= d) {
                stop = "--max-minutes reached".into();
                break;
            }
            let started = Instant::now();
            let Some(batch) = producer.next_batch() else {
                break;
            };
            let batch = batch?;
            let lr = learning_rate(config.lr, config.schedule, warmup, step, total_steps);
            opt.set_lr(lr);
            let input = batch.input.to_device(device);
            let policy = batch.policy.to_device(device);
            let (p, v) = net.forward_in(&input, true, config.compute);
            let policy_loss = soft_cross_entropy(&p, &batch.policy_dist.to_device(device));
            let value_loss = soft_cross_entropy(&v, &batch.wdl_dist.to_device(device));
            let loss = &policy_loss + &value_loss * config.value_weight;
            // Checked before the step: a non-finite loss would turn every
            // weight to NaN, and a later checkpoint would keep them.
            let total = scalar(&loss)?;
            if !total.is_finite() {
                return Err(format!(
                    "training diverged at step {}: loss {total} (try a lower --lr)",
                    step + 1
                ));
            }
            opt.backward_step(&loss);
            let accuracy = tch::no_grad(|| {
                p.argmax(-1, false)
                    .eq_tensor(&policy)
                    .to_kind(Kind::Float)
                    .mean(Kind::Float)
            });
            let (pl, vl, acc) = (
                scalar(&policy_loss)?,
                scalar(&value_loss)?,
                scalar(&accuracy)?,
            );
            let seconds = started.elapsed().as_secs_f64();
            step += 1;
            done_in_epoch += 1;
            // Under a deadline the schedule is fitted to the time, as
            // gpu_train.py fits it: cut at the deadline, a cosine planned
            // over more steps left the last weights at a high rate.
            // The rate is measured from step 100 on (past the start-up),
            // validations and checkpoints included: they recur, and a
            // window of the last hundred steps would see the plan shrink
            // and grow back around each.
            if let (Some(deadline), true) = (config.deadline, step.is_multiple_of(100)) {
                let now = Instant::now();
                match timed_from {
                    Some((since, from)) if step > from => {
                        let rate = (step - from) as f64 / now.duration_since(since).as_secs_f64();
                        let left = deadline.saturating_duration_since(now).as_secs_f64();
                        total_steps = fitted_total(step, rate, left, planned_steps);
                        warmup = warmup.min((total_steps / 10).max(1));
                    }
                    Some(_) => {}
                    None => timed_from = Some((now, step)),
                }
            }
            let k = batch.len as u64;
            samples_seen += k;
            train_seconds += seconds;
            val_current = false;
            interval.steps += 1;
            interval.samples += k;
            interval.policy += pl * k as f64;
            interval.value += vl * k as f64;
            interval.accuracy += acc * k as f64;
            interval.seconds += seconds;
            let smoothed = match ema {
                None => (pl, vl, acc),
                Some((a, b, c)) => (
                    0.95 * a + 0.05 * pl,
                    0.95 * b + 0.05 * vl,
                    0.95 * c + 0.05 * acc,
                ),
            };
            ema = Some(smoothed);
            let rate = interval.samples as f64 / interval.seconds.max(1e-9);
            log.progress(format!(
                "loss {:.3} (policy {:.3}, value {:.3}) acc {:.1}% {:.0} samples/s lr {:.1e}",
                smoothed.0 + config.value_weight * smoothed.1,
                smoothed.0,
                smoothed.1,
                100.0 * smoothed.2,
                rate,
                lr
            ));
            epochs_done = (epoch - 1) as f64 + done_in_epoch as f64 / batches.max(1) as f64;
            if step.is_multiple_of(log_every) {
                let means = interval.means();
                last_train = means.or(last_train);
                let record = Record {
                    step,
                    epoch: epochs_done,
                    samples: samples_seen,
                    lr,
                    train_policy_loss: means.map(|m| m.0),
                    train_value_loss: means.map(|m| m.1),
                    train_accuracy: means.map(|m| m.2),
                    ..Default::default()
                };
                csv.append(&record)?;
                records.push(record);
                interval = Interval::default();
            }
            if config.checkpoint_every > 0 && step.is_multiple_of(config.checkpoint_every) {
                let path = config.out.join(format!("step-{step:07}.safetensors"));
                checkpoints.push(save(net, &path)?);
            }
        }
        drop(producer);
        let finished = done_in_epoch == batches;
        if finished {
            epochs_done = epoch as f64;
        }
        // Validation and a checkpoint at the end of each epoch (and at an
        // early stop, for the final figures).
        if done_in_epoch > 0 || !val_current {
            let val = validate_net(net)?;
            val_current = true;
            final_val = val;
            let means = interval.means();
            last_train = means.or(last_train);
            let record = Record {
                step,
                epoch: epochs_done,
                samples: samples_seen,
                lr: learning_rate(
                    config.lr,
                    config.schedule,
                    warmup,
                    step.saturating_sub(1),
                    total_steps,
                ),
                train_policy_loss: means.map(|m| m.0),
                train_value_loss: means.map(|m| m.1),
                train_accuracy: means.map(|m| m.2),
                val_policy_loss: val.map(|v| v.policy_loss),
                val_accuracy: val.map(|v| v.accuracy),
                val_value_loss: val.map(|v| v.value_loss),
            };
            csv.append(&record)?;
            records.push(record);
            interval = Interval::default();
            if let Some(v) = val {
                log.note(&format!("epoch {epoch}: {v}"));
            }
            if finished {
                let path = config.out.join(format!("epoch-{epoch:03}.safetensors"));
                checkpoints.push(save(net, &path)?);
            }
        }
        if !finished {
            break 'epochs;
        }
    }
    // A run stopped before its first step (`--max-steps 0`, or a deadline
    // already passed) still reports the network's figures: that is how a
    // network is measured on a split without being trained.
    if !val_current {
        final_val = validate_net(net)?;
        if let Some(v) = final_val {
            log.note(&format!("before any step: {v}"));
        }
    }
    log.finish();
    // The plot before the network: a final.safetensors newer than the
    // run's start means the run finished.
    let png_has_text = plot::write_png(&png_path, &records)?;
    let final_network = save(net, &config.out.join("final.safetensors"))?;
    Ok(LoopResult {
        steps: step,
        samples: samples_seen,
        epochs_done,
        train_seconds,
        samples_per_second: samples_seen as f64 / train_seconds.max(1e-9),
        stop,
        last_train,
        final_val,
        checkpoints,
        final_network,
        csv: csv_path,
        png: png_path,
        png_has_text,
        records,
    })
}

/// Cross-entropy of `logits` [N, C] against target distributions `dist`
/// [N, C], averaged over rows (with one-hot targets, the usual
/// cross-entropy), computed in fp32 whatever the logits' precision.
fn soft_cross_entropy(logits: &Tensor, dist: &Tensor) -> Tensor {
    let log_p = logits.log_softmax(-1, Kind::Float);
    -(log_p * dist)
        .sum_dim_intlist(Some(&[-1i64][..]), false, Kind::Float)
        .mean(Kind::Float)
}

/// Training samples per second of `net` computing in `compute`: a few
/// optimiser-free forward and backward passes on a batch of empty 15x15
/// boards for about `time`, after one warm-up pass. Used to choose the
/// training precision by measurement.
pub fn training_rate(net: &Network, compute: Kind, batch: usize, time: Duration) -> f64 {
    let device = net.device();
    let batch = batch.max(1) as i64;
    let input = crate::nn::precision::empty_boards(batch as usize, device);
    let targets = Tensor::zeros([batch], (Kind::Int64, device));
    let pass = || {
        let (p, v) = net.forward_in(&input, false, compute);
        let loss = p.cross_entropy_for_logits(&targets) + v.cross_entropy_for_logits(&targets);
        loss.backward();
        // Copying the loss back makes GPU work finish before the clock reads.
        let _ = loss.to_device(Device::Cpu);
    };
    // The gradients left behind are cleared by the optimiser's next step.
    crate::nn::measure_rate(batch as usize, time, pass)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_fits_the_schedule_to_the_steps_there_is_time_for() {
        // 10 steps a second, 60 s left after 1,000 steps: 582 more fit.
        assert_eq!(fitted_total(1_000, 10.0, 60.0, 100_000), 1_582);
        // Time for more than planned: the plan stands.
        assert_eq!(fitted_total(1_000, 10.0, 6_000.0, 5_000), 5_000);
        // No time left: one more step, the end of the cosine.
        assert_eq!(fitted_total(1_000, 10.0, 0.0, 5_000), 1_001);
        assert_eq!(fitted_total(1_000, f64::INFINITY, 1.0, 5_000), 5_000);
        // Fitted to 1,582 steps, the rate at step 1,581 is the schedule's
        // last: 1% of the base under the cosine.
        let end = learning_rate(1e-3, Schedule::Cosine, 0, 1_581, 1_582);
        assert!((end - 1e-5).abs() < 1e-7, "{end}");
    }

    #[test]
    fn schedules_warm_up_and_decay() {
        let lr = |s, step| learning_rate(1.0, s, 10, step, 110);
        assert!((lr(Schedule::Cosine, 0) - 0.1).abs() < 1e-9);
        assert!((lr(Schedule::Cosine, 9) - 1.0).abs() < 1e-9);
        assert!((lr(Schedule::Cosine, 60) - 0.505).abs() < 1e-9);
        assert!((lr(Schedule::Cosine, 110) - 0.01).abs() < 1e-9);
        assert_eq!(lr(Schedule::Step, 30), 1.0);
        assert!((lr(Schedule::Step, 70) - 0.1).abs() < 1e-12);
        assert!((lr(Schedule::Step, 100) - 0.01).abs() < 1e-12);
        assert_eq!(lr(Schedule::Constant, 100), 1.0);
        // No warm-up, one step.
        assert!((learning_rate(2.0, Schedule::Cosine, 0, 0, 1) - 2.0).abs() < 1e-9);
    }
}
