//! What a flood of messages costs an honest game on the game server
//! (`pbrain-wuzi bench serve`): the time from a player's move to both
//! players' answers, without and then with clients that send as fast as
//! they can and reconnect whenever the server closes them for it.

use std::fmt;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tungstenite::Message;
use wuzi_game::game::{BoardSize, Rule};

use super::client::{self, send, Socket};
use super::{Server, ServerConfig};

/// How long any answer may take before the measurement gives up.
const ANSWER_LIMIT: Duration = Duration::from_secs(10);

/// The least time from one move of the honest game to the next.
const MOVE_SPACING: Duration = Duration::from_millis(12);

/// The times of one phase's moves.
pub struct Latencies {
    sorted: Vec<Duration>,
}

impl Latencies {
    fn new(mut samples: Vec<Duration>) -> Latencies {
        samples.sort();
        Latencies { sorted: samples }
    }

    /// The `q` quantile (0..=1) by the nearest rank.
    pub fn quantile(&self, q: f64) -> Duration {
        if self.sorted.is_empty() {
            return Duration::ZERO;
        }
        let rank = (q.clamp(0.0, 1.0) * (self.sorted.len() - 1) as f64).round() as usize;
        self.sorted[rank]
    }

    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }
}

impl fmt::Display for Latencies {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        write!(
            f,
            "median {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({} moves)",
            ms(self.quantile(0.5)),
            ms(self.quantile(0.9)),
            ms(self.quantile(0.99)),
            ms(self.quantile(1.0)),
            self.len()
        )
    }
}

/// The two phases and what the flooders did.
pub struct FloodReport {
    pub quiet: Latencies,
    pub flooded: Latencies,
    pub flooders: usize,
    /// Messages the flooders got sent, in all.
    pub flood_messages: u64,
    /// Connections the flooders opened, in all (one more after each close).
    pub flood_connections: u64,
    pub flood_time: Duration,
}

impl fmt::Display for FloodReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let seconds = self.flood_time.as_secs_f64().max(1e-9);
        writeln!(f, "bench serve: quiet: {}", self.quiet)?;
        writeln!(
            f,
            "bench serve: {} flooders: {}",
            self.flooders, self.flooded
        )?;
        write!(
            f,
            "bench serve: the flooders sent {} messages over {} connections in {:.1} s \
             ({:.0} messages/s, {:.0} connections/s)",
            self.flood_messages,
            self.flood_connections,
            seconds,
            self.flood_messages as f64 / seconds,
            self.flood_connections as f64 / seconds
        )
    }
}

/// Plays `moves` moves of an honest game on a fresh server on the loopback,
/// then `moves` more with `flooders` clients flooding it, timing each move
/// from its sending to both players' answers. The flooders run on this
/// machine too, so their own cost is in the figure.
pub fn measure(flooders: usize, moves: usize) -> Result<FloodReport, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
    let config = ServerConfig {
        size: BoardSize::new(20, 20).map_err(|e| e.to_string())?,
        rule: Rule::Freestyle,
        time: Duration::from_secs(3600),
        ping_interval: Duration::from_secs(60),
        auto_pair: true,
        ..ServerConfig::default()
    };
    let server = Server::spawn(listener, config, "bench").map_err(|e| format!("serve: {e}"))?;
    let cells = no_five_cells(20);
    let of_colour = |parity| -> Vec<(u32, u32)> {
        cells
            .iter()
            .copied()
            .filter(|&(r, c)| (r + c) % 2 == parity)
            .collect()
    };
    let (black_cells, white_cells) = (of_colour(0), of_colour(1));
    // Both phases' moves come from one game on these cells.
    let moves = moves.min(black_cells.len().min(white_cells.len()));
    let (mut black, mut white) = pair(server.address)?;
    let mut played = 0usize;
    let mut play = |count: usize| -> Result<Vec<Duration>, String> {
        let mut times = Vec::with_capacity(count);
        for _ in 0..count {
            let (mover, other, cells) = if played % 2 == 0 {
                (&mut black, &mut white, &black_cells)
            } else {
                (&mut white, &mut black, &white_cells)
            };
            let &(row, column) = cells.get(played / 2).ok_or("the board is full")?;
            played += 1;
            let start = Instant::now();
            send(
                mover,
                json!({"type": "MOVE", "move": {"type": "place",
                       "point": {"row": row, "column": column}}}),
            )?;
            expect(mover, "VALID")?;
            expect(other, "MOVE")?;
            times.push(start.elapsed());
            // Each player sends fewer than the server's 100 messages a
            // second, or it would be closed as a flooder itself.
            std::thread::sleep(MOVE_SPACING.saturating_sub(start.elapsed()));
        }
        Ok(times)
    };
    let quiet = play(moves)?;

    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let opened = Arc::new(AtomicU64::new(0));
    let flood_start = Instant::now();
    let threads: Vec<_> = (0..flooders)
        .map(|_| {
            let (stop, sent, opened) = (stop.clone(), sent.clone(), opened.clone());
            let address = server.address;
            std::thread::spawn(move || flood(address, &stop, &sent, &opened))
        })
        .collect();
    // Let every flooder reach its pace.
    std::thread::sleep(Duration::from_millis(200));
    let flooded = play(moves);
    stop.store(true, Ordering::SeqCst);
    let flood_time = flood_start.elapsed();
    for thread in threads {
        let _ = thread.join();
    }
    Ok(FloodReport {
        quiet: Latencies::new(quiet),
        flooded: Latencies::new(flooded?),
        flooders,
        flood_messages: sent.load(Ordering::SeqCst),
        flood_connections: opened.load(Ordering::SeqCst),
        flood_time,
    })
}

