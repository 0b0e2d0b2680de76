//! `pbrain-wuzi gtp` driven as GTP controllers drive it: a scripted exchange
//! with exact answers, bad input answered `? ...` with the position
//! unchanged, analysis, and a whole game between two engines through a
//! small referee. The referee's coordinates and five check are written here,
//! independently of the engine's code.

mod common;

use std::time::{Duration, Instant};

use common::brain::Brain;

/// A `pbrain-wuzi gtp` process with a GTP client's view of it.
struct Engine {
    process: Brain,
}

/// One response: success or failure, the id echoed, the text.
#[derive(Debug, PartialEq)]
struct Response {
    success: bool,
    id: Option<u64>,
    text: String,
}

impl Engine {
    fn start() -> Engine {
        Engine {
            process: Brain::start(&["gtp"]),
        }
    }

    /// `pbrain-wuzi gtp` with one search thread and a configuration
    /// (written in `dir`) whose `[network]` table is `networks`.
    fn with_networks(dir: &std::path::Path, networks: &str) -> Engine {
        let config = common::config_file(dir, &format!("[network]\n{networks}"));
        Engine {
            process: Brain::start(&[
                "--config",
                config.to_str().unwrap(),
                "--threads",
                "1",
                "gtp",
            ]),
        }
    }

    /// Sends one command and reads its whole response (up to the empty line).
    fn ask(&mut self, command: &str) -> Response {
        self.process.send(command);
        self.read_response()
    }

    fn read_response(&mut self) -> Response {
        let first = self.process.expect(|l| !l.trim().is_empty());
        let mut lines = vec![first.clone()];
        loop {
            let line = self.process.expect(|_| true);
            if line.trim().is_empty() {
                break;
            }
            lines.push(line);
        }
        let (mark, rest) = first.split_at(1);
        let success = match mark {
            "=" => true,
            "?" => false,
            _ => panic!("not a GTP response: {first:?}"),
        };
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let id = (!digits.is_empty()).then(|| digits.parse().expect("id"));
        let mut text = rest[digits.len()..].trim().to_string();
        for more in &lines[1..] {
            text.push('\n');
            text.push_str(more);
        }
        Response { success, id, text }
    }

    fn ok(&mut self, command: &str) -> String {
        let r = self.ask(command);
        assert!(r.success, "{command}: {r:?}");
        r.text
    }
}

fn success(id: Option<u64>, text: &str) -> Response {
    Response {
        success: true,
        id,
        text: text.to_string(),
    }
}

fn failure(id: Option<u64>, text: &str) -> Response {
    Response {
        success: false,
        id,
        text: text.to_string(),
    }
}

