//! The network, its files and the evaluation service (on the CPU).
// libtorch: the torch build only (the native backend: tests/native.rs).
#![cfg(feature = "torch")]

mod common;

use common::p;
use tch::{Device, Kind, Tensor};
use wuzi::game::{Board, BoardSize, Color, Point, Rule};
use wuzi::nn::symmetry::{Symmetry, TensorSymmetry};
use wuzi::nn::{
    encode, EvalService, EvaluatorThreads, NetConfig, Network, Precision, PrecisionSetting,
    ServiceConfig, SymmetryMode, INPUT_PLANES,
};

fn small() -> NetConfig {
    NetConfig {
        blocks: 2,
        channels: 16,
    }
}

fn position(width: u32, height: u32, rule: Rule) -> Board {
    let size = BoardSize::new(width, height).unwrap();
    let c = size.center();
    let moves = [(0, 0), (1, 0), (1, 1), (-1, 1), (2, 2), (0, 2)];
    let points: Vec<Point> = moves
        .iter()
        .filter_map(|&(dx, dy)| size.point(c.x() as i32 + dx, c.y() as i32 + dy))
        .collect();
    Board::from_moves(size, rule, &points).unwrap()
}

fn input_of(board: &mut Board) -> Tensor {
    let (h, w) = (
        board.size().height() as usize,
        board.size().width() as usize,
    );
    let mut data = vec![0.0; INPUT_PLANES * h * w];
    encode(board, &mut data, h, w);
    Tensor::from_slice(&data).view([1, INPUT_PLANES as i64, h as i64, w as i64])
}

#[test]
fn one_network_serves_every_board_shape() {
    tch::manual_seed(1);
    let net = Network::new(small(), Device::Cpu);
    for (w, h) in [(15, 15), (20, 20), (12, 7), (5, 5), (32, 32)] {
        let mut board = position(w, h, Rule::Freestyle);
        let (policy, wdl) = net.evaluate(&input_of(&mut board));
        assert_eq!(policy.size(), vec![1, (w * h) as i64]);
        assert_eq!(wdl.size(), vec![1, 3]);
        assert!((policy.sum(Kind::Float).double_value(&[]) - 1.0).abs() < 1e-4);
        assert!((wdl.sum(Kind::Float).double_value(&[]) - 1.0).abs() < 1e-4);
        // Occupied cells get no probability.
        for &(q, _) in board.history() {
            let i = q.y() as i64 * w as i64 + q.x() as i64;
            assert_eq!(policy.double_value(&[0, i]), 0.0, "{w}x{h} at {q}");
        }
    }
}

#[test]
fn renju_forbidden_points_get_no_probability() {
    let net = Network::new(small(), Device::Cpu);
    let mut board = Board::new(BoardSize::square(15).unwrap(), Rule::Renju);
    for x in [1, 2, 3, 5, 6] {
        board.place(p(x, 7), Color::Black).unwrap();
    }
    for q in [p(0, 0), p(14, 0), p(0, 14), p(14, 14), p(10, 10)] {
        board.place(q, Color::White).unwrap();
    }
    board.set_side_to_move(Color::Black);
    assert!(board.is_forbidden(p(4, 7)));
    let (policy, _) = net.evaluate(&input_of(&mut board));
    assert_eq!(policy.double_value(&[0, 7 * 15 + 4]), 0.0);
}

