//! Engine specifications (`cmd=... name=... tc=...`) and their settings.

use std::path::PathBuf;

/// How one engine is run and what it is told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineSpec {
    /// Display name (`name=`, else the program's file name).
    pub name: String,
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Working directory (`dir=`); the runner's own when `None`.
    pub dir: Option<PathBuf>,
    /// Time per move in ms (`INFO timeout_turn`).
    pub turn_ms: u64,
    /// Time for the whole game in ms, 0 = unlimited (`INFO timeout_match`).
    pub match_ms: u64,
    /// Added to the match clock after each move, in ms (`INFO time_increment`).
    pub inc_ms: u64,
    pub max_node: Option<u64>,
    pub max_depth: Option<u64>,
    pub thread_num: Option<u64>,
    /// Bytes (`INFO max_memory`); c-gomoku-cli's default, 350 MiB.
    pub max_memory: u64,
    /// Extra `INFO key value` lines (`option.key=value`).
    pub options: Vec<(String, String)>,
    /// This engine's `--tolerance` (ms), when it has its own.
    pub tolerance_ms: Option<u64>,
    /// This engine's `--init-timeout` (ms), when it has its own.
    pub init_timeout_ms: Option<u64>,
}

/// Default time per move when neither `turn` nor `match` is given.
pub const DEFAULT_TURN_MS: u64 = 5000;
/// Default `INFO max_memory`: 350 MiB, as c-gomoku-cli and Gomocup.
pub const DEFAULT_MEMORY: u64 = 367_001_600;

/// Splits a command line into words: blanks separate, `"..."` and `'...'`
/// quote, a backslash escapes the next character (outside single quotes),
/// except on Windows, where it separates a path's folders and is kept as
/// it is (`cmd=C:\brains\pbrain-x.exe`).
pub fn split_command(s: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some('\''), '\'') | (Some('"'), '"') => quote = None,
            (Some('\''), c) => word.push(c),
            (_, '\\') if !cfg!(windows) => {
                word.push(chars.next().ok_or("a backslash ends the command")?);
                in_word = true;
            }
            (None, '\'') | (None, '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (_, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err(format!("unclosed quote in command {s:?}"));
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// The largest setting sent to a brain: Gomocup brains read `INFO`
/// values as signed 64-bit integers, and one they cannot read would leave
/// them on their defaults while the referee kept the clock asked for.
const MOST: u64 = i64::MAX as u64;

fn parse_u64(key: &str, value: &str) -> Result<u64, String> {
    value
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|v| *v <= MOST)
        .ok_or_else(|| {
            format!("engine setting {key}={value:?}: expected an integer from 0 to {MOST}")
        })
}

/// Seconds (decimal) to milliseconds.
fn seconds_ms(key: &str, value: &str) -> Result<u64, String> {
    let v: f64 = value
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| format!("{key}: {value:?} is not a number of seconds"))?;
    let ms = (v * 1000.0).round();
    // 2^63 is exactly representable: anything below converts exactly enough.
    if ms >= MOST as f64 {
        return Err(format!("{key}: {value:?} seconds is too long"));
    }
    Ok(ms as u64)
}

/// c-gomoku-cli's `tc=MATCH/TURN+INC` (seconds; `tc=MATCH` alone sets the
/// turn time to the match time): `(match, turn, inc)` in ms.
pub fn parse_tc(value: &str) -> Result<(u64, u64, u64), String> {
    let (rest, inc) = match value.split_once('+') {
        Some((r, i)) => (r, seconds_ms("tc increment", i)?),
        None => (value, 0),
    };
    let (game, turn) = match rest.split_once('/') {
        Some((m, t)) => (
            seconds_ms("tc match time", m)?,
            seconds_ms("tc turn time", t)?,
        ),
        None => {
            let m = seconds_ms("tc match time", rest)?;
            (m, m)
        }
    };
    Ok((game, turn, inc))
}

