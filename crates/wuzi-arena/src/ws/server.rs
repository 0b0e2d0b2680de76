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

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender, TryRecvError, TrySendError};
use parking_lot::Mutex;
use tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tungstenite::{Message, WebSocket};

use wuzi_game::game::{BoardSize, Color, Rule};

use super::game::{Ending, WsGame};
use serde_json::Value;

use super::message::{
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
    /// Time a new connection has to send its whole request (and so to
    /// complete the WebSocket handshake).
    pub handshake_timeout: Duration,
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
            handshake_timeout: Duration::from_secs(5),
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
struct ConnectionGuard {
    stats: Arc<SharedStats>,
    address: IpAddr,
}

impl ConnectionGuard {
    /// Admits a connection from `address`, or says why not.
    fn admit(
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
    Ping,
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
    Text(ClientId, String),
    Pong(ClientId),
    Disconnected(ClientId),
}

struct Client {
    name: Option<String>,
    protocol: ProtocolVersion,
    /// It takes part in the seat extension (its NAME had a `seat` field).
    seat_aware: bool,
    /// The seat secret it gave with its name (to resume a game).
    seat: Option<String>,
    out: Sender<Outgoing>,
    socket: Option<TcpStream>,
    alive: bool,
}

/// A web board watching.
struct Viewer {
    out: Sender<Outgoing>,
    socket: Option<TcpStream>,
    /// Answered the last ping.
    alive: bool,
}

/// Ends a connection the referee drops, whatever its thread is doing.
fn cut(socket: &Option<TcpStream>) {
    if let Some(socket) = socket {
        let _ = socket.shutdown(Shutdown::Both);
    }
}

struct Running {
    game: WsGame,
    /// Black's and white's client.
    players: [ClientId; 2],
    turn_started: Instant,
    /// What the players said of the game (extension INFO), black's, white's.
    analysis: [Option<PlayerInfo>; 2],
    /// The seats' secrets, given to v2 players in START.
    seats: [Option<String>; 2],
}

/// A game waiting for its players to come back: by name, and for a seat
/// whose player got a secret, with that secret (so that whoever takes a
/// dropped player's name does not take the seat).
struct Checkpoint {
    game: WsGame,
    names: [String; 2],
    seats: [Option<String>; 2],
    /// The players who did not drop: still their seats' holders.
    stayed: [Option<ClientId>; 2],
    since: Instant,
}

/// A new seat secret: 128 bits from the operating system, in hex; `None`
/// if it has none to give (the seat is then resumed by name, as the
/// protocol says).
fn seat_secret() -> Option<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The server's state, owned by the referee loop. Any number of games run
/// at once, each between two clients.
struct Referee {
    config: ServerConfig,
    clients: BTreeMap<ClientId, Client>,
    viewers: BTreeMap<ClientId, Viewer>,
    /// The last game's ending and final position, for the viewers.
    last_result: Option<Value>,
    /// The viewers' picture is out of date.
    changed: bool,
    /// ... and they should see it now (a game ended, a board connected).
    urgent: bool,
    last_broadcast: Instant,
    /// Connections whose queue was full: dropped after the event at hand.
    overflowed: RefCell<Vec<ClientId>>,
    games: Vec<Running>,
    checkpoints: Vec<Checkpoint>,
    last_ping: Instant,
    stats: Arc<SharedStats>,
}

fn color_of_seat(i: usize) -> Color {
    if i == 0 {
        Color::Black
    } else {
        Color::White
    }
}

const NO_TIME: PerPlayer<u64> = PerPlayer { black: 0, white: 0 };

impl Referee {
    fn new(config: ServerConfig, stats: Arc<SharedStats>) -> Referee {
        Referee {
            config,
            clients: BTreeMap::new(),
            viewers: BTreeMap::new(),
            last_result: None,
            changed: false,
            urgent: false,
            last_broadcast: Instant::now(),
            overflowed: RefCell::new(Vec::new()),
            games: Vec::new(),
            checkpoints: Vec::new(),
            last_ping: Instant::now(),
            stats,
        }
    }

    fn send(&self, id: ClientId, message: &ServerMessage) {
        if let Some(client) = self.clients.get(&id) {
            self.queue(id, &client.out, Outgoing::Text(message.to_json()));
        }
    }

    /// Queues `what` for connection `id`, or marks it to be dropped when
    /// its queue is full (it has stopped reading).
    fn queue(&self, id: ClientId, out: &Sender<Outgoing>, what: Outgoing) {
        if let Err(TrySendError::Full(_)) = out.try_send(what) {
            self.overflowed.borrow_mut().push(id);
        }
    }

    /// Drops the connections that stopped reading: a web board simply goes
    /// (it reconnects and gets the state anew); a player's game becomes a
    /// checkpoint as for any disconnection.
    fn drop_overflowed(&mut self) {
        let overflowed = std::mem::take(&mut *self.overflowed.borrow_mut());
        for id in overflowed {
            if let Some(viewer) = self.viewers.remove(&id) {
                cut(&viewer.socket);
                tracing::info!("web board {id} dropped: it does not read");
                self.stats
                    .slow_viewers_dropped
                    .fetch_add(1, Ordering::SeqCst);
            } else {
                self.drop_client(id);
            }
            self.changed = true;
        }
    }

    /// The game `id` plays in, and its seat there.
    fn game_of(&self, id: ClientId) -> Option<(usize, usize)> {
        self.games.iter().enumerate().find_map(|(g, running)| {
            running
                .players
                .iter()
                .position(|&p| p == id)
                .map(|seat| (g, seat))
        })
    }

    fn is_playing(&self, id: ClientId) -> bool {
        self.game_of(id).is_some()
    }

    fn handle(&mut self, event: Event) {
        // Pongs and web boards' messages change nothing the boards show
        // (a game a board starts marks the change itself).
        let viewer_text = matches!(&event, Event::Text(id, _) if self.viewers.contains_key(id));
        self.changed |= !matches!(event, Event::Pong(_)) && !viewer_text;
        match event {
            Event::Connected(id, out, socket, Role::Viewer) => {
                self.viewers.insert(
                    id,
                    Viewer {
                        out,
                        socket,
                        alive: true,
                    },
                );
                self.urgent = true;
            }
            Event::Text(id, text) if self.viewers.contains_key(&id) => self.viewer_command(&text),
            Event::Disconnected(id) if self.viewers.contains_key(&id) => {
                self.viewers.remove(&id);
            }
            Event::Pong(id) if self.viewers.contains_key(&id) => {
                if let Some(v) = self.viewers.get_mut(&id) {
                    v.alive = true;
                }
            }
            Event::Connected(id, out, socket, Role::Player) => {
                self.queue(id, &out, Outgoing::Text(ServerMessage::Name.to_json()));
                self.clients.insert(
                    id,
                    Client {
                        name: None,
                        protocol: ProtocolVersion::V1,
                        seat_aware: false,
                        seat: None,
                        out,
                        socket,
                        alive: true,
                    },
                );
            }
            Event::Pong(id) => {
                if let Some(c) = self.clients.get_mut(&id) {
                    c.alive = true;
                }
            }
            Event::Disconnected(id) => self.drop_client(id),
            Event::Text(id, text) => match ClientMessage::parse(&text) {
                Ok(ClientMessage::Name {
                    name,
                    protocol,
                    seat,
                }) => {
                    tracing::info!("client {id} is {name:?} ({protocol:?})");
                    if let Some(c) = self.clients.get_mut(&id) {
                        c.name = Some(name);
                        c.protocol = protocol;
                        c.seat_aware = seat.is_some();
                        c.seat = seat.filter(|s| !s.is_empty());
                    }
                }
                Ok(ClientMessage::Move(mv)) => self.play(id, mv),
                Ok(ClientMessage::Info(info)) => {
                    if let Some((g, seat)) = self.game_of(id) {
                        self.games[g].analysis[seat] = Some(info);
                    }
                }
                Err(why) => {
                    let remaining = self.game_of(id).map_or(NO_TIME, |(g, _)| {
                        let r = &self.games[g];
                        r.game.remaining_time(r.turn_started.elapsed())
                    });
                    let message = ServerMessage::Invalid {
                        message: why,
                        remaining_time: remaining,
                    };
                    self.send(id, &message);
                }
            },
        }
    }

    fn play(&mut self, id: ClientId, mv: super::message::WsMove) {
        let Some((g, seat)) = self.game_of(id) else {
            let message = ServerMessage::Invalid {
                message: "you are not playing a game".into(),
                remaining_time: NO_TIME,
            };
            return self.send(id, &message);
        };
        let color = color_of_seat(seat);
        let running = &mut self.games[g];
        let thinking = running.turn_started.elapsed();
        match running.game.play(color, mv, thinking) {
            Err(why) => {
                let message = ServerMessage::Invalid {
                    message: why,
                    remaining_time: running.game.remaining_time(thinking),
                };
                self.send(id, &message);
            }
            Ok(ending) => {
                let timed_out = matches!(ending, Some(e) if e.reason == EndReason::Timeout);
                let remaining = running.game.remaining_time(Duration::ZERO);
                running.turn_started = Instant::now();
                let other = running.players[1 - seat];
                if !timed_out {
                    self.send(
                        id,
                        &ServerMessage::Valid {
                            remaining_time: remaining,
                        },
                    );
                    self.send(
                        other,
                        &ServerMessage::Move {
                            mv,
                            remaining_time: remaining,
                        },
                    );
                }
                if let Some(ending) = ending {
                    self.end(g, ending);
                }
            }
        }
    }

    /// Ends game `g`: END to both players.
    fn end(&mut self, g: usize, ending: Ending) {
        self.urgent = true;
        let running = self.games.remove(g);
        self.last_result = Some(serde_json::json!({
            "reason": ending.reason,
            "winner": ending.winner.map(WsColor::from),
            "timedOut": ending.timed_out.map(WsColor::from),
            "final": self.game_view(&running),
        }));
        tracing::info!(
            "game of clients {} and {} over after {} moves: {:?}, winner {:?}",
            running.players[0],
            running.players[1],
            running.game.moves(),
            ending.reason,
            ending.winner
        );
        let message = running.game.end_message(ending);
        for id in running.players {
            self.send(id, &message);
        }
    }

    fn drop_client(&mut self, id: ClientId) {
        let Some(client) = self.clients.remove(&id) else {
            return;
        };
        tracing::info!("client {id} disconnected");
        let _ = client.out.try_send(Outgoing::Close);
        cut(&client.socket);
        let Some(g) = self.games.iter().position(|r| r.players.contains(&id)) else {
            return;
        };
        // A player is gone: the game becomes a checkpoint, with the time
        // the side to move had spent, and the other player gets END error.
        let mut running = self.games.remove(g);
        running.game.pause(running.turn_started.elapsed());
        let name = |cid: ClientId| {
            if cid == id {
                client.name.clone()
            } else {
                self.clients.get(&cid).and_then(|c| c.name.clone())
            }
        };
        let names = [name(running.players[0]), name(running.players[1])];
        let ending = Ending {
            reason: EndReason::Error,
            winner: None,
            timed_out: None,
        };
        let message = running.game.end_message(ending);
        for cid in running.players {
            self.send(cid, &message);
        }
        if let [Some(black), Some(white)] = names {
            // One interrupted game per pair of names: the latest.
            self.checkpoints
                .retain(|c| c.names != [black.clone(), white.clone()]);
            if self.checkpoints.len() >= MAX_CHECKPOINTS {
                self.checkpoints.remove(0);
            }
            let stayed = running
                .players
                .map(|p| (p != id && self.clients.contains_key(&p)).then_some(p));
            self.checkpoints.push(Checkpoint {
                game: running.game,
                names: [black, white],
                seats: running.seats,
                stayed,
                since: Instant::now(),
            });
        }
    }

    /// Starts a game between two named clients (the web board's button).
    fn start_game(&mut self, black: ClientId, white: ClientId) -> Result<(), String> {
        let named = |id: ClientId| self.clients.get(&id).is_some_and(|c| c.name.is_some());
        if black == white || !named(black) || !named(white) {
            return Err("pick two different named clients".into());
        }
        if self.is_playing(black) || self.is_playing(white) {
            return Err("one of them is playing".into());
        }
        let reserved = |id: ClientId| {
            let name = self.clients.get(&id).and_then(|c| c.name.as_deref());
            self.checkpoints
                .iter()
                .any(|c| c.names.iter().any(|n| Some(n.as_str()) == name))
        };
        if reserved(black) || reserved(white) {
            return Err("an interrupted game waits for one of them".into());
        }
        let game = WsGame::new(self.config.size, self.config.rule, self.config.time);
        self.launch(game, [black, white], [None, None]);
        Ok(())
    }

    fn viewer_command(&mut self, text: &str) {
        let Ok(value) = serde_json::from_str::<Value>(text) else {
            return;
        };
        if value.get("type").and_then(Value::as_str) == Some("START_GAME") {
            let id = |key: &str| value.get(key).and_then(Value::as_u64);
            if let (Some(black), Some(white)) = (id("black"), id("white")) {
                if let Err(why) = self.start_game(black, white) {
                    tracing::info!("web board: cannot start: {why}");
                }
            }
        }
    }

    /// Resumes every interrupted game whose two players (by name) wait,
    /// then, with automatic pairing, pairs the other waiting clients in the
    /// order they came.
    fn pair(&mut self) {
        let waiting: Vec<(ClientId, String, Option<String>)> = self
            .clients
            .iter()
            .filter(|(&id, _)| !self.is_playing(id))
            .filter_map(|(&id, c)| c.name.clone().map(|n| (id, n, c.seat.clone())))
            .collect();
        let mut taken: Vec<ClientId> = Vec::new();
        let mut resumed = Vec::new();
        for (i, checkpoint) in self.checkpoints.iter().enumerate() {
            // The client that takes `seat`, other than `except` (two
            // players may share a name).
            let find = |seat: usize, except: Option<ClientId>| {
                let (name, secret) = (&checkpoint.names[seat], &checkpoint.seats[seat]);
                waiting
                    .iter()
                    .find(|(id, n, given)| {
                        !taken.contains(id)
                            && Some(*id) != except
                            && (checkpoint.stayed[seat] == Some(*id)
                                || n == name
                                    && secret.as_ref().map_or(true, |s| given.as_ref() == Some(s)))
                    })
                    .map(|(id, _, _)| *id)
            };
            let black = find(0, None);
            let white = black.and_then(|b| find(1, Some(b)));
            if let (Some(black), Some(white)) = (black, white) {
                if black != white {
                    taken.extend([black, white]);
                    resumed.push((i, [black, white]));
                }
            }
        }
        for (i, players) in resumed.into_iter().rev() {
            let checkpoint = self.checkpoints.remove(i);
            self.launch(checkpoint.game, players, checkpoint.seats);
        }
        if !self.config.auto_pair {
            return;
        }
        // Names that an interrupted game waits for are kept for it.
        let reserved = |name: &str| {
            self.checkpoints
                .iter()
                .any(|c| c.names.iter().any(|n| n == name))
        };
        let free: Vec<ClientId> = waiting
            .iter()
            .filter(|(id, name, _)| !taken.contains(id) && !reserved(name))
            .map(|(id, _, _)| *id)
            .collect();
        for pair in free.chunks_exact(2) {
            let game = WsGame::new(self.config.size, self.config.rule, self.config.time);
            self.launch(game, [pair[0], pair[1]], [None, None]);
        }
    }

    /// Sends START to both players and runs the game. A seat keeps its
    /// secret (a resumed game); a player that takes part in the seat
    /// extension, in a seat without one, gets a new one.
    fn launch(&mut self, game: WsGame, players: [ClientId; 2], mut seats: [Option<String>; 2]) {
        self.changed = true;
        tracing::info!(
            "game starts ({} moves logged): black client {}, white client {}",
            game.moves(),
            players[0],
            players[1]
        );
        for (i, &id) in players.iter().enumerate() {
            let v2 = self
                .clients
                .get(&id)
                .is_some_and(|c| c.protocol == ProtocolVersion::V2);
            let seat_aware = self.clients.get(&id).is_some_and(|c| c.seat_aware);
            if seat_aware && seats[i].is_none() {
                seats[i] = seat_secret();
            }
            let message = ServerMessage::Start {
                configuration: game.configuration(v2),
                color: color_of_seat(i).into(),
                seat: seats[i].clone().filter(|_| seat_aware),
            };
            self.send(id, &message);
        }
        self.games.push(Running {
            game,
            players,
            turn_started: Instant::now(),
            analysis: [None, None],
            seats,
        });
    }

    /// A game as the web board shows it.
    fn game_view(&self, running: &Running) -> Value {
        let config = running.game.configuration(true);
        let current = config
            .final_states
            .as_ref()
            .and_then(|states| states.last().cloned())
            .unwrap_or(config.initial_state.clone());
        let last = config.move_log.last().and_then(|entry| match entry.mv {
            super::message::WsMove::Place { point } => Some(point),
            _ => None,
        });
        let name = |id: ClientId| self.clients.get(&id).and_then(|c| c.name.clone());
        serde_json::json!({
            "board": current.board,
            "turn": current.turn,
            "remainingTime": running.game.remaining_time(running.turn_started.elapsed()),
            "players": {"B": name(running.players[0]), "W": name(running.players[1])},
            "last": last,
            "moves": config.move_log.len(),
            "analysis": {"B": running.analysis[0], "W": running.analysis[1]},
        })
    }

    /// What the web board shows: clients, the first running game (and how
    /// many run), the last result.
    fn state(&self) -> Value {
        let playing = |id: ClientId| {
            self.game_of(id)
                .map(|(_, seat)| if seat == 0 { "B" } else { "W" })
        };
        let clients: Vec<Value> = self
            .clients
            .iter()
            .map(|(&id, c)| serde_json::json!({"id": id, "name": c.name, "playing": playing(id)}))
            .collect();
        serde_json::json!({
            "type": "STATE",
            "rule": self.config.rule.to_string(),
            "size": [self.config.size.width(), self.config.size.height()],
            "time": self.config.time.as_millis() as u64,
            "clients": clients,
            "game": self.games.first().map(|r| self.game_view(r)),
            "games": self.games.len(),
            "result": self.last_result,
            "paused": !self.checkpoints.is_empty(),
        })
    }

    /// Time, heartbeat and forgetting, checked between events.
    fn tick(&mut self) {
        let window = self.config.resume_window;
        let before = self.checkpoints.len();
        self.checkpoints.retain(|c| c.since.elapsed() < window);
        if self.checkpoints.len() != before {
            tracing::info!(
                "{} interrupted game(s) forgotten after {window:?}",
                before - self.checkpoints.len()
            );
            self.changed = true;
        }
        while let Some(g) = self
            .games
            .iter()
            .position(|r| r.game.time_left(r.turn_started.elapsed()).is_zero())
        {
            let ending = self.games[g].game.time_out();
            self.end(g, ending);
            self.changed = true;
        }
        if self.last_ping.elapsed() >= self.config.ping_interval {
            self.last_ping = Instant::now();
            let silent: Vec<ClientId> = self
                .clients
                .iter()
                .filter(|(_, c)| !c.alive)
                .map(|(&id, _)| id)
                .collect();
            for id in silent {
                self.changed = true;
                self.drop_client(id);
            }
            self.viewers.retain(|_, v| {
                if !v.alive {
                    cut(&v.socket);
                }
                v.alive
            });
            for client in self.clients.values_mut() {
                client.alive = false;
            }
            for viewer in self.viewers.values_mut() {
                viewer.alive = false;
            }
            for (&id, client) in &self.clients {
                self.queue(id, &client.out, Outgoing::Ping);
            }
            for (&id, viewer) in &self.viewers {
                self.queue(id, &viewer.out, Outgoing::Ping);
            }
        }
        self.drop_overflowed();
        // The viewers see a game's end before the next game (automatic
        // pairing starts it in the same tick).
        self.broadcast();
        self.pair();
        self.broadcast();
        self.count();
    }

    fn count(&self) {
        let stats = &self.stats;
        stats.clients.store(self.clients.len(), Ordering::SeqCst);
        stats.viewers.store(self.viewers.len(), Ordering::SeqCst);
        stats.games.store(self.games.len(), Ordering::SeqCst);
        stats
            .checkpoints
            .store(self.checkpoints.len(), Ordering::SeqCst);
    }

    /// Sends the state to the viewers if it changed: at once after a
    /// game's end or a new board, otherwise at most every
    /// [`BROADCAST_INTERVAL`], so that a burst of events costs one state.
    fn broadcast(&mut self) {
        if self.viewers.is_empty() {
            self.changed = false;
            self.urgent = false;
            return;
        }
        let due = self.urgent || self.last_broadcast.elapsed() >= BROADCAST_INTERVAL;
        if !self.changed || !due {
            return;
        }
        let state: Arc<str> = self.state().to_string().into();
        for (&id, viewer) in &self.viewers {
            self.queue(id, &viewer.out, Outgoing::Shared(Arc::clone(&state)));
        }
        self.changed = false;
        self.urgent = false;
        self.last_broadcast = Instant::now();
        self.drop_overflowed();
    }
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
                    let spawned = thread::Builder::new()
                        .name(format!("ws-client-{id}"))
                        .spawn(move || {
                            let _guard = guard;
                            connection(id, stream, events, page, &rules)
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

fn referee_loop(
    config: ServerConfig,
    inbox: Receiver<Event>,
    stop: &AtomicBool,
    stats: Arc<SharedStats>,
) {
    let mut referee = Referee::new(config, stats);
    while !stop.load(Ordering::SeqCst) {
        match inbox.recv_timeout(Duration::from_millis(10)) {
            Ok(event) => {
                referee.handle(event);
                referee.drop_overflowed();
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        referee.tick();
    }
    for client in referee.clients.values() {
        let _ = client.out.try_send(Outgoing::Close);
    }
}

/// Turns away a connection over a cap, without waiting on it.
fn refuse(mut stream: TcpStream, why: &str) {
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
fn connection(
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
    loop {
        loop {
            let frame = match outgoing.try_recv() {
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

    /// A web board that reads nothing is dropped once its queue is full;
    /// the game beside it goes on and its players lose nothing.
    #[test]
    fn a_slow_web_board_is_dropped_and_the_game_goes_on() {
        let stats = Arc::new(SharedStats::default());
        let mut referee = Referee::new(
            ServerConfig {
                auto_pair: true,
                ..ServerConfig::default()
            },
            Arc::clone(&stats),
        );
        let (viewer_out, viewer_never_read) = bounded(OUTGOING_QUEUE);
        referee.handle(Event::Connected(100, viewer_out, None, Role::Viewer));
        let mut players = Vec::new();
        for (id, name) in [(1, "a"), (2, "b")] {
            let (out, inbox) = bounded(OUTGOING_QUEUE);
            referee.handle(Event::Connected(id, out, None, Role::Player));
            referee.handle(Event::Text(
                id,
                format!(r#"{{"type":"NAME","name":"{name}"}}"#),
            ));
            players.push(inbox);
        }
        referee.tick();
        assert_eq!(referee.games.len(), 1);
        let drain = |inbox: &Receiver<Outgoing>| inbox.try_iter().count();
        // The states it was sent already (on connecting, at the pairing).
        let room = OUTGOING_QUEUE - viewer_never_read.len();
        for round in 0..=room {
            // A state change the board must see, at once.
            referee.changed = true;
            referee.urgent = true;
            referee.broadcast();
            for inbox in &players {
                drain(inbox);
            }
            if round < room {
                assert!(referee.viewers.contains_key(&100), "dropped at {round}");
            }
        }
        assert!(!referee.viewers.contains_key(&100));
        assert_eq!(stats.slow_viewers_dropped.load(Ordering::SeqCst), 1);
        assert_eq!(referee.games.len(), 1);
        assert_eq!(referee.clients.len(), 2);
    }
}
