//! The clawd browser's HTTP control API: loopback-only, bearer-token
//! protected, JSON in and out, speaking OpenClaw's browser-control routes
//! plus the spec's additions. Routes not implemented answer 501 `{error}`.

mod act;
mod api;
mod approvals;
mod audit;
mod basic;
mod bodies;
pub mod devices;
mod events;
mod handoff;
mod inbox;
mod inspect;
mod links;
mod mcp;
mod openapi;
mod principal;
pub mod qr;
pub mod requests;
mod runs;
mod screencast;
mod security;
mod sessions;
mod state;
mod tabs;
mod token;
mod triggers;
mod validate;
mod webhooks;
mod workflows;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use axum::{Json, Router, middleware};
use clawdis_browser::manager::Manager;
use clawdis_browser::settings::Settings;
use serde_json::json;
use utoipa::OpenApi as _;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub use api::ApiError;
pub use clawdis_store::{DeviceRecord, Issuer, TokenRecord};
pub use handoff::{TakeOver, take_over};
pub use principal::{Principal, TokenError, create_token, valid_name};
pub use token::control_token;

/// Largest accepted JSON body.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// What the server was started with.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The Clawdis home (settings, profile, token, media).
    pub home: PathBuf,
    /// Effective settings (file plus flags).
    pub settings: Settings,
    /// The bearer token every call must carry.
    pub token: String,
    /// `--no-browser`: never launch.
    pub no_browser: bool,
    /// The port the API listens on (reported in status).
    pub control_port: u16,
    /// Where paused runs are stored (`LOBSTER_STATE_DIR`, else the home).
    pub state_dir: PathBuf,
    /// The workflow service's settings (webhooks, `publicBaseUrl`).
    pub service: clawdis_approvals::ServiceSettings,
}

/// Shared server state.
#[derive(Debug)]
pub struct AppState {
    /// The browser.
    pub manager: Arc<Manager>,
    token: String,
    control_port: u16,
    state_dir: PathBuf,
    approvals: tokio::sync::OnceCell<Arc<clawdis_approvals::Approvals>>,
    runs: tokio::sync::OnceCell<Arc<clawdis_approvals::Runs>>,
    webhooks: tokio::sync::OnceCell<Arc<clawdis_approvals::Webhooks>>,
    links: tokio::sync::OnceCell<Arc<clawdis_approvals::ApprovalLinks>>,
    triggers: tokio::sync::OnceCell<Arc<clawdis_approvals::Triggers>>,
    sessions: tokio::sync::OnceCell<Arc<clawdis_browser::session::Sessions>>,
    /// The workflow service's settings (webhooks, `publicBaseUrl`).
    service: clawdis_approvals::ServiceSettings,
    /// What processes asked of the person (approver tokens, pairings),
    /// waiting for their answer.
    pub requests: requests::Requests,
    /// Device pairings and passkey ceremonies in progress.
    pub devices: devices::Devices,
    /// The devices signed in to the inbox (and to hand-offs' live views).
    inbox: inbox::Sessions,
    /// Screencast tickets minted and not yet used.
    screencasts: screencast::Tickets,
    /// Turns true when the server shuts down; long-lived responses (event
    /// streams) end then, so the graceful shutdown does not wait on them.
    closing: tokio::sync::watch::Sender<bool>,
}

/// A JSON error response `{error}`.
pub fn json_error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({ "error": message.into() }))).into_response()
}

impl AppState {
    /// New state for `config`.
    pub fn new(config: ServerConfig) -> Arc<AppState> {
        Arc::new(AppState {
            manager: Arc::new(Manager::new(
                config.home,
                config.settings,
                config.no_browser,
            )),
            token: config.token,
            control_port: config.control_port,
            state_dir: config.state_dir,
            approvals: tokio::sync::OnceCell::new(),
            runs: tokio::sync::OnceCell::new(),
            webhooks: tokio::sync::OnceCell::new(),
            links: tokio::sync::OnceCell::new(),
            triggers: tokio::sync::OnceCell::new(),
            sessions: tokio::sync::OnceCell::new(),
            service: config.service,
            requests: requests::Requests::default(),
            devices: devices::Devices::default(),
            inbox: inbox::Sessions::default(),
            screencasts: screencast::Tickets::default(),
            closing: tokio::sync::watch::Sender::new(false),
        })
    }

