//! The one-line summary of a search that the front ends show (Gomocup's
//! `MESSAGE`, Yixin-Board's log panel, the file protocol's `MSG.DAT`, the
//! logs): `depth 1-D ev E winrate W drawrate D n N n/s S tm T [refuted X
//! ...] pv ...`, as AlphaGomoku's extended protocol writes it.

use std::fmt::Write as _;

use crate::notation::Notation;
use crate::search::node::Proven;
use crate::search::SearchResult;

/// The `ev` field: W/L with the plies to the end, D, or (unproven) the
/// expectation in %.
pub fn ev_text(proven: Proven, expectation: f32) -> String {
    match proven {
        Proven::Win(d) => format!("W{d}"),
        Proven::Loss(d) => format!("L{d}"),
        Proven::Draw => "D".to_string(),
        Proven::Unknown => format!("{:.1}", 100.0 * expectation),
    }
}

/// The summary line of `result` (without the `MESSAGE` word), its moves in
/// `notation`.
pub fn summary_line(result: &SearchResult, notation: Notation) -> String {
    let mut line = format!(
        "depth 1-{} ev {} winrate {:.1} drawrate {:.1} n {} n/s {} tm {}",
        result.pv.len().max(1),
        ev_text(result.proven, result.expectation),
        100.0 * result.wdl[0],
        100.0 * result.wdl[1],
        result.counters.playouts,
        result.nodes_per_second(),
        result.elapsed.as_millis()
    );
    if !result.refuted.is_empty() {
        // Before the PV, which GUIs read to the end of the line.
        let refuted: Vec<String> = result.refuted.iter().map(|&p| notation.cell(p)).collect();
        let _ = write!(line, " refuted {}", refuted.join(" "));
    }
    line.push_str(" pv");
    line.push_str(&notation.line(result.side_to_move, &result.pv));
    line
}

/// Writes a finished search to the log: why it ended, then its summary.
pub fn log_search(result: &SearchResult) {
    tracing::info!(
        "search ({}): {}",
        result.reason,
        summary_line(result, Notation::Gomocup)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ev_is_a_proof_or_a_percentage() {
        assert_eq!(ev_text(Proven::Win(3), 0.9), "W3");
        assert_eq!(ev_text(Proven::Loss(4), 0.1), "L4");
        assert_eq!(ev_text(Proven::Draw, 0.5), "D");
        assert_eq!(ev_text(Proven::Unknown, 0.614), "61.4");
    }
}
