//! The MCP server: the workflow engine, the workflows a user exposes and the
//! browser's sessions and verified actions, as tools for any agent.
//!
//! It is served over streamable HTTP at `/mcp` (behind the control API's
//! guard: the token's principal calls) and over `/mcp/pipe`, an HTTP/1.1
//! upgrade to the newline-delimited stdio transport that `clawdis mcp`
//! bridges to its stdin and stdout (the caller is then always the agent
//! `mcp:<client name>`). Both run the same handler; every tool calls the
//! code its HTTP route calls, mostly by dispatching to that very route.

mod answer;
mod browser;
mod exposed;
mod pipe;
mod tasks;
mod tools;
mod workflows;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use clawdis_approvals::Catalog;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CreateTaskResult, GetTaskParams,
    GetTaskResult, Implementation, JsonObject, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, SubscriptionFilter, Tool, ToolAnnotations, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};
use tokio::sync::watch;
use tower::ServiceExt as _;

use crate::{AppState, Principal};

pub(crate) use pipe::pipe;

/// The exposed workflows, by tool name.
type ExposedTools = Arc<BTreeMap<String, exposed::Exposed>>;

/// A tool's input schema and its compiled validator.
type Compiled = (Arc<JsonObject>, Arc<jsonschema::Validator>);

/// What every MCP connection of one backend shares.
pub(crate) struct Mcp {
    state: Arc<AppState>,
    /// The control API's routes without its guard: tools dispatch to them
    /// with the caller's principal already known.
    routes: Router,
    /// The exposed workflows, kept current from the workflow directories.
    exposed: tokio::sync::OnceCell<(Arc<Catalog>, watch::Receiver<ExposedTools>)>,
    /// Each principal's default browser session.
    defaults: std::sync::Mutex<HashMap<String, String>>,
    /// The fixed tools, built once: without and with `browser_evaluate`.
    fixed: [std::sync::OnceLock<Vec<Tool>>; 2],
    /// Each tool's compiled input schema, by name, with the schema it was
    /// compiled from (an exposed workflow's changes with its file).
    validators: std::sync::Mutex<HashMap<String, Compiled>>,
    /// The MCP tasks of every connection.
    tasks: tasks::Tasks,
}

impl std::fmt::Debug for Mcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mcp").finish_non_exhaustive()
    }
}

impl Mcp {
    /// The MCP server of `state`; `routes` are the guarded routes, unguarded.
    pub(crate) fn new(state: Arc<AppState>, routes: Router) -> Arc<Mcp> {
        Arc::new(Mcp {
            state,
            routes,
            exposed: tokio::sync::OnceCell::new(),
            defaults: std::sync::Mutex::new(HashMap::new()),
            fixed: [std::sync::OnceLock::new(), std::sync::OnceLock::new()],
            validators: std::sync::Mutex::new(HashMap::new()),
            tasks: tasks::Tasks::default(),
        })
    }

    /// The streamable HTTP service for `/mcp`.
    pub(crate) fn http_service(
        self: &Arc<Self>,
    ) -> StreamableHttpService<Handler, LocalSessionManager> {
        let mcp = self.clone();
        let mut config = StreamableHttpServerConfig::default();
        // Long-lived streams end with the server, not after it.
        let closing = config.cancellation_token.clone();
        let state = self.state.clone();
        tokio::spawn(async move {
            state.closed().await;
            closing.cancel();
        });
        config.legacy_session_mode = true;
        StreamableHttpService::new(
            move || Ok(Handler::new(mcp.clone(), Over::Http)),
            LocalSessionManager::default().into(),
            config,
        )
    }

    /// The fixed tools (with `browser_evaluate` when `evaluate`).
    fn fixed(&self, evaluate: bool) -> &[Tool] {
        self.fixed[usize::from(evaluate)].get_or_init(|| {
            tools::all(evaluate)
                .iter()
                .map(|s| tool(s.name, s.description, &s.schema, s.read_only))
                .collect()
        })
    }

    /// The first violation of `tool`'s input schema by `args`, as `at
    /// /path: message`; the schema is compiled once.
    fn violation(&self, tool: &Tool, args: &Value) -> Option<String> {
        let validator = {
            let mut cache = self.validators.lock().unwrap_or_else(|e| e.into_inner());
            match cache.get(tool.name.as_ref()) {
                Some((schema, v)) if *schema == tool.input_schema => v.clone(),
                _ => {
                    let schema = Value::Object((*tool.input_schema).clone());
                    match jsonschema::validator_for(&schema) {
                        Ok(v) => {
                            let v = Arc::new(v);
                            cache.insert(
                                tool.name.to_string(),
                                (tool.input_schema.clone(), v.clone()),
                            );
                            v
                        }
                        Err(e) => return Some(format!("the tool's input schema is broken: {e}")),
                    }
                }
            }
        };
        let error = validator.iter_errors(args).next()?;
        let path = error.instance_path().to_string();
        let path = if path.is_empty() {
            "/".to_string()
        } else {
            path
        };
        Some(format!("invalid arguments at {path}: {error}"))
    }

