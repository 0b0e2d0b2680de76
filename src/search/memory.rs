//! The process's memory as tournament managers measure it, and the share of
//! a memory limit the search tree may use.
//!
//! GomocupJudge sums the USS (unique set size: private clean + private
//! dirty pages of `/proc/PID/smaps_rollup`) of the brain's processes after
//! every move and scores a loss above `INFO max_memory`. Everything the
//! process holds counts: libtorch's code and data, the network, the
//! allocator's retained free memory, the tree. So the tree gets what the
//! limit leaves after the rest, measured, less a margin.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Kept free below the limit: what grows between two measurements (network
/// buffers, thread stacks, allocator slack).
pub const MARGIN: usize = 24 << 20;

/// The smallest tree the search works with; below [`minimum_limit`] the
/// limit cannot be kept.
pub const MIN_TREE: usize = 4 << 20;

/// The most a threat-space solve holds per node of its budget: a
/// hash-table entry per node, the old table and the new one both held while
/// it doubles, and the move lists of the nodes still open (measured in
/// docs/features.md).
pub const SOLVER_BYTES_PER_NODE: usize = 160;

/// The solves that run at once (the root's, or one per search thread at
/// the leaves) take at most this fraction of the memory limit together: a
/// larger configured budget is cut to it, and the tree's budget leaves
/// room for it.
const SOLVER_SHARE_DIVISOR: usize = 8;

/// The most nodes the solves running at once may be given together under
/// a `limit` of bytes (usize::MAX: no limit, no cut).
pub fn solver_nodes_within(limit: usize) -> u64 {
    if limit == usize::MAX {
        return u64::MAX;
    }
    (limit / SOLVER_SHARE_DIVISOR / SOLVER_BYTES_PER_NODE) as u64
}

/// This process's USS in bytes (private clean + private dirty), or its
/// resident size where smaps_rollup is missing; on Windows the larger of
/// its private bytes and its peak working set (what Piskvork reads there).
#[cfg(unix)]
pub fn process_private_bytes() -> Option<usize> {
    if let Some(bytes) = uss_from("/proc/self/smaps_rollup") {
        return Some(bytes);
    }
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * usize::try_from(page).ok()?)
}

/// The larger of this process's private bytes (committed memory no other
/// process shares) and its peak working set: Piskvork scores a loss when
/// the peak working set passes `max_memory` after a move, and that counts
/// the exe's and the system libraries' resident pages too.
#[cfg(windows)]
pub fn process_private_bytes() -> Option<usize> {
    use windows_sys::Win32::System::ProcessStatus::{
        K32GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS, PROCESS_MEMORY_COUNTERS_EX,
    };
    use windows_sys::Win32::System::Threading::GetCurrentProcess;
    let mut counters: PROCESS_MEMORY_COUNTERS_EX = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<PROCESS_MEMORY_COUNTERS_EX>() as u32;
    // SAFETY: the pseudo-handle of this process, and a zeroed struct of the
    // size given (the EX struct begins with the plain one).
    let ok = unsafe {
        K32GetProcessMemoryInfo(
            GetCurrentProcess(),
            (&mut counters as *mut PROCESS_MEMORY_COUNTERS_EX).cast::<PROCESS_MEMORY_COUNTERS>(),
            size,
        )
    };
    (ok != 0).then_some(counters.PrivateUsage.max(counters.PeakWorkingSetSize))
}

#[cfg(not(any(unix, windows)))]
pub fn process_private_bytes() -> Option<usize> {
    None
}

/// The machine's physical memory in bytes, where the system says.
#[cfg(unix)]
pub fn physical_bytes() -> Option<usize> {
    // SAFETY: sysconf has no preconditions.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let bytes = usize::try_from(pages)
        .ok()?
        .checked_mul(usize::try_from(page).ok()?)?;
    (bytes > 0).then_some(bytes)
}

