//! Game records for training: Gomocup TSV and Piskvork PSQ files, the checks
//! that keep only legal games, the positions that are training targets, the
//! validation split and each epoch's batches of positions (the engine's
//! trainer encodes them; `wuzi-encode` writes them out for other trainers).
//!
//! A game is kept as its move list (two bytes a move); a position is a
//! [`Sample`] (game index and ply, eight bytes) and is encoded only when a
//! batch needs it, by replaying the game's first moves. Two million
//! positions take about 16 MB, not the 77 GB their planes would.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use wuzi_formats::record::parse_psq;
pub use wuzi_formats::search_target::SearchTarget;
use wuzi_formats::tsv::{self, MovesError};
use wuzi_game::game::{Board, BoardSize, Color, Outcome, Point, Rule};
use wuzi_game::symmetry::Symmetry;

/// Warnings kept for the summary (the counts cover everything).
const MAX_WARNINGS: usize = 12;

use wuzi_game::rng::mix;
pub use wuzi_game::rng::Rng;

/// The training generator (shuffles, augmentation choices), from `--seed`.
pub fn rng(seed: u64) -> Rng {
    Rng::new(seed ^ 0x5851_F42D_4C95_7F2D)
}

/// A legal game, ready to give training positions.
#[derive(Clone, Debug)]
pub struct Game {
    /// Where it came from: the TSV `game_id`, or the file (and line).
    pub id: String,
    pub size: BoardSize,
    /// All moves, black first, opening stones included.
    pub moves: Vec<Point>,
    /// First ply whose move is a policy target (the opening's length).
    pub first_target: u16,
    /// Plies `first_target..end_target` are targets; `end_target` is one
    /// short of the move count when the last move was a forbidden renju move.
    pub end_target: u16,
    pub outcome: Outcome,
    /// Self-play records only (empty otherwise): what the search found at
    /// each ply from `first_target` on; `None` where the search was too
    /// short to be a target.
    pub search: Vec<Option<SearchTarget>>,
}

impl Game {
    /// Number of training positions.
    pub fn targets(&self) -> usize {
        (self.first_target..self.end_target)
            .filter(|&ply| self.is_target(ply))
            .count()
    }

    /// Whether the position before move `ply` is a training position.
    pub fn is_target(&self, ply: u16) -> bool {
        (self.first_target..self.end_target).contains(&ply)
            && (self.search.is_empty() || self.search_at(ply).is_some())
    }

    /// The search's targets at `ply` (self-play records).
    pub fn search_at(&self, ply: u16) -> Option<&SearchTarget> {
        let i = ply.checked_sub(self.first_target)?;
        self.search.get(i as usize)?.as_ref()
    }

    /// The policy target at `ply`: the search's most visited move where
    /// there is one, else the move played.
    pub fn policy_move(&self, ply: u16) -> Option<Point> {
        match self.search_at(ply) {
            Some(t) => Some(t.best()),
            None => self.moves.get(ply as usize).copied(),
        }
    }

    /// The WDL class (0 win, 1 draw, 2 loss) of the side to move at `ply`.
    pub fn wdl_class(&self, ply: usize) -> i64 {
        let to_move = if ply % 2 == 0 {
            Color::Black
        } else {
            Color::White
        };
        match self.outcome {
            Outcome::Draw => 1,
            Outcome::Win(c) if c == to_move => 0,
            Outcome::Win(_) => 2,
        }
    }
}

/// A training position: the board before move `ply` of game `game`; the
/// target is that move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sample {
    pub game: u32,
    pub ply: u16,
}

