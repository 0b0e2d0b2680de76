//! The engine as a client of the WebSocket game protocol
//! (`pbrain-wuzi connect ws://HOST:PORT --name NAME`): the specification's
//! client state machine, the engine choosing each move within its remaining
//! time. It answers pings while it thinks (the search runs in the
//! background and the socket is read between polls), reconnects after a
//! dropped connection, and resumes from the `START` the server sends.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

use crate::config::Config;
use crate::engine::{Engine, SearchKind};
use crate::game::{
    Board, BoardSize, BoardSizeError, CellSet, Color, MoveError, Point, Rule, RuleError,
};
use crate::nn::provider::NetworkProvider;
use crate::rng::Rng;
use crate::search::TimeControl;
use crate::ws::message::{GameConfiguration, PlayerInfo, WsColor};
use crate::ws::{ClientMessage, EndReason, ProtocolVersion, ServerMessage, WsMove, WsPoint};

type Socket = WebSocket<MaybeTlsStream<TcpStream>>;

/// Why a game could not be followed, or a connection ended.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot connect to {url}: {source}")]
    Connect {
        url: String,
        source: Box<tungstenite::Error>,
    },
    // Boxed, as tungstenite's error is large and every result here
    // would carry its size.
    #[error("send: {0}")]
    Send(Box<tungstenite::Error>),
    #[error("{0}")]
    Socket(Box<tungstenite::Error>),
    #[error("closed by the server")]
    Closed,
    #[error(transparent)]
    BoardSize(#[from] BoardSizeError),
    #[error(transparent)]
    Rule(#[from] RuleError),
    #[error("the board's rows differ in length")]
    RaggedBoard,
    #[error(transparent)]
    Move(#[from] MoveError),
    /// The rule's network could not be loaded and play without it is not
    /// allowed.
    #[error("{0}")]
    Network(String),
    /// A name no server of the protocol takes.
    #[error("--name {0:?}: {1}")]
    BadName(String, String),
    /// The server refused our NAME: connecting again would not help.
    #[error("the server refused our name: {0}")]
    NameRefused(String),
    #[error("no word from the server for {0:?}")]
    Silent(Duration),
}

/// The delay before connecting again after a failure (each wait is drawn
/// from its upper half), doubled after each connection that did not last (a
/// server that accepts and closes at once is not hammered) up to
/// [`MAX_RECONNECT_DELAY`].
const RECONNECT_DELAY: Duration = Duration::from_secs(1);
const MAX_RECONNECT_DELAY: Duration = Duration::from_secs(60);
/// A connection that lasted this long was a working one: the next
/// reconnection waits the shortest delay again.
const LASTING_CONNECTION: Duration = Duration::from_secs(60);

/// The waits between reconnections. Each is drawn from the upper half of
/// the current delay: clients that one server restart dropped together
/// would otherwise come back together, every round.
struct Backoff {
    delay: Duration,
    rng: Rng,
}

impl Backoff {
    fn new(seed: u64) -> Backoff {
        Backoff {
            delay: RECONNECT_DELAY,
            rng: Rng::new(seed),
        }
    }

    /// The wait after a connection (or an attempt) that lasted `lasted`.
    fn next(&mut self, lasted: Duration) -> Duration {
        if lasted >= LASTING_CONNECTION {
            self.delay = RECONNECT_DELAY;
        }
        let half = self.delay / 2;
        let wait = half + half.mul_f64(self.rng.below(1 << 20) as f64 / f64::from(1 << 20));
        self.delay = (self.delay * 2).min(MAX_RECONNECT_DELAY);
        wait
    }
}
/// The longest wait for the TCP connection, and then for the whole
/// WebSocket handshake: a server that accepts and never answers, or
/// answers a few bytes at a time, must not hold the client for good.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest message the client reads: a START of the largest board
/// with its whole move log is some tens of kilobytes.
const MAX_MESSAGE: usize = 1 << 20;
/// After this long without a frame from the server the client pings it,
/// and after twice this long takes the connection as dead and connects
/// again (a server that vanished without closing sends nothing more).
const SILENCE: Duration = Duration::from_secs(30);
/// How often the engine tells the server (and so the web board) what it
/// thinks of the game while it searches.
const INFO_EVERY: Duration = Duration::from_millis(500);
/// Refused moves in one turn after which the client stops answering and
/// waits for the server (each refusal leaves a cell out; a renju server
/// refusing forbidden points needs a few).
const MAX_REFUSALS: u32 = 16;
/// The server's faults (unreadable or unexpected messages) shown on one
/// connection, and the characters of its text shown with each: a broken
/// or hostile server cannot fill the terminal or the log.
const SHOWN_FAULTS: u32 = 20;
const SHOWN_CHARS: usize = 200;

/// The client's state (the specification's READY, THINKING, AWAITING and
/// IDLE; INIT is the connection itself).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Ready,
    Thinking,
    AwaitingResponse,
    Idle,
    /// A game we cannot play (its rule refused, a position we cannot
    /// read): resigned at our turn, so that the opponent is not left
    /// waiting out our clock.
    Resigning,
}

struct Player {
    engine: Engine,
    networks: NetworkProvider,
    lag: Duration,
    color: Color,
    state: State,
    /// Our remaining time, as the server last said.
    remaining: Duration,
    /// When the message being handled arrived: the server's clock runs from
    /// then, so a search's time (after a network switch, say) counts from
    /// there too.
    arrived: Instant,
    /// Our move sent, waiting for VALID to go on our board.
    pending_move: Option<WsMove>,
    /// The secret of our seat in the current game (START's `seat`): given
    /// back with our name after a reconnection, to take the seat again.
    seat: Option<String>,
    /// NAME sent on this connection and no START yet: an INVALID now can
    /// only be the server refusing the name.
    naming: bool,
    /// The last START showed the extensions (a seat or a rule): INFO may
    /// go to this server. A server of the specification alone may refuse
    /// INFO, and its INVALID could arrive just after our MOVE, read as the
    /// move's refusal.
    extensions: bool,
    /// The server answered something other than a move with INVALID on
    /// this connection: no INFO again until the next connection.
    info_refused: bool,
    /// Refusals of our moves since the opponent last moved: a server that
    /// refuses every move (a pass we cannot replace) is not flooded.
    refusals: u32,
    /// The server's faults seen on this connection.
    faults: u32,
}

/// What the user should see: on stderr, and in the log (`--log-dir`).
fn warn(text: &str) {
    eprintln!("{text}");
    tracing::warn!("{text}");
}

/// The server's `text` as it may be shown: its first [`SHOWN_CHARS`]
/// characters, control characters escaped.
fn excerpt(text: &str) -> String {
    let mut shown = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == SHOWN_CHARS {
            shown.push_str("...");
            break;
        }
        if c.is_control() {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    shown
}

fn point_of(p: Point) -> WsPoint {
    WsPoint {
        row: u32::from(p.y()),
        column: u32::from(p.x()),
    }
}

/// The board's cell at a protocol point (the inverse of [`point_of`]).
fn cell_of(board: &Board, point: WsPoint) -> Result<Point, MoveError> {
    board.point(i64::from(point.column), i64::from(point.row))
}

/// The position a `START` describes: the initial board, then the log.
fn position(config: &GameConfiguration) -> Result<Board, ClientError> {
    let rows = &config.initial_state.board;
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let width = rows.first().map_or(0, Vec::len);
    if rows.iter().any(|row| row.len() != width) {
        return Err(ClientError::RaggedBoard);
    }
    let size = BoardSize::new(count(width), count(rows.len()))?;
    let rule = match &config.rule {
        Some(name) => name.parse::<Rule>()?,
        None => Rule::Freestyle,
    };
    let mut board = Board::new(size, rule);
    for (y, row) in rows.iter().enumerate() {
        for (x, cell) in row.iter().enumerate() {
            let color = match cell.as_str() {
                "B" => Color::Black,
                "W" => Color::White,
                _ => continue,
            };
            let p = board.point(x as i64, y as i64)?;
            board.place(p, color)?;
        }
    }
    board.set_side_to_move(config.initial_state.turn.into());
    for entry in &config.move_log {
        apply(&mut board, entry.mv)?;
    }
    Ok(board)
}

fn apply(board: &mut Board, mv: WsMove) -> Result<(), MoveError> {
    match mv {
        WsMove::Place { point } => {
            let p = cell_of(board, point)?;
            board.play(p)
        }
        WsMove::Pass => {
            board.set_side_to_move(board.side_to_move().opponent());
            Ok(())
        }
        WsMove::Resign => Ok(()),
    }
}

impl Player {
    fn new(config: &Config) -> Player {
        let mut networks = NetworkProvider::new(&config.network);
        let (engine, _) =
            super::engine_for(config, &mut networks, BoardSize::FIFTEEN, Rule::Freestyle);
        Player {
            engine,
            networks,
            lag: Duration::from_millis(config.time.protocol_lag_ms),
            color: Color::Black,
            state: State::Ready,
            remaining: Duration::from_secs(60),
            arrived: Instant::now(),
            pending_move: None,
            seat: None,
            naming: false,
            extensions: false,
            info_refused: false,
            refusals: 0,
            faults: 0,
        }
    }

    /// Says what the server did wrong, for the first [`SHOWN_FAULTS`] times
    /// on a connection.
    fn fault(&mut self, text: &str) {
        self.faults = self.faults.saturating_add(1);
        if self.faults <= SHOWN_FAULTS {
            warn(&excerpt(text));
        }
        if self.faults == SHOWN_FAULTS {
            warn("more faults of this server are not shown on this connection");
        }
    }

    fn start(&mut self, config: &GameConfiguration, color: WsColor) -> Result<(), ClientError> {
        // Whatever the new game turns out to be, the last one is over: no
        // search of it may answer in this one, no move of it await VALID.
        self.engine.stop();
        self.pending_move = None;
        self.state = State::Ready;
        self.refusals = 0;
        let board = position(config)?;
        // Loaded (once) before anything changes: a network that fails is
        // refused here, not played as a service that evaluates nothing.
        if let Err(why) = self.networks.service_for(board.rule(), board.size()) {
            return Err(ClientError::Network(why));
        }
        self.color = color.into();
        let mut remaining =
            Duration::from_millis(config.initial_state.players.of(self.color).remaining_time);
        // Our time: the initial time less our logged moves, less the idle
        // time when it is our turn.
        let mut mover = config.initial_state.turn.into();
        for entry in &config.move_log {
            if mover == self.color {
                remaining = remaining.saturating_sub(Duration::from_millis(entry.delta_time));
            }
            mover = Color::opponent(mover);
        }
        if board.side_to_move() == self.color {
            remaining = remaining.saturating_sub(Duration::from_millis(config.idle_delta_time));
        }
        self.remaining = remaining;
        // A game of its own, with the network of its rule and size: the
        // cache makes room for it at its first search, as the other front
        // ends' new games do (the last games' trees would otherwise fill
        // it, the same opening recurring).
        if let Some(note) = super::new_game(
            &mut self.engine,
            &mut self.networks,
            board.size(),
            board.rule(),
        ) {
            warn(&note);
        }
        set_position(&mut self.engine, board);
        if self.engine.board().side_to_move() == self.color {
            self.think();
        } else {
            self.state = State::Idle;
        }
        Ok(())
    }

    fn think(&mut self) {
        self.engine.time = TimeControl {
            turn: None,
            left: Some(self.remaining),
            increment: Duration::ZERO,
            overtime: Duration::ZERO,
            lag: self.lag,
        };
        self.engine.start_since(SearchKind::Think, self.arrived);
        self.state = State::Thinking;
    }

    /// INFO (an extension) goes out in this game: to a server that showed
    /// the extensions, and not after it refused a message on this
    /// connection.
    fn sends_info(&self) -> bool {
        self.extensions && !self.info_refused
    }

    /// What the search thinks now (extension INFO): our expected score and
    /// the principal variation.
    fn info(&self) -> Option<ClientMessage> {
        let report = self.engine.report(&[], 1)?;
        let winrate = report.proven.expected_score(report.wdl);
        Some(ClientMessage::Info(PlayerInfo {
            winrate: f64::from(winrate),
            pv: report.pv.iter().map(|&p| point_of(p)).collect(),
        }))
    }

    /// The move of a finished search, if one has finished.
    fn poll_move(&mut self) -> Option<WsMove> {
        if self.state != State::Thinking {
            return None;
        }
        let finished = self.engine.poll()?;
        let mv = match self.engine.move_to_play(&finished.result) {
            Some(p) => WsMove::Place { point: point_of(p) },
            // No legal move left (a full board or only forbidden cells).
            None => WsMove::Pass,
        };
        self.state = State::AwaitingResponse;
        Some(mv)
    }

    fn handle(
        &mut self,
        message: ServerMessage,
        socket: &mut Socket,
        name: &str,
        arrived: Instant,
    ) -> Result<(), ClientError> {
        self.arrived = arrived;
        match message {
            ServerMessage::Name => {
                let reply = ClientMessage::Name {
                    name: name.to_string(),
                    protocol: ProtocolVersion::V2,
                    // Taking part in the seat extension: our secret, or
                    // "" before we have one.
                    seat: Some(self.seat.clone().unwrap_or_default()),
                };
                send(socket, &reply)?;
                self.state = State::Ready;
                self.naming = true;
            }
            ServerMessage::Start {
                configuration,
                color,
                seat,
                ..
            } => {
                self.extensions = seat.is_some() || configuration.rule.is_some();
                self.seat = seat;
                self.naming = false;
                if let Err(e) = self.start(&configuration, color) {
                    self.color = color.into();
                    self.state = State::Resigning;
                    if our_turn(&configuration, self.color) {
                        send(socket, &ClientMessage::Move(WsMove::Resign))?;
                    }
                    return Err(e);
                }
            }
            ServerMessage::Valid { remaining_time, .. } => {
                self.remaining = Duration::from_millis(remaining_time.of(self.color));
                if self.state == State::Resigning {
                    return Ok(());
                }
                if self.state != State::AwaitingResponse {
                    self.fault("the server accepted a move we are not waiting on; ignored");
                    return Ok(());
                }
                // Our move stands: it goes on our board.
                if let Some(last) = self.pending_move.take() {
                    apply_to_engine(&mut self.engine, last)?;
                }
                self.state = State::Idle;
            }
            ServerMessage::Invalid {
                message,
                remaining_time,
            } => {
                if self.naming && self.pending_move.is_none() {
                    return Err(ClientError::NameRefused(excerpt(&message)));
                }
                self.remaining = Duration::from_millis(remaining_time.of(self.color));
                // Only an answer to our MOVE refuses it; an INVALID at another
                // time answers something else, and must not drop the move
                // still awaiting its VALID. INFO goes out only while we
                // think, and the server answers in order: an INVALID between
                // games (a move of ours that crossed END) refuses no INFO.
                if self.state != State::AwaitingResponse {
                    self.fault(&format!("the server refused a message: {message}"));
                    if self.state == State::Thinking {
                        self.info_refused = true;
                    }
                    return Ok(());
                }
                warn(&format!(
                    "the server refused our move: {}",
                    excerpt(&message)
                ));
                self.refusals += 1;
                if self.refusals >= MAX_REFUSALS {
                    // Waiting instead left it our turn on our board in the
                    // Idle state, where the next MOVE would go on it in our
                    // colour; and the server waits for a move we cannot find.
                    warn("every move we find is refused: we resign");
                    self.pending_move = None;
                    self.state = State::Resigning;
                    send(socket, &ClientMessage::Move(WsMove::Resign))?;
                    return Ok(());
                }
                // Not the same move again: the next search leaves it out
                // (a renju server refuses a forbidden move the rule we were
                // told, or assumed, allows).
                if let Some(WsMove::Place { point }) = self.pending_move.take() {
                    if let Ok(p) = cell_of(self.engine.board(), point) {
                        self.engine.limits.excluded.insert(p);
                    }
                }
                self.think();
            }
            ServerMessage::Move { mv, .. } if self.state == State::Resigning => {
                // Our turn in a game we cannot play.
                if mv != WsMove::Resign {
                    send(socket, &ClientMessage::Move(WsMove::Resign))?;
                }
            }
            ServerMessage::Move {
                mv, remaining_time, ..
            } => {
                // The opponent moves only while we wait for it: not in a
                // game we refused (a START we could not play), and not
                // while our own move is on its way or being found, when the
                // stone would go on our board in our colour.
                if self.state != State::Idle {
                    self.fault("the server sent a move when the opponent is not to move; ignored");
                    return Ok(());
                }
                self.remaining = Duration::from_millis(remaining_time.of(self.color));
                self.refusals = 0;
                // A move we cannot follow (our board has us to move, or the
                // cell is taken or off the board) leaves the two boards out
                // of step: resign, as for a START we cannot play, rather
                // than wait out our clock in silence.
                let in_step =
                    self.engine.board().side_to_move() != self.color || mv == WsMove::Resign;
                let applied = if in_step {
                    apply_to_engine(&mut self.engine, mv)
                        .map_err(|e| format!("the opponent's move cannot be played here ({e})"))
                } else {
                    Err("the server sent a move when our board has us to move".to_string())
                };
                if let Err(why) = applied {
                    warn(&format!("{why}: we resign"));
                    self.state = State::Resigning;
                    send(socket, &ClientMessage::Move(WsMove::Resign))?;
                    return Ok(());
                }
                // A resignation ends the game (END follows): nothing to search.
                if self.engine.board().outcome().is_none() && mv != WsMove::Resign {
                    self.think();
                }
            }
            ServerMessage::End { reason, winner, .. } => {
                tracing::info!("game over: {reason:?}, winner {winner}");
                // An interrupted game (error) may resume: keep the seat.
                if reason != EndReason::Error {
                    self.seat = None;
                }
                self.engine.stop();
                self.pending_move = None;
                self.state = State::Ready;
            }
        }
        Ok(())
    }
}

/// Whether `color` is to move in the game `config` starts (the protocol's
/// hint: the initial turn, and the log's length).
fn our_turn(config: &GameConfiguration, color: Color) -> bool {
    let first: Color = config.initial_state.turn.into();
    (first == color) == config.move_log.len().is_multiple_of(2)
}

fn apply_to_engine(engine: &mut Engine, mv: WsMove) -> Result<(), MoveError> {
    let mut board = engine.board().clone();
    apply(&mut board, mv)?;
    set_position(engine, board);
    Ok(())
}

/// The engine's new position; moves refused in the last one say nothing
/// of it.
fn set_position(engine: &mut Engine, board: Board) {
    engine.set_board(board);
    engine.limits.excluded = CellSet::new();
}

fn send(socket: &mut Socket, message: &ClientMessage) -> Result<(), ClientError> {
    socket
        .send(Message::text(message.to_json()))
        .map_err(|e| ClientError::Send(Box::new(e)))
}

/// tungstenite's error is large: boxed.
fn boxed(e: impl Into<tungstenite::Error>) -> Box<tungstenite::Error> {
    Box::new(e.into())
}

/// The client request of `url`, if this client can connect to such an
/// address (ws://, no TLS).
fn check_url(
    url: &str,
) -> Result<tungstenite::handshake::client::Request, Box<tungstenite::Error>> {
    use tungstenite::client::IntoClientRequest;
    use tungstenite::error::UrlError;
    let request = url.into_client_request().map_err(boxed)?;
    if request.uri().scheme_str() == Some("wss") {
        return Err(boxed(tungstenite::Error::Url(
            UrlError::TlsFeatureNotEnabled,
        )));
    }
    Ok(request)
}

/// Connects to the server at `url`, each step within [`CONNECT_TIMEOUT`]
/// (tungstenite's own `connect` waits as long as the system lets it).
fn open(url: &str) -> Result<Socket, Box<tungstenite::Error>> {
    use std::net::ToSocketAddrs;
    use tungstenite::error::UrlError;
    let request = check_url(url)?;
    let uri = request.uri();
    let host = uri
        .host()
        .ok_or(tungstenite::Error::Url(UrlError::NoHostName))
        .map_err(boxed)?
        .trim_start_matches('[')
        .trim_end_matches(']');
    let port = uri.port_u16().unwrap_or(80);
    let mut failure = std::io::Error::new(std::io::ErrorKind::NotFound, "no address");
    let mut connected = None;
    for address in (host, port).to_socket_addrs().map_err(boxed)? {
        match TcpStream::connect_timeout(&address, CONNECT_TIMEOUT) {
            Ok(stream) => {
                connected = Some(stream);
                break;
            }
            Err(e) => failure = e,
        }
    }
    let stream = connected.ok_or(failure).map_err(boxed)?;
    stream
        .set_read_timeout(Some(CONNECT_TIMEOUT))
        .map_err(boxed)?;
    stream
        .set_write_timeout(Some(CONNECT_TIMEOUT))
        .map_err(boxed)?;
    // The read timeout bounds each read, not the handshake: a watchdog
    // shuts the connection down if the whole handshake takes longer.
    let watched = stream.try_clone().map_err(boxed)?;
    let (handshake_done, done) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = done.recv_timeout(CONNECT_TIMEOUT)
        {
            let _ = watched.shutdown(std::net::Shutdown::Both);
        }
    });
    let limits = tungstenite::protocol::WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE));
    let handshake = tungstenite::client::client_with_config(
        request,
        MaybeTlsStream::Plain(stream),
        Some(limits),
    );
    let _ = handshake_done.send(());
    let _ = watchdog.join();
    let (socket, _) = handshake.map_err(|e| match e {
        tungstenite::HandshakeError::Failure(e) => boxed(e),
        tungstenite::HandshakeError::Interrupted(_) => boxed(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "handshake timed out",
        )),
    })?;
    if let MaybeTlsStream::Plain(stream) = socket.get_ref() {
        // Short reads: the loop polls the search between them.
        stream
            .set_read_timeout(Some(Duration::from_millis(2)))
            .map_err(boxed)?;
    }
    Ok(socket)
}

