//! The neural network: input features, the network file, the backends that
//! evaluate it (the native kernels; libtorch with the `torch` feature), and
//! the batched evaluation service.

pub mod backend;
pub mod batch;
#[cfg(feature = "torch")]
pub mod device;
pub use wuzi_game::features;
#[cfg(feature = "torch")]
pub mod model;
pub mod native;
pub mod network_file;
pub mod precision;
pub mod provider;
pub mod service;
pub mod settings;
pub mod symmetry;

pub use backend::{Backend, BackendSetting, BatchEvaluator, Model};
pub use batch::{measure_rate, BatchOutput, BatchShapeError, EncodedBatch};
pub use features::{encode, INPUT_PLANES};
#[cfg(feature = "torch")]
pub use model::{Frozen, Network};
pub use native::{Isa, NativeEvaluator, NativeNetwork};
pub use network_file::{NetConfig, NetError};
pub use precision::{Calibration, Precision, PrecisionSetting};
pub use service::{
    expectation, EvalService, Evaluation, EvaluatorThreads, ServiceConfig, SymmetryMode,
};
pub use settings::NetworkSettings;
