//! Reading a network file (safetensors) without libtorch, checked against
//! the architecture before anything is allocated from it.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use safetensors::{Dtype, SafeTensors};

use crate::nn::features::INPUT_PLANES;
use crate::nn::network_file::{block_count, NetConfig, NetError, MAX_FILE_BYTES, MAX_HEADER_BYTES};

/// Problems of a refused file named in its error, at most.
const MAX_PROBLEMS_SHOWN: usize = 20;

/// A network file's tensors, each as f32 values in PyTorch's order.
pub struct Weights {
    pub config: NetConfig,
    tensors: HashMap<String, Vec<f32>>,
    /// How the file stored them (`F32` for weights built in memory).
    pub storage: Storage,
}

/// How a network file stores its weights: every tensor in f32, or the
/// convolutions' and linear layers' weights (nearly all the bytes) in a
/// 16-bit type and the batch norms and biases in f32. Read back, the
/// values are those of the 16-bit type as f32: f16 keeps 11 significant
/// bits, finer than the bf16 products of the native kernels (8), so a
/// network stored in f16 plays as its f32 file within rounding, in half
/// the bytes (docs/native-backend.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Storage {
    #[default]
    F32,
    F16,
    Bf16,
}

impl std::fmt::Display for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Storage::F32 => "f32",
            Storage::F16 => "f16",
            Storage::Bf16 => "bf16",
        })
    }
}

impl std::str::FromStr for Storage {
    type Err = String;

    fn from_str(s: &str) -> Result<Storage, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "f32" | "fp32" => Ok(Storage::F32),
            "f16" | "fp16" | "half" => Ok(Storage::F16),
            "bf16" => Ok(Storage::Bf16),
            _ => Err(format!("storage {s:?}: expected f32, f16 or bf16")),
        }
    }
}

impl Storage {
    /// The type of the tensor of `shape`: the weights (two dimensions or
    /// more) in this storage, vectors in f32.
    fn dtype_of(self, shape: &[usize]) -> Dtype {
        match self {
            _ if shape.len() < 2 => Dtype::F32,
            Storage::F32 => Dtype::F32,
            Storage::F16 => Dtype::F16,
            Storage::Bf16 => Dtype::BF16,
        }
    }
}

