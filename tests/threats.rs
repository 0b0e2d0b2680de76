//! Threat-aware nodes: the opponent's threats decide which moves a node
//! has. Every restriction is checked by replaying the threat against the
//! moves it leaves out, on hand-built positions (renju forbidden points
//! included) and on positions from real games.

mod common;

use common::{board15, four_three, games, p, FIXTURE_GAMES};
use wuzi::game::{Board, CellKind, CellSet, Color, Point, Rule};
use wuzi::search::expand::{analyse, analyse_root_except, LeafAnalysis, LeafSettings};
use wuzi::search::node::Proven;
use wuzi::tactics::{
    five_blocks, four_moves, is_legal_for, line_breakers, solve, unstoppable_four_defences,
    unstoppable_four_moves, winning_moves, SolveLimits, ThreatKind,
};

const SETTINGS: LeafSettings = LeafSettings {
    vcf_nodes: 0,
    vct_nodes: 0,
    opponent_vcf_nodes: 20_000,
    candidate_distance: 2,
};

/// Whether `line`, a VCF of `attacker` with the defender to move first,
/// still wins move for move on `board` (where the defender has just played):
/// every attacker move is legal and makes a five, or a four while the
/// defender has no five of its own, its reply blocks a five, and the
/// line ends in a five or a threat it cannot meet.
fn vcf_still_wins(board: &Board, attacker: Color, line: &[Point]) -> bool {
    let mut b = board.clone();
    b.set_side_to_move(attacker);
    let defender = attacker.opponent();
    for (i, &m) in line.iter().enumerate() {
        if !b.is_empty(m) {
            return false;
        }
        if i % 2 == 0 {
            if !is_legal_for(&mut b, m, attacker) {
                return false;
            }
            // Short of a five, a four only forces if the defender has none.
            let five = b.is_winning_move(m, attacker);
            if !five
                && (!winning_moves(&b, defender).is_empty() || b.five_cells_after(m, attacker) == 0)
            {
                return false;
            }
        } else {
            // The block of the five (of one of them, facing an open four).
            if !five_blocks(&b, attacker).contains(&m) || b.is_winning_move(m, defender) {
                return false;
            }
        }
        b.play(m).expect("empty");
    }
    if b.outcome().is_some() {
        return true;
    }
    if !winning_moves(&b, defender).is_empty() {
        return false;
    }
    let fives = winning_moves(&b, attacker);
    fives.len() >= 2
        || (fives.len() == 1 && !is_legal_for(&mut b, fives[0], defender))
        || (!unstoppable_four_moves(&mut b, attacker).is_empty()
            && unstoppable_four_defences(&mut b, attacker).is_empty())
}

/// Checks the breakers of the VCF `attacker` has on `board` (defender to
/// move): every legal defender move outside them that is not a four of
/// its own leaves the line winning. Returns how many moves were checked.
fn check_breakers(board: &mut Board, attacker: Color, line: &[Point]) -> usize {
    let defender = attacker.opponent();
    assert_eq!(board.side_to_move(), defender);
    let (breakers, plies) = line_breakers(board, attacker, line);
    assert!(plies as usize > line.len());
    let own_fours = four_moves(board, defender);
    let outside: Vec<Point> = board
        .empty_cells()
        .filter(|&m| !breakers.contains(m) && !own_fours.contains(&m))
        .collect();
    let mut checked = 0;
    for m in outside {
        if !is_legal_for(board, m, defender) {
            continue;
        }
        board.play(m).expect("empty");
        assert!(
            vcf_still_wins(board, attacker, line),
            "{m} is outside the breakers of {line:?} but breaks it\n{board:?}"
        );
        board.undo();
        checked += 1;
    }
    checked
}