/// What loading found, game by game.
#[derive(Clone, Debug, Default)]
pub struct LoadStats {
    /// Files read.
    pub files: usize,
    /// Game records read (TSV lines and PSQ files), before any filter.
    pub records: usize,
    /// Records of another rule.
    pub other_rule: usize,
    /// Records of a board size not asked for.
    pub other_size: usize,
    /// Lines or files that could not be parsed.
    pub malformed: usize,
    /// Games with a move off the board or on an occupied cell.
    pub illegal_move: usize,
    /// Renju games where black played a forbidden move before the end.
    pub forbidden_move: usize,
    /// Games that went on after a winning line.
    pub moves_after_win: usize,
    /// TSV games whose recorded winner contradicts the replay.
    pub result_mismatch: usize,
    /// Legal games without a single target (only the opening).
    pub no_targets: usize,
    /// Renju games kept whose last (losing) black move was forbidden: that
    /// move is not a target.
    pub forbidden_last_move: usize,
    /// Games kept.
    pub games: usize,
    /// Training positions in the games kept.
    pub positions: usize,
    /// The first problems met, as `file:line: why`.
    pub warnings: Vec<String>,
}

impl LoadStats {
    /// Games not used because they are illegal, malformed or inconsistent
    /// (the filters by rule and size are not counted here).
    pub fn skipped(&self) -> usize {
        self.malformed
            + self.illegal_move
            + self.forbidden_move
            + self.moves_after_win
            + self.result_mismatch
            + self.no_targets
    }

    fn warn(&mut self, what: String) {
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(what);
        }
    }
}

impl fmt::Display for LoadStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} files, {} records: {} games used ({} positions); filtered out: {} other rule, \
             {} other size; skipped {}: {} malformed, {} illegal move, {} forbidden move, \
             {} moves after a win, {} result mismatch, {} without targets",
            self.files,
            self.records,
            self.games,
            self.positions,
            self.other_rule,
            self.other_size,
            self.skipped(),
            self.malformed,
            self.illegal_move,
            self.forbidden_move,
            self.moves_after_win,
            self.result_mismatch,
            self.no_targets,
        )?;
        if self.forbidden_last_move > 0 {
            write!(
                f,
                "; {} renju games end with a forbidden black move (not a target)",
                self.forbidden_last_move
            )?;
        }
        Ok(())
    }
}

/// The games of one rule, loaded from files.
#[derive(Clone, Debug)]
pub struct Dataset {
    pub rule: Rule,
    pub games: Vec<Game>,
    pub stats: LoadStats,
}

/// Why a game record is not used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reject {
    Illegal(String),
    Forbidden(usize),
    AfterWin(usize),
    Mismatch(String),
    NoTargets,
}

impl fmt::Display for Reject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reject::Illegal(why) => write!(f, "illegal move: {why}"),
            Reject::Forbidden(ply) => write!(f, "black move {} is forbidden", ply + 1),
            Reject::AfterWin(ply) => write!(f, "the game goes on after move {}", ply + 1),
            Reject::Mismatch(why) => write!(f, "result mismatch: {why}"),
            Reject::NoTargets => write!(f, "no move after the opening"),
        }
    }
}

/// Replays a game under `rule` and decides its result.
///
/// `recorded`: the result written in the record (TSV); `None` (PSQ) takes
/// the result from the replay: a win when the last move makes a winning
/// line, a white win when it is a forbidden renju black move, else a draw.
/// The game is refused when a move is on an occupied cell, when black plays
/// a forbidden renju move before the last move, when moves follow a winning
/// line, or when the recorded result contradicts the replay. A forbidden
/// last move is kept as a white win, but it is not a target.
pub fn check_game(
    id: String,
    size: BoardSize,
    rule: Rule,
    moves: Vec<Point>,
    opening: usize,
    recorded: Option<Outcome>,
) -> Result<Game, Reject> {
    if moves.len() > size.cell_count() {
        return Err(Reject::Illegal("more moves than cells".into()));
    }
    let mut board = Board::new(size, rule);
    let last = moves.len().checked_sub(1);
    let mut forbidden_last = false;
    let mut winner = None;
    for (ply, &p) in moves.iter().enumerate() {
        if !size.contains(p) {
            return Err(Reject::Illegal(format!("{p} is off the {size} board")));
        }
        if !board.is_empty(p) {
            return Err(Reject::Illegal(format!(
                "{p} is occupied (move {})",
                ply + 1
            )));
        }
        let color = board.side_to_move();
        if color == Color::Black && board.is_forbidden(p) {
            if Some(ply) == last {
                forbidden_last = true;
            } else {
                return Err(Reject::Forbidden(ply));
            }
        } else if board.is_winning_move(p, color) {
            if Some(ply) != last {
                return Err(Reject::AfterWin(ply));
            }
            winner = Some(color);
        }
        board
            .play(p)
            .map_err(|e| Reject::Illegal(format!("{e} (move {})", ply + 1)))?;
    }
    let replayed = if forbidden_last {
        Some(Outcome::Win(Color::White))
    } else {
        winner.map(Outcome::Win)
    };
    let outcome = match (recorded, replayed) {
        (Some(r), Some(w)) if r != w => {
            return Err(Reject::Mismatch(format!(
                "recorded {}, the last move gives {}",
                outcome_name(r),
                outcome_name(w)
            )))
        }
        (Some(r), _) => r,
        (None, Some(w)) => w,
        (None, None) => Outcome::Draw,
    };
    let end = moves.len() - usize::from(forbidden_last);
    let first = opening.min(end);
    if first >= end {
        return Err(Reject::NoTargets);
    }
    Ok(Game {
        id,
        size,
        // At most 32x32 = 1024 moves, so plies fit in u16.
        first_target: first as u16,
        end_target: end as u16,
        moves,
        outcome,
        search: Vec::new(),
    })
}

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Win(Color::Black) => "a black win",
        Outcome::Win(Color::White) => "a white win",
        Outcome::Draw => "a draw",
    }
}

