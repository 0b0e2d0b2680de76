//! The native inference backend: the network evaluated by the engine's own
//! CPU kernels, without libtorch. It reads the same safetensors files and
//! computes what `model::Frozen::evaluate` computes in fp32 (or the same
//! with the products' operands in bf16, on CPUs with AVX512-BF16, or in
//! 16-bit integers, on CPUs with AVX2).
//!
//! Why not libtorch on the CPU: at the batch sizes a search makes (1-32)
//! its convolutions run at about half of one core's fp32 peak, and it
//! needs hundreds of megabytes of libraries; tournaments run brains on
//! AVX2 CPUs from an 8 MB zip. The 3x3 convolutions here use Winograd's
//! F(4x4, 3x3) as AlphaGomoku does, or F(5x5, 3x3) where its tiles fit the
//! board better (a fifth to a quarter of the multiplications); the rest
//! are small matrix products. The measurements behind the choice
//! are in docs/native-backend.md.

mod gemm;
pub mod simd;
mod weights;
pub mod winograd;

use std::path::Path;
use std::sync::{Arc, OnceLock};

use crate::nn::batch::{measure_rate, BatchOutput, EncodedBatch};
use crate::nn::features::INPUT_PLANES;
use crate::nn::network_file::{NetConfig, NetError};
use crate::nn::precision::{Precision, PrecisionSetting};
pub use gemm::bf16_supported;
pub use simd::Isa;
use simd::{padded, LANES};
pub use weights::{Storage, Weights};
use winograd::{Plane, Tiling};

/// Index of the "legal move" input plane.
const LEGAL_PLANE: usize = 3;
/// Index of the "on the board" input plane.
const BOARD_PLANE: usize = 5;

/// A 3x3 convolution with its batch norm folded in, its kernel transformed
/// for each Winograd tiling at the tiling's first use.
struct Conv3x3 {
    /// `[outputs][inputs][3][3]`, batch norm folded, channels not padded.
    folded: Vec<f32>,
    /// Per tiling (in [`Tiling::ALL`]'s order), per point, `inputs x
    /// outputs`, padded channels.
    kernels: [OnceLock<Vec<gemm::Panels>>; 2],
    /// Per output channel, padded.
    bias: Vec<f32>,
    /// Channels of the file's tensors.
    real_inputs: usize,
    real_outputs: usize,
    /// Padded channels.
    inputs: usize,
    outputs: usize,
}

impl Conv3x3 {
    fn new(
        weight: &[f32],
        (scale, shift): (Vec<f32>, Vec<f32>),
        outputs: usize,
        inputs: usize,
    ) -> Conv3x3 {
        let folded: Vec<f32> = weight
            .chunks(inputs * 9)
            .zip(&scale)
            .flat_map(|(w, s)| w.iter().map(move |v| v * s))
            .collect();
        let outputs_padded = padded(outputs);
        let mut bias = shift;
        bias.resize(outputs_padded, 0.0);
        Conv3x3 {
            folded,
            kernels: [OnceLock::new(), OnceLock::new()],
            bias,
            real_inputs: inputs,
            real_outputs: outputs,
            inputs: padded(inputs),
            outputs: outputs_padded,
        }
    }

    /// The transformed kernel of `tiling`: per point, the right-hand
    /// matrix of its product.
    fn kernel(&self, tiling: Tiling) -> &[gemm::Panels] {
        let slot = match tiling {
            Tiling::F4 => &self.kernels[0],
            Tiling::F5 => &self.kernels[1],
        };
        slot.get_or_init(|| {
            winograd::transform_kernel(
                tiling,
                &self.folded,
                self.real_outputs,
                self.real_inputs,
                self.outputs,
                self.inputs,
            )
        })
    }
}

