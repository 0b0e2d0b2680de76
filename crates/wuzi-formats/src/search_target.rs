//! What a search found in one position of a self-play game: the training
//! targets that the `search` column of a self-play TSV carries beside the
//! moves (`pbrain-wuzi selfplay` writes it, the record loader reads it).
//!
//! One position is written `W:D:L/x,y=N;x,y=N;...`: the root's win, draw
//! and loss for the side to move in per mille, then the root moves the
//! search visited with their visit counts, most visited first. A position
//! searched only briefly (playout-cap randomisation) is written `-`: it is
//! played but is not a training target. The column holds one such entry
//! per move after the opening, separated by single spaces.

use std::fmt;
use std::str::FromStr;

use crate::gomocup::Coord;
use wuzi_game::game::{Point, MAX_SIDE};

/// The search's verdict on one position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchTarget {
    /// Win, draw, loss for the side to move, per mille (they sum to 1000).
    pub wdl: [u16; 3],
    /// Root moves with their visits (at least one), most visited first.
    pub visits: Vec<(Point, u32)>,
}

impl SearchTarget {
    /// From probabilities (normalised, rounded to per mille so that they
    /// sum to 1000) and visits (zero-visit moves dropped, most visited
    /// first); `None` when no move has a visit.
    pub fn new(
        wdl: [f32; 3],
        visits: impl IntoIterator<Item = (Point, u32)>,
    ) -> Option<SearchTarget> {
        let mut visits: Vec<(Point, u32)> = visits.into_iter().filter(|&(_, n)| n > 0).collect();
        if visits.is_empty() {
            return None;
        }
        visits.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.index().cmp(&b.0.index())));
        let clean = wdl.map(|v| if v.is_finite() { v.max(0.0) } else { 0.0 });
        let total: f32 = clean.iter().sum();
        let (w, d) = if total > 0.0 {
            (
                (1000.0 * clean[0] / total).round() as u16,
                (1000.0 * clean[1] / total).round() as u16,
            )
        } else {
            (0, 1000)
        };
        let w = w.min(1000);
        let d = d.min(1000 - w);
        Some(SearchTarget {
            wdl: [w, d, 1000 - w - d],
            visits,
        })
    }

    /// The most visited move.
    pub fn best(&self) -> Point {
        self.visits[0].0
    }

    /// The visit distribution as probabilities, in the order of `visits`.
    pub fn policy(&self) -> impl Iterator<Item = (Point, f32)> + '_ {
        let total: u64 = self.visits.iter().map(|&(_, n)| u64::from(n)).sum();
        self.visits
            .iter()
            .map(move |&(p, n)| (p, n as f32 / total.max(1) as f32))
    }
}

impl fmt::Display for SearchTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [w, d, l] = self.wdl;
        write!(f, "{w}:{d}:{l}/")?;
        for (i, (p, n)) in self.visits.iter().enumerate() {
            if i > 0 {
                f.write_str(";")?;
            }
            write!(f, "{}={n}", Coord::from(*p))?;
        }
        Ok(())
    }
}

/// Why a `search` entry could not be read; each message names the entry.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SearchTargetError {
    /// No `/` between the W:D:L and the moves.
    #[error("search entry {entry:?}: expected W:D:L/x,y=N;...")]
    NoSlash { entry: String },
    /// Fewer than three per-mille numbers.
    #[error("search entry {entry:?}: bad W:D:L")]
    Wdl { entry: String },
    /// More than three numbers, or three that do not sum to 1000.
    #[error("search entry {entry:?}: W:D:L must be three per-mille values summing to 1000")]
    WdlSum { entry: String },
    /// A move that is not `x,y=VISITS` with at least one visit.
    #[error("search entry {entry:?}: bad move {item:?} (x,y=VISITS)")]
    Move { entry: String, item: String },
    /// More entries than a board has cells (one per move at most).
    #[error("more than {MAX_ENTRIES} search entries")]
    TooMany,
}

/// Entries a `search` column may hold: one per move, so no more than the
/// largest board's cells.
pub const MAX_ENTRIES: usize = (MAX_SIDE as usize) * (MAX_SIDE as usize);

impl FromStr for SearchTarget {
    type Err = SearchTargetError;

