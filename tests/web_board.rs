//! The web board in a real headless browser (Debian's Chromium, driven
//! through the DevTools protocol): a person joins, the board's Start button
//! starts a game against the engine (beside another game, started first),
//! a click on the board sends a move, the engine answers, and the board
//! shows both stones of the person's own game. A screenshot is saved
//! to target/web-board.png.
//!
//! Needs Chromium (`/usr/bin/chromium`, or the path in WUZI_CHROMIUM);
//! `scripts/test.sh` installs it where it can. WUZI_SKIP_BROWSER=1 skips
//! this test on a machine without one.

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use common::{free_port, pbrain_wuzi, Killed};
use serde_json::{json, Value};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};
use wuzi::game::{BoardSize, Rule};
use wuzi::ws::{Server, ServerConfig, PAGE};

/// A plain HTTP GET on the loopback: the body, read up to its
/// Content-Length (Chromium keeps the connection open).
fn http_get(port: u16, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut response = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let text = String::from_utf8_lossy(&response).to_string();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head.lines().find_map(|l| {
                let (key, value) = l.split_once(':')?;
                key.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse::<usize>().ok())?
            });
            if length.is_some_and(|n| body.len() >= n) {
                return Some(body.to_string());
            }
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => {
                let text = String::from_utf8_lossy(&response).to_string();
                return text
                    .split_once("\r\n\r\n")
                    .map(|(_, body)| body.to_string());
            }
            Ok(n) => response.extend_from_slice(&buf[..n]),
        }
    }
}

/// A DevTools session with one page.
struct Page {
    socket: WebSocket<MaybeTlsStream<TcpStream>>,
    next_id: u64,
}

impl Page {
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({"id": id, "method": method, "params": params});
        self.socket
            .send(Message::text(request.to_string()))
            .expect("send to Chromium");
        loop {
            let Message::Text(text) = self.socket.read().expect("read from Chromium") else {
                continue;
            };
            let reply: Value = serde_json::from_str(&text).expect("JSON from Chromium");
            if reply["id"] == id {
                assert!(reply.get("error").is_none(), "{method}: {reply}");
                return reply["result"].clone();
            }
        }
    }

    /// Evaluates JavaScript in the page and returns its value.
    fn eval(&mut self, expression: &str) -> Value {
        let result = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        assert!(
            result.get("exceptionDetails").is_none(),
            "{expression}: {result}"
        );
        result["result"]["value"].clone()
    }

    /// Waits until `expression` is true in the page (an exception, as
    /// while the page is still loading, counts as false).
    fn wait_for(&mut self, expression: &str, what: &str) {
        let guarded = format!(
            "(() => {{ try {{ return !!({expression}); }} catch (e) {{ return false; }} }})()"
        );
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if self.eval(&guarded) == json!(true) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("{what}: not seen in 60 s");
    }
}

/// The board's pickers and Start button: a game between two named clients.
fn start_game(page: &mut Page, black: &str, white: &str) {
    page.eval(&format!(
        "(() => {{ const id = n => state.clients.find(c => c.name === n).id; \
           $('pickB').value = id('{black}'); $('pickW').value = id('{white}'); \
           $('start').click(); return true; }})()"
    ));
}