pub use wuzi_formats::tsv::parse_board as parse_board_size;

/// The kinds of record file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FileKind {
    Tsv,
    Psq,
}

fn kind_by_extension(path: &Path) -> Option<FileKind> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "tsv" => Some(FileKind::Tsv),
        "psq" => Some(FileKind::Psq),
        _ => None,
    }
}

fn kind_by_content(text: &str) -> Option<FileKind> {
    let first = text.lines().find(|l| !l.trim().is_empty())?.trim_start();
    if first.starts_with('#') {
        Some(FileKind::Tsv)
    } else if first.to_ascii_lowercase().starts_with("piskvork") {
        Some(FileKind::Psq)
    } else {
        None
    }
}

/// The record files under `paths`: files as given, directories searched
/// recursively for `*.tsv` and `*.psq` (sorted, so the order is stable).
pub fn collect_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
        let entries = fs::read_dir(dir)
            .map_err(|e| format!("cannot read directory {}: {e}", dir.display()))?;
        let mut paths = Vec::new();
        for entry in entries {
            let entry =
                entry.map_err(|e| format!("cannot read directory {}: {e}", dir.display()))?;
            paths.push(entry.path());
        }
        paths.sort();
        for path in paths {
            if path.is_dir() {
                walk(&path, out)?;
            } else if kind_by_extension(&path).is_some() {
                out.push(path);
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let before = files.len();
            walk(path, &mut files)?;
            if files.len() == before {
                return Err(format!(
                    "directory {} holds no .tsv or .psq file",
                    path.display()
                ));
            }
        } else if path.exists() {
            files.push(path.clone());
        } else {
            return Err(format!("no such file or directory: {}", path.display()));
        }
    }
    Ok(files)
}

impl Dataset {
    /// Loads the games of `rule` on the board `sizes` (all sizes when
    /// empty) from `paths` (files or directories). PSQ files carry no rule:
    /// they are read as games of `rule`. Unreadable files are errors;
    /// malformed records are counted and skipped.
    pub fn load(paths: &[PathBuf], rule: Rule, sizes: &[BoardSize]) -> Result<Dataset, String> {
        let files = collect_files(paths)?;
        let mut loader = Loader {
            rule,
            sizes,
            games: Vec::new(),
            stats: LoadStats::default(),
        };
        for file in &files {
            let bytes =
                fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            loader.text(file, &String::from_utf8_lossy(&bytes))?;
        }
        Ok(loader.finish())
    }

    /// [`Dataset::load`] of one record file's `text` (its kind from the
    /// name's extension or else the content; `name` labels the warnings),
    /// for text that did not come from a file, such as stdin.
    pub fn parse(
        name: &Path,
        text: &str,
        rule: Rule,
        sizes: &[BoardSize],
    ) -> Result<Dataset, String> {
        let mut loader = Loader {
            rule,
            sizes,
            games: Vec::new(),
            stats: LoadStats::default(),
        };
        loader.text(name, text)?;
        Ok(loader.finish())
    }

