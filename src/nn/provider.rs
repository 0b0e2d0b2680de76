//! Which network evaluates which rule: loads the configured file for a
//! rule (once), with the configured backend and device, behind an
//! evaluation service.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
#[cfg(feature = "torch")]
use std::time::Duration;

use crate::game::{BoardSize, Rule};
use crate::nn::backend::{Backend, BackendSetting, Model};
use crate::nn::native::simd::parse_isa_setting;
use crate::nn::native::{Isa, NativeNetwork};
use crate::nn::{EvalService, NetworkSettings, Precision, ServiceConfig, SymmetryMode};

/// A rule's network file and its fp32 one, if any.
type NetworkFiles = (PathBuf, Option<PathBuf>);

/// Loads networks on demand and keeps the service of the last one used.
pub struct NetworkProvider {
    settings: NetworkSettings,
    backend: BackendSetting,
    /// The native kernels' instruction set (`None`: the widest here).
    isa: Option<Isa>,
    #[cfg(feature = "torch")]
    device: tch::Device,
    service_config: ServiceConfig,
    /// The services loaded so far, by network file and fp32 file: two rules
    /// sharing a network but not its fp32 one need two services.
    loaded: HashMap<NetworkFiles, Arc<EvalService>>,
    /// The files of the last service handed out.
    current: Option<NetworkFiles>,
    /// Files that failed, with the reason (never retried).
    failed: HashMap<PathBuf, String>,
    /// Networks that cannot be played, with the reason they failed
    /// (`network.tactics_only_fallback` is off).
    refused: HashMap<NetworkFiles, String>,
    /// A message about the device choice (e.g. CUDA missing), shown once.
    pub device_note: Option<String>,
}

impl NetworkProvider {
    pub fn new(settings: &NetworkSettings) -> NetworkProvider {
        #[cfg(feature = "torch")]
        let (device, device_note) = {
            crate::nn::device::tune_cpu(settings.torch_threads);
            crate::nn::device::select_device(&settings.device).unwrap_or((tch::Device::Cpu, None))
        };
        #[cfg(not(feature = "torch"))]
        let device_note = crate::nn::backend::cpu_only_note(&settings.device);
        NetworkProvider {
            settings: settings.clone(),
            backend: settings.backend.parse().unwrap_or_default(),
            isa: parse_isa_setting(&settings.isa).unwrap_or(None),
            #[cfg(feature = "torch")]
            device,
            service_config: ServiceConfig {
                batch_size: settings.batch_size,
                evaluator_threads: settings.evaluator_threads,
                symmetry: settings.symmetry.parse().unwrap_or(SymmetryMode::Random),
                precision: settings.precision.parse().unwrap_or_default(),
                ..ServiceConfig::default()
            },
            loaded: HashMap::new(),
            current: None,
            failed: HashMap::new(),
            refused: HashMap::new(),
            device_note,
        }
    }

    /// The files the configuration names for `rule` on a board of `size`.
    fn files_for(&self, rule: Rule, size: BoardSize) -> NetworkFiles {
        (
            self.settings.network_for(rule, size).to_path_buf(),
            self.settings
                .fp32_network_for(rule, size)
                .map(Path::to_path_buf),
        )
    }

    /// Loads every network the configuration may play, each rule on each
    /// board size that picks another file; the notes of those that fell
    /// back or were refused.
    pub fn load_all(&mut self) -> Vec<String> {
        let mut notes = Vec::new();
        for rule in Rule::ALL {
            for size in self.settings.board_sizes_of(rule) {
                if let Some(note) = self.service_for(rule, size).map_or_else(Some, |(_, n)| n) {
                    if !notes.contains(&note) {
                        notes.push(note);
                    }
                }
            }
        }
        notes
    }

