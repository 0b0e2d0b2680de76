//! The game server: clients connect to `ws://HOST:PORT/`, name themselves,
//! and are paired; the board referees; clocks run per player; after every
//! move the game is its own checkpoint, so that a game interrupted by a
//! disconnection resumes with a `START` carrying the move log when both
//! players are back. A heartbeat (a WebSocket ping every interval) drops
//! clients that stopped answering.
//!
//! One thread accepts connections, one per connection moves frames, and one
//! (the referee loop) owns all state and decides. Threads rather than an
//! async runtime: the connection caps bound them, and every blocking step
//! has a deadline (the request and handshake, every write), so a client
//! that stops talking or reading costs one thread for a bounded time.
//!
//! Against misbehaving clients: a cap on connections in all and per remote
//! address (refused with 503), bounded queues to every connection (a web
//! board that cannot keep up is dropped, never a game), state broadcasts
//! coalesced, pings to web boards too, an Origin check (browsers may
//! connect only from the server's own page, or from origins allowed by
//! name), and optionally a shared token required of everyone.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::io::{self, ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender, TrySendError};
use parking_lot::Mutex;
use tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tungstenite::{Message, WebSocket};

use wuzi_game::game::{BoardSize, Color, Rule};

use crate::ws::game::{Ending, WsGame};
use serde_json::Value;

mod connection;
mod referee;

use connection::{connection, refuse, ConnectBudget, ConnectionGuard};
use referee::Referee;

use crate::ws::message::{
    ClientMessage, EndReason, PerPlayer, PlayerInfo, ProtocolVersion, ServerMessage, WsColor,
};

/// How the server plays its games.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub size: BoardSize,
    pub rule: Rule,
    /// Each player's time for a game.
    pub time: Duration,
    /// The heartbeat: a ping every interval; a client that has not answered
    /// the previous one by then is disconnected.
    pub ping_interval: Duration,
    /// Start a game as soon as two named clients wait (otherwise the web
    /// board's button starts one). An interrupted game resumes either way.
    pub auto_pair: bool,
    /// How long an interrupted game waits for its players to come back
    /// before it is forgotten (a server that runs for days must not keep
    /// every abandoned game).
    pub resume_window: Duration,
    /// Connections open at once (players, web boards, page requests);
    /// more are refused with 503.
    pub max_connections: usize,
    /// Connections open at once from one remote address. Loopback clients
    /// (this machine's own programs) count only toward `max_connections`.
    pub max_per_address: usize,
    /// New connections a second from one remote address, after a first
    /// burst of `max_per_address`: a client closed for flooding cannot
    /// come straight back, again and again. Loopback clients are not held
    /// to it.
    pub connects_per_second: f64,
    /// Time a new connection has to send its whole request (and so to
    /// complete the WebSocket handshake).
    pub handshake_timeout: Duration,
    /// Time a connected player has to name itself. Pings are answered by
    /// the WebSocket library itself, so a client that never names itself
    /// would otherwise hold its connection (a slot under the caps) for good.
    pub name_timeout: Duration,
    /// Time one write may block before the client is taken as gone.
    pub write_timeout: Duration,
    /// Origins that browsers may connect from (as they send them:
    /// `http://example.org:8080`), besides the server's own page. Clients
    /// that send no Origin (programs, not browsers) are not concerned.
    pub allowed_origins: Vec<String>,
    /// A shared secret that players and web boards must give in the URL
    /// (`ws://host:port/?token=SECRET`, the page `http://host:port/?token=SECRET`).
    pub token: Option<String>,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            size: BoardSize::FIFTEEN,
            rule: Rule::Freestyle,
            time: Duration::from_secs(300),
            ping_interval: Duration::from_secs(10),
            auto_pair: false,
            resume_window: Duration::from_secs(600),
            max_connections: 512,
            max_per_address: 16,
            connects_per_second: 2.0,
            handshake_timeout: Duration::from_secs(5),
            name_timeout: Duration::from_secs(10),
            write_timeout: Duration::from_secs(10),
            allowed_origins: Vec::new(),
            token: None,
        }
    }
}

/// At most this many interrupted games wait at once; beyond it the oldest
/// is forgotten first.
const MAX_CHECKPOINTS: usize = 1000;

