//! The commands the windows call (`window.__TAURI__.core.invoke`). Each one
//! hands off to a backend crate; errors reach the page serialised
//! ([`CommandError`]).

use clawdis_approvals::{Approval, Channel, Choice};
use clawdis_browser::settings::{FieldIssue, Settings};
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Builder, Runtime, State};

use clawdis_server::requests::{Confirmer, Request, Verdict};

use super::command_error::CommandError;
use super::{ApprovalsState, Backend, decider, tray};

/// Registers every command on `builder` (also used with the mock runtime).
pub fn register<R: Runtime>(builder: Builder<R>) -> Builder<R> {
    builder.invoke_handler(tauri::generate_handler![
        approvals_list,
        approvals_decide,
        handoff_take_over,
        runs_list,
        runs_get,
        runs_cancel,
        runs_export,
        ledger_list,
        triggers_list,
        triggers_pause,
        triggers_resume,
        deliveries_list,
        deliveries_get,
        deliveries_redeliver,
        requests_list,
        requests_answer,
        tokens_list,
        tokens_revoke,
        devices_list,
        devices_pair,
        devices_revoke,
        settings_get,
        settings_save,
        tabs_list,
        tab_focus,
        tab_close,
    ])
}

/// Pending runs, then recently decided ones, each with what a person reads
/// of it (`readable`).
#[tauri::command]
async fn approvals_list(
    approvals: State<'_, ApprovalsState>,
) -> Result<Vec<clawdis_approvals::ForAPerson>, CommandError> {
    let list = approvals.list().await.map_err(CommandError::from)?;
    Ok(list.into_iter().map(Approval::for_a_person).collect())
}

/// `approve`, `deny` or `cancel` a run, or `respond` with `response`, as
/// shown with `digest` (a gate changed since is refused). A denial's
/// `reason` goes back to the agent in the run's envelope.
#[tauri::command]
async fn approvals_decide<R: Runtime>(
    app: AppHandle<R>,
    approvals: State<'_, ApprovalsState>,
    id: String,
    choice: String,
    response: Option<serde_json::Value>,
    digest: Option<String>,
    reason: Option<String>,
) -> Result<serde_json::Value, CommandError> {
    let choice = Choice::parse(&choice, response).map_err(CommandError::from)?;
    // Decided on what the window showed (its `digest`).
    let mut decider = clawdis_approvals::Decider {
        seen: digest,
        comment: reason
            .map(|r| r.trim().to_string())
            .filter(|r| !r.is_empty()),
        ..decider(Channel::App)
    };
    // A gate that asks for a verified person gets the operating system's
    // own check (Touch ID, the login password) where there is one; without
    // it the click is refused (under X11 any program can make one).
    if choice == Choice::Approve {
        let gate = approvals.get(&id).await.map_err(CommandError::from)?;
        if gate.policy.presence == "verified" {
            let reason = format!(
                "approve “{}”",
                clawdis_approvals::legible(&gate.prompt).text
            );
            match clawdis_approvals::os_check::check_person(&reason).await {
                Ok(()) => decider.presence = Some(clawdis_approvals::Presence::Os),
                Err(e) => tracing::info!(error = %e, "no operating-system check of the person"),
            }
        }
    }
    let result = approvals
        .decide(&id, choice, decider)
        .await
        .map_err(CommandError::from);
    tray::refresh(&app, approvals.pending_count());
    result
}

/// Takes over the hand-off `id` (its Approvals card's Take over): a visible
/// browser comes to the front on its page, a headless one's page opens in
/// the live view.
#[tauri::command]
async fn handoff_take_over<R: Runtime>(
    app: AppHandle<R>,
    backend: State<'_, Backend>,
    id: String,
) -> Result<(), CommandError> {
    super::windows::take_over(&app, &backend.state, &id)
        .await
        .map_err(CommandError::from)
}

/// What processes asked of the person (approver tokens, device pairings),
/// each with the process that asked.
#[tauri::command]
fn requests_list(backend: State<'_, Backend>) -> Vec<serde_json::Value> {
    let list = backend.state.requests.list();
    list.iter().map(Request::for_a_person).collect()
}

