//! The board's incremental state checked against a recomputation from the
//! stones alone (for the tests and property tests).

use super::*;

impl Board {
    /// Recomputes every derived structure from the stones alone, without the
    /// line bit strings, and reports the first difference. For tests: the
    /// incremental update must always agree with this.
    pub fn check_consistency(&self) -> Result<(), String> {
        let mut hash = 0;
        let mut sets = [[CellSet::new(); 4]; 2];
        for p in self.size.points() {
            let i = p.index();
            if let Some(color) = self.stone(p) {
                hash ^= zobrist::stone_key(color.index(), i);
                continue;
            }
            let mut packed = [0u8; 4];
            for dir in Direction::ALL {
                let mut window = [WALL; 11];
                for (slot, k) in (-(HALF_WINDOW as i32)..=HALF_WINDOW as i32).enumerate() {
                    if let Some(q) = self.size_point(p, dir, k) {
                        window[slot] = self.cells[q.index()];
                    }
                }
                window[HALF_WINDOW] = EMPTY;
                packed[dir.index()] = self.table.line(key_of_window(&window));
            }
            if packed != self.patterns[i] {
                return Err(format!(
                    "patterns of {p}: incremental {:?}, recomputed {packed:?}",
                    self.patterns[i]
                ));
            }
            for color in Color::BOTH {
                let code = self.table.combine(color, packed);
                if code != self.threats[i][color.index()] {
                    return Err(format!("threat of {p} for {color} differs"));
                }
                for kind in CellKind::ALL {
                    if code >> 8 & (1 << kind as u16) != 0 {
                        sets[color.index()][kind as usize].insert(p);
                    }
                }
            }
        }
        if sets != self.sets {
            return Err("cell sets differ".to_string());
        }
        if hash != self.stone_hash {
            return Err("hash differs".to_string());
        }
        for (i, &(p, color)) in self.history.iter().enumerate() {
            if self.stone(p) != Some(color) {
                return Err(format!("history move {i} ({p}) is not on the board"));
            }
        }
        if self.history.len()
            != self
                .size
                .points()
                .filter(|&p| self.stone(p).is_some())
                .count()
        {
            return Err("stone count differs from history".to_string());
        }
        Ok(())
    }
}
