//! 3x3 convolutions by Winograd's minimal filtering (Lavin and Gray, 2015).
//! An output tile of `t x t` pixels costs `(t + 2)^2` multiplications per
//! channel pair instead of `9 t^2`, and the multiplications become
//! `(t + 2)^2` independent matrix products over all tiles of the batch,
//! which is where the time goes.
//!
//! Two tilings ([`Tiling`]): F(4x4, 3x3), AlphaGomoku's, and F(5x5, 3x3),
//! whose tiles cover 15x15 and 20x20 boards exactly: 441 products per
//! channel pair on 15x15 where F(4x4) needs 576, its 16 tiles spilling
//! over by a row and a column.
//!
//! Activations are NHWC with the channels padded to a multiple of
//! [`LANES`]; every transform runs over eight channels at a time.

use super::gemm;
use super::simd::{dispatch, Isa, LANES, V8};

/// A Winograd tiling of the board: F(t x t, 3x3) for an output tile side t.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tiling {
    /// F(4x4, 3x3): 6x6 input patches, 36 products per tile.
    F4,
    /// F(5x5, 3x3): 7x7 input patches, 49 products per tile. Its transforms
    /// have larger constants (up to 16), so it rounds more (about 1.6 times
    /// F(4x4)'s error in a model of one convolution): far below the fp32
    /// tolerance, but too much on top of bf16 operands
    /// (docs/native-backend.md).
    F5,
}

impl Tiling {
    pub const ALL: [Tiling; 2] = [Tiling::F4, Tiling::F5];

    /// Output tile side.
    pub const fn tile(self) -> usize {
        match self {
            Tiling::F4 => 4,
            Tiling::F5 => 5,
        }
    }

    /// Input patch side (the output tile plus the kernel's reach).
    pub const fn patch(self) -> usize {
        self.tile() + 2
    }

    /// Points of the transformed tile: one matrix product each.
    pub const fn points(self) -> usize {
        self.patch() * self.patch()
    }

    /// Tiles across a `height x width` plane.
    pub fn tiles(self, height: usize, width: usize) -> (usize, usize) {
        (height.div_ceil(self.tile()), width.div_ceil(self.tile()))
    }

    /// Multiplications per channel pair for one `height x width` plane.
    pub fn products(self, height: usize, width: usize) -> usize {
        let (th, tw) = self.tiles(height, width);
        th * tw * self.points()
    }

    /// The tiling of a convolution over a `height x width` board: the one
    /// needing fewer multiplications (F(4x4) on a tie, for its smaller
    /// rounding), and F(4x4) under bf16 operands, whose rounding F(5x5)'s
    /// transforms amplify beyond what the bf16 products are allowed.
    pub fn for_board(height: usize, width: usize, bf16: bool) -> Tiling {
        if !bf16 && Tiling::F5.products(height, width) < Tiling::F4.products(height, width) {
            Tiling::F5
        } else {
            Tiling::F4
        }
    }

    /// `G`: the kernel transform, `patch x 3`.
    fn kernel_transform(self) -> &'static [[f64; 3]] {
        match self {
            Tiling::F4 => &[
                [0.25, 0.0, 0.0],
                [-1.0 / 6.0, -1.0 / 6.0, -1.0 / 6.0],
                [-1.0 / 6.0, 1.0 / 6.0, -1.0 / 6.0],
                [1.0 / 24.0, 1.0 / 12.0, 1.0 / 6.0],
                [1.0 / 24.0, -1.0 / 12.0, 1.0 / 6.0],
                [0.0, 0.0, 1.0],
            ],
            // Points 0, 1, -1, 2, -2, 1/2 and infinity; every row but the
            // sixth halved, so that `B^T` (twice these rows) is integral.
            Tiling::F5 => &[
                [-0.25, 0.0, 0.0],
                [-1.0 / 6.0, -1.0 / 6.0, -1.0 / 6.0],
                [1.0 / 18.0, -1.0 / 18.0, 1.0 / 18.0],
                [1.0 / 72.0, 1.0 / 36.0, 1.0 / 18.0],
                [-1.0 / 120.0, 1.0 / 60.0, -1.0 / 30.0],
                [32.0 / 45.0, 16.0 / 45.0, 8.0 / 45.0],
                [0.0, 0.0, 0.5],
            ],
        }
    }
}

