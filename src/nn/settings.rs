//! The `[network]` section of `config/wuzi.toml`: which network file
//! evaluates each rule, on which backend, device and precision. Declared
//! here, beside what reads it (the provider), and embedded by the
//! configuration file's reader.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::game::{BoardSize, Rule};
use crate::nn::service::EvaluatorThreads;

/// The network settings, with defaults for anything the file leaves out.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct NetworkSettings {
    /// `cpu`, `auto`, `cuda` or `cuda:N` (falls back to the CPU).
    pub device: String,
    /// `auto`, `native` or `torch`: what evaluates the network.
    pub backend: String,
    /// `auto`, `avx512`, `avx2` or `portable`: the instruction set of the
    /// native kernels (a CPU without it uses its widest).
    pub isa: String,
    /// Evaluator threads, each running whole batches: `"auto"` (as many
    /// as the search threads on a CPU, one on a GPU) or a number.
    #[serde(deserialize_with = "number_or_word")]
    pub evaluator_threads: EvaluatorThreads,
    /// libtorch CPU threads per evaluator.
    pub torch_threads: usize,
    /// Largest batch an evaluator runs.
    pub batch_size: usize,
    /// `none`, `random` or `all` board symmetries per evaluation.
    pub symmetry: String,
    /// `auto`, `fp32`, `bf16` or `half`: the inference precision.
    pub precision: String,
    /// Network file per rule, or per rule and board side (caro uses the
    /// freestyle network when empty).
    pub freestyle: RuleNetwork,
    pub standard: RuleNetwork,
    pub renju: RuleNetwork,
    pub caro: RuleNetwork,
    /// Network file per rule when the precision resolves to fp32, with
    /// either backend (a CPU without bf16 hardware, or `isa = "avx2"`,
    /// where a larger network may be too slow to be the stronger); empty:
    /// the rule's network everywhere. Caro uses freestyle's when empty.
    pub freestyle_fp32: RuleNetwork,
    pub standard_fp32: RuleNetwork,
    pub renju_fp32: RuleNetwork,
    pub caro_fp32: RuleNetwork,
    /// When a rule's network file is missing or unusable: `false` refuses
    /// to play that rule (an error naming the file), `true` plays it with
    /// the tactics and a uniform policy.
    pub tactics_only_fallback: bool,
}

impl Default for NetworkSettings {
    fn default() -> NetworkSettings {
        NetworkSettings {
            device: "auto".to_string(),
            backend: "auto".to_string(),
            isa: "auto".to_string(),
            evaluator_threads: EvaluatorThreads::PerSearchThread,
            torch_threads: 1,
            batch_size: 16,
            symmetry: "random".to_string(),
            precision: "auto".to_string(),
            freestyle: RuleNetwork::by_side([
                (15, "networks/freestyle-6x64.safetensors"),
                (20, "networks/freestyle20-6x64.safetensors"),
            ]),
            standard: RuleNetwork::every("networks/standard15-6x64.safetensors"),
            renju: RuleNetwork::every("networks/renju15-6x64.safetensors"),
            caro: RuleNetwork::None,
            freestyle_fp32: RuleNetwork::None,
            standard_fp32: RuleNetwork::None,
            renju_fp32: RuleNetwork::None,
            caro_fp32: RuleNetwork::None,
            tactics_only_fallback: false,
        }
    }
}

/// A setting whose value is not one it may take: the key as the
/// configuration file spells it (`network.batch_size`), or the flag that
/// set it (`--device`), and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {why}")]
pub struct InvalidSetting {
    pub key: String,
    pub why: String,
}

impl InvalidSetting {
    pub fn new(key: impl Into<String>, why: impl Into<String>) -> InvalidSetting {
        InvalidSetting {
            key: key.into(),
            why: why.into(),
        }
    }

    /// `Ok` where `ok` holds, else the error for `key` in `section`.
    pub fn check(ok: bool, section: &str, key: &str, why: &str) -> Result<(), InvalidSetting> {
        if ok {
            Ok(())
        } else {
            Err(InvalidSetting::new(format!("{section}.{key}"), why))
        }
    }
}

