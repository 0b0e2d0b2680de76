//! The evaluation openings (`openings/*-eval.txt`) stay out of self-play:
//! no opening of a self-play pool (`networks/selfplay/*.txt`) of the same
//! rule and board is the same shape as an evaluation one, under any board
//! symmetry or shift. A network learns the openings it was trained from,
//! and a match from those would overstate its strength.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use wuzi_formats::opening::{
    canonical_shape as canonical, parse_file, OpeningFormat, OpeningShape as Shape,
};
use wuzi_game::game::BoardSize;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn shapes(path: &Path, size: BoardSize) -> Vec<(usize, Shape)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (openings, _) = parse_file(&text, OpeningFormat::Auto, size)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    for raw in &openings {
        let on_board = raw.moves.iter().all(|&(x, y)| {
            (0..size.width() as i64).contains(&x) && (0..size.height() as i64).contains(&y)
        });
        assert!(
            on_board,
            "{} line {}: a stone off the board",
            path.display(),
            raw.line
        );
    }
    openings
        .iter()
        .map(|raw| (raw.line, canonical(&raw.moves, size)))
        .collect()
}

/// `freestyle15-eval.txt` -> `freestyle15`.
fn league(file: &Path) -> Option<String> {
    let name = file.file_name()?.to_str()?;
    let end = name.find(|c: char| c.is_ascii_digit())?;
    let digits = name[end..].chars().take_while(char::is_ascii_digit).count();
    Some(name[..end + digits].to_string())
}

fn text_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    files
}

#[test]
fn no_self_play_pool_holds_an_evaluation_opening() {
    let root = repository();
    let evaluation = text_files(&root.join("openings"));
    let pools = text_files(&root.join("networks/selfplay"));
    assert!(!evaluation.is_empty() && !pools.is_empty());
    let mut compared = 0;
    for eval_file in &evaluation {
        let name = league(eval_file).expect("evaluation files are named RULE<SIZE>-...");
        let side: u32 = name
            .trim_start_matches(|c: char| c.is_ascii_alphabetic())
            .parse()
            .unwrap();
        let size = BoardSize::square(side).unwrap();
        let held_out: BTreeSet<Shape> = shapes(eval_file, size)
            .into_iter()
            .map(|(_, shape)| shape)
            .collect();
        for pool in pools
            .iter()
            .filter(|p| league(p).as_deref() == Some(name.as_str()))
        {
            for (line, shape) in shapes(pool, size) {
                assert!(
                    !held_out.contains(&shape),
                    "{} line {line} is an opening of {}",
                    pool.display(),
                    eval_file.display()
                );
                compared += 1;
            }
        }
    }
    assert!(
        compared > 0,
        "no self-play pool shares a league with an evaluation set"
    );
}

#[test]
fn the_same_opening_turned_or_shifted_is_recognised() {
    let size = BoardSize::square(15).unwrap();
    let opening = [(7, 7), (8, 7), (7, 9)];
    // Mirrored left-right and moved two columns: the same shape.
    let turned: Vec<(i64, i64)> = opening.iter().map(|&(x, y)| (14 - x - 2, y)).collect();
    assert_eq!(canonical(&opening, size), canonical(&turned, size));
    // The colours swapped: another opening.
    let swapped = [(8, 7), (7, 7), (7, 9)];
    assert_ne!(canonical(&opening, size), canonical(&swapped, size));
}
