//! Paired devices: a person's phone or laptop becomes an approver by
//! registering a passkey (WebAuthn, user verification required), verified
//! by webauthn-rs. An agent has no authenticator to press.
//!
//! - `POST /devices/pairings {name}` makes a one-time pairing link, valid
//!   10 minutes; `GET /pair/{token}` is its page, which registers the
//!   passkey (`/pair/{token}/options`, then `POST /pair/{token}`).
//! - A `human` gate's link page asks the device for an assertion: `POST
//!   /approve/{signed}/challenge {decision, digest}` starts a ceremony bound
//!   to exactly that gate, decision and digest, and `POST
//!   /approve/{signed}/passkey {ceremony, credential}` finishes it and
//!   decides. The ceremony's binding is kept here, never taken from the
//!   page.
//! - `GET /devices` and `DELETE /devices/{name}` list and revoke.
//!
//! Ceremonies live in this process's memory only.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use clawdis_approvals::ApprovalsError;
use clawdis_store::{Issuer, Store};
use serde::Deserialize;
use serde_json::json;
use tokio::time::Instant;
use webauthn_rs::prelude::{
    Passkey, PasskeyAuthentication, PasskeyRegistration, PublicKeyCredential,
    RegisterPublicKeyCredential, Url, Uuid,
};
use webauthn_rs::{Webauthn, WebauthnBuilder};

use crate::api::{ApiError, ApiResult, Body, ok};
use crate::{AppState, Principal};

/// How long a pairing link works.
pub const PAIRING_TTL: Duration = Duration::from_secs(600);
/// How long a passkey ceremony may take.
const CEREMONY_TTL: Duration = Duration::from_secs(300);

/// The WebAuthn relying party this backend is: `localhost` on the loopback
/// port, or the host of `publicBaseUrl`.
#[derive(Clone, Debug)]
struct Rp {
    id: String,
    origin: Url,
}

impl Rp {
    fn of(state: &AppState) -> Result<Rp, ApiError> {
        let origin = match state.public_base_url() {
            Some(base) => {
                Url::parse(&base).map_err(|e| ApiError::internal(format!("publicBaseUrl: {e}")))?
            }
            None => Url::parse(&format!("http://localhost:{}/", state.control_port()))
                .map_err(|e| ApiError::internal(e.to_string()))?,
        };
        let id = origin
            .host_str()
            .ok_or_else(|| ApiError::internal("publicBaseUrl has no host"))?
            .to_string();
        Ok(Rp { id, origin })
    }

    fn webauthn(&self) -> Result<Webauthn, ApiError> {
        WebauthnBuilder::new(&self.id, &self.origin)
            .and_then(|b| b.rp_name("Clawdis").build())
            .map_err(|e| ApiError::internal(format!("WebAuthn for {}: {e}", self.origin)))
    }

    /// A page of this relying party: `<origin><path>`.
    fn url(&self, path: &str) -> String {
        format!("{}{}", self.origin.as_str().trim_end_matches('/'), path)
    }
}

struct Pairing {
    name: String,
    by: String,
    rp: Rp,
    expires: Instant,
    registration: Option<PasskeyRegistration>,
}

/// What a passkey ceremony was started for: kept here, never taken from
/// the page that finishes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    /// Approving the gate the signed link `link` names, as shown with
    /// `digest`.
    Link { link: String, digest: String },
    /// Approving gate `state_key` from the inbox, as shown with `digest`.
    Gate { state_key: String, digest: String },
    /// Confirming request `id` (an approver token, a pairing) from the
    /// inbox.
    Request { id: String },
    /// Signing in to the inbox.
    SignIn,
}

struct Ceremony {
    bound: Bound,
    rp: Rp,
    expires: Instant,
    authentication: PasskeyAuthentication,
}

/// The pairings and passkey ceremonies in progress.
#[derive(Default)]
pub struct Devices {
    pairings: Mutex<HashMap<String, Pairing>>,
    ceremonies: Mutex<HashMap<String, Ceremony>>,
    /// Bumped when a device is paired or revoked: the app tells the person
    /// of every pairing, so one they did not make is seen.
    changed: tokio::sync::watch::Sender<u64>,
}

