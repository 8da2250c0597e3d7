//! Resuming paused workflow runs.

use std::path::PathBuf;
use std::sync::Arc;

use crate::context::Ctx;
use crate::envelope::Envelope;
use crate::error::{Error, Failure, Result};
use crate::exec::login_env::LoginSession;
use crate::pause::{Intent, as_shown, claim, decision_for, pending, stopped};
use crate::schema::Schema;
use crate::value::{Object, Value};

use crate::workflow::file::{self, OnExpiry, Workflow};
use crate::workflow::pause_for;
use crate::workflow::{PipelineInput, PipelineResume, Run, check_identity, resolve_workflow_args};

const NOT_FOUND: &str = "Workflow resume state not found";

/// An expired gate's deadline and outcome.
struct Expiry {
    at: String,
    outcome: OnExpiry,
}

/// The gate's expiry, if it has one that has passed and the caller is not
/// the expiry itself.
fn expired(state: &Value, ctx: &Ctx) -> Option<Expiry> {
    if ctx
        .decider
        .as_ref()
        .is_some_and(|d| d.via == clawdis_store::Channel::Expiry)
    {
        return None;
    }
    let identity = state.get_key("approvalIdentity")?;
    let at = identity.get_key("expiresAt")?.as_str()?.to_string();
    if at.as_str() > clawdis_store::now_iso().as_str() {
        return None;
    }
    let outcome = on_expiry(identity);
    Some(Expiry { at, outcome })
}

fn on_expiry(identity: &Value) -> OnExpiry {
    match identity.get_key("onExpiry").and_then(Value::as_str) {
        Some("approve") => OnExpiry::Approve,
        Some("deny") => OnExpiry::Deny,
        _ => OnExpiry::Cancel,
    }
}

/// `ctx` deciding as the expiry: the policy's outcome, recorded as
/// decided by `expiry`.
fn expiry_ctx(ctx: &Ctx) -> Ctx {
    let mut expiry = ctx.clone();
    expiry.decider = Some(crate::context::Decider {
        by: Some("expiry".to_string()),
        via: clawdis_store::Channel::Expiry,
        presence: None,
        seen: None,
        comment: None,
    });
    expiry
}

/// Decides the expired gate of run `state_key` as its policy says
/// (`on_expiry`), as the expiry; a run no longer waiting is left alone.
pub async fn expire_stored(state_key: &str, ctx: &Ctx) -> Envelope {
    let row = match ctx.state.store().await {
        Ok(store) => match store.get_run(state_key).await {
            Ok(row) => row,
            Err(e) => return Error::from(e).into(),
        },
        Err(e) => return e.into(),
    };
    expire_run(state_key, row, Arc::default(), &expiry_ctx(ctx)).await
}

async fn expire_run(
    state_key: &str,
    row: Option<clawdis_store::Run>,
    login: Arc<LoginSession>,
    ctx: &Ctx,
) -> Envelope {
    let outcome = row
        .as_ref()
        .and_then(|r| Value::from_json(&r.state_json).ok())
        .and_then(|s| s.get_key("approvalIdentity").map(on_expiry))
        .unwrap_or_default();
    let intent = match outcome {
        OnExpiry::Approve => Intent::Approve(true),
        OnExpiry::Deny => Intent::Approve(false),
        OnExpiry::Cancel => Intent::Cancel,
    };
    resume_stored(state_key, row, login, intent, ctx).await
}

