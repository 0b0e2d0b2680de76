//! Supervised training from game records.
//!
//! Reads Gomocup TSV files and Piskvork PSQ files, keeps the legal games of
//! one rule (and the board sizes asked for), and trains a [`Network`] to
//! predict the move played (policy) and the game's result from the side to
//! move's view (win/draw/loss). The tournament opening stones are played
//! but are not targets. Each position gets a random symmetry of its board;
//! the validation games are a seeded fraction of the games (never of the
//! positions). Writes checkpoints, `final.safetensors`, `loss.csv` and
//! `loss.png` into the output directory.
//!
//! * [`data`]: record parsing, legality checks, samples, split, batches.
//! * [`trainer`]: the loop, metrics, validation, checkpoints.
//! * [`plot`]: the CSV and the PNG of the loss curve.

pub mod data;
pub mod plot;
pub mod teacher;
pub mod trainer;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::game::{BoardSize, Rule};
use crate::nn::device::{select_device, tune_cpu};
use crate::nn::precision::{Calibration, Precision, PrecisionSetting};
use crate::nn::{NetConfig, Network};
use tch::Kind;

pub use data::{Dataset, LoadStats};
pub use trainer::{LoopResult, Schedule, ValMetrics};

/// Network size when neither `--net` nor `--init` gives one.
pub const DEFAULT_NET: NetConfig = NetConfig {
    blocks: 6,
    channels: 64,
};