/// Plays on the server at `url` as `name` until the process is stopped;
/// reconnects after every dropped connection. A server that cannot be
/// reached at the start is an error, and so is one that refuses the name.
pub fn run(config: Config, url: &str, name: &str) -> Result<(), ClientError> {
    // What can be checked without the server, before the networks load.
    check_url(url).map_err(|source| ClientError::Connect {
        url: url.to_string(),
        source,
    })?;
    crate::ws::message::check_name(name.trim())
        .map_err(|why| ClientError::BadName(name.to_string(), why))?;
    super::log::LogFile::for_process(&config.log);
    // The engine first: a server names a client within seconds (ours in
    // 10), and a connection left unanswered while the networks loaded (a
    // GPU's start-up takes longer) was closed with a refusal of the name,
    // which ended the client for good.
    let mut player = Player::new(&config);
    // Every rule's network now: a client without any would resign every
    // game it is given, for ever.
    let _ = player.networks.load_all();
    if let Some(why) = player.networks.refusal_of_every_rule() {
        return Err(ClientError::Network(why));
    }
    let mut first = Some(open(url).map_err(|source| ClientError::Connect {
        url: url.to_string(),
        source,
    })?);
    let mut backoff = Backoff::new(crate::rng::unrepeatable_seed());
    loop {
        let connection = match first.take() {
            Some(connected) => Ok(connected),
            None => open(url),
        };
        let started = Instant::now();
        let why = match connection {
            Ok(mut socket) => {
                eprintln!("connected to {url} as {name}");
                match play(&mut player, &mut socket, name) {
                    ClientError::NameRefused(why) => return Err(ClientError::NameRefused(why)),
                    why => format!("connection lost ({why})"),
                }
            }
            Err(e) => format!("cannot connect to {url}: {e}"),
        };
        // Read before the wait, which is no part of the connection's life.
        let wait = backoff.next(started.elapsed());
        eprintln!("{why}; connecting again in {:.1} s", wait.as_secs_f64());
        player.engine.stop();
        player.state = State::Ready;
        // A move sent on the lost connection is answered, if at all, by the
        // START of the next: an INVALID then is no refusal of it.
        player.pending_move = None;
        std::thread::sleep(wait);
    }
}

