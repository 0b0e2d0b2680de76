//! Matrix products of the native backend: `c = a b` with `a` row-major and
//! `b` a weight matrix with a multiple of eight columns (padded channels),
//! as the Winograd products and the 1x1 convolutions have them.
//!
//! Hand-written rather than a crate's: `b` is a weight matrix laid out once
//! at load ([`Panels`]), so it needs no packing per product, and the
//! products are small (tens of rows, 32-128 columns) and many.
//! `matrixmultiply` spent a quarter of its time packing here; the figures
//! are in docs/native-backend.md.

use std::sync::OnceLock;

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
    /// The same weights in bf16 for [`multiply_pairs`], made at its first
    /// use: panels 16 columns wide (the last one padded with zeros), each
    /// a row of pairs per two rows of the matrix, every pair two bf16 of
    /// one column (the even row's in the low half), as `vdpbf16ps` takes
    /// them. The panel of columns `j..j + 16` starts at `j * k.div_ceil(2)`.
    bf16: OnceLock<Vec<u32>>,
    /// The same weights as 16-bit integers for [`multiply_i16`], made at
    /// its first use.
    i16: OnceLock<I16Panels>,
}

/// A weight matrix quantized for [`multiply_i16`]: each column scaled to
/// the integers of [`I16Bits::weights`] bits by its largest magnitude,
/// laid out as the bf16 panels are (pairs of rows, the even row's in the
/// low half, as `vpmaddwd` takes them).
#[derive(Clone, Debug)]
struct I16Panels {
    pairs: Vec<u32>,
    /// What a column's integers are multiplied by to give its weights,
    /// padded as the panels are (zero past `n`).
    column_scale: Vec<f32>,
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
        Panels {
            k,
            n,
            data,
            bf16: OnceLock::new(),
            i16: OnceLock::new(),
        }
    }

    fn i16_panels(&self) -> &I16Panels {
        self.i16.get_or_init(|| {
            let (k, n) = (self.k, self.n);
            let bits = I16Bits::for_depth(k).weights;
            let pairs = k.div_ceil(2);
            let columns = PANEL * n.div_ceil(PANEL);
            let mut out = vec![0u32; pairs * columns];
            let mut column_scale = vec![0.0f32; columns];
            for (j, width) in panels(n) {
                let panel = &self.data[j * k..][..k * width];
                let dst = &mut out[j * pairs..][..pairs * PANEL];
                for col in 0..width {
                    let column = (0..k).map(|row| panel[row * width + col]);
                    let (scale, to_int) = quantizer(column.clone(), bits);
                    column_scale[j + col] = scale;
                    for (row, x) in column.enumerate() {
                        let q = to_int(x) as u16 as u32;
                        dst[row / 2 * PANEL + col] |= q << (16 * (row % 2));
                    }
                }
            }
            I16Panels {
                pairs: out,
                column_scale,
            }
        })
    }

    fn bf16_panels(&self) -> &[u32] {
        self.bf16.get_or_init(|| {
            let pairs = self.k.div_ceil(2);
            let mut out = vec![0u32; pairs * PANEL * self.n.div_ceil(PANEL)];
            for (j, width) in panels(self.n) {
                let panel = &self.data[j * self.k..][..self.k * width];
                let dst = &mut out[j * pairs..][..pairs * PANEL];
                for row in 0..self.k {
                    for col in 0..width {
                        let half = bf16_bits(panel[row * width + col]);
                        dst[row / 2 * PANEL + col] |= half << (16 * (row % 2));
                    }
                }
            }
            out
        })
    }
}

/// The bits (sign excluded) of [`multiply_i16`]'s quantized operands for
/// products over `k` terms: as many as keep a sum of `k` products within
/// an i32, at most 15 (an i16), shared about evenly, the weights taking
/// the odd one (they are quantized once, with care; the activations per
/// call).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct I16Bits {
    pub activations: u32,
    pub weights: u32,
}

impl I16Bits {
    pub fn for_depth(k: usize) -> I16Bits {
        // |a| < 2^A and |b| < 2^B give |sum| < k 2^(A+B) <= 2^31.
        let depth_bits = k.max(1).next_power_of_two().trailing_zeros();
        let both = 31u32.saturating_sub(depth_bits).max(2);
        let weights = both.div_ceil(2).min(15);
        let activations = (both - weights).min(15);
        I16Bits {
            activations,
            weights,
        }
    }
}

/// For values `xs`: the scale that turns their integers back into values,
/// and the rounding of a value to an integer of `bits` bits (magnitude
/// below `2^bits`), the largest magnitude among `xs` taken to the largest
/// integer. All zeros (or no values) give scale 0 and integers 0; a NaN
/// or infinity makes every integer 0 and the scale NaN, so that the
/// products come out NaN as fp32's would (the service then answers with
/// the no-knowledge evaluation).
fn quantizer(xs: impl Iterator<Item = f32>, bits: u32) -> (f32, impl Fn(f32) -> i16) {
    let largest = xs.fold(0.0f32, |m, x| {
        if m.is_nan() || !x.is_finite() {
            f32::NAN
        } else {
            m.max(x.abs())
        }
    });
    let top = ((1u32 << bits) - 1) as f32;
    let (scale, factor) = if largest.is_nan() {
        (f32::NAN, 0.0)
    } else if largest == 0.0 {
        (0.0, 0.0)
    } else {
        (largest / top, top / largest)
    };
    (scale, move |x: f32| {
        (x * factor).round_ties_even().clamp(-top, top) as i16
    })
}