/// Options of `pbrain-wuzi train`.
#[derive(clap::Args, Clone, Debug)]
pub struct TrainArgs {
    /// Game records: Gomocup TSV files, Piskvork PSQ files, or directories
    /// searched recursively for *.tsv and *.psq. PSQ files carry no rule
    /// and are read as games of --rule.
    #[arg(required = true, value_name = "DATA")]
    pub data: Vec<PathBuf>,
    /// The tournament's opening file (offset or pos notation) for the PSQ
    /// files, which do not mark the judge's opening stones: each PSQ game's
    /// longest first part that is one of these openings, anywhere and
    /// turned, is not trained on, and a PSQ game from none of them is left
    /// out (Gomocup results folders; TSV records name their own openings).
    #[arg(long, value_name = "FILE")]
    pub psq_openings: Option<PathBuf>,
    /// Rule of the games to train on (freestyle, standard, renju, caro).
    #[arg(long)]
    pub rule: Rule,
    /// Board sizes to keep: N or WIDTHxHEIGHT, repeatable or comma-separated
    /// (default: every size in the data; batches hold one size each).
    #[arg(long = "board", value_name = "SIZE", value_delimiter = ',',
          value_parser = data::parse_board_size)]
    pub boards: Vec<BoardSize>,
    /// Network size BLOCKSxCHANNELS for a new network (default 6x64).
    #[arg(long)]
    pub net: Option<NetConfig>,
    /// Continue from this network file (its size is read from the file).
    #[arg(long, value_name = "PATH")]
    pub init: Option<PathBuf>,
    /// Passes over the training positions (1 to 100000).
    #[arg(long, default_value_t = 1)]
    pub epochs: usize,
    /// Stop after this many optimiser steps.
    #[arg(long)]
    pub max_steps: Option<u64>,
    /// Stop after this many minutes of wall time (from the start, loading
    /// included); the final validation, checkpoint and plot follow. The
    /// schedule is fitted to the time, as scripts/gpu_train.py fits it:
    /// the rate is measured from step 100 on and the plan refitted every
    /// 100 steps after that, to the steps the time leaves (never more than
    /// --epochs or --max-steps plan), so that the learning rate is down its
    /// cosine when the time is up.
    #[arg(long)]
    pub max_minutes: Option<f64>,
    /// Positions per optimiser step (1 to 8192).
    #[arg(long, default_value_t = 256)]
    pub batch_size: usize,
    /// Peak learning rate (AdamW; above 0, at most 1).
    #[arg(long, default_value_t = 1e-3)]
    pub lr: f64,
    /// Learning-rate schedule after the warm-up, over the planned steps
    /// (epochs x batches, or --max-steps when fewer).
    #[arg(long, value_enum, default_value = "cosine")]
    pub schedule: Schedule,
    /// Steps of linear warm-up (at most a tenth of the planned steps).
    #[arg(long, default_value_t = 200)]
    pub warmup_steps: u64,
    /// AdamW (decoupled) weight decay.
    #[arg(long, default_value_t = 1e-4)]
    pub weight_decay: f64,
    /// Weight of the WDL cross-entropy in the loss (0 to 1000).
    #[arg(long, default_value_t = 1.0)]
    pub value_weight: f64,
    /// Self-play records (and --teacher): the share of the search's (the
    /// teacher's) value in a position's value target, the rest being the
    /// game's result. Their policy target is the search's visit shares.
    #[arg(long, default_value_t = crate::train::data::DEFAULT_SEARCH_VALUE_WEIGHT)]
    pub search_value_weight: f32,
    /// A larger network whose move probabilities and win/draw/loss become
    /// the training targets (distillation): each training position is
    /// labelled once before training. Validation keeps the played moves.
    #[arg(long, value_name = "PATH")]
    pub teacher: Option<PathBuf>,
    /// With --teacher: the teacher's share of the policy target, the rest
    /// being the move played. Its share of the value target is
    /// --search-value-weight.
    #[arg(long, default_value_t = 0.8)]
    pub teacher_weight: f32,
    /// Fraction of the games held out for validation.
    #[arg(long, default_value_t = 0.05)]
    pub val_fraction: f64,
    /// Most validation positions evaluated at each epoch end (an evenly
    /// spread subset; 0: all).
    #[arg(long, default_value_t = 20000)]
    pub val_positions: usize,
    /// Seed of the shuffles, the symmetries and the weights, and of the
    /// validation split unless --split-seed is given.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Seed of the validation split alone (default: --seed). A run that
    /// continues from a network keeps the validation games of the run
    /// before it this way, while --seed gives it a new order and new
    /// symmetries rather than the same passes again.
    #[arg(long)]
    pub split_seed: Option<u64>,
    /// cpu, auto, cuda or cuda:N (falls back to the CPU with a note).
    #[arg(long, default_value = "auto")]
    pub device: String,
    /// CPU threads of libtorch and of the teacher's labelling (default: the
    /// machine's cores).
    #[arg(long, value_parser = crate::cli::count_at_most(crate::search::MAX_THREADS))]
    pub torch_threads: Option<usize>,
    /// Threads encoding batches, at most 16 (default: 1 on the CPU, the
    /// cores less one with CUDA).
    #[arg(long, value_parser = crate::cli::count_at_most(trainer::MAX_LOADER_THREADS))]
    pub loader_threads: Option<usize>,
    /// Output directory (created if needed).
    #[arg(long, default_value = "train-out")]
    pub out: PathBuf,
    /// Save a checkpoint every N steps (0: only at epoch ends).
    #[arg(long, default_value_t = 5000)]
    pub checkpoint_every: u64,
    /// Write a CSV row every N steps (at least 1).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..))]
    pub log_every: u64,
    /// Train without the symmetry augmentation.
    #[arg(long)]
    pub no_augment: bool,
    /// No progress output, nor the data's statistics and the file:line of
    /// each skipped record (the summary, with their counts, is still
    /// printed).
    #[arg(long)]
    pub quiet: bool,
    /// Arithmetic of the convolutions: fp32, bf16 (mixed precision: the
    /// weights, batch-norm statistics and optimiser stay fp32), or auto: on
    /// a CPU the faster of the two, measured for a second at start (bf16 on
    /// CPUs with AMX or AVX512-BF16), bf16 on CUDA.
    #[arg(long, default_value = "auto", value_parser = parse_training_precision)]
    pub precision: PrecisionSetting,
}

fn parse_training_precision(s: &str) -> Result<PrecisionSetting, String> {
    match s.parse::<PrecisionSetting>()? {
        PrecisionSetting::Fixed(Precision::Half) => {
            Err("half precision needs loss scaling, which the trainer does not do: use bf16".into())
        }
        PrecisionSetting::Fixed(Precision::Int16) => {
            Err("int16 is a precision of the native inference kernels, not of training: use fp32 or bf16".into())
        }
        setting => Ok(setting),
    }
}

