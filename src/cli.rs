//! Parsers of command-line values that several subcommands share.

/// Seconds given on the command line: a finite, positive number of at most
/// a year, so that `Duration::from_secs_f64` of it cannot panic (`nan`,
/// `inf` and `1e20` are refused here, with the reason).
pub fn parse_seconds(s: &str) -> Result<f64, String> {
    const YEAR: f64 = 365.0 * 86_400.0;
    let seconds: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if seconds.is_finite() && seconds > 0.0 && seconds <= YEAR {
        Ok(seconds)
    } else {
        Err(format!(
            "{s:?}: seconds must be a positive number of at most {YEAR}"
        ))
    }
}

/// A count from 1 to `most` on the command line (threads, evaluators,
/// batches): refused outside, rather than passed on to overflow or to
/// ask the system for a million threads.
pub fn count_at_most(most: usize) -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(1..=most as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_finite_positive_and_bounded() {
        assert_eq!(parse_seconds("2"), Ok(2.0));
        assert_eq!(parse_seconds(" 0.25 "), Ok(0.25));
        for bad in ["nan", "NaN", "inf", "-inf", "1e20", "0", "-1", "", "two"] {
            assert!(parse_seconds(bad).is_err(), "{bad:?} was accepted");
        }
        // What it accepts, a Duration takes without panicking.
        let most = parse_seconds("31536000").unwrap();
        assert!(std::time::Duration::try_from_secs_f64(most).is_ok());
    }
}
