//! The verified action engine: every action is precondition → act →
//! verify. The target is re-resolved on every attempt (a stale handle is
//! never used), Playwright's actionability checks run before any input,
//! the input is trusted CDP input (never a JavaScript click), and the
//! action reports success only once its effect is observed. Failures are
//! typed ([`Code`]) and come with a screenshot.

mod checks;
mod forms;
mod navigate;
mod obstacle;
mod pointer;
mod read;
mod request;
mod retry;
mod target;

use std::path::PathBuf;
use std::time::Duration;

use chromiumoxide::Page;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::time::Instant;
use tracing::Instrument;

use crate::BrowserError;
use crate::cdp::Dom;
use crate::events::TabEvents;
use crate::frames::FrameSession;
use crate::manager::Manager;

pub use request::{ACTIONS, Click, Field, Request, Verb, parse};
pub use target::{Aim, Strategy, Target};

/// Default wait of actions on elements.
pub const SHORT: Duration = Duration::from_secs(5);
/// Default wait of `wait`.
pub const MEDIUM: Duration = Duration::from_secs(15);
/// Default wait of navigations.
pub const LONG: Duration = Duration::from_secs(45);

/// Why an action failed, as a stable code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Code {
    /// No element matches the target.
    NotFound,
    /// More than one element matches and no `nth` was given.
    Ambiguous,
    /// Something else would receive the pointer (named in the message).
    Covered,
    /// The element a ref named is gone and nothing equivalent replaced it.
    Detached,
    /// The element stayed disabled.
    Disabled,
    /// The element cannot take text or a value.
    NotEditable,
    /// The action ran but its effect did not hold.
    VerifyFailed,
    /// A check or condition did not pass in time (the message names it).
    Timeout,
    /// A navigation failed or interrupted the action.
    Navigation,
    /// A JavaScript dialog waits for a person's answer.
    Dialog,
    /// The page or the browser crashed.
    Crashed,
}

impl Code {
    /// The code as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::NotFound => "not_found",
            Code::Ambiguous => "ambiguous",
            Code::Covered => "covered",
            Code::Detached => "detached",
            Code::Disabled => "disabled",
            Code::NotEditable => "not_editable",
            Code::VerifyFailed => "verify_failed",
            Code::Timeout => "timeout",
            Code::Navigation => "navigation",
            Code::Dialog => "dialog",
            Code::Crashed => "crashed",
        }
    }
}

/// A failed action's code and explanation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Failure {
    /// What kind of failure.
    pub code: Code,
    /// What happened, for a person or an agent.
    pub message: String,
}

/// Something the engine dealt with on the way (a dialog answered, a
/// consent banner declined, a modal closed, a new tab opened).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Handled {
    /// `consent`, `modal`, `chat`, `dialog` or `popup`.
    pub kind: &'static str,
    /// What it was and what was done.
    pub detail: String,
    /// The banner, modal or widget, as the page names it
    /// (`<div id="newsletter">`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A consent banner's consent manager: autoconsent's name for it, or
    /// what the banner calls itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cmp: Option<String>,
    /// What a consent banner was answered with: `reject`, `necessary`
    /// (only the necessary purposes), `save` (every optional purpose off),
    /// or `dismiss` (the rules acknowledged a notice that offered no
    /// choice).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub choice: Option<&'static str>,
    /// What was pressed (the last control, when there were several): a
    /// control's label, or a key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clicked: Option<String>,
    /// Who answered a consent banner: `rules` (autoconsent) or `fallback`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<&'static str>,
}

/// What an action did.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    /// Whether the action's effect happened.
    pub ok: bool,
    /// What it returned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Failure>,
    /// How many times the target was re-resolved or the action retried.
    pub retries: u32,
    /// Wall time of the whole action.
    pub duration_ms: u64,
    /// A screenshot of the page when the action failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<String>,
    /// What was handled along the way.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub handled: Vec<Handled>,
    /// What happened to the session since its last action (recreated
    /// after a crash).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
}

/// How an attempt stopped early: a typed failure of the action, or a
/// request the caller got wrong (answered with a 4xx, not a result).
#[derive(Debug)]
pub(crate) enum Stop {
    Fail(Failure),
    Request(BrowserError),
}

pub(crate) type Step<T> = std::result::Result<T, Stop>;

pub(crate) fn fail(code: Code, message: impl Into<String>) -> Stop {
    Stop::Fail(Failure {
        code,
        message: message.into(),
    })
}

impl From<BrowserError> for Stop {
    fn from(e: BrowserError) -> Stop {
        match e {
            BrowserError::Invalid { .. }
            | BrowserError::Forbidden { .. }
            | BrowserError::Config(_)
            | BrowserError::Unsupported(_) => Stop::Request(e),
            BrowserError::StaleRef(m) => fail(Code::Detached, m),
            BrowserError::DialogOpen(m) => fail(Code::Dialog, m),
            BrowserError::Timeout(m) => fail(Code::Timeout, m),
            BrowserError::Missing(m) => fail(Code::NotFound, m),
            BrowserError::Cdp(m) => cdp_failure(&m),
            other => fail(Code::Crashed, other.to_string()),
        }
    }
}