/// Refuses to approve a gate whose policy is `approvers: human` unless the
/// decider shows a person is there ([`crate::context::Decider::presence`]),
/// and a gate with `presence: verified` unless that is a passkey or the
/// operating system's check. Denying and cancelling stay open to anyone who
/// may resume: they only stop the run. The expiry decides as the policy says.
fn needs_a_person(state: &Value, intent: &Intent, ctx: &Ctx) -> Result<()> {
    use clawdis_store::Presence;
    let identity = state.get_key("approvalIdentity");
    let policy = |key: &str| {
        identity
            .and_then(|i| i.get_key(key))
            .and_then(Value::as_str)
    };
    let verified = policy("presence") == Some("verified");
    let human_gate = verified || policy("approvers") == Some("human");
    let decider = ctx.decider.as_ref();
    let expiry = decider.is_some_and(|d| d.via == clawdis_store::Channel::Expiry);
    if !human_gate || expiry || !matches!(intent, Intent::Approve(true)) {
        return Ok(());
    }
    let presence = decider.and_then(|d| d.presence);
    let shown = match presence {
        Some(Presence::Passkey | Presence::Os) => true,
        Some(Presence::Click | Presence::Token) => !verified,
        None => false,
    };
    if shown {
        return Ok(());
    }
    let step = state
        .get_key("approvalStepId")
        .map(Value::to_js_string)
        .unwrap_or_default();
    let message = match (verified, presence) {
        (true, Some(p)) => format!(
            "Workflow step {step} needs a verified person (presence: verified): a {} is not enough; \
             approve it with a paired device's passkey or the operating system's check (Touch ID). \
             Anyone may deny or cancel it",
            p.as_str()
        ),
        (true, None) => format!(
            "Workflow step {step} needs a verified person (presence: verified): approve it with a paired \
             device's passkey or the operating system's check (Touch ID); lobster resume, a link by \
             itself, agent tokens and the owner token cannot approve it. Anyone may deny or cancel it"
        ),
        (false, _) => format!(
            "Workflow step {step} needs a person's approval (approvers: human): approve it in the Clawdis \
             app or its notification; without the app, with a paired device's passkey in the inbox \
             (pair one with `clawdis devices pair`, then open /inbox on it), or with an approver token \
             a person confirmed there (POST /approvals/{{id}}); lobster resume, a link by itself, agent \
             tokens and the owner token cannot approve it. Anyone may deny or cancel it"
        ),
    };
    Err(Error::failed(Failure::NotAllowed, message))
}

/// Refuses an approval by the principal that started the run when the
/// gate says `forbid_self_approval`. Who started it is the service's
/// record of the credential that did; who approves is the decider's
/// credential, so `lobster resume`, which has none, cannot approve such a
/// gate (nor, then, the agent whose `lobster` process started the run).
async fn not_by_the_starter(
    state: &Value,
    row: &clawdis_store::Run,
    intent: &Intent,
    ctx: &Ctx,
) -> Result<()> {
    let forbidden = state
        .get_key("approvalIdentity")
        .and_then(|i| i.get_key("forbidSelfApproval"))
        == Some(&Value::Bool(true));
    let expiry = ctx
        .decider
        .as_ref()
        .is_some_and(|d| d.via == clawdis_store::Channel::Expiry);
    if !forbidden || expiry || *intent != Intent::Approve(true) {
        return Ok(());
    }
    let started_by = match &row.run_id {
        Some(run_id) => ctx
            .state
            .store()
            .await?
            .get_history(run_id)
            .await?
            .map(|h| h.started_by),
        None => None,
    };
    let decider = ctx.decider.as_ref().and_then(|d| d.by.as_deref());
    let refusal = match (decider, started_by.as_deref()) {
        (None, _) => "lobster resume cannot approve it: approve it in the Clawdis app or with \
             another principal's token over HTTP (POST /approvals/{id}/approve)"
            .to_string(),
        (Some(by), Some(starter)) if by == starter => format!(
            "{by} started this run and may not approve it: another principal must (the Clawdis \
             app, or another token over HTTP)"
        ),
        _ => return Ok(()),
    };
    Err(Error::failed(
        Failure::NotAllowed,
        format!("this gate forbids self-approval (forbid_self_approval: true); {refusal}"),
    ))
}

