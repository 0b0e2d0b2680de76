//! The subcommands that play or analyse with the configured networks:
//! `analyse`, `selfplay`, and the file protocol's one move.

use std::io::{self, Write};
use std::process::ExitCode;

use super::{configure, network_service, Cli};

/// `analyse` with the configured network of the game's rule.
pub(crate) fn analyse(cli: &Cli, args: &crate::analyse::AnalyseArgs) -> io::Result<()> {
    super::refuse_unused_flags(
        cli,
        &["--config", "--threads", "--device", "--network"],
        "analyse",
        "it writes its analysis on stdout and no engine log",
    )?;
    let config = configure(cli).map_err(io::Error::other)?;
    let text = crate::analyse::run(args, |rule, size| {
        let (service, note) = network_service(&config, rule, size).map_err(|e| e.to_string())?;
        if let Some(note) = note {
            eprintln!("note: {note}");
        }
        Ok(crate::search::Searcher::new(
            service,
            config.search_config(),
        ))
    })
    .map_err(io::Error::other)?;
    io::stdout().write_all(text.as_bytes())
}

/// `selfplay` with the configured network of the rule.
pub(crate) fn selfplay(cli: &Cli, args: &crate::selfplay::SelfplayArgs) -> io::Result<()> {
    super::refuse_unused_flags(
        cli,
        &["--config", "--device", "--network"],
        "selfplay",
        "each game searches on one thread (--parallel plays games side by side) and writes \
         no engine log",
    )?;
    // Before the network loads: a mistyped flag is told at once.
    crate::selfplay::check_args(args).map_err(io::Error::other)?;
    let mut config = configure(cli).map_err(io::Error::other)?;
    if let Some(batch) = args.eval_batch {
        config.network.batch_size = batch;
    }
    let size = args.board;
    let (service, note) = network_service(&config, args.rule, size)?;
    if let Some(note) = note {
        // Self-play without the network would write worthless targets.
        return Err(io::Error::other(note));
    }
    let player = crate::selfplay::player_label(config.network.network_for(args.rule, size))
        .map_err(io::Error::other)?;
    let summary = crate::selfplay::run(
        args,
        service,
        config.search_config(),
        &player,
        &mut io::stderr(),
    )
    .map_err(io::Error::other)?;
    if summary.failed > 0 {
        // The games that were played are in the file; the run is not whole.
        return Err(io::Error::other(format!(
            "{} games failed (reasons above)",
            summary.failed
        )));
    }
    Ok(())
}

/// The name under which this program answers the old file protocol in the
/// current folder (managers of that protocol give a brain no arguments).
pub(crate) const FILES_NAME: &str = "wuzi-files";

/// `pbrain-wuzi files DIR`: one move of the old file protocol.
pub(crate) fn files_protocol(
    cli: &Cli,
    dir: &std::path::Path,
    started: std::time::Instant,
) -> ExitCode {
    // The manager reads MSG.DAT (files::run writes it, or here when the
    // configuration failed before it); a person reads stderr.
    let config = match configure(cli) {
        Ok(config) => config,
        Err(e) => {
            crate::protocol::files::write_message(dir, &e.to_string());
            eprintln!("pbrain-wuzi files: {e}");
            return ExitCode::from(2);
        }
    };
    match crate::protocol::files::run(config, dir, started) {
        // The engine was left to the exit (files::run): no destructors may
        // run under an evaluator still inside a batch.
        Ok(()) => super::exit_without_destructors(0),
        Err(e) => {
            eprintln!("pbrain-wuzi files: {e}");
            ExitCode::from(2)
        }
    }
}
