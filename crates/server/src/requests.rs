//! What a process asks of the person, and only the person grants: an
//! approver token (issue #34, break 1), or a device pairing once one is
//! paired (trust on first use, then locked). The asking command (`clawdis
//! token create --role approver`, `clawdis devices pair`) asks over the
//! home's local socket, which names the asking process. The request waits,
//! in this process's memory only, until the person confirms or refuses it
//! in the app, or it runs out. What it grants (the token, the pairing link)
//! is made only then and travels only to the process that asked: it is
//! never kept in clear. The app answers in its window; a paired device
//! answers from its inbox, confirming with a passkey assertion. No
//! credential of the control API confirms a request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{ConnectInfo, Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::{Extension, Json};
use clawdis_engine::provenance::Process;
use clawdis_store::{Issuer, NewAuditEntry, Presence, Role, Store};
use serde::Serialize;
use serde_json::json;
use tokio::sync::watch;

use crate::api::{ApiError, ApiResult, Body};
use crate::principal::{TokenError, create_token, valid_name};
use crate::{AppState, Principal};

/// How long a request waits unless it says otherwise.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(300);
/// The longest a request may wait.
pub const MAX_WAIT: Duration = Duration::from_secs(3600);

/// What a process asks the person for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Asked {
    /// An approver token named `name`.
    ApproverToken,
    /// A pairing link for a device named `name`.
    Pairing,
}

impl Asked {
    /// The ledger's prefix for it.
    fn kind(self) -> &'static str {
        match self {
            Asked::ApproverToken => "token",
            Asked::Pairing => "pairing",
        }
    }

    /// The ledger's subject for `name`.
    fn subject(self, name: &str) -> String {
        match self {
            Asked::ApproverToken => format!("{name} (approver)"),
            Asked::Pairing => format!("device:{name}"),
        }
    }
}

/// A request, as the person is shown it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    /// Its id (the asking command prints it).
    pub id: String,
    /// What is asked for.
    pub kind: Asked,
    /// The token's or the device's name.
    pub name: String,
    /// The credential it came with (`owner`, `token:<name>`).
    pub asked_by: String,
    /// The process that asked, as the operating system describes it.
    pub process: Option<Process>,
    /// When (RFC 3339).
    pub asked_at: String,
    /// When it stops waiting (RFC 3339).
    pub expires_at: String,
}

impl Request {
    /// The request as a person's view takes it: its fields, and
    /// `readable.process`, the asking process and its parents one line
    /// each (pid, executable, arguments, working directory), made legible:
    /// an agent picks its own arguments and paths.
    pub fn for_a_person(&self) -> serde_json::Value {
        let process = self.process.as_ref().map_or_else(
            || "The asking process could not be identified.".to_string(),
            Process::chain,
        );
        let mut view = json!(self);
        view["readable"] = json!({ "process": clawdis_approvals::legible(&process) });
        view
    }
}

/// What the person said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Confirmed: the token is made when the asker picks it up.
    Confirmed(Confirmer),
    /// Refused.
    Refused(Confirmer),
}

/// Who answered a request, and how they showed they were there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Confirmer {
    /// The person, as the app names them.
    pub by: Option<String>,
    /// Where: `app`, `notification`.
    pub via: String,
    /// A click, a passkey, the OS's check.
    pub presence: Presence,
}

impl Confirmer {
    /// Paired device `device`, signed in with its passkey.
    pub fn device(device: &str) -> Confirmer {
        Confirmer {
            by: Some(format!("device:{device}")),
            via: "device".into(),
            presence: Presence::Passkey,
        }
    }
}

/// Why a request could not be answered.
#[derive(Debug, thiserror::Error)]
#[error("no request {0} waits for an answer (answered already, or run out)")]
pub struct NotWaiting(pub String);

struct Entry {
    request: Request,
    /// The asking process: only it picks the token up.
    pid: u32,
    deadline: tokio::time::Instant,
    verdict: watch::Sender<Option<Verdict>>,
}

/// The requests waiting for a person; the app lists and answers them.
#[derive(Default)]
pub struct Requests {
    entries: Mutex<HashMap<String, Entry>>,
    /// Bumped whenever the list of unanswered requests changes.
    changed: watch::Sender<u64>,
}

impl std::fmt::Debug for Requests {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Requests")
            .field("waiting", &self.list().len())
            .finish()
    }
}

