//! The code that evaluates a network: the native kernels (always built) or
//! libtorch (the `torch` feature), behind one interface that the evaluation
//! service uses, as lc0's `neural/backend.h` puts its backends.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::nn::batch::{BatchOutput, EncodedBatch};
use crate::nn::native::{Isa, NativeEvaluator, NativeNetwork};
use crate::nn::network_file::NetConfig;
use crate::nn::precision::{Precision, PrecisionSetting};

/// Which code evaluates the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The engine's own CPU kernels (`nn::native`).
    Native,
    /// libtorch through tch: CUDA, and bf16 on CPUs with AMX.
    Torch,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Native => "native",
            Backend::Torch => "torch",
        })
    }
}

/// What the configuration asks for (`network.backend`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BackendSetting {
    /// libtorch on a GPU; on a CPU, the faster of the two, measured at
    /// start-up (the native one where libtorch is not built in).
    #[default]
    Auto,
    Fixed(Backend),
}

impl FromStr for BackendSetting {
    type Err = String;

    fn from_str(s: &str) -> Result<BackendSetting, String> {
        let setting = match s.trim().to_ascii_lowercase().as_str() {
            "auto" => BackendSetting::Auto,
            "native" => BackendSetting::Fixed(Backend::Native),
            "torch" | "libtorch" => BackendSetting::Fixed(Backend::Torch),
            other => return Err(format!("backend {other:?}: expected auto, native or torch")),
        };
        if setting == BackendSetting::Fixed(Backend::Torch) && !cfg!(feature = "torch") {
            return Err(
                "backend \"torch\": this build has no libtorch (use native or auto)".into(),
            );
        }
        Ok(setting)
    }
}

/// Evaluates batches of encoded positions; one per evaluator thread.
pub trait BatchEvaluator: Send {
    fn evaluate(&mut self, batch: EncodedBatch<'_>) -> BatchOutput;
}

impl BatchEvaluator for NativeEvaluator {
    fn evaluate(&mut self, batch: EncodedBatch<'_>) -> BatchOutput {
        NativeEvaluator::evaluate(self, batch)
    }
}

/// A loaded network, as evaluators are made from it.
pub enum Model {
    Native {
        network: Arc<NativeNetwork>,
        isa: Isa,
        /// fp32, or bf16 products where the CPU has AVX512-BF16.
        precision: Precision,
    },
    #[cfg(feature = "torch")]
    Torch {
        // Boxed: libtorch's module is large beside the native variant.
        network: Box<crate::nn::Network>,
        precision: Precision,
    },
}

impl Model {
    /// A native model whose evaluators run in `isa` where this CPU has it,
    /// otherwise (and for `None`) in the widest instruction set it has, in
    /// the precision `precision` comes to there for batches of `batch`
    /// ([`crate::nn::native::choose_precision`]).
    pub fn native(
        network: Arc<NativeNetwork>,
        isa: Option<Isa>,
        precision: PrecisionSetting,
        batch: usize,
    ) -> Model {
        let isa = crate::nn::native::simd::resolve_isa(isa);
        let precision = crate::nn::native::choose_precision(&network, precision, isa, batch);
        Model::Native {
            network,
            isa,
            precision,
        }
    }

    /// A native network of `config`'s size with random weights fixed by
    /// `seed`, evaluated exactly (fp32): for tests and benchmarks that need
    /// a network that plays legal moves, not a trained one.
    pub fn random_native(config: NetConfig, seed: u64) -> Model {
        let weights = crate::nn::native::Weights::random(config, seed);
        Model::native(
            Arc::new(NativeNetwork::new(&weights)),
            None,
            PrecisionSetting::Fixed(Precision::Fp32),
            1,
        )
    }

    /// Another handle on the same network (libtorch: a copy of its weights).
    pub fn duplicate(&self) -> Model {
        match self {
            Model::Native {
                network,
                isa,
                precision,
            } => Model::Native {
                network: Arc::clone(network),
                isa: *isa,
                precision: *precision,
            },
            #[cfg(feature = "torch")]
            Model::Torch { network, precision } => Model::Torch {
                network: Box::new(network.duplicate()),
                precision: *precision,
            },
        }
    }

    pub fn backend(&self) -> Backend {
        match self {
            Model::Native { .. } => Backend::Native,
            #[cfg(feature = "torch")]
            Model::Torch { .. } => Backend::Torch,
        }
    }

    pub fn config(&self) -> NetConfig {
        match self {
            Model::Native { network, .. } => network.config(),
            #[cfg(feature = "torch")]
            Model::Torch { network, .. } => network.config(),
        }
    }

    /// The precision the network computes in.
    pub fn precision(&self) -> Precision {
        match self {
            Model::Native { precision, .. } => *precision,
            #[cfg(feature = "torch")]
            Model::Torch { precision, .. } => *precision,
        }
    }

    /// Whether it runs on a GPU.
    pub fn on_gpu(&self) -> bool {
        match self {
            Model::Native { .. } => false,
            #[cfg(feature = "torch")]
            Model::Torch { network, .. } => network.device() != tch::Device::Cpu,
        }
    }

    /// An evaluator for one thread (libtorch: a frozen copy of the weights,
    /// as its tensors may move between threads but not be shared).
    pub fn evaluator(&self) -> Box<dyn BatchEvaluator> {
        match self {
            Model::Native {
                network,
                isa,
                precision,
            } => Box::new(NativeEvaluator::with_kernels(
                Arc::clone(network),
                *isa,
                *precision,
            )),
            #[cfg(feature = "torch")]
            Model::Torch { network, precision } => Box::new(network.freeze(*precision)),
        }
    }

    /// A description for logs and `bench`: backend, size, precision and,
    /// for the native kernels, the instruction set.
    pub fn describe(&self) -> String {
        match self {
            Model::Native {
                network,
                isa,
                precision,
            } => {
                format!("native {} {precision} ({isa})", network.config())
            }
            #[cfg(feature = "torch")]
            Model::Torch { network, precision } => {
                format!(
                    "torch {} {precision} on {:?}",
                    network.config(),
                    network.device()
                )
            }
        }
    }
}

/// Checks a device name (`cpu`, `auto`, `cuda`, `gpu` or `cuda:N`) without
/// touching any GPU.
pub fn check_device_name(spec: &str) -> Result<(), String> {
    let spec = spec.trim().to_ascii_lowercase();
    let known = matches!(spec.as_str(), "cpu" | "auto" | "cuda" | "gpu")
        || spec
            .strip_prefix("cuda:")
            .is_some_and(|n| n.parse::<usize>().is_ok());
    if known {
        Ok(())
    } else {
        Err(format!(
            "unknown device {spec:?}: expected cpu, auto, cuda or cuda:N"
        ))
    }
}

/// In a build without libtorch every network runs on the CPU: the message
/// for a configuration that asks for a GPU.
pub fn cpu_only_note(spec: &str) -> Option<String> {
    let spec = spec.trim().to_ascii_lowercase();
    (spec.starts_with("cuda") || spec == "gpu")
        .then(|| format!("device {spec}: this build has no libtorch (no CUDA); using the CPU"))
}
