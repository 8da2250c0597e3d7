//! The control API's OpenAPI 3.1 document, `GET /openapi.json`: generated
//! by utoipa from each handler's `#[utoipa::path]` and the schemas here,
//! and collected with the routes themselves (see [`crate::router`]), so a
//! route cannot be served without being documented.
//!
//! The schemas describe the JSON the handlers build; the core crates stay
//! free of HTTP concerns. The black-box tests check the server's answers
//! against this document.

#![allow(
    dead_code,
    reason = "the structs here describe JSON for the document; nothing builds them"
)]

use serde_json::Value;
use utoipa::openapi::link::LinkBuilder;
use utoipa::openapi::schema::{
    AllOfBuilder, ObjectBuilder, OneOfBuilder, Schema, SchemaType, Type,
};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{OpenApi as Document, RefOr};
use utoipa::{IntoParams, IntoResponses, Modify, OpenApi, PartialSchema, ToSchema};

use crate::api::NON_BLANK;

/// The document's frame: title, security, tags. The paths come from the
/// router.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Clawdis control API",
        description = "The clawd browser's control API (OpenClaw's routes and Clawdis' \
                       additions) and the workflow service: runs, approvals, triggers, webhooks. \
                       Loopback only; every route but the signed approval links wants \
                       `Authorization: Bearer <token>`."
    ),
    modifiers(&BearerAuth),
    components(schemas(
        ErrorBody, BrowserAnswer, Envelope, Decided, AlreadyDecided, Approval,
        Run, Step, Decision,
    )),
    security(("bearer" = [])),
    tags(
        (name = "browser", description = "The clawd browser: tabs, pages, actions, state"),
        (name = "runs", description = "Workflows and pipelines run by the service"),
        (name = "sessions", description = "Browser sessions and their verified actions"),
        (name = "approvals", description = "Gates waiting for a decision"),
        (name = "triggers", description = "Cron schedules and file watches"),
        (name = "webhooks", description = "Signed deliveries of run and gate events"),
        (name = "audit", description = "The hash-chained ledger of decisions, refusals and tokens"),
        (name = "tokens", description = "Approver tokens, issued when a person confirms them"),
        (name = "devices", description = "Paired devices, which approve with a passkey"),
        (name = "workflows", description = "The workflow library"),
        (name = "events", description = "Server-sent events"),
        (name = "links", description = "Signed approval links (no bearer token)"),
        (name = "meta", description = "This document"),
    )
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// An error: `{error}` saying what went wrong, with a stable `code` where
/// there is one (`parse_error`: a pipeline or args that do not parse).
#[derive(ToSchema)]
pub struct ErrorBody {
    /// What went wrong.
    error: String,
    /// A stable machine-readable code, where there is one.
    code: Option<String>,
}

/// A browser route's answer: an object, usually with `ok` and the
/// `targetId` of the tab it acted on, and the route's own fields.
#[derive(ToSchema)]
pub struct BrowserAnswer {
    /// Whether the action succeeded (most routes).
    ok: Option<bool>,
    /// The tab acted on.
    #[schema(rename = "targetId")]
    target_id: Option<String>,
}

/// Query parameters the browser routes share.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct BrowserQuery {
    /// The tab to act on (else the current one).
    #[param(rename = "targetId")]
    target_id: Option<String>,
    /// A browser session whose page to act on (instead of a tab).
    #[param(rename = "sessionId")]
    session_id: Option<String>,
    /// The profile (only `clawd` exists).
    profile: Option<String>,
}

/// What a browser route can answer.
#[derive(IntoResponses)]
pub enum BrowserAnswers {
    /// Done.
    #[response(status = 200)]
    Ok(BrowserAnswer),
    /// A malformed request or a bad argument.
    #[response(status = 400)]
    Bad(ErrorBody),
    /// No or a wrong bearer token: plain text `Unauthorized`, as OpenClaw
    /// answers.
    #[response(status = 401, content_type = "text/plain")]
    Unauthorized(String),
    /// Not allowed (a policy, a foreign Origin or Host).
    #[response(status = 403)]
    Forbidden(ErrorBody),
    /// No such tab, ref or file.
    #[response(status = 404)]
    Missing(ErrorBody),
    /// The page is not in a state for it (a dialog is open, say).
    #[response(status = 409)]
    Conflict(ErrorBody),
    /// The body is larger than the API takes.
    #[response(status = 413)]
    TooLarge(ErrorBody),
    /// The browser failed.
    #[response(status = 500)]
    Failed(ErrorBody),
    /// Not supported here.
    #[response(status = 501)]
    Unsupported(ErrorBody),
    /// The page's site could not be reached.
    #[response(status = 502)]
    Unreachable(ErrorBody),
    /// The page did not answer in time, or what a wait asked for did not
    /// come.
    #[response(status = 504)]
    Timeout(ErrorBody),
}

