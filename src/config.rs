//! The configuration file (`config/wuzi.toml`): every setting of the
//! engine, documented there. Found with `--config`, or next to the binary
//! (`wuzi.toml` or `config/wuzi.toml` beside it, or two levels up, which
//! covers `target/release/`), or under `config/` in the working directory.
//! Relative paths in it are relative to the file's folder's parent when the
//! file sits in a `config/` folder, else to its own folder.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::nn::settings::InvalidSetting;
use crate::nn::NetworkSettings;
use crate::search::{SearchConfig, MAX_THREADS};

/// Why a configuration could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Not TOML, or a key or a type the configuration does not have (the
    /// message names the key and the line).
    #[error("{}", one_line_toml_error(.0))]
    Syntax(#[from] toml::de::Error),
    /// A value out of its range.
    #[error(transparent)]
    Invalid(#[from] InvalidSetting),
    #[error("config file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Any of the above, in the file at `path`.
    #[error("config file {}: {source}", path.display())]
    InFile {
        path: PathBuf,
        source: Box<ConfigError>,
    },
}

/// toml's error on one line, where it names the place and then the fault:
/// its own form spreads them over five lines with the source between, and
/// a Gomocup manager reads one line per answer.
fn one_line_toml_error(e: &toml::de::Error) -> String {
    let text = e.to_string();
    let mut lines = text.lines();
    let place = lines.next().unwrap_or_default().trim_end();
    let fault = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
    if place.is_empty() || place == fault {
        return fault;
    }
    // The quoted source line (`2 | threads = "many"`) names the key that a
    // type error's message leaves out.
    let source = lines
        .filter_map(|l| l.split_once(" | "))
        .find(|(n, _)| n.trim().parse::<usize>().is_ok())
        .map(|(_, line)| line.trim())
        .filter(|line| !line.is_empty());
    match source {
        Some(line) => {
            let line: String = line.chars().take(100).collect();
            format!("{place} ({line}): {fault}")
        }
        None => format!("{place}: {fault}"),
    }
}

/// All settings, with defaults for anything the file leaves out.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub engine: EngineSection,
    /// Declared by the network layer.
    pub network: NetworkSettings,
    /// Declared by the search itself.
    pub search: SearchConfig,
    pub time: TimeSection,
    pub log: LogSection,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct EngineSection {
    /// Search threads (INFO thread_num overrides).
    pub threads: usize,
    /// Memory limit of the whole process in MiB (the tree gets what the rest
    /// leaves) when the manager sends none; 0 for none, as `INFO
    /// max_memory 0`.
    pub max_memory_mb: u64,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TimeSection {
    /// Time kept in reserve on every move for the manager, ms.
    pub protocol_lag_ms: u64,
    /// Think on the opponent's time after each move.
    pub auto_pondering: bool,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct LogSection {
    /// Write a log file per START (commands, answers, search summaries).
    pub enabled: bool,
    /// Folder of the log files.
    pub dir: PathBuf,
}

impl Default for EngineSection {
    /// The search's own defaults (one source of truth).
    fn default() -> EngineSection {
        let search = SearchConfig::default();
        EngineSection {
            threads: search.threads,
            max_memory_mb: (search.max_memory >> 20) as u64,
        }
    }
}

impl Default for TimeSection {
    fn default() -> TimeSection {
        TimeSection {
            protocol_lag_ms: 30,
            auto_pondering: false,
        }
    }
}

impl Default for LogSection {
    fn default() -> LogSection {
        LogSection {
            enabled: false,
            dir: PathBuf::from("logs"),
        }
    }
}

/// Longest configuration file read (the shipped one is a few KiB).
const MAX_CONFIG_BYTES: u64 = 1 << 20;

impl Config {
    /// Parses a configuration text; errors name the key and line.
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text)?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), InvalidSetting> {
        InvalidSetting::check(
            (1..=MAX_THREADS).contains(&self.engine.threads),
            "engine",
            "threads",
            &format!("must be 1..={MAX_THREADS}"),
        )?;
        InvalidSetting::check(
            i64::try_from(self.time.protocol_lag_ms)
                .is_ok_and(|lag| lag <= crate::gomocup::MAX_PROTOCOL_LAG_MS),
            "time",
            "protocol_lag_ms",
            &format!("must be at most {}", crate::gomocup::MAX_PROTOCOL_LAG_MS),
        )?;
        self.search.validate()?;
        self.network.validate()?;
        Ok(())
    }

    /// Reads the file at `path`, resolving relative paths against its base.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let read_error = |source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        };
        // Said as such: Windows reports a folder as "access denied".
        if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
            return Err(read_error(std::io::Error::other("a folder, not a file")));
        }
        // Bounded: a path such as /dev/zero must not fill the memory.
        let text =
            crate::bounded_read::read_file_text(path, MAX_CONFIG_BYTES).map_err(read_error)?;
        let mut config = Config::parse(&text).map_err(|e| ConfigError::InFile {
            path: path.to_path_buf(),
            source: Box::new(e),
        })?;
        config.resolve_paths(&base_of(path));
        Ok(config)
    }

    /// The search settings of this configuration.
    pub fn search_config(&self) -> SearchConfig {
        SearchConfig {
            threads: self.engine.threads,
            max_memory: match self.engine.max_memory_mb {
                0 => usize::MAX,
                mb => usize::try_from(mb).map_or(usize::MAX, |mb| mb.saturating_mul(1 << 20)),
            },
            ..self.search.clone()
        }
    }

    /// The configuration: `explicit` if given (it must exist), else the
    /// first file found in the usual places, else the defaults (with paths
    /// resolved against the install folder). Returns where it came from.
    pub fn locate(explicit: Option<&Path>) -> Result<(Config, Option<PathBuf>), ConfigError> {
        if let Some(path) = explicit {
            return Ok((Config::load(path)?, Some(path.to_path_buf())));
        }
        for candidate in candidate_files() {
            if candidate.is_file() {
                return Ok((Config::load(&candidate)?, Some(candidate)));
            }
        }
        let mut config = Config::default();
        config.resolve_paths(&install_base());
        Ok((config, None))
    }

    fn resolve_paths(&mut self, base: &Path) {
        self.network.resolve_paths(base);
        crate::nn::settings::resolve_relative(&mut self.log.dir, base);
    }
}

