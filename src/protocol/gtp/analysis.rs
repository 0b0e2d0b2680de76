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
        if let Some(why) = self
            .networks
            .refusal(s.engine.rule(), s.engine.board().size())
        {
            return failure(s, id, why);
        }
        let AnalyseArgs {
            color,
            interval_cs,
            max_moves,
            restrictions,
        } = match AnalyseArgs::parse(args) {
            Ok(parsed) => parsed,
            Err(why) => return failure(s, id, why),
        };
        let size = s.engine.board().size();
        let to_move = color.unwrap_or(s.engine.board().side_to_move());
        let excluded = match root_exclusions(&restrictions, to_move, size) {
            Ok(excluded) => excluded,
            Err(why) => return failure(s, id, why),
        };
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
        // For this analysis only: genmove, the one other search here that
        // reads them, clears them, and the next analysis sets its own.
        s.engine.limits.excluded = excluded;
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

/// The arguments of `lz-analyze` and `kata-analyze`, as KataGo reads them:
/// `[COLOR] [INTERVAL]`, then keys with their values. Keys of go (ownership
/// and the like) are read and left unused; anything else is an error, as
/// for KataGo, rather than an analysis of something not asked
/// (`kata-analyze 50 B` analysed the side to move, not black).
#[derive(Debug, PartialEq, Eq)]
struct AnalyseArgs {
    color: Option<Color>,
    /// Centiseconds between info lines.
    interval_cs: u64,
    max_moves: usize,
    restrictions: Vec<Restriction>,
}

/// `avoid COLOR VERTICES DEPTH` or `allow COLOR VERTICES DEPTH`: moves of
/// `color` at (or, for allow, other than at) the vertices, within the
/// first `depth` moves of the lines searched.
#[derive(Debug, PartialEq, Eq)]
struct Restriction {
    allow: bool,
    color: Color,
    vertices: Vec<Vertex>,
    depth: u64,
}

/// The root moves the restrictions take away from an analysis of `to_move`
/// on a `size` board. The search blocks moves at its root only, so a
/// restriction applies to the first move: one of the other colour, or of
/// depth 0, changes nothing there. A vertex off the board is an error.
fn root_exclusions(
    restrictions: &[Restriction],
    to_move: Color,
    size: BoardSize,
) -> Result<CellSet, String> {
    let mut excluded = CellSet::new();
    for r in restrictions {
        let mut listed = CellSet::new();
        for v in &r.vertices {
            let p = v
                .point_on(size)
                .ok_or_else(|| format!("{v} is off the board"))?;
            listed.insert(p);
        }
        if r.color != to_move || r.depth == 0 {
            continue;
        }
        for y in 0..size.height() {
            for x in 0..size.width() {
                let Some(p) = Point::new(x, y) else {
                    continue;
                };
                if listed.contains(p) != r.allow {
                    excluded.insert(p);
                }
            }
        }
    }
    Ok(excluded)
}

impl AnalyseArgs {
    fn parse(args: &[String]) -> Result<AnalyseArgs, String> {
        let bad = |what: &str| {
            format!(
                "cannot read {what:?}: expected [COLOR] [INTERVAL] [interval N] [maxmoves N] \
                 [minmoves N] [KEY true|false] [avoid|allow COLOR VERTICES DEPTH]"
            )
        };
        let number = |value: Option<&String>, key: &str| {
            value
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or_else(|| bad(&format!("{key} {}", value.map_or("", |v| v.as_str()))))
        };
        let mut parsed = AnalyseArgs {
            color: None,
            interval_cs: 100,
            max_moves: usize::MAX,
            restrictions: Vec::new(),
        };
        let mut args = args.iter().peekable();
        if let Some(color) = args.peek().and_then(|a| parse_color(a)) {
            parsed.color = Some(color);
            args.next();
        }
        if let Some(n) = args.peek().and_then(|a| a.parse::<u64>().ok()) {
            parsed.interval_cs = n;
            args.next();
        }
        while let Some(key) = args.next() {
            match key.as_str() {
                "interval" => parsed.interval_cs = number(args.next(), key)?,
                "maxmoves" => {
                    parsed.max_moves =
                        usize::try_from(number(args.next(), key)?).unwrap_or(usize::MAX)
                }
                "minmoves" => {
                    number(args.next(), key)?;
                }
                "ownership" | "ownershipStdev" | "movesOwnership" | "pvVisits" | "pvEdgeVisits"
                | "rootInfo" => match args.next().map(String::as_str) {
                    Some("true" | "false") => {}
                    other => return Err(bad(&format!("{key} {}", other.unwrap_or("")))),
                },
                "avoid" | "allow" => {
                    let color = args.next().and_then(|c| parse_color(c));
                    // KataGo's list: vertices separated by commas (a pass
                    // is no cell, and no move of gomoku).
                    let vertices: Option<Vec<Vertex>> = args.next().and_then(|list| {
                        list.split(',')
                            .filter(|v| !v.eq_ignore_ascii_case("pass"))
                            .map(|v| v.parse::<Vertex>().ok())
                            .collect()
                    });
                    let depth = args.next().and_then(|d| d.parse::<u64>().ok());
                    let (Some(color), Some(vertices), Some(depth)) = (color, vertices, depth)
                    else {
                        return Err(bad(key));
                    };
                    parsed.restrictions.push(Restriction {
                        allow: key == "allow",
                        color,
                        vertices,
                        depth,
                    });
                }
                other => return Err(bad(other)),
            }
        }
        Ok(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<AnalyseArgs, String> {
        let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        AnalyseArgs::parse(&args)
    }

    /// What Lizzie, LizzieYzy, Sabaki and KaTrain send is read; anything
    /// else is refused, not analysed as something else.
    #[test]
    fn analysis_arguments_are_read_as_katago_reads_them() {
        let read = |line: &str| parse(line).unwrap_or_else(|e| panic!("{line}: {e}"));
        assert_eq!(read("").interval_cs, 100);
        assert_eq!(read("50").interval_cs, 50);
        let full = read("B interval 20 maxmoves 5 ownership true pvVisits false");
        assert_eq!(
            full,
            AnalyseArgs {
                color: Some(Color::Black),
                interval_cs: 20,
                max_moves: 5,
                restrictions: Vec::new(),
            }
        );
        let restricted = read("w 10 avoid b d4,q16 1 minmoves 2 allow w h8,pass 3");
        assert_eq!(restricted.color, Some(Color::White));
        let size = BoardSize::square(19).unwrap();
        let at = |v: &str| v.parse::<Vertex>().unwrap().point_on(size).unwrap();
        // Black's avoid does not restrict white's first move; white's allow
        // leaves it h8 alone.
        let excluded = root_exclusions(&restricted.restrictions, Color::White, size).unwrap();
        assert_eq!(excluded.iter().count(), 19 * 19 - 1);
        assert!(!excluded.contains(at("h8")));
        let excluded = root_exclusions(&restricted.restrictions, Color::Black, size).unwrap();
        assert_eq!(excluded.iter().collect::<Vec<_>>().len(), 2);
        assert!(excluded.contains(at("d4")) && excluded.contains(at("q16")));
        let small = BoardSize::square(15).unwrap();
        assert!(root_exclusions(&restricted.restrictions, Color::Black, small).is_err());
        for bad in [
            "foo",
            "interval x",
            "interval",
            "50 B",
            "maxmoves -1",
            "ownership maybe",
            "avoid b d4",
            "avoid b d4,zz99x 1",
            "allow x d4 1",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
