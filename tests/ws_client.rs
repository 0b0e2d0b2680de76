//! `pbrain-wuzi connect`: the engine as a client of the WebSocket game
//! server, against a scripted opponent: it names itself, plays legal moves
//! within its time, and resumes after the opponent drops and comes back.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};
use wuzi::game::{BoardSize, Rule};
use wuzi::ws::{Server, ServerConfig};

type Socket = WebSocket<MaybeTlsStream<TcpStream>>;

struct Engine(Child);

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn next(socket: &mut Socket) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Message::Text(text) = socket.read().expect("read") {
            return serde_json::from_str(&text).expect("JSON");
        }
    }
    panic!("no message");
}

fn connect(server: &Server, name: &str) -> Socket {
    let (mut socket, _) = tungstenite::connect(format!("ws://{}/", server.address)).expect("connect");
    if let MaybeTlsStream::Plain(s) = socket.get_ref() {
        s.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
    }
    assert_eq!(next(&mut socket)["type"], "NAME");
    let hello = json!({"type": "NAME", "name": name});
    socket.send(Message::text(hello.to_string())).expect("send");
    socket
}

fn place(row: u32, column: u32) -> String {
    json!({"type": "MOVE", "move": {"type": "place", "point": {"row": row, "column": column}}})
        .to_string()
}

#[test]
fn the_engine_plays_and_resumes_a_game() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let config = ServerConfig {
        size: BoardSize::FIFTEEN,
        rule: Rule::Freestyle,
        time: Duration::from_secs(60),
        ping_interval: Duration::from_millis(300),
        auto_pair: true,
    };
    let server = Server::spawn(listener, config, "page").expect("server");
    // The engine connects first, so it is black; pings every 300 ms test
    // that it answers them while it thinks.
    let _engine = Engine(
        Command::new(env!("CARGO_BIN_EXE_pbrain-wuzi"))
            .args(["--threads", "1", "connect"])
            .arg(format!("ws://{}/", server.address))
            .args(["--name", "wuzi"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the engine"),
    );
    std::thread::sleep(Duration::from_millis(1500));
    let mut me = connect(&server, "scripted");
    let start = next(&mut me);
    assert_eq!(start["type"], "START", "{start}");
    assert_eq!(start["color"], "W");
    // A few moves: each of the engine's arrives as MOVE on an empty cell.
    let mut taken = vec![vec![false; 15]; 15];
    let mut logged = 0;
    let quiet = [(0, 0), (0, 14), (14, 0), (14, 14)];
    for (row, column) in quiet {
        let moved = next(&mut me);
        assert_eq!(moved["type"], "MOVE", "{moved}");
        let point = &moved["move"]["point"];
        let (r, c) = (point["row"].as_u64().unwrap() as usize, point["column"].as_u64().unwrap() as usize);
        assert!(!taken[r][c], "{moved}");
        taken[r][c] = true;
        logged += 1;
        assert!(moved["remainingTime"]["B"].as_u64().unwrap() < 60_000);
        if taken[row][column] {
            break;
        }
        me.send(Message::text(place(row as u32, column as u32))).expect("send");
        assert_eq!(next(&mut me)["type"], "VALID");
        taken[row][column] = true;
        logged += 1;
    }
    // We drop (while the engine thinks) and come back: the engine gets END
    // error, then a START with the log, and plays on (it is its turn).
    assert_eq!(logged % 2, 0, "the engine is to move");
    drop(me);
    let mut me = connect(&server, "scripted");
    let start = next(&mut me);
    assert_eq!(start["type"], "START", "{start}");
    assert_eq!(start["configuration"]["moveLog"].as_array().map(Vec::len), Some(logged));
    let moved = next(&mut me);
    assert_eq!(moved["type"], "MOVE", "{moved}");
    let point = &moved["move"]["point"];
    let (r, c) = (point["row"].as_u64().unwrap() as usize, point["column"].as_u64().unwrap() as usize);
    assert!(!taken[r][c], "the engine's board after the resume: {moved}");
}