    fn from_str(s: &str) -> Result<SearchTarget, SearchTargetError> {
        let entry = || s.to_string();
        let (wdl_text, moves) = s
            .split_once('/')
            .ok_or_else(|| SearchTargetError::NoSlash { entry: entry() })?;
        let mut wdl = [0u16; 3];
        let mut parts = wdl_text.split(':');
        for slot in &mut wdl {
            *slot = parts
                .next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| SearchTargetError::Wdl { entry: entry() })?;
        }
        if parts.next().is_some() || wdl.iter().map(|&v| u32::from(v)).sum::<u32>() != 1000 {
            return Err(SearchTargetError::WdlSum { entry: entry() });
        }
        let mut visits = Vec::new();
        for item in moves.split(';') {
            let parsed = item.split_once('=').and_then(|(cell, n)| {
                let p = cell.parse::<Coord>().ok()?.point()?;
                Some((p, n.parse::<u32>().ok()?))
            });
            match parsed {
                Some((p, n)) if n > 0 => visits.push((p, n)),
                _ => {
                    return Err(SearchTargetError::Move {
                        entry: entry(),
                        item: item.to_string(),
                    })
                }
            }
        }
        // Most visited first, whatever the file's order: best() is the
        // first (ties keep the file's order: a stable sort).
        visits.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
        Ok(SearchTarget { wdl, visits })
    }
}

/// Parses a `search` column: one entry or `-` per move after the opening.
pub fn parse_column(text: &str) -> Result<Vec<Option<SearchTarget>>, SearchTargetError> {
    // Counted before any is held: an entry takes many times its text.
    if text.split_whitespace().nth(MAX_ENTRIES).is_some() {
        return Err(SearchTargetError::TooMany);
    }
    text.split_whitespace()
        .map(|entry| match entry {
            "-" => Ok(None),
            _ => entry.parse().map(Some),
        })
        .collect()
}

/// Prints a `search` column (the inverse of [`parse_column`]).
pub fn format_column(entries: &[Option<SearchTarget>]) -> String {
    let mut out = String::new();
    for (i, entry) in entries.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        match entry {
            Some(t) => out.push_str(&t.to_string()),
            None => out.push('-'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: u8, y: u8) -> Point {
        Point::new(x, y).expect("on the board")
    }

    #[test]
    fn round_trip_and_normalisation() {
        let t = SearchTarget::new(
            [0.6, 0.1, 0.3],
            [(p(7, 7), 30), (p(8, 8), 0), (p(6, 7), 70)],
        )
        .expect("visited moves");
        assert_eq!(t.wdl, [600, 100, 300]);
        assert_eq!(t.visits, vec![(p(6, 7), 70), (p(7, 7), 30)]);
        assert_eq!(t.best(), p(6, 7));
        assert_eq!(t.to_string(), "600:100:300/6,7=70;7,7=30");
        assert_eq!(t.to_string().parse::<SearchTarget>(), Ok(t.clone()));
        let probs: Vec<f32> = t.policy().map(|(_, q)| q).collect();
        assert!((probs[0] - 0.7).abs() < 1e-6 && (probs[1] - 0.3).abs() < 1e-6);
        // Rounding never makes the three exceed 1000.
        let odd = SearchTarget::new([1.0, 1.0, 1.0], [(p(0, 0), 1)]).expect("one move");
        assert_eq!(odd.wdl.iter().map(|&v| u32::from(v)).sum::<u32>(), 1000);
        assert_eq!(SearchTarget::new([0.5, 0.0, 0.5], [(p(0, 0), 0)]), None);
        // A file's entry listed in another order is read most visited first.
        let read: SearchTarget = "600:100:300/7,7=30;6,7=70".parse().expect("an entry");
        assert_eq!(read, t);
        assert_eq!(read.best(), p(6, 7));
    }

    #[test]
    fn column_round_trip() {
        let t = SearchTarget::new([0.2, 0.0, 0.8], [(p(1, 2), 5)]);
        let entries = vec![t, None];
        let text = format_column(&entries);
        assert_eq!(text, "200:0:800/1,2=5 -");
        assert_eq!(parse_column(&text), Ok(entries));
    }

    #[test]
    fn malformed_entries_are_refused() {
        for bad in [
            "600:100/7,7=1",
            "600:100:200/7,7=1",
            "600:100:300/7,7",
            "600:100:300/7,7=0",
            "600:100:300/",
            "600:100:300/7;7=4",
            "x",
        ] {
            assert!(bad.parse::<SearchTarget>().is_err(), "{bad} accepted");
        }
        let err = |s: &str| s.parse::<SearchTarget>().unwrap_err();
        assert!(matches!(err("x"), SearchTargetError::NoSlash { entry } if entry == "x"));
        assert!(matches!(
            err("600:100/7,7=1"),
            SearchTargetError::Wdl { .. }
        ));
        assert!(matches!(
            err("600:100:200/7,7=1"),
            SearchTargetError::WdlSum { .. }
        ));
        assert!(matches!(
            err("600:100:300/7,7=1;8,8=0"),
            SearchTargetError::Move { item, .. } if item == "8,8=0"
        ));
        assert_eq!(
            err("600:100:300/").to_string(),
            "search entry \"600:100:300/\": bad move \"\" (x,y=VISITS)"
        );
        assert!(matches!(
            parse_column("- 500:500:0/1,1=3 - 1000:0:0"),
            Err(SearchTargetError::NoSlash { entry }) if entry == "1000:0:0"
        ));
    }
}