impl Requests {
    /// The requests no one has answered yet, oldest first.
    pub fn list(&self) -> Vec<Request> {
        let mut list: Vec<Request> = self
            .entries
            .lock()
            .map(|entries| {
                entries
                    .values()
                    .filter(|e| e.verdict.borrow().is_none())
                    .map(|e| e.request.clone())
                    .collect()
            })
            .unwrap_or_default();
        list.sort_by(|a, b| a.asked_at.cmp(&b.asked_at).then(a.id.cmp(&b.id)));
        list
    }

    /// A receiver that changes whenever [`Requests::list`] does.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Answers request `id`, once: the app, or a paired device's inbox
    /// (`inbox::confirm_request`, after a passkey assertion). No route of
    /// the control API does.
    pub fn answer(&self, id: &str, verdict: Verdict) -> Result<(), NotWaiting> {
        let entries = self
            .entries
            .lock()
            .map_err(|_| NotWaiting(id.to_string()))?;
        let entry = entries.get(id).ok_or_else(|| NotWaiting(id.to_string()))?;
        let answered = entry.verdict.send_if_modified(|now| {
            let first = now.is_none();
            if first {
                *now = Some(verdict);
            }
            first
        });
        drop(entries);
        if !answered {
            return Err(NotWaiting(id.to_string()));
        }
        self.changed.send_modify(|n| *n += 1);
        Ok(())
    }

    fn add(&self, entry: Entry) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.insert(entry.request.id.clone(), entry);
        }
        self.changed.send_modify(|n| *n += 1);
    }

    fn remove(&self, id: &str) -> Option<Entry> {
        let removed = self.entries.lock().ok()?.remove(id);
        if removed.is_some() {
            self.changed.send_modify(|n| *n += 1);
        }
        removed
    }

    /// What `pid` needs to wait on request `id`: the request, its verdict
    /// and deadline.
    fn waiter(
        &self,
        id: &str,
        pid: Option<u32>,
    ) -> Result<
        (
            Request,
            watch::Receiver<Option<Verdict>>,
            tokio::time::Instant,
        ),
        ApiError,
    > {
        let entries = self
            .entries
            .lock()
            .map_err(|_| ApiError::internal("the requests are poisoned"))?;
        let entry = entries
            .get(id)
            .ok_or_else(|| ApiError::not_found(format!("no request {id} waits")))?;
        if pid != Some(entry.pid) {
            return Err(ApiError::forbidden(format!(
                "only the process that asked ({}) receives what request {id} grants",
                entry.pid
            )));
        }
        Ok((
            entry.request.clone(),
            entry.verdict.subscribe(),
            entry.deadline,
        ))
    }
}

/// Who is on the other end of a connection to the local socket.
#[derive(Clone, Copy, Debug)]
pub struct Peer {
    /// Its process id, as the kernel reports it.
    pub pid: Option<u32>,
}

impl
    axum::extract::connect_info::Connected<
        axum::serve::IncomingStream<'_, tokio::net::UnixListener>,
    > for Peer
{
    fn connect_info(stream: axum::serve::IncomingStream<'_, tokio::net::UnixListener>) -> Peer {
        let pid = stream
            .io()
            .peer_cred()
            .ok()
            .and_then(|cred| cred.pid())
            .and_then(|pid| u32::try_from(pid).ok());
        Peer { pid }
    }
}

/// The peer of a connection to the local socket, when it came that way.
pub type PeerInfo = Option<Extension<ConnectInfo<Peer>>>;

fn pid_of(peer: PeerInfo) -> Option<u32> {
    peer.and_then(|Extension(ConnectInfo(peer))| peer.pid)
}

/// `POST /tokens/requests {name, waitSeconds?}`: asks the person for an
/// approver token. Answers at once with the request; `GET /requests/{id}`
/// then waits for the person's answer.
#[utoipa::path(
    post,
    path = "/tokens/requests",
    operation_id = "post_tokens_requests",
    tag = "tokens",
    request_body(content = crate::openapi::TokenRequestBody, description = "The token's name, and how long the request waits for the person (seconds, 1 to 3600; default 300)"),
    responses(
        (status = 202, description = "Asked: the request as the person sees it, with the process that asked", body = Object),
        (status = 400, description = "A bad name or wait, or not asked over the home's local socket (the person could not see which process asks)", body = crate::openapi::ErrorBody),
        (status = 401, description = "No or a wrong bearer token", content_type = "text/plain", body = String),
        (status = 409, description = "A token has this name already", body = crate::openapi::ErrorBody),
    )
)]
pub async fn ask(
    State(state): State<Arc<AppState>>,
    Extension(principal): Extension<Principal>,
    peer: PeerInfo,
    body: Body,
) -> ApiResult {
    let name = name_in(&body, "token")?;
    let store = state.approvals().await?.store().clone();
    if taken(&store, &name).await? {
        return Err(ApiError::conflict(TokenError::Taken(name).to_string()));
    }
    open(&state, &principal, peer, &body, Asked::ApproverToken, name).await
}

