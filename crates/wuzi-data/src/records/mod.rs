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
use std::path::{Path, PathBuf};

use wuzi_formats::bounded_read::read_file_bytes;
pub use wuzi_formats::search_target::SearchTarget;
use wuzi_game::game::{Board, BoardSize, Color, Outcome, Point, Rule};
use wuzi_game::symmetry::Symmetry;

use crate::tournament::TournamentOpenings;

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

    /// Ends the targets of a drawn game at its first position where
    /// neither side can make five any more ([`Board::is_dead_draw`]): the
    /// moves after it only fill the board, teach nothing and, drawn games
    /// being long, would be a large share of the positions. Returns how
    /// many targets went (the first position stays; a game left without a
    /// target is not used).
    pub fn trim_dead_draw(&mut self, rule: Rule) -> usize {
        if self.outcome != Outcome::Draw {
            return 0;
        }
        let before = self.targets();
        let mut board = Board::new(self.size, rule);
        for (ply, &p) in self.moves.iter().enumerate().take(self.end_target as usize) {
            if ply > self.first_target as usize && board.is_dead_draw() {
                self.end_target = ply as u16;
                break;
            }
            if board.play(p).is_err() {
                // Not a legal game after all (only checked games come
                // here): keep it as it is.
                return 0;
            }
        }
        before - self.targets()
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
    /// Records without a result that end undecided (PSQ files of forfeits).
    pub undecided: usize,
    /// Games that pass through an evaluation opening ([`crate::held_out`]):
    /// left out, as no training may use those positions.
    pub evaluation_openings: usize,
    /// PSQ games that start from none of the tournament openings given
    /// ([`crate::tournament`]): left out, as their opening is unknown.
    pub psq_without_opening: usize,
    /// Renju games kept whose last (losing) black move was forbidden: that
    /// move is not a target.
    pub forbidden_last_move: usize,
    /// Targets left out of drawn games after the board became a dead draw
    /// (`Game::trim_dead_draw`).
    pub dead_draw_positions: usize,
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
            + self.undecided
    }

    /// Keeps a warning while there is room, cut to its first
    /// `MAX_WARNING_CHARS`: it quotes the file's own text (a move, a
    /// rule), which may be as long as a line.
    fn warn(&mut self, what: fmt::Arguments<'_>) {
        if self.warnings.len() >= MAX_WARNINGS {
            return;
        }
        let mut text = Bounded {
            text: String::new(),
            left: MAX_WARNING_CHARS,
            cut: false,
        };
        let _ = fmt::Write::write_fmt(&mut text, what);
        if text.cut {
            text.text.push_str("...");
        }
        self.warnings.push(text.text);
    }
}

/// Longest warning kept, in characters.
const MAX_WARNING_CHARS: usize = 400;

/// A text that takes characters while it has room and drops the rest.
struct Bounded {
    text: String,
    left: usize,
    cut: bool,
}

impl fmt::Write for Bounded {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for c in s.chars() {
            if self.left == 0 {
                self.cut = true;
                return Ok(());
            }
            self.text.push(c);
            self.left -= 1;
        }
        Ok(())
    }
}

impl fmt::Display for LoadStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} files, {} records: {} games used ({} positions); filtered out: {} other rule, \
             {} other size; skipped {}: {} malformed, {} illegal move, {} forbidden move, \
             {} moves after a win, {} result mismatch, {} without targets, {} undecided",
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
            self.undecided,
        )?;
        if self.evaluation_openings > 0 {
            write!(
                f,
                "; {} games pass through an evaluation opening (left out)",
                self.evaluation_openings
            )?;
        }
        if self.psq_without_opening > 0 {
            write!(
                f,
                "; {} PSQ games start from none of the tournament openings (left out)",
                self.psq_without_opening
            )?;
        }
        if self.forbidden_last_move > 0 {
            write!(
                f,
                "; {} renju games end with a forbidden black move (not a target)",
                self.forbidden_last_move
            )?;
        }
        if self.dead_draw_positions > 0 {
            write!(
                f,
                "; {} positions of drawn games left out after neither side could make five",
                self.dead_draw_positions
            )?;
        }
        Ok(())
    }
}

/// The largest record file read. A file is read whole (PSQ games span
/// lines); the largest Gomocup TSVs are a few megabytes, so this leaves room
/// for years of self-play in one file while an endless stream such as
/// `/dev/zero` ends in an error, not in memory exhaustion.
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// The games of one rule, loaded from files.
#[derive(Clone, Debug)]
pub struct Dataset {
    pub rule: Rule,
    pub games: Vec<Game>,
    pub stats: LoadStats,
}

