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
