//! The `lobster` binary as it is installed (`scripts/build-lobster`:
//! statically linked against glibc on Linux), checked where static linking
//! could change behaviour: the whole public corpus, and name lookups, which
//! glibc answers from `/etc/hosts` and DNS inside the static binary.

use clawdis_e2e::{assert_public_corpus_passes, envelope, json_stub, lobster_at, shipped_lobster};

#[test]
fn shipped_lobster_passes_the_public_corpus() {
    let bin = shipped_lobster();
    assert_public_corpus_passes(&bin);
}

#[test]
fn shipped_lobster_reaches_a_service_by_host_name() {
    let bin = shipped_lobster();
    let (url, seen) = json_stub(
        r#"{"ok":true,"result":{"runId":"r1","model":"m","output":{"format":"text","text":"hi"}}}"#,
    );
    let url = url.replace("127.0.0.1", "localhost");
    let dir = tempfile::tempdir().unwrap();
    let out = lobster_at(&bin, &dir.path().join("state"))
        .current_dir(dir.path())
        .env("LOBSTER_LLM_ADAPTER_URL", &url)
        .env("LOBSTER_CACHE_DIR", dir.path().join("cache"))
        .args([
            "run",
            "--mode",
            "tool",
            "llm.invoke --prompt 'Say hi' --model m",
        ])
        .output()
        .unwrap();
    let env = envelope(&out);
    assert_eq!(
        env["ok"],
        true,
        "{env}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(env["output"][0]["source"], "http", "{env}");
    assert_eq!(seen.lock().unwrap().len(), 1, "one request reached {url}");
}