/// The little-endian values of a tensor of `dtype` as f32 (`None` for a
/// type no network is stored in).
fn values_of(dtype: Dtype, data: &[u8]) -> Option<Vec<f32>> {
    let pairs = || {
        data.chunks_exact(2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    match dtype {
        Dtype::F32 => Some(
            data.chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        ),
        Dtype::F16 => Some(pairs().map(|v| half::f16::from_bits(v).to_f32()).collect()),
        Dtype::BF16 => Some(pairs().map(|v| half::bf16::from_bits(v).to_f32()).collect()),
        _ => None,
    }
}

/// `values` as little-endian bytes of `dtype` (F32, F16 or BF16); `None`
/// when one is beyond the type's range (the network would change).
fn bytes_of(dtype: Dtype, values: &[f32]) -> Option<Vec<u8>> {
    let mut bytes = Vec::with_capacity(values.len() * dtype.bitsize() / 8);
    for &v in values {
        match dtype {
            Dtype::F16 => {
                let h = half::f16::from_f32(v);
                if !h.is_finite() {
                    return None;
                }
                bytes.extend(h.to_bits().to_le_bytes());
            }
            Dtype::BF16 => {
                let h = half::bf16::from_f32(v);
                if !h.is_finite() {
                    return None;
                }
                bytes.extend(h.to_bits().to_le_bytes());
            }
            _ => bytes.extend(v.to_le_bytes()),
        }
    }
    Some(bytes)
}

impl Weights {
    /// Reads and checks `path`: every tensor of [`NetConfig::tensor_shapes`]
    /// present with its shape, in f32 or a [`Storage`]'s 16-bit type, and
    /// no other.
    pub fn read(path: &Path) -> Result<Weights, NetError> {
        let fail = |what: String| NetError::new(path, what);
        let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => fail("no such file".into()),
            _ => fail(format!("cannot read ({e})")),
        })?;
        if !meta.is_file() {
            return Err(fail("not a file".into()));
        }
        if meta.len() > MAX_FILE_BYTES {
            return Err(fail(format!("{} bytes: too large", meta.len())));
        }
        // A network's header lists a few hundred tensors in some KB; a
        // hostile one of safetensors' own limit (100 MB) would cost about
        // ten times that in memory while parsed, past a tournament's limit.
        // Checked on the first 8 bytes, before the rest is read: a large
        // file of another format is refused unread.
        let mut le = [0u8; 8];
        let length_read =
            std::fs::File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut le));
        if length_read.is_ok() {
            let header = u64::from_le_bytes(le);
            if header > MAX_HEADER_BYTES {
                return Err(fail(format!(
                    "not a readable safetensors file (a header of {header} bytes: too large for a network, at most {MAX_HEADER_BYTES})"
                )));
            }
            if header.saturating_add(8) > meta.len() {
                return Err(fail(format!(
                    "not a readable safetensors file (a header of {header} bytes in a file of {})",
                    meta.len()
                )));
            }
        }
        // Bounded again while reading: the file may have grown since.
        let bytes = crate::bounded_read::read_file_bytes(path, MAX_FILE_BYTES)
            .map_err(|e| fail(format!("cannot read ({e})")))?;
        let file = SafeTensors::deserialize(&bytes)
            .map_err(|e| fail(format!("not a readable safetensors file ({e})")))?;
        let config = config_of(&file).map_err(fail)?;
        let expected = config.tensor_shapes();
        let mut problems = Vec::new();
        let mut tensors = HashMap::with_capacity(expected.len());
        let mut storage = Storage::F32;
        for (name, shape) in &expected {
            let Ok(view) = file.tensor(name) else {
                problems.push(format!("missing tensor {name}"));
                continue;
            };
            let values = values_of(view.dtype(), view.data());
            let (Some(values), true) = (values, view.shape() == shape.as_slice()) else {
                problems.push(format!(
                    "{name} is {:?} {:?}, expected F32 (or F16, BF16) {shape:?}",
                    view.dtype(),
                    view.shape()
                ));
                continue;
            };
            match view.dtype() {
                Dtype::F16 => storage = Storage::F16,
                Dtype::BF16 => storage = Storage::Bf16,
                _ => {}
            }
            if values.iter().any(|v| !v.is_finite()) {
                problems.push(format!("{name} holds a value that is not finite"));
                continue;
            }
            if name.ends_with("running_var") && values.iter().any(|v| *v < 0.0) {
                problems.push(format!("{name} holds a negative variance"));
                continue;
            }
            tensors.insert(name.clone(), values);
        }
        let known: HashSet<&str> = expected.iter().map(|(name, _)| name.as_str()).collect();
        let mut unexpected: Vec<String> = file
            .names()
            .into_iter()
            .filter(|n| !known.contains(*n))
            .map(|n| format!("unexpected tensor {:?}", shown_name(n)))
            .collect();
        unexpected.sort();
        problems.extend(unexpected);
        if !problems.is_empty() {
            problems.sort();
            // A hostile header may list millions of tensors: the message
            // names the first few.
            let more = problems.len().saturating_sub(MAX_PROBLEMS_SHOWN);
            problems.truncate(MAX_PROBLEMS_SHOWN);
            if more > 0 {
                problems.push(format!("and {more} more"));
            }
            return Err(fail(problems.join("; ")));
        }
        let weights = Weights {
            config,
            tensors,
            storage,
        };
        weights.check_batch_norms().map_err(fail)?;
        Ok(weights)
    }

    /// Writes the weights to `path` in `storage` (a file beside it, then
    /// renamed over it, so that nothing reads it half written). Refused,
    /// naming the tensor, where a value is beyond the 16-bit type's range.
    pub fn write(&self, path: &Path, storage: Storage) -> Result<(), NetError> {
        let fail = |what: String| NetError::new(path, what);
        let mut encoded = Vec::new();
        for (name, shape) in self.config.tensor_shapes() {
            let dtype = storage.dtype_of(&shape);
            let bytes = bytes_of(dtype, self.get(&name)).ok_or_else(|| {
                fail(format!(
                    "{name} holds a value beyond the range of {storage}"
                ))
            })?;
            encoded.push((name, dtype, shape, bytes));
        }
        let views = encoded
            .iter()
            .map(|(name, dtype, shape, bytes)| {
                safetensors::tensor::TensorView::new(*dtype, shape.clone(), bytes)
                    .map(|view| (name.as_str(), view))
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| fail(format!("cannot encode ({e})")))?;
        crate::nn::network_file::write_whole(path, "cannot write", |partial| {
            safetensors::tensor::serialize_to_file(views, None, partial).map_err(|e| e.to_string())
        })
    }

    /// Finite values may still fold into infinite ones (a huge scale over a
    /// zero variance, or a large scale times a large weight of the
    /// convolution before it), which would poison the native kernels and
    /// make libtorch answer NaN: refused like non-finite values. So are
    /// folded 3x3 weights that the Winograd kernel transform would carry
    /// past f32: an infinite kernel entry makes every answer NaN.
    fn check_batch_norms(&self) -> Result<(), String> {
        let shapes = self.config.tensor_shapes();
        let prefixes = shapes
            .iter()
            .filter_map(|(name, _)| Some(name.strip_suffix(".running_var")?.to_string()));
        let largest_winograd_weight = f64::from(f32::MAX) / super::winograd::largest_kernel_gain();
        for prefix in prefixes {
            let (scale, shift) = self.batch_norm(&prefix);
            if scale.iter().chain(&shift).any(|v| !v.is_finite()) {
                return Err(format!(
                    "batch norm {prefix} folds into values that are not finite"
                ));
            }
            let conv = convolution_before(&prefix);
            let weight = self.get(&conv);
            // Folded exactly as the kernels fold it: each output channel's
            // weights times that channel's scale, in f32.
            let per_output = weight.len() / scale.len().max(1);
            let folded_overflows = weight
                .chunks(per_output.max(1))
                .zip(&scale)
                .any(|(w, s)| w.iter().any(|v| !(v * s).is_finite()));
            if folded_overflows {
                return Err(format!(
                    "{conv} times the scale of batch norm {prefix} is not finite"
                ));
            }
            let is_3x3 = shapes
                .iter()
                .any(|(name, shape)| *name == conv && shape.ends_with(&[3, 3]));
            let transform_overflows = is_3x3
                && weight.chunks(per_output.max(1)).zip(&scale).any(|(w, s)| {
                    w.iter()
                        .any(|v| f64::from((v * s).abs()) > largest_winograd_weight)
                });
            if transform_overflows {
                return Err(format!(
                    "{conv} times the scale of batch norm {prefix} is too large: \
                     its Winograd transform is not finite"
                ));
            }
        }
        Ok(())
    }

    /// Weights of a network file built in memory (tests, tools).
    pub fn from_tensors(
        config: NetConfig,
        tensors: HashMap<String, Vec<f32>>,
    ) -> Result<Weights, String> {
        for (name, shape) in config.tensor_shapes() {
            let len: usize = shape.iter().product();
            match tensors.get(&name) {
                Some(t) if t.len() == len => {}
                Some(t) => return Err(format!("{name} has {} values, expected {len}", t.len())),
                None => return Err(format!("missing tensor {name}")),
            }
        }
        Ok(Weights {
            config,
            tensors,
            storage: Storage::F32,
        })
    }

    /// Random weights of a network of `config`'s size (He-scaled uniform
    /// convolutions, identity batch norms), for benchmarks and tests.
    pub fn random(config: NetConfig, seed: u64) -> Weights {
        let mut state = seed | 1;
        let mut uniform = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        };
        let tensors = config
            .tensor_shapes()
            .into_iter()
            .map(|(name, shape)| {
                let len: usize = shape.iter().product();
                let fan_in: usize = shape.iter().skip(1).product::<usize>().max(1);
                let batch_norm = name.split('.').any(|part| part.contains("bn"));
                let values =
                    if name.ends_with("running_var") || batch_norm && name.ends_with(".weight") {
                        vec![1.0; len]
                    } else if name.ends_with("bias") || name.ends_with("running_mean") {
                        vec![0.0; len]
                    } else {
                        let scale = (6.0 / fan_in as f32).sqrt();
                        (0..len).map(|_| uniform() * scale).collect()
                    };
                (name, values)
            })
            .collect();
        Weights {
            config,
            tensors,
            storage: Storage::F32,
        }
    }

    /// The values of every tensor (batch-norm statistics included).
    pub fn parameter_count(&self) -> usize {
        self.tensors.values().map(Vec::len).sum()
    }

    /// The tensor `name` (present: checked when read).
    pub fn get(&self, name: &str) -> &[f32] {
        self.tensors.get(name).map_or(&[], Vec::as_slice)
    }

    /// A folded batch norm: `(scale, shift)` per channel, so that
    /// `bn(x) = x * scale + shift` (PyTorch's eps, 1e-5).
    pub fn batch_norm(&self, prefix: &str) -> (Vec<f32>, Vec<f32>) {
        const EPS: f32 = 1e-5;
        let gamma = self.get(&format!("{prefix}.weight"));
        let beta = self.get(&format!("{prefix}.bias"));
        let mean = self.get(&format!("{prefix}.running_mean"));
        let var = self.get(&format!("{prefix}.running_var"));
        let scale: Vec<f32> = gamma
            .iter()
            .zip(var)
            .map(|(g, v)| g / (v + EPS).sqrt())
            .collect();
        let shift = beta
            .iter()
            .zip(mean)
            .zip(&scale)
            .map(|((b, m), s)| b - m * s)
            .collect();
        (scale, shift)
    }
}

