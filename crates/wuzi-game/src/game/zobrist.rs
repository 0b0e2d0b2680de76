//! Zobrist keys: a fixed random 64-bit key per (colour, cell) and one for the
//! side to move, so a position's hash is the XOR of its stones' keys.

use crate::game::point::CELL_SLOTS;
use crate::rng::{mix, GOLDEN_GAMMA};

/// One SplitMix64 step, at compile time.
const fn splitmix(state: u64) -> (u64, u64) {
    let state = state.wrapping_add(GOLDEN_GAMMA);
    (state, mix(state))
}

const fn generate() -> ([[u64; CELL_SLOTS]; 2], u64) {
    let mut keys = [[0u64; CELL_SLOTS]; 2];
    let mut state = 0x5755_5A49_u64; // "WUZI"
    let mut color = 0;
    while color < 2 {
        let mut cell = 0;
        while cell < CELL_SLOTS {
            let (next, value) = splitmix(state);
            state = next;
            keys[color][cell] = value;
            cell += 1;
        }
        color += 1;
    }
    let (_, side) = splitmix(state);
    (keys, side)
}

const TABLES: ([[u64; CELL_SLOTS]; 2], u64) = generate();

/// Key of a stone of colour index `color` on cell `index`.
#[inline]
pub(crate) fn stone_key(color: usize, index: usize) -> u64 {
    TABLES.0[color][index]
}

/// XORed into the hash when white is to move.
pub(crate) const WHITE_TO_MOVE: u64 = TABLES.1;

/// A hasher for keys that are Zobrist hashes already: they are uniformly
/// random, so hashing them again (std's SipHash) only costs time. The
/// solvers' tables look keys up several times per node.
#[derive(Clone, Copy, Default)]
pub struct PassThroughHasher(u64);

impl std::hash::Hasher for PassThroughHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is meant; anything else is folded in, not lost.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, key: u64) {
        self.0 = key;
    }
}

/// A map keyed by Zobrist hashes.
pub type ZobristMap<V> =
    std::collections::HashMap<u64, V, std::hash::BuildHasherDefault<PassThroughHasher>>;