impl NetworkSettings {
    /// Checks the values; the error names the key as the file spells it.
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        let check = |ok: bool, key: &str, why: &str| InvalidSetting::check(ok, "network", key, why);
        use crate::search::{MAX_SETTING_COUNT, MAX_THREADS};
        check(
            (1..=MAX_THREADS).contains(&self.torch_threads),
            "torch_threads",
            &format!("must be 1..={MAX_THREADS}"),
        )?;
        check(
            (1..=MAX_SETTING_COUNT).contains(&self.batch_size),
            "batch_size",
            &format!("must be 1..={MAX_SETTING_COUNT}"),
        )?;
        check(
            !matches!(self.evaluator_threads, EvaluatorThreads::Fixed(n) if n > MAX_THREADS),
            "evaluator_threads",
            &format!("must be auto or 1..={MAX_THREADS}"),
        )?;
        check(
            self.symmetry.parse::<super::SymmetryMode>().is_ok(),
            "symmetry",
            "must be none, random or all",
        )?;
        self.precision
            .parse::<super::PrecisionSetting>()
            .map_err(|why| InvalidSetting::new("network.precision", why))?;
        super::backend::check_device_name(&self.device)
            .map_err(|why| InvalidSetting::new("network.device", why))?;
        self.backend
            .parse::<super::BackendSetting>()
            .map_err(|why| InvalidSetting::new("network.backend", why))?;
        super::native::simd::parse_isa_setting(&self.isa)
            .map_err(|why| InvalidSetting::new("network.isa", why))?;
        Ok(())
    }

    /// Makes the relative network paths relative to `base` (the folder the
    /// configuration belongs to).
    pub fn resolve_paths(&mut self, base: &Path) {
        let (networks, fp32_networks) = self.rule_networks_mut();
        for network in networks.into_iter().chain(fp32_networks) {
            for path in network.paths_mut() {
                resolve_relative(path, base);
            }
        }
    }

    /// The rules' networks and their fp32 ones.
    fn rule_networks_mut(&mut self) -> ([&mut RuleNetwork; 4], [&mut RuleNetwork; 4]) {
        (
            [
                &mut self.freestyle,
                &mut self.standard,
                &mut self.renju,
                &mut self.caro,
            ],
            [
                &mut self.freestyle_fp32,
                &mut self.standard_fp32,
                &mut self.renju_fp32,
                &mut self.caro_fp32,
            ],
        )
    }

    /// One network file for every rule, board and precision (the
    /// command line's `--network`).
    pub fn use_one_network(&mut self, path: &Path) {
        let (networks, fp32_networks) = self.rule_networks_mut();
        for network in networks {
            *network = RuleNetwork::every(path);
        }
        // No fp32 ones: a CPU without bf16 would otherwise play those.
        for network in fp32_networks {
            *network = RuleNetwork::None;
        }
    }

    /// The configured networks of `rule` (caro: freestyle's when its own
    /// are empty), and its fp32 ones.
    fn networks_of(&self, rule: Rule) -> (&RuleNetwork, &RuleNetwork) {
        match rule {
            Rule::Freestyle => (&self.freestyle, &self.freestyle_fp32),
            Rule::Standard => (&self.standard, &self.standard_fp32),
            Rule::Renju => (&self.renju, &self.renju_fp32),
            Rule::Caro if self.caro.is_none() && self.caro_fp32.is_none() => {
                (&self.freestyle, &self.freestyle_fp32)
            }
            Rule::Caro if self.caro.is_none() => (&self.freestyle, &self.caro_fp32),
            Rule::Caro => (&self.caro, &self.caro_fp32),
        }
    }

    /// The network file for `rule` on a board of `size` (an empty path
    /// where none is configured).
    pub fn network_for(&self, rule: Rule, size: BoardSize) -> &Path {
        self.networks_of(rule)
            .0
            .file_for(size)
            .unwrap_or(Path::new(""))
    }

    /// The network file for `rule` on a board of `size` when inference runs
    /// in fp32, if one other than [`NetworkSettings::network_for`]'s is
    /// configured.
    pub fn fp32_network_for(&self, rule: Rule, size: BoardSize) -> Option<&Path> {
        self.networks_of(rule).1.file_for(size)
    }

    /// A board size for each pair of files (network, fp32 network) the
    /// configuration can choose for `rule`, 15x15 first: loading the rule's
    /// networks for each loads every file it may play with. Every side is
    /// tried, as two tables of sides may pair their files on sides that
    /// neither lists.
    pub fn board_sizes_of(&self, rule: Rule) -> Vec<BoardSize> {
        let mut seen = std::collections::HashSet::new();
        std::iter::once(BoardSize::FIFTEEN.width())
            .chain(crate::game::MIN_SIDE..=crate::game::MAX_SIDE)
            .filter_map(|side| BoardSize::square(side.into()).ok())
            .filter(|size| {
                seen.insert((
                    self.network_for(rule, *size).to_path_buf(),
                    self.fp32_network_for(rule, *size).map(Path::to_path_buf),
                ))
            })
            .collect()
    }
}

