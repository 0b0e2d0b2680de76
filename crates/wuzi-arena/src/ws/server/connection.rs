//! The connection side of the server: the caps, the request head and its
//! checks (upgrade, Origin, token), the WebSocket handshake, the page, and
//! the thread that moves one connection's frames.

use super::*;

/// Why a new connection is refused, if it is: the caps of [`ServerConfig`].
fn refusal(
    open: usize,
    open_from_address: usize,
    loopback: bool,
    config: &ServerConfig,
) -> Option<&'static str> {
    if open >= config.max_connections {
        Some("the server is full")
    } else if !loopback && open_from_address >= config.max_per_address {
        Some("too many connections from your address")
    } else {
        None
    }
}

/// The address a connection counts under: an IPv6 client has a whole /64
/// to pick addresses from, so its /64 counts as one.
fn address_group(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some() => IpAddr::V4(
            v6.to_ipv4_mapped()
                .unwrap_or(std::net::Ipv4Addr::UNSPECIFIED),
        ),
        IpAddr::V6(v6) if !v6.is_loopback() => {
            let [a, b, c, d, ..] = v6.segments();
            IpAddr::V6(Ipv6Addr::new(a, b, c, d, 0, 0, 0, 0))
        }
        other => other,
    }
}

/// Counts a connection thread, in all and for its address, for as long as
/// it lives.
pub(super) struct ConnectionGuard {
    stats: Arc<SharedStats>,
    address: IpAddr,
}

impl ConnectionGuard {
    /// Admits a connection from `address`, or says why not.
    pub(super) fn admit(
        stats: &Arc<SharedStats>,
        address: IpAddr,
        config: &ServerConfig,
    ) -> Result<ConnectionGuard, &'static str> {
        let address = address_group(address);
        let mut by_address = stats.by_address.lock();
        let from_address = by_address.get(&address).copied().unwrap_or(0);
        let open = stats.connections.load(Ordering::SeqCst);
        if let Some(why) = refusal(open, from_address, address.is_loopback(), config) {
            stats.refused.fetch_add(1, Ordering::SeqCst);
            return Err(why);
        }
        by_address.insert(address, from_address + 1);
        stats.connections.fetch_add(1, Ordering::SeqCst);
        Ok(ConnectionGuard {
            stats: Arc::clone(stats),
            address,
        })
    }
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        let mut by_address = self.stats.by_address.lock();
        if let Some(n) = by_address.get_mut(&self.address) {
            *n -= 1;
            if *n == 0 {
                by_address.remove(&self.address);
            }
        }
        self.stats.connections.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Ends a connection the referee drops, whatever its thread is doing.
pub(super) fn cut(socket: &Option<TcpStream>) {
    if let Some(socket) = socket {
        let _ = socket.shutdown(Shutdown::Both);
    }
}

/// Turns away a connection over a cap, without waiting on it.
pub(super) fn refuse(mut stream: TcpStream, why: &str) {
    let _ = stream.set_write_timeout(Some(Duration::from_millis(50)));
    let _ = write!(
        stream,
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{why}\n",
        why.len() + 1
    );
}

/// Whether the request waiting on `stream` asks for a WebSocket upgrade
/// (read without consuming it, for the handshake to read again); waits
/// until its head is complete, at most until `deadline`.
fn is_upgrade(stream: &TcpStream, deadline: Instant) -> io::Result<bool> {
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ErrorKind::TimedOut.into());
        }
        stream.set_read_timeout(Some(left))?;
        let n = stream.peek(&mut buf)?;
        if n == 0 {
            return Err(ErrorKind::UnexpectedEof.into());
        }
        let head = String::from_utf8_lossy(&buf[..n]).to_ascii_lowercase();
        if head.contains("\r\n\r\n") {
            return Ok(head
                .lines()
                .any(|l| l.starts_with("upgrade:") && l.contains("websocket")));
        }
        // The whole head must arrive within the deadline and the buffer:
        // the handshake then reads it at once, never byte by byte.
        if n == buf.len() {
            return Err(ErrorKind::InvalidData.into());
        }
        thread::sleep(Duration::from_millis(5));
    }
}

/// Whether a browser page at `origin` may connect: no Origin (not a
/// browser), an origin allowed by name, or the server's own page reached
/// by address (the origin's host and port are the request's `Host`, and
/// that is an IP address or `localhost`). A page under a DNS name must be
/// allowed by name: otherwise a name the attacker controls, pointed at
/// this server (DNS rebinding), would pass as the server's own page.
fn origin_allowed(origin: Option<&str>, host: Option<&str>, allowed: &[String]) -> bool {
    let Some(origin) = origin else {
        return true;
    };
    if allowed.iter().any(|a| a.eq_ignore_ascii_case(origin)) {
        return true;
    }
    let own = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"));
    match (own, host) {
        (Some(o), Some(h)) if o.eq_ignore_ascii_case(h) => host_is_an_address(h),
        _ => false,
    }
}

