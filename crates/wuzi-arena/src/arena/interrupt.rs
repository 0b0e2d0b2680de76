//! Ctrl-C and termination signals (SIGINT, SIGTERM, SIGHUP; Ctrl-C and
//! Ctrl-Break on Windows) during a match. The first stops the schedule: no
//! game is started after it, the games in progress finish and the summary
//! of the games played is printed (a long SPRT stopped by hand keeps its
//! figures). The second kills the engines and quits at once. Signals the
//! process was started ignoring (nohup, background jobs) stay ignored.
//! Installed by the `match` command only: a program that runs matches
//! through the library keeps its own signal handling.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::OnceLock;

static REQUESTS: AtomicU32 = AtomicU32::new(0);
static ABORTED: AtomicBool = AtomicBool::new(false);

/// Installs the handler (once per process; later calls return the first
/// call's result).
pub fn install() -> Result<(), String> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            #[cfg(unix)]
            let ignored = ignored_signals();
            let installed = ctrlc::set_handler(|| {
                // Written, not `eprintln!`: a closed stderr (a hung-up
                // terminal, `2>&1 | head`) would panic the handler's thread
                // and leave every later signal unanswered.
                let say = |text: &str| {
                    let _ = writeln!(std::io::stderr(), "{text}");
                };
                if REQUESTS.fetch_add(1, Ordering::SeqCst) == 0 {
                    say(
                        "match: interrupted: no new games; the games in progress finish, \
                         then the summary (interrupt again to quit at once)",
                    );
                } else {
                    say("match: interrupted again: quitting without the games in progress");
                    // Before the kill: the games it ends are not results.
                    ABORTED.store(true, Ordering::SeqCst);
                    super::engine::live::kill_all();
                    std::process::exit(130);
                }
            })
            .map_err(|e| e.to_string());
            // What nohup or a shell's background job ignored stays ignored.
            #[cfg(unix)]
            for signal in ignored {
                // SAFETY: setting a standard signal's disposition to SIG_IGN.
                unsafe {
                    libc::signal(signal, libc::SIG_IGN);
                }
            }
            installed
        })
        .clone()
}

/// Whether a second signal is quitting the process: the engines are being
/// killed, and what ends now is not a result to print.
pub fn aborted() -> bool {
    ABORTED.load(Ordering::SeqCst)
}

/// Whether a signal asked the match to stop.
pub fn requested() -> bool {
    REQUESTS.load(Ordering::SeqCst) > 0
}

/// The signals of the handler (SIGINT, SIGTERM, SIGHUP) that this process
/// was started ignoring.
#[cfg(unix)]
fn ignored_signals() -> Vec<libc::c_int> {
    [libc::SIGINT, libc::SIGTERM, libc::SIGHUP]
        .into_iter()
        .filter(|&signal| {
            // SAFETY: sigaction(2) with no new action only reads the
            // current one into a zeroed struct.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                libc::sigaction(signal, std::ptr::null(), &mut old) == 0
                    && old.sa_sigaction == libc::SIG_IGN
            }
        })
        .collect()
}
