//! The connection side of the server: the caps, the request head and its
//! checks (upgrade, Origin, token), the WebSocket handshake, the page, and
//! the thread that moves one connection's frames.

use super::*;
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::protocol::CloseFrame;

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

/// The connections an address may still open: refilled at
/// `connects_per_second` up to a burst.
#[derive(Clone, Copy)]
pub(super) struct ConnectBudget {
    left: f64,
    at: Instant,
}

/// Addresses whose budgets are kept before the full ones are forgotten.
const BUDGETS_KEPT: usize = 4096;

/// Takes one connection from `address`'s budget at `now`, if it has one.
fn take_connect(
    budgets: &mut HashMap<IpAddr, ConnectBudget>,
    address: IpAddr,
    now: Instant,
    per_second: f64,
    burst: f64,
) -> bool {
    let refilled = |b: &ConnectBudget| {
        (b.left + now.saturating_duration_since(b.at).as_secs_f64() * per_second).min(burst)
    };
    if budgets.len() >= BUDGETS_KEPT && budgets.len().is_power_of_two() {
        // A full budget is what a forgotten address starts with. Pruned
        // at each doubling, so that a map of busy addresses is not walked
        // on every connection.
        budgets.retain(|_, b| refilled(b) < burst);
    }
    let budget = budgets.entry(address).or_insert(ConnectBudget {
        left: burst,
        at: now,
    });
    let left = refilled(budget);
    if left < 1.0 {
        return false;
    }
    *budget = ConnectBudget {
        left: left - 1.0,
        at: now,
    };
    true
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
        if !address.is_loopback() {
            let burst = config.max_per_address as f64;
            let mut budgets = stats.connect_budgets.lock();
            if !take_connect(
                &mut budgets,
                address,
                Instant::now(),
                config.connects_per_second,
                burst,
            ) {
                stats.refused.fetch_add(1, Ordering::SeqCst);
                return Err("too many new connections from your address");
            }
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
    answer_plain(&mut stream, "503 Service Unavailable", why);
}

/// An HTTP answer of `status` whose body is the line `why`, closing the
/// connection.
fn answer_plain(stream: &mut TcpStream, status: &str, why: &str) {
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{why}\n",
        why.len() + 1
    );
}

/// Whether the request waiting on `stream` asks for a WebSocket upgrade
/// (read without consuming it, for the handshake to read again); waits
/// until its head is complete, at most until `deadline`.
fn is_upgrade(stream: &TcpStream, deadline: Instant) -> io::Result<bool> {
    // A browser's head carries its cookies for the host: 8 KiB, as common
    // HTTP servers allow.
    let mut buf = [0u8; 8192];
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
    stop: &AtomicBool,
) {
    let deadline = Instant::now() + rules.handshake_timeout;
    if stream.set_write_timeout(Some(rules.write_timeout)).is_err() {
        return;
    }
    // A message is written whole, at once: Nagle's algorithm would hold one
    // that follows another back until the client acknowledged the first,
    // which a client delays by up to 40 ms.
    let _ = stream.set_nodelay(true);
    match is_upgrade(&stream, deadline) {
        Ok(true) => {}
        Ok(false) => return serve_page(stream, page),
        Err(e) if e.kind() == ErrorKind::InvalidData => {
            // Told, so that a browser shows why rather than a blank page.
            // What was sent is read first (a bounded amount, for at most a
            // second): closing a socket with unread data resets it, and
            // the answer could be lost.
            let mut stream = stream;
            let until = Instant::now() + Duration::from_secs(1);
            read_request(&mut stream, 64 * 1024, until, Duration::from_millis(100));
            answer_plain(
                &mut stream,
                "431 Request Header Fields Too Large",
                "request head over 8 KiB",
            );
            return;
        }
        Err(_) => return,
    }
    // Messages of this protocol are a few kilobytes: a larger one is an
    // error that closes the connection, not memory to give away.
    // The read buffer grows to a message as needed; tungstenite's default
    // (128 KiB) would be zero-filled on every read, for every connection.
    let limits = tungstenite::protocol::WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE))
        .read_buffer_size(READ_BUFFER);
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
    let Ok(stream) = SharedStream::new(stream) else {
        return;
    };
    let Ok(mut socket) = tungstenite::accept_hdr_with_config(stream, check, Some(limits)) else {
        return;
    };
    // The reader blocks on the socket and the writer on the referee's
    // queue, so that neither waits for the other: a frame goes out the
    // moment the referee queues it. Each ends the other by shutting the
    // socket down; each also wakes every `WAKE` to look whether the other
    // or the server has stopped, where a shutdown may not wake a blocked
    // read (Winsock does not promise it) or nobody is left to shut down.
    if socket.get_ref().read.set_read_timeout(Some(WAKE)).is_err() {
        return;
    }
    let writer = WebSocket::from_raw_socket(
        socket.get_ref().clone(),
        tungstenite::protocol::Role::Server,
        // It never reads.
        Some(limits.read_buffer_size(0)),
    );
    let (out, outgoing) = bounded(OUTGOING_QUEUE);
    let handle = socket.get_ref().read.try_clone().ok();
    if events
        .send(Event::Connected(id, out, handle, role))
        .is_err()
    {
        return;
    }
    let (reading, writing) = (AtomicBool::new(true), AtomicBool::new(true));
    let closed_by_referee = AtomicBool::new(false);
    thread::scope(|scope| {
        let spawned = thread::Builder::new()
            .name(format!("ws-writer-{id}"))
            .spawn_scoped(scope, || {
                let partner = Partner {
                    running: &reading,
                    server_stop: stop,
                };
                write_frames(writer, &outgoing, partner, &closed_by_referee);
                writing.store(false, Ordering::SeqCst);
            });
        let partner = Partner {
            running: &writing,
            server_stop: stop,
        };
        let why = match spawned {
            Ok(_) => read_frames(&mut socket, id, &events, partner),
            Err(e) => {
                tracing::warn!("cannot start a connection's writer thread: {e}");
                None
            }
        };
        let _ = socket.close(why);
        let _ = socket.flush();
        // Ends a writer blocked on a client that reads a trickle, too.
        let _ = socket.get_ref().read.shutdown(Shutdown::Both);
        reading.store(false, Ordering::SeqCst);
        // The referee knows of the end it asked for.
        if !closed_by_referee.load(Ordering::SeqCst) {
            let _ = events.send(Event::Disconnected(id));
        }
    });
}

