//! The native backend against two independent references: a direct
//! (non-Winograd) forward pass in f64 written here from the file's tensors,
//! and, in builds with libtorch, libtorch's fp32 forward pass on 1,000 real
//! positions of each rule. Every instruction set this CPU has is checked.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::{games, FIXTURE_GAMES};
use wuzi::game::{Board, BoardSize, Point, Rule};
use wuzi::nn::native::winograd::{direct_reference, Tiling};
use wuzi::nn::native::Weights;
use wuzi::nn::{
    encode, BatchOutput, EncodedBatch, Isa, NativeEvaluator, NativeNetwork, NetConfig, INPUT_PLANES,
};

/// The evaluator's answer for whole positions of a `h` x `w` board.
fn answer(evaluator: &mut NativeEvaluator, floats: &[f32], h: usize, w: usize) -> BatchOutput {
    evaluator.evaluate(EncodedBatch::new(floats, h, w).expect("whole positions"))
}

fn network_path(name: &str) -> String {
    format!("{}/networks/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The shipped network of each fixture's rule and board side (as
/// config/wuzi.toml names them).
fn network_for(rule: Rule, side: usize) -> &'static str {
    match rule {
        Rule::Standard => "standard15-6x64.safetensors",
        Rule::Renju => "renju15-6x64.safetensors",
        _ if side >= 18 => "freestyle20-6x64.safetensors",
        _ => "freestyle-6x64.safetensors",
    }
}

/// Up to `count` positions of the fixture games (every board after each
/// move, spread over the games), encoded; the board's size and rule.
fn positions(tsv: &str, count: usize) -> (Vec<Vec<f32>>, usize, usize, Rule) {
    let games = games(tsv);
    let first = &games[0];
    let (h, w) = (first.size.height() as usize, first.size.width() as usize);
    let mut all = Vec::new();
    for game in &games {
        let mut board = Board::new(game.size, game.rule);
        for &m in &game.moves {
            if board.play(m).is_err() || board.outcome().is_some() {
                break;
            }
            let mut features = vec![0.0; INPUT_PLANES * h * w];
            encode(&mut board, &mut features, h, w);
            all.push(features);
        }
    }
    let step = (all.len() / count).max(1);
    let chosen = all.into_iter().step_by(step).take(count).collect();
    (chosen, h, w, first.rule)
}

/// The network computed directly from the file's tensors in f64: batch
/// norms applied as written (not folded), plain 3x3 convolutions.
fn reference(weights: &Weights, features: &[f32], h: usize, w: usize) -> (Vec<f32>, [f32; 3]) {
    let c = weights.config.channels as usize;
    let area = h * w;
    // NHWC input.
    let mut x = vec![0.0f32; area * INPUT_PLANES];
    for plane in 0..INPUT_PLANES {
        for cell in 0..area {
            x[cell * INPUT_PLANES + plane] = features[plane * area + cell];
        }
    }
    let bn = |v: &mut [f32], prefix: &str| {
        let g = weights.get(&format!("{prefix}.weight"));
        let b = weights.get(&format!("{prefix}.bias"));
        let m = weights.get(&format!("{prefix}.running_mean"));
        let var = weights.get(&format!("{prefix}.running_var"));
        for (i, value) in v.iter_mut().enumerate() {
            let k = i % c;
            *value = ((*value as f64 - m[k] as f64) / (var[k] as f64 + 1e-5).sqrt() * g[k] as f64
                + b[k] as f64) as f32;
        }
    };
    let relu = |v: &mut [f32]| v.iter_mut().for_each(|x| *x = x.max(0.0));
    let zero = vec![0.0f32; c];
    let mut x = {
        let mut y = direct_reference(
            &x,
            (1, h, w),
            INPUT_PLANES,
            weights.get("stem.weight"),
            &zero,
            c,
        );
        bn(&mut y, "stem_bn");
        relu(&mut y);
        y
    };
    for b in 0..weights.config.blocks {
        let mut y = direct_reference(
            &x,
            (1, h, w),
            c,
            weights.get(&format!("blocks.{b}.conv1.weight")),
            &zero,
            c,
        );
        bn(&mut y, &format!("blocks.{b}.bn1"));
        relu(&mut y);
        let mut z = direct_reference(
            &y,
            (1, h, w),
            c,
            weights.get(&format!("blocks.{b}.conv2.weight")),
            &zero,
            c,
        );
        bn(&mut z, &format!("blocks.{b}.bn2"));
        for (z, x) in z.iter_mut().zip(&x) {
            *z += x;
        }
        relu(&mut z);
        x = z;
    }
    let conv1x1 = |name: &str, bn_name: &str| {
        let weight = weights.get(name);
        let mut out = vec![0.0f32; area * c];
        for cell in 0..area {
            for o in 0..c {
                out[cell * c + o] = (0..c)
                    .map(|i| x[cell * c + i] as f64 * weight[o * c + i] as f64)
                    .sum::<f64>() as f32;
            }
        }
        bn(&mut out, bn_name);
        relu(&mut out);
        out
    };
    let p = conv1x1("policy_conv.weight", "policy_bn");
    let out_w = weights.get("policy_out.weight");
    let out_b = weights.get("policy_out.bias")[0] as f64;
    let legal = &features[3 * area..4 * area];
    let logits: Vec<f64> = (0..area)
        .map(|cell| {
            (0..c)
                .map(|i| p[cell * c + i] as f64 * out_w[i] as f64)
                .sum::<f64>()
                + out_b
        })
        .collect();
    let max = (0..area)
        .filter(|&k| legal[k] > 0.0)
        .map(|k| logits[k])
        .fold(f64::MIN, f64::max);
    let exp: Vec<f64> = (0..area)
        .map(|k| {
            if legal[k] > 0.0 {
                (logits[k] - max).exp()
            } else {
                0.0
            }
        })
        .collect();
    let sum: f64 = exp.iter().sum();
    let policy = exp.iter().map(|e| (e / sum) as f32).collect();
    let v = conv1x1("value_conv.weight", "value_bn");
    let board = &features[5 * area..6 * area];
    let cells: f64 = board.iter().map(|&b| b as f64).sum::<f64>().max(1.0);
    let pooled: Vec<f64> = (0..c)
        .map(|i| {
            (0..area)
                .map(|k| v[k * c + i] as f64 * board[k] as f64)
                .sum::<f64>()
                / cells
        })
        .collect();
    let (hw, hb) = (
        weights.get("value_hidden.weight"),
        weights.get("value_hidden.bias"),
    );
    let hidden: Vec<f64> = (0..c)
        .map(|o| {
            ((0..c)
                .map(|i| pooled[i] * hw[o * c + i] as f64)
                .sum::<f64>()
                + hb[o] as f64)
                .max(0.0)
        })
        .collect();
    let (ow, ob) = (
        weights.get("value_out.weight"),
        weights.get("value_out.bias"),
    );
    let out: Vec<f64> = (0..3)
        .map(|o| {
            (0..c)
                .map(|i| hidden[i] * ow[o * c + i] as f64)
                .sum::<f64>()
                + ob[o] as f64
        })
        .collect();
    let m = out.iter().cloned().fold(f64::MIN, f64::max);
    let e: Vec<f64> = out.iter().map(|v| (v - m).exp()).collect();
    let s: f64 = e.iter().sum();
    (
        policy,
        [(e[0] / s) as f32, (e[1] / s) as f32, (e[2] / s) as f32],
    )
}

fn max_deviation(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// Each position's answer in `output` within TOLERANCE of its reference
/// (policy over `area` cells, win/draw/loss).
fn assert_answers(output: &BatchOutput, wants: &[(Vec<f32>, [f32; 3])], area: usize, label: &str) {
    for (i, (want_policy, want_wdl)) in wants.iter().enumerate() {
        let dp = max_deviation(&output.policy[i * area..][..area], want_policy);
        let dw = max_deviation(&output.wdl[i * 3..][..3], want_wdl);
        assert!(
            dp < TOLERANCE && dw < TOLERANCE,
            "{label} position {i}: policy {dp}, wdl {dw}"
        );
    }
}

/// Winograd's F(4x4) and F(5x5) in fp32 lose a few bits against the direct
/// convolution; on probabilities that stays far below what changes a move.
const TOLERANCE: f32 = 5e-5;

#[test]
fn native_forward_equals_a_direct_f64_computation_of_the_file() {
    for tsv in FIXTURE_GAMES {
        let (inputs, h, w, rule) = positions(tsv, 6);
        let path = network_path(network_for(rule, h));
        let weights = Weights::read(Path::new(&path)).unwrap();
        let network = Arc::new(NativeNetwork::new(&weights));
        let wants: Vec<_> = inputs
            .iter()
            .map(|features| reference(&weights, features, h, w))
            .collect();
        for isa in Isa::all_supported() {
            let mut evaluator = NativeEvaluator::with_isa(Arc::clone(&network), isa);
            assert_eq!(evaluator.isa(), isa);
            // The board's own tiling first, then each held.
            for tiling in [None, Some(Tiling::F4), Some(Tiling::F5)] {
                evaluator.hold_tiling(tiling);
                let used = evaluator.tiling(h, w);
                // The fixtures' boards are 15x15 and 20x20: F(5x5) in fp32.
                assert_eq!(used, tiling.unwrap_or(Tiling::F5));
                // As one batch, so that tiles of several positions share chunks.
                let batch: Vec<f32> = inputs.concat();
                let output = answer(&mut evaluator, &batch, h, w);
                assert_answers(
                    &output,
                    &wants,
                    h * w,
                    &format!("{rule:?} {h}x{w} {isa} {used:?}"),
                );
            }
        }
    }
}

/// Shapes the shipped networks never meet: 24 channels (the 8-wide tail
/// panels of the products), tiny, rectangular and the largest boards,
/// batches of 1, 2 and 7, each tiling held and each instruction set: a
/// random network's answers still equal the direct f64 computation.
#[test]
fn odd_shapes_equal_the_direct_computation() {
    let weights = Weights::random(
        NetConfig {
            blocks: 2,
            channels: 24,
        },
        7,
    );
    let network = Arc::new(NativeNetwork::new(&weights));
    for (w, h) in [(5, 5), (13, 7), (9, 32), (32, 32)] {
        let mut board = Board::new(BoardSize::new(w, h).unwrap(), Rule::Freestyle);
        let (w, h) = (w as usize, h as usize);
        let mut inputs = Vec::new();
        let mut cell = 3;
        while inputs.len() < 7 {
            let mut features = vec![0.0; INPUT_PLANES * h * w];
            encode(&mut board, &mut features, h, w);
            inputs.push(features);
            // The next empty cell of a stride through the board.
            loop {
                cell = (cell + 7) % (w * h);
                let p = Point::new((cell % w) as u8, (cell / w) as u8).unwrap();
                if board.play(p).is_ok() {
                    break;
                }
            }
        }
        let wants: Vec<_> = inputs
            .iter()
            .map(|features| reference(&weights, features, h, w))
            .collect();
        for isa in Isa::all_supported() {
            let mut evaluator = NativeEvaluator::with_isa(Arc::clone(&network), isa);
            for tiling in [None, Some(Tiling::F4), Some(Tiling::F5)] {
                evaluator.hold_tiling(tiling);
                for batch in [1, 2, 7] {
                    let output = answer(&mut evaluator, &inputs[..batch].concat(), h, w);
                    let label = format!("{w}x{h} {isa} {tiling:?} batch {batch}");
                    assert_answers(&output, &wants[..batch], h * w, &label);
                }
            }
        }
    }
}

/// Each instruction set gives the same answers (up to rounding) on the
/// same batch, and a position's answer does not depend on its batch.
#[test]
fn instruction_sets_and_batches_agree() {
    let (inputs, h, w, _) = positions(FIXTURE_GAMES[3], 40);
    let network = Arc::new(
        NativeNetwork::load(Path::new(&network_path("freestyle-4x32.safetensors"))).unwrap(),
    );
    let batch: Vec<f32> = inputs.concat();
    let mut answers = Vec::new();
    for isa in Isa::all_supported() {
        let mut evaluator = NativeEvaluator::with_isa(Arc::clone(&network), isa);
        let together = answer(&mut evaluator, &batch, h, w);
        let alone = answer(&mut evaluator, &inputs[17], h, w);
        assert!(
            max_deviation(&together.policy[17 * h * w..][..h * w], &alone.policy) < 1e-5,
            "{isa}"
        );
        assert!(
            max_deviation(&together.wdl[17 * 3..][..3], &alone.wdl) < 1e-5,
            "{isa}"
        );
        answers.push((isa, together));
    }
    let (first_isa, first) = &answers[0];
    for (isa, other) in &answers[1..] {
        assert!(
            max_deviation(&first.policy, &other.policy) < 1e-4,
            "{first_isa} vs {isa}"
        );
        assert!(
            max_deviation(&first.wdl, &other.wdl) < 1e-4,
            "{first_isa} vs {isa}"
        );
    }
    // Switching board size reuses the evaluator's buffers correctly.
    let (inputs20, h20, w20, _) = positions(FIXTURE_GAMES[0], 3);
    let mut evaluator = NativeEvaluator::new(Arc::clone(&network));
    let before = answer(&mut evaluator, &inputs[5], h, w);
    let _ = answer(&mut evaluator, &inputs20.concat(), h20, w20);
    let after = answer(&mut evaluator, &inputs[5], h, w);
    assert_eq!(before, after);
}

/// `features` (whole positions of a square board) transposed, each plane
/// mirrored in its main diagonal.
fn transposed(features: &[f32], side: usize) -> Vec<f32> {
    let area = side * side;
    let mut out = vec![0.0; features.len()];
    for (plane, dst) in features.chunks_exact(area).zip(out.chunks_exact_mut(area)) {
        for y in 0..side {
            for x in 0..side {
                dst[y * side + x] = plane[x * side + y];
            }
        }
    }
    out
}

/// How far two evaluations of the same positions are apart: the largest
/// policy and win/draw/loss deviations, the mean win/draw/loss one, and how
/// many positions keep the same most likely move (`map` takes a cell of the
/// second to the first's coordinates).
struct Apart {
    policy_max: f32,
    wdl_max: f32,
    wdl_sum: f64,
    same_first_move: usize,
}

impl Apart {
    fn add(&mut self, a: &BatchOutput, b: &BatchOutput, area: usize, map: impl Fn(usize) -> usize) {
        let first = |p: &[f32]| {
            (0..area)
                .max_by(|&x, &y| p[x].total_cmp(&p[y]))
                .unwrap_or(0)
        };
        for i in 0..a.wdl.len() / 3 {
            let (pa, pb) = (&a.policy[i * area..][..area], &b.policy[i * area..][..area]);
            let wdl = max_deviation(&a.wdl[i * 3..][..3], &b.wdl[i * 3..][..3]);
            self.policy_max = self.policy_max.max(
                (0..area)
                    .map(|c| (pa[c] - pb[map(c)]).abs())
                    .fold(0.0, f32::max),
            );
            self.wdl_max = self.wdl_max.max(wdl);
            self.wdl_sum += wdl as f64;
            self.same_first_move += usize::from(first(pa) == map(first(pb)));
        }
    }
}

/// How far `other`'s answers on `inputs` (positions of a `side` board) are
/// from `exact`'s, and how far `exact`'s own move when the board is
/// transposed: the yardstick of the rounding tests.
fn rounding_and_symmetry(
    exact: &mut NativeEvaluator,
    other: &mut NativeEvaluator,
    inputs: &[Vec<f32>],
    side: usize,
) -> (Apart, Apart) {
    let area = side * side;
    let apart = || Apart {
        policy_max: 0.0,
        wdl_max: 0.0,
        wdl_sum: 0.0,
        same_first_move: 0,
    };
    let (mut rounding, mut symmetry) = (apart(), apart());
    for chunk in inputs.chunks(32) {
        let batch = chunk.concat();
        let a = answer(exact, &batch, side, side);
        rounding.add(&a, &answer(other, &batch, side, side), area, |c| c);
        let mirrored = answer(exact, &transposed(&batch, side), side, side);
        symmetry.add(&a, &mirrored, area, |c| c % side * side + c / side);
    }
    (rounding, symmetry)
}

/// Prints how far a rounding precision's answers (`what`) and a
/// transposition moved `n` positions, and asserts that the rounding moved
/// them not at all where it was `exact` (it fell back to fp32), and
/// otherwise some, by less than a tenth of the transposition's
/// win/draw/loss deviation, at most 0.1 anywhere, and kept the most likely
/// move in 95% of positions.
fn assert_rounding_within_a_symmetry(
    what: &str,
    exact: bool,
    rounding: &Apart,
    symmetry: &Apart,
    n: usize,
) {
    let n = n as f64;
    for (how, a) in [("", rounding), (" (transposed)", symmetry)] {
        eprintln!(
            "{what}{how}: largest deviation policy {:.2e}, wdl {:.2e} (mean {:.2e}); \
             same first move in {} of {n}",
            a.policy_max,
            a.wdl_max,
            a.wdl_sum / n,
            a.same_first_move
        );
    }
    if exact {
        assert_eq!(
            (rounding.policy_max, rounding.wdl_max),
            (0.0, 0.0),
            "{what}"
        );
        return;
    }
    assert!(rounding.policy_max > 0.0, "{what}: rounds");
    assert!(
        rounding.wdl_sum < 0.1 * symmetry.wdl_sum,
        "{what} moves the values by {}, a transposition by {}",
        rounding.wdl_sum / n,
        symmetry.wdl_sum / n
    );
    assert!(
        rounding.policy_max < 0.1 && rounding.wdl_max < 0.1,
        "{what}"
    );
    assert!(
        rounding.same_first_move as f64 >= 0.95 * n,
        "{what}: the same first move in {} of {n}",
        rounding.same_first_move
    );
}

/// bf16 products (AVX512-BF16) against the fp32 kernels on 500 real
/// positions of each square-board rule, each with its shipped network. The
/// yardstick is how far the fp32 answers of the same positions move when
/// the board is transposed, which the engine already samples (`symmetry =
/// random`): rounding each product's inputs to 8 bits of mantissa must move
/// them far less. Where the CPU lacks AVX512-BF16 the evaluator must say
/// fp32 and compute it.
#[test]
fn bf16_products_move_answers_far_less_than_a_board_symmetry() {
    use wuzi::nn::native::bf16_supported;
    use wuzi::nn::Precision;
    for tsv in FIXTURE_GAMES {
        let (inputs, side, w, rule) = positions(tsv, 500);
        assert_eq!(side, w, "square boards");
        let path = network_path(network_for(rule, side));
        let network = Arc::new(NativeNetwork::load(Path::new(&path)).unwrap());
        let kernels =
            |precision| NativeEvaluator::with_kernels(Arc::clone(&network), Isa::Avx512, precision);
        let (mut fp32, mut bf16) = (kernels(Precision::Fp32), kernels(Precision::Bf16));
        let expected = if fp32.isa() == Isa::Avx512 && bf16_supported() {
            Precision::Bf16
        } else {
            Precision::Fp32
        };
        assert_eq!(bf16.precision(), expected);
        let (rounding, symmetry) = rounding_and_symmetry(&mut fp32, &mut bf16, &inputs, side);
        let exact = expected == Precision::Fp32;
        assert_rounding_within_a_symmetry(
            &format!("{rule:?} {side}x{side} bf16"),
            exact,
            &rounding,
            &symmetry,
            inputs.len(),
        );
    }
}

/// int16 products (the AVX2 kernels) against the fp32 kernels on the same
/// 500 real positions of each square-board rule, in both Winograd tilings:
/// quantizing each product's operands to 16-bit integers (per row of
/// channels and per column of weights) must move the answers far less
/// than transposing the board, as bf16 must. Without AVX2 the evaluator
/// must say fp32 and compute it.
#[test]
fn int16_products_move_answers_far_less_than_a_board_symmetry() {
    use wuzi::nn::Precision;
    for tsv in FIXTURE_GAMES {
        let (inputs, side, w, rule) = positions(tsv, 500);
        assert_eq!(side, w, "square boards");
        let path = network_path(network_for(rule, side));
        let network = Arc::new(NativeNetwork::load(Path::new(&path)).unwrap());
        let expected = if Isa::Avx2.is_supported() {
            Precision::Int16
        } else {
            Precision::Fp32
        };
        for tiling in Tiling::ALL {
            let kernels = |precision| {
                let mut evaluator =
                    NativeEvaluator::with_kernels(Arc::clone(&network), Isa::Avx2, precision);
                evaluator.hold_tiling(Some(tiling));
                evaluator
            };
            let (mut fp32, mut int16) = (kernels(Precision::Fp32), kernels(Precision::Int16));
            assert_eq!(int16.precision(), expected);
            let (rounding, symmetry) = rounding_and_symmetry(&mut fp32, &mut int16, &inputs, side);
            let exact = expected == Precision::Fp32;
            let what = format!("{rule:?} {side}x{side} {tiling:?} int16");
            assert_rounding_within_a_symmetry(&what, exact, &rounding, &symmetry, inputs.len());
        }
        // int16 asked of the AVX-512 kernels: the same products (they are
        // AVX2's), the transforms in AVX-512.
        if Isa::Avx512.is_supported() {
            let kernels =
                |isa| NativeEvaluator::with_kernels(Arc::clone(&network), isa, Precision::Int16);
            let (mut narrow, mut wide) = (kernels(Isa::Avx2), kernels(Isa::Avx512));
            assert_eq!(wide.precision(), Precision::Int16);
            let batch = inputs[..64].concat();
            let (a, b) = (
                answer(&mut narrow, &batch, side, side),
                answer(&mut wide, &batch, side, side),
            );
            assert!(max_deviation(&a.policy, &b.policy) < 1e-5, "{rule:?}");
            assert!(max_deviation(&a.wdl, &b.wdl) < 1e-5, "{rule:?}");
        }
    }
}

/// Each shipped network written in f16 (as the packages store them) and
/// read back, against its f32 file on 500 real positions of each rule,
/// with the fp32 kernels: rounding the weights to 11 significant bits must
/// move the answers far less than transposing the board does, and less
/// than the bf16 products (8 bits) that AVX512-BF16 machines play with.
/// Written in bf16, the file must read back as bf16 and stay as close.
#[test]
fn a_network_stored_in_half_precision_answers_as_its_f32_file() {
    use wuzi::nn::native::Storage;
    use wuzi::nn::Precision;
    let dir = tempfile::tempdir().unwrap();
    for tsv in FIXTURE_GAMES {
        let (inputs, side, w, rule) = positions(tsv, 500);
        assert_eq!(side, w, "square boards");
        let name = network_for(rule, side);
        let path = network_path(name);
        let weights = Weights::read(Path::new(&path)).unwrap();
        assert_eq!(weights.storage, Storage::F32, "{name}");
        let kernels = |network: NativeNetwork| {
            NativeEvaluator::with_kernels(Arc::new(network), Isa::Avx2, Precision::Fp32)
        };
        let mut exact = kernels(NativeNetwork::new(&weights));
        for storage in [Storage::F16, Storage::Bf16] {
            let stored = dir.path().join(format!("{storage}-{name}"));
            weights.write(&stored, storage).unwrap();
            let read = Weights::read(&stored).unwrap();
            assert_eq!(read.storage, storage, "{name}");
            let bytes = std::fs::metadata(&stored).unwrap().len();
            let full = std::fs::metadata(&path).unwrap().len();
            assert!(
                bytes < full * 52 / 100,
                "{name} in {storage}: {bytes} bytes of {full}"
            );
            let mut half = kernels(NativeNetwork::new(&read));
            let (rounding, symmetry) = rounding_and_symmetry(&mut exact, &mut half, &inputs, side);
            let n = inputs.len() as f64;
            eprintln!(
                "{name} ({rule:?} {side}x{side}) in {storage}: largest deviation policy {:.2e}, \
                 wdl {:.2e} (mean {:.2e}); same first move in {} of {n}; transposed: mean wdl {:.2e}",
                rounding.policy_max,
                rounding.wdl_max,
                rounding.wdl_sum / n,
                rounding.same_first_move,
                symmetry.wdl_sum / n
            );
            let (share, most) = match storage {
                Storage::F16 => (0.02, 0.01),
                _ => (0.1, 0.1),
            };
            assert!(rounding.wdl_max > 0.0, "{name}: the weights were rounded");
            assert!(
                rounding.wdl_sum < share * symmetry.wdl_sum,
                "{name} in {storage}: the values move by {}, a transposition by {}",
                rounding.wdl_sum / n,
                symmetry.wdl_sum / n
            );
            assert!(
                rounding.policy_max < most && rounding.wdl_max < most,
                "{name} in {storage}"
            );
            assert!(
                rounding.same_first_move as f64 >= 0.97 * n,
                "{name} in {storage}: the same first move in {} of {n}",
                rounding.same_first_move
            );
        }
    }
}

#[test]
fn broken_network_files_are_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let absent = dir.path().join("absent.safetensors");
    let e = NativeNetwork::load(&absent).unwrap_err().to_string();
    assert!(
        e.contains("absent.safetensors") && e.contains("no such file"),
        "{e}"
    );
    let bytes = std::fs::read(network_path("freestyle-4x32.safetensors")).unwrap();
    let truncated = dir.path().join("truncated.safetensors");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let e = NativeNetwork::load(&truncated).unwrap_err().to_string();
    assert!(
        e.contains("truncated.safetensors") && e.contains("safetensors"),
        "{e}"
    );
    // A header past any network's size is refused before it is parsed
    // (safetensors would take up to 100 MB of it, at ten times that in
    // memory): here a readable one of 2 MiB of metadata.
    let header = format!(
        "{{\"__metadata__\":{{\"padding\":\"{}\"}}}}",
        "x".repeat(2 << 20)
    );
    let mut huge = (header.len() as u64).to_le_bytes().to_vec();
    huge.extend_from_slice(header.as_bytes());
    let huge_header = dir.path().join("header.safetensors");
    std::fs::write(&huge_header, huge).unwrap();
    let e = NativeNetwork::load(&huge_header).unwrap_err().to_string();
    assert!(e.contains("a header of") && e.contains("too large"), "{e}");
    let garbage = dir.path().join("garbage.safetensors");
    std::fs::write(&garbage, b"\xff\xff\xff\xff\xff\xff\xff\x7fnot a header").unwrap();
    assert!(NativeNetwork::load(&garbage).is_err());
    // A header said to run past the file's end is refused on its length,
    // before the file is read.
    let short = dir.path().join("short.safetensors");
    let mut bytes_of_short = 1000u64.to_le_bytes().to_vec();
    bytes_of_short.extend_from_slice(b"{}");
    std::fs::write(&short, bytes_of_short).unwrap();
    let e = NativeNetwork::load(&short).unwrap_err().to_string();
    assert!(e.contains("a header of 1000 bytes in a file of 10"), "{e}");
    // A name from the file is quoted on one line: protocols send the error
    // on as a reply, where a line break would end it early (GTP) or be
    // read as a move (Gomocup).
    let file = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let hostile = "x\n\n= A1";
    let mut views: Vec<(String, safetensors::tensor::TensorView<'_>)> =
        file.tensors().into_iter().collect();
    views.push((
        hostile.to_string(),
        safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![0], &[]).unwrap(),
    ));
    let named = dir.path().join("named.safetensors");
    std::fs::write(&named, safetensors::serialize(views, None).unwrap()).unwrap();
    let e = NativeNetwork::load(&named).unwrap_err().to_string();
    assert!(
        !e.contains('\n') && e.contains(r#"unexpected tensor "x\n\n= A1""#),
        "{e}"
    );
    // A tensor of the wrong shape: the 4x32 file with one block renamed
    // out of place is refused tensor by tensor.
    let text = bytes.clone();
    let renamed: Vec<u8> = String::from_utf8_lossy(&text)
        .replacen("blocks.3.conv1.weight", "blocks.9.conv1.weight", 1)
        .into_bytes();
    if renamed.len() == text.len() {
        let moved = dir.path().join("moved.safetensors");
        std::fs::write(&moved, &renamed).unwrap();
        let e = NativeNetwork::load(&moved).unwrap_err().to_string();
        assert!(e.contains("missing tensor"), "{e}");
    }
    // Values that would make every answer NaN.
    for (name, value, why) in [
        ("blocks.1.conv2.weight", f32::NAN, "not finite"),
        ("policy_conv.weight", f32::INFINITY, "not finite"),
        ("stem_bn.running_var", -1.0, "negative variance"),
    ] {
        let broken = dir.path().join("values.safetensors");
        std::fs::write(&broken, common::with_first_value(&bytes, name, value)).unwrap();
        let e = NativeNetwork::load(&broken).unwrap_err().to_string();
        assert!(e.contains(name) && e.contains(why), "{name}: {e}");
    }
    // Finite values that fold into infinite ones: a huge scale over a
    // zero variance.
    let zero_variance = common::with_first_value(&bytes, "stem_bn.running_var", 0.0);
    let folded = common::with_first_value(&zero_variance, "stem_bn.weight", 1e38);
    let broken = dir.path().join("folded.safetensors");
    std::fs::write(&broken, folded).unwrap();
    let e = NativeNetwork::load(&broken).unwrap_err().to_string();
    assert!(e.contains("stem_bn") && e.contains("not finite"), "{e}");
    // The zero variance alone is a usable network.
    std::fs::write(&broken, zero_variance).unwrap();
    assert!(NativeNetwork::load(&broken).is_ok());
    // A finite scale times a finite weight of the convolution before it
    // that overflows f32 (1e30 x 1e10): the kernels would hold infinities.
    let big_scale = common::with_first_value(&bytes, "blocks.0.bn1.weight", 1e30);
    std::fs::write(&broken, &big_scale).unwrap();
    assert!(
        NativeNetwork::load(&broken).is_ok(),
        "the scale alone folds into finite weights"
    );
    let overflow = common::with_first_value(&big_scale, "blocks.0.conv1.weight", 1e10);
    std::fs::write(&broken, overflow).unwrap();
    let e = NativeNetwork::load(&broken).unwrap_err().to_string();
    assert!(
        e.contains("blocks.0.conv1.weight")
            && e.contains("blocks.0.bn1")
            && e.contains("not finite"),
        "{e}"
    );
    // Folded weights that are finite but that the Winograd transform
    // carries past f32 (F(5x5) multiplies a kernel of equal taps by
    // (56/45)^2): every answer would be NaN.
    let unit_scale = common::with_first_value(&bytes, "stem_bn.weight", 1.0);
    let unit_scale = common::with_first_value(&unit_scale, "stem_bn.running_var", 1.0);
    std::fs::write(
        &broken,
        common::with_first_values(&unit_scale, "stem.weight", &[1e38; 9]),
    )
    .unwrap();
    assert!(
        NativeNetwork::load(&broken).is_ok(),
        "a transform of these taps stays finite"
    );
    std::fs::write(
        &broken,
        common::with_first_values(&unit_scale, "stem.weight", &[3e38; 9]),
    )
    .unwrap();
    let e = NativeNetwork::load(&broken).unwrap_err().to_string();
    assert!(
        e.contains("stem.weight") && e.contains("Winograd") && e.contains("folded.safetensors"),
        "{e}"
    );
}

/// The file cap holds the largest network the architecture allows.
#[test]
fn the_largest_allowed_network_is_under_the_file_cap() {
    let largest = NetConfig::new(64, 512).unwrap();
    let bytes: usize = largest
        .tensor_shapes()
        .iter()
        .map(|(_, shape)| 4 * shape.iter().product::<usize>())
        .sum();
    assert!(
        bytes as u64 <= wuzi::nn::network_file::MAX_FILE_BYTES,
        "{bytes}"
    );
    assert!(NetConfig::new(65, 512).is_err() && NetConfig::new(64, 513).is_err());
}

#[test]
fn random_weights_have_the_architecture_of_the_files() {
    let file = Weights::read(Path::new(&network_path("freestyle-4x32.safetensors"))).unwrap();
    let random = Weights::random(
        NetConfig {
            blocks: 4,
            channels: 32,
        },
        5,
    );
    for (name, shape) in file.config.tensor_shapes() {
        let len: usize = shape.iter().product();
        assert_eq!(file.get(&name).len(), len, "{name}");
        assert_eq!(random.get(&name).len(), len, "{name}");
    }
    let network = Arc::new(NativeNetwork::new(&random));
    let (inputs, h, w, _) = positions(FIXTURE_GAMES[3], 2);
    let BatchOutput { policy, wdl } =
        answer(&mut NativeEvaluator::new(network), &inputs.concat(), h, w);
    for b in 0..2 {
        let sum: f32 = policy[b * h * w..][..h * w].iter().sum();
        assert!((sum - 1.0).abs() < 1e-4, "policy sums to {sum}");
        assert!((wdl[b * 3..][..3].iter().sum::<f32>() - 1.0).abs() < 1e-5);
    }
}

/// libtorch's fp32 forward pass and the native one on 1,000 real positions
/// of each rule.
#[cfg(feature = "torch")]
#[test]
fn native_agrees_with_libtorch_on_a_thousand_positions_of_each_rule() {
    use wuzi::nn::{BatchEvaluator, Network, Precision};
    for tsv in FIXTURE_GAMES {
        let (inputs, h, w, rule) = positions(tsv, 1000);
        assert!(
            inputs.len() >= 1000,
            "{rule:?}: only {} positions",
            inputs.len()
        );
        let path = network_path(network_for(rule, h));
        let torch = Network::load(Path::new(&path), tch::Device::Cpu).unwrap();
        let mut frozen = torch.freeze(Precision::Fp32);
        let mut native =
            NativeEvaluator::new(Arc::new(NativeNetwork::load(Path::new(&path)).unwrap()));
        let (mut dp, mut dw) = (0.0f32, 0.0f32);
        for chunk in inputs.chunks(32) {
            let batch = chunk.concat();
            let encoded = EncodedBatch::new(&batch, h, w).expect("whole positions");
            let by_torch = BatchEvaluator::evaluate(&mut frozen, encoded);
            let by_native = native.evaluate(encoded);
            dp = dp.max(max_deviation(&by_torch.policy, &by_native.policy));
            dw = dw.max(max_deviation(&by_torch.wdl, &by_native.wdl));
        }
        eprintln!("{rule:?} {h}x{w}: largest deviation, policy {dp:.2e}, wdl {dw:.2e}");
        assert!(
            dp < TOLERANCE && dw < TOLERANCE,
            "{rule:?}: policy {dp}, wdl {dw}"
        );
    }
}

/// `precision = "auto"` on the native kernels: fp32 at once where neither
/// bf16 nor int16 products can run (the portable kernels, AVX-512 without
/// AVX512-BF16); where one can (bf16 with the AVX-512 kernels, int16 with
/// the AVX2 ones), a measured choice between it and fp32 that then holds
/// for the process, bf16 only when more than 1.1 times as fast, int16
/// 1.03 times. A fixed precision is taken as the CPU allows it.
#[test]
fn native_precision_auto_is_fp32_without_a_candidate_and_measured_once_with_one() {
    use wuzi::nn::native::{bf16_supported, choose_precision, faster_precision};
    use wuzi::nn::{Precision, PrecisionSetting};
    let bf16 = Precision::Bf16;
    assert_eq!(faster_precision(1000.0, bf16, 1000.0), Precision::Fp32);
    assert_eq!(faster_precision(1000.0, bf16, 1090.0), Precision::Fp32);
    assert_eq!(faster_precision(1000.0, bf16, 1110.0), Precision::Bf16);
    assert_eq!(faster_precision(1000.0, bf16, 600.0), Precision::Fp32);
    let int16 = Precision::Int16;
    assert_eq!(faster_precision(1000.0, int16, 1020.0), Precision::Fp32);
    assert_eq!(faster_precision(1000.0, int16, 1040.0), Precision::Int16);
    let network = Arc::new(
        NativeNetwork::load(Path::new(&network_path("freestyle-6x64.safetensors"))).unwrap(),
    );
    for isa in Isa::all_supported() {
        let candidate = match isa {
            Isa::Avx512 if bf16_supported() => Some(Precision::Bf16),
            Isa::Avx2 => Some(Precision::Int16),
            _ => None,
        };
        let auto = choose_precision(&network, PrecisionSetting::Auto, isa, 8);
        match candidate {
            None => assert_eq!(auto, Precision::Fp32, "{isa}"),
            Some(candidate) => assert!([Precision::Fp32, candidate].contains(&auto), "{isa}"),
        }
        assert_eq!(
            choose_precision(&network, PrecisionSetting::Auto, isa, 8),
            auto,
            "{isa}: chosen once"
        );
        assert_eq!(
            choose_precision(&network, PrecisionSetting::Fixed(Precision::Fp32), isa, 8),
            Precision::Fp32
        );
        let fixed = |precision, possible: bool| {
            let got = choose_precision(&network, PrecisionSetting::Fixed(precision), isa, 8);
            let want = if possible { precision } else { Precision::Fp32 };
            assert_eq!(got, want, "{isa} {precision}");
        };
        fixed(Precision::Bf16, isa == Isa::Avx512 && bf16_supported());
        fixed(Precision::Int16, isa != Isa::Portable);
    }
}

/// The measurement behind `precision = "auto"` runs on every instruction
/// set of this CPU (with the same precision twice where neither bf16 nor
/// int16 can run) and gives finite, positive rates.
#[test]
fn measuring_precisions_gives_rates() {
    use wuzi::nn::native::{bf16_supported, measure_precisions};
    use wuzi::nn::Precision;
    let network = Arc::new(
        NativeNetwork::load(Path::new(&network_path("freestyle-4x32.safetensors"))).unwrap(),
    );
    for isa in Isa::all_supported() {
        let second = match isa {
            Isa::Avx512 if bf16_supported() => Precision::Bf16,
            Isa::Avx2 => Precision::Int16,
            _ => Precision::Fp32,
        };
        for batch in [1, 4] {
            let rates = measure_precisions(&network, isa, batch, [Precision::Fp32, second]);
            assert!(
                rates.iter().all(|r| r.is_finite() && *r > 0.0),
                "{isa} batch {batch}: {rates:?}"
            );
        }
    }
}

/// Each board and precision gets its tiling: F(5x5) on 15x15 and 20x20 in
/// fp32 and int16, F(4x4) on 16x16 and under bf16 products.
#[test]
fn evaluators_tile_each_board_as_for_board_says() {
    use wuzi::nn::Precision;
    let network = Arc::new(
        NativeNetwork::load(Path::new(&network_path("freestyle-6x64.safetensors"))).unwrap(),
    );
    let fp32 = NativeEvaluator::with_kernels(Arc::clone(&network), Isa::detect(), Precision::Fp32);
    assert_eq!(fp32.tiling(15, 15), Tiling::F5);
    assert_eq!(fp32.tiling(20, 20), Tiling::F5);
    assert_eq!(fp32.tiling(16, 16), Tiling::F4);
    let bf16 = NativeEvaluator::with_kernels(Arc::clone(&network), Isa::Avx512, Precision::Bf16);
    let want = if bf16.precision() == Precision::Bf16 {
        Tiling::F4
    } else {
        Tiling::F5
    };
    assert_eq!(bf16.tiling(15, 15), want);
    // int16 products keep fp32's tilings: their rounding is far smaller.
    let int16 = NativeEvaluator::with_kernels(network, Isa::Avx2, Precision::Int16);
    assert_eq!(int16.tiling(20, 20), Tiling::F5);
    assert_eq!(int16.tiling(16, 16), Tiling::F4);
}

/// A network whose weights are all finite but whose answers overflow (a
/// value layer of 3e38s) is refused when a rule's service is made, rather
/// than played on the evaluator's no-knowledge replacements without a
/// word; a configured fp32 network that cannot be read is named in the
/// note the player sees.
#[test]
fn networks_whose_answers_overflow_are_refused_and_unused_fp32_networks_named() {
    use wuzi::config::Config;
    use wuzi::nn::provider::NetworkProvider;
    let dir = tempfile::tempdir().unwrap();
    let path = network_path("freestyle-4x32.safetensors");
    let bytes = std::fs::read(&path).unwrap();
    let overflow = dir.path().join("overflow.safetensors");
    std::fs::write(
        &overflow,
        common::with_first_values(&bytes, "value_hidden.weight", &[3e38; 32]),
    )
    .unwrap();
    NativeNetwork::load(&overflow).expect("every weight is finite");
    let config = Config::parse(&format!(
        "[network]\ndevice = \"cpu\"\nbackend = \"native\"\ntactics_only_fallback = false\n\
         freestyle = {overflow:?}\n"
    ))
    .unwrap();
    let e = NetworkProvider::new(&config.network)
        .service_for(Rule::Freestyle, BoardSize::FIFTEEN)
        .err()
        .expect("refused");
    assert!(
        e.contains("overflow.safetensors") && e.contains("not finite"),
        "{e}"
    );
    // As the rule's fp32 network, that file or one that cannot be read:
    // the rule's own plays, and the note names the file not used.
    let truncated = dir.path().join("truncated.safetensors");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    for (fp32, why) in [(&overflow, "not finite"), (&truncated, "freestyle-4x32")] {
        let config = Config::parse(&format!(
            "[network]\ndevice = \"cpu\"\nbackend = \"native\"\nprecision = \"fp32\"\n\
             freestyle = {path:?}\nfreestyle_fp32 = {fp32:?}\n"
        ))
        .unwrap();
        let (service, note) = NetworkProvider::new(&config.network)
            .service_for(Rule::Freestyle, BoardSize::FIFTEEN)
            .unwrap();
        let note = note.unwrap_or_default();
        let name = fp32.file_name().unwrap().to_string_lossy().into_owned();
        assert!(note.contains(&name) && note.contains(why), "{note}");
        assert_eq!(
            service.network_config(),
            Some(NetConfig {
                blocks: 4,
                channels: 32
            })
        );
    }
}