/// Counts this approval toward a gate that needs `minApprovals` distinct
/// approvers. Until the last one, the run keeps waiting and the answer is
/// its `needs_approval` envelope with the count so far; the approval that
/// reaches the count goes on to claim the run (`None`).
async fn count_approval(
    state: &Value,
    row: &clawdis_store::Run,
    decided: &clawdis_store::Decided,
    ctx: &Ctx,
) -> Result<Option<Envelope>> {
    if ctx
        .decider
        .as_ref()
        .is_some_and(|d| d.via == clawdis_store::Channel::Expiry)
    {
        // The policy's own outcome: it needs no count.
        return Ok(None);
    }
    let Some(min) = state
        .get_key("approvalIdentity")
        .and_then(|i| i.get_key("minApprovals"))
        .map(Value::to_number)
        .filter(|n| *n > 1.0)
    else {
        return Ok(None);
    };
    // Distinct approvers are told apart by their credentials (the app's
    // person, a token), never by LOBSTER_APPROVAL_APPROVED_BY, which anyone
    // may set.
    let approver = ctx
        .decider
        .as_ref()
        .and_then(|d| d.by.clone())
        .filter(|b| !b.trim().is_empty());
    let Some(approver) = approver else {
        return Err(Error::failed(
            Failure::NotAllowed,
            format!(
                "this gate needs {min} distinct approvers, told apart by their credentials: \
                 approve it in the Clawdis app or with a token over HTTP (POST /approvals/{{id}}/approve), \
                 not with lobster resume"
            ),
        ));
    };
    let store = ctx.state.store().await?;
    let counted = store.add_vote(&row.state_key, &approver, decided).await?;
    let count = match counted {
        clawdis_store::Counted::Now(n) => f64::from(n),
        clawdis_store::Counted::Again => {
            return Err(Error::failed(
                Failure::Again,
                format!("{approver} has approved this already; it needs {min} distinct approvers"),
            ));
        }
        clawdis_store::Counted::Closed => return Err(Error::runtime(NOT_FOUND)),
    };
    if count >= min {
        return Ok(None);
    }
    let Ok(Value::Object(mut request)) = Value::from_json(&row.request_json) else {
        return Err(Error::runtime("Invalid workflow resume state"));
    };
    request.insert("approvals", Value::from(count));
    Ok(Some(Envelope::needs_approval(Value::Object(request))))
}

/// A stored mid-pipeline input request, if the state holds one.
fn pipeline_input(state: &Value) -> Option<PipelineInput> {
    if state.get_key("inputKind").and_then(Value::as_str) != Some("pipeline_command") {
        return None;
    }
    let pi = state.get_key("pipelineInput")?;
    Some(PipelineInput {
        pipeline: pi
            .get_key("pipeline")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        resume_at: pi
            .get_key("resumeAtIndex")
            .map_or(0.0, Value::to_number)
            .max(0.0) as usize,
        items: pi
            .get_key("items")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
    })
}

/// [`needs_a_person`], with a refusal recorded in the ledger: who tried,
/// through which channel.
async fn needs_a_person_recorded(
    state: &Value,
    row: &clawdis_store::Run,
    intent: &Intent,
    ctx: &Ctx,
) -> Result<()> {
    let Err(refused) = needs_a_person(state, intent, ctx) else {
        return Ok(());
    };
    let decided = decision_for(intent, ctx);
    let entry = clawdis_store::NewAuditEntry {
        kind: "gate.refused".into(),
        subject: row.audit_subject(),
        // lobster resume names no one it can prove: what it says is kept
        // as what it said.
        by: Some(match (&ctx.decider, decided.decided_by) {
            (Some(_), Some(by)) => by,
            (Some(d), None) => d.via.as_str().to_string(),
            (None, Some(said)) => format!("lobster resume (says {said})"),
            (None, None) => "lobster resume".to_string(),
        }),
        via: Some(decided.decided_via.as_str().to_string()),
        presence: None,
        digest: None,
    };
    if let Err(e) = ctx.state.store().await?.record_audit(&entry).await {
        tracing::warn!(error = %e, "recording a refused decision in the ledger");
    }
    Err(refused)
}

/// Validates the intent against the state and applies the decision to the
/// step results. Errors here leave the token usable.
fn apply_decision(state: &Value, intent: &Intent, ctx: &Ctx) -> Result<Object> {
    let mut results = state
        .get_key("steps")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if let Some(step_id) = state.get_key("approvalStepId").and_then(Value::as_str) {
        match intent {
            Intent::Respond(_) => {
                return Err(Error::parse(
                    "Workflow resume requires --approve yes|no for approval requests",
                ));
            }
            Intent::Approve(true) => {
                let approved_by = ctx
                    .env_var("LOBSTER_APPROVAL_APPROVED_BY")
                    .map(str::trim)
                    .filter(|s| !s.is_empty());
                let identity = state.get_key("approvalIdentity");
                check_identity(step_id, identity, approved_by)?;
                let mut r = results
                    .get(step_id)
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_else(|| Object::from_iter([("id", Value::from(step_id))]));
                r.insert("approved", Value::Bool(true));
                if let Some(by) = approved_by {
                    r.insert("approvedBy", Value::from(by));
                }
                results.insert(step_id, Value::Object(r));
            }
            _ => {}
        }
    } else if let Some(step_id) = state.get_key("inputStepId").and_then(Value::as_str) {
        match intent {
            Intent::Approve(_) => {
                return Err(Error::parse(
                    "Workflow resume requires --response-json for input requests",
                ));
            }
            Intent::Respond(response) => {
                if let Some(schema) = state
                    .get_key("inputSchema")
                    .filter(|s| matches!(s, Value::Object(_)))
                {
                    let schema = Schema::compile(schema).map_err(Error::runtime)?;
                    schema.validate(response).map_err(|e| {
                        Error::parse(format!(
                            "Workflow input step {step_id} response failed schema validation at {}: {}",
                            e.path, e.message
                        ))
                    })?;
                }
                if pipeline_input(state).is_some() {
                    return Ok(results);
                }
                let mut r = results
                    .get(step_id)
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_else(|| Object::from_iter([("id", Value::from(step_id))]));
                r.insert(
                    "subject",
                    state.get_key("inputSubject").cloned().unwrap_or_default(),
                );
                r.insert("response", response.clone());
                r.remove("skipped");
                results.insert(step_id, Value::Object(r));
            }
            _ => {}
        }
    }
    Ok(results)
}

