//! `pbrain-wuzi`: the Wuzi engine's command line ([`wuzi::commands`]).

use std::process::ExitCode;

// mimalloc in place of glibc's malloc, for the whole process: its feature
// `override` also serves libtorch's C++ allocations, which glibc's malloc
// made a tenth of the evaluator's time (perf: _int_malloc, _int_free,
// malloc_consolidate), even with the thresholds raised in nn::device.
// Declared as Rust's allocator too so that the library is always linked.
// Not on windows-gnu (see Cargo.toml): the system allocator there.
#[cfg(not(all(windows, target_env = "gnu")))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    wuzi::commands::main()
}
