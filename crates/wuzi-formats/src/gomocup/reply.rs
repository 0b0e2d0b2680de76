//! The lines a brain prints.

use std::fmt;

use super::Coord;

/// One line from a brain, as the manager classifies it: protocol keywords
/// are matched case-insensitively by their first word; a line that is
/// nothing else and reads `x,y` is a move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BrainLine {
    /// `OK` (alone on its line) after START, RESTART or a set-up command.
    Ok,
    /// A move, `x,y`.
    Move(Coord),
    /// `SUGGEST x,y`: the brain proposes a move, the manager answers `PLAY`.
    Suggest(Coord),
    /// `MESSAGE text`: shown to the user.
    Message(String),
    /// `DEBUG text`: for the brain's author.
    Debug(String),
    /// `ERROR text`: the brain refused the last command.
    Error(String),
    /// `UNKNOWN text`: the brain does not know the last command.
    Unknown(String),
    /// Anything else (an ABOUT answer, a swap answer, a malformed move).
    Other(String),
}

impl BrainLine {
    /// Classifies one line (without its line ending).
    pub fn parse(line: &str) -> BrainLine {
        let t = line.trim();
        let (word, rest) = match t.split_once(char::is_whitespace) {
            Some((w, r)) => (w, r.trim()),
            None => (t, ""),
        };
        let keyword = |k: &str| word.eq_ignore_ascii_case(k);
        if keyword("OK") && rest.is_empty() {
            BrainLine::Ok
        } else if keyword("MESSAGE") {
            BrainLine::Message(rest.to_string())
        } else if keyword("DEBUG") {
            BrainLine::Debug(rest.to_string())
        } else if keyword("ERROR") {
            BrainLine::Error(rest.to_string())
        } else if keyword("UNKNOWN") {
            BrainLine::Unknown(rest.to_string())
        } else if keyword("SUGGEST") {
            match rest.parse() {
                Ok(c) => BrainLine::Suggest(c),
                Err(_) => BrainLine::Other(t.to_string()),
            }
        } else {
            match t.parse() {
                Ok(c) => BrainLine::Move(c),
                Err(_) => BrainLine::Other(t.to_string()),
            }
        }
    }

    /// A line of text for `MESSAGE`, `ERROR` and the like: line breaks
    /// become blanks, since a manager reads one line per answer.
    fn one_line(text: &str) -> String {
        text.replace(['\r', '\n'], " ")
    }
}

impl fmt::Display for BrainLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let with_text = |f: &mut fmt::Formatter<'_>, word: &str, text: &str| {
            if text.is_empty() {
                f.write_str(word)
            } else {
                write!(f, "{word} {}", BrainLine::one_line(text))
            }
        };
        match self {
            BrainLine::Ok => f.write_str("OK"),
            BrainLine::Move(c) => write!(f, "{c}"),
            BrainLine::Suggest(c) => write!(f, "SUGGEST {c}"),
            BrainLine::Message(text) => with_text(f, "MESSAGE", text),
            BrainLine::Debug(text) => with_text(f, "DEBUG", text),
            BrainLine::Error(text) => with_text(f, "ERROR", text),
            BrainLine::Unknown(text) => with_text(f, "UNKNOWN", text),
            BrainLine::Other(text) => f.write_str(&BrainLine::one_line(text)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(x: i64, y: i64) -> Coord {
        Coord { x, y }
    }

    #[test]
    fn lines_are_classified() {
        assert_eq!(BrainLine::parse("OK"), BrainLine::Ok);
        assert_eq!(BrainLine::parse("ok "), BrainLine::Ok);
        assert_eq!(
            BrainLine::parse("OK - ready"),
            BrainLine::Other("OK - ready".into())
        );
        assert_eq!(BrainLine::parse(" 7, 8"), BrainLine::Move(c(7, 8)));
        assert_eq!(BrainLine::parse("-1,3"), BrainLine::Move(c(-1, 3)));
        assert_eq!(
            BrainLine::parse("7,7 extra"),
            BrainLine::Other("7,7 extra".into())
        );
        assert_eq!(BrainLine::parse("7 ,7"), BrainLine::Move(c(7, 7)));
        assert_eq!(
            BrainLine::parse("MESSAGE hi"),
            BrainLine::Message("hi".into())
        );
        assert_eq!(BrainLine::parse("debug x"), BrainLine::Debug("x".into()));
        assert_eq!(
            BrainLine::parse("ERROR bad"),
            BrainLine::Error("bad".into())
        );
        assert_eq!(
            BrainLine::parse("UNKNOWN"),
            BrainLine::Unknown(String::new())
        );
        assert_eq!(BrainLine::parse("SUGGEST 3,4"), BrainLine::Suggest(c(3, 4)));
        assert_eq!(
            BrainLine::parse("SUGGEST 3"),
            BrainLine::Other("SUGGEST 3".into())
        );
        assert_eq!(BrainLine::parse("7.5,2"), BrainLine::Other("7.5,2".into()));
    }

    #[test]
    fn printed_lines_read_back_as_themselves_on_one_line() {
        for line in [
            BrainLine::Ok,
            BrainLine::Move(c(0, 14)),
            BrainLine::Suggest(c(7, 7)),
            BrainLine::Message("winrate 55%".into()),
            BrainLine::Debug("nodes 10".into()),
            BrainLine::Error("occupied 7,7".into()),
            BrainLine::Unknown("FOO".into()),
        ] {
            assert_eq!(BrainLine::parse(&line.to_string()), line);
        }
        let two_lines = BrainLine::Error("bad\nthing".into()).to_string();
        assert_eq!(two_lines, "ERROR bad thing");
    }
}
