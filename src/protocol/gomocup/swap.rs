//! Opening rules: SWAPBOARD, SWAP2BOARD and Yixin-Board's swap2 steps, as
//! the manager asks them; the decisions are the engine's.

use super::*;

impl Gomocup {
    pub(super) fn swap_board(&mut self, s: &mut GomocupSession, swap2: bool, stones: &[Stone]) {
        if self.refuses(s) {
            return;
        }
        let name = if swap2 { "SWAP2BOARD" } else { "SWAPBOARD" };
        let valid_counts: &[usize] = if swap2 { &[0, 3, 5] } else { &[0, 3] };
        if !valid_counts.contains(&stones.len()) {
            error(
                s,
                &format!(
                    "{name} expects {valid_counts:?} stones, got {}",
                    stones.len()
                ),
            );
            return;
        }
        // Swap blocks list stones in playing order, usually without fields.
        let plain: Vec<Stone> = stones
            .iter()
            .map(|s| Stone {
                at: s.at,
                field: None,
            })
            .collect();
        let board = match Self::position_of(s, name, &plain) {
            Ok(b) => b,
            Err(e) => return error(s, &e),
        };
        if stones.is_empty() {
            // The proposal is made on an empty board of the game's size and
            // rule; the game's board changes only once there is one, so a
            // failure leaves it as it was.
            let moves = s.engine.opening_stones(s.received());
            if moves.len() == 3 {
                s.send(&move_list(&moves));
                keep_opening_stones(s, &moves);
                self.charge_turn(s, s.received());
            } else {
                error(s, "cannot choose opening stones on this board");
            }
            return;
        }
        s.engine.set_board(board);
        self.think(
            s,
            Job::Swap {
                stones: stones.len(),
                swap2,
            },
        );
    }

    /// The engine's swap decision on the position handed over, in the
    /// Gomocup swap commands' answers. Staying with the colour to move is
    /// answered as a TURN is: our move played, or suggested in analysis
    /// mode. Returns false where the answer is still to come: staying after
    /// three swap2 stones, whose search took half the turn in case
    /// balancing stones were needed, searches on for the move in the rest
    /// of it, on the same tree.
    pub(super) fn swap_decision(
        &mut self,
        s: &mut GomocupSession,
        result: &SearchResult,
        stones: usize,
        swap2: bool,
    ) -> bool {
        let turn_began = self.turn_began;
        let choice = choice_now(result, stones, swap2);
        let half_turn = Job::Swap { stones, swap2 }.turn_share() < 1.0;
        if choice == SwapChoice::Stay && half_turn && result.reason == StopReason::Time {
            // The move's clock is the decision's; the line being handled
            // keeps its own time.
            let received = s.received();
            s.set_received(turn_began);
            self.think(s, Job::Move);
            s.set_received(received);
            // A refusal (the game over, the rule refused) has answered.
            return !s.busy();
        }
        match choice {
            SwapChoice::TakeBlack => s.send("SWAP"),
            SwapChoice::Balance => {
                let board = s.engine.board().clone();
                match s.engine.balancing_moves(&board, 2, 0.0, turn_began)[..] {
                    [m4, m5] => {
                        s.send(&format!("{m4} {m5}"));
                        keep_proposed(s, board, &[m4, m5]);
                    }
                    _ => self.answer_move(s, result),
                }
            }
            SwapChoice::Stay => self.answer_move(s, result),
        }
        true
    }

    /// The same decision in Yixin-Board's swap2 messages.
    pub(super) fn yixin_swap_decision(
        s: &mut GomocupSession,
        result: &SearchResult,
        stones: usize,
        turn_began: Instant,
    ) {
        let step = if stones == 3 { "SWAP1" } else { "SWAP2" };
        match choice_now(result, stones, true) {
            SwapChoice::TakeBlack => message(s, &format!("SWAP2 {step} YES")),
            SwapChoice::Balance => {
                let board = s.engine.board().clone();
                let moves = s.engine.balancing_moves(&board, 2, 0.0, turn_began);
                if let [m4, m5] = moves[..] {
                    message(s, &format!("SWAP2 MOVE4 {} {}", m4.x(), m4.y()));
                    message(s, &format!("SWAP2 MOVE5 {} {}", m5.x(), m5.y()));
                    keep_proposed(s, board, &moves);
                } else {
                    message(s, &format!("SWAP2 {step} NO"));
                }
            }
            SwapChoice::Stay => message(s, &format!("SWAP2 {step} NO")),
        }
    }

    pub(super) fn yixin_swap2(&mut self, s: &mut GomocupSession, step: u8) {
        if self.refuses(s) {
            return;
        }
        match step {
            1 => {
                let moves = s.engine.opening_stones(s.received());
                for (i, m) in moves.iter().enumerate() {
                    message(s, &format!("SWAP2 MOVE{} {} {}", i + 1, m.x(), m.y()));
                }
                keep_opening_stones(s, &moves);
                self.charge_turn(s, s.received());
            }
            _ => {
                // Step 2 answers the three opening stones, step 3 the two
                // stones after them: the answers differ by step, and a
                // board of the other step's count gets one it cannot read.
                let stones = s.engine.board().stone_count();
                let expected = if step == 2 { 3 } else { 5 };
                if stones != expected {
                    return self.refuse_request(
                        s,
                        &format!(
                            "yxswap2step{step} needs {expected} stones on the board, not {stones}"
                        ),
                    );
                }
                self.think(s, Job::YixinSwap2 { stones });
            }
        }
    }
}

/// The opening stones we propose, kept as the only stones of the game.
fn keep_opening_stones(s: &mut GomocupSession, moves: &[Point]) {
    let board = s.engine.board();
    let empty = Board::new(board.size(), board.rule());
    keep_proposed(s, empty, moves);
}

/// Stones the engine proposes (balancing moves, swap2 stones) go on its own
/// board too: Yixin-Board places them and then asks about the position
/// (yxshowforbid, a search) without sending it again, and a Gomocup
/// manager may go on after a swap answer with TURN rather than BOARD.
pub(super) fn keep_proposed(s: &mut GomocupSession, mut board: Board, moves: &[Point]) {
    for &m in moves {
        if board.play(m).is_err() {
            return;
        }
    }
    s.engine.set_board(board);
}

/// The swap choice after `result`; a search that was stopped (the
/// manager wants the answer now) stays with the colour to move rather than
/// balance, which would take up to seconds more without reading a stop.
fn choice_now(result: &SearchResult, stones: usize, swap2: bool) -> SwapChoice {
    match SwapChoice::after_search(result, stones, swap2) {
        SwapChoice::Balance if result.reason == StopReason::Stopped => SwapChoice::Stay,
        choice => choice,
    }
}
