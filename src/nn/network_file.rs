//! What a network file holds: the size of the network and the tensors
//! (names, shapes) of its architecture, shared by every backend. The
//! architecture itself (residual tower, policy head, pooled WDL head) is
//! described in `model`.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::nn::features::INPUT_PLANES;

/// The size of a network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NetConfig {
    /// Residual blocks.
    pub blocks: usize,
    /// Channels of the tower.
    pub channels: i64,
}

impl fmt::Display for NetConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.blocks, self.channels)
    }
}

impl std::str::FromStr for NetConfig {
    type Err = String;

    /// `BLOCKSxCHANNELS`, e.g. `6x64`.
    fn from_str(s: &str) -> Result<NetConfig, String> {
        let (b, c) = s
            .split_once(['x', 'X'])
            .ok_or_else(|| format!("network size {s:?}: expected BLOCKSxCHANNELS, e.g. 6x64"))?;
        let blocks: usize = b
            .trim()
            .parse()
            .map_err(|_| format!("network size {s:?}: bad block count"))?;
        let channels: i64 = c
            .trim()
            .parse()
            .map_err(|_| format!("network size {s:?}: bad channel count"))?;
        NetConfig::new(blocks, channels).map_err(|why| format!("network size {s:?}: {why}"))
    }
}

/// A network file that could not be used.
#[derive(Debug, thiserror::Error)]
#[error("network file {path}: {what}")]
pub struct NetError {
    pub path: PathBuf,
    pub what: String,
}

/// Longest description kept: it quotes names read from the file.
const MAX_WHAT_CHARS: usize = 2000;

impl NetError {
    /// `what` may quote the file's own text (tensor names): it is kept to
    /// one line of bounded length, since protocols send it on as a reply.
    pub(crate) fn new(path: &Path, what: impl Into<String>) -> NetError {
        let what: String = what.into();
        let mut one_line: String = what
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .take(MAX_WHAT_CHARS)
            .collect();
        if what.chars().nth(MAX_WHAT_CHARS).is_some() {
            one_line.push_str("...");
        }
        NetError {
            path: path.to_path_buf(),
            what: one_line,
        }
    }
}

/// Writes a network file to `path` whole: `write` writes it beside `path`,
/// then it is renamed over it, so that a match or a run reading the file
/// while it is written (a checkpoint) never finds it half written; on a
/// failure nothing is left behind, and the error reads "`failed` (why)".
pub(crate) fn write_whole(
    path: &Path,
    failed: &str,
    write: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<(), NetError> {
    // Still named .safetensors: the format follows the extension.
    let partial = path.with_extension("partial.safetensors");
    write(&partial)
        .and_then(|()| std::fs::rename(&partial, path).map_err(|e| e.to_string()))
        .map_err(|why| {
            let _ = std::fs::remove_file(&partial);
            NetError::new(path, format!("{failed} ({why})"))
        })
}

/// Residual blocks of a network file: one more than the highest `N` of its
/// `blocks.N.*` tensor names (0 without any).
pub fn block_count<'a>(names: impl IntoIterator<Item = &'a str>) -> usize {
    names
        .into_iter()
        .filter_map(|k| {
            k.strip_prefix("blocks.")?
                .split('.')
                .next()?
                .parse::<usize>()
                .ok()
        })
        .max()
        .map_or(0, |b| b.saturating_add(1))
}

/// Larger network files are refused unread: the largest network the
/// architecture allows (64 blocks of 512 channels) is about 1.2 GB in fp32.
pub const MAX_FILE_BYTES: u64 = 5 << 28;

/// Larger safetensors headers are refused unparsed: the largest network's
/// (64 blocks, about 800 tensors) is under 100 KB.
pub const MAX_HEADER_BYTES: u64 = 1 << 20;

impl NetConfig {
    /// A size the architecture allows: 1..=64 blocks of 8..=512 channels
    /// (a file that names more must not make a loader allocate it).
    pub fn new(blocks: usize, channels: i64) -> Result<NetConfig, String> {
        if !(1..=64).contains(&blocks) || !(8..=512).contains(&channels) {
            return Err("blocks must be 1..=64 and channels 8..=512".to_string());
        }
        Ok(NetConfig { blocks, channels })
    }

    /// The size a network file's tensors name, checked as by
    /// [`NetConfig::new`]; the error reads as the size written out would.
    pub fn of_file(blocks: usize, channels: i64) -> Result<NetConfig, String> {
        NetConfig::new(blocks, channels)
            .map_err(|why| format!("network size \"{blocks}x{channels}\": {why}"))
    }

    /// Every tensor a network file of this size holds, with its shape: the
    /// parameters and batch-norm statistics of the architecture, named as
    /// PyTorch and tch name them.
    pub fn tensor_shapes(&self) -> Vec<(String, Vec<usize>)> {
        let c = self.channels as usize;
        let mut shapes = Vec::new();
        let mut add = |name: String, shape: Vec<usize>| shapes.push((name, shape));
        let batch_norm = |add: &mut dyn FnMut(String, Vec<usize>), prefix: &str| {
            for part in ["weight", "bias", "running_mean", "running_var"] {
                add(format!("{prefix}.{part}"), vec![c]);
            }
        };
        add("stem.weight".into(), vec![c, INPUT_PLANES, 3, 3]);
        batch_norm(&mut add, "stem_bn");
        for b in 0..self.blocks {
            for k in 1..=2 {
                add(format!("blocks.{b}.conv{k}.weight"), vec![c, c, 3, 3]);
                batch_norm(&mut add, &format!("blocks.{b}.bn{k}"));
            }
        }
        for head in ["policy", "value"] {
            add(format!("{head}_conv.weight"), vec![c, c, 1, 1]);
            batch_norm(&mut add, &format!("{head}_bn"));
        }
        add("policy_out.weight".into(), vec![1, c, 1, 1]);
        add("policy_out.bias".into(), vec![1]);
        add("value_hidden.weight".into(), vec![c, c]);
        add("value_hidden.bias".into(), vec![c]);
        add("value_out.weight".into(), vec![3, c]);
        add("value_out.bias".into(), vec![3]);
        shapes
    }
}
