//! Benchmarks behind `pbrain-wuzi bench`, printing figures rather than
//! asserting them (timings belong in benchmarks, not in tests).

pub mod blunders;
pub mod matching;
pub mod nn;
pub mod positions;
pub mod rules;
pub mod search;

use std::time::{Duration, Instant};

/// Runs `step` (which reports how many operations it did) repeatedly for at
/// least `duration`, returning operations per second. One untimed step
/// first warms the caches and the allocator.
pub fn rate(duration: Duration, mut step: impl FnMut() -> u64) -> f64 {
    step();
    let start = Instant::now();
    let mut ops = 0u64;
    loop {
        ops += step();
        let elapsed = start.elapsed();
        if elapsed >= duration {
            return ops as f64 / elapsed.as_secs_f64();
        }
    }
}

/// Formats a rate with thousands separators, e.g. `1,234,567`.
pub fn format_rate(value: f64) -> String {
    let digits = format!("{:.0}", value.max(0.0));
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats_thousands() {
        assert_eq!(super::format_rate(1234567.4), "1,234,567");
        assert_eq!(super::format_rate(999.0), "999");
        assert_eq!(super::format_rate(0.2), "0");
    }
}
