//! Approval and input gates: where a run pauses, the request it shows, the
//! approver identity rules, the envelope size limit, and asking on a
//! terminal in human mode.

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::value::{Object, Value, is_js_space};

use super::file::{self, Step};

/// Where a run paused.
#[derive(Debug)]
pub enum Gate {
    /// At an approval gate: the request block and the identity to check on resume.
    Approval {
        /// The step id.
        step_id: String,
        /// `{type, prompt, items, preview?, initiatedBy?, ...}`.
        request: Object,
        /// `{initiatedBy?, requiredApprover?, requireDifferentApprover?}`.
        identity: Object,
    },
    /// At an `ask` stage inside a pipeline step.
    PipelineInput {
        /// The step id.
        step_id: String,
        /// `{type, prompt, responseSchema, defaults?, subject?}`.
        request: Object,
        /// The subject shown with the request.
        subject: Option<Value>,
        /// Where the pipeline resumes.
        input: PipelineInput,
    },
    /// At an input gate.
    Input {
        /// The step id.
        step_id: String,
        /// `{type, prompt, responseSchema, defaults?, subject?}`.
        request: Object,
        /// The subject shown with the request.
        subject: Option<Value>,
    },
}

/// An `ask` stage inside a pipeline step asked for input: the step is
/// resumed with the response at that stage.
#[derive(Debug, Clone)]
pub struct PipelineInput {
    /// Stored stages of the pipeline (`{name, args, raw}` records).
    pub pipeline: Vec<Value>,
    /// Index of the stage that asked.
    pub resume_at: usize,
    /// The items that stage had received.
    pub items: Vec<Value>,
}

/// What a resumed pipeline step continues with.
#[derive(Debug, Clone)]
pub struct PipelineResume {
    /// The step being resumed.
    pub step_id: String,
    /// Where inside it.
    pub input: PipelineInput,
    /// The response for the asking stage.
    pub response: Value,
}