/// What the server holds, counted by the referee loop after every event
/// and by the connection threads as they start and end: a long-running
/// server's memory is these, and all return to zero when the clients go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerStats {
    /// Connected game clients.
    pub clients: usize,
    /// Connected web boards.
    pub viewers: usize,
    /// Games being played.
    pub games: usize,
    /// Interrupted games waiting for their players.
    pub checkpoints: usize,
    /// Connection threads alive (game clients, viewers and page requests).
    pub connections: usize,
    /// Connections refused so far (over a cap).
    pub refused: usize,
    /// Web boards dropped so far because they did not read what was sent.
    pub slow_viewers_dropped: usize,
}

#[derive(Default)]
struct SharedStats {
    clients: AtomicUsize,
    viewers: AtomicUsize,
    games: AtomicUsize,
    checkpoints: AtomicUsize,
    connections: AtomicUsize,
    refused: AtomicUsize,
    slow_viewers_dropped: AtomicUsize,
    /// Open connections per remote address.
    by_address: Mutex<HashMap<IpAddr, usize>>,
    /// What each remote address may still open now (`connects_per_second`).
    connect_budgets: Mutex<HashMap<IpAddr, ConnectBudget>>,
}

impl SharedStats {
    fn snapshot(&self) -> ServerStats {
        ServerStats {
            clients: self.clients.load(Ordering::SeqCst),
            viewers: self.viewers.load(Ordering::SeqCst),
            games: self.games.load(Ordering::SeqCst),
            checkpoints: self.checkpoints.load(Ordering::SeqCst),
            connections: self.connections.load(Ordering::SeqCst),
            refused: self.refused.load(Ordering::SeqCst),
            slow_viewers_dropped: self.slow_viewers_dropped.load(Ordering::SeqCst),
        }
    }
}

type ClientId = u64;

/// The largest message a client may send (a 32x32 board's state is about
/// 5 KB).
const MAX_MESSAGE: usize = 64 << 10;

/// Messages waiting for one connection at most: a player gets a few per
/// move, a web board one state per broadcast. A connection whose queue is
/// full is not reading (its writes are blocked): it is dropped.
const OUTGOING_QUEUE: usize = 64;

/// Events waiting for the referee at most; connection threads then wait
/// (and stop reading their clients) until it catches up.
const EVENT_QUEUE: usize = 4096;

/// Web boards get the state at most this often (and at once when a game
/// ends or a board connects).
const BROADCAST_INTERVAL: Duration = Duration::from_millis(100);

/// Messages one connection may send in a second: a player sends a move and
/// an INFO or two, a web board a click. More is a flood that would delay
/// everyone's moves behind it in the referee's queue: the connection is
/// closed.
const MAX_MESSAGES_PER_SECOND: u32 = 100;

/// What a connection thread is told to do.
enum Outgoing {
    Text(String),
    /// The same text for many connections (the web boards' state).
    Shared(Arc<str>),
    /// A ping carrying a token (none: the heartbeat's), answered in the
    /// client's pong.
    Ping(Option<u64>),
    Close,
}

/// Who is on the other end of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// A game client (`ws://HOST:PORT/`).
    Player,
    /// A web board watching (`ws://HOST:PORT/watch`, an extension): it gets
    /// the server's state after every change and may start games.
    Viewer,
}

/// What the connection threads report to the referee loop.
enum Event {
    /// A new connection: its queue, and its socket, which the referee shuts
    /// down when it drops the connection (so that a thread stuck writing
    /// to a client that reads a byte at a time ends at once).
    Connected(ClientId, Sender<Outgoing>, Option<TcpStream>, Role),
    /// A message, and when it was read: a player's thinking ends when its
    /// move arrives, not when the referee gets to it.
    Text(ClientId, String, Instant),
    /// A pong, with the token of the ping it answers if it carried one.
    Pong(ClientId, Option<u64>),
    Disconnected(ClientId),
}

/// A running server.
pub struct Server {
    pub address: SocketAddr,
    stop: Arc<AtomicBool>,
    stats: Arc<SharedStats>,
}

