//! The browser and session routes' bodies, checked against the API
//! document before a handler reads them (see [`crate::bodies`]): a body
//! the document refuses is a 400 that says what is wrong, so a client can
//! trust the document to say exactly what these routes take.

use std::collections::HashMap;
use std::sync::OnceLock;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use jsonschema::error::ValidationErrorKind;
use serde_json::{Map, Value};

use crate::MAX_BODY_BYTES;
use crate::api::ApiError;

/// The tags whose operations' bodies are checked here (the service
/// routes' handlers check their own, and the schemathesis test holds them
/// to the document).
const CHECKED_TAGS: [&str; 2] = ["browser", "sessions"];

/// One `oneOf` branch: its schema (for the messages) and its validator.
type Branch = (Value, jsonschema::Validator);

/// One operation's body check.
struct Check {
    method: Method,
    /// The path's segments; `None` for a parameter.
    segments: Vec<Option<String>>,
    schema: Value,
    validator: jsonschema::Validator,
    /// `oneOf` branches told apart by a property (OpenAPI's
    /// `discriminator`): its name and each value's branch.
    discriminated: Option<(String, HashMap<String, Branch>)>,
    /// The error code of a body it refuses (`x-error-codes.invalid`).
    invalid_code: Option<&'static str>,
    /// The error code of a missing or unknown discriminator
    /// (`x-error-codes.discriminator`).
    discriminator_code: Option<&'static str>,
}

impl Check {
    fn matches(&self, method: &Method, path: &[&str]) -> bool {
        self.method == method
            && self.segments.len() == path.len()
            && self
                .segments
                .iter()
                .zip(path)
                .all(|(s, p)| s.as_deref().is_none_or(|s| s == *p))
    }

    /// How specific the path is: literal segments beat parameters
    /// (`/set/offline` before `/set/{setting}`).
    fn literals(&self) -> usize {
        self.segments.iter().filter(|s| s.is_some()).count()
    }

    /// The first thing wrong with `body`, worded for the caller, with the
    /// schema's error code.
    fn violation(&self, body: &Value) -> Option<ApiError> {
        let (schema, validator) = match &self.discriminated {
            Some((property, branches)) => {
                let found = body.get(property).and_then(Value::as_str);
                match found.and_then(|v| branches.get(v)) {
                    Some((schema, validator)) => (schema, validator),
                    None => {
                        let e = ApiError::bad_request(format!("{property} is required"));
                        return Some(match self.discriminator_code {
                            Some(c) => e.with_code(c),
                            None => e,
                        });
                    }
                }
            }
            None => (&self.schema, &self.validator),
        };
        let error = validator.iter_errors(body).next()?;
        let e = ApiError::bad_request(message(schema, &error));
        Some(match self.invalid_code {
            Some(c) => e.with_code(c),
            None => e,
        })
    }
}

/// `/fields/0/ref` as `fields[0].ref`.
fn field(pointer: &str) -> String {
    let mut out = String::new();
    for part in pointer.split('/').filter(|p| !p.is_empty()) {
        if part.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{part}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&part.replace("~1", "/").replace("~0", "~"));
        }
    }
    out
}

/// What `error` means for the caller: a missing field by name; a failed
/// combination by the `x-message` of the schema that failed, where it has
/// one; otherwise the validator's words, prefixed with the field.
fn message(schema: &Value, error: &jsonschema::ValidationError<'_>) -> String {
    let at = field(&error.instance_path().to_string());
    if let ValidationErrorKind::Required { property } = error.kind() {
        let name = property
            .as_str()
            .map_or_else(|| property.to_string(), str::to_string);
        return if at.is_empty() {
            format!("{name} is required")
        } else {
            format!("{at}.{name} is required")
        };
    }
    // The schema object holding the keyword that failed.
    let location = error.schema_path().to_string();
    let holder = location
        .rsplit_once('/')
        .and_then(|(parent, _)| schema.pointer(parent));
    if let Some(explained) = holder.and_then(|h| h["x-message"].as_str()) {
        return if at.is_empty() {
            explained.to_string()
        } else {
            format!("{at}: {explained}")
        };
    }
    if at.is_empty() {
        error.to_string()
    } else {
        format!("{at}: {error}")
    }
}

fn compile(schema: &Value) -> Option<jsonschema::Validator> {
    // Standard formats (`uri`) are checked; our own (`css-selector`) are
    // for the routes to parse.
    let options = jsonschema::draft202012::options()
        .should_validate_formats(true)
        .should_ignore_unknown_formats(true);
    match options.build(schema) {
        Ok(v) => Some(v),
        Err(e) => {
            tracing::error!(error = %e, "a documented body's schema does not compile");
            None
        }
    }
}

