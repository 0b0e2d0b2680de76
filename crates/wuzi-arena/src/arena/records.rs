//! Where a match's games are written: each game's log, its PSQ record, its
//! SGF (one file for the match, or one per game) and its line of TSV (one
//! file for the match).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::arena::brain::GameSettings;
use crate::arena::result::GameSummary;
use crate::arena::ArenaError;
use wuzi_formats::record::{psq_text, sgf_text, SgfInfo};
use wuzi_formats::tsv::{self, TsvGame};

/// Where the SGF records go.
pub(crate) enum SgfTarget {
    /// Every game in one file.
    File(PathBuf),
    /// One file per game in a folder.
    Dir(PathBuf),
}

/// Where a match's records go; each is optional.
pub(crate) struct RecordTargets {
    pub psq: Option<PathBuf>,
    pub sgf: Option<SgfTarget>,
    pub tsv: Option<PathBuf>,
    pub log_dir: Option<PathBuf>,
}

impl RecordTargets {
    /// `sgf` is one file where it ends in `.sgf`, a folder otherwise.
    pub fn new(
        psq: Option<PathBuf>,
        sgf: Option<PathBuf>,
        tsv: Option<PathBuf>,
        log_dir: Option<PathBuf>,
    ) -> Self {
        let sgf = sgf.map(|p| {
            if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("sgf")) {
                SgfTarget::File(p)
            } else {
                SgfTarget::Dir(p)
            }
        });
        RecordTargets {
            psq,
            sgf,
            tsv,
            log_dir,
        }
    }
}

/// The error of an operation on `path`.
pub(crate) fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> ArenaError + '_ {
    move |source| ArenaError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn game_file(dir: &Path, index: usize, ext: &str) -> PathBuf {
    dir.join(format!("game_{:05}.{ext}", index + 1))
}

/// Writes (or, with `append`, adds to) the log of game `index` in `dir`.
pub(crate) fn write_log(
    dir: &Path,
    index: usize,
    text: &str,
    append: bool,
) -> Result<(), ArenaError> {
    let path = game_file(dir, index, "log");
    let mut file = fs::OpenOptions::new()
        .create(true)
        .append(append)
        .write(true)
        .truncate(!append)
        .open(&path)
        .map_err(io_error(&path))?;
    file.write_all(text.as_bytes()).map_err(io_error(&path))
}

/// Creates (truncating) the file at `path` and the folders above it.
fn create_with_parent(path: &Path) -> Result<fs::File, ArenaError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(io_error(parent))?;
    }
    fs::File::create(path).map_err(io_error(path))
}

/// Writes the records of each finished game.
pub(crate) struct Recorder<'a> {
    targets: &'a RecordTargets,
    labels: &'a [String; 2],
    settings: &'a GameSettings,
    sgf_file: Option<fs::File>,
    tsv_file: Option<fs::File>,
}

impl<'a> Recorder<'a> {
    /// Creates the folders and the match's SGF file.
    pub fn new(
        targets: &'a RecordTargets,
        labels: &'a [String; 2],
        settings: &'a GameSettings,
    ) -> Result<Recorder<'a>, ArenaError> {
        for dir in [targets.psq.as_ref(), targets.log_dir.as_ref()]
            .into_iter()
            .flatten()
        {
            fs::create_dir_all(dir).map_err(io_error(dir))?;
        }
        let sgf_file = match &targets.sgf {
            Some(SgfTarget::Dir(dir)) => {
                fs::create_dir_all(dir).map_err(io_error(dir))?;
                None
            }
            Some(SgfTarget::File(path)) => Some(create_with_parent(path)?),
            None => None,
        };
        let tsv_file = match &targets.tsv {
            Some(path) => Some(create_with_parent(path).and_then(|mut file| {
                writeln!(file, "{}", tsv::header_without_search())
                    .map_err(io_error(path))
                    .map(|()| file)
            })?),
            None => None,
        };
        Ok(Recorder {
            targets,
            labels,
            settings,
            sgf_file,
            tsv_file,
        })
    }

    pub fn record(&mut self, g: &GameSummary) -> Result<(), ArenaError> {
        let labels = self.labels;
        let (black, white) = (&labels[g.black], &labels[1 - g.black]);
        if let Some(dir) = &self.targets.psq {
            let path = game_file(dir, g.index, "psq");
            fs::write(&path, psq_text(self.settings.size, &g.moves, black, white))
                .map_err(io_error(&path))?;
        }
        if let (Some(file), Some(path)) = (&mut self.tsv_file, &self.targets.tsv) {
            let game = TsvGame {
                id: format!("game_{:05}", g.index + 1),
                year: None,
                league: "match".to_string(),
                rule: self.settings.rule,
                size: self.settings.size,
                black: black.clone(),
                white: white.clone(),
                winner: g.outcome,
                end: g.reason.tsv_end().to_string(),
                opening: g.opening_stones,
                moves: g.moves.iter().map(|m| m.point).collect(),
                search: None,
            };
            // One write a line: a match cut off leaves whole lines.
            let line = format!("{}\n", game.line());
            file.write_all(line.as_bytes()).map_err(io_error(path))?;
        }
        if self.targets.sgf.is_some() {
            let comment = format!(
                "opening {} ({} stones); {}",
                g.opening,
                g.opening_stones,
                g.describe(labels)
            );
            let info = SgfInfo {
                size: self.settings.size,
                rule: self.settings.rule,
                black,
                white,
                result: &g.sgf_result(),
                comment: &comment,
                game_name: &format!("game {}", g.index + 1),
            };
            let text = sgf_text(&info, &g.moves);
            match (&mut self.sgf_file, &self.targets.sgf) {
                (Some(file), Some(SgfTarget::File(path))) => {
                    file.write_all(text.as_bytes()).map_err(io_error(path))?
                }
                (_, Some(SgfTarget::Dir(dir))) => {
                    let path = game_file(dir, g.index, "sgf");
                    fs::write(&path, text).map_err(io_error(&path))?
                }
                _ => {}
            }
        }
        Ok(())
    }
}
