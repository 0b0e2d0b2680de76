//! Analysis output of the Gomocup front end: `INFO evaluate`, and
//! Yixin-Board's live and final reports (best move and lost moves on the
//! board, per-PV INFO blocks with whole lines, summary lines for its log
//! panel).

use std::time::{Duration, Instant};

use crate::engine::NodeReport;
use crate::game::Point;
use crate::gomocup::Coord;
use crate::nn::expectation;
use crate::notation::Notation;
use crate::protocol::gomocup::{message, point, Dialect, Gomocup, GomocupSession, Job};
use crate::protocol::summary::ev_text;
use crate::search::node::Proven;
use crate::search::result::MoveStats;
use crate::search::SearchResult;

/// Summary lines for Yixin-Board's log panel during a search.
const SUMMARY_EVERY: Duration = Duration::from_secs(1);
/// INFO blocks carry whole lines for this many top moves (one move each
/// for the rest, as a defence search lists them all).
const LINES_SHOWN: usize = 10;

/// Answers to `INFO evaluate` that may wait unread: Piskvork sends one for
/// every cell the mouse crosses (a debug option) and reads nothing until
/// its next request, so more would fill the pipe, block the brain and
/// then the manager writing to it. A manager's next request (any command
/// but INFO) reads them and lets more out.
const UNREAD_EVALUATIONS: u32 = 4;

impl Gomocup {
    /// INFO evaluate [x,y ...]: the statistics of that node, as a MESSAGE
    /// (saying so when the path is not a position of the tree), while
    /// fewer than [`UNREAD_EVALUATIONS`] answers wait.
    pub(super) fn evaluate(&mut self, s: &mut GomocupSession, value: &str) {
        if self.unread_evaluations >= UNREAD_EVALUATIONS {
            tracing::debug!("INFO evaluate {value}: not answered, as answers wait unread");
            return;
        }
        self.unread_evaluations += 1;
        let mut path = Vec::new();
        for token in value.split_whitespace() {
            let point = token.parse::<Coord>().ok().and_then(|c| point(s, c).ok());
            match point {
                Some(p) => path.push(p),
                None => {
                    message(s, &format!("evaluate {}: not a move on this board", token));
                    return;
                }
            }
        }
        match s.engine.report(&path, 5) {
            Some(report) => {
                let ev = ev_text(report.proven, expectation(report.wdl));
                let mut line = format!(
                    "MESSAGE evaluate {} n {} ev {ev} winrate {:.1} drawrate {:.1} pv",
                    if value.trim().is_empty() {
                        "root"
                    } else {
                        value.trim()
                    },
                    report.visits,
                    100.0 * report.wdl[0],
                    100.0 * report.wdl[1]
                );
                line.push_str(&Notation::Gomocup.line(report.side_to_move, &report.pv));
                let moves: Vec<String> = report.moves.iter().map(move_summary).collect();
                if !moves.is_empty() {
                    line.push_str(" top ");
                    line.push_str(&moves.join(" "));
                }
                s.send(&line);
            }
            None => message(
                s,
                &format!(
                    "evaluate {}: not searched",
                    if value.trim().is_empty() {
                        "root"
                    } else {
                        value.trim()
                    }
                ),
            ),
        }
    }

    /// Yixin-Board analysis output during a search: the best move and the
    /// lost moves marked (show_detail bit 0), the top moves' INFO blocks
    /// with their whole lines (bit 1), and a summary line for the log panel
    /// every second.
    pub(super) fn realtime_report(&mut self, s: &mut GomocupSession, job: &Job) {
        if self.dialect != Dialect::YixinBoard || self.show_detail == 0 {
            return;
        }
        let n = match job {
            Job::NBest(n) => *n as usize,
            _ => 1,
        };
        let Some(report) = s.engine.report(&[], usize::MAX) else {
            return;
        };
        let elapsed = self.live.started.elapsed();
        if self.show_detail & 1 != 0 {
            // The move the search would play now (the head of its line, as
            // chosen for the answer), not merely the most visited one.
            let best = report
                .pv
                .first()
                .copied()
                .or_else(|| report.moves.first().map(|m| m.mv));
            if let Some(best) = best {
                if self.live.best != Some(best) {
                    // A new best: the GUI's searched marks start over.
                    message(s, "REALTIME REFRESH");
                    self.live.best = Some(best);
                    self.live.searching.clear();
                }
                message(s, &format!("REALTIME BEST {best}"));
            }
            self.searching_marks(s, &report.moves);
            for m in report
                .moves
                .iter()
                .filter(|m| matches!(m.proven, Proven::Loss(_)))
            {
                message(s, &format!("REALTIME LOSE {}", m.mv));
            }
        }
        if self.show_detail & 2 != 0 {
            let searched = searched_moves(&report.moves, n);
            self.pv_blocks(s, &searched, report.visits, elapsed.as_millis() as u64);
        }
        if self.live.last_summary.elapsed() >= SUMMARY_EVERY {
            self.live.last_summary = Instant::now();
            let line = self.live_summary(s, &report, elapsed);
            message(s, &line);
        }
    }

