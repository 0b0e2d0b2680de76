//! The messages of the WebSocket game protocol (`websocket-game-protocol.md`
//! in the specifications), as JSON text messages.
//!
//! The protocol was written for Go. For gomoku, the Go-only fields (`komi`,
//! `ko`, `superko`, `mercy`, `mercyStart`, `scoringMethod`,
//! `prisonerScore`, `prisoners`) are sent with neutral values and ignored
//! when received. What gomoku needs besides is added as extension fields
//! that a client of the specification can ignore: `rule` in the game
//! configuration, the end reasons `five` and `draw`, `timedOut` (the
//! colour whose time ran out, since the specification's `END` names no
//! winner on a timeout) and `forbidden` in MOVE and VALID (renju's cells
//! forbidden to black, when black is to move).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use wuzi_game::game::Color;

/// A cell: `row` from the top, `column` from the left, both from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WsPoint {
    pub row: u32,
    pub column: u32,
}

/// A move: `{"type": "place", "point": ...}`, `{"type": "pass"}` or
/// `{"type": "resign"}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum WsMove {
    Place { point: WsPoint },
    Pass,
    Resign,
}

/// A colour: `"B"` or `"W"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WsColor {
    B,
    W,
}

impl From<Color> for WsColor {
    fn from(c: Color) -> WsColor {
        match c {
            Color::Black => WsColor::B,
            Color::White => WsColor::W,
        }
    }
}

impl From<WsColor> for Color {
    fn from(c: WsColor) -> Color {
        match c {
            WsColor::B => Color::Black,
            WsColor::W => Color::White,
        }
    }
}

/// A value per player.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PerPlayer<T> {
    #[serde(rename = "B")]
    pub black: T,
    #[serde(rename = "W")]
    pub white: T,
}

