//! Choosing the device and tuning libtorch on the CPU.

use tch::Device;

/// The device named by `spec` (`cpu`, `cuda`, `cuda:N`, or `auto`), and a
/// message when it had to fall back to the CPU.
pub fn select_device(spec: &str) -> Result<(Device, Option<String>), String> {
    let spec = spec.trim().to_ascii_lowercase();
    let cuda_count = || {
        if tch::Cuda::is_available() {
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
        let why = if count == 0 {
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
        if tch::Cuda::is_available() {
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
