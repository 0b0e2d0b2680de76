//! What `analyse` prints: the diagram, the position's evaluation and top
//! moves, as text or JSON.

use super::*;

pub(super) fn color_name(c: Color) -> &'static str {
    match c {
        Color::Black => "black",
        Color::White => "white",
    }
}

/// Expected score of a move for the player making it.
pub(super) fn move_score(m: &MoveStats) -> f64 {
    f64::from(m.proven.expected_score(m.wdl))
}

pub(super) fn proven_text(proven: Proven, mover: Color) -> Option<String> {
    let moves = |plies: u16| (plies as usize).div_ceil(2);
    match proven {
        Proven::Win(d) => Some(format!(
            "{} wins by force in {} move(s)",
            color_name(mover),
            moves(d)
        )),
        Proven::Loss(d) => Some(format!(
            "{} wins by force in {} move(s)",
            color_name(mover.opponent()),
            moves(d.saturating_sub(1)).max(1)
        )),
        Proven::Draw => Some("a proven draw".to_string()),
        Proven::Unknown => None,
    }
}

/// The diagram: rows numbered from the bottom, columns lettered; the last
/// move in brackets (and in red when `color`).
pub fn diagram(board: &Board, color: bool) -> String {
    let size = board.size();
    let (w, h) = (size.width(), size.height());
    let last = board.last_move();
    let letters: String = (0..w).map(|x| format!(" {}", column_letter(x))).collect();
    let mut out = format!("   {letters}\n");
    for y in 0..h {
        let _ = write!(out, "{:>2} ", h - y);
        for x in 0..w {
            let Some(p) = Point::new(x, y) else { continue };
            let is_last = Some(p) == last;
            let after_last = x > 0 && last == Point::new(x - 1, y);
            out.push(if is_last {
                '['
            } else if after_last {
                ']'
            } else {
                ' '
            });
            let stone = match board.stone(p) {
                Some(Color::Black) => "X",
                Some(Color::White) => "O",
                None => ".",
            };
            match (color, board.stone(p)) {
                (true, Some(_)) if is_last => {
                    let _ = write!(out, "\x1b[1;31m{stone}\x1b[0m");
                }
                (true, Some(Color::Black)) => {
                    let _ = write!(out, "\x1b[1m{stone}\x1b[0m");
                }
                (true, Some(Color::White)) => {
                    let _ = write!(out, "\x1b[36m{stone}\x1b[0m");
                }
                _ => out.push_str(stone),
            }
        }
        let closes = last == Point::new(w - 1, y);
        let _ = writeln!(out, "{} {}", if closes { "]" } else { " " }, h - y);
    }
    let _ = writeln!(out, "   {letters}");
    out
}

pub(super) fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none()
                && std::env::var("TERM").map_or(true, |t| t != "dumb")
        }
    }
}

/// A cell in JSON: its label and its 0-based x, y.
pub(super) fn cell_json(p: Point, size: BoardSize) -> Value {
    json!({"name": cell_name(p, size), "x": p.x(), "y": p.y()})
}

/// A proven value in JSON (null when not proven).
pub(super) fn proven_json(proven: Proven) -> Value {
    match proven {
        Proven::Win(d) => json!({"result": "win", "plies": d}),
        Proven::Loss(d) => json!({"result": "loss", "plies": d}),
        Proven::Draw => json!({"result": "draw"}),
        Proven::Unknown => Value::Null,
    }
}

/// The analysis of one position as JSON: the `top` moves, each with its
/// win and draw rates where the search has any (null for a move it did
/// not visit).
pub(super) fn position_json(board: &Board, result: &SearchResult, top: usize) -> Value {
    let size = board.size();
    let cell = |p: Point| cell_json(p, size);
    let mover = result.side_to_move;
    json!({
        "rule": board.rule().to_string(),
        "board": size.to_string(),
        "moves_played": board.stone_count(),
        "to_move": color_name(mover),
        "winrate": result.wdl[0],
        "drawrate": result.wdl[1],
        "lossrate": result.wdl[2],
        "expected_score": result.expectation,
        "proven": proven_json(result.proven),
        "best_move": result.best_move.map(cell),
        "pv": result.pv.iter().map(|&p| cell(p)).collect::<Vec<_>>(),
        "top": result.moves.iter().take(top).map(|m| {
            let known = m.visits > 0 || m.proven.is_known();
            json!({
                "move": cell(m.mv),
                "visits": m.visits,
                "prior": m.prior,
                "winrate": known.then_some(m.wdl[0]),
                "drawrate": known.then_some(m.wdl[1]),
                "proven": proven_json(m.proven),
            })
        }).collect::<Vec<_>>(),
        "playouts": result.counters.playouts,
        "seconds": result.elapsed.as_secs_f64(),
    })
}

/// The analysis of one position as text.
pub(super) fn position_text(
    board: &Board,
    result: &SearchResult,
    top: usize,
    color: bool,
) -> String {
    let size = board.size();
    let mut out = diagram(board, color);
    let mover = result.side_to_move;
    let _ = writeln!(
        out,
        "{} {}, {} to move (move {})",
        board.rule(),
        size,
        color_name(mover),
        board.stone_count() + 1
    );
    let evaluation = match proven_text(result.proven, mover) {
        Some(text) => text,
        None => format!(
            "{} winrate {:.1}%, drawrate {:.1}%",
            color_name(mover),
            100.0 * result.wdl[0],
            100.0 * result.wdl[1]
        ),
    };
    let _ = writeln!(
        out,
        "evaluation: {evaluation} ({} playouts, {:.1} s)",
        result.counters.playouts,
        result.elapsed.as_secs_f64()
    );
    if let Some(best) = result.best_move {
        let _ = writeln!(out, "best move: {}", cell_name(best, size));
    }
    let pv = Notation::labels(size).line(mover, &result.pv);
    let _ = writeln!(out, "line:{pv}");
    let _ = writeln!(out, "top moves:");
    for m in result.moves.iter().take(top) {
        let value = match proven_text(m.proven, mover) {
            Some(t) => t,
            None if m.visits == 0 => "not searched".to_string(),
            None => format!("winrate {:5.1}%", 100.0 * m.wdl[0]),
        };
        let _ = writeln!(
            out,
            "  {:<4} visits {:>7}  prior {:5.1}%  {value}",
            cell_name(m.mv, size),
            m.visits,
            100.0 * m.prior
        );
    }
    out
}
