//! What training shows while it runs: losses over an interval, epoch
//! progress, notes.

use super::*;

/// Sums of the training figures since the last logged row.
#[derive(Default)]
pub(super) struct Interval {
    pub(super) steps: u64,
    pub(super) samples: u64,
    pub(super) policy: f64,
    pub(super) value: f64,
    pub(super) accuracy: f64,
    pub(super) seconds: f64,
}

impl Interval {
    pub(super) fn means(&self) -> Option<(f64, f64, f64)> {
        (self.samples > 0).then(|| {
            let n = self.samples as f64;
            (self.policy / n, self.value / n, self.accuracy / n)
        })
    }
}

pub(super) struct Logger {
    bar: ProgressBar,
    plain: bool,
    quiet: bool,
    last_plain: Instant,
}

impl Logger {
    /// Ends the progress bar (training is over).
    pub(super) fn finish(&self) {
        self.bar.finish_and_clear();
    }

    pub(super) fn new(quiet: bool) -> Logger {
        let plain = !quiet && !std::io::stderr().is_terminal();
        let bar = ProgressBar::hidden();
        Logger {
            bar,
            plain,
            quiet,
            last_plain: Instant::now(),
        }
    }

    pub(super) fn start_epoch(&mut self, epoch: usize, epochs: usize, batches: usize) {
        self.bar.finish_and_clear();
        let target = if self.quiet || self.plain {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        self.bar = ProgressBar::with_draw_target(Some(batches as u64), target);
        let style = ProgressStyle::with_template(
            "{prefix} [{bar:25.cyan/blue}] {pos}/{len} {msg} [{elapsed_precise}<{eta_precise}]",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
        self.bar.set_style(style);
        self.bar.set_prefix(format!("epoch {epoch}/{epochs}"));
        if self.plain {
            eprintln!("epoch {epoch}/{epochs}: {batches} batches");
        }
    }

    pub(super) fn progress(&mut self, message: String) {
        self.bar.inc(1);
        if self.plain && self.last_plain.elapsed() >= Duration::from_secs(15) {
            self.last_plain = Instant::now();
            eprintln!(
                "  {}/{} {message}",
                self.bar.position(),
                self.bar.length().unwrap_or(0)
            );
        }
        self.bar.set_message(message);
    }

    pub(super) fn note(&self, line: &str) {
        if self.quiet {
            return;
        }
        if self.plain {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }
}
