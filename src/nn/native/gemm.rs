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

    /// `ROWS` rows by `8 * VECS` columns of `c`, accumulated in registers
    /// over all of `k` (6 x 16 fills 12 of the 16 registers with sums).
    /// `b` is the panel of those columns, `8 * VECS` wide.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn block<const ROWS: usize, const VECS: usize>(
        k: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        n: usize,
        c: *mut f32,
    ) {
        let mut acc = [[_mm256_setzero_ps(); VECS]; ROWS];
        for kk in 0..k {
            let mut bv = [_mm256_setzero_ps(); VECS];
            for (w, v) in bv.iter_mut().enumerate() {
                *v = _mm256_loadu_ps(b.add(kk * 8 * VECS + 8 * w));
            }
            for (r, sums) in acc.iter_mut().enumerate() {
                let av = _mm256_broadcast_ss(&*a.add(r * lda + kk));
                for (s, v) in sums.iter_mut().zip(bv) {
                    *s = _mm256_fmadd_ps(av, v, *s);
                }
            }
        }
        for (r, sums) in acc.iter().enumerate() {
            for (w, s) in sums.iter().enumerate() {
                _mm256_storeu_ps(c.add(r * n + 8 * w), *s);
            }
        }
    }

    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn strip<const VECS: usize>(
        m: usize,
        k: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        n: usize,
        c: *mut f32,
    ) {
        let mut i = 0;
        while i + 6 <= m {
            block::<6, VECS>(k, a.add(i * lda), lda, b, n, c.add(i * n));
            i += 6;
        }
        if i == m {
            return;
        }
        let (a, c) = (a.add(i * lda), c.add(i * n));
        match m - i {
            1 => block::<1, VECS>(k, a, lda, b, n, c),
            2 => block::<2, VECS>(k, a, lda, b, n, c),
            3 => block::<3, VECS>(k, a, lda, b, n, c),
            4 => block::<4, VECS>(k, a, lda, b, n, c),
            5 => block::<5, VECS>(k, a, lda, b, n, c),
            _ => {}
        }
    }

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
            strip::<2>(m, k, a, lda, b.add(j * k), n, c.add(j));
            j += 16;
        }
        if j < n {
            strip::<1>(m, k, a, lda, b.add(j * k), n, c.add(j));
        }
    }

    /// As [`block`] with 16-lane registers: `ROWS` rows by `16 * VECS`
    /// columns. AVX-512 has 32 registers, so a block holds 24 sums and
    /// loads each row of `b` once per six or twelve rows of `a`. `b` is the
    /// first of `VECS` panels of 16 columns, `16 * k` floats apart.
    #[target_feature(enable = "avx512f,avx2,fma")]
    #[inline]
    unsafe fn block512<const ROWS: usize, const VECS: usize>(
        k: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        n: usize,
        c: *mut f32,
    ) {
        let mut acc = [[_mm512_setzero_ps(); VECS]; ROWS];
        for kk in 0..k {
            let mut bv = [_mm512_setzero_ps(); VECS];
            for (w, v) in bv.iter_mut().enumerate() {
                *v = _mm512_loadu_ps(b.add(16 * (w * k + kk)));
            }
            for (r, sums) in acc.iter_mut().enumerate() {
                let av = _mm512_set1_ps(*a.add(r * lda + kk));
                for (s, v) in sums.iter_mut().zip(bv) {
                    *s = _mm512_fmadd_ps(av, v, *s);
                }
            }
        }
        for (r, sums) in acc.iter().enumerate() {
            for (w, s) in sums.iter().enumerate() {
                _mm512_storeu_ps(c.add(r * n + 16 * w), *s);
            }
        }
    }

    /// All rows of `c` for `16 * VECS` columns: blocks of `ROWS` rows,
    /// then the rows left over.
    #[target_feature(enable = "avx512f,avx2,fma")]
    #[inline]
    unsafe fn strip512<const ROWS: usize, const VECS: usize>(
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
            block512::<ROWS, VECS>(k, a.add(i * lda), lda, b, n, c.add(i * n));
            i += ROWS;
        }
        // Left-over rows in blocks of 4, 2 and 1 (fewer than `ROWS`).
        while i + 4 <= m {
            block512::<4, VECS>(k, a.add(i * lda), lda, b, n, c.add(i * n));
            i += 4;
        }
        if i + 2 <= m {
            block512::<2, VECS>(k, a.add(i * lda), lda, b, n, c.add(i * n));
            i += 2;
        }
        if i < m {
            block512::<1, VECS>(k, a.add(i * lda), lda, b, n, c.add(i * n));
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
            strip512::<6, 4>(m, k, a, lda, b.add(j * k), n, c.add(j));
            j += 64;
        }
        if j + 32 <= n {
            strip512::<12, 2>(m, k, a, lda, b.add(j * k), n, c.add(j));
            j += 32;
        }
        if j + 16 <= n {
            strip512::<12, 1>(m, k, a, lda, b.add(j * k), n, c.add(j));
            j += 16;
        }
        if j < n {
            strip::<1>(m, k, a, lda, b.add(j * k), n, c.add(j));
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
            // Every column strip of the AVX-512 kernel (64, 32, 16, 8)
            // and every way its rows are left over.
            (31, 17, 120, 19),
            (12, 8, 32, 8),
            (19, 3, 72, 5),
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