/// The training precision `setting` gives `net`: on a CPU under `auto`, the
/// measured faster one (bf16 only when more than 10% faster, as for
/// inference). Returns it with the rates when measured.
pub fn training_precision(
    setting: PrecisionSetting,
    net: &Network,
    batch: usize,
) -> (Precision, Option<Calibration>) {
    match setting {
        PrecisionSetting::Fixed(p) => (p, None),
        PrecisionSetting::Auto if net.device() != tch::Device::Cpu => (Precision::Bf16, None),
        PrecisionSetting::Auto => {
            let time = Duration::from_millis(500);
            let calibration = Calibration {
                fp32: trainer::training_rate(net, Kind::Float, batch, time),
                bf16: trainer::training_rate(net, Kind::BFloat16, batch, time),
            };
            (calibration.choice(), Some(calibration))
        }
    }
}

impl TrainArgs {
    /// Parses options as on the command line (without the subcommand
    /// name), for tests and tools.
    pub fn parse_from<I, T>(args: I) -> Result<TrainArgs, String>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::Parser;
        #[derive(clap::Parser)]
        #[command(name = "train")]
        struct Wrapper {
            #[command(flatten)]
            args: TrainArgs,
        }
        let all = std::iter::once(std::ffi::OsString::from("train"))
            .chain(args.into_iter().map(Into::into));
        Wrapper::try_parse_from(all)
            .map(|w| w.args)
            .map_err(|e| e.to_string())
    }
}

/// What a training run did and wrote.
#[derive(Clone, Debug)]
pub struct TrainSummary {
    pub rule: Rule,
    pub net: NetConfig,
    pub device: String,
    pub precision: Precision,
    pub data: LoadStats,
    pub train_games: usize,
    pub val_games: usize,
    pub train_positions: usize,
    pub val_positions: usize,
    /// The distillation's labelling (--teacher).
    pub teacher: Option<teacher::Labelled>,
    pub result: LoopResult,
    pub out: PathBuf,
}

impl fmt::Display for TrainSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.result;
        writeln!(
            f,
            "training summary ({} {} on {}, {})",
            self.rule, self.net, self.device, self.precision
        )?;
        writeln!(f, "  data: {}", self.data)?;
        writeln!(
            f,
            "  split by game: {} training games ({} positions), {} validation games ({} positions)",
            self.train_games, self.train_positions, self.val_games, self.val_positions
        )?;
        if let Some(t) = &self.teacher {
            writeln!(f, "  {t}")?;
        }
        writeln!(
            f,
            "  {} steps, {} samples, {:.2} epochs in {:.1} s of training: {:.0} samples/s ({})",
            r.steps, r.samples, r.epochs_done, r.train_seconds, r.samples_per_second, r.stop
        )?;
        if let Some((p, v, a)) = r.last_train {
            writeln!(
                f,
                "  last training figures: policy loss {p:.4}, value loss {v:.4}, accuracy {:.2}%",
                100.0 * a
            )?;
        }
        match r.final_val {
            Some(v) => writeln!(f, "  final {v}")?,
            None => writeln!(f, "  no validation positions")?,
        }
        writeln!(f, "  network: {}", r.final_network.display())?;
        if !r.checkpoints.is_empty() {
            writeln!(f, "  checkpoints: {}", r.checkpoints.len())?;
            for c in &r.checkpoints {
                writeln!(f, "    {}", c.display())?;
            }
        }
        writeln!(f, "  loss curve: {}", r.csv.display())?;
        write!(
            f,
            "  plot: {}{}",
            r.png.display(),
            if r.png_has_text {
                ""
            } else {
                " (no font found under /usr/share/fonts: drawn without text)"
            }
        )
    }
}

