//! `pbrain-wuzi analyse` on real positions: a proven win is reported, a game
//! review marks a known blunder (from the blunder suite: a ladder game where
//! Rapfi announced a forced win right after our move), and bad input gets a
//! clear error.

use std::process::Command;

use serde_json::Value;

fn analyse(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pbrain-wuzi"))
        .arg("analyse")
        .args(args)
        .output()
        .expect("run pbrain-wuzi analyse");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_open_three_to_move_is_a_proven_win() {
    // Black h8 i8 j8 (an open three), white far away: black wins by force.
    let open_three = ["h8", "a1", "i8", "a2", "j8", "a3", "--playouts", "200"];
    let (ok, text, err) = analyse(&[&open_three[..], &["--color", "never"]].concat());
    assert!(ok, "{err}");
    assert!(text.contains("black to move (move 7)"), "{text}");
    assert!(text.contains("black wins by force in"), "{text}");
    // The diagram: the last move (a3) in brackets, rows numbered from the bottom.
    assert!(text.lines().any(|l| l.starts_with(" 3 [O]")), "{text}");
    let (ok, json, err) = analyse(&[&open_three[..], &["--json"]].concat());
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&json).expect("json");
    assert_eq!(v["proven"]["result"], "win");
    assert_eq!(v["to_move"], "black");
    let best = v["best_move"]["name"].as_str().unwrap();
    assert!(["g8", "k8", "f8", "l8"].contains(&best), "{best}");
}

/// Moves the search did not visit are listed as such, not with a win
/// rate of 0; the JSON lists the --top moves, as the text does.
#[test]
fn unsearched_moves_have_no_win_rate() {
    let few = ["h8", "i9", "--playouts", "2", "--top", "4"];
    let (ok, text, err) = analyse(&[&few[..], &["--color", "never"]].concat());
    assert!(ok, "{err}");
    let listed: Vec<&str> = text.lines().filter(|l| l.contains(" visits ")).collect();
    assert_eq!(listed.len(), 4, "{text}");
    for line in &listed {
        let unvisited = line.contains(" visits       0 ");
        assert_eq!(unvisited, line.contains("not searched"), "{text}");
    }
    assert!(listed.iter().any(|l| l.contains("not searched")), "{text}");
    let (ok, json, err) = analyse(&[&few[..], &["--json"]].concat());
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&json).expect("json");
    let top = v["top"].as_array().expect("top");
    assert_eq!(top.len(), 4, "{v}");
    for m in top {
        assert_eq!(m["visits"] == 0, m["winrate"].is_null(), "{m}");
    }
}

