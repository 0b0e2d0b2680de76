//! The threat-space solver's tables under a memory limit. A test binary of
//! its own: it reads the process's peak resident size, which tests running
//! beside it in one process would raise.
#![cfg(target_os = "linux")]

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use wuzi::bench::positions::FREESTYLE20_GAME;
use wuzi::nn::{EvalService, Model, NetConfig, ServiceConfig};
use wuzi::search::{memory, SearchConfig, SearchLimits, Searcher, MAX_ROOT_SOLVER_NODES};

/// Moves of the 2021 Gomocup freestyle 20x20 game of the benchmarks after
/// which a VCT of the side to move is neither found nor ruled out within
/// the largest root budget: a middle game.
const MIDDLE_GAME_PLIES: usize = 40;

/// A `/proc/self/status` field in bytes.
fn status_bytes(field: &str) -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kb: usize = status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kb| kb.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"));
    kb << 10
}

/// The largest root budget the configuration allows, under a limit that
/// cannot hold its table: the root's solve is cut to its share of the
/// limit, so the process's peak stays near where it was (uncut, the table
/// alone takes over a hundred MB).
#[test]
fn the_root_solver_table_stays_within_its_share_of_the_memory_limit() {
    let service = EvalService::start_model(
        Model::random_native(
            NetConfig {
                blocks: 1,
                channels: 16,
            },
            3,
        ),
        ServiceConfig::default(),
    )
    .expect("a random network");
    let used = memory::process_private_bytes().expect("the process memory is measured here");
    let limit = used + (96 << 20);
    let service = Arc::new(service);
    let config = SearchConfig {
        threads: 1,
        max_memory: limit,
        ..SearchConfig::default()
    };
    let usual = Searcher::new(service.clone(), config.clone()).tree_budget();
    let searcher = Searcher::new(
        service,
        SearchConfig {
            root_vct_nodes: MAX_ROOT_SOLVER_NODES,
            ..config
        },
    );
    // The tree leaves the larger table its room: the cut budget's table
    // less the default one's, about 9 MB here.
    let budget = searcher.tree_budget();
    assert!(
        usual.saturating_sub(budget) >= 6 << 20,
        "{budget} bytes for the tree with the largest root budget, {usual} with the usual"
    );
    let board = FREESTYLE20_GAME
        .board_after(MIDDLE_GAME_PLIES)
        .expect("a legal game");
    // Resets the peak resident size to the current one.
    std::fs::write("/proc/self/clear_refs", "5").expect("/proc/self/clear_refs");
    let before = status_bytes("VmRSS:");
    let result = searcher.search(
        &board,
        &SearchLimits {
            max_playouts: Some(1),
            ..SearchLimits::default()
        },
        &AtomicBool::new(false),
    );
    let peak = status_bytes("VmHWM:").saturating_sub(before);
    eprintln!(
        "peak {} kB above the {} kB before the search",
        peak >> 10,
        before >> 10
    );
    assert!(result.best_move.is_some(), "{result:?}");
    assert!(
        peak < limit / 4,
        "the search's peak took {} MB above the {} MB before it, under a limit of {} MB",
        peak >> 20,
        before >> 20,
        limit >> 20
    );
}
