//! The winning rules the engine plays.

use std::fmt;
use std::str::FromStr;

use crate::game::Color;

/// A game rule. Each says exactly which lines win and, in renju, which
/// black moves are forbidden.
///
/// * `Freestyle`: five or more stones in a row win.
/// * `Standard`: exactly five win; a line of six or more wins for nobody.
/// * `Renju`: black wins only with exactly five and may not play a
///   double-three, a double-four or an overline (a move that makes five is
///   never forbidden); white wins with five or more.
/// * `Caro` (Gomocup/Piskvork rule 8): five or more in a row win, except a
///   run of *exactly* five closed at both ends by opponent stones
///   (`OXXXXXO`). The board edge does not close a run (`|XXXXXO` wins), and
///   a run of six or more wins even when closed at both ends (`OXXXXXXO`),
///   as the Piskvork manager judges it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    Freestyle,
    Standard,
    Renju,
    Caro,
}

/// A rule value the engine does not play.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unsupported rule {0}: expected 0 (freestyle), 1 (standard), 4 (renju) or 8 (caro)")]
pub struct RuleError(pub String);

impl Rule {
    pub const ALL: [Rule; 4] = [Rule::Freestyle, Rule::Standard, Rule::Renju, Rule::Caro];

    /// The value of `INFO rule` in the Gomocup protocol, a bit mask as
    /// Piskvork's skeleton decodes it: 1 = exactly five, 2 = continuous
    /// game, 4 = renju, 8 = caro. The continuous bit is accepted and has no
    /// effect: the game is played up to its first five, which is all a
    /// tournament plays (Piskvork offers it in GUI games only). Caro with
    /// exactly five (9) and renju with another rule's bit are refused.
    pub fn from_gomocup(value: u64) -> Result<Rule, RuleError> {
        const CONTINUOUS: u64 = 2;
        match value & !CONTINUOUS {
            0 => Ok(Rule::Freestyle),
            1 => Ok(Rule::Standard),
            4 => Ok(Rule::Renju),
            8 => Ok(Rule::Caro),
            _ => Err(RuleError(value.to_string())),
        }
    }

    /// The canonical `INFO rule` value for this rule.
    pub const fn gomocup_value(self) -> u32 {
        match self {
            Rule::Freestyle => 0,
            Rule::Standard => 1,
            Rule::Renju => 4,
            Rule::Caro => 8,
        }
    }

    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Whether a run of six or more is a plain non-winning line for `color`
    /// (standard for both, renju for black). In renju it is also forbidden.
    #[inline]
    pub const fn overline_loses_its_five(self, color: Color) -> bool {
        matches!(
            (self, color),
            (Rule::Standard, _) | (Rule::Renju, Color::Black)
        )
    }

    /// Whether `color` has forbidden moves under this rule.
    #[inline]
    pub const fn has_forbidden_moves(self, color: Color) -> bool {
        matches!((self, color), (Rule::Renju, Color::Black))
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Rule::Freestyle => "freestyle",
            Rule::Standard => "standard",
            Rule::Renju => "renju",
            Rule::Caro => "caro",
        })
    }
}

impl FromStr for Rule {
    type Err = RuleError;

    /// Accepts the rule names and the canonical Gomocup numbers (0, 1, 4,
    /// 8): a name on a command line or in a file means one rule, without
    /// the protocol's continuous-game bit.
    fn from_str(s: &str) -> Result<Rule, RuleError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "freestyle" | "free" | "gomoku" => Ok(Rule::Freestyle),
            "standard" | "exact5" | "exactfive" => Ok(Rule::Standard),
            "renju" => Ok(Rule::Renju),
            "caro" => Ok(Rule::Caro),
            other => other
                .parse::<u32>()
                .ok()
                .and_then(|v| Rule::ALL.into_iter().find(|r| r.gomocup_value() == v))
                .ok_or_else(|| RuleError(s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gomocup_values_round_trip() {
        for rule in Rule::ALL {
            assert_eq!(Rule::from_gomocup(rule.gomocup_value() as u64), Ok(rule));
        }
        // The continuous-game bit does not change the rule.
        for (value, rule) in [
            (2, Rule::Freestyle),
            (3, Rule::Standard),
            (6, Rule::Renju),
            (10, Rule::Caro),
        ] {
            assert_eq!(Rule::from_gomocup(value), Ok(rule));
        }
        // Caro with exactly five, renju with another rule, unknown bits.
        for value in [5, 9, 11, 12, 16, u64::MAX] {
            assert_eq!(Rule::from_gomocup(value), Err(RuleError(value.to_string())));
        }
    }

    #[test]
    fn parses_names_and_numbers() {
        assert_eq!("Renju".parse::<Rule>(), Ok(Rule::Renju));
        assert_eq!(" 8 ".parse::<Rule>(), Ok(Rule::Caro));
        assert!("connect6".parse::<Rule>().is_err());
    }
}
