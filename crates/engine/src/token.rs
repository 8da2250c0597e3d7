//! Resume tokens: unpadded base64url of `{"protocolVersion":1,"v":1,"kind","stateKey"}`.

use base64::Engine;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

use clawdis_store::RunKind;

use crate::error::{Error, Result};
use crate::value::{Object, Value};

/// Token kind for workflow-file runs.
pub const KIND_WORKFLOW: &str = RunKind::Workflow.as_str();
/// Token kind for pipeline runs.
pub const KIND_PIPELINE: &str = RunKind::Pipeline.as_str();

const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// A decoded token.
#[derive(Clone, Debug, PartialEq)]
pub enum Token {
    /// A reference to stored state.
    State {
        /// `workflow-file` or `pipeline-resume`.
        kind: String,
        /// The state key.
        state_key: String,
    },
    /// A legacy token carrying the whole workflow resume state inline.
    InlineWorkflow(Value),
}

/// A fresh state key: `<workflow|pipeline>_resume_<uuid v4>`.
pub fn new_state_key(kind: &str) -> String {
    let prefix = if kind == KIND_PIPELINE {
        "pipeline"
    } else {
        "workflow"
    };
    format!("{prefix}_resume_{}", uuid::Uuid::new_v4())
}

/// Encodes a token for `kind` and `state_key`.
pub fn encode(kind: &str, state_key: &str) -> String {
    let mut obj = Object::new();
    obj.insert("protocolVersion", Value::from(1.0));
    obj.insert("v", Value::from(1.0));
    obj.insert("kind", Value::from(kind));
    obj.insert("stateKey", Value::from(state_key));
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Value::Object(obj).to_json())
}

/// Decodes a token; every failure is a `parse_error` with Lobster's message.
pub fn decode(token: &str) -> Result<Token> {
    let invalid = || Error::parse("Invalid token");
    // Like Node's base64url decoder: '+' and '/' are accepted, other stray
    // characters are skipped.
    let cleaned: String = token
        .trim()
        .chars()
        .filter_map(|c| match c {
            '+' => Some('-'),
            '/' => Some('_'),
            c if c.is_ascii_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect();
    let bytes = LENIENT
        .decode(cleaned.trim_end_matches('='))
        .map_err(|_| invalid())?;
    let text = String::from_utf8(bytes).map_err(|_| invalid())?;
    let payload = Value::from_json(&text).map_err(|_| invalid())?;
    if matches!(payload, Value::Null) {
        return Err(invalid());
    }
    if payload.get_key("protocolVersion") != Some(&Value::from(1.0)) {
        return Err(Error::parse("Unsupported protocol version"));
    }
    if payload.get_key("v") != Some(&Value::from(1.0)) {
        return Err(Error::parse("Unsupported token version"));
    }
    let kind = payload
        .get_key("kind")
        .and_then(Value::as_str)
        .ok_or_else(invalid)?;
    if kind != KIND_WORKFLOW && kind != KIND_PIPELINE {
        return Err(invalid());
    }
    match payload
        .get_key("stateKey")
        .and_then(Value::as_str)
        .filter(|k| !k.is_empty())
    {
        Some(key) => Ok(Token::State {
            kind: kind.to_string(),
            state_key: key.to_string(),
        }),
        None if kind == KIND_WORKFLOW => {
            let has = |k: &str| {
                payload
                    .get_key(k)
                    .is_some_and(|v| !matches!(v, Value::Null))
            };
            if has("filePath") && has("resumeAtIndex") && has("steps") {
                Ok(Token::InlineWorkflow(payload))
            } else {
                Err(Error::parse("Invalid workflow token"))
            }
        }
        None => Err(invalid()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let key = new_state_key(KIND_PIPELINE);
        let t = encode(KIND_PIPELINE, &key);
        assert!(!t.contains('='));
        assert_eq!(
            decode(&t).unwrap(),
            Token::State {
                kind: KIND_PIPELINE.into(),
                state_key: key
            }
        );
        assert_eq!(decode("not-a-token").unwrap_err().message, "Invalid token");
        let enc = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        assert_eq!(
            decode(&enc("[1,2]")).unwrap_err().message,
            "Unsupported protocol version"
        );
        assert_eq!(
            decode(&enc(r#"{"protocolVersion":1,"v":9}"#))
                .unwrap_err()
                .message,
            "Unsupported token version"
        );
        assert_eq!(
            decode(&enc(
                r#"{"protocolVersion":1,"v":1,"kind":"workflow-file"}"#
            ))
            .unwrap_err()
            .message,
            "Invalid workflow token"
        );
    }
}
