//! `clawdis mcp`: the MCP server over stdio, for agents that spawn their
//! server. It is a front end to the backend of its home (the running app
//! or `clawdis serve`, started here when none runs): stdin and stdout are
//! joined to the backend's MCP pipe, so runs, approvals and the browser are
//! the ones HTTP sees, and no second Chromium opens the same profile.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clawdis_browser::settings::{Settings, parse_control_url};
use clawdis_server::control_token;
use hyper::StatusCode;
use hyper::header;
use hyper_util::rt::TokioIo;
use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpStream;

/// How long a backend started here may take to listen.
const START_WAIT: Duration = Duration::from_secs(60);

/// `clawdis mcp`: relays stdin and stdout to the backend's MCP pipe until
/// either side closes.
pub fn mcp(home: PathBuf) -> Result<()> {
    let settings = Settings::load(&home)?;
    let (_, port) = parse_control_url(&settings.control_url)?;
    let token = control_token(&home)
        .with_context(|| format!("reading the control token in {}", home.display()))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let upgraded = match open_pipe(port, &token).await {
            Ok(pipe) => pipe,
            Err(Refused::NotListening) => {
                start_backend(&home)?;
                wait_for_pipe(port, &token).await?
            }
            Err(Refused::Other(e)) => return Err(e),
        };
        relay(upgraded).await
    })
}

/// Why the pipe did not open.
enum Refused {
    /// Nothing listens on the port: no backend runs.
    NotListening,
    /// Something answered, but not with the pipe.
    Other(anyhow::Error),
}

/// Opens the MCP pipe of the backend on `port`.
async fn open_pipe(port: u16, token: &str) -> Result<hyper::upgrade::Upgraded, Refused> {
    let stream = TcpStream::connect(("127.0.0.1", port))
        .await
        .map_err(|_| Refused::NotListening)?;
    // Each message is one small write: send it now, not after the
    // backend's ACK of the last one.
    stream
        .set_nodelay(true)
        .map_err(|e| Refused::Other(e.into()))?;
    let other = |e: anyhow::Error| Refused::Other(e);
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| {
            other(anyhow::anyhow!(
                "talking to the backend on port {port}: {e}"
            ))
        })?;
    tokio::spawn(async move {
        if let Err(e) = connection.with_upgrades().await {
            tracing::debug!(error = %e, "the MCP pipe's connection");
        }
    });
    let request = hyper::Request::get("/mcp/pipe")
        .header(header::HOST, format!("127.0.0.1:{port}"))
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONNECTION, "upgrade")
        .header(header::UPGRADE, "clawdis-mcp")
        .body(String::new())
        .map_err(|e| other(e.into()))?;
    let response = sender.send_request(request).await.map_err(|e| {
        other(anyhow::anyhow!(
            "asking the backend on port {port} for the MCP pipe: {e}"
        ))
    })?;
    if response.status() != StatusCode::SWITCHING_PROTOCOLS {
        return Err(other(anyhow::anyhow!(
            "the server on port {port} refused the MCP pipe ({}); is it a Clawdis backend of this home?",
            response.status()
        )));
    }
    hyper::upgrade::on(response)
        .await
        .map_err(|e| other(anyhow::anyhow!("upgrading to the MCP pipe: {e}")))
}

/// Starts `clawdis serve` for `home`, on its own: it outlives this process
/// and serves every later `clawdis mcp` and HTTP client. Its log goes to
/// `<home>/logs/serve.log`.
fn start_backend(home: &Path) -> Result<()> {
    let exe = std::env::current_exe().context("finding the clawdis executable")?;
    let logs = home.join("logs");
    std::fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))?;
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(logs.join("serve.log"))
        .with_context(|| format!("opening {}", logs.join("serve.log").display()))?;
    let mut command = std::process::Command::new(exe);
    command
        .arg("--home")
        .arg(home)
        .arg("serve")
        .stdin(Stdio::null())
        .stdout(Stdio::from(log.try_clone()?))
        .stderr(Stdio::from(log));
    // Not in our process group: a host that stops this process (Ctrl-C in
    // its terminal, a signal to the group) does not stop the backend.
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let child = command.spawn().context("starting clawdis serve")?;
    tracing::info!(pid = child.id(), home = %home.display(), "started clawdis serve for this home");
    Ok(())
}

/// Opens the pipe of a backend that is starting.
async fn wait_for_pipe(port: u16, token: &str) -> Result<hyper::upgrade::Upgraded> {
    let deadline = tokio::time::Instant::now() + START_WAIT;
    loop {
        match open_pipe(port, token).await {
            Ok(pipe) => return Ok(pipe),
            Err(Refused::Other(e)) => return Err(e),
            Err(Refused::NotListening) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(Refused::NotListening) => bail!(
                "clawdis serve did not start listening on port {port} within {} s; see logs/serve.log in the home",
                START_WAIT.as_secs()
            ),
        }
    }
}

/// Copies stdin to the pipe and the pipe to stdout until the client closes
/// stdin or the backend closes the pipe.
async fn relay(pipe: hyper::upgrade::Upgraded) -> Result<()> {
    let (mut from_backend, mut to_backend) = tokio::io::split(TokioIo::new(pipe));
    let mut stdin = tokio::io::stdin();
    let mut stdout = tokio::io::stdout();
    let up = async {
        let copied = tokio::io::copy(&mut stdin, &mut to_backend).await;
        // The client is done: the backend sees the end and closes.
        let _ = to_backend.shutdown().await;
        copied
    };
    let down = async {
        let copied = tokio::io::copy(&mut from_backend, &mut stdout).await;
        let _ = stdout.flush().await;
        copied
    };
    tokio::pin!(down);
    tokio::select! {
        copied = &mut down => {
            copied.context("reading from the backend")?;
            return Ok(());
        }
        copied = up => {
            copied.context("reading stdin")?;
        }
    }
    // The answers to the last requests still come, then the backend closes.
    let _ = tokio::time::timeout(Duration::from_secs(10), down).await;
    Ok(())
}
