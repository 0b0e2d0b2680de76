//! The game server: clients connect to `ws://HOST:PORT/`, name themselves,
//! and are paired; the board referees; clocks run per player; after every
//! move the game is its own checkpoint, so that a game interrupted by a
//! disconnection resumes with a `START` carrying the move log when both
//! players are back. A heartbeat (a WebSocket ping every interval) drops
//! clients that stopped answering.
//!
//! One thread accepts connections, one per connection moves frames, and one
//! (the referee loop) owns all state and decides.

use std::collections::BTreeMap;
use std::io::{self, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver, RecvTimeoutError, Sender, TryRecvError};
use tungstenite::{Message, WebSocket};

use crate::game::{BoardSize, Color, Rule};

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
}

#[derive(Default)]
struct SharedStats {
    clients: AtomicUsize,
    viewers: AtomicUsize,
    games: AtomicUsize,
    checkpoints: AtomicUsize,
    connections: AtomicUsize,
}

impl SharedStats {
    fn snapshot(&self) -> ServerStats {
        ServerStats {
            clients: self.clients.load(Ordering::SeqCst),
            viewers: self.viewers.load(Ordering::SeqCst),
            games: self.games.load(Ordering::SeqCst),
            checkpoints: self.checkpoints.load(Ordering::SeqCst),
            connections: self.connections.load(Ordering::SeqCst),
        }
    }
}

/// Counts a connection thread for as long as it lives.
struct ConnectionGuard(Arc<SharedStats>);

impl ConnectionGuard {
    fn new(stats: &Arc<SharedStats>) -> ConnectionGuard {
        stats.connections.fetch_add(1, Ordering::SeqCst);
        ConnectionGuard(Arc::clone(stats))
    }
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::SeqCst);
    }
}

type ClientId = u64;

/// The largest message a client may send (a 32x32 board's state is about
/// 5 KB).
const MAX_MESSAGE: usize = 64 << 10;

/// What a connection thread is told to do.
enum Outgoing {
    Text(String),
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
    Connected(ClientId, Sender<Outgoing>, Role),
    Text(ClientId, String),
    Pong(ClientId),
    Disconnected(ClientId),
}

struct Client {
    name: Option<String>,
    protocol: ProtocolVersion,
    out: Sender<Outgoing>,
    alive: bool,
}

struct Running {
    game: WsGame,
    /// Black's and white's client.
    players: [ClientId; 2],
    turn_started: Instant,
    /// What the players said of the game (extension INFO), black's, white's.
    analysis: [Option<PlayerInfo>; 2],
}

/// A game waiting for its players (by name) to come back.
struct Checkpoint {
    game: WsGame,
    names: [String; 2],
    since: Instant,
}