    /// Where paused runs and the service's own files are kept.
    pub fn state_dir(&self) -> &std::path::Path {
        &self.state_dir
    }

    /// Resolves when the server starts shutting down.
    pub async fn closed(&self) {
        let mut closing = self.closing.subscribe();
        let _ = closing.wait_for(|closing| *closing).await;
    }

    /// Who presented `secret`: the owner, a live named token, or nobody.
    async fn principal_for(&self, secret: &str) -> Result<Option<Principal>, api::ApiError> {
        if security::constant_time_eq(secret.as_bytes(), self.token.as_bytes()) {
            return Ok(Some(Principal::Owner));
        }
        let approvals = self.approvals().await?;
        principal::named(approvals.store(), secret)
            .await
            .map_err(|e| api::ApiError::internal(e.to_string()))
    }

    /// The home's approvals, opened and watched on first use.
    pub async fn approvals(&self) -> Result<Arc<clawdis_approvals::Approvals>, api::ApiError> {
        self.approvals
            .get_or_try_init(|| async {
                let approvals = clawdis_approvals::Approvals::open(&self.state_dir).await?;
                approvals.set_services(clawdis_approvals::Services::new(
                    self.manager.settings().workflow_dirs(self.manager.home()),
                    self.service.llm.as_ref().map(|llm| {
                        // Read at each call: a key set after the start is used.
                        let key = clawdis_secrets::Secrets::new(self.manager.home())
                            .reader(clawdis_approvals::LLM_KEY_SECRET);
                        llm.config(Arc::new(key))
                    }),
                ));
                tokio::spawn(approvals.clone().watch());
                Ok::<_, api::ApiError>(approvals)
            })
            .await
            .cloned()
    }
}

impl AppState {
    /// The browser sessions, loaded from the store on first use (their
    /// health probes start then).
    pub async fn sessions(&self) -> Result<Arc<clawdis_browser::session::Sessions>, api::ApiError> {
        self.sessions
            .get_or_try_init(|| async {
                let store = Arc::new(self.approvals().await?.store().clone());
                let sessions =
                    clawdis_browser::session::Sessions::open(self.manager.clone(), store).await?;
                tokio::spawn(sessions.clone().run(probe_interval()));
                Ok::<_, api::ApiError>(sessions)
            })
            .await
            .cloned()
    }
}

/// How often sessions are probed: every 30 s, or `CLAWDIS_PROBE_INTERVAL_MS`
/// (for tests of the circuit breaker).
fn probe_interval() -> std::time::Duration {
    std::env::var("CLAWDIS_PROBE_INTERVAL_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(
            clawdis_browser::session::PROBE_INTERVAL,
            std::time::Duration::from_millis,
        )
}

impl AppState {
    /// The home's runs, opened on first use (recording runs a killed
    /// backend left executing).
    pub async fn runs(&self) -> Result<Arc<clawdis_approvals::Runs>, api::ApiError> {
        self.runs
            .get_or_try_init(|| async {
                let dirs = self.manager.settings().workflow_dirs(self.manager.home());
                Ok::<_, api::ApiError>(
                    clawdis_approvals::Runs::open(self.approvals().await?, dirs).await?,
                )
            })
            .await
            .cloned()
    }

