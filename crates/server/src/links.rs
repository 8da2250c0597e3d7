//! `/approve/{signed}`: the one route a signed approval link reaches, and
//! the only one that answers the public host of `publicBaseUrl` (the
//! user's tunnel or reverse proxy) and needs no bearer token: the link's
//! signature is the credential. `GET` shows the gate and a form; only the
//! `POST` from that form decides, once.

use std::sync::Arc;

use axum::Form;
use axum::extract::rejection::FormRejection;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use clawdis_approvals::{Approval, Choice};
use clawdis_browser::settings::is_loopback_host;
use serde::Deserialize;

use crate::AppState;
use crate::security::{host_header, host_of_url};

/// The largest form a link's page posts.
const MAX_FORM_BYTES: u64 = 16 * 1024;

/// The limit on what the link route reads of a body.
pub fn body_limit() -> axum::extract::DefaultBodyLimit {
    axum::extract::DefaultBodyLimit::max(usize::try_from(MAX_FORM_BYTES).unwrap_or(usize::MAX))
}

/// Whether `host` may reach the link route: loopback, or the host of the
/// configured `publicBaseUrl`.
fn allowed_host(state: &AppState, host: &str) -> bool {
    is_loopback_host(host) || state.public_host().is_some_and(|public| public == host)
}

/// The link route's guard: an allowed `Host`, and writes only from the
/// link's own page (no cross-site form posts), with a small body.
pub async fn guard(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    if host_header(headers).is_none_or(|h| !allowed_host(&state, &h)) {
        return page(
            StatusCode::FORBIDDEN,
            "Not here",
            "<p>This address does not serve approval links.</p>",
        );
    }
    if request.method() == axum::http::Method::POST {
        let text = |h: &str| headers.get(h).and_then(|v| v.to_str().ok());
        let foreign = text("sec-fetch-site").is_some_and(|v| v.eq_ignore_ascii_case("cross-site"))
            || [text("origin"), text("referer")]
                .into_iter()
                .flatten()
                .any(|v| host_of_url(v).is_none_or(|h| !allowed_host(&state, &h)));
        if foreign {
            return page(
                StatusCode::FORBIDDEN,
                "Refused",
                "<p>An approval is decided from its own page only.</p>",
            );
        }
        // A body that says its length is refused at once when too long;
        // one that does not (chunked) is cut off at the limit as it is
        // read ([`body_limit`]); no body at all is an empty form (issue
        // #33: schemathesis found a bodiless POST called too large).
        let announced = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if announced.is_some_and(|n| n > MAX_FORM_BYTES) {
            return page(
                StatusCode::PAYLOAD_TOO_LARGE,
                "Refused",
                "<p>The form is too large.</p>",
            );
        }
    }
    next.run(request).await
}

/// `GET /approve/{signed}`: the gate the link names and a form to decide
/// it. Opening the link (as mail scanners and chat previews do) decides
/// nothing.
#[utoipa::path(
    get,
    path = "/approve/{signed}",
    operation_id = "get_approve_signed",
    tag = "links",
    security(()),
    params(("signed" = String, Path, description = "The signed link")),
    responses((status = 200, description = "The gate and a form; decides nothing", content_type = "text/html", body = String), (status = 403, description = "A forged link, or a foreign Host or page", content_type = "text/html", body = String), (status = 409, description = "The gate changed since the page showed it", content_type = "text/html", body = String), (status = 410, description = "Used or expired", content_type = "text/html", body = String))
)]
pub async fn show(State(state): State<Arc<AppState>>, Path(token): Path<String>) -> Response {
    let shown = async {
        let links = state.links().await?;
        let claim = links.verify(&token)?;
        let approvals = state.approvals().await?;
        Ok::<_, crate::api::ApiError>(approvals.get(&claim.state_key).await?)
    };
    match shown.await {
        // A gate that needs a person is approved with a paired device's
        // passkey: its page runs the passkey script.
        Ok(approval) if approval.needs_a_person() => {
            page_with_passkeys(StatusCode::OK, "Approval", &gate_html(&approval))
        }
        Ok(approval) => page(StatusCode::OK, "Approval", &gate_html(&approval)),
        Err(e) => error_page(e.status(), e.message()),
    }
}

/// The form the page posts.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct DecisionForm {
    /// What the person chose.
    decision: LinkChoice,
    /// What they said with it.
    #[serde(default)]
    comment: String,
    /// The approval's digest as the page showed it: a gate changed since
    /// is refused (409).
    #[serde(default)]
    digest: String,
}

