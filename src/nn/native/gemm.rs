//! Matrix products of the native backend: `c = a b` with `a` row-major and
//! `b` a weight matrix with a multiple of eight columns (padded channels),
//! as the Winograd products and the 1x1 convolutions have them.
//!
//! Hand-written rather than a crate's: `b` is a weight matrix laid out once
//! at load ([`Panels`]), so it needs no packing per product, and the
//! products are small (tens of rows, 32-128 columns) and many.
//! `matrixmultiply` spent a quarter of its time packing here; the figures
//! are in docs/native-backend.md.

use super::simd::Isa;

/// Columns of one panel of [`Panels`]: the AVX2 kernel's block width and
/// one AVX-512 register.
const PANEL: usize = 16;

/// A `k x n` right-hand matrix laid out for the kernels: panels of 16
/// columns (the last one 8 wide where `n` is an odd multiple of 8), each
/// panel's `k` rows one after another. A block of the kernels then reads its
/// weights as one contiguous stream per panel; with the matrix row-major,
/// the AVX2 kernel read 64 bytes of every 256-byte row, and waited on those
/// loads (docs/native-backend.md).
#[derive(Clone, Debug)]
pub struct Panels {
    k: usize,
    n: usize,
    /// The panel of columns `j..j + 16` starts at `j * k`.
    data: Vec<f32>,
}

impl Panels {
    /// Lays out the row-major `k x n` matrix `b` (rows `n` apart).
    pub fn new(b: &[f32], k: usize, n: usize) -> Panels {
        assert!(n.is_multiple_of(8) && b.len() >= k * n, "panels shape");
        let mut data = Vec::with_capacity(k * n);
        for (j, width) in panels(n) {
            for row in 0..k {
                data.extend_from_slice(&b[row * n + j..][..width]);
            }
        }
        Panels { k, n, data }
    }
}

/// The first column and the width of each panel of an `n`-column matrix.
fn panels(n: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n).step_by(PANEL).map(move |j| (j, (n - j).min(PANEL)))
}