    /// The home's webhook sender, started on first use with the service's
    /// settings and the signing secret from the keychain.
    pub async fn webhooks(&self) -> Result<Arc<clawdis_approvals::Webhooks>, api::ApiError> {
        self.webhooks
            .get_or_try_init(|| async {
                let home = self.manager.home().to_path_buf();
                let secret = keychain(move || clawdis_approvals::webhooks::secret(&home)).await?;
                let links = match self.service.public_base_url {
                    Some(_) => Some(self.links().await?),
                    None => None,
                };
                let webhooks = clawdis_approvals::Webhooks::new(
                    self.approvals().await?,
                    self.service.clone(),
                    &secret,
                    links,
                )?;
                tokio::spawn(webhooks.clone().run());
                // A run of this process wakes the sender at once; other
                // processes' changes reach it at its next look.
                let mut changes = self.runs().await?.changes();
                let sender = Arc::downgrade(&webhooks);
                tokio::spawn(async move {
                    while changes.changed().await.is_ok() {
                        let Some(sender) = sender.upgrade() else {
                            return;
                        };
                        sender.wake();
                    }
                });
                Ok::<_, api::ApiError>(webhooks)
            })
            .await
            .cloned()
    }

    /// The signer and checker of this home's approval links.
    pub async fn links(&self) -> Result<Arc<clawdis_approvals::ApprovalLinks>, api::ApiError> {
        self.links
            .get_or_try_init(|| async {
                let home = self.manager.home().to_path_buf();
                let links = keychain(move || clawdis_approvals::ApprovalLinks::open(&home)).await?;
                Ok::<_, api::ApiError>(Arc::new(links))
            })
            .await
            .cloned()
    }

    /// The workflows' triggers, fired from the first use on (when this
    /// backend holds the home's scheduler lease).
    pub async fn triggers(&self) -> Result<Arc<clawdis_approvals::Triggers>, api::ApiError> {
        self.triggers
            .get_or_try_init(|| async {
                let dirs = self.manager.settings().workflow_dirs(self.manager.home());
                let triggers = clawdis_approvals::Triggers::new(self.approvals().await?, dirs);
                tokio::spawn(triggers.clone().run(self.runs().await?));
                Ok::<_, api::ApiError>(triggers)
            })
            .await
            .cloned()
    }

    /// The host of `publicBaseUrl`, where approval links are opened.
    pub fn public_base_url(&self) -> Option<String> {
        self.service.public_base_url.clone()
    }

    /// The port the control API listens on.
    pub fn control_port(&self) -> u16 {
        self.control_port
    }

    /// The host of `publicBaseUrl`, if one is set.
    pub fn public_host(&self) -> Option<String> {
        let base = self.service.public_base_url.as_deref()?;
        url::Url::parse(base).ok()?.host_str().map(str::to_string)
    }

    /// Starts the backend's own work: the approvals watcher (expiring
    /// gates on time), the runs left executing by a killed backend, the
    /// webhook sender and the triggers. Each starts at most once.
    pub async fn start_backend(&self) {
        if let Err(e) = self.webhooks().await {
            tracing::error!(error = ?e, "starting the workflow service");
        }
        if let Err(e) = self.triggers().await {
            tracing::error!(error = ?e, "starting the triggers");
        }
    }
}

/// Runs `read`, which talks to the keychain (a blocking call), off the
/// runtime's threads.
async fn keychain<T: Send + 'static>(
    read: impl FnOnce() -> Result<T, clawdis_approvals::ApprovalsError> + Send + 'static,
) -> Result<T, api::ApiError> {
    Ok(tokio::task::spawn_blocking(read)
        .await
        .map_err(|e| api::ApiError::internal(e.to_string()))??)
}

/// OpenClaw routes this server does not implement (yet): they answer 501
/// so clients can tell "unsupported here" from a wrong path (404).
mod unimplemented {
    use axum::http::{Method, Uri};
    use axum::response::Response;

    async fn answer(method: Method, uri: Uri) -> Response {
        super::json_error(
            axum::http::StatusCode::NOT_IMPLEMENTED,
            format!("not implemented: {method} {}", uri.path()),
        )
    }

    /// OpenClaw's profile creation.
    #[utoipa::path(post, path = "/profiles/create", operation_id = "post_profiles_create", tag = "browser", responses((status = 501, description = "Not implemented here", body = crate::openapi::ErrorBody), (status = 401, description = "No or a wrong bearer token", content_type = "text/plain", body = String)))]
    pub async fn create_profile(method: Method, uri: Uri) -> Response {
        answer(method, uri).await
    }

