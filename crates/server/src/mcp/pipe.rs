//! `GET /mcp/pipe` with `Upgrade: clawdis-mcp`: the connection becomes
//! MCP's stdio transport (newline-delimited JSON-RPC both ways), which
//! `clawdis mcp` joins to its stdin and stdout. The caller is an agent
//! named by its MCP client, whatever token opened the pipe.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::TokioIo;
use rmcp::ServiceExt as _;

use super::{Handler, Mcp, Over};
use crate::json_error;

/// The `Upgrade` protocol name of the pipe.
pub const PROTOCOL: &str = "clawdis-mcp";

/// Upgrades the request to an MCP session over the connection.
pub(crate) async fn pipe(State(mcp): State<Arc<Mcp>>, mut request: Request) -> Response {
    // The pipe is `clawdis mcp`'s, which holds the home's own token; a
    // named token keeps its identity on `/mcp`.
    if request.extensions().get::<crate::Principal>() != Some(&crate::Principal::Owner) {
        return json_error(
            StatusCode::FORBIDDEN,
            "the MCP pipe is for clawdis mcp on this machine; with a named token, use /mcp",
        );
    }
    let asks = request
        .headers()
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case(PROTOCOL));
    if !asks {
        return json_error(
            StatusCode::UPGRADE_REQUIRED,
            format!("this route is the MCP pipe of `clawdis mcp`: send Upgrade: {PROTOCOL}"),
        );
    }
    let upgrade = hyper::upgrade::on(&mut request);
    tokio::spawn(async move {
        let upgraded = match upgrade.await {
            Ok(upgraded) => upgraded,
            Err(e) => {
                tracing::warn!(error = %e, "the MCP pipe did not upgrade");
                return;
            }
        };
        let (read, write) = tokio::io::split(TokioIo::new(upgraded));
        let handler = Handler::new(mcp, Over::Pipe);
        match handler.serve((read, write)).await {
            Ok(running) => {
                let _ = running.waiting().await;
                tracing::debug!("an MCP pipe closed");
            }
            Err(e) => tracing::info!(error = %e, "an MCP pipe ended before it began"),
        }
    });
    let mut response = StatusCode::SWITCHING_PROTOCOLS.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    headers.insert(header::UPGRADE, HeaderValue::from_static(PROTOCOL));
    response
}