/// Confirms (`confirm: true`) or refuses a waiting request, as the person
/// at this app. No credential of the control API does this: only the app
/// and a paired device's inbox (with its passkey).
#[tauri::command]
fn requests_answer(
    backend: State<'_, Backend>,
    id: String,
    confirm: bool,
) -> Result<(), CommandError> {
    let person = decider(Channel::App);
    let who = Confirmer {
        by: person.by,
        via: Channel::App.as_str().to_string(),
        presence: person
            .presence
            .unwrap_or(clawdis_approvals::Presence::Click),
    };
    let verdict = if confirm {
        Verdict::Confirmed(who)
    } else {
        Verdict::Refused(who)
    };
    backend
        .state
        .requests
        .answer(&id, verdict)
        .map_err(CommandError::from)
}

/// A page of the runs' history, newest first: `status` and `workflow`
/// filter, `cursor` is the `next` of the page before.
#[tauri::command]
async fn runs_list(
    backend: State<'_, Backend>,
    status: Option<String>,
    workflow: Option<String>,
    cursor: Option<String>,
) -> Result<clawdis_approvals::RunPage, CommandError> {
    let status = match status.as_deref().filter(|s| !s.is_empty()) {
        None => None,
        Some(word) => Some(
            clawdis_approvals::HistoryStatus::parse(word).ok_or_else(|| {
                clawdis_approvals::ApprovalsError::Invalid(format!("no run status {word:?}"))
            })?,
        ),
    };
    let query = clawdis_approvals::RunQuery {
        status,
        workflow: workflow.filter(|w| !w.is_empty()),
        limit: 50,
        cursor,
    };
    Ok(backend.state.runs().await?.list(&query).await?)
}

/// One run with its steps and decisions.
#[tauri::command]
async fn runs_get(
    backend: State<'_, Backend>,
    id: String,
) -> Result<clawdis_approvals::RunView, CommandError> {
    Ok(backend.state.runs().await?.get(&id).await?)
}

/// Cancels run `id` as the person at this app: stops it where it runs
/// here, or cancels the gate it waits at.
#[tauri::command]
async fn runs_cancel(
    backend: State<'_, Backend>,
    id: String,
) -> Result<clawdis_approvals::RunView, CommandError> {
    Ok(backend
        .state
        .runs()
        .await?
        .cancel(&id, decider(Channel::App))
        .await?)
}

/// Run `id` as one self-contained document (what `GET
/// /runs/{id}/export` answers).
#[tauri::command]
async fn runs_export(
    backend: State<'_, Backend>,
    id: String,
) -> Result<serde_json::Value, CommandError> {
    Ok(backend.state.runs().await?.export(&id).await?)
}

/// The ledger: its newest entries (`limit`, 200 unless given), its head,
/// and whether its whole chain holds (`verified`, or `broken` naming the
/// first entry that does not).
#[tauri::command]
async fn ledger_list(
    backend: State<'_, Backend>,
    limit: Option<u32>,
) -> Result<serde_json::Value, CommandError> {
    let approvals = backend.state.approvals().await?;
    let store = approvals.store();
    // The whole ledger is read once: verified, and its newest shown.
    let all = store
        .audit_entries()
        .await
        .map_err(clawdis_approvals::ApprovalsError::from)?;
    let entries: Vec<_> = all
        .iter()
        .rev()
        .take(limit.unwrap_or(200) as usize)
        .collect();
    let verdict = match clawdis_approvals::verify_audit(&all) {
        Ok(()) => serde_json::json!({ "holds": true, "entries": all.len(),
            "head": all.last().map_or(clawdis_approvals::GENESIS, |e| e.hash.as_str()) }),
        Err(broken) => serde_json::json!({ "holds": false, "seq": broken.seq, "why": broken.why }),
    };
    Ok(serde_json::json!({ "entries": entries, "verify": verdict }))
}

/// The triggers of the workflow library: next time, last fire, error,
/// paused or not.
#[tauri::command]
async fn triggers_list(backend: State<'_, Backend>) -> Result<serde_json::Value, CommandError> {
    let triggers = backend.state.triggers().await?.list().await?;
    Ok(serde_json::json!(triggers))
}

/// Pauses trigger `id`: it fires nothing until resumed.
#[tauri::command]
async fn triggers_pause(
    backend: State<'_, Backend>,
    id: String,
) -> Result<serde_json::Value, CommandError> {
    let trigger = backend.state.triggers().await?.pause(&id).await?;
    Ok(serde_json::json!(trigger))
}

/// Resumes trigger `id`; what it would have done while paused is skipped.
#[tauri::command]
async fn triggers_resume(
    backend: State<'_, Backend>,
    id: String,
) -> Result<serde_json::Value, CommandError> {
    let trigger = backend.state.triggers().await?.resume(&id).await?;
    Ok(serde_json::json!(trigger))
}