/// `HOST[:PORT]` names an IP address (`[v6]` too) or `localhost`.
fn host_is_an_address(host: &str) -> bool {
    if let Some(v6) = host.strip_prefix('[') {
        return v6
            .split(']')
            .next()
            .is_some_and(|a| a.parse::<Ipv6Addr>().is_ok());
    }
    let name = host.rsplit_once(':').map_or(host, |(name, _)| name);
    name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::Ipv4Addr>().is_ok()
}

/// Compares secrets in time that does not depend on where they differ.
fn same_secret(given: &[u8], wanted: &[u8]) -> bool {
    given.len() == wanted.len()
        && given
            .iter()
            .zip(wanted)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// The value of `key` in a URL query (`a=1&token=x`).
fn query_value<'a>(query: Option<&'a str>, key: &str) -> Option<&'a str> {
    query?
        .split('&')
        .find_map(|pair| pair.strip_prefix(key)?.strip_prefix('='))
}

/// The role a WebSocket request asks for, or the HTTP answer that refuses
/// it (a wrong Origin or token).
fn admit_request(request: &Request, rules: &ServerConfig) -> Result<Role, (u16, &'static str)> {
    let header = |name: &str| request.headers().get(name).and_then(|v| v.to_str().ok());
    if !origin_allowed(header("origin"), header("host"), &rules.allowed_origins) {
        return Err((403, "this page's origin may not connect"));
    }
    if let Some(token) = &rules.token {
        let given = query_value(request.uri().query(), "token").unwrap_or("");
        if !same_secret(given.as_bytes(), token.as_bytes()) {
            return Err((401, "a token is required: ?token=..."));
        }
    }
    Ok(if request.uri().path() == "/watch" {
        Role::Viewer
    } else {
        Role::Player
    })
}

/// Serves one connection: the page for a plain request, the game protocol
/// for a WebSocket upgrade. The request must arrive within the handshake
/// deadline, and no write may block longer than the write deadline.
pub(super) fn connection(
    id: ClientId,
    stream: TcpStream,
    events: Sender<Event>,
    page: &'static str,
    rules: &ServerConfig,
) {
    let deadline = Instant::now() + rules.handshake_timeout;
    if stream.set_write_timeout(Some(rules.write_timeout)).is_err() {
        return;
    }
    match is_upgrade(&stream, deadline) {
        Ok(true) => {}
        Ok(false) => return serve_page(stream, page),
        Err(_) => return,
    }
    // Messages of this protocol are a few kilobytes: a larger one is an
    // error that closes the connection, not memory to give away.
    let limits = tungstenite::protocol::WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE));
    let mut role = Role::Player;
    // tungstenite's handshake callback fixes this result type.
    #[allow(clippy::result_large_err)]
    let check = |request: &Request, response: Response| -> Result<Response, ErrorResponse> {
        match admit_request(request, rules) {
            Ok(r) => {
                role = r;
                Ok(response)
            }
            Err((status, why)) => {
                let mut refusal = ErrorResponse::new(Some(why.to_string()));
                *refusal.status_mut() =
                    tungstenite::http::StatusCode::from_u16(status).unwrap_or_default();
                Err(refusal)
            }
        }
    };
    let Ok(mut socket) = tungstenite::accept_hdr_with_config(stream, check, Some(limits)) else {
        return;
    };
    // Short reads, so that this thread also writes what the referee sends.
    let _ = socket
        .get_ref()
        .set_read_timeout(Some(Duration::from_millis(20)));
    let (out, outgoing) = bounded(OUTGOING_QUEUE);
    let handle = socket.get_ref().try_clone().ok();
    if events
        .send(Event::Connected(id, out, handle, role))
        .is_err()
    {
        return;
    }
    let reason = pump(&mut socket, id, &outgoing, &events);
    let _ = socket.close(None);
    let _ = socket.flush();
    if reason.is_err() {
        let _ = events.send(Event::Disconnected(id));
    }
}