/// One connection's life; returns why it ended.
fn play(player: &mut Player, socket: &mut Socket, name: &str) -> ClientError {
    let mut last_info = Instant::now();
    let mut last_heard = Instant::now();
    let mut pinged = false;
    player.naming = false;
    player.extensions = false;
    player.info_refused = false;
    player.faults = 0;
    loop {
        let silence = last_heard.elapsed();
        if silence >= 2 * SILENCE {
            return ClientError::Silent(silence);
        }
        if silence >= SILENCE && !pinged {
            pinged = true;
            if let Err(e) = socket.send(Message::Ping(Vec::new().into())) {
                return ClientError::Send(Box::new(e));
            }
        }
        // The move first: an INFO never goes out just before it in the same
        // round (a server that refuses INFO would answer it with an INVALID
        // read as the move's).
        if let Some(mv) = player.poll_move() {
            player.pending_move = Some(mv);
            if let Err(e) = send(socket, &ClientMessage::Move(mv)) {
                return e;
            }
        }
        if player.state == State::Thinking
            && player.sends_info()
            && last_info.elapsed() >= INFO_EVERY
        {
            last_info = Instant::now();
            if let Some(info) = player.info() {
                if let Err(e) = send(socket, &info) {
                    return e;
                }
            }
        }
        let read = socket.read();
        let arrived = Instant::now();
        if read.is_ok() {
            last_heard = Instant::now();
            pinged = false;
        }
        match read {
            Ok(Message::Text(text)) => match ServerMessage::parse(&text) {
                Ok(message) => match player.handle(message, socket, name, arrived) {
                    Ok(()) => {}
                    Err(refused @ ClientError::NameRefused(_)) => return refused,
                    Err(e) => player.fault(&e.to_string()),
                },
                Err(e) => player.fault(&format!("unreadable server message ({e}): {text}")),
            },
            Ok(Message::Close(_)) => return ClientError::Closed,
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return ClientError::Socket(Box::new(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a server sends is shown cut short and with its control
    /// characters escaped: one line each, whatever the server sends.
    #[test]
    fn the_servers_text_is_shown_cut_and_on_one_line() {
        let flood = format!("bad\nline\u{1b}[2J{}", "x".repeat(1 << 20));
        let shown = excerpt(&flood);
        assert!(shown.starts_with("bad\\nline\\u{1b}[2J"), "{shown}");
        assert!(!shown.chars().any(char::is_control), "{shown}");
        assert!(shown.ends_with("..."));
        assert!(shown.chars().count() <= SHOWN_CHARS + 20, "{}", shown.len());
        assert_eq!(excerpt("short"), "short");
    }

    /// Waits double after connections that did not last, up to the
    /// longest, fall back after one that did, and are spread over the upper
    /// half of each delay, differently for two clients.
    #[test]
    fn reconnection_waits_back_off_with_jitter() {
        let short = Duration::from_millis(10);
        let mut a = Backoff::new(1);
        let mut b = Backoff::new(2);
        let mut delay = RECONNECT_DELAY;
        let mut differed = false;
        for _ in 0..10 {
            let (wa, wb) = (a.next(short), b.next(short));
            for w in [wa, wb] {
                assert!(
                    w >= delay / 2 && w <= delay,
                    "{w:?} outside the upper half of {delay:?}"
                );
            }
            differed |= wa != wb;
            delay = (delay * 2).min(MAX_RECONNECT_DELAY);
        }
        assert_eq!(delay, MAX_RECONNECT_DELAY);
        assert!(differed, "two clients waited the same every time");
        // After a working connection, the shortest delay again, at once.
        let w = a.next(LASTING_CONNECTION);
        assert!(w <= RECONNECT_DELAY, "{w:?}");
        assert!(a.next(short) >= RECONNECT_DELAY);
    }

    fn configuration(rows: &[String]) -> GameConfiguration {
        let board: Vec<Vec<String>> = rows
            .iter()
            .map(|r| r.chars().map(|c| c.to_string()).collect())
            .collect();
        let clock = serde_json::json!({ "remainingTime": 1000 });
        serde_json::from_value(serde_json::json!({
            "initialState": {
                "board": board,
                "players": { "B": clock, "W": clock },
                "turn": "W",
            },
            "moveLog": [],
        }))
        .unwrap()
    }

    #[test]
    fn a_start_position_is_read_or_refused_whole() {
        let mut rows = vec![".".repeat(15); 15];
        rows[7] = format!("{}B{}", ".".repeat(7), ".".repeat(7));
        let board = position(&configuration(&rows)).unwrap();
        assert_eq!(board.stone(Point::new(7, 7).unwrap()), Some(Color::Black));
        assert_eq!(board.side_to_move(), Color::White);
        // A longer row (a server's hostile or broken message) is refused,
        // not read with its stones wrapped onto other cells.
        rows[3] = format!("{}B", ".".repeat(256));
        assert!(matches!(
            position(&configuration(&rows)),
            Err(ClientError::RaggedBoard)
        ));
        rows[3] = ".".repeat(14);
        assert!(matches!(
            position(&configuration(&rows)),
            Err(ClientError::RaggedBoard)
        ));
    }
}