/// Lobster's tool envelope, plus the service's `runId`.
#[derive(ToSchema)]
pub struct Envelope {
    /// Always 1.
    #[schema(rename = "protocolVersion")]
    protocol_version: Option<u32>,
    /// Whether the run succeeded so far.
    ok: bool,
    /// `ok`, `needs_approval`, `needs_input`, `cancelled`, or `running`
    /// (an answer not waited for).
    status: Option<String>,
    /// The output items.
    output: Option<Vec<Value>>,
    /// The approval a paused run waits for.
    #[schema(rename = "requiresApproval")]
    requires_approval: Option<Value>,
    /// The input a paused run waits for.
    #[schema(rename = "requiresInput")]
    requires_input: Option<Value>,
    /// Why the run failed: `{type, message}`.
    error: Option<Value>,
    /// The service run.
    #[schema(rename = "runId")]
    run_id: Option<String>,
}

/// `POST /runs`: a pipeline, or a named workflow (or an absolute path)
/// with args; exactly one of the two.
pub struct RunRequest;

impl PartialSchema for RunRequest {
    fn schema() -> RefOr<Schema> {
        let nullable = |ty: Type| [ty, Type::Null].into_iter().collect::<SchemaType>();
        let absent = || ObjectBuilder::new().schema_type(Type::Null);
        let common = |what: &str, other: &str, text: &str| {
            ObjectBuilder::new()
                .schema_type(Type::Object)
                .property(
                    what,
                    AllOfBuilder::new()
                        .item(
                            ObjectBuilder::new()
                                .schema_type(Type::String)
                                .pattern(Some(NON_BLANK)),
                        )
                        .description(Some(text)),
                )
                .required(what)
                .property(other, absent())
                .property(
                    "cwd",
                    ObjectBuilder::new()
                        .schema_type(nullable(Type::String))
                        .pattern(Some("^/"))
                        .description(Some(
                            "Where its steps run: an absolute path to a directory (404 if there is none)",
                        )),
                )
                .property(
                    "wait",
                    ObjectBuilder::new()
                        .schema_type(nullable(Type::Boolean))
                        .description(Some("false: answer at once (202) and let the run go on")),
                )
        };
        let pipeline = common(
            "pipeline",
            "workflow",
            "A pipeline, as `lobster run` takes it",
        )
        .property(
            "args",
            ObjectBuilder::new()
                .schema_type(nullable(Type::Object))
                .max_properties(Some(0))
                .description(Some("A pipeline takes no args")),
        );
        let mut workflow = common(
            "workflow",
            "pipeline",
            "A workflow's name from GET /workflows (no `/`), or an absolute path to a workflow file",
        )
        .property(
            "args",
            ObjectBuilder::new()
                .schema_type(nullable(Type::Object))
                .description(Some("The workflow's args (parse_error if it does not take them)")),
        )
        .build();
        // A name, or an absolute path: a relative path is refused.
        if let Some(RefOr::T(Schema::AllOf(name))) = workflow.properties.get_mut("workflow") {
            name.items.push(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .pattern(Some("^(?:/|[^/]*$)"))
                    .into(),
            );
        }
        OneOfBuilder::new()
            .item(pipeline)
            .item(workflow)
            .description(Some(
                "A pipeline, or a workflow with args. A pipeline that does not parse, or args \
                 the workflow does not take, answer Lobster's parse_error envelope (200) and \
                 run nothing.",
            ))
            .into()
    }
}

impl ToSchema for RunRequest {}

/// A run's status, as `GET /runs?status=` names it.
#[derive(ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatusWord {
    Running,
    Ok,
    NeedsApproval,
    NeedsInput,
    Cancelled,
    Failed,
}

