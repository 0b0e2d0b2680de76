//! Immediate threats and the VCF/VCT solver, on hand-built positions and on
//! positions from real games. Every win found is checked by replaying it.

mod common;

use common::{board15, four_three, games, p, FIXTURE_GAMES};
use wuzi_game::game::{Board, BoardSize, Color, Outcome, Point, Rule};
use wuzi_game::tactics::{
    five_blocks, five_defence, is_legal_for, line_breakers, solve, solve_with,
    unstoppable_four_defences, unstoppable_four_moves, winning_moves, Algorithm, FiveDefence,
    SolveLimits, ThreatKind,
};

/// Replays a claimed win and checks it move by move: attacker moves are
/// legal (and fours, for VCF), defender moves in VCF are the one forced
/// block, and the line ends in a five or in a threat the defender cannot
/// meet.
fn verify_win(start: &Board, attacker: Color, kind: ThreatKind, line: &[Point]) {
    let mut b = start.clone();
    b.set_side_to_move(attacker);
    let defender = attacker.opponent();
    for (i, &m) in line.iter().enumerate() {
        let mover = b.side_to_move();
        assert!(
            is_legal_for(&mut b, m, mover),
            "move {i} {m} illegal in {line:?}\n{b:?}"
        );
        if mover == attacker {
            if kind == ThreatKind::Vcf && !b.is_winning_move(m, attacker) {
                assert!(
                    b.five_cells_after(m, attacker) >= 1,
                    "move {i} {m} is not a four\n{b:?}"
                );
            }
        } else if kind == ThreatKind::Vcf {
            // The defender faces a four: it stops the fives, or where no
            // stone can, takes one of their cells.
            let blocks = match five_defence(&mut b, attacker) {
                FiveDefence::Blocks(blocks) => blocks,
                FiveDefence::Unstoppable => five_blocks(&b, attacker),
                FiveDefence::NoFive => Vec::new(),
            };
            assert!(blocks.contains(&m), "move {i}: {m} blocks no five\n{b:?}");
        }
        b.play(m).expect("empty");
        if i + 1 < line.len() {
            assert_eq!(b.outcome(), None, "game over before the line ends");
        }
    }
    if b.outcome() == Some(Outcome::Win(attacker)) {
        return;
    }
    // Otherwise the defender is to move and cannot stop a five.
    assert_eq!(b.side_to_move(), defender, "{line:?}");
    assert!(winning_moves(&b, defender).is_empty());
    let unanswerable = five_defence(&mut b, attacker) == FiveDefence::Unstoppable
        || (!unstoppable_four_moves(&mut b, attacker).is_empty()
            && unstoppable_four_defences(&mut b, attacker).is_empty());
    assert!(
        unanswerable,
        "line {line:?} ends with an answerable position\n{b:?}"
    );
}

#[test]
fn winning_moves_and_blocks() {
    let b = board15(
        Rule::Freestyle,
        &[(7, "...XXXX..O....."), (8, "..OOO.O........")],
        Color::White,
    );
    assert_eq!(winning_moves(&b, Color::Black), vec![p(2, 7), p(7, 7)]);
    assert_eq!(winning_moves(&b, Color::White), vec![p(5, 8)]);
    assert_eq!(five_blocks(&b, Color::White), vec![p(5, 8)]);
}