/// The latest webhook deliveries, newest first.
#[tauri::command]
async fn deliveries_list(backend: State<'_, Backend>) -> Result<serde_json::Value, CommandError> {
    let deliveries = backend.state.webhooks().await?.deliveries(100).await?;
    Ok(serde_json::json!(deliveries))
}

/// Delivery `id` with its attempts.
#[tauri::command]
async fn deliveries_get(
    backend: State<'_, Backend>,
    id: String,
) -> Result<serde_json::Value, CommandError> {
    let delivery = backend.state.webhooks().await?.delivery(&id).await?;
    Ok(serde_json::json!(delivery))
}

/// Sends delivery `id` again now, with the same id and body.
#[tauri::command]
async fn deliveries_redeliver(
    backend: State<'_, Backend>,
    id: String,
) -> Result<serde_json::Value, CommandError> {
    let delivery = backend.state.webhooks().await?.redeliver(&id).await?;
    Ok(serde_json::json!(delivery))
}

/// The named tokens (never a token itself).
#[tauri::command]
async fn tokens_list(
    backend: State<'_, Backend>,
) -> Result<Vec<clawdis_server::TokenRecord>, CommandError> {
    let approvals = backend.state.approvals().await?;
    Ok(approvals
        .store()
        .list_tokens()
        .await
        .map_err(clawdis_approvals::ApprovalsError::from)?)
}

/// Revokes token `name`, as the person at this app.
#[tauri::command]
async fn tokens_revoke(backend: State<'_, Backend>, name: String) -> Result<(), CommandError> {
    let approvals = backend.state.approvals().await?;
    let person = decider(Channel::App);
    let issuer = clawdis_server::Issuer {
        by: person.by,
        via: "app".into(),
        presence: person.presence,
    };
    let revoked = approvals
        .store()
        .revoke_token(&name, &issuer)
        .await
        .map_err(clawdis_approvals::ApprovalsError::from)?;
    if revoked {
        Ok(())
    } else {
        Err(
            clawdis_approvals::ApprovalsError::NotFound(format!("no live token named {name:?}"))
                .into(),
        )
    }
}

/// The paired devices (never their passkeys).
#[tauri::command]
async fn devices_list(
    backend: State<'_, Backend>,
) -> Result<Vec<clawdis_server::DeviceRecord>, CommandError> {
    let approvals = backend.state.approvals().await?;
    Ok(approvals
        .store()
        .list_devices()
        .await
        .map_err(clawdis_approvals::ApprovalsError::from)?)
}

/// A one-time pairing link for a device named `name`, made by the person
/// at this app: it needs no confirmation.
#[tauri::command]
async fn devices_pair(
    backend: State<'_, Backend>,
    name: String,
) -> Result<serde_json::Value, CommandError> {
    let approvals = backend.state.approvals().await?;
    let person = decider(Channel::App).by.unwrap_or_else(|| "app".into());
    if !clawdis_server::valid_name(&name) {
        return Err(clawdis_server::ApiError::bad_request(
            "a device name is 1 to 64 of A-Z a-z 0-9 . _ -",
        )
        .into());
    }
    Ok(
        clawdis_server::devices::start_pairing(&backend.state, approvals.store(), &name, &person)
            .await?,
    )
}

/// Revokes device `name`, as the person at this app.
#[tauri::command]
async fn devices_revoke(backend: State<'_, Backend>, name: String) -> Result<(), CommandError> {
    let person = decider(Channel::App);
    let issuer = clawdis_server::Issuer {
        by: person.by,
        via: Channel::App.as_str().to_string(),
        presence: person.presence,
    };
    Ok(clawdis_server::devices::revoke_device(&backend.state, &name, &issuer).await?)
}

/// The settings window's view: the saved settings and what is wrong or
/// worth knowing about them.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SettingsView {
    settings: Settings,
    issues: Vec<FieldIssue>,
    saved: bool,
}

#[tauri::command]
fn settings_get(backend: State<'_, Backend>) -> Result<SettingsView, CommandError> {
    let settings = Settings::load(&backend.home).map_err(CommandError::from)?;
    let issues = settings.validate();
    Ok(SettingsView {
        settings,
        issues,
        saved: false,
    })
}