/// libtorch's CPU threads: [`tune_cpu`] the first time (it may set the
/// inter-op threads only once per process), the intra-op count afterwards.
fn set_threads(threads: usize) {
    static TUNED: std::sync::Once = std::sync::Once::new();
    let mut first = false;
    TUNED.call_once(|| {
        tune_cpu(threads);
        first = true;
    });
    if !first {
        tch::set_num_threads(threads.max(1) as i32);
    }
}

const MAX_BATCH_SIZE: usize = 8_192;
const MAX_EPOCHS: usize = 100_000;
const MAX_LR: f64 = 1.0;
const MAX_VALUE_WEIGHT: f64 = 1000.0;

fn check_args(args: &TrainArgs) -> Result<(), String> {
    // Bounded: a batch is allocated whole (tch panics rather than failing
    // on an allocation it cannot make), and epochs times batches must not
    // overflow the step count.
    if !(1..=MAX_BATCH_SIZE).contains(&args.batch_size) {
        return Err(format!(
            "--batch-size {} must be 1 to {MAX_BATCH_SIZE}",
            args.batch_size
        ));
    }
    if !(1..=MAX_EPOCHS).contains(&args.epochs) {
        return Err(format!(
            "--epochs {} must be 1 to {MAX_EPOCHS}",
            args.epochs
        ));
    }
    // Bounded above as well: beyond these the first steps overflow fp32
    // and the weights turn to NaN.
    if !(args.lr.is_finite() && args.lr > 0.0 && args.lr <= MAX_LR) {
        return Err(format!(
            "--lr {} must be above 0 and at most {MAX_LR}",
            args.lr
        ));
    }
    if !(args.weight_decay.is_finite() && args.weight_decay >= 0.0) {
        return Err(format!("--weight-decay {} must be >= 0", args.weight_decay));
    }
    if !(0.0..=1.0).contains(&args.search_value_weight) {
        return Err(format!(
            "--search-value-weight {} must be between 0 and 1",
            args.search_value_weight
        ));
    }
    if !(0.0..=1.0).contains(&args.teacher_weight) {
        return Err(format!(
            "--teacher-weight {} must be between 0 and 1",
            args.teacher_weight
        ));
    }
    if !(0.0..=MAX_VALUE_WEIGHT).contains(&args.value_weight) {
        return Err(format!(
            "--value-weight {} must be 0 to {MAX_VALUE_WEIGHT}",
            args.value_weight
        ));
    }
    if !(0.0..1.0).contains(&args.val_fraction) {
        return Err(format!(
            "--val-fraction {} must be in [0, 1)",
            args.val_fraction
        ));
    }
    if let Some(m) = args.max_minutes {
        if !(m.is_finite() && m > 0.0) {
            return Err(format!("--max-minutes {m} must be positive"));
        }
    }
    Ok(())
}

/// Runs a training: loads the data, trains, writes the files, prints and
/// returns the summary.
pub fn run(args: &TrainArgs) -> Result<TrainSummary, String> {
    // tch reports a libtorch failure, most often an allocation too large
    // for the memory (a big batch on a big board), by panicking.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| train(args))).unwrap_or_else(
        |payload| {
            let what = crate::panics::message(&*payload).unwrap_or("no message");
            let what: String = what
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(500)
                .collect();
            Err(format!(
                "training failed: {what} (if libtorch ran out of memory, try a smaller \
                 --batch-size)"
            ))
        },
    )
}