#[test]
fn defences_against_an_open_three() {
    // ..XXX.. with room on both sides: only the two adjacent cells stop an open four.
    let mut b = board15(Rule::Freestyle, &[(7, ".....XXX.......")], Color::White);
    assert_eq!(
        unstoppable_four_moves(&mut b, Color::Black),
        vec![p(4, 7), p(8, 7)]
    );
    assert_eq!(
        unstoppable_four_defences(&mut b, Color::Black),
        vec![p(4, 7), p(8, 7)]
    );
    // A split three X.XX: the gap and both outer cells.
    let mut b = board15(Rule::Freestyle, &[(7, ".....X.XX......")], Color::White);
    assert_eq!(
        unstoppable_four_defences(&mut b, Color::Black),
        vec![p(4, 7), p(6, 7), p(9, 7)]
    );
    // Near the edge, |XXX.. : one open-four move, and three ways to stop it.
    let mut b = board15(Rule::Freestyle, &[(7, ".XXX...........")], Color::White);
    assert_eq!(unstoppable_four_moves(&mut b, Color::Black), vec![p(4, 7)]);
    assert_eq!(
        unstoppable_four_defences(&mut b, Color::Black),
        vec![p(0, 7), p(4, 7), p(5, 7)]
    );
    // No threat, no defences.
    let mut b = board15(Rule::Freestyle, &[(7, ".....XX........")], Color::White);
    assert!(unstoppable_four_defences(&mut b, Color::Black).is_empty());
}

/// A white stone far from black's threat can stop it in renju: it makes a
/// fake three real, and the threat cell a forbidden four-three-three.
#[test]
fn renju_defences_include_stones_that_make_the_threat_forbidden() {
    let moves: Vec<Point> = [
        (8, 7),
        (12, 7),
        (9, 7),
        (3, 3),
        (10, 7),
        (8, 11),
        (7, 5),
        (0, 14),
        (7, 6),
        (2, 14),
        (6, 6),
        (4, 14),
        (5, 5),
        (14, 14),
        (8, 9),
        (14, 0),
        (8, 10),
    ]
    .into_iter()
    .map(|(x, y)| p(x, y))
    .collect();
    let size = BoardSize::square(15).unwrap();
    let mut b = Board::from_moves(size, Rule::Renju, &moves).unwrap();
    // Black's open four on row 7 at (7,7), with a real three in column 7
    // and a fake one on the diagonal (its four point (8,8) is a four-four).
    assert_eq!(unstoppable_four_moves(&mut b, Color::Black), vec![p(7, 7)]);
    assert!(!b.is_forbidden(p(7, 7)));
    // White (8,6) takes (8,8)'s four in column 8: (8,8) becomes legal, the
    // diagonal three real, and (7,7) a forbidden four-three-three.
    b.play(p(8, 6)).unwrap();
    assert!(b.is_forbidden(p(7, 7)));
    assert!(unstoppable_four_moves(&mut b, Color::Black).is_empty());
    b.undo();
    let defences = unstoppable_four_defences(&mut b, Color::Black);
    assert!(defences.contains(&p(8, 6)), "{defences:?}");
    assert!(defences.contains(&p(7, 7)), "{defences:?}");
    // The same stone breaks a line that starts there.
    let (breakers, _) = line_breakers(&mut b, Color::Black, &[p(7, 7)]);
    assert!(breakers.contains(p(8, 6)));
}

/// Under caro a straight four next to an opponent stone is answered by
/// closing its far end: the five it leaves is closed at both ends.
#[test]
fn caro_fours_closed_at_one_end_are_answerable() {
    let size = BoardSize::square(15).unwrap();
    let board = |moves: &[(u8, u8)]| {
        let moves: Vec<Point> = moves.iter().map(|&(x, y)| p(x, y)).collect();
        Board::from_moves(size, Rule::Caro, &moves).unwrap()
    };
    // Row 7 reads ...O.XXX....... with black to move: (8,7) makes a
    // straight four with five cells (4,7) and (9,7), but white (9,7)
    // leaves only (4,7), whose five O XXXXX O does not win.
    let mut b = board(&[(5, 7), (3, 7), (6, 7), (0, 0), (7, 7), (14, 14)]);
    assert!(!unstoppable_four_moves(&mut b, Color::Black).contains(&p(8, 7)));
    let report = solve(
        &mut b,
        Color::Black,
        ThreatKind::Vcf,
        SolveLimits::default(),
    );
    assert!(report.win.is_none(), "{:?}", report.win);
    b.play(p(8, 7)).unwrap();
    assert_eq!(
        five_defence(&mut b, Color::Black),
        FiveDefence::Blocks(vec![p(9, 7)])
    );
    // Away from a white stone the same four is open.
    let mut b = board(&[(5, 7), (0, 0), (6, 7), (0, 2), (7, 7), (14, 14)]);
    assert!(unstoppable_four_moves(&mut b, Color::Black).contains(&p(8, 7)));
    b.play(p(8, 7)).unwrap();
    assert_eq!(five_defence(&mut b, Color::Black), FiveDefence::Unstoppable);
    // A four with one five cell, O XXXX . . : the five cell, or the cell
    // beyond it, which closes the five's other end.
    let mut b = board(&[(3, 7), (2, 7), (4, 7), (0, 0), (5, 7), (14, 14), (6, 7)]);
    assert_eq!(
        five_defence(&mut b, Color::Black),
        FiveDefence::Blocks(vec![p(7, 7), p(8, 7)])
    );
}