/// A network ready for the native kernels. Immutable: evaluators share it.
pub struct NativeNetwork {
    config: NetConfig,
    /// Padded tower channels.
    channels: usize,
    stem: Conv3x3,
    blocks: Vec<[Conv3x3; 2]>,
    /// The 1x1 convolutions of both heads side by side: `channels x 2 *
    /// channels`, policy first, batch norms folded.
    heads: gemm::Panels,
    heads_bias: Vec<f32>,
    policy_out: Vec<f32>,
    policy_out_bias: f32,
    /// `[channels][channels]` (input-major), then `[channels][3]`.
    value_hidden: Vec<f32>,
    value_hidden_bias: Vec<f32>,
    value_out: Vec<f32>,
    value_out_bias: [f32; 3],
}

impl std::fmt::Debug for NativeNetwork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NativeNetwork({})", self.config)
    }
}

impl NativeNetwork {
    /// Loads a network file.
    pub fn load(path: &Path) -> Result<NativeNetwork, NetError> {
        Ok(NativeNetwork::new(&Weights::read(path)?))
    }

    /// Prepares checked weights for inference.
    pub fn new(w: &Weights) -> NativeNetwork {
        let config = w.config;
        let c = config.channels as usize;
        let cp = padded(c);
        let stem = Conv3x3::new(
            w.get("stem.weight"),
            w.batch_norm("stem_bn"),
            c,
            INPUT_PLANES,
        );
        let blocks = (0..config.blocks)
            .map(|b| {
                [1, 2].map(|k| {
                    Conv3x3::new(
                        w.get(&format!("blocks.{b}.conv{k}.weight")),
                        w.batch_norm(&format!("blocks.{b}.bn{k}")),
                        c,
                        c,
                    )
                })
            })
            .collect();
        let mut heads = vec![0.0; cp * 2 * cp];
        let mut heads_bias = vec![0.0; 2 * cp];
        for (h, name) in ["policy", "value"].into_iter().enumerate() {
            let weight = w.get(&format!("{name}_conv.weight"));
            let (scale, shift) = w.batch_norm(&format!("{name}_bn"));
            for o in 0..c {
                for i in 0..c {
                    heads[i * 2 * cp + h * cp + o] = weight[o * c + i] * scale[o];
                }
                heads_bias[h * cp + o] = shift[o];
            }
        }
        let mut policy_out = w.get("policy_out.weight").to_vec();
        policy_out.resize(cp, 0.0);
        let mut value_hidden = vec![0.0; cp * cp];
        let hidden = w.get("value_hidden.weight");
        for o in 0..c {
            for i in 0..c {
                value_hidden[i * cp + o] = hidden[o * c + i];
            }
        }
        let mut value_hidden_bias = w.get("value_hidden.bias").to_vec();
        value_hidden_bias.resize(cp, 0.0);
        let mut value_out = vec![0.0; cp * 3];
        let out = w.get("value_out.weight");
        for o in 0..3 {
            for i in 0..c {
                value_out[i * 3 + o] = out[o * c + i];
            }
        }
        let b = w.get("value_out.bias");
        NativeNetwork {
            config,
            channels: cp,
            stem,
            blocks,
            heads: gemm::Panels::new(&heads, cp, 2 * cp),
            heads_bias,
            policy_out,
            policy_out_bias: w.get("policy_out.bias").first().copied().unwrap_or(0.0),
            value_hidden,
            value_hidden_bias,
            value_out,
            value_out_bias: [b[0], b[1], b[2]],
        }
    }

    pub fn config(&self) -> NetConfig {
        self.config
    }
}

/// Tiles transformed, multiplied and transformed back together: enough to
/// amortise loading each transformed kernel, few enough that the
/// transformed tiles of a 64-channel tower, in and out, stay in a 512 KiB
/// L2 cache (the Gomocup's AMD EPYCs have that much: 24 F(4x4) tiles or 18
/// F(5x5) ones make about 2 x 220 KiB), and a multiple of the product
/// kernels' six rows.
fn chunk_tiles(tiling: Tiling) -> usize {
    match tiling {
        Tiling::F4 => 24,
        Tiling::F5 => 18,
    }
}

