//! `pbrain-wuzi serve`: the WebSocket game server with its web board.

use std::io;
use std::time::Duration;

use clap::Args;

/// The most connections `--max-connections` may allow: each holds two
/// threads.
const MAX_CONNECTIONS: usize = 10_000;

#[derive(Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on (0.0.0.0: every interface).
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Rule (freestyle, standard, renju, caro).
    #[arg(long, default_value = "freestyle")]
    rule: crate::game::Rule,
    /// Board side.
    #[arg(long, default_value_t = 15)]
    board: u32,
    /// Each player's time for a game, in seconds.
    #[arg(long, default_value_t = 300.0, value_parser = crate::cli::parse_seconds)]
    time: f64,
    /// Heartbeat: a ping every this many milliseconds; a client that has
    /// not answered the previous ping is disconnected.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(10..))]
    ping_interval_ms: u64,
    /// Start a game as soon as two named clients wait (without it, the web
    /// board's Start button starts games).
    #[arg(long)]
    pair: bool,
    /// How long an interrupted game waits for both players to come back,
    /// in seconds.
    #[arg(long, default_value_t = 600)]
    resume_window_s: u64,
    /// Connections open at once; more are refused (503).
    #[arg(long, default_value_t = 512, value_parser = crate::cli::count_at_most(MAX_CONNECTIONS))]
    max_connections: usize,
    /// Connections open at once from one remote address (this machine's
    /// own clients count only toward --max-connections).
    #[arg(long, default_value_t = 16, value_parser = crate::cli::count_at_most(MAX_CONNECTIONS))]
    max_per_address: usize,
    /// New connections a second from one remote address, after a first
    /// burst of --max-per-address (this machine's own clients are not
    /// held to it).
    #[arg(long, default_value_t = 2.0, value_parser = parse_rate)]
    connects_per_second: f64,
    /// An origin that browsers may connect from besides the server's own
    /// page, as browsers send it (`http://example.org:8080`); repeatable.
    #[arg(long = "allow-origin", value_parser = parse_origin)]
    allow_origins: Vec<String>,
    /// A shared secret that players and web boards must give in the URL
    /// (`ws://HOST:PORT/?token=SECRET`, the page `http://HOST:PORT/?token=SECRET`).
    #[arg(long)]
    token: Option<String>,
}

/// An origin as browsers send it, `scheme://host[:port]`: compared as it
/// is with the Origin header, a value with a path, a slash at the end or no
/// scheme would never match, and pages would be refused with no hint why.
fn parse_origin(value: &str) -> Result<String, String> {
    let wrong = || {
        format!(
            "{value:?} is no origin: write it as the browser sends it, scheme://host[:port], \
             with no path (http://example.org:8080)"
        )
    };
    let (scheme, rest) = value.split_once("://").ok_or_else(wrong)?;
    let host = rest.rsplit_once(':').map_or(rest, |(host, port)| {
        if !port.is_empty() && port.chars().all(|c| c.is_ascii_digit()) {
            host
        } else {
            rest
        }
    });
    let scheme_ok = !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    let host_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._[]:".contains(c));
    if scheme_ok && host_ok {
        Ok(value.to_string())
    } else {
        Err(wrong())
    }
}

/// `pbrain-wuzi serve`: runs until the process is stopped.
pub(crate) fn run(args: &ServeArgs) -> io::Result<()> {
    use crate::ws::{Server, ServerConfig};
    let size =
        crate::game::BoardSize::square(args.board).map_err(|e| io::Error::other(e.to_string()))?;
    // The parser (cli::parse_seconds) refused nan, inf and non-positive
    // times; a game server also takes no clock of 1e7 seconds or more.
    if args.time >= 1e7 {
        return Err(io::Error::other(
            "--time must be less than 10000000 seconds",
        ));
    }
    let listener = std::net::TcpListener::bind((args.host.as_str(), args.port)).map_err(|e| {
        io::Error::other(format!("cannot listen on {}:{}: {e}", args.host, args.port))
    })?;
    // The token travels in URLs as it is (it is not percent-decoded).
    if let Some(token) = &args.token {
        if token.is_empty()
            || !token
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._~".contains(c))
        {
            return Err(io::Error::other(
                "--token: use letters, digits and - . _ ~ only (it goes into URLs as it is)",
            ));
        }
    }
    let config = ServerConfig {
        size,
        rule: args.rule,
        time: Duration::from_secs_f64(args.time),
        ping_interval: Duration::from_millis(args.ping_interval_ms),
        auto_pair: args.pair,
        resume_window: Duration::from_secs(args.resume_window_s),
        max_connections: args.max_connections,
        max_per_address: args.max_per_address,
        connects_per_second: args.connects_per_second,
        allowed_origins: args.allow_origins.clone(),
        token: args.token.clone(),
        ..ServerConfig::default()
    };
    // The referee's events (clients, games, results) on stderr.
    let _ = tracing_subscriber::fmt()
        .with_writer(io::stderr)
        .with_target(false)
        .try_init();
    let server = Server::spawn(listener, config, crate::ws::PAGE)?;
    eprintln!(
        "serving {} {size} games on ws://{}/ (the page: http://{}/)",
        args.rule, server.address, server.address
    );
    loop {
        std::thread::park();
    }
}

/// `--connects-per-second`: a positive, finite rate.
fn parse_rate(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate > 0.0 => Ok(rate),
        _ => Err(format!("expected a positive number, got {s:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_origin;

    #[test]
    fn origins_are_written_as_browsers_send_them() {
        for good in [
            "http://example.org",
            "https://example.org:8443",
            "http://192.168.1.5:8080",
            "http://[::1]:8080",
        ] {
            assert_eq!(parse_origin(good).as_deref(), Ok(good));
        }
        for bad in [
            "example.org",
            "http://example.org/",
            "http://example.org:8080/board",
            "*",
            "http://",
            "://example.org",
        ] {
            let why = parse_origin(bad).unwrap_err();
            assert!(why.contains("scheme://host[:port]"), "{bad}: {why}");
        }
    }
}