/// A connection's read buffer to start with: a few messages.
const READ_BUFFER: usize = 8 * 1024;

/// How often a blocked reader or writer looks whether its partner or the
/// server has stopped.
const WAKE: Duration = Duration::from_secs(1);

/// What a connection's reader or writer watches while it waits.
#[derive(Clone, Copy)]
struct Partner<'a> {
    /// The other thread has not ended.
    running: &'a AtomicBool,
    /// The server is stopping.
    server_stop: &'a AtomicBool,
}

impl Partner<'_> {
    fn ended(&self) -> bool {
        !self.running.load(Ordering::SeqCst) || self.server_stop.load(Ordering::SeqCst)
    }
}

/// A connection's socket as both of its threads use it: each reads from
/// its own handle (only the reader does), and every write goes out whole
/// under one lock, so that the writer's frames and the reader's replies
/// (pongs, the closing handshake) never interleave.
#[derive(Clone)]
struct SharedStream {
    read: Arc<TcpStream>,
    write: Arc<Mutex<TcpStream>>,
    /// The bytes read in the current second's window, counted by the
    /// reader's copy: the message cap alone misses frames that never end
    /// a message (tungstenite reads empty fragments of one message
    /// without returning), which would keep a thread busy at line speed.
    window: Instant,
    in_window: usize,
    /// The reader stopped because the client sent more than
    /// `MAX_BYTES_PER_SECOND`.
    flooded: bool,
}

/// Bytes one connection may send in a second: a few of the largest
/// messages allowed, far above what a player or a web board sends.
const MAX_BYTES_PER_SECOND: usize = 4 * MAX_MESSAGE;

impl SharedStream {
    fn new(stream: TcpStream) -> io::Result<SharedStream> {
        Ok(SharedStream {
            write: Arc::new(Mutex::new(stream.try_clone()?)),
            read: Arc::new(stream),
            window: Instant::now(),
            in_window: 0,
            flooded: false,
        })
    }
}

impl Read for SharedStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (&*self.read).read(buf)?;
        if self.window.elapsed() >= Duration::from_secs(1) {
            (self.window, self.in_window) = (Instant::now(), 0);
        }
        self.in_window += n;
        if self.in_window > MAX_BYTES_PER_SECOND {
            self.flooded = true;
            return Err(io::Error::other("the client sends too fast"));
        }
        Ok(n)
    }
}

impl Write for SharedStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut stream = self.write.lock();
        if let Err(e) = stream.write_all(buf) {
            // Part of a frame may have gone out, and tungstenite would send
            // all of it again (after the other thread's frames, perhaps):
            // the stream is broken, so end the connection.
            let _ = stream.shutdown(Shutdown::Both);
            return Err(io::Error::new(ErrorKind::BrokenPipe, e));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write.lock().flush()
    }
}