/// Buffers of one evaluator, kept between batches.
#[derive(Default)]
struct Scratch {
    /// The board and tiling the activation buffers were zeroed for, and
    /// how many positions they hold (their borders must stay zero, see
    /// `winograd::Plane`; a position's place does not depend on the batch,
    /// so any smaller batch of the same board reuses them as they are).
    shape: Option<(usize, usize, Tiling)>,
    positions: usize,
    /// The input, then the activations: the current one, a block's
    /// middle, the next.
    input: Vec<f32>,
    x: Vec<f32>,
    y: Vec<f32>,
    z: Vec<f32>,
    /// Transformed tiles before and after the products (one chunk).
    v: Vec<f32>,
    m: Vec<f32>,
    /// Both heads' hidden channels per cell.
    heads: Vec<f32>,
    /// A product's left operand in bf16 or 16-bit integers (bf16 and
    /// int16 products only), and its rows' scales (int16).
    pairs: Vec<u32>,
    scales: Vec<f32>,
}

impl Scratch {
    /// Buffers for a batch of this shape, borders zero.
    fn prepare(&mut self, input: Plane, tower: Plane) {
        let shape = (input.height, input.width, input.tiling);
        if self.shape == Some(shape) && input.batch <= self.positions {
            return;
        }
        self.shape = Some(shape);
        self.positions = input.batch;
        for (buffer, len) in [
            (&mut self.input, input.floats()),
            (&mut self.x, tower.floats()),
            (&mut self.y, tower.floats()),
            (&mut self.z, tower.floats()),
        ] {
            buffer.clear();
            buffer.resize(len, 0.0);
        }
    }
}

fn sized<T: Copy + Default>(buffer: &mut Vec<T>, len: usize) -> &mut [T] {
    if buffer.len() < len {
        buffer.resize(len, T::default());
    }
    &mut buffer[..len]
}

/// The precision that the native kernels can run for a setting
/// (`network.precision`) in an instruction set: bf16 products where it is
/// asked for, or `auto`, and the CPU has AVX512-BF16 with the AVX-512
/// kernels chosen; int16 products where they are asked for and the CPU
/// has AVX2, or under `auto` where the AVX2 kernels are chosen; fp32
/// everywhere else (there are no native half kernels). Under `auto` bf16
/// or int16 is then only a candidate, which [`choose_precision`] measures
/// against fp32.
pub fn resolve_precision(setting: PrecisionSetting, isa: Isa) -> Precision {
    let bf16 = isa == Isa::Avx512 && bf16_supported();
    let int16 = isa != Isa::Portable && isa.is_supported();
    match setting {
        PrecisionSetting::Fixed(Precision::Bf16) | PrecisionSetting::Auto if bf16 => {
            Precision::Bf16
        }
        PrecisionSetting::Fixed(Precision::Int16) if int16 => Precision::Int16,
        PrecisionSetting::Auto if int16 && isa == Isa::Avx2 => Precision::Int16,
        _ => Precision::Fp32,
    }
}