/// The most any tiling's kernel transform multiplies a 3x3 kernel's
/// largest weight by: an entry of `G g G^T` is at most that weight times
/// the absolute sums of its two rows of `G`.
pub fn largest_kernel_gain() -> f64 {
    Tiling::ALL
        .iter()
        .map(|t| {
            let widest = t
                .kernel_transform()
                .iter()
                .map(|row| row.iter().map(|v| v.abs()).sum::<f64>())
                .fold(0.0, f64::max);
            widest * widest
        })
        .fold(0.0, f64::max)
}

/// Floats from one point's matrix of transformed tiles to the next, for
/// `count` tiles of `channels`: one cache line more than they take, so
/// that the point matrices do not start at addresses a multiple of 4 KiB
/// apart. At such strides (32 tiles of 64 channels is 8 KiB) the
/// transforms' 36 (or 49) streams fell into the same cache sets and evicted each
/// other (docs/native-backend.md).
pub fn point_stride(count: usize, channels: usize) -> usize {
    count * channels + 16
}

/// Floats of the transformed tiles of one chunk: a matrix per point of
/// `tiling`, [`point_stride`] apart.
pub fn transformed_len(tiling: Tiling, count: usize, channels: usize) -> usize {
    tiling.points() * point_stride(count, channels)
}

/// `U = G g G^T` for every (input, output) channel pair of a 3x3 kernel
/// `[outputs][inputs][3][3]`: per point of `tiling`, the `inputs_padded x
/// outputs_padded` right-hand matrix of its product. Computed in f64.
pub fn transform_kernel(
    tiling: Tiling,
    weight: &[f32],
    outputs: usize,
    inputs: usize,
    outputs_padded: usize,
    inputs_padded: usize,
) -> Vec<gemm::Panels> {
    let g_transform = tiling.kernel_transform();
    let patch = tiling.patch();
    let mut u = vec![0.0f32; tiling.points() * inputs_padded * outputs_padded];
    for o in 0..outputs {
        for i in 0..inputs {
            let g = &weight[(o * inputs + i) * 9..][..9];
            // G g: patch x 3.
            let gg: Vec<[f64; 3]> = g_transform
                .iter()
                .map(|row| {
                    let mut out = [0.0f64; 3];
                    for (c, cell) in out.iter_mut().enumerate() {
                        *cell = (0..3).map(|k| row[k] * g[k * 3 + c] as f64).sum();
                    }
                    out
                })
                .collect();
            // (G g) G^T: patch x patch.
            for r in 0..patch {
                for c in 0..patch {
                    let v: f64 = (0..3).map(|k| gg[r][k] * g_transform[c][k]).sum();
                    u[((r * patch + c) * inputs_padded + i) * outputs_padded + o] = v as f32;
                }
            }
        }
    }
    u.chunks_exact(inputs_padded * outputs_padded)
        .map(|point| gemm::Panels::new(point, inputs_padded, outputs_padded))
        .collect()
}

/// The line transforms of a tiling of output side `T` and patch side `P`,
/// applied along the columns and then along the rows of a tile.
trait Lines<const T: usize, const P: usize> {
    /// `B^T d` along one line.
    fn input(d: [V8; P]) -> [V8; P];
    /// `A^T m` along one line.
    fn output(m: [V8; P]) -> [V8; T];
}

/// F(4x4, 3x3): points 0, 1, -1, 2, -2 and infinity.
struct F4Lines;

impl Lines<4, 6> for F4Lines {
    #[inline(always)]
    fn input(d: [V8; 6]) -> [V8; 6] {
        let [d0, d1, d2, d3, d4, d5] = d;
        [
            d0.scale(4.0) - d2.scale(5.0) + d4,
            d3 + d4 - (d1 + d2).scale(4.0),
            (d1 - d2).scale(4.0) + d4 - d3,
            (d3 - d1).scale(2.0) + d4 - d2,
            (d1 - d3).scale(2.0) + d4 - d2,
            d1.scale(4.0) - d3.scale(5.0) + d5,
        ]
    }

    #[inline(always)]
    fn output(m: [V8; 6]) -> [V8; 4] {
        let [m0, m1, m2, m3, m4, m5] = m;
        let (s12, d12) = (m1 + m2, m1 - m2);
        let (s34, d34) = (m3 + m4, m3 - m4);
        [
            m0 + s12 + s34,
            d12 + d34.scale(2.0),
            s12 + s34.scale(4.0),
            d12 + d34.scale(8.0) + m5,
        ]
    }
}