#[test]
fn vcf_four_three_is_found_and_replays() {
    for rule in Rule::ALL {
        let mut b = four_three(rule, Color::Black);
        let before = b.hash();
        let report = solve(
            &mut b,
            Color::Black,
            ThreatKind::Vcf,
            SolveLimits::default(),
        );
        assert_eq!(b.hash(), before, "board restored");
        let line = report.win.expect("VCF exists");
        assert_eq!(line[0], p(6, 7), "{rule}");
        assert_eq!(line[1], p(7, 7), "{rule}: forced block");
        verify_win(&b, Color::Black, ThreatKind::Vcf, &line);
        // White, to move here, has nothing.
        let report = solve(
            &mut b,
            Color::White,
            ThreatKind::Vcf,
            SolveLimits::default(),
        );
        assert!(report.win.is_none() && report.complete);
    }
}

#[test]
fn solver_is_deterministic_and_respects_its_budget() {
    let mut b = four_three(Rule::Freestyle, Color::Black);
    let limits = SolveLimits::new(10_000, 20);
    let first = solve(&mut b, Color::Black, ThreatKind::Vct, limits);
    let second = solve(&mut b, Color::Black, ThreatKind::Vct, limits);
    assert_eq!(first, second);
    let tiny = solve(
        &mut b,
        Color::Black,
        ThreatKind::Vct,
        SolveLimits::new(2, 20),
    );
    assert!(tiny.nodes <= 2 && !tiny.complete && tiny.win.is_none());
}

#[test]
fn renju_black_may_not_win_through_a_double_four() {
    let rows: &[(usize, &str)] = &[
        (3, ".......O......."),
        (4, ".......X......."),
        (5, ".......X......."),
        (6, ".......X......."),
        (7, "...OXXX........"),
        (12, "O.....O......O."),
    ];
    let mut free = board15(Rule::Freestyle, rows, Color::Black);
    let report = solve(
        &mut free,
        Color::Black,
        ThreatKind::Vcf,
        SolveLimits::default(),
    );
    let line = report.win.expect("double four wins in freestyle");
    assert_eq!(line[0], p(7, 7));
    verify_win(&free, Color::Black, ThreatKind::Vcf, &line);

    let mut renju = board15(Rule::Renju, rows, Color::Black);
    assert!(renju.is_forbidden(p(7, 7)));
    let report = solve(
        &mut renju,
        Color::Black,
        ThreatKind::Vcf,
        SolveLimits::default(),
    );
    assert_eq!(report.win, None);
    assert!(report.complete);
}

#[test]
fn renju_white_wins_by_forcing_black_onto_a_forbidden_cell() {
    // Black XXX.XX on row 3: (3,3) would be an overline, forbidden. White's
    // four (3,4)-(3,7) down column 3 can only be blocked there.
    let rows = common::FORCED_ONTO_FORBIDDEN;
    let mut b = board15(Rule::Renju, rows, Color::White);
    assert!(b.is_forbidden(p(3, 3)));
    let report = solve(
        &mut b,
        Color::White,
        ThreatKind::Vcf,
        SolveLimits::default(),
    );
    let line = report.win.expect("white wins");
    assert_eq!(line, vec![p(3, 7)], "black has no legal block");
    verify_win(&b, Color::White, ThreatKind::Vcf, &line);
    // Under freestyle black blocks and survives.
    let mut free = board15(Rule::Freestyle, rows, Color::White);
    let report = solve(
        &mut free,
        Color::White,
        ThreatKind::Vcf,
        SolveLimits::default(),
    );
    assert!(report.win.as_ref().map_or(true, |l| l[0] != p(3, 7)));
}

