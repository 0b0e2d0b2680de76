//! The process's memory as tournament managers measure it, and the share of
//! a memory limit the search tree may use.
//!
//! GomocupJudge sums the USS (unique set size: private clean + private
//! dirty pages of `/proc/PID/smaps_rollup`) of the brain's processes after
//! every move and scores a loss above `INFO max_memory`. Everything the
//! process holds counts: libtorch's code and data, the network, the
//! allocator's retained free memory, the tree. So the tree gets what the
//! limit leaves after the rest, measured, less a margin.

/// Kept free below the limit: what grows between two measurements (network
/// buffers, thread stacks, allocator slack).
pub const MARGIN: usize = 24 << 20;

/// The smallest tree the search works with; below `baseline + MARGIN +
/// MIN_TREE` the limit cannot be kept.
pub const MIN_TREE: usize = 4 << 20;

/// This process's USS in bytes (private clean + private dirty), or its
/// resident size where smaps_rollup is missing; on Windows its private
/// bytes (what the Gomocup's manager reads there).
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

/// This process's private bytes (committed memory no other process shares).
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
    (ok != 0).then_some(counters.PrivateUsage)
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
/// `baseline` bytes without a tree.
pub fn minimum_limit(baseline: usize) -> usize {
    baseline + MARGIN + MIN_TREE
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(minimum_limit(150 * MB), 150 * MB + MARGIN + MIN_TREE);
        let uss = process_private_bytes().expect("Linux and Windows report the process memory");
        assert!(uss > 1 << 20, "{uss}");
    }
}