/// A gate's state, as `GET /approvals?status=` names it.
#[derive(ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum GateStateWord {
    Pending,
    Decided,
    Expired,
}

/// A step of a run.
#[derive(ToSchema)]
pub struct Step {
    id: String,
    /// `pending`, `running`, `ok`, `failed`, `skipped` or `cancelled`.
    status: String,
    #[schema(rename = "startedAt")]
    started_at: Option<String>,
    #[schema(rename = "finishedAt")]
    finished_at: Option<String>,
    #[schema(rename = "durationMs")]
    duration_ms: Option<u64>,
    attempts: u32,
    output: Option<Value>,
    error: Option<String>,
}

/// A decision on a run's gate.
#[derive(ToSchema)]
pub struct Decision {
    #[schema(rename = "approvalId")]
    approval_id: Option<String>,
    /// `approve`, `deny`, `cancel`, `respond` or `expire`.
    decision: String,
    by: Option<String>,
    via: Option<String>,
    at: Option<String>,
    comment: Option<String>,
}

/// A run with its steps and decisions.
#[derive(ToSchema)]
pub struct Run {
    #[schema(rename = "runId")]
    run_id: String,
    /// `workflow` or `pipeline`.
    kind: String,
    workflow: Option<String>,
    /// `running`, `ok`, `needs_approval`, `needs_input`, `cancelled` or `failed`.
    status: String,
    #[schema(rename = "startedAt")]
    started_at: String,
    #[schema(rename = "finishedAt")]
    finished_at: Option<String>,
    #[schema(rename = "startedBy")]
    started_by: String,
    args: Option<Value>,
    cwd: Option<String>,
    steps: Vec<Step>,
    decisions: Vec<Decision>,
    result: Option<Value>,
}

/// A page of runs, newest first.
#[derive(ToSchema)]
pub struct RunPage {
    runs: Vec<Run>,
    /// Pass it back as `cursor` for the next page; null on the last.
    next: Option<String>,
}

/// A run as one self-contained document.
#[derive(ToSchema)]
pub struct RunExport {
    /// `clawdis.run/1`.
    format: String,
    #[schema(rename = "exportedAt")]
    exported_at: String,
    /// `{kind, workflow, text}`: the definition as it ran.
    definition: Value,
    run: Run,
    /// The audit ledger's last entry when it was exported (`{seq, hash}`,
    /// null while the ledger is empty): a copy to check the ledger against.
    #[schema(rename = "auditHead")]
    audit_head: Option<AuditHead>,
}

/// Which runs `GET /runs` lists.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RunsQuery {
    /// Only runs in this status.
    #[param(inline, value_type = Option<RunStatusWord>)]
    status: Option<String>,
    /// Only runs of this workflow.
    workflow: Option<String>,
    /// How many (50 unless given).
    #[param(minimum = 1, maximum = 500)]
    limit: Option<u32>,
    /// The `next` of the previous page.
    #[param(pattern = "^[0-9]{1,18}$")]
    cursor: Option<String>,
}

/// A gate waiting for a decision, or decided.
#[derive(ToSchema)]
pub struct Approval {
    /// The run's id (the same as `runId`): what `/runs/{id}` and
    /// `/approvals/{id}` take.
    id: String,
    /// The gate's short id (8 hex digits): decides exactly this gate.
    #[schema(rename = "approvalId")]
    approval_id: Option<String>,
    /// The run's id.
    #[schema(rename = "runId")]
    run_id: String,
    /// `pending`, `decided` or `expired`.
    status: String,
    prompt: String,
    items: Vec<Value>,
    /// `{approvers, minApprovals, ...}`.
    policy: Value,
    decisions: Vec<Value>,
    /// Whether the workflow file differs on disk from the definition the
    /// run paused with (what it resumes with); absent for a pipeline.
    #[schema(rename = "fileChanged")]
    file_changed: Option<bool>,
    /// What a person decides on: `unlocks` (the steps or stages approving
    /// runs, until the next gate: `id`, `kind`, `command` with templates
    /// resolved where known, `cwd`, the `env` names it sets, `stdin`,
    /// `when`), `before` (the steps run: `id`, `status`, `command`, the
    /// first 2 KB of `output`, `outputTruncated`, `durationMs`),
    /// `startedBy` (`principal`, and for a `lobster` run its `process`),
    /// `policy` (`approvers`, `presence`, `votes`, `needed`, `expiresAt`,
    /// `onExpiry`) and `fileChanged`.
    context: Value,
}