    /// The GUI's "being searched" and "searched" marks, as an alpha-beta
    /// engine sends them per root move of an iteration: among the most
    /// visited moves, one that gained visits since the last report is being
    /// searched (`POS`), and a marked one that gained none is done for now
    /// (`DONE`). Unproven moves only: a proof is final.
    fn searching_marks(&mut self, s: &mut GomocupSession, moves: &[MoveStats]) {
        let live = &mut self.live;
        let growing: Vec<Point> = moves
            .iter()
            .take(LINES_SHOWN)
            .filter(|m| {
                let before = live.visits.get(&m.mv).copied().unwrap_or(0);
                m.visits > before && m.proven == Proven::Unknown
            })
            .map(|m| m.mv)
            .collect();
        let mut lines = Vec::new();
        live.searching.retain(|mv| {
            let done = !growing.contains(mv);
            if done {
                lines.push(format!("REALTIME DONE {mv}"));
            }
            !done
        });
        for &mv in &growing {
            if !live.searching.contains(&mv) {
                live.searching.push(mv);
                lines.push(format!("REALTIME POS {mv}"));
            }
        }
        live.visits = moves.iter().map(|m| (m.mv, m.visits)).collect();
        for line in lines {
            message(s, &line);
        }
    }

    /// A summary line from the tree mid-search (the root's visits as `n`).
    fn live_summary(&self, s: &GomocupSession, report: &NodeReport, elapsed: Duration) -> String {
        let notation = self.dialect.notation(s.engine.board().size());
        let ev = ev_text(report.proven, expectation(report.wdl));
        let mut line = format!(
            "depth 1-{} ev {ev} winrate {:.1} drawrate {:.1} n {} tm {} pv",
            report.pv.len().max(1),
            100.0 * report.wdl[0],
            100.0 * report.wdl[1],
            report.visits,
            elapsed.as_millis()
        );
        line.push_str(&notation.line(report.side_to_move, &report.pv));
        line
    }

    pub(super) fn final_reports(
        &mut self,
        s: &mut GomocupSession,
        result: &SearchResult,
        n: usize,
    ) {
        if self.dialect != Dialect::YixinBoard || self.show_detail & 2 == 0 {
            return;
        }
        let moves = searched_moves(&result.moves, n);
        // The tree is reused across moves, so a move's visits may exceed this
        // search's playouts: the total is the root's visits, never less.
        let total = result
            .moves
            .iter()
            .map(|m| m.visits)
            .sum::<u32>()
            .max(result.counters.playouts as u32);
        self.pv_blocks(s, &moves, total, result.elapsed.as_millis() as u64);
    }

    /// Yixin-Board's per-PV INFO blocks: each move with its whole line (the
    /// search's best continuation after it) and the depth, which never
    /// falls within a search (the GUI clears the tags of moves last seen at
    /// a lower depth).
    fn pv_blocks(&mut self, s: &mut GomocupSession, moves: &[MoveStats], total: u32, ms: u64) {
        let count = moves.len();
        let lines: Vec<Vec<Point>> = moves
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let mut line = vec![m.mv];
                if i < LINES_SHOWN {
                    if let Some(after) = s.engine.report(&[m.mv], 0) {
                        line.extend(after.pv);
                    }
                }
                line
            })
            .collect();
        let longest = lines.iter().map(Vec::len).max().unwrap_or(1) as u32;
        self.live.depth = self.live.depth.max(longest);
        let depth = self.live.depth;
        let speed = (total as u64 * 1000).checked_div(ms).unwrap_or(0);
        for (i, (m, line)) in moves.iter().zip(&lines).enumerate() {
            let eval = match m.proven {
                Proven::Win(d) => format!("+M{d}"),
                Proven::Loss(d) => format!("-M{d}"),
                _ => format!("{}", ((m.wdl[0] - m.wdl[2]) * 1000.0).round() as i64),
            };
            let winrate = m.proven.expected_score(m.wdl);
            let bestline: Vec<String> = line.iter().map(Point::to_string).collect();
            let block = [
                format!("INFO PV {i}"),
                format!("INFO NUMPV {count}"),
                format!("INFO DEPTH {depth}"),
                format!("INFO SELDEPTH {}", line.len()),
                format!("INFO NODES {}", m.visits),
                format!("INFO TOTALNODES {total}"),
                format!("INFO TOTALTIME {ms}"),
                format!("INFO SPEED {speed}"),
                format!("INFO EVAL {eval}"),
                format!("INFO WINRATE {winrate:.4}"),
                format!("INFO BESTLINE {}", bestline.join(" ")),
                "INFO PV DONE".to_string(),
            ];
            for text in block {
                s.send(&text);
            }
        }
    }
}

fn move_summary(m: &MoveStats) -> String {
    let value = ev_text(m.proven, expectation(m.wdl));
    format!("{}:{}:{value}", m.mv, m.visits)
}

/// The first `n` (at least one) moves that have a value to show: visited,
/// or proven. An unvisited one has none (the GUI would paint it 0%).
fn searched_moves(moves: &[MoveStats], n: usize) -> Vec<MoveStats> {
    moves
        .iter()
        .filter(|m| m.visits > 0 || m.proven != Proven::Unknown)
        .take(n.max(1))
        .cloned()
        .collect()
}
