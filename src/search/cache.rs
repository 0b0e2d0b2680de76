//! The node cache: every position searched, keyed by Zobrist hash, so that
//! transpositions share one node and the tree survives from move to move.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::game::Board;
use crate::search::node::{Edge, Node, PositionKey};

/// Shards, so that threads rarely wait on each other's lookups.
const SHARDS: usize = 64;
/// Bookkeeping per cached node beyond the node itself: the map entry and
/// the `Arc` header.
const ENTRY_OVERHEAD: usize = 48;

/// The nodes whose hashes fall in one shard, by hash.
type Shard = Mutex<HashMap<u64, Arc<Node>>>;

pub struct NodeCache {
    shards: Box<[Shard]>,
    bytes: AtomicUsize,
    nodes: AtomicUsize,
    /// The shard a pruning pass starts from: a pass cut short by time
    /// leaves the next one to start where it stopped.
    next_shard: AtomicUsize,
    /// Bytes of nodes freed since the memory was last measured.
    released: AtomicUsize,
    retained: Mutex<crate::search::memory::RetainedMemory>,
}

impl Default for NodeCache {
    fn default() -> NodeCache {
        NodeCache::new()
    }
}

impl NodeCache {
    pub fn new() -> NodeCache {
        NodeCache {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            bytes: AtomicUsize::new(0),
            nodes: AtomicUsize::new(0),
            next_shard: AtomicUsize::new(0),
            released: AtomicUsize::new(0),
            retained: Mutex::new(Default::default()),
        }
    }

    /// Forgets which freed nodes the allocator may hold: the next measure
    /// counts the process's memory outside the tree as it is.
    pub fn forget_released(&self) {
        self.released.store(0, Ordering::Relaxed);
        *self.retained.lock() = Default::default();
    }

    /// The tree's share of the process's memory measured now (`measured`
    /// bytes): its nodes, and the freed ones the allocator may still hold
    /// ([`crate::search::memory::RetainedMemory`]).
    pub fn share_of_measure(&self, measured: usize) -> usize {
        let released = self.released.swap(0, Ordering::Relaxed);
        self.retained
            .lock()
            .share(self.memory_bytes(), released, measured)
    }

    fn shard(&self, hash: u64) -> &Shard {
        &self.shards[(hash >> 58) as usize % SHARDS]
    }

    fn node_bytes(key: &PositionKey) -> usize {
        std::mem::size_of::<Node>() + key.heap_bytes() + ENTRY_OVERHEAD
    }

    /// The node of `board`'s position, if cached.
    pub fn get(&self, board: &Board) -> Option<Arc<Node>> {
        let hash = PositionKey::hash_of(board);
        let shard = self.shard(hash).lock();
        shard.get(&hash).filter(|n| n.key().matches(board)).cloned()
    }

    /// The node of `board`'s position, created if new. On the (rare) hash
    /// collision with another position, a fresh node that is not cached is
    /// returned, so the two positions never share statistics.
    pub fn get_or_insert(&self, board: &Board) -> Arc<Node> {
        let hash = PositionKey::hash_of(board);
        let mut shard = self.shard(hash).lock();
        if let Some(node) = shard.get(&hash) {
            if node.key().matches(board) {
                return Arc::clone(node);
            }
            return Arc::new(Node::new(PositionKey::of(board)));
        }
        let key = PositionKey::of(board);
        self.bytes
            .fetch_add(Self::node_bytes(&key), Ordering::Relaxed);
        self.nodes.fetch_add(1, Ordering::Relaxed);
        let node = Arc::new(Node::new(key));
        shard.insert(hash, Arc::clone(&node));
        node
    }

    /// Records the memory of `count` edges just added to a node.
    pub fn add_edges(&self, count: usize) {
        self.bytes
            .fetch_add(count * std::mem::size_of::<Edge>(), Ordering::Relaxed);
    }