/// The network's size, read from the tensors: the stem's output channels
/// and the highest block index.
fn config_of(file: &SafeTensors) -> Result<NetConfig, String> {
    let stem = file
        .tensor("stem.weight")
        .map_err(|_| "no tensor stem.weight: not a Wuzi network".to_string())?;
    let shape = stem.shape();
    if shape.len() != 4 || shape[1] != INPUT_PLANES || shape[2] != 3 || shape[3] != 3 {
        return Err(format!(
            "stem.weight has shape {shape:?}, expected [channels, {INPUT_PLANES}, 3, 3]"
        ));
    }
    let channels = i64::try_from(shape[0]).unwrap_or(i64::MAX);
    NetConfig::of_file(block_count(file.names()), channels)
}

/// The convolution whose output a batch norm normalises (the names of
/// `NetConfig::tensor_shapes`): `stem_bn` follows `stem`, `blocks.B.bnK`
/// follows `blocks.B.convK`, `policy_bn` follows `policy_conv`.
fn convolution_before(batch_norm: &str) -> String {
    if let Some(head) = batch_norm.strip_suffix("_bn") {
        if head == "stem" {
            return "stem.weight".to_string();
        }
        return format!("{head}_conv.weight");
    }
    match batch_norm.rsplit_once(".bn") {
        Some((block, k)) => format!("{block}.conv{k}.weight"),
        None => format!("{batch_norm}.weight"),
    }
}