impl<T: Copy> PerPlayer<T> {
    pub fn of(&self, c: Color) -> T {
        match c {
            Color::Black => self.black,
            Color::White => self.white,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlayerState {
    /// Milliseconds.
    pub remaining_time: u64,
    /// Go's captures: always 0 in gomoku.
    #[serde(default)]
    pub prisoners: u64,
}

/// The board and whose turn it is. Rows of `"B"`, `"W"` or `"."`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameState {
    pub board: Vec<Vec<String>>,
    pub players: PerPlayer<PlayerState>,
    pub turn: WsColor,
}

/// One move of the log, with the milliseconds since the previous one.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogEntry {
    #[serde(rename = "move")]
    pub mv: WsMove,
    pub delta_time: u64,
}

/// What a game is, sent in `START`: the initial state, the moves since
/// (a resumed game has some), the idle time since the last move, and with
/// protocol v2 the last two states.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GameConfiguration {
    pub initial_state: GameState,
    pub move_log: Vec<LogEntry>,
    #[serde(default)]
    pub komi: f64,
    #[serde(default)]
    pub ko: bool,
    #[serde(default)]
    pub superko: bool,
    #[serde(default)]
    pub mercy: u32,
    #[serde(default)]
    pub mercy_start: u32,
    #[serde(default = "area")]
    pub scoring_method: String,
    #[serde(default)]
    pub prisoner_score: u32,
    #[serde(default)]
    pub idle_delta_time: u64,
    /// Protocol v2: the latest two states (one before any move).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_states: Option<Vec<GameState>>,
    /// Extension: `freestyle`, `standard`, `renju` or `caro`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

fn area() -> String {
    "area".to_string()
}

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EndReason {
    Resign,
    Pass,
    Timeout,
    Mercy,
    Pause,
    Error,
    /// Extension: a five (per the rule) was made.
    Five,
    /// Extension: the board is full.
    Draw,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScoreAndTime {
    pub score: f64,
    pub remaining_time: u64,
}

/// What the server sends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "UPPERCASE")]
pub enum ServerMessage {
    Name,
    Start {
        configuration: GameConfiguration,
        color: WsColor,
        /// Extension, for v2 clients: the seat's secret. A client that
        /// comes back to an interrupted game gives it in its NAME; the
        /// seat is not given to anyone else who takes the same name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seat: Option<String>,
        /// Extension: as in MOVE (a resumed renju game with black to move).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        forbidden: Vec<WsPoint>,
    },
    Move {
        #[serde(rename = "move")]
        mv: WsMove,
        #[serde(rename = "remainingTime")]
        remaining_time: PerPlayer<u64>,
        /// Extension: under renju, the cells now forbidden to black
        /// (black to move), for boards that mark them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        forbidden: Vec<WsPoint>,
    },
    Valid {
        #[serde(rename = "remainingTime")]
        remaining_time: PerPlayer<u64>,
        /// Extension: as in MOVE.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        forbidden: Vec<WsPoint>,
    },
    Invalid {
        message: String,
        #[serde(rename = "remainingTime")]
        remaining_time: PerPlayer<u64>,
    },
    End {
        reason: EndReason,
        /// `"B"`, `"W"`, or `"."` for none.
        winner: String,
        players: PerPlayer<ScoreAndTime>,
        /// Extension: whose time ran out.
        #[serde(rename = "timedOut", default, skip_serializing_if = "Option::is_none")]
        timed_out: Option<WsColor>,
    },
}

impl ServerMessage {
    /// A server's message. The specification's own example of MOVE says
    /// `"type":"START"`: a START with a `move` and no `configuration` is
    /// read as the MOVE it is (as the server reads a client's).
    pub fn parse(text: &str) -> Result<ServerMessage, serde_json::Error> {
        serde_json::from_str(text).or_else(|error| {
            let mut value: Value = serde_json::from_str(text)?;
            let slip = value.get("type").and_then(Value::as_str) == Some("START")
                && value.get("move").is_some()
                && value.get("configuration").is_none();
            if !slip {
                return Err(error);
            }
            value["type"] = Value::from("MOVE");
            serde_json::from_value(value)
        })
    }

    pub fn to_json(&self) -> String {
        // Serialising these types cannot fail: every map key is a string.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Which protocol version a client asked for in its `NAME`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProtocolVersion {
    #[default]
    V1,
    /// `START` carries `finalStates`.
    V2,
}

/// A player's own view of the game (extension `INFO`, sent by engines
/// while they think and shown by the web board): its winning chance and
/// its principal variation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlayerInfo {
    /// Expected score for the player, 0..1.
    pub winrate: f64,
    #[serde(default)]
    pub pv: Vec<WsPoint>,
}

/// The longest client name, in characters.
pub const MAX_NAME: usize = 64;
/// The longest principal variation of an INFO (a 32x32 board's cells).
pub const MAX_PV: usize = 1024;

/// What a client sends.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientMessage {
    Name {
        name: String,
        protocol: ProtocolVersion,
        /// Extension: the secret of the seat this client had (START's
        /// `seat`), to take it back in an interrupted game.
        seat: Option<String>,
    },
    Move(WsMove),
    /// Extension: `{"type": "INFO", "winrate": 0.55, "pv": [Point...]}`.
    Info(PlayerInfo),
}

/// The longest reason given for refusing a client's message, in characters.
pub const MAX_REASON: usize = 200;

impl ClientMessage {
    /// Parses a client's text message. The specification prints `MOVE`
    /// with `"type": "START"` (a slip): a `START` with a `move` is a move.
    /// The reason for a refusal quotes at most [`MAX_REASON`] characters
    /// of it: a client's 64 KiB message must not come back as a larger
    /// answer (Debug escaping) held in its queue.
    pub fn parse(text: &str) -> Result<ClientMessage, String> {
        ClientMessage::parse_whole(text).map_err(|why| {
            if why.chars().count() <= MAX_REASON {
                why
            } else {
                let mut cut: String = why.chars().take(MAX_REASON).collect();
                cut.push('…');
                cut
            }
        })
    }

    fn parse_whole(text: &str) -> Result<ClientMessage, String> {
        let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .ok_or("no \"type\"")?;
        match kind {
            "NAME" => {
                let name = value
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or("NAME without a \"name\"")?
                    .trim()
                    .to_string();
                check_name(&name)?;
                let protocol = match value.get("protocol").and_then(Value::as_str) {
                    None | Some("v1") => ProtocolVersion::V1,
                    Some("v2") => ProtocolVersion::V2,
                    Some(other) => return Err(format!("unknown protocol {other:?}")),
                };
                let seat = value
                    .get("seat")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                Ok(ClientMessage::Name {
                    name,
                    protocol,
                    seat,
                })
            }
            "MOVE" | "START" => {
                let mv = value.get("move").ok_or("MOVE without a \"move\"")?;
                serde_json::from_value(mv.clone())
                    .map(ClientMessage::Move)
                    .map_err(|e| format!("bad move: {e}"))
            }
            "INFO" => {
                let info: PlayerInfo =
                    serde_json::from_value(value.clone()).map_err(|e| format!("bad INFO: {e}"))?;
                // A principal variation longer than the largest board has
                // cells is no analysis; web boards show what is kept.
                if info.pv.len() > MAX_PV || !(0.0..=1.0).contains(&info.winrate) {
                    return Err(format!(
                        "bad INFO: at most {MAX_PV} moves and a winrate from 0 to 1"
                    ));
                }
                Ok(ClientMessage::Info(info))
            }
            other => Err(format!("unknown message type {other:?}")),
        }
    }

