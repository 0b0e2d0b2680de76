//! The referee: the server's whole state (clients, web boards, games,
//! interrupted games), owned by one thread and changed by events.

mod views;

use super::connection::cut;
use super::*;
use std::collections::{HashMap, HashSet};

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
    connected: Instant,
    /// Its colour in its last game on this connection.
    last_color: Option<Color>,
    /// The token of the ping sent after its last game's END, until its
    /// pong comes: the protocol has no game id, and whatever the client
    /// sent before it read the END (a move a moment too late, its
    /// analysis) arrives before that pong, so it is not seated in a new
    /// game, where it would be taken for that game's, until then.
    settling: Option<u64>,
}

/// A web board watching.
struct Viewer {
    out: Sender<Outgoing>,
    socket: Option<TcpStream>,
    /// Answered the last ping.
    alive: bool,
}

/// The moves of a player's principal variation kept for the web boards
/// (the page draws 8).
const PV_SHOWN: usize = 16;

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

impl Checkpoint {
    /// Whether client `id`, named `name` and giving the seat secret
    /// `given`, could take a seat of this game: the one who stayed there,
    /// or one of the seat's name with its secret if it has one.
    fn could_seat(&self, id: ClientId, name: &str, given: Option<&str>) -> bool {
        (0..2).any(|seat| {
            self.stayed[seat] == Some(id)
                || (self.names[seat] == name && admits(self.seats[seat].as_deref(), given))
        })
    }
}

