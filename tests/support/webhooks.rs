//! A real webhook receiver: `fixtures/webhooks/receiver.py`, which verifies
//! every delivery with the reference Standard Webhooks library (PyPI
//! `standardwebhooks`) and reports each one as a JSON line.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver as Lines, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::workspace_root;

/// The Python that has `standardwebhooks` (see [`crate::test_python`]).
pub fn python() -> PathBuf {
    crate::test_python(&["standardwebhooks"])
}

/// A running receiver, killed on drop.
pub struct Receiver {
    child: Child,
    lines: Lines<Value>,
    /// Its port on 127.0.0.1.
    pub port: u16,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Receiver {
    /// Starts a receiver that verifies with `secret` (`whsec_…`).
    pub fn start(secret: &str) -> Receiver {
        let mut child = Command::new(python())
            .arg(workspace_root().join("tests/fixtures/webhooks/receiver.py"))
            .arg(secret)
            .stdout(Stdio::piped())
            .spawn()
            .expect("the webhook receiver starts");
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let port = stdout
            .next()
            .expect("the receiver prints its port")
            .unwrap()
            .trim()
            .parse()
            .expect("a port");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in stdout.map_while(Result::ok) {
                let parsed = serde_json::from_str(&line).expect("a JSON line");
                if tx.send(parsed).is_err() {
                    return;
                }
            }
        });
        Receiver { child, lines, port }
    }

    /// The URL of `path` (`/ok/x`, `/fail/2/x`, `/hang/1/x`).
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The next request received, within `timeout`.
    fn next(&self, timeout: Duration) -> Option<Value> {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => Some(line),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => panic!("the webhook receiver exited"),
        }
    }

    /// The next `n` requests, each within what is left of `timeout`;
    /// fails naming what came before the wait ran out.
    pub fn take(&self, n: usize, timeout: Duration) -> Vec<Value> {
        let deadline = Instant::now() + timeout;
        let mut got = Vec::with_capacity(n);
        while got.len() < n {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next(left) {
                Some(line) => got.push(line),
                None => panic!(
                    "{} of {n} deliveries within {timeout:?}: {got:#?}",
                    got.len()
                ),
            }
        }
        got
    }
}