#[test]
fn weights_round_trip_and_bad_files_are_refused_with_their_reason() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("net.safetensors");
    tch::manual_seed(7);
    let net = Network::new(
        NetConfig {
            blocks: 3,
            channels: 24,
        },
        Device::Cpu,
    );
    net.save(&path).unwrap();
    let loaded = Network::load(&path, Device::Cpu).unwrap();
    assert_eq!(
        loaded.config(),
        NetConfig {
            blocks: 3,
            channels: 24
        }
    );
    let mut board = position(15, 15, Rule::Standard);
    let input = input_of(&mut board);
    let (p1, v1) = net.evaluate(&input);
    let (p2, v2) = loaded.evaluate(&input);
    assert!(p1.equal(&p2) && v1.equal(&v2));

    let err = Network::load(&dir.path().join("absent.safetensors"), Device::Cpu).unwrap_err();
    assert!(
        err.to_string().contains("absent.safetensors") && err.to_string().contains("no such file"),
        "{err}"
    );

    let corrupt = dir.path().join("corrupt.safetensors");
    std::fs::write(&corrupt, b"this is not a network").unwrap();
    let err = Network::load(&corrupt, Device::Cpu)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("corrupt.safetensors") && err.contains("not a readable safetensors"),
        "{err}"
    );

    let truncated = dir.path().join("truncated.safetensors");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    assert!(Network::load(&truncated, Device::Cpu).is_err());

    // Same names, but a tensor with another shape, an extra tensor, a wrong type.
    let mut tensors: Vec<(String, Tensor)> = Tensor::read_safetensors(&path).unwrap();
    for (name, t) in tensors.iter_mut() {
        if name == "value_out.bias" {
            *t = Tensor::zeros([1], (Kind::Float, Device::Cpu));
        }
    }
    tensors.push((
        "extra.weight".into(),
        Tensor::zeros([2], (Kind::Float, Device::Cpu)),
    ));
    let mismatched = dir.path().join("mismatched.safetensors");
    Tensor::write_safetensors(&tensors, &mismatched).unwrap();
    let err = Network::load(&mismatched, Device::Cpu)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("value_out.bias") && err.contains("unexpected tensor \"extra.weight\""),
        "{err}"
    );

    // Every tensor in f16 (as libtorch writes a half network) loads, as
    // the values rounded to f16; one in f64 is refused, naming its type.
    let as_kind = |kind: Kind| -> Vec<(String, Tensor)> {
        Tensor::read_safetensors(&path)
            .unwrap()
            .into_iter()
            .map(|(n, t)| (n, t.to_kind(kind)))
            .collect()
    };
    let half_path = dir.path().join("half.safetensors");
    Tensor::write_safetensors(&as_kind(Kind::Half), &half_path).unwrap();
    let half = wuzi::nn::native::Weights::read(&half_path).unwrap();
    assert_eq!(half.storage, wuzi::nn::native::Storage::F16);
    let full = wuzi::nn::native::Weights::read(&path).unwrap();
    let rounded: Vec<f32> = full
        .get("stem.weight")
        .iter()
        .map(|v| {
            Tensor::from(*v)
                .to_kind(Kind::Half)
                .to_kind(Kind::Float)
                .double_value(&[]) as f32
        })
        .collect();
    assert_eq!(half.get("stem.weight"), rounded.as_slice());
    Network::load(&half_path, Device::Cpu).unwrap();
    let double_path = dir.path().join("double.safetensors");
    Tensor::write_safetensors(&as_kind(Kind::Double), &double_path).unwrap();
    let err = Network::load(&double_path, Device::Cpu)
        .unwrap_err()
        .to_string();
    assert!(err.contains("F64"), "{err}");

    // Values the native loader refuses, libtorch's refuses too: a NaN
    // weight would make every answer NaN.
    let nan = dir.path().join("nan.safetensors");
    std::fs::write(
        &nan,
        common::with_first_value(&bytes, "stem.weight", f32::NAN),
    )
    .unwrap();
    let err = Network::load(&nan, Device::Cpu).unwrap_err().to_string();
    assert!(
        err.contains("stem.weight") && err.contains("not finite"),
        "{err}"
    );

    // A file that names a network of any size (an empty stem of a million
    // channels, a block numbered past any use) is refused before libtorch
    // allocates it.
    let planes = wuzi::nn::INPUT_PLANES as i64;
    let huge = dir.path().join("huge.safetensors");
    // The load error of a file holding `tensors` (name and shape, zeros).
    let refusal = |tensors: &[(&str, &[i64])]| {
        let named: Vec<(String, Tensor)> = tensors
            .iter()
            .map(|(name, shape)| {
                let zeros = Tensor::zeros(*shape, (Kind::Float, Device::Cpu));
                (name.to_string(), zeros)
            })
            .collect();
        Tensor::write_safetensors(&named, &huge).unwrap();
        Network::load(&huge, Device::Cpu).unwrap_err().to_string()
    };
    let err = refusal(&[("stem.weight", &[1 << 20, planes, 0, 0])]);
    assert!(err.contains("stem.weight has shape"), "{err}");
    // The highest block number there is: one more once wrapped to none.
    let stem: &[i64] = &[16, planes, 3, 3];
    let err = refusal(&[
        ("stem.weight", stem),
        ("blocks.18446744073709551615.x", &[1]),
    ]);
    assert!(err.contains("blocks must be 1..=64"), "{err}");
    let err = refusal(&[("stem.weight", stem), ("blocks.99999.x", &[1])]);
    assert!(err.contains("blocks must be 1..=64"), "{err}");
}