/// Sends what the referee queues until it closes the connection, the
/// referee or the server stops, a write fails or the reader is done; then
/// shuts the socket down, which ends the reader.
fn write_frames(
    mut socket: WebSocket<SharedStream>,
    outgoing: &Receiver<Outgoing>,
    reader: Partner<'_>,
    closed_by_referee: &AtomicBool,
) {
    loop {
        let frame = match outgoing.recv_timeout(WAKE) {
            Ok(Outgoing::Text(text)) => Message::text(text),
            Ok(Outgoing::Shared(text)) => Message::text(text.to_string()),
            Ok(Outgoing::Ping(token)) => Message::Ping(
                token
                    .map_or_else(Vec::new, |t| t.to_be_bytes().to_vec())
                    .into(),
            ),
            Err(RecvTimeoutError::Timeout) if !reader.ended() => continue,
            // The reader has ended, or the server is stopping (its referee
            // may never drop this queue: an event of this connection can
            // be left in its inbox).
            Err(RecvTimeoutError::Timeout) => break,
            // Closed by the referee, or the referee has stopped.
            Ok(Outgoing::Close) | Err(RecvTimeoutError::Disconnected) => {
                closed_by_referee.store(true, Ordering::SeqCst);
                let _ = socket.close(None);
                let _ = socket.flush();
                break;
            }
        };
        if socket.send(frame).is_err() {
            break;
        }
    }
    let _ = socket.get_ref().read.shutdown(Shutdown::Both);
}

/// Counts a message in the current second's window: whether it is within
/// the cap.
fn within_cap(window: &mut Instant, in_window: &mut u32) -> bool {
    if window.elapsed() >= Duration::from_secs(1) {
        (*window, *in_window) = (Instant::now(), 0);
    }
    *in_window += 1;
    *in_window <= MAX_MESSAGES_PER_SECOND
}

/// The close frame for a client that broke the rules: its code and why.
fn closing(code: CloseCode, why: &str) -> Option<CloseFrame> {
    Some(CloseFrame {
        code,
        reason: why.into(),
    })
}

/// Passes the client's messages to the referee until the connection ends:
/// the client closed it, broke the protocol or flooded, or the socket was
/// shut down (by the writer or the referee). For a client that broke the
/// rules, the close frame that says which.
fn read_frames(
    socket: &mut WebSocket<SharedStream>,
    id: ClientId,
    events: &Sender<Event>,
    writer: Partner<'_>,
) -> Option<CloseFrame> {
    let (mut window, mut in_window) = (Instant::now(), 0u32);
    let flood = || {
        let why = format!("more than {MAX_MESSAGES_PER_SECOND} messages in a second");
        closing(CloseCode::Policy, &why)
    };
    loop {
        match socket.read() {
            Ok(Message::Text(text)) => {
                if !within_cap(&mut window, &mut in_window) {
                    tracing::info!("connection {id} closed: it floods");
                    return flood();
                }
                if events
                    .send(Event::Text(id, text.to_string(), Instant::now()))
                    .is_err()
                {
                    // The referee has stopped.
                    return None;
                }
            }
            Ok(Message::Pong(payload)) if within_cap(&mut window, &mut in_window) => {
                let token = <[u8; 8]>::try_from(&payload[..])
                    .ok()
                    .map(u64::from_be_bytes);
                if events.send(Event::Pong(id, token)).is_err() {
                    return None;
                }
            }
            // Unasked pongs count toward the cap too.
            Ok(Message::Pong(_)) => {
                tracing::info!("connection {id} closed: it floods");
                return flood();
            }
            Ok(Message::Close(_)) => return None,
            Ok(Message::Binary(_)) => {
                tracing::info!(
                    "connection {id} closed: a binary message (the protocol is JSON text)"
                );
                return closing(
                    CloseCode::Unsupported,
                    "binary message: the protocol is JSON text",
                );
            }
            // Pings (answered by tungstenite with a pong each) count toward
            // the cap: a client pinging in a loop is a flood too.
            Ok(_) if within_cap(&mut window, &mut in_window) => {}
            Ok(_) => {
                tracing::info!("connection {id} closed: it floods");
                return flood();
            }
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) =>
            {
                if writer.ended() {
                    return None;
                }
            }
            Err(tungstenite::Error::Capacity(e)) => {
                tracing::info!("connection {id} closed: {e}");
                let why = format!("a message over {} KiB", MAX_MESSAGE >> 10);
                return closing(CloseCode::Size, &why);
            }
            Err(tungstenite::Error::Io(_)) if socket.get_ref().flooded => {
                tracing::info!("connection {id} closed: it floods");
                let why = format!("more than {} KiB in a second", MAX_BYTES_PER_SECOND >> 10);
                return closing(CloseCode::Policy, &why);
            }
            // The socket was shut down (by the writer), or the client broke
            // the protocol or went away.
            Err(_) => return None,
        }
    }
}

