//! Prompt steps and `llm.invoke` ask the LLM of the settings (`llm:
//! {baseUrl, model}`) with the key `clawdis secrets set llm-api-key` keeps,
//! black box: a real `clawdis serve` against a local OpenAI-compatible
//! endpoint (an LLM has no local form to test against).

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use clawdis_e2e::bin;
use clawdis_e2e::control::{Client, start_server_full};
use serde_json::{Value, json};

/// What the endpoint was asked: path, `authorization` header, body.
type Asked = Arc<Mutex<Vec<(String, Option<String>, Value)>>>;

/// A chat-completions endpoint: answers `{"score": 7}` when a system
/// message asks for JSON, else `echo: <the user's message>`; `status`
/// other than 200 answers that status with an error body.
fn endpoint(status: u16) -> (String, Asked) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let asked: Asked = Arc::default();
    let log = asked.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            reader.read_line(&mut request_line).unwrap();
            let path = request_line.split(' ').nth(1).unwrap_or("").to_string();
            let (mut len, mut auth) = (0, None);
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                let lower = line.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
                if lower.starts_with("authorization:") {
                    auth = Some(line["authorization:".len()..].trim().to_string());
                }
            }
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            let body: Value = serde_json::from_slice(&body).unwrap();
            let messages = body["messages"].as_array().cloned().unwrap_or_default();
            let wants_json = messages.iter().any(|m| {
                m["role"] == "system" && m["content"].as_str().unwrap_or("").contains("JSON Schema")
            });
            let user = messages
                .iter()
                .rev()
                .find(|m| m["role"] == "user")
                .and_then(|m| m["content"].as_str())
                .unwrap_or("")
                .to_string();
            log.lock().unwrap().push((path, auth, body));
            let content = if wants_json {
                r#"{"score": 7}"#.to_string()
            } else {
                format!("echo: {user}")
            };
            let reply = if status == 200 {
                json!({
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "model": "test-model",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
                })
            } else {
                json!({"error": {"message": "invalid api key"}})
            };
            let reply = reply.to_string();
            let mut out = stream;
            let _ = write!(
                out,
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    (url, asked)
}

