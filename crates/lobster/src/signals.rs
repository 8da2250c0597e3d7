//! Signal handling: SIGINT/SIGTERM/SIGHUP/SIGQUIT abort the run, child
//! process groups get SIGTERM then SIGKILL 250 ms later, and the exit code
//! is 128 + the signal number.

use std::future::Future;
use std::time::Duration;

use clawdis_engine::exec::signal_all_children;
use tokio::signal::unix::{Signal, SignalKind, signal};

async fn recv(s: &mut Option<Signal>) {
    match s {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}

async fn next_signal() -> i32 {
    let mut int = signal(SignalKind::interrupt()).ok();
    let mut term = signal(SignalKind::terminate()).ok();
    let mut hup = signal(SignalKind::hangup()).ok();
    let mut quit = signal(SignalKind::quit()).ok();
    tokio::select! {
        _ = recv(&mut int) => libc::SIGINT,
        _ = recv(&mut term) => libc::SIGTERM,
        _ = recv(&mut hup) => libc::SIGHUP,
        _ = recv(&mut quit) => libc::SIGQUIT,
    }
}

/// Runs `work`; on a signal, terminates children (SIGTERM, then SIGKILL
/// after 250 ms, or at once on a second signal) and returns 128 + signal.
pub async fn run_until_signal<F: Future<Output = i32>>(work: F) -> i32 {
    let work = std::pin::pin!(work);
    let sig = tokio::select! {
        code = work => return code,
        sig = next_signal() => sig,
    };
    signal_all_children(libc::SIGTERM);
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_millis(250)) => {}
        _ = next_signal() => {}
    }
    signal_all_children(libc::SIGKILL);
    128 + sig
}