impl Devices {
    /// A receiver that changes whenever a device is paired or revoked.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changed.subscribe()
    }

    fn bump(&self) {
        self.changed.send_modify(|n| *n += 1);
    }
}

impl std::fmt::Debug for Devices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Devices").finish_non_exhaustive()
    }
}

/// A random URL-safe secret of 256 bits.
fn secret() -> String {
    format!("{}{}", Uuid::new_v4().simple(), Uuid::new_v4().simple())
}

/// What a pairing link is kept as: its SHA-256, never the link.
fn key_of(token: &str) -> String {
    crate::principal::digest(token)
}

fn gone(what: &str) -> ApiError {
    ApiError::not_found(format!("{what} was used, has expired or never existed"))
}

impl Devices {
    fn take_ceremony(&self, id: &str) -> Option<Ceremony> {
        let mut ceremonies = self.ceremonies.lock().ok()?;
        ceremonies.retain(|_, c| c.expires > Instant::now());
        ceremonies.remove(id)
    }
}

/// `POST /devices/pairings {name, waitSeconds?}`: a one-time pairing link
/// for a device named `name`, valid 10 minutes; once a device is paired, a
/// request the person confirms in the app first.
#[utoipa::path(
    post,
    path = "/devices/pairings",
    operation_id = "post_devices_pairings",
    tag = "devices",
    request_body(content = crate::openapi::PairingBody, content_type = "application/json"),
    responses(
        (status = 201, description = "The pairing link (no device is paired yet: trust on first use): open it on the device", body = crate::openapi::PairingLink),
        (status = 202, description = "A device is paired already: the request waits for the person to confirm it in the app (`GET /requests/{id}`)", body = Object),
        (status = 400, description = "A bad name or wait, or (once a device is paired) not asked over the home's local socket", body = crate::openapi::ErrorBody),
        (status = 401, description = "No or a wrong bearer token", content_type = "text/plain", body = String),
        (status = 403, description = "An agent's credential (an agent token, MCP) never pairs a device", body = crate::openapi::ErrorBody),
        (status = 409, description = "A device has this name already", body = crate::openapi::ErrorBody),
    )
)]
pub async fn pair(
    State(state): State<Arc<AppState>>,
    axum::Extension(principal): axum::Extension<Principal>,
    peer: crate::requests::PeerInfo,
    body: Body,
) -> ApiResult {
    let name = crate::requests::name_in(&body, "device")?;
    crate::requests::wait_of(&body)?;
    // A device approves what only a person may: an agent's credential
    // never pairs one, even the first (red team, issue #34).
    if !matches!(principal, Principal::Owner) && principal.presence().is_none() {
        return Err(ApiError::forbidden(format!(
            "{} may not pair a device: pair it with `clawdis devices pair` as the owner, or from \
             the Clawdis app",
            principal.label()
        )));
    }
    let store = state.approvals().await?.store().clone();
    // Trust on first use, then locked: once a device is paired, a pairing
    // asked for from a shell could be an agent's, so the person confirms
    // it in the app first (`GET /requests/{id}` then gives the link).
    if store
        .any_live_device()
        .await
        .map_err(ApprovalsError::from)?
    {
        if store
            .list_devices()
            .await
            .map_err(ApprovalsError::from)?
            .iter()
            .any(|d| d.name == name)
        {
            return Err(ApiError::conflict(format!(
                "a device named {name:?} exists already"
            )));
        }
        let pairing = crate::requests::Asked::Pairing;
        return crate::requests::open(&state, &principal, peer, &body, pairing, name).await;
    }
    let link = start_pairing(&state, &store, &name, &principal.label()).await?;
    Ok((StatusCode::CREATED, Json(link)).into_response())
}