#[test]
fn service_answers_like_the_network_for_every_board_size() {
    tch::manual_seed(3);
    let net = Network::new(small(), Device::Cpu);
    let reference = net.duplicate();
    let config = ServiceConfig {
        batch_size: 4,
        evaluator_threads: EvaluatorThreads::Fixed(2),
        ..ServiceConfig::default()
    };
    let service = EvalService::start(net, config).unwrap();
    let mut boards: Vec<Board> = [(15, 15), (20, 20), (9, 6), (15, 15), (20, 20), (15, 15)]
        .iter()
        .map(|&(w, h)| position(w, h, Rule::Freestyle))
        .collect();
    let pending: Vec<_> = boards.iter_mut().map(|b| service.submit(b)).collect();
    for (board, answer) in boards.iter_mut().zip(pending) {
        let evaluation = answer.recv().unwrap();
        let (policy, wdl) = reference.evaluate(&input_of(board));
        let expected: Vec<f32> = Vec::try_from(policy.flatten(0, -1)).unwrap();
        assert_eq!(evaluation.policy.len(), expected.len());
        for (a, b) in evaluation.policy.iter().zip(&expected) {
            assert!((a - b).abs() < 1e-5);
        }
        for k in 0..3 {
            assert!((evaluation.wdl[k] as f64 - wdl.double_value(&[0, k as i64])).abs() < 1e-5);
        }
    }
    drop(service);
}

/// Answers of `service` for the test positions, against `reference`.
fn assert_answers_like(service: &EvalService, reference: &Network) {
    let mut boards: Vec<Board> = [(15, 15), (9, 6), (15, 15), (15, 15), (9, 6)]
        .iter()
        .map(|&(w, h)| position(w, h, Rule::Freestyle))
        .collect();
    let pending: Vec<_> = boards.iter_mut().map(|b| service.submit(b)).collect();
    for (board, answer) in boards.iter_mut().zip(pending) {
        let evaluation = answer.recv().expect("an answer");
        let (_, wdl) = reference.evaluate(&input_of(board));
        for k in 0..3 {
            assert!((evaluation.wdl[k] as f64 - wdl.double_value(&[0, k as i64])).abs() < 1e-5);
        }
    }
}