/// The machine's physical memory in bytes.
#[cfg(windows)]
pub fn physical_bytes() -> Option<usize> {
    use windows_sys::Win32::System::SystemInformation::{GlobalMemoryStatusEx, MEMORYSTATUSEX};
    // SAFETY: a zeroed struct with its length set, as the call requires.
    let mut status: MEMORYSTATUSEX = unsafe { std::mem::zeroed() };
    status.dwLength = std::mem::size_of::<MEMORYSTATUSEX>() as u32;
    // SAFETY: a valid pointer to that struct.
    let ok = unsafe { GlobalMemoryStatusEx(&mut status) };
    if ok == 0 {
        return None;
    }
    usize::try_from(status.ullTotalPhys).ok().filter(|&b| b > 0)
}

#[cfg(not(any(unix, windows)))]
pub fn physical_bytes() -> Option<usize> {
    None
}

/// The memory this process may use at most: the machine's, or less where a
/// Linux control group (a container, a systemd slice, a job scheduler) caps
/// it, since the kernel kills a process over its group's limit long before
/// the machine runs out.
pub fn available_bytes() -> Option<usize> {
    physical_bytes()
        .into_iter()
        .chain(cgroup_limit_bytes())
        .min()
}

/// The tightest memory limit of this process's control groups (v2
/// `memory.max`, v1 `memory.limit_in_bytes`), walking up from its own group
/// to the root, since every ancestor's limit applies too. Inside a container
/// the group named in `/proc/self/cgroup` may not exist under the mount
/// (the mount's root is the container's own group), which the walk up to
/// the mount's root covers.
#[cfg(target_os = "linux")]
fn cgroup_limit_bytes() -> Option<usize> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    cgroup_limit_under("/sys/fs/cgroup", &groups)
}

/// The tightest limit for the groups that `groups` (the text of
/// `/proc/self/cgroup`) names, with the hierarchies mounted under `root` as
/// systemd and container runtimes mount them: v2 at the root itself (or at
/// `unified` beside v1's controllers), v1's memory controller at `memory`.
#[cfg(target_os = "linux")]
fn cgroup_limit_under(root: &str, groups: &str) -> Option<usize> {
    let (v2, v1) = cgroup_memory_paths(groups);
    let mut limits = Vec::new();
    if let Some(path) = v2 {
        for mount in [root.to_string(), format!("{root}/unified")] {
            limits.extend(limits_up_from(&mount, &path, "memory.max"));
        }
    }
    if let Some(path) = v1 {
        limits.extend(limits_up_from(
            &format!("{root}/memory"),
            &path,
            "memory.limit_in_bytes",
        ));
    }
    limits.into_iter().min()
}

#[cfg(not(target_os = "linux"))]
fn cgroup_limit_bytes() -> Option<usize> {
    None
}

/// The limits in `file` of group `path` under `mount` and of each of its
/// ancestors, where the files exist and set one.
#[cfg(target_os = "linux")]
fn limits_up_from(mount: &str, path: &str, file: &str) -> Vec<usize> {
    let mut limits = Vec::new();
    let mut group = path.trim_end_matches('/');
    loop {
        let at = format!("{mount}{group}/{file}");
        if let Some(limit) = std::fs::read_to_string(&at)
            .ok()
            .and_then(|text| parse_cgroup_limit(&text))
        {
            limits.push(limit);
        }
        match group.rfind('/') {
            Some(cut) => group = &group[..cut],
            None => break,
        }
    }
    limits
}

/// The group paths of `/proc/self/cgroup`: the unified (v2) hierarchy's
/// (`0::/path`) and the v1 memory controller's (`N:memory:/path`).
#[cfg(any(target_os = "linux", test))]
fn cgroup_memory_paths(text: &str) -> (Option<String>, Option<String>) {
    let mut v2 = None;
    let mut v1 = None;
    for line in text.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if !path.starts_with('/') {
            continue;
        }
        if id == "0" && controllers.is_empty() {
            v2 = Some(path.to_string());
        } else if controllers.split(',').any(|c| c == "memory") {
            v1 = Some(path.to_string());
        }
    }
    (v2, v1)
}