    pub fn to_json(&self) -> String {
        let value = match self {
            ClientMessage::Name {
                name,
                protocol,
                seat,
            } => {
                let mut value = serde_json::json!({
                    "type": "NAME",
                    "name": name,
                    "protocol": match protocol { ProtocolVersion::V1 => "v1", ProtocolVersion::V2 => "v2" },
                });
                if let Some(seat) = seat {
                    value["seat"] = Value::from(seat.as_str());
                }
                value
            }
            ClientMessage::Move(mv) => serde_json::json!({ "type": "MOVE", "move": mv }),
            ClientMessage::Info(info) => serde_json::json!({
                "type": "INFO",
                "winrate": info.winrate,
                "pv": info.pv,
            }),
        };
        value.to_string()
    }
}

/// Whether the server takes `name` (already trimmed) as a client's name,
/// or why not.
pub fn check_name(name: &str) -> Result<(), String> {
    // Names are shown to every web board in every state.
    if name.is_empty() || name.chars().count() > MAX_NAME {
        return Err(format!("a name has 1 to {MAX_NAME} characters"));
    }
    // Shown as text, a name with invisible characters would look like
    // another client's to the operator choosing players.
    if name.chars().any(invisible) {
        return Err("a name has no control or invisible characters".into());
    }
    Ok(())
}

/// Characters a name may not hold: controls, and the invisible format
/// characters (zero widths, direction marks and overrides, the word
/// joiner, the byte order mark) that make two names look alike.
fn invisible(c: char) -> bool {
    // Controls, and Unicode's default-ignorable code points (drawn as
    // nothing) with the blank-looking letters and the braille blank.
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{034F}'
                | '\u{061C}'
                | '\u{115F}'..='\u{1160}'
                | '\u{17B4}'..='\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{2800}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{1BCA0}'..='\u{1BCA3}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0000}'..='\u{E0FFF}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_read_and_write_the_specification_format() {
        let place: WsMove =
            serde_json::from_str(r#"{"type": "place", "point": {"row": 3, "column": 4}}"#).unwrap();
        assert_eq!(
            place,
            WsMove::Place {
                point: WsPoint { row: 3, column: 4 }
            }
        );
        assert_eq!(
            serde_json::to_string(&WsMove::Pass).unwrap(),
            r#"{"type":"pass"}"#
        );
        let valid = ServerMessage::Valid {
            remaining_time: PerPlayer {
                black: 1000,
                white: 2000,
            },
            forbidden: Vec::new(),
        };
        assert_eq!(
            valid.to_json(),
            r#"{"type":"VALID","remainingTime":{"B":1000,"W":2000}}"#
        );
        // Renju's forbidden cells ride along when there are any.
        let marked = ServerMessage::Valid {
            remaining_time: PerPlayer {
                black: 1000,
                white: 2000,
            },
            forbidden: vec![WsPoint { row: 7, column: 8 }],
        };
        let json = marked.to_json();
        assert_eq!(
            json,
            r#"{"type":"VALID","remainingTime":{"B":1000,"W":2000},"forbidden":[{"row":7,"column":8}]}"#
        );
        assert_eq!(ServerMessage::parse(&json).unwrap(), marked);
        let end = ServerMessage::End {
            reason: EndReason::Five,
            winner: "B".into(),
            players: PerPlayer {
                black: ScoreAndTime {
                    score: 1.0,
                    remaining_time: 5,
                },
                white: ScoreAndTime {
                    score: 0.0,
                    remaining_time: 6,
                },
            },
            timed_out: None,
        };
        let json = end.to_json();
        assert!(
            json.starts_with(r#"{"type":"END","reason":"five","winner":"B""#),
            "{json}"
        );
        assert!(!json.contains("timedOut"));
        assert_eq!(serde_json::from_str::<ServerMessage>(&json).unwrap(), end);
        // The specification's MOVE example says "START": read as a MOVE.
        let slip = r#"{"type":"START","move":{"type":"place","point":{"row":3,"column":4}},
                       "remainingTime":{"B":1000,"W":2000}}"#;
        assert!(matches!(
            ServerMessage::parse(slip),
            Ok(ServerMessage::Move {
                mv: WsMove::Place {
                    point: WsPoint { row: 3, column: 4 }
                },
                ..
            })
        ));
        assert!(ServerMessage::parse(r#"{"type":"START"}"#).is_err());
        assert_eq!(ServerMessage::Name.to_json(), r#"{"type":"NAME"}"#);
    }

    #[test]
    fn client_messages_and_the_start_slip() {
        assert_eq!(
            ClientMessage::parse(r#"{"type":"NAME","name":"wuzi","protocol":"v2"}"#),
            Ok(ClientMessage::Name {
                name: "wuzi".into(),
                protocol: ProtocolVersion::V2,
                seat: None,
            })
        );
        assert_eq!(
            ClientMessage::parse(r#"{"type":"NAME","name":"x"}"#),
            Ok(ClientMessage::Name {
                name: "x".into(),
                protocol: ProtocolVersion::V1,
                seat: None,
            })
        );
        // The seat extension reads and writes back.
        let named = ClientMessage::Name {
            name: "w".into(),
            protocol: ProtocolVersion::V2,
            seat: Some("ab12".into()),
        };
        assert_eq!(ClientMessage::parse(&named.to_json()), Ok(named));
        let long = format!(r#"{{"type":"NAME","name":"{}"}}"#, "n".repeat(MAX_NAME + 1));
        assert!(ClientMessage::parse(&long).is_err());
        // A refusal quotes little of a long message: here a type of 20,000
        // quotes (each escaped as two characters in the reason).
        let huge = format!(r#"{{"type":"{}"}}"#, "\\\"".repeat(20_000));
        let why = ClientMessage::parse(&huge).unwrap_err();
        assert!(why.starts_with("unknown message type"), "{why}");
        assert!(why.chars().count() <= MAX_REASON + 1, "{}", why.len());
        assert!(ClientMessage::parse(r#"{"type":"NAME","name":"  "}"#).is_err());
        let pv = vec![r#"{"row":1,"column":1}"#; MAX_PV + 1].join(",");
        let info = format!(r#"{{"type":"INFO","winrate":0.5,"pv":[{pv}]}}"#);
        assert!(ClientMessage::parse(&info).is_err());
        let mv = r#"{"type":"START","move":{"type":"place","point":{"row":7,"column":7}}}"#;
        assert_eq!(
            ClientMessage::parse(mv),
            Ok(ClientMessage::Move(WsMove::Place {
                point: WsPoint { row: 7, column: 7 }
            }))
        );
        let back = ClientMessage::parse(mv).unwrap().to_json();
        assert_eq!(ClientMessage::parse(&back), ClientMessage::parse(mv));
        let info = r#"{"type":"INFO","winrate":0.25,"pv":[{"row":1,"column":2}]}"#;
        let parsed = ClientMessage::parse(info).unwrap();
        assert_eq!(
            parsed,
            ClientMessage::Info(PlayerInfo {
                winrate: 0.25,
                pv: vec![WsPoint { row: 1, column: 2 }]
            })
        );
        assert_eq!(ClientMessage::parse(&parsed.to_json()), Ok(parsed));
        for bad in [
            "{",
            r#"{"name":"x"}"#,
            r#"{"type":"NAME"}"#,
            r#"{"type":"MOVE"}"#,
            r#"{"type":"MOVE","move":{"type":"jump"}}"#,
            r#"{"type":"HELLO"}"#,
            r#"{"type":"NAME","name":"x","protocol":"v9"}"#,
            // A winrate is an expected score.
            r#"{"type":"INFO","winrate":1.5}"#,
            r#"{"type":"INFO","winrate":-0.1}"#,
            r#"{"type":"INFO","winrate":1e300}"#,
            // Names that look like others: a soft hyphen, a variation
            // selector, a tag character, the Hangul filler.
            "{\"type\":\"NAME\",\"name\":\"wu\u{AD}zi\"}",
            "{\"type\":\"NAME\",\"name\":\"wuzi\u{FE0F}\"}",
            "{\"type\":\"NAME\",\"name\":\"wuzi\u{E0061}\"}",
            "{\"type\":\"NAME\",\"name\":\"\u{3164}\"}",
        ] {
            assert!(ClientMessage::parse(bad).is_err(), "{bad}");
        }
    }
}