/// Refuses to go on when a program file the remaining steps run changed
/// since the pause (see [`crate::workflow::programs`]).
fn programs_unchanged(state: &Value) -> Result<()> {
    match state.get_key("programs") {
        Some(Value::Object(bound)) => crate::workflow::programs::check(bound),
        _ => Ok(()),
    }
}

/// The workflow file a state names, as it is now.
fn state_file(state: &Value) -> PathBuf {
    PathBuf::from(
        state
            .get_key("filePath")
            .map(Value::to_js_string)
            .unwrap_or_default(),
    )
}

/// The workflow a stored state paused in: the definition it kept (the
/// text the person was shown the gate of), never the file as edited
/// since; a state kept before definitions were, the file.
fn load_workflow(state: &Value) -> Result<Workflow> {
    match state.get_key("definition").and_then(Value::as_str) {
        Some(text) => file::parse(text, &state_file(state)),
        None => file::load(&state_file(state)),
    }
}

/// Continues a run of `workflow` after its gate; returns the envelope and a
/// next pause row.
async fn continue_run(
    state: &Value,
    workflow: Result<Workflow>,
    results: Object,
    login: Arc<LoginSession>,
    intent: &Intent,
    ctx: &Ctx,
) -> Result<(Envelope, Option<clawdis_store::NewRun>)> {
    let workflow = workflow?;
    let provided = state.get_key("args").cloned().unwrap_or_default();
    let args = resolve_workflow_args(&workflow, &provided);
    let gate_step = state
        .get_key("approvalStepId")
        .or_else(|| state.get_key("inputStepId"))
        .map(Value::to_js_string);
    let start = state
        .get_key("resumeAtIndex")
        .map_or(0.0, Value::to_number)
        .max(0.0) as usize;
    let mut run = Run {
        workflow: &workflow,
        args,
        results,
        last: gate_step,
        stack: vec![
            std::fs::canonicalize(&workflow.path).unwrap_or_else(|_| workflow.path.clone()),
        ],
        pipeline_resume: None,
        login,
    };
    if let (Some(journal), Some(step_id), None) = (
        &ctx.journal,
        state.get_key("inputStepId").and_then(Value::as_str),
        pipeline_input(state),
    ) && let Some(position) = workflow.steps.iter().position(|s| s.id == step_id)
    {
        // The input step is its gate: the response is its output.
        journal.started(position, step_id);
        journal.attempt(position, step_id);
        let output = run.results.get(step_id).cloned().unwrap_or_default();
        journal.finished(position, step_id, Ok(&output));
    }
    if let (Some(input), Intent::Respond(response), Some(step_id)) = (
        pipeline_input(state),
        intent,
        state.get_key("inputStepId").and_then(Value::as_str),
    ) {
        run.pipeline_resume = Some(PipelineResume {
            step_id: step_id.to_string(),
            input,
            response: response.clone(),
        });
    }
    let outcome = run.run_from(start, ctx).await?;
    match pause_for(&workflow, &run, outcome) {
        Ok(envelope) => Ok((envelope, None)),
        Err(pause) => {
            let (row, envelope) = pause.prepare(ctx).await?;
            Ok((envelope, Some(row)))
        }
    }
}

/// Resumes the workflow run stored under `state_key`; `row` is its record
/// as the caller read it, and `login` the session its steps will run in.
pub async fn resume_stored(
    state_key: &str,
    row: Option<clawdis_store::Run>,
    login: Arc<LoginSession>,
    intent: Intent,
    ctx: &Ctx,
) -> Envelope {
    match resume_stored_inner(state_key, row, login, intent, ctx).await {
        Ok(env) => env,
        Err(e) => e.into(),
    }
}