/// Every checked operation, from the document.
fn checks() -> &'static [Check] {
    static CHECKS: OnceLock<Vec<Check>> = OnceLock::new();
    CHECKS.get_or_init(|| {
        let document = crate::document_json();
        let mut checks = Vec::new();
        let Some(paths) = document["paths"].as_object() else {
            return checks;
        };
        for (path, item) in paths {
            let Some(item) = item.as_object() else {
                continue;
            };
            for (method, operation) in item {
                let checked = operation["tags"]
                    .as_array()
                    .is_some_and(|t| t.iter().any(|t| CHECKED_TAGS.iter().any(|c| t == c)));
                let schema = &operation["requestBody"]["content"]["application/json"]["schema"];
                let (true, Ok(method)) =
                    (checked && schema.is_object(), method.to_uppercase().parse())
                else {
                    continue;
                };
                let Some(validator) = compile(schema) else {
                    continue;
                };
                let discriminated = schema["discriminator"]["propertyName"]
                    .as_str()
                    .zip(schema["oneOf"].as_array())
                    .map(|(property, branches)| {
                        let by_value = branches
                            .iter()
                            .filter_map(|b| {
                                let value = b["properties"][property]["const"].as_str()?;
                                Some((value.to_string(), (b.clone(), compile(b)?)))
                            })
                            .collect();
                        (property.to_string(), by_value)
                    });
                // The codes live as long as the checks: for the process.
                let code = |key: &str| {
                    schema["x-error-codes"][key]
                        .as_str()
                        .map(|c| &*Box::leak(c.to_string().into_boxed_str()))
                };
                checks.push(Check {
                    invalid_code: code("invalid"),
                    discriminator_code: code("discriminator"),
                    method,
                    segments: path
                        .split('/')
                        .map(|s| (!s.starts_with('{')).then(|| s.to_string()))
                        .collect(),
                    schema: schema.clone(),
                    validator,
                    discriminated,
                });
            }
        }
        checks
    })
}

/// The middleware: checks a request to a documented browser or session
/// route against its body's schema, then lets it through unchanged.
pub(crate) async fn body(request: Request, next: Next) -> Response {
    let path: Vec<&str> = request.uri().path().split('/').collect();
    let check = checks()
        .iter()
        .filter(|c| c.matches(request.method(), &path))
        .max_by_key(|c| c.literals());
    let Some(check) = check else {
        return next.run(request).await;
    };
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        return ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the request body is larger than {MAX_BODY_BYTES} bytes"),
        )
        .into_response();
    };
    // As the routes read it: nothing, or JSON null, is `{}`.
    let value = if bytes.iter().all(u8::is_ascii_whitespace) {
        Value::Object(Map::new())
    } else {
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Null) => Value::Object(Map::new()),
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => {
                return ApiError::bad_request("request body must be a JSON object").into_response();
            }
            Err(e) => {
                return ApiError::bad_request(format!("request body is not valid JSON: {e}"))
                    .into_response();
            }
        }
    };
    if let Some(refused) = check.violation(&value) {
        return refused.into_response();
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_named_as_a_caller_writes_them() {
        assert_eq!(field(""), "");
        assert_eq!(field("/cookie/name"), "cookie.name");
        assert_eq!(field("/fields/0/ref"), "fields[0].ref");
        assert_eq!(field("/headers/a~1b"), "headers.a/b");
    }

    #[test]
    fn every_documented_body_compiles_and_takes_its_own_examples() {
        let checks = checks();
        assert!(checks.len() > 50, "{} checks", checks.len());
        let find = |method: Method, path: &str| {
            let path: Vec<&str> = path.split('/').collect();
            checks
                .iter()
                .filter(|c| c.matches(&method, &path))
                .max_by_key(|c| c.literals())
                .expect("a check")
        };
        let ok = |method: Method, path: &str, body: Value| {
            let refused = find(method, path).violation(&body);
            assert!(refused.is_none(), "{path} {body}: {refused:?}");
        };
        let refused = |path: &str, body: Value| -> (String, Option<&'static str>) {
            let e = find(Method::POST, path)
                .violation(&body)
                .unwrap_or_else(|| panic!("{path} took {body}"));
            (e.message().to_string(), e.code())
        };
        // What browsers take, and JSON Schema's `uri` refuses (a host in
        // another script, a space in a path), the document takes.
        for url in [
            "https://example.com/",
            "https://例え.jp/",
            "https://example.com/a b",
            "about:blank",
        ] {
            ok(Method::POST, "/navigate", serde_json::json!({ "url": url }));
        }
        ok(
            Method::POST,
            "/act",
            serde_json::json!({ "kind": "click", "ref": "e1" }),
        );
        ok(
            Method::POST,
            "/act",
            serde_json::json!({ "kind": "click", "ref": 12 }),
        );
        ok(
            Method::POST,
            "/act",
            serde_json::json!({ "kind": "batch", "actions": [{ "kind": "press", "key": "Enter" }] }),
        );
        ok(
            Method::POST,
            "/set/offline",
            serde_json::json!({ "offline": true }),
        );
        ok(
            Method::POST,
            "/sessions/s-1/click",
            serde_json::json!({ "selector": "#go" }),
        );
        ok(
            Method::POST,
            "/sessions/s-1/wait",
            serde_json::json!({ "selector": { "type": "aria", "role": "button" }, "state": "hidden" }),
        );
        assert_eq!(
            refused("/navigate", serde_json::json!({})),
            ("url is required".into(), None)
        );
        assert_eq!(
            refused("/cookies/clear", serde_json::json!({ "targetId": {} })).0,
            "targetId: {} is not of type \"string\""
        );
        assert_eq!(
            refused("/act", serde_json::json!({ "kind": "fly" })),
            ("kind is required".into(), Some("ACT_KIND_REQUIRED"))
        );
        assert_eq!(
            refused("/act", serde_json::json!({ "kind": "type", "ref": "e1" })),
            ("text is required".into(), Some("ACT_INVALID_REQUEST"))
        );
        assert_eq!(
            refused(
                "/sessions/s-1/click",
                serde_json::json!({ "ref": "e1", "selector": "#a" })
            )
            .1,
            Some("ACTION_INVALID")
        );
        assert_eq!(
            refused(
                "/cookies/set",
                serde_json::json!({ "cookie": { "value": "v" } })
            )
            .0,
            "cookie.name is required"
        );
    }
}