    /// Splits the games into training and validation sets: a fraction of
    /// the games (at least one when the fraction is positive and there are
    /// two games or more) chosen by a seeded hash of each game's moves, so
    /// the choice does not depend on file order and identical games land on
    /// the same side. Returns (training games, validation games), sorted.
    pub fn split(&self, val_fraction: f64, seed: u64) -> (Vec<usize>, Vec<usize>) {
        let n = self.games.len();
        let fraction = if val_fraction.is_finite() {
            val_fraction.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let mut count = (fraction * n as f64).round() as usize;
        if fraction > 0.0 && n >= 2 {
            count = count.clamp(1, n - 1);
        }
        let mut keyed: Vec<(u64, usize)> = self
            .games
            .iter()
            .enumerate()
            .map(|(i, g)| (game_hash(g, seed), i))
            .collect();
        keyed.sort_unstable();
        let mut val: Vec<usize> = keyed[..count].iter().map(|&(_, i)| i).collect();
        let mut train: Vec<usize> = keyed[count..].iter().map(|&(_, i)| i).collect();
        val.sort_unstable();
        train.sort_unstable();
        (train, val)
    }

    /// The training positions of `games`.
    pub fn samples(&self, games: &[usize]) -> Vec<Sample> {
        let mut out = Vec::with_capacity(games.iter().map(|&g| self.games[g].targets()).sum());
        for &g in games {
            let game = &self.games[g];
            for ply in (game.first_target..game.end_target).filter(|&p| game.is_target(p)) {
                out.push(Sample {
                    game: g as u32,
                    ply,
                });
            }
        }
        out
    }

    /// `samples` grouped by board size (width, height).
    pub fn by_size(&self, samples: &[Sample]) -> BTreeMap<(u8, u8), Vec<Sample>> {
        let mut groups: BTreeMap<(u8, u8), Vec<Sample>> = BTreeMap::new();
        for &s in samples {
            let size = self.games[s.game as usize].size;
            groups
                .entry((size.width(), size.height()))
                .or_default()
                .push(s);
        }
        groups
    }

    /// The board before move `sample.ply` of its game.
    pub fn board(&self, sample: Sample) -> Result<Board, String> {
        let game = self
            .games
            .get(sample.game as usize)
            .ok_or_else(|| format!("sample of unknown game {}", sample.game))?;
        let mut board = Board::new(game.size, self.rule);
        for &p in game.moves.iter().take(sample.ply as usize) {
            board
                .play(p)
                .map_err(|e| format!("game {}: replay failed: {e}", game.id))?;
        }
        Ok(board)
    }

    /// One epoch's batches: the samples shuffled, cut into batches of one
    /// board size, the batches shuffled, each sample with a random symmetry
    /// of its board (the identity when `augment` is false).
    pub fn epoch_plan(
        &self,
        groups: &BTreeMap<(u8, u8), Vec<Sample>>,
        batch_size: usize,
        augment: bool,
        rng: &mut Rng,
    ) -> Vec<Vec<(Sample, Symmetry)>> {
        let batch_size = batch_size.max(1);
        let mut batches = Vec::new();
        for (&(w, h), samples) in groups {
            let mut order = samples.clone();
            rng.shuffle(&mut order);
            let symmetries = Symmetry::all_for(h as usize, w as usize);
            for chunk in order.chunks(batch_size) {
                batches.push(
                    chunk
                        .iter()
                        .map(|&s| {
                            let sym = if augment {
                                symmetries[rng.below(symmetries.len())]
                            } else {
                                Symmetry::IDENTITY
                            };
                            (s, sym)
                        })
                        .collect::<Vec<_>>(),
                );
            }
        }
        rng.shuffle(&mut batches);
        batches
    }
}

fn game_hash(game: &Game, seed: u64) -> u64 {
    let mut h = mix(seed ^ 0xA076_1D64_78BD_642F);
    h = mix(h ^ ((game.size.width() as u64) << 8) ^ game.size.height() as u64);
    for p in &game.moves {
        h = mix(h ^ p.index() as u64);
    }
    h
}

struct Loader<'a> {
    rule: Rule,
    sizes: &'a [BoardSize],
    games: Vec<Game>,
    stats: LoadStats,
}

