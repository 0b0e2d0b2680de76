//! `lz-analyze` and `kata-analyze`: analysis streamed to Lizzie and
//! LizzieYzy while the engine thinks.

use super::*;

impl Gtp {
    /// `lz-analyze [COLOR] [INTERVAL] [interval N] [maxmoves N] ...`: the
    /// response opens at once, info lines follow every interval (in
    /// centiseconds), and the next command closes it.
    pub(super) fn analyse(
        &mut self,
        s: &mut GtpSession,
        id: Option<u64>,
        args: &[String],
        format: AnalysisFormat,
    ) {
        if let Some(why) = self.networks.refusal(s.engine.rule()) {
            return failure(s, id, why.to_string());
        }
        let mut args = args.iter().peekable();
        let color = args.peek().and_then(|a| parse_color(a));
        if color.is_some() {
            args.next();
        }
        let mut interval_cs: u64 = 100;
        let mut max_moves = usize::MAX;
        if let Some(n) = args.peek().and_then(|a| a.parse::<u64>().ok()) {
            interval_cs = n;
            args.next();
        }
        while let Some(key) = args.next() {
            let value = args.next().and_then(|v| v.parse::<u64>().ok());
            match (key.as_str(), value) {
                ("interval", Some(n)) => interval_cs = n,
                ("maxmoves", Some(n)) => max_moves = n as usize,
                // Go-only keys (ownership, minmoves, avoid, ...) are ignored.
                _ => {}
            }
        }
        if let Some(color) = color {
            Self::with_side_to_move(s, color);
        }
        // The response starts now and stays open.
        let head = GtpResponse::success(id, "").to_string();
        s.send(head.trim_end());
        if s.engine.board().outcome().is_some() {
            s.send("");
            return;
        }
        // Centiseconds as the client sends them, at most an hour apart.
        let every = Duration::from_millis(interval_cs.clamp(1, 360_000) * 10);
        s.analyse(Job::Analyse { format, max_moves }, every);
    }
    /// One line of analysis: the root's searched moves with their lines.
    pub(super) fn analysis_line(
        s: &GtpSession,
        format: AnalysisFormat,
        max_moves: usize,
    ) -> Option<String> {
        let report: NodeReport = s.engine.report(&[], usize::MAX)?;
        let size = s.engine.board().size();
        let mut searched: Vec<&MoveStats> = report
            .moves
            .iter()
            .filter(|m| m.visits > 0 || m.proven.is_known())
            .collect();
        // Order 0 is the move `genmove` would play (the head of the principal
        // variation, by the final-move rule), which need not be the most
        // visited.
        if let Some(i) = report
            .pv
            .first()
            .and_then(|&best| searched.iter().position(|m| m.mv == best))
        {
            searched[..=i].rotate_right(1);
        }
        searched.truncate(max_moves);
        let mut line = String::new();
        for (order, m) in searched.iter().enumerate() {
            let winrate = m.proven.expected_score(m.wdl);
            let lcb = m.score_lower_bound();
            // The root's own line for its best move (a solver's proof where
            // the tree has not been below it), the tree's line after the
            // others.
            let mut pv = vec![m.mv];
            if report.pv.first() == Some(&m.mv) {
                pv = report.pv.clone();
            } else if let Some(after) = s.engine.report(&[m.mv], 0) {
                pv.extend(after.pv);
            }
            let pv: Vec<String> = pv
                .iter()
                .map(|&p| Vertex::of(p, size).to_string())
                .collect();
            let vertex = Vertex::of(m.mv, size);
            if !line.is_empty() {
                line.push(' ');
            }
            let _ = match format {
                AnalysisFormat::Leela => write!(
                    line,
                    "info move {vertex} visits {} winrate {} prior {} lcb {} order {order} pv {}",
                    m.visits,
                    (winrate * 10_000.0).round() as i64,
                    (m.prior * 10_000.0).round() as i64,
                    (lcb * 10_000.0).round() as i64,
                    pv.join(" ")
                ),
                AnalysisFormat::KataGo => write!(
                    line,
                    "info move {vertex} visits {} utility {:.6} winrate {winrate:.6} scoreMean 0 \
                     scoreStdev 0 scoreLead 0 scoreSelfplay 0 prior {:.6} lcb {lcb:.6} \
                     utilityLcb {:.6} order {order} pv {}",
                    m.visits,
                    2.0 * winrate - 1.0,
                    m.prior,
                    2.0 * lcb - 1.0,
                    pv.join(" ")
                ),
            };
        }
        (!line.is_empty()).then_some(line)
    }
}