/// Whether a seat with the secret `secret` (none: resumed by name, as the
/// protocol says) admits a client that gives `given`.
fn admits(secret: Option<&str>, given: Option<&str>) -> bool {
    secret.is_none_or(|s| given == Some(s))
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
pub(super) struct Referee {
    config: ServerConfig,
    clients: BTreeMap<ClientId, Client>,
    viewers: BTreeMap<ClientId, Viewer>,
    /// The last game's ending and final position, for the viewers.
    last_result: Option<Value>,
    /// The viewers' picture is out of date.
    changed: bool,
    /// ... and they should see it now (a game ended, a board connected).
    urgent: bool,
    /// Something happened that may let waiting clients be paired or an
    /// interrupted game resume: pairing is looked at only then, not on
    /// every tick.
    pair_due: bool,
    last_broadcast: Instant,
    /// Connections whose queue was full: dropped after the event at hand.
    overflowed: RefCell<Vec<ClientId>>,
    games: Vec<Running>,
    checkpoints: Vec<Checkpoint>,
    last_ping: Instant,
    /// The last token given to a ping after a game's END.
    last_token: u64,
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
    /// Asks every client's connection to close (the server stops).
    pub(super) fn close_all(&self) {
        for client in self.clients.values() {
            let _ = client.out.try_send(Outgoing::Close);
        }
    }

    pub(super) fn new(config: ServerConfig, stats: Arc<SharedStats>) -> Referee {
        Referee {
            config,
            clients: BTreeMap::new(),
            viewers: BTreeMap::new(),
            last_result: None,
            changed: false,
            urgent: false,
            pair_due: true,
            last_broadcast: Instant::now(),
            overflowed: RefCell::new(Vec::new()),
            games: Vec::new(),
            checkpoints: Vec::new(),
            last_ping: Instant::now(),
            last_token: 0,
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
    pub(super) fn drop_overflowed(&mut self) {
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

    pub(super) fn handle(&mut self, event: Event) {
        // Pongs and web boards' messages change nothing the boards show
        // (a game a board starts marks the change itself).
        let viewer_text = matches!(&event, Event::Text(id, ..) if self.viewers.contains_key(id));
        self.pair_due = true;
        self.changed |= !matches!(event, Event::Pong(..)) && !viewer_text;
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
            Event::Text(id, text, _) if self.viewers.contains_key(&id) => {
                self.viewer_command(id, &text)
            }
            Event::Disconnected(id) if self.viewers.contains_key(&id) => {
                self.viewers.remove(&id);
            }
            Event::Pong(id, _) if self.viewers.contains_key(&id) => {
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
                        connected: Instant::now(),
                        last_color: None,
                        settling: None,
                    },
                );
            }
            Event::Pong(id, token) => {
                if let Some(c) = self.clients.get_mut(&id) {
                    c.alive = true;
                    if token.is_some() && token == c.settling {
                        c.settling = None;
                    }
                }
            }
            Event::Disconnected(id) => self.drop_client(id),
            Event::Text(id, text, arrived) => match ClientMessage::parse(&text) {
                Ok(ClientMessage::Name {
                    name,
                    protocol,
                    seat,
                }) => {
                    // NAME belongs to INIT: a second one would rename a
                    // player in its game, or move a client held for an
                    // interrupted game out of its reservation.
                    if self.clients.get(&id).is_some_and(|c| c.name.is_some()) {
                        let remaining = self.remaining_of(id);
                        self.send(
                            id,
                            &ServerMessage::Invalid {
                                message: "already named".into(),
                                remaining_time: remaining,
                            },
                        );
                    } else if let Some(c) = self.clients.get_mut(&id) {
                        tracing::info!("client {id} is {name:?} ({protocol:?})");
                        c.name = Some(name);
                        c.protocol = protocol;
                        c.seat_aware = seat.is_some();
                        c.seat = seat.filter(|s| !s.is_empty());
                    }
                }
                Ok(ClientMessage::Move(mv)) => self.play(id, mv, arrived),
                Ok(ClientMessage::Info(mut info)) => {
                    if let Some((g, seat)) = self.game_of(id) {
                        // Every web board gets the analysis several times a
                        // second: only the moves it can show, on the board.
                        let size = self.games[g].game.board().size();
                        info.pv.retain(|p| {
                            p.column < u32::from(size.width()) && p.row < u32::from(size.height())
                        });
                        info.pv.truncate(PV_SHOWN);
                        self.games[g].analysis[seat] = Some(info);
                    }
                }
                Err(why) => {
                    let remaining = self.remaining_of(id);
                    let message = ServerMessage::Invalid {
                        message: why,
                        remaining_time: remaining,
                    };
                    self.send(id, &message);
                }
            },
        }
    }

    /// The time left on the clock of `id`'s game, for an INVALID.
    fn remaining_of(&self, id: ClientId) -> PerPlayer<u64> {
        self.game_of(id).map_or(NO_TIME, |(g, _)| {
            let r = &self.games[g];
            r.game.remaining_time(r.turn_started.elapsed())
        })
    }

    fn play(&mut self, id: ClientId, mv: crate::ws::message::WsMove, arrived: Instant) {
        let Some((g, seat)) = self.game_of(id) else {
            let message = ServerMessage::Invalid {
                message: "you are not playing a game".into(),
                remaining_time: NO_TIME,
            };
            return self.send(id, &message);
        };
        let color = color_of_seat(seat);
        let running = &mut self.games[g];
        let thinking = arrived.saturating_duration_since(running.turn_started);
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
                // The player to move now said nothing of this position yet:
                // its last analysis is of the position before.
                running.analysis[1 - seat] = None;
                let other = running.players[1 - seat];
                if !timed_out {
                    let forbidden = running.game.forbidden();
                    self.send(
                        id,
                        &ServerMessage::Valid {
                            remaining_time: remaining,
                            forbidden: forbidden.clone(),
                        },
                    );
                    self.send(
                        other,
                        &ServerMessage::Move {
                            mv,
                            remaining_time: remaining,
                            forbidden,
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
            self.settle(id);
        }
    }

    /// Follows the END just queued for `id` with a ping of a new token: the
    /// client is seated again once it answers (see `Client::settling`).
    fn settle(&mut self, id: ClientId) {
        self.last_token += 1;
        let token = self.last_token;
        if let Some(client) = self.clients.get_mut(&id) {
            client.settling = Some(token);
            let out = client.out.clone();
            self.queue(id, &out, Outgoing::Ping(Some(token)));
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
        let players = running.players;
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
        // Counted before the END goes out, so that whoever hears of the
        // end finds the checkpoint in the server's figures.
        self.count();
        for cid in players {
            self.send(cid, &message);
            self.settle(cid);
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
        let settling = |id: ClientId| self.clients.get(&id).is_some_and(|c| c.settling.is_some());
        if settling(black) || settling(white) {
            return Err("one of them has not answered since its last game ended".into());
        }
        // Held back only if it could take a seat there: a client of the
        // same name without the seat's secret never could (two web boards
        // under the page's default name would block each other).
        let reserved = |id: ClientId| {
            self.clients.get(&id).is_some_and(|c| {
                let name = c.name.as_deref().unwrap_or_default();
                self.checkpoints
                    .iter()
                    .any(|k| k.could_seat(id, name, c.seat.as_deref()))
            })
        };
        if reserved(black) || reserved(white) {
            return Err("an interrupted game waits for one of them".into());
        }
        let game = WsGame::new(self.config.size, self.config.rule, self.config.time);
        self.launch(game, [black, white], [None, None]);
        Ok(())
    }

    /// A web board's request. A game it cannot start is answered with
    /// why (`{"type": "REFUSED", "request": "START_GAME", "reason": ...}`),
    /// for the board to show.
    fn viewer_command(&mut self, viewer: ClientId, text: &str) {
        let Ok(value) = serde_json::from_str::<Value>(text) else {
            return;
        };
        if value.get("type").and_then(Value::as_str) == Some("START_GAME") {
            let id = |key: &str| value.get(key).and_then(Value::as_u64);
            let started = match (id("black"), id("white")) {
                (Some(black), Some(white)) => self.start_game(black, white),
                _ => Err("pick two different named clients".into()),
            };
            if let Err(why) = started {
                tracing::info!("web board: cannot start: {why}");
                let refusal =
                    serde_json::json!({"type": "REFUSED", "request": "START_GAME", "reason": why});
                if let Some(v) = self.viewers.get(&viewer) {
                    self.queue(viewer, &v.out, Outgoing::Text(refusal.to_string()));
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
            .filter(|(&id, c)| !self.is_playing(id) && c.settling.is_none())
            .filter_map(|(&id, c)| c.name.clone().map(|n| (id, n, c.seat.clone())))
            .collect();
        let mut taken: HashSet<ClientId> = HashSet::new();
        let mut resumed = Vec::new();
        // A client that stayed in an interrupted game is held for its own
        // seat there: never taken by name for another seat or game (two
        // players may share a name, and the one who stayed would be given
        // the dropped one's colour).
        let stayed: HashSet<ClientId> = self
            .checkpoints
            .iter()
            .flat_map(|c| c.stayed.iter().flatten().copied())
            .collect();
        // The waiting clients by name, each list in the order they came
        // (client ids grow): a checkpoint looks up its names, not every
        // client (a thousand checkpoints and hundreds of clients were a
        // referee busy on every tick).
        let mut by_name: HashMap<&str, Vec<(ClientId, Option<&str>)>> = HashMap::new();
        for (id, name, given) in &waiting {
            by_name
                .entry(name.as_str())
                .or_default()
                .push((*id, given.as_deref()));
        }
        let is_waiting: HashSet<ClientId> = waiting.iter().map(|(id, _, _)| *id).collect();
        for (i, checkpoint) in self.checkpoints.iter().enumerate() {
            // The client that takes `seat`, other than `except` (two
            // players may share a name): the first to come of the one who
            // stayed there and those of its name (with its secret, if the
            // seat has one).
            let find = |seat: usize, except: Option<ClientId>| {
                let free = |id: &ClientId| !taken.contains(id) && Some(*id) != except;
                let (name, secret) = (&checkpoint.names[seat], &checkpoint.seats[seat]);
                let by_name = by_name.get(name.as_str()).and_then(|clients| {
                    clients
                        .iter()
                        .find(|(id, given)| {
                            free(id) && !stayed.contains(id) && admits(secret.as_deref(), *given)
                        })
                        .map(|(id, _)| *id)
                });
                let held = checkpoint.stayed[seat].filter(|id| is_waiting.contains(id) && free(id));
                match (by_name, held) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                }
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
        // Clients that could take a seat of an interrupted game are kept
        // for it (as in `start_game`): those who stayed there, and those
        // of a seat's name with its secret if it has one.
        let mut secrets_by_name: HashMap<&str, Vec<Option<&str>>> = HashMap::new();
        for c in &self.checkpoints {
            for seat in 0..2 {
                secrets_by_name
                    .entry(c.names[seat].as_str())
                    .or_default()
                    .push(c.seats[seat].as_deref());
            }
        }
        let reserved = |id: &ClientId, name: &str, given: Option<&str>| {
            stayed.contains(id)
                || secrets_by_name
                    .get(name)
                    .is_some_and(|secrets| secrets.iter().any(|&secret| admits(secret, given)))
        };
        let free: Vec<ClientId> = waiting
            .iter()
            .filter(|(id, name, given)| {
                !taken.contains(id) && !reserved(id, name, given.as_deref())
            })
            .map(|(id, _, _)| *id)
            .collect();
        for pair in free.chunks_exact(2) {
            let game = WsGame::new(self.config.size, self.config.rule, self.config.time);
            // Black to whoever was white last (engines left connected would
            // otherwise keep their colours game after game); between equals,
            // the older client.
            let wants_black = |id: ClientId| match self.clients.get(&id).and_then(|c| c.last_color)
            {
                Some(Color::White) => 2,
                None => 1,
                Some(Color::Black) => 0,
            };
            let players = if wants_black(pair[1]) > wants_black(pair[0]) {
                [pair[1], pair[0]]
            } else {
                [pair[0], pair[1]]
            };
            self.launch(game, players, [None, None]);
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
            if let Some(c) = self.clients.get_mut(&id) {
                c.last_color = Some(color_of_seat(i));
            }
            let seat_aware = self.clients.get(&id).is_some_and(|c| c.seat_aware);
            if seat_aware && seats[i].is_none() {
                seats[i] = seat_secret();
            }
            let message = ServerMessage::Start {
                configuration: game.configuration(v2),
                color: color_of_seat(i).into(),
                seat: seats[i].clone().filter(|_| seat_aware),
                forbidden: game.forbidden(),
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

    /// Time, heartbeat and forgetting, checked between events.
    pub(super) fn tick(&mut self) {
        self.tick_at(Instant::now());
    }

    /// [`Referee::tick`] with the players' clocks read at `clocks_at`: under
    /// a backlog of events, the arrival of the last one handled (a move
    /// still queued arrived after it, and may be in time).
    pub(super) fn tick_at(&mut self, clocks_at: Instant) {
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
        while let Some(g) = self.games.iter().position(|r| {
            r.game
                .time_left(clocks_at.saturating_duration_since(r.turn_started))
                .is_zero()
        }) {
            let ending = self.games[g].game.time_out();
            self.end(g, ending);
            self.changed = true;
        }
        let unnamed: Vec<ClientId> = self
            .clients
            .iter()
            .filter(|(_, c)| c.name.is_none() && c.connected.elapsed() >= self.config.name_timeout)
            .map(|(&id, _)| id)
            .collect();
        for id in unnamed {
            // Told why, then closed once that is written (a client that
            // does not read is cut by the write timeout); it is in no game.
            let why = format!("no NAME within {:?}", self.config.name_timeout);
            tracing::info!("client {id}: {why}");
            self.send(
                id,
                &ServerMessage::Invalid {
                    message: why,
                    remaining_time: NO_TIME,
                },
            );
            if let Some(client) = self.clients.remove(&id) {
                self.queue(id, &client.out, Outgoing::Close);
            }
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
            // A client still settling gets its token again: one that
            // answers only the latest of several pings (as RFC 6455
            // allows) would otherwise never be seated.
            for (&id, client) in &self.clients {
                self.queue(id, &client.out, Outgoing::Ping(client.settling));
            }
            for (&id, viewer) in &self.viewers {
                self.queue(id, &viewer.out, Outgoing::Ping(None));
            }
        }
        self.drop_overflowed();
        // Whatever this tick changed (a game timed out, a client or an
        // interrupted game dropped) may free clients to pair.
        let pair_due = std::mem::take(&mut self.pair_due) || self.changed;
        // The viewers see a game's end before the next game (automatic
        // pairing starts it in the same tick).
        self.broadcast();
        if pair_due {
            self.pair();
        }
        self.broadcast();
        self.count();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
                Instant::now(),
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

    /// A referee pairing automatically, games of `time` a side, with two
    /// named players (clients 1 and 2) paired: it and their queues.
    fn paired(time: Duration) -> (Referee, Vec<Receiver<Outgoing>>) {
        let mut referee = Referee::new(
            ServerConfig {
                auto_pair: true,
                time,
                ..ServerConfig::default()
            },
            Arc::new(SharedStats::default()),
        );
        let mut inboxes = Vec::new();
        for (id, name) in [(1, "a"), (2, "b")] {
            let (out, inbox) = bounded(OUTGOING_QUEUE);
            referee.handle(Event::Connected(id, out, None, Role::Player));
            let text = format!(r#"{{"type":"NAME","name":"{name}"}}"#);
            referee.handle(Event::Text(id, text, Instant::now()));
            inboxes.push(inbox);
        }
        referee.tick();
        (referee, inboxes)
    }

    /// A move's thinking time ends when it was read, not when the referee
    /// handled it (a backlog of events is not the player's time).
    #[test]
    fn a_move_is_timed_by_its_arrival() {
        let (mut referee, inboxes) = paired(Duration::from_secs(60));
        let black = referee.games[0].players[0];
        let arrived = referee.games[0].turn_started + Duration::from_millis(20);
        std::thread::sleep(Duration::from_millis(300));
        let mv = r#"{"type":"MOVE","move":{"type":"place","point":{"row":7,"column":7}}}"#;
        referee.handle(Event::Text(black, mv.to_string(), arrived));
        let inbox = &inboxes[usize::try_from(black - 1).unwrap()];
        let valid = inbox
            .try_iter()
            .find_map(|o| match o {
                Outgoing::Text(t) if t.contains("VALID") => Some(t),
                _ => None,
            })
            .expect("VALID");
        let value: Value = serde_json::from_str(&valid).unwrap();
        let left = value["remainingTime"]["B"].as_u64().unwrap();
        assert_eq!(left, 60_000 - 20, "{valid}");
    }

    /// Clocks read at an earlier moment (the arrival of the last event
    /// handled under a backlog) do not end a game whose move is still
    /// queued; read at that move's arrival, the move is in time.
    #[test]
    fn clocks_read_under_a_backlog_wait_for_a_queued_move() {
        let (mut referee, _inboxes) = paired(Duration::from_millis(200));
        let black = referee.games[0].players[0];
        let started = referee.games[0].turn_started;
        std::thread::sleep(Duration::from_millis(250));
        referee.tick_at(started + Duration::from_millis(150));
        assert_eq!(referee.games.len(), 1, "ended before its move was read");
        let mv = r#"{"type":"MOVE","move":{"type":"place","point":{"row":7,"column":7}}}"#;
        referee.handle(Event::Text(
            black,
            mv.to_string(),
            started + Duration::from_millis(180),
        ));
        assert_eq!(referee.games[0].game.moves(), 1);
        // Read now, after white's 200 ms, its clock has run out.
        std::thread::sleep(Duration::from_millis(250));
        referee.tick();
        assert!(referee.games.is_empty());
    }

    /// A move that loses on time and reaches the referee after its game's
    /// END is not played in the next game: the two are seated again only
    /// once each has answered the ping that followed the END, which comes
    /// after anything it sent before reading the END.
    #[test]
    fn a_move_of_the_last_game_is_not_played_in_the_next() {
        let (mut referee, inboxes) = paired(Duration::from_millis(200));
        let [black, white] = referee.games[0].players;
        let place = |row: u32| {
            format!(
                r#"{{"type":"MOVE","move":{{"type":"place","point":{{"row":{row},"column":7}}}}}}"#
            )
        };
        referee.handle(Event::Text(black, place(7), Instant::now()));
        assert_eq!(referee.games[0].game.moves(), 1);
        // White's time runs out: END, then a ping with a token to each.
        std::thread::sleep(Duration::from_millis(250));
        referee.tick();
        assert!(referee.games.is_empty(), "not paired before the pongs");
        let token = |id: ClientId| {
            inboxes[usize::try_from(id - 1).unwrap()]
                .try_iter()
                .find_map(|o| match o {
                    Outgoing::Ping(Some(token)) => Some(token),
                    _ => None,
                })
                .expect("a ping with a token after END")
        };
        let (black_token, white_token) = (token(black), token(white));
        // White's answer, sent before it read the END: refused, not played.
        referee.handle(Event::Text(white, place(8), Instant::now()));
        referee.handle(Event::Pong(white, Some(white_token)));
        // A heartbeat's pong, or another token, does not seat black.
        referee.handle(Event::Pong(black, None));
        referee.handle(Event::Pong(black, Some(black_token + 100)));
        referee.tick();
        assert!(referee.games.is_empty(), "black has not answered yet");
        // The heartbeat asks black for the token again, and black answers
        // that one only.
        referee.last_ping = Instant::now() - referee.config.ping_interval;
        referee.tick();
        assert_eq!(token(black), black_token);
        referee.handle(Event::Pong(black, Some(black_token)));
        referee.tick();
        assert_eq!(referee.games.len(), 1, "paired again");
        assert_eq!(referee.games[0].players[0], white);
        assert_eq!(referee.games[0].game.moves(), 0);
        // A move sent after START is played.
        referee.handle(Event::Text(white, place(8), Instant::now()));
        assert_eq!(referee.games[0].game.moves(), 1);
    }
}