#[test]
fn a_person_plays_the_engine_in_the_browser() {
    if std::env::var_os("WUZI_SKIP_BROWSER").is_some() {
        eprintln!("skipped: WUZI_SKIP_BROWSER is set");
        return;
    }
    let chromium = std::env::var("WUZI_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        std::path::Path::new(&chromium).exists(),
        "{chromium} is missing: install Debian's chromium (scripts/test.sh does as root), \
         point WUZI_CHROMIUM at a Chromium, or set WUZI_SKIP_BROWSER=1"
    );
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let config = ServerConfig {
        size: BoardSize::FIFTEEN,
        rule: Rule::Freestyle,
        time: Duration::from_secs(120),
        ping_interval: Duration::from_secs(5),
        auto_pair: false,
        ..ServerConfig::default()
    };
    let server = Server::spawn(listener, config, PAGE).expect("server");
    let url = format!("ws://{}/", server.address);
    let _engine = pbrain_wuzi(&["--threads", "1", "connect", &url, "--name", "wuzi"]);
    let profile = tempfile::tempdir().expect("a profile folder");
    let port = free_port();
    let _browser = Killed(
        Command::new(&chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--window-size=1100,700",
            ])
            .arg(format!("--remote-debugging-port={port}"))
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(format!("http://{}/", server.address))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start Chromium"),
    );
    // The page's DevTools address.
    let deadline = Instant::now() + Duration::from_secs(30);
    let url = loop {
        let pages: Option<Value> =
            http_get(port, "/json/list").and_then(|b| serde_json::from_str(&b).ok());
        let found = pages.as_ref().and_then(|p| p.as_array()).and_then(|list| {
            list.iter()
                .find(|t| {
                    t["type"] == "page"
                        && t["url"]
                            .as_str()
                            .is_some_and(|u| u.contains(&server.address.to_string()))
                })
                .and_then(|t| t["webSocketDebuggerUrl"].as_str().map(str::to_string))
        });
        if let Some(url) = found {
            break url;
        }
        assert!(Instant::now() < deadline, "Chromium did not open the page");
        std::thread::sleep(Duration::from_millis(200));
    };
    let (socket, _) = tungstenite::connect(url).expect("DevTools");
    if let MaybeTlsStream::Plain(s) = socket.get_ref() {
        s.set_read_timeout(Some(Duration::from_secs(60)))
            .expect("timeout");
    }
    let mut page = Page { socket, next_id: 0 };

    page.wait_for(
        "state !== null && state.clients.some(c => c.name === 'wuzi')",
        "the engine in the client list",
    );
    // Two clients that play the server's first game, so that the person's
    // game is the second: the board must show the person's own game.
    for name in ["x1", "x2"] {
        let (mut socket, _) = tungstenite::connect(format!("ws://{}/", server.address))
            .expect("a bystander connects");
        let hello = socket.read().expect("NAME");
        assert!(hello.to_text().unwrap_or("").contains("NAME"), "{hello}");
        socket
            .send(Message::text(
                json!({"type": "NAME", "name": name, "protocol": "v1"}).to_string(),
            ))
            .expect("send NAME");
        // Reading answers the server's pings: a silent client is dropped,
        // and its game with it.
        std::thread::spawn(move || while socket.read().is_ok() {});
    }
    page.wait_for(
        "state.clients.some(c => c.name === 'x2')",
        "the bystanders in the client list",
    );
    start_game(&mut page, "x1", "x2");
    page.wait_for("state.games === 1", "the bystanders' game");
    page.eval("$('myname').value = 'human'; $('join').click(); true");
    page.wait_for(
        "state.clients.some(c => c.name === 'human')",
        "the person in the client list",
    );
    // The board's pickers and Start button: the person black, the engine white.
    start_game(&mut page, "human", "wuzi");
    page.wait_for(
        "me !== null && me.color === 'B' && me.turn === 'B'",
        "our turn as black",
    );
    // A click on the centre point (row 7, column 7).
    page.eval(
        "(() => { const g = geometry(15, 15); const r = canvas.getBoundingClientRect(); \
           canvas.dispatchEvent(new MouseEvent('click', {bubbles: true, \
             clientX: r.left + g.x0 + 7 * g.cell, clientY: r.top + g.y0 + 7 * g.cell})); return true; })()",
    );
    page.wait_for(
        "shownGame() !== null && shownGame().board[7][7] === 'B' \
           && shownGame().board.flat().includes('W')",
        "our stone and the engine's answer on the board",
    );
    // The server's picture is of its first game, the bystanders' (empty).
    let first = page.eval("[state.games, state.game.players, state.game.moves]");
    assert_eq!(first, json!([2, {"B": "x1", "W": "x2"}, 0]));
    let game = page.eval("shownGame()");
    let whites = game["board"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|row| row.as_array().unwrap().iter())
        .filter(|c| *c == "W")
        .count();
    assert_eq!(whites, 1, "{game}");
    assert_eq!(
        page.eval("[$('nameB').textContent, $('nameW').textContent]"),
        json!(["human (you)", "opponent"])
    );
    page.wait_for("me.turn === 'B'", "our turn again");
    // The seat's secret is kept for a reload of this tab (a page with the
    // same name elsewhere cannot take the game if it is interrupted).
    page.wait_for(
        "/^[0-9a-f]{32}$/.test(sessionStorage.getItem('wuzi-seat:human') || '')",
        "the seat's secret in the tab's storage",
    );
    let shot = page.call("Page.captureScreenshot", json!({"format": "png"}));
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot["data"].as_str().expect("screenshot data"))
        .expect("base64");
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/web-board.png");
    std::fs::write(&out, png).expect("write the screenshot");
    // A dropped connection rejoins by itself, and the game resumes where
    // it was: our stone and the engine's, our turn.
    page.eval("me.socket.close(); true");
    page.wait_for(
        "$('status').textContent.includes('rejoining')",
        "the page rejoining",
    );
    page.wait_for(
        "me !== null && me.color === 'B' && me.turn === 'B' && me.board[7][7] === 'B' \
           && me.board.flat().includes('W')",
        "the game resumed",
    );
    // Resigning on our turn ends the game, and the secret with it.
    page.eval("$('resign').click(); true");
    page.wait_for(
        "$('status').textContent.includes('resign') \
           && $('status').textContent.includes('you lost') \
           && sessionStorage.getItem('wuzi-seat:human') === null",
        "the game over by resignation",
    );
}
