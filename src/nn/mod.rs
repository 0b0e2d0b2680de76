//! The neural network: input features, the residual model, devices, and the
//! batched evaluation service.

pub mod device;
pub use wuzi_core::features;
pub mod model;
pub mod precision;
pub mod provider;
pub mod service;
pub mod symmetry;

pub use features::{encode, INPUT_PLANES};
pub use model::{Frozen, NetConfig, NetError, Network};
pub use precision::{Calibration, Precision, PrecisionSetting};
pub use service::{EvalService, Evaluation, EvaluatorThreads, ServiceConfig, SymmetryMode};