/// A tensor name from the file as a message quotes it: a hostile header's
/// names may be a megabyte long.
fn shown_name(name: &str) -> String {
    const MOST: usize = 100;
    match name.char_indices().nth(MOST) {
        Some((cut, _)) => format!("{}...", &name[..cut]),
        None => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_weight_beyond_the_16_bit_range_is_refused_naming_its_tensor() {
        let config = NetConfig::new(1, 8).unwrap();
        let mut tensors: HashMap<String, Vec<f32>> = config
            .tensor_shapes()
            .into_iter()
            .map(|(name, shape)| (name, vec![0.5; shape.iter().product()]))
            .collect();
        if let Some(weight) = tensors.get_mut("blocks.0.conv2.weight") {
            weight[3] = 1.0e5;
        }
        let weights = Weights::from_tensors(config, tensors).unwrap();
        let dir = std::env::temp_dir().join(format!("wuzi-weights-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("net.safetensors");
        let e = weights.write(&path, Storage::F16).unwrap_err().to_string();
        assert!(
            e.contains("blocks.0.conv2.weight") && e.contains("range of f16"),
            "{e}"
        );
        assert!(!path.exists() && !path.with_extension("partial.safetensors").exists());
        // bf16 has f32's range: it keeps the value, rounded.
        weights.write(&path, Storage::Bf16).unwrap();
        let read = Weights::read(&path).unwrap();
        assert_eq!(read.storage, Storage::Bf16);
        assert_eq!(read.get("blocks.0.conv2.weight")[3], 99840.0);
        // Vectors stay f32 whatever the storage.
        assert_eq!(Storage::F16.dtype_of(&[8]), Dtype::F32);
        assert_eq!(Storage::F16.dtype_of(&[8, 8, 3, 3]), Dtype::F16);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn storages_parse_and_print_themselves() {
        for storage in [Storage::F32, Storage::F16, Storage::Bf16] {
            assert_eq!(storage.to_string().parse::<Storage>(), Ok(storage));
        }
        assert_eq!("half".parse::<Storage>(), Ok(Storage::F16));
        assert!("int8"
            .parse::<Storage>()
            .unwrap_err()
            .contains("f32, f16 or bf16"));
    }
}