    /// The exposed workflows now, and a receiver told when they change.
    async fn exposed(&self) -> watch::Receiver<ExposedTools> {
        let (_, tools) = self
            .exposed
            .get_or_init(|| async {
                let dirs = self
                    .state
                    .manager
                    .settings()
                    .workflow_dirs(self.state.manager.home());
                let catalog = Catalog::open(dirs).await;
                let mut library = catalog.subscribe();
                let (send, tools) =
                    watch::channel(Arc::new(exposed::exposed(&library.borrow_and_update())));
                // Only a change of the tools is told, not every change of a file.
                tokio::spawn(async move {
                    while library.changed().await.is_ok() {
                        let fresh = exposed::exposed(&library.borrow_and_update());
                        send.send_if_modified(|now| {
                            let changed = **now != fresh;
                            if changed {
                                *now = Arc::new(fresh);
                            }
                            changed
                        });
                    }
                });
                (catalog, tools)
            })
            .await;
        tools.clone()
    }

    /// Calls route `method path` as `principal`, with `body` as JSON;
    /// answers the route's status and JSON body.
    async fn route(
        &self,
        principal: &Principal,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, "127.0.0.1");
        let body = match body {
            Some(body) => {
                request = request.header(header::CONTENT_TYPE, "application/json");
                Body::from(body.to_string())
            }
            None => Body::empty(),
        };
        let Ok(mut request) = request.body(body) else {
            return (
                StatusCode::BAD_REQUEST,
                json!({ "error": format!("not a valid path: {path}") }),
            );
        };
        request.extensions_mut().insert(principal.clone());
        let response = match self.routes.clone().oneshot(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        };
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap_or_default();
        let value = serde_json::from_slice(&bytes).unwrap_or_else(
            |_| json!({ "error": String::from_utf8_lossy(&bytes).trim().to_string() }),
        );
        (status, value)
    }
}

/// How a connection reached the server.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Over {
    /// `/mcp`: the bearer token names the caller.
    Http,
    /// `clawdis mcp`: always an agent, named by its client.
    Pipe,
}

/// One MCP connection's handler.
#[derive(Clone, Debug)]
pub(crate) struct Handler {
    mcp: Arc<Mcp>,
    over: Over,
    connection: Arc<Connection>,
}

/// What one connection (a `clawdis mcp` pipe, an HTTP session with
/// `initialize`) keeps: its default browser session and the sessions it
/// opened, which are closed when it ends, so a client that goes away
/// leaves no browser context behind.
pub(crate) struct Connection {
    mcp: Arc<Mcp>,
    /// The session browser tools use without a `sessionId`.
    default: std::sync::Mutex<Option<String>>,
    /// Every session opened through this connection and not closed.
    opened: std::sync::Mutex<Vec<String>>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").finish_non_exhaustive()
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        let opened = std::mem::take(&mut *self.opened.lock().unwrap_or_else(|e| e.into_inner()));
        if opened.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let state = self.mcp.state.clone();
        runtime.spawn(async move {
            let Ok(sessions) = state.sessions().await else {
                return;
            };
            for id in opened {
                match sessions.delete(&id).await {
                    Ok(()) => tracing::info!(session = %id, "closed with the MCP connection that opened it"),
                    Err(e) => tracing::debug!(session = %id, error = %e, "closing a session of an ended MCP connection"),
                }
            }
        });
    }
}