/// F(5x5, 3x3): points 0, 1, -1, 2, -2, 1/2 and infinity. The rows of
/// `B^T` (doubled, see [`Tiling::kernel_transform`]) of every point but
/// 1/2 hold the factor `x - 1/2`, so they share the differences
/// `d[k] - 2 d[k + 1]`, and each pair of points +-a shares an even and an
/// odd part.
struct F5Lines;

impl Lines<5, 7> for F5Lines {
    #[inline(always)]
    fn input(d: [V8; 7]) -> [V8; 7] {
        let [d0, d1, d2, d3, d4, d5, d6] = d;
        let less_twice = |x: V8, y: V8| x - (y + y);
        let (z, a, b) = (less_twice(d0, d1), less_twice(d1, d2), less_twice(d2, d3));
        let (c, e, f) = (less_twice(d3, d4), less_twice(d4, d5), less_twice(d5, d6));
        // Points 1 and -1: even part 4b - e, odd part 4a - c.
        let (even1, odd1) = (b.scale(4.0) - e, a.scale(4.0) - c);
        // Points 2 and -2: even part b - e, odd part 2 (a - c).
        let (even2, odd2) = (b - e, (a - c).scale(2.0));
        [
            b.scale(5.0) - z.scale(4.0) - e,
            even1 + odd1,
            even1 - odd1,
            even2 + odd2,
            even2 - odd2,
            d1.scale(4.0) - d3.scale(5.0) + d5,
            c.scale(5.0) - a.scale(4.0) - f,
        ]
    }

    #[inline(always)]
    fn output(m: [V8; 7]) -> [V8; 5] {
        let [m0, m1, m2, m3, m4, m5, m6] = m;
        let (s1, d1) = (m1 + m2, m1 - m2);
        let (s2, d2) = (m3 + m4, m3 - m4);
        [
            m0 + s1 + s2 + m5,
            d1 + d2.scale(2.0) + m5.scale(0.5),
            s1 + s2.scale(4.0) + m5.scale(0.25),
            d1 + d2.scale(8.0) + m5.scale(0.125),
            s1 + s2.scale(16.0) + m5.scale(0.0625) + m6,
        ]
    }
}

/// The shape of one convolution's activations, stored NHWC with a border
/// of zeros: a pixel (y, x) of the board sits at (y + 1, x + 1) of a plane
/// of `tile * tiles + 2` rows and columns of its [`Tiling`], so that every
/// input patch is read without a bounds check. Only the board's pixels are
/// ever written; the border stays as the buffer was zeroed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plane {
    pub batch: usize,
    pub height: usize,
    pub width: usize,
    /// Padded channels of the activations.
    pub channels: usize,
    pub tiling: Tiling,
}

impl Plane {
    /// Tiles of the whole batch.
    pub fn tiles(&self) -> usize {
        let (th, tw) = self.tiling.tiles(self.height, self.width);
        self.batch * th * tw
    }

    /// Rows and columns of the stored (bordered) plane.
    pub fn stored(&self) -> (usize, usize) {
        let (th, tw) = self.tiling.tiles(self.height, self.width);
        let tile = self.tiling.tile();
        (th * tile + 2, tw * tile + 2)
    }

    /// Floats of the stored batch.
    pub fn floats(&self) -> usize {
        let (rows, cols) = self.stored();
        self.batch * rows * cols * self.channels
    }

    /// Offset of the board's pixel (y, x) of position `b`.
    pub fn at(&self, b: usize, y: usize, x: usize) -> usize {
        let (rows, cols) = self.stored();
        ((b * rows + y + 1) * cols + x + 1) * self.channels
    }

    /// Position and tile coordinates of tile `t`.
    fn tile(&self, t: usize) -> (usize, usize, usize) {
        let (th, tw) = self.tiling.tiles(self.height, self.width);
        (t / (th * tw), t / tw % th, t % tw)
    }
}

/// Tiles `first..first + count` of a [`Plane`]: what one pass of the
/// transforms and the products between them covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub first: usize,
    pub count: usize,
}