/// The precision of the native kernels for a setting on `network` at
/// `batch` positions a call: a fixed one as [`resolve_precision`] allows
/// it; `auto`, where bf16 or int16 products can run, whichever of fp32 and
/// that one [`faster_precision`] finds faster on 15x15 and 20x20 boards at
/// up to 4 positions a batch, measured once per network size, instruction
/// set and batch, in alternating rounds of one batch each (a shared
/// machine's speed drifts). Which is faster depends on the CPU: bf16 and
/// int16 double the products per instruction, but some CPUs run them at
/// half the rate of their fp32 FMAs; the fp32 products tile 15x15 and
/// 20x20 by F(5x5) where bf16 keeps F(4x4), and int16 quantizes every
/// transformed tile first (docs/native-backend.md).
pub fn choose_precision(
    network: &Arc<NativeNetwork>,
    setting: PrecisionSetting,
    isa: Isa,
    batch: usize,
) -> Precision {
    use std::collections::HashMap;
    use std::sync::Mutex;
    type Chosen = Mutex<HashMap<(NetConfig, Isa, usize), Precision>>;
    static CHOSEN: OnceLock<Chosen> = OnceLock::new();
    let candidate = resolve_precision(setting, isa);
    if setting != PrecisionSetting::Auto || candidate == Precision::Fp32 {
        return candidate;
    }
    // Held while measuring: a second caller waits for the first's answer
    // rather than measuring beside it and perhaps disagreeing.
    let mut chosen = CHOSEN
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    // At most 4 positions a batch: the native search sends two leaves a
    // search thread (`search.batch_size`), so the evaluator's largest
    // batch is not what it runs in play (a larger `search.batch_size` is
    // still measured at 4).
    let batch = batch.clamp(1, 4);
    let key = (network.config(), isa, batch);
    if let Some(&precision) = chosen.get(&key) {
        return precision;
    }
    let [fp32, rate] = measure_precisions(network, isa, batch, [Precision::Fp32, candidate]);
    let precision = faster_precision(fp32, candidate, rate);
    tracing::info!(
        "native precision auto at batch {batch}: fp32 {fp32:.0} positions/s, {candidate} {rate:.0}: {precision}"
    );
    chosen.insert(key, precision);
    precision
}

/// Positions per second of `network` in each of two precisions on empty
/// 15x15 and 20x20 boards at `batch` positions a batch (both boards
/// weighing alike): one batch per precision and board a round, the
/// precisions' order swapped every round, after a warm-up round; the
/// median of three rounds. 16 batches in all.
pub fn measure_precisions(
    network: &Arc<NativeNetwork>,
    isa: Isa,
    batch: usize,
    precisions: [Precision; 2],
) -> [f64; 2] {
    const ROUNDS: usize = 3;
    const SIDES: [usize; 2] = [15, 20];
    let batch = batch.max(1);
    let inputs = SIDES.map(|side| empty_boards(batch, side));
    let mut evaluators = precisions.map(|precision| {
        SIDES.map(|_| NativeEvaluator::with_kernels(Arc::clone(network), isa, precision))
    });
    // Seconds per position over both boards, per precision and round.
    let mut cost = [Vec::new(), Vec::new()];
    for round in 0..=ROUNDS {
        let mut this_round = [0.0f64; 2];
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for k in order {
            for (b, (&side, input)) in SIDES.iter().zip(&inputs).enumerate() {
                let Ok(encoded) = EncodedBatch::new(input, side, side) else {
                    // Whole positions by construction; a failure counts
                    // as infinitely slow rather than as free.
                    this_round[k] = f64::INFINITY;
                    continue;
                };
                let start = std::time::Instant::now();
                let _ = evaluators[k][b].evaluate(encoded);
                this_round[k] += start.elapsed().as_secs_f64() / batch as f64;
            }
        }
        // Round 0 warms up (buffers, kernels transformed at first use).
        if round > 0 {
            for (c, seconds) in cost.iter_mut().zip(this_round) {
                c.push(seconds);
            }
        }
    }
    cost.map(|mut c| {
        c.sort_by(f64::total_cmp);
        c.get(c.len() / 2)
            .map_or(0.0, |&seconds| SIDES.len() as f64 / seconds)
    })
}

/// `candidate` (bf16 or int16) only where it is clearly faster than
/// fp32, given the positions per second of each (`fp32`, `rate`): both
/// round, and a measurement at start-up is noisy. bf16 must be 1.1 times
/// as fast; int16, whose answers stay four to ten times closer to fp32's
/// (docs/native-backend.md), 1.03 times.
pub fn faster_precision(fp32: f64, candidate: Precision, rate: f64) -> Precision {
    let margin = match candidate {
        Precision::Int16 => 1.03,
        _ => 1.1,
    };
    if rate > margin * fp32 {
        candidate
    } else {
        Precision::Fp32
    }
}

