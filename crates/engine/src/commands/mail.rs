//! Mail through the `gog` CLI: `gog.gmail.search`, `gog.gmail.send`, and
//! `email.triage` (deterministic, or LLM-assisted through `llm.invoke`).

use super::Output;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::exec::process::{ChildIo, ProcOutput, run_process};
use crate::items::Items;
use crate::pipeline::parse::Args;
use crate::value::{Object, Value};

const GOG_NOT_FOUND: &str = "gog not found on PATH (install: https://github.com/steipete/gogcli)";

/// Runs `gog` (`$GOG_BIN`; a `.js`/`.mjs`/`.cjs`/`.ts` script runs under node).
async fn run_gog(argv: Vec<String>, ctx: &Ctx) -> Result<ProcOutput> {
    let bin = ctx
        .env
        .get("GOG_BIN")
        .cloned()
        .unwrap_or_else(|| "gog".into());
    let is_script = [".mjs", ".cjs", ".js", ".ts"]
        .iter()
        .any(|e| bin.to_ascii_lowercase().ends_with(e));
    let (program, argv) = if is_script {
        ("node".to_string(), [vec![bin], argv].concat())
    } else {
        (bin, argv)
    };
    run_process(&program, &argv, &ctx.env, &ctx.cwd, ChildIo::default())
        .await
        .map_err(|e| {
            Error::io(
                if e.kind() == std::io::ErrorKind::NotFound {
                    GOG_NOT_FOUND.to_string()
                } else {
                    e.to_string()
                },
                e,
            )
        })
}

fn head_400(s: &str) -> String {
    s.encode_utf16()
        .take(400)
        .map(|u| String::from_utf16_lossy(&[u]))
        .collect()
}

pub async fn search(args: &Args, input: Items, ctx: &Ctx) -> Result<Output> {
    input.drain()?;
    let query = args
        .get("query")
        .map_or_else(|| "newer_than:1d".to_string(), Value::to_js_string);
    let max = args
        .get("max")
        .or_else(|| args.get("limit"))
        .map_or(20.0, Value::to_number);
    let argv = vec![
        "gmail".into(),
        "search".into(),
        query,
        "--json".into(),
        "--max".into(),
        crate::value::format_number(max),
    ];
    let out = run_gog(argv, ctx).await?;
    if out.code != Some(0) {
        let code = out.code.map_or_else(|| "?".to_string(), |c| c.to_string());
        return Err(Error::runtime(format!(
            "gog.gmail.search failed ({code}): {}",
            head_400(&out.stderr)
        )));
    }
    let parsed = Value::from_json(&out.stdout)
        .map_err(|_| Error::runtime("gog.gmail.search expected JSON output"))?;
    let threads = |v: &Value| v.get_key("threads").and_then(Value::as_array).cloned();
    let items = match &parsed {
        Value::Array(a) => a
            .iter()
            .flat_map(|x| threads(x).unwrap_or_else(|| vec![x.clone()]))
            .collect(),
        other => threads(other).unwrap_or_else(|| vec![other.clone()]),
    };
    Ok(Output::items(items))
}

