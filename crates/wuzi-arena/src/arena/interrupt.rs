//! Ctrl-C and termination signals during a match. The first stops the
//! schedule: no game is started after it, the games in progress finish and
//! the summary of the games played is printed (a long SPRT stopped by hand
//! keeps its figures). The second quits at once. Installed by the `match`
//! command only: a program that runs matches through the library keeps its
//! own signal handling.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

static REQUESTS: AtomicU32 = AtomicU32::new(0);

/// Installs the handler (once per process; later calls return the first
/// call's result).
pub fn install() -> Result<(), String> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            ctrlc::set_handler(|| {
                if REQUESTS.fetch_add(1, Ordering::SeqCst) == 0 {
                    eprintln!(
                        "match: interrupted: no new games; the games in progress finish, \
                         then the summary (interrupt again to quit at once)"
                    );
                } else {
                    eprintln!("match: interrupted again: quitting without the games in progress");
                    std::process::exit(130);
                }
            })
            .map_err(|e| e.to_string())
        })
        .clone()
}

/// Whether a signal asked the match to stop.
pub fn requested() -> bool {
    REQUESTS.load(Ordering::SeqCst) > 0
}
