//! Yixin-Board's own command sequences, captured from the real GUI's debug
//! log (`tests/fixtures/yixin/`), replayed to pbrain-wuzi: the answers the
//! GUI waited for come, the engine's board holds what the GUI placed (the
//! forbidden marks it asks for after a balancing move prove it), every
//! coordinate in text is the GUI's label of the cell, long searches stream
//! summary lines and INFO blocks with a rising depth and consistent node
//! counts, `yxstop` answers at once, the swap2 steps answer in the GUI's
//! shapes, and the process stays within the memory the GUI gives it.

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::brain::Brain;
use wuzi::game::{Board, BoardSize, Color, Point, Rule};
use wuzi::tactics::is_legal_for;

/// The GUI's model of the game: the stones it sent or placed, and the side
/// the engine plays.
struct Model {
    board: Board,
}

impl Model {
    fn new(rule: Rule) -> Model {
        Model {
            board: Board::new(BoardSize::square(15).unwrap(), rule),
        }
    }

    /// The position of a `board`/`yxboard` block: field 1 is the side to
    /// move (black when the counts are equal).
    fn from_block(rule: Rule, block: &[(u8, u8, u8)]) -> Model {
        let own = block.iter().filter(|s| s.2 == 1).count();
        let theirs = block.len() - own;
        let own_color = if own == theirs {
            Color::Black
        } else {
            Color::White
        };
        let mut board = Board::new(BoardSize::square(15).unwrap(), rule);
        for &(x, y, field) in block {
            let color = if field == 1 {
                own_color
            } else {
                own_color.opponent()
            };
            board
                .place(p(x, y), color)
                .expect("a free cell in the GUI's block");
        }
        board.set_side_to_move(own_color);
        Model { board }
    }

    /// A stone the GUI places for the side to move.
    fn play(&mut self, mv: Point, what: &str) {
        assert!(
            self.board.is_empty(mv),
            "{what}: {mv} is occupied on the GUI's board"
        );
        let color = self.board.side_to_move();
        if self.board.rule() == Rule::Renju && color == Color::Black {
            assert!(
                !self.board.is_forbidden(mv),
                "{what}: {mv} is forbidden to black"
            );
        }
        self.board.place(mv, color).expect("free");
    }

    /// What `yxshowforbid` must answer: black's forbidden points when black
    /// is to move in renju, as `RRCC` digits.
    fn forbid_line(&mut self) -> String {
        let mut digits = String::new();
        if self.board.rule() == Rule::Renju && self.board.side_to_move() == Color::Black {
            let mut points: Vec<Point> = self.board.forbidden_points();
            points.sort_by_key(|q| (q.x(), q.y()));
            for q in points {
                digits.push_str(&format!("{:02}{:02}", q.x(), q.y()));
            }
        }
        format!("FORBID {digits}.")
    }
}

fn p(x: u8, y: u8) -> Point {
    Point::new(x, y).expect("on the board")
}

/// A move line `r,c` (and optionally a second, `r,c r,c`).
fn moves_of(line: &str) -> Option<Vec<Point>> {
    line.split_whitespace()
        .map(|token| {
            let (a, b) = token.split_once(',')?;
            Some(p(a.trim().parse().ok()?, b.trim().parse().ok()?))
        })
        .collect()
}

/// The cell a GUI label names: column letter (the second coordinate) and
/// row number counted from the bottom (15 - the first coordinate).
fn cell_of_label(label: &str) -> Option<Point> {
    let mut chars = label.chars();
    let letter = chars.next()?.to_ascii_lowercase();
    let column = (letter as u8).checked_sub(b'a')?;
    let number: u8 = chars.as_str().parse().ok()?;
    Some(p(15u8.checked_sub(number)?, column))
}

