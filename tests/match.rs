//! pbrain-wuzi under its own match runner, against the random test brain
//! of the core crate (built beside it in the same target folder).

use std::path::PathBuf;

use wuzi::arena::stats::Wld;
use wuzi::arena::{run, EndReason, MatchArgs};
use wuzi::game::{Board, BoardSize, Rule};

const WUZI: &str = env!("CARGO_BIN_EXE_pbrain-wuzi");

/// The test brain: `cargo test --workspace` builds it beside pbrain-wuzi.
fn test_brain() -> PathBuf {
    let path = PathBuf::from(WUZI).with_file_name("wuzi-test-brain");
    assert!(
        path.exists(),
        "{} is missing: run the tests with --workspace",
        path.display()
    );
    path
}

/// Every game is legal, ends by a five, and the engine wins them all (it
/// blocks fives and makes its own; the random brain does neither reliably).
#[test]
fn pbrain_wuzi_beats_the_random_brain() {
    let brain = test_brain();
    for rule in [Rule::Freestyle, Rule::Renju] {
        let words = format!(
            "--engine1 cmd={WUZI} arg=--threads arg=1 name=wuzi init=20000 \
             --engine2 cmd={} arg=--mode arg=random name=random \
             --each turn=300 tolerance=2000 --rule {} --board 15 --games 2 --random-stones 2 --seed 9 --quiet",
            brain.display(),
            rule.gomocup_value()
        );
        let words: Vec<String> = words.split_whitespace().map(str::to_string).collect();
        let args = MatchArgs::from_words(&words).unwrap_or_else(|e| panic!("{e}"));
        let s = run(&args).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.games.len(), 2);
        for g in &s.games {
            assert!(
                matches!(g.reason, EndReason::Five),
                "{rule}: {:?}",
                g.reason
            );
            let mut board = Board::new(BoardSize::FIFTEEN, rule);
            for m in &g.moves {
                board
                    .check_move(m.point.x() as i64, m.point.y() as i64, m.color)
                    .unwrap_or_else(|e| panic!("{rule}: game {}: {e}", g.index));
                board.place(m.point, m.color).expect("legal");
            }
            assert_eq!(board.outcome(), Some(g.outcome), "{rule}: game {}", g.index);
        }
        assert_eq!(
            s.total,
            Wld {
                wins: 2,
                losses: 0,
                draws: 0
            },
            "{rule}: {s}"
        );
    }
}