    /// OpenClaw's profile deletion.
    #[utoipa::path(delete, path = "/profiles/{name}", operation_id = "delete_profiles_name", tag = "browser", params(("name" = String, Path)), responses((status = 501, description = "Not implemented here", body = crate::openapi::ErrorBody), (status = 401, description = "No or a wrong bearer token", content_type = "text/plain", body = String)))]
    pub async fn delete_profile(method: Method, uri: Uri) -> Response {
        answer(method, uri).await
    }

    /// OpenClaw's trace recording.
    #[utoipa::path(post, path = "/trace/start", operation_id = "post_trace_start", tag = "browser", responses((status = 501, description = "Not implemented here", body = crate::openapi::ErrorBody), (status = 401, description = "No or a wrong bearer token", content_type = "text/plain", body = String)))]
    pub async fn trace_start(method: Method, uri: Uri) -> Response {
        answer(method, uri).await
    }

    /// OpenClaw's trace recording.
    #[utoipa::path(post, path = "/trace/stop", operation_id = "post_trace_stop", tag = "browser", responses((status = 501, description = "Not implemented here", body = crate::openapi::ErrorBody), (status = 401, description = "No or a wrong bearer token", content_type = "text/plain", body = String)))]
    pub async fn trace_stop(method: Method, uri: Uri) -> Response {
        answer(method, uri).await
    }
}

async fn unknown_route(method: Method, uri: Uri) -> Response {
    json_error(
        StatusCode::NOT_FOUND,
        format!("unknown route: {method} {}", uri.path()),
    )
}

/// This API's OpenAPI document.
#[utoipa::path(
    get,
    path = "/openapi.json",
    operation_id = "get_openapi_json",
    tag = "meta",
    responses((status = 200, description = "This document (OpenAPI 3.1)", body = Object), (status = 401, description = "No or a wrong bearer token", content_type = "text/plain", body = String))
)]
async fn openapi_json() -> Response {
    Json(document_json()).into_response()
}

/// [`document`], made once.
fn document_json() -> &'static serde_json::Value {
    static DOCUMENT: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
    DOCUMENT.get_or_init(document)
}