/// `printf %s <value> | clawdis secrets set <name>`.
fn set_secret(home: &Path, name: &str, value: &str) -> std::process::Output {
    let mut child = std::process::Command::new(bin("clawdis"))
        .arg("--home")
        .arg(home)
        .args(["secrets", "set", name])
        .env("CLAWDIS_KEYCHAIN", "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(value.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

const ASK: &str = r#"name: ask
type: pipeline
inputs:
  topic: rust
outputs:
  answer: ${{ steps.ask.output.response }}
steps:
  - id: ask
    prompt: Summarize ${{ inputs.topic }} in one line
"#;

/// A Lobster workflow whose step runs `llm.invoke` with an output schema.
const RATE: &str = "steps:\n  - id: rate\n    pipeline: >-\n      llm.invoke --prompt 'Rate it' --output-schema '{\"type\":\"object\",\"required\":[\"score\"]}'\n";

fn home_with(dir: &Path, llm_url: Option<&str>) -> std::path::PathBuf {
    let home = dir.join("home");
    std::fs::create_dir_all(home.join("workflows")).unwrap();
    std::fs::write(home.join("workflows/ask.yaml"), ASK).unwrap();
    std::fs::write(home.join("workflows/rate.lobster"), RATE).unwrap();
    if let Some(url) = llm_url {
        std::fs::write(
            home.join("settings.json"),
            json!({"llm": {"baseUrl": url, "model": "test-model"}}).to_string(),
        )
        .unwrap();
    }
    home
}

fn serve(home: &Path) -> clawdis_e2e::control::Server {
    let settings: Value = std::fs::read_to_string(home.join("settings.json"))
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or_else(|_| json!({}));
    start_server_full(home, settings, &["--no-browser"], &[])
}

#[test]
fn a_prompt_step_asks_the_configured_llm_with_the_key_set_after_the_start() {
    let (url, asked) = endpoint(200);
    let dir = tempfile::tempdir().unwrap();
    let home = home_with(dir.path(), Some(&url));
    let server = serve(&home);
    let c = Client::new(&server);

    // The key is set while the backend runs, from standard input.
    let out = set_secret(&home, "llm-api-key", "sk-test-123\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("llm-api-key stored"), "{said}");
    assert!(!said.contains("sk-test-123"), "the key was echoed: {said}");

    let done = c.ok(
        "POST",
        "/runs",
        Some(json!({"workflow": "ask", "args": {"topic": "SQLite"}})),
    );
    assert_eq!(done["status"], "ok", "{done:#}");
    assert_eq!(
        done["output"],
        json!([{"answer": "echo: Summarize SQLite in one line"}])
    );
    let asked = asked.lock().unwrap();
    let (path, auth, body) = &asked[0];
    assert_eq!(path, "/v1/chat/completions");
    assert_eq!(auth.as_deref(), Some("Bearer sk-test-123"));
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["messages"][0]["role"], "user");
    let run = c.ok(
        "GET",
        &format!("/runs/{}", done["runId"].as_str().unwrap()),
        None,
    );
    assert_eq!(
        run["steps"][0]["output"]["response"],
        "echo: Summarize SQLite in one line"
    );
}

#[test]
fn llm_invoke_uses_the_same_llm_when_no_adapter_is_set() {
    let (url, asked) = endpoint(200);
    let dir = tempfile::tempdir().unwrap();
    let home = home_with(dir.path(), Some(&url));
    let out = set_secret(&home, "llm-api-key", "sk-rate");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let server = serve(&home);
    let c = Client::new(&server);
    let done = c.ok("POST", "/runs", Some(json!({"workflow": "rate"})));
    assert_eq!(done["status"], "ok", "{done:#}");
    let item = &done["output"][0];
    assert_eq!(item["kind"], "llm.invoke", "{done:#}");
    assert_eq!(item["source"], "clawdis");
    assert_eq!(item["output"]["format"], "json");
    assert_eq!(item["output"]["data"], json!({"score": 7}));
    let asked = asked.lock().unwrap();
    assert_eq!(asked[0].1.as_deref(), Some("Bearer sk-rate"));
    assert!(
        asked[0].2["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("JSON Schema"),
        "{:?}",
        asked[0].2
    );
}

#[test]
fn without_an_llm_or_with_a_refusing_one_the_run_fails_saying_why() {
    let dir = tempfile::tempdir().unwrap();
    let home = home_with(dir.path(), None);
    let server = serve(&home);
    let c = Client::new(&server);
    let failed = c.ok("POST", "/runs", Some(json!({"workflow": "ask"})));
    assert_eq!(failed["ok"], false, "{failed:#}");
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(message.contains("no LLM is configured"), "{message}");
    assert!(
        message.contains("clawdis secrets set llm-api-key"),
        "{message}"
    );
    drop(server);

    let (url, _) = endpoint(401);
    let dir = tempfile::tempdir().unwrap();
    let home = home_with(dir.path(), Some(&url));
    let server = serve(&home);
    let c = Client::new(&server);
    let failed = c.ok("POST", "/runs", Some(json!({"workflow": "ask"})));
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(message.contains("answered 401"), "{message}");
    assert!(message.contains("invalid api key"), "{message}");
}

#[test]
fn only_known_secrets_are_set_and_never_from_an_empty_input() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let out = set_secret(&home, "control-token", "x");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a secret you set"));
    let out = set_secret(&home, "llm-api-key", "\n");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no value on standard input"));
}

#[test]
fn lobster_asks_the_same_llm_with_the_same_key() {
    let (url, asked) = endpoint(200);
    let dir = tempfile::tempdir().unwrap();
    let home = home_with(dir.path(), Some(&url));
    let out = set_secret(&home, "llm-api-key", "sk-lobster");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = clawdis_e2e::lobster(&dir.path().join("state"))
        .env("CLAWDIS_HOME", &home)
        .env("CLAWDIS_KEYCHAIN", "off")
        .env_remove("LOBSTER_LLM_ADAPTER_URL")
        .env("LOBSTER_CACHE_DIR", dir.path().join("cache"))
        .args([
            "run",
            "--mode",
            "tool",
            r#"llm.invoke --prompt 'Rate it' --output-schema '{"type":"object"}'"#,
        ])
        .output()
        .unwrap();
    let done = clawdis_e2e::envelope(&out);
    assert_eq!(done["ok"], true, "{done:#}");
    let item = &done["output"][0];
    assert_eq!(item["source"], "clawdis", "{done:#}");
    assert_eq!(item["output"]["data"], json!({"score": 7}));
    let asked = asked.lock().unwrap();
    assert_eq!(asked[0].1.as_deref(), Some("Bearer sk-lobster"));
    assert_eq!(asked[0].2["model"], "test-model");
}