/// Builds an engine from `key=value` tokens (the shared `--each` tokens
/// first, then the engine's own). Keys:
/// `cmd`, `arg`, `name`, `dir`, `tc`, `turn`, `match`, `inc`, `nodes`,
/// `depth`, `threads`, `memory`, `tolerance`, `init`, `option.KEY`. A bare
/// token is the command (the first one) or one more argument.
pub fn parse_engine(each: &[String], own: &[String]) -> Result<EngineSpec, String> {
    let mut command: Vec<String> = Vec::new();
    let mut extra_args = Vec::new();
    let mut name = None;
    let mut dir = None;
    let mut turn = None;
    let mut game = None;
    let mut inc = 0;
    let mut spec = EngineSpec {
        name: String::new(),
        program: PathBuf::new(),
        args: Vec::new(),
        dir: None,
        turn_ms: DEFAULT_TURN_MS,
        match_ms: 0,
        inc_ms: 0,
        max_node: None,
        max_depth: None,
        thread_num: None,
        max_memory: DEFAULT_MEMORY,
        options: Vec::new(),
        tolerance_ms: None,
        init_timeout_ms: None,
    };
    for token in each.iter().chain(own) {
        let Some((key, value)) = token.split_once('=') else {
            if command.is_empty() {
                command = split_command(token)?;
            } else {
                extra_args.push(token.clone());
            }
            continue;
        };
        match key {
            "cmd" => command = split_command(value)?,
            "arg" => extra_args.push(value.to_string()),
            "name" => name = Some(value.to_string()),
            "dir" => dir = Some(PathBuf::from(value)),
            "tc" => {
                let (m, t, i) = parse_tc(value)?;
                game = Some(m);
                turn = Some(t);
                inc = i;
            }
            "turn" => turn = Some(parse_u64(key, value)?),
            "match" => game = Some(parse_u64(key, value)?),
            "inc" => inc = parse_u64(key, value)?,
            "nodes" => spec.max_node = Some(parse_u64(key, value)?),
            "depth" => spec.max_depth = Some(parse_u64(key, value)?),
            "threads" => spec.thread_num = Some(parse_u64(key, value)?),
            "memory" => spec.max_memory = parse_u64(key, value)?,
            "tolerance" => spec.tolerance_ms = Some(parse_u64(key, value)?),
            "init" => spec.init_timeout_ms = Some(parse_u64(key, value)?),
            _ => match key.strip_prefix("option.") {
                Some(k) if !k.is_empty() && !k.contains(char::is_whitespace) => {
                    spec.options.retain(|(old, _)| old != k);
                    spec.options.push((k.to_string(), value.to_string()));
                }
                _ => {
                    return Err(format!(
                        "unknown engine setting {key:?}: expected cmd, arg, name, dir, tc, \
                         turn, match, inc, nodes, depth, threads, memory, tolerance, init \
                         or option.KEY"
                    ))
                }
            },
        }
    }
    let mut words = command.into_iter();
    let program = words
        .next()
        .ok_or("an engine needs a command: cmd=PROGRAM [ARGS]")?;
    spec.args = words.chain(extra_args).collect();
    let program = PathBuf::from(program);
    // A path with a directory part is taken from the runner's directory,
    // whatever `dir=` says; a bare name is looked up in PATH.
    spec.program = if program.components().count() > 1 {
        std::path::absolute(&program).unwrap_or(program)
    } else {
        program
    };
    spec.dir = dir;
    spec.match_ms = game.unwrap_or(0);
    spec.turn_ms = match (turn, game) {
        // c-gomoku-cli's turn time 0 is no turn limit: each move may take
        // what is left of the match clock.
        (Some(0), Some(m)) if m > 0 => m,
        // The referee allows a move its turn time plus the tolerance, and
        // a brain told `timeout_turn 0` plays as fast as it can: a match
        // meant to be limited by nodes or depth would be lost on time.
        (Some(0), _) => {
            return Err(
                "a turn time of 0 (tc=0, turn=0) with no match time: give the \
                 milliseconds a move may take (turn=MS), also for matches limited by \
                 nodes= or depth="
                    .into(),
            )
        }
        (Some(t), _) => t,
        (None, Some(m)) if m > 0 => m,
        _ => DEFAULT_TURN_MS,
    };
    spec.inc_ms = inc;
    spec.name = name.unwrap_or_else(|| {
        spec.program
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "engine".to_string())
    });
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn commands_split_like_a_shell() {
        assert_eq!(
            split_command(r#"./a "b c" 'd\e' f\ g"#).unwrap(),
            s(&["./a", "b c", "d\\e", "f g"])
        );
        assert!(split_command("a \"b").is_err());
    }

    #[test]
    fn engine_settings() {
        let e = parse_engine(
            &s(&["tc=10/1+0.5", "memory=1000"]),
            &s(&[
                "cmd=/bin/brain --mode random",
                "arg=--seed",
                "arg=3",
                "name=R",
                "nodes=100",
                "option.style=2",
            ]),
        )
        .unwrap();
        assert_eq!(e.program, PathBuf::from("/bin/brain"));
        assert_eq!(e.args, s(&["--mode", "random", "--seed", "3"]));
        assert_eq!(e.name, "R");
        assert_eq!((e.match_ms, e.turn_ms, e.inc_ms), (10_000, 1000, 500));
        assert_eq!(e.max_memory, 1000);
        assert_eq!(e.max_node, Some(100));
        assert_eq!(e.options, vec![("style".to_string(), "2".to_string())]);

        let e = parse_engine(&[], &s(&["/x/pbrain-foo", "match=3000"])).unwrap();
        assert_eq!(e.name, "pbrain-foo");
        assert_eq!((e.match_ms, e.turn_ms), (3000, 3000));
        let e = parse_engine(&[], &s(&["brain"])).unwrap();
        assert_eq!((e.match_ms, e.turn_ms), (0, DEFAULT_TURN_MS));
        // A turn time of 0 is c-gomoku-cli's "no turn limit": the match
        // clock caps each move; without a match clock it is refused.
        let e = parse_engine(&s(&["tc=180/0"]), &s(&["brain"])).unwrap();
        assert_eq!((e.match_ms, e.turn_ms), (180_000, 180_000));
        for zero in [&["tc=0"][..], &["turn=0"], &["tc=0/0", "depth=12"]] {
            let err = parse_engine(&s(zero), &s(&["brain"])).unwrap_err();
            assert!(err.contains("turn=MS"), "{zero:?}: {err}");
        }
        assert!(parse_engine(&[], &s(&["name=x"])).is_err());
        assert!(parse_engine(&[], &s(&["cmd=x", "speed=3"])).is_err());
    }

    /// Settings a brain could not read as a signed 64-bit `INFO` value
    /// are refused, not sent (the brain would keep its defaults).
    #[test]
    fn settings_beyond_a_brains_integers_are_refused() {
        let largest = i64::MAX.to_string();
        let e = parse_engine(&[], &s(&["brain", &format!("memory={largest}")])).unwrap();
        assert_eq!(e.max_memory, i64::MAX as u64);
        for (setting, said) in [
            ("memory=9223372036854775808", "memory"),
            ("turn=18446744073709551615", "turn"),
            ("nodes=9223372036854775808", "nodes"),
            ("tc=1e300", "tc match time"),
            ("tc=1/1e17", "tc turn time"),
        ] {
            let err = parse_engine(&[], &s(&["brain", setting])).unwrap_err();
            assert!(err.contains(said), "{setting}: {err}");
        }
    }
}
