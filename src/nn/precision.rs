//! Inference precision. fp32 works everywhere. libtorch's bf16 is 2-6x
//! faster on CPUs with AMX or AVX512-BF16 and about 3x slower on those
//! without (see `shared/notes/libtorch.md`), so its `auto` measures both
//! at load and keeps the faster; CUDA uses half precision. The native
//! kernels' `auto` does the same where the CPU has AVX512-BF16 and their
//! AVX-512 kernels run (`native::choose_precision`), and is fp32 elsewhere.

use std::fmt;
use std::str::FromStr;

#[cfg(feature = "torch")]
pub use measure::*;

/// The floating-point format the network evaluates in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Precision {
    Fp32,
    Bf16,
    /// fp16, for CUDA.
    Half,
    /// The native kernels' 3x3 convolutions with their products' operands
    /// in 16-bit integers, on CPUs with AVX2 (libtorch has none: it runs
    /// fp32 for it).
    Int16,
}

#[cfg(feature = "torch")]
impl Precision {
    pub fn kind(self) -> tch::Kind {
        use tch::Kind;
        match self {
            Precision::Fp32 => Kind::Float,
            Precision::Bf16 => Kind::BFloat16,
            Precision::Half => Kind::Half,
            // Never asked of libtorch (`resolve` gives fp32 for it).
            Precision::Int16 => Kind::Float,
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Precision::Fp32 => "fp32",
            Precision::Bf16 => "bf16",
            Precision::Half => "half",
            Precision::Int16 => "int16",
        })
    }
}

/// What the configuration asks for (`network.precision`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PrecisionSetting {
    /// libtorch: half on CUDA; on a CPU, the faster of fp32 and bf16,
    /// measured. The native kernels: where the CPU has AVX512-BF16, bf16
    /// when measured clearly the faster (`native::choose_precision`).
    #[default]
    Auto,
    Fixed(Precision),
}

impl FromStr for PrecisionSetting {
    type Err = String;

    fn from_str(s: &str) -> Result<PrecisionSetting, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(PrecisionSetting::Auto),
            "fp32" => Ok(PrecisionSetting::Fixed(Precision::Fp32)),
            "bf16" => Ok(PrecisionSetting::Fixed(Precision::Bf16)),
            "half" | "fp16" => Ok(PrecisionSetting::Fixed(Precision::Half)),
            "int16" | "i16" => Ok(PrecisionSetting::Fixed(Precision::Int16)),
            other => Err(format!(
                "precision {other:?}: expected auto, fp32, bf16, int16 or half"
            )),
        }
    }
}

/// Positions per second of one network in fp32 and in bf16, measured on
/// one batch size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    pub fp32: f64,
    pub bf16: f64,
}

impl Calibration {
    /// bf16 only when it is clearly faster: within 10%, fp32's exactness
    /// is worth more than the speed.
    pub fn choice(&self) -> Precision {
        if self.bf16 > 1.1 * self.fp32 {
            Precision::Bf16
        } else {
            Precision::Fp32
        }
    }
}

/// Whether this CPU may compute bf16 in hardware. On x86-64 that takes
/// AVX512-BF16 (every CPU with AMX has it too); without it libtorch
/// emulates bf16 at a fraction of fp32's speed (0.11-0.22x measured on an
/// AMD EPYC without it), and a bf16 batch to measure that took seconds at
/// start-up. Elsewhere the measurement decides.
pub fn bf16_may_be_native() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512bf16")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        true
    }
}

/// Measuring libtorch's precisions.
#[cfg(feature = "torch")]
mod measure {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    use std::time::Duration;

    use tch::{Device, Kind, Tensor};

    use super::{bf16_may_be_native, Calibration, Precision, PrecisionSetting};
    use crate::nn::batch::measure_rate;
    use crate::nn::features::INPUT_PLANES;
    use crate::nn::model::{Frozen, BOARD_PLANE, LEGAL_PLANE};
    use crate::nn::{NetConfig, Network};

    /// Positions per second of forward passes of a ready `input` batch for
    /// about `time` (at least one pass), after one warm-up pass. The answers are
    /// copied back, as the service does, so that GPU work is finished.
    pub fn forward_rate(network: &Frozen, input: &Tensor, time: Duration) -> f64 {
        measure_rate(input.size()[0] as usize, time, || {
            let (p, v) = network.evaluate(input);
            let _ = (p.to_device(Device::Cpu), v.to_device(Device::Cpu));
        })
    }