/// `auto` evaluators follow the search threads on a CPU (at most the
/// machine's cores), grow and shrink, and keep answering; a fixed number
/// does not move.
#[test]
fn auto_evaluators_follow_the_search_threads() {
    tch::manual_seed(4);
    let net = Network::new(small(), Device::Cpu);
    let reference = net.duplicate();
    let cores = wuzi::cores::usable();
    let auto = ServiceConfig {
        batch_size: 2,
        evaluator_threads: EvaluatorThreads::PerSearchThread,
        ..ServiceConfig::default()
    };
    let service = EvalService::start(net.duplicate(), auto.clone()).unwrap();
    assert_eq!(service.evaluators(), 1);
    for (threads, expected) in [
        (2, 2.min(cores)),
        (4, 4.min(cores)),
        (1, 1),
        (3, 3.min(cores)),
    ] {
        service.fit_to_search(threads).unwrap();
        assert_eq!(service.evaluators(), expected, "{threads} search threads");
        assert_answers_like(&service, &reference);
    }
    drop(service);

    let fixed = ServiceConfig {
        evaluator_threads: EvaluatorThreads::Fixed(2),
        ..auto.clone()
    };
    let service = EvalService::start(net.duplicate(), fixed).unwrap();
    assert_eq!(service.evaluators(), 2);
    service.fit_to_search(1).unwrap();
    assert_eq!(service.evaluators(), 2);
    assert_answers_like(&service, &reference);

    let uniform = EvalService::start_uniform(auto).unwrap();
    uniform.fit_to_search(2).unwrap();
    assert_eq!(uniform.evaluators(), 2.min(cores));
    let mut board = position(15, 15, Rule::Freestyle);
    let evaluation = uniform.evaluate(&mut board).unwrap();
    assert_eq!(evaluation.wdl, [0.35, 0.3, 0.35]);
    assert_eq!(
        EvaluatorThreads::PerSearchThread.for_search(8, true),
        1,
        "a GPU keeps one evaluator"
    );
}

/// With all symmetries averaged, the evaluation of a transformed position is
/// the transformed evaluation.
#[test]
fn symmetric_evaluation_is_equivariant() {
    tch::manual_seed(5);
    let net = Network::new(small(), Device::Cpu);
    let config = ServiceConfig {
        batch_size: 8,
        symmetry: SymmetryMode::All,
        ..ServiceConfig::default()
    };
    let service = EvalService::start(net, config).unwrap();
    for (w, h) in [(15u32, 15u32), (13, 8)] {
        let mut board = position(w, h, Rule::Freestyle);
        let base = service.evaluate(&mut board).unwrap();
        let (wu, hu) = (w as usize, h as usize);
        for &s in Symmetry::all_for(hu, wu) {
            let moves: Vec<Point> = board
                .history()
                .iter()
                .map(|&(q, _)| {
                    let (x, y) = s.map_cell(q.x() as usize, q.y() as usize, hu, wu);
                    p(x as u8, y as u8)
                })
                .collect();
            let mut turned = Board::from_moves(board.size(), Rule::Freestyle, &moves).unwrap();
            let eval = service.evaluate(&mut turned).unwrap();
            for y in 0..hu {
                for x in 0..wu {
                    let (tx, ty) = s.map_cell(x, y, hu, wu);
                    let a = base.policy[y * wu + x];
                    let b = eval.policy[ty * wu + tx];
                    assert!((a - b).abs() < 1e-5, "{s:?} {x},{y}: {a} vs {b}");
                }
            }
            for k in 0..3 {
                assert!((base.wdl[k] - eval.wdl[k]).abs() < 1e-5);
            }
        }
    }
}

/// Turning the board and encoding it gives exactly the turned encoding,
/// direction planes included.
#[test]
fn input_symmetry_matches_encoding_the_turned_board() {
    for (w, h, rule) in [(15u32, 15u32, Rule::Renju), (11, 6, Rule::Freestyle)] {
        let mut board = position(w, h, rule);
        let input = input_of(&mut board);
        let (wu, hu) = (w as usize, h as usize);
        for &s in Symmetry::all_for(hu, wu) {
            let moves: Vec<Point> = board
                .history()
                .iter()
                .map(|&(q, _)| {
                    let (x, y) = s.map_cell(q.x() as usize, q.y() as usize, hu, wu);
                    p(x as u8, y as u8)
                })
                .collect();
            let mut turned = Board::from_moves(board.size(), rule, &moves).unwrap();
            assert!(
                s.apply_to_input(&input).equal(&input_of(&mut turned)),
                "{s:?} on {w}x{h}"
            );
        }
    }
}

