//! What the web boards see: the state of the games, sent at most every
//! `BROADCAST_INTERVAL` or at once when it matters.

use super::*;

impl Referee {
    /// A game as the web board shows it.
    pub(super) fn game_view(&self, running: &Running) -> Value {
        let config = running.game.configuration(true);
        let current = config
            .final_states
            .as_ref()
            .and_then(|states| states.last().cloned())
            .unwrap_or(config.initial_state.clone());
        let last = config.move_log.last().and_then(|entry| match entry.mv {
            crate::ws::message::WsMove::Place { point } => Some(point),
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
            "forbidden": running.game.forbidden(),
        })
    }

    /// What the web board shows: clients, the first running game (and how
    /// many run), the last result.
    pub(super) fn state(&self) -> Value {
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

    pub(super) fn count(&self) {
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
    pub(super) fn broadcast(&mut self) {
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