/// Starts a pairing of a device named `name`, asked for by `by`: its link.
pub async fn start_pairing(
    state: &AppState,
    store: &Store,
    name: &str,
    by: &str,
) -> Result<serde_json::Value, ApiError> {
    if store
        .list_devices()
        .await
        .map_err(ApprovalsError::from)?
        .iter()
        .any(|d| d.name == name)
    {
        return Err(ApiError::conflict(format!(
            "a device named {name:?} exists already"
        )));
    }
    let rp = Rp::of(state)?;
    let token = secret();
    let url = rp.url(&format!("/pair/{token}"));
    let expires = chrono::Utc::now() + chrono::Duration::from_std(PAIRING_TTL).unwrap_or_default();
    let pairing = Pairing {
        name: name.to_string(),
        by: by.to_string(),
        rp,
        expires: Instant::now() + PAIRING_TTL,
        registration: None,
    };
    if let Ok(mut pairings) = state.devices.pairings.lock() {
        pairings.retain(|_, p| p.expires > Instant::now());
        pairings.insert(key_of(&token), pairing);
    }
    tracing::info!(%name, %by, "a device pairing was started");
    Ok(json!({
        "name": name,
        "qrSvg": crate::qr::svg(&url),
        "url": url,
        "expiresAt": expires.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    }))
}

/// `GET /devices`: every paired device (never its passkey).
#[utoipa::path(
    get,
    path = "/devices",
    operation_id = "get_devices",
    tag = "devices",
    responses((status = 200, description = "The devices, oldest first", body = crate::openapi::DeviceList), crate::openapi::ServiceErrors)
)]
pub async fn list(State(state): State<Arc<AppState>>) -> ApiResult {
    let store = state.approvals().await?.store().clone();
    let devices = store.list_devices().await.map_err(ApprovalsError::from)?;
    ok(json!({ "devices": devices }))
}

/// `DELETE /devices/{name}`: revokes a device; it approves nothing after.
#[utoipa::path(
    delete,
    path = "/devices/{name}",
    operation_id = "delete_devices_name",
    tag = "devices",
    params(("name" = String, Path, description = "The device's name", pattern = "^[A-Za-z0-9._-]{1,64}$")),
    responses((status = 200, description = "Revoked", body = Object), crate::openapi::ServiceErrors)
)]
pub async fn revoke(
    State(state): State<Arc<AppState>>,
    axum::Extension(principal): axum::Extension<Principal>,
    Path(name): Path<String>,
) -> ApiResult {
    let issuer = Issuer {
        by: Some(principal.label()),
        via: "http".into(),
        presence: None,
    };
    revoke_device(&state, &name, &issuer).await?;
    ok(json!({ "ok": true }))
}

/// Revokes device `name`, by `issuer`: it approves nothing after.
pub async fn revoke_device(state: &AppState, name: &str, issuer: &Issuer) -> Result<(), ApiError> {
    let store = state.approvals().await?.store().clone();
    if !store
        .revoke_device(name, issuer)
        .await
        .map_err(ApprovalsError::from)?
    {
        return Err(ApiError::not_found(format!(
            "no live device named {name:?}"
        )));
    }
    state.devices.bump();
    Ok(())
}

/// `GET /pair/{token}`: the pairing page.
#[utoipa::path(
    get,
    path = "/pair/{token}",
    operation_id = "get_pair_token",
    tag = "links",
    security(()),
    params(("token" = String, Path, description = "The pairing link's secret")),
    responses((status = 200, description = "The pairing page", content_type = "text/html", body = String), (status = 403, description = "A foreign Host", content_type = "text/html", body = String), (status = 404, description = "Used, expired or never made", content_type = "text/html", body = String))
)]
pub async fn pair_page(State(state): State<Arc<AppState>>, Path(token): Path<String>) -> Response {
    let name = state.devices.pairings.lock().ok().and_then(|p| {
        p.get(&key_of(&token))
            .filter(|p| p.expires > Instant::now())
            .map(|p| p.name.clone())
    });
    match name {
        Some(name) => crate::links::page_with_passkeys(
            StatusCode::OK,
            "Pair a device",
            &format!(
                "<h1>Pair this device as <q>{}</q></h1>\
                 <p>It becomes an approver: gates that need a person can be approved here, \
                 with this device's screen lock or fingerprint. Pair only a device you hold.</p>\
                 <button type=button data-passkey=pair>Pair this device</button>\
                 <p id=said role=status></p>",
                crate::links::escape(&name)
            ),
        ),
        None => crate::links::page_with_passkeys(
            StatusCode::NOT_FOUND,
            "Pair a device",
            "<p>This pairing link was used, has expired or never existed.</p>",
        ),
    }
}