    /// The service for `rule` on a board of `size`, with a note when it is
    /// not the configured network. When that network cannot be used: a
    /// uniform evaluator (tactics only) with the reason as the note where
    /// `network.tactics_only_fallback` allows it; otherwise the reason as
    /// the error, and the rule is refused on such boards
    /// ([`NetworkProvider::refusal`]). A tournament brain must not play on
    /// silently without its network.
    pub fn service_for(
        &mut self,
        rule: Rule,
        size: BoardSize,
    ) -> Result<(Arc<EvalService>, Option<String>), String> {
        let files = self.files_for(rule, size);
        let (path, fp32_path) = files.clone();
        if let Some(service) = self.loaded.get(&files) {
            self.current = Some(files);
            return Ok((Arc::clone(service), None));
        }
        if let Some(why) = self.refused.get(&files) {
            return Err(refusal_text(why, rule, size));
        }
        let (service, note) = match self.load(&path, fp32_path.as_deref()) {
            Ok(loaded) => loaded,
            Err(why) if self.settings.tactics_only_fallback => {
                let note = format!("{why}; playing {rule} without a network (tactics only)");
                match EvalService::start_uniform(self.service_config.clone()) {
                    Ok(service) => (service, Some(note)),
                    Err(e) => return Ok(self.fail_hard(e)),
                }
            }
            Err(why) => {
                let refusal = refusal_text(&why, rule, size);
                self.refused.insert(files, why);
                return Err(refusal);
            }
        };
        let service = Arc::new(service);
        self.loaded.insert(files.clone(), Arc::clone(&service));
        self.current = Some(files);
        Ok((service, note))
    }

    /// Why `rule` cannot be played on a board of `size`, if its network
    /// failed to load (in [`NetworkProvider::service_for`]) and no fallback
    /// is allowed.
    pub fn refusal(&self, rule: Rule, size: BoardSize) -> Option<String> {
        self.refused
            .get(&self.files_for(rule, size))
            .map(|why| refusal_text(why, rule, size))
    }

