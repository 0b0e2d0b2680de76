//! The `[network]` section of `config/wuzi.toml`: which network file
//! evaluates each rule, on which backend, device and precision. Declared
//! here, beside what reads it (the provider), and embedded by the
//! configuration file's reader.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::game::Rule;
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
    /// Network file per rule (caro uses the freestyle network when empty).
    pub freestyle: PathBuf,
    pub standard: PathBuf,
    pub renju: PathBuf,
    pub caro: PathBuf,
    /// Network file per rule when the precision resolves to fp32, with
    /// either backend (a CPU without bf16 hardware, or `isa = "avx2"`,
    /// where a larger network may be too slow to be the stronger); empty:
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
            freestyle: PathBuf::from("networks/freestyle-6x64.safetensors"),
            standard: PathBuf::from("networks/standard15-6x64.safetensors"),
            renju: PathBuf::from("networks/renju15-6x64.safetensors"),
            caro: PathBuf::new(),
            freestyle_fp32: PathBuf::new(),
            standard_fp32: PathBuf::new(),
            renju_fp32: PathBuf::new(),
            caro_fp32: PathBuf::new(),
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
        for path in [
            &mut self.freestyle,
            &mut self.standard,
            &mut self.renju,
            &mut self.caro,
            &mut self.freestyle_fp32,
            &mut self.standard_fp32,
            &mut self.renju_fp32,
            &mut self.caro_fp32,
        ] {
            resolve_relative(path, base);
        }
    }

    /// The network file for `rule`.
    pub fn network_for(&self, rule: Rule) -> &Path {
        match rule {
            Rule::Freestyle => &self.freestyle,
            Rule::Standard => &self.standard,
            Rule::Renju => &self.renju,
            Rule::Caro if self.caro.as_os_str().is_empty() => &self.freestyle,
            Rule::Caro => &self.caro,
        }
    }

    /// The network file for `rule` when inference runs in fp32, if one
    /// other than [`NetworkSettings::network_for`]'s is configured.
    pub fn fp32_network_for(&self, rule: Rule) -> Option<&Path> {
        let n = self;
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
