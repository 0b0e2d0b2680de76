//! Links libtorch so that the binaries find it at run time and keep CUDA.
fn main() {
    // Set by torch-sys (links = "tch"); only direct dependents see it.
    let Ok(lib) = std::env::var("DEP_TCH_LIBTORCH_LIB") else {
        println!("cargo:warning=DEP_TCH_LIBTORCH_LIB is not set: run scripts/setup-torch.sh");
        return;
    };
    // An rpath, so no LD_LIBRARY_PATH is needed.
    println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
    // rustc links with --as-needed, which would drop libtorch_cuda.so (then
    // CUDA is never available); keep it so one binary uses a GPU where
    // there is one. (--copy-dt-needed-entries is not accepted by rust-lld.)
    println!("cargo:rustc-link-arg=-Wl,--no-as-needed");
    if std::path::Path::new(&lib).join("libtorch_cuda.so").exists() {
        println!("cargo:rustc-link-arg=-ltorch_cuda");
    }
    println!("cargo:rustc-link-arg=-ltorch");
    println!("cargo:rerun-if-changed=build.rs");
}