fn train(args: &TrainArgs) -> Result<TrainSummary, String> {
    let started = Instant::now();
    check_args(args)?;
    let cores = crate::cores::usable();
    let threads = args.torch_threads.unwrap_or(cores);
    set_threads(threads);
    let (device, note) = select_device(&args.device)?;
    if let Some(note) = note {
        eprintln!("train: {note}");
    }
    tch::manual_seed(args.seed as i64);
    // The network to start from and the output folder come before the
    // data, whose loading and labelling can take long: a mistyped --init
    // or an --out that is a file fails at once.
    let mut net = match &args.init {
        Some(path) => {
            let net = Network::load(path, device).map_err(|e| e.to_string())?;
            if let Some(asked) = args.net {
                if asked != net.config() {
                    return Err(format!(
                        "--net {asked} differs from the network in {} ({})",
                        path.display(),
                        net.config()
                    ));
                }
            }
            net
        }
        None => Network::new(args.net.unwrap_or(DEFAULT_NET), device),
    };
    std::fs::create_dir_all(&args.out)
        .map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    // An existing folder may still refuse files: known now, not after
    // hours of loading and labelling.
    // Named per process: runs sharing a folder would delete each other's.
    let probe = args
        .out
        .join(format!(".wuzi-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"")
        .and_then(|()| std::fs::remove_file(&probe))
        .map_err(|e| format!("cannot write into {}: {e}", args.out.display()))?;

    let mut dataset = Dataset::load_with_psq_openings(
        &args.data,
        args.rule,
        &args.boards,
        args.psq_openings.as_deref(),
    )?;
    if !args.quiet {
        eprintln!("train: {}", dataset.stats);
        for w in &dataset.stats.warnings {
            eprintln!("train:   {w}");
        }
    }
    if dataset.games.is_empty() {
        return Err(format!(
            "no usable {} game{} in the data ({})",
            args.rule,
            if args.boards.is_empty() {
                String::new()
            } else {
                format!(
                    " on {}",
                    args.boards
                        .iter()
                        .map(|b| b.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            },
            dataset.stats
        ));
    }
    let (train_games, val_games) =
        dataset.split(args.val_fraction, args.split_seed.unwrap_or(args.seed));
    let teacher = match &args.teacher {
        Some(path) => {
            let labelled = teacher::label(
                &mut dataset,
                &train_games,
                path,
                device,
                threads,
                args.teacher_weight,
                !args.quiet,
            )?;
            if !args.quiet {
                eprintln!("train: {labelled}");
            }
            Some(labelled)
        }
        None => None,
    };
    let train_samples = dataset.samples(&train_games);
    let val_samples = dataset.samples(&val_games);

    if !args.quiet {
        eprintln!(
            "train: {} network ({} parameters) on {device:?}; {} training positions, {} validation",
            net.config(),
            net.parameter_count(),
            train_samples.len(),
            val_samples.len()
        );
    }
    let (precision, calibration) = training_precision(args.precision, &net, args.batch_size);
    if !args.quiet {
        match calibration {
            Some(c) => eprintln!(
                "train: precision {precision} (measured {:.0} samples/s in fp32, {:.0} in bf16)",
                c.fp32, c.bf16
            ),
            None => eprintln!("train: precision {precision}"),
        }
    }
    let loader_threads = args
        .loader_threads
        .unwrap_or(if device == tch::Device::Cpu {
            1
        } else {
            cores.saturating_sub(1).max(1)
        });
    let config = trainer::LoopConfig {
        epochs: args.epochs,
        max_steps: args.max_steps,
        deadline: args
            .max_minutes
            .map(|m| started + Duration::from_secs_f64((m * 60.0).min(1e9))),
        batch_size: args.batch_size,
        lr: args.lr,
        schedule: args.schedule,
        warmup_steps: args.warmup_steps,
        weight_decay: args.weight_decay,
        value_weight: args.value_weight,
        search_value_weight: args.search_value_weight,
        augment: !args.no_augment,
        checkpoint_every: args.checkpoint_every,
        log_every: args.log_every,
        val_positions: args.val_positions,
        loader_threads,
        seed: args.seed,
        quiet: args.quiet,
        out: args.out.clone(),
        compute: precision.kind(),
    };
    let dataset = Arc::new(dataset);
    let result = trainer::train(
        &mut net,
        dataset.clone(),
        &train_samples,
        &val_samples,
        &config,
    )?;
    let summary = TrainSummary {
        rule: args.rule,
        net: net.config(),
        device: format!("{device:?}"),
        precision,
        data: dataset.stats.clone(),
        train_games: train_games.len(),
        val_games: val_games.len(),
        train_positions: train_samples.len(),
        val_positions: val_samples.len(),
        teacher,
        result,
        out: args.out.clone(),
    };
    println!("{summary}");
    Ok(summary)
}