#[test]
fn a_review_marks_the_known_blunder() {
    let fixture = include_str!("fixtures/blunders/freestyle15.tsv");
    let line = fixture
        .lines()
        .find(|l| l.starts_with("rapfi_logs/game_00005"))
        .expect("fixture line");
    let fields: Vec<&str> = line.split('\t').collect();
    let mut moves: Vec<&str> = fields[3].split_whitespace().collect();
    moves.push(fields[4]);
    let dir = tempfile::tempdir().unwrap();
    // As a PSQ file (1-based x,y,time), the format Piskvork saves.
    let mut psq = String::from("Piskvork 15x15, 11:11, 0\n");
    for m in &moves {
        let (x, y) = m.split_once(',').unwrap();
        let (x, y): (u32, u32) = (x.parse().unwrap(), y.parse().unwrap());
        psq.push_str(&format!("{},{},0\n", x + 1, y + 1));
    }
    let path = dir.path().join("game.psq");
    std::fs::write(&path, psq).unwrap();
    let (ok, json, err) = analyse(&[
        path.to_str().unwrap(),
        "--review",
        "--playouts",
        "64",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&json).expect("json");
    let reviewed = v["moves"].as_array().unwrap();
    assert_eq!(reviewed.len(), moves.len());
    let last = reviewed.last().unwrap();
    assert_eq!(last["mark"], "??", "{last}");
    assert!(last["forced_loss"]
        .as_array()
        .is_some_and(|l| !l.is_empty()));
    // The text form names it too.
    let (ok, text, _) = analyse(&[path.to_str().unwrap(), "--review", "--playouts", "64"]);
    assert!(ok);
    let last_line = text.lines().last().unwrap();
    assert!(
        last_line.contains("??") && last_line.contains("the opponent wins"),
        "{text}"
    );
}

#[test]
fn bad_input_is_a_clear_error() {
    let (ok, _, err) = analyse(&["h8", "h8"]);
    assert!(!ok);
    assert!(err.contains("occupied"), "{err}");
    let (ok, _, err) = analyse(&["h8", "z99"]);
    assert!(!ok);
    assert!(err.contains("\"z99\""), "{err}");
    let (ok, _, err) = analyse(&["h8", "--ply", "5"]);
    assert!(!ok);
    assert!(err.contains("--ply 5"), "{err}");
    // A record that goes on after its five, and one that ends in black's
    // forbidden double three, are not analysed past their end.
    let after_five = ["h8", "a1", "i8", "a2", "j8", "a3", "k8", "a4", "l8", "a5"];
    let (ok, _, err) = analyse(&after_five);
    assert!(!ok);
    assert!(
        err.contains("move 10 comes after the game ended") && err.contains("--ply 9"),
        "{err}"
    );
    // A record that ends in its five (most downloaded ones): the way to
    // the positions it has is named.
    let (ok, _, err) = analyse(&after_five[..9]);
    assert!(!ok);
    assert!(
        err.contains("black won with move 9") && err.contains("--ply 8") && !err.contains("Win("),
        "{err}"
    );
    let double_three = ["h8", "a1", "i8", "a3", "j9", "a5", "j10", "a7", "j8"];
    let mut renju = double_three.to_vec();
    renju.extend(["--rule", "renju"]);
    let (ok, _, err) = analyse(&renju);
    assert!(!ok);
    assert!(err.contains("move 9") && err.contains("forbidden"), "{err}");
    // An SGF's RU is the game's rule; an unknown one is refused.
    let dir0 = tempfile::tempdir().expect("temp dir");
    let sgf = dir0.path().join("renju.sgf");
    std::fs::write(&sgf, "(;FF[4]GM[4]SZ[15]RU[renju];B[hh];W[ii])").expect("write");
    let (ok, out, err) = analyse(&[sgf.to_str().expect("UTF-8"), "--time", "0.1", "--json"]);
    assert!(ok, "{err}");
    assert!(out.contains("\"rule\":\"renju\""), "{out}");
    std::fs::write(&sgf, "(;FF[4]GM[4]SZ[15]RU[chess];B[hh])").expect("write");
    let (ok, _, err) = analyse(&[sgf.to_str().expect("UTF-8")]);
    assert!(!ok && err.contains("RU[chess]"), "{err}");
    // A TSV's first game is analysed under its own rule (without --rule).
    let tsv = dir0.path().join("two.tsv");
    std::fs::write(
        &tsv,
        "#game_id\tyear\tleague\trule\tboard\tblack\twhite\twinner\tend\tn_opening\tn_moves\tmoves\n\
         A\t-\tx\trenju\t15\tb\tw\tD\tdraw\t0\t2\t7,7 8,8\n\
         B\t-\tx\tfreestyle\t15\tb\tw\tD\tdraw\t0\t3\t7,7 8,8 9,9\n",
    )
    .expect("write");
    let (ok, out, err) = analyse(&[tsv.to_str().expect("UTF-8"), "--time", "0.1", "--json"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("\"rule\":\"renju\"") && out.contains("\"moves_played\":2"),
        "{out}"
    );
    // An empty file is no game (not the empty board).
    let dir = tempfile::tempdir().expect("temp dir");
    let empty = dir.path().join("empty.psq");
    std::fs::write(&empty, "").expect("write");
    let (ok, _, err) = analyse(&[empty.to_str().expect("a UTF-8 path")]);
    assert!(!ok);
    assert!(err.contains("empty, no game"), "{err}");
    // A file name that names no file is said to be one, not read as moves.
    let typo = dir.path().join("gmae.sgf");
    let (ok, _, err) = analyse(&[typo.to_str().expect("a UTF-8 path")]);
    assert!(!ok);
    assert!(err.contains("gmae.sgf: no such file"), "{err}");
    // A folder is said to be one; --game is for TSV files alone.
    let (ok, _, err) = analyse(&[dir.path().to_str().expect("a UTF-8 path")]);
    assert!(!ok && err.contains("a folder"), "{err}");
    let (ok, _, err) = analyse(&["h8", "i9", "--game", "g1"]);
    assert!(!ok && err.contains("--game"), "{err}");
    // A move off the board is named in the file's own numbers (1-based).
    let off = dir.path().join("off.psq");
    std::fs::write(&off, "Piskvork 15x15, 11:11, 0\n8,8,0\n16,16,0\n").expect("write");
    let (ok, _, err) = analyse(&[off.to_str().expect("a UTF-8 path")]);
    assert!(!ok);
    assert!(err.contains("PSQ move 2: 16,16 is off"), "{err}");
    let (ok, _, err) = analyse(&[off.to_str().expect("a UTF-8 path"), "--game", "g1"]);
    assert!(
        !ok && err.contains("--game") && err.contains("PSQ"),
        "{err}"
    );
}

/// Text outside the moves in a Windows code page (a PSQ's brain path, an
/// SGF's player names) does not make a record unreadable: the training
/// loader reads the same files.
#[test]
fn a_record_with_non_utf8_text_is_analysed() {
    let dir = tempfile::tempdir().unwrap();
    let psq = dir.path().join("cp1250.psq");
    std::fs::write(
        &psq,
        b"Piskvork 15x15, 11:11, 0\n8,8,0\n9,9,0\n-1\nJi\xf8\xed\n",
    )
    .unwrap();
    let (ok, json, err) = analyse(&[psq.to_str().unwrap(), "--playouts", "8", "--json"]);
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&json).expect("json");
    assert_eq!(v["moves_played"], 2, "{v}");
    let sgf = dir.path().join("gbk.sgf");
    std::fs::write(
        &sgf,
        b"(;GM[4]SZ[15]CA[gb2312]PB[\xd5\xc5];B[hh];W[ii];B[jj])",
    )
    .unwrap();
    let (ok, json, err) = analyse(&[sgf.to_str().unwrap(), "--playouts", "8", "--json"]);
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&json).expect("json");
    assert_eq!(v["moves_played"], 3, "{v}");
}

