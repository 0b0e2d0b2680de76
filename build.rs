//! Links libtorch so that the binaries find it at run time (an rpath), and
//! tells the CUDA loader where libtorch_cuda.so is.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_TORCH").is_none() {
        return;
    }
    // Set by torch-sys (links = "tch"); only direct dependents see it.
    let Ok(lib) = std::env::var("DEP_TCH_LIBTORCH_LIB") else {
        println!("cargo:warning=DEP_TCH_LIBTORCH_LIB is not set: run scripts/setup-torch.sh");
        return;
    };
    // An rpath, so no LD_LIBRARY_PATH is needed.
    println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
    // libtorch_cuda.so is not linked (rustc's --as-needed drops it and
    // libtorch.so, which needs it): nn::device::load_cuda_backend loads it
    // from this folder at run time where an NVIDIA driver is installed, so a
    // CPU machine does not map the CUDA libraries.
    println!("cargo:rustc-env=WUZI_LIBTORCH_LIB={lib}");
}
