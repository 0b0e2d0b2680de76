//! The session core: what every interactive protocol shares, written once.
//!
//! A [`Session`] holds the engine, the search under way and what it is
//! for (its job), pondering and analysis, and the output. A [`Driver`] runs a
//! [`FrontEnd`] (a protocol dialect) over a session: commands run in the
//! order they arrive; while a search that must answer runs, the commands
//! after it wait their turn, except those the front end marks urgent (stop,
//! quit, settings the search must see); a finished search goes back to the
//! front end with its job. Front ends only translate: commands into engine
//! calls, results into their protocol's lines.

use std::collections::VecDeque;
use std::io::Write;
use std::time::{Duration, Instant};

use crate::engine::{Engine, Finished, SearchKind};

/// How often a front end writes live output during a search, unless it
/// says otherwise.
const REPORT_EVERY: Duration = Duration::from_millis(250);

/// What the session is searching for.
#[derive(Clone, Debug, PartialEq)]
enum Activity<J> {
    /// A search whose result the front end answers with; the commands
    /// after it wait.
    Answer(J),
    /// Analysis until the next command, which ends it; the front end
    /// reports on it and closes it.
    Analysis(J),
    /// Thinking on the opponent's time, until `until` if it has a limit:
    /// nothing comes of it.
    Ponder { until: Option<Instant> },
}

/// The engine, the current search and the output, shared by the front ends.
pub struct Session<J> {
    pub engine: Engine,
    out: Box<dyn Write + Send>,
    activity: Option<Activity<J>>,
    /// Ponder after answering a move (while the opponent thinks).
    pub auto_ponder: bool,
    /// When the line being handled was read: a search's clock starts there.
    received: Instant,
    /// When the current search's last live report was.
    last_report: Instant,
    /// How often live reports are due.
    pub report_every: Duration,
}

impl<J: Clone> Session<J> {
    pub fn new(engine: Engine, out: Box<dyn Write + Send>) -> Session<J> {
        Session {
            engine,
            out,
            activity: None,
            auto_ponder: false,
            received: Instant::now(),
            last_report: Instant::now(),
            report_every: REPORT_EVERY,
        }
    }

    /// Writes one whole line and flushes it.
    pub fn send(&mut self, line: &str) {
        tracing::info!("> {line}");
        // A failed write means the manager is gone; the next read ends us.
        let _ = writeln!(self.out, "{line}");
        let _ = self.out.flush();
    }

    /// When the input line being handled was read.
    pub fn received(&self) -> Instant {
        self.received
    }

    /// The moment the current input line was read.
    pub fn set_received(&mut self, at: Instant) {
        self.received = at;
    }

    /// Starts a timed search of the game's position for `job`. The clock
    /// started when the request arrived: what came before the search
    /// (settings, a network switch) took part of it.
    pub fn think(&mut self, job: J) {
        self.think_sharing(job, 1.0);
    }

    /// As [`Session::think`], the search taking only `share` of the move's
    /// time: the job's answer needs more work after it, in the same turn.
    pub fn think_sharing(&mut self, job: J, share: f64) {
        self.engine
            .start_sharing(SearchKind::Think, self.received, share);
        self.activity = Some(Activity::Answer(job));
        self.last_report = Instant::now();
    }

    /// Analyses the game's position for `job` until the next command (or a
    /// stop), with live reports every `report_every`.
    pub fn analyse(&mut self, job: J, report_every: Duration) {
        self.engine.start(SearchKind::Analyse);
        self.activity = Some(Activity::Analysis(job));
        self.report_every = report_every;
        self.last_report = Instant::now();
    }

    /// Ponders the game's position, for at most `limit`.
    pub fn ponder(&mut self, limit: Option<Duration>) {
        // Before the start, which may first make room for a new game: the
        // limit counts from the request, as the search's own does.
        let until = limit.map(|limit| Instant::now() + limit);
        self.engine.start(SearchKind::Ponder(limit));
        self.activity = Some(Activity::Ponder { until });
    }

    /// Ends a ponder, if one runs (a search that must answer or an
    /// analysis goes on).
    pub fn end_ponder(&mut self) {
        if matches!(self.activity, Some(Activity::Ponder { .. })) {
            self.engine.stop();
            self.activity = None;
        }
    }

    /// A ponder that a setting stopped (a new thread count or memory limit
    /// restarts the search: `Engine::configure`) goes on under the new
    /// setting, for what is left of its limit: the opponent is still
    /// thinking.
    fn resume_ponder(&mut self) {
        let Some(Activity::Ponder { until }) = self.activity else {
            return;
        };
        if self.engine.search_kind().is_some() {
            return;
        }
        let left = until.map(|until| until.saturating_duration_since(Instant::now()));
        if left == Some(Duration::ZERO) || self.engine.board().outcome().is_some() {
            self.activity = None;
            return;
        }
        self.engine.start(SearchKind::Ponder(left));
    }