/// `GET /approvals`.
#[derive(ToSchema)]
pub struct ApprovalList {
    approvals: Vec<Approval>,
}

/// `GET /approvals/{id}`.
#[derive(ToSchema)]
pub struct ApprovalAnswer {
    approval: Approval,
}

/// Which approvals `GET /approvals` lists.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ApprovalsQuery {
    /// Only gates in this state.
    #[param(inline, value_type = Option<GateStateWord>)]
    status: Option<String>,
}

/// `POST /approvals/{id}`: the one-route form of the decisions.
pub struct DecideRequest;

impl PartialSchema for DecideRequest {
    fn schema() -> RefOr<Schema> {
        let comment = || {
            ObjectBuilder::new()
                .schema_type(
                    [Type::String, Type::Null]
                        .into_iter()
                        .collect::<SchemaType>(),
                )
                .description(Some("Kept with the decision"))
        };
        let decision = |words: &[&str]| {
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(words.iter().copied()))
        };
        let digest = || {
            ObjectBuilder::new()
                .schema_type(
                    [Type::String, Type::Null]
                        .into_iter()
                        .collect::<SchemaType>(),
                )
                .pattern(Some(DIGEST_PATTERN))
                .description(Some(SEEN))
        };
        let decide = ObjectBuilder::new()
            .schema_type(Type::Object)
            .property("decision", decision(&["approve", "deny", "cancel"]))
            .required("decision")
            .property("comment", comment())
            .property("digest", digest());
        let respond = ObjectBuilder::new()
            .schema_type(Type::Object)
            .property("decision", decision(&["respond"]))
            .required("decision")
            .property(
                "response",
                ObjectBuilder::new()
                    .schema_type(SchemaType::AnyValue)
                    .description(Some("The input gate's answer, checked against its schema")),
            )
            .required("response")
            .property("comment", comment())
            .property("digest", digest());
        OneOfBuilder::new().item(decide).item(respond).into()
    }
}

impl ToSchema for DecideRequest {}

/// `POST /approvals/{id}/approve`.
#[derive(ToSchema)]
pub struct ApproveRequest {
    comment: Option<String>,
    /// The approval's `digest` as it was shown: a gate changed since
    /// answers 409.
    #[schema(pattern = "^[0-9a-f]{64}$")]
    digest: Option<String>,
}

/// What a digest looks like: hex SHA-256.
const DIGEST_PATTERN: &str = "^[0-9a-f]{64}$";
/// What a decision's `digest` is.
const SEEN: &str = "The approval's `digest` as it was shown: a gate changed since answers 409";

/// `POST /approvals/{id}/deny`.
#[derive(ToSchema)]
pub struct DenyRequest {
    reason: Option<String>,
}

/// `POST /approvals/{id}/respond`.
#[derive(ToSchema)]
pub struct RespondRequest {
    /// Checked against the gate's schema.
    response: Value,
    /// Kept with the decision.
    comment: Option<String>,
    /// The approval's `digest` as it was shown: a gate changed since
    /// answers 409.
    #[schema(pattern = "^[0-9a-f]{64}$")]
    digest: Option<String>,
}

/// `POST /approvals/{id}/cancel`.
#[derive(ToSchema)]
pub struct CancelRequest {
    /// Kept with the decision.
    comment: Option<String>,
}

/// A decision taken: the resumed run's envelope.
#[derive(ToSchema)]
pub struct Decided {
    ok: bool,
    result: Envelope,
}

/// A decision refused because another came first: that decision.
#[derive(ToSchema)]
pub struct AlreadyDecided {
    error: String,
    approval: Option<Approval>,
}

