//! The configuration file (`config/wuzi.toml`): every setting of the
//! engine, documented there. Found with `--config`, or next to the binary
//! (`wuzi.toml` or `config/wuzi.toml` beside it, or two levels up, which
//! covers `target/release/`), or under `config/` in the working directory.
//! Relative paths in it are relative to the file's folder's parent when the
//! file sits in a `config/` folder, else to its own folder.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::game::Rule;
use crate::nn::service::EvaluatorThreads;
use crate::search::{SafetyNetTime, SearchConfig};

/// All settings, with defaults for anything the file leaves out.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub engine: EngineSection,
    pub network: NetworkSection,
    pub search: SearchSection,
    pub time: TimeSection,
    pub log: LogSection,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct EngineSection {
    /// Search threads (INFO thread_num overrides).
    pub threads: usize,
    /// Memory limit of the search tree in MiB when the manager sends none.
    pub max_memory_mb: u64,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct NetworkSection {
    /// `cpu`, `auto`, `cuda` or `cuda:N` (falls back to the CPU).
    pub device: String,
    /// `auto`, `native` or `torch`: what evaluates the network.
    pub backend: String,
    /// `auto`, `avx512`, `avx2` or `portable`: the instruction set of the
    /// native kernels (a CPU without it uses its widest).
    pub isa: String,
    /// Evaluator threads, each running whole batches: `"auto"` (as many
    /// as the search threads on a CPU, one on a GPU) or a number.
    #[serde(deserialize_with = "evaluator_threads")]
    pub evaluator_threads: EvaluatorThreads,
    /// libtorch CPU threads per evaluator.
    pub torch_threads: usize,
    /// Largest batch an evaluator runs.
    pub batch_size: usize,
    /// `none`, `random` or `all` board symmetries per evaluation.
    pub symmetry: String,
    /// `auto`, `fp32`, `bf16` or `half`: the inference precision.
    pub precision: String,
    /// Network file per rule (caro uses the freestyle network when empty).
    pub freestyle: PathBuf,
    pub standard: PathBuf,
    pub renju: PathBuf,
    pub caro: PathBuf,
    /// Network file per rule when the precision resolves to fp32 (a CPU
    /// without bf16 hardware, where a larger network is too slow); empty:
    /// the rule's network everywhere. Caro uses freestyle's when empty.
    pub freestyle_fp32: PathBuf,
    pub standard_fp32: PathBuf,
    pub renju_fp32: PathBuf,
    pub caro_fp32: PathBuf,
    /// When a rule's network file is missing or unusable: `false` refuses
    /// to play that rule (an error naming the file), `true` plays it with
    /// the tactics and a uniform policy.
    pub tactics_only_fallback: bool,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SearchSection {
    /// Leaves each search thread gathers per network call.
    pub batch_size: usize,
    /// Batches each search thread keeps with the network at once (2: it
    /// gathers the next while the network works; 1: deterministic).
    pub pipeline: usize,
    pub c_puct: f32,
    pub fpu_reduction: f32,
    /// Softmax temperature of the policy (above 1: flatter priors).
    pub policy_temperature: f32,
    /// 0 defensive .. 2 classic .. 4 offensive (INFO style overrides).
    pub style: u8,
    /// VCF solver budget per new leaf (nodes).
    pub leaf_vcf_nodes: u64,
    /// VCT solver budget at the root (nodes).
    pub root_vct_nodes: u64,
    /// Opponent's VCF budget per new leaf (nodes).
    pub opponent_vcf_nodes: u64,
    /// VCT budget per new node within `vct_plies` of the root (nodes).
    pub vct_nodes: u64,
    pub vct_plies: u8,
    /// Root safety net: the opponent's VCT budget after the chosen move.
    pub safety_vct_nodes: u64,
    /// Share of each move's target time kept for the safety net (at most
    /// 200 ms).
    pub safety_share: f32,
    /// Solver nodes per millisecond the safety net's budget assumes.
    pub safety_nodes_per_ms: u64,
    /// Candidate moves within this many cells of a stone.
    pub candidate_distance: u8,
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

impl Default for Config {
    fn default() -> Config {
        Config {
            engine: EngineSection::default(),
            network: NetworkSection::default(),
            search: SearchSection::default(),
            time: TimeSection::default(),
            log: LogSection::default(),
        }
    }
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

impl Default for NetworkSection {
    fn default() -> NetworkSection {
        NetworkSection {
            device: "auto".to_string(),
            backend: "auto".to_string(),
            isa: "auto".to_string(),
            evaluator_threads: EvaluatorThreads::PerSearchThread,
            torch_threads: 1,
            batch_size: 16,
            symmetry: "random".to_string(),
            precision: "auto".to_string(),
            freestyle: PathBuf::from("networks/freestyle-6x64.safetensors"),
            standard: PathBuf::from("networks/standard15-8x64.safetensors"),
            renju: PathBuf::from("networks/renju15-6x64.safetensors"),
            caro: PathBuf::new(),
            freestyle_fp32: PathBuf::from("networks/freestyle-4x32.safetensors"),
            standard_fp32: PathBuf::from("networks/standard15-4x32.safetensors"),
            renju_fp32: PathBuf::from("networks/renju15-4x32.safetensors"),
            caro_fp32: PathBuf::new(),
            tactics_only_fallback: false,
        }
    }
}

impl Default for SearchSection {
    /// The search's own defaults (one source of truth).
    fn default() -> SearchSection {
        let search = SearchConfig::default();
        SearchSection {
            batch_size: search.batch_size,
            pipeline: search.pipeline,
            c_puct: search.c_puct,
            fpu_reduction: search.fpu_reduction,
            policy_temperature: search.policy_temperature,
            style: search.style,
            leaf_vcf_nodes: search.leaf_vcf_nodes,
            root_vct_nodes: search.root_vct_nodes,
            opponent_vcf_nodes: search.opponent_vcf_nodes,
            vct_nodes: search.vct_nodes,
            vct_plies: search.vct_plies,
            safety_vct_nodes: search.safety_vct_nodes,
            safety_share: search.safety_time.share,
            safety_nodes_per_ms: search.safety_time.nodes_per_ms,
            candidate_distance: search.candidate_distance,
        }
    }
}

impl Default for TimeSection {
    fn default() -> TimeSection {
        TimeSection {
            protocol_lag_ms: 100,
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

impl Config {
    /// Parses a configuration text; errors name the key and line.
    pub fn parse(text: &str) -> Result<Config, String> {
        let config: Config =
            toml::from_str(text).map_err(|e| e.to_string().trim_end().to_string())?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), String> {
        let check = |ok: bool, key: &str, what: &str| {
            if ok {
                Ok(())
            } else {
                Err(format!("{key}: {what}"))
            }
        };
        check(
            self.engine.threads >= 1,
            "engine.threads",
            "must be at least 1",
        )?;
        check(
            self.network.torch_threads >= 1,
            "network.torch_threads",
            "must be at least 1",
        )?;
        check(
            self.network.batch_size >= 1,
            "network.batch_size",
            "must be at least 1",
        )?;
        check(
            self.search.batch_size >= 1,
            "search.batch_size",
            "must be at least 1",
        )?;
        check(self.search.style <= 4, "search.style", "must be 0..=4")?;
        check(
            self.search.c_puct > 0.0,
            "search.c_puct",
            "must be positive",
        )?;
        check(
            self.search.policy_temperature.is_finite() && self.search.policy_temperature > 0.0,
            "search.policy_temperature",
            "must be positive",
        )?;
        check(
            (0.0..=0.5).contains(&self.search.safety_share),
            "search.safety_share",
            "must be between 0 and 0.5",
        )?;
        check(
            self.search.safety_nodes_per_ms >= 1,
            "search.safety_nodes_per_ms",
            "must be at least 1",
        )?;
        check(
            self.network
                .symmetry
                .parse::<crate::nn::SymmetryMode>()
                .is_ok(),
            "network.symmetry",
            "must be none, random or all",
        )?;
        self.network
            .precision
            .parse::<crate::nn::PrecisionSetting>()
            .map_err(|e| format!("network.precision: {e}"))?;
        crate::nn::backend::check_device_name(&self.network.device)
            .map_err(|e| format!("network.device: {e}"))?;
        self.network
            .backend
            .parse::<crate::nn::BackendSetting>()
            .map_err(|e| format!("network.backend: {e}"))?;
        crate::nn::native::simd::parse_isa_setting(&self.network.isa)
            .map_err(|e| format!("network.isa: {e}"))?;
        Ok(())
    }

    /// Reads the file at `path`, resolving relative paths against its base.
    pub fn load(path: &Path) -> Result<Config, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("config file {}: {e}", path.display()))?;
        let mut config =
            Config::parse(&text).map_err(|e| format!("config file {}: {e}", path.display()))?;
        config.resolve_paths(&base_of(path));
        Ok(config)
    }

    /// The search settings of this configuration.
    pub fn search_config(&self) -> SearchConfig {
        SearchConfig {
            threads: self.engine.threads,
            batch_size: self.search.batch_size,
            pipeline: self.search.pipeline,
            c_puct: self.search.c_puct,
            fpu_reduction: self.search.fpu_reduction,
            policy_temperature: self.search.policy_temperature,
            style: self.search.style,
            leaf_vcf_nodes: self.search.leaf_vcf_nodes,
            root_vct_nodes: self.search.root_vct_nodes,
            opponent_vcf_nodes: self.search.opponent_vcf_nodes,
            vct_nodes: self.search.vct_nodes,
            vct_plies: self.search.vct_plies,
            safety_vct_nodes: self.search.safety_vct_nodes,
            safety_time: SafetyNetTime {
                share: self.search.safety_share,
                nodes_per_ms: self.search.safety_nodes_per_ms,
            },
            candidate_distance: self.search.candidate_distance,
            max_memory: (self.engine.max_memory_mb as usize).saturating_mul(1 << 20),
        }
    }

    /// The configuration: `explicit` if given (it must exist), else the
    /// first file found in the usual places, else the defaults (with paths
    /// resolved against the install folder). Returns where it came from.
    pub fn locate(explicit: Option<&Path>) -> Result<(Config, Option<PathBuf>), String> {
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
        let resolve = |p: &mut PathBuf| {
            if !p.as_os_str().is_empty() && p.is_relative() {
                *p = base.join(&*p);
            }
        };
        resolve(&mut self.network.freestyle);
        resolve(&mut self.network.standard);
        resolve(&mut self.network.renju);
        resolve(&mut self.network.caro);
        resolve(&mut self.network.freestyle_fp32);
        resolve(&mut self.network.standard_fp32);
        resolve(&mut self.network.renju_fp32);
        resolve(&mut self.network.caro_fp32);
        resolve(&mut self.log.dir);
    }

    /// The network file for `rule`.
    pub fn network_for(&self, rule: Rule) -> &Path {
        match rule {
            Rule::Freestyle => &self.network.freestyle,
            Rule::Standard => &self.network.standard,
            Rule::Renju => &self.network.renju,
            Rule::Caro if self.network.caro.as_os_str().is_empty() => &self.network.freestyle,
            Rule::Caro => &self.network.caro,
        }
    }

    /// The network file for `rule` when inference runs in fp32, if one
    /// other than [`Config::network_for`]'s is configured.
    pub fn fp32_network_for(&self, rule: Rule) -> Option<&Path> {
        let n = &self.network;
        let path = match rule {
            Rule::Freestyle => &n.freestyle_fp32,
            Rule::Standard => &n.standard_fp32,
            Rule::Renju => &n.renju_fp32,
            Rule::Caro if n.caro.as_os_str().is_empty() && n.caro_fp32.as_os_str().is_empty() => {
                &n.freestyle_fp32
            }
            Rule::Caro => &n.caro_fp32,
        };
        (!path.as_os_str().is_empty()).then_some(path.as_path())
    }
}

/// Relative paths of a file in a `config/` folder are relative to the
/// folder above it (the install or project folder).
fn base_of(path: &Path) -> PathBuf {
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

/// `network.evaluator_threads`: `"auto"` or a number of at least 1.
fn evaluator_threads<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<EvaluatorThreads, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written {
        Number(i64),
        Word(String),
    }
    let text = match Written::deserialize(deserializer)? {
        Written::Number(n) => n.to_string(),
        Written::Word(word) => word,
    };
    text.parse().map_err(serde::de::Error::custom)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(config.search, SearchSection::default());
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
        for bad in ["0", "-1", "\"many\"", "1.5"] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains("evaluator"), "{bad}: {e}");
        }
    }

    #[test]
    fn errors_name_the_key() {
        let e = Config::parse("[engine]\nthreads = \"many\"\n").unwrap_err();
        assert!(e.contains("threads"), "{e}");
        let e = Config::parse("[search]\nstlye = 3\n").unwrap_err();
        assert!(e.contains("stlye"), "{e}");
        let e = Config::parse("[search]\nstyle = 9\n").unwrap_err();
        assert!(e.contains("search.style"), "{e}");
        let e = Config::parse("[search]\npolicy_temperature = 0.0\n").unwrap_err();
        assert!(e.contains("search.policy_temperature"), "{e}");
        let e = Config::parse("[search]\npolicy_temperature = nan\n").unwrap_err();
        assert!(e.contains("search.policy_temperature"), "{e}");
        let e = Config::parse("[search]\nsafety_share = 0.8\n").unwrap_err();
        assert!(e.contains("search.safety_share"), "{e}");
        let e = Config::parse("[search]\nsafety_nodes_per_ms = 0\n").unwrap_err();
        assert!(e.contains("search.safety_nodes_per_ms"), "{e}");
        let tuned = Config::parse("[search]\nsafety_share = 0.2\nsafety_nodes_per_ms = 300\n")
            .unwrap()
            .search_config()
            .safety_time;
        assert_eq!((tuned.share, tuned.nodes_per_ms), (0.2, 300));
        let e = Config::parse("[network]\ndevice = \"tpu\"\n").unwrap_err();
        assert!(e.contains("network.device"), "{e}");
        let e = Config::parse("[nonsense]\n").unwrap_err();
        assert!(e.contains("nonsense"), "{e}");
    }

    #[test]
    fn the_shipped_file_parses_and_matches_the_defaults() {
        let text = include_str!("../config/wuzi.toml");
        let config = Config::parse(text).unwrap();
        let mut defaults = Config::default();
        defaults.log = config.log.clone();
        assert_eq!(config, defaults, "config/wuzi.toml documents the defaults");
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
    }
}