/// A limit file's value: bytes, or None for "max" (v2) or v1's "no limit",
/// a number near `i64::MAX` rounded down to a page.
#[cfg(any(target_os = "linux", test))]
fn parse_cgroup_limit(text: &str) -> Option<usize> {
    let bytes: u64 = text.trim().parse().ok()?;
    // v1 writes 0x7FFFFFFFFFFFF000 (on 4 KiB pages) for no limit; nothing
    // real is within a petabyte of it.
    (bytes > 0 && bytes < (1 << 62)).then(|| usize::try_from(bytes).unwrap_or(usize::MAX))
}

/// The USS of process `pid` in bytes, as GomocupJudge reads it (None when
/// its smaps_rollup cannot be read).
pub fn private_bytes_of(pid: u32) -> Option<usize> {
    uss_from(&format!("/proc/{pid}/smaps_rollup"))
}

/// Private clean + private dirty of an smaps_rollup file, in bytes.
fn uss_from(path: &str) -> Option<usize> {
    let text = std::fs::read_to_string(path).ok()?;
    let kib: usize = text
        .lines()
        .filter(|l| l.starts_with("Private_Clean:") || l.starts_with("Private_Dirty:"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<usize>().ok())
        .sum();
    (kib > 0).then_some(kib * 1024)
}

/// How close to the limit the process may come during a search before it
/// stops (see [`process_ceiling`]): what the final safety check and the
/// answer still allocate after the stop fits in it.
pub const LIVE_HEADROOM: usize = MARGIN / 2;

/// The process memory at which a search under `limit` stops, the process
/// holding `used` bytes as it starts (after the prune), `rest` of them
/// outside the tree: the limit less [`LIVE_HEADROOM`]. None where the
/// limit is out of reach (the tree's smallest budget governs, as it always
/// did) or the process has not [`LIVE_HEADROOM`] left below the ceiling: a
/// search would stop at its root's first evaluation and play on old
/// numbers (on Windows, whose measure keeps its peak, every search of the
/// game would).
pub fn process_ceiling(limit: usize, used: usize, rest: usize) -> Option<usize> {
    let ceiling = limit.saturating_sub(LIVE_HEADROOM);
    // No solver reserve here: the solvers' live tables are in the measure,
    // so the watch can still keep a limit the notes call too low for them.
    (limit >= minimum_limit(rest, 0) && used.saturating_add(LIVE_HEADROOM) < ceiling)
        .then_some(ceiling)
}

/// How often a search measures the process while it runs: every quarter
/// second near the ceiling (or sooner once the tree has grown by
/// [`LIVE_GROWTH`]), every second far below it, as reading the measure
/// (`smaps_rollup` walks the page tables under the memory map's lock)
/// costs milliseconds for a process of hundreds of megabytes.
const LIVE_INTERVAL_NEAR: std::time::Duration = std::time::Duration::from_millis(250);
const LIVE_INTERVAL_FAR: std::time::Duration = std::time::Duration::from_secs(1);
const LIVE_GROWTH: usize = 4 << 20;
/// "Far": this much below the ceiling, allowing for the tree's growth
/// since.
const LIVE_FAR: usize = 64 << 20;

/// The process's memory read now and then during a search, for the
/// [`crate::search::stoppers::ProcessMemory`] stop at `ceiling`.
#[derive(Debug)]
pub struct LiveMeasure {
    ceiling: usize,
    /// When, at what tree size and with what result it last measured.
    last: Option<(std::time::Instant, usize, Option<usize>)>,
}

impl LiveMeasure {
    pub fn new(ceiling: usize) -> LiveMeasure {
        LiveMeasure {
            ceiling,
            last: None,
        }
    }

    /// The latest measure, taken again when it is due with the tree at
    /// `tree_bytes`.
    pub fn read(&mut self, tree_bytes: usize) -> Option<usize> {
        let due = match self.last {
            None => true,
            Some((at, tree, measured)) => {
                let grown = tree_bytes.saturating_sub(tree);
                let far = measured.is_some_and(|m| {
                    m.saturating_add(grown).saturating_add(LIVE_FAR) < self.ceiling
                });
                let interval = if far {
                    LIVE_INTERVAL_FAR
                } else {
                    LIVE_INTERVAL_NEAR
                };
                at.elapsed() >= interval || grown >= LIVE_GROWTH
            }
        };
        if due {
            self.last = Some((
                std::time::Instant::now(),
                tree_bytes,
                process_private_bytes(),
            ));
        }
        self.last.and_then(|(_, _, bytes)| bytes)
    }
}

/// Whether [`process_private_bytes`] includes a peak, which never falls:
/// on Windows, the peak working set that Piskvork reads.
pub const MEASURE_INCLUDES_PEAK: bool = cfg!(windows);

/// The most bytes a search tree of this process has been seen to hold.
static TREE_HIGH_WATER: AtomicUsize = AtomicUsize::new(0);

/// The tree's share of [`process_private_bytes`] when the tree holds
/// `tree_now` bytes: those bytes where the measurement is current; where it
/// includes a peak, the most the tree has held (a tree pruned after a move
/// or cleared for a new game does not lower the peak, and the bytes it gave
/// back would otherwise count as the rest of the process for good, the
/// budget shrinking with every move and never growing again).
pub fn tree_share_of_measure(tree_now: usize) -> usize {
    note_tree_bytes(tree_now);
    tree_share(
        tree_now,
        TREE_HIGH_WATER.load(Ordering::Relaxed),
        MEASURE_INCLUDES_PEAK,
    )
}

/// Records that a search tree of this process holds `bytes` now (sampled
/// while it grows: a sample below the true high-water mark only makes
/// the budget smaller).
pub fn note_tree_bytes(bytes: usize) {
    TREE_HIGH_WATER.fetch_max(bytes, Ordering::Relaxed);
}

/// The bytes of freed nodes that the allocator may still hold, where the
/// measure is current (Linux): freed pages are not given back to the
/// system at once (the nodes of a cleared tree are freed on a thread of
/// their own, and the allocator keeps freed pages for reuse), so right
/// after a clear or a prune the measure still counts them, and taken as
/// the rest of the process they left the next search the smallest tree
/// (a second game in one process stopped for memory in a fifth of its
/// turn). Counted as the tree's until the tree grows back into them or the
/// measure falls by them.
#[derive(Debug, Default)]
pub struct RetainedMemory {
    /// Freed bytes still held, as last estimated.
    pending: usize,
    /// The tree's bytes and the measure at the last estimate.
    last: Option<(usize, usize)>,
}

impl RetainedMemory {
    /// The tree's share of the measure `measured` when the tree holds
    /// `tree_now` bytes and `released` bytes were freed since the last
    /// call: the tree's bytes and the freed bytes still held.
    pub fn share(&mut self, tree_now: usize, released: usize, measured: usize) -> usize {
        let (last_tree, last_measured) = self.last.unwrap_or((tree_now + released, measured));
        // The tree's growth since the last estimate goes first into freed
        // pages; beyond them, into new ones, which the measure shows.
        let grown = (tree_now + released).saturating_sub(last_tree);
        let reused = grown.min(self.pending);
        let expected = last_measured + (grown - reused);
        let given_back = expected.saturating_sub(measured);
        self.pending = (self.pending - reused + released)
            .saturating_sub(given_back)
            .min(measured.saturating_sub(tree_now));
        self.last = Some((tree_now, measured));
        tree_now + self.pending
    }
}

fn tree_share(tree_now: usize, high_water: usize, includes_peak: bool) -> usize {
    if includes_peak {
        high_water.max(tree_now)
    } else {
        tree_now
    }
}

/// The bytes the tree may use under `limit` when the process holds `used`
/// bytes of which `tree` are the tree's own: the limit less everything else
/// and the margin, but never less than [`MIN_TREE`].
pub fn tree_budget(limit: usize, used: usize, tree: usize) -> usize {
    let rest = used.saturating_sub(tree);
    limit
        .saturating_sub(rest)
        .saturating_sub(MARGIN)
        .max(MIN_TREE)
}

/// The smallest limit under which the engine can stay, given that it holds
/// `baseline` bytes without a tree and its solvers may hold
/// `solver_reserve` more: the limit at which [`tree_budget`], given the
/// limit less that reserve, leaves the smallest tree.
pub fn minimum_limit(baseline: usize, solver_reserve: usize) -> usize {
    baseline + solver_reserve + MARGIN + MIN_TREE
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cleared tree's bytes count as the tree's while the allocator
    /// holds them, less what the next tree reuses and what the measure
    /// shows given back; growth into new pages is the tree's alone.
    #[test]
    fn freed_nodes_count_as_the_trees_until_reused_or_given_back() {
        const MB: usize = 1 << 20;
        let mut retained = RetainedMemory::default();
        // 60 MB outside the tree; a first search grows a 50 MB tree.
        assert_eq!(retained.share(0, 0, 60 * MB), 0);
        assert_eq!(retained.share(50 * MB, 0, 113 * MB), 50 * MB);
        // Cleared: the measure has not moved, the 50 MB are still the tree's.
        let share = retained.share(0, 50 * MB, 113 * MB);
        assert_eq!(share, 50 * MB);
        assert_eq!(
            tree_budget(120 * MB, 113 * MB, share),
            120 * MB - 63 * MB - MARGIN
        );
        // The next tree grows 30 MB into those pages and a prune frees 10:
        // 20 MB held from the clear and 10 from the prune.
        assert_eq!(retained.share(20 * MB, 10 * MB, 113 * MB), 50 * MB);
        // 25 MB given back: the measure falls by them.
        assert_eq!(retained.share(20 * MB, 0, 88 * MB), 25 * MB);
        // Growth beyond the freed pages is new memory.
        assert_eq!(retained.share(60 * MB, 0, 123 * MB), 60 * MB);
        // A clear of the 60 MB, nothing given back yet.
        assert_eq!(retained.share(0, 60 * MB, 123 * MB), 60 * MB);
        // Never more than the measure less the tree.
        let mut fresh = RetainedMemory::default();
        assert_eq!(fresh.share(0, 100 * MB, 40 * MB), 40 * MB);
    }

    #[test]
    fn the_process_ceiling_keeps_headroom_where_the_limit_can_be_kept() {
        let mb = |n: usize| n << 20;
        let ceiling = mb(350) - LIVE_HEADROOM;
        assert_eq!(process_ceiling(mb(350), mb(100), mb(60)), Some(ceiling));
        // Less than the headroom left below the ceiling as the search
        // starts (a peak measure, or a tree that could not be pruned):
        // the tree's budget only.
        let start = ceiling - LIVE_HEADROOM;
        assert_eq!(process_ceiling(mb(350), start, mb(60)), None);
        assert_eq!(process_ceiling(mb(350), start - 1, mb(60)), Some(ceiling));
        // A limit below the engine's own needs: its smallest tree.
        let rest = mb(350) - MARGIN - MIN_TREE;
        assert_eq!(process_ceiling(mb(350), rest, rest), Some(ceiling));
        assert_eq!(process_ceiling(mb(350), rest + 1, rest + 1), None);
    }

    #[test]
    fn a_peak_measure_counts_the_trees_high_water_mark() {
        const MB: usize = 1 << 20;
        // 150 MB outside the tree under a 350 MB limit; the first search
        // stopped for memory with a 176 MB tree, so the peak is 326 MB.
        let peak = 150 * MB + 176 * MB;
        let budget = |tree_now| tree_budget(350 * MB, peak, tree_share(tree_now, 176 * MB, true));
        // Pruned to 130 MB, or cleared for a new game: the tree may grow
        // back into the pages the peak already counts.
        assert_eq!(budget(130 * MB), 176 * MB);
        assert_eq!(budget(0), 176 * MB);
        // A current measure (Linux's USS) counts the tree as it is now.
        assert_eq!(tree_share(130 * MB, 176 * MB, false), 130 * MB);
    }

    #[test]
    fn the_tree_gets_what_the_rest_leaves() {
        const MB: usize = 1 << 20;
        // 150 MB of code and network, 50 MB of tree, 350 MB allowed.
        assert_eq!(
            tree_budget(350 * MB, 200 * MB, 50 * MB),
            350 * MB - 150 * MB - MARGIN
        );
        // A limit below the baseline still leaves the smallest tree.
        assert_eq!(tree_budget(100 * MB, 150 * MB, 0), MIN_TREE);
        // At the minimum limit the tree gets the smallest tree, its solvers'
        // reserve taken first as the search takes it; above it, more.
        let (baseline, reserve) = (150 * MB, 3 * MB);
        let floor = minimum_limit(baseline, reserve);
        assert_eq!(tree_budget(floor - reserve, baseline, 0), MIN_TREE);
        assert_eq!(
            tree_budget(floor - reserve + MB, baseline, 0),
            MIN_TREE + MB
        );
        assert_eq!(tree_budget(floor - reserve - MB, baseline, 0), MIN_TREE);
        let uss = process_private_bytes().expect("Linux and Windows report the process memory");
        assert!(uss > 1 << 20, "{uss}");
    }

    #[test]
    fn control_group_limits_are_read_from_either_hierarchy() {
        let v1 = "9:name=systemd:/\n4:memory:/process_api/afa0\n1:cpu,cpuacct:/\n0::/\n";
        assert_eq!(
            cgroup_memory_paths(v1),
            (Some("/".to_string()), Some("/process_api/afa0".to_string()))
        );
        let v2 = "0::/user.slice/user-1000.slice/session-3.scope\n";
        assert_eq!(
            cgroup_memory_paths(v2),
            (
                Some("/user.slice/user-1000.slice/session-3.scope".to_string()),
                None
            )
        );
        let joined = "5:cpu,memory:/job/42\n";
        assert_eq!(
            cgroup_memory_paths(joined),
            (None, Some("/job/42".to_string()))
        );
        assert_eq!(cgroup_memory_paths("garbage\n\n3:memory\n"), (None, None));

        assert_eq!(parse_cgroup_limit("367001600\n"), Some(367_001_600));
        assert_eq!(parse_cgroup_limit("max\n"), None);
        assert_eq!(parse_cgroup_limit("9223372036854771712\n"), None);
        assert_eq!(parse_cgroup_limit("0\n"), None);
        assert_eq!(parse_cgroup_limit("-1"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_tightest_limit_up_the_group_tree_counts() {
        let root = std::env::temp_dir().join(format!("wuzi-cgroup-{}", std::process::id()));
        let write = |path: &str, text: &str| {
            let file = root.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        };
        let at = root.to_str().unwrap();
        // v2: the group itself is unlimited, its parent slice is not, the
        // root has no file.
        write("user.slice/memory.max", "536870912\n");
        write("user.slice/session.scope/memory.max", "max\n");
        assert_eq!(
            cgroup_limit_under(at, "0::/user.slice/session.scope\n"),
            Some(512 << 20)
        );
        // A tighter limit deeper down wins.
        write("user.slice/session.scope/memory.max", "367001600\n");
        assert_eq!(
            cgroup_limit_under(at, "0::/user.slice/session.scope\n"),
            Some(367_001_600)
        );
        // v1 in a container: the group named is not under the mount, whose
        // root is the container's own group.
        write("memory/memory.limit_in_bytes", "268435456\n");
        assert_eq!(
            cgroup_limit_under(at, "4:memory:/docker/0123abcd\n0::/\n"),
            Some(256 << 20)
        );
        // v1's "no limit" is none.
        write("memory/memory.limit_in_bytes", "9223372036854771712\n");
        assert_eq!(cgroup_limit_under(at, "4:memory:/docker/0123abcd\n"), None);
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// The machine's memory is read, in bytes (a unit slip would give a
    /// figure a thousand times off); the cgroup's limits have their own
    /// test above.
    #[test]
    fn the_machines_memory_is_read_in_bytes() {
        let physical = physical_bytes().expect("Linux and Windows report the machine's memory");
        assert!(
            (256 << 20..1 << 50).contains(&physical),
            "{physical} bytes of memory"
        );
        assert!(available_bytes().is_some_and(|a| a > 1 << 20));
    }
}
