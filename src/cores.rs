//! How many cores this process may run on.
//!
//! `std::thread::available_parallelism` honours the affinity mask and the
//! control group's CPU quota on Linux, but on Windows it counts every
//! logical processor whatever the mask: a brain that a manager or
//! `start /affinity` pins to one core would still size its evaluators for
//! the whole machine and run them in turn on that core.

/// The cores this process may run on: the affinity mask's on Windows,
/// `available_parallelism` elsewhere. At least 1.
pub fn usable() -> usize {
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    match affinity_count() {
        Some(n) if n > 0 => n.min(all),
        _ => all,
    }
}

/// The processors in this process's affinity mask, which covers one
/// processor group (at most 64). A process spread over several groups
/// (Windows 11 and Server 2022 on machines of more than 64) gets an empty
/// mask: then `available_parallelism` stands.
#[cfg(windows)]
fn affinity_count() -> Option<usize> {
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, GetProcessAffinityMask};
    let mut process_mask = 0usize;
    let mut system_mask = 0usize;
    // SAFETY: the pseudo-handle of this process and two valid out-pointers.
    let ok =
        unsafe { GetProcessAffinityMask(GetCurrentProcess(), &mut process_mask, &mut system_mask) };
    (ok != 0).then(|| process_mask.count_ones() as usize)
}

#[cfg(not(windows))]
fn affinity_count() -> Option<usize> {
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn at_least_one_and_at_most_the_machine() {
        let all = std::thread::available_parallelism().map_or(1, |n| n.get());
        let usable = super::usable();
        assert!((1..=all).contains(&usable), "{usable} of {all}");
    }
}