/// The network of a rule: none, one file for every board, or one file per
/// board side, where a board plays the file listed for the side nearest its
/// longer side (the smaller side of two as near). Written in the file as a
/// path (`""` for none) or as a table of sides
/// (`{ 15 = "a.safetensors", 20 = "b.safetensors" }`).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum RuleNetwork {
    #[default]
    None,
    Every(PathBuf),
    /// At least one side, each `MIN_SIDE..=MAX_SIDE`, each file named.
    BySide(BTreeMap<u8, PathBuf>),
}

impl RuleNetwork {
    pub fn every(path: impl Into<PathBuf>) -> RuleNetwork {
        let path = path.into();
        if path.as_os_str().is_empty() {
            RuleNetwork::None
        } else {
            RuleNetwork::Every(path)
        }
    }

    /// Files by board side (sides out of range and empty paths are left
    /// out; none left: no network).
    pub fn by_side<P: Into<PathBuf>>(files: impl IntoIterator<Item = (u8, P)>) -> RuleNetwork {
        let files: BTreeMap<u8, PathBuf> = files
            .into_iter()
            .map(|(side, path)| (side, path.into()))
            .filter(|(side, path)| {
                BoardSize::square((*side).into()).is_ok() && !path.as_os_str().is_empty()
            })
            .collect();
        if files.is_empty() {
            RuleNetwork::None
        } else {
            RuleNetwork::BySide(files)
        }
    }

    pub fn is_none(&self) -> bool {
        matches!(self, RuleNetwork::None)
    }

    /// The file for a board of `size`.
    pub fn file_for(&self, size: BoardSize) -> Option<&Path> {
        match self {
            RuleNetwork::None => None,
            RuleNetwork::Every(path) => Some(path),
            RuleNetwork::BySide(files) => {
                let side = size.width().max(size.height());
                files
                    .iter()
                    .min_by_key(|(listed, _)| (listed.abs_diff(side), **listed))
                    .map(|(_, path)| path.as_path())
            }
        }
    }

    fn paths_mut(&mut self) -> Vec<&mut PathBuf> {
        match self {
            RuleNetwork::None => Vec::new(),
            RuleNetwork::Every(path) => vec![path],
            RuleNetwork::BySide(files) => files.values_mut().collect(),
        }
    }
}