/// `POST /pair/{token}/options`: the passkey to create.
#[utoipa::path(
    post,
    path = "/pair/{token}/options",
    operation_id = "post_pair_token_options",
    tag = "links",
    security(()),
    params(("token" = String, Path, description = "The pairing link's secret")),
    responses((status = 200, description = "WebAuthn creation options", body = Object), (status = 404, description = "Used, expired or never made", body = crate::openapi::ErrorBody))
)]
pub async fn pair_options(
    State(state): State<Arc<AppState>>,
    Path(token): Path<String>,
) -> ApiResult {
    let mut pairings = state
        .devices
        .pairings
        .lock()
        .map_err(|_| ApiError::internal("pairings poisoned"))?;
    let pairing = pairings
        .get_mut(&key_of(&token))
        .filter(|p| p.expires > Instant::now())
        .ok_or_else(|| gone("this pairing link"))?;
    let (options, registration) = pairing
        .rp
        .webauthn()?
        .start_passkey_registration(Uuid::new_v4(), &pairing.name, &pairing.name, None)
        .map_err(|e| ApiError::internal(format!("starting a passkey registration: {e}")))?;
    pairing.registration = Some(registration);
    ok(serde_json::to_value(options).map_err(|e| ApiError::internal(e.to_string()))?)
}

/// `POST /pair/{token}`: the created passkey; the device is paired.
#[utoipa::path(
    post,
    path = "/pair/{token}",
    operation_id = "post_pair_token",
    tag = "links",
    security(()),
    params(("token" = String, Path, description = "The pairing link's secret")),
    request_body(content = crate::openapi::PasskeyCredential, description = "The WebAuthn credential the device created", content_type = "application/json"),
    responses((status = 201, description = "Paired", body = Object), (status = 400, description = "The credential does not verify", body = crate::openapi::ErrorBody), (status = 409, description = "A device has this name already", body = crate::openapi::ErrorBody), (status = 404, description = "Used, expired or never made", body = crate::openapi::ErrorBody))
)]
pub async fn pair_finish(
    State(state): State<Arc<AppState>>,
    Path(token): Path<String>,
    body: Body,
) -> ApiResult {
    let known = state.devices.pairings.lock().ok().is_some_and(|p| {
        p.get(&key_of(&token))
            .is_some_and(|p| p.expires > Instant::now())
    });
    if !known {
        return Err(gone("this pairing link"));
    }
    let credential: RegisterPublicKeyCredential = parse(body)?;
    // One use: the pairing is gone whatever comes of it.
    let pairing = state
        .devices
        .pairings
        .lock()
        .ok()
        .and_then(|mut p| p.remove(&key_of(&token)))
        .filter(|p| p.expires > Instant::now())
        .ok_or_else(|| gone("this pairing link"))?;
    let registration = pairing
        .registration
        .as_ref()
        .ok_or_else(|| ApiError::bad_request("ask for the options first"))?;
    let passkey = pairing
        .rp
        .webauthn()?
        .finish_passkey_registration(&credential, registration)
        .map_err(|e| ApiError::bad_request(format!("the passkey does not verify: {e}")))?;
    let store = state.approvals().await?.store().clone();
    let issuer = Issuer {
        by: Some(pairing.by.clone()),
        via: "pairing".into(),
        presence: Some(clawdis_store::Presence::Passkey),
    };
    let json = serde_json::to_string(&passkey).map_err(|e| ApiError::internal(e.to_string()))?;
    if !store
        .insert_device(&pairing.name, &pairing.rp.id, &json, &issuer)
        .await
        .map_err(ApprovalsError::from)?
    {
        return Err(ApiError::conflict(format!(
            "a device named {:?} exists already",
            pairing.name
        )));
    }
    tracing::info!(name = %pairing.name, "a device was paired");
    state.devices.bump();
    Ok((StatusCode::CREATED, Json(json!({ "name": pairing.name }))).into_response())
}

/// What a link's page asks a ceremony for.
#[derive(Deserialize)]
pub struct ChallengeBody {
    /// Only `approve`: a denial needs no passkey.
    decision: String,
    /// The digest the page showed.
    digest: String,
}