/// `{initiatedBy?, requiredApprover?, requireDifferentApprover?}` read from
/// a step's output (`initiatedBy` or `initiated_by`, ...).
pub(super) fn identity_from(raw: &Object) -> Object {
    let text = |a: &str, b: &str| {
        raw.get(a)
            .or_else(|| raw.get(b))
            .map(Value::to_js_string)
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    let mut out = Object::new();
    if let Some(i) = text("initiatedBy", "initiated_by") {
        out.insert("initiatedBy", Value::from(i));
    }
    if let Some(r) = text("requiredApprover", "required_approver") {
        out.insert("requiredApprover", Value::from(r));
    }
    if raw
        .get("requireDifferentApprover")
        .or_else(|| raw.get("require_different_approver"))
        == Some(&Value::Bool(true))
    {
        out.insert("requireDifferentApprover", Value::Bool(true));
    }
    out
}

/// Builds the approval request and the identity rules for a gate step.
pub(super) fn approval_request(
    step: &Step,
    cfg: &file::Approval,
    step_result: &Value,
    ctx: &Ctx,
) -> (Object, Object) {
    let env_text = |name: &str| {
        ctx.env_var(name)
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    let mut identity = Object::new();
    if let Some(i) = cfg
        .initiated_by
        .clone()
        .filter(|s| !s.trim().is_empty())
        .or_else(|| env_text("LOBSTER_APPROVAL_INITIATED_BY"))
    {
        identity.insert("initiatedBy", Value::from(i.trim()));
    }
    if let Some(r) = cfg
        .required_approver
        .clone()
        .filter(|s| !s.trim().is_empty())
        .or_else(|| env_text("LOBSTER_APPROVAL_REQUIRED_APPROVER"))
    {
        identity.insert("requiredApprover", Value::from(r.trim()));
    }
    let env_different = env_text("LOBSTER_APPROVAL_REQUIRE_DIFFERENT_APPROVER")
        .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "y"));
    if cfg.require_different_approver == Some(true) || env_different {
        identity.insert("requireDifferentApprover", Value::Bool(true));
    }

    let mut request = Object::new();
    request.insert("type", Value::from("approval_request"));
    if cfg.approvers == file::Approvers::Human {
        identity.insert("approvers", Value::from("human"));
    }
    if cfg.verified {
        identity.insert("presence", Value::from("verified"));
    }
    if cfg.min_approvals > 1 {
        identity.insert("minApprovals", Value::from(f64::from(cfg.min_approvals)));
    }
    if cfg.forbid_self_approval {
        identity.insert("forbidSelfApproval", Value::Bool(true));
    }
    if let Some(secs) = cfg.expires_in {
        let at = chrono::Utc::now() + chrono::Duration::seconds(secs.min(i64::MAX as u64) as i64);
        identity.insert(
            "expiresAt",
            Value::from(at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
        );
        identity.insert("onExpiry", Value::from(cfg.on_expiry.as_str()));
    }
    let json = step_result.get_key("json");
    let from_output = json.and_then(Value::as_object).and_then(|o| {
        let nested = o
            .get("requiresApproval")
            .and_then(Value::as_object)
            .filter(|r| r.get("prompt").is_some_and(Value::truthy));
        nested.or_else(|| Some(o).filter(|o| o.get("prompt").is_some_and(Value::truthy)))
    });
    if let Some(src) = from_output {
        for (k, v) in identity_from(src).iter() {
            identity.insert(k, v.clone());
        }
        request.insert("prompt", src.get("prompt").cloned().unwrap_or_default());
        request.insert(
            "items",
            src.get("items")
                .filter(|v| !matches!(v, Value::Null))
                .cloned()
                .unwrap_or(Value::Array(Vec::new())),
        );
        if let Some(p) = src.get("preview").filter(|p| p.truthy()) {
            request.insert("preview", p.clone());
        }
    } else {
        request.insert(
            "prompt",
            Value::from(
                cfg.prompt
                    .clone()
                    .unwrap_or_else(|| format!("Approve {}?", step.id)),
            ),
        );
        let items = cfg.items.clone().unwrap_or_else(|| match json {
            None => Value::Array(Vec::new()),
            Some(Value::Array(a)) => Value::Array(a.clone()),
            Some(other) => Value::Array(vec![other.clone()]),
        });
        request.insert("items", items);
        let stdout = step_result
            .get_key("stdout")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let from_result = stdout
            .map(str::to_string)
            .or_else(|| json.map(serialize_for_stdout))
            .map(|s| {
                s.trim_matches(is_js_space)
                    .encode_utf16()
                    .take(2000)
                    .collect::<Vec<u16>>()
            })
            .map(|u| String::from_utf16_lossy(&u));
        if let Some(p) = cfg
            .preview
            .clone()
            .or(from_result)
            .filter(|p| !p.is_empty())
        {
            request.insert("preview", Value::from(p));
        }
    }
    for (k, v) in identity.iter() {
        request.insert(k, v.clone());
    }
    (request, identity)
}

/// Default `LOBSTER_MAX_TOOL_ENVELOPE_BYTES`.
const DEFAULT_ENVELOPE_MAX_BYTES: usize = 512_000;

/// Subjects larger than this are replaced by a preview.
const MAX_SUBJECT_BYTES: usize = 192_000;

/// Keeps a `needs_input` envelope under the size limit by truncating, then
/// omitting, the subject; fails when even that is too big.
pub(super) fn fit_input_request(
    mut request: Object,
    subject: Option<Value>,
    id: &str,
    ctx: &Ctx,
) -> Result<Object> {
    let max = ctx
        .env_var("LOBSTER_MAX_TOOL_ENVELOPE_BYTES")
        .map(crate::value::string_to_number)
        .filter(|n| n.is_finite() && *n >= 1024.0)
        .map_or(DEFAULT_ENVELOPE_MAX_BYTES, |n| n.floor() as usize);
    // The envelope around the request, with room for a resume token.
    let fits = |req: &Object| {
        let mut block = req.clone();
        block.insert("resumeToken", Value::String("x".repeat(220)));
        crate::envelope::Envelope::needs_input(Value::Object(block))
            .to_value()
            .to_json()
            .len()
            <= max
    };
    let with_subject = |req: &mut Object, s: Option<Value>| {
        if let Some(s) = s {
            req.insert("subject", s);
        }
    };
    with_subject(&mut request, subject.clone());
    if fits(&request) {
        return Ok(request);
    }
    let serialized = subject
        .as_ref()
        .map_or_else(|| "null".to_string(), Value::to_json);
    let truncated = |preview: String, bytes: usize| {
        Value::Object(Object::from_iter([
            ("truncated", Value::Bool(true)),
            ("bytes", Value::from(bytes)),
            ("preview", Value::String(preview)),
        ]))
    };
    if serialized.len() > MAX_SUBJECT_BYTES {
        let units: Vec<u16> = serialized.encode_utf16().take(2000).collect();
        request.insert(
            "subject",
            truncated(String::from_utf16_lossy(&units), serialized.len()),
        );
        if fits(&request) {
            return Ok(request);
        }
    }
    request.insert(
        "subject",
        truncated(
            "[subject omitted: envelope size limit]".into(),
            serialized.len(),
        ),
    );
    if fits(&request) {
        return Ok(request);
    }
    Err(Error::runtime(format!(
        "Workflow input step {id} needs_input envelope exceeds {max} bytes even after subject truncation"
    )))
}

pub(super) async fn read_line() -> Result<String> {
    tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map(|_| line)
    })
    .await
    .map_err(|e| Error::runtime(e.to_string()))?
    .map_err(|e| Error::runtime(e.to_string()))
}