pub async fn send(args: &Args, input: Items, ctx: &Ctx) -> Result<Output> {
    let dry_run = args
        .get("dryRun")
        .or_else(|| args.get("dry-run"))
        .is_some_and(Value::truthy);
    let mut results = Vec::new();
    for item in input.into_iter() {
        let item = item?;
        if !matches!(item, Value::Object(_) | Value::Array(_)) {
            return Err(Error::runtime("gog.gmail.send expects draft objects"));
        }
        let field = |k: &str| {
            item.get_key(k)
                .filter(|v| !matches!(v, Value::Null))
                .map(Value::to_js_string)
                .unwrap_or_default()
                .trim()
                .to_string()
        };
        let (to, subject, body) = (field("to"), field("subject"), field("body"));
        if to.is_empty() {
            return Err(Error::runtime("gog.gmail.send draft missing to"));
        }
        if dry_run {
            let mut o = Object::new();
            o.insert("ok", Value::Bool(true));
            o.insert("dryRun", Value::Bool(true));
            o.insert("to", Value::from(to));
            o.insert("subject", Value::from(subject));
            o.insert("body", Value::from(body));
            results.push(Value::Object(o));
            continue;
        }
        let mut argv = vec!["gmail".to_string(), "send".into(), "--to".into(), to];
        if !subject.is_empty() {
            argv.extend(["--subject".to_string(), subject]);
        }
        if !body.is_empty() {
            argv.extend(["--body".to_string(), body]);
        }
        argv.push("--json".into());
        let out = run_gog(argv, ctx).await?;
        if out.code != Some(0) {
            let code = out.code.map_or_else(|| "?".to_string(), |c| c.to_string());
            return Err(Error::runtime(format!(
                "gog.gmail.send failed ({code}): {}",
                head_400(&out.stderr)
            )));
        }
        let parsed = if out.stdout.is_empty() {
            crate::jv!(r#"{"ok":true}"#)
        } else {
            Value::from_json(&out.stdout).unwrap_or_else(|_| {
                Value::Object(Object::from_iter([
                    ("ok", Value::Bool(true)),
                    ("raw", Value::String(out.stdout)),
                ]))
            })
        };
        results.push(parsed);
    }
    Ok(Output::items(results))
}

/// A message normalised to `{id, threadId, from, subject, date, snippet, labels}`.
fn normalize_email(raw: &Value) -> Object {
    let text = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| raw.get_key(k).filter(|v| !matches!(v, Value::Null)))
            .map(Value::to_js_string)
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    let id = text(&["id", "messageId"]);
    let thread = text(&["threadId", "thread_id"]);
    let labels = raw
        .get_key("labels")
        .and_then(Value::as_array)
        .map(|l| l.iter().map(|x| Value::String(x.to_js_string())).collect());
    let mut o = Object::new();
    o.insert("id", Value::from(id.as_str()));
    o.insert(
        "threadId",
        Value::from(if thread.is_empty() { id } else { thread }),
    );
    o.insert("from", Value::from(text(&["from", "sender"])));
    o.insert("subject", Value::from(text(&["subject"])));
    o.insert(
        "date",
        Value::from(text(&["date", "internalDate", "timestamp"])),
    );
    o.insert("snippet", Value::from(text(&["snippet", "bodyPreview"])));
    o.insert("labels", Value::Array(labels.unwrap_or_default()));
    o
}

fn is_no_reply(from: &str) -> bool {
    let f = from.to_lowercase();
    ["no-reply", "noreply", "do-not-reply", "donotreply"]
        .iter()
        .any(|p| f.contains(p))
}

/// The address inside `Name <addr>`, or the first email-looking token.
fn email_address(from: &str) -> String {
    if let (Some(a), Some(b)) = (from.find('<'), from.find('>'))
        && b > a + 1
    {
        return from[a + 1..b].trim().to_string();
    }
    from.split(|c: char| c.is_whitespace() || c == ',' || c == ';' || c == '"')
        .find(|t| {
            let (local, domain) = t.split_once('@').unwrap_or_default();
            !local.is_empty()
                && domain.contains('.')
                && domain.rsplit('.').next().is_some_and(|tld| tld.len() >= 2)
        })
        .unwrap_or_default()
        .to_string()
}

fn str_field<'a>(o: &'a Object, k: &str) -> &'a str {
    o.get(k).and_then(Value::as_str).unwrap_or_default()
}

fn ids(list: &[&Object]) -> Value {
    Value::Array(
        list.iter()
            .map(|e| Value::from(str_field(e, "id")))
            .collect(),
    )
}

fn summary(reply: usize, action: usize, fyi: usize) -> String {
    format!("{reply} need replies, {action} need action, {fyi} FYI")
}

const TRIAGE_SCHEMA: &str = r#"{"type":"object","properties":{"decisions":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"category":{"type":"string","enum":["needs_reply","needs_action","fyi"]},"rationale":{"type":"string"},"reply":{"type":"object","properties":{"subject":{"type":"string"},"body":{"type":"string"}},"required":["body"],"additionalProperties":false}},"required":["id","category"],"additionalProperties":false}}},"required":["decisions"],"additionalProperties":false}"#;