/// `c = a b` for `b` of `k x n`: `a` is `m x k` (rows `lda` apart), `c` is
/// `m x n` (rows `n` apart).
pub fn multiply(isa: Isa, m: usize, a: &[f32], lda: usize, b: &Panels, c: &mut [f32]) {
    let (k, n) = (b.k, b.n);
    assert!(lda >= k, "gemm shape");
    let extent = |rows: usize, stride: usize, last: usize| {
        rows.checked_sub(1)
            .map_or(Some(0), |r| r.checked_mul(stride)?.checked_add(last))
    };
    assert!(extent(m, lda, k).is_some_and(|e| a.len() >= e), "gemm a");
    assert!(extent(m, n, n).is_some_and(|e| c.len() >= e), "gemm c");
    let b_data = b.data.as_ptr();
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx512 && isa.is_supported() {
        // SAFETY: the CPU has AVX-512F, AVX2 and FMA (checked above), the
        // extents of `a` and `c` were asserted, and `b` is `k x n` panels.
        unsafe { x86::multiply_avx512(m, k, n, a.as_ptr(), lda, b_data, c.as_mut_ptr()) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx2 && isa.is_supported() {
        // SAFETY: the CPU has AVX2 and FMA (checked above), the extents of
        // `a` and `c` were asserted, and `b` is `k x n` panels.
        unsafe { x86::multiply(m, k, n, a.as_ptr(), lda, b_data, c.as_mut_ptr()) };
        return;
    }
    let _ = (isa, b_data);
    portable(m, a, lda, b, c);
}

fn portable(m: usize, a: &[f32], lda: usize, b: &Panels, c: &mut [f32]) {
    let (k, n) = (b.k, b.n);
    for i in 0..m {
        let row = &mut c[i * n..][..n];
        row.fill(0.0);
        for (j, width) in panels(n) {
            let panel = &b.data[j * k..][..k * width];
            let out = &mut row[j..][..width];
            for kk in 0..k {
                let av = a[i * lda + kk];
                for (cv, bv) in out.iter_mut().zip(&panel[kk * width..][..width]) {
                    *cv += av * bv;
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// Writes the register-blocked kernel once for a register width: the
    /// instruction set of each copy must be fixed at compile time for its
    /// intrinsics to inline, so the copies are made by a macro rather than
    /// by a generic over the register type.
    ///
    /// `$block::<ROWS, VECS, WIDTH>` computes `ROWS` rows by `VECS`
    /// registers of columns of `c`, summing in registers over all of `k`
    /// (a block of 6 x 2 fills 12 of AVX2's 16 registers, one of 12 x 2 or
    /// 6 x 4 fills 24 of AVX-512's 32), so each row of `b` is loaded once
    /// per `ROWS` rows of `a`. `b` is the first of the block's panels,
    /// `WIDTH` columns wide each and `WIDTH * k` floats apart.
    /// `$strip` runs the blocks down all `m` rows: blocks of `ROWS`, then
    /// the rows left over in blocks of 4, 2 and 1.
    macro_rules! register_blocked {
        ($feature:literal, $block:ident, $strip:ident, $lanes:literal,
         $zero:ident, $load:ident, $splat:ident, $fma:ident, $store:ident) => {
            #[target_feature(enable = $feature)]
            #[inline]
            unsafe fn $block<const ROWS: usize, const VECS: usize, const WIDTH: usize>(
                k: usize,
                a: *const f32,
                lda: usize,
                b: *const f32,
                n: usize,
                c: *mut f32,
            ) {
                const { assert!(WIDTH % $lanes == 0 && WIDTH >= $lanes) };
                let per_panel = WIDTH / $lanes;
                let mut acc = [[$zero(); VECS]; ROWS];
                for kk in 0..k {
                    let mut bv = [$zero(); VECS];
                    for (w, v) in bv.iter_mut().enumerate() {
                        let panel = w / per_panel * WIDTH * k;
                        *v = $load(b.add(panel + kk * WIDTH + w % per_panel * $lanes));
                    }
                    for (r, sums) in acc.iter_mut().enumerate() {
                        let av = $splat(*a.add(r * lda + kk));
                        for (s, v) in sums.iter_mut().zip(bv) {
                            *s = $fma(av, v, *s);
                        }
                    }
                }
                for (r, sums) in acc.iter().enumerate() {
                    for (w, s) in sums.iter().enumerate() {
                        $store(c.add(r * n + $lanes * w), *s);
                    }
                }
            }

            #[target_feature(enable = $feature)]
            #[inline]
            unsafe fn $strip<const ROWS: usize, const VECS: usize, const WIDTH: usize>(
                m: usize,
                k: usize,
                a: *const f32,
                lda: usize,
                b: *const f32,
                n: usize,
                c: *mut f32,
            ) {
                let mut i = 0;
                while i + ROWS <= m {
                    $block::<ROWS, VECS, WIDTH>(k, a.add(i * lda), lda, b, n, c.add(i * n));
                    i += ROWS;
                }
                while i + 4 <= m {
                    $block::<4, VECS, WIDTH>(k, a.add(i * lda), lda, b, n, c.add(i * n));
                    i += 4;
                }
                if i + 2 <= m {
                    $block::<2, VECS, WIDTH>(k, a.add(i * lda), lda, b, n, c.add(i * n));
                    i += 2;
                }
                if i < m {
                    $block::<1, VECS, WIDTH>(k, a.add(i * lda), lda, b, n, c.add(i * n));
                }
            }
        };
    }

    register_blocked!(
        "avx2,fma",
        block256,
        strip256,
        8,
        _mm256_setzero_ps,
        _mm256_loadu_ps,
        _mm256_set1_ps,
        _mm256_fmadd_ps,
        _mm256_storeu_ps
    );
    register_blocked!(
        "avx512f,avx2,fma",
        block512,
        strip512,
        16,
        _mm512_setzero_ps,
        _mm512_loadu_ps,
        _mm512_set1_ps,
        _mm512_fmadd_ps,
        _mm512_storeu_ps
    );

    /// # Safety
    /// AVX2 and FMA present; `a`, `b`, `c` valid for the extents.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn multiply(
        m: usize,
        k: usize,
        n: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        c: *mut f32,
    ) {
        let mut j = 0;
        while j + 16 <= n {
            strip256::<6, 2, 16>(m, k, a, lda, b.add(j * k), n, c.add(j));
            j += 16;
        }
        if j < n {
            strip256::<6, 1, 8>(m, k, a, lda, b.add(j * k), n, c.add(j));
        }
    }

    /// # Safety
    /// AVX-512F, AVX2 and FMA present; `a`, `b`, `c` valid for the extents.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub unsafe fn multiply_avx512(
        m: usize,
        k: usize,
        n: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        c: *mut f32,
    ) {
        let mut j = 0;
        while j + 64 <= n {
            strip512::<6, 4, 16>(m, k, a, lda, b.add(j * k), n, c.add(j));
            j += 64;
        }
        if j + 32 <= n {
            strip512::<12, 2, 16>(m, k, a, lda, b.add(j * k), n, c.add(j));
            j += 32;
        }
        if j + 16 <= n {
            strip512::<12, 1, 16>(m, k, a, lda, b.add(j * k), n, c.add(j));
            j += 16;
        }
        if j < n {
            strip256::<6, 1, 8>(m, k, a, lda, b.add(j * k), n, c.add(j));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every instruction set computes the same product as a plain triple
    /// loop in f64, on shapes with leftover rows and an 8-column strip.
    #[test]
    fn products_agree_with_the_definition() {
        let mut seed = 3u64;
        let mut noise = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            ((seed >> 40) as f32 / (1u64 << 24) as f32) - 0.5
        };
        for (m, k, n, lda) in [
            (1, 1, 8, 1),
            (7, 5, 24, 9),
            (13, 64, 64, 64),
            (6, 40, 16, 40),
            // Every column strip of the AVX-512 kernel (64, 32, 16, 8).
            (31, 17, 120, 19),
            (12, 8, 32, 8),
            (19, 3, 72, 5),
            // Left-over rows of 4 + 1, 2 + 1 and 4 + 4 + 2 + 1, on every
            // column strip of both kernels.
            (5, 9, 120, 9),
            (3, 4, 120, 6),
            (11, 7, 120, 7),
        ] {
            let a: Vec<f32> = (0..m * lda).map(|_| noise()).collect();
            let b: Vec<f32> = (0..k * n).map(|_| noise()).collect();
            for isa in Isa::all_supported() {
                let mut c = vec![f32::NAN; m * n];
                multiply(isa, m, &a, lda, &Panels::new(&b, k, n), &mut c);
                for i in 0..m {
                    for j in 0..n {
                        let want: f64 = (0..k)
                            .map(|kk| a[i * lda + kk] as f64 * b[kk * n + j] as f64)
                            .sum();
                        assert!(
                            (c[i * n + j] as f64 - want).abs() < 1e-4,
                            "{isa} {m}x{k}x{n} at {i},{j}"
                        );
                    }
                }
            }
        }
    }
}
