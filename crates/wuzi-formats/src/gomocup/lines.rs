//! Protocol text as lines, for both ends of a pipe.

/// Splits a byte stream into lines the way managers and brains write them:
/// `\n`, `\r\n` or a lone `\r` ends a line, invalid UTF-8 is replaced, and
/// a line longer than the limit keeps its first `max` bytes (the rest is
/// dropped, so that a runaway writer cannot exhaust memory) followed by
/// U+FFFD, the replacement character: the cut line's last word is then
/// no valid word of any protocol, so a cut command is refused, never run
/// with part of its arguments.
#[derive(Debug)]
pub struct LineSplitter {
    line: Vec<u8>,
    max: usize,
    /// Bytes of the current line were dropped.
    cut: bool,
    /// The last byte fed was `\r`: a `\n` right after it ends no new line.
    after_cr: bool,
    /// `\r` is dropped wherever it is, not a line end (GTP's rule).
    discard_cr: bool,
}

impl LineSplitter {
    pub fn new(max: usize) -> LineSplitter {
        LineSplitter {
            line: Vec::new(),
            max,
            cut: false,
            after_cr: false,
            discard_cr: false,
        }
    }

    /// Splits at `\n` alone and drops every `\r`, as GTP's preprocessing
    /// asks (its section 2.2): a CR inside a command is no line end there.
    pub fn discarding_cr(max: usize) -> LineSplitter {
        LineSplitter {
            discard_cr: true,
            ..LineSplitter::new(max)
        }
    }

    /// Feeds bytes as read; `emit` gets each line they complete, in order
    /// (empty lines too: a manager may send them).
    pub fn feed(&mut self, bytes: &[u8], mut emit: impl FnMut(String)) {
        for &b in bytes {
            let after_cr = std::mem::replace(&mut self.after_cr, b == b'\r');
            match b {
                b'\r' if self.discard_cr => {}
                b'\n' if after_cr && !self.discard_cr => {}
                b'\n' | b'\r' => emit(self.take()),
                _ if self.line.len() < self.max => self.line.push(b),
                _ => self.cut = true,
            }
        }
    }

    /// At the end of input: the unfinished last line, if any.
    pub fn finish(&mut self) -> Option<String> {
        (!self.line.is_empty()).then(|| self.take())
    }

    fn take(&mut self) -> String {
        let mut text = String::from_utf8_lossy(&self.line).into_owned();
        if std::mem::take(&mut self.cut) {
            text.push(char::REPLACEMENT_CHARACTER);
        }
        self.line.clear();
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(chunks: &[&[u8]], max: usize) -> Vec<String> {
        let mut splitter = LineSplitter::new(max);
        let mut lines = Vec::new();
        for chunk in chunks {
            splitter.feed(chunk, |l| lines.push(l));
        }
        lines.extend(splitter.finish());
        lines
    }

    #[test]
    fn gtp_drops_every_cr_and_ends_lines_at_lf() {
        let mut splitter = LineSplitter::discarding_cr(100);
        let mut lines = Vec::new();
        for chunk in [&b"1 na\rme\r\n2 ver"[..], b"sion\r", b"\n\n3 quit"] {
            splitter.feed(chunk, |l| lines.push(l));
        }
        lines.extend(splitter.finish());
        assert_eq!(lines, ["1 name", "2 version", "", "3 quit"]);
    }

    #[test]
    fn every_line_ending_ends_one_line() {
        assert_eq!(
            split(&[b"START 15\r\nBEGIN\nTURN 7,7\rEND"], 100),
            ["START 15", "BEGIN", "TURN 7,7", "END"]
        );
        // A CR LF split across two reads is still one line ending.
        assert_eq!(split(&[b"OK\r", b"\n7,7\n"], 100), ["OK", "7,7"]);
        assert_eq!(split(&[b"a\n\nb\r\n\r\n"], 100), ["a", "", "b", ""]);
    }

    #[test]
    fn long_lines_are_cut_and_bad_bytes_replaced() {
        assert_eq!(split(&[b"abcdef", b"gh\nxy"], 4), ["abcd\u{fffd}", "xy"]);
        // Exactly the limit is not cut.
        assert_eq!(split(&[b"abcd\nxy"], 4), ["abcd", "xy"]);
        assert_eq!(split(&[b"7,7\xff\n"], 100), ["7,7\u{fffd}"]);
    }
}