/// Renju: a white three whose fours black could block only on forbidden
/// cells is a VCT threat. Black's XXX.XX on rows 3 and 7 makes (3,3) and
/// (3,7) overlines; white's (3,6) (or (3,3)) leaves column 3 at X.OOO.X,
/// and either four then has its one five cell on a forbidden point.
#[test]
fn renju_vct_forces_black_onto_forbidden_cells() {
    let rows = &[
        (2, "...X..........."),
        (3, "XXX.XX........."),
        (4, "...O..........."),
        (5, "...O..........."),
        (7, "XXX.XX........."),
        (8, "...X..........."),
    ];
    let mut b = board15(Rule::Renju, rows, Color::White);
    assert!(b.is_forbidden(p(3, 3)) && b.is_forbidden(p(3, 7)));
    let limits = SolveLimits::default();
    assert!(solve(&mut b, Color::White, ThreatKind::Vcf, limits)
        .win
        .is_none());
    for algorithm in [Algorithm::ProofNumber, Algorithm::DepthFirst] {
        let report = solve_with(&mut b, Color::White, ThreatKind::Vct, limits, algorithm);
        let line = report.win.expect("white wins by VCT");
        assert!([p(3, 3), p(3, 6)].contains(&line[0]), "{line:?}");
        verify_win(&b, Color::White, ThreatKind::Vct, &line);
    }
    // After the three: both fours leave black no legal block, and the
    // defence set is what playing every black move finds (none here).
    b.play(p(3, 6)).unwrap();
    let mut threats = unstoppable_four_moves(&mut b, Color::White);
    threats.sort_by_key(|q| q.index());
    assert_eq!(threats, vec![p(3, 3), p(3, 7)]);
    let mut brute = Vec::new();
    for e in b.empty_cells().collect::<Vec<_>>() {
        if is_legal_for(&mut b, e, Color::Black) {
            b.place(e, Color::Black).unwrap();
            if unstoppable_four_moves(&mut b, Color::White).is_empty() {
                brute.push(e);
            }
            b.undo();
        }
    }
    b.set_side_to_move(Color::Black);
    assert_eq!(unstoppable_four_defences(&mut b, Color::White), brute);
    assert!(brute.is_empty(), "{brute:?}");
    // Without the forbidden cells (standard: black may block anywhere) the
    // same fours are ordinary ones.
    let mut standard = board15(Rule::Standard, rows, Color::White);
    standard.play(p(3, 6)).unwrap();
    assert!(unstoppable_four_moves(&mut standard, Color::White).is_empty());
}

/// Black: two open twos crossing at (8,7); the double three wins by VCT, not VCF.
fn double_three(rule: Rule) -> Board {
    board15(
        rule,
        &[
            (0, "O.............O"),
            (5, "........X......"),
            (6, "........X......"),
            (7, ".....XX........"),
            (14, "O.............."),
        ],
        Color::Black,
    )
}