/// Cells to play in order, black on those with an even row + column and
/// white on the odd ones: rows and columns then alternate colours, and
/// each diagonal, which keeps one colour, is cut by a skipped cell every
/// fourth: no five, however long the game.
fn no_five_cells(side: u32) -> Vec<(u32, u32)> {
    let mut cells = Vec::new();
    for row in 0..side as i64 {
        for column in 0..side as i64 {
            let parity = (row + column) % 2;
            // Along a diagonal (row - column fixed) row + column steps by 2;
            // along an anti-diagonal row - column does.
            let cut =
                (row + column).rem_euclid(8) == parity || (row - column).rem_euclid(8) == parity;
            if !cut {
                cells.push((row as u32, column as u32));
            }
        }
    }
    cells
}

/// One flooder: connects, sends text as fast as the socket takes it until
/// the server closes it, and again, until `stop`.
fn flood(address: SocketAddr, stop: &AtomicBool, sent: &AtomicU64, opened: &AtomicU64) {
    while !stop.load(Ordering::SeqCst) {
        let Ok((mut socket, _)) = tungstenite::connect(format!("ws://{address}/")) else {
            std::thread::sleep(Duration::from_millis(1));
            continue;
        };
        opened.fetch_add(1, Ordering::SeqCst);
        while !stop.load(Ordering::SeqCst) {
            if socket.send(Message::text("{}")).is_err() {
                break;
            }
            sent.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Two named clients, paired: (black, white).
fn pair(address: SocketAddr) -> Result<(Socket, Socket), String> {
    let mut first = connect(address, "bench-a")?;
    let mut second = connect(address, "bench-b")?;
    let start = expect(&mut first, "START")?;
    expect(&mut second, "START")?;
    if start["color"] == "B" {
        Ok((first, second))
    } else {
        Ok((second, first))
    }
}

fn connect(address: SocketAddr, name: &str) -> Result<Socket, String> {
    let mut socket = client::open(address, ANSWER_LIMIT)?;
    client::name(&mut socket, name, "v2")?;
    Ok(socket)
}

fn expect(socket: &mut Socket, kind: &str) -> Result<Value, String> {
    client::expect(socket, kind, ANSWER_LIMIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The honest game's cells never give either colour five, so the game
    /// the bench plays cannot end before its moves are done.
    #[test]
    fn the_bench_games_cells_make_no_five() {
        let side = 20i64;
        let cells = no_five_cells(side as u32);
        let colour = |r: i64, c: i64| -> Option<i64> {
            cells
                .contains(&(r as u32, c as u32))
                .then_some((r + c) % 2)
                .filter(|_| (0..side).contains(&r) && (0..side).contains(&c))
        };
        let mut longest = 0;
        for &(r, c) in &cells {
            let (r, c) = (r as i64, c as i64);
            for (dr, dc) in [(0, 1), (1, 0), (1, 1), (1, -1)] {
                let mut run = 1;
                while colour(r + run * dr, c + run * dc) == colour(r, c) {
                    run += 1;
                }
                longest = longest.max(run);
            }
        }
        assert_eq!(longest, 3);
        // Enough for both phases of the bench, alternating colours.
        let black = cells.iter().filter(|&&(r, c)| (r + c) % 2 == 0).count();
        assert!(
            black >= 100 && cells.len() - black >= 100,
            "{black} of {}",
            cells.len()
        );
    }
}