#[test]
fn line_breakers_are_sound_on_real_games() {
    // Every position of the fixture games from move 10 on, both ways round:
    // where the side not to move has a VCF, no move outside its breakers
    // stops it.
    let mut lines = 0;
    let mut checked = 0;
    for tsv in FIXTURE_GAMES {
        for game in games(tsv).iter().take(6) {
            let mut b = Board::new(game.size, game.rule);
            for (i, &m) in game.moves.iter().enumerate() {
                b.play(m).expect("legal game");
                if i < 10 || i % 2 == 1 || b.outcome().is_some() {
                    continue;
                }
                let attacker = b.side_to_move().opponent();
                if !winning_moves(&b, attacker).is_empty()
                    || !winning_moves(&b, attacker.opponent()).is_empty()
                {
                    continue; // a five to play or to block is no VCF question
                }
                let report = solve(
                    &mut b,
                    attacker,
                    ThreatKind::Vcf,
                    SolveLimits::new(20_000, 40),
                );
                if let Some(line) = report.win {
                    lines += 1;
                    checked += check_breakers(&mut b, attacker, &line);
                }
            }
        }
    }
    assert!(lines >= 5, "only {lines} VCF positions in the sample");
    assert!(checked > 100 * lines, "{checked} moves checked");
}

#[test]
fn line_breakers_of_hand_built_threats() {
    // Black's open three: the open four's both ends and the other end.
    let mut b = board15(Rule::Freestyle, &[(7, ".....XXX.......")], Color::White);
    let line = vec![p(4, 7)];
    let (cells, plies) = line_breakers(&mut b, Color::Black, &line);
    assert_eq!(plies, 4, "a pass, the open four, a block, the five");
    assert!(cells.contains(p(4, 7)) && cells.contains(p(3, 7)) && cells.contains(p(8, 7)));
    check_breakers(&mut b, Color::Black, &line);

    // A four-three (closed three on row 7, split three on column 6).
    let mut b = four_three(Rule::Freestyle, Color::White);
    let line = solve(
        &mut b,
        Color::Black,
        ThreatKind::Vcf,
        SolveLimits::default(),
    )
    .win
    .expect("black's VCF");
    assert!(check_breakers(&mut b, Color::Black, &line) > 150);
}

/// Under caro a four closed at one end by the defender has two answers:
/// its five cell, or the other end, which makes the five a closed one.
/// The line goes on after one; a stone anywhere may break the other
/// branch, whose line is not recorded, so every empty cell is a breaker.
#[test]
fn a_caro_four_with_two_answers_makes_every_cell_a_breaker() {
    let mut b = board15(Rule::Caro, &[(7, ".OXXX..........")], Color::Black);
    let line = vec![p(5, 7), p(6, 7)];
    let (cells, _) = line_breakers(&mut b, Color::Black, &line);
    for far in [p(0, 0), p(14, 14), p(6, 3)] {
        assert!(cells.contains(far), "{far} is not a breaker");
    }
    // With the four open (no defender stone at its end), one answer is
    // not enough and nothing beyond the line's cells is added.
    let mut open = board15(Rule::Caro, &[(7, "..XXX..........")], Color::Black);
    let (cells, _) = line_breakers(&mut open, Color::Black, &line);
    assert!(!cells.contains(p(0, 0)) && !cells.contains(p(14, 14)));
}

fn moves_of(analysis: LeafAnalysis) -> Vec<Point> {
    match analysis {
        LeafAnalysis::Moves { moves, complete } => {
            assert!(complete, "a threat restriction is complete");
            moves
        }
        other => panic!("expected moves, got {other:?}"),
    }
}

/// Every legal move of the side to move that the analysis left out loses
/// to the opponent's VCF, found again after it.
fn left_out_moves_lose(board: &mut Board, kept: &[Point]) {
    let me = board.side_to_move();
    let all: Vec<Point> = board.empty_cells().collect();
    for m in all {
        if kept.contains(&m) || !is_legal_for(board, m, me) {
            continue;
        }
        board.play(m).expect("empty");
        let report = solve(
            board,
            me.opponent(),
            ThreatKind::Vcf,
            SolveLimits::new(50_000, 40),
        );
        assert!(
            report.win.is_some(),
            "{m} was left out but holds\n{board:?}"
        );
        board.undo();
    }
}