/// What a decision can answer.
#[derive(IntoResponses)]
pub enum DecisionAnswers {
    /// Decided; the run went on (or stopped) as its envelope says.
    #[response(status = 200)]
    Ok(Decided),
    /// A malformed body, or a response the gate's schema refuses.
    #[response(status = 400)]
    Bad(ErrorBody),
    /// No or a wrong bearer token: plain text `Unauthorized`, as OpenClaw
    /// answers.
    #[response(status = 401, content_type = "text/plain")]
    Unauthorized(String),
    /// This caller may not decide this gate; the error says who may.
    #[response(status = 403)]
    Forbidden(ErrorBody),
    /// No such run or approval.
    #[response(status = 404)]
    Missing(ErrorBody),
    /// Decided already: the first decision.
    #[response(status = 409)]
    Conflict(AlreadyDecided),
    /// The body is larger than the API takes.
    #[response(status = 413)]
    TooLarge(ErrorBody),
    /// The run could not be resumed.
    #[response(status = 500)]
    Failed(ErrorBody),
}

/// An entry of the ledger.
#[derive(ToSchema)]
pub struct AuditEntry {
    /// Its place: 1, 2, 3, ... with no gaps.
    seq: i64,
    at: String,
    /// `gate.approve`, `gate.reject`, `gate.cancel`, `gate.respond`,
    /// `gate.expire`, `gate.vote`, `gate.refused`, `token.issued` or
    /// `token.revoked`.
    kind: String,
    /// A gate's approval id (else its run id), a token's name.
    subject: String,
    by: Option<String>,
    /// The channel: `app`, `notification`, `http`, `cli`, `mcp`, `link`
    /// or `expiry`.
    via: Option<String>,
    /// How a person was shown to be there: `click`, `token`, `passkey` or
    /// `os`.
    presence: Option<String>,
    digest: Option<String>,
    /// The previous entry's hash (64 zeros for the first).
    #[schema(rename = "prevHash")]
    prev_hash: String,
    /// SHA-256 (hex) of `[seq, at, kind, subject, by, via, presence,
    /// digest, prevHash]` as compact JSON.
    hash: String,
}

/// The ledger's last entry.
#[derive(ToSchema)]
pub struct AuditHead {
    seq: i64,
    hash: String,
}

/// `GET /audit`.
#[derive(ToSchema)]
pub struct AuditPage {
    /// Newest first.
    entries: Vec<AuditEntry>,
    /// Pass it back as `cursor` for the next page; null on the last.
    next: Option<String>,
    /// The last entry: what a copy kept elsewhere is checked against (null
    /// while the ledger is empty).
    head: Option<AuditHead>,
}

/// `POST /devices/pairings`.
#[derive(ToSchema)]
pub struct PairingBody {
    /// The device's name: 1 to 64 of `A-Z a-z 0-9 . _ -`.
    #[schema(pattern = "^[A-Za-z0-9._-]{1,64}$")]
    name: String,
    /// Once a device is paired: how long the request waits for the person,
    /// in seconds (300 unless given).
    #[schema(rename = "waitSeconds", minimum = 1, maximum = 3600)]
    wait_seconds: Option<u64>,
}

/// A pairing link: open it on the device, within 10 minutes, once.
#[derive(ToSchema)]
pub struct PairingLink {
    name: String,
    url: String,
    /// The link as a QR code (SVG), for the phone's camera.
    #[schema(rename = "qrSvg")]
    qr_svg: Option<String>,
    #[schema(rename = "expiresAt")]
    expires_at: String,
}

/// A paired device (never its passkey).
#[derive(ToSchema)]
pub struct Device {
    name: String,
    /// The WebAuthn relying party of its passkey.
    #[schema(rename = "rpId")]
    rp_id: String,
    #[schema(rename = "createdAt")]
    created_at: String,
    #[schema(rename = "lastUsedAt")]
    last_used_at: Option<String>,
    #[schema(rename = "revokedAt")]
    revoked_at: Option<String>,
}

/// `GET /devices`.
#[derive(ToSchema)]
pub struct DeviceList {
    devices: Vec<Device>,
}

/// `POST /approve/{signed}/challenge`: a passkey ceremony for this gate.
#[derive(ToSchema)]
pub struct PasskeyChallenge {
    /// Only `approve`: a denial needs no passkey.
    #[schema(pattern = "^approve$")]
    decision: String,
    /// The approval's digest as the page showed it.
    #[schema(pattern = "^[0-9a-f]{64}$")]
    digest: String,
}

/// A WebAuthn credential as the browser made it, its binary fields
/// base64url.
#[derive(ToSchema)]
pub struct PasskeyCredential {
    id: String,
    #[schema(rename = "rawId")]
    raw_id: String,
    /// `public-key`.
    #[schema(rename = "type")]
    kind: String,
    /// The authenticator's response.
    response: Value,
}