/// The routes behind the token guard, and the signed-link routes, each
/// with its documentation.
fn documented() -> (OpenApiRouter<Arc<AppState>>, OpenApiRouter<Arc<AppState>>) {
    let guarded = OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(basic::status))
        .routes(routes!(basic::start))
        .routes(routes!(basic::stop))
        .routes(routes!(basic::profiles))
        .routes(routes!(basic::reset_profile))
        .routes(routes!(basic::doctor))
        .routes(routes!(basic::system_profiles))
        .routes(routes!(basic::import_status))
        .routes(routes!(basic::import_dismiss))
        .routes(routes!(basic::import_profile))
        .routes(routes!(tabs::list))
        .routes(routes!(tabs::open))
        .routes(routes!(tabs::focus))
        .routes(routes!(tabs::action))
        .routes(routes!(tabs::close))
        .routes(routes!(inspect::navigate))
        .routes(routes!(inspect::snapshot))
        .routes(routes!(inspect::screenshot))
        .routes(routes!(inspect::pdf))
        .routes(routes!(inspect::eval))
        .routes(routes!(inspect::query))
        .routes(routes!(inspect::dom))
        .routes(routes!(inspect::text))
        .routes(routes!(act::act))
        .routes(routes!(act::dialogs))
        .routes(routes!(act::console))
        .routes(routes!(act::errors))
        .routes(routes!(act::requests))
        .routes(routes!(act::response_body))
        .routes(routes!(act::highlight))
        .routes(routes!(act::grant))
        .routes(routes!(screencast::ticket))
        .routes(routes!(state::cookies))
        .routes(routes!(state::set_cookie))
        .routes(routes!(state::set_cookies))
        .routes(routes!(state::clear_cookies))
        .routes(routes!(state::read))
        .routes(routes!(state::write))
        .routes(routes!(state::clear))
        .routes(routes!(state::set))
        .routes(routes!(act::dialog))
        .routes(routes!(act::file_chooser))
        .routes(routes!(act::download))
        .routes(routes!(act::wait_download))
        .routes(routes!(unimplemented::create_profile))
        .routes(routes!(unimplemented::delete_profile))
        .routes(routes!(unimplemented::trace_start))
        .routes(routes!(unimplemented::trace_stop))
        .routes(routes!(approvals::list))
        .routes(routes!(events::approvals))
        .routes(routes!(events::all))
        .routes(routes!(workflows::list))
        .routes(routes!(runs::list, runs::start))
        .routes(routes!(runs::get_one))
        .routes(routes!(runs::cancel))
        .routes(routes!(runs::export))
        .routes(routes!(approvals::get_one, approvals::decide))
        .routes(routes!(approvals::approve))
        .routes(routes!(approvals::deny))
        .routes(routes!(approvals::respond))
        .routes(routes!(approvals::cancel))
        .routes(routes!(triggers::list))
        .routes(routes!(triggers::pause))
        .routes(routes!(triggers::resume))
        .routes(routes!(webhooks::list))
        .routes(routes!(webhooks::get_one))
        .routes(routes!(webhooks::redeliver))
        .routes(routes!(audit::list))
        .routes(routes!(requests::ask))
        .routes(routes!(requests::wait))
        .routes(routes!(devices::pair))
        .routes(routes!(devices::list))
        .routes(routes!(devices::revoke))
        .routes(routes!(sessions::list, sessions::create))
        .routes(routes!(sessions::get_one, sessions::delete))
        .routes(routes!(sessions::restore))
        .routes(routes!(sessions::trace))
        .routes(routes!(sessions::act))
        .routes(routes!(sessions::metrics))
        .routes(routes!(sessions::approval))
        .routes(routes!(handoff::request))
        .routes(routes!(sessions::profiles, sessions::create_profile))
        .routes(routes!(sessions::delete_profile))
        .routes(routes!(sessions::export_profile))
        .routes(routes!(openapi_json));
    // Signed approval links carry their own credential and have a guard
    // of their own (see links.rs).
    let links = OpenApiRouter::new()
        .routes(routes!(links::show, links::decide))
        .routes(routes!(screencast::stream))
        .routes(routes!(handoff::page))
        .routes(routes!(handoff::end))
        .routes(routes!(handoff::live))
        .routes(routes!(handoff::script))
        .routes(routes!(devices::challenge))
        .routes(routes!(devices::assert))
        .routes(routes!(devices::pair_page, devices::pair_finish))
        .routes(routes!(devices::pair_options))
        .routes(routes!(devices::script))
        .routes(routes!(inbox::page))
        .routes(routes!(inbox::signin_challenge))
        .routes(routes!(inbox::signin))
        .routes(routes!(inbox::approvals))
        .routes(routes!(inbox::challenge))
        .routes(routes!(inbox::approve))
        .routes(routes!(inbox::deny))
        .routes(routes!(inbox::requests))
        .routes(routes!(inbox::request_challenge))
        .routes(routes!(inbox::confirm_request))
        .routes(routes!(inbox::refuse_request))
        .routes(routes!(inbox::events));
    (guarded, links)
}

/// The OpenAPI 3.1 document of every route [`router`] serves.
pub fn document() -> serde_json::Value {
    let (guarded, links) = documented();
    let (_, mut doc) = guarded.split_for_parts();
    let (_, links) = links.split_for_parts();
    doc.merge(links);
    openapi::link_ids(&mut doc);
    let mut doc = serde_json::to_value(doc).unwrap_or_default();
    bodies::apply(&mut doc);
    doc
}

