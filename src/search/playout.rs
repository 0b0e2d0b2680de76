//! One search thread's work: descend to new leaves under virtual visits,
//! decide what the rules and the solver can, send the rest to the network
//! in batches (several in flight), and back the values up.

use super::*;
use crossbeam_channel::RecvTimeoutError;

impl Searcher {
    /// A search thread: gathers, evaluates and backs up batches until halted.
    pub(super) fn worker(&self, run: &SearchRun) {
        let SearchRun {
            limits, progress, ..
        } = *run;
        let depth = self.config.pipeline.max(1);
        let mut in_flight: VecDeque<Vec<(Pending, Receiver<Evaluation>)>> = VecDeque::new();
        let cancel = progress.cancel.lock().clone();
        loop {
            // Read before the halt and the gather: a halt or a backup
            // after this is then no reason to wait.
            let backups_seen = progress.backups.seen();
            if progress.halt.load(Ordering::SeqCst) {
                break;
            }
            let (pending, mut boards, worked) = self.gather(run);
            // A fresh root is gathered alone (the descents after it collide
            // with it and end the batch).
            let fresh_root = matches!(&pending[..], [leaf] if leaf.path.is_empty());
            // The root's evaluation is never given up: a search stopped at
            // once (no time to think) still plays by the network's priors,
            // not by the order of the candidate moves.
            let cancel = (!fresh_root).then_some(&cancel);
            let submitted = !pending.is_empty();
            // An empty round (collisions, revisits) sends nothing: it would
            // only wake an evaluator, taking a core from the kernels.
            if submitted {
                let answers = self.service.submit_cancellable(
                    &mut boards,
                    fresh_root && self.config.root_symmetries,
                    cancel,
                );
                progress.batches.fetch_add(1, Ordering::Relaxed);
                in_flight.push_back(pending.into_iter().zip(answers).collect());
            }
            // Keep up to `depth` batches with the network, so that this
            // thread gathers the next batch while the last is evaluated.
            let mut completed = false;
            if in_flight.len() >= depth || (!submitted && !in_flight.is_empty()) {
                if let Some(batch) = in_flight.pop_front() {
                    self.complete(batch, run);
                    completed = true;
                }
            }
            if limits
                .max_playouts
                .is_some_and(|max| progress.playouts.load(Ordering::SeqCst) >= max)
            {
                progress.halt_now();
            }
            if worked || completed {
                progress.idle_rounds.store(0, Ordering::Relaxed);
            } else if progress.in_flight.load(Ordering::SeqCst) > 0 {
                // Nothing to do until other threads' leaves are backed up.
                progress.idle_rounds.store(0, Ordering::Relaxed);
                progress
                    .backups
                    .wait_past(backups_seen, Duration::from_millis(1));
            } else {
                progress.idle_rounds.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_micros(200));
            }
        }
        // The search is over: do not wait for what the network is still
        // evaluating (a batch can take tens of milliseconds on a busy
        // CPU). Those leaves go back to fresh and lose their virtual
        // visits, so that a later search of the same tree finds them intact.
        // Except a fresh root's: one evaluation, which the move is chosen by.
        for batch in in_flight {
            if matches!(&batch[..], [(leaf, _)] if leaf.path.is_empty()) {
                self.complete(batch, run);
                continue;
            }
            for (p, _) in batch {
                p.leaf.data.lock().state = NodeState::Fresh;
                self.revert_leaf(&p.path, &p.leaf);
                progress.in_flight.fetch_sub(1, Ordering::SeqCst);
                // No playout: the search may go on (after the safety net)
                // with a playout limit.
                progress.reserved.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }

    /// Gathers up to a batch of new leaves: decided ones are backed up at
    /// once, the others come back with their boards for the network.
    fn gather(&self, run: &SearchRun) -> (Vec<Pending>, Vec<Board>, bool) {
        let SearchRun {
            board,
            root,
            restricted_root,
            limits,
            clock,
            progress,
            ..
        } = *run;
        let max_depth = limits.max_depth.unwrap_or(u32::MAX) as usize;
        let params = self.config.puct();
        let mut pending = Vec::new();
        let mut boards = Vec::new();
        let mut worked = false;
        let mut collided = Vec::new();
        // Revisits of known nodes and collisions do not fill the batch, but
        // bound the attempts.
        let batch_size = self.config.batch_size.leaves(self.service.backend());
        for _ in 0..2 * batch_size {
            if pending.len() >= batch_size {
                break;
            }
            // Reserve a playout first, so that a limit is never passed.
            let reserved = progress.reserved.fetch_add(1, Ordering::SeqCst);
            if limits.max_playouts.is_some_and(|max| reserved >= max) {
                progress.reserved.fetch_sub(1, Ordering::SeqCst);
                break;
            }
            match self.descend(board, root, max_depth, params, &limits.excluded) {
                Descent::Evaluate {
                    path,
                    leaf,
                    mut board,
                } => {
                    progress
                        .max_depth
                        .fetch_max(path.len() as u32, Ordering::Relaxed);
                    progress.in_flight.fetch_add(1, Ordering::SeqCst);
                    worked = true;
                    let settings = self.leaf_settings(path.len(), clock);
                    let mut solver_nodes = 0;
                    let analysis = if path.is_empty() && restricted_root {
                        analyse_root_except(
                            &mut board,
                            settings,
                            &limits.excluded,
                            &mut solver_nodes,
                        )
                    } else {
                        analyse(&mut board, settings, &mut solver_nodes)
                    };
                    progress
                        .solver_nodes
                        .fetch_add(solver_nodes, Ordering::Relaxed);
                    match analysis {
                        LeafAnalysis::Proven { value, line } => {
                            {
                                let mut data = leaf.data.lock();
                                data.proven = value;
                                data.proof = (!line.is_empty()).then(|| line.into_boxed_slice());
                                data.state = NodeState::Expanded;
                            }
                            let wdl = value.wdl().unwrap_or([0.0, 1.0, 0.0]);
                            self.backup(&path, Some(&leaf), wdl, Proven::Unknown);
                            progress.playouts.fetch_add(1, Ordering::Relaxed);
                            progress.in_flight.fetch_sub(1, Ordering::SeqCst);
                            // Threads that met it while the solver worked.
                            progress.backups.announce();
                        }
                        LeafAnalysis::Moves { moves, complete } => {
                            let width = board.size().width() as usize;
                            pending.push(Pending {
                                path,
                                leaf,
                                moves,
                                complete,
                                width,
                            });
                            boards.push(board);
                        }
                    }
                }
                Descent::Known { path, wdl, proven } => {
                    // A revisit (proven node, depth limit): it informs the
                    // path but is no new playout.
                    progress.reserved.fetch_sub(1, Ordering::SeqCst);
                    progress.revisits.fetch_add(1, Ordering::Relaxed);
                    self.backup(&path, None, wdl, proven);
                }
                Descent::Collision { path } => {
                    progress.reserved.fetch_sub(1, Ordering::SeqCst);
                    progress.collisions.fetch_add(1, Ordering::Relaxed);
                    if path.is_empty() {
                        // The root itself is with the network.
                        break;
                    }
                    // Its virtual visits stay until this batch is gathered,
                    // so that the next descents turn elsewhere instead of
                    // ending the batch (as lc0 does).
                    collided.push(path);
                }
            }
        }
        for path in &collided {
            self.revert(path);
        }
        (pending, boards, worked)
    }

    /// Expands and backs up a batch once the network has answered.
    fn complete(&self, batch: Vec<(Pending, Receiver<Evaluation>)>, run: &SearchRun) {
        let progress = run.progress;
        for (p, answer) in batch {
            // A fresh root's evaluation is waited for whatever the halt:
            // the move is chosen by it.
            let evaluation = if p.path.is_empty() {
                answer.recv().ok()
            } else {
                answer_unless_halted(&answer, progress)
            };
            let Some(evaluation) = evaluation else {
                // The search has stopped (the service dropped the leaf
                // unevaluated) or the service is gone: undo this descent
                // and stop.
                p.leaf.data.lock().state = NodeState::Fresh;
                self.revert_leaf(&p.path, &p.leaf);
                progress.halt_now();
                progress.in_flight.fetch_sub(1, Ordering::SeqCst);
                progress.reserved.fetch_sub(1, Ordering::SeqCst);
                continue;
            };
            let mut edges: Vec<Edge> = p.moves.iter().map(|&m| Edge::new(m, 0.0)).collect();
            self.set_priors(&mut edges, &evaluation.policy, p.width);
            if let (true, Some(noise)) = (p.path.is_empty(), run.limits.root_noise) {
                noise.apply(&mut edges);
            }
            self.cache.add_edges(edges.len());
            {
                let mut data = p.leaf.data.lock();
                data.edges = edges;
                data.complete = p.complete;
                data.averaged_priors = p.path.is_empty() && self.config.root_symmetries;
                data.nn_wdl = evaluation.wdl;
                data.state = NodeState::Expanded;
            }
            self.backup(&p.path, Some(&p.leaf), evaluation.wdl, Proven::Unknown);
            progress.playouts.fetch_add(1, Ordering::Relaxed);
            progress.evaluations.fetch_add(1, Ordering::Relaxed);
            progress.in_flight.fetch_sub(1, Ordering::SeqCst);
        }
        progress.backups.announce();
    }

    /// Sets the edges' priors from the network's `policy` (cells of a board
    /// `width` wide), tempered and renormalised over the edges, and sorts
    /// the edges by them, highest first.
    fn set_priors(&self, edges: &mut [Edge], policy: &[f32], width: usize) {
        let sharpen = 1.0 / self.config.policy_temperature;
        for e in edges.iter_mut() {
            let cell = e.mv.y() as usize * width + e.mv.x() as usize;
            e.prior = tempered_prior(policy.get(cell).copied().unwrap_or(0.0), sharpen);
        }
        let total: f32 = edges.iter().map(|e| e.prior).sum();
        let n = edges.len() as f32;
        for e in edges.iter_mut() {
            e.prior = if total > 0.0 {
                e.prior / total
            } else {
                1.0 / n
            };
        }
        edges.sort_by(|a, b| b.prior.total_cmp(&a.prior));
    }

    /// Gives an expanded root the priors of the policy averaged over the
    /// board's symmetries (`root_symmetries`), once: a root reached
    /// through an earlier search was expanded with one symmetry. Only
    /// between tree searches: it reorders the root's edges, which
    /// descents in flight hold by index.
    pub(super) fn average_root_priors(&self, board: &Board, root: &Arc<Node>, clock: &TimeManager) {
        {
            let data = root.data.lock();
            if data.state != NodeState::Expanded || data.averaged_priors || data.edges.len() < 2 {
                return;
            }
        }
        let mut board = board.clone();
        let answer = self.service.submit_all_symmetries(&mut board);
        // It may queue behind the batches the last search left with the
        // network: under a clock, a late answer keeps the old priors.
        let evaluation = match clock.budget() {
            Some(budget) => answer
                .recv_timeout((budget.target / 10).max(Duration::from_millis(5)))
                .ok(),
            None => answer.recv().ok(),
        };
        let Some(evaluation) = evaluation else {
            return;
        };
        let width = board.size().width() as usize;
        let mut data = root.data.lock();
        self.set_priors(&mut data.edges, &evaluation.policy, width);
        data.averaged_priors = true;
    }

    /// Walks from the root to a leaf, adding virtual visits on the way.
    fn descend(
        &self,
        root_board: &Board,
        root: &Arc<Node>,
        max_depth: usize,
        params: PuctParams,
        excluded: &CellSet,
    ) -> Descent {
        let mut board = root_board.clone();
        let mut path: Vec<(Arc<Node>, usize)> = Vec::new();
        let mut node = Arc::clone(root);
        loop {
            let mut data = node.data.lock();
            if let Some(wdl) = data.proven.wdl() {
                let proven = data.proven;
                drop(data);
                return Descent::Known { path, wdl, proven };
            }
            match data.state {
                NodeState::Fresh => {
                    data.state = NodeState::Expanding;
                    data.virtual_visits += 1;
                    drop(data);
                    return Descent::Evaluate {
                        path,
                        leaf: node,
                        board,
                    };
                }
                NodeState::Expanding => {
                    drop(data);
                    return Descent::Collision { path };
                }
                NodeState::Expanded => {}
            }
            if path.len() >= max_depth {
                let wdl = data.nn_wdl;
                drop(data);
                return Descent::Known {
                    path,
                    wdl,
                    proven: Proven::Unknown,
                };
            }
            let skip = if path.is_empty() {
                Some(excluded)
            } else {
                None
            };
            let Some(i) = select_edge(&data, params, skip) else {
                // Expanded without moves: nothing can be played (drawn).
                drop(data);
                return Descent::Known {
                    path,
                    wdl: [0.0, 1.0, 0.0],
                    proven: Proven::Draw,
                };
            };
            data.edges[i].virtual_visits += 1;
            data.virtual_visits += 1;
            let mv = data.edges[i].mv;
            drop(data);
            path.push((Arc::clone(&node), i));
            board.play_unchecked(mv);
            node = self.cache.get_or_insert(&board);
        }
    }

    /// Adds a result to every edge and node of a descent, removes its
    /// virtual visits, and carries proven values up (MCTS-solver). `wdl` is
    /// for the side to move at the leaf; `leaf` is given when the descent
    /// counted a virtual visit on it, `known` is the proven value of a leaf
    /// reached without one.
    fn backup(
        &self,
        path: &[(Arc<Node>, usize)],
        leaf: Option<&Arc<Node>>,
        mut wdl: [f32; 3],
        known: Proven,
    ) {
        let mut child_proven = known;
        if let Some(leaf) = leaf {
            let mut data = leaf.data.lock();
            data.record_visit(wdl);
            child_proven = data.proven;
        }
        for (node, i) in path.iter().rev() {
            wdl = [wdl[2], wdl[1], wdl[0]];
            let mut data = node.data.lock();
            if let Some(edge) = data.edges.get_mut(*i) {
                edge.visits += 1;
                edge.virtual_visits = edge.virtual_visits.saturating_sub(1);
                edge.win_sum += wdl[0];
                edge.draw_sum += wdl[1];
                if child_proven.is_known() && !edge.proven.is_known() {
                    edge.proven = child_proven.for_parent();
                }
            }
            data.prove_from_edges();
            data.record_visit(wdl);
            child_proven = data.proven;
        }
    }

    /// Removes the virtual visits of an abandoned descent.
    fn revert(&self, path: &[(Arc<Node>, usize)]) {
        for (node, i) in path {
            let mut data = node.data.lock();
            if let Some(edge) = data.edges.get_mut(*i) {
                edge.virtual_visits = edge.virtual_visits.saturating_sub(1);
            }
            data.virtual_visits = data.virtual_visits.saturating_sub(1);
        }
    }

    fn revert_leaf(&self, path: &[(Arc<Node>, usize)], leaf: &Arc<Node>) {
        let mut data = leaf.data.lock();
        data.virtual_visits = data.virtual_visits.saturating_sub(1);
        drop(data);
        self.revert(path);
    }
}

/// The network's answer for a leaf, or `None` once the search halts while
/// it is still being computed, or when the service is gone. A batch takes
/// up to tens of milliseconds on a busy CPU: waiting for it after the halt
/// delayed the move past its deadline by as much, where the time manager's
/// reserve had been measured on a stop that found no batch in flight.
fn answer_unless_halted(answer: &Receiver<Evaluation>, progress: &Progress) -> Option<Evaluation> {
    loop {
        // Looked at before each wait: the leaves of a batch after the halt
        // cost no millisecond each.
        if progress.halt.load(Ordering::SeqCst) {
            return answer.try_recv().ok();
        }
        match answer.recv_timeout(Duration::from_millis(1)) {
            Ok(evaluation) => return Some(evaluation),
            Err(RecvTimeoutError::Disconnected) => return None,
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
}