/// `POST /approve/{signed}/passkey`.
#[derive(ToSchema)]
pub struct PasskeyAssertion {
    /// The ceremony's id, from the challenge.
    ceremony: String,
    /// The device's assertion.
    credential: PasskeyCredential,
}

/// `POST /tokens/requests`.
#[derive(ToSchema)]
pub struct TokenRequestBody {
    /// The token's name: 1 to 64 of `A-Z a-z 0-9 . _ -`.
    #[schema(pattern = "^[A-Za-z0-9._-]{1,64}$")]
    name: String,
    /// How long to wait for the person, in seconds (300 unless given).
    #[schema(rename = "waitSeconds", minimum = 1, maximum = 3600)]
    wait_seconds: Option<u64>,
}

/// A token the person confirmed.
#[derive(ToSchema)]
pub struct IssuedToken {
    name: String,
    /// `approver`.
    role: String,
    /// The token: shown this once, never kept in clear.
    token: String,
}

/// Which entries `GET /audit` answers.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// How many (100 unless given).
    #[param(minimum = 1, maximum = 500)]
    limit: Option<u32>,
    /// The `next` of the previous page.
    #[param(pattern = "^[0-9]{1,18}$")]
    cursor: Option<String>,
}

/// A workflow of the library.
#[derive(ToSchema)]
pub struct Workflow {
    name: String,
    path: String,
    description: Option<String>,
    #[schema(rename = "exposeAsTool")]
    expose_as_tool: bool,
    /// Its args as a JSON Schema object.
    #[schema(rename = "argsSchema")]
    args_schema: Value,
}

/// A library file that does not load.
#[derive(ToSchema)]
pub struct BrokenWorkflow {
    path: String,
    error: String,
}

/// `GET /workflows`.
#[derive(ToSchema)]
pub struct WorkflowList {
    workflows: Vec<Workflow>,
    broken: Vec<BrokenWorkflow>,
}

/// A trigger of a workflow.
#[derive(ToSchema)]
pub struct Trigger {
    id: String,
    workflow: String,
    path: String,
    /// `cron` or `watch`.
    kind: String,
    spec: String,
    args: Value,
    /// A schedule's catch-up: `none`, `one` or `all`.
    catchup: Option<String>,
    /// When a schedule fires next (RFC 3339, local time zone).
    next: Option<String>,
    paused: bool,
    #[schema(rename = "lastFiredAt")]
    last_fired_at: Option<String>,
    error: Option<String>,
}

/// `GET /triggers`.
#[derive(ToSchema)]
pub struct TriggerList {
    triggers: Vec<Trigger>,
}

/// A trigger paused or resumed.
#[derive(ToSchema)]
pub struct TriggerAnswer {
    trigger: Trigger,
}

/// A browser session.
#[derive(ToSchema)]
pub struct Session {
    #[schema(rename = "sessionId")]
    session_id: String,
    profile: Option<String>,
    dialogs: String,
    url: String,
    title: Option<String>,
    #[schema(rename = "readyState")]
    ready_state: Option<String>,
    #[schema(rename = "isLoading")]
    is_loading: Option<bool>,
    healthy: bool,
    #[schema(rename = "targetId")]
    target_id: Option<String>,
    #[schema(rename = "createdAt")]
    created_at: String,
    #[schema(rename = "savedAt")]
    saved_at: String,
    notices: Option<Vec<String>>,
    /// The dialog waiting for an answer (`dialogs: ask`).
    dialog: Option<Value>,
    /// The action running in the session now, if one is.
    busy: Option<String>,
}

/// `GET /sessions`.
#[derive(ToSchema)]
pub struct SessionList {
    sessions: Vec<Session>,
}

/// `{ok: true}`.
#[derive(ToSchema)]
pub struct Done {
    ok: bool,
}

/// Why an action failed.
#[derive(ToSchema)]
pub struct ActionError {
    /// not_found, ambiguous, covered, detached, disabled, not_editable,
    /// verify_failed, timeout, navigation, dialog or crashed.
    code: String,
    message: String,
}