#[test]
fn vct_double_three_is_found_and_every_defence_loses() {
    let mut b = double_three(Rule::Freestyle);
    let vcf = solve(
        &mut b,
        Color::Black,
        ThreatKind::Vcf,
        SolveLimits::default(),
    );
    assert!(vcf.win.is_none() && vcf.complete);
    let report = solve(
        &mut b,
        Color::Black,
        ThreatKind::Vct,
        SolveLimits::new(200_000, 12),
    );
    let line = report.win.expect("VCT exists");
    verify_win(&b, Color::Black, ThreatKind::Vct, &line);
    // Check the proof one level down by brute force: after black's first
    // move, every legal white reply still loses to a VCT.
    let first = line[0];
    b.play(first).unwrap();
    let replies: Vec<Point> = b.empty_cells().collect();
    for r in replies {
        b.play(r).unwrap();
        let report = solve(
            &mut b,
            Color::Black,
            ThreatKind::Vct,
            SolveLimits::new(200_000, 12),
        );
        let follow = report
            .win
            .unwrap_or_else(|| panic!("white's {r} refutes {first}\n{b:?}"));
        verify_win(&b, Color::Black, ThreatKind::Vct, &follow);
        b.undo();
    }
}

/// Under renju the crossing point is a forbidden double three: black's VCT,
/// if the solver finds one, starts elsewhere and replays legally; if it finds
/// none, it must have searched to the end (a solve that ran out of budget
/// shows nothing).
#[test]
fn renju_double_three_point_never_starts_black_s_vct() {
    let mut b = double_three(Rule::Renju);
    assert!(b.is_forbidden(p(8, 7)));
    let report = solve(
        &mut b,
        Color::Black,
        ThreatKind::Vct,
        SolveLimits::new(200_000, 12),
    );
    match &report.win {
        Some(line) => {
            assert_ne!(line[0], p(8, 7));
            verify_win(&b, Color::Black, ThreatKind::Vct, line);
        }
        None => assert!(report.complete, "the solve ran out of budget"),
    }
}

/// Positions from real games, a few plies before the end, with the winner
/// to move: every win the solver claims replays correctly, and the five one
/// ply before the end is always found.
#[test]
fn wins_found_in_real_games_replay() {
    let mut found = [0usize; 2];
    let mut tried = 0;
    for tsv in FIXTURE_GAMES {
        for game in games(tsv) {
            let n = game.moves.len();
            for back in [1usize, 3, 5, 7, 9] {
                if back > n {
                    continue;
                }
                let mut b =
                    Board::from_moves(game.size, game.rule, &game.moves[..n - back]).unwrap();
                let winner = b.side_to_move();
                for (k, kind) in [ThreatKind::Vcf, ThreatKind::Vct].into_iter().enumerate() {
                    let report = solve(&mut b, winner, kind, SolveLimits::new(20_000, 20));
                    if let Some(line) = &report.win {
                        verify_win(&b, winner, kind, line);
                        found[k] += 1;
                    } else if back == 1 {
                        panic!("{}: the final five was not found", game.id);
                    }
                }
                tried += 1;
            }
        }
    }
    assert_eq!(tried, 1000);
    // The winner usually had a forced win a few plies before the end.
    assert!(found[0] > 400, "VCF found in {} of {tried}", found[0]);
    assert!(found[1] >= found[0], "VCT {} < VCF {}", found[1], found[0]);
}

/// Where VCT proves a win that VCF does not, check the proof one level down
/// by brute force: after the attacker's first move, every legal reply of the
/// defender must still lose to a VCT that the solver finds and that replays
/// (a reply whose solve ran out of budget would show nothing, so fails).
#[test]
fn vct_wins_in_real_games_survive_every_reply() {
    let mut checked = 0;
    for tsv in FIXTURE_GAMES {
        let mut in_file = 0;
        'games: for game in games(tsv) {
            let n = game.moves.len();
            for back in [5usize, 7, 9] {
                if back > n {
                    continue;
                }
                let mut b =
                    Board::from_moves(game.size, game.rule, &game.moves[..n - back]).unwrap();
                let winner = b.side_to_move();
                let limits = SolveLimits::new(20_000, 20);
                if solve(&mut b, winner, ThreatKind::Vcf, limits).win.is_some() {
                    continue;
                }
                let Some(line) = solve(&mut b, winner, ThreatKind::Vct, limits).win else {
                    continue;
                };
                b.play(line[0]).unwrap();
                let defender = b.side_to_move();
                let replies: Vec<Point> = b.empty_cells().collect();
                for r in replies {
                    if !is_legal_for(&mut b, r, defender) {
                        continue;
                    }
                    b.play(r).unwrap();
                    let report = solve(
                        &mut b,
                        winner,
                        ThreatKind::Vct,
                        SolveLimits::new(100_000, 20),
                    );
                    let follow = report.win.unwrap_or_else(|| {
                        panic!(
                            "{}: after {r} no VCT was found (complete: {}) for {line:?}\n{b:?}",
                            game.id, report.complete
                        )
                    });
                    verify_win(&b, winner, ThreatKind::Vct, &follow);
                    b.undo();
                }
                checked += 1;
                in_file += 1;
                if in_file == 4 {
                    break 'games;
                }
            }
        }
    }
    assert_eq!(checked, 16);
}