/// The choices a link's page offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum LinkChoice {
    /// Approve the gate.
    Approve,
    /// Deny it.
    Deny,
}

/// `POST /approve/{signed}` with `decision=approve|deny` and an optional
/// `comment`: decides the gate as a person through the link, once.
#[utoipa::path(
    post,
    path = "/approve/{signed}",
    operation_id = "post_approve_signed",
    tag = "links",
    security(()),
    params(("signed" = String, Path, description = "The signed link")),
    request_body(content = DecisionForm, description = "The page's form", content_type = "application/x-www-form-urlencoded"),
    responses((status = 200, description = "Decided", content_type = "text/html", body = String), (status = 400, description = "No decision", content_type = "text/html", body = String), (status = 413, description = "Too large", content_type = "text/html", body = String), (status = 415, description = "Not the page's form", content_type = "text/plain", body = String), (status = 403, description = "A forged link, or a foreign Host or page", content_type = "text/html", body = String), (status = 410, description = "Used or expired", content_type = "text/html", body = String))
)]
pub async fn decide(
    State(state): State<Arc<AppState>>,
    Path(token): Path<String>,
    form: Result<Form<DecisionForm>, FormRejection>,
) -> Response {
    let form = match form {
        Ok(Form(form)) => form,
        Err(e @ (FormRejection::InvalidFormContentType(_) | FormRejection::BytesRejection(_))) => {
            return e.into_response();
        }
        Err(_) => {
            return error_page(StatusCode::BAD_REQUEST, "decision must be approve or deny");
        }
    };
    let choice = match form.decision {
        LinkChoice::Approve => Choice::Approve,
        LinkChoice::Deny => Choice::Deny,
    };
    let approved = choice == Choice::Approve;
    let comment = Some(form.comment.trim().to_string()).filter(|c| !c.is_empty());
    let seen = Some(form.digest.trim().to_string()).filter(|d| !d.is_empty());
    let decided = async {
        let links = state.links().await?;
        let approvals = state.approvals().await?;
        links
            .decide(&approvals, &token, choice, comment, seen)
            .await
            .map_err(crate::api::ApiError::from)
    };
    match decided.await {
        Ok(envelope) => {
            let status = envelope["status"].as_str().unwrap_or("done").to_string();
            let said = if approved { "Approved" } else { "Denied" };
            page(
                StatusCode::OK,
                said,
                &format!(
                    "<p><strong>{said}.</strong> The run is now <code>{}</code>.</p>",
                    escape(&status)
                ),
            )
        }
        Err(e) => error_page(e.status(), e.message()),
    }
}

pub(crate) fn error_page(status: StatusCode, message: &str) -> Response {
    page(
        status,
        "Approval link",
        &format!("<p>{}</p>", escape(message)),
    )
}

/// The gate as the page shows it, with the form when it still waits.
/// What the page says of a workflow file edited after its run paused.
const FILE_CHANGED_HTML: &str = "<p class=warn><strong>The workflow file was changed after \
     this run paused.</strong> Approving runs the steps as they were when it paused, not the \
     edited file.</p>";