fn triage_prompt(emails: &[Object]) -> String {
    let list: Vec<Value> = emails
        .iter()
        .map(|e| {
            Value::Object(
                ["id", "from", "subject", "date", "snippet", "labels"]
                    .iter()
                    .map(|k| (*k, e.get(k).cloned().unwrap_or_default()))
                    .collect(),
            )
        })
        .collect();
    format!(
        "You are an email triage assistant.\nGiven the following emails, return JSON that categorizes each email and (when category is needs_reply) drafts a short reply.\nGuidelines:\n- Keep replies concise, friendly, and professional.\n- If sender appears to be automated (no-reply), do not draft a reply; categorize as fyi unless it is clearly urgent/actionable.\n- Use one of categories: needs_reply, needs_action, fyi.\n- The reply body should be plain text, no markdown.\n\nEmails (JSON):\n{}",
        Value::Array(list).to_json_pretty()
    )
}

pub async fn triage(args: &Args, input: Items, ctx: &Ctx) -> Result<Output> {
    let limit = args.get("limit").map_or(20.0, Value::to_number);
    let emit = args
        .get("emit")
        .map(Value::to_js_string)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    let drafts_mode = emit.as_deref() == Some("drafts");
    let mut emails: Vec<Object> = Vec::new();
    for item in input.into_iter() {
        emails.push(normalize_email(&item?));
        if emails.len() as f64 >= limit {
            break;
        }
    }
    let has_provider = [
        "LOBSTER_LLM_PROVIDER",
        "LOBSTER_PI_LLM_ADAPTER_URL",
        "LOBSTER_LLM_ADAPTER_URL",
        "OPENCLAW_URL",
        "CLAWD_URL",
    ]
    .iter()
    .any(|k| ctx.env_var(k).is_some());
    if !args.truthy("llm") || !has_provider {
        if drafts_mode {
            return Ok(Output::items(Vec::new()));
        }
        let (mut reply, mut action, mut fyi): (Vec<&Object>, Vec<&Object>, Vec<&Object>) =
            (vec![], vec![], vec![]);
        for e in &emails {
            let subject = str_field(e, "subject").to_lowercase();
            let unread = e.get("labels").and_then(Value::as_array).is_some_and(|l| {
                l.iter()
                    .any(|x| x.to_js_string().to_uppercase() == "UNREAD")
            });
            if subject.contains("action required") || subject.contains("urgent") {
                action.push(e);
            } else if unread && !is_no_reply(str_field(e, "from")) {
                reply.push(e);
            } else {
                fyi.push(e);
            }
        }
        let mut report = Object::new();
        report.insert(
            "summary",
            Value::from(summary(reply.len(), action.len(), fyi.len())),
        );
        report.insert(
            "buckets",
            Value::Object(Object::from_iter([
                ("needsReply", ids(&reply)),
                ("needsAction", ids(&action)),
                ("fyi", ids(&fyi)),
            ])),
        );
        report.insert(
            "emails",
            Value::Array(emails.iter().cloned().map(Value::Object).collect()),
        );
        report.insert("mode", Value::from("deterministic"));
        return Ok(Output::items(vec![Value::Object(report)]));
    }

    let mut llm_args = Args::default();
    let mut flag = |k: &str, v: Option<Value>| {
        if let Some(v) = v.filter(|v| !matches!(v, Value::Null)) {
            llm_args.flags.push((k.to_string(), v));
        }
    };
    flag("token", args.get("token").cloned());
    flag(
        "model",
        args.get("model")
            .map(Value::to_js_string)
            .filter(|m| !m.trim().is_empty())
            .map(Value::String),
    );
    flag("prompt", Some(Value::String(triage_prompt(&emails))));
    flag("output-schema", Some(Value::from(TRIAGE_SCHEMA)));
    flag("schema-version", Some(Value::from("email_triage.v1")));
    flag("temperature", args.get("temperature").cloned());
    flag("max-output-tokens", args.get("max-output-tokens").cloned());
    flag(
        "state-key",
        args.get("state-key")
            .cloned()
            .or_else(|| ctx.env_var("LOBSTER_RUN_STATE_KEY").map(Value::from)),
    );
    let email_items: Vec<Value> = emails.iter().cloned().map(Value::Object).collect();
    let out = super::llm::invoke("llm.invoke", &llm_args, Items::List(email_items), ctx)
        .await?
        .items
        .collect()?;
    let data = out
        .first()
        .and_then(|i| i.get_key("output"))
        .and_then(|o| o.get_key("data"))
        .cloned()
        .unwrap_or_default();
    let mut decisions = Vec::new();
    let (mut reply, mut action, mut fyi) = (Vec::new(), Vec::new(), Vec::new());
    let mut drafts = Vec::new();
    for d in data
        .get_key("decisions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
    {
        let id = d
            .get_key("id")
            .map(Value::to_js_string)
            .unwrap_or_default()
            .trim()
            .to_string();
        if id.is_empty() {
            continue;
        }
        let category = d
            .get_key("category")
            .filter(|v| !matches!(v, Value::Null))
            .map_or_else(|| "fyi".to_string(), Value::to_js_string);
        let mut dec = Object::new();
        dec.insert("id", Value::from(id.as_str()));
        dec.insert("category", Value::from(category.as_str()));
        if let Some(r) = d.get_key("rationale").filter(|v| v.truthy()) {
            dec.insert("rationale", Value::String(r.to_js_string()));
        }
        let reply_obj = d.get_key("reply").and_then(Value::as_object);
        let body = reply_obj
            .and_then(|r| r.get("body"))
            .filter(|v| !matches!(v, Value::Null))
            .map(Value::to_js_string);
        if let Some(r) = reply_obj {
            let mut ro = Object::new();
            if let Some(s) = r.get("subject") {
                ro.insert("subject", s.clone());
            }
            ro.insert("body", Value::from(body.clone().unwrap_or_default()));
            dec.insert("reply", Value::Object(ro));
        }
        match category.as_str() {
            "needs_reply" => reply.push(Value::from(id.as_str())),
            "needs_action" => action.push(Value::from(id.as_str())),
            _ => fyi.push(Value::from(id.as_str())),
        }
        if category == "needs_reply"
            && let Some(body) = body.filter(|b| !b.is_empty())
            && let Some(email) = emails.iter().find(|e| str_field(e, "id") == id)
        {
            let to = email_address(str_field(email, "from"));
            if !to.is_empty() && !is_no_reply(str_field(email, "from")) {
                let subject = reply_obj
                    .and_then(|r| r.get("subject"))
                    .filter(|s| s.truthy())
                    .map(Value::to_js_string)
                    .unwrap_or_else(|| {
                        let s = str_field(email, "subject").trim();
                        if s.is_empty() {
                            "Re:".into()
                        } else if s.to_lowercase().starts_with("re:") {
                            s.to_string()
                        } else {
                            format!("Re: {s}")
                        }
                    });
                drafts.push((id.clone(), to, subject, body));
            }
        }
        decisions.push(Value::Object(dec));
    }
    if drafts_mode {
        let items = drafts
            .into_iter()
            .map(|(id, to, subject, body)| {
                Value::Object(Object::from_iter([
                    ("to", Value::from(to)),
                    ("subject", Value::from(subject)),
                    ("body", Value::from(body)),
                    ("emailId", Value::from(id)),
                ]))
            })
            .collect::<Vec<_>>();
        return Ok(Output::items(items));
    }
    let mut report = Object::new();
    report.insert(
        "summary",
        Value::from(summary(reply.len(), action.len(), fyi.len())),
    );
    report.insert(
        "buckets",
        Value::Object(Object::from_iter([
            ("needsReply", Value::Array(reply)),
            ("needsAction", Value::Array(action)),
            ("fyi", Value::Array(fyi)),
        ])),
    );
    report.insert(
        "emails",
        Value::Array(emails.into_iter().map(Value::Object).collect()),
    );
    report.insert("decisions", Value::Array(decisions));
    report.insert(
        "drafts",
        Value::Array(
            drafts
                .into_iter()
                .map(|(id, to, subject, body)| {
                    Value::Object(Object::from_iter([
                        ("emailId", Value::from(id)),
                        ("to", Value::from(to)),
                        ("subject", Value::from(subject)),
                        ("body", Value::from(body)),
                    ]))
                })
                .collect(),
        ),
    );
    report.insert("mode", Value::from("llm"));
    Ok(Output::items(vec![Value::Object(report)]))
}