#[test]
fn an_open_three_leaves_its_defences_and_the_counter_fours() {
    // White's three on row 2 against the edge: (3,2) and (4,2) make fours.
    let mut b = board15(
        Rule::Freestyle,
        &[(2, "OOO............"), (7, ".....XXX.......")],
        Color::White,
    );
    let moves = moves_of(analyse(&mut b, SETTINGS, &mut 0));
    let mut expected = vec![p(3, 2), p(4, 2), p(4, 7), p(8, 7)];
    expected.sort_by_key(|q| q.index());
    assert_eq!(moves, expected);
    left_out_moves_lose(&mut b, &moves);
}

#[test]
fn a_four_three_threat_leaves_only_the_moves_that_break_it() {
    for rule in Rule::ALL {
        let mut b = four_three(rule, Color::White);
        let moves = moves_of(analyse(&mut b, SETTINGS, &mut 0));
        assert!(moves.contains(&p(6, 7)), "{rule}: the four-three point");
        // Caro: the closed four has two answers, and the branch not on
        // the line is not followed, so no move is left out.
        if rule != Rule::Caro {
            assert!(moves.len() < 30, "{rule}: {} moves", moves.len());
        }
        left_out_moves_lose(&mut b, &moves);
    }
}

#[test]
fn two_open_threes_are_a_proven_loss() {
    let mut b = board15(
        Rule::Freestyle,
        &[(3, "..XXX.........."), (9, "........XXX....")],
        Color::White,
    );
    assert_eq!(
        analyse(&mut b, SETTINGS, &mut 0),
        LeafAnalysis::Proven {
            value: Proven::Loss(4),
            line: Vec::new()
        }
    );
    // A white four to play first is a counter: then it is not lost yet.
    let mut b = board15(
        Rule::Freestyle,
        &[
            (3, "..XXX.........."),
            (9, "........XXX...."),
            (12, "OOO............"),
        ],
        Color::White,
    );
    assert_eq!(
        moves_of(analyse(&mut b, SETTINGS, &mut 0)),
        vec![p(3, 12), p(4, 12)]
    );
}

#[test]
fn renju_black_cannot_defend_on_a_forbidden_point() {
    // White's open three on row 7, (4,7)..(6,7); of its defences (3,7)
    // and (7,7), (7,7) is a double four for black (it completes a split
    // four on column 7 and one on the diagonal). Nor does (3,7) hold in
    // renju: white's (8,7) then makes a four whose one block is (7,7).
    // Black must make (7,7) a five of its own, or counter with a four.
    let rows: &[(usize, &str)] = &[
        (3, ".......X...X..."),
        (4, ".......X..X...."),
        (5, ".......X.X....."),
        (7, "....OOO........"),
        (13, "O.O.O.........."),
    ];
    let mut free = board15(Rule::Freestyle, rows, Color::Black);
    let free_moves = moves_of(analyse(&mut free, SETTINGS, &mut 0));
    assert!(free_moves.contains(&p(7, 7)), "{free_moves:?}");
    let mut renju = board15(Rule::Renju, rows, Color::Black);
    assert!(renju.is_forbidden(p(7, 7)), "{renju:?}");
    let moves = moves_of(analyse(&mut renju, SETTINGS, &mut 0));
    assert!(
        moves.contains(&p(7, 6)) && moves.contains(&p(8, 6)),
        "{moves:?}"
    );
    assert!(!moves.contains(&p(7, 7)), "{moves:?}");
    assert!(!moves.contains(&p(3, 7)), "{moves:?}");
    left_out_moves_lose(&mut renju, &moves);
}

