//! The WebSocket game server with real connections: naming, pairing, the
//! referee's answers, the end of a game, a disconnection and the resumed
//! game, the heartbeat, and the page on the same port.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::Message;
use wuzi_arena::ws::client::{self, Socket};
use wuzi_arena::ws::{Server, ServerConfig, ServerStats};
use wuzi_game::game::{BoardSize, Rule};

/// Held by the tests that load this process heavily (hundreds of
/// connections), so that the memory test never measures another's crowd.
static HEAVY: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn heavy() -> std::sync::MutexGuard<'static, ()> {
    HEAVY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn server(ping: Duration) -> Server {
    server_with(ping, true)
}

fn server_with(ping: Duration, auto_pair: bool) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let config = ServerConfig {
        size: BoardSize::FIFTEEN,
        rule: Rule::Freestyle,
        time: Duration::from_secs(60),
        ping_interval: ping,
        auto_pair,
        ..ServerConfig::default()
    };
    Server::spawn(listener, config, "<html>board</html>").expect("spawn")
}

/// How long a test's client waits for any one message: long enough for a
/// hundred clients at once on a loaded 2-core CI machine (10 s was once too
/// short there), short enough that a hang still fails.
const ANSWER: Duration = Duration::from_secs(30);

/// A client: connects and reads the server's NAME.
/// The code of the close frame the server ends `socket` with (`None`: it
/// closed without one, or not at all within the client's timeout).
fn close_code(socket: &mut Socket) -> Option<CloseCode> {
    loop {
        match socket.read() {
            Ok(Message::Close(frame)) => return frame.map(|f| f.code),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
}

fn connect(server: &Server) -> Socket {
    client::open(server.address, ANSWER).expect("connect")
}

/// The next JSON message (pings are answered by the library).
fn next(socket: &mut Socket) -> Value {
    client::next(socket, ANSWER).expect("a message")
}

fn send(socket: &mut Socket, value: Value) {
    client::send(socket, value).expect("send");
}

fn name(socket: &mut Socket, name: &str, protocol: &str) {
    client::name(socket, name, protocol).expect("send");
}

/// Answers the ping after a game's END (see `client::answer_ping`).
fn answer_ping(socket: &mut Socket) {
    client::answer_ping(socket, ANSWER).expect("a ping after END");
}

fn place(row: u32, column: u32) -> Value {
    json!({"type": "MOVE", "move": {"type": "place", "point": {"row": row, "column": column}}})
}

/// Names two clients and returns them as (black, white) from their START.
fn pair(server: &Server, a: &str, b: &str) -> (Socket, Socket, Value) {
    let mut first = connect(server);
    name(&mut first, a, "v2");
    let mut second = connect(server);
    name(&mut second, b, "v1");
    let start1 = next(&mut first);
    let start2 = next(&mut second);
    assert_eq!(start1["type"], "START");
    assert_eq!(start2["type"], "START");
    assert_ne!(start1["color"], start2["color"]);
    // v2 gets finalStates, v1 does not.
    assert!(start1["configuration"]["finalStates"].is_array());
    assert!(start2["configuration"].get("finalStates").is_none());
    if start1["color"] == "B" {
        (first, second, start1)
    } else {
        (second, first, start2)
    }
}

#[test]
fn a_game_is_refereed_to_its_five() {
    let server = server(Duration::from_secs(30));
    let (mut black, mut white, start) = pair(&server, "alpha", "beta");
    let config = &start["configuration"];
    assert_eq!(config["initialState"]["turn"], "B");
    assert_eq!(
        config["initialState"]["board"].as_array().map(Vec::len),
        Some(15)
    );
    assert_eq!(config["rule"], "freestyle");
    assert_eq!(config["moveLog"].as_array().map(Vec::len), Some(0));
    // Out of turn, then a bad point, then a good move.
    send(&mut white, place(0, 0));
    let invalid = next(&mut white);
    assert_eq!(invalid["type"], "INVALID");
    assert_eq!(invalid["message"], "it is not your turn");
    send(&mut black, place(20, 0));
    assert_eq!(next(&mut black)["type"], "INVALID");
    for i in 0..5u32 {
        send(&mut black, place(7, 3 + i));
        let valid = next(&mut black);
        assert_eq!(valid["type"], "VALID", "{valid}");
        assert!(valid["remainingTime"]["B"].as_u64().unwrap() <= 60_000);
        let moved = next(&mut white);
        assert_eq!(moved["type"], "MOVE");
        assert_eq!(moved["move"]["point"]["column"], 3 + i);
        if i == 4 {
            break;
        }
        // The specification's slip: a move sent as "START" is a move too.
        let mut slipped = place(0, 2 * i);
        slipped["type"] = json!("START");
        send(&mut white, slipped);
        assert_eq!(next(&mut white)["type"], "VALID");
        let echoed = next(&mut black);
        assert_eq!(echoed["type"], "MOVE");
    }
    for socket in [&mut black, &mut white] {
        let end = next(socket);
        assert_eq!(end["type"], "END", "{end}");
        assert_eq!(end["reason"], "five");
        assert_eq!(end["winner"], "B");
        assert_eq!(end["players"]["B"]["score"], 1.0);
        answer_ping(socket);
    }
    // Paired again, with the colours the other way round.
    let (again_black, again_white) = (next(&mut black), next(&mut white));
    assert_eq!(again_black["type"], "START", "{again_black}");
    assert_eq!(
        (again_black["color"].as_str(), again_white["color"].as_str()),
        (Some("W"), Some("B"))
    );
}

/// Two clients named (name, protocol) and paired automatically, black's
/// first move (7,7) played: (black, white, the STARTs in connection order).
fn paired_after_a_move(
    server: &Server,
    clients: [(&str, &str); 2],
) -> (Socket, Socket, [Value; 2]) {
    let mut first = connect(server);
    name(&mut first, clients[0].0, clients[0].1);
    let mut second = connect(server);
    name(&mut second, clients[1].0, clients[1].1);
    let starts = [next(&mut first), next(&mut second)];
    assert!(starts.iter().all(|s| s["type"] == "START"), "{starts:?}");
    let (mut black, mut white) = if starts[0]["color"] == "B" {
        (first, second)
    } else {
        (second, first)
    };
    send(&mut black, place(7, 7));
    assert_eq!(next(&mut black)["type"], "VALID");
    assert_eq!(next(&mut white)["type"], "MOVE");
    (black, white, starts)
}

#[test]
fn a_dropped_player_ends_the_game_and_both_back_resume_it() {
    let server = server(Duration::from_secs(30));
    // Clients of the specification, v1 and v2 without the seat extension:
    // their seats are resumed by name (clients of the extension give their
    // seat's secret too: the name-thief test).
    let (mut black, white, starts) =
        paired_after_a_move(&server, [("black-player", "v1"), ("white-player", "v2")]);
    assert!(starts.iter().all(|s| s.get("seat").is_none()), "{starts:?}");
    // White is gone: black gets END error.
    drop(white);
    let end = next(&mut black);
    assert_eq!(
        (end["type"].as_str(), end["reason"].as_str()),
        (Some("END"), Some("error"))
    );
    answer_ping(&mut black);
    // White comes back under its name: the game resumes from the log.
    let mut white = connect(&server);
    name(&mut white, "white-player", "v2");
    let start_white = next(&mut white);
    let start_black = next(&mut black);
    assert_eq!(start_white["color"], "W");
    assert_eq!(start_black["color"], "B");
    let log = start_white["configuration"]["moveLog"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["move"]["point"], json!({"row": 7, "column": 7}));
    let states = start_white["configuration"]["finalStates"]
        .as_array()
        .unwrap();
    assert_eq!(states.len(), 2);
    assert_eq!(states[1]["board"][7][7], "B");
    assert_eq!(states[1]["turn"], "W");
    // White's move is accepted after the resume.
    send(&mut white, place(7, 8));
    assert_eq!(next(&mut white)["type"], "VALID");
    assert_eq!(next(&mut black)["type"], "MOVE");
}

/// Two players of one name (the page's default "human"): the one who
/// stayed keeps its colour when the other comes back.
#[test]
fn a_resumed_game_keeps_colours_when_both_players_share_a_name() {
    let server = server(Duration::from_secs(30));
    let (black, mut white, _) = paired_after_a_move(&server, [("human", "v1"), ("human", "v1")]);
    // Black is gone and comes back (a reloaded page): still black.
    drop(black);
    let end = next(&mut white);
    assert_eq!(end["reason"], "error", "{end}");
    answer_ping(&mut white);
    let mut black = connect(&server);
    name(&mut black, "human", "v1");
    let (start_black, start_white) = (next(&mut black), next(&mut white));
    assert_eq!(start_black["color"], "B", "{start_black}");
    assert_eq!(start_white["color"], "W", "{start_white}");
    send(&mut white, place(7, 8));
    assert_eq!(next(&mut white)["type"], "VALID");
    assert_eq!(next(&mut black)["type"], "MOVE");
}

#[test]
fn a_client_that_stops_answering_pings_is_dropped() {
    // Long enough that black, reading all along, always answers in time
    // on a busy machine.
    let server = server(Duration::from_secs(1));
    let (mut black, white, _) = pair(&server, "reader", "sleeper");
    // White never reads, so it never answers a ping: within two intervals
    // it is disconnected and black gets END error. Black keeps reading
    // (and so answers its pings).
    let end = next(&mut black);
    assert_eq!(
        (end["type"].as_str(), end["reason"].as_str()),
        (Some("END"), Some("error"))
    );
    drop(white);
}

/// A player that connects but never names itself (its pings are answered
/// by its WebSocket library) is told and closed after the naming time, so
/// that such connections cannot hold every slot of the server.
#[test]
fn a_client_that_never_names_itself_is_closed() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let config = ServerConfig {
        name_timeout: Duration::from_millis(500),
        ..ServerConfig::default()
    };
    let server = Server::spawn(listener, config, "<html>board</html>").expect("spawn");
    let mut silent = connect(&server);
    let mut named = connect(&server);
    name(&mut named, "patient", "v2");
    let told = next(&mut silent);
    assert_eq!(told["type"], "INVALID", "{told}");
    assert!(
        told["message"]
            .as_str()
            .is_some_and(|m| m.contains("no NAME")),
        "{told}"
    );
    assert!(client::next(&mut silent, ANSWER).is_err(), "still open");
    // The named one waits on, with its connection.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(server.stats().clients, 1);
    drop(named);
}

#[test]
fn the_page_is_served_on_the_same_port() {
    let server = server(Duration::from_secs(30));
    let mut stream = TcpStream::connect(server.address).expect("connect");
    stream
        .write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .expect("request");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("response");
    assert!(response.starts_with("HTTP/1.1 200 OK"), "{response}");
    assert!(response.ends_with("<html>board</html>"), "{response}");
    // A browser's head with 6 KB of cookies: served whole, not reset.
    let mut stream = TcpStream::connect(server.address).expect("connect");
    let cookies = "c".repeat(6000);
    write!(
        stream,
        "GET / HTTP/1.1\r\nHost: localhost\r\nCookie: a={cookies}\r\n\r\n"
    )
    .expect("request");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .expect("response, not a reset");
    assert!(response.ends_with("<html>board</html>"), "{response}");
}

/// The web board's channel (`/watch`): the state after every change, a
/// game started by its button, a player's INFO shown, the result kept.
#[test]
fn the_web_board_watches_and_starts_games() {
    let server = server_with(Duration::from_secs(30), false);
    let (mut viewer, _) =
        tungstenite::connect(format!("ws://{}/watch", server.address)).expect("watch");
    if let tungstenite::stream::MaybeTlsStream::Plain(s) = viewer.get_ref() {
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
    }
    let mut a = connect(&server);
    name(&mut a, "anna", "v1");
    let mut b = connect(&server);
    name(&mut b, "bert", "v1");
    // Without automatic pairing, no game starts: the viewer sees two
    // named clients and no game.
    let mut state = next(&mut viewer);
    while state["clients"]
        .as_array()
        .map_or(0, |c| c.iter().filter(|c| c["name"].is_string()).count())
        < 2
    {
        state = next(&mut viewer);
    }
    assert_eq!(state["type"], "STATE");
    assert!(state["game"].is_null());
    assert_eq!(state["size"], json!([15, 15]));
    let id = |who: &str| {
        state["clients"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == who)
            .unwrap()["id"]
            .clone()
    };
    // A game it cannot start is answered with why.
    send(
        &mut viewer,
        json!({"type": "START_GAME", "black": id("bert"), "white": id("bert")}),
    );
    let mut refused = next(&mut viewer);
    while refused["type"] == "STATE" {
        refused = next(&mut viewer);
    }
    assert_eq!(refused["type"], "REFUSED", "{refused}");
    assert_eq!(refused["request"], "START_GAME");
    assert_eq!(refused["reason"], "pick two different named clients");
    let start = json!({"type": "START_GAME", "black": id("bert"), "white": id("anna")});
    send(&mut viewer, start);
    assert_eq!(next(&mut b)["color"], "B");
    assert_eq!(next(&mut a)["color"], "W");
    // Bert tells what he thinks, then plays. The web boards get what
    // they can show of his line: its first 16 moves on the board.
    let mut pv = vec![json!({"row": 40, "column": 2})];
    pv.extend((0..30).map(|i| json!({"row": 7, "column": i % 15})));
    send(&mut b, json!({"type": "INFO", "winrate": 0.6, "pv": pv}));
    send(&mut b, place(7, 7));
    assert_eq!(next(&mut b)["type"], "VALID");
    let mut state = next(&mut viewer);
    while state["game"].is_null() || state["game"]["moves"] != 1 {
        state = next(&mut viewer);
    }
    let game = &state["game"];
    assert_eq!(game["players"], json!({"B": "bert", "W": "anna"}));
    assert_eq!(game["board"][7][7], "B");
    assert_eq!(game["last"], json!({"row": 7, "column": 7}));
    assert_eq!(game["turn"], "W");
    assert_eq!(game["analysis"]["B"]["winrate"], 0.6);
    let shown = game["analysis"]["B"]["pv"].as_array().expect("pv");
    assert_eq!(shown.len(), 16, "{shown:?}");
    assert_eq!(shown[0], json!({"row": 7, "column": 0}));
    // Anna resigns: the viewer gets the result with the final board.
    send(&mut a, json!({"type": "MOVE", "move": {"type": "resign"}}));
    let mut state = next(&mut viewer);
    while state["result"].is_null() {
        state = next(&mut viewer);
    }
    assert_eq!(state["result"]["reason"], "resign");
    assert_eq!(state["result"]["winner"], "B");
    assert_eq!(state["result"]["final"]["board"][7][7], "B");
    assert!(state["game"].is_null());
}

/// Bad input from a player is answered, never crashes the server, and
/// leaves the game as it was; an oversized frame closes that connection.
#[test]
fn bad_messages_are_answered_and_change_nothing() {
    let server = server(Duration::from_secs(30));
    let (mut black, mut white, _) = pair(&server, "good", "bad");
    send(&mut black, place(7, 7));
    assert_eq!(next(&mut black)["type"], "VALID");
    assert_eq!(next(&mut white)["type"], "MOVE");
    for bad in [
        "{not json".to_string(),
        json!({"type": "MOVE", "move": {"type": "place", "point": {"row": "seven", "column": 7}}})
            .to_string(),
        json!({"type": "MOVE", "move": {"type": "teleport"}}).to_string(),
        json!({"type": "HELLO"}).to_string(),
        json!({"kind": "MOVE"}).to_string(),
        // A second NAME: a player is named once (it would rename itself
        // on every web board, mid-game).
        json!({"type": "NAME", "name": "good", "protocol": "v1"}).to_string(),
    ] {
        white.send(Message::text(bad.clone())).expect("send");
        let answer = next(&mut white);
        assert_eq!(answer["type"], "INVALID", "{bad}: {answer}");
        assert!(
            answer["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{answer}"
        );
        assert!(answer["remainingTime"]["W"].is_u64(), "{answer}");
    }
    // Still white's turn, the board unchanged: the occupied cell is refused,
    // a free one accepted.
    send(&mut white, place(7, 7));
    assert!(next(&mut white)["message"]
        .as_str()
        .unwrap()
        .contains("occupied"));
    send(&mut white, place(7, 8));
    assert_eq!(next(&mut white)["type"], "VALID");
    assert_eq!(next(&mut black)["type"], "MOVE");
    // A 1 MB frame: that connection is closed (the other player gets END
    // error), and the server goes on serving.
    let _ = black.send(Message::text("x".repeat(1 << 20)));
    let end = next(&mut white);
    assert_eq!(
        (end["type"].as_str(), end["reason"].as_str()),
        (Some("END"), Some("error"))
    );
    let mut again = connect(&server);
    name(&mut again, "newcomer", "v1");
    // Names that would look like another's: control and invisible
    // characters are refused.
    for lookalike in ["good\u{200B}", "\u{202E}doog", "go\nod", "good\u{FEFF}"] {
        let mut client = connect(&server);
        send(
            &mut client,
            json!({"type": "NAME", "name": lookalike, "protocol": "v1"}),
        );
        let answer = next(&mut client);
        assert_eq!(answer["type"], "INVALID", "{lookalike:?}: {answer}");
    }
}

/// A scripted player for the load test: plays random free cells of its own
/// copy of the board, drops its connection at random if told to, and
/// returns the END it saw (`None` if it dropped).
fn random_player(
    server_address: std::net::SocketAddr,
    who: &str,
    seed: u64,
    drop_at: Option<usize>,
) -> Option<Value> {
    use wuzi_game::game::{Board, Color};
    let (mut socket, _) = tungstenite::connect(format!("ws://{server_address}/")).expect("connect");
    if let tungstenite::stream::MaybeTlsStream::Plain(s) = socket.get_ref() {
        s.set_read_timeout(Some(Duration::from_secs(60)))
            .expect("timeout");
    }
    let mut rng = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut random = move |n: usize| {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((rng >> 33) as usize) % n
    };
    let mut board = Board::new(BoardSize::new(9, 9).unwrap(), Rule::Freestyle);
    let mut color = Color::Black;
    let mut moves = 0;
    loop {
        let msg = next(&mut socket);
        let kind = msg["type"].as_str().unwrap_or("").to_string();
        let mut my_turn = false;
        match kind.as_str() {
            "NAME" => name(&mut socket, who, "v1"),
            "START" => {
                color = if msg["color"] == "B" {
                    Color::Black
                } else {
                    Color::White
                };
                my_turn = color == Color::Black;
            }
            "MOVE" => {
                let p = &msg["move"]["point"];
                let point = board
                    .point(p["column"].as_i64().unwrap(), p["row"].as_i64().unwrap())
                    .expect("on the board");
                board.play(point).expect("a legal move from the server");
                // After a five or the last empty cell, END follows this MOVE.
                my_turn = board.outcome().is_none();
            }
            "VALID" => {}
            "END" => return Some(msg),
            other => panic!("{who}: unexpected {other}: {msg}"),
        }
        if my_turn {
            moves += 1;
            if drop_at == Some(moves) {
                return None;
            }
            let free: Vec<_> = board.empty_cells().collect();
            let p = free[random(free.len())];
            board.play(p).expect("free");
            assert_eq!(board.side_to_move(), color.opponent());
            send(&mut socket, place(u32::from(p.y()), u32::from(p.x())));
        }
    }
}

/// Waits (at most 20 s) until the server holds nothing but `late`
/// clients: no game, no connection beyond theirs, no interrupted game.
fn drained(server: &Server, late: usize) -> ServerStats {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let stats = server.stats();
        let empty = ServerStats {
            clients: late,
            connections: late,
            // Running totals, not what is held.
            refused: stats.refused,
            slow_viewers_dropped: stats.slow_viewers_dropped,
            ..ServerStats::default()
        };
        if stats == empty || Instant::now() > deadline {
            return stats;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The system allocator, counting the bytes allocated and not yet freed:
/// what the server holds, without the allocator's pools and the thread
/// stacks that make the resident size vary by megabytes from round to round.
struct CountingAllocator;

static LIVE_BYTES: std::sync::atomic::AtomicIsize = std::sync::atomic::AtomicIsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; the
// counter only adds and subtracts the sizes.
unsafe impl std::alloc::GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let p = std::alloc::System.alloc(layout);
        if !p.is_null() {
            LIVE_BYTES.fetch_add(layout.size() as isize, std::sync::atomic::Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        let p = std::alloc::System.alloc_zeroed(layout);
        if !p.is_null() {
            LIVE_BYTES.fetch_add(layout.size() as isize, std::sync::atomic::Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: std::alloc::Layout) {
        std::alloc::System.dealloc(p, layout);
        LIVE_BYTES.fetch_sub(layout.size() as isize, std::sync::atomic::Ordering::Relaxed);
    }

    unsafe fn realloc(&self, p: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        let q = std::alloc::System.realloc(p, layout, size);
        if !q.is_null() {
            LIVE_BYTES.fetch_add(
                size as isize - layout.size() as isize,
                std::sync::atomic::Ordering::Relaxed,
            );
        }
        q
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// The heap bytes this process holds, in KB.
fn live_heap_kb() -> i64 {
    (LIVE_BYTES.load(std::sync::atomic::Ordering::Relaxed) / 1024) as i64
}

/// One round of the load test: 100 clients paired into games at once on
/// a 9x9 board, every tenth dropping its connection at its 5th move.
/// Every player still connected gets an END, and nothing panics (a panic
/// would fail the scoped threads). Returns how many dropped.
fn load_round(address: std::net::SocketAddr, round: u64) -> usize {
    let endings: Vec<Option<Value>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..100u64)
            .map(|i| {
                let drop_at = (i % 10 == 3).then_some(5);
                let who = format!("p{i}");
                scope.spawn(move || random_player(address, &who, 100 * round + i, drop_at))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a player thread"))
            .collect()
    });
    // A dropping player may have seen its game end first (its opponent
    // dropped too, or the game ended before its 5th move).
    let mut dropped = 0;
    for (i, ending) in endings.iter().enumerate() {
        match ending {
            None => {
                assert_eq!(i % 10, 3, "player {i} lost its game");
                dropped += 1;
            }
            Some(end) => {
                let reason = end["reason"].as_str().unwrap();
                assert!(["five", "draw", "error"].contains(&reason), "{end}");
            }
        }
    }
    dropped
}

/// The load test, three times over: after each round the server holds nothing
/// (clients, games and connection threads gone, the interrupted games
/// forgotten after their resume window), and the third round leaves the
/// process no larger than the second did (what a round leaks would show
/// there), then the server still serves.
#[test]
fn a_hundred_clients_play_at_once() {
    let _alone = heavy();
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let config = ServerConfig {
        size: BoardSize::new(9, 9).unwrap(),
        rule: Rule::Freestyle,
        time: Duration::from_secs(30),
        ping_interval: Duration::from_secs(30),
        auto_pair: true,
        resume_window: Duration::from_millis(500),
        ..ServerConfig::default()
    };
    let server = Server::spawn(listener, config, "page").expect("server");
    let address = server.address;
    let before = live_heap_kb();
    let mut after = Vec::new();
    for round in 0..3 {
        let started = Instant::now();
        let dropped = load_round(address, round);
        assert!(dropped >= 5, "round {round}: {dropped} dropped");
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "round {round}: {:?}",
            started.elapsed()
        );
        assert_eq!(drained(&server, 0), ServerStats::default(), "round {round}");
        after.push(live_heap_kb());
    }
    eprintln!(
        "heap held: {before} KB before, {} KB after round 1, {} KB after round 2, \
         {} KB after round 3",
        after[0], after[1], after[2]
    );
    // What a round leaves behind stays; what the other tests of this
    // binary hold at that moment (small servers, none of them heavy)
    // comes and goes. 1 MB: a leak of more than about 10 KB for each of a
    // round's 100 clients fails.
    assert!(
        after[2] <= after[1] + 1024,
        "the heap grew by {} KB in the third round",
        after[2] - after[1]
    );
    let mut late = connect(&server);
    name(&mut late, "late", "v1");
    assert_eq!(drained(&server, 1).clients, 1);
}

#[test]
fn an_interrupted_game_is_forgotten_after_the_resume_window() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let config = ServerConfig {
        ping_interval: Duration::from_secs(30),
        auto_pair: true,
        // Long enough that the checkpoint is still there when the test
        // looks, on a loaded machine too.
        resume_window: Duration::from_secs(1),
        ..ServerConfig::default()
    };
    let server = Server::spawn(listener, config, "page").expect("server");
    let (mut black, white, _) = pair(&server, "north", "south");
    send(&mut black, place(7, 7));
    assert_eq!(next(&mut black)["type"], "VALID");
    drop(white);
    assert_eq!(next(&mut black)["reason"], "error");
    assert_eq!(server.stats().checkpoints, 1);
    drop(black);
    assert_eq!(drained(&server, 0), ServerStats::default());
    // Both back under the same names: a new game, not the old one.
    let (_, _, start) = pair(&server, "north", "south");
    assert_eq!(
        start["configuration"]["moveLog"].as_array().map(Vec::len),
        Some(0),
        "{start}"
    );
}

/// A WebSocket handshake to `path` with extra headers: the server's answer
/// status (101 when the upgrade was accepted).
fn handshake_status(server: &Server, path: &str, headers: &[(&str, String)]) -> u16 {
    use tungstenite::client::IntoClientRequest;
    let mut request = format!("ws://{}{path}", server.address)
        .into_client_request()
        .expect("request");
    for (name, value) in headers {
        request.headers_mut().insert(
            tungstenite::http::HeaderName::from_bytes(name.as_bytes()).expect("name"),
            value.parse().expect("value"),
        );
    }
    match tungstenite::connect(request) {
        Ok((_, response)) => response.status().as_u16(),
        Err(tungstenite::Error::Http(response)) => response.status().as_u16(),
        Err(e) => panic!("{path}: {e}"),
    }
}

/// What a raw connection gets before the server closes it: the bytes read
/// until end of file (the server must close it within `limit`).
/// How long a test waits for the server to close a connection that its own
/// timeouts (a few seconds) should end. Only a bound on a hang: generous,
/// because with the whole suite running on two cores the server's timer
/// thread can be late by seconds.
const CLOSE_WAIT: Duration = Duration::from_secs(30);

fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> Result<String, String> {
    stream.set_read_timeout(Some(limit)).expect("timeout");
    let mut seen = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return Ok(String::from_utf8_lossy(&seen).into_owned()),
            Ok(n) => seen.extend_from_slice(&buf[..n]),
            // A reset is a close too.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                return Ok(String::from_utf8_lossy(&seen).into_owned())
            }
            Err(e) => return Err(format!("still open after {limit:?}: {e}")),
        }
    }
}

/// Clients that misbehave beside an honest game: 20 web boards and 50
/// players that never read, 500 connections that never speak (over the
/// cap, refused at once with 503; the rest closed at the handshake
/// deadline), requests that are not HTTP, a malformed frame after a good
/// handshake, a page of a foreign origin. The honest game plays on to its
/// five, and when the crowd leaves the server holds nothing: no connection
/// thread, client, board, game or interrupted game. (The name thief has
/// its own test.)
#[test]
fn abusive_connections_are_refused_or_dropped_and_an_honest_game_finishes() {
    let _alone = heavy();
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let config = ServerConfig {
        time: Duration::from_secs(60),
        // Not about heartbeats: the deaf crowd and the honest pair (which
        // answers pings only when it reads, between phases that can take
        // seconds each on a busy machine) must not be dropped for pings.
        ping_interval: Duration::from_secs(120),
        auto_pair: true,
        // Automatic pairing starts the honest pair's next game as this one
        // ends, and games among the crowd; their leaving then interrupts
        // them, and they wait this long.
        resume_window: Duration::from_millis(500),
        max_connections: 200,
        // Long enough that no silent connection is let go while the 500
        // connect (so the cap is what turns them away), short for a test.
        handshake_timeout: Duration::from_secs(3),
        write_timeout: Duration::from_secs(1),
        ..ServerConfig::default()
    };
    let server = Server::spawn(listener, config, "<html>board</html>").expect("spawn");
    let (mut black, mut white, _) = pair(&server, "honest-b", "honest-w");
    let mut moves = 0u32;
    // Black's next stone on row 7 (five make the game), white's reply far away.
    fn honest_move(black: &mut Socket, white: &mut Socket, moves: &mut u32) {
        send(black, place(7, 3 + *moves));
        assert_eq!(next(black)["type"], "VALID");
        assert_eq!(next(white)["type"], "MOVE");
        if *moves < 4 {
            send(white, place(0, 2 * *moves));
            assert_eq!(next(white)["type"], "VALID");
            assert_eq!(next(black)["type"], "MOVE");
        }
        *moves += 1;
    }
    honest_move(&mut black, &mut white, &mut moves);

    // Web boards and players that never read (the players are paired
    // among themselves and never move).
    let deaf_boards: Vec<Socket> = (0..20)
        .map(|_| {
            tungstenite::connect(format!("ws://{}/watch", server.address))
                .expect("board")
                .0
        })
        .collect();
    let deaf_players: Vec<Socket> = (0..50)
        .map(|i| {
            let mut s = connect(&server);
            name(&mut s, &format!("deaf-{i}"), "v2");
            s
        })
        .collect();
    honest_move(&mut black, &mut white, &mut moves);
    // Five hundred connections that never speak.
    let mut silent: Vec<TcpStream> = (0..500)
        .map(|_| TcpStream::connect(server.address).expect("connect"))
        .collect();
    let (mut refused, mut closed) = (0, 0);
    for stream in &mut silent {
        let seen = read_until_closed(stream, CLOSE_WAIT).expect("closed");
        if seen.starts_with("HTTP/1.1 503") {
            refused += 1;
        } else {
            assert_eq!(seen, "", "a silent connection got {seen:?}");
            closed += 1;
        }
    }
    // The crowd holds 72 of the 200 places.
    assert!(
        refused >= 200 && closed >= 1,
        "{refused} refused, {closed} closed"
    );
    assert!(server.stats().refused >= 200, "{:?}", server.stats());
    eprintln!("silent connections: {refused} refused, {closed} closed at the deadline");
    let crowded = server.stats();
    assert_eq!(
        (crowded.clients, crowded.viewers, crowded.games),
        (52, 20, 26),
        "{crowded:?}"
    );
    drop(silent);
    honest_move(&mut black, &mut white, &mut moves);

    // Requests that are not HTTP, and one that never ends its head.
    // and a head longer than 4 KiB, which would make the handshake read it
    // byte by byte.
    let long_head = [
        &b"GET / HTTP/1.1\r\nUpgrade: websocket\r\nX: "[..],
        &[b'a'; 10000],
    ]
    .concat();
    for garbage in [
        &b"\x00\x01\x02 not http\r\n\r\n"[..],
        &b"GET / HTTP/1.1\r\nHost: x\r\n"[..],
        &long_head[..],
    ] {
        let mut stream = TcpStream::connect(server.address).expect("connect");
        let _ = stream.write_all(garbage);
        let said = read_until_closed(&mut stream, CLOSE_WAIT).expect("closed");
        if garbage == &long_head[..] {
            assert!(said.starts_with("HTTP/1.1 431"), "{said}");
        }
    }
    // A client that floods messages is closed.
    let mut flood = connect(&server);
    let flooded = (0..1000).any(|_| flood.send(Message::text("{}")).is_err());
    if !flooded {
        if let tungstenite::stream::MaybeTlsStream::Plain(stream) = flood.get_mut() {
            read_until_closed(stream, CLOSE_WAIT).expect("closed");
        }
    }
    drop(flood);
    // Pings count toward the cap too (each would cost a pong).
    let mut pinger = connect(&server);
    let flooded = (0..1000).any(|_| pinger.send(Message::Ping(Vec::new().into())).is_err());
    if !flooded {
        if let tungstenite::stream::MaybeTlsStream::Plain(stream) = pinger.get_mut() {
            read_until_closed(stream, CLOSE_WAIT).expect("closed");
        }
    }
    drop(pinger);
    // So do the fragments of a message that never ends (empty continuation
    // frames, which tungstenite reads without returning a message): the
    // server stops reading and closes, and the writes fail.
    let mut fragments = connect(&server);
    // Named, so that the name timeout does not close it.
    name(&mut fragments, "fragments", "v1");
    if let tungstenite::stream::MaybeTlsStream::Plain(stream) = fragments.get_mut() {
        // Masked with a zero key, as a client must mask; no payload.
        let empty_fragment = [0x00, 0x80, 0, 0, 0, 0].repeat(10_000);
        let began = Instant::now();
        let mut open = stream.write_all(&[0x01, 0x80, 0, 0, 0, 0]).is_ok();
        while open && began.elapsed() < CLOSE_WAIT {
            open = stream.write_all(&empty_fragment).is_ok();
        }
        assert!(!open, "a never-ending message was read for {CLOSE_WAIT:?}");
    }
    drop(fragments);
    // A binary message is none of the protocol's, and a message over the
    // limit too large: the server closes, saying why in its close frame.
    let mut binary = connect(&server);
    binary
        .send(Message::Binary(vec![1u8; 100].into()))
        .expect("send");
    assert_eq!(close_code(&mut binary), Some(CloseCode::Unsupported));
    drop(binary);
    let mut large = connect(&server);
    let _ = large.send(Message::text("x".repeat(70 << 10)));
    assert_eq!(close_code(&mut large), Some(CloseCode::Size));
    drop(large);
    // A malformed frame after a good handshake: the server closes.
    let mut rogue = connect(&server);
    if let tungstenite::stream::MaybeTlsStream::Plain(stream) = rogue.get_mut() {
        stream.write_all(&[0xff; 16]).expect("write");
        read_until_closed(stream, CLOSE_WAIT).expect("closed");
    }
    drop(rogue);
    // A browser page of another origin may not connect; the server's own
    // page may.
    let own = format!("http://{}", server.address);
    assert_eq!(
        handshake_status(
            &server,
            "/watch",
            &[("Origin", "http://evil.example".into())]
        ),
        403
    );
    assert_eq!(
        handshake_status(&server, "/", &[("Origin", "http://evil.example".into())]),
        403
    );
    assert_eq!(handshake_status(&server, "/watch", &[("Origin", own)]), 101);
    // A page under a name the attacker points at this server (DNS
    // rebinding) sends a matching Host: still not the server's own page.
    let port = server.address.port();
    assert_eq!(
        handshake_status(
            &server,
            "/watch",
            &[
                ("Origin", format!("http://evil.example:{port}")),
                ("Host", format!("evil.example:{port}"))
            ]
        ),
        403
    );
    honest_move(&mut black, &mut white, &mut moves);

    while moves < 5 {
        honest_move(&mut black, &mut white, &mut moves);
    }
    for socket in [&mut black, &mut white] {
        let end = next(socket);
        assert_eq!(end["type"], "END", "{end}");
        assert_eq!(end["reason"], "five");
    }
    drop((black, white, deaf_boards, deaf_players));
    let stats = drained(&server, 0);
    assert_eq!(
        (
            stats.connections,
            stats.clients,
            stats.viewers,
            stats.games,
            stats.checkpoints
        ),
        (0, 0, 0, 0, 0),
        "{stats:?}"
    );
}

/// With a token, players and web boards must give it; the page reads it
/// from its own address.
#[test]
fn a_server_token_is_required_of_players_and_web_boards() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let config = ServerConfig {
        token: Some("s3cret".into()),
        ..ServerConfig::default()
    };
    let server = Server::spawn(listener, config, "<html>board</html>").expect("spawn");
    assert_eq!(handshake_status(&server, "/", &[]), 401);
    assert_eq!(handshake_status(&server, "/watch?token=wrong", &[]), 401);
    assert_eq!(handshake_status(&server, "/watch?token=s3cret", &[]), 101);
    let (mut player, _) =
        tungstenite::connect(format!("ws://{}/?token=s3cret", server.address)).expect("connect");
    assert_eq!(next(&mut player)["type"], "NAME");
    // The page itself is served with the token in its address.
    let mut stream = TcpStream::connect(server.address).expect("connect");
    write!(stream, "GET /?token=s3cret HTTP/1.1\r\nHost: x\r\n\r\n").expect("write");
    let page = read_until_closed(&mut stream, CLOSE_WAIT).expect("closed");
    assert!(
        page.starts_with("HTTP/1.1 200") && page.ends_with("<html>board</html>"),
        "{page}"
    );
}

/// Whether `socket` stays silent (no text message) for `time`.
fn stays_silent(socket: &mut Socket, time: Duration) -> bool {
    if let tungstenite::stream::MaybeTlsStream::Plain(s) = socket.get_ref() {
        s.set_read_timeout(Some(time)).expect("timeout");
    }
    let silent = loop {
        match socket.read() {
            Ok(Message::Text(_)) => break false,
            Ok(_) => continue,
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                break true
            }
            Err(e) => panic!("{e}"),
        }
    };
    if let tungstenite::stream::MaybeTlsStream::Plain(s) = socket.get_ref() {
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
    }
    silent
}