/// `m x k` values (rows `lda` apart) quantized for [`multiply_i16`]: each
/// row to integers of [`I16Bits::activations`] bits by its largest
/// magnitude, in pairs as [`multiply_i16`] takes them (`pairs`: `m` rows
/// of `k.div_ceil(2)`), with the scale that turns each row's integers
/// back into values (`row_scale`: `m`).
#[cfg(test)]
pub fn quantize_rows(
    isa: Isa,
    m: usize,
    k: usize,
    a: &[f32],
    lda: usize,
    pairs: &mut [u32],
    row_scale: &mut [f32],
) {
    let kp = k.div_ceil(2);
    assert!(
        lda >= k && extent(m, lda, k).is_some_and(|e| a.len() >= e),
        "quantize a"
    );
    assert!(
        pairs.len() >= m * kp && row_scale.len() >= m,
        "quantize out"
    );
    let bits = I16Bits::for_depth(k).activations;
    for i in 0..m {
        row_scale[i] = quantize_row(isa, &a[i * lda..][..k], bits, &mut pairs[i * kp..][..kp]);
    }
}

/// One row of [`quantize_rows`]: `row` as integers of `bits` bits, in
/// pairs, into `out` (`row.len().div_ceil(2)` of them); returns the scale
/// that turns them back into values.
#[inline]
pub fn quantize_row(isa: Isa, row: &[f32], bits: u32, out: &mut [u32]) -> f32 {
    let k = row.len();
    assert!(out.len() >= k.div_ceil(2), "quantize out");
    #[cfg(target_arch = "x86_64")]
    if isa != Isa::Portable && isa.is_supported() && k.is_multiple_of(8) {
        // SAFETY: the CPU has AVX2 (every supported instruction set but
        // the portable one includes it); `out` holds `k / 2` pairs.
        if let Some(scale) = unsafe { x86::quantize_row(row, bits, out) } {
            return scale;
        }
    }
    let _ = isa;
    let (scale, to_int) = quantizer(row.iter().copied(), bits);
    for (p, two) in out.iter_mut().zip(row.chunks(2)) {
        let low = to_int(two[0]) as u16 as u32;
        let high = two.get(1).map_or(0, |&x| to_int(x) as u16 as u32);
        *p = low | high << 16;
    }
    scale
}

/// `x` rounded to the nearest bf16 (ties to even), as the upper half of
/// an f32's bits, as `vcvtneps2bf16` rounds: denormals become zeros of
/// their sign, a NaN stays a (quiet) NaN.
pub fn bf16_bits(x: f32) -> u32 {
    let bits = x.to_bits();
    if x.is_nan() {
        return (bits >> 16) | 0x40;
    }
    if x.is_subnormal() {
        return (bits >> 16) & 0x8000;
    }
    (bits + 0x7fff + ((bits >> 16) & 1)) >> 16
}

/// `m x k` values (rows `lda` apart) rounded to bf16 as [`bf16_bits`]
/// rounds, in the pairs that [`multiply_pairs`] takes (an odd `k` leaves
/// the last pair's high half zero). The tests' reference for what the
/// kernels round.
#[cfg(test)]
pub fn bf16_pairs(m: usize, k: usize, a: &[f32], lda: usize) -> Vec<u32> {
    let kp = k.div_ceil(2);
    let mut pairs = vec![0u32; m * kp];
    for i in 0..m {
        for kk in 0..k {
            pairs[i * kp + kk / 2] |= bf16_bits(a[i * lda + kk]) << (16 * (kk % 2));
        }
    }
    pairs
}

/// Whether this CPU has the bf16 dot products of [`multiply_pairs`]
/// (AVX512-BF16: AMD Zen 4 on, Intel Cooper Lake and Sapphire Rapids on).
pub fn bf16_supported() -> bool {
    Bf16Cpu::detect().is_some()
}

/// Proof that this CPU runs the bf16 kernels (AVX-512F, AVX512VL and
/// AVX512-BF16): made only by [`Bf16Cpu::detect`], so the functions that
/// take one need not check again.
#[derive(Clone, Copy, Debug)]
pub struct Bf16Cpu(Proof);

#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
struct Proof;

/// No such CPU off x86-64: a proof cannot exist there.
#[cfg(not(target_arch = "x86_64"))]
#[derive(Clone, Copy, Debug)]
enum Proof {}

impl Bf16Cpu {
    pub fn detect() -> Option<Bf16Cpu> {
        #[cfg(target_arch = "x86_64")]
        {
            let has = Isa::Avx512.is_supported()
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("avx512bf16");
            has.then_some(Bf16Cpu(Proof))
        }
        #[cfg(not(target_arch = "x86_64"))]
        None
    }

    /// Code for a CPU that a proof rules out.
    #[cfg(not(target_arch = "x86_64"))]
    pub fn unreachable(self) -> ! {
        match self.0 {}
    }
}

/// The first column and the width of each panel of an `n`-column matrix.
fn panels(n: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n).step_by(PANEL).map(move |j| (j, (n - j).min(PANEL)))
}

/// The elements that `rows` rows of `last` elements, `stride` apart, span
/// (`None` past `usize`).
fn extent(rows: usize, stride: usize, last: usize) -> Option<usize> {
    rows.checked_sub(1)
        .map_or(Some(0), |r| r.checked_mul(stride)?.checked_add(last))
}

/// Panics unless `a` holds `m x k` (rows `lda` apart) and `c` `m x n`.
fn check_extents<T>(m: usize, a: &[T], lda: usize, (k, n): (usize, usize), c: &[f32]) {
    assert!(lda >= k, "gemm shape");
    assert!(extent(m, lda, k).is_some_and(|e| a.len() >= e), "gemm a");
    assert!(extent(m, n, n).is_some_and(|e| c.len() >= e), "gemm c");
}