fn gate_html(approval: &Approval) -> String {
    let mut html = String::new();
    let shown = approval.readable();
    if let Some(workflow) = &shown.workflow {
        html.push_str(&warnings_html(workflow));
        html.push_str(&format!("<p class=wf>{}</p>", escape(&workflow.text)));
    }
    html.push_str(&warnings_html(&shown.prompt));
    html.push_str(&format!("<h1>{}</h1>", escape(&shown.prompt.text)));
    if approval.file_changed == Some(true) {
        html.push_str(FILE_CHANGED_HTML);
    }
    if approval.item_count > 0 {
        html.push_str(&format!(
            "<p>{} item{}:</p>{}<pre>{}</pre>",
            approval.item_count,
            if approval.item_count == 1 { "" } else { "s" },
            warnings_html(&shown.items),
            escape(&shown.items.text)
        ));
    }
    if let Some(page) = &shown.browser {
        html.push_str(&format!(
            "<h2>The page, as it was when asked</h2>{}<pre>{}</pre>",
            warnings_html(page),
            escape(&page.text)
        ));
        // The page's picture is for the app and the inbox (a paired
        // device, signed in with its passkey), never for whoever holds a
        // link: it may show a logged-in page.
    }
    let sections = [
        ("Approving runs", Some(&shown.unlocks)),
        ("Started by", shown.started_by.as_ref()),
        ("What ran before", Some(&shown.before)),
    ];
    for (title, text) in sections {
        if let Some(text) = text.filter(|t| !t.text.is_empty()) {
            html.push_str(&format!(
                "<h2>{title}</h2>{}<pre>{}</pre>",
                warnings_html(text),
                escape(&text.text)
            ));
        }
    }
    if approval.state != clawdis_approvals::ApprovalState::Pending {
        let how = approval
            .decision
            .map(|d| d.as_str().to_string())
            .unwrap_or_default();
        html.push_str(&format!(
            "<p>Already decided: <strong>{}</strong>{}.</p>",
            escape(&how),
            approval
                .decided_by
                .as_deref()
                .map(|by| format!(" by {}", escape(by)))
                .unwrap_or_default()
        ));
        return html;
    }
    if let Some(at) = &approval.policy.expires_at {
        html.push_str(&format!("<p>Expires {}.</p>", escape(at)));
    }
    // A link shows no person: a gate that needs one is approved with a
    // paired device's passkey (or in the app); the form only denies it.
    let approve = if approval.needs_a_person() {
        html.push_str(&format!(
            "<p class=warn>Only a person approves this gate: with a paired device's passkey, or \
             in the Clawdis app. The form below can deny it.</p>\
             <p><button type=button data-passkey=approve data-digest=\"{}\">Approve with this \
             device's passkey</button></p><p id=said role=status></p>",
            escape(&approval.digest)
        ));
        ""
    } else {
        "<button name=decision value=approve>Approve</button> "
    };
    html.push_str(&format!(
        "<form method=post><input type=hidden name=digest value=\"{}\">\
         <textarea name=comment placeholder=\"A comment or a reason (optional)\"></textarea>\
         {approve}<button name=decision value=deny class=deny>Deny</button></form>",
        escape(&approval.digest)
    ));
    html
}

/// A small page: no scripts, no framing, no referrer (the link is the
/// credential), not cached.
fn page(status: StatusCode, title: &str, body: &str) -> Response {
    page_of(status, title, body, NO_SCRIPT)
}

/// A page like the others, that may also run this server's passkey script
/// and call back to it (the pairing page, a `human` gate's page).
pub fn page_with_passkeys(status: StatusCode, title: &str, body: &str) -> Response {
    page_of(
        status,
        title,
        &format!("{body}<script src=\"/passkey.js\"></script>"),
        SCRIPTS,
    )
}

/// A page like the others with `scripts` of this server (a hand-off's
/// live view).
pub(crate) fn page_with_scripts(
    status: StatusCode,
    title: &str,
    body: &str,
    scripts: &[&str],
) -> Response {
    let tags: String = scripts
        .iter()
        .map(|src| format!("<script src=\"{src}\"></script>"))
        .collect();
    page_of(status, title, &format!("{body}{tags}"), SCRIPTS)
}

/// The policy of a page without scripts.
const NO_SCRIPT: &str =
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'";
/// The policy of a page with this server's scripts.
const SCRIPTS: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'self'; \
                       connect-src 'self'; form-action 'self'; frame-ancestors 'none'";

fn page_of(status: StatusCode, title: &str, body: &str, policy: &'static str) -> Response {
    let html = format!(
        "<!doctype html><html><head><meta charset=utf-8>\
         <meta name=viewport content=\"width=device-width\"><title>{} · Clawdis</title>\
         <style>body{{font:16px system-ui,sans-serif;max-width:40em;margin:2em auto;padding:0 1em}}\
         h1{{font-size:1.3em}}.wf{{color:#666}}pre{{background:#f6f6f6;padding:.5em;overflow:auto}}\
         textarea{{width:100%;height:4em;margin:.5em 0}}button{{font-size:1em;padding:.4em 1.2em;\
         background:#FF4500;color:#fff;border:0;border-radius:4px}}button.deny{{background:#555}}.warn{{color:#b25000}}\
         #screen{{display:block;max-width:100%;\
         touch-action:none;outline:2px solid #FF4500;cursor:default}}#keys{{width:100%;font-size:1em;padding:.4em}}</style>\
         </head><body>{body}</body></html>",
        escape(title)
    );
    let mut response = (status, html).into_response();
    let headers: &mut HeaderMap = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_TYPE, "text/html; charset=utf-8"),
        (header::CACHE_CONTROL, "no-store"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::CONTENT_SECURITY_POLICY, policy),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

/// The warnings of legible text, one line each, above it.
pub(crate) fn warnings_html(shown: &clawdis_approvals::Legible) -> String {
    shown
        .warnings
        .iter()
        .map(|w| format!("<p class=warn role=alert>⚠ {}</p>", escape(w)))
        .collect()
}

/// `text` with HTML's special characters escaped.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_html_specials() {
        assert_eq!(
            escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }
}