/// Maps a DevTools error met mid-action to what it means for the action.
fn cdp_failure(message: &str) -> Stop {
    let m = message.to_ascii_lowercase();
    if m.contains("no node") || m.contains("could not find node") || m.contains("not belong") {
        fail(
            Code::Detached,
            format!("the element left the page: {message}"),
        )
    } else if m.contains("context") || m.contains("navigat") {
        fail(
            Code::Navigation,
            format!("a navigation interrupted the action: {message}"),
        )
    } else {
        fail(
            Code::Crashed,
            format!("the page stopped answering: {message}"),
        )
    }
}

/// The tab an action runs in, with what the engine needs of it.
pub struct Tab<'a> {
    /// The browser.
    pub manager: &'a Manager,
    /// The tab's target id.
    pub target_id: &'a str,
    /// Its page session: input, navigation and page-wide commands.
    pub page: &'a Page,
    /// Where the action's elements live: the page, or the out-of-process
    /// frame the action's target is scoped to (the engine enters it).
    pub dom: Dom<'a>,
    /// Its dialog and network watcher.
    pub events: &'a TabEvents,
    /// Where screenshots of failures (and `screenshot`/`pdf`) are written.
    pub artifacts: PathBuf,
    /// The session it belongs to, for logs.
    pub session: Option<&'a str>,
    /// The page's cookie-banner watcher, when it has one.
    pub consent: Option<&'a crate::consent::Consent>,
}

impl Tab<'_> {
    /// The same tab, its elements looked up in `frame`.
    fn in_frame<'b>(&'b self, frame: &'b FrameSession) -> Tab<'b> {
        Tab {
            manager: self.manager,
            target_id: self.target_id,
            page: self.page,
            dom: Dom::Frame(frame),
            events: self.events,
            artifacts: self.artifacts.clone(),
            session: self.session,
            consent: self.consent,
        }
    }

    /// Waits (until `deadline`, at most a few seconds) for a cookie banner
    /// being declined to be answered: clicking through it would be
    /// answering it.
    pub(crate) async fn clear_banners(&self, deadline: Instant) {
        if let Some(consent) = self.consent {
            let left = deadline.saturating_duration_since(Instant::now());
            consent.settled(left.min(CONSENT_WAIT)).await;
        }
    }
}

/// The longest an action waits for a cookie banner to be declined.
const CONSENT_WAIT: Duration = Duration::from_secs(3);

/// Runs `request` in `tab`: a result for every action attempted, an error
/// only for a request that cannot be attempted (4xx).
pub async fn run(tab: &Tab<'_>, request: &Request) -> crate::Result<Outcome> {
    let started = Instant::now();
    let span = tracing::info_span!(
        "action",
        action = request.verb.name(),
        session = tab.session.unwrap_or("-"),
        target = tab.target_id
    );
    let mut attempt = Attempt::default();
    if let Some(consent) = tab.consent {
        consent.begin();
    }
    let done = run_verb(tab, request, &mut attempt)
        .instrument(span.clone())
        .await;
    // A request refused has no result: what was handled waits for the
    // next action's.
    if let Err(Stop::Request(e)) = done {
        if let Some(consent) = tab.consent {
            consent.end();
        }
        return Err(e);
    }
    // A banner the rules were answering as the action ended (its button
    // pressed, the rule still checking) belongs in this action's result.
    tab.clear_banners(Instant::now() + CONSENT_WAIT).await;
    let handled = tab
        .events
        .take_handled()
        .into_iter()
        .map(|d| Handled {
            kind: "dialog",
            detail: format!(
                "{} \"{}\" {}",
                d.kind,
                d.message,
                d.outcome.unwrap_or("answered")
            ),
            ..Handled::default()
        })
        .chain(tab.consent.map(|c| c.take_handled()).unwrap_or_default())
        .chain(attempt.handled)
        .collect();
    let (data, error) = match done {
        Ok(data) => (data, None),
        Err(Stop::Request(e)) => return Err(e),
        Err(Stop::Fail(f)) => (None, Some(f)),
    };
    // A page a dialog blocks (or that crashed) cannot be captured.
    let screenshot = match &error {
        Some(f) if !matches!(f.code, Code::Crashed | Code::Dialog) => failure_screenshot(tab).await,
        _ => None,
    };
    let outcome = Outcome {
        ok: error.is_none(),
        data,
        error,
        retries: attempt.retries,
        duration_ms: started.elapsed().as_millis() as u64,
        screenshot,
        handled,
        notices: Vec::new(),
    };
    tab.manager.metrics().action(
        request.verb.name(),
        outcome.error.as_ref().map_or("ok", |e| e.code.as_str()),
        outcome.retries,
        started.elapsed(),
    );
    tracing::info!(
        parent: &span,
        ok = outcome.ok,
        code = outcome.error.as_ref().map(|e| e.code.as_str()),
        retries = outcome.retries,
        ms = outcome.duration_ms,
        "action done"
    );
    Ok(outcome)
}