/// `POST /approve/{signed}/challenge {decision, digest}`: starts a passkey
/// ceremony bound to this gate, this decision and this digest.
#[utoipa::path(
    post,
    path = "/approve/{signed}/challenge",
    operation_id = "post_approve_signed_challenge",
    tag = "links",
    security(()),
    params(("signed" = String, Path, description = "The signed link")),
    request_body(content = crate::openapi::PasskeyChallenge, content_type = "application/json"),
    responses((status = 200, description = "`{ceremony, publicKey}`: WebAuthn request options", body = Object), (status = 400, description = "Not an approval", body = crate::openapi::ErrorBody), (status = 403, description = "A forged link", body = crate::openapi::ErrorBody), (status = 404, description = "No paired device", body = crate::openapi::ErrorBody), (status = 409, description = "The gate changed since the page showed it", body = crate::openapi::ErrorBody), (status = 410, description = "The link was used or expired", body = crate::openapi::ErrorBody))
)]
pub async fn challenge(
    State(state): State<Arc<AppState>>,
    Path(link): Path<String>,
    body: Body,
) -> ApiResult {
    let body: ChallengeBody = parse(body)?;
    if body.decision != "approve" {
        return Err(ApiError::bad_request(
            "a passkey approves; deny with the form",
        ));
    }
    let claim = state.links().await?.verify(&link)?;
    let approvals = state.approvals().await?;
    // A used link starts nothing (red team, issue #34).
    if approvals
        .store()
        .link_spent(&claim.nonce)
        .await
        .map_err(ApprovalsError::from)?
    {
        return Err(ApprovalsError::Gone("this approval link was already used".into()).into());
    }
    let gate = approvals.get(&claim.state_key).await?;
    if gate.digest != body.digest {
        return Err(ApprovalsError::Stale(
            "this approval changed since the page showed it: open the link again".into(),
        )
        .into());
    }
    ok(begin(
        &state,
        Bound::Link {
            link,
            digest: gate.digest,
        },
    )
    .await?)
}

/// Starts a passkey ceremony bound to `bound`, over every live device:
/// `{ceremony, publicKey}` for the page.
pub(crate) async fn begin(state: &AppState, bound: Bound) -> Result<serde_json::Value, ApiError> {
    let rp = Rp::of(state)?;
    let store = state.approvals().await?.store().clone();
    let keys: Vec<Passkey> = device_passkeys(&store, &rp)
        .await?
        .into_iter()
        .map(|(_, key)| key)
        .collect();
    if keys.is_empty() {
        return Err(ApiError::not_found(
            "no device is paired: pair one with `clawdis devices pair --name NAME`",
        ));
    }
    let (options, authentication) = rp
        .webauthn()?
        .start_passkey_authentication(&keys)
        .map_err(|e| ApiError::internal(format!("starting a passkey assertion: {e}")))?;
    let id = secret();
    if let Ok(mut ceremonies) = state.devices.ceremonies.lock() {
        ceremonies.retain(|_, c| c.expires > Instant::now());
        ceremonies.insert(
            id.clone(),
            Ceremony {
                bound,
                rp,
                expires: Instant::now() + CEREMONY_TTL,
                authentication,
            },
        );
    }
    let mut answer =
        serde_json::to_value(options).map_err(|e| ApiError::internal(e.to_string()))?;
    answer["ceremony"] = json!(id);
    Ok(answer)
}

/// Finishes the ceremony `body` names (`{ceremony, credential}`) when it
/// was bound as `fits` says: the live device whose passkey signed it, and
/// what the ceremony was bound to. Its counter is kept.
pub(crate) async fn finish(
    state: &AppState,
    body: Body,
    fits: impl Fn(&Bound) -> bool,
) -> Result<(String, Bound), ApiError> {
    let id = body.str("ceremony").unwrap_or_default().to_string();
    let known = state
        .devices
        .ceremonies
        .lock()
        .ok()
        .is_some_and(|c| c.get(&id).is_some_and(|c| fits(&c.bound)));
    if !known {
        return Err(gone("this passkey ceremony"));
    }
    let body: AssertionBody = parse(body)?;
    let ceremony = state
        .devices
        .take_ceremony(&id)
        .filter(|c| fits(&c.bound))
        .ok_or_else(|| gone("this passkey ceremony"))?;
    let verified = ceremony
        .rp
        .webauthn()?
        .finish_passkey_authentication(&body.credential, &ceremony.authentication)
        .map_err(|e| ApiError::forbidden(format!("the passkey assertion does not verify: {e}")))?;
    // The device, among the live ones now (one revoked meanwhile is not).
    let store = state.approvals().await?.store().clone();
    let device = device_passkeys(&store, &ceremony.rp)
        .await?
        .into_iter()
        .find(|(_, key)| key.cred_id() == verified.cred_id());
    let Some((name, mut passkey)) = device else {
        return Err(ApiError::forbidden(
            "the passkey belongs to no live device (revoked?)",
        ));
    };
    if passkey.update_credential(&verified).is_some() {
        let json =
            serde_json::to_string(&passkey).map_err(|e| ApiError::internal(e.to_string()))?;
        store
            .used_device(&name, &json)
            .await
            .map_err(ApprovalsError::from)?;
    }
    Ok((name, ceremony.bound))
}