#[test]
fn proof_number_and_depth_first_solvers_agree_in_real_games() {
    // Both search the same moves, so where both run to their end within
    // the same depth they must agree on whether there is a win, and every
    // win either finds must replay. Positions a few moves before the end
    // of real games have wins and non-wins of every length.
    let (mut wins, mut no_wins) = (0, 0);
    for tsv in FIXTURE_GAMES {
        for game in games(tsv).iter().take(6) {
            let n = game.moves.len();
            for back in [3usize, 4, 6, 8, 10, 13] {
                if back > n {
                    continue;
                }
                let mut b =
                    Board::from_moves(game.size, game.rule, &game.moves[..n - back]).unwrap();
                for attacker in [Color::Black, Color::White] {
                    let limits = SolveLimits::new(300_000, 5);
                    let deep = [Algorithm::DepthFirst, Algorithm::ProofNumber].map(|algorithm| {
                        solve_with(&mut b, attacker, ThreatKind::Vct, limits, algorithm)
                    });
                    for report in &deep {
                        if let Some(line) = &report.win {
                            verify_win(&b, attacker, ThreatKind::Vct, line);
                        }
                    }
                    if deep.iter().all(|r| r.complete) {
                        assert_eq!(
                            deep[0].win.is_some(),
                            deep[1].win.is_some(),
                            "{} {back} moves from the end, {attacker:?}: {deep:?}\n{b:?}",
                            game.id
                        );
                        match deep[0].win {
                            Some(_) => wins += 1,
                            None => no_wins += 1,
                        }
                    }
                }
            }
        }
    }
    assert!(
        wins >= 100 && no_wins >= 100,
        "{wins} wins, {no_wins} without"
    );
}

#[test]
fn defence_sets_equal_a_brute_force_over_every_cell_in_real_games() {
    // Whenever one side threatens an unstoppable four, the defence set is
    // exactly the legal moves of the other side after which no such
    // threat is left, whichever cell of the board they are on.
    // The freestyle games are replayed under caro too (no caro records):
    // its fives differ, and the defence sets are computed without playing
    // the stone on every rule but renju.
    let mut compared = 0;
    let mut compared_caro = 0;
    for tsv in FIXTURE_GAMES {
        for game in games(tsv).iter().take(8) {
            let rules = match game.rule {
                Rule::Freestyle => vec![Rule::Freestyle, Rule::Caro],
                rule => vec![rule],
            };
            for rule in rules {
                let mut b = Board::new(game.size, rule);
                for &m in &game.moves {
                    b.play(m).expect("legal game");
                    if b.outcome().is_some() {
                        break;
                    }
                    for attacker in Color::BOTH {
                        if !winning_moves(&b, attacker).is_empty()
                            || unstoppable_four_moves(&mut b, attacker).is_empty()
                        {
                            continue;
                        }
                        let defender = attacker.opponent();
                        let side = b.side_to_move();
                        let empty: Vec<Point> = b.empty_cells().collect();
                        let mut brute = Vec::new();
                        for e in empty {
                            if !is_legal_for(&mut b, e, defender) {
                                continue;
                            }
                            b.place(e, defender).unwrap();
                            if unstoppable_four_moves(&mut b, attacker).is_empty() {
                                brute.push(e);
                            }
                            b.undo();
                        }
                        b.set_side_to_move(side);
                        let mut fast = unstoppable_four_defences(&mut b, attacker);
                        fast.sort_by_key(|p| p.index());
                        brute.sort_by_key(|p| p.index());
                        assert_eq!(fast, brute, "{rule}: {attacker} attacks\n{b:?}");
                        compared += 1;
                        compared_caro += usize::from(rule == Rule::Caro);
                    }
                }
            }
        }
    }
    assert!(compared >= 50, "only {compared} threat positions");
    assert!(
        compared_caro >= 20,
        "only {compared_caro} caro threat positions"
    );
}