/// What one action accumulates while it runs.
#[derive(Debug, Default)]
pub(crate) struct Attempt {
    pub retries: u32,
    pub handled: Vec<Handled>,
    /// Popups the watchdog dealt with.
    pub popups: u32,
    /// When a cookie banner left to the fallback was first seen covering
    /// the target.
    pub banner_since: Option<Instant>,
    /// The labels of the banner controls the fallback pressed, for the
    /// banner it is declining.
    pub pressed: Vec<String>,
    /// Labels of banner controls pressed already (never pressed again).
    pub tried: Vec<String>,
    /// How many banner controls the fallback pressed.
    pub presses: u32,
    /// What the last answering control it pressed chose (`reject`,
    /// `necessary`, `save`).
    pub choice: Option<String>,
}

async fn run_verb(tab: &Tab<'_>, request: &Request, attempt: &mut Attempt) -> Step<Option<Value>> {
    let deadline = Instant::now() + request.timeout;
    let mut opened = tab.events.dialog_opened();
    if let Some(d) = tab.events.pending() {
        return Err(fail(
            Code::Dialog,
            format!(
                "a {} dialog (\"{}\") waits for an answer",
                d.kind, d.message
            ),
        ));
    }
    // A target in a frame from another site: its elements are reached
    // through the frame's own session for the whole action.
    let entered = target::enter(tab, &request.verb, deadline).await?;
    let framed = entered.as_deref().map(|frame| tab.in_frame(frame));
    let tab = framed.as_ref().unwrap_or(tab);
    let work = async {
        tab.clear_banners(deadline).await;
        match &request.verb {
            Verb::Navigate { url } => navigate::to(tab, url, deadline).await,
            Verb::Reload => navigate::reload(tab, deadline).await,
            Verb::Back => navigate::history(tab, -1, deadline).await,
            Verb::Forward => navigate::history(tab, 1, deadline).await,
            Verb::Click(click) => pointer::click(tab, click, deadline, attempt).await,
            Verb::Hover(aim) => pointer::hover(tab, aim, deadline, attempt).await,
            Verb::Drag { from, to } => pointer::drag(tab, from, to, deadline, attempt).await,
            Verb::Type {
                aim,
                text,
                clear,
                slowly,
            } => forms::type_text(tab, aim, text, *clear, *slowly, deadline, attempt).await,
            Verb::Fill(fields) => forms::fill(tab, fields, deadline, attempt).await,
            Verb::Select { aim, values } => {
                forms::select(tab, aim, values, deadline, attempt).await
            }
            Verb::Check { aim, on } => forms::check(tab, aim, *on, deadline, attempt).await,
            Verb::Upload { aim, paths } => forms::upload(tab, aim, paths, deadline, attempt).await,
            Verb::Scroll {
                aim,
                direction,
                amount,
            } => navigate::scroll(tab, aim.as_ref(), *direction, *amount, deadline, attempt).await,
            Verb::Wait(condition) => navigate::wait(tab, condition, deadline).await,
            Verb::ExtractText(aim) => read::text(tab, aim.as_ref(), deadline, attempt).await,
            Verb::ExtractAll { aim, attrs } => read::all_items(tab, aim, attrs, deadline).await,
            Verb::Content => read::content(tab).await,
            Verb::Screenshot { full_page } => read::screenshot(tab, *full_page).await,
            Verb::Pdf => read::pdf(tab).await,
            Verb::Evaluate { script } => read::evaluate(tab, script).await,
        }
    };
    // An open dialog stalls the page's JavaScript: never wait on it.
    let result = tokio::select! {
        result = work => result,
        _ = dialog_waits(tab.events, &mut opened) => {
            let d = tab.events.pending();
            Err(fail(
                Code::Dialog,
                match d {
                    Some(d) => format!("a {} dialog (\"{}\") opened and waits for an answer", d.kind, d.message),
                    None => "a dialog opened and waits for an answer".into(),
                },
            ))
        }
    };
    if tab.events.pending().is_none() {
        let _ = crate::cdp::page_call_with(
            tab.page,
            "Runtime.releaseObjectGroup",
            json!({ "objectGroup": GROUP }),
            Duration::from_secs(1),
        )
        .await;
    }
    result
}

/// Resolves once a dialog is left open for a person (one the session's
/// policy answers does not count).
async fn dialog_waits(events: &TabEvents, opened: &mut tokio::sync::watch::Receiver<u64>) {
    loop {
        if opened.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
        if events.pending().is_some() {
            return;
        }
    }
}

/// The object group every handle an action makes belongs to, released
/// when it ends.
pub(crate) const GROUP: &str = "clawd-action";

/// A screenshot of the viewport, saved under the artifacts directory.
async fn failure_screenshot(tab: &Tab<'_>) -> Option<String> {
    match tokio::time::timeout(SHOT_TIMEOUT, read::save_screenshot(tab, false)).await {
        Ok(Ok(path)) => Some(path),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "failure screenshot");
            None
        }
        Err(_) => {
            tracing::warn!("failure screenshot timed out");
            None
        }
    }
}

/// The longest a failure's screenshot may take.
const SHOT_TIMEOUT: Duration = Duration::from_secs(3);