/// The moves of a summary line's `pv` (`pv Xh8 Oi9 ...`), decoded from the
/// GUI's labels, checked to be a legal line from `model`'s position with
/// the colours alternating from the side to move.
fn check_pv(line: &str, model: &Model) -> Vec<Point> {
    let Some((_, pv)) = line.split_once(" pv") else {
        return Vec::new();
    };
    let mut board = model.board.clone();
    let mut cells = Vec::new();
    for token in pv.split_whitespace() {
        let (stone, label) = token.split_at(1);
        let expected = if board.side_to_move() == Color::Black {
            "X"
        } else {
            "O"
        };
        assert_eq!(stone, expected, "colour of {token} in {line:?}");
        let cell = cell_of_label(label).unwrap_or_else(|| panic!("{token} in {line:?}"));
        assert!(
            board.is_empty(cell),
            "{token} ({cell}) is occupied on the GUI's board: {line:?}"
        );
        if board.outcome().is_some() {
            break;
        }
        board.play(cell).expect("empty");
        cells.push(cell);
    }
    cells
}

/// What one search streamed before its answer: summary lines, INFO blocks
/// with a depth that never falls and NODES within TOTALNODES.
fn check_stream(lines: &[String], model: &Model, long: bool, what: &str) {
    let summaries: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("MESSAGE depth"))
        .collect();
    for summary in &summaries {
        check_pv(summary, model);
    }
    let mut depth = 0;
    let mut nodes = None;
    let mut blocks = 0;
    for line in lines {
        if let Some(d) = line.strip_prefix("INFO DEPTH ") {
            let d: u32 = d.parse().expect("a depth");
            assert!(d >= depth, "{what}: INFO DEPTH fell from {depth} to {d}");
            depth = d;
        } else if let Some(n) = line.strip_prefix("INFO NODES ") {
            nodes = Some(n.parse::<u64>().expect("nodes"));
        } else if let Some(total) = line.strip_prefix("INFO TOTALNODES ") {
            let total: u64 = total.parse().expect("total");
            let n = nodes.take().expect("NODES before TOTALNODES");
            assert!(n <= total, "{what}: NODES {n} above TOTALNODES {total}");
            blocks += 1;
        } else if let Some(mv) = line.strip_prefix("MESSAGE REALTIME BEST ") {
            let cell = moves_of(mv).expect("a cell")[0];
            assert!(model.board.is_empty(cell), "{what}: BEST {cell} occupied");
        }
    }
    if long {
        // A search of about 3 s: a summary line a second, INFO blocks as the
        // search goes, and a depth beyond the first ply.
        assert!(summaries.len() >= 2, "{what}: {lines:?}");
        assert!(blocks >= 3, "{what}: {blocks} INFO blocks");
        assert!(depth > 1, "{what}: depth {depth}");
    }
}

/// The cell the person clicks: the recorded one, unless the engine's
/// answer before it took that cell. The person clicked in reply to the
/// engine's move of the captured session, and a 3 s search may answer
/// otherwise today (after black's 7,7 the engine plays 8,6 or its mirror
/// image 6,8, which are worth the same). Then the click goes to the nearest
/// free cell that is legal for the side to move; the GUI's next board block
/// sets the whole position again.
fn the_click(model: &Model, recorded: Point) -> Point {
    // A copy: the forbidden-point check needs the board mutably.
    let mut board = model.board.clone();
    let side = board.side_to_move();
    if is_legal_for(&mut board, recorded, side) {
        return recorded;
    }
    let distance = |q: Point| {
        let dx = q.x().abs_diff(recorded.x()) as u32;
        let dy = q.y().abs_diff(recorded.y()) as u32;
        dx * dx + dy * dy
    };
    let empty: Vec<Point> = board.empty_cells().collect();
    let click = empty
        .into_iter()
        .filter(|&q| is_legal_for(&mut board, q, side))
        .min_by_key(|&q| (distance(q), q.x(), q.y()))
        .expect("a free legal cell on the GUI's board");
    eprintln!("the GUI's turn {recorded} is taken on today's board; the click goes to {click}");
    click
}

/// A stone line of a `board` block: x, y and the field (1 own, 2 theirs).
type Stone = (u8, u8, u8);