    /// After answering a move: ponder if asked to and the game goes on.
    pub fn ponder_after_move(&mut self) {
        if self.auto_ponder && self.engine.board().outcome().is_none() {
            self.ponder(None);
        }
    }

    /// The job of the running search, if it has one (not a ponder).
    pub fn job(&self) -> Option<&J> {
        match &self.activity {
            Some(Activity::Answer(job) | Activity::Analysis(job)) => Some(job),
            _ => None,
        }
    }

    /// Whether a search that must answer is running, or has ended and not
    /// yet been collected (`Engine::poll`). The second matters: a search
    /// that ends between the driver's poll and this check would otherwise
    /// let the next command run as if idle, and a command that stops the
    /// engine (a setting, a move, START) would drop the unanswered result.
    pub fn busy(&self) -> bool {
        matches!(self.activity, Some(Activity::Answer(_))) && self.engine.search_kind().is_some()
    }

    /// Whether a ponder or an analysis runs (the next command ends it).
    fn in_background(&self) -> bool {
        matches!(
            self.activity,
            Some(Activity::Ponder { .. } | Activity::Analysis(_))
        )
    }

    /// Whether a live report is due now (at most every 250 ms).
    fn report_due(&mut self) -> bool {
        if self.job().is_some()
            && self.engine.is_searching()
            && self.last_report.elapsed() >= self.report_every
        {
            self.last_report = Instant::now();
            return true;
        }
        false
    }

    /// The finished search with its job, taken off the session: a ponder
    /// gives `None`.
    fn take_finished(&mut self, finished: Finished) -> Option<(J, Finished)> {
        self.report_every = REPORT_EVERY;
        match self.activity.take() {
            Some(Activity::Answer(job) | Activity::Analysis(job)) => Some((job, finished)),
            _ => None,
        }
    }

    /// Stops everything (before exiting).
    fn shutdown(&mut self) {
        self.engine.stop();
        self.activity = None;
        let _ = self.out.flush();
    }
}

/// When a command runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Urgency {
    /// In its turn: after the search that must answer, and after the
    /// commands held back behind it.
    InTurn,
    /// During a search that must answer, now, beside it (a query, or a
    /// setting the search must see); otherwise in its turn.
    Now,
    /// During a search that must answer, now, and then stop it (a clock
    /// set to "move now"); otherwise in its turn.
    NowThenStop,
    /// Stop the search at once: a search that must answer answers with
    /// what it has.
    Stop,
    /// During a search, stop it (a search that must answer answers with
    /// what it has), then run in its turn: a new game that a GUI starts
    /// without stopping the search it abandons (it discards that answer).
    StopThenInTurn,
    /// Quit at once.
    Quit,
}

/// What a front end says after a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Quit,
}

/// A protocol dialect over the session core.
pub trait FrontEnd {
    type Command;
    /// What a search that must answer is for (a move, an analysis, a
    /// swap decision...).
    type Job: Clone;

    /// How `command` is handled while a search that must answer runs.
    fn urgency(&self, command: &Self::Command) -> Urgency;

    /// Whether `command` leaves a ponder or an analysis running (a
    /// setting may).
    fn keeps_background(&self, command: &Self::Command) -> bool;

    /// Carries out one command.
    fn execute(&mut self, session: &mut Session<Self::Job>, command: Self::Command) -> Flow;

    /// Answers with a finished search (or closes a finished analysis).
    fn finished(&mut self, session: &mut Session<Self::Job>, job: Self::Job, finished: Finished);

    /// Live output during a search for `job` (called every 250 ms at most).
    fn report(&mut self, _session: &mut Session<Self::Job>, _job: &Self::Job) {}

    /// Answers `command` with an error without running it: more commands
    /// arrived during a search without a limit than the driver holds
    /// ([`MAX_DEFERRED`]). The error comes before the answers of the
    /// commands held: only a flood gets here, and memory matters more than
    /// order then.
    fn refuse(&mut self, session: &mut Session<Self::Job>, command: Self::Command, why: &str);
}

/// Commands held behind a search at most. A manager sends a few while the
/// engine thinks; beyond this the input waits ([`Driver::input_paused`]), or,
/// behind a search without a limit, commands are refused.
pub const MAX_DEFERRED: usize = 256;

/// Runs a front end over a session.
pub struct Driver<F: FrontEnd> {
    pub front: F,
    pub session: Session<F::Job>,
    /// Commands that arrived during a search, run after it, each with the
    /// moment it was read: a request's clock started then, not when the
    /// search before it ended.
    deferred: VecDeque<(F::Command, Instant)>,
    /// Held commands that a stop came after: each answers at once when it
    /// runs (a GUI's stop is for every search it asked for before it).
    stopped_held: usize,
    quitting: bool,
}

impl<F: FrontEnd> Driver<F> {
    pub fn new(front: F, session: Session<F::Job>) -> Driver<F> {
        Driver {
            front,
            session,
            deferred: VecDeque::new(),
            stopped_held: 0,
            quitting: false,
        }
    }