impl<'de> Deserialize<'de> for RuleNetwork {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<RuleNetwork, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Path(PathBuf),
            BySide(BTreeMap<String, PathBuf>),
        }
        let expected = "a network file (\"\" for none) or a table of board sides, \
                        as { 15 = \"a.safetensors\", 20 = \"b.safetensors\" }";
        match Written::deserialize(deserializer).map_err(|_| D::Error::custom(expected))? {
            Written::Path(path) => Ok(RuleNetwork::every(path)),
            Written::BySide(files) => {
                let (min, max) = (crate::game::MIN_SIDE, crate::game::MAX_SIDE);
                let mut sides = BTreeMap::new();
                for (side, path) in files {
                    let parsed = side
                        .trim()
                        .parse::<u8>()
                        .ok()
                        .filter(|s| (min..=max).contains(s));
                    let Some(parsed) = parsed else {
                        return Err(D::Error::custom(format!(
                            "board side {side:?}: expected a number {min}..={max}"
                        )));
                    };
                    if path.as_os_str().is_empty() {
                        return Err(D::Error::custom(format!(
                            "board side {side}: no network file named"
                        )));
                    }
                    if sides.insert(parsed, path).is_some() {
                        return Err(D::Error::custom(format!(
                            "board side {parsed} is listed twice"
                        )));
                    }
                }
                if sides.is_empty() {
                    return Err(D::Error::custom(format!(
                        "an empty table: expected {expected}"
                    )));
                }
                Ok(RuleNetwork::BySide(sides))
            }
        }
    }
}

/// A count that may be left to the engine: `"auto"` (`None`) or a whole
/// number of at least 1 (`evaluator_threads`, `[search] batch_size`); the
/// error names `what`.
pub(crate) fn auto_or_count(text: &str, what: &str) -> Result<Option<usize>, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("auto") {
        return Ok(None);
    }
    match text.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(Some(n)),
        _ => Err(format!(
            "{what} {text:?}: expected auto or a number of at least 1"
        )),
    }
}

/// A setting written as a number or a word (`"auto"`), read through the
/// type's `FromStr`, which names what it expects (`evaluator_threads`,
/// `[search] batch_size`).
pub(crate) fn number_or_word<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written {
        Number(i64),
        Fraction(f64),
        Flag(bool),
        Word(String),
    }
    // Whatever was written goes through `FromStr`, so that a fraction or a
    // flag gets the same message as a wrong word.
    let text = match Written::deserialize(deserializer)? {
        Written::Number(n) => n.to_string(),
        Written::Fraction(x) => x.to_string(),
        Written::Flag(b) => b.to_string(),
        Written::Word(word) => word,
    };
    text.parse().map_err(serde::de::Error::custom)
}

