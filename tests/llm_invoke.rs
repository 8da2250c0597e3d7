//! `llm.invoke` against a local stand-in adapter: the request payload, the
//! normalised item, and the cache that makes a second run skip the call.

use clawdis_e2e::{envelope, json_stub, lobster};

#[test]
fn calls_the_adapter_once_and_then_replays_the_cache() {
    let (url, seen) = json_stub(
        r#"{"ok":true,"result":{"runId":"r1","model":"m","output":{"format":"json","data":{"score":7}}}}"#,
    );
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let pipeline =
        r#"exec --json --shell "echo '[\"hello\"]'" | llm.invoke --prompt 'Score it' --model m"#;
    let run = || {
        let out = lobster(&state)
            .current_dir(dir.path())
            .env("LOBSTER_LLM_ADAPTER_URL", &url)
            .env("LOBSTER_CACHE_DIR", dir.path().join("cache"))
            .args(["run", "--mode", "tool", pipeline])
            .output()
            .unwrap();
        envelope(&out)
    };
    let first = run();
    let item = &first["output"][0];
    assert_eq!(first["ok"], true, "{first}");
    assert_eq!(item["kind"], "llm.invoke");
    assert_eq!(item["output"]["data"]["score"], 7);
    assert_eq!(item["source"], "http");
    assert_eq!(item["cached"], false);
    {
        let requests = seen.lock().unwrap();
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0]["prompt"], "Score it");
        assert_eq!(requests[0]["artifacts"][0]["text"], "hello");
        assert_eq!(requests[0]["artifactHashes"][0].as_str().unwrap().len(), 64);
    }
    let second = run();
    assert_eq!(second["output"][0]["source"], "cache");
    assert_eq!(second["output"][0]["cacheKey"], item["cacheKey"]);
    assert_eq!(
        seen.lock().unwrap().len(),
        1,
        "the cached run makes no request"
    );
}