/// Replays a captured session. Returns the answers to the searches, by
/// command.
fn replay(file: &str, rule: Rule) -> Vec<(String, String)> {
    let commands: Vec<&str> = file
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    // The GUI's 3 s per move, as captured; one search thread so that the
    // replay does not depend on the machine's cores. The GUI starts its
    // engine with --force-utf8 on Windows.
    let mut b = Brain::start(&["--force-utf8", "--threads", "1"]);
    let mut model = Model::new(rule);
    // The `board` (a search follows) or `yxboard` block being read, with
    // its stones as (x, y, field).
    let mut block: Option<(bool, Vec<Stone>)> = None;
    let mut answers = Vec::new();
    let hash_size_kib: Option<usize> = commands
        .iter()
        .find_map(|c| c.strip_prefix("INFO hash_size ")?.trim().parse().ok());
    let mut peak_uss = 0;
    let mut i = 0;
    while i < commands.len() {
        let command = commands[i];
        i += 1;
        if let Some((_, stones)) = block.as_mut() {
            if command.eq_ignore_ascii_case("done") {
                let (search, stones) = block.take().expect("a block");
                model = Model::from_block(rule, &stones);
                b.send(command);
                if search {
                    let before = b.seen.len();
                    let started = Instant::now();
                    let mv = b.expect_move();
                    let lines = b.seen[before..].to_vec();
                    let mv = p(mv.0 as u8, mv.1 as u8);
                    let long = started.elapsed() > Duration::from_millis(2500);
                    check_stream(&lines, &model, long, "a move");
                    check_final_summary(&lines, &model, mv);
                    model.play(mv, "the engine's move");
                    answers.push(("board".to_string(), mv.to_string()));
                }
                continue;
            }
            let mut fields = command.split(',').map(|f| f.trim().parse::<u8>());
            match (fields.next(), fields.next(), fields.next()) {
                (Some(Ok(x)), Some(Ok(y)), Some(Ok(f))) => stones.push((x, y, f)),
                _ => panic!("a stone line in a block: {command:?}"),
            }
            b.send(command);
            continue;
        }
        let lower = command.to_ascii_lowercase();
        let word = lower.split_whitespace().next().unwrap_or("");
        if word == "turn" {
            let recorded = moves_of(&lower["turn ".len()..]).expect("turn r,c")[0];
            let theirs = the_click(&model, recorded);
            model.play(theirs, "the GUI's turn");
            b.send(&format!("turn {},{}", theirs.x(), theirs.y()));
            let mv = b.expect_move();
            model.play(p(mv.0 as u8, mv.1 as u8), "the engine's move");
            continue;
        }
        let searching = matches!(word, "yxnbest" | "yxsearchdefend");
        let stop_next = searching && commands.get(i).is_some_and(|c| *c == "yxstop");
        if stop_next {
            // The Stop must end the search, not its clock running out: a
            // minute for this one (the captured 3 s would end it anyway
            // within the answer's allowance).
            b.send("INFO timeout_turn 60000");
        }
        b.send(command);
        match word {
            "start" => assert_eq!(b.answer(), "OK", "{command}"),
            "board" => block = Some((true, Vec::new())),
            "yxboard" => block = Some((false, Vec::new())),
            "yxshowforbid" => {
                let answer = b.expect(|l| l.starts_with("FORBID"));
                assert_eq!(
                    answer,
                    model.forbid_line(),
                    "forbidden marks on the GUI's board"
                );
            }
            "yxnbest" | "yxsearchdefend" => {
                let before = b.seen.len();
                let started = Instant::now();
                let mv = if stop_next {
                    // The GUI's Stop, pressed 1.5 s into the search.
                    std::thread::sleep(Duration::from_millis(1500));
                    b.send("yxstop");
                    i += 1;
                    let asked = Instant::now();
                    let mv = b.expect_move();
                    assert!(
                        asked.elapsed() < Duration::from_millis(3000),
                        "yxstop answered after {:?}",
                        asked.elapsed()
                    );
                    // The captured clock again for the rest of the session.
                    let turn = commands[..i]
                        .iter()
                        .rev()
                        .find(|c| c.starts_with("INFO timeout_turn "))
                        .expect("the session's timeout_turn");
                    b.send(turn);
                    mv
                } else {
                    b.expect_move()
                };
                let lines = b.seen[before..].to_vec();
                let long = started.elapsed() > Duration::from_millis(2500);
                check_stream(&lines, &model, long && !stop_next, command);
                if word == "yxsearchdefend" {
                    check_defence_blocks(&lines);
                }
                let mv = p(mv.0 as u8, mv.1 as u8);
                // The GUI plays the answer.
                model.play(mv, command);
                answers.push((word.to_string(), mv.to_string()));
            }
            "yxbalanceone" | "yxbalancetwo" => {
                let line = b.answer();
                let moves = moves_of(&line).unwrap_or_else(|| panic!("{command}: {line:?}"));
                let wanted = if word == "yxbalanceone" { 1 } else { 2 };
                assert_eq!(moves.len(), wanted, "{command}: {line:?}");
                for &mv in &moves {
                    model.play(mv, command);
                }
                answers.push((word.to_string(), line));
            }
            "yxswap2step1" => {
                let mut stones = Vec::new();
                for k in 1..=3 {
                    let line = b.expect(|l| l.starts_with("MESSAGE SWAP2 MOVE"));
                    let rest = line
                        .strip_prefix(&format!("MESSAGE SWAP2 MOVE{k} "))
                        .unwrap_or_else(|| panic!("MOVE{k}: {line:?}"));
                    let mut numbers = rest.split_whitespace().map(|n| n.parse::<u8>());
                    let (Some(Ok(x)), Some(Ok(y))) = (numbers.next(), numbers.next()) else {
                        panic!("{line:?}");
                    };
                    stones.push(p(x, y));
                }
                let distinct: BTreeSet<Point> = stones.iter().copied().collect();
                assert_eq!(distinct.len(), 3, "{stones:?}");
                answers.push((word.to_string(), format!("{stones:?}")));
            }
            "yxswap2step2" | "yxswap2step3" => {
                // Swap, two more stones, or a move: each in the GUI's shape.
                let step = if word == "yxswap2step2" {
                    "SWAP1"
                } else {
                    "SWAP2"
                };
                let line = b.answer_or_swap2();
                // YES: the engine takes black; NO: it stays white and the
                // GUI asks for the next move with a normal search.
                let chose_colour = line == format!("MESSAGE SWAP2 {step} YES")
                    || line == format!("MESSAGE SWAP2 {step} NO");
                if chose_colour {
                    // Nothing more to read.
                } else if line.starts_with("MESSAGE SWAP2 MOVE4") {
                    assert_eq!(word, "yxswap2step2", "{line}");
                    let fifth = b.expect(|l| l.starts_with("MESSAGE SWAP2"));
                    assert!(fifth.starts_with("MESSAGE SWAP2 MOVE5 "), "{fifth}");
                } else {
                    let mv = moves_of(&line).unwrap_or_else(|| panic!("{word}: {line:?}"));
                    assert_eq!(mv.len(), 1, "{line}");
                }
                answers.push((word.to_string(), line));
            }
            _ => {}
        }
        // The memory the GUI gives (`INFO hash_size`, KiB) is the whole
        // process's, measured as GomocupJudge does (USS), after every
        // command it waited for.
        if let Some(limit) = hash_size_kib {
            let uss = wuzi::search::memory::private_bytes_of(b.pid()).expect("smaps_rollup");
            peak_uss = peak_uss.max(uss);
            assert!(
                uss <= limit * 1024,
                "after {command}: USS {} MB above hash_size {} MB",
                uss >> 20,
                limit >> 10
            );
        }
    }
    eprintln!(
        "peak USS {} MB (hash_size {:?} KiB)",
        peak_uss >> 20,
        hash_size_kib
    );
    answers
}