/// `c = a b` for `b` of `k x n`: `a` is `m x k` (rows `lda` apart), `c` is
/// `m x n` (rows `n` apart).
pub fn multiply(isa: Isa, m: usize, a: &[f32], lda: usize, b: &Panels, c: &mut [f32]) {
    multiply_prefetching(isa, m, a, lda, b, c, None)
}

/// [`multiply`], prefetching `next` into L1 while it runs: the weights of
/// the product that follows, which otherwise arrive from beyond L2 as the
/// kernel first reads them (a network's transformed kernels are several
/// times an L2 cache).
pub fn multiply_prefetching(
    isa: Isa,
    m: usize,
    a: &[f32],
    lda: usize,
    b: &Panels,
    c: &mut [f32],
    next: Option<&Panels>,
) {
    let (k, n) = (b.k, b.n);
    check_extents(m, a, lda, (b.k, b.n), c);
    if m == 0 {
        return;
    }
    let b_data = b.data.as_ptr();
    let next = next
        .filter(|next| (next.k, next.n) == (k, n))
        .map_or(std::ptr::null(), |next| next.data.as_ptr());
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx512 && isa.is_supported() {
        // SAFETY: the CPU has AVX-512F, AVX2 and FMA (checked above), the
        // extents of `a` and `c` were asserted, and `b` is `k x n` panels.
        unsafe { x86::multiply_avx512(m, k, n, a.as_ptr(), lda, b_data, c.as_mut_ptr(), next) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx2 && isa.is_supported() {
        // SAFETY: the CPU has AVX2 and FMA (checked above), the extents of
        // `a` and `c` were asserted, and `b` is `k x n` panels.
        unsafe { x86::multiply(m, k, n, a.as_ptr(), lda, b_data, c.as_mut_ptr(), next) };
        return;
    }
    let _ = (isa, b_data, next);
    portable(m, a, lda, b, c);
}

/// `c = a b` as [`multiply`] computes it, but with `a` and `b` in bf16 and
/// the sums in fp32: `vdpbf16ps` makes two products per lane per
/// instruction, twice the products of an fp32 FMA. `a` comes in pairs:
/// `m` rows of `k.div_ceil(2)` (`k` the rows of `b`), two columns of a row
/// to a `u32`, the even one in the low half ([`bf16_pairs`]); `b` is
/// rounded once, at its first use.
pub fn multiply_pairs(cpu: Bf16Cpu, m: usize, a: &[u32], b: &Panels, c: &mut [f32]) {
    let (kp, n) = (b.k.div_ceil(2), b.n);
    check_extents(m, a, kp, (kp, n), c);
    if m == 0 {
        return;
    }
    let b_pairs = b.bf16_panels();
    #[cfg(target_arch = "x86_64")]
    {
        let _ = cpu;
        // SAFETY: the CPU has AVX-512F and AVX512-BF16 (`cpu`), the
        // extents of `a` and `c` were asserted and `b_pairs` is the bf16
        // layout of a `k x n` matrix.
        unsafe { x86::multiply_bf16(m, kp, n, a.as_ptr(), b_pairs.as_ptr(), c.as_mut_ptr()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (a, b_pairs, c);
        cpu.unreachable()
    }
}

/// `c = a b` as [`multiply`] computes it, but with both operands quantized
/// to 16-bit integers and the sums in 32-bit ones, each scaled back by its
/// row's and column's scale: `vpmaddwd` makes two products per 32-bit lane
/// per instruction, and CPUs with AVX2 alone (the Gomocup's) run it at the
/// rate of their fp32 FMAs or better. `a` comes as [`quantize_rows`] makes
/// it (`m` rows of `k.div_ceil(2)` pairs and `m` scales); `b` is
/// quantized once, at its first use. Without AVX2 the same integer sums
/// are made by plain loops.
pub fn multiply_i16(isa: Isa, m: usize, a: &[u32], row_scale: &[f32], b: &Panels, c: &mut [f32]) {
    let (kp, n) = (b.k.div_ceil(2), b.n);
    check_extents(m, a, kp, (kp, n), c);
    assert!(row_scale.len() >= m, "gemm row scales");
    if m == 0 {
        return;
    }
    let quantized = b.i16_panels();
    #[cfg(target_arch = "x86_64")]
    if isa != Isa::Portable && isa.is_supported() {
        // SAFETY: the CPU has AVX2 (every supported instruction set but
        // the portable one includes it), the extents of `a`, `row_scale`
        // and `c` were asserted, and `panels` is the i16 layout of a
        // `k x n` matrix.
        unsafe {
            x86::multiply_i16(
                m,
                kp,
                n,
                a.as_ptr(),
                row_scale.as_ptr(),
                quantized.pairs.as_ptr(),
                quantized.column_scale.as_ptr(),
                c.as_mut_ptr(),
            )
        };
        return;
    }
    let _ = isa;
    for i in 0..m {
        for (j, width) in panels(n) {
            let panel = &quantized.pairs[j * kp..][..kp * PANEL];
            for col in 0..width {
                let sum: i32 = (0..kp)
                    .map(|p| {
                        let (x, w) = (a[i * kp + p], panel[p * PANEL + col]);
                        let low = (x as u16 as i16 as i32) * (w as u16 as i16 as i32);
                        let high =
                            ((x >> 16) as u16 as i16 as i32) * ((w >> 16) as u16 as i16 as i32);
                        low + high
                    })
                    .sum();
                c[i * n + j + col] = sum as f32 * row_scale[i] * quantized.column_scale[j + col];
            }
        }
    }
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
// The kernels take each pointer and extent of a product as it is, unboxed.
#[allow(clippy::too_many_arguments)]
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
    /// `WIDTH` columns wide each and `WIDTH * k` floats apart; `next`, null
    /// or a matrix of `b`'s shape, is prefetched a line a step of `k`.
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
                next: *const f32,
            ) {
                const { assert!(WIDTH % $lanes == 0 && WIDTH >= $lanes) };
                let per_panel = WIDTH / $lanes;
                let prefetch = !next.is_null();
                let mut acc = [[$zero(); VECS]; ROWS];
                for kk in 0..k {
                    if prefetch {
                        for panel in 0..VECS / per_panel {
                            let line = next.wrapping_add(panel * WIDTH * k + kk * WIDTH);
                            _mm_prefetch::<_MM_HINT_T0>(line.cast());
                        }
                    }
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

            /// `$block` down all `m` rows: blocks of `ROWS`, then the rows
            /// left in one block of as many rows (at most five; blocks of
            /// four before that). One block of three, not two and one,
            /// keeps three rows' sums in flight: a block of one row has
            /// too few independent sums to hide the FMA's latency.
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
                next: *const f32,
            ) {
                let mut i = 0;
                // The first block prefetches `next`'s panels (a line a step
                // of `k`); the blocks after it read `b` from L1.
                let mut next = next;
                while i < m {
                    let rows = match m - i {
                        left if left >= ROWS => ROWS,
                        left if left > 5 => 4,
                        left => left,
                    };
                    let (a, c) = (a.add(i * lda), c.add(i * n));
                    match rows {
                        1 => $block::<1, VECS, WIDTH>(k, a, lda, b, n, c, next),
                        2 => $block::<2, VECS, WIDTH>(k, a, lda, b, n, c, next),
                        3 => $block::<3, VECS, WIDTH>(k, a, lda, b, n, c, next),
                        4 => $block::<4, VECS, WIDTH>(k, a, lda, b, n, c, next),
                        5 => $block::<5, VECS, WIDTH>(k, a, lda, b, n, c, next),
                        _ => $block::<ROWS, VECS, WIDTH>(k, a, lda, b, n, c, next),
                    }
                    next = std::ptr::null();
                    i += rows;
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

    /// `next` moved by `offset` floats, or null where it is null: only
    /// prefetched, never read.
    fn at(next: *const f32, offset: usize) -> *const f32 {
        if next.is_null() {
            next
        } else {
            next.wrapping_add(offset)
        }
    }

    /// # Safety
    /// AVX2 and FMA present; `a`, `b`, `c` valid for the extents; `next`
    /// null or a matrix of `b`'s shape.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn multiply(
        m: usize,
        k: usize,
        n: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        c: *mut f32,
        next: *const f32,
    ) {
        // One or two rows left over from the blocks of six run across two
        // or four panels at a time instead (8 sums in flight, enough to
        // hide the FMA's latency; one panel gives them 2 or 4).
        let left = match m % 6 {
            left @ (1 | 2) => left,
            _ => 0,
        };
        let body = m - left;
        let wide = n / 16 * 16;
        let mut j = 0;
        while j < wide {
            strip256::<6, 2, 16>(body, k, a, lda, b.add(j * k), n, c.add(j), at(next, j * k));
            j += 16;
        }
        if j < n {
            strip256::<6, 1, 8>(m, k, a, lda, b.add(j * k), n, c.add(j), at(next, j * k));
        }
        if left == 0 {
            return;
        }
        let (a, c) = (a.add(body * lda), c.add(body * n));
        // Where no block of six ran, these prefetch `next`.
        let next = if body == 0 { next } else { std::ptr::null() };
        let mut j = 0;
        if left == 1 {
            while j + 64 <= wide {
                block256::<1, 8, 16>(k, a, lda, b.add(j * k), n, c.add(j), at(next, j * k));
                j += 64;
            }
        }
        while j + 32 <= wide {
            let next = at(next, j * k);
            match left {
                1 => block256::<1, 4, 16>(k, a, lda, b.add(j * k), n, c.add(j), next),
                _ => block256::<2, 4, 16>(k, a, lda, b.add(j * k), n, c.add(j), next),
            }
            j += 32;
        }
        if j < wide {
            strip256::<6, 2, 16>(left, k, a, lda, b.add(j * k), n, c.add(j), at(next, j * k));
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
        next: *const f32,
    ) {
        let mut j = 0;
        while j + 64 <= n {
            strip512::<6, 4, 16>(m, k, a, lda, b.add(j * k), n, c.add(j), at(next, j * k));
            j += 64;
        }
        if j + 32 <= n {
            strip512::<12, 2, 16>(m, k, a, lda, b.add(j * k), n, c.add(j), at(next, j * k));
            j += 32;
        }
        if j + 16 <= n {
            strip512::<12, 1, 16>(m, k, a, lda, b.add(j * k), n, c.add(j), at(next, j * k));
            j += 16;
        }
        if j < n {
            strip256::<6, 1, 8>(m, k, a, lda, b.add(j * k), n, c.add(j), at(next, j * k));
        }
    }

    /// The register-blocked kernel of [`register_blocked!`] on bf16 pairs:
    /// `ROWS` rows by `VECS` panels of 16 columns, the last panel's store
    /// masked by `last` (its columns that exist).
    #[target_feature(enable = "avx512f,avx512bf16,avx2,fma")]
    #[inline]
    unsafe fn block_bf16<const ROWS: usize, const VECS: usize>(
        kp: usize,
        a: *const u32,
        b: *const u32,
        n: usize,
        c: *mut f32,
        last: __mmask16,
    ) {
        let mut acc = [[_mm512_setzero_ps(); VECS]; ROWS];
        for p in 0..kp {
            let mut bv = [_mm512_setzero_si512(); VECS];
            for (w, v) in bv.iter_mut().enumerate() {
                *v = _mm512_loadu_si512(b.add(w * 16 * kp + p * 16).cast());
            }
            for (r, sums) in acc.iter_mut().enumerate() {
                let av: __m512bh =
                    std::mem::transmute(_mm512_set1_epi32(*a.add(r * kp + p) as i32));
                for (s, v) in sums.iter_mut().zip(bv) {
                    *s = _mm512_dpbf16_ps(*s, av, std::mem::transmute::<__m512i, __m512bh>(v));
                }
            }
        }
        for (r, sums) in acc.iter().enumerate() {
            for (w, s) in sums.iter().enumerate() {
                let mask = if w + 1 == VECS { last } else { 0xffff };
                _mm512_mask_storeu_ps(c.add(r * n + 16 * w), mask, *s);
            }
        }
    }

    #[target_feature(enable = "avx512f,avx512bf16,avx2,fma")]
    #[inline]
    unsafe fn strip_bf16<const ROWS: usize, const VECS: usize>(
        m: usize,
        kp: usize,
        a: *const u32,
        b: *const u32,
        n: usize,
        c: *mut f32,
        last: __mmask16,
    ) {
        let mut i = 0;
        while i + ROWS <= m {
            block_bf16::<ROWS, VECS>(kp, a.add(i * kp), b, n, c.add(i * n), last);
            i += ROWS;
        }
        while i + 4 <= m {
            block_bf16::<4, VECS>(kp, a.add(i * kp), b, n, c.add(i * n), last);
            i += 4;
        }
        if i + 2 <= m {
            block_bf16::<2, VECS>(kp, a.add(i * kp), b, n, c.add(i * n), last);
            i += 2;
        }
        if i < m {
            block_bf16::<1, VECS>(kp, a.add(i * kp), b, n, c.add(i * n), last);
        }
    }

    /// # Safety
    /// AVX-512F and AVX512-BF16 present; `a` valid for `m x kp` pairs, `b`
    /// the bf16 panels of a matrix of `kp` pairs of rows by `n` columns,
    /// `c` for `m x n`.
    #[target_feature(enable = "avx512f,avx512bf16,avx2,fma")]
    pub unsafe fn multiply_bf16(
        m: usize,
        kp: usize,
        n: usize,
        a: *const u32,
        b: *const u32,
        c: *mut f32,
    ) {
        let mut j = 0;
        while j + 64 <= n {
            strip_bf16::<6, 4>(m, kp, a, b.add(j * kp), n, c.add(j), 0xffff);
            j += 64;
        }
        if j + 32 <= n {
            strip_bf16::<12, 2>(m, kp, a, b.add(j * kp), n, c.add(j), 0xffff);
            j += 32;
        }
        if j + 16 <= n {
            strip_bf16::<12, 1>(m, kp, a, b.add(j * kp), n, c.add(j), 0xffff);
            j += 16;
        }
        if j < n {
            strip_bf16::<12, 1>(m, kp, a, b.add(j * kp), n, c.add(j), 0x00ff);
        }
    }

    /// One row of [`super::quantize_rows`] (`row.len()` a multiple of 8),
    /// rounding as its portable loop does; `None` where the row holds a
    /// NaN or an infinity, which the portable loop handles.
    ///
    /// # Safety
    /// AVX2 present; `row.len()` a multiple of 8 (read eight values at a
    /// time); `out` holds `row.len() / 2` pairs.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    pub unsafe fn quantize_row(row: &[f32], bits: u32, out: &mut [u32]) -> Option<f32> {
        let k = row.len();
        let sign = _mm256_set1_ps(-0.0);
        let mut largest = _mm256_setzero_ps();
        let mut unordered = _mm256_setzero_ps();
        for j in (0..k).step_by(8) {
            let x = _mm256_loadu_ps(row.as_ptr().add(j));
            largest = _mm256_max_ps(largest, _mm256_andnot_ps(sign, x));
            unordered = _mm256_or_ps(unordered, _mm256_cmp_ps::<_CMP_UNORD_Q>(x, x));
        }
        if _mm256_movemask_ps(unordered) != 0 {
            return None;
        }
        let mut lanes = [0f32; 8];
        _mm256_storeu_ps(lanes.as_mut_ptr(), largest);
        let largest = lanes.iter().fold(0f32, |m, &x| m.max(x));
        if !largest.is_finite() {
            return None;
        }
        if largest == 0.0 {
            out[..k / 2].fill(0);
            return Some(0.0);
        }
        let top = ((1u32 << bits) - 1) as f32;
        // Values so small that the factor overflows are left to the
        // portable loop, whose clamp keeps them within `bits`.
        if !(top / largest).is_finite() {
            return None;
        }
        let factor = _mm256_set1_ps(top / largest);
        let mut j = 0;
        while j + 16 <= k {
            let lo =
                _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(row.as_ptr().add(j)), factor));
            let hi = _mm256_cvtps_epi32(_mm256_mul_ps(
                _mm256_loadu_ps(row.as_ptr().add(j + 8)),
                factor,
            ));
            // packs works within 128-bit halves: put the four quarters back in order.
            let packed = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packs_epi32(lo, hi));
            _mm256_storeu_si256(out.as_mut_ptr().add(j / 2).cast(), packed);
            j += 16;
        }
        if j < k {
            let lo =
                _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(row.as_ptr().add(j)), factor));
            let packed = _mm_packs_epi32(
                _mm256_castsi256_si128(lo),
                _mm256_extracti128_si256::<1>(lo),
            );
            _mm_storeu_si128(out.as_mut_ptr().add(j / 2).cast(), packed);
        }
        Some(largest / top)
    }

    /// The register-blocked kernel on 16-bit integer pairs: `ROWS` rows by
    /// `VECS` registers of 8 columns (a panel is two), summing in 32-bit
    /// integers, each sum then scaled by its row's and column's scale.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn block_i16<const ROWS: usize, const VECS: usize>(
        kp: usize,
        a: *const u32,
        row_scale: *const f32,
        b: *const u32,
        column_scale: *const f32,
        n: usize,
        c: *mut f32,
    ) {
        let mut acc = [[_mm256_setzero_si256(); VECS]; ROWS];
        for p in 0..kp {
            let mut bv = [_mm256_setzero_si256(); VECS];
            for (w, v) in bv.iter_mut().enumerate() {
                *v = _mm256_loadu_si256(b.add(w / 2 * 16 * kp + p * 16 + w % 2 * 8).cast());
            }
            for (r, sums) in acc.iter_mut().enumerate() {
                let av = _mm256_set1_epi32(*a.add(r * kp + p) as i32);
                for (s, v) in sums.iter_mut().zip(bv) {
                    *s = _mm256_add_epi32(*s, _mm256_madd_epi16(av, v));
                }
            }
        }
        for (r, sums) in acc.iter().enumerate() {
            let row = _mm256_set1_ps(*row_scale.add(r));
            for (w, s) in sums.iter().enumerate() {
                let columns = _mm256_loadu_ps(column_scale.add(8 * w));
                let value = _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(*s), row), columns);
                _mm256_storeu_ps(c.add(r * n + 8 * w), value);
            }
        }
    }

    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn strip_i16<const VECS: usize>(
        m: usize,
        kp: usize,
        a: *const u32,
        row_scale: *const f32,
        b: *const u32,
        column_scale: *const f32,
        n: usize,
        c: *mut f32,
    ) {
        let mut i = 0;
        while i + 6 <= m {
            let (a, s, c) = (a.add(i * kp), row_scale.add(i), c.add(i * n));
            block_i16::<6, VECS>(kp, a, s, b, column_scale, n, c);
            i += 6;
        }
        let (a, s, c) = (a.add(i * kp), row_scale.add(i), c.add(i * n));
        match m - i {
            5 => block_i16::<5, VECS>(kp, a, s, b, column_scale, n, c),
            4 => block_i16::<4, VECS>(kp, a, s, b, column_scale, n, c),
            3 => block_i16::<3, VECS>(kp, a, s, b, column_scale, n, c),
            2 => block_i16::<2, VECS>(kp, a, s, b, column_scale, n, c),
            1 => block_i16::<1, VECS>(kp, a, s, b, column_scale, n, c),
            _ => {}
        }
    }

    /// # Safety
    /// AVX2 present; `a` valid for `m x kp` pairs and `row_scale` for `m`,
    /// `b` the i16 panels of a matrix of `kp` pairs of rows by `n` columns
    /// and `column_scale` their scales, `c` valid for `m x n`.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn multiply_i16(
        m: usize,
        kp: usize,
        n: usize,
        a: *const u32,
        row_scale: *const f32,
        b: *const u32,
        column_scale: *const f32,
        c: *mut f32,
    ) {
        let mut j = 0;
        while j + 16 <= n {
            let (b, s) = (b.add(j * kp), column_scale.add(j));
            strip_i16::<2>(m, kp, a, row_scale, b, s, n, c.add(j));
            j += 16;
        }
        if j < n {
            let (b, s) = (b.add(j * kp), column_scale.add(j));
            strip_i16::<1>(m, kp, a, row_scale, b, s, n, c.add(j));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(m, k, n, lda)` of the products checked: leftover rows, odd `k`
    /// and every column strip of the kernels.
    const SHAPES: [(usize, usize, usize, usize); 17] = [
        (1, 1, 8, 1),
        (7, 5, 24, 9),
        (13, 64, 64, 64),
        (6, 40, 16, 40),
        (24, 64, 32, 64),
        // Every column strip of the AVX-512 kernels (64, 32, 16, 8).
        (31, 17, 120, 19),
        (12, 8, 32, 8),
        (19, 3, 72, 5),
        // Left-over rows of 4 + 1, 2 + 1 and 4 + 4 + 2 + 1, on every
        // column strip of the kernels.
        (5, 9, 120, 9),
        (3, 4, 120, 6),
        (11, 7, 120, 7),
        // Three rows left as one block (F(5x5) on one 15x15 board: nine
        // rows).
        (9, 64, 64, 64),
        // One or two rows left from the blocks of six (or no block of
        // six at all), run across four, two and one panels, with and
        // without an 8-wide last panel.
        (8, 16, 128, 16),
        (2, 9, 72, 9),
        (8, 9, 120, 9),
        (2, 5, 24, 5),
        (1, 7, 128, 7),
    ];

    /// Values in -0.5..0.5 from a linear congruential generator.
    fn noise(mut seed: u64) -> impl FnMut() -> f32 {
        move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            ((seed >> 40) as f32 / (1u64 << 24) as f32) - 0.5
        }
    }

    /// Asserts that `c` is `a b` (shapes as [`multiply`] takes them) with
    /// each element of `a` and `b` taken as `operand` makes it, summed in f64.
    fn assert_is_product(
        what: &str,
        (m, k, n, lda): (usize, usize, usize, usize),
        (a, b, c): (&[f32], &[f32], &[f32]),
        operand: impl Fn(f32) -> f64,
    ) {
        for i in 0..m {
            for j in 0..n {
                let want: f64 = (0..k)
                    .map(|kk| operand(a[i * lda + kk]) * operand(b[kk * n + j]))
                    .sum();
                assert!(
                    (c[i * n + j] as f64 - want).abs() < 1e-4,
                    "{what} {m}x{k}x{n} at {i},{j}: {} != {want}",
                    c[i * n + j]
                );
            }
        }
    }

    /// Every instruction set computes the same product as a plain triple
    /// loop in f64.
    #[test]
    fn products_agree_with_the_definition() {
        let mut noise = noise(3);
        for (m, k, n, lda) in SHAPES {
            let a: Vec<f32> = (0..m * lda).map(|_| noise()).collect();
            let b: Vec<f32> = (0..k * n).map(|_| noise()).collect();
            // Another matrix of the shape, prefetched while multiplying:
            // it must not change the product.
            let other: Vec<f32> = (0..k * n).map(|_| noise()).collect();
            let other = Panels::new(&other, k, n);
            for isa in Isa::all_supported() {
                let mut c = vec![f32::NAN; m * n];
                multiply(isa, m, &a, lda, &Panels::new(&b, k, n), &mut c);
                let shape = (m, k, n, lda);
                assert_is_product(&isa.to_string(), shape, (&a, &b, &c), |x| x as f64);
                let mut prefetching = vec![f32::NAN; m * n];
                let b = Panels::new(&b, k, n);
                multiply_prefetching(isa, m, &a, lda, &b, &mut prefetching, Some(&other));
                assert_eq!(prefetching, c, "{isa} {m}x{k}x{n} prefetching");
            }
        }
    }

    /// The bf16 product is the exact product of the operands rounded to
    /// bf16, summed in fp32 (an odd `k` leaves the last pair half empty, an
    /// 8-wide last panel is stored masked).
    #[test]
    fn bf16_products_are_the_products_of_the_rounded_operands() {
        let mut noise = noise(5);
        let round = |x: f32| f32::from_bits(bf16_bits(x) << 16) as f64;
        assert_eq!(round(1.0 + 1.0 / 512.0), 1.0, "a tie goes to even");
        assert_eq!(round(1.0 + 3.0 / 512.0), 1.0 + 4.0 / 512.0);
        assert_eq!(round(-1e-40), 0.0, "denormals flush to zero");
        assert!(round(f32::NAN).is_nan());
        let Some(cpu) = Bf16Cpu::detect() else {
            eprintln!("no AVX512-BF16 on this CPU: the bf16 products are not run");
            return;
        };
        for (m, k, n, lda) in SHAPES {
            let a: Vec<f32> = (0..m * lda).map(|_| noise()).collect();
            let b: Vec<f32> = (0..k * n).map(|_| noise()).collect();
            let mut c = vec![f32::NAN; m * n];
            let pairs = bf16_pairs(m, k, &a, lda);
            multiply_pairs(cpu, m, &pairs, &Panels::new(&b, k, n), &mut c);
            assert_is_product("bf16", (m, k, n, lda), (&a, &b, &c), round);
        }
    }

    /// The i16 product is the exact product of the quantized operands,
    /// scaled back: every instruction set gives the same sums, and the
    /// result is within the quantization's error of the fp32 product.
    #[test]
    fn i16_products_are_the_products_of_the_quantized_operands() {
        let mut noise = noise(7);
        for (m, k, n, lda) in SHAPES {
            let a: Vec<f32> = (0..m * lda).map(|_| noise()).collect();
            let b: Vec<f32> = (0..k * n).map(|_| noise()).collect();
            let kp = k.div_ceil(2);
            let (mut pairs, mut scales) = (vec![0u32; m * kp], vec![0f32; m]);
            quantize_rows(Isa::Portable, m, k, &a, lda, &mut pairs, &mut scales);
            for isa in Isa::all_supported() {
                let (mut same, mut same_scales) = (vec![0u32; m * kp], vec![0f32; m]);
                quantize_rows(isa, m, k, &a, lda, &mut same, &mut same_scales);
                assert_eq!(
                    (&same, &same_scales),
                    (&pairs, &scales),
                    "{isa} {m}x{k} quantized"
                );
            }
            let panels = Panels::new(&b, k, n);
            let quantized = panels.i16_panels();
            let bits = I16Bits::for_depth(k);
            // The quantized operands as values, and the exact product.
            let a_int =
                |i: usize, kk: usize| (pairs[i * kp + kk / 2] >> (16 * (kk % 2))) as u16 as i16;
            let b_int = |kk: usize, j: usize| {
                let (panel, col) = (j / PANEL * PANEL, j % PANEL);
                let w = quantized.pairs[panel * kp + kk / 2 * PANEL + col];
                (w >> (16 * (kk % 2))) as u16 as i16
            };
            let mut want = vec![0f64; m * n];
            for i in 0..m {
                for kk in 0..k {
                    assert!((a_int(i, kk) as i32).abs() < 1 << bits.activations);
                    let error = (a_int(i, kk) as f32 * scales[i] - a[i * lda + kk]).abs();
                    assert!(error <= scales[i] * 0.5001, "{m}x{k}x{n} a at {i},{kk}");
                }
                for j in 0..n {
                    let sum: i64 = (0..k)
                        .map(|kk| a_int(i, kk) as i64 * b_int(kk, j) as i64)
                        .sum();
                    want[i * n + j] =
                        sum as f64 * scales[i] as f64 * quantized.column_scale[j] as f64;
                }
            }
            for isa in Isa::all_supported() {
                let mut c = vec![f32::NAN; m * n];
                multiply_i16(isa, m, &pairs, &scales, &panels, &mut c);
                for (idx, (&got, &want)) in c.iter().zip(&want).enumerate() {
                    assert!(
                        (got as f64 - want).abs() <= 1e-5 * want.abs().max(1e-3),
                        "{isa} {m}x{k}x{n} at {idx}: {got} != {want}"
                    );
                }
                // Within the quantization's error of the fp32 product: a
                // few thousandths of the terms' magnitude here.
                let mut exact = vec![0f32; m * n];
                multiply(Isa::Portable, m, &a, lda, &panels, &mut exact);
                for (idx, (&got, &exact)) in c.iter().zip(&exact).enumerate() {
                    assert!(
                        (got - exact).abs() < 2e-3 * (k as f32).sqrt(),
                        "{isa} {m}x{k}x{n} at {idx}: {got} vs {exact}"
                    );
                }
            }
        }
    }

    #[test]
    fn i16_operands_keep_their_sums_within_an_i32() {
        for k in [1, 2, 3, 8, 64, 65, 128, 256, 4096] {
            let bits = I16Bits::for_depth(k);
            assert!(
                bits.activations <= 15 && bits.weights <= 15,
                "{k}: {bits:?}"
            );
            let largest = (k as f64)
                * ((1u64 << bits.activations) - 1) as f64
                * ((1u64 << bits.weights) - 1) as f64;
            assert!(largest <= i32::MAX as f64, "{k}: {bits:?}");
        }
        assert_eq!(
            I16Bits::for_depth(64),
            I16Bits {
                activations: 12,
                weights: 13
            }
        );
    }

    #[test]
    fn i16_quantization_keeps_nan_and_zero_rows() {
        // Rows of 8 (the vector path) and of 2.
        for isa in Isa::all_supported() {
            let mut a = [0.5f32; 24];
            a[..8].fill(0.0);
            a[9] = f32::INFINITY;
            let (mut pairs, mut scales) = (vec![7u32; 12], vec![0f32; 3]);
            quantize_rows(isa, 3, 8, &a, 8, &mut pairs, &mut scales);
            assert_eq!(
                (&pairs[..4], scales[0]),
                (&[0u32; 4][..], 0.0),
                "{isa}: zeros"
            );
            assert!(
                scales[1].is_nan() && pairs[4..8] == [0; 4],
                "{isa}: an infinity"
            );
            let top = (1u32 << I16Bits::for_depth(8).activations) - 1;
            assert!(
                scales[2] > 0.0 && pairs[8..] == [top | top << 16; 4],
                "{isa}"
            );
        }
        // Values so small that the factor overflows: the vector path
        // leaves them to the portable loop, which keeps them in range.
        let tiny = [1e-38f32, -1e-38, 0.0, 5e-39, 1e-38, 0.0, -2e-39, 1e-38];
        let (mut want, mut want_scale) = (vec![0u32; 4], vec![0f32; 1]);
        quantize_rows(Isa::Portable, 1, 8, &tiny, 8, &mut want, &mut want_scale);
        let top = (1i32 << I16Bits::for_depth(8).activations) - 1;
        assert_eq!(
            (
                want[0] as u16 as i16 as i32,
                (want[0] >> 16) as u16 as i16 as i32
            ),
            (top, -top)
        );
        for isa in Isa::all_supported() {
            let (mut got, mut got_scale) = (vec![7u32; 4], vec![0f32; 1]);
            quantize_rows(isa, 1, 8, &tiny, 8, &mut got, &mut got_scale);
            assert_eq!(
                (&got, &got_scale),
                (&want, &want_scale),
                "{isa}: tiny values"
            );
        }
        let a = [0.0f32, 0.0, 1.0, f32::NAN, 0.5, -0.25];
        let (mut pairs, mut scales) = (vec![0u32; 3], vec![0f32; 3]);
        quantize_rows(Isa::Portable, 3, 2, &a, 2, &mut pairs, &mut scales);
        assert_eq!((pairs[0], scales[0]), (0, 0.0), "a row of zeros");
        assert!(scales[1].is_nan(), "a NaN makes its row's scale NaN");
        let top = (1i32 << I16Bits::for_depth(2).activations) - 1;
        assert_eq!(
            pairs[2] as u16 as i16 as i32, top,
            "the largest value takes the largest integer"
        );
        assert_eq!(
            (pairs[2] >> 16) as u16 as i16 as i32,
            -(top + 1) / 2,
            "half of it, rounded away from zero"
        );
        let b = Panels::new(&[1.0; 16], 2, 8);
        let mut c = vec![0f32; 24];
        for isa in Isa::all_supported() {
            multiply_i16(isa, 3, &pairs, &scales, &b, &mut c);
            assert!(c[..8].iter().all(|&x| x == 0.0), "{isa}");
            assert!(c[8..16].iter().all(|x| x.is_nan()), "{isa}");
            assert!(
                c[16..].iter().all(|&x| (x - 0.25).abs() < 1e-3),
                "{isa}: {:?}",
                &c[16..]
            );
        }
    }
}
