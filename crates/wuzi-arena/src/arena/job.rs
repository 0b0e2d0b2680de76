//! Windows: each engine in a job object of its own, so that killing the
//! engine ends what it started too (a `cmd /c` or launcher's engine, which
//! would otherwise go on using the CPU), and so that every engine ends with
//! the runner however the runner ends (the job's last handle closes with
//! the runner's process). What Unix gets from the engine's process group.
//!
//! The engine is created suspended ([`CREATE_SUSPENDED`]), put in its job,
//! then resumed ([`resume`]): a process it started before being assigned
//! would be outside the job.

use std::io;
use std::os::windows::io::AsRawHandle;
use std::process::Child;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, Thread32First, Thread32Next, TH32CS_SNAPTHREAD, THREADENTRY32,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Threading::{OpenThread, ResumeThread, THREAD_SUSPEND_RESUME};

/// The creation flag that starts the engine suspended, for [`resume`].
pub(crate) const CREATE_SUSPENDED: u32 = windows_sys::Win32::System::Threading::CREATE_SUSPENDED;

/// Starts `child`, created with [`CREATE_SUSPENDED`]: resumes its threads
/// (a process created suspended has one, its main thread, whose handle
/// `Child` does not keep, so it is found by the process id).
pub(crate) fn resume(child: &Child) -> io::Result<()> {
    let pid = child.id();
    // SAFETY: a snapshot of the system's threads; the handle is checked and
    // closed below.
    let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snapshot == INVALID_HANDLE_VALUE || snapshot.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a zeroed entry is valid; its size field is set as the API asks.
    let mut entry: THREADENTRY32 = unsafe { std::mem::zeroed() };
    entry.dwSize = std::mem::size_of::<THREADENTRY32>() as u32;
    let mut resumed = 0;
    let mut failure = None;
    // SAFETY: the snapshot's handle is open; `entry` outlives each call.
    let mut more = unsafe { Thread32First(snapshot, &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: a thread handle opened for resuming, closed at once.
            let thread = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) };
            if thread.is_null() {
                failure = Some(io::Error::last_os_error());
            } else {
                // SAFETY: `thread` is open with THREAD_SUSPEND_RESUME.
                match unsafe { ResumeThread(thread) } {
                    u32::MAX => failure = Some(io::Error::last_os_error()),
                    // Not suspended: a thread injected from outside, which
                    // says nothing of the main thread.
                    0 => {}
                    _ => resumed += 1,
                }
                // SAFETY: opened above, closed once.
                unsafe { CloseHandle(thread) };
            }
        }
        // SAFETY: as for Thread32First.
        more = unsafe { Thread32Next(snapshot, &mut entry) } != 0;
    }
    // SAFETY: the snapshot's handle, closed once.
    unsafe { CloseHandle(snapshot) };
    // Any failure may have been the main thread's, which would leave the
    // engine silent until its first move timed out.
    match (resumed, failure) {
        (_, Some(e)) => Err(e),
        (0, None) => Err(io::Error::other(format!(
            "no suspended thread of the new process {pid} to resume"
        ))),
        _ => Ok(()),
    }
}

/// A job holding one engine and the processes it starts; closing it (on
/// drop) ends whatever of them is still running.
pub(crate) struct Job {
    // A kernel handle, owned; kept as an address so that the engine's
    // state can move between threads.
    handle: usize,
}

impl Job {
    /// A job for `child`, just started. `None` where the system refuses
    /// (an engine already in a job that allows no nesting, before Windows
    /// 8): the engine is then killed alone, as before.
    pub(crate) fn for_child(child: &Child) -> Option<Job> {
        // SAFETY: a new unnamed job with default security; the handle is
        // checked and owned by the `Job` from here on.
        let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if handle.is_null() {
            return None;
        }
        let job = Job {
            handle: handle as usize,
        };
        // SAFETY: a zeroed limit information is valid (no limits); the
        // size passed is the structure's.
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: the job's handle is open; `limits` outlives the call.
        let set = unsafe {
            SetInformationJobObject(
                job.raw(),
                JobObjectExtendedLimitInformation,
                std::ptr::addr_of!(limits).cast(),
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        // SAFETY: both handles are open: the job's, and the child's, which
        // `Child` holds until it is dropped.
        let assigned = set != 0
            && unsafe { AssignProcessToJobObject(job.raw(), child.as_raw_handle() as HANDLE) } != 0;
        assigned.then_some(job)
    }

    fn raw(&self) -> HANDLE {
        self.handle as HANDLE
    }

    /// Ends every process in the job.
    pub(crate) fn terminate(&self) {
        // SAFETY: the job's handle is open until drop.
        unsafe {
            TerminateJobObject(self.raw(), 1);
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: the handle is owned and closed once.
        unsafe {
            CloseHandle(self.raw());
        }
    }
}
