//! Property-based fuzzing of the top crate's readers: the old file
//! protocol's files and `analyse`'s positions (move lists, SGF). Arbitrary
//! and mutated input must give a value or an error, never a panic. The GTP
//! engine's fuzz test is in tests/gtp.rs (it needs the process).

use proptest::prelude::*;
use wuzi::analyse::{parse_cell, sgf_sequence};
use wuzi::game::BoardSize;
use wuzi::protocol::files::FileRequest;

/// Text with the characters these formats care about over-represented.
fn noisy_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("x".to_string()),
            Just("o".to_string()),
            Just("-".to_string()),
            Just(".".to_string()),
            Just(",".to_string()),
            Just(" ".to_string()),
            Just("\r\n".to_string()),
            Just("\n".to_string()),
            Just("(;".to_string()),
            Just("[".to_string()),
            Just("]".to_string()),
            "[a-zA-Z_]{1,12}".prop_map(|s| s),
            "-?[0-9]{1,20}".prop_map(|s| s),
            any::<char>().prop_map(|c| c.to_string()),
        ],
        0..60,
    )
    .prop_map(|parts| parts.concat())
}

/// A 15x15 PLOCHA.DAT with random cells.
fn board_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(vec!['x', 'o', '-']), 225).prop_map(|cells| {
        cells
            .chunks(15)
            .map(|row| row.iter().collect::<String>() + "\r\n")
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// Each case writes the four files a manager writes, some random, some
    /// valid, and reads them as the brain does.
    #[test]
    fn file_protocol_requests_never_panic(
        board in prop_oneof![board_text(), noisy_text()],
        tah in prop_oneof![Just("x".to_string()), Just("o".to_string()), noisy_text()],
        timeouts in prop_oneof![Just("5\n100000\n".to_string()), noisy_text()],
        info in prop_oneof![
            Just("rule 1\nmax_memory 83886080\n".to_string()),
            noisy_text(),
            noisy_text().prop_map(|t| format!("timeout_turn {t}\nrule {t}\nmax_memory {t}\n")),
        ],
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        for (name, text) in [("PLOCHA.DAT", &board), ("TAH.DAT", &tah),
                             ("TIMEOUTS.DAT", &timeouts), ("INFO.DAT", &info)] {
            std::fs::write(dir.path().join(name), text).expect("write");
        }
        let _ = FileRequest::read(dir.path(), std::time::Duration::from_millis(30));
    }

    #[test]
    fn analyse_positions_never_panic(text in noisy_text(), side in 5u32..=32) {
        let size = BoardSize::square(side).expect("size");
        for word in text.split_whitespace() {
            if let Ok(p) = parse_cell(word, size) {
                prop_assert!(size.contains(p));
            }
        }
        let _ = sgf_sequence(&text);
        let _ = sgf_sequence(&format!("(;SZ[{side}]{text})"));
    }
}
