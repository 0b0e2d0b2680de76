//! `wuzi-encode` as a trainer's script runs it: what it writes, and the
//! output folders it refuses before loading the data.

use std::path::Path;
use std::process::Command;

fn sample() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/games/gomocup2021_freestyle1_sample.tsv")
}

fn encode(data: &Path, out: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_wuzi-encode"))
        .args(["--rule", "freestyle", "--threads", "1", "--out"])
        .arg(out)
        .arg(data)
        .output()
        .expect("run wuzi-encode")
}

#[test]
fn the_output_folder_is_checked_before_the_data_is_loaded() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let data = dir.path().join("data");
    std::fs::create_dir(&data).expect("data folder");
    std::fs::copy(sample(), data.join("games.tsv")).expect("copy the sample");

    // Beside the data: written, with its index.
    let out = dir.path().join("export");
    let run = encode(&data, &out);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(out.join("index.tsv").is_file());

    // Inside it: the next load of the data would read the index as games.
    let inside = data.join("export");
    let run = encode(&data, &inside);
    assert!(!run.status.success());
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(
        err.contains("--out") && err.contains("inside the data"),
        "{err}"
    );
    assert!(!inside.exists());

    // A folder that cannot be made, named as the argument.
    let blocked = dir.path().join("file");
    std::fs::write(&blocked, "").expect("a file");
    let run = encode(&data, &blocked.join("out"));
    assert!(!run.status.success());
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(
        err.contains("--out") && err.contains("cannot create"),
        "{err}"
    );
}

/// The sample collection's games as the judge's PSQ files, with the
/// league's opening file: the same positions as the collection's TSV.
#[test]
fn psq_files_encode_after_the_tournament_openings() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let psq = dir.path().join("Freestyle1");
    std::fs::create_dir(&psq).expect("psq folder");
    let text = std::fs::read_to_string(sample()).expect("the sample");
    for (i, line) in text.lines().skip(1).enumerate() {
        let moves = line.split('\t').nth(11).expect("a moves column");
        let mut record = String::from("Piskvorky 20x20, 11:11, 0\n");
        for xy in moves.split(' ') {
            let (x, y) = xy.split_once(',').expect("x,y");
            let one = |v: &str| v.parse::<u32>().expect("a number") + 1;
            record += &format!("{},{},0\n", one(x), one(y));
        }
        std::fs::write(psq.join(format!("{i}.psq")), record).expect("a psq file");
    }
    let openings = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../wuzi-arena/tests/fixtures/openings/gomocup2021_freestyle20.txt");
    let positions = |run: &std::process::Output| -> Vec<String> {
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        (String::from_utf8_lossy(&run.stdout).lines())
            .filter(|l| l.ends_with(" positions"))
            .map(str::to_string)
            .collect()
    };
    let from_tsv = positions(&encode(&sample(), &dir.path().join("tsv")));
    let run = Command::new(env!("CARGO_BIN_EXE_wuzi-encode"))
        .args(["--rule", "freestyle", "--threads", "1", "--psq-openings"])
        .arg(&openings)
        .arg("--out")
        .arg(dir.path().join("psq-out"))
        .arg(&psq)
        .output()
        .expect("run wuzi-encode");
    assert!(!from_tsv.is_empty());
    assert_eq!(positions(&run), from_tsv);
    // Without the openings the judge's stones are moves too: more positions.
    let all = positions(&encode(&psq, &dir.path().join("all")));
    assert_ne!(all, from_tsv);
}
