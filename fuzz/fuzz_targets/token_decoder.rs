//! Resume tokens come from agents and people: decoding must never panic,
//! and every encoded token must decode to itself. (The `lobster resume`
//! argument parser is the `lobster` binary's; its unit tests cover it.)
#![no_main]

use clawdis_engine::token::{KIND_PIPELINE, Token, decode, encode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = decode(&text);
    let key = format!("pipeline_resume_{}", text.chars().filter(char::is_ascii_alphanumeric).take(36).collect::<String>());
    if key.len() > "pipeline_resume_".len() {
        let token = encode(KIND_PIPELINE, &key);
        assert_eq!(decode(&token).ok(), Some(Token::State { kind: KIND_PIPELINE.into(), state_key: key }));
    }
});