/// One thread's handle on a [`NativeNetwork`]: its buffers, the
/// instruction set its kernels run in and the precision of its products.
pub struct NativeEvaluator {
    network: Arc<NativeNetwork>,
    isa: Isa,
    products: Products,
    /// The Winograd tiling when held to one; `None`: each board's
    /// ([`Tiling::for_board`]).
    tiling: Option<Tiling>,
    scratch: Scratch,
}

impl NativeEvaluator {
    /// An evaluator using the widest instruction set of this CPU.
    pub fn new(network: Arc<NativeNetwork>) -> NativeEvaluator {
        NativeEvaluator::with_isa(network, Isa::detect())
    }

    /// An evaluator whose kernels run in `isa`, or in the widest this CPU
    /// has when it lacks `isa`, in fp32.
    pub fn with_isa(network: Arc<NativeNetwork>, isa: Isa) -> NativeEvaluator {
        NativeEvaluator::with_kernels(network, isa, Precision::Fp32)
    }

    /// An evaluator whose kernels run in `isa` (as [`Self::with_isa`]) with
    /// the 3x3 convolutions' products in `precision` where this CPU can
    /// ([`resolve_precision`]), in fp32 otherwise.
    pub fn with_kernels(
        network: Arc<NativeNetwork>,
        isa: Isa,
        precision: Precision,
    ) -> NativeEvaluator {
        let isa = if isa.is_supported() {
            isa
        } else {
            Isa::detect()
        };
        let products = match resolve_precision(PrecisionSetting::Fixed(precision), isa) {
            Precision::Bf16 => gemm::Bf16Cpu::detect().map_or(Products::Fp32, Products::Bf16),
            Precision::Int16 => Products::Int16,
            _ => Products::Fp32,
        };
        NativeEvaluator {
            network,
            isa,
            products,
            tiling: None,
            scratch: Scratch::default(),
        }
    }

    pub fn isa(&self) -> Isa {
        self.isa
    }

    pub fn precision(&self) -> Precision {
        match self.products {
            Products::Fp32 => Precision::Fp32,
            Products::Bf16(_) => Precision::Bf16,
            Products::Int16 => Precision::Int16,
        }
    }

    pub fn network(&self) -> &NativeNetwork {
        &self.network
    }

    /// Holds the convolutions to one Winograd tiling (`None`: each board's
    /// own, [`Tiling::for_board`]), to compare the two. It is held under
    /// bf16 products too, F(5x5) included, which `for_board` never picks
    /// there for its rounding.
    pub fn hold_tiling(&mut self, tiling: Option<Tiling>) {
        self.tiling = tiling;
    }

    /// The Winograd tiling of this evaluator's convolutions on a `height x
    /// width` board.
    pub fn tiling(&self, height: usize, width: usize) -> Tiling {
        self.tiling.unwrap_or_else(|| {
            let bf16 = matches!(self.products, Products::Bf16(_));
            Tiling::for_board(height, width, bf16)
        })
    }