/// Relative paths of a file in a `config/` folder are relative to the
/// folder above it (the install or project folder). The file's own path
/// is made absolute first: `--config wuzi.toml` run inside `config/` names
/// the same file, and the same networks, as its full path does.
fn base_of(path: &Path) -> PathBuf {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    if dir.file_name().is_some_and(|n| n == "config") {
        dir.parent().map(Path::to_path_buf).unwrap_or(dir)
    } else {
        dir
    }
}

fn exe_dir() -> Option<PathBuf> {
    std::env::current_exe()
        .ok()?
        .parent()
        .map(Path::to_path_buf)
}

/// Where the binary is installed: its folder, or the project folder when it
/// runs from a cargo target folder: `target/<profile>/`, or deeper where a
/// build has its own target folder or a target triple
/// (`target/native/release/`, `target/<triple>/release/`).
fn install_base() -> PathBuf {
    let Some(dir) = exe_dir() else {
        return PathBuf::from(".");
    };
    project_of(&dir).unwrap_or(dir)
}

/// The project folder of a binary in `dir`: the parent of the nearest
/// `target` folder at most three levels up, if it is a cargo project (an
/// installed brain in some `.../target/...` folder is not).
fn project_of(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .skip(1)
        .take(3)
        .find(|a| a.file_name().is_some_and(|n| n == "target"))
        .and_then(Path::parent)
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(Path::to_path_buf)
}

