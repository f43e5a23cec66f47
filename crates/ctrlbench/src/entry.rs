//! The `ctrlbench` command's body: parse (`cli`), set up logging and the
//! runtime (tokio's current-thread one), dispatch (`commands`), and turn the
//! outcome into an exit code. It lives in the library, not in main.rs, so
//! that the release build generates the code of every command's async state
//! machine once, here: from the binary, every generic instantiation under
//! `block_on` was generated a second time (40 s of a 6.3 min cold build).

use std::process::ExitCode;

use crate::cli::{Cli, Command};
use crate::commands::{dispatch, interrupted, one_line, run};
use clap::Parser;
use ctrlbench_plane::supervisor;

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    ctrlbench_plane::process::raise_open_file_limit();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "warn,kube_client::client::builder=off".into()),
        )
        .init();
    // One thread: the harness waits on sockets, and on a worker pool every
    // watch event and scrape crosses threads (at N = 100 000 the park and
    // wake-ups were a third of its CPU). Builds run on the blocking pool.
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Command::Run(args) = cli.command {
        let code = rt.block_on(run(args));
        // Do not wait for a blocking task (a controller build) that an interrupt left behind.
        rt.shutdown_timeout(std::time::Duration::from_secs(1));
        return code;
    }
    let outcome = rt.block_on(async {
        tokio::select! {
            r = dispatch(cli.command) => Some(r),
            _ = interrupted() => None,
        }
    });
    // Dropping the command's future above already stopped what it had started.
    match outcome {
        Some(Ok(())) => ExitCode::SUCCESS,
        Some(Err(e)) => {
            eprintln!("error: {}", one_line(&e));
            ExitCode::FAILURE
        }
        None => {
            supervisor::stop_pending();
            eprintln!("interrupted");
            // Do not wait for a blocking thread still reading the supervisor.
            std::process::exit(130)
        }
    }
}