/// Whether the caller of `ctx` takes form elicitations (a task asks with
/// one): it declared `form`, or an empty `elicitation`, which means form.
fn asks(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// Percent-encodes a path segment or query value.
fn encode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// A tool as MCP lists it.
fn tool(name: &str, description: &str, schema: &Value, read_only: bool) -> Tool {
    let schema = match schema {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    let mut tool = Tool::new(name.to_string(), description.to_string(), Arc::new(schema));
    tool.annotations = Some(ToolAnnotations::new().read_only(read_only));
    tool
}

impl Handler {
    fn new(mcp: Arc<Mcp>, over: Over) -> Handler {
        let connection = Arc::new(Connection {
            mcp: mcp.clone(),
            default: std::sync::Mutex::new(None),
            opened: std::sync::Mutex::new(Vec::new()),
        });
        Handler {
            mcp,
            over,
            connection,
        }
    }

    /// Whose default session a call uses: the connection's, except over
    /// stateless HTTP (2026-07-28), where each request has a handler of
    /// its own and the caller's principal keeps it.
    fn owner(&self, principal: &Principal, ctx: &RequestContext<RoleServer>) -> browser::Owner<'_> {
        let stateless = matches!(self.over, Over::Http)
            && ctx
                .protocol_version()
                .is_some_and(|v| v.as_str() >= rmcp::model::ProtocolVersion::V_2026_07_28.as_str());
        if stateless {
            browser::Owner::Principal(principal.label())
        } else {
            browser::Owner::Connection(&self.connection)
        }
    }

    /// Who calls: the token's principal over HTTP, the agent
    /// `mcp:<client>` over the pipe.
    fn principal(&self, ctx: &RequestContext<RoleServer>) -> Result<Principal, ErrorData> {
        match self.over {
            Over::Http => ctx
                .extensions
                .get::<axum::http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Principal>())
                .cloned()
                .ok_or_else(|| ErrorData::internal_error("no credential on the request", None)),
            Over::Pipe => {
                let client = ctx
                    .client_info()
                    .map(|info| info.name)
                    .filter(|n| !n.trim().is_empty())
                    .unwrap_or_else(|| "client".to_string());
                Ok(Principal::McpClient { client })
            }
        }
    }

    fn evaluate_enabled(&self) -> bool {
        self.mcp.state.manager.settings().evaluate_enabled
    }

    /// Every tool: the fixed ones, then the exposed workflows.
    async fn tools(&self) -> Vec<Tool> {
        let mut out = self.mcp.fixed(self.evaluate_enabled()).to_vec();
        let exposed = self.mcp.exposed().await.borrow().clone();
        out.extend(exposed.values().map(exposed::Exposed::tool));
        out
    }

    /// Tool `name`: a fixed one, else one of `exposed` (when known).
    fn lookup(&self, name: &str, exposed: Option<&ExposedTools>) -> Option<Tool> {
        let fixed = self.mcp.fixed(self.evaluate_enabled());
        match fixed.iter().find(|t| t.name == name) {
            Some(found) => Some(found.clone()),
            None => exposed?.get(name).map(exposed::Exposed::tool),
        }
    }

    /// Runs tool `name` with `args` (checked against its schema already).
    async fn run(
        &self,
        name: &str,
        args: Map<String, Value>,
        principal: Principal,
        ctx: &RequestContext<RoleServer>,
    ) -> workflows::Ran {
        if let Some(workflow) = name.strip_prefix("workflow.") {
            let exposed = self.mcp.exposed().await.borrow().clone();
            return match exposed.get(name) {
                Some(e) => workflows::run_exposed(&self.mcp, &principal, e, args).await,
                None => answer::failure(format!("no exposed workflow {workflow}")).into(),
            };
        }
        match name {
            "lobster_run" => workflows::run(&self.mcp, &principal, args).await,
            "lobster_resume" => workflows::resume(&self.mcp, &principal, args).await.into(),
            "runs_list" => workflows::list(&self.mcp, args).await.into(),
            "run_status" => workflows::status(&self.mcp, args).await.into(),
            "approvals_list" => workflows::approvals(&self.mcp, args).await.into(),
            _ => {
                let owner = self.owner(&principal, ctx);
                browser::call(&self.mcp, &principal, &owner, name, args, ctx)
                    .await
                    .into()
            }
        }
    }

    /// Tool `name`, which waits for a person, as a task of `principal`:
    /// it runs as its call would, without progress notifications (the
    /// call has its answer: the task).
    fn person_task(
        &self,
        name: String,
        args: Map<String, Value>,
        principal: Principal,
        ctx: &RequestContext<RoleServer>,
    ) -> rmcp::model::Task {
        let wait = browser::wait_of(&args);
        let message = browser::asked_of(&name, &args);
        let mut quiet = ctx.clone();
        quiet.meta.remove("progressToken");
        let handler = self.clone();
        let owner = principal.clone();
        let span = tracing::info_span!("mcp_task", tool = %name, caller = %principal.label());
        let work = tracing::Instrument::instrument(
            async move { handler.run(&name, args, principal, &quiet).await.answer },
            span,
        );
        tasks::person(&self.mcp, &owner, wait, message, asks(ctx), work)
    }
}