/// The control API router: the documented routes and the MCP server
/// (`/mcp`, `/mcp/pipe`) behind the guard, the signed-link routes behind
/// theirs.
pub fn router(state: Arc<AppState>) -> Router {
    let (guarded, links) = documented();
    let (guarded, _) = guarded.split_for_parts();
    let (links, _) = links.split_for_parts();
    // The browser and session routes' bodies are checked against the
    // document before their handlers run.
    let api = guarded
        .route_layer(middleware::from_fn(validate::body))
        .fallback(unknown_route);
    // MCP's tools dispatch to the same routes, past the guard: the MCP
    // request itself went through it.
    let mcp = mcp::Mcp::new(state.clone(), api.clone().with_state(state.clone()));
    let mcp_routes = Router::new()
        .route_service("/mcp", mcp.http_service())
        .route("/mcp/pipe", axum::routing::get(mcp::pipe))
        .with_state(mcp);
    let guarded =
        api.with_state(state.clone())
            .merge(mcp_routes)
            .layer(middleware::from_fn_with_state(
                state.clone(),
                security::guard,
            ));
    let links = links
        .layer(middleware::from_fn_with_state(state.clone(), links::guard))
        .layer(links::body_limit())
        .with_state(state);
    links
        .merge(guarded)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}

/// Serves the API on `addr` until `shutdown`; stops the browser on exit.
pub async fn serve(
    addr: SocketAddr,
    state: Arc<AppState>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    serve_on(listener, state, shutdown).await
}

/// Where the backend of `home` listens on a local socket: `<home>/clawdis.sock`.
pub fn socket_path(home: &std::path::Path) -> PathBuf {
    home.join("clawdis.sock")
}

/// Binds the home's local socket (one left by a backend that died is
/// replaced), readable and writable by its owner only.
fn local_socket(state: &AppState) -> std::io::Result<tokio::net::UnixListener> {
    use std::os::unix::fs::PermissionsExt;
    let path = socket_path(state.manager.home());
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let listener = tokio::net::UnixListener::bind(&path)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// [`serve`] on a listener the caller bound (to report a taken port before
/// anything else starts).
pub async fn serve_on(
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    // Ready means ready: the store is open and migrated before anyone is
    // told the API listens.
    state.start_backend().await;
    let addr = listener.local_addr()?;
    let closing = state.clone();
    let shutdown = async move {
        shutdown.await;
        closing.closing.send_replace(true);
    };
    // Every answer is written as soon as it is ready: with Nagle's
    // algorithm on, the last small write of a streamed answer (the end of
    // an MCP event stream, an SSE event) waits for the ACK of the previous
    // one, which the client delays by 40 ms (issue #33).
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::warn!(error = %e, "setting TCP_NODELAY on a connection");
        }
    });
    // The same API on the home's local socket, where the kernel names the
    // process on the other end (an approver token's request shows it).
    let (socket_closing, socket_closed) = tokio::sync::watch::channel(false);
    let socket = match local_socket(&state) {
        Ok(uds) => {
            let app = router(state.clone()).into_make_service_with_connect_info::<requests::Peer>();
            let mut closed = socket_closed.clone();
            Some(tokio::spawn(async move {
                let stop = async move {
                    let _ = closed.wait_for(|c| *c).await;
                };
                if let Err(e) = axum::serve(uds, app).with_graceful_shutdown(stop).await {
                    tracing::warn!(error = %e, "the local socket stopped");
                }
            }))
        }
        Err(e) => {
            tracing::warn!(error = %e, "no local socket: approver tokens cannot be asked for");
            None
        }
    };
    // Listening on both (the socket bound above, the TCP listener by the
    // caller): ready.
    tracing::info!(%addr, "control API listening");
    let served = axum::serve(listener, router(state.clone()))
        .with_graceful_shutdown(shutdown)
        .await;
    socket_closing.send_replace(true);
    if let Some(task) = socket {
        let _ = task.await;
    }
    let _ = std::fs::remove_file(socket_path(state.manager.home()));
    served?;
    if let Err(e) = state.manager.stop().await {
        tracing::warn!(error = %e, "stopping the browser on shutdown");
    }
    Ok(())
}