#[test]
fn renju_white_forcing_black_onto_a_forbidden_cell_is_a_threat_too() {
    // Black XXX.XX on row 3: (3,3) is an overline for black. White's
    // closed three on column 3 threatens the four (3,7), whose only block
    // is (3,3): black must act before.
    let rows = common::FORCED_ONTO_FORBIDDEN;
    let mut b = board15(Rule::Renju, rows, Color::Black);
    assert!(b.is_forbidden(p(3, 3)));
    let moves = moves_of(analyse(&mut b, SETTINGS, &mut 0));
    assert!(moves.contains(&p(3, 7)), "the four's cell: {moves:?}");
    assert!(!moves.contains(&p(3, 3)));
    left_out_moves_lose(&mut b, &moves);
    assert!(b.cells_of(CellKind::Four, Color::White).contains(p(3, 7)));
}

/// A search root with excluded moves (yxblock, a refused move): a win
/// stands only through an allowed first move, another four's VCF is
/// looked for, a loss stands, and a defence set that is all excluded
/// gives way to the allowed candidates.
#[test]
fn a_root_with_excluded_moves_is_analysed_without_them() {
    let settings = LeafSettings {
        vcf_nodes: 200,
        ..SETTINGS
    };
    let except = |board: &Board, blocked: &[Point]| {
        let mut excluded = CellSet::new();
        for &p in blocked {
            excluded.insert(p);
        }
        let mut b = board.clone();
        let found = analyse_root_except(&mut b, settings, &excluded, &mut 0);
        assert_eq!(b.history(), board.history(), "the board is left as it was");
        found
    };
    // Black's open three: either end makes an open four.
    let three = board15(
        Rule::Freestyle,
        &[(7, "....XXX........"), (9, "O.....O.....O..")],
        Color::Black,
    );
    let Some(plain_first) = (match analyse(&mut three.clone(), settings, &mut 0) {
        LeafAnalysis::Proven {
            value: Proven::Win(_),
            line,
        } => line.first().copied(),
        other => panic!("{other:?}"),
    }) else {
        panic!("no line")
    };
    // Nothing excluded that the proof needs: the same verdict.
    assert_eq!(
        except(&three, &[p(0, 0)]),
        analyse(&mut three.clone(), settings, &mut 0)
    );
    match except(&three, &[plain_first]) {
        LeafAnalysis::Proven {
            value: Proven::Win(plies),
            line,
        } => {
            assert_ne!(line.first(), Some(&plain_first));
            // An open four: the block, then the five.
            assert_eq!(plies, 3, "{line:?}");
            assert!(vcf_still_wins(&three, Color::Black, &line), "{line:?}");
        }
        other => panic!("{other:?}"),
    }
    // Both ends excluded, and the fours beyond them: the allowed
    // candidates, none of them excluded.
    let blocked = [p(3, 7), p(7, 7), p(2, 7), p(8, 7)];
    match except(&three, &blocked) {
        LeafAnalysis::Moves { moves, .. } => {
            assert!(!moves.is_empty());
            assert!(moves.iter().all(|m| !blocked.contains(m)), "{moves:?}");
        }
        other => panic!("{other:?}"),
    }
    // Every cell near the stones excluded (a GUI's block path): the
    // allowed cells further away, for the tree to search, not the win
    // through an excluded move (played, before, without a search).
    let mut near = Vec::new();
    for q in three.size().points() {
        let close = three.size().points().any(|s| {
            three.stone(s).is_some()
                && (i32::from(s.x()) - i32::from(q.x())).abs() <= 2
                && (i32::from(s.y()) - i32::from(q.y())).abs() <= 2
        });
        if close && three.stone(q).is_none() {
            near.push(q);
        }
    }
    match except(&three, &near) {
        LeafAnalysis::Moves { moves, complete } => {
            assert!(!moves.is_empty() && !complete);
            assert!(moves.iter().all(|m| !near.contains(m)), "{moves:?}");
        }
        other => panic!("{other:?}"),
    }
    // White's open four: lost, whatever black may not play.
    let lost = board15(
        Rule::Freestyle,
        &[(7, "...OOOO........"), (9, "X.X.X.X........")],
        Color::Black,
    );
    assert!(matches!(
        except(&lost, &[p(2, 7), p(7, 7)]),
        LeafAnalysis::Proven {
            value: Proven::Loss(_),
            ..
        }
    ));
    // White's four: the one block excluded, the allowed candidates (every
    // one loses, which the tree finds).
    let four = board15(
        Rule::Freestyle,
        &[(7, "..XOOOO........"), (9, "X...X...X......")],
        Color::Black,
    );
    match analyse(&mut four.clone(), settings, &mut 0) {
        LeafAnalysis::Moves { moves, .. } => assert_eq!(moves, vec![p(7, 7)]),
        other => panic!("{other:?}"),
    }
    match except(&four, &[p(7, 7)]) {
        LeafAnalysis::Moves { moves, .. } => {
            assert!(moves.len() > 1, "{moves:?}");
            assert!(!moves.contains(&p(7, 7)));
        }
        other => panic!("{other:?}"),
    }
}