mod check;
mod load;

pub use check::{check_game, Reject};
pub use load::collect_files;
pub use wuzi_formats::tsv::parse_board as parse_board_size;

use load::Loader;

impl Dataset {
    /// Loads the games of `rule` on the board `sizes` (all sizes when
    /// empty) from `paths` (files or directories). PSQ files carry no rule:
    /// they are read as games of `rule`. Unreadable files are errors;
    /// malformed records are counted and skipped.
    pub fn load(paths: &[PathBuf], rule: Rule, sizes: &[BoardSize]) -> Result<Dataset, String> {
        Dataset::load_up_to(paths, rule, sizes, None, MAX_FILE_BYTES)
    }

    /// [`Dataset::load`], with a tournament's opening file (`psq_openings`,
    /// read here) for its PSQ records: each PSQ game's opening is the
    /// longest first part of its moves that is one of those openings (not
    /// trained on), and a PSQ game that starts from none of them is left
    /// out (counted in [`LoadStats::psq_without_opening`], before the game
    /// is checked). TSV records name their own openings.
    pub fn load_with_psq_openings(
        paths: &[PathBuf],
        rule: Rule,
        sizes: &[BoardSize],
        psq_openings: Option<&Path>,
    ) -> Result<Dataset, String> {
        let openings = psq_openings.map(TournamentOpenings::read).transpose()?;
        Dataset::load_up_to(paths, rule, sizes, openings, MAX_FILE_BYTES)
    }

