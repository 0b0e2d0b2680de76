//! Matrix products of the native backend: `c = a b` with `a` row-major and
//! `b` row-major with a multiple of eight columns (padded channels), as the
//! Winograd products and the 1x1 convolutions have them.
//!
//! Hand-written rather than a crate's: `b` is a weight matrix laid out once
//! at load, so it needs no packing, and the products are small (tens of
//! rows, 32-128 columns) and many. `matrixmultiply` spent a quarter of its
//! time packing here; the figures are in docs/native-backend.md.

use super::simd::Isa;

/// `c = a b`: `a` is `m x k` (rows `lda` apart), `b` is `k x n` (rows `n`
/// apart), `c` is `m x n` (rows `n` apart); `n` a multiple of 8.
#[allow(clippy::too_many_arguments)]
pub fn multiply(
    isa: Isa,
    m: usize,
    k: usize,
    n: usize,
    a: &[f32],
    lda: usize,
    b: &[f32],
    c: &mut [f32],
) {
    assert!(n % 8 == 0 && lda >= k, "gemm shape");
    let extent = |rows: usize, stride: usize, last: usize| {
        rows.checked_sub(1)
            .map_or(Some(0), |r| r.checked_mul(stride)?.checked_add(last))
    };
    assert!(extent(m, lda, k).is_some_and(|e| a.len() >= e), "gemm a");
    assert!(extent(k, n, n).is_some_and(|e| b.len() >= e), "gemm b");
    assert!(extent(m, n, n).is_some_and(|e| c.len() >= e), "gemm c");
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx512 && isa.is_supported() {
        // SAFETY: the CPU has AVX-512F, AVX2 and FMA (checked above), and
        // the extents were asserted.
        unsafe { x86::multiply_avx512(m, k, n, a.as_ptr(), lda, b.as_ptr(), c.as_mut_ptr()) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx2 && isa.is_supported() {
        // SAFETY: the CPU has AVX2 and FMA (checked above), and the
        // extents were asserted.
        unsafe { x86::multiply(m, k, n, a.as_ptr(), lda, b.as_ptr(), c.as_mut_ptr()) };
        return;
    }
    let _ = isa;
    portable(m, k, n, a, lda, b, c);
}

fn portable(m: usize, k: usize, n: usize, a: &[f32], lda: usize, b: &[f32], c: &mut [f32]) {
    for i in 0..m {
        let row = &mut c[i * n..][..n];
        row.fill(0.0);
        for kk in 0..k {
            let av = a[i * lda + kk];
            for (cv, bv) in row.iter_mut().zip(&b[kk * n..][..n]) {
                *cv += av * bv;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// `ROWS` rows by `8 * VECS` columns of `c`, accumulated in registers
    /// over all of `k` (6 x 16 fills 12 of the 16 registers with sums).
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
                *v = _mm256_loadu_ps(b.add(kk * n + 8 * w));
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
            strip::<2>(m, k, a, lda, b.add(j), n, c.add(j));
            j += 16;
        }
        if j < n {
            strip::<1>(m, k, a, lda, b.add(j), n, c.add(j));
        }
    }

    /// As [`block`] with 16-lane registers: `ROWS` rows by `16 * VECS`
    /// columns. AVX-512 has 32 registers, so a block holds 24 sums and
    /// loads each row of `b` once per six or twelve rows of `a`.
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
                *v = _mm512_loadu_ps(b.add(kk * n + 16 * w));
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
            strip512::<6, 4>(m, k, a, lda, b.add(j), n, c.add(j));
            j += 64;
        }
        if j + 32 <= n {
            strip512::<12, 2>(m, k, a, lda, b.add(j), n, c.add(j));
            j += 32;
        }
        if j + 16 <= n {
            strip512::<12, 1>(m, k, a, lda, b.add(j), n, c.add(j));
            j += 16;
        }
        if j < n {
            strip::<1>(m, k, a, lda, b.add(j), n, c.add(j));
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
                multiply(isa, m, k, n, &a, lda, &b, &mut c);
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
