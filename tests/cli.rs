//! The command line, run as a user would.

use std::process::Command;

fn wuzi() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pbrain-wuzi"))
}

#[test]
fn bench_rules_prints_every_figure() {
    let out = wuzi()
        .args(["bench", "rules", "--seconds", "0.05"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("make+unmake with pattern update"), "{text}");
    for label in [
        "renju 15x15",
        "freestyle 20x20",
        "full forbidden-point scans per second",
        "VCF nodes per second",
        "VCT nodes per second",
    ] {
        let line = text
            .lines()
            .find(|l| l.contains(label))
            .unwrap_or_else(|| panic!("{label}:\n{text}"));
        assert!(line.chars().any(|c| c.is_ascii_digit()), "{line}");
    }
}

#[test]
fn unknown_arguments_are_refused_with_a_message() {
    let out = wuzi().args(["bench", "nothing"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing"));
}