impl Server {
    /// Serves on `listener` in background threads.
    pub fn spawn(
        listener: TcpListener,
        config: ServerConfig,
        page: &'static str,
    ) -> io::Result<Server> {
        if !(config.connects_per_second.is_finite() && config.connects_per_second > 0.0) {
            return Err(io::Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "connects_per_second must be a positive number, not {}",
                    config.connects_per_second
                ),
            ));
        }
        let address = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(SharedStats::default());
        let (events, inbox) = bounded(EVENT_QUEUE);
        let rules = Arc::new(config.clone());
        let referee_stop = Arc::clone(&stop);
        let referee_stats = Arc::clone(&stats);
        thread::Builder::new()
            .name("ws-referee".into())
            .spawn(move || referee_loop(config, inbox, &referee_stop, referee_stats))?;
        let accept_stats = Arc::clone(&stats);
        let accept_stop = Arc::clone(&stop);
        thread::Builder::new()
            .name("ws-accept".into())
            .spawn(move || {
                let mut next_id: ClientId = 0;
                for stream in listener.incoming() {
                    if accept_stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let stream = match stream {
                        Ok(stream) => stream,
                        Err(e) => {
                            // Out of descriptors, for instance: retrying at
                            // once would spin; connections end meanwhile.
                            tracing::warn!("cannot accept a connection: {e}");
                            thread::sleep(Duration::from_millis(100));
                            continue;
                        }
                    };
                    let address = match stream.peer_addr() {
                        Ok(a) => a.ip(),
                        Err(_) => continue,
                    };
                    let guard = match ConnectionGuard::admit(&accept_stats, address, &rules) {
                        Ok(guard) => guard,
                        Err(why) => {
                            refuse(stream, why);
                            continue;
                        }
                    };
                    next_id += 1;
                    let (id, events, rules) = (next_id, events.clone(), Arc::clone(&rules));
                    let stop = Arc::clone(&accept_stop);
                    let spawned = thread::Builder::new()
                        .name(format!("ws-client-{id}"))
                        .spawn(move || {
                            let _guard = guard;
                            connection(id, stream, events, page, &rules, &stop)
                        });
                    if let Err(e) = spawned {
                        tracing::warn!("cannot start a connection thread: {e}");
                        thread::sleep(Duration::from_millis(100));
                    }
                }
            })?;
        Ok(Server {
            address,
            stop,
            stats,
        })
    }

    /// What the server holds now (see [`ServerStats`]).
    pub fn stats(&self) -> ServerStats {
        self.stats.snapshot()
    }

    /// Stops accepting and refereeing (connections close as they notice).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the acceptor with a connection of our own.
        let _ = TcpStream::connect(self.address);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// How often the referee's clocks and pairing run while events keep
/// coming without a pause.
const TICK_UNDER_LOAD: Duration = Duration::from_millis(100);

/// How far behind the present a backlog may hold the players' clocks.
const BACKLOG_GRACE: Duration = Duration::from_secs(2);

fn referee_loop(
    config: ServerConfig,
    inbox: Receiver<Event>,
    stop: &AtomicBool,
    stats: Arc<SharedStats>,
) {
    let mut referee = Referee::new(config, stats);
    let mut last_tick = Instant::now();
    let mut last_arrival = None;
    while !stop.load(Ordering::SeqCst) {
        match inbox.recv_timeout(Duration::from_millis(10)) {
            Ok(event) => {
                if let Event::Text(_, _, arrived) = &event {
                    last_arrival = Some(*arrived);
                }
                referee.handle(event);
                referee.drop_overflowed();
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        // Clocks, pairing and heartbeats once the events waiting are
        // handled: a move still queued must not lose on time, and pairing
        // after every event of a backlog would only grow it. Under a flood
        // that never empties the queue, still every TICK_UNDER_LOAD.
        if inbox.is_empty() {
            referee.tick();
            last_tick = Instant::now();
        } else if last_tick.elapsed() >= TICK_UNDER_LOAD {
            // The clocks at the last message's arrival: one still queued
            // arrived later and may be a move in time (other clients'
            // floods must not decide a game). At most BACKLOG_GRACE behind,
            // so that a flood cannot stop every clock.
            let now = Instant::now();
            let floor = now.checked_sub(BACKLOG_GRACE).unwrap_or(now);
            referee.tick_at(last_arrival.map_or(floor, |a: Instant| a.max(floor)));
            last_tick = now;
        }
    }
    referee.close_all();
}
