//! Property-based fuzzing of the readers that input reaches: WebSocket
//! client messages, SGF, PSQ and Gomocup TSV records, GTP command lines.
//! Each gets arbitrary text and text mutated from valid input: it must
//! answer (a value or an error), never panic, and valid input must still
//! read back as written. Each test runs `CASES` inputs of each kind.

use std::path::Path;

use proptest::prelude::*;
use wuzi_arena::ws::ClientMessage;
use wuzi_data::records::Dataset;
use wuzi_formats::gtp::GtpCommand;
use wuzi_formats::record::parse_psq;
use wuzi_formats::record::{parse_sgf, sgf_text, MoveRecord, SgfInfo};
use wuzi_game::game::{BoardSize, Color, Point, Rule};

const CASES: u32 = 2_000;

/// Text with the characters these formats care about over-represented.
fn noisy_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("(".to_string()),
            Just(")".to_string()),
            Just(";".to_string()),
            Just("[".to_string()),
            Just("]".to_string()),
            Just("\\".to_string()),
            Just("\t".to_string()),
            Just("\n".to_string()),
            Just(",".to_string()),
            Just("{".to_string()),
            Just("}".to_string()),
            Just("\"".to_string()),
            Just(":".to_string()),
            "[A-Z]{1,2}".prop_map(|s| s),
            "[a-z]{1,3}".prop_map(|s| s),
            "-?[0-9]{1,12}".prop_map(|s| s),
            any::<char>().prop_map(|c| c.to_string()),
        ],
        0..80,
    )
    .prop_map(|parts| parts.concat())
}

/// `text` with a random slice replaced by `noise`.
fn mutated(text: &str, at: usize, len: usize, noise: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let at = at % (chars.len() + 1);
    let end = (at + len).min(chars.len());
    chars[..at]
        .iter()
        .chain(noise.chars().collect::<Vec<_>>().iter())
        .chain(chars[end..].iter())
        .collect()
}

fn game(size: BoardSize, cells: &[(u8, u8)]) -> Vec<MoveRecord> {
    let mut seen = std::collections::HashSet::new();
    cells
        .iter()
        .map(|&(x, y)| (x % size.width(), y % size.height()))
        .filter(|p| seen.insert(*p))
        .enumerate()
        .map(|(i, (x, y))| MoveRecord {
            point: Point::new(x, y).expect("point"),
            color: if i % 2 == 0 {
                Color::Black
            } else {
                Color::White
            },
            ms: 0,
            opening: false,
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn websocket_messages_never_panic(text in noisy_text(), at in 0usize..200, len in 0usize..20,
                                      noise in noisy_text()) {
        let _ = ClientMessage::parse(&text);
        for valid in [
            r#"{"type":"NAME","name":"wuzi","protocol":"v2","seat":"ab"}"#,
            r#"{"type":"MOVE","move":{"type":"place","point":{"row":7,"column":7}}}"#,
            r#"{"type":"INFO","winrate":0.5,"pv":[{"row":1,"column":2}]}"#,
        ] {
            let message = ClientMessage::parse(valid).expect("valid");
            prop_assert_eq!(ClientMessage::parse(&message.to_json()), Ok(message));
            let _ = ClientMessage::parse(&mutated(valid, at, len, &noise));
        }
    }

    #[test]
    fn sgf_never_panics_and_written_games_read_back(
        text in noisy_text(), at in 0usize..400, len in 0usize..20, noise in noisy_text(),
        side in 5u32..=32, cells in prop::collection::vec((0u8..32, 0u8..32), 0..40),
    ) {
        let _ = parse_sgf(&text);
        let size = BoardSize::square(side).expect("size");
        let moves = game(size, &cells);
        let info = SgfInfo {
            size,
            rule: Rule::Freestyle,
            black: "b]\\lack",
            white: "white",
            result: "B+",
            comment: "C[B[aa]]",
            game_name: "g",
        };
        let text = sgf_text(&info, &moves);
        let games = parse_sgf(&text).expect("a written game reads");
        prop_assert_eq!(games.len(), 1);
        let read: Vec<(Color, Point)> = moves.iter().map(|m| (m.color, m.point)).collect();
        prop_assert_eq!(&games[0].moves, &read);
        prop_assert_eq!(games[0].size, size);
        let _ = parse_sgf(&mutated(&text, at, len, &noise));
    }

    #[test]
    fn psq_never_panics(text in noisy_text(), at in 0usize..200, len in 0usize..20,
                        noise in noisy_text()) {
        let _ = parse_psq(&text);
        let valid = "Piskvork 15x15, 11:11, 0\n8,8,5\n9,9,3\nblack\nwhite\n";
        prop_assert!(parse_psq(valid).is_ok());
        let _ = parse_psq(&mutated(valid, at, len, &noise));
    }

    #[test]
    fn gomocup_tsv_never_panics(text in noisy_text(), at in 0usize..400, len in 0usize..30,
                                noise in noisy_text()) {
        let name = Path::new("fuzz.tsv");
        let _ = Dataset::parse(name, &text, Rule::Freestyle, &[]);
        let valid = "#game_id\tyear\tleague\trule\tboard\tblack\twhite\twinner\tend\tn_opening\tn_moves\tmoves\n\
                     g1\t2021\tF\tfreestyle\t15\ta\tb\tB\tfive\t0\t9\t7,7 8,8 7,8 8,7 7,9 8,9 7,10 8,10 7,11\n";
        let data = Dataset::parse(name, valid, Rule::Freestyle, &[]).expect("valid TSV");
        prop_assert_eq!(data.games.len(), 1);
        let _ = Dataset::parse(name, &mutated(valid, at, len, &noise), Rule::Freestyle, &[]);
    }

    #[test]
    fn gtp_lines_never_panic(text in noisy_text(), word in prop::sample::select(vec![
        "play", "genmove", "boardsize", "rectangular_boardsize", "time_left", "time_settings",
        "set_position", "set_free_handicap", "kata-set-rule", "wuzi-rule", "lz-analyze",
        "kata-analyze", "undo", "showboard", "komi", "list_commands", "known_command",
    ])) {
        // The engine's handlers are fuzzed through the process (tests/gtp.rs);
        // here the preprocessing: id and name kept, arguments cleaned.
        let _ = GtpCommand::parse(&text);
        let parsed = GtpCommand::parse(&format!("7 {word} {text}")).expect("a command");
        prop_assert_eq!(parsed.id, Some(7));
        prop_assert_eq!(parsed.name.as_str(), word);
        for arg in &parsed.args {
            prop_assert!(!arg.is_empty() && !arg.contains('#'), "{:?}", arg);
            // GTP's own blanks and control characters: ASCII ones only.
            prop_assert!(!arg.chars().any(|c| c == ' ' || c.is_ascii_control()), "{:?}", arg);
        }
        let comment = GtpCommand::parse(&format!("{word} # {text}")).expect("a command");
        prop_assert!(comment.id.is_none() && comment.name == word && comment.args.is_empty());
    }
}