/// The last summary line before a move names that move first (unless it
/// says the safety net refuted the search's choice).
fn check_final_summary(lines: &[String], model: &Model, mv: Point) {
    let Some(last) = lines.iter().rev().find(|l| l.starts_with("MESSAGE depth")) else {
        panic!("no summary line before the move: {lines:?}");
    };
    let pv = check_pv(last, model);
    if !last.contains(" refuted ") {
        assert_eq!(pv.first(), Some(&mv), "{last}");
    }
}

/// In a defence search the INFO blocks show only moves with a value:
/// searched (NODES above 0) or proven (a mate score).
fn check_defence_blocks(lines: &[String]) {
    let mut nodes = None;
    for line in lines {
        if let Some(n) = line.strip_prefix("INFO NODES ") {
            nodes = Some(n.parse::<u64>().expect("nodes"));
        } else if let Some(eval) = line.strip_prefix("INFO EVAL ") {
            let proven = eval.contains('M');
            assert!(
                proven || nodes.is_some_and(|n| n > 0),
                "an unsearched move shown with a value: EVAL {eval}"
            );
        }
    }
}

trait Swap2Answer {
    fn answer_or_swap2(&mut self) -> String;
}

impl Swap2Answer for Brain {
    /// The next move line or `MESSAGE SWAP2 ...` line.
    fn answer_or_swap2(&mut self) -> String {
        self.expect(|l| l.starts_with("MESSAGE SWAP2") || moves_of(l).is_some())
    }
}

