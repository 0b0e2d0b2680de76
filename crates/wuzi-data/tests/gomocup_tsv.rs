//! `wuzi-gomocup-tsv` as run on a Gomocup results folder.

use std::process::Command;

use wuzi_formats::tsv::{moves_text, Columns, TsvGame};

/// A Gomocup results folder (one .psq per game, as GomocupJudge writes it)
/// gives back the games of the collection
/// they came from, line for line: the opening found among the league's
/// openings (its stones not trained on), black the first engine named, the
/// winner from the file name. A game turned by a symmetry of the board
/// keeps its opening's length; one that starts from no opening of the file
/// is left out and counted.
#[test]
fn gomocup_psq_folders_convert_to_the_collections_tsv() {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures");
    let cases = [
        (
            "gomocup2021_freestyle1_sample.tsv",
            "../../../crates/wuzi-arena/tests/fixtures/openings/gomocup2021_freestyle20.txt",
            "Freestyle1",
            "2021",
        ),
        (
            "gomocup2024_freestyle15_2_sample.tsv",
            "gomocup2024_freestyle15_openings.txt",
            "Freestyle15_2",
            "2024",
        ),
    ];
    for (games, openings, league, year) in cases {
        let text = std::fs::read_to_string(format!("{fixtures}/games/{games}")).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let columns = Columns::from_header(&lines[0]).unwrap();
        let dir = tempfile::tempdir().unwrap();
        // The psq of one game, as the judge writes it: the opening's
        // stones at 0 ms, the names of the engines' archives.
        let write_psq = |game: &TsvGame| {
            let (width, height) = (game.size.width(), game.size.height());
            let mut psq = format!("Piskvorky {width}x{height}, 11:11, 0\n");
            for (i, p) in game.moves.iter().enumerate() {
                let ms = if i < game.opening { 0 } else { 100 + i };
                psq += &format!("{},{},{ms}\n", p.x() + 1, p.y() + 1);
            }
            psq += &format!(
                "{}.zip\n{}.zip\n-1\n1,{}\n",
                game.black, game.white, game.league
            );
            let name = game.id.rsplit('/').next().unwrap();
            std::fs::write(dir.path().join(format!("{name}.psq")), psq).unwrap();
        };
        let mut turned = Vec::new();
        for line in &lines[1..] {
            let game = TsvGame::parse(&columns, line).unwrap();
            write_psq(&game);
            // The same game mirrored left to right, under another round.
            let right = i32::from(game.size.width()) - 1;
            let mirrored = TsvGame {
                id: game
                    .id
                    .replacen(&format!("/{league}/"), &format!("/{league}/9"), 1),
                moves: (game.moves.iter())
                    .map(|p| {
                        let (x, y) = (i32::from(p.x()), i32::from(p.y()));
                        game.size.point(right - x, y).unwrap()
                    })
                    .collect(),
                ..game.clone()
            };
            write_psq(&mirrored);
            // Its line: the collection's, but for the id and the moves.
            let mut fields: Vec<&str> = line.split('\t').collect();
            let moves = moves_text(&mirrored.moves);
            fields[0] = &mirrored.id;
            fields[11] = &moves;
            turned.push(fields.join("\t"));
        }
        lines.extend(turned);
        // A game from no opening of the file: a lone stone in the corner.
        std::fs::write(
            dir.path().join("99_0_1_1.psq"),
            "Piskvorky 15x15, 11:11, 0\n1,1,0\n2,2,5\nA.zip\nB.zip\n-1\n",
        )
        .unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_wuzi-gomocup-tsv"))
            .args([
                "--league",
                league,
                "--year",
                year,
                "--rule",
                "freestyle",
                "--openings",
            ])
            .arg(format!("{fixtures}/games/{openings}"))
            .arg(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let mut got: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        assert_eq!(got.first(), lines.first(), "header");
        got[1..].sort();
        lines[1..].sort();
        assert_eq!(got, lines, "{games}");
        assert!(
            stderr.contains("wuzi-gomocup-tsv: left out 1: no opening of the file"),
            "{stderr}"
        );
    }
}