    /// Takes back the memory of `count` edges counted by [`add_edges`] for
    /// a node the cache does not hold, once it is dropped.
    ///
    /// [`add_edges`]: NodeCache::add_edges
    pub fn forget_edges(&self, count: usize) {
        let bytes = count * std::mem::size_of::<Edge>();
        // Never below zero: a clear may have reset the count meanwhile.
        let _ = self
            .bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                Some(b.saturating_sub(bytes))
            });
    }

    /// Estimated memory held by the cached nodes and their edges.
    pub fn memory_bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    pub fn node_count(&self) -> usize {
        self.nodes.load(Ordering::Relaxed)
    }

    /// Forgets everything (CLEARHASH, a new game). The nodes are freed on
    /// a thread of their own: millions of them take a noticeable part of
    /// the short first move that a new game's clear comes before.
    pub fn clear(&self) {
        let old: Vec<HashMap<u64, Arc<Node>>> = self
            .shards
            .iter()
            .map(|shard| std::mem::take(&mut *shard.lock()))
            .collect();
        let bytes = self.bytes.swap(0, Ordering::Relaxed);
        self.released.fetch_add(bytes, Ordering::Relaxed);
        self.nodes.store(0, Ordering::Relaxed);
        if old.iter().all(HashMap::is_empty) {
            return;
        }
        // Where no thread can be started, the caller frees them.
        let _ = std::thread::Builder::new()
            .name("wuzi-free-tree".into())
            .spawn(move || drop(old));
    }

    /// Drops the nodes that `keep` rejects, returning how many went.
    /// Nodes still referenced by a running search stay alive until it ends.
    /// `give_up` is asked before each shard after the first: a pass over
    /// millions of nodes takes a noticeable part of a turn, and the rest
    /// can wait for the next pass, which starts where this one stopped (a
    /// pass always does one shard, so that passes make progress).
    pub fn retain(&self, keep: impl Fn(&Node) -> bool, give_up: impl Fn() -> bool) -> usize {
        let mut removed = 0;
        let mut freed = 0;
        let first = self.next_shard.load(Ordering::Relaxed);
        for i in 0..SHARDS {
            let index = (first + i) % SHARDS;
            if i > 0 && give_up() {
                self.next_shard.store(index, Ordering::Relaxed);
                break;
            }
            self.shards[index].lock().retain(|_, node| {
                if keep(node) {
                    return true;
                }
                removed += 1;
                freed += Self::node_bytes(node.key())
                    + node.data.lock().edges.capacity() * std::mem::size_of::<Edge>();
                false
            });
        }
        self.nodes
            .fetch_sub(removed.min(self.node_count()), Ordering::Relaxed);
        let bytes = self.memory_bytes();
        self.bytes
            .store(bytes.saturating_sub(freed), Ordering::Relaxed);
        self.released.fetch_add(freed.min(bytes), Ordering::Relaxed);
        removed
    }

    /// Keeps only positions that can follow `board` (at least as many
    /// stones, and every stone of `board` present): the part of the tree a
    /// search from `board` can reach. Stops early when `give_up` says so
    /// (see [`NodeCache::retain`]).
    pub fn keep_descendants_of(&self, board: &Board, give_up: impl Fn() -> bool) -> usize {
        let root = PositionKey::of(board);
        self.retain(|node| node.key().contains_all_of(&root), give_up)
    }

    /// Keeps `board`'s own node and the positions that can follow it with
    /// at least `fewest` visits: where the descendants alone fill the
    /// budget, the least searched go (their parents keep their edges'
    /// numbers; a position dropped is evaluated again if reached). Stops
    /// early as [`NodeCache::retain`].
    pub fn keep_visited_descendants_of(
        &self,
        board: &Board,
        fewest: u32,
        give_up: impl Fn() -> bool,
    ) -> usize {
        let root = PositionKey::of(board);
        self.retain(
            |node| {
                node.key().matches(board)
                    || node.key().contains_all_of(&root) && node.data.lock().visits >= fewest
            },
            give_up,
        )
    }
}