/// Reads what the client sent, up to `most` bytes: until the end of the
/// request head, `until`, or `quiet` without a byte. The head read whole
/// before the answer: a socket closed with unread data is reset, and the
/// answer written before could be lost.
fn read_request(stream: &mut TcpStream, most: usize, until: Instant, quiet: Duration) -> Vec<u8> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while seen.len() < most {
        let left = until.saturating_duration_since(Instant::now()).min(quiet);
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            break;
        }
        match stream.read(&mut buf) {
            Ok(n) if n > 0 => {
                seen.extend_from_slice(&buf[..n]);
                if seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
            }
            _ => break,
        }
    }
    seen
}

fn serve_page(mut stream: TcpStream, page: &'static str) {
    // The head is complete and at most 8 KiB (`is_upgrade` saw it).
    let until = Instant::now() + Duration::from_secs(2);
    let request = read_request(&mut stream, 8192, until, Duration::from_secs(2));
    let first = String::from_utf8_lossy(&request);
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
        // Not to be framed by another site (its clicks could start games on
        // this server), and no token in a Referer.
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nX-Frame-Options: DENY\r\nContent-Security-Policy: frame-ancestors 'none'\r\nReferrer-Policy: no-referrer\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
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
    fn an_address_opens_a_burst_then_connects_per_second() {
        let mut budgets = HashMap::new();
        let (flooder, other): (IpAddr, IpAddr) = (
            "203.0.113.7".parse().unwrap(),
            "198.51.100.1".parse().unwrap(),
        );
        let start = Instant::now();
        for _ in 0..16 {
            assert!(take_connect(&mut budgets, flooder, start, 2.0, 16.0));
        }
        assert!(!take_connect(&mut budgets, flooder, start, 2.0, 16.0));
        assert!(take_connect(&mut budgets, other, start, 2.0, 16.0));
        // Two more a second.
        let later = start + Duration::from_millis(1000);
        assert!(take_connect(&mut budgets, flooder, later, 2.0, 16.0));
        assert!(take_connect(&mut budgets, flooder, later, 2.0, 16.0));
        assert!(!take_connect(&mut budgets, flooder, later, 2.0, 16.0));
        // A long quiet refills the burst, no more.
        let much_later = later + Duration::from_secs(3600);
        for _ in 0..16 {
            assert!(take_connect(&mut budgets, flooder, much_later, 2.0, 16.0));
        }
        assert!(!take_connect(&mut budgets, flooder, much_later, 2.0, 16.0));
    }

    /// However many addresses connect, the budgets kept stay bounded: the
    /// full ones are forgotten.
    #[test]
    fn connect_budgets_stay_bounded() {
        let mut budgets = HashMap::new();
        let start = Instant::now();
        for i in 0..3 * BUDGETS_KEPT as u32 {
            let address = IpAddr::from(std::net::Ipv4Addr::from(0x0a00_0000 + i));
            // A second apart: each earlier budget has refilled by then.
            let now = start + Duration::from_secs(u64::from(i));
            assert!(take_connect(&mut budgets, address, now, 2.0, 1.0));
        }
        assert!(budgets.len() <= BUDGETS_KEPT, "{}", budgets.len());
    }

    #[test]
    fn a_server_needs_a_positive_connect_rate() {
        for rate in [f64::NAN, 0.0, -1.0, f64::INFINITY] {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let config = ServerConfig {
                connects_per_second: rate,
                ..ServerConfig::default()
            };
            let refused = Server::spawn(listener, config, "").err();
            assert!(
                refused.is_some_and(|e| e.to_string().contains("connects_per_second")),
                "{rate}"
            );
        }
    }

    /// The cap in the server's admission: loopback is exempt, a remote
    /// address is refused past its burst with its reason, counted.
    #[test]
    fn admission_holds_remote_addresses_to_the_connect_rate() {
        let stats = Arc::new(SharedStats::default());
        let config = ServerConfig {
            max_per_address: 4,
            connects_per_second: 0.001,
            ..ServerConfig::default()
        };
        let remote: IpAddr = "203.0.113.9".parse().unwrap();
        for _ in 0..4 {
            // Each closes before the next: only the rate can refuse.
            assert!(ConnectionGuard::admit(&stats, remote, &config).is_ok());
        }
        assert_eq!(
            ConnectionGuard::admit(&stats, remote, &config).err(),
            Some("too many new connections from your address")
        );
        assert_eq!(stats.snapshot().refused, 1);
        let local: IpAddr = "127.0.0.1".parse().unwrap();
        for _ in 0..50 {
            assert!(ConnectionGuard::admit(&stats, local, &config).is_ok());
        }
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
