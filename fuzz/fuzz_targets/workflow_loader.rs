//! Loading a workflow file (YAML or JSON text) and planning it must never
//! panic, whatever the input.
#![no_main]

use std::path::Path;

use clawdis_engine::value::Value;
use clawdis_engine::workflow::{dry_run, file};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let docs = [file::parse_yaml(text).ok(), Value::from_json(text).ok()];
    for doc in docs.into_iter().flatten() {
        if let Ok(wf) = file::from_value(&doc, Path::new("/fuzz/wf.lobster")) {
            let _ = dry_run::plan(&wf, &Value::Null);
        }
    }
});