/// What finishes a ceremony.
#[derive(Deserialize)]
pub struct AssertionBody {
    /// The device's assertion.
    credential: PublicKeyCredential,
}

/// `POST /approve/{signed}/passkey {ceremony, credential}`: checks the
/// device's assertion and approves the gate the ceremony was bound to, as
/// that device.
#[utoipa::path(
    post,
    path = "/approve/{signed}/passkey",
    operation_id = "post_approve_signed_passkey",
    tag = "links",
    security(()),
    params(("signed" = String, Path, description = "The signed link")),
    request_body(content = crate::openapi::PasskeyAssertion, content_type = "application/json"),
    responses((status = 200, description = "Approved: the resumed run's envelope", body = Object), (status = 400, description = "Not a ceremony and an assertion", body = crate::openapi::ErrorBody), (status = 403, description = "The assertion does not verify, or its device is revoked", body = crate::openapi::ErrorBody), (status = 409, description = "The gate changed since the page showed it", body = crate::openapi::ErrorBody), (status = 404, description = "No such ceremony (used or expired)", body = crate::openapi::ErrorBody), (status = 410, description = "The link was used or expired", body = crate::openapi::ErrorBody))
)]
pub async fn assert(
    State(state): State<Arc<AppState>>,
    Path(link): Path<String>,
    body: Body,
) -> ApiResult {
    let (name, bound) = finish(
        &state,
        body,
        |b| matches!(b, Bound::Link { link: bound, .. } if *bound == link),
    )
    .await?;
    let Bound::Link { digest, .. } = bound else {
        return Err(ApiError::internal("a ceremony bound to something else"));
    };
    let approvals = state.approvals().await?;
    let result = state
        .links()
        .await?
        .approve_as_device(&approvals, &link, &name, digest)
        .await?;
    ok(json!({ "ok": true, "device": name, "result": result }))
}

/// A JSON body as `T`; what does not fit answers 400 `{error}`.
fn parse<T: serde::de::DeserializeOwned>(body: Body) -> Result<T, ApiError> {
    serde_json::from_value(serde_json::Value::Object(body.0))
        .map_err(|e| ApiError::bad_request(format!("request body: {e}")))
}

/// The live devices of `rp` and their passkeys.
async fn device_passkeys(store: &Store, rp: &Rp) -> Result<Vec<(String, Passkey)>, ApiError> {
    let live = store
        .live_devices(&rp.id)
        .await
        .map_err(ApprovalsError::from)?;
    Ok(live
        .into_iter()
        .filter_map(|d| {
            serde_json::from_str::<Passkey>(&d.passkey)
                .map_err(|e| tracing::warn!(device = %d.name, error = %e, "an unreadable passkey"))
                .ok()
                .map(|k| (d.name, k))
        })
        .collect())
}

/// `GET /passkey.js`: the script of the pairing and link pages.
#[utoipa::path(
    get,
    path = "/passkey.js",
    operation_id = "get_passkey_js",
    tag = "links",
    security(()),
    responses((status = 200, description = "The pages' script (JavaScript)"))
)]
pub async fn script() -> Response {
    (
        [
            (
                axum::http::header::CONTENT_TYPE,
                "text/javascript; charset=utf-8",
            ),
            (axum::http::header::CACHE_CONTROL, "no-store"),
        ],
        include_str!("passkey.js"),
    )
        .into_response()
}