pub(super) async fn prompt_input(
    prompt: &str,
    schema: &Value,
    id: &str,
    ctx: &Ctx,
) -> Result<Value> {
    ctx.stdout
        .write(&format!("{prompt}\nEnter JSON response: "));
    let line = read_line().await?;
    let value = Value::from_json(line.trim())
        .map_err(|_| Error::runtime("Input response must be valid JSON"))?;
    let compiled = crate::schema::Schema::compile(schema).map_err(Error::runtime)?;
    compiled.validate(&value).map_err(|e| {
        Error::runtime(format!(
            "Workflow input step {id} response failed schema validation at {}: {}",
            e.path, e.message
        ))
    })?;
    Ok(value)
}

/// Checks `LOBSTER_APPROVAL_APPROVED_BY` against the gate's identity rules.
pub(crate) fn check_identity(
    step_id: &str,
    identity: Option<&Value>,
    approved_by: Option<&str>,
) -> Result<()> {
    let get = |k: &str| identity.and_then(|i| i.get_key(k));
    let required = get("requiredApprover").and_then(Value::as_str);
    let different = get("requireDifferentApprover").is_some_and(Value::truthy);
    let initiated = get("initiatedBy").and_then(Value::as_str);
    if (required.is_some() || different) && approved_by.is_none() {
        return Err(Error::parse(format!(
            "Workflow step {step_id} approval requires approver identity; set LOBSTER_APPROVAL_APPROVED_BY"
        )));
    }
    if let (Some(req), Some(by)) = (required, approved_by)
        && req != by
    {
        return Err(Error::parse(format!(
            "Workflow step {step_id} approval requires approver '{req}', got '{by}'"
        )));
    }
    if let (true, Some(init), Some(by)) = (different, initiated, approved_by)
        && init == by
    {
        return Err(Error::parse(format!(
            "Workflow step {step_id} approval must be granted by someone other than '{init}'"
        )));
    }
    Ok(())
}

/// `String` of a value for stdout (null → "").
pub(super) fn serialize_for_stdout(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_json(),
    }
}
