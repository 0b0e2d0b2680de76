//! Helpers shared by the integration tests: the board and record helpers of
//! the core crate's tests, and a pbrain-wuzi process driver.
#![allow(dead_code)]

pub mod brain;

#[path = "../../crates/wuzi-game/tests/common/mod.rs"]
mod boards;

// Not every test binary uses the board helpers.
#[allow(unused_imports)]
pub use boards::*;

/// A child process, killed and reaped when dropped.
pub struct Killed(pub std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The brain under test: this build's pbrain-wuzi, or the command in
/// `WUZI_TEST_BRAIN` (words split at spaces, e.g. `wine
/// dist/stage/wuzi-windows-x64/pbrain-wuzi.exe`: the Windows build's
/// conformance run in scripts/test-windows.sh).
pub fn brain_command() -> std::process::Command {
    match test_brain_words() {
        Some((program, args)) => {
            let mut c = std::process::Command::new(program);
            c.args(args);
            c
        }
        None => std::process::Command::new(env!("CARGO_BIN_EXE_pbrain-wuzi")),
    }
}

/// `WUZI_TEST_BRAIN`'s program and arguments, when it names one.
fn test_brain_words() -> Option<(String, Vec<String>)> {
    let command = std::env::var("WUZI_TEST_BRAIN").ok()?;
    let mut words = command.split_whitespace().map(str::to_string);
    Some((words.next()?, words.collect()))
}

/// Whether the brain under test is the Windows exe run by wine
/// (scripts/test-windows.sh sets `WUZI_TEST_BRAIN="wine ..."`).
pub fn brain_runs_under_wine() -> bool {
    test_brain_words().is_some_and(|(program, _)| {
        std::path::Path::new(&program)
            .file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with("wine"))
    })
}

/// A network file of this checkout's `networks/`, by name: configuration
/// files written by tests name it by its full path.
pub fn checkout_network(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("networks")
        .join(name)
}

/// Writes `text` as `wuzi.toml` in `dir` (a test's temporary folder) and
/// returns its path, for `--config`.
pub fn config_file(dir: &std::path::Path, text: &str) -> std::path::PathBuf {
    let path = dir.join("wuzi.toml");
    std::fs::write(&path, text).expect("write the test's configuration");
    path
}

/// pbrain-wuzi with `args`, its output discarded, killed when dropped.
pub fn pbrain_wuzi<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Killed {
    Killed(
        brain_command()
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start pbrain-wuzi"),
    )
}

/// A free port on the loopback (bound, then released for a server), below
/// Linux's ephemeral range (32768 and up), so that the client sockets of
/// tests running beside this one cannot take it before the server binds it.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    // Test binaries run at once: each starts at its own place.
    let start = std::process::id() % 1_000 * 12;
    loop {
        let port = (20_000 + (start + NEXT.fetch_add(1, Ordering::SeqCst)) % 12_000) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// The brain's whole output for `input` given on stdin with `args`, the
/// input then closed (end of input): it must exit within 10 s.
pub fn output_at_end_of_input(args: &[&str], input: &[u8]) -> String {
    use std::io::Write;
    let mut child = brain_command()
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start pbrain-wuzi");
    {
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(input).expect("write");
    } // Closed here: end of input.
    let started = std::time::Instant::now();
    let out = child.wait_with_output().expect("exits");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A safetensors file's bytes with the first value of the f32 tensor
/// `name` replaced by `value` (a broken network file for the loaders).
pub fn with_first_value(file: &[u8], name: &str, value: f32) -> Vec<u8> {
    with_first_values(file, name, &[value])
}

/// A safetensors file's bytes with the first values of the f32 tensor
/// `name` replaced by `values`.
pub fn with_first_values(file: &[u8], name: &str, values: &[f32]) -> Vec<u8> {
    let header_len = u64::from_le_bytes(file[..8].try_into().expect("8 bytes")) as usize;
    let header: serde_json::Value =
        serde_json::from_slice(&file[8..8 + header_len]).expect("a safetensors header");
    let start = header[name]["data_offsets"][0]
        .as_u64()
        .unwrap_or_else(|| panic!("no tensor {name}")) as usize;
    let mut bytes = file.to_vec();
    for (k, value) in values.iter().enumerate() {
        let at = 8 + header_len + start + 4 * k;
        bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
    }
    bytes
}