/// Largest absolute differences between the trainable network's fp32
/// evaluation and a frozen one's (batch norms folded, in `precision`), on
/// positions from real games with the shipped freestyle network (15x15 and
/// 20x20): (policy probability, WDL probability).
fn frozen_deviation(precision: Precision) -> (f32, f32) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/networks/freestyle-4x32.safetensors"
    );
    let network = Network::load(std::path::Path::new(path), Device::Cpu).unwrap();
    let frozen = network.freeze(precision);
    assert_eq!(frozen.precision(), precision);
    let (mut policy_dev, mut wdl_dev) = (0.0f32, 0.0f32);
    for tsv in common::FIXTURE_GAMES {
        for game in common::games(tsv).iter().take(4) {
            if game.rule != Rule::Freestyle {
                continue;
            }
            let mut board = Board::new(game.size, game.rule);
            for (i, &m) in game.moves.iter().enumerate() {
                board.play(m).unwrap();
                if i % 7 != 3 || board.outcome().is_some() {
                    continue;
                }
                let input = input_of(&mut board);
                let (p32, w32) = network.evaluate(&input);
                let (p, w) = frozen.evaluate(&input);
                assert_eq!(p.kind(), Kind::Float, "probabilities come back in fp32");
                let dev = |a: &Tensor, b: &Tensor| (a - b).abs().max().double_value(&[]) as f32;
                policy_dev = policy_dev.max(dev(&p32, &p));
                wdl_dev = wdl_dev.max(dev(&w32, &w));
            }
        }
    }
    (policy_dev, wdl_dev)
}

#[test]
fn folding_the_batch_norms_changes_nothing_in_fp32() {
    let (policy, wdl) = frozen_deviation(Precision::Fp32);
    assert!(policy < 1e-4 && wdl < 1e-4, "{policy} {wdl}");
}

#[test]
fn bf16_agrees_with_fp32_within_the_stated_tolerance() {
    // Stated in networks/README.md: 0.03 on any move probability and on
    // any of win/draw/loss. bf16 keeps 8 bits of mantissa; measured on the
    // shipped 4x32 (batch norms folded): 0.010 and 0.012 (2026-11-24).
    let (policy, wdl) = frozen_deviation(Precision::Bf16);
    eprintln!("bf16 vs fp32: policy {policy:.4}, wdl {wdl:.4}");
    assert!(policy < 0.03, "policy deviates by {policy}");
    assert!(wdl < 0.03, "wdl deviates by {wdl}");
    // bf16 rounds: a path that quietly ran in fp32 would agree exactly.
    assert!(
        policy > 0.0 || wdl > 0.0,
        "bf16 gave fp32's figures exactly"
    );
}

#[test]
fn a_service_reports_its_precision() {
    let fixed = EvalService::start(
        Network::new(small(), Device::Cpu),
        ServiceConfig {
            precision: PrecisionSetting::Fixed(Precision::Bf16),
            ..ServiceConfig::default()
        },
    )
    .unwrap();
    assert_eq!(fixed.precision(), Precision::Bf16);
    assert!(fixed.calibration().is_none());
    let mut board = position(15, 15, Rule::Freestyle);
    let e = fixed.evaluate(&mut board).unwrap();
    let total: f32 = e.policy.iter().sum();
    assert!((total - 1.0).abs() < 0.01, "{total}");
    // auto: on a CPU with bf16 hardware it measures both and keeps the
    // faster; without, fp32 at once (measuring emulated bf16 took seconds).
    let auto = EvalService::start(
        Network::new(small(), Device::Cpu),
        ServiceConfig {
            precision: PrecisionSetting::Auto,
            ..ServiceConfig::default()
        },
    )
    .unwrap();
    if wuzi::nn::precision::bf16_may_be_native() {
        let c = auto.calibration().expect("auto calibrates on a bf16 CPU");
        assert!(c.fp32 > 0.0 && c.bf16 > 0.0);
        assert_eq!(auto.precision(), c.choice());
    } else {
        assert!(auto.calibration().is_none());
        assert_eq!(auto.precision(), Precision::Fp32);
    }
}