    /// Handles one command; false means quit now.
    pub fn handle(&mut self, command: F::Command) -> bool {
        let urgency = self.front.urgency(&command);
        // Nothing is written after END, not even a move that has just been
        // found.
        if matches!(urgency, Urgency::Quit) {
            return false;
        }
        // A search that ended since the last tick answers first: the
        // command could otherwise stop the engine (a setting that restarts
        // it) and drop the finished result, leaving the move unanswered.
        if let Some(finished) = self.session.engine.poll() {
            self.finish(finished);
        }
        let busy = self.session.busy();
        match urgency {
            Urgency::Quit => return false,
            Urgency::Stop => {
                self.stopped_held = self.deferred.len();
                self.stop_search();
                return true;
            }
            Urgency::Now if busy => return self.execute(command),
            Urgency::NowThenStop if busy => {
                let go_on = self.execute(command);
                self.stop_search();
                return go_on;
            }
            Urgency::StopThenInTurn if busy => self.stop_search(),
            _ => {}
        }
        let busy = self.session.busy();
        if busy || !self.deferred.is_empty() {
            if self.deferred.len() >= MAX_DEFERRED {
                tracing::warn!("over {MAX_DEFERRED} commands held behind a search: one refused");
                self.front.refuse(
                    &mut self.session,
                    command,
                    "too many commands while thinking",
                );
                return true;
            }
            self.deferred.push_back((command, self.session.received()));
            return true;
        }
        self.dispatch(command)
    }

    fn execute(&mut self, command: F::Command) -> bool {
        self.front.execute(&mut self.session, command) == Flow::Continue
    }

    /// Runs a command in its turn, ending a ponder or an analysis first
    /// unless the front end keeps it for this command.
    fn dispatch(&mut self, command: F::Command) -> bool {
        let kept = self.session.in_background() && self.front.keeps_background(&command);
        if self.session.in_background() && !kept {
            self.stop_search();
        }
        let go_on = self.execute(command);
        if kept {
            self.session.resume_ponder();
        }
        go_on
    }

    /// Stops the search: a stopped job answers now (an analysis closes), a
    /// ponder says nothing.
    pub fn stop_search(&mut self) {
        match self.session.engine.stop() {
            Some(finished) => self.finish(finished),
            None => {
                self.session.activity = None;
            }
        }
    }

    fn finish(&mut self, finished: Finished) {
        if let Some((job, finished)) = self.session.take_finished(finished) {
            self.front.finished(&mut self.session, job, finished);
        }
    }

    /// Called often: finishes searches, writes live output, and runs the
    /// commands held back during a search.
    pub fn tick(&mut self) {
        if let Some(finished) = self.session.engine.poll() {
            self.finish(finished);
        } else if self.session.report_due() {
            if let Some(job) = self.session.job().cloned() {
                self.front.report(&mut self.session, &job);
            }
        }
        while !self.session.busy() && !self.quitting {
            let Some((command, received)) = self.deferred.pop_front() else {
                break;
            };
            self.session.set_received(received);
            if !self.dispatch(command) {
                // A command that quits, held back behind a search.
                self.quitting = true;
            }
            if self.stopped_held > 0 {
                self.stopped_held -= 1;
                if self.session.busy() {
                    self.stop_search();
                }
            }
        }
    }

    /// Runs until every command received so far is answered: the search
    /// that must answer finishes (within its time limit), the commands held
    /// behind it run. A ponder is not waited for, nor a search without a
    /// limit (no time control was given): it is stopped and answers with
    /// what it has, since no STOP can come after the end of input. So is an
    /// analysis, whose response is closed (GTP's empty line).
    pub fn drain(&mut self) {
        loop {
            if self.session.busy() && !self.session.engine.search_ends_by_itself() {
                self.stop_search();
            }
            self.tick();
            // Running before, or started by a command held back behind a
            // search that `tick` just finished.
            if matches!(self.session.activity, Some(Activity::Analysis(_))) {
                self.stop_search();
            }
            if self.wants_exit() || (!self.session.busy() && self.deferred.is_empty()) {
                return;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Whether the input should wait: as many commands as the driver holds
    /// are queued behind a search that ends by itself. The commands after
    /// them then wait in the pipe, so that every command is answered in
    /// order (GTP requires it) and memory stays bounded. Behind a search
    /// without a limit the input is still read, since only a command can
    /// end it; commands beyond the queue are refused there.
    pub fn input_paused(&self) -> bool {
        self.deferred.len() >= MAX_DEFERRED
            && self.session.busy()
            && self.session.engine.search_ends_by_itself()
    }

    /// Whether a quit held back behind a search is due now.
    pub fn wants_exit(&self) -> bool {
        self.quitting && !self.session.engine.is_searching()
    }

    /// Stops everything before exiting.
    pub fn shutdown(&mut self) {
        self.session.shutdown();
    }
}