/// A v2 player gets its seat's secret in START; when it drops, someone
/// else taking its name does not get its seat, and the player itself,
/// back with the secret, does.
#[test]
fn a_name_thief_does_not_take_a_dropped_players_seat() {
    let server = server(Duration::from_secs(30));
    // Both take part in the seat extension (a `seat` field in NAME).
    let named = |n: &str| json!({"type": "NAME", "name": n, "protocol": "v2", "seat": ""});
    let mut owner = connect(&server);
    send(&mut owner, named("owner"));
    let mut rival = connect(&server);
    send(&mut rival, named("rival"));
    let start = next(&mut owner);
    assert_eq!(start["type"], "START");
    let secret = start["seat"].as_str().expect("a seat secret").to_string();
    assert_eq!(secret.len(), 32, "{secret}");
    let rival_start = next(&mut rival);
    assert_ne!(rival_start["seat"], start["seat"]);
    drop(owner);
    assert_eq!(next(&mut rival)["reason"], "error");
    // The thief: the owner's name without the secret.
    let mut thief = connect(&server);
    name(&mut thief, "owner", "v2");
    assert!(stays_silent(&mut thief, Duration::from_millis(500)));
    // It cannot name itself again, with a guessed secret this time.
    send(
        &mut thief,
        json!({"type": "NAME", "name": "owner", "protocol": "v2", "seat": "0".repeat(32)}),
    );
    let refused = next(&mut thief);
    assert_eq!(refused["type"], "INVALID", "{refused}");
    assert_eq!(refused["message"], "already named", "{refused}");
    // A second one with a wrong secret cannot take the seat either. The
    // interrupted game does not hold back clients that could never resume
    // it: the two are paired together (two web boards under the page's
    // default name used to block each other).
    let mut guesser = connect(&server);
    send(
        &mut guesser,
        json!({"type": "NAME", "name": "owner", "protocol": "v2", "seat": "0".repeat(32)}),
    );
    assert_eq!(next(&mut thief)["type"], "START");
    assert_eq!(next(&mut guesser)["type"], "START");
    assert!(stays_silent(&mut rival, Duration::from_millis(10)));
    // The owner, back with its secret, resumes its game.
    let mut owner = connect(&server);
    send(
        &mut owner,
        json!({"type": "NAME", "name": "owner", "protocol": "v2", "seat": secret}),
    );
    let resumed = next(&mut owner);
    assert_eq!(resumed["type"], "START");
    assert_eq!(resumed["color"], start["color"]);
    assert_eq!(resumed["seat"].as_str(), Some(secret.as_str()));
    assert_eq!(next(&mut rival)["type"], "START");
    assert!(stays_silent(&mut thief, Duration::from_millis(200)));
}

/// Stopping the server ends every connection's threads, a silent client's
/// and a named player's alike, though neither client closes: nothing is
/// left blocked on a socket.
#[test]
fn stopping_the_server_ends_every_connection() {
    let server = server(Duration::from_secs(60));
    let silent = connect(&server);
    let mut player = connect(&server);
    name(&mut player, "stays", "v2");
    let deadline = Instant::now() + Duration::from_secs(5);
    while server.stats().connections < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(server.stats().connections, 2);
    server.stop();
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.stats().connections > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(server.stats().connections, 0, "connection threads left");
    drop((silent, player));
}