    /// The network's policy and win/draw/loss for each encoded position.
    pub fn evaluate(&mut self, encoded: EncodedBatch<'_>) -> BatchOutput {
        let (input, batch) = (encoded.planes(), encoded.positions());
        let (height, width, area) = (encoded.height(), encoded.width(), encoded.area());
        let tiling = self.tiling(height, width);
        let net = &*self.network;
        let cp = net.channels;
        let isa = self.isa;
        let s = &mut self.scratch;
        let in_plane = Plane {
            batch,
            height,
            width,
            channels: net.stem.inputs,
            tiling,
        };
        let tower = Plane {
            channels: cp,
            ..in_plane
        };
        s.prepare(in_plane, tower);

        // The input, NHWC with padded channels (the padding channels and
        // the border are never written, so stay zero).
        // Row by row: a division per cell cost more than the copy.
        let channels = in_plane.channels;
        for b in 0..batch {
            for plane in 0..INPUT_PLANES {
                let src = &input[(b * INPUT_PLANES + plane) * area..][..area];
                for (y, row) in src.chunks_exact(width).enumerate() {
                    let start = in_plane.at(b, y, 0) + plane;
                    for (x, &v) in row.iter().enumerate() {
                        s.input[start + x * channels] = v;
                    }
                }
            }
        }
        let kernels = Kernels {
            isa,
            products: self.products,
        };
        let buffers = &mut ConvBuffers {
            tiles: &mut s.v,
            products: &mut s.m,
            pairs: &mut s.pairs,
            scales: &mut s.scales,
        };
        conv3x3(
            kernels, &net.stem, &s.input, in_plane, None, &mut s.x, buffers,
        );
        for [conv1, conv2] in &net.blocks {
            conv3x3(kernels, conv1, &s.x, tower, None, &mut s.y, buffers);
            conv3x3(kernels, conv2, &s.y, tower, Some(&s.x), &mut s.z, buffers);
            std::mem::swap(&mut s.x, &mut s.z);
        }

        // Both heads' 1x1 convolutions in one product per board row.
        let heads = sized(&mut s.heads, batch * area * 2 * cp);
        for b in 0..batch {
            for y in 0..height {
                let row = b * area + y * width;
                gemm::multiply(
                    isa,
                    width,
                    &s.x[tower.at(b, y, 0)..],
                    cp,
                    &net.heads,
                    &mut heads[row * 2 * cp..][..width * 2 * cp],
                );
            }
        }
        for cell in heads.chunks_exact_mut(2 * cp) {
            for (v, b) in cell.iter_mut().zip(&net.heads_bias) {
                *v = simd::relu(*v + b);
            }
        }
        let heads = &s.heads[..batch * area * 2 * cp];
        let mut policy = vec![0.0f32; batch * area];
        let mut wdl = vec![0.0f32; batch * 3];
        for b in 0..batch {
            let legal = &input[(b * INPUT_PLANES + LEGAL_PLANE) * area..][..area];
            let board = &input[(b * INPUT_PLANES + BOARD_PLANE) * area..][..area];
            let logits = &mut policy[b * area..][..area];
            let mut pooled = vec![0.0f32; cp];
            let mut on_board = 0.0f32;
            for cell in 0..area {
                let row = &heads[(b * area + cell) * 2 * cp..][..2 * cp];
                if legal[cell] != 0.0 {
                    logits[cell] = dot(&row[..cp], &net.policy_out) + net.policy_out_bias;
                }
                if board[cell] != 0.0 {
                    on_board += board[cell];
                    for (p, v) in pooled.iter_mut().zip(&row[cp..]) {
                        *p += v * board[cell];
                    }
                }
            }
            softmax(logits, |cell| legal[cell] != 0.0);
            let cells_on_board = on_board.max(1.0);
            for p in &mut pooled {
                *p /= cells_on_board;
            }
            let mut hidden = net.value_hidden_bias.clone();
            for (i, p) in pooled.iter().enumerate() {
                for (h, w) in hidden.iter_mut().zip(&net.value_hidden[i * cp..][..cp]) {
                    *h += p * w;
                }
            }
            let mut out = net.value_out_bias;
            for (i, h) in hidden.iter().enumerate() {
                let h = simd::relu(*h);
                for (k, o) in out.iter_mut().enumerate() {
                    *o += h * net.value_out[i * 3 + k];
                }
            }
            softmax(&mut out, |_| true);
            wdl[b * 3..b * 3 + 3].copy_from_slice(&out);
        }
        BatchOutput { policy, wdl }
    }
}

/// What the 3x3 convolutions' products take their operands in.
#[derive(Clone, Copy, Debug)]
enum Products {
    Fp32,
    /// bf16, on the CPU that proves it can.
    Bf16(gemm::Bf16Cpu),
    /// 16-bit integers scaled per row and column (AVX2 kernels).
    Int16,
}

