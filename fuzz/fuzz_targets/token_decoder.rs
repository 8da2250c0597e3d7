//! Resume tokens and resume arguments come from agents and people: decoding
//! must never panic, and every encoded token must decode to itself.
#![no_main]

use clawdis_engine::resume::parse_args;
use clawdis_engine::token::{KIND_PIPELINE, Token, decode, encode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = decode(&text);
    let argv: Vec<String> = text.split('\0').map(str::to_string).collect();
    let _ = parse_args(&argv);
    let key = format!("pipeline_resume_{}", text.chars().filter(char::is_ascii_alphanumeric).take(36).collect::<String>());
    if key.len() > "pipeline_resume_".len() {
        let token = encode(KIND_PIPELINE, &key);
        assert_eq!(decode(&token).ok(), Some(Token::State { kind: KIND_PIPELINE.into(), state_key: key }));
    }
});