    /// Why nothing can be played, if every network of every rule was
    /// refused (the reason of freestyle's on 15x15): a brain without any
    /// network.
    pub fn refusal_of_every_rule(&self) -> Option<String> {
        let every_one_refused = Rule::ALL.iter().all(|&rule| {
            self.settings
                .board_sizes_of(rule)
                .into_iter()
                .all(|size| self.refused.contains_key(&self.files_for(rule, size)))
        });
        if every_one_refused {
            self.refusal(Rule::Freestyle, BoardSize::FIFTEEN)
        } else {
            None
        }
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

    /// Loads `path` with the configured backend. Inference in fp32 (the
    /// native kernels without AVX512-BF16, libtorch without bf16 hardware)
    /// loads `fp32_path` instead when one is given: where a larger network
    /// runs in fp32, a smaller one can be the stronger at equal time
    /// (measured per rule, `docs/native-backend.md`).
    /// With the service, why a configured fp32 network was not used (the
    /// rule's own plays instead).
    fn load(
        &mut self,
        path: &Path,
        fp32_path: Option<&Path>,
    ) -> Result<(EvalService, Option<String>), String> {
        let native = self.load_native(path)?;
        let (backend, measured) = self.choose_backend(path, &native);
        let (model, note, used) = match backend {
            #[cfg(feature = "torch")]
            Backend::Torch => {
                let loaded = without_panics(path, || self.torch_model(path, fp32_path));
                if let Err(why) = &loaded {
                    self.failed.insert(path.to_path_buf(), why.clone());
                }
                loaded?
            }
            #[cfg(feature = "torch")]
            Backend::Native => self.native_model(path, native, fp32_path),
            #[cfg(not(feature = "torch"))]
            Backend::Native | Backend::Torch => self.native_model(path, native, fp32_path),
        };
        let service_config = self.service_config.clone();
        let mut service = without_panics(used, || {
            EvalService::start_model(model, service_config)
                .map_err(|e| format!("cannot start evaluator threads: {e}"))
        })?;
        if let Some(measured) = measured {
            service.add_to_description(&measured);
        }
        // The first forward pass allocates buffers (and compiles libtorch's
        // kernels): pay it now rather than in the first timed move. It also
        // checks the answers: weights that are all finite can still
        // overflow on the way through the layers, and the evaluator
        // replaces such answers by no knowledge, so a network that gives
        // them would play on guesses without a word.
        let non_finite = crate::nn::service::non_finite_answers();
        let failed_batches = crate::nn::service::failed_batches();
        for (side, stones) in [(15, 0), (20, 0), (15, 5)] {
            if let Ok(size) = crate::game::BoardSize::square(side) {
                let mut board = crate::game::Board::new(size, crate::game::Rule::Freestyle);
                for (x, y) in [(7, 7), (8, 8), (7, 8), (6, 6), (8, 7)]
                    .into_iter()
                    .take(stones)
                {
                    if let Ok(p) = board.point(x, y) {
                        let _ = board.play(p);
                    }
                }
                let _ = service.evaluate(&mut board);
            }
        }
        let fault = if crate::nn::service::failed_batches() > failed_batches {
            // libtorch on a device it cannot run (a GPU without kernels
            // for this build, its memory full): every move would be a guess.
            Some("the backend fails on its batches (see the log)")
        } else if crate::nn::service::non_finite_answers() > non_finite {
            Some("its answers are not finite numbers (the weights overflow on the way through the network)")
        } else {
            None
        };
        if let Some(fault) = fault {
            let why = crate::nn::NetError::new(used, fault).to_string();
            self.failed.insert(used.to_path_buf(), why.clone());
            if used != path {
                // The rule's own network plays, as for an fp32 file that
                // cannot be read (the failure is remembered).
                drop(service);
                return self.load(path, fp32_path);
            }
            return Err(why);
        }
        Ok((service, note))
    }

    /// The configured backend, or for `auto`: libtorch on a GPU; the native
    /// one on a CPU without bf16 hardware; elsewhere the faster of the two
    /// on this network, libtorch in the precision it would use (measured
    /// once per network size and batch). With a measurement, also what it
    /// found, for the log: the choice changes the search (leaves per
    /// network call), not only its speed.
    fn choose_backend(
        &mut self,
        path: &Path,
        network: &Arc<NativeNetwork>,
    ) -> (Backend, Option<String>) {
        match self.backend {
            BackendSetting::Fixed(backend) => (backend, None),
            #[cfg(not(feature = "torch"))]
            BackendSetting::Auto => {
                let _ = (path, network);
                (Backend::Native, None)
            }
            #[cfg(feature = "torch")]
            BackendSetting::Auto if self.device != tch::Device::Cpu => (Backend::Torch, None),
            // Without bf16 hardware libtorch computes in fp32, which the
            // native kernels do faster on every CPU measured
            // (docs/native-backend.md): no need to load it to measure.
            #[cfg(feature = "torch")]
            BackendSetting::Auto if !crate::nn::precision::bf16_may_be_native() => {
                (Backend::Native, None)
            }
            #[cfg(feature = "torch")]
            BackendSetting::Auto => {
                use std::sync::{Mutex, OnceLock};
                type Choices = Mutex<HashMap<(crate::nn::NetConfig, usize), (Backend, String)>>;
                static CHOSEN: OnceLock<Choices> = OnceLock::new();
                let batch = self.service_config.batch_size;
                let key = (network.config(), batch);
                let chosen = CHOSEN.get_or_init(Default::default);
                if let Some((backend, measured)) =
                    chosen.lock().ok().and_then(|c| c.get(&key).cloned())
                {
                    return (backend, Some(measured));
                }
                let time = Duration::from_millis(30);
                let isa = crate::nn::native::simd::resolve_isa(self.isa);
                let native = crate::nn::native::positions_per_second(
                    network,
                    isa,
                    crate::nn::native::choose_precision(
                        network,
                        self.service_config.precision,
                        isa,
                        batch,
                    ),
                    batch,
                    15,
                    time,
                );
                let torch = self.load_torch(path).map_or(0.0, |torch| {
                    let precision =
                        crate::nn::precision::resolve(self.service_config.precision, &torch, batch)
                            .0;
                    crate::nn::precision::positions_per_second(
                        &torch.freeze(precision),
                        batch,
                        time,
                    )
                });
                // libtorch only when clearly faster: the native backend
                // needs no fallback network and starts at once.
                let backend = if torch > 1.1 * native {
                    Backend::Torch
                } else {
                    Backend::Native
                };
                let libtorch = if torch > 0.0 {
                    format!("libtorch {torch:.0}")
                } else {
                    "libtorch unavailable".to_string()
                };
                let measured = format!(
                    "chosen by backend auto at batch {batch}: native {native:.0} positions/s, {libtorch}"
                );
                if let Ok(mut c) = chosen.lock() {
                    c.insert(key, (backend, measured.clone()));
                }
                (backend, Some(measured))
            }
        }
    }

    /// The native kernels on `network`, or on the rule's fp32 network
    /// where bf16 products cannot run (told fp32 or int16, held to AVX2,
    /// or a CPU without AVX512-BF16) and one is configured (a file that
    /// fails leaves the rule its own network).
    fn native_model<'a>(
        &mut self,
        path: &'a Path,
        network: Arc<NativeNetwork>,
        fp32_path: Option<&'a Path>,
    ) -> (Model, Option<String>, &'a Path) {
        let setting = self.service_config.precision;
        let isa = crate::nn::native::simd::resolve_isa(self.isa);
        // The fp32 network is for CPUs without bf16 products (fp32 or
        // int16 kernels, about half as fast); where bf16 products can run
        // (under `auto` even if measured no faster), the rule's own
        // network is fast enough.
        let fp32 = crate::nn::native::resolve_precision(setting, isa) != Precision::Bf16;
        let (network, note, used) = match fp32_path {
            Some(fp32_path) if fp32 && fp32_path != path => match self.load_native(fp32_path) {
                Ok(fp32_network) => (fp32_network, None, fp32_path),
                Err(why) => (network, Some(not_used(&why, path)), path),
            },
            _ => (network, None, path),
        };
        let model = Model::native(network, self.isa, setting, self.service_config.batch_size);
        (model, note, used)
    }

