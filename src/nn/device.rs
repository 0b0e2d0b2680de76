//! Choosing the device and tuning libtorch on the CPU.

use std::ffi::CString;
use std::sync::OnceLock;

use tch::Device;

/// Why libtorch's CUDA backend is not loaded, or `None` when it is.
///
/// The binary links libtorch's CPU library only: its CUDA library and the
/// CUDA libraries behind it (cuBLAS, nvrtc, nvJitLink...) map about 145 MB
/// that a tournament manager counts against the brain's memory even on a
/// machine without a GPU. So it is loaded here, once, only where the NVIDIA
/// driver is installed (`libcuda.so.1` loads); its static initialisers
/// register the CUDA backend with libtorch, after which `tch::Cuda` sees the
/// GPUs as if it had been linked.
pub fn load_cuda_backend() -> Option<&'static str> {
    static STATE: OnceLock<Option<String>> = OnceLock::new();
    STATE
        .get_or_init(|| {
            if !dlopen("libcuda.so.1", libc::RTLD_LAZY | libc::RTLD_LOCAL) {
                return Some("no NVIDIA driver (libcuda.so.1)".to_string());
            }
            // The build's libtorch folder first (as the rpath), then the
            // loader's search path.
            let beside = option_env!("WUZI_LIBTORCH_LIB")
                .map(|lib| format!("{lib}/libtorch_cuda.so"))
                .unwrap_or_default();
            for name in [beside.as_str(), "libtorch_cuda.so"] {
                if !name.is_empty() && dlopen(name, libc::RTLD_NOW | libc::RTLD_GLOBAL) {
                    return None;
                }
            }
            Some(format!("cannot load libtorch_cuda.so: {}", dlerror()))
        })
        .as_deref()
}

fn dlopen(name: &str, flags: libc::c_int) -> bool {
    let Ok(name) = CString::new(name) else {
        return false;
    };
    // SAFETY: a valid NUL-terminated name; the handle is kept for the life of
    // the process (never closed), as libtorch's registrations require.
    !unsafe { libc::dlopen(name.as_ptr(), flags) }.is_null()
}

fn dlerror() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated message owned by libc.
    let message = unsafe { libc::dlerror() };
    if message.is_null() {
        "unknown error".to_string()
    } else {
        // SAFETY: non-null and NUL-terminated, read before any other dl call.
        unsafe { std::ffi::CStr::from_ptr(message) }
            .to_string_lossy()
            .into_owned()
    }
}

/// Whether libtorch can use a GPU (loading its CUDA backend if a driver is
/// there). Use this rather than `tch::Cuda::is_available`, which says no
/// until the backend is loaded.
pub fn cuda_available() -> bool {
    load_cuda_backend().is_none() && tch::Cuda::is_available()
}

/// The device named by `spec` (`cpu`, `cuda`, `cuda:N`, or `auto`), and a
/// message when it had to fall back to the CPU.
pub fn select_device(spec: &str) -> Result<(Device, Option<String>), String> {
    let spec = spec.trim().to_ascii_lowercase();
    let cuda_count = || {
        if cuda_available() {
            tch::Cuda::device_count() as usize
        } else {
            0
        }
    };
    let index = match spec.as_str() {
        "cpu" => return Ok((Device::Cpu, None)),
        "auto" => {
            return Ok(if cuda_count() > 0 {
                (Device::Cuda(0), None)
            } else {
                (Device::Cpu, None)
            });
        }
        "cuda" | "gpu" => 0,
        other => other
            .strip_prefix("cuda:")
            .and_then(|n| n.parse::<usize>().ok())
            .ok_or_else(|| {
                format!("unknown device {spec:?}: expected cpu, auto, cuda or cuda:N")
            })?,
    };
    let count = cuda_count();
    if index < count {
        Ok((Device::Cuda(index), None))
    } else {
        let why = if let Some(why) = load_cuda_backend() {
            format!("no CUDA ({why})")
        } else if count == 0 {
            "no CUDA device is available".to_string()
        } else {
            format!("only {count} CUDA device(s) are available")
        };
        Ok((
            Device::Cpu,
            Some(format!("device {spec}: {why}; using the CPU")),
        ))
    }
}

/// Sets libtorch's CPU threads and keeps its activation buffers in the
/// heap: glibc otherwise maps and unmaps every large buffer (about 250k page
/// faults per 3 s), and these two settings gave 1.2-1.5x on this machine.
/// In `pbrain-wuzi` mimalloc serves every allocation (src/main.rs) and the
/// `mallopt` calls change nothing; they stay for the library's other hosts
/// on glibc's malloc (the test binaries, other programs linking `wuzi`).
/// Safe to call more than once (libtorch accepts the inter-op thread count
/// only once per process, so that is set on the first call only).
pub fn tune_cpu(threads: usize) {
    static INTEROP: std::sync::Once = std::sync::Once::new();
    tch::set_num_threads(threads.max(1) as i32);
    INTEROP.call_once(|| tch::set_num_interop_threads(1));
    // SAFETY: mallopt only changes allocator parameters; called before heavy
    // allocation, with constant, valid arguments.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_device_names_and_falls_back() {
        assert_eq!(select_device("cpu").unwrap(), (Device::Cpu, None));
        assert_eq!(select_device(" CPU ").unwrap().0, Device::Cpu);
        assert!(select_device("tpu").is_err());
        assert!(select_device("cuda:x").is_err());
        let (device, note) = select_device("cuda:0").unwrap();
        if cuda_available() {
            assert_eq!(device, Device::Cuda(0));
        } else {
            assert_eq!(device, Device::Cpu);
            assert!(note.unwrap().contains("using the CPU"));
        }
        // A device index far beyond any machine's always falls back.
        let (device, note) = select_device("cuda:99").unwrap();
        assert_eq!(device, Device::Cpu);
        assert!(note.is_some());
    }
}