/// Moves frames both ways until the connection ends (`Err`) or the referee
/// closes it (`Ok`).
fn pump(
    socket: &mut WebSocket<TcpStream>,
    id: ClientId,
    outgoing: &Receiver<Outgoing>,
    events: &Sender<Event>,
) -> Result<(), ()> {
    let (mut window, mut in_window) = (Instant::now(), 0u32);
    let mut answer_due = false;
    loop {
        // A message was just passed to the referee, whose answer (a move's
        // VALID) comes at once: wait for it here, not for the next read to
        // time out.
        let mut answer = None;
        if std::mem::take(&mut answer_due) {
            match outgoing.recv_timeout(ANSWER_WAIT) {
                Ok(item) => answer = Some(item),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            }
        }
        loop {
            let next = match answer.take() {
                Some(item) => Ok(item),
                None => outgoing.try_recv(),
            };
            let frame = match next {
                Ok(Outgoing::Text(text)) => Message::text(text),
                Ok(Outgoing::Shared(text)) => Message::text(text.to_string()),
                Ok(Outgoing::Ping) => Message::Ping(Vec::new().into()),
                // Closed by the referee, or the referee has stopped.
                Ok(Outgoing::Close) | Err(TryRecvError::Disconnected) => return Ok(()),
                Err(TryRecvError::Empty) => break,
            };
            socket.send(frame).map_err(|_| ())?;
        }
        match socket.read() {
            Ok(Message::Text(text)) => {
                if window.elapsed() >= Duration::from_secs(1) {
                    (window, in_window) = (Instant::now(), 0);
                }
                in_window += 1;
                if in_window > MAX_MESSAGES_PER_SECOND {
                    tracing::info!("connection {id} closed: it floods");
                    return Err(());
                }
                let _ = events.send(Event::Text(id, text.to_string()));
                answer_due = true;
            }
            Ok(Message::Pong(_)) => {
                let _ = events.send(Event::Pong(id));
            }
            Ok(Message::Close(_)) => return Err(()),
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return Err(()),
        }
    }
}

fn serve_page(mut stream: TcpStream, page: &'static str) {
    let mut request = [0u8; 4096];
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let n = stream.read(&mut request).unwrap_or(0);
    let first = String::from_utf8_lossy(&request[..n]);
    // `GET /?token=... HTTP/1.1`: the page reads the query itself.
    let path = first
        .strip_prefix("GET ")
        .and_then(|rest| rest.split_whitespace().next())
        .map(|target| target.split('?').next().unwrap_or(target));
    let (status, body) = if matches!(path, Some("/" | "/index.html")) {
        ("200 OK", page)
    } else {
        ("404 Not Found", "not found\n")
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_refuse_with_their_reason() {
        let config = ServerConfig {
            max_connections: 10,
            max_per_address: 3,
            ..ServerConfig::default()
        };
        assert_eq!(refusal(9, 2, false, &config), None);
        assert_eq!(refusal(10, 0, false, &config), Some("the server is full"));
        assert_eq!(
            refusal(5, 3, false, &config),
            Some("too many connections from your address")
        );
        // This machine's own clients count only toward the total.
        assert_eq!(refusal(5, 3, true, &config), None);
        assert_eq!(refusal(10, 0, true, &config), Some("the server is full"));
    }

    #[test]
    fn origins_and_tokens() {
        let allowed = vec!["http://friend.example".to_string()];
        assert!(origin_allowed(None, Some("h:1"), &allowed));
        assert!(origin_allowed(
            Some("http://10.0.0.2:1"),
            Some("10.0.0.2:1"),
            &allowed
        ));
        assert!(origin_allowed(
            Some("http://localhost:8"),
            Some("localhost:8"),
            &allowed
        ));
        assert!(origin_allowed(
            Some("http://[::1]:8"),
            Some("[::1]:8"),
            &allowed
        ));
        // The server's own page under a DNS name must be allowed by name
        // (DNS rebinding would pass otherwise).
        assert!(!origin_allowed(Some("http://h:1"), Some("h:1"), &allowed));
        assert!(origin_allowed(
            Some("http://friend.example"),
            Some("h:1"),
            &allowed
        ));
        assert!(!origin_allowed(
            Some("http://evil.example"),
            Some("h:1"),
            &allowed
        ));
        assert!(!origin_allowed(Some("http://h:2"), Some("h:1"), &allowed));
        assert!(!origin_allowed(Some("null"), Some("h:1"), &allowed));
        assert_eq!(query_value(Some("a=1&token=x"), "token"), Some("x"));
        assert_eq!(query_value(Some("tokens=x"), "token"), None);
        assert_eq!(query_value(None, "token"), None);
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abd", b"abc") && !same_secret(b"ab", b"abc"));
        let v6 = |s: &str| IpAddr::V6(s.parse().unwrap());
        assert_eq!(
            address_group(v6("2001:db8:1:2:3:4:5:6")),
            v6("2001:db8:1:2::")
        );
        assert_eq!(
            address_group(v6("::ffff:10.1.2.3")),
            "10.1.2.3".parse::<IpAddr>().unwrap()
        );
    }
}
