//! Training data without libtorch: game records (Gomocup TSV, Piskvork PSQ,
//! self-play TSV with search targets) read, checked against the rules and
//! sampled into positions ([`records`]), and encoded positions written out
//! for trainers outside the engine ([`export`], `wuzi-encode`).

pub mod export;
pub mod held_out;
pub mod records;
pub mod tournament;

/// How a binary of this crate ends: its error, if any, on stderr after
/// its `name`, and a failing exit status.
pub fn exit(name: &str, result: Result<(), String>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
