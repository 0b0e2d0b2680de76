//! A plain client of the game server, for what drives it from outside:
//! `bench serve`'s players (`flood`) and the server's tests. Every call
//! gives up after a time limit and says why, rather than block or panic.

use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

/// A client's connection.
pub type Socket = WebSocket<MaybeTlsStream<TcpStream>>;

/// Connects to the game server at `address` and reads its first message,
/// which must ask for a name. Each read of the socket then waits at most
/// `limit`.
pub fn open(address: SocketAddr, limit: Duration) -> Result<Socket, String> {
    let (mut socket, _) =
        tungstenite::connect(format!("ws://{address}/")).map_err(|e| format!("connect: {e}"))?;
    if let MaybeTlsStream::Plain(stream) = socket.get_ref() {
        stream
            .set_read_timeout(Some(limit))
            .map_err(|e| format!("connect: {e}"))?;
    }
    let first = next(&mut socket, limit)?;
    if first["type"] != "NAME" {
        return Err(format!("the server's first message is not NAME: {first}"));
    }
    Ok(socket)
}

/// Answers the server's NAME request.
pub fn name(socket: &mut Socket, name: &str, protocol: &str) -> Result<(), String> {
    send(
        socket,
        json!({"type": "NAME", "name": name, "protocol": protocol}),
    )
}

pub fn send(socket: &mut Socket, value: Value) -> Result<(), String> {
    socket
        .send(Message::text(value.to_string()))
        .map_err(|e| format!("send: {e}"))
}

/// The next message (pings are answered by the library). `limit` bounds
/// the time spent skipping other frames; a single read waits as long as
/// the socket's read timeout ([`open`] sets it to its own limit).
pub fn next(socket: &mut Socket, limit: Duration) -> Result<Value, String> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        match socket.read() {
            Ok(Message::Text(text)) => {
                return serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))
            }
            Ok(_) => {}
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    Err(format!("no message within {limit:?}"))
}

/// Reads the ping that follows a game's END and sends its pong now. A
/// client reading its socket answers it by itself (the server seats it in
/// no new game before); a caller that holds several clients and waits on
/// one of them answers the others' with this first.
pub fn answer_ping(socket: &mut Socket, limit: Duration) -> Result<(), String> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        match socket.read() {
            Ok(Message::Ping(_)) => return socket.flush().map_err(|e| format!("pong: {e}")),
            Ok(Message::Text(text)) => return Err(format!("a message before the ping: {text}")),
            Ok(_) => {}
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    Err(format!("no ping within {limit:?}"))
}

/// Reads until a message of type `kind`, giving up once `limit` has
/// passed (a read under way finishes first, as in [`next`]); others (such
/// as the clocks) are skipped, but the game's END is an error.
pub fn expect(socket: &mut Socket, kind: &str, limit: Duration) -> Result<Value, String> {
    let deadline = Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let value = next(socket, left).map_err(|e| format!("waiting for {kind}: {e}"))?;
        if value["type"] == kind {
            return Ok(value);
        }
        if value["type"] == "END" {
            return Err(format!("the game ended: {value}"));
        }
    }
}
