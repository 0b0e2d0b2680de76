//! `pbrain-wuzi network`: what a network file holds, and the same network
//! written again in another storage (f16 for packages: half the bytes).

use std::io::{self, Write};
use std::path::PathBuf;

use crate::nn::native::{Storage, Weights};

#[derive(clap::Args)]
pub(crate) struct NetworkArgs {
    /// The network file (safetensors).
    file: PathBuf,
    /// Writes the network to this file, in --storage.
    #[arg(long)]
    out: Option<PathBuf>,
    /// The storage of --out: f32, or f16 or bf16 for the weights of the
    /// convolutions and linear layers (batch norms and biases stay f32).
    #[arg(long, default_value = "f16", requires = "out")]
    storage: Storage,
}

/// Prints the network's size, parameters and storage; writes it to
/// `--out` in `--storage` and prints the same of what it wrote, read back.
pub(crate) fn run(args: &NetworkArgs) -> io::Result<()> {
    let weights = Weights::read(&args.file).map_err(io::Error::other)?;
    let mut out = io::stdout().lock();
    describe(&mut out, &args.file, &weights)?;
    if let Some(path) = &args.out {
        weights
            .write(path, args.storage)
            .map_err(io::Error::other)?;
        let written = Weights::read(path).map_err(io::Error::other)?;
        describe(&mut out, path, &written)?;
    }
    Ok(())
}

fn describe(out: &mut impl Write, path: &std::path::Path, weights: &Weights) -> io::Result<()> {
    let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
    writeln!(
        out,
        "{}: {} network, {} parameters, stored in {}, {} bytes",
        path.display(),
        weights.config,
        weights.parameter_count(),
        weights.storage,
        bytes
    )
}
