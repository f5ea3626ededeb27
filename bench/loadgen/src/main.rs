//! `loadgen`: the benchmark's own load generator, for what `wrk` cannot do. Every
//! subcommand is bounded in time, talks only to loopback addresses or to a child process
//! it starts, and prints one JSON object on stdout (`check` prints a line per check).
//!
//! ```text
//! loadgen check  --url URL [--wait SECS]              # echo, a two-round MRTR call, listen
//! loadgen check-stdio -- CMD ARGS...                  # echo over stdio
//! loadgen echo   --url URL [--connections N] [--duration S] [--warmup S] [--text-bytes N]
//! loadgen mrtr   --url URL [--connections N] [--duration S] [--warmup S]
//!                [--calls N]                          # stop after N calls (for profiling)
//!                [--rate R]                           # start at most R calls/s (paced)
//! loadgen stdio  [--window N] [--duration S] [--warmup S] -- CMD ARGS...
//! loadgen flood  [--duration S] [--drain S] [--max-requests N] -- CMD ARGS...
//! loadgen listen --url URL --pid PID [--streams N] [--timeout S] [--settle S]
//! ```
//!
//! `CMD` is started with piped stdin and stdout (its stderr goes to `--log FILE`, or is
//! dropped); it should be wrapped in `taskset` by the caller to pin it.

mod bodies;
mod check;
mod client;
mod http_load;
mod listen;
mod opts;
mod procfs;
mod stats;
mod stdio;

use std::process::ExitCode;

use crate::opts::Opts;

/// The error type of every subcommand.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

fn main() -> ExitCode {
    let opts = match Opts::from_args(std::env::args().skip(1)) {
        Ok(opts) => opts,
        Err(e) => {
            eprintln!("loadgen: {e}\n\n{}", usage());
            return ExitCode::from(2);
        }
    };
    // One thread: the harness pins the load generator to its own core.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    match runtime.block_on(run(opts)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("loadgen: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(opts: Opts) -> Result<(), Error> {
    let json = match opts.command.as_str() {
        "check" => return check::http(&opts.target()?, opts.secs("wait", 0.0)?).await,
        "check-stdio" => return check::stdio(opts.child()?, opts.get("log")).await,
        "echo" | "mrtr" => {
            let kind = if opts.command == "echo" {
                http_load::Kind::Echo
            } else {
                http_load::Kind::Mrtr
            };
            let settings = http_load::Settings {
                connections: opts.int("connections", 32)?,
                warmup: opts.secs("warmup", 0.0)?,
                duration: opts.secs("duration", 10.0)?,
                calls: opts.int("calls", 0)? as u64,
                rate: opts.rate("rate")?,
                text: bodies::echo_text(opts.int("text-bytes", 0)?)?,
            };
            http_load::run(opts.target()?, kind, settings).await?
        }
        "stdio" => {
            let settings = stdio::Throughput {
                window: opts.int("window", 64)?,
                warmup: opts.secs("warmup", 0.0)?,
                duration: opts.secs("duration", 10.0)?,
            };
            stdio::throughput(opts.child()?, opts.get("log"), settings).await?
        }
        "flood" => {
            let settings = stdio::Flood {
                duration: opts.secs("duration", 5.0)?,
                drain: opts.secs("drain", 30.0)?,
                max_requests: opts.int("max-requests", 2_000_000)?,
            };
            stdio::flood(opts.child()?, opts.get("log"), settings).await?
        }
        "listen" => {
            let settings = listen::Settings {
                streams: opts.int("streams", 10_000)?,
                pid: opts.int("pid", 0)? as u32,
                open_concurrency: opts.int("open-concurrency", 256)?,
                timeout: opts.secs("timeout", 60.0)?,
                settle: opts.secs("settle", 2.0)?,
            };
            listen::run(opts.target()?, settings).await?
        }
        other => return Err(format!("unknown command {other:?}\n\n{}", usage()).into()),
    };
    println!("{json}");
    Ok(())
}

fn usage() -> &'static str {
    "usage: loadgen check|check-stdio|echo|mrtr|stdio|flood|listen [--option value]... [-- CMD ARGS...]"
}
