//! Criterion benchmarks of the board, forbidden points and the solver.
//! `pbrain-wuzi bench rules` prints the same figures without criterion.

use criterion::{criterion_group, criterion_main, Criterion};
use wuzi::bench::positions::RENJU_MIDGAME;
use wuzi::bench::rules::{make_unmake_all, solve_all, solver_positions};
use wuzi::game::Point;
use wuzi::tactics::{SolveLimits, ThreatKind};

fn board_benches(c: &mut Criterion) {
    let Ok(mut board) = RENJU_MIDGAME.board_after(32) else {
        return;
    };
    let cells: Vec<Point> = board.empty_cells().collect();
    c.bench_function("make_unmake_every_empty_cell_renju_32_stones", |b| {
        b.iter(|| make_unmake_all(&mut board, &cells))
    });
    let Ok(mut renju) = RENJU_MIDGAME.board() else {
        return;
    };
    c.bench_function("forbidden_scan_renju_48_stones", |b| {
        b.iter(|| renju.forbidden_points())
    });
}

fn solver_benches(c: &mut Criterion) {
    let Ok(mut boards) = solver_positions() else {
        return;
    };
    let mut group = c.benchmark_group("solver");
    group.sample_size(10);
    group.bench_function("vcf_48_positions", |b| {
        b.iter(|| solve_all(&mut boards, ThreatKind::Vcf, SolveLimits::new(100_000, 30)))
    });
    group.bench_function("vct_48_positions", |b| {
        b.iter(|| solve_all(&mut boards, ThreatKind::Vct, SolveLimits::new(20_000, 12)))
    });
    group.finish();
}

criterion_group!(benches, board_benches, solver_benches);
criterion_main!(benches);