impl ServerHandler for Handler {
    #[expect(
        deprecated,
        reason = "logging/setLevel is deprecated (SEP-2577), but clients of 2025-11-25 send it and the conformance suite expects it answered"
    )]
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_prompts()
            .enable_resources()
            .enable_logging()
            .enable_completions()
            .enable_tasks()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("clawdis", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Clawdis: Lobster workflows (lobster_run, lobster_resume; a run that needs a person returns needs_approval at once, or a task that waits for the person when the client declares the tasks extension), the workflows exposed as workflow.* tools, and the clawd browser: sessions (browser_open, browser_list) whose actions check their effect. browser_snapshot gives refs the other browser tools take.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut result = ListToolsResult::default();
        result.tools = self.tools().await;
        Ok(result)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let exposed = self
            .mcp
            .exposed
            .get()
            .map(|(_, tools)| tools.borrow().clone());
        self.lookup(name, exposed.as_ref())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let exposed = self.mcp.exposed().await.borrow().clone();
        let Some(found) = self.lookup(&name, Some(&exposed)) else {
            return Err(ErrorData::invalid_params(
                format!("tool not found: {name}"),
                None,
            ));
        };
        let args = request.arguments.unwrap_or_default();
        if let Some(problem) = self.mcp.violation(&found, &Value::Object(args.clone())) {
            return Ok(CallToolResponse::Complete(answer::failure(problem)));
        }
        let principal = self.principal(&ctx)?;
        // A client that declares tasks gets one for a call that waits.
        let as_task = ctx
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks());
        let waits = tasks::waits(&name).filter(|_| as_task);
        if waits == Some(tasks::Waits::Person) {
            let task = self.person_task(name, args, principal, &ctx);
            return Ok(CallToolResponse::Task(CreateTaskResult::new(task)));
        }
        let span = tracing::info_span!("mcp_tool", tool = %name, caller = %principal.label());
        let work =
            tracing::Instrument::instrument(self.run(&name, args, principal.clone(), &ctx), span);
        let ran = tokio::select! {
            ran = work => ran,
            () = ctx.ct.cancelled() => answer::failure("the call was cancelled").into(),
        };
        match ran.paused.filter(|_| waits == Some(tasks::Waits::Run)) {
            Some(paused) => {
                let task = tasks::run(&self.mcp, &principal, paused, asks(&ctx));
                Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
            }
            None => Ok(CallToolResponse::Complete(ran.answer)),
        }
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.mcp.tasks.get(&self.principal(&ctx)?, &request.task_id)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let principal = self.principal(&ctx)?;
        self.mcp
            .tasks
            .update(&principal, &request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.mcp
            .tasks
            .cancel(&self.principal(&ctx)?, &request.task_id)
    }

    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, ErrorData> {
        // Prompts are declared (`prompts/list` answers, empty): a prompt
        // asked for by name is one this server does not have, not a method
        // it does not serve.
        Err(ErrorData::invalid_params(
            format!("no prompt {}: this server has none", request.name),
            Some(json!({ "name": request.name })),
        ))
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        // This server has no resources: every URI is one it does not have.
        Err(ErrorData::invalid_params(
            format!("no resource {}: this server has none", request.uri),
            Some(json!({ "uri": request.uri })),
        ))
    }

    #[expect(
        deprecated,
        reason = "logging/setLevel is deprecated (SEP-2577), but clients of 2025-11-25 send it"
    )]
    async fn set_level(
        &self,
        _request: rmcp::model::SetLevelRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn on_initialized(&self, ctx: NotificationContext<RoleServer>) {
        // A session with `initialize` hears of tool changes for as long as
        // it lives.
        let mut tools = self.mcp.exposed().await;
        let peer = ctx.peer;
        tokio::spawn(async move {
            tools.borrow_and_update();
            loop {
                tokio::select! {
                    changed = tools.changed() => {
                        if changed.is_err() {
                            return;
                        }
                    }
                    () = tokio::time::sleep(std::time::Duration::from_secs(30)) => {
                        if peer.is_transport_closed() {
                            return;
                        }
                        continue;
                    }
                }
                if peer.notify_tool_list_changed().await.is_err() {
                    return;
                }
            }
        });
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    async fn listen(&self, ctx: SubscriptionContext) -> Result<(), ErrorData> {
        let mut tools = self.mcp.exposed().await;
        tools.borrow_and_update();
        loop {
            tokio::select! {
                () = ctx.cancelled() => return Ok(()),
                changed = tools.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    if ctx.accepted().tools_list_changed == Some(true)
                        && ctx.sink().notify_tool_list_changed().await.is_err()
                    {
                        return Ok(());
                    }
                }
            }
        }
    }
}