#[test]
fn a_scripted_exchange_gets_exact_answers() {
    let mut e = Engine::start();
    assert_eq!(e.ask("protocol_version"), success(None, "2"));
    assert_eq!(e.ask("1 name"), success(Some(1), "Wuzi"));
    assert_eq!(
        e.ask("2 version"),
        success(Some(2), env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(e.ask("known_command genmove"), success(None, "true"));
    assert_eq!(e.ask("known_command fly"), success(None, "false"));
    let commands = e.ok("list_commands");
    for required in [
        "protocol_version",
        "name",
        "version",
        "known_command",
        "list_commands",
        "quit",
        "boardsize",
        "clear_board",
        "komi",
        "play",
        "genmove",
        "undo",
        "showboard",
        "time_settings",
        "time_left",
        "reg_genmove",
        "set_position",
        "lz-analyze",
        "kata-analyze",
    ] {
        assert!(
            commands.lines().any(|l| l == required),
            "{required}: {commands}"
        );
    }
    // Comments and empty lines get no response; the next command does.
    e.process.send("# a comment");
    e.process.send("   ");
    assert_eq!(e.ask("3 boardsize 15"), success(Some(3), ""));
    assert_eq!(e.ask("clear_board"), success(None, ""));
    assert_eq!(e.ask("komi 6.5"), success(None, ""));
    assert_eq!(
        e.ask("kata-set-rule basicrule freestyle"),
        success(None, "")
    );
    assert_eq!(e.ask("time_settings 300 5 1"), success(None, ""));
    assert_eq!(e.ask("time_left b 280 0"), success(None, ""));
    // Times no clock can hold are refused, not a panic; the engine answers on.
    for bad in ["inf", "nan", "1e20", "-1"] {
        assert_eq!(
            e.ask(&format!("time_left w {bad} 0")),
            failure(None, "syntax error: time_left COLOR TIME STONES"),
            "time_left w {bad} 0"
        );
    }
    assert_eq!(e.ask("time_left w 280 0"), success(None, ""));
    // Handicap stones: black stones on an empty board, white to move; at
    // least two of them (GTP v2), so one is refused and places nothing.
    let empty = e.ok("showboard");
    assert_eq!(
        e.ask("set_free_handicap A1"),
        failure(
            None,
            "bad vertex list: set_free_handicap takes 2 to 224 vertices"
        )
    );
    assert_eq!(e.ok("showboard"), empty);
    assert_eq!(e.ask("set_free_handicap A1 B2"), success(None, ""));
    let handicap = e.ok("showboard");
    assert!(handicap.contains("white to move"), "{handicap}");
    assert!(
        handicap.lines().any(|l| l.trim_start().starts_with("1  X")),
        "{handicap}"
    );
    assert_eq!(e.ask("undo"), failure(None, "cannot undo"));
    // A closed four of black on row 8 (set_position clears the board first):
    // white's only move is M8.
    assert_eq!(
        e.ask("set_position b H8 w G8 b J8 w G9 b K8 w G10 b L8"),
        success(None, "")
    );
    assert_eq!(e.ask("4 genmove w"), success(Some(4), "M8"));
    // reg_genmove answers without playing: the board is unchanged. (A
    // fifth of a second per move: Canadian byo-yomi, 1 s per 5 stones.)
    assert_eq!(e.ask("time_settings 0 1 5"), success(None, ""));
    let before = e.ok("showboard");
    let reg = e.ask("reg_genmove b");
    assert!(reg.success, "{reg:?}");
    assert_eq!(e.ok("showboard"), before);
    // Even for the side not to move: the side to move stays black.
    let reg = e.ask("reg_genmove w");
    assert!(reg.success, "{reg:?}");
    assert_eq!(e.ok("showboard"), before);
    assert!(before.contains("black to move"), "{before}");
    // The board shows the stones where the vertices say.
    let row8 = before
        .lines()
        .find(|l| l.trim_start().starts_with("8 "))
        .expect("row 8");
    assert_eq!(
        row8.split_whitespace().collect::<Vec<_>>(),
        ["8", ".", ".", ".", ".", ".", ".", "O", "X", "X", "X", "X", "O", ".", ".", "."]
    );
    // Undo takes back the played move, never the set-up stones.
    assert_eq!(e.ask("undo"), success(None, ""));
    assert_eq!(e.ask("undo"), failure(None, "cannot undo"));
    assert_eq!(e.ask("9 quit"), success(Some(9), ""));
    assert!(e.process.wait_exit(Duration::from_secs(10)).is_some());
}

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    let mut e = Engine::start();
    e.ok("boardsize 15");
    e.ok("play black H8");
    e.ok("play white J9");
    let board = e.ok("showboard");
    for (command, expected) in [
        ("7 fly away", failure(Some(7), "unknown command")),
        ("boardsize 40", failure(None, "unacceptable size")),
        ("boardsize 4", failure(None, "unacceptable size")),
        ("play b H8", failure(None, "illegal move: H8 is occupied")),
        (
            "play b I8",
            failure(None, "syntax error: invalid coordinate \"I8\""),
        ),
        ("play b Q1", failure(None, "illegal move: off the board")),
        ("play b A16", failure(None, "illegal move: off the board")),
        (
            "play b pass",
            failure(None, "illegal move: gomoku has no pass"),
        ),
        (
            "play green H9",
            failure(None, "syntax error: invalid color \"green\""),
        ),
        ("play b", failure(None, "syntax error: play COLOR VERTEX")),
        ("komi lots", failure(None, "syntax error: komi NUMBER")),
        ("genmove", failure(None, "syntax error: genmove COLOR")),
        (
            "time_settings 1 2",
            failure(None, "syntax error: time_settings MAIN BYO_YOMI STONES"),
        ),
        (
            "wuzi-rule chess",
            failure(
                None,
                "syntax error: expected freestyle, standard, renju or caro",
            ),
        ),
        ("set_free_handicap D4 E5", failure(None, "board not empty")),
        (
            "set_position b H8 w",
            failure(None, "syntax error: set_position COLOR VERTEX ..."),
        ),
        (
            "set_position b H8 w H8",
            failure(None, "bad vertex list: H8 is repeated"),
        ),
        // A finished position, its five not the last stone listed.
        (
            "set_position b A1 b B1 b C1 b D1 b E1 w H10",
            failure(None, "illegal position: black has five in a row"),
        ),
    ] {
        assert_eq!(e.ask(command), expected, "{command}");
        assert_eq!(e.ok("showboard"), board, "after {command}");
    }
    e.ok("quit");
}

/// GTP drops every CR (its preprocessing), so a CR inside a command does
/// not split it; CR LF ends lines as LF does.
#[test]
fn a_carriage_return_is_dropped_not_a_line_end() {
    let mut e = Engine::start();
    e.process.send("1 na\rme");
    assert_eq!(e.read_response(), success(Some(1), "Wuzi"));
    e.process.send("2 boardsize 15\r");
    assert_eq!(e.read_response(), success(Some(2), ""));
    e.ok("quit");
}

/// genmove answers pass on a finished board; a referee that relays it to
/// the other engine gets it accepted there, and nothing changes. Before
/// the game is over a pass is refused.
#[test]
fn a_pass_is_accepted_once_the_game_is_over() {
    let mut e = Engine::start();
    e.ok("boardsize 15");
    for (black, white) in [("A1", "A15"), ("B1", "B15"), ("C1", "C15"), ("D1", "D15")] {
        e.ok(&format!("play b {black}"));
        e.ok(&format!("play w {white}"));
    }
    assert_eq!(
        e.ask("play w pass"),
        failure(None, "illegal move: gomoku has no pass")
    );
    let before = e.ok("showboard");
    e.ok("play b E1");
    let board = e.ok("showboard");
    assert_eq!(e.ask("genmove w"), success(None, "pass"));
    assert_eq!(e.ask("play w pass"), success(None, ""));
    assert_eq!(
        e.ask("play b resign"),
        failure(None, "syntax error: resign is no vertex")
    );
    assert_eq!(e.ok("showboard"), board);
    // GUIs (Sabaki, GoGui) record both passes as moves: undo takes them
    // back before the five.
    e.ok("undo");
    e.ok("undo");
    assert_eq!(e.ok("showboard"), board);
    e.ok("undo");
    assert_eq!(e.ok("showboard"), before);
    e.ok("quit");
}

/// A pass stays where it came in the history: after a rule switch lets
/// the game go on past it, `undo` takes back the stones played since
/// first, and undoing genmove's pass gives the move back to the side that
/// had it.
#[test]
fn undo_takes_back_a_pass_only_when_it_is_the_last_move() {
    let mut e = Engine::start();
    e.ok("boardsize 15");
    for black in ["A1", "B1", "C1", "D1", "F1"] {
        e.ok(&format!("play b {black}"));
    }
    let before_six = e.ok("showboard");
    e.ok("play b E1"); // six in a row: a win in freestyle only
    let six = e.ok("showboard");
    assert_eq!(e.ask("genmove b"), success(None, "pass"));
    e.ok("undo");
    assert_eq!(e.ok("showboard"), six, "the side to move is white's again");
    assert_eq!(e.ask("genmove w"), success(None, "pass"));
    e.ok("wuzi-rule standard");
    let six_standard = e.ok("showboard");
    e.ok("play w H8");
    e.ok("undo");
    assert_eq!(
        e.ok("showboard"),
        six_standard,
        "H8 taken back, not the pass"
    );
    e.ok("undo");
    assert_eq!(e.ok("showboard"), six_standard, "then the pass");
    e.ok("undo");
    e.ok("wuzi-rule freestyle");
    // The stones as before E1 (GTP lets either colour move next).
    let stones = |board: &str| {
        board
            .rsplit_once('\n')
            .map(|(stones, _)| stones.to_string())
    };
    assert_eq!(
        stones(&e.ok("showboard")),
        stones(&before_six),
        "then the sixth stone"
    );
    e.ok("quit");
}

/// A stone played out of turn and taken back gives the turn back to the
/// side that had it, as a pass does, also after `genmove` of the other
/// colour; `resign` is no vertex; a line cut at the length limit holding
/// `undo`, which reads no arguments, undoes nothing.
#[test]
fn undo_restores_the_side_to_move_and_a_cut_line_runs_nothing() {
    let mut e = Engine::start();
    e.ok("boardsize 15");
    e.ok("time_settings 0 1 1");
    e.ok("play b H8");
    let white_to_move = e.ok("showboard");
    e.ok("play b J9");
    e.ok("undo");
    assert_eq!(e.ok("showboard"), white_to_move);
    e.ok("genmove b");
    e.ok("undo");
    assert_eq!(e.ok("showboard"), white_to_move);
    let resign = e.ask("3 play b resign");
    assert!(!resign.success && resign.id == Some(3), "{resign:?}");
    assert!(resign.text.starts_with("syntax error"), "{resign:?}");
    let padding = " ".repeat(70_000);
    let cut = e.ask(&format!("5 undo{padding}x"));
    assert!(!cut.success && cut.id == Some(5), "{cut:?}");
    assert_eq!(e.ok("showboard"), white_to_move);
    e.ok("quit");
}

/// A genmove that resigns plays nothing: the side to move stays the one
/// before it (an analysis without a colour analyses that side).
#[test]
fn a_resigning_genmove_leaves_the_side_to_move() {
    let mut e = Engine::start();
    e.ok("boardsize 15");
    e.ok("time_settings 0 1 1");
    // Black's open four H8-L8 (G8 and M8 empty), black to move.
    for (color, at) in [
        ("b", "H8"),
        ("w", "A1"),
        ("b", "J8"),
        ("w", "A3"),
        ("b", "K8"),
        ("w", "A5"),
        ("b", "L8"),
        ("w", "A7"),
    ] {
        e.ok(&format!("play {color} {at}"));
    }
    let black_to_move = e.ok("showboard");
    assert_eq!(e.ok("genmove w").to_ascii_lowercase(), "resign");
    assert_eq!(e.ok("showboard"), black_to_move);
    e.ok("quit");
}

/// KataGo's `allow` and `avoid` hold the analysed side's first move to
/// the cells allowed, or off those avoided; the next analysis is free.
#[test]
fn analysis_keeps_to_allow_and_avoid() {
    let mut e = Engine::start();
    e.ok("boardsize 15");
    e.ok("play b H8");
    let moves = |infos: &[String]| -> Vec<String> {
        infos
            .iter()
            .flat_map(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                words
                    .windows(2)
                    .filter(|w| w[0] == "move")
                    .map(|w| w[1].to_string())
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    e.process.send("kata-analyze w interval 10 allow w J9,G7 1");
    assert_eq!(e.process.expect(|l| !l.trim().is_empty()), "=");
    let allowed = moves(&analysis_infos(&mut e, 4));
    assert!(!allowed.is_empty());
    assert!(
        allowed.iter().all(|m| m == "J9" || m == "G7"),
        "{allowed:?}"
    );
    e.process
        .send("kata-analyze w interval 10 avoid w J9,G7,H9,J8 1");
    assert_eq!(e.process.expect(|l| !l.trim().is_empty()), "=");
    let avoided = moves(&analysis_infos(&mut e, 4));
    assert!(!avoided.is_empty());
    assert!(
        avoided
            .iter()
            .all(|m| !["J9", "G7", "H9", "J8"].contains(&m.as_str())),
        "{avoided:?}"
    );
    // Asked on a finished board, the analysis closes at once: its allow
    // does not hold the next genmove (it was kept, and the win below
    // was not played).
    e.ok("clear_board");
    for mv in [
        "b A15", "w A1", "b B15", "w B1", "b C15", "w C1", "b D15", "w J1",
    ] {
        e.ok(&format!("play {mv}"));
    }
    e.ok("play b E15");
    e.process.send("lz-analyze b 50 allow b A3 1");
    assert_eq!(e.process.expect(|l| !l.trim().is_empty()), "=");
    assert_eq!(e.process.expect(|_| true).trim(), "");
    e.ok("undo");
    e.ok("time_settings 0 1 1");
    assert_eq!(e.ask("genmove b"), success(None, "E15"));
    e.ok("clear_board");
    e.ok("play b H8");
    e.process.send("kata-analyze w interval 10");
    assert_eq!(e.process.expect(|l| !l.trim().is_empty()), "=");
    let free = moves(&analysis_infos(&mut e, 8));
    assert!(
        free.iter()
            .any(|m| ["J9", "G7", "H9", "J8"].contains(&m.as_str())),
        "{free:?}"
    );
    e.ok("quit");
}

/// KataGo's `rectangular_boardsize`, which Sabaki and LizzieYzy send for a
/// board whose sides differ.
#[test]
fn a_rectangular_board_is_set_as_guis_set_it() {
    let mut e = Engine::start();
    assert_eq!(e.ok("known_command rectangular_boardsize"), "true");
    assert!(!e.ask("play b A20").success, "off the 15x15 board");
    e.ok("rectangular_boardsize 15 20");
    e.ok("play b A20");
    assert!(!e.ask("play w Q1").success, "15 columns");
    assert!(!e.ask("rectangular_boardsize 15").success);
    assert_eq!(
        e.ask("rectangular_boardsize 15 x"),
        failure(None, "syntax error: rectangular_boardsize WIDTH HEIGHT")
    );
    e.ok("play w B20");
    // Past 25 columns the two-letter labels stay apart, over their cells.
    e.ok("rectangular_boardsize 32 6");
    e.ok("play b AG1");
    let board = e.ok("showboard");
    let header = board.lines().find(|l| l.contains("AG")).expect("a header");
    assert!(header.ends_with(" AE AF AG"), "{board}");
    let bottom = board
        .lines()
        .find(|l| l.trim_start().starts_with("1 "))
        .expect("row 1");
    assert_eq!(bottom.len(), header.len(), "{board}");
    assert!(bottom.ends_with("  X"), "{board}");
    e.ok("quit");
}

/// An analysis still running when the input ends is stopped, and its
/// response closed with the empty line.
#[test]
fn an_analysis_at_the_end_of_input_is_closed() {
    let text = common::output_at_end_of_input(&["gtp"], b"boardsize 15\n1 lz-analyze b 10\n");
    assert!(text.contains("=1"), "{text:?}");
    assert!(text.ends_with("\n\n"), "{text:?}");
}

/// The same for an analysis held back behind a genmove, which starts only
/// once the input has ended.
#[test]
fn an_analysis_queued_behind_a_search_at_the_end_of_input_is_closed() {
    let text = common::output_at_end_of_input(
        &["gtp"],
        b"boardsize 15\ntime_settings 0 1 1\ngenmove b\n1 lz-analyze w 10\n",
    );
    assert!(text.contains("=1"), "{text:?}");
    assert!(text.ends_with("\n\n"), "{text:?}");
}

/// A line longer than the reader keeps (64 KiB) is cut; the command it
/// held is refused, not run with the arguments that survived the cut.
#[test]
fn an_overlong_line_is_refused_whole() {
    let mut e = Engine::start();
    e.ok("boardsize 15");
    e.ok("play black H8");
    let board = e.ok("showboard");
    let padding = " ".repeat(70_000);
    let response = e.ask(&format!("5 set_position b A1 w B2{padding}b C3 w D4"));
    assert!(!response.success, "{response:?}");
    assert_eq!(response.id, Some(5));
    assert_eq!(e.ok("showboard"), board);
    e.ok("quit");
}

/// Commands that pile up behind a `genmove` are held up to a limit (256);
/// beyond it they wait in the pipe, so that memory stays bounded and every
/// command is answered in order, `quit` included (GTP requires the order).
#[test]
fn a_flood_during_genmove_is_answered_in_order() {
    let mut e = Engine::start();
    e.ok("boardsize 15");
    // Three seconds a move: the flood arrives long before the answer.
    e.ok("time_settings 0 3 1");
    e.ok("play b H8");
    e.ok("play w J9");
    e.process.send("genmove b");
    for i in 0..600 {
        e.process.send(&format!("{} name", 1000 + i));
    }
    e.process.send("2000 quit");
    let moved = e.read_response();
    assert!(moved.success && moved.id.is_none(), "{moved:?}");
    for i in 0..600 {
        assert_eq!(e.read_response(), success(Some(1000 + i), "Wuzi"));
    }
    assert_eq!(e.read_response(), success(Some(2000), ""));
}

#[test]
fn renju_forbidden_points_are_illegal_for_black() {
    let mut e = Engine::start();
    e.ok("boardsize 15");
    e.ok("wuzi-rule renju");
    // Black's double three at H8: G8/F8 across, H9/H10 down, white far away.
    e.ok("set_position b F8 w A1 b G8 w A3 b H9 w A5 b H10 w A7");
    let board = e.ok("showboard");
    assert_eq!(
        e.ask("play b H8"),
        failure(None, "illegal move: H8 is forbidden for black under renju")
    );
    assert_eq!(e.ok("showboard"), board);
    // White may play there.
    assert_eq!(e.ask("play w H8"), success(None, ""));
    e.ok("quit");
}

#[test]
fn analysis_streams_info_lines_until_the_next_command() {
    let mut e = Engine::start();
    e.ok("boardsize 15");
    e.ok("play b H8");
    e.process.send("5 lz-analyze w 10");
    assert_eq!(e.process.expect(|l| !l.trim().is_empty()), "=5");
    let mut infos = Vec::new();
    let start = Instant::now();
    while infos.len() < 3 && start.elapsed() < Duration::from_secs(20) {
        let line = e.process.expect(|_| true);
        assert!(!line.trim().is_empty(), "the response closed early");
        infos.push(line);
    }
    for line in &infos {
        let first: Vec<&str> = line.split_whitespace().take(12).collect();
        assert_eq!(first[0], "info", "{line}");
        assert_eq!(first[1], "move", "{line}");
        assert_eq!(first[3], "visits", "{line}");
        assert_eq!(first[5], "winrate", "{line}");
        let winrate: i64 = first[6].parse().expect("winrate in 1/10000");
        assert!((0..=10_000).contains(&winrate), "{line}");
        assert!(line.contains(" pv "), "{line}");
    }
    // The next command closes the response (an empty line) and is answered.
    close_analysis(&mut e, "name");
    assert_eq!(e.read_response(), success(None, "Wuzi"));
    // kata-analyze: values between 0 and 1.
    e.process.send("kata-analyze b interval 10 maxmoves 2");
    assert_eq!(e.process.expect(|l| !l.trim().is_empty()), "=");
    let line = e.process.expect(|_| true);
    assert!(line.matches("info move").count() <= 2, "{line}");
    let field = |name: &str| -> f64 {
        line.split_whitespace()
            .skip_while(|w| *w != name)
            .nth(1)
            .unwrap_or_else(|| panic!("{name} in {line}"))
            .parse()
            .expect("a number")
    };
    let winrate = field("winrate");
    assert!((0.0..=1.0).contains(&winrate), "{line}");
    // The lower confidence bound (the move rule's) lies below the win
    // rate of a move searched but not proven.
    let lcb = field("lcb");
    assert!((0.0..=winrate).contains(&lcb), "{line}");
    assert!(lcb < winrate || winrate == 0.0 || winrate == 1.0, "{line}");
    // An interval past any use is held to an hour: this one's
    // milliseconds once wrapped to 4, and reports streamed at once.
    e.process.send("lz-analyze b 1844674407370955162");
    loop {
        let line = e.process.expect(|_| true);
        if line.trim() == "=" {
            break;
        }
    }
    let early = e.process.drain(Duration::from_millis(500));
    assert!(early.iter().all(|l| !l.contains("info")), "{early:?}");
    e.process.send("name");
    loop {
        let line = e.process.expect(|_| true);
        if line.trim().is_empty() {
            break;
        }
    }
    assert_eq!(e.read_response(), success(None, "Wuzi"));
    // A bare newline (or a comment) ends an analysis too, as for KataGo,
    // and gets no response of its own.
    e.process.send("lz-analyze b 10");
    assert_eq!(e.process.expect(|l| !l.trim().is_empty()), "=");
    e.process.expect(|l| l.starts_with("info move"));
    close_analysis(&mut e, "");
    assert_eq!(e.ask("7 name"), success(Some(7), "Wuzi"));
    // Arguments it cannot read are refused, not analysed as something
    // else (here the side to move instead of black).
    let refused = e.ask("8 kata-analyze 50 B");
    assert!(!refused.success && refused.id == Some(8), "{refused:?}");
    assert!(refused.text.contains("cannot read \"B\""), "{refused:?}");
    e.ok("quit");
}

/// Sends `line` during an analysis and reads the rest of its response up
/// to the empty line that closes it: only `info move` lines.
fn close_analysis(e: &mut Engine, line: &str) {
    e.process.send(line);
    loop {
        let line = e.process.expect(|_| true);
        if line.trim().is_empty() {
            break;
        }
        assert!(line.starts_with("info move"), "{line}");
    }
}

/// The `info move` lines of one analysis response, read until it closes
/// (an empty line) or, once `enough` lines came, after sending `name`.
fn analysis_infos(e: &mut Engine, enough: usize) -> Vec<String> {
    let mut infos = Vec::new();
    let start = Instant::now();
    loop {
        let line = e.process.expect(|_| true);
        if line.trim().is_empty() {
            break;
        }
        assert!(line.starts_with("info move"), "{line}");
        infos.push(line);
        if infos.len() == enough {
            e.process.send("name");
        }
        assert!(start.elapsed() < Duration::from_secs(30), "{infos:?}");
    }
    if infos.len() >= enough {
        assert_eq!(e.read_response(), success(None, "Wuzi"));
    }
    infos
}

/// The number after `name` in an info line's first move.
fn info_field(line: &str, name: &str) -> String {
    line.split_whitespace()
        .skip_while(|w| *w != name)
        .nth(1)
        .unwrap_or_else(|| panic!("{name} in {line}"))
        .to_string()
}

/// Analysis of the decisive positions: a win the root's solver proves at
/// once shows its winning move with a win rate of 1 (it used to show
/// nothing: the root had no searched move), and a forced block is analysed
/// on past the single move (it used to stop after two visits).
#[test]
fn analysis_shows_a_proven_win_and_goes_on_after_a_forced_move() {
    let mut e = Engine::start();
    e.ok("boardsize 15");
    // Black's open three G8 H8 J8: either end makes an open four.
    for mv in ["b G8", "w A1", "b H8", "w A3", "b J8", "w A5"] {
        e.ok(&format!("play {mv}"));
    }
    e.process.send("lz-analyze b 10");
    assert_eq!(e.process.expect(|l| !l.trim().is_empty()), "=");
    let infos = analysis_infos(&mut e, 2);
    let first = infos.first().expect("an info line for the proven win");
    assert!(
        ["F8", "K8"].contains(&info_field(first, "move").as_str()),
        "{first}"
    );
    assert_eq!(info_field(first, "winrate"), "10000", "{first}");
    e.ok("clear_board");
    // White's four A1-D1: black's one move is E1 (black's stones make no
    // line of their own).
    for mv in [
        "b H8", "w A1", "b A15", "w B1", "b O15", "w C1", "b O8", "w D1",
    ] {
        e.ok(&format!("play {mv}"));
    }
    e.process.send("lz-analyze b 10");
    assert_eq!(e.process.expect(|l| !l.trim().is_empty()), "=");
    let infos = analysis_infos(&mut e, 4);
    assert!(infos.len() >= 4, "the analysis stopped: {infos:?}");
    let last = infos.last().expect("lines");
    assert_eq!(info_field(last, "move"), "E1", "{last}");
    let visits: u64 = info_field(last, "visits").parse().expect("visits");
    assert!(visits > 2, "{last}");
    e.ok("quit");
}

// ---- a referee, independent of the engine's code -------------------------

const LETTERS: &str = "ABCDEFGHJKLMNOPQRSTUVWXYZ";

/// `H8` on a board of `height` rows: (column, row from the top).
fn cell(vertex: &str, height: usize) -> Option<(usize, usize)> {
    let upper = vertex.to_ascii_uppercase();
    let mut chars = upper.chars();
    let column = LETTERS.find(chars.next()?)?;
    let row: usize = chars.as_str().parse().ok()?;
    (1..=height).contains(&row).then(|| (column, height - row))
}

fn vertex(column: usize, row_from_top: usize, height: usize) -> String {
    format!(
        "{}{}",
        LETTERS.as_bytes()[column] as char,
        height - row_from_top
    )
}

/// Whether the stone just placed at `at` makes five or more in a row.
fn makes_five(stones: &[Vec<u8>], at: (usize, usize), who: u8) -> bool {
    let (w, h) = (stones[0].len() as i64, stones.len() as i64);
    [(1, 0), (0, 1), (1, 1), (1, -1)].iter().any(|&(dx, dy)| {
        let count = |sign: i64| {
            let (mut x, mut y, mut n) = (at.0 as i64, at.1 as i64, 0);
            loop {
                x += sign * dx;
                y += sign * dy;
                if x < 0 || y < 0 || x >= w || y >= h || stones[y as usize][x as usize] != who {
                    return n;
                }
                n += 1;
            }
        };
        1 + count(1) + count(-1) >= 5
    })
}

/// The stones of a `showboard` answer: 1 black (`X`), 2 white (`O`), by
/// rows from the top.
fn shown_stones(text: &str, side: usize) -> Vec<Vec<u8>> {
    let mut rows = vec![vec![0u8; side]; side];
    let mut seen = 0;
    for line in text.lines() {
        let mut tokens = line.split_whitespace();
        let Some(Ok(row)) = tokens.next().map(str::parse::<usize>) else {
            continue;
        };
        let marks: Vec<&str> = tokens.collect();
        if marks.len() != side || !(1..=side).contains(&row) {
            continue;
        }
        seen += 1;
        for (x, mark) in marks.iter().enumerate() {
            rows[side - row][x] = match *mark {
                "X" => 1,
                "O" => 2,
                _ => 0,
            };
        }
    }
    assert_eq!(seen, side, "not a {side}x{side} board: {text}");
    rows
}

#[test]
fn two_engines_play_a_game_through_a_referee() {
    const SIDE: usize = 10;
    let mut players = [Engine::start(), Engine::start()];
    for p in players.iter_mut() {
        assert!(p.ask(&format!("boardsize {SIDE}")).success);
        p.ok("clear_board");
        p.ok("wuzi-rule freestyle");
        // A fifth of a second per move: Canadian byo-yomi, 1 s per 5 stones.
        p.ok("time_settings 0 1 5");
    }
    let mut stones = vec![vec![0u8; SIDE]; SIDE];
    let mut winner = None;
    // The five that ended the game, not relayed to the other engine.
    let mut unrelayed = None;
    for ply in 0..SIDE * SIDE {
        let (mover, color, name) = if ply % 2 == 0 {
            (0, 1u8, "b")
        } else {
            (1, 2u8, "w")
        };
        let answer = players[mover].ok(&format!("genmove {name}"));
        if answer.eq_ignore_ascii_case("resign") {
            // Only a proven loss resigns.
            winner = Some(3 - color);
            break;
        }
        let (x, y) = cell(&answer, SIDE).unwrap_or_else(|| panic!("bad vertex {answer:?}"));
        assert_eq!(stones[y][x], 0, "ply {ply}: {answer} is occupied");
        stones[y][x] = color;
        // The referee writes the vertex its own way.
        let relayed = vertex(x, y, SIDE);
        assert_eq!(relayed.to_ascii_uppercase(), answer.to_ascii_uppercase());
        if makes_five(&stones, (x, y), color) {
            winner = Some(color);
            unrelayed = Some((mover, x, y));
            break;
        }
        players[1 - mover].ok(&format!("play {name} {relayed}"));
    }
    // Both boards agree with the referee's up to the last move relayed.
    for (i, p) in players.iter_mut().enumerate() {
        let mut expected = stones.clone();
        if let Some((mover, x, y)) = unrelayed {
            if mover != i {
                expected[y][x] = 0;
            }
        }
        assert_eq!(
            shown_stones(&p.ok("showboard"), SIDE),
            expected,
            "engine {i}'s board (winner {winner:?})"
        );
    }
    for p in players.iter_mut() {
        assert_eq!(p.ask("quit"), success(None, ""));
        assert!(p.process.wait_exit(Duration::from_secs(10)).is_some());
    }
}

#[test]
fn genmove_without_the_network_fails_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.safetensors");
    let mut e = Engine {
        process: Brain::start(&["--network", missing.to_str().unwrap(), "gtp"]),
    };
    // No rule can be played: boardsize says why, and the board stays.
    let r = e.ask("boardsize 15");
    assert!(
        !r.success
            && r.text.starts_with("unacceptable size: ")
            && r.text.contains("missing.safetensors"),
        "{r:?}"
    );
    assert_eq!(e.ask("play b H8"), success(None, ""));
    let r = e.ask("genmove w");
    assert!(
        !r.success && r.text.contains("missing.safetensors"),
        "{r:?}"
    );
    // The position is as it was: the refusal played nothing.
    assert!(e.ok("showboard").contains("white to move"));
}

/// Malformed and random command lines: every line gets exactly one
/// response, a failure leaves the position as it was, and the engine
/// plays normally afterwards.
#[test]
fn fuzzed_lines_get_one_answer_and_failures_change_nothing() {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::TestRunner;
    const LINES: usize = 300;
    let words = proptest::sample::select(vec![
        "play",
        "boardsize",
        "rectangular_boardsize",
        "time_left",
        "time_settings",
        "set_position",
        "set_free_handicap",
        "kata-set-rule",
        "wuzi-rule",
        "undo",
        "komi",
        "known_command",
        "clear_board",
        "no_such_command",
        "PLAY",
        "",
    ]);
    let args = proptest::collection::vec(
        proptest::prop_oneof![
            proptest::strategy::Just("b".to_string()),
            proptest::strategy::Just("w".to_string()),
            "[A-Za-z]{1,2}[0-9]{1,3}",
            "-?[0-9]{1,25}(\\.[0-9]{1,5})?",
            "[a-z]{1,8}",
            proptest::prelude::any::<char>()
                .prop_filter("one line", |c| !c.is_control())
                .prop_map(|c| c.to_string()),
        ],
        0..5,
    );
    let mut runner = TestRunner::deterministic();
    let mut e = Engine::start();
    assert_eq!(e.ask("set_position b H8 w J9"), success(None, ""));
    let mut board = e.ok("showboard");
    let (mut failures, mut successes) = (0, 0);
    for _ in 0..LINES {
        let word = words.new_tree(&mut runner).expect("word").current();
        let line = format!(
            "{word} {}",
            args.new_tree(&mut runner)
                .expect("args")
                .current()
                .join(" ")
        );
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let response = e.ask(&line);
        let now = e.ok("showboard");
        if response.success {
            successes += 1;
            board = now;
        } else {
            failures += 1;
            assert_eq!(
                now, board,
                "{line:?} failed ({}) but changed the position",
                response.text
            );
        }
    }
    eprintln!("{LINES} fuzzed lines: {failures} failures, {successes} successes");
    assert!(failures > LINES / 2, "{failures} failures");
    // The engine still plays.
    assert_eq!(e.ask("boardsize 15"), success(None, ""));
    assert_eq!(e.ask("play b H8"), success(None, ""));
    assert_eq!(e.ask("time_settings 0 1 1"), success(None, ""));
    let reply = e.ok("genmove w");
    let (x, y) = cell(&reply, 15).unwrap_or_else(|| panic!("not a move: {reply}"));
    let stones = shown_stones(&e.ok("showboard"), 15);
    assert_eq!((stones[7][7], stones[y][x]), (1, 2), "{reply}");
}

/// A rule switch that cannot be played is refused and changes nothing:
/// a rule without its network, or stones that hold a five under the new
/// rule (black's six, no win in standard, would be one in freestyle).
#[test]
fn a_rule_switch_that_cannot_be_played_is_refused() {
    if std::env::var("WUZI_TEST_BRAIN").is_ok_and(|b| !b.trim().is_empty()) {
        // The configuration names this checkout's files by absolute path.
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut e = Engine::with_networks(
        dir.path(),
        &format!(
            "freestyle = {:?}\nstandard = {:?}\nrenju = \"renju-missing.safetensors\"\n\
             freestyle_fp32 = \"\"\nstandard_fp32 = \"\"\nrenju_fp32 = \"\"\n",
            common::checkout_network("freestyle-4x32.safetensors"),
            common::checkout_network("standard15-4x32.safetensors"),
        ),
    );
    assert_eq!(e.ask("kata-set-rule basicrule standard"), success(None, ""));
    for (b, w) in [
        ("A1", "A3"),
        ("B1", "B3"),
        ("C1", "C3"),
        ("E1", "E3"),
        ("F1", "G5"),
        ("D1", "H5"),
    ] {
        assert_eq!(e.ask(&format!("play b {b}")), success(None, ""), "{b}");
        assert_eq!(e.ask(&format!("play w {w}")), success(None, ""), "{w}");
    }
    let refused = e.ask("kata-set-rule basicrule freestyle");
    assert!(
        !refused.success && refused.text.contains("five"),
        "{refused:?}"
    );
    let refused = e.ask("kata-set-rule basicrule renju");
    assert!(
        !refused.success && refused.text.contains("renju-missing"),
        "{refused:?}"
    );
    // Still standard: black's six wins nothing, the game goes on.
    assert_eq!(e.ask("play b K10"), success(None, ""));
    let reply = e.ok("genmove w");
    let (x, y) = cell(&reply, 15).unwrap_or_else(|| panic!("not a move: {reply}"));
    let taken = shown_stones(&e.ok("showboard"), 15);
    assert_eq!(taken[y][x], 2, "{reply}");
    assert_eq!(e.ask("clear_board"), success(None, ""));
    assert_eq!(
        e.ask("kata-set-rule basicrule freestyle"),
        success(None, "")
    );
}

/// A board size the rule has no network for is accepted, as a rule may
/// follow it (Gomocup's START takes the size before the rule too): genmove
/// then fails naming the file, and under a rule whose network covers that
/// size the game plays. With no network at all, `boardsize` is refused
/// (`genmove_without_the_network_fails_naming_the_file`).
#[test]
fn a_board_size_without_its_network_waits_for_the_rule() {
    if std::env::var("WUZI_TEST_BRAIN").is_ok_and(|b| !b.trim().is_empty()) {
        // The configuration names this checkout's files by absolute path.
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut e = Engine::with_networks(
        dir.path(),
        &format!(
            "freestyle = {{ 15 = {:?}, 20 = \"large-missing.safetensors\" }}\n\
             standard = {:?}\nfreestyle_fp32 = \"\"\nstandard_fp32 = \"\"\n",
            common::checkout_network("freestyle-4x32.safetensors"),
            common::checkout_network("standard15-4x32.safetensors"),
        ),
    );
    assert_eq!(e.ask("time_settings 0 1 1"), success(None, ""));
    for command in [
        "boardsize 20",
        "rectangular_boardsize 15 19",
        "boardsize 18 12",
    ] {
        assert_eq!(e.ask(command), success(None, ""), "{command}");
        assert_eq!(e.ask("play b H8"), success(None, ""), "{command}");
        let refused = e.ask("genmove w");
        assert!(
            !refused.success && refused.text.contains("large-missing.safetensors"),
            "{command}: {refused:?}"
        );
        // The refusal played nothing.
        assert!(e.ok("showboard").contains("white to move"), "{command}");
    }
    // Standard's one file plays every size; back to freestyle is refused
    // on 18x12.
    assert_eq!(e.ask("kata-set-rule basicrule standard"), success(None, ""));
    let refused = e.ask("kata-set-rule basicrule freestyle");
    assert!(
        !refused.success && refused.text.contains("large-missing.safetensors"),
        "{refused:?}"
    );
    let reply = e.ok("genmove w");
    assert!(cell(&reply, 12).is_some(), "a move on 18x12: {reply}");
    // The 15 file plays freestyle up to 17x17.
    assert_eq!(e.ask("boardsize 17"), success(None, ""));
    assert_eq!(
        e.ask("kata-set-rule basicrule freestyle"),
        success(None, "")
    );
    let reply = e.ok("genmove b");
    let (x, y) = cell(&reply, 17).unwrap_or_else(|| panic!("not a move: {reply}"));
    assert_eq!(shown_stones(&e.ok("showboard"), 17)[y][x], 1, "{reply}");
    e.ok("quit");
}