/// `V = B^T d B` of the `P x P` patches of the tiles of `chunk` in `src`
/// (tiled by `L`'s tiling): `store(point, at, value, last)` receives
/// eight channels of one point, `at` being `tile * channels + channel`
/// within the point's matrix, `last` telling the tile's last store. One
/// body for both tilings and for the fp32, bf16 and 16-bit integer
/// outputs, inlined into each.
#[inline(always)]
fn input_tiles<L: Lines<T, P>, const T: usize, const P: usize>(
    src: &[f32],
    plane: Plane,
    chunk: Chunk,
    mut store: impl FnMut(usize, usize, V8, bool),
) {
    debug_assert_eq!(plane.tiling.tile(), T);
    let Chunk { first, count } = chunk;
    let channels = plane.channels;
    let (_, cols) = plane.stored();
    // Every element is written before it is read; declared once, as
    // zeroing it per channel group cost a tenth of the time.
    let mut rows = [[V8::ZERO; P]; P];
    let mut column = [V8::ZERO; P];
    for i in 0..count {
        let (b, ty, tx) = plane.tile(first + i);
        // The patch's top left corner, one pixel above and left of the tile.
        let corner = plane.at(b, ty * T, tx * T) - (cols + 1) * channels;
        let patch = &src[corner..];
        for ch in (0..channels).step_by(LANES) {
            for c in 0..P {
                for (r, value) in column.iter_mut().enumerate() {
                    *value = V8::load(&patch[(r * cols + c) * channels + ch..]);
                }
                let line = L::input(column);
                // Indexed, not by `into_iter`: moving the array iterator
                // through the stack stalled the 16-bit transform on
                // store forwarding.
                for (r, row) in rows.iter_mut().enumerate() {
                    row[c] = line[r];
                }
            }
            for (r, row) in rows.iter().enumerate() {
                let line = L::input(*row);
                for (c, &value) in line.iter().enumerate() {
                    let last = ch + LANES == channels && r * P + c + 1 == P * P;
                    store(r * P + c, i * channels + ch, value, last);
                }
            }
        }
    }
}

/// [`input_tiles`] in the tiling of `plane`.
#[inline(always)]
fn input_tiles_of(
    src: &[f32],
    plane: Plane,
    chunk: Chunk,
    store: impl FnMut(usize, usize, V8, bool),
) {
    match plane.tiling {
        Tiling::F4 => input_tiles::<F4Lines, 4, 6>(src, plane, chunk, store),
        Tiling::F5 => input_tiles::<F5Lines, 5, 7>(src, plane, chunk, store),
    }
}

dispatch! {
/// `V = B^T d B` of the patches of the tiles of `chunk` in `src` into `v`,
/// laid out `[points][chunk.count][channels]` with the points
/// [`point_stride`] apart.
pub fn transform_input(src: &[f32], plane: Plane, chunk: Chunk, v: &mut [f32]) {
    let stride = point_stride(chunk.count, plane.channels);
    input_tiles_of(src, plane, chunk, |point, at, value, _| {
        value.store(&mut v[point * stride + at..]);
    });
}
}

/// Where [`transform_input_i16`] writes: the fp32 tiles as
/// [`transform_input`] lays them out (`v`), the same quantized, two
/// channels to a `u32` (`pairs`, laid out as `v`), and the scale of each
/// point's row of channels in each tile (`scales`, `[points][count]`).
pub struct QuantizedTiles<'a> {
    pub v: &'a mut [f32],
    pub pairs: &'a mut [u32],
    pub scales: &'a mut [f32],
}

dispatch! {
/// [`transform_input`] into `out.v`, each tile's points then quantized
/// (by `quantizing`'s kernels, as [`gemm::quantize_row`] does, a row being
/// a point's channels in one tile) into `out.pairs` and `out.scales`: the
/// left operands of [`gemm::multiply_i16`]. A tile is quantized as soon
/// as its last value is stored, while it is still in L1, rather than in a
/// pass over the chunk.
pub fn transform_input_i16(
    src: &[f32],
    plane: Plane,
    chunk: Chunk,
    quantizing: Isa,
    out: QuantizedTiles<'_>,
) {
    let QuantizedTiles { v, pairs, scales } = out;
    let channels = plane.channels;
    let stride = point_stride(chunk.count, channels);
    let points = plane.tiling.points();
    let rows = TileRows {
        points,
        stride,
        channels,
        count: chunk.count,
        bits: gemm::I16Bits::for_depth(channels).activations,
    };
    input_tiles_of(src, plane, chunk, |point, at, value, last| {
        value.store(&mut v[point * stride + at..]);
        if last {
            rows.quantize(quantizing, at / channels, v, pairs, scales);
        }
    });
}
}