/// A win's distance counts the plies after a line that ends before the
/// five: a double open three, which nothing stops, wins in five plies
/// (the fork, any move, the open four, any move, the five), not one.
#[test]
fn a_win_ending_in_a_fork_counts_the_plies_to_the_five() {
    let board = board15(
        Rule::Freestyle,
        &[
            (0, "O.............O"),
            (7, ".......XX......"),
            (8, ".........X....."),
            (9, ".........X....."),
            (14, "O.............O"),
        ],
        Color::Black,
    );
    let settings = LeafSettings {
        vcf_nodes: 200,
        vct_nodes: 20_000,
        ..SETTINGS
    };
    match analyse(&mut board.clone(), settings, &mut 0) {
        LeafAnalysis::Proven {
            value: Proven::Win(plies),
            line,
        } => {
            let mut after = board.clone();
            for &mv in &line {
                after.play(mv).unwrap();
            }
            let five = after.outcome().is_some();
            assert!(
                five && plies as usize == line.len() || !five && plies as usize > line.len(),
                "{line:?}: {plies}"
            );
            assert_eq!(plies, 5, "{line:?}");
        }
        other => panic!("{other:?}"),
    }
}

/// A proven line shows the defender's block where it may play: in renju
/// black may not block on a cell forbidden to it, so after white's open
/// four the block is the other end and the five is the forbidden cell.
#[test]
fn a_win_line_blocks_where_the_defender_may_play() {
    // White's open three on row 7 (x 3..5); black's XXXX.X on column 2
    // makes (2,7) an overline for black (white's stone at (2,2) stops the
    // five above). Only white's (6,7) is left: its four's ends are (2,7),
    // forbidden to black, and (7,7).
    let mut b = board15(
        Rule::Renju,
        &[
            (2, "..O............"),
            (3, "..X............"),
            (4, "..X............"),
            (5, "..X............"),
            (6, "..X............"),
            (7, "...OOO........."),
            (8, "..X............"),
        ],
        Color::White,
    );
    assert!(b.is_forbidden(p(2, 7)), "{b:?}");
    let mut excluded = CellSet::new();
    for q in [p(1, 7), p(2, 7), p(7, 7)] {
        excluded.insert(q);
    }
    let settings = LeafSettings {
        vcf_nodes: 200,
        ..SETTINGS
    };
    let line = match analyse_root_except(&mut b, settings, &excluded, &mut 0) {
        LeafAnalysis::Proven {
            value: Proven::Win(_),
            line,
        } => line,
        other => panic!("{other:?}"),
    };
    assert_eq!(line.first(), Some(&p(6, 7)), "{line:?}");
    assert_eq!(line.len(), 3, "{line:?}");
    let mut replay = b.clone();
    for (i, &m) in line.iter().enumerate() {
        if i % 2 == 1 {
            assert!(
                !replay.is_forbidden(m),
                "black blocks on forbidden {m:?}: {line:?}"
            );
        }
        replay.play(m).expect("the line's moves are legal");
    }
    assert_eq!(line[1], p(7, 7), "{line:?}");
}