    #[cfg(feature = "torch")]
    fn torch_model<'a>(
        &mut self,
        path: &'a Path,
        fp32_path: Option<&'a Path>,
    ) -> Result<(Model, Option<String>, &'a Path), String> {
        let mut network = self.load_torch(path)?;
        let mut note = None;
        let mut used = path;
        let batch = self.service_config.batch_size;
        let (mut precision, _) =
            crate::nn::precision::resolve(self.service_config.precision, &network, batch);
        if let (Some(fp32_path), crate::nn::Precision::Fp32) = (fp32_path, precision) {
            // Without its smaller fp32 network the rule still has its own.
            match self.load_torch(fp32_path) {
                Ok(smaller) => {
                    network = smaller;
                    used = fp32_path;
                    precision = crate::nn::precision::resolve(
                        self.service_config.precision,
                        &network,
                        batch,
                    )
                    .0;
                }
                Err(why) => note = Some(not_used(&why, path)),
            }
        }
        let model = Model::Torch {
            network: Box::new(network),
            precision,
        };
        Ok((model, note, used))
    }

    /// Reads and checks `path` (every backend reads the same file).
    fn load_native(&mut self, path: &Path) -> Result<Arc<NativeNetwork>, String> {
        if path.as_os_str().is_empty() {
            return Err("no network file is configured for this rule".to_string());
        }
        if let Some(why) = self.failed.get(path) {
            return Err(why.clone());
        }
        NativeNetwork::load(path).map(Arc::new).map_err(|e| {
            let why = e.to_string();
            self.failed.insert(path.to_path_buf(), why.clone());
            why
        })
    }

    #[cfg(feature = "torch")]
    fn load_torch(&mut self, path: &Path) -> Result<crate::nn::Network, String> {
        if let Some(why) = self.failed.get(path) {
            return Err(why.clone());
        }
        crate::nn::Network::load(path, self.device).map_err(|e| {
            let why = e.to_string();
            self.failed.insert(path.to_path_buf(), why.clone());
            why
        })
    }
}

/// Why `rule` cannot be played on a board of `size`: its network failed
/// for `why` (two rules, or two sizes, may share the file).
fn refusal_text(why: &str, rule: Rule, size: BoardSize) -> String {
    format!(
        "{why}; {rule} on {size} cannot be played without its network \
         (network.tactics_only_fallback = true plays it with tactics only)"
    )
}

/// `load`'s result, or its panic as the error of the network at `path`:
/// libtorch reports some failures as panics (a GPU without kernels for
/// this build, memory it cannot allocate), which must not end the brain
/// while it loads.
fn without_panics<T>(path: &Path, load: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(load)).unwrap_or_else(|payload| {
        let what = crate::panics::message(&*payload).unwrap_or("no message");
        let first = what.lines().next().unwrap_or_default();
        Err(crate::nn::NetError::new(
            path,
            format!("the backend failed while loading it ({first})"),
        )
        .to_string())
    })
}

/// Why a rule's fp32 network is not used, for the player: the rule's own
/// network then plays in fp32.
fn not_used(why: &str, path: &Path) -> String {
    let why = why.to_string();
    tracing::warn!("{why}; {} plays in fp32", path.display());
    format!("{why}; {} plays in fp32 instead", path.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_while_loading_is_the_networks_error() {
        let path = Path::new("nets/x.safetensors");
        let e = without_panics::<()>(path, || panic!("no kernel image is available\nat line 3"))
            .unwrap_err();
        assert!(
            e.contains("x.safetensors") && e.contains("no kernel image is available"),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
        assert_eq!(without_panics(path, || Ok(3)), Ok(3));
    }
}
