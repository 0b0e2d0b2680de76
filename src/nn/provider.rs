//! Which network evaluates which rule: loads the configured file for a
//! rule (once), on the configured device, behind an evaluation service.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tch::Device;

use crate::config::Config;
use crate::game::Rule;
use crate::nn::device::{select_device, tune_cpu};
use crate::nn::{EvalService, Network, Precision, ServiceConfig, SymmetryMode};

/// Loads networks on demand and keeps the service of the last one used.
pub struct NetworkProvider {
    config: Config,
    device: Device,
    service_config: ServiceConfig,
    /// The services loaded so far, by network file.
    loaded: HashMap<PathBuf, Arc<EvalService>>,
    /// The file of the last service handed out.
    current: Option<PathBuf>,
    /// Files that failed, with the reason (not retried until the file changes).
    failed: HashMap<PathBuf, String>,
    /// A message about the device choice (e.g. CUDA missing), shown once.
    pub device_note: Option<String>,
}

impl NetworkProvider {
    pub fn new(config: &Config) -> NetworkProvider {
        tune_cpu(config.network.torch_threads);
        let (device, device_note) =
            select_device(&config.network.device).unwrap_or((Device::Cpu, None));
        NetworkProvider {
            config: config.clone(),
            device,
            service_config: ServiceConfig {
                batch_size: config.network.batch_size,
                evaluator_threads: config.network.evaluator_threads,
                symmetry: config
                    .network
                    .symmetry
                    .parse()
                    .unwrap_or(SymmetryMode::Random),
                precision: config.network.precision.parse().unwrap_or_default(),
                ..ServiceConfig::default()
            },
            loaded: HashMap::new(),
            current: None,
            failed: HashMap::new(),
            device_note,
        }
    }

    pub fn device(&self) -> Device {
        self.device
    }

    /// The service for `rule`: its network, or (when the file cannot be
    /// used) a uniform evaluator, with the reason as a message.
    pub fn service_for(&mut self, rule: Rule) -> (Arc<EvalService>, Option<String>) {
        let path = self.config.network_for(rule).to_path_buf();
        if let Some(service) = self.loaded.get(&path) {
            self.current = Some(path);
            return (Arc::clone(service), None);
        }
        let fp32_path = self.config.fp32_network_for(rule).map(Path::to_path_buf);
        let (service, note) = match self.load(&path, fp32_path.as_deref()) {
            Ok(service) => (service, None),
            Err(why) => {
                let note = format!("{why}; playing without a network (tactics only)");
                match EvalService::start_uniform(self.service_config.clone()) {
                    Ok(service) => (service, Some(note)),
                    Err(e) => return self.fail_hard(e),
                }
            }
        };
        let service = Arc::new(service);
        self.loaded.insert(path.clone(), Arc::clone(&service));
        self.current = Some(path);
        (service, note)
    }

    /// Evaluator threads could not be started at all: keep the service we
    /// had, or use one that answers nothing (searches then stop at once and
    /// play a legal move).
    fn fail_hard(&mut self, e: std::io::Error) -> (Arc<EvalService>, Option<String>) {
        let note = Some(format!("cannot start evaluator threads: {e}"));
        match self.current.as_ref().and_then(|p| self.loaded.get(p)) {
            Some(service) => (Arc::clone(service), note),
            None => (Arc::new(EvalService::stopped()), note),
        }
    }

    /// Loads `path`, or `fp32_path` instead when one is given and `path`'s
    /// network would run in fp32 (its precision is measured as the service
    /// would; the measurement is cached per network size).
    fn load(&mut self, path: &Path, fp32_path: Option<&Path>) -> Result<EvalService, String> {
        let mut network = self.load_network(path)?;
        if let Some(fp32_path) = fp32_path {
            let (precision, _) = crate::nn::precision::resolve(
                self.service_config.precision,
                &network,
                self.service_config.batch_size,
            );
            if precision == Precision::Fp32 {
                network = self.load_network(fp32_path)?;
            }
        }
        let service = EvalService::start(network, self.service_config.clone())
            .map_err(|e| format!("cannot start evaluator threads: {e}"))?;
        // The first forward pass compiles libtorch's kernels (about 0.1 s):
        // pay it now rather than in the first timed move.
        for side in [15, 20] {
            if let Ok(size) = crate::game::BoardSize::square(side) {
                let _ = service.evaluate(&mut crate::game::Board::new(
                    size,
                    crate::game::Rule::Freestyle,
                ));
            }
        }
        Ok(service)
    }

    fn load_network(&mut self, path: &Path) -> Result<Network, String> {
        if path.as_os_str().is_empty() {
            return Err("no network file is configured for this rule".to_string());
        }
        if let Some(why) = self.failed.get(path) {
            return Err(why.clone());
        }
        Network::load(path, self.device).map_err(|e| {
            let why = e.to_string();
            self.failed.insert(path.to_path_buf(), why.clone());
            why
        })
    }
}