    /// Positions per second of `network` on a batch of `batch` empty 15x15
    /// boards for about `time`.
    pub fn positions_per_second(network: &Frozen, batch: usize, time: Duration) -> f64 {
        forward_rate(network, &empty_boards(batch, network.device()), time)
    }

    /// The input of `batch` empty 15x15 boards on `device`, every cell on the
    /// board and legal as in an opening: what speed measurements feed.
    pub fn empty_boards(batch: usize, device: Device) -> Tensor {
        let input = Tensor::zeros(
            [batch.max(1) as i64, INPUT_PLANES as i64, 15, 15],
            (Kind::Float, device),
        );
        let _ = input.narrow(1, LEGAL_PLANE, 1).fill_(1.0);
        let _ = input.narrow(1, BOARD_PLANE, 1).fill_(1.0);
        input
    }

    /// Measures fp32 and bf16 inference of `network` (about 2 x `time`).
    pub fn calibrate(network: &Network, batch: usize, time: Duration) -> Calibration {
        let fp32 = positions_per_second(&network.freeze(Precision::Fp32), batch, time);
        let bf16 = positions_per_second(&network.freeze(Precision::Bf16), batch, time);
        Calibration { fp32, bf16 }
    }

    /// Calibrations already made in this process, per network size and batch:
    /// the engine loads a network per rule, and one measurement serves all of
    /// the same size.
    fn measured() -> &'static Mutex<HashMap<(NetConfig, usize), Calibration>> {
        static MEASURED: OnceLock<Mutex<HashMap<(NetConfig, usize), Calibration>>> =
            OnceLock::new();
        MEASURED.get_or_init(|| Mutex::new(HashMap::new()))
    }

    /// The precision `setting` gives `network` for batches of `batch`: half on
    /// CUDA, fp32 on a CPU without bf16 hardware, and the measured faster one
    /// on other CPUs for `auto`. Returns it with the calibration, when one was
    /// made.
    pub fn resolve(
        setting: PrecisionSetting,
        network: &Network,
        batch: usize,
    ) -> (Precision, Option<Calibration>) {
        match setting {
            PrecisionSetting::Fixed(Precision::Int16) => (Precision::Fp32, None),
            PrecisionSetting::Fixed(precision) => (precision, None),
            PrecisionSetting::Auto if network.device() != Device::Cpu => (Precision::Half, None),
            PrecisionSetting::Auto if !bf16_may_be_native() => (Precision::Fp32, None),
            PrecisionSetting::Auto => {
                let key = (network.config(), batch);
                // Held while measuring: a second caller waits for the
                // first's answer rather than measuring beside it on the
                // same cores, each slowing the other, and perhaps choosing
                // differently.
                let mut measured = measured()
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                let calibration = *measured
                    .entry(key)
                    .or_insert_with(|| calibrate(network, batch, Duration::from_millis(30)));
                (calibration.choice(), Some(calibration))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_faster_precision_is_chosen() {
        let slow_bf16 = Calibration {
            fp32: 2900.0,
            bf16: 950.0,
        };
        assert_eq!(slow_bf16.choice(), Precision::Fp32);
        let fast_bf16 = Calibration {
            fp32: 2900.0,
            bf16: 8800.0,
        };
        assert_eq!(fast_bf16.choice(), Precision::Bf16);
        let even = Calibration {
            fp32: 2900.0,
            bf16: 3000.0,
        };
        assert_eq!(even.choice(), Precision::Fp32, "within 10%: fp32");
    }

    /// The hardware check agrees with what the kernel reports, so that
    /// both kinds of machine are told apart (this runs on both).
    #[test]
    fn bf16_hardware_is_read_from_the_cpu() {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        if cfg!(target_arch = "x86_64") && !cpuinfo.is_empty() {
            assert_eq!(bf16_may_be_native(), cpuinfo.contains("avx512_bf16"));
        }
    }

    #[test]
    fn settings_parse() {
        assert_eq!("auto".parse(), Ok(PrecisionSetting::Auto));
        assert_eq!(
            " BF16".parse(),
            Ok(PrecisionSetting::Fixed(Precision::Bf16))
        );
        assert_eq!("fp32".parse(), Ok(PrecisionSetting::Fixed(Precision::Fp32)));
        assert_eq!(
            "int16".parse(),
            Ok(PrecisionSetting::Fixed(Precision::Int16))
        );
        assert!("fp8".parse::<PrecisionSetting>().is_err());
    }
}