fn candidate_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Some(dir) = exe_dir() {
        files.push(dir.join("wuzi.toml"));
        files.push(dir.join("config").join("wuzi.toml"));
    }
    files.push(install_base().join("config").join("wuzi.toml"));
    files.push(PathBuf::from("config").join("wuzi.toml"));
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::EvaluatorThreads;

    #[test]
    fn binaries_in_cargo_target_folders_find_the_project() {
        let project = tempfile::tempdir().expect("tempdir");
        let project = project.path();
        std::fs::write(project.join("Cargo.toml"), "").expect("write");
        for dir in [
            "target/release",
            "target/native/release",
            "target/x86_64-pc-windows-gnu/release",
            "target/native/x86_64-unknown-linux-musl/release",
        ] {
            assert_eq!(
                project_of(&project.join(dir)).as_deref(),
                Some(project),
                "{dir}"
            );
        }
        // An installed brain is its own base, even under a folder named
        // target that is no cargo project.
        assert_eq!(project_of(&project.join("games/wuzi")), None);
        let elsewhere = tempfile::tempdir().expect("tempdir");
        assert_eq!(project_of(&elsewhere.path().join("target/wuzi")), None);
    }

    #[test]
    fn defaults_and_partial_files() {
        let config = Config::parse("[engine]\nthreads = 4\n").unwrap();
        assert_eq!(config.engine.threads, 4);
        assert_eq!(config.search, SearchConfig::default());
    }

    #[test]
    fn evaluator_threads_are_auto_or_a_number() {
        assert_eq!(
            Config::default().network.evaluator_threads,
            EvaluatorThreads::PerSearchThread
        );
        let parse = |v: &str| Config::parse(&format!("[network]\nevaluator_threads = {v}\n"));
        assert_eq!(
            parse("\"auto\"").unwrap().network.evaluator_threads,
            EvaluatorThreads::PerSearchThread
        );
        assert_eq!(
            parse("3").unwrap().network.evaluator_threads,
            EvaluatorThreads::Fixed(3)
        );
        for bad in ["0", "-1", "\"many\"", "1.5", "true"] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(e.contains("evaluator threads"), "{bad}: {e}");
            assert!(e.contains("expected auto or a number"), "{bad}: {e}");
        }
    }

    #[test]
    fn search_batches_are_auto_or_a_number() {
        use crate::nn::Backend;
        use crate::search::SearchBatch;
        assert_eq!(Config::default().search.batch_size, SearchBatch::Auto);
        let parse = |v: &str| Config::parse(&format!("[search]\nbatch_size = {v}\n"));
        let auto = parse("\"auto\"").unwrap().search.batch_size;
        assert_eq!(auto.leaves(Some(Backend::Native)), SearchBatch::NATIVE);
        assert_eq!(auto.leaves(None), SearchBatch::NATIVE);
        assert_eq!(auto.leaves(Some(Backend::Torch)), SearchBatch::TORCH);
        let four = parse("4").unwrap().search.batch_size;
        assert_eq!(four, SearchBatch::Fixed(4));
        assert_eq!(four.leaves(Some(Backend::Native)), 4);
        assert_eq!(four.leaves(Some(Backend::Torch)), 4);
        for bad in ["0", "-1", "\"many\"", "1.5", "true"] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(e.contains("batch_size"), "{bad}: {e}");
            assert!(e.contains("expected auto or a number"), "{bad}: {e}");
        }
    }

    #[test]
    fn errors_name_the_key() {
        // Not the configuration's shape: the parser's message names the key.
        for (text, key) in [
            ("[engine]\nthreads = \"many\"\n", "threads"),
            ("[search]\nstlye = 3\n", "stlye"),
            ("[nonsense]\n", "nonsense"),
        ] {
            match Config::parse(text) {
                Err(e @ ConfigError::Syntax(_)) => {
                    // On one line, with the place: a Gomocup manager reads
                    // one line per answer.
                    let e = e.to_string();
                    assert!(e.contains(key), "{e}");
                    assert!(!e.contains('\n') && e.contains("at line"), "{e}");
                }
                other => panic!("{text:?}: {other:?}"),
            }
        }
        // A value out of range: the key as the file spells it.
        for (text, key) in [
            ("[engine]\nthreads = 0\n", "engine.threads"),
            ("[search]\nstyle = 9\n", "search.style"),
            (
                "[search]\npolicy_temperature = 0.0\n",
                "search.policy_temperature",
            ),
            (
                "[search]\npolicy_temperature = nan\n",
                "search.policy_temperature",
            ),
            ("[search]\nsafety_share = 0.8\n", "search.safety_share"),
            ("[search]\nc_puct = 1e38\n", "search.c_puct"),
            ("[search]\nc_puct_log = -1.0\n", "search.c_puct_log"),
            ("[search]\nc_puct_log = nan\n", "search.c_puct_log"),
            ("[search]\nc_puct_log = 1e38\n", "search.c_puct_log"),
            ("[search]\nc_puct_base = 0.0\n", "search.c_puct_base"),
            (
                "[search]\nc_puct_stdev_scale = -0.1\n",
                "search.c_puct_stdev_scale",
            ),
            (
                "[search]\nc_puct_stdev_scale = nan\n",
                "search.c_puct_stdev_scale",
            ),
            (
                "[search]\nc_puct_stdev_prior = 0.0\n",
                "search.c_puct_stdev_prior",
            ),
            (
                "[search]\nc_puct_stdev_prior = inf\n",
                "search.c_puct_stdev_prior",
            ),
            ("[search]\nc_puct_base = 1e-40\n", "search.c_puct_base"),
            ("[search]\nc_puct_base = inf\n", "search.c_puct_base"),
            ("[search]\nfpu_reduction = -1.0\n", "search.fpu_reduction"),
            ("[search]\nfpu_reduction = 1.5\n", "search.fpu_reduction"),
            ("[search]\nfpu_reduction = nan\n", "search.fpu_reduction"),
            ("[search]\ndraw_penalty = -0.1\n", "search.draw_penalty"),
            ("[search]\ndraw_penalty = nan\n", "search.draw_penalty"),
            ("[search]\ndraw_penalty = 1.5\n", "search.draw_penalty"),
            (
                "[search]\nsafety_nodes_per_ms = 0\n",
                "search.safety_nodes_per_ms",
            ),
            ("[network]\ndevice = \"tpu\"\n", "network.device"),
            // Counts that would size buffers or threads past any use.
            ("[engine]\nthreads = 1000000\n", "engine.threads"),
            (
                "[search]\nbatch_size = 1000000000000\n",
                "search.batch_size",
            ),
            ("[search]\npipeline = 0\n", "search.pipeline"),
            (
                "[search]\nroot_vct_nodes = 1000000000000\n",
                "search.root_vct_nodes",
            ),
            (
                "[search]\nleaf_vcf_nodes = 100000000\n",
                "search.leaf_vcf_nodes",
            ),
            (
                "[time]\nprotocol_lag_ms = 9223372036854775807\n",
                "time.protocol_lag_ms",
            ),
            (
                "[search]\ncandidate_distance = 200\n",
                "search.candidate_distance",
            ),
            (
                "[search]\ncandidate_distance = 0\n",
                "search.candidate_distance",
            ),
            (
                "[network]\nbatch_size = 1000000000000\n",
                "network.batch_size",
            ),
            (
                "[network]\ntorch_threads = 100000\n",
                "network.torch_threads",
            ),
            (
                "[network]\nevaluator_threads = 100000\n",
                "network.evaluator_threads",
            ),
        ] {
            match Config::parse(text) {
                Err(ConfigError::Invalid(e)) => assert_eq!(e.key, key, "{text:?}: {e}"),
                other => panic!("{text:?}: {other:?}"),
            }
        }
        let tuned = Config::parse("[search]\nsafety_share = 0.2\nsafety_nodes_per_ms = 300\n")
            .unwrap()
            .search_config()
            .safety_time();
        assert_eq!((tuned.share, tuned.nodes_per_ms), (0.2, 300));
        let choice = |text: &str| Config::parse(text).unwrap().search_config().move_choice();
        let visits = choice("[search]\nfinal_move = \"visits\"\nstyle = 4\n");
        assert_eq!(visits.rule, crate::search::select::FinalMove::MostVisits);
        assert_eq!(visits.draw_weight, 0.0);
        assert_eq!(
            choice("").rule,
            crate::search::select::FinalMove::LowerConfidenceBound
        );
    }

    #[test]
    fn the_shipped_file_parses_and_matches_the_defaults() {
        let text = include_str!("../config/wuzi.toml");
        let config = Config::parse(text).unwrap();
        let defaults = Config {
            log: config.log.clone(),
            ..Config::default()
        };
        assert_eq!(config, defaults, "config/wuzi.toml documents the defaults");
    }

    /// Each search parameter is declared once (`SearchConfig`); the shipped
    /// file must document exactly that set, no more and no fewer.
    #[test]
    fn the_shipped_file_documents_every_search_parameter() {
        let text = include_str!("../config/wuzi.toml");
        let file: toml::Table = toml::from_str(text).unwrap();
        let documented: std::collections::BTreeSet<String> =
            file["search"].as_table().unwrap().keys().cloned().collect();
        let declared: toml::Table =
            toml::from_str(&toml::to_string(&SearchConfig::default()).unwrap()).unwrap();
        let declared: std::collections::BTreeSet<String> = declared.keys().cloned().collect();
        assert_eq!(documented, declared);
        assert!(declared.contains("c_puct") && !declared.contains("threads"));
    }

    /// A folder given as the file is said to be one (Windows would say
    /// "access denied").
    #[test]
    fn a_folder_is_not_a_config_file() {
        let dir = tempfile::tempdir().unwrap();
        let e = Config::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("a folder, not a file"), "{e}");
    }

    #[test]
    fn paths_are_relative_to_the_folder_above_config() {
        assert_eq!(
            base_of(Path::new("/opt/wuzi/config/wuzi.toml")),
            PathBuf::from("/opt/wuzi")
        );
        assert_eq!(
            base_of(Path::new("/opt/wuzi/wuzi.toml")),
            PathBuf::from("/opt/wuzi")
        );
        // Relative names of the file resolve as its full path does.
        let here = std::env::current_dir().unwrap();
        assert_ne!(here.file_name(), Some(std::ffi::OsStr::new("config")));
        for relative in ["wuzi.toml", "./wuzi.toml"] {
            assert_eq!(base_of(Path::new(relative)), here, "{relative}");
        }
        assert_eq!(base_of(Path::new("config/wuzi.toml")), here);
        assert_eq!(base_of(Path::new("./config/wuzi.toml")), here);
    }
}
