//! Batches made on another thread while the network trains on the last.

use super::*;

/// Most threads encoding batches: beyond this the trainer, not the
/// encoding, is what waits.
pub const MAX_LOADER_THREADS: usize = 16;

/// Batches of `plan`, built on `threads` CPU threads ahead of use and
/// handed out in plan order.
pub(super) struct Producer {
    rx: Option<Receiver<Produced>>,
    workers: Vec<JoinHandle<()>>,
    next: usize,
    len: usize,
    waiting: BTreeMap<usize, Result<Batch, String>>,
}

impl Producer {
    pub(super) fn start(
        data: Arc<Dataset>,
        plan: Vec<Vec<(Sample, Symmetry)>>,
        threads: usize,
        search_value_weight: f32,
    ) -> Producer {
        let threads = threads.clamp(1, MAX_LOADER_THREADS);
        let len = plan.len();
        let plan = Arc::new(plan);
        let counter = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = sync_channel::<Produced>(2 * threads);
        let workers = (0..threads)
            .map(|_| {
                let (data, plan, counter, tx) =
                    (data.clone(), plan.clone(), counter.clone(), tx.clone());
                std::thread::spawn(move || loop {
                    let i = counter.fetch_add(1, Ordering::Relaxed);
                    let Some(items) = plan.get(i) else { return };
                    // A batch lost to a panic would leave the trainer
                    // waiting for it while the later ones pile up.
                    let batch = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        make_batch_with(&data, items, search_value_weight)
                    }))
                    .unwrap_or_else(|payload| {
                        let what = crate::panics::message(&*payload).unwrap_or("no message");
                        Err(format!("a batch thread failed: {what}"))
                    });
                    if tx.send((i, batch)).is_err() {
                        return;
                    }
                })
            })
            .collect();
        Producer {
            rx: Some(rx),
            workers,
            next: 0,
            len,
            waiting: BTreeMap::new(),
        }
    }

    pub(super) fn next_batch(&mut self) -> Option<Result<Batch, String>> {
        if self.next >= self.len {
            return None;
        }
        loop {
            if let Some(batch) = self.waiting.remove(&self.next) {
                self.next += 1;
                return Some(batch);
            }
            match self.rx.as_ref()?.recv() {
                Ok((i, batch)) => {
                    self.waiting.insert(i, batch);
                }
                Err(_) => return Some(Err("the batch threads stopped".into())),
            }
        }
    }
}

impl Drop for Producer {
    fn drop(&mut self) {
        // Closing the channel stops the workers at their next batch.
        self.rx = None;
        self.waiting.clear();
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}