/// Something handled during an action.
#[derive(ToSchema)]
pub struct HandledItem {
    /// consent, modal, chat, dialog or popup.
    kind: String,
    detail: String,
    /// The banner, modal or widget, as the page names it.
    name: Option<String>,
    /// A consent banner's consent manager.
    cmp: Option<String>,
    /// How a consent banner was answered: reject, necessary or save.
    choice: Option<String>,
    /// What was pressed: a control's label, or a key.
    clicked: Option<String>,
    /// Who answered a consent banner: rules (autoconsent) or fallback.
    by: Option<String>,
}

/// An action's result.
#[derive(ToSchema)]
pub struct ActionResult {
    ok: bool,
    data: Option<Value>,
    error: Option<ActionError>,
    retries: u32,
    #[schema(rename = "durationMs")]
    duration_ms: u64,
    screenshot: Option<String>,
    handled: Option<Vec<HandledItem>>,
    notices: Option<Vec<String>>,
}

/// A person's decision on a session's request.
#[derive(ToSchema)]
pub struct SessionApproval {
    approved: bool,
    #[schema(rename = "runId")]
    run_id: String,
    /// True when nobody decided in time.
    #[schema(rename = "timedOut")]
    timed_out: Option<bool>,
    #[schema(rename = "decidedBy")]
    decided_by: Option<Value>,
    comment: Option<Value>,
}

/// How a hand-off ended: `{done: true, url, title}` when the person
/// handed the page back, else `{done: false, reason}`.
#[derive(ToSchema)]
pub struct Handoff {
    done: bool,
    /// The page's URL after the person (when done).
    url: Option<String>,
    /// Its title (when done).
    title: Option<String>,
    /// Why not: `declined`, `timeout` or `cancelled`.
    reason: Option<HandoffEnd>,
}

/// What a hand-off's live view posts to end it.
#[derive(ToSchema)]
pub struct HandBack {
    /// `true`: the person hands the page back (Done); `false`: they
    /// decline.
    done: bool,
}

/// Why a hand-off ended without the person's Done.
#[derive(ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum HandoffEnd {
    Declined,
    Timeout,
    Cancelled,
}

/// A named persistent profile.
#[derive(ToSchema)]
pub struct SessionProfile {
    name: String,
    /// Its directory.
    path: String,
    /// How many cookies it keeps.
    cookies: u32,
    /// How many origins' localStorage it keeps.
    origins: u32,
}

/// `GET /sessions/profiles`.
#[derive(ToSchema)]
pub struct ProfileList {
    profiles: Vec<SessionProfile>,
}

/// A profile's storage state, as Playwright's `storageState`.
#[derive(ToSchema)]
pub struct StorageStateBody {
    cookies: Vec<Value>,
    origins: Vec<Value>,
}

/// One logged action.
#[derive(ToSchema)]
pub struct TracedAction {
    seq: i64,
    action: String,
    target: Option<String>,
    input: Option<Value>,
    ok: bool,
    code: Option<String>,
    result: ActionResult,
    #[schema(rename = "durationMs")]
    duration_ms: i64,
    retries: i64,
    screenshot: Option<String>,
    at: String,
}

/// `GET /sessions/{id}/trace`.
#[derive(ToSchema)]
pub struct Trace {
    actions: Vec<TracedAction>,
}

/// A webhook delivery.
#[derive(ToSchema)]
pub struct Delivery {
    /// Its `webhook-id`.
    id: String,
    #[schema(rename = "type")]
    kind: String,
    url: String,
    /// `pending`, `delivered` or `failed`.
    status: String,
    attempts: u32,
    #[schema(rename = "lastError")]
    last_error: Option<String>,
    #[schema(rename = "nextAttemptAt")]
    next_attempt_at: Option<String>,
    #[schema(rename = "createdAt")]
    created_at: String,
    #[schema(rename = "deliveredAt")]
    delivered_at: Option<String>,
}

/// `GET /webhooks/deliveries`.
#[derive(ToSchema)]
pub struct DeliveryList {
    deliveries: Vec<Delivery>,
}

/// One delivery (with its attempts, `history`).
#[derive(ToSchema)]
pub struct DeliveryAnswer {
    delivery: Delivery,
}

/// How many deliveries to list.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeliveriesQuery {
    /// How many (100 unless given).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<u32>,
}

