//! Reading record files: which files (folders walked, kinds told by name
//! or content), and each file's games through `wuzi_formats` (TSV, PSQ),
//! counted by why they were kept or skipped.

use std::collections::HashSet;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use wuzi_formats::record::parse_psq;
use wuzi_formats::tsv::{self, MovesError, TsvError};
use wuzi_game::game::{BoardSize, Rule};

use super::*;
use crate::held_out::{cells, EvaluationOpenings, PerBoardSize};
use crate::tournament::TournamentOpenings;

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
    /// Each directory is searched once, by its canonical path: a link back
    /// to a parent would recurse without end, and a link to a folder
    /// already searched would load its games twice.
    fn walk(dir: &Path, out: &mut Vec<PathBuf>, seen: &mut HashSet<PathBuf>) -> Result<(), String> {
        if let Ok(canonical) = fs::canonicalize(dir) {
            if !seen.insert(canonical) {
                return Ok(());
            }
        }
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
                walk(&path, out, seen)?;
            } else if path.is_file() && kind_by_extension(&path).is_some() {
                // Only plain files: a pipe named *.tsv in a folder would
                // wait for a writer for ever (one named alone is read).
                out.push(path);
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    let mut seen = HashSet::new();
    for path in paths {
        if path.is_dir() {
            if fs::canonicalize(path).is_ok_and(|c| seen.contains(&c)) {
                continue;
            }
            let before = files.len();
            walk(path, &mut files, &mut seen)?;
            // A folder named after its own subfolder (`data/renju data`)
            // finds that one's files already taken: not an empty folder.
            if files.len() == before && !files.iter().any(|f| f.starts_with(path)) {
                return Err(format!(
                    "directory {} holds no .tsv or .psq file",
                    path.display()
                ));
            }
        } else if path.is_file() || is_pipe(path) {
            files.push(path.clone());
        } else if path.exists() {
            // A device (/dev/zero) could be read without end.
            return Err(format!("not a file: {}", path.display()));
        } else {
            return Err(format!("no such file or directory: {}", path.display()));
        }
    }
    Ok(files)
}

/// A named pipe or a shell's `<(zcat games.tsv.gz)`: read as the file it
/// stands for.
fn is_pipe(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

pub(super) struct Loader<'a> {
    rule: Rule,
    sizes: &'a [BoardSize],
    games: Vec<Game>,
    stats: LoadStats,
    /// The evaluation openings of each board size met, as they are needed.
    held_out: PerBoardSize<EvaluationOpenings>,
    /// The tournament's openings, which tell where a PSQ game's opening
    /// ends; without them a PSQ game has none.
    psq_openings: Option<TournamentOpenings>,
}