/// A settings form as the window sends it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SettingsForm {
    enabled: bool,
    control_url: String,
    cdp_port: u16,
    accent_color: String,
    headless: bool,
    attach_only: bool,
    executable_path: Option<String>,
    evaluate_enabled: bool,
}

/// Validates and saves the form to `<home>/settings.json`, then applies it
/// to the running backend. Errors leave the file as it was; warnings save.
#[tauri::command]
async fn settings_save<R: Runtime>(
    app: AppHandle<R>,
    backend: State<'_, Backend>,
    approvals: State<'_, ApprovalsState>,
    form: SettingsForm,
) -> Result<SettingsView, CommandError> {
    let mut settings = Settings::load(&backend.home).map_err(CommandError::from)?;
    settings.enabled = form.enabled;
    settings.control_url = form.control_url.trim().to_string();
    settings.cdp_port = form.cdp_port;
    settings.accent_color = form.accent_color.trim().to_string();
    settings.headless = form.headless;
    settings.attach_only = form.attach_only;
    settings.executable_path = form
        .executable_path
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty());
    settings.evaluate_enabled = form.evaluate_enabled;
    let issues = settings.validate();
    if issues.iter().any(|i| !i.warning) {
        return Ok(SettingsView {
            settings,
            issues,
            saved: false,
        });
    }
    settings.save(&backend.home).map_err(CommandError::from)?;
    backend
        .state
        .manager
        .apply_settings(settings.clone())
        .await
        .map_err(CommandError::from)?;
    tray::refresh(&app, approvals.pending_count());
    Ok(SettingsView {
        settings,
        issues,
        saved: true,
    })
}

/// The clawd browser's tabs (empty while it is stopped).
#[tauri::command]
async fn tabs_list(
    backend: State<'_, Backend>,
) -> Result<Vec<clawdis_browser::manager::Tab>, CommandError> {
    Ok(backend
        .state
        .manager
        .tabs()
        .await
        .map_err(CommandError::from)?
        .unwrap_or_default())
}

#[tauri::command]
async fn tab_focus(backend: State<'_, Backend>, target_id: String) -> Result<(), CommandError> {
    backend
        .state
        .manager
        .focus(&target_id)
        .await
        .map(|_| ())
        .map_err(CommandError::from)
}