#[test]
fn five_cells_after_with_a_stone_equals_placing_it() {
    // The lookup without playing must agree with playing the stone, for
    // either colour's stone, near and far, on every rule.
    let mut compared = 0;
    for tsv in FIXTURE_GAMES {
        for game in games(tsv).iter().take(4) {
            for rule in [game.rule, Rule::Caro] {
                let mut b = Board::new(game.size, rule);
                for (ply, &m) in game.moves.iter().enumerate() {
                    if b.play(m).is_err() || b.outcome().is_some() {
                        break;
                    }
                    if ply % 7 != 0 {
                        continue;
                    }
                    let empty: Vec<Point> = b.empty_cells().collect();
                    for color in Color::BOTH {
                        let fours: Vec<Point> = b
                            .cells_of(wuzi_game::game::CellKind::Four, color)
                            .iter()
                            .collect();
                        for &p in &fours {
                            for &e in empty.iter().filter(|&&e| e != p) {
                                for stone in Color::BOTH {
                                    let side = b.side_to_move();
                                    let predicted = b.five_cells_after_with(p, color, e, stone);
                                    b.place(e, stone).unwrap();
                                    let actual = b.five_cells_after(p, color);
                                    b.undo();
                                    b.set_side_to_move(side);
                                    assert_eq!(
                                        predicted, actual,
                                        "{rule}: {p} {color:?}, {stone:?} on {e}\n{b:?}"
                                    );
                                    compared += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(compared >= 10_000, "{compared}");
}

/// Renju: wherever white threatens a four black could block only on a
/// forbidden cell, the defence set equals playing every black move (those
/// that make the cell legal, wherever they are, included).
#[test]
fn forbidden_block_defences_equal_a_brute_force_in_real_renju_games() {
    let (mut positions, mut with_defences) = (0, 0);
    for game in games(FIXTURE_GAMES[2]).iter() {
        assert_eq!(game.rule, Rule::Renju);
        let mut b = Board::new(game.size, game.rule);
        for &m in &game.moves {
            b.play(m).expect("legal game");
            if b.outcome().is_some() {
                break;
            }
            if Color::BOTH
                .iter()
                .any(|&c| !winning_moves(&b, c).is_empty())
            {
                continue;
            }
            let threats = unstoppable_four_moves(&mut b, Color::White);
            if !threats
                .iter()
                .any(|&q| b.five_cells_after(q, Color::White) == 1)
            {
                continue;
            }
            positions += 1;
            let side = b.side_to_move();
            let mut brute = Vec::new();
            for e in b.empty_cells().collect::<Vec<_>>() {
                if !is_legal_for(&mut b, e, Color::Black) {
                    continue;
                }
                b.place(e, Color::Black).unwrap();
                if unstoppable_four_moves(&mut b, Color::White).is_empty() {
                    brute.push(e);
                }
                b.undo();
            }
            b.set_side_to_move(side);
            let mut fast = unstoppable_four_defences(&mut b, Color::White);
            fast.sort_by_key(|p| p.index());
            brute.sort_by_key(|p| p.index());
            assert_eq!(fast, brute, "{b:?}");
            with_defences += usize::from(!brute.is_empty());
        }
    }
    assert!(
        positions >= 8 && with_defences >= 2,
        "{positions} positions, {with_defences} with defences"
    );
}
