//! The optional log file: one file per START (per board size under
//! Yixin-Board, which sends START before every position), with the commands, answers
//! and search summaries, written through `tracing` and `tracing-appender`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use tracing_appender::rolling::RollingFileAppender;

/// The current log file, swapped at every START.
#[derive(Clone, Default)]
pub struct LogFile {
    current: Arc<Mutex<Option<RollingFileAppender>>>,
}

/// Writes into the current file (or nowhere).
pub struct LogWriter {
    current: Arc<Mutex<Option<RollingFileAppender>>>,
}

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.current.lock().as_mut() {
            Some(file) => file.write(buf),
            None => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.current.lock().as_mut() {
            Some(file) => file.flush(),
            None => Ok(()),
        }
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogFile {
    type Writer = LogWriter;

    fn make_writer(&'a self) -> LogWriter {
        LogWriter {
            current: Arc::clone(&self.current),
        }
    }
}

impl LogFile {
    /// Installs the global subscriber writing to this log (once per process;
    /// later calls keep the first).
    pub fn install(&self) {
        let subscriber = tracing_subscriber::fmt()
            .with_writer(self.clone())
            .with_ansi(false)
            .with_target(false)
            .finish();
        let _ = tracing::subscriber::set_global_default(subscriber);
    }

    /// Whether a file is being written.
    pub fn is_open(&self) -> bool {
        self.current.lock().is_some()
    }

    /// Starts a new file in `dir` (created if needed); returns its path.
    pub fn start_new(&self, dir: &Path) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        let name = format!("wuzi-{stamp}-{}.log", std::process::id());
        // The builder reports a file that cannot be created (a read-only
        // folder, Windows' Controlled Folder Access); `rolling::never`
        // panics there, which would end the brain over its log.
        let appender = RollingFileAppender::builder()
            .rotation(tracing_appender::rolling::Rotation::NEVER)
            .filename_prefix(&name)
            .build(dir)
            .map_err(std::io::Error::other)?;
        *self.current.lock() = Some(appender);
        Ok(dir.join(name))
    }

    /// The log of `[log]` (or `--log-dir`) for a front end without START
    /// (GTP, `connect`, the file protocol): one file for the process. A log
    /// that cannot be opened is said on stderr; the front end runs without.
    pub fn for_process(log: &crate::config::LogSection) {
        if !log.enabled {
            return;
        }
        let file = LogFile::default();
        file.install();
        if let Err(e) = file.start_new(&log.dir) {
            eprintln!("pbrain-wuzi: no log in {}: {e}", log.dir.display());
        }
        // The subscriber holds a clone: the file stays open for the process.
    }
}