/// A rule may name a second, smaller network for inference without bf16
/// (CPUs without bf16 hardware): the provider uses it exactly when the
/// precision resolves to something other than bf16 (fp32, or the native
/// kernels' int16), with either backend.
#[test]
fn the_fp32_network_is_used_only_without_bf16() {
    use wuzi::config::{Config, ConfigError};
    use wuzi::nn::provider::NetworkProvider;
    let dir = tempfile::tempdir().unwrap();
    let large = dir.path().join("large.safetensors");
    let small_file = dir.path().join("small.safetensors");
    let large_config = NetConfig {
        blocks: 3,
        channels: 24,
    };
    Network::new(large_config, Device::Cpu)
        .save(&large)
        .unwrap();
    Network::new(small(), Device::Cpu)
        .save(&small_file)
        .unwrap();
    let config_for = |precision: &str| {
        Config::parse(&format!(
            "[network]\ndevice = \"cpu\"\nbackend = \"torch\"\nprecision = \"{precision}\"\n\
             freestyle = {large:?}\nfreestyle_fp32 = {small_file:?}\n"
        ))
        .unwrap()
    };
    for (precision, expected) in [("fp32", small()), ("bf16", large_config)] {
        let mut provider = NetworkProvider::new(&config_for(precision).network);
        for rule in [Rule::Freestyle, Rule::Caro] {
            let (service, note) = provider.service_for(rule, BoardSize::FIFTEEN).unwrap();
            assert!(note.is_none(), "{note:?}");
            assert_eq!(
                service.network_config(),
                Some(expected),
                "{precision} {rule}"
            );
        }
    }
    // Without an fp32 network, fp32 keeps the rule's network.
    let config = Config::parse(&format!(
        "[network]\ndevice = \"cpu\"\nprecision = \"fp32\"\nfreestyle = {large:?}\n\
         freestyle_fp32 = \"\"\n"
    ))
    .unwrap();
    let (service, _) = NetworkProvider::new(&config.network)
        .service_for(Rule::Freestyle, BoardSize::FIFTEEN)
        .unwrap();
    assert_eq!(service.network_config(), Some(large_config));
    // The native kernels too: the fp32 network wherever bf16 products
    // cannot run (held to AVX2, told fp32, or a CPU without AVX512-BF16),
    // the rule's own where they can, in bf16 when told so and in the
    // measured choice under auto.
    let native_bf16 = wuzi::nn::native::bf16_supported()
        && wuzi::nn::native::simd::resolve_isa(None) == wuzi::nn::Isa::Avx512;
    let auto_precision = wuzi::nn::native::choose_precision(
        &std::sync::Arc::new(wuzi::nn::NativeNetwork::load(&large).unwrap()),
        PrecisionSetting::Auto,
        wuzi::nn::native::simd::resolve_isa(None),
        config_for("auto").network.batch_size,
    );
    let bf16_where_possible = if native_bf16 {
        Precision::Bf16
    } else {
        Precision::Fp32
    };
    // On the fp32 network `auto` measures int16 against fp32 where the
    // AVX2 kernels run (held to AVX2, or an AVX2-only CPU), once per
    // process: these are the answers the services get.
    let small_auto = |isa| {
        wuzi::nn::native::choose_precision(
            &std::sync::Arc::new(wuzi::nn::NativeNetwork::load(&small_file).unwrap()),
            PrecisionSetting::Auto,
            wuzi::nn::native::simd::resolve_isa(isa),
            config_for("auto").network.batch_size,
        )
    };
    let avx2_auto = small_auto(Some(wuzi::nn::Isa::Avx2));
    let auto_precision = if native_bf16 {
        auto_precision
    } else {
        small_auto(None)
    };
    for (settings, fp32, precision) in [
        ("precision = \"fp32\"", true, Precision::Fp32),
        ("isa = \"avx2\"", true, avx2_auto),
        ("precision = \"bf16\"", !native_bf16, bf16_where_possible),
        ("precision = \"auto\"", !native_bf16, auto_precision),
    ] {
        let config = Config::parse(&format!(
            "[network]\ndevice = \"cpu\"\nbackend = \"native\"\n{settings}\n\
             freestyle = {large:?}\nfreestyle_fp32 = {small_file:?}\n"
        ))
        .unwrap();
        let (service, note) = NetworkProvider::new(&config.network)
            .service_for(Rule::Freestyle, BoardSize::FIFTEEN)
            .unwrap();
        assert!(note.is_none(), "{note:?}");
        assert_eq!(service.backend(), Some(wuzi::nn::Backend::Native));
        let expected = if fp32 { small() } else { large_config };
        assert_eq!(service.network_config(), Some(expected), "{settings}");
        assert_eq!(service.precision(), precision, "{settings}");
    }
    // Two rules on one network with different fp32 networks each get their
    // own, in either order (the provider once kept services by the main
    // file alone, so the second rule got the first one's fp32 network).
    let other_small = dir.path().join("other-small.safetensors");
    let other_config = NetConfig {
        blocks: 1,
        channels: 8,
    };
    Network::new(other_config, Device::Cpu)
        .save(&other_small)
        .unwrap();
    let config = Config::parse(&format!(
        "[network]\ndevice = \"cpu\"\nbackend = \"native\"\nprecision = \"fp32\"\n\
         freestyle = {large:?}\nfreestyle_fp32 = {small_file:?}\ncaro = \"\"\n\
         caro_fp32 = {other_small:?}\n"
    ))
    .unwrap();
    for order in [[Rule::Freestyle, Rule::Caro], [Rule::Caro, Rule::Freestyle]] {
        let mut provider = NetworkProvider::new(&config.network);
        for rule in order {
            let (service, _) = provider.service_for(rule, BoardSize::FIFTEEN).unwrap();
            let expected = if rule == Rule::Caro {
                other_config
            } else {
                small()
            };
            assert_eq!(service.network_config(), Some(expected), "{order:?} {rule}");
        }
    }
    // An fp32 network that cannot be read leaves the rule its own.
    let config = Config::parse(&format!(
        "[network]\ndevice = \"cpu\"\nbackend = \"native\"\nprecision = \"fp32\"\n\
         freestyle = {large:?}\nfreestyle_fp32 = \"no/such/file.safetensors\"\n"
    ))
    .unwrap();
    let (service, _) = NetworkProvider::new(&config.network)
        .service_for(Rule::Freestyle, BoardSize::FIFTEEN)
        .unwrap();
    assert_eq!(service.network_config(), Some(large_config));
    // network.isa chooses the native kernels' instruction set; portable
    // runs everywhere, so the service must say it runs portable code.
    let config = Config::parse(&format!(
        "[network]\ndevice = \"cpu\"\nbackend = \"native\"\nisa = \"portable\"\n\
         freestyle = {large:?}\n"
    ))
    .unwrap();
    let (service, note) = NetworkProvider::new(&config.network)
        .service_for(Rule::Freestyle, BoardSize::FIFTEEN)
        .unwrap();
    assert!(note.is_none(), "{note:?}");
    let description = service.description().unwrap_or_default();
    assert!(description.contains("(portable)"), "{description}");
    match Config::parse("[network]\nisa = \"avx1024\"\n") {
        Err(ConfigError::Invalid(e)) => assert_eq!(e.key, "network.isa", "{e}"),
        other => panic!("{other:?}"),
    }
}