impl Loader<'_> {
    fn size_wanted(&self, size: BoardSize) -> bool {
        self.sizes.is_empty() || self.sizes.contains(&size)
    }

    fn malformed(&mut self, file: &Path, line: usize, why: impl fmt::Display) {
        self.stats.malformed += 1;
        let what = format!("{}:{line}: {why}", file.display());
        self.stats.warn(what);
    }

    fn add(&mut self, result: Result<Game, Reject>, file: &Path, line: usize) {
        match result {
            Ok(game) => {
                if game.end_target as usize != game.moves.len() {
                    self.stats.forbidden_last_move += 1;
                }
                self.games.push(game);
                return;
            }
            Err(Reject::Illegal(_)) => self.stats.illegal_move += 1,
            Err(Reject::Forbidden(_)) => self.stats.forbidden_move += 1,
            Err(Reject::AfterWin(_)) => self.stats.moves_after_win += 1,
            Err(Reject::Mismatch(_)) => self.stats.result_mismatch += 1,
            Err(Reject::NoTargets) => {
                self.stats.no_targets += 1;
                return;
            }
        }
        if let Err(why) = result {
            let what = format!("{}:{line}: {why}", file.display());
            self.stats.warn(what);
        }
    }

    /// One record file's text.
    fn text(&mut self, file: &Path, text: &str) -> Result<(), String> {
        self.stats.files += 1;
        match kind_by_extension(file).or_else(|| kind_by_content(text)) {
            Some(FileKind::Tsv) => self.tsv(file, text),
            Some(FileKind::Psq) => {
                self.psq(file, text);
                Ok(())
            }
            None => Err(format!(
                "{}: not a game record file (expected a Gomocup TSV with a '#' header \
                 line or a Piskvork PSQ file)",
                file.display()
            )),
        }
    }

    fn finish(self) -> Dataset {
        let mut stats = self.stats;
        stats.games = self.games.len();
        stats.positions = self.games.iter().map(Game::targets).sum();
        Dataset {
            rule: self.rule,
            games: self.games,
            stats,
        }
    }

    /// A Gomocup TSV file: a `#` header naming the columns, one game a
    /// line (`wuzi_formats::tsv`).
    fn tsv(&mut self, file: &Path, text: &str) -> Result<(), String> {
        let mut lines = text.lines().enumerate();
        let header = loop {
            match lines.next() {
                Some((_, l)) if l.trim().is_empty() => continue,
                Some((_, l)) => break l,
                None => return Ok(()),
            }
        };
        let columns =
            tsv::Columns::from_header(header).map_err(|e| format!("{}: {e}", file.display()))?;
        for (index, raw) in lines {
            let line_no = index + 1;
            let line = raw.trim_end_matches('\r');
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            self.stats.records += 1;
            let row = match columns.row(line) {
                Ok(row) => row,
                Err(why) => {
                    self.malformed(file, line_no, why);
                    continue;
                }
            };
            match row.rule() {
                Ok(r) if r == self.rule => {}
                _ => {
                    self.stats.other_rule += 1;
                    continue;
                }
            }
            let size = match row.board() {
                Ok(size) => size,
                Err(e) => {
                    self.malformed(file, line_no, e);
                    continue;
                }
            };
            if !self.size_wanted(size) {
                self.stats.other_size += 1;
                continue;
            }
            let fields = row
                .winner()
                .and_then(|w| Ok((w, row.opening()?)))
                .map_err(MovesError::Malformed)
                .and_then(|(w, opening)| Ok((w, opening, row.moves(size)?)));
            let (outcome, opening, points) = match fields {
                Ok(fields) => fields,
                Err(MovesError::Malformed(why)) => {
                    self.malformed(file, line_no, why);
                    continue;
                }
                Err(MovesError::OffBoard(why)) => {
                    self.add(Err(Reject::Illegal(why)), file, line_no);
                    continue;
                }
            };
            let id = match row.id() {
                Some(id) => id.to_string(),
                None => format!("{}:{line_no}", file.display()),
            };
            let search = match row.search() {
                Ok(entries) => entries,
                Err(why) => {
                    self.malformed(file, line_no, why);
                    continue;
                }
            };
            let mut result = check_game(id, size, self.rule, points, opening, Some(outcome));
            if let Ok(game) = &mut result {
                if !search.is_empty() {
                    let plies = game.moves.len() - game.first_target as usize;
                    let off_board = search
                        .iter()
                        .flatten()
                        .flat_map(|t| &t.visits)
                        .find(|(p, _)| !size.contains(*p));
                    let why = if search.len() != plies {
                        Some(format!(
                            "{} search entries for {plies} moves after the opening",
                            search.len()
                        ))
                    } else {
                        off_board.map(|(p, _)| format!("search visit {p} is off the {size} board"))
                    };
                    if let Some(why) = why {
                        self.malformed(file, line_no, why);
                        continue;
                    }
                    game.search = search;
                }
            }
            self.add(result, file, line_no);
        }
        Ok(())
    }

    /// A Piskvork PSQ file: one game.
    fn psq(&mut self, file: &Path, text: &str) {
        self.stats.records += 1;
        match parse_psq(text) {
            Err(why) => self.malformed(file, 1, why),
            Ok((size, moves)) => {
                if !self.size_wanted(size) {
                    self.stats.other_size += 1;
                    return;
                }
                let mut points = Vec::with_capacity(moves.len());
                for (i, &(x, y)) in moves.iter().enumerate() {
                    match i32::try_from(x)
                        .ok()
                        .zip(i32::try_from(y).ok())
                        .and_then(|(x, y)| size.point(x, y))
                    {
                        Some(p) => points.push(p),
                        None => {
                            let why = format!(
                                "move {} ({},{} 1-based) is off the {size} board",
                                i + 1,
                                x + 1,
                                y + 1
                            );
                            self.add(Err(Reject::Illegal(why)), file, i + 2);
                            return;
                        }
                    }
                }
                let id = file.display().to_string();
                let result = check_game(id, size, self.rule, points, 0, None);
                self.add(result, file, 1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: u8, y: u8) -> Point {
        Point::new(x, y).unwrap()
    }

    #[test]
    fn rng_is_deterministic_and_in_range() {
        let mut a = rng(7);
        let mut b = rng(7);
        for _ in 0..1000 {
            let x = a.below(10);
            assert_eq!(x, b.below(10));
            assert!(x < 10);
        }
        let mut v: Vec<u32> = (0..100).collect();
        rng(1).shuffle(&mut v);
        assert_ne!(v, (0..100).collect::<Vec<_>>());
        v.sort();
        assert_eq!(v, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn search_columns_are_checked_against_the_moves() {
        let head = "#game_id\trule\tboard\twinner\tn_opening\tmoves\tsearch\n";
        let moves = "7,7 8,8 7,8 9,9 7,9 10,10 7,10 11,11 7,11";
        let good = "500:0:500/7,8=3 - - - - - -";
        let text = format!(
            "{head}ok\tfreestyle\t15\tB\t2\t{moves}\t{good}\n\
             short\tfreestyle\t15\tB\t2\t{moves}\t{good} -\n\
             bad\tfreestyle\t15\tB\t2\t{moves}\t500:0:500/7,8 - - - - - -\n\
             off\tfreestyle\t15\tB\t2\t{moves}\t500:0:500/7,8=1;20,3=1 - - - - - -\n\
             plain\tfreestyle\t15\tB\t2\t{moves}\n"
        );
        let data = Dataset::parse(Path::new("sp.tsv"), &text, Rule::Freestyle, &[]).unwrap();
        let ids: Vec<&str> = data.games.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(ids, ["ok", "plain"]);
        // A wrong count, a bad entry, a visit off the 15x15 board.
        assert_eq!(data.stats.malformed, 3);
        let (ok, plain) = (&data.games[0], &data.games[1]);
        // Only the fully searched position is a target, with the search's move.
        assert_eq!(ok.targets(), 1);
        assert_eq!(data.samples(&[0]), vec![Sample { game: 0, ply: 2 }]);
        assert_eq!(ok.policy_move(2), Some(p(7, 8)));
        assert!(!ok.is_target(3));
        // Records without the column: every position after the opening.
        assert_eq!(plain.targets(), 7);
        assert_eq!(plain.policy_move(3), Some(p(9, 9)));
    }

    #[test]
    fn board_sizes_parse() {
        assert_eq!(parse_board_size("15"), Ok(BoardSize::square(15).unwrap()));
        assert_eq!(
            parse_board_size("20x15"),
            Ok(BoardSize::new(20, 15).unwrap())
        );
        assert!(parse_board_size("4").is_err());
        assert!(parse_board_size("x").is_err());
    }

    #[test]
    fn check_game_decides_results_and_targets() {
        let size = BoardSize::square(15).unwrap();
        // Black makes five on row 0 at its fifth move.
        let mut moves = Vec::new();
        for i in 0..5 {
            moves.push(p(i, 0));
            if i < 4 {
                moves.push(p(i, 5));
            }
        }
        let game = check_game("g".into(), size, Rule::Freestyle, moves.clone(), 3, None).unwrap();
        assert_eq!(game.outcome, Outcome::Win(Color::Black));
        assert_eq!((game.first_target, game.end_target), (3, 9));
        assert_eq!(game.wdl_class(0), 0);
        assert_eq!(game.wdl_class(1), 2);
        // The recorded result must agree with the replay.
        let r = check_game(
            "g".into(),
            size,
            Rule::Freestyle,
            moves.clone(),
            0,
            Some(Outcome::Win(Color::White)),
        );
        assert!(matches!(r, Err(Reject::Mismatch(_))));
        // A move after the five.
        let mut longer = moves.clone();
        longer.push(p(9, 9));
        let r = check_game("g".into(), size, Rule::Freestyle, longer, 0, None);
        assert!(matches!(r, Err(Reject::AfterWin(8))));
        // An occupied cell.
        let r = check_game(
            "g".into(),
            size,
            Rule::Freestyle,
            vec![p(1, 1), p(1, 1)],
            0,
            None,
        );
        assert!(matches!(r, Err(Reject::Illegal(_))));
        // Unfinished without a record: a draw; only the opening: no targets.
        let g = check_game(
            "g".into(),
            size,
            Rule::Freestyle,
            moves[..4].to_vec(),
            0,
            None,
        );
        assert_eq!(g.unwrap().outcome, Outcome::Draw);
        let r = check_game(
            "g".into(),
            size,
            Rule::Freestyle,
            moves[..4].to_vec(),
            4,
            None,
        );
        assert_eq!(r.unwrap_err(), Reject::NoTargets);
    }

    #[test]
    fn renju_forbidden_moves() {
        let size = BoardSize::square(15).unwrap();
        // Black: (1..=3,7) and (5,7), (6,7) -> (4,7) would be an overline.
        let black = [p(1, 7), p(2, 7), p(3, 7), p(5, 7), p(6, 7)];
        let white = [p(0, 0), p(14, 0), p(0, 14), p(14, 14), p(10, 10)];
        let mut moves = Vec::new();
        for i in 0..5 {
            moves.push(black[i]);
            moves.push(white[i]);
        }
        moves.push(p(4, 7));
        let g = check_game("g".into(), size, Rule::Renju, moves.clone(), 0, None).unwrap();
        assert_eq!(g.outcome, Outcome::Win(Color::White));
        assert_eq!(g.end_target as usize, moves.len() - 1);
        // Under freestyle the same move is a winning overline.
        let g = check_game("g".into(), size, Rule::Freestyle, moves.clone(), 0, None).unwrap();
        assert_eq!(g.outcome, Outcome::Win(Color::Black));
        assert_eq!(g.end_target as usize, moves.len());
        // A forbidden move before the end.
        moves.push(p(12, 12));
        let r = check_game("g".into(), size, Rule::Renju, moves, 0, None);
        assert_eq!(r.unwrap_err(), Reject::Forbidden(10));
    }
}