/// The server's state, owned by the referee loop. Any number of games run
/// at once, each between two clients.
struct Referee {
    config: ServerConfig,
    clients: BTreeMap<ClientId, Client>,
    viewers: BTreeMap<ClientId, Sender<Outgoing>>,
    /// The last game's ending and final position, for the viewers.
    last_result: Option<Value>,
    /// The viewers' picture is out of date.
    changed: bool,
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
    fn send(&self, id: ClientId, message: &ServerMessage) {
        if let Some(client) = self.clients.get(&id) {
            let _ = client.out.send(Outgoing::Text(message.to_json()));
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
        self.changed = true;
        match event {
            Event::Connected(id, out, Role::Viewer) => {
                self.viewers.insert(id, out);
            }
            Event::Text(id, text) if self.viewers.contains_key(&id) => self.viewer_command(&text),
            Event::Disconnected(id) if self.viewers.contains_key(&id) => {
                self.viewers.remove(&id);
            }
            Event::Pong(id) if self.viewers.contains_key(&id) => {}
            Event::Connected(id, out, Role::Player) => {
                let _ = out.send(Outgoing::Text(ServerMessage::Name.to_json()));
                self.clients.insert(
                    id,
                    Client {
                        name: None,
                        protocol: ProtocolVersion::V1,
                        out,
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
                Ok(ClientMessage::Name { name, protocol }) => {
                    tracing::info!("client {id} is {name:?} ({protocol:?})");
                    if let Some(c) = self.clients.get_mut(&id) {
                        c.name = Some(name);
                        c.protocol = protocol;
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
        let _ = client.out.send(Outgoing::Close);
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
            self.checkpoints.push(Checkpoint {
                game: running.game,
                names: [black, white],
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
        let game = WsGame::new(self.config.size, self.config.rule, self.config.time);
        self.launch(game, [black, white]);
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
        let waiting: Vec<(ClientId, String)> = self
            .clients
            .iter()
            .filter(|(&id, _)| !self.is_playing(id))
            .filter_map(|(&id, c)| c.name.clone().map(|n| (id, n)))
            .collect();
        let mut taken: Vec<ClientId> = Vec::new();
        let mut resumed = Vec::new();
        for (i, checkpoint) in self.checkpoints.iter().enumerate() {
            let find = |name: &str| {
                waiting
                    .iter()
                    .find(|(id, n)| n == name && !taken.contains(id))
                    .map(|(id, _)| *id)
            };
            if let (Some(black), Some(white)) =
                (find(&checkpoint.names[0]), find(&checkpoint.names[1]))
            {
                if black != white {
                    taken.extend([black, white]);
                    resumed.push((i, [black, white]));
                }
            }
        }
        for (i, players) in resumed.into_iter().rev() {
            let checkpoint = self.checkpoints.remove(i);
            self.launch(checkpoint.game, players);
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
            .filter(|(id, name)| !taken.contains(id) && !reserved(name))
            .map(|(id, _)| *id)
            .collect();
        for pair in free.chunks_exact(2) {
            let game = WsGame::new(self.config.size, self.config.rule, self.config.time);
            self.launch(game, [pair[0], pair[1]]);
        }
    }

    /// Sends START to both players and runs the game.
    fn launch(&mut self, game: WsGame, players: [ClientId; 2]) {
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
            let message = ServerMessage::Start {
                configuration: game.configuration(v2),
                color: color_of_seat(i).into(),
            };
            self.send(id, &message);
        }
        self.games.push(Running {
            game,
            players,
            turn_started: Instant::now(),
            analysis: [None, None],
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
            for client in self.clients.values_mut() {
                client.alive = false;
                let _ = client.out.send(Outgoing::Ping);
            }
        }
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

    /// Sends the state to the viewers if it changed.
    fn broadcast(&mut self) {
        if self.changed && !self.viewers.is_empty() {
            let state = self.state().to_string();
            for out in self.viewers.values() {
                let _ = out.send(Outgoing::Text(state.clone()));
            }
        }
        self.changed = false;
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
        let (events, inbox) = unbounded();
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
                    let Ok(stream) = stream else { continue };
                    next_id += 1;
                    let (id, events) = (next_id, events.clone());
                    let guard = ConnectionGuard::new(&accept_stats);
                    let _ = thread::Builder::new()
                        .name(format!("ws-client-{id}"))
                        .spawn(move || {
                            let _guard = guard;
                            connection(id, stream, events, page)
                        });
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
    let mut referee = Referee {
        config,
        clients: BTreeMap::new(),
        viewers: BTreeMap::new(),
        last_result: None,
        changed: false,
        games: Vec::new(),
        checkpoints: Vec::new(),
        last_ping: Instant::now(),
        stats,
    };
    while !stop.load(Ordering::SeqCst) {
        match inbox.recv_timeout(Duration::from_millis(10)) {
            Ok(event) => referee.handle(event),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        referee.tick();
    }
    for client in referee.clients.values() {
        let _ = client.out.send(Outgoing::Close);
    }
}

/// The path of the WebSocket upgrade the request waiting on `stream` asks
/// for, `None` for a plain request (read without consuming it, for the
/// handshake to read again).
fn upgrade_path(stream: &TcpStream) -> io::Result<Option<String>> {
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let n = stream.peek(&mut buf)?;
        let head = String::from_utf8_lossy(&buf[..n]).to_ascii_lowercase();
        if head.contains("\r\n\r\n") || n == buf.len() {
            let upgrade = head
                .lines()
                .any(|l| l.starts_with("upgrade:") && l.contains("websocket"));
            let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
            return Ok(upgrade.then_some(path));
        }
        if n == 0 || Instant::now() > deadline {
            return Ok(None);
        }
        thread::sleep(Duration::from_millis(5));
    }
}

/// Serves one connection: the page for a plain request, the game protocol
/// for a WebSocket upgrade.
fn connection(id: ClientId, stream: TcpStream, events: Sender<Event>, page: &'static str) {
    let role = match upgrade_path(&stream) {
        Ok(Some(path)) if path == "/watch" => Role::Viewer,
        Ok(Some(_)) => Role::Player,
        Ok(None) => return serve_page(stream, page),
        Err(_) => return,
    };
    // Messages of this protocol are a few kilobytes: a larger one is an
    // error that closes the connection, not memory to give away.
    let limits = tungstenite::protocol::WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE));
    let Ok(mut socket) = tungstenite::accept_with_config(stream, Some(limits)) else {
        return;
    };
    // Short reads, so that this thread also writes what the referee sends.
    let _ = socket
        .get_ref()
        .set_read_timeout(Some(Duration::from_millis(20)));
    let (out, outgoing) = unbounded();
    if events.send(Event::Connected(id, out, role)).is_err() {
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
    loop {
        loop {
            let frame = match outgoing.try_recv() {
                Ok(Outgoing::Text(text)) => Message::text(text),
                Ok(Outgoing::Ping) => Message::Ping(Vec::new().into()),
                // Closed by the referee, or the referee has stopped.
                Ok(Outgoing::Close) | Err(TryRecvError::Disconnected) => return Ok(()),
                Err(TryRecvError::Empty) => break,
            };
            socket.send(frame).map_err(|_| ())?;
        }
        match socket.read() {
            Ok(Message::Text(text)) => {
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
    let found = first.starts_with("GET / ") || first.starts_with("GET /index.html ");
    let (status, body) = if found {
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