/// The `name` field of `body`, as a token or a device (`what`) may be
/// named: 1 to 64 of `A-Z a-z 0-9 . _ -`.
pub fn name_in(body: &Body, what: &str) -> Result<String, ApiError> {
    let name = body
        .text("name")?
        .ok_or_else(|| ApiError::bad_request("name is required"))?;
    if !valid_name(&name) {
        return Err(ApiError::bad_request(format!(
            "a {what} name is 1 to 64 of A-Z a-z 0-9 . _ - (got {name:?})"
        )));
    }
    Ok(name)
}

/// How long a request in `body` waits: `waitSeconds`, 1 to 3600 (300
/// unless given).
pub fn wait_of(body: &Body) -> Result<Duration, ApiError> {
    match body.0.get("waitSeconds") {
        None | Some(serde_json::Value::Null) => Ok(DEFAULT_WAIT),
        // A whole number, however it is written (JSON Schema's integer
        // takes 221.0 too).
        Some(v) => v
            .as_f64()
            .filter(|n| n.fract() == 0.0 && *n >= 0.0 && *n <= MAX_WAIT.as_secs_f64())
            .map(|n| Duration::from_secs(n as u64))
            .filter(|w| (Duration::from_secs(1)..=MAX_WAIT).contains(w))
            .ok_or_else(|| {
                ApiError::bad_request("waitSeconds: a whole number of seconds from 1 to 3600")
            }),
    }
}

/// Opens a request for `kind` named `name`, asked by `principal` from the
/// process on the other end of `peer`: answered 202 with the request.
pub async fn open(
    state: &Arc<AppState>,
    principal: &Principal,
    peer: PeerInfo,
    body: &Body,
    kind: Asked,
    name: String,
) -> ApiResult {
    let wait = wait_of(body)?;
    let Some(pid) = pid_of(peer) else {
        return Err(ApiError::bad_request(match kind {
            Asked::ApproverToken => {
                "an approver token is asked for over the home's local socket, which tells the \
                 person which process asks: run `clawdis token create --role approver` on this machine"
            }
            Asked::Pairing => {
                "a device is paired already, so a new pairing needs the person: ask over the \
                 home's local socket, which tells them which process asks (`clawdis devices pair` \
                 on this machine), or pair it from the Clawdis app"
            }
        }));
    };
    let store = state.approvals().await?.store().clone();
    let now = chrono::Utc::now();
    let at =
        |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let request = Request {
        id: uuid::Uuid::new_v4().simple().to_string()[..8].to_string(),
        kind,
        name: name.clone(),
        asked_by: principal.label(),
        process: Process::of(pid),
        asked_at: at(now),
        expires_at: at(now + chrono::Duration::from_std(wait).unwrap_or_default()),
    };
    let id = request.id.clone();
    tracing::info!(%id, %name, pid, ?kind, "the person is asked");
    record(
        &store,
        kind,
        "requested",
        &name,
        Some(principal.label()),
        "socket",
        None,
    )
    .await;
    let answer = json!(request);
    let deadline = tokio::time::Instant::now() + wait;
    state.requests.add(Entry {
        request,
        pid,
        deadline,
        verdict: watch::Sender::new(None),
    });
    // A request nobody picks up goes at its deadline, recorded once.
    let expiring = state.clone();
    tokio::spawn(async move {
        tokio::time::sleep_until(deadline).await;
        if expiring.requests.remove(&id).is_some() {
            record(&store, kind, "expired", &name, None, "socket", None).await;
        }
    });
    Ok((StatusCode::ACCEPTED, Json(answer)).into_response())
}