/// [`transform_input`] with every value rounded to bf16 as it is stored
/// (as [`gemm::bf16_bits`], ties to even), two channels to a `u32`, the
/// even channel in the low half: the left operands of
/// [`gemm::multiply_pairs`], `[points][chunk.count][channels / 2]` with the
/// points `point_stride / 2` apart. Rounding here spares the products a
/// pass over the fp32 tiles and halves what the transform writes.
pub fn transform_input_bf16(
    cpu: gemm::Bf16Cpu,
    src: &[f32],
    plane: Plane,
    chunk: Chunk,
    v: &mut [u32],
) {
    #[cfg(target_arch = "x86_64")]
    {
        let _ = cpu;
        // SAFETY: `cpu` proves that this CPU has AVX-512F and AVX512-BF16
        // (with AVX512VL, which every AVX512-BF16 CPU has: checked with it).
        unsafe { x86::transform_input_bf16(src, plane, chunk, v) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (src, plane, chunk, v);
        cpu.unreachable()
    }
}

/// Where the rows of one tile lie in [`transform_input_i16`]'s buffers.
#[derive(Clone, Copy)]
struct TileRows {
    points: usize,
    stride: usize,
    channels: usize,
    count: usize,
    /// Of the quantized activations ([`gemm::I16Bits`]).
    bits: u32,
}

impl TileRows {
    /// Quantizes tile `tile`'s rows. Kept out of line so that the store
    /// it follows stays small enough to be inlined into the transform.
    #[inline(never)]
    fn quantize(self, isa: Isa, tile: usize, v: &[f32], pairs: &mut [u32], scales: &mut [f32]) {
        let (channels, bits) = (self.channels, self.bits);
        for point in 0..self.points {
            let row = point * self.stride + tile * channels;
            let out = &mut pairs[row / 2..][..channels / 2];
            scales[point * self.count + tile] =
                gemm::quantize_row(isa, &v[row..][..channels], bits, out);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::*;
    use std::arch::x86_64::*;

    /// # Safety
    /// AVX-512F, AVX512VL and AVX512-BF16 present.
    #[target_feature(enable = "avx512f,avx512vl,avx512bf16,avx2,fma")]
    pub unsafe fn transform_input_bf16(src: &[f32], plane: Plane, chunk: Chunk, v: &mut [u32]) {
        let stride = point_stride(chunk.count, plane.channels);
        input_tiles_of(src, plane, chunk, |point, at, value, _| {
            // `at` and `stride` are even: channels come in groups of eight.
            let dst = &mut v[(point * stride + at) / 2..][..LANES / 2];
            // SAFETY (both): V8 is eight f32 aligned to 32 bytes, as
            // __m256; `dst` holds the 16 bytes stored.
            let halves = _mm256_cvtneps_pbh(unsafe { std::mem::transmute::<V8, __m256>(value) });
            unsafe {
                _mm_storeu_si128(
                    dst.as_mut_ptr().cast(),
                    std::mem::transmute::<__m128bh, __m128i>(halves),
                )
            };
        });
    }
}

/// `Y = A^T M A` of the tiles of `chunk` (tiled by `L`'s tiling), as
/// [`transform_output`] says.
#[inline(always)]
fn output_tiles<L: Lines<T, P>, const T: usize, const P: usize>(
    m: &[f32],
    plane: Plane,
    chunk: Chunk,
    bias: &[f32],
    residual: Option<&[f32]>,
    dst: &mut [f32],
) {
    debug_assert_eq!(plane.tiling.tile(), T);
    let Chunk { first, count } = chunk;
    let channels = plane.channels;
    let stride = point_stride(count, channels);
    // As in the input transform: written before read, declared once.
    let mut rows = [[V8::ZERO; P]; T];
    let mut column = [V8::ZERO; P];
    for i in 0..count {
        let (b, ty, tx) = plane.tile(first + i);
        let rows_here = (plane.height - ty * T).min(T);
        let cols_here = (plane.width - tx * T).min(T);
        for ch in (0..channels).step_by(LANES) {
            let bias = V8::load(&bias[ch..]);
            for c in 0..P {
                for (r, value) in column.iter_mut().enumerate() {
                    *value = V8::load(&m[(r * P + c) * stride + i * channels + ch..]);
                }
                let line = L::output(column);
                for (r, value) in line.into_iter().enumerate() {
                    rows[r][c] = value;
                }
            }
            for (r, row) in rows.iter().enumerate().take(rows_here) {
                let line = L::output(*row);
                for (c, value) in line.into_iter().enumerate().take(cols_here) {
                    let at = plane.at(b, ty * T + r, tx * T + c) + ch;
                    let mut out = value + bias;
                    if let Some(residual) = residual {
                        out = out + V8::load(&residual[at..]);
                    }
                    out.relu().store(&mut dst[at..]);
                }
            }
        }
    }
}

dispatch! {
/// `Y = A^T M A` of the tiles of `chunk` from `m`
/// (`[points][chunk.count][channels]`, points [`point_stride`] apart) into
/// `dst`, plus `bias`, plus `residual` (stored as `dst`) when given, then
/// ReLU.
pub fn transform_output(
    m: &[f32],
    plane: Plane,
    chunk: Chunk,
    bias: &[f32],
    residual: Option<&[f32]>,
    dst: &mut [f32],
) {
    match plane.tiling {
        Tiling::F4 => output_tiles::<F4Lines, 4, 6>(m, plane, chunk, bias, residual, dst),
        Tiling::F5 => output_tiles::<F5Lines, 5, 7>(m, plane, chunk, bias, residual, dst),
    }
}
}

/// A direct 3x3 convolution (zero padding) with bias, for tests: the
/// reference that the Winograd path must agree with. `src` NHWC with
/// `inputs` channels and `(batch, height, width)` pixels, `weight`
/// `[outputs][inputs][3][3]`; returns NHWC with `outputs` channels, before
/// any activation.
pub fn direct_reference(
    src: &[f32],
    (batch, height, width): (usize, usize, usize),
    inputs: usize,
    weight: &[f32],
    bias: &[f32],
    outputs: usize,
) -> Vec<f32> {
    let mut out = vec![0.0f32; batch * height * width * outputs];
    for b in 0..batch {
        for y in 0..height {
            for x in 0..width {
                for o in 0..outputs {
                    let mut acc = bias[o] as f64;
                    for ky in 0..3 {
                        for kx in 0..3 {
                            let (sy, sx) = ((y + ky).wrapping_sub(1), (x + kx).wrapping_sub(1));
                            if sy >= height || sx >= width {
                                continue;
                            }
                            for i in 0..inputs {
                                acc += src[((b * height + sy) * width + sx) * inputs + i] as f64
                                    * weight[((o * inputs + i) * 3 + ky) * 3 + kx] as f64;
                            }
                        }
                    }
                    out[((b * height + y) * width + x) * outputs + o] = acc as f32;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::native::simd::{padded, Isa};

    fn noise(seed: &mut u64) -> f32 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*seed >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    /// F(5x5) where its tiles cover the board with fewer multiplications
    /// (the Gomocup's 15x15 and 20x20 among them), F(4x4) elsewhere and
    /// under bf16 operands.
    #[test]
    fn each_board_gets_the_tiling_with_fewer_products() {
        assert_eq!(Tiling::F4.products(15, 15), 16 * 36);
        assert_eq!(Tiling::F5.products(15, 15), 9 * 49);
        assert_eq!(Tiling::F4.products(20, 7), 10 * 36);
        assert_eq!(Tiling::F5.products(20, 7), 8 * 49);
        for (side, want) in [
            (5, Tiling::F5),
            (8, Tiling::F4),
            (15, Tiling::F5),
            (16, Tiling::F4),
            (19, Tiling::F5),
            (20, Tiling::F5),
            (32, Tiling::F4),
        ] {
            assert_eq!(Tiling::for_board(side, side, false), want, "{side}x{side}");
            assert_eq!(Tiling::for_board(side, side, true), Tiling::F4);
        }
        // 20 x 7: 10 F(4x4) tiles (360 products) against 8 F(5x5) (392).
        assert_eq!(Tiling::for_board(20, 7, false), Tiling::F4);
    }

    /// The bf16 input transform stores exactly the fp32 one's values
    /// rounded to bf16, in the pairs the bf16 products take, and writes
    /// nothing else.
    #[test]
    fn bf16_input_transform_is_the_rounded_fp32_one() {
        let Some(cpu) = gemm::Bf16Cpu::detect() else {
            eprintln!("no AVX512-BF16 on this CPU: the bf16 transform is not run");
            return;
        };
        for tiling in Tiling::ALL {
            bf16_input_transform_of(cpu, tiling);
        }
    }

    /// Two positions of a 15x13 board with 24 channels tiled by `tiling`,
    /// every cell's channels noise times `scale` (the border zero).
    fn noisy_plane(tiling: Tiling, mut seed: u64, scale: f32) -> (Plane, Vec<f32>) {
        let plane = Plane {
            batch: 2,
            height: 15,
            width: 13,
            channels: 24,
            tiling,
        };
        let mut src = vec![0.0; plane.floats()];
        for b in 0..plane.batch {
            for y in 0..plane.height {
                for x in 0..plane.width {
                    let at = plane.at(b, y, x);
                    for v in &mut src[at..at + plane.channels] {
                        *v = noise(&mut seed) * scale;
                    }
                }
            }
        }
        (plane, src)
    }

    fn bf16_input_transform_of(cpu: gemm::Bf16Cpu, tiling: Tiling) {
        let (plane, src) = noisy_plane(tiling, 11, 100.0);
        // A plane of zeros but for three pixels: each transformed value is
        // then one of them times a small integer (often 1 or a power of
        // two), so a tie, a value that rounds up and a denormal reach the
        // rounding as they are, which the noise's sums never do.
        let mut sparse = vec![0.0; plane.floats()];
        sparse[plane.at(0, 5, 5) + 3] = 1.0 + 1.0 / 512.0;
        sparse[plane.at(0, 10, 2) + 9] = -(1.0 + 3.0 / 512.0);
        sparse[plane.at(1, 2, 9) + 17] = 1e-39;
        let tiles = plane.tiles();
        let (mut ties, mut denormals) = (0, 0);
        for src in [&src, &sparse] {
            for first in (0..tiles).step_by(7) {
                let count = (tiles - first).min(7);
                let mut v = vec![0.0; transformed_len(tiling, count, plane.channels)];
                transform_input(Isa::detect(), src, plane, Chunk { first, count }, &mut v);
                ties += v.iter().filter(|x| x.to_bits() & 0xffff == 0x8000).count();
                denormals += v.iter().filter(|x| x.is_subnormal()).count();
                let stride = point_stride(count, plane.channels);
                let mut want = vec![u32::MAX; transformed_len(tiling, count, plane.channels) / 2];
                for point in 0..tiling.points() {
                    let pairs = gemm::bf16_pairs(
                        count,
                        plane.channels,
                        &v[point * stride..],
                        plane.channels,
                    );
                    want[point * stride / 2..][..pairs.len()].copy_from_slice(&pairs);
                }
                let mut got = vec![u32::MAX; want.len()];
                transform_input_bf16(cpu, src, plane, Chunk { first, count }, &mut got);
                assert_eq!(got, want, "{tiling:?} tiles {first}..{}", first + count);
            }
        }
        assert!(
            ties > 0 && denormals > 0,
            "{tiling:?}: {ties} ties, {denormals} denormals"
        );
    }

    /// The int16 input transform stores the fp32 one's values, and those
    /// values quantized a row (a point's channels in one tile) at a time
    /// exactly as the portable quantizer does, in every instruction set,
    /// both tilings, chunks that end mid-plane, and 24 channels (the
    /// quantizer's tail of eight).
    #[test]
    fn i16_input_transform_is_the_quantized_fp32_one() {
        for tiling in Tiling::ALL {
            let (plane, src) = noisy_plane(tiling, 13, 10.0);
            let (tiles, channels) = (plane.tiles(), plane.channels);
            for isa in Isa::all_supported() {
                for first in (0..tiles).step_by(7) {
                    let count = (tiles - first).min(7);
                    let chunk = Chunk { first, count };
                    let len = transformed_len(tiling, count, channels);
                    let mut v = vec![0.0; len];
                    transform_input(isa, &src, plane, chunk, &mut v);
                    let stride = point_stride(count, channels);
                    let mut want_pairs = vec![u32::MAX; len / 2];
                    let mut want_scales = vec![f32::NAN; tiling.points() * count];
                    for point in 0..tiling.points() {
                        gemm::quantize_rows(
                            Isa::Portable,
                            count,
                            channels,
                            &v[point * stride..],
                            channels,
                            &mut want_pairs[point * stride / 2..],
                            &mut want_scales[point * count..][..count],
                        );
                    }
                    let mut got_v = vec![f32::NAN; len];
                    let mut got_pairs = vec![u32::MAX; len / 2];
                    let mut got_scales = vec![f32::NAN; want_scales.len()];
                    let out = QuantizedTiles {
                        v: &mut got_v,
                        pairs: &mut got_pairs,
                        scales: &mut got_scales,
                    };
                    transform_input_i16(isa, &src, plane, chunk, isa, out);
                    let what = format!("{isa} {tiling:?} tiles {first}..{}", first + count);
                    assert_eq!(got_v[..count * channels], v[..count * channels], "{what}");
                    assert_eq!(got_pairs, want_pairs, "{what}");
                    assert_eq!(got_scales, want_scales, "{what}");
                }
            }
        }
    }

    /// The Winograd path (kernel, input and output transforms and the 36
    /// products) equals a direct convolution, on boards whose sides are
    /// not multiples of the tile, with channels that need padding, in
    /// every instruction set this CPU has.
    #[test]
    fn winograd_convolution_equals_the_direct_one() {
        let mut seed = 7;
        for (batch, height, width, inputs, outputs) in [
            (2, 7, 9, 5, 12),
            (1, 15, 15, 38, 16),
            (3, 4, 4, 8, 8),
            (1, 20, 11, 8, 8),
        ] {
            let (ip, op) = (padded(inputs), padded(outputs));
            let src: Vec<f32> = (0..batch * height * width * inputs)
                .map(|_| noise(&mut seed))
                .collect();
            let weight: Vec<f32> = (0..outputs * inputs * 9)
                .map(|_| noise(&mut seed))
                .collect();
            let bias: Vec<f32> = (0..outputs).map(|_| noise(&mut seed)).collect();
            let residual: Vec<f32> = (0..batch * height * width * op)
                .map(|_| noise(&mut seed))
                .collect();
            let expected = direct_reference(
                &src,
                (batch, height, width),
                inputs,
                &weight,
                &bias,
                outputs,
            );
            for tiling in Tiling::ALL {
                let in_plane = Plane {
                    batch,
                    height,
                    width,
                    channels: ip,
                    tiling,
                };
                let out_plane = Plane {
                    channels: op,
                    ..in_plane
                };
                let mut stored_src = vec![0.0; in_plane.floats()];
                let mut stored_residual = vec![0.0; out_plane.floats()];
                for cell in 0..batch * height * width {
                    let (b, y, x) = (cell / (height * width), cell / width % height, cell % width);
                    let at = in_plane.at(b, y, x);
                    stored_src[at..at + inputs].copy_from_slice(&src[cell * inputs..][..inputs]);
                    let at = out_plane.at(b, y, x);
                    stored_residual[at..at + op].copy_from_slice(&residual[cell * op..][..op]);
                }
                let kernel = transform_kernel(tiling, &weight, outputs, inputs, op, ip);
                let mut padded_bias = bias.clone();
                padded_bias.resize(op, 0.0);
                for isa in Isa::all_supported() {
                    for with_residual in [false, true] {
                        let mut dst = vec![0.0; out_plane.floats()];
                        let res = with_residual.then_some(stored_residual.as_slice());
                        // In chunks of 5 tiles, so that chunk edges are crossed.
                        let tiles = in_plane.tiles();
                        for first in (0..tiles).step_by(5) {
                            let count = (tiles - first).min(5);
                            let mut v = vec![0.0; transformed_len(tiling, count, ip)];
                            transform_input(
                                isa,
                                &stored_src,
                                in_plane,
                                Chunk { first, count },
                                &mut v,
                            );
                            let mut m = vec![0.0; transformed_len(tiling, count, op)];
                            for p in 0..tiling.points() {
                                gemm::multiply(
                                    isa,
                                    count,
                                    &v[p * point_stride(count, ip)..],
                                    ip,
                                    &kernel[p],
                                    &mut m[p * point_stride(count, op)..],
                                );
                            }
                            transform_output(
                                isa,
                                &m,
                                out_plane,
                                Chunk { first, count },
                                &padded_bias,
                                res,
                                &mut dst,
                            );
                        }
                        for cell in 0..batch * height * width {
                            let (b, y, x) =
                                (cell / (height * width), cell / width % height, cell % width);
                            for o in 0..outputs {
                                let mut want = expected[cell * outputs + o];
                                if with_residual {
                                    want += residual[cell * op + o];
                                }
                                let want = want.max(0.0);
                                let got = dst[out_plane.at(b, y, x) + o];
                                assert!(
                                (got - want).abs() <= 1e-4 * (1.0 + want.abs()) * (inputs as f32).sqrt(),
                                "{tiling:?} {isa} {batch}x{height}x{width} {inputs}->{outputs} cell {cell} channel {o}: {got} != {want}"
                            );
                            }
                        }
                        // Nothing outside the board's pixels is written.
                        let mut outside = dst.clone();
                        for cell in 0..batch * height * width {
                            let (b, y, x) =
                                (cell / (height * width), cell / width % height, cell % width);
                            outside[out_plane.at(b, y, x)..][..op].fill(0.0);
                        }
                        assert!(
                            outside.iter().all(|v| *v == 0.0),
                            "{tiling:?} {isa}: the border was written"
                        );
                    }
                }
            }
        }
    }
}