impl PositionKey {
    /// Whether every stone of `other` is in this position too.
    pub fn contains_all_of(&self, other: &PositionKey) -> bool {
        if self.stone_count() < other.stone_count() || !self.same_game_as(other) {
            return false;
        }
        let (mut i, mine) = (0, self.stones());
        for &s in other.stones() {
            while i < mine.len() && mine[i] < s {
                i += 1;
            }
            if i == mine.len() || mine[i] != s {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{BoardSize, Color, Point, Rule};

    fn p(x: u8, y: u8) -> Point {
        Point::new(x, y).unwrap()
    }

    #[test]
    fn a_key_matches_exactly_the_boards_it_was_made_from() {
        let size = BoardSize::square(15).unwrap();
        let board = |moves: &[Point]| Board::from_moves(size, Rule::Freestyle, moves).unwrap();
        let a = board(&[p(7, 7), p(8, 8), p(6, 6)]);
        let key = PositionKey::of(&a);
        // Another order of the same stones: the same position.
        assert!(key.matches(&board(&[p(6, 6), p(8, 8), p(7, 7)])));
        // Colours swapped, a stone fewer or more, another cell.
        assert!(!key.matches(&board(&[p(8, 8), p(7, 7), p(6, 6)])));
        assert!(!key.matches(&board(&[p(7, 7), p(8, 8)])));
        assert!(!key.matches(&board(&[p(7, 7), p(8, 8), p(6, 6), p(1, 1)])));
        assert!(!key.matches(&board(&[p(7, 7), p(8, 8), p(5, 5)])));
        // Another side to move, rule or size.
        let mut passed = a.clone();
        passed.set_side_to_move(Color::Black);
        assert!(!key.matches(&passed));
        let renju = Board::from_moves(size, Rule::Renju, &[p(7, 7), p(8, 8), p(6, 6)]).unwrap();
        assert!(!key.matches(&renju));
        let big = BoardSize::square(16).unwrap();
        let other = Board::from_moves(big, Rule::Freestyle, &[p(7, 7), p(8, 8), p(6, 6)]).unwrap();
        assert!(!key.matches(&other));
        for b in [a, passed, renju, other] {
            assert!(PositionKey::of(&b).matches(&b));
        }
    }

    #[test]
    fn transpositions_share_a_node_and_pruning_keeps_descendants() {
        let size = BoardSize::square(15).unwrap();
        let cache = NodeCache::new();
        let a = Board::from_moves(size, Rule::Freestyle, &[p(7, 7), p(8, 8), p(6, 6)]).unwrap();
        let b = Board::from_moves(size, Rule::Freestyle, &[p(6, 6), p(8, 8), p(7, 7)]).unwrap();
        let na = cache.get_or_insert(&a);
        let nb = cache.get_or_insert(&b);
        assert!(Arc::ptr_eq(&na, &nb));
        assert_eq!(cache.node_count(), 1);
        let short = Board::from_moves(size, Rule::Freestyle, &[p(7, 7)]).unwrap();
        let other = Board::from_moves(size, Rule::Freestyle, &[p(1, 1)]).unwrap();
        cache.get_or_insert(&short);
        cache.get_or_insert(&other);
        assert_eq!(cache.node_count(), 3);
        let before = cache.memory_bytes();
        // Passes told to give up at once walk one shard each, and go on
        // where the last one stopped: in SHARDS passes, all of them.
        let removed: usize = (0..SHARDS)
            .map(|_| cache.keep_descendants_of(&short, || true))
            .sum();
        assert_eq!(removed, 1, "only (1,1) is not a descendant of (7,7)");
        assert!(
            cache.get(&a).is_some() && cache.get(&short).is_some() && cache.get(&other).is_none()
        );
        assert!(cache.memory_bytes() < before);
        // The same stones on another board size or rule are another node.
        let big = Board::new(BoardSize::square(20).unwrap(), Rule::Freestyle);
        let renju = Board::new(size, Rule::Renju);
        let empty = Board::new(size, Rule::Freestyle);
        let nodes = [
            cache.get_or_insert(&big),
            cache.get_or_insert(&renju),
            cache.get_or_insert(&empty),
        ];
        assert!(
            !Arc::ptr_eq(&nodes[0], &nodes[1])
                && !Arc::ptr_eq(&nodes[0], &nodes[2])
                && !Arc::ptr_eq(&nodes[1], &nodes[2])
        );
        cache.clear();
        assert_eq!((cache.node_count(), cache.memory_bytes()), (0, 0));
        assert!(cache.get(&a).is_none());
    }
}