#[tauri::command]
async fn tab_close(backend: State<'_, Backend>, target_id: String) -> Result<(), CommandError> {
    backend
        .state
        .manager
        .close(&target_id, true)
        .await
        .map(|_| ())
        .map_err(CommandError::from)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use clawdis_approvals::Approvals;
    use serde_json::{Value, json};
    use tauri::Manager;
    use tauri::ipc::{CallbackFn, InvokeBody};
    use tauri::test::{
        INVOKE_KEY, MockRuntime, get_ipc_response, mock_builder, mock_context, noop_assets,
    };
    use tauri::webview::{InvokeRequest, WebviewWindow, WebviewWindowBuilder};

    use super::super::Backend;

    /// The app's commands on the mock runtime, over a fresh home whose
    /// control API listens on a free loopback port.
    fn app(home: &std::path::Path) -> (tauri::App<MockRuntime>, WebviewWindow<MockRuntime>) {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        std::fs::write(
            home.join("settings.json"),
            json!({"controlUrl": format!("http://127.0.0.1:{port}")}).to_string(),
        )
        .unwrap();
        let app = super::register(mock_builder())
            .build(mock_context(noop_assets()))
            .unwrap();
        let backend = Backend::start(home.to_path_buf()).unwrap();
        let approvals: Arc<Approvals> =
            tauri::async_runtime::block_on(Approvals::open(home)).unwrap();
        app.manage(backend);
        app.manage(approvals);
        let window = WebviewWindowBuilder::new(&app, "settings", Default::default())
            .build()
            .unwrap();
        (app, window)
    }

    fn invoke(window: &WebviewWindow<MockRuntime>, cmd: &str, args: Value) -> Result<Value, Value> {
        get_ipc_response(
            window,
            InvokeRequest {
                cmd: cmd.into(),
                callback: CallbackFn(0),
                error: CallbackFn(1),
                url: "tauri://localhost".parse().unwrap(),
                body: InvokeBody::Json(args),
                headers: Default::default(),
                invoke_key: INVOKE_KEY.to_string(),
            },
        )
        .map(|body| body.deserialize::<Value>().unwrap())
    }

    fn form(overrides: Value) -> Value {
        let mut form = json!({
            "enabled": true, "controlUrl": "http://127.0.0.1:18791", "cdpPort": 18792,
            "accentColor": "#FF4500", "headless": true, "attachOnly": false,
            "executablePath": null, "evaluateEnabled": true,
        });
        form.as_object_mut()
            .unwrap()
            .extend(overrides.as_object().unwrap().clone());
        json!({ "form": form })
    }

    fn issue<'a>(view: &'a Value, field: &str) -> &'a Value {
        view["issues"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["field"] == field)
            .unwrap_or(&Value::Null)
    }

    #[test]
    fn settings_are_validated_next_to_the_field_and_persisted() {
        let home = tempfile::tempdir().unwrap();
        let (app, window) = app(home.path());
        let before = std::fs::read_to_string(home.path().join("settings.json")).unwrap();

        let relative = invoke(
            &window,
            "settings_save",
            form(json!({"executablePath": "bin/chromium"})),
        )
        .unwrap();
        assert_eq!(relative["saved"], false);
        assert_eq!(issue(&relative, "executablePath")["warning"], false);
        assert!(
            issue(&relative, "executablePath")["message"]
                .as_str()
                .unwrap()
                .contains("absolute")
        );

        let reserved = invoke(
            &window,
            "settings_save",
            form(json!({"controlUrl": "http://127.0.0.1:9222"})),
        )
        .unwrap();
        assert_eq!(reserved["saved"], false);
        assert!(
            issue(&reserved, "controlUrl")["message"]
                .as_str()
                .unwrap()
                .contains("9222")
        );
        let reserved_cdp =
            invoke(&window, "settings_save", form(json!({"cdpPort": 9222}))).unwrap();
        assert!(
            issue(&reserved_cdp, "cdpPort")["message"]
                .as_str()
                .unwrap()
                .contains("9222")
        );
        assert_eq!(
            std::fs::read_to_string(home.path().join("settings.json")).unwrap(),
            before,
            "refused forms are not saved"
        );

        let remote = invoke(
            &window,
            "settings_save",
            form(json!({"controlUrl": "http://10.1.2.3:18791"})),
        )
        .unwrap();
        assert_eq!(remote["saved"], true);
        assert_eq!(issue(&remote, "controlUrl")["warning"], true);
        assert!(
            issue(&remote, "controlUrl")["message"]
                .as_str()
                .unwrap()
                .contains("only connect")
        );

        let off = invoke(
            &window,
            "settings_save",
            form(json!({"enabled": false, "evaluateEnabled": false})),
        )
        .unwrap();
        assert_eq!(off["saved"], true);
        let saved: Value = serde_json::from_str(
            &std::fs::read_to_string(home.path().join("settings.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            (saved["enabled"].clone(), saved["evaluateEnabled"].clone()),
            (json!(false), json!(false))
        );
        let backend = app.state::<Backend>();
        assert!(
            !backend.state.manager.settings().enabled,
            "applied to the running backend"
        );
        let refused =
            tauri::async_runtime::block_on(backend.state.manager.start(None)).unwrap_err();
        assert!(
            refused.to_string().contains("Browser disabled in settings"),
            "{refused}"
        );
        assert_eq!(
            invoke(&window, "settings_get", json!({})).unwrap()["settings"]["enabled"],
            false
        );
        backend.stop();
    }

    #[test]
    fn approvals_commands_answer_plainly() {
        let home = tempfile::tempdir().unwrap();
        let (app, window) = app(home.path());
        assert_eq!(
            invoke(&window, "approvals_list", json!({})).unwrap(),
            json!([])
        );
        let unknown = invoke(
            &window,
            "approvals_decide",
            json!({"id": "x", "choice": "maybe"}),
        )
        .unwrap_err();
        assert!(
            unknown["error"]
                .as_str()
                .unwrap()
                .contains("unknown choice"),
            "{unknown}"
        );
        assert_eq!(unknown["kind"], "invalid", "{unknown}");
        let missing = invoke(
            &window,
            "approvals_decide",
            json!({"id": "workflow_resume_nope", "choice": "approve"}),
        )
        .unwrap_err();
        assert!(
            missing["error"].as_str().unwrap().contains("no paused run"),
            "{missing}"
        );
        assert_eq!(missing["kind"], "not_found", "{missing}");
        assert_eq!(
            invoke(&window, "tabs_list", json!({})).unwrap(),
            json!([]),
            "no browser, no tabs"
        );
        app.state::<Backend>().stop();
    }
}
