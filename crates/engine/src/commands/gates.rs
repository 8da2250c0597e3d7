//! Gates that stop a pipeline for a human: `approve` and `ask`.

use super::{Halt, Output};
use crate::context::{Ctx, Mode};
use crate::error::{Error, Failure, Result};
use crate::items::Items;
use crate::pipeline::parse::Args;
use crate::schema::Schema;
use crate::value::{Object, Value};

/// The default `ask` response schema: a decision plus optional feedback.
pub fn default_ask_schema() -> Value {
    crate::jv!(
        r#"{"type":"object","properties":{"decision":{"type":"string","enum":["approve","reject","redraft"]},"feedback":{"type":"string","description":"Feedback for redraft"}},"required":["decision"]}"#
    )
}

/// Reads one line from standard input (blocking, off the async runtime).
async fn read_line(timeout_ms: Option<u64>) -> Result<String> {
    let read = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map(|_| line)
    });
    let joined = match timeout_ms {
        Some(ms) => tokio::time::timeout(std::time::Duration::from_millis(ms), read)
            .await
            .map_err(|_| {
                Error::failed(
                    Failure::TimedOut,
                    format!("Approval input timed out after {ms}ms"),
                )
            })?,
        None => read.await,
    };
    joined
        .map_err(|e| Error::runtime(e.to_string()))?
        .map_err(|e| Error::runtime(e.to_string()))
}

/// The preview `approve --preview-from-stdin` shows: the first `limit` items,
/// one per line when they are all strings, else pretty JSON.
fn preview(items: &[Value], limit: usize) -> String {
    let head = &items[..items.len().min(limit)];
    if head.is_empty() {
        return String::new();
    }
    if head.iter().all(|i| matches!(i, Value::String(_))) {
        head.iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        Value::Array(head.to_vec()).to_json_pretty()
    }
}

pub async fn approve(args: &Args, input: Items, ctx: &Ctx) -> Result<Output> {
    let prompt = args
        .get("prompt")
        .cloned()
        .unwrap_or_else(|| Value::from("Approve?"));
    let items = input.collect()?;
    let emit = args.truthy("emit") || ctx.mode == Mode::Tool || !ctx.stdin_is_tty;
    if emit {
        let mut request = Object::new();
        request.insert("type", Value::from("approval_request"));
        request.insert("prompt", prompt);
        let from_stdin = args
            .get("previewFromStdin")
            .or_else(|| args.get("preview-from-stdin"))
            .is_some_and(Value::truthy);
        let preview_text = from_stdin.then(|| {
            let raw = args
                .get("limit")
                .or_else(|| args.get("previewLimit"))
                .or_else(|| args.get("preview-limit"));
            let limit = raw
                .map(Value::to_number)
                .filter(|n| n.is_finite())
                .unwrap_or(5.0);
            preview(&items, limit.max(0.0).trunc() as usize)
        });
        request.insert("items", Value::Array(items));
        if let Some(p) = preview_text.filter(|p| !p.is_empty()) {
            request.insert("preview", Value::String(p));
        }
        return Ok(Output {
            items: Items::List(vec![Value::Object(request)]),
            rendered: false,
            halt: Some(Halt::Next),
        });
    }
    ctx.stdout
        .write(&format!("{} [y/N] ", prompt.to_js_string()));
    let timeout = ctx
        .env_var("LOBSTER_APPROVAL_INPUT_TIMEOUT_MS")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|ms| *ms > 0);
    let answer = read_line(timeout).await?;
    let answer = answer.trim().to_ascii_lowercase();
    if answer == "y" || answer == "yes" {
        Ok(Output::items(items))
    } else {
        Err(Error::runtime("Not approved"))
    }
}

pub async fn ask(args: &Args, input: Items, ctx: &Ctx) -> Result<Output> {
    let prompt = args
        .string("prompt")
        .unwrap_or("Input required")
        .to_string();
    let subject_from_stdin = args
        .get("subject-from-stdin")
        .or_else(|| args.get("subjectFromStdin"))
        .is_some_and(Value::truthy);
    let schema = match args.string("schema") {
        None => default_ask_schema(),
        Some(raw) => {
            let parsed = Value::from_json(raw)
                .map_err(|_| Error::runtime("ask --schema must be valid JSON"))?;
            if !matches!(parsed, Value::Object(_)) {
                return Err(Error::runtime(
                    "ask --schema must decode to a JSON schema object",
                ));
            }
            parsed
        }
    };
    let validator =
        Schema::compile(&schema).map_err(|_| Error::runtime("ask response schema is invalid"))?;
    let force_emit = args.truthy("emit");
    let emit = force_emit || ctx.mode == Mode::Tool || !ctx.stdin_is_tty;
    let in_place = !force_emit && ctx.mode == Mode::Tool;

    if in_place && let Some(response) = &ctx.resume_response {
        input.drain()?;
        return Ok(Output::items(vec![response.clone()]));
    }

    let items = input.collect()?;
    let subject = (subject_from_stdin && !items.is_empty()).then(|| {
        let text: String = items
            .iter()
            .map(|i| match i {
                Value::String(s) => s.clone(),
                other => other.to_json(),
            })
            .collect::<Vec<_>>()
            .join("\n");
        let units: Vec<u16> = text.encode_utf16().take(2000).collect();
        Value::Object(Object::from_iter([(
            "text",
            Value::String(String::from_utf16_lossy(&units)),
        )]))
    });

    if emit {
        let mut request = Object::new();
        request.insert("type", Value::from("input_request"));
        request.insert("prompt", Value::from(prompt));
        request.insert("responseSchema", schema);
        if let Some(s) = subject {
            request.insert("subject", s);
        }
        let halt = if in_place {
            Halt::InPlace { input: items }
        } else {
            request.insert("items", Value::Array(items));
            Halt::Next
        };
        return Ok(Output {
            items: Items::List(vec![Value::Object(request)]),
            rendered: false,
            halt: Some(halt),
        });
    }

    ctx.stdout.write(&format!("{prompt}\n> "));
    let text = read_line(None).await?.trim().to_string();
    let candidates = match Value::from_json(&text) {
        Ok(Value::String(s)) => vec![
            Value::String(s.clone()),
            Value::Object(Object::from_iter([("decision", Value::String(s))])),
        ],
        Ok(v) => vec![v],
        Err(_) => vec![
            Value::String(text.clone()),
            Value::Object(Object::from_iter([("decision", Value::String(text))])),
        ],
    };
    let mut last = None;
    for candidate in candidates {
        match validator.validate(&candidate) {
            Ok(()) => return Ok(Output::items(vec![candidate])),
            Err(e) => last = Some(e),
        }
    }
    let e = last.map(|e| {
        format!(
            "ask response failed schema validation at {}: {}",
            e.path, e.message
        )
    });
    Err(Error::runtime(e.unwrap_or_else(|| {
        "ask response failed schema validation".into()
    })))
}
