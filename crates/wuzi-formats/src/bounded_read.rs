//! Reading input whose size the user controls, with a bound: a path such as
//! `/dev/zero`, a named pipe that never closes or a multi-gigabyte file
//! given by mistake must end in an error naming the limit, not in memory
//! exhaustion.

use std::io::{self, Read};

/// All of `reader`, or an error if it holds more than `limit` bytes.
pub fn read_bytes(reader: impl Read, limit: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(limit));
    }
    Ok(bytes)
}

/// All of `reader` as UTF-8 text, or an error if it holds more than `limit`
/// bytes or is not UTF-8.
pub fn read_text(reader: impl Read, limit: u64) -> io::Result<String> {
    String::from_utf8(read_bytes(reader, limit)?)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.utf8_error()))
}

/// The file at `path`, at most `limit` bytes, read into a buffer of its
/// size (a network file may be a gigabyte).
pub fn read_file_bytes(path: &std::path::Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    let size = file.metadata()?.len().min(limit);
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(limit));
    }
    Ok(bytes)
}

/// The file at `path` as UTF-8 text, at most `limit` bytes.
pub fn read_file_text(path: &std::path::Path, limit: u64) -> io::Result<String> {
    read_text(std::fs::File::open(path)?, limit)
}

fn too_large(limit: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!("larger than {}", size_label(limit)),
    )
}

/// `limit` in the largest binary unit that divides it.
fn size_label(limit: u64) -> String {
    match limit {
        l if l >= 1 << 30 && l % (1 << 30) == 0 => format!("{} GiB", l >> 30),
        l if l >= 1 << 20 && l % (1 << 20) == 0 => format!("{} MiB", l >> 20),
        l if l >= 1 << 10 && l % (1 << 10) == 0 => format!("{} KiB", l >> 10),
        l => format!("{l} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_up_to_the_limit_is_read_and_beyond_it_refused() {
        let text = "x".repeat(1024);
        assert_eq!(read_text(text.as_bytes(), 1024).unwrap(), text);
        let error = read_text(text.as_bytes(), 1023).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::FileTooLarge);
        assert_eq!(error.to_string(), "larger than 1023 bytes");
        // An endless source ends at the limit.
        let error = read_bytes(io::repeat(0), 1 << 20).unwrap_err();
        assert_eq!(error.to_string(), "larger than 1 MiB");
        assert_eq!(read_bytes(io::empty(), 0).unwrap(), Vec::<u8>::new());
        assert!(read_bytes(&b"y"[..], 0).is_err());
        assert_eq!(size_label(64 << 10), "64 KiB");
        assert_eq!(size_label(3 << 30), "3 GiB");
    }

    #[test]
    fn text_must_be_utf8() {
        let error = read_text(&[0x66, 0xff, 0x66][..], 16).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
    }
}