/// How a convolution computes: the instruction set of its kernels, and
/// what its products take their operands in.
#[derive(Clone, Copy)]
struct Kernels {
    isa: Isa,
    products: Products,
}

/// A convolution's working buffers.
struct ConvBuffers<'a> {
    /// The transformed tiles of a chunk before the products.
    tiles: &'a mut Vec<f32>,
    /// The products, before the output transform.
    products: &'a mut Vec<f32>,
    /// The transformed tiles in bf16 or 16-bit integers (bf16 and int16
    /// products only), and the integer rows' scales.
    pairs: &'a mut Vec<u32>,
    scales: &'a mut Vec<f32>,
}

/// One 3x3 convolution (bias, optional residual, ReLU) of `src` (stored
/// as `input` says) into `dst`, a chunk of tiles at a time.
fn conv3x3(
    Kernels { isa, products }: Kernels,
    conv: &Conv3x3,
    src: &[f32],
    input: Plane,
    residual: Option<&[f32]>,
    dst: &mut [f32],
    buffers: &mut ConvBuffers<'_>,
) {
    let ConvBuffers {
        tiles: v,
        products: m,
        pairs,
        scales,
    } = buffers;
    let output = Plane {
        channels: conv.outputs,
        ..input
    };
    let tiles = input.tiles();
    let (cin, cout) = (conv.inputs, conv.outputs);
    let tiling = input.tiling;
    let kernel = conv.kernel(tiling);
    let chunk_tiles = chunk_tiles(tiling);
    for first in (0..tiles).step_by(chunk_tiles) {
        let count = (tiles - first).min(chunk_tiles);
        let chunk = winograd::Chunk { first, count };
        let m = sized(m, winograd::transformed_len(tiling, count, cout));
        let (in_stride, out_stride) = (
            winograd::point_stride(count, cin),
            winograd::point_stride(count, cout),
        );
        match products {
            Products::Bf16(cpu) => {
                let pairs = sized(pairs, winograd::transformed_len(tiling, count, cin) / 2);
                winograd::transform_input_bf16(cpu, src, input, chunk, pairs);
                for (point, b) in kernel.iter().enumerate() {
                    let a = &pairs[point * in_stride / 2..][..count * cin / 2];
                    let c = &mut m[point * out_stride..][..count * cout];
                    gemm::multiply_pairs(cpu, count, a, b, c);
                }
            }
            Products::Int16 => {
                let len = winograd::transformed_len(tiling, count, cin);
                let (v, pairs) = (sized(v, len), sized(pairs, len / 2));
                let scales = sized(scales, tiling.points() * count);
                let out = winograd::QuantizedTiles {
                    v,
                    pairs: &mut *pairs,
                    scales: &mut *scales,
                };
                winograd::transform_input_i16(isa, src, input, chunk, isa, out);
                for (point, b) in kernel.iter().enumerate() {
                    let a = &pairs[point * in_stride / 2..][..count * cin / 2];
                    let row_scale = &scales[point * count..][..count];
                    let c = &mut m[point * out_stride..][..count * cout];
                    gemm::multiply_i16(isa, count, a, row_scale, b, c);
                }
            }
            Products::Fp32 => {
                let v = sized(v, winograd::transformed_len(tiling, count, cin));
                winograd::transform_input(isa, src, input, chunk, v);
                let more_chunks = first + count < tiles;
                for (point, b) in kernel.iter().enumerate() {
                    let a = &v[point * in_stride..][..count * cin];
                    let c = &mut m[point * out_stride..][..count * cout];
                    // The next point's weights, or the first point's where a
                    // chunk follows (after the last one, nothing).
                    let next = kernel
                        .get(point + 1)
                        .or_else(|| kernel.first().filter(|_| more_chunks));
                    gemm::multiply_prefetching(isa, count, a, cin, b, c, next);
                }
            }
        }
        winograd::transform_output(isa, m, output, chunk, &conv.bias, residual, dst);
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; LANES];
    for (ca, cb) in a.chunks_exact(LANES).zip(b.chunks_exact(LANES)) {
        for k in 0..LANES {
            lanes[k] += ca[k] * cb[k];
        }
    }
    lanes.iter().sum()
}

