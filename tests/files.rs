//! The old file protocol, as a manager runs it: the files laid out in a
//! folder, `pbrain-wuzi files DIR` started once, `TAH.DAT` and `MSG.DAT`
//! read back after it exits.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A fresh folder under the target directory, removed when dropped.
struct Folder(PathBuf);

impl Folder {
    fn new(name: &str) -> Folder {
        let dir = std::env::temp_dir().join(format!("wuzi-files-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("create the folder");
        Folder(dir)
    }

    fn write(&self, name: &str, text: &str) {
        fs::write(self.0.join(name), text).expect("write a file");
    }

    fn read(&self, name: &str) -> Option<String> {
        fs::read_to_string(self.0.join(name)).ok()
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A 15x15 board with `stones` ((x, y, 'x' or 'o')).
fn plocha(stones: &[(usize, usize, char)]) -> String {
    let mut rows = vec![vec!['-'; 15]; 15];
    for &(x, y, c) in stones {
        rows[y][x] = c;
    }
    rows.iter()
        .map(|r| r.iter().collect::<String>() + "\r\n")
        .collect()
}

/// Lays out a request as the manager does (MSG.DAT empty).
fn request(dir: &Folder, board: &str, tah: &str, timeouts: &str) {
    dir.write("PLOCHA.DAT", board);
    dir.write("TAH.DAT", tah);
    dir.write("TIMEOUTS.DAT", timeouts);
    dir.write("MSG.DAT", "");
}

/// Runs the brain once; its exit status and how long it took.
fn run(dir: &Path) -> (bool, Duration) {
    let start = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_pbrain-wuzi"))
        .arg("files")
        .arg(dir)
        .status()
        .expect("run pbrain-wuzi files");
    (status.success(), start.elapsed())
}

/// `x,y` of TAH.DAT.
fn the_move(dir: &Folder) -> (usize, usize) {
    let text = dir.read("TAH.DAT").expect("TAH.DAT");
    let (x, y) = text.trim().split_once(',').expect("x,y");
    (x.parse().expect("x"), y.parse().expect("y"))
}

fn one_line(dir: &Folder) -> String {
    let msg = dir.read("MSG.DAT").expect("MSG.DAT");
    assert_eq!(msg.lines().count(), 1, "{msg:?}");
    msg.trim().to_string()
}

#[test]
fn the_first_move_is_written_to_tah_dat() {
    let dir = Folder::new("first");
    request(&dir, &plocha(&[]), "x\r\n", "2\r\n2147483647\r\n");
    let (ok, _) = run(&dir.0);
    assert!(ok, "{:?}", dir.read("MSG.DAT"));
    let (x, y) = the_move(&dir);
    assert!(x < 15 && y < 15);
    assert!(
        one_line(&dir).starts_with("Wuzi"),
        "{:?}",
        dir.read("MSG.DAT")
    );
}

#[test]
fn mid_game_the_side_to_move_blocks_the_four() {
    let dir = Folder::new("mid");
    // x has a closed four on row 7 (o at 3,7): o, to move, must take 8,7.
    let stones = [
        (4, 7, 'x'),
        (5, 7, 'x'),
        (6, 7, 'x'),
        (7, 7, 'x'),
        (3, 7, 'o'),
        (3, 8, 'o'),
        (3, 9, 'o'),
    ];
    request(&dir, &plocha(&stones), "o", "2\n120000\n");
    let (ok, _) = run(&dir.0);
    assert!(ok, "{:?}", dir.read("MSG.DAT"));
    assert_eq!(the_move(&dir), (8, 7));
    // INFO.DAT: exactly five (rule 1), and the brain's persistent folder.
    let persistent = dir.0.join("persistent");
    dir.write(
        "INFO.DAT",
        &format!(
            "max_memory 83886080\ntimeout_match 180000\ntimeout_turn 1500\ngame_type 1\nrule 1\ntime_left 148150\nfolder {}\n",
            persistent.display()
        ),
    );
    dir.write("TAH.DAT", "o");
    let (ok, _) = run(&dir.0);
    assert!(ok, "{:?}", dir.read("MSG.DAT"));
    assert_eq!(the_move(&dir), (8, 7));
    let record = fs::read_to_string(persistent.join("Wuzi").join("moves.log")).expect("record");
    assert!(record.contains("8,7"), "{record}");
}

/// GomocupJudge writes the brain's own stones as `x` and TAH.DAT `x`
/// whether it moved first or not: here `x` has one stone fewer, so it is
/// white, and in renju white's six in a row wins where black's would be a
/// forbidden overline (read as black, `x` could not take it).
#[test]
fn the_colours_follow_the_stone_counts_not_the_symbols() {
    let dir = Folder::new("colours");
    let stones = [
        (3, 7, 'x'),
        (4, 7, 'x'),
        (5, 7, 'x'),
        (7, 7, 'x'),
        (8, 7, 'x'),
        (0, 0, 'o'),
        (3, 0, 'o'),
        (6, 0, 'o'),
        (0, 14, 'o'),
        (3, 14, 'o'),
        (6, 14, 'o'),
    ];
    request(&dir, &plocha(&stones), "x", "2\n120000\n");
    dir.write("INFO.DAT", "rule 4\n");
    let (ok, _) = run(&dir.0);
    assert!(ok, "{:?}", dir.read("MSG.DAT"));
    assert_eq!(the_move(&dir), (6, 7));
}

/// The search summary of MSG.DAT ("... n 2945 n/s 1829 tm 1609 pv ..."):
/// the value after `key`.
fn summary_value(line: &str, key: &str) -> u64 {
    let mut words = line.split_whitespace();
    words
        .by_ref()
        .find(|w| *w == key)
        .and_then(|_| words.next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {line:?}"))
}

#[test]
fn time_zero_answers_at_once() {
    let dir = Folder::new("zero");
    request(&dir, &plocha(&[(7, 7, 'x')]), "o", "0\n2147483647\n");
    let (ok, _) = run(&dir.0);
    assert!(ok, "{:?}", dir.read("MSG.DAT"));
    let (x, y) = the_move(&dir);
    assert_ne!((x, y), (7, 7));
    // 0 s per move is the shortest search: a handful of playouts, where a
    // three-second move makes thousands (counted, not timed, so that a busy
    // machine cannot fail it).
    let zero = one_line(&dir);
    // The shortest search still evaluates the batches already in flight:
    // at most search threads (2) x batch (2 on the native kernels, 8 with
    // libtorch) x pipeline (2) of the shipped configuration. CI saw 17 when
    // this said 16.
    assert!(summary_value(&zero, "n") <= 32, "{zero}");
    // The clock starts with the process (as the manager's does): a turn
    // long against start-up (libtorch, calibration, the network) beside
    // other tests' searches.
    request(&dir, &plocha(&[(7, 7, 'x')]), "o", "3\n2147483647\n");
    let (ok, _) = run(&dir.0);
    assert!(ok, "{:?}", dir.read("MSG.DAT"));
    let longer = one_line(&dir);
    assert!(summary_value(&longer, "n") > 32, "{longer}");
}

#[test]
fn malformed_files_are_reported_and_tah_dat_is_left_alone() {
    let five = [
        (0, 0, 'x'),
        (1, 0, 'x'),
        (2, 0, 'x'),
        (3, 0, 'x'),
        (4, 0, 'x'),
    ];
    // o's stones, one fewer than x's: o is to move.
    let replies = [(0, 9, 'o'), (2, 9, 'o'), (4, 9, 'o'), (6, 9, 'o')];
    let later_replies = [(7, 7, 'o'), (9, 9, 'o'), (11, 11, 'o'), (13, 13, 'o')];
    let cases: [(&str, String, &str, &str, &str); 9] = [
        (
            "ragged",
            plocha(&[]).replacen("---------------", "-------", 1),
            "x",
            "1\n1000\n",
            "line 2 has 15 squares where the first has 7",
        ),
        (
            "continuous",
            plocha(&[(2, 2, '#')]),
            "x",
            "1\n1000\n",
            "continuous",
        ),
        ("who", plocha(&[]), "z", "1\n1000\n", "expected x or o"),
        // The side to move with more stones than the other.
        (
            "counts",
            plocha(&[(7, 7, 'x')]),
            "x",
            "1\n1000\n",
            "no game of alternate moves",
        ),
        ("timeouts", plocha(&[]), "x", "soon\n", "TIMEOUTS.DAT"),
        (
            "over",
            plocha(&[five.as_slice(), &replies].concat()),
            "o",
            "1\n1000\n",
            "already over",
        ),
        // The five is not the last stone in reading order.
        (
            "over-earlier",
            plocha(&[five.as_slice(), &later_replies].concat()),
            "o",
            "1\n1000\n",
            "already over",
        ),
        // A negative time per move is no time limit to the clock.
        (
            "negative",
            plocha(&[]),
            "x",
            "-1\n2147483647\n",
            "TIMEOUTS.DAT",
        ),
        // Read up to a cap, not whole.
        (
            "huge",
            "-".repeat(2 << 20),
            "x",
            "1\n1000\n",
            "larger than 1 MiB",
        ),
    ];
    for (name, board, tah, timeouts, why) in cases {
        let dir = Folder::new(name);
        request(&dir, &board, tah, timeouts);
        let (ok, _) = run(&dir.0);
        assert!(!ok, "{name}");
        assert_eq!(dir.read("TAH.DAT").as_deref(), Some(tah), "{name}");
        let msg = one_line(&dir);
        assert!(msg.contains(why), "{name}: {msg}");
    }
}

/// INFO.DAT's clock keys are read after TIMEOUTS.DAT's check: a negative
/// `timeout_turn` there would be no limit, and the search would never end.
#[test]
fn a_negative_turn_in_info_dat_is_refused() {
    let dir = Folder::new("info-negative");
    request(&dir, &plocha(&[]), "x", "5\n2147483647\n");
    dir.write("INFO.DAT", "timeout_turn -1\n");
    // Without the check it would search until killed: wait a bounded time.
    let mut child = Command::new(env!("CARGO_BIN_EXE_pbrain-wuzi"))
        .arg("files")
        .arg(&dir.0)
        .spawn()
        .expect("run pbrain-wuzi files");
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("a negative timeout_turn in INFO.DAT searched without end");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(!status.success());
    assert_eq!(dir.read("TAH.DAT").as_deref(), Some("x"));
    let msg = one_line(&dir);
    assert!(
        msg.contains("INFO.DAT") && msg.contains("negative"),
        "{msg}"
    );
}

#[test]
fn a_missing_tah_dat_is_reported() {
    let dir = Folder::new("missing");
    request(&dir, &plocha(&[]), "x", "1\n1000\n");
    fs::remove_file(dir.0.join("TAH.DAT")).expect("remove TAH.DAT");
    let (ok, _) = run(&dir.0);
    assert!(!ok);
    assert!(dir.read("TAH.DAT").is_none());
    assert!(one_line(&dir).contains("TAH.DAT"));
}

#[test]
fn a_missing_timeouts_dat_is_reported_and_no_move_is_played() {
    let dir = Folder::new("no-timeouts");
    request(&dir, &plocha(&[]), "x", "1\n1000\n");
    fs::remove_file(dir.0.join("TIMEOUTS.DAT")).expect("remove TIMEOUTS.DAT");
    let (ok, _) = run(&dir.0);
    assert!(!ok);
    assert_eq!(dir.read("TAH.DAT").as_deref(), Some("x"));
    assert!(one_line(&dir).contains("TIMEOUTS.DAT"));
}

/// A manager on a case-sensitive file system that made `msg.dat` reads
/// that file: the reason goes there, whether the request or the
/// configuration failed, and no `MSG.DAT` beside it is left behind.
#[test]
fn the_reason_goes_into_the_managers_own_msg_dat() {
    let dir = Folder::new("lower-case");
    dir.write("plocha.dat", &plocha(&[]));
    dir.write("tah.dat", "x");
    dir.write("msg.dat", "");
    // No timeouts.dat: the request fails.
    let (ok, _) = run(&dir.0);
    assert!(!ok);
    let names = || {
        let mut names: Vec<String> = fs::read_dir(&dir.0)
            .expect("the folder")
            .map(|e| {
                e.expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        names
    };
    let msg = dir.read("msg.dat").expect("msg.dat");
    assert!(msg.contains("TIMEOUTS.DAT"), "{msg:?}");
    // A configuration that cannot be read fails before the request is.
    dir.write("timeouts.dat", "1\n1000\n");
    dir.write("msg.dat", "");
    let missing = dir.0.join("no-such-config.toml");
    let status = Command::new(env!("CARGO_BIN_EXE_pbrain-wuzi"))
        .arg("--config")
        .arg(&missing)
        .arg("files")
        .arg(&dir.0)
        .status()
        .expect("run pbrain-wuzi files");
    assert!(!status.success());
    let msg = dir.read("msg.dat").expect("msg.dat");
    assert!(msg.contains("no-such-config.toml"), "{msg:?}");
    if cfg!(unix) {
        assert_eq!(
            names(),
            ["msg.dat", "plocha.dat", "tah.dat", "timeouts.dat"],
            "a MSG.DAT beside msg.dat"
        );
    }
}

/// A copy named `wuzi-files` plays the file protocol whatever the first
/// word of its command line: on Windows that word is what the manager
/// wrote there, not the file's name.
#[cfg(unix)]
#[test]
fn a_copy_named_wuzi_files_plays_whatever_its_command_line_says() {
    use std::os::unix::process::CommandExt;
    let dir = Folder::new("copy");
    let bin = Folder::new("copy-bin");
    let copy = bin.0.join("wuzi-files");
    fs::copy(env!("CARGO_BIN_EXE_pbrain-wuzi"), &copy).expect("copy the binary");
    request(&dir, &plocha(&[(7, 7, 'x')]), "o", "1\n2147483647\n");
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/wuzi.toml");
    let status = Command::new(&copy)
        .arg0("brain")
        .arg("--config")
        .arg(&config)
        .current_dir(&dir.0)
        .status()
        .expect("run the copy");
    assert!(status.success(), "{:?}", dir.read("MSG.DAT"));
    let (x, y) = the_move(&dir);
    assert_ne!((x, y), (7, 7));
}