/// `GET /requests/{id}`: waits for the person's answer to request `id`;
/// only the process that asked gets what it grants.
#[utoipa::path(
    get,
    path = "/requests/{id}",
    operation_id = "get_requests_id",
    tag = "tokens",
    params(("id" = String, Path, description = "The request's id", pattern = "^[0-9a-f]{8}$")),
    responses(
        (status = 201, description = "The person confirmed: the token (shown this once) or the pairing link", body = Object),
        (status = 401, description = "No or a wrong bearer token", content_type = "text/plain", body = String),
        (status = 403, description = "The person refused, or this is not the process that asked", body = crate::openapi::ErrorBody),
        (status = 404, description = "No such request waits", body = crate::openapi::ErrorBody),
        (status = 408, description = "Nobody answered in time", body = crate::openapi::ErrorBody),
        (status = 409, description = "A token or a device took the name meanwhile", body = crate::openapi::ErrorBody),
        (status = 503, description = "The backend is stopping", body = crate::openapi::ErrorBody),
    )
)]
pub async fn wait(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    peer: PeerInfo,
) -> ApiResult {
    let requests = &state.requests;
    let (request, mut verdict, deadline) = requests.waiter(&id, pid_of(peer))?;
    let answered = tokio::select! {
        v = verdict.wait_for(Option::is_some) => v.ok().and_then(|v| v.clone()),
        () = tokio::time::sleep_until(deadline) => None,
        () = state.closed() => {
            return Err(ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "the backend is stopping"));
        }
    };
    // Whatever the answer, the request is used up now. Its deadline's own
    // task may have taken it first (and recorded that it ran out).
    let ours = requests.remove(&id).is_some();
    let store = state.approvals().await?.store().clone();
    let (kind, name) = (request.kind, request.name);
    match answered {
        Some(Verdict::Confirmed(who)) => match kind {
            Asked::ApproverToken => {
                let issuer = Issuer {
                    by: who.by,
                    via: who.via,
                    presence: Some(who.presence),
                };
                match create_token(&store, &name, Role::Approver, &issuer).await {
                    Ok(token) => Ok((
                        StatusCode::CREATED,
                        Json(json!({ "name": name, "role": "approver", "token": token })),
                    )
                        .into_response()),
                    Err(e @ TokenError::Taken(_)) => Err(ApiError::conflict(e.to_string())),
                    Err(e) => Err(ApiError::internal(e.to_string())),
                }
            }
            Asked::Pairing => {
                record(
                    &store,
                    kind,
                    "confirmed",
                    &name,
                    who.by.clone(),
                    &who.via,
                    Some(who.presence),
                )
                .await;
                let confirmer = who.by.unwrap_or_else(|| who.via.clone());
                let link = crate::devices::start_pairing(&state, &store, &name, &confirmer).await?;
                Ok((StatusCode::CREATED, Json(link)).into_response())
            }
        },
        Some(Verdict::Refused(who)) => {
            record(
                &store,
                kind,
                "refused",
                &name,
                who.by.clone(),
                &who.via,
                Some(who.presence),
            )
            .await;
            Err(ApiError::forbidden(format!(
                "the request {id} for {} {name:?} was refused{}",
                match kind {
                    Asked::ApproverToken => "approver token",
                    Asked::Pairing => "a pairing of device",
                },
                who.by.map(|by| format!(" by {by}")).unwrap_or_default()
            )))
        }
        None => {
            if ours {
                record(&store, kind, "expired", &name, None, "socket", None).await;
            }
            Err(ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                format!("nobody answered the request {id} for {name:?} in time"),
            ))
        }
    }
}

async fn taken(store: &Store, name: &str) -> Result<bool, ApiError> {
    Ok(store
        .list_tokens()
        .await
        .map_err(clawdis_approvals::ApprovalsError::from)?
        .iter()
        .any(|t| t.name == name))
}

/// Records what became of a request in the ledger (`token.requested`,
/// `pairing.refused`, ...); a failure to record is logged (what is granted
/// is recorded with it: `token.issued`, `device.paired`).
async fn record(
    store: &Store,
    kind: Asked,
    what: &str,
    name: &str,
    by: Option<String>,
    via: &str,
    presence: Option<Presence>,
) {
    let entry = NewAuditEntry {
        kind: format!("{}.{what}", kind.kind()),
        subject: kind.subject(name),
        by,
        via: Some(via.into()),
        presence,
        digest: None,
    };
    if let Err(e) = store.record_audit(&entry).await {
        tracing::warn!(error = %e, "recording a request in the ledger");
    }
}
