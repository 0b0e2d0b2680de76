//! Windows: each engine in a job object of its own, so that killing the
//! engine ends what it started too (a `cmd /c` or launcher's engine, which
//! would otherwise go on using the CPU), and so that every engine ends with
//! the runner however the runner ends (the job's last handle closes with
//! the runner's process). What Unix gets from the engine's process group.

use std::os::windows::io::AsRawHandle;
use std::process::Child;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};

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
    /// 8): the engine is then killed alone, as before. A process that the
    /// engine starts in the moment before it is assigned escapes the job.
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
