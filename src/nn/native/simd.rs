//! Eight-lane vectors for the channel loops, and the choice of instruction
//! set at run time.
//!
//! The kernels are written once over [`V8`] (plain arrays with lane loops,
//! which LLVM turns into one vector instruction each) and compiled several
//! times inside `#[target_feature]` functions; [`Isa::detect`] picks the
//! widest that the CPU has, so one binary runs everywhere.

use std::fmt;
use std::ops::{Add, Mul, Sub};

/// The instruction sets the native backend has kernels for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Isa {
    /// Whatever the compile target guarantees (SSE2 on x86-64).
    Portable,
    /// AVX2 with FMA (every x86-64 CPU since 2013-2015; the Gomocup's floor).
    Avx2,
    /// AVX-512F (with AVX2 and FMA).
    Avx512,
}

impl Isa {
    /// The widest instruction set this CPU runs.
    pub fn detect() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            let avx2 = std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma");
            if avx2 && std::arch::is_x86_feature_detected!("avx512f") {
                return Isa::Avx512;
            }
            if avx2 {
                return Isa::Avx2;
            }
        }
        Isa::Portable
    }

    /// Whether this CPU can run kernels built for `self`.
    pub fn is_supported(self) -> bool {
        match self {
            Isa::Portable => true,
            Isa::Avx2 | Isa::Avx512 => matches!(
                (Isa::detect(), self),
                (Isa::Avx512, _) | (Isa::Avx2, Isa::Avx2)
            ),
        }
    }

    /// Every instruction set this CPU runs, narrowest first.
    pub fn all_supported() -> Vec<Isa> {
        [Isa::Portable, Isa::Avx2, Isa::Avx512]
            .into_iter()
            .filter(|isa| isa.is_supported())
            .collect()
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Isa::Portable => "portable",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        })
    }
}

impl std::str::FromStr for Isa {
    type Err = String;

    fn from_str(s: &str) -> Result<Isa, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "portable" | "generic" => Ok(Isa::Portable),
            "avx2" => Ok(Isa::Avx2),
            "avx512" | "avx-512" => Ok(Isa::Avx512),
            other => Err(format!(
                "instruction set {other:?}: expected portable, avx2 or avx512"
            )),
        }
    }
}

/// `network.isa`: `auto` (the widest this CPU has, `None`) or one
/// instruction set, which a CPU without it replaces by its widest.
pub fn parse_isa_setting(s: &str) -> Result<Option<Isa>, String> {
    if s.trim().eq_ignore_ascii_case("auto") {
        Ok(None)
    } else {
        s.parse().map(Some).map_err(|e| format!("{e} or auto"))
    }
}

/// The instruction set kernels run in for a setting: `isa` where this CPU
/// has it, otherwise (and for `auto`) the widest it has.
pub fn resolve_isa(setting: Option<Isa>) -> Isa {
    setting
        .filter(|isa| isa.is_supported())
        .unwrap_or_else(Isa::detect)
}

/// Lanes of [`V8`]; channel counts are padded to a multiple of it.
pub const LANES: usize = 8;

/// Eight f32 lanes.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(32))]
pub struct V8(pub [f32; LANES]);

impl V8 {
    pub const ZERO: V8 = V8([0.0; LANES]);

    #[inline(always)]
    pub fn load(s: &[f32]) -> V8 {
        let mut v = [0.0; LANES];
        v.copy_from_slice(&s[..LANES]);
        V8(v)
    }

    #[inline(always)]
    pub fn store(self, s: &mut [f32]) {
        s[..LANES].copy_from_slice(&self.0);
    }

    #[inline(always)]
    pub fn splat(x: f32) -> V8 {
        V8([x; LANES])
    }

    #[inline(always)]
    pub fn relu(self) -> V8 {
        let mut v = self.0;
        for x in &mut v {
            *x = relu(*x);
        }
        V8(v)
    }

    /// `self * k` with a constant of the transforms.
    #[inline(always)]
    pub fn scale(self, k: f32) -> V8 {
        self * V8::splat(k)
    }
}

