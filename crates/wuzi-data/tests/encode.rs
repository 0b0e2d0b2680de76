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