impl Loader<'_> {
    pub(super) fn new(
        rule: Rule,
        sizes: &[BoardSize],
        psq_openings: Option<TournamentOpenings>,
    ) -> Loader<'_> {
        Loader {
            rule,
            sizes,
            games: Vec::new(),
            stats: LoadStats::default(),
            held_out: PerBoardSize::default(),
            psq_openings,
        }
    }

    /// Whether `game` passes through an evaluation opening of its league.
    fn passes_through_held_out(&mut self, game: &Game) -> bool {
        let (size, rule) = (game.size, self.rule);
        let held = self
            .held_out
            .get_or_make(size, || EvaluationOpenings::of(rule, size));
        let first = &game.moves[..game.moves.len().min(held.most_stones())];
        held.passed_through(&cells(first), size).is_some()
    }

    fn size_wanted(&self, size: BoardSize) -> bool {
        self.sizes.is_empty() || self.sizes.contains(&size)
    }

    fn malformed(&mut self, file: &Path, line: usize, why: impl fmt::Display) {
        self.stats.malformed += 1;
        self.stats
            .warn(format_args!("{}:{line}: {why}", file.display()));
    }

    /// A malformed record whose reason names its own line (a PSQ file's).
    fn malformed_file(&mut self, file: &Path, why: impl fmt::Display) {
        self.stats.malformed += 1;
        self.stats.warn(format_args!("{}: {why}", file.display()));
    }

    fn add(&mut self, result: Result<Game, Reject>, file: &Path, line: usize) {
        match result {
            Ok(mut game) => {
                if self.passes_through_held_out(&game) {
                    self.stats.evaluation_openings += 1;
                    return;
                }
                if game.end_target as usize != game.moves.len() {
                    self.stats.forbidden_last_move += 1;
                }
                self.stats.dead_draw_positions += game.trim_dead_draw(self.rule);
                // Nothing left to learn (no searched position, or none
                // before the board was dead): not a game used.
                if game.targets() == 0 {
                    self.stats.no_targets += 1;
                } else {
                    self.games.push(game);
                }
                return;
            }
            Err(Reject::Illegal(_)) => self.stats.illegal_move += 1,
            Err(Reject::Forbidden(_)) => self.stats.forbidden_move += 1,
            Err(Reject::AfterWin(_)) => self.stats.moves_after_win += 1,
            Err(Reject::Mismatch(_)) => self.stats.result_mismatch += 1,
            Err(Reject::Undecided) => self.stats.undecided += 1,
            Err(Reject::NoTargets) => {
                self.stats.no_targets += 1;
                return;
            }
        }
        if let Err(why) = result {
            self.stats
                .warn(format_args!("{}:{line}: {why}", file.display()));
        }
    }

    /// One record file's text.
    pub(super) fn text(&mut self, file: &Path, text: &str) -> Result<(), String> {
        self.stats.files += 1;
        // Spreadsheets save TSV with a byte-order mark.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
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

    pub(super) fn finish(self) -> Dataset {
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
        let mut columns =
            tsv::Columns::from_header(header).map_err(|e| format!("{}: {e}", file.display()))?;
        for (index, raw) in lines {
            let line_no = index + 1;
            let line = raw.trim_end_matches('\r');
            if line.trim().is_empty() {
                continue;
            }
            if line.starts_with('#') {
                // Files joined end to end (`zcat a.tsv.gz b.tsv.gz`): a
                // header names the columns of the lines after it (a
                // self-play file's search column, say); any other '#' line
                // is a comment. A line with tabs is meant as a header: one
                // that cannot be read is an error, as at the file's start,
                // rather than its games read by the columns before it.
                match tsv::Columns::from_header(line) {
                    Ok(next) => columns = next,
                    Err(e) if line.contains('\t') => {
                        return Err(format!("{}:{line_no}: {e}", file.display()))
                    }
                    Err(_) => {}
                }
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
                Ok(_) => {
                    self.stats.other_rule += 1;
                    continue;
                }
                Err(why) => {
                    self.malformed(file, line_no, why);
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
                .and_then(|w| Ok((w, row.opening()?, row.moves(size)?)));
            let (outcome, opening, points) = match fields {
                Ok(fields) => fields,
                Err(TsvError::Moves(why @ MovesError::OffBoard { .. })) => {
                    self.add(Err(Reject::Illegal(why.to_string())), file, line_no);
                    continue;
                }
                Err(why) => {
                    self.malformed(file, line_no, why);
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
            let claims_five = row.claims_five();
            // A forfeit's winner is not a value target: the result is the
            // replay's (a five or a full board), else none, as for PSQ.
            let recorded = (!row.decided_off_the_board()).then_some(outcome);
            let mut result =
                check_game(id, size, self.rule, points, opening, recorded, claims_five);
            if let Ok(game) = &mut result {
                // A self-play line's entries are checked even when there
                // are none: an emptied column would make every move a
                // target, the sampled opening moves among them.
                if let Some(search) = search {
                    let plies = game.moves.len() - game.first_target as usize;
                    let why = if search.len() != plies {
                        Some(format!(
                            "{} search entries for {plies} moves after the opening",
                            search.len()
                        ))
                    } else {
                        visits_problem(
                            size,
                            self.rule,
                            &game.moves,
                            game.first_target as usize,
                            &search,
                        )
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
            Err(why) => self.malformed_file(file, why),
            Ok((size, moves)) => {
                if !self.size_wanted(size) {
                    self.stats.other_size += 1;
                    return;
                }
                let mut points = Vec::with_capacity(moves.len());
                for (i, &(x, y)) in moves.iter().enumerate() {
                    match size.point_from_i64(x, y) {
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
                let opening = match &mut self.psq_openings {
                    None => 0,
                    Some(openings) => match openings.opening_length(&points, size) {
                        Some(n) => n,
                        None => {
                            self.stats.psq_without_opening += 1;
                            return;
                        }
                    },
                };
                let id = file.display().to_string();
                let result = check_game(id, size, self.rule, points, opening, None, false);
                self.add(result, file, 1);
            }
        }
    }
}

/// Why the search entries of a game's plies from `first` on cannot be
/// policy targets, if they cannot: a visited cell off the board, already
/// holding a stone at that ply, listed twice, or (renju) forbidden to black
/// on black's move, where the network's policy is masked: a target there
/// would add an unbounded term to the loss.
fn visits_problem(
    size: BoardSize,
    rule: Rule,
    moves: &[wuzi_game::game::Point],
    first: usize,
    search: &[Option<wuzi_formats::search_target::SearchTarget>],
) -> Option<String> {
    use wuzi_game::game::{Board, Color};
    // Point::index is below 32 * 32 on any board.
    let mut stone = vec![false; 32 * 32];
    for &p in &moves[..first] {
        stone[p.index()] = true;
    }
    // Replayed only where a visit can be forbidden.
    let mut board = rule
        .has_forbidden_moves(Color::Black)
        .then(|| Board::from_moves(size, rule, &moves[..first]).ok())
        .flatten();
    for (ply, (&played, target)) in moves[first..].iter().zip(search).enumerate() {
        let mut listed = vec![false; 32 * 32];
        let black_to_move = (first + ply) % 2 == 0;
        for &(p, _) in target.iter().flat_map(|t| &t.visits) {
            let move_number = first + ply + 1;
            if !size.contains(p) {
                return Some(format!("search visit {p} is off the {size} board"));
            }
            if stone[p.index()] {
                return Some(format!(
                    "search visit {p} of move {move_number} is on a stone"
                ));
            }
            if std::mem::replace(&mut listed[p.index()], true) {
                return Some(format!(
                    "search visit {p} of move {move_number} is listed twice"
                ));
            }
            if black_to_move && board.as_mut().is_some_and(|b| b.is_forbidden(p)) {
                return Some(format!(
                    "search visit {p} of move {move_number} is forbidden to black"
                ));
            }
        }
        stone[played.index()] = true;
        if let Some(b) = board.as_mut() {
            if b.play(played).is_err() {
                board = None;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::collect_files;

    #[cfg(unix)]
    #[test]
    fn linked_folders_are_searched_once() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        std::fs::write(data.join("a.tsv"), "").unwrap();
        // A link back to a parent, and a second name for the folder.
        std::os::unix::fs::symlink("..", data.join("up")).unwrap();
        std::os::unix::fs::symlink(&data, dir.path().join("again")).unwrap();
        let files = collect_files(&[data.clone(), dir.path().join("again")]).unwrap();
        assert_eq!(files, vec![data.join("a.tsv")]);
    }

    #[test]
    fn a_folder_after_its_own_subfolder_is_not_empty() {
        let dir = tempfile::tempdir().unwrap();
        let renju = dir.path().join("renju");
        std::fs::create_dir(&renju).unwrap();
        std::fs::write(renju.join("a.tsv"), "").unwrap();
        let files = collect_files(&[renju.clone(), dir.path().to_path_buf()]).unwrap();
        assert_eq!(files, vec![renju.join("a.tsv")]);
        // A folder that holds nothing is still an error.
        let empty = dir.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        let why = collect_files(&[renju, empty]).unwrap_err();
        assert!(why.contains("holds no .tsv or .psq"), "{why}");
    }
}