async fn resume_stored_inner(
    state_key: &str,
    row: Option<clawdis_store::Run>,
    login: Arc<LoginSession>,
    intent: Intent,
    ctx: &Ctx,
) -> Result<Envelope> {
    let Some(row) = pending(row) else {
        return Err(Error::runtime(if intent == Intent::Cancel {
            "Resume state not found"
        } else {
            NOT_FOUND
        }));
    };
    let state = Value::from_json(&row.state_json)
        .map_err(|_| Error::runtime("Invalid workflow resume state"))?;
    if let Some(expiry) = expired(&state, ctx) {
        // Too late: the policy decides, as the backend would have.
        let at = expiry.at.clone();
        let outcome = expiry.outcome;
        let expiry_ctx = expiry_ctx(ctx);
        let envelope = Box::pin(expire_run(state_key, Some(row), login, &expiry_ctx)).await;
        tracing::info!(state_key, ?envelope, "expired gate decided by expiry");
        return Err(Error::failed(
            Failure::NotAllowed,
            format!(
                "the approval expired at {at}; on_expiry: {} was applied",
                outcome.as_str()
            ),
        ));
    }
    // A program file changed since the pause refuses the decision and
    // leaves the gate waiting: nothing is claimed, counted or recorded.
    if !matches!(intent, Intent::Cancel | Intent::Approve(false)) {
        programs_unchanged(&state)?;
    }
    let shown = as_shown(&row, &intent, ctx)?;
    needs_a_person_recorded(&state, &row, &intent, ctx).await?;
    let results = apply_decision(&state, &intent, ctx)?;
    not_by_the_starter(&state, &row, &intent, ctx).await?;
    let mut decided = decision_for(&intent, ctx);
    decided.digest = Some(shown);
    if intent == Intent::Approve(true)
        && let Some(waiting) = count_approval(&state, &row, &decided, ctx).await?
    {
        return Ok(waiting);
    }
    let proceeds = !matches!(intent, Intent::Cancel | Intent::Approve(false));
    // The workflow file is read while SQLite's thread records the claim; a
    // failure to read it ends the claimed run, as it did when read after.
    let (claimed, workflow) = tokio::join!(biased; claim(ctx, state_key, decided, NOT_FOUND), async {
        proceeds.then(|| load_workflow(&state))
    });
    let claimed = claimed?;
    let ctx = &claimed.journaled(ctx);
    let Some(workflow) = workflow else {
        return claimed.finish(ctx, stopped(&intent, ctx), None).await;
    };
    let (envelope, next) = match continue_run(&state, workflow, results, login, &intent, ctx).await
    {
        Ok(done) => done,
        Err(e) => (Envelope::from(e), None),
    };
    claimed.finish(ctx, envelope, next).await
}

/// Resumes a legacy token that carries the whole state inline.
pub async fn resume_inline(payload: Value, intent: Intent, ctx: &Ctx) -> Envelope {
    let run = async {
        // An inline token carries its own state, so whoever holds one could
        // write any: a file whose gates have a policy (a person, several
        // approvers, an expiry) is never resumed from one.
        // Its holder wrote the state: the file is read, never a definition
        // the token carries.
        if let Ok(workflow) = file::load(&state_file(&payload))
            && workflow
                .steps
                .iter()
                .any(|s| s.approval.as_ref().is_some_and(file::Approval::has_policy))
        {
            return Err(Error::failed(
                Failure::NotAllowed,
                "this workflow has gates with an approval policy (approvers, min_approvals or \
                 expires_in), which need a person's decision or the backend's; it cannot be \
                 resumed from an inline token",
            ));
        }
        if matches!(intent, Intent::Cancel | Intent::Approve(false)) {
            return Ok(Envelope::cancelled());
        }
        programs_unchanged(&payload)?;
        needs_a_person(&payload, &intent, ctx)?;
        let results = apply_decision(&payload, &intent, ctx)?;
        let (envelope, next) = continue_run(
            &payload,
            file::load(&state_file(&payload)),
            results,
            Arc::default(),
            &intent,
            ctx,
        )
        .await?;
        if let Some(row) = next {
            ctx.state.store().await?.insert_run(&row).await?;
        }
        Ok::<_, Error>(envelope)
    };
    run.await.unwrap_or_else(Envelope::from)
}