    /// [`Dataset::load`] with a limit on each file's size.
    fn load_up_to(
        paths: &[PathBuf],
        rule: Rule,
        sizes: &[BoardSize],
        psq_openings: Option<TournamentOpenings>,
        limit: u64,
    ) -> Result<Dataset, String> {
        let files = collect_files(paths)?;
        let mut loader = Loader::new(rule, sizes, psq_openings);
        for file in &files {
            let bytes = read_file_bytes(file, limit)
                .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
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
        let mut loader = Loader::new(rule, sizes, None);
        loader.text(name, text)?;
        Ok(loader.finish())
    }

    /// Splits the games into training and validation sets by a seeded hash
    /// of each game's moves: a game is for validation when its hash falls
    /// in the lowest `val_fraction` of the hash range. Each game's side so
    /// depends on the game and the seed alone, not on the file order or on
    /// the other games: adding self-play files for the next generation
    /// moves no game of the last one across, and identical games land on
    /// the same side. With a positive fraction and two different games or
    /// more, each side keeps at least one (the lowest or highest hash);
    /// a single game, or copies of one, all train.
    /// Returns (training games, validation games), sorted.
    pub fn split(&self, val_fraction: f64, seed: u64) -> (Vec<usize>, Vec<usize>) {
        let n = self.games.len();
        let fraction = if val_fraction.is_finite() {
            val_fraction.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let mut keyed: Vec<(u64, usize)> = self
            .games
            .iter()
            .enumerate()
            .map(|(i, g)| (game_hash(g, seed), i))
            .collect();
        keyed.sort_unstable();
        // 2^64 as f64 is exact; a hash is below it whatever its rounding.
        let range = 2f64.powi(64);
        let mut cut = keyed.partition_point(|&(hash, _)| (hash as f64) < fraction * range);
        let distinct = keyed.first().map(|f| f.0) != keyed.last().map(|l| l.0);
        if !distinct {
            // One game (or copies of it) cannot be split: it trains.
            cut = 0;
        } else if fraction > 0.0 {
            // Copies of one game (a file given twice) sort together, and a
            // cut moved to keep a side stays on a group's edge.
            if cut == 0 {
                cut = keyed.partition_point(|&(hash, _)| hash == keyed[0].0);
            } else if cut == n {
                cut = keyed.partition_point(|&(hash, _)| hash < keyed[n - 1].0);
            }
        }
        let mut val: Vec<usize> = keyed[..cut].iter().map(|&(_, i)| i).collect();
        let mut train: Vec<usize> = keyed[cut..].iter().map(|&(_, i)| i).collect();
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

/// A seeded hash of a game's moves, the same for its images under the
/// board's symmetries: self-play plays its openings under random
/// symmetries, and a game and its mirror image, alike to the training,
/// must not land on both sides of the split. The image hashed is the one
/// whose cells come first in order (the least of the hashes would not be
/// uniform, and the split's fraction would not hold).
fn game_hash(game: &Game, seed: u64) -> u64 {
    let (height, width) = (game.size.height() as usize, game.size.width() as usize);
    let canonical = Symmetry::all_for(height, width)
        .iter()
        .map(|sym| {
            game.moves
                .iter()
                .map(|p| {
                    let (x, y) = sym.map_cell(p.x() as usize, p.y() as usize, height, width);
                    y * width + x
                })
                .collect::<Vec<usize>>()
        })
        .min()
        .unwrap_or_default();
    let start = mix(mix(seed ^ 0xA076_1D64_78BD_642F) ^ ((width as u64) << 8) ^ height as u64);
    canonical
        .iter()
        .fold(start, |h, &cell| mix(h ^ cell as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: u8, y: u8) -> Point {
        Point::new(x, y).unwrap()
    }

    #[test]
    fn a_record_file_over_the_limit_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.tsv");
        let text = "#game_id\trule\tboard\twinner\tmoves\ng\tfreestyle\t15\tD\t7,7 8,8\n";
        std::fs::write(&path, text).unwrap();
        let paths = [path.clone()];
        let size = text.len() as u64;
        let data = Dataset::load_up_to(&paths, Rule::Freestyle, &[], None, size).unwrap();
        assert_eq!(data.games.len(), 1);
        let why = Dataset::load_up_to(&paths, Rule::Freestyle, &[], None, size - 1).unwrap_err();
        assert!(why.contains(&path.display().to_string()), "{why}");
        assert!(why.contains("larger than"), "{why}");
    }

    /// Files joined end to end: a later header that cannot be read is an
    /// error naming its line, as one at the start is; a `#` comment
    /// without tabs stays a comment.
    #[test]
    fn a_broken_header_inside_a_file_is_an_error_at_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("joined.tsv");
        let game = "freestyle\t15\tD\t7,7 8,8";
        let good = format!("#rule\tboard\twinner\tmoves\n{game}\n# a comment\n{game}\n");
        std::fs::write(&path, &good).unwrap();
        let data = Dataset::load(&[path.clone()], Rule::Freestyle, &[]).unwrap();
        assert_eq!(data.games.len(), 2);
        std::fs::write(&path, format!("{good}#rule\tboard\tmoves\n{game}\n")).unwrap();
        let why = Dataset::load(&[path.clone()], Rule::Freestyle, &[]).unwrap_err();
        assert!(why.contains(&format!("{}:5:", path.display())), "{why}");
        assert!(why.contains("winner"), "{why}");
    }

    /// With the tournament's openings, a PSQ game's opening stones are no
    /// targets, and a game from none of them is left out and counted;
    /// without them every move is one.
    #[test]
    fn psq_games_are_learned_after_the_tournament_opening() {
        let dir = tempfile::tempdir().unwrap();
        // 0-based x,y pairs to a PSQ file (1-based, with a time each).
        let psq = |moves: &str| {
            let mut text = String::from("Piskvork 15x15, 11:11, 0\n");
            for xy in moves.split(' ') {
                let (x, y) = xy.split_once(',').unwrap();
                let one = |v: &str| v.parse::<u8>().unwrap() + 1;
                text.push_str(&format!("{},{},0\n", one(x), one(y)));
            }
            text
        };
        // Black's five after the opening placed with its corner at (5,5).
        let opened = "5,5 6,5 5,6 9,9 5,7 9,10 5,8 9,11 5,9";
        let elsewhere = "7,7 12,2 7,8 2,12 7,9 12,12 7,10 2,2 7,11";
        std::fs::write(dir.path().join("a.psq"), psq(opened)).unwrap();
        std::fs::write(dir.path().join("b.psq"), psq(elsewhere)).unwrap();
        let paths = [dir.path().to_path_buf()];
        // Beside the records: a .txt file is not read as one.
        let openings = dir.path().join("openings.txt");
        std::fs::write(&openings, "0,0, 1,0, 0,1\n").unwrap();
        let openings = Some(openings.as_path());

        let data = Dataset::load_with_psq_openings(&paths, Rule::Freestyle, &[], openings).unwrap();
        assert_eq!(data.games.len(), 1, "{}", data.stats);
        assert!(data.games[0].id.ends_with("a.psq"));
        assert_eq!(data.games[0].first_target, 3);
        assert_eq!(data.games[0].targets(), 6);
        assert_eq!(data.stats.psq_without_opening, 1);
        assert!(
            data.stats
                .to_string()
                .contains("1 PSQ games start from none"),
            "{}",
            data.stats
        );

        let data = Dataset::load(&paths, Rule::Freestyle, &[]).unwrap();
        assert_eq!(data.games.len(), 2, "{}", data.stats);
        assert!(data.games.iter().all(|g| g.first_target == 0));
        assert_eq!(data.stats.psq_without_opening, 0);
    }

    /// A Gomocup league's games as the judge's PSQ files, read with the
    /// league's opening file, are the games of its TSV collection, with
    /// the same openings left out.
    #[test]
    fn psq_files_with_the_league_openings_are_the_collections_games() {
        use wuzi_formats::tsv::{Columns, TsvGame};
        let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/games");
        let tsv = PathBuf::from(format!("{fixtures}/gomocup2024_freestyle15_2_sample.tsv"));
        let text = std::fs::read_to_string(&tsv).unwrap();
        let mut lines = text.lines();
        let columns = Columns::from_header(lines.next().unwrap()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        for (i, line) in lines.enumerate() {
            let game = TsvGame::parse(&columns, line).unwrap();
            let (width, height) = (game.size.width(), game.size.height());
            let mut psq = format!("Piskvorky {width}x{height}, 11:11, 0\n");
            for p in &game.moves {
                psq += &format!("{},{},0\n", p.x() + 1, p.y() + 1);
            }
            std::fs::write(dir.path().join(format!("{i}.psq")), psq).unwrap();
        }
        let openings = format!("{fixtures}/gomocup2024_freestyle15_openings.txt");
        let openings = Some(Path::new(&openings));
        let paths = [dir.path().to_path_buf()];
        let from_psq =
            Dataset::load_with_psq_openings(&paths, Rule::Freestyle, &[], openings).unwrap();
        let from_tsv = Dataset::load(&[tsv], Rule::Freestyle, &[]).unwrap();
        let kept = |data: &Dataset| {
            let mut games: Vec<(Vec<Point>, u16, u16)> = (data.games.iter())
                .map(|g| (g.moves.clone(), g.first_target, g.end_target))
                .collect();
            games.sort();
            games
        };
        assert_eq!(from_psq.stats.psq_without_opening, 0);
        assert!(from_tsv.games.len() >= 40, "{}", from_tsv.stats);
        assert!(from_tsv.games.iter().all(|g| g.first_target > 0));
        assert_eq!(kept(&from_psq), kept(&from_tsv));
    }

    /// A PSQ error names the line it is on, once.
    #[test]
    fn a_psq_error_names_its_own_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cut.psq");
        std::fs::write(&path, "Piskvork 15x15, 11:11, 0\n8,8,0\n9,9\n").unwrap();
        let data = Dataset::load(&[path.clone()], Rule::Freestyle, &[]).unwrap();
        assert_eq!(data.stats.malformed, 1);
        let warning = format!("{}: line 3: move", path.display());
        assert!(
            data.stats.warnings.iter().any(|w| w.starts_with(&warning)),
            "{:?}",
            data.stats.warnings
        );
    }

    /// A Gomocup record decided off the board (a time forfeit or crash,
    /// `other`; an engine's invalid answer, `illegal_move`) teaches no
    /// result: it is refused as undecided unless its moves end in a five.
    /// The rule's own endings (a forbidden renju move) stay results.
    #[test]
    fn games_decided_off_the_board_are_undecided() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.tsv");
        let head = "#game_id\trule\tboard\twinner\tend\tmoves\n";
        let quiet = "7,7 8,8 7,8 9,9";
        let five = "7,7 8,8 7,8 9,9 7,9 10,10 7,10 11,11 7,11";
        let text = format!(
            "{head}a\tfreestyle\t15\tB\tother\t{quiet}\n\
             b\tfreestyle\t15\tW\tillegal_move\t{quiet}\n\
             c\tfreestyle\t15\tB\tother\t{five}\n\
             d\tfreestyle\t15\tB\tfive\t{five}\n"
        );
        std::fs::write(&path, text).unwrap();
        let data = Dataset::load(&[path.clone()], Rule::Freestyle, &[]).unwrap();
        let ids: Vec<&str> = data.games.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(ids, ["c", "d"], "{}", data.stats);
        assert!(data
            .games
            .iter()
            .all(|g| g.outcome == Outcome::Win(Color::Black)));
        assert_eq!(data.stats.undecided, 2, "{}", data.stats);
        // Renju: a forbidden last move by black is the rule's result.
        let renju = dir.path().join("renju.tsv");
        // Black's double three at 7,7 (two open twos crossing there).
        let text = format!(
            "{head}r\trenju\t15\tW\tblack_forbidden\t5,7 0,0 6,7 0,2 7,5 0,4 7,6 0,6 7,7\n"
        );
        std::fs::write(&renju, text).unwrap();
        let data = Dataset::load(&[renju], Rule::Renju, &[]).unwrap();
        assert_eq!(data.games.len(), 1, "{}", data.stats);
        assert_eq!(data.games[0].outcome, Outcome::Win(Color::White));
    }

    /// A game that passes through an evaluation opening (here freestyle
    /// 15x15's `f13 i11 h13`, mirrored and moved) is left out and counted;
    /// the same game with white's first stone elsewhere is kept.
    #[test]
    fn games_through_an_evaluation_opening_are_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.tsv");
        let head = "#game_id\trule\tboard\twinner\tend\tmoves\n";
        let rest = "7,12 14,0 8,12 14,2 10,12 14,4 11,12";
        let text = format!(
            "{head}through\tfreestyle\t15\tB\tfive\t9,12 6,10 {rest}\n\
             elsewhere\tfreestyle\t15\tB\tfive\t9,12 5,10 {rest}\n"
        );
        std::fs::write(&path, text).unwrap();
        let data = Dataset::load(&[path.clone()], Rule::Freestyle, &[]).unwrap();
        let ids: Vec<&str> = data.games.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(ids, ["elsewhere"], "{}", data.stats);
        assert_eq!(data.stats.evaluation_openings, 1, "{}", data.stats);
        assert!(data
            .stats
            .to_string()
            .contains("1 games pass through an evaluation opening"));
        // Standard has its own set: the freestyle opening is no standard one.
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("freestyle", "standard");
        std::fs::write(&path, text).unwrap();
        let data = Dataset::load(&[path], Rule::Standard, &[]).unwrap();
        assert_eq!(data.games.len(), 2, "{}", data.stats);
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
        // The last entry visits 8,8, White's first stone.
        let good_but_last = "500:0:500/7,8=3 - - - - - 500:0:500/8,8=5";
        let text = format!(
            "{head}ok\tfreestyle\t15\tB\t2\t{moves}\t{good}\n\
             short\tfreestyle\t15\tB\t2\t{moves}\t{good} -\n\
             bad\tfreestyle\t15\tB\t2\t{moves}\t500:0:500/7,8 - - - - - -\n\
             off\tfreestyle\t15\tB\t2\t{moves}\t500:0:500/7,8=1;20,3=1 - - - - - -\n\
             stone\tfreestyle\t15\tB\t2\t{moves}\t500:0:500/7,7=900;7,8=1 - - - - - -\n\
             later\tfreestyle\t15\tB\t2\t{moves}\t{good_but_last}\n\
             twice\tfreestyle\t15\tB\t2\t{moves}\t500:0:500/7,8=2;7,8=1 - - - - - -\n\
             order\tfreestyle\t15\tB\t2\t{moves}\t500:0:500/6,6=1;7,8=3 - - - - - -\n\
             emptied\tfreestyle\t15\tB\t2\t{moves}\t\n\
             plain\tfreestyle\t15\tB\t2\t{moves}\n"
        );
        let data = Dataset::parse(Path::new("sp.tsv"), &text, Rule::Freestyle, &[]).unwrap();
        let ids: Vec<&str> = data.games.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(ids, ["ok", "order", "plain"]);
        // A wrong count (none at all in an emptied column: a line without
        // the field is a plain record), a bad entry, a visit off the 15x15
        // board, visits on a stone (of the opening, of a later move) or
        // listed twice.
        assert_eq!(data.stats.malformed, 7);
        // The most visited is the search's move, whatever the listed order.
        assert_eq!(data.games[1].policy_move(2), Some(p(7, 8)));

        let (ok, plain) = (&data.games[0], &data.games[2]);
        // Only the fully searched position is a target, with the search's move.
        assert_eq!(ok.targets(), 1);
        assert_eq!(data.samples(&[0]), vec![Sample { game: 0, ply: 2 }]);
        assert_eq!(ok.policy_move(2), Some(p(7, 8)));
        assert!(!ok.is_target(3));
        // Records without the column: every position after the opening.
        assert_eq!(plain.targets(), 7);
        assert_eq!(plain.policy_move(3), Some(p(9, 9)));
    }

    /// A file given twice: each game's copies on one side of the split.
    #[test]
    fn copies_of_a_game_stay_on_one_side_of_the_split() {
        let mut text = String::from("#game_id\trule\tboard\twinner\tmoves\n");
        for g in 0..7u8 {
            let line = format!("g{g}\tfreestyle\t15\tD\t7,7 {g},0 8,8\n");
            text.push_str(&line);
            text.push_str(&line);
        }
        let data = Dataset::parse(Path::new("twice.tsv"), &text, Rule::Freestyle, &[]).unwrap();
        assert_eq!(data.games.len(), 14);
        for seed in 0..20 {
            for fraction in [0.1, 0.3, 0.5, 0.9] {
                let (train, val) = data.split(fraction, seed);
                assert_eq!(train.len() + val.len(), 14);
                assert!(!train.is_empty() && !val.is_empty(), "{seed} {fraction}");
                for v in &val {
                    let id = &data.games[*v].id;
                    assert!(
                        train.iter().all(|t| data.games[*t].id != *id),
                        "{id} on both sides (seed {seed}, fraction {fraction})"
                    );
                }
            }
        }
    }

    /// One game, or copies of it, cannot be split: it all trains, with
    /// any validation fraction (it went to validation whole by chance,
    /// leaving "no training positions").
    #[test]
    fn a_single_game_trains() {
        let line = "g\tfreestyle\t15\tD\t7,7 1,0 8,8\n";
        let text = format!("#game_id\trule\tboard\twinner\tmoves\n{line}{line}{line}");
        let data = Dataset::parse(Path::new("one.tsv"), &text, Rule::Freestyle, &[]).unwrap();
        assert_eq!(data.games.len(), 3);
        for seed in 0..40 {
            for fraction in [0.05, 0.5, 0.99] {
                let (train, val) = data.split(fraction, seed);
                assert_eq!((train.len(), val.len()), (3, 0), "{seed} {fraction}");
            }
        }
    }

    /// A warning quotes the record's text only up to a bound: a line
    /// holding one enormous move was kept whole, a dozen times over.
    #[test]
    fn warnings_quote_a_bounded_excerpt() {
        let huge = "9".repeat(100_000);
        let mut text = String::from("#game_id\trule\tboard\twinner\tmoves\n");
        for g in 0..20 {
            text.push_str(&format!("g{g}\tfreestyle\t15\tD\t7,7 {huge},1\n"));
        }
        let data = Dataset::parse(Path::new("huge.tsv"), &text, Rule::Freestyle, &[]).unwrap();
        assert_eq!(data.stats.malformed, 20);
        assert_eq!(data.stats.warnings.len(), MAX_WARNINGS);
        for w in &data.stats.warnings {
            assert!(w.starts_with("huge.tsv:"), "{}", &w[..40]);
            assert!(w.chars().count() <= MAX_WARNING_CHARS + 3, "{}", w.len());
            assert!(w.ends_with("..."));
        }
    }

    /// A folder's pipe named like a record file is passed over: opening it
    /// waits for a writer that never comes.
    #[cfg(unix)]
    #[test]
    fn a_pipe_inside_a_folder_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.tsv"),
            "#rule\tboard\twinner\tmoves\nfreestyle\t15\tD\t7,7 8,8\n",
        )
        .unwrap();
        let pipe = dir.path().join("b.tsv");
        let made = std::process::Command::new("mkfifo")
            .arg(&pipe)
            .status()
            .unwrap();
        assert!(made.success());
        let folder = dir.path().to_path_buf();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(Dataset::load(&[folder], Rule::Freestyle, &[]).map(|d| d.games.len()));
        });
        let loaded = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the load waits on the pipe");
        assert_eq!(loaded, Ok(1));
    }

    /// A game's images under the board's symmetries hash alike (self-play
    /// plays its openings turned at random): one side of the split for all.
    #[test]
    fn a_game_and_its_mirror_images_stay_on_one_side_of_the_split() {
        let mut text = String::from("#game_id\trule\tboard\twinner\tmoves\n");
        let game = [(7, 7), (9, 8), (6, 5), (10, 3)];
        for k in 0..8u8 {
            let moves: Vec<String> = game
                .iter()
                .map(|&(x, y)| {
                    let (x, y) = Symmetry::new(k).map_cell(x, y, 15, 15);
                    format!("{x},{y}")
                })
                .collect();
            text.push_str(&format!(
                "image{k}\tfreestyle\t15\tD\t{}\n",
                moves.join(" ")
            ));
        }
        text.push_str("other\tfreestyle\t15\tD\t7,7 8,8 9,9 1,1\n");
        let data = Dataset::parse(Path::new("images.tsv"), &text, Rule::Freestyle, &[]).unwrap();
        assert_eq!(data.games.len(), 9);
        let hashes: Vec<u64> = data.games.iter().map(|g| game_hash(g, 5)).collect();
        assert!(hashes[..8].iter().all(|&h| h == hashes[0]), "{hashes:?}");
        assert_ne!(hashes[8], hashes[0]);
        for seed in 0..20 {
            let (train, val) = data.split(0.5, seed);
            let images_in_val = val.iter().filter(|&&i| i < 8).count();
            assert!(
                images_in_val == 0 || images_in_val == 8,
                "seed {seed}: {val:?} {train:?}"
            );
        }
    }

    /// Files joined end to end: each header names the columns of the
    /// lines after it, so the self-play game keeps its search column.
    #[test]
    fn a_second_header_names_the_columns_after_it() {
        let moves = "7,7 8,8 7,8 9,9 7,9 10,10 7,10 11,11 7,11";
        let text = format!(
            "#game_id\trule\tboard\twinner\tn_opening\tmoves\n\
             plain\tfreestyle\t15\tB\t2\t{moves}\n\
             # a comment\n\
             #game_id\trule\tboard\twinner\tn_opening\tmoves\tsearch\n\
             sp\tfreestyle\t15\tB\t2\t{moves}\t500:0:500/7,8=3 - - - - - -\n\
             unsearched\tfreestyle\t15\tB\t2\t{moves}\t- - - - - - -\n"
        );
        let data = Dataset::parse(Path::new("joined.tsv"), &text, Rule::Freestyle, &[]).unwrap();
        let targets: Vec<(&str, usize)> = data
            .games
            .iter()
            .map(|g| (g.id.as_str(), g.targets()))
            .collect();
        assert_eq!(targets, [("plain", 7), ("sp", 1)]);
        // A game without a searched position teaches nothing: not used.
        assert_eq!((data.stats.games, data.stats.no_targets), (2, 1));
    }

    #[test]
    fn renju_visits_on_black_forbidden_points_are_malformed() {
        // After the opening black to move, and 8,7 a double three (row 7:
        // 6,7 8,7 7,7; column 8: 8,5 8,6 8,7); black then makes five on row 12.
        let head = "#game_id\trule\tboard\twinner\tn_opening\tmoves\tsearch\n";
        let moves = "6,7 0,0 7,7 0,2 8,5 0,4 8,6 0,6 \
                     3,12 0,8 4,12 0,10 5,12 0,12 6,12 0,14 7,12";
        let rest = " - - - - - - - -";
        let text = format!(
            "{head}forbidden\trenju\t15\tB\t8\t{moves}\t500:0:500/8,7=5;3,12=3{rest}\n\
             allowed\trenju\t15\tB\t8\t{moves}\t500:0:500/9,7=5;3,12=3{rest}\n"
        );
        let data = Dataset::parse(Path::new("sp.tsv"), &text, Rule::Renju, &[]).unwrap();
        let ids: Vec<&str> = data.games.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(ids, ["allowed"]);
        assert_eq!(data.stats.malformed, 1);
        // The same visits are white's or freestyle's to make.
        let free = text.replace("\trenju\t", "\tfreestyle\t");
        let data = Dataset::parse(Path::new("sp.tsv"), &free, Rule::Freestyle, &[]).unwrap();
        assert_eq!(data.games.len(), 2);
    }

    #[test]
    fn a_byte_order_mark_and_an_unknown_rule_are_handled() {
        let text = "\u{feff}#game_id\trule\tboard\twinner\tmoves\n\
                    a\tfreestyle\t15\tD\t7,7 8,8\n\
                    b\trenjuu\t15\tD\t7,7 8,8\n\
                    c\trenju\t15\tD\t7,7 8,8\n";
        let data = Dataset::parse(Path::new("bom.tsv"), text, Rule::Freestyle, &[]).unwrap();
        assert_eq!(data.games.len(), 1);
        // A rule that is none is malformed; another rule is only skipped.
        assert_eq!((data.stats.malformed, data.stats.other_rule), (1, 1));
    }

    #[test]
    fn drawn_games_lose_their_targets_after_the_board_is_dead() {
        // A full 7x7 board, black where (x + 2y) mod 4 < 2: every line of
        // five holds both colours, so no five ever stands and it is a draw.
        let black: Vec<Point> = (0..7u8)
            .flat_map(|y| (0..7u8).map(move |x| p(x, y)))
            .filter(|q| (q.x() + 2 * q.y()) % 4 < 2)
            .collect();
        let white: Vec<Point> = (0..7u8)
            .flat_map(|y| (0..7u8).map(move |x| p(x, y)))
            .filter(|q| (q.x() + 2 * q.y()) % 4 >= 2)
            .collect();
        let mut moves = Vec::new();
        for (i, &b) in black.iter().enumerate() {
            moves.push(b);
            moves.extend(white.get(i));
        }
        let list: Vec<String> = moves
            .iter()
            .map(|q| format!("{},{}", q.x(), q.y()))
            .collect();
        let text = format!(
            "#game_id\trule\tboard\twinner\tn_opening\tmoves\n\
             drawn\tfreestyle\t7\tD\t2\t{}\n",
            list.join(" ")
        );
        let data = Dataset::parse(Path::new("d.tsv"), &text, Rule::Freestyle, &[]).unwrap();
        let game = &data.games[0];
        assert_eq!(game.outcome, Outcome::Draw);
        let end = game.end_target as usize;
        assert!(2 < end && end < 49, "trimmed at {end}");
        // The position of the last target is still open, the one after is dead.
        let size = BoardSize::square(7).unwrap();
        let before = Board::from_moves(size, Rule::Freestyle, &moves[..end - 1]).unwrap();
        let after = Board::from_moves(size, Rule::Freestyle, &moves[..end]).unwrap();
        assert!(!before.is_dead_draw() && after.is_dead_draw());
        assert_eq!(game.targets(), end - 2);
        assert_eq!(data.stats.dead_draw_positions, 49 - end);
        assert_eq!(data.stats.positions, end - 2);

        // A won game keeps every target.
        let mut won = check_game(
            "w".into(),
            BoardSize::square(15).unwrap(),
            Rule::Freestyle,
            vec![
                p(0, 0),
                p(0, 5),
                p(1, 0),
                p(1, 5),
                p(2, 0),
                p(2, 5),
                p(3, 0),
                p(3, 5),
                p(4, 0),
            ],
            2,
            None,
            false,
        )
        .unwrap();
        assert_eq!(won.trim_dead_draw(Rule::Freestyle), 0);
        assert_eq!(won.end_target, 9);
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
        let game = check_game(
            "g".into(),
            size,
            Rule::Freestyle,
            moves.clone(),
            3,
            None,
            false,
        )
        .unwrap();
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
            false,
        );
        assert!(matches!(r, Err(Reject::Mismatch(_))));
        // A record that says a five ended it needs one on the board.
        let r = check_game(
            "g".into(),
            size,
            Rule::Freestyle,
            moves[..8].to_vec(),
            0,
            Some(Outcome::Win(Color::Black)),
            true,
        );
        assert!(matches!(r, Err(Reject::Mismatch(_))), "{r:?}");
        let r = check_game(
            "g".into(),
            size,
            Rule::Freestyle,
            moves.clone(),
            0,
            Some(Outcome::Win(Color::Black)),
            true,
        );
        assert!(r.is_ok(), "{r:?}");
        // A move after the five.
        let mut longer = moves.clone();
        longer.push(p(9, 9));
        let r = check_game("g".into(), size, Rule::Freestyle, longer, 0, None, false);
        assert!(matches!(r, Err(Reject::AfterWin(8))));
        // An occupied cell.
        let r = check_game(
            "g".into(),
            size,
            Rule::Freestyle,
            vec![p(1, 1), p(1, 1)],
            0,
            None,
            false,
        );
        assert!(matches!(r, Err(Reject::Illegal(_))));
        // Unfinished without a recorded result (a PSQ of a forfeit): no
        // result to learn from; recorded as a draw, it is one.
        let unfinished = |opening: usize, recorded: Option<Outcome>| {
            check_game(
                "g".into(),
                size,
                Rule::Freestyle,
                moves[..4].to_vec(),
                opening,
                recorded,
                false,
            )
        };
        assert_eq!(unfinished(0, None).unwrap_err(), Reject::Undecided);
        assert_eq!(
            unfinished(0, Some(Outcome::Draw)).unwrap().outcome,
            Outcome::Draw
        );
        // Only the opening: no targets.
        let r = unfinished(4, Some(Outcome::Draw));
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
        let g = check_game("g".into(), size, Rule::Renju, moves.clone(), 0, None, false).unwrap();
        assert_eq!(g.outcome, Outcome::Win(Color::White));
        assert_eq!(g.end_target as usize, moves.len() - 1);
        // Under freestyle the same move is a winning overline.
        let g = check_game(
            "g".into(),
            size,
            Rule::Freestyle,
            moves.clone(),
            0,
            None,
            false,
        )
        .unwrap();
        assert_eq!(g.outcome, Outcome::Win(Color::Black));
        assert_eq!(g.end_target as usize, moves.len());
        // A forbidden move before the end.
        moves.push(p(12, 12));
        let r = check_game("g".into(), size, Rule::Renju, moves, 0, None, false);
        assert_eq!(r.unwrap_err(), Reject::Forbidden(10));
    }
}
