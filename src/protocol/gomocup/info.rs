//! INFO: the manager's settings (clock, memory, rule, threads, the
//! extended keys and Yixin-Board's), each applied to the engine or the
//! session at once.

use super::*;
use crate::search::MAX_THREADS;

impl Gomocup {
    pub(super) fn info(&mut self, s: &mut GomocupSession, key: &str, value: &str) {
        let number = || value.trim().parse::<i64>();
        let bad = |s: &mut GomocupSession, what: &str| {
            message(s, &format!("ERROR INFO {key} {value}: {what}"));
        };
        if let Some(set) = self.clock.set(key, value) {
            match set {
                Ok(()) => {
                    if key == "time_left" {
                        self.time_left_at = Some(s.received());
                    }
                    self.apply_clock(&mut s.engine)
                }
                Err(e) => bad(s, &e.to_string()),
            }
            return;
        }
        let engine = &mut s.engine;
        match key {
            "max_memory" => match number() {
                Ok(bytes) if bytes >= 0 => {
                    // 0: no limit (the protocol's word).
                    let limit = match bytes {
                        0 => usize::MAX,
                        bytes => usize::try_from(bytes).unwrap_or(usize::MAX),
                    };
                    engine.configure(|c| c.max_memory = limit);
                    check_memory_limit(s, "max_memory", limit);
                }
                _ => bad(s, "expected a number of bytes (0: no limit)"),
            },
            "hash_size" => match number() {
                // Yixin-Board: KiB.
                Ok(kib) if kib > 0 => {
                    let limit = usize::try_from(kib).map_or(usize::MAX, |k| k.saturating_mul(1024));
                    engine.configure(|c| c.max_memory = limit);
                    check_memory_limit(s, "hash_size", limit);
                }
                Ok(_) => {}
                Err(_) => bad(s, "expected a size in KiB"),
            },
            "rule" => match number() {
                // A ponder under the old rule ends: the new one is searched
                // with its own network, or refused.
                Ok(v) => match self.dialect.rule(v) {
                    Some(rule) => {
                        if rule != s.engine.rule() {
                            s.end_ponder();
                        }
                        self.set_rule(s, rule)
                    }
                    None => {
                        s.end_ponder();
                        let expected = if self.dialect == Dialect::YixinBoard {
                            "0 (freestyle), 1 (standard), 2 (renju) or 8 (caro)"
                        } else {
                            "0 (freestyle), 1 (standard), 4 (renju) or 8 (caro)"
                        };
                        let why = format!("unsupported rule {v}: expected {expected}");
                        bad(s, &why);
                        self.refused_rule = Some(why);
                    }
                },
                Err(_) => bad(s, "expected a rule number"),
            },
            "max_depth" => match number() {
                Ok(v) => engine.limits.max_depth = (v > 0).then(|| v.min(u32::MAX as i64) as u32),
                Err(_) => bad(s, "expected an integer"),
            },
            "max_node" => match number() {
                Ok(v) => engine.limits.max_playouts = (v > 0).then_some(v as u64),
                Err(_) => bad(s, "expected an integer"),
            },
            "thread_num" => match number() {
                Ok(v) if v >= 1 => {
                    let threads = usize::try_from(v).map_or(MAX_THREADS, |v| v.min(MAX_THREADS));
                    engine.configure(|c| c.threads = threads)
                }
                _ => bad(s, "expected a number of threads, at least 1"),
            },
            "style" => match number() {
                Ok(v @ 0..=4) => engine.configure(|c| c.style = v as u8),
                _ => bad(s, "expected 0..4"),
            },
            "analysis_mode" => match number() {
                Ok(v @ 0..=1) => self.analysis_mode = v == 1,
                _ => bad(s, "expected 0 or 1"),
            },
            "auto_pondering" | "pondering" => match number() {
                Ok(v @ 0..=1) => s.auto_ponder = v == 1,
                _ => bad(s, "expected 0 or 1"),
            },
            "show_detail" => match number() {
                Ok(v) if v >= 0 => self.show_detail = (v & 3) as u8,
                _ => bad(s, "expected a bit mask 0..3"),
            },
            "caution_factor" => match number() {
                Ok(v @ 0..=5) => engine.configure(|c| c.candidate_distance = 1 + v.min(3) as u8),
                _ => bad(s, "expected 0..5"),
            },
            "evaluate" => self.evaluate(s, value),
            // Known keys with nothing to change here (game_type, folder,
            // vcthread, checkmate, nbestsym, start_depth, usedatabase,
            // database_readonly, thread_split_depth), and unknown ones.
            _ => {}
        }
    }

    /// The engine's time control from the manager's clock.
    pub(super) fn apply_clock(&self, engine: &mut Engine) {
        engine.time = TimeControl {
            turn: self.clock.turn_limit(self.dialect.turn_zero_is_unlimited()),
            left: self.clock.game_left(),
            increment: self.clock.increment(),
            overtime: Duration::ZERO,
            lag: self.clock.lag(),
        };
    }
}

/// Says so when `limit` is below what the engine needs
/// ([`crate::protocol::memory_limit_note`]).
pub(super) fn check_memory_limit(s: &mut GomocupSession, setting: &str, limit: usize) {
    if let Some(note) = crate::protocol::memory_limit_note(&s.engine, setting, limit) {
        message(s, &note);
    }
}