#[test]
fn a_click_on_a_cell_the_engine_took_goes_to_the_nearest_legal_one() {
    // Black 7,7; the engine (white) answered 6,8 where the captured session
    // had 8,6, and the recorded click is 6,8.
    let mut model = Model::new(Rule::Renju);
    model.play(p(7, 7), "black");
    model.play(p(6, 8), "white");
    assert_eq!(the_click(&model, p(8, 6)), p(8, 6), "a free cell is kept");
    let click = the_click(&model, p(6, 8));
    assert!(model.board.is_empty(click), "{click}");
    let distance = click.x().abs_diff(6) + click.y().abs_diff(8);
    assert_eq!(distance, 1, "a neighbour of 6,8: {click}");
    let mut board = model.board.clone();
    assert!(is_legal_for(&mut board, click, Color::Black));
}

#[test]
fn a_renju_session_of_the_real_gui_replays() {
    let answers = replay(include_str!("fixtures/yixin/renju.txt"), Rule::Renju);
    let asked: Vec<&str> = answers.iter().map(|(c, _)| c.as_str()).collect();
    for wanted in [
        "board",
        "yxbalanceone",
        "yxnbest",
        "yxsearchdefend",
        "yxbalancetwo",
    ] {
        assert!(
            asked.contains(&wanted),
            "{wanted} not answered: {answers:?}"
        );
    }
}

/// Black's double-three point (7,7) with white to move: the GUI asks for
/// a balancing move, then for the forbidden marks without sending the
/// board again, so `FORBID 0707.` only comes if the engine's board holds
/// the white stone it proposed; the same after an n-best and a defence
/// search, whose answers the GUI plays.
#[test]
fn forbidden_marks_follow_the_stones_the_engine_gave() {
    let file = include_str!("fixtures/yixin/renju-forbidden.txt");
    let answers = replay(file, Rule::Renju);
    let asked: Vec<&str> = answers.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(asked, ["yxbalanceone", "yxnbest", "yxsearchdefend"]);
}

#[test]
fn swap2_steps_of_the_real_gui_replay() {
    let answers = replay(
        include_str!("fixtures/yixin/swap2-step2.txt"),
        Rule::Standard,
    );
    assert!(
        answers.iter().any(|(c, _)| c == "yxswap2step2"),
        "{answers:?}"
    );
    let answers = replay(
        include_str!("fixtures/yixin/swap2-step1-step3.txt"),
        Rule::Standard,
    );
    for wanted in ["yxswap2step1", "yxswap2step3"] {
        assert!(answers.iter().any(|(c, _)| c == wanted), "{answers:?}");
    }
}