/// `--game` finds a record by the id the training loader gives it, through
/// files joined end to end (a header mid-file) and blank lines before the
/// header; a record found but unreadable is named with its fault.
#[test]
fn a_tsv_game_is_found_by_the_loaders_id() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("joined.tsv");
    let text = "\n#game_id\trule\tboard\twinner\tn_opening\tmoves\n\
                g1\tfreestyle\t15\tD\t0\t7,7 8,8\n\
                g3\tfreestyle\t99\tD\t0\t7,7 8,8\n\
                #rule\tboard\twinner\tn_opening\tmoves\tgame_id\n\
                renju\t15\tD\t0\t7,7 8,8 9,9\tg2\n\
                freestyle\t20\tD\t0\t7,7 8,8 9,9 10,10\t\n";
    std::fs::write(&path, text).unwrap();
    let run_with = |game: &str, more: &[&str]| {
        let mut args = vec![
            path.to_str().unwrap(),
            "--game",
            game,
            "--playouts",
            "8",
            "--json",
        ];
        args.extend_from_slice(more);
        analyse(&args)
    };
    let run = |game: &str| run_with(game, &[]);
    // After the second header: its own column order.
    let (ok, json, err) = run("g2");
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&json).expect("json");
    assert_eq!(
        (v["rule"].as_str(), v["moves_played"].as_u64()),
        (Some("renju"), Some(3)),
        "{v}"
    );
    // No game_id: the file and its line, counted from the file's first
    // line as the loader counts (the blank line first included).
    let (ok, json, err) = run(&format!("{}:7", path.display()));
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&json).expect("json");
    assert_eq!(v["moves_played"], 4, "{v}");
    // Found, but its board is no board: that is the error, not "no game".
    let (ok, _, err) = run("g3");
    assert!(!ok);
    assert!(
        err.contains("\"g3\"") && err.contains("line 4") && !err.contains("no game"),
        "{err}"
    );
    let (ok, _, err) = run("g9");
    assert!(!ok && err.contains("no game \"g9\""), "{err}");
    // The record names its rule: --rule may repeat it, not contradict it.
    let with_rule = |rule: &str| run_with("g2", &["--rule", rule]);
    let (ok, _, err) = with_rule("renju");
    assert!(ok, "{err}");
    let (ok, _, err) = with_rule("freestyle");
    assert!(
        !ok && err.contains("renju") && err.contains("--rule"),
        "{err}"
    );
}

#[test]
fn a_missing_network_file_fails_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.safetensors");
    let out = Command::new(env!("CARGO_BIN_EXE_pbrain-wuzi"))
        .arg("--network")
        .arg(&missing)
        .args(["analyse", "h8", "a1", "--playouts", "50"])
        .output()
        .expect("run pbrain-wuzi analyse");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("missing.safetensors"), "{err}");
}

