//! `bench search`: search speed against the evaluation service's own rate
//! for the same batch size and evaluator threads, at 1 and 2 search
//! threads. The evaluators are `--evaluators`, by default as many as the
//! search threads (the engine's `network.evaluator_threads = "auto"`), so
//! each line measures a configuration the engine runs. Playouts include leaves the
//! rules or the solver decide without the network; the overhead of the
//! search is the gap between its network evaluations per second and the
//! service's rate.

use std::io::{self, Write};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::bench::format_rate;
use crate::bench::nn::{bench_model, service_rate, start_service, NnBenchOptions};
use crate::bench::positions::{FREESTYLE20_GAME, RENJU_MIDGAME, STANDARD_GAME};
use crate::nn::{Backend, EvaluatorThreads};
use crate::search::{SearchConfig, SearchLimits, Searcher};

/// Prints the figures. The leaves per batch are `options.batch_sizes[0]`,
/// or without one the configuration's `batch_size` for the backend measured.
pub fn run(
    options: &NnBenchOptions,
    search: &SearchConfig,
    out: &mut impl Write,
) -> io::Result<()> {
    let fail = |e: String| io::Error::new(io::ErrorKind::InvalidInput, e);
    let backend = options.backend.unwrap_or(Backend::Native);
    let model = bench_model(options, backend, out)?;
    let batch = match options.batch_sizes.first() {
        Some(&given) => given.max(1),
        None => search.batch_size.leaves(Some(backend)),
    };
    let setting = options
        .evaluators
        .map_or(EvaluatorThreads::PerSearchThread, EvaluatorThreads::Fixed);
    writeln!(
        out,
        "bench search: {} ({}), batch {batch}, evaluator threads {setting}, {:.1} s per figure",
        model.describe(),
        options
            .network
            .as_ref()
            .map_or("random weights".to_string(), |p| p.display().to_string()),
        options.per_item.as_secs_f64()
    )?;
    writeln!(
        out,
        "search settings (--config): solver nodes per new leaf: own VCF {}, opponent's VCF {}; VCT {} within {} plies of the root",
        search.leaf_vcf_nodes, search.opponent_vcf_nodes, search.vct_nodes, search.vct_plies
    )?;
    writeln!(
        out,
        "{:>8} {:>10} {:>18} {:>12} {:>12} {:>14} {:>8}",
        "threads", "evaluators", "position", "playouts/s", "nn evals/s", "service pos/s", "evals"
    )?;
    // Open middle-game positions (a forced reply ends a search at once and
    // measures nothing).
    let positions = [
        (&FREESTYLE20_GAME, 60),
        (&STANDARD_GAME, 20),
        (&RENJU_MIDGAME, 24),
    ];
    for threads in [1usize, 2] {
        let evaluators = setting.for_search(threads, model.on_gpu());
        for (record, plies) in positions {
            let board = record.board_after(plies).map_err(fail)?;
            let mut boards = vec![board.clone()];
            let reference = start_service(&model, evaluators, batch)?;
            let service_per_sec =
                service_rate(&reference, &mut boards, batch, evaluators, options.per_item);
            drop(reference);

            let searcher = Searcher::new(
                Arc::new(start_service(&model, evaluators, batch)?),
                SearchConfig {
                    threads,
                    batch_size: crate::search::SearchBatch::Fixed(batch),
                    ..search.clone()
                },
            );
            let budget = crate::search::TimeBudget::fixed(options.per_item);
            let limits = SearchLimits {
                time: Some(budget),
                ..SearchLimits::default()
            };
            let result = searcher.search(&board, &limits, &AtomicBool::new(false));
            let secs = result.elapsed.as_secs_f64().max(1e-3);
            let playouts = result.counters.playouts as f64 / secs;
            let evaluations = result.counters.evaluations as f64 / secs;
            let c = result.counters;
            writeln!(
                out,
                "{threads:>8} {evaluators:>10} {:>18} {:>12} {:>12} {:>14} {:>7.0}%   ({} after {} ms; revisits {}, collisions {}, leaves per batch {:.1}, solver nodes per playout {:.0})",
                record.name,
                format_rate(playouts),
                format_rate(evaluations),
                format_rate(service_per_sec),
                100.0 * evaluations / service_per_sec.max(1e-9),
                result.reason,
                result.elapsed.as_millis(),
                c.revisits,
                c.collisions,
                c.leaves_per_batch(),
                c.solver_nodes as f64 / c.playouts.max(1) as f64
            )?;
        }
    }
    Ok(())
}