/// Makes a relative, non-empty `path` relative to `base` (an empty path
/// means "none" and stays empty).
pub fn resolve_relative(path: &mut PathBuf, base: &Path) {
    if !path.as_os_str().is_empty() && path.is_relative() {
        *path = base.join(&*path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn square(side: u32) -> BoardSize {
        BoardSize::square(side).unwrap()
    }

    #[test]
    fn a_table_of_sides_gives_each_board_the_file_of_the_nearest_side() {
        let config = Config::parse(
            "[network]\nfreestyle = { 15 = \"a.safetensors\", 20 = \"b.safetensors\" }\n\
             caro = \"\"\ncaro_fp32 = \"\"\nfreestyle_fp32 = { 20 = \"c.safetensors\" }\n",
        )
        .unwrap();
        let n = &config.network;
        for (size, file) in [
            (square(5), "a"),
            (square(15), "a"),
            (square(17), "a"),
            // As near to 15 as to 20 would go to 15; 18 is nearer 20.
            (square(18), "b"),
            (square(20), "b"),
            (square(32), "b"),
            // The longer side decides.
            (BoardSize::new(15, 20).unwrap(), "b"),
            (BoardSize::new(19, 6).unwrap(), "b"),
            (BoardSize::new(16, 12).unwrap(), "a"),
        ] {
            let expected = PathBuf::from(format!("{file}.safetensors"));
            assert_eq!(n.network_for(Rule::Freestyle, size), expected, "{size:?}");
            // Caro without networks of its own plays freestyle's.
            assert_eq!(n.network_for(Rule::Caro, size), expected, "{size:?}");
            // One fp32 file listed: every board plays it in fp32.
            let fp32 = Some(Path::new("c.safetensors"));
            assert_eq!(n.fp32_network_for(Rule::Freestyle, size), fp32);
        }
        // A tie between two listed sides goes to the smaller.
        let tie = RuleNetwork::by_side([(10, "x"), (14, "y")]);
        assert_eq!(tie.file_for(square(12)), Some(Path::new("x")));
        assert_eq!(tie.file_for(square(13)), Some(Path::new("y")));
        // One board size per pair of files: loading those loads each.
        let pairs = |n: &NetworkSettings| -> Vec<(PathBuf, Option<PathBuf>)> {
            n.board_sizes_of(Rule::Freestyle)
                .into_iter()
                .map(|size| {
                    (
                        n.network_for(Rule::Freestyle, size).to_path_buf(),
                        n.fp32_network_for(Rule::Freestyle, size)
                            .map(Path::to_path_buf),
                    )
                })
                .collect()
        };
        let pair = |a: &str, b: &str| (PathBuf::from(a), Some(PathBuf::from(b)));
        assert_eq!(
            pairs(n),
            vec![
                pair("a.safetensors", "c.safetensors"),
                pair("b.safetensors", "c.safetensors")
            ]
        );
        // Two tables pair their files on sides that neither lists (16 and
        // 17 play b with c).
        let crossed = Config::parse(
            "[network]\nfreestyle = { 10 = \"a\", 20 = \"b\" }\n\
             freestyle_fp32 = { 5 = \"c\", 30 = \"d\" }\n",
        )
        .unwrap();
        assert_eq!(
            pairs(&crossed.network),
            vec![pair("a", "c"), pair("b", "c"), pair("b", "d")]
        );
        assert_eq!(n.board_sizes_of(Rule::Standard), vec![square(15)]);
        // A path alone plays every board.
        assert_eq!(
            n.network_for(Rule::Standard, square(20)),
            Path::new("networks/standard15-6x64.safetensors")
        );
    }

    #[test]
    fn a_table_that_names_no_board_side_or_no_file_is_refused() {
        for (text, wanted) in [
            ("freestyle = { 4 = \"a.safetensors\" }", "board side \"4\""),
            (
                "freestyle = { 33 = \"a.safetensors\" }",
                "board side \"33\"",
            ),
            (
                "freestyle = { big = \"a.safetensors\" }",
                "board side \"big\"",
            ),
            ("freestyle = { 15 = \"\" }", "no network file named"),
            ("freestyle = {}", "an empty table"),
            (
                "freestyle = { 15 = \"a.safetensors\", 015 = \"b.safetensors\" }",
                "listed twice",
            ),
            ("freestyle = 15", "a network file"),
            ("freestyle = { 15 = 3 }", "a network file"),
        ] {
            let e = Config::parse(&format!("[network]\n{text}\n")).unwrap_err();
            assert!(e.to_string().contains(wanted), "{text}: {e}");
        }
    }

    #[test]
    fn relative_files_of_a_table_are_the_configurations_folders() {
        let mut config = Config::parse(
            "[network]\nrenju = { 15 = \"a.safetensors\", 20 = \"/abs/b.safetensors\" }\n",
        )
        .unwrap();
        config.network.resolve_paths(Path::new("/install"));
        assert_eq!(
            config.network.network_for(Rule::Renju, square(15)),
            Path::new("/install/a.safetensors")
        );
        assert_eq!(
            config.network.network_for(Rule::Renju, square(20)),
            Path::new("/abs/b.safetensors")
        );
        // --network: one file for every rule, board and precision.
        config
            .network
            .use_one_network(Path::new("/one.safetensors"));
        for rule in Rule::ALL {
            for side in [15, 20] {
                assert_eq!(
                    config.network.network_for(rule, square(side)),
                    Path::new("/one.safetensors")
                );
                assert_eq!(config.network.fp32_network_for(rule, square(side)), None);
            }
        }
    }
}