/// A TSV game reviewed: its tournament opening is not judged, and the
/// winning five played beside the loser's four is not marked `??` (the
/// solver found the loser's five to complete after the game was over). A
/// file whose first record is refused is an error, not a review of the
/// next game in its place.
#[test]
fn a_tsv_review_skips_the_opening_and_does_not_mark_the_winning_five() {
    let header =
        "#game_id\tyear\tleague\trule\tboard\tblack\twhite\twinner\tend\tn_opening\tn_moves\tmoves";
    // Black's row 7 and white's row 9 both reach four; black makes five.
    let game = "g1\t2024\tF\tfreestyle\t15\ta\tb\tB\tfive\t2\t9\t\
                7,7 7,9 8,7 8,9 9,7 9,9 10,7 10,9 11,7";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("games.tsv");
    std::fs::write(&path, format!("{header}\n{game}\n")).unwrap();
    let (ok, json, err) = analyse(&[
        path.to_str().unwrap(),
        "--review",
        "--playouts",
        "32",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&json).expect("json");
    let reviewed = v["moves"].as_array().unwrap();
    assert_eq!(reviewed.len(), 7, "{v}");
    assert_eq!(reviewed[0]["ply"], 3, "{v}");
    let last = reviewed.last().unwrap();
    assert_eq!(last["ply"], 9, "{last}");
    assert_ne!(last["mark"], "??", "{last}");
    // The first record refused (its second move on the first's cell): an
    // error naming the move and the --ply before it, not the next game
    // analysed.
    let refused = "g0\t2024\tR\trenju\t15\ta\tb\tD\tdraw\t0\t2\t7,7 7,7";
    std::fs::write(&path, format!("{header}\n{refused}\n{game}\n")).unwrap();
    let (ok, _, err) = analyse(&[path.to_str().unwrap(), "--playouts", "8"]);
    assert!(!ok, "the second game was analysed in the first's place");
    assert!(err.contains("move 2") && err.contains("--ply 1"), "{err}");
    // A game lost on time (no five on the board, no recorded result the
    // training loader takes) is analysed as far as it went, under its rule.
    let on_time = "g2\t2024\tR\trenju\t15\ta\tb\tW\tother\t0\t3\t7,7 8,8 9,7";
    std::fs::write(&path, format!("{header}\n{on_time}\n")).unwrap();
    let (ok, json, err) = analyse(&[path.to_str().unwrap(), "--playouts", "8", "--json"]);
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&json).expect("json");
    assert_eq!(v["rule"], "renju", "{v}");
    assert_eq!(v["moves_played"], 3, "{v}");
    // Without a game_id column the game is the file's line, as the loader
    // names it.
    let no_ids = "#rule\tboard\twinner\tn_opening\tmoves\n\
                  freestyle\t15\tB\t2\t7,7 7,9 8,7 8,9 9,7 9,9 10,7 10,9 11,7\n";
    std::fs::write(&path, no_ids).unwrap();
    let (ok, _, err) = analyse(&[path.to_str().unwrap(), "--ply", "5", "--playouts", "8"]);
    assert!(ok, "{err}");
    let by_line = format!("{}:2", path.display());
    let (ok, _, err) = analyse(&[
        path.to_str().unwrap(),
        "--game",
        &by_line,
        "--ply",
        "5",
        "--playouts",
        "8",
    ]);
    assert!(ok, "{err}");
}

/// An SGF record's set-up stones (AB, AW) are not reviewed: nobody chose
/// them in the game.
#[test]
fn an_sgf_review_skips_the_set_up_stones() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("game.sgf");
    std::fs::write(&path, "(;GM[4]SZ[15]AB[hh][jj]AW[ii];W[kk];B[ll])").unwrap();
    let (ok, json, err) = analyse(&[
        path.to_str().unwrap(),
        "--review",
        "--playouts",
        "16",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&json).expect("json");
    let plies: Vec<&Value> = v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["ply"])
        .collect();
    assert_eq!(plies, [4, 5], "{v}");
}

/// Limits that cannot be kept are refused with the flag named, not cut or
/// ignored: playouts and time together, no playouts, a threshold that is
/// no share.
#[test]
fn conflicting_or_impossible_limits_are_refused() {
    for (args, flag) in [
        (&["h8", "--playouts", "50", "--time", "5"][..], "--time"),
        (&["h8", "--playouts", "0"], "--playouts"),
        (&["h8", "--review", "--threshold=-1"], "--threshold"),
        (&["h8", "--review", "--threshold", "nan"], "--threshold"),
        // A threshold for a review that was not asked for.
        (&["h8", "--threshold", "0.2"], "--review"),
    ] {
        let (ok, _, err) = analyse(args);
        assert!(!ok, "{args:?} was accepted");
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}