impl Add for V8 {
    type Output = V8;
    #[inline(always)]
    fn add(self, o: V8) -> V8 {
        let mut v = self.0;
        for (a, b) in v.iter_mut().zip(o.0) {
            *a += b;
        }
        V8(v)
    }
}

impl Sub for V8 {
    type Output = V8;
    #[inline(always)]
    fn sub(self, o: V8) -> V8 {
        let mut v = self.0;
        for (a, b) in v.iter_mut().zip(o.0) {
            *a -= b;
        }
        V8(v)
    }
}

impl Mul for V8 {
    type Output = V8;
    #[inline(always)]
    fn mul(self, o: V8) -> V8 {
        let mut v = self.0;
        for (a, b) in v.iter_mut().zip(o.0) {
            *a *= b;
        }
        V8(v)
    }
}

/// `n` rounded up to a multiple of [`LANES`].
pub const fn padded(n: usize) -> usize {
    n.div_ceil(LANES) * LANES
}

/// Defines `$name(isa, args...)` that runs `$body` compiled for the
/// instruction set `isa` names: the body is one `#[inline(always)]`
/// function, inlined into a copy per instruction set, so that the lane
/// type's plain arithmetic compiles to that set's instructions.
macro_rules! dispatch {
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        $(#[$meta])*
        $vis fn $name(isa: $crate::nn::native::simd::Isa, $($arg: $ty),*) {
            #[inline(always)]
            fn body($($arg: $ty),*) $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,fma")]
                unsafe fn avx2($($arg: $ty),*) {
                    body($($arg),*)
                }
                #[target_feature(enable = "avx512f,avx2,fma")]
                unsafe fn avx512($($arg: $ty),*) {
                    body($($arg),*)
                }
                // An instruction set this CPU lacks runs the portable code.
                let isa = if isa.is_supported() { isa } else { $crate::nn::native::simd::Isa::Portable };
                match isa {
                    // SAFETY: the CPU has the features (checked just above).
                    $crate::nn::native::simd::Isa::Avx2 => return unsafe { avx2($($arg),*) },
                    $crate::nn::native::simd::Isa::Avx512 => return unsafe { avx512($($arg),*) },
                    $crate::nn::native::simd::Isa::Portable => {}
                }
            }
            let _ = isa;
            body($($arg),*)
        }
    };
}
pub(crate) use dispatch;

/// `max(x, 0)` that keeps NaN: `f32::max` would turn NaN into 0 and hide
/// an overflow inside the network, where libtorch's ReLU passes it on to
/// the NaN check of the answers.
#[inline(always)]
pub fn relu(x: f32) -> f32 {
    if x < 0.0 {
        0.0
    } else {
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relu_keeps_nan() {
        assert!(relu(f32::NAN).is_nan());
        assert!(V8::splat(f32::NAN).relu().0.iter().all(|x| x.is_nan()));
        assert_eq!(relu(-2.0), 0.0);
        assert_eq!(relu(f32::NEG_INFINITY), 0.0);
        assert_eq!(relu(3.5), 3.5);
        assert_eq!(relu(f32::INFINITY), f32::INFINITY);
    }

    #[test]
    fn isa_settings_parse_and_resolve_to_what_the_cpu_has() {
        assert_eq!(parse_isa_setting(" Auto "), Ok(None));
        assert_eq!(parse_isa_setting("avx2"), Ok(Some(Isa::Avx2)));
        assert_eq!(parse_isa_setting("AVX-512"), Ok(Some(Isa::Avx512)));
        assert!(parse_isa_setting("sse9").is_err());
        assert_eq!(resolve_isa(None), Isa::detect());
        assert_eq!(resolve_isa(Some(Isa::Portable)), Isa::Portable);
        for isa in [Isa::Avx2, Isa::Avx512] {
            let want = if isa.is_supported() {
                isa
            } else {
                Isa::detect()
            };
            assert_eq!(resolve_isa(Some(isa)), want);
        }
    }
}