/// Softmax in place over the cells `counted` holds; the others get zero,
/// and with none counted (no legal cell) all do. A counted logit that is
/// not finite (an overflow, or NaN) makes every value NaN, which the
/// service replaces by the no-knowledge answer, as libtorch's softmax
/// gives: judged by the cells, not by the values, since an overflow to
/// -inf looks like a cell left out.
fn softmax(x: &mut [f32], counted: impl Fn(usize) -> bool) {
    let mut max = f32::NEG_INFINITY;
    let mut any = false;
    let mut broken = false;
    for (i, v) in x.iter().enumerate() {
        if counted(i) {
            any = true;
            broken |= !v.is_finite();
            max = max.max(*v);
        }
    }
    if broken {
        x.fill(f32::NAN);
        return;
    }
    let mut sum = 0.0f32;
    for (i, v) in x.iter_mut().enumerate() {
        *v = if any && counted(i) {
            (*v - max).exp()
        } else {
            0.0
        };
        sum += *v;
    }
    if any {
        for v in x.iter_mut() {
            *v /= sum;
        }
    }
}

/// The encoded input planes of `batch` empty `side x side` boards.
fn empty_boards(batch: usize, side: usize) -> Vec<f32> {
    let area = side * side;
    let mut input = vec![0.0f32; batch.max(1) * INPUT_PLANES * area];
    for b in 0..batch.max(1) {
        for plane in [LEGAL_PLANE, BOARD_PLANE] {
            input[(b * INPUT_PLANES + plane) * area..][..area].fill(1.0);
        }
    }
    input
}

/// Positions per second of `network` on batches of `batch` empty `side x
/// side` boards for about `time` (at least one batch), after one warm-up
/// batch, in `isa` and `precision` (as [`NativeEvaluator::with_kernels`]
/// resolves them).
pub fn positions_per_second(
    network: &Arc<NativeNetwork>,
    isa: Isa,
    precision: Precision,
    batch: usize,
    side: usize,
    time: std::time::Duration,
) -> f64 {
    let batch = batch.max(1);
    let input = empty_boards(batch, side);
    let mut evaluator = NativeEvaluator::with_kernels(Arc::clone(network), isa, precision);
    let Ok(encoded) = EncodedBatch::new(&input, side, side) else {
        return 0.0;
    };
    measure_rate(batch, time, || {
        let _ = evaluator.evaluate(encoded);
    })
}

#[cfg(test)]
mod tests {
    use super::softmax;

    #[test]
    fn softmax_shares_out_finite_logits() {
        let mut x = [0.0, 7.0, 0.0];
        softmax(&mut x, |i| i != 1);
        assert_eq!(x, [0.5, 0.0, 0.5]);
    }

    #[test]
    fn softmax_of_no_legal_cell_is_zero() {
        let mut x = [f32::NEG_INFINITY, 1.0, f32::NAN];
        softmax(&mut x, |_| false);
        assert_eq!(x, [0.0; 3]);
    }

    #[test]
    fn softmax_of_overflowing_or_nan_logits_is_nan() {
        // NaN is what the service replaces; zeros would pass as a sure
        // loss, and a legal cell overflowing to -inf is no illegal one.
        for (mut x, counted) in [
            ([f32::INFINITY, 0.0, 1.0], [true; 3]),
            ([f32::NEG_INFINITY; 3], [true; 3]),
            ([f32::NEG_INFINITY, 0.0, 0.0], [true, false, false]),
            ([f32::NAN; 3], [true; 3]),
            ([f32::NAN, 0.0, 1.0], [true; 3]),
        ] {
            softmax(&mut x, |i| counted[i]);
            assert!(x.iter().all(|v| v.is_nan()), "{x:?}");
        }
    }
}