/// What the session routes answer besides success.
#[derive(IntoResponses)]
pub enum SessionErrors {
    /// A malformed request.
    #[response(status = 400)]
    Bad(ErrorBody),
    /// No or a wrong bearer token.
    #[response(status = 401, content_type = "text/plain")]
    Unauthorized(String),
    /// Refused by settings (evaluate disabled), or a foreign Origin.
    #[response(status = 403)]
    Forbidden(ErrorBody),
    /// No such session or action.
    #[response(status = 404)]
    Missing(ErrorBody),
    /// The pool is full, the profile is in use, or the browser is off.
    #[response(status = 409)]
    Conflict(ErrorBody),
    /// The body is larger than the API takes.
    #[response(status = 413)]
    TooLarge(ErrorBody),
    /// The browser or the store failed.
    #[response(status = 500)]
    Failed(ErrorBody),
    /// The browser did not answer in time.
    #[response(status = 504)]
    Slow(ErrorBody),
}

/// The answers of the service's reading routes.
#[derive(IntoResponses)]
pub enum ServiceErrors {
    /// A malformed request.
    #[response(status = 400)]
    Bad(ErrorBody),
    /// No or a wrong bearer token: plain text `Unauthorized`, as OpenClaw
    /// answers.
    #[response(status = 401, content_type = "text/plain")]
    Unauthorized(String),
    /// No such run, approval, trigger or delivery.
    #[response(status = 404)]
    Missing(ErrorBody),
    /// A foreign Origin or Host.
    #[response(status = 403)]
    Forbidden(ErrorBody),
    /// The run has ended, or is executing elsewhere.
    #[response(status = 409)]
    Conflict(ErrorBody),
    /// The body is larger than the API takes.
    #[response(status = 413)]
    TooLarge(ErrorBody),
    /// The store failed.
    #[response(status = 500)]
    Failed(ErrorBody),
}

/// Where the ids a route answers lead: (operation, status, the JSON pointer
/// of the id in its answer, the operations that take it as `{id}`).
const LINKS: &[(&str, &str, &str, &[&str])] = &[
    (
        "get_runs",
        "200",
        "/runs/0/runId",
        &[
            "get_runs_id",
            "post_runs_id_cancel",
            "get_runs_id_export",
            "get_approvals_id",
        ],
    ),
    (
        "post_runs",
        "200",
        "/runId",
        &[
            "get_runs_id",
            "get_approvals_id",
            "post_approvals_id_approve",
            "post_approvals_id_respond",
        ],
    ),
    (
        "post_runs",
        "202",
        "/runId",
        &["get_runs_id", "post_runs_id_cancel", "get_runs_id_export"],
    ),
    (
        "get_approvals",
        "200",
        "/approvals/0/id",
        &[
            "get_approvals_id",
            "post_approvals_id",
            "post_approvals_id_approve",
            "post_approvals_id_deny",
            "post_approvals_id_respond",
            "post_approvals_id_cancel",
            "get_runs_id",
        ],
    ),
    (
        "get_triggers",
        "200",
        "/triggers/0/id",
        &["post_triggers_id_pause", "post_triggers_id_resume"],
    ),
    (
        "get_webhooks_deliveries",
        "200",
        "/deliveries/0/id",
        &[
            "get_webhooks_deliveries_id",
            "post_webhooks_deliveries_id_redeliver",
        ],
    ),
];

/// Adds [`LINKS`] to `doc`: each list answer names the routes that take
/// the ids it lists (a client, or a stateful test, follows them).
pub fn link_ids(doc: &mut Document) {
    for path in doc.paths.paths.values_mut() {
        for operation in [&mut path.get, &mut path.post].into_iter().flatten() {
            let Some(id) = operation.operation_id.clone() else {
                continue;
            };
            for (from, status, pointer, targets) in LINKS.iter().filter(|l| l.0 == id) {
                let Some(RefOr::T(response)) = operation.responses.responses.get_mut(*status)
                else {
                    continue;
                };
                for target in *targets {
                    let link = LinkBuilder::new()
                        .operation_id(*target)
                        .parameter("id", format!("$response.body#{pointer}"))
                        .description(format!("The id {from} answers, for {target}"))
                        .build();
                    response.links.insert((*target).to_string(), RefOr::T(link));
                }
            }
        }
    }
}
