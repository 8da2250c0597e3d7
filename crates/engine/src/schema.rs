//! JSON Schema validation of input responses, reporting the first error the
//! way Ajv words it (`at /decision: must be equal to one of the allowed values`).

use jsonschema::error::ValidationErrorKind;

use crate::value::Value;

/// A compiled response schema.
pub struct Schema(jsonschema::Validator);

/// The first validation failure: an instance path (`/a/0`, or `/` for the
/// root) and an Ajv-style message.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaError {
    /// JSON pointer to the failing value (`/` for the root).
    pub path: String,
    /// Ajv-style message.
    pub message: String,
}

impl Schema {
    /// Compiles a schema; `Err` when it is not a valid JSON Schema.
    pub fn compile(schema: &Value) -> Result<Schema, String> {
        jsonschema::validator_for(&schema.to_serde())
            .map(Schema)
            .map_err(|e| e.to_string())
    }

    /// Validates `value`, returning the first error.
    pub fn validate(&self, value: &Value) -> Result<(), SchemaError> {
        let instance = value.to_serde();
        let Some(err) = self.0.iter_errors(&instance).next() else {
            return Ok(());
        };
        let pointer = err.instance_path().to_string();
        let path = if pointer.is_empty() {
            "/".to_string()
        } else {
            pointer
        };
        Err(SchemaError {
            path,
            message: ajv_message(err.kind()),
        })
    }
}

impl Schema {
    /// Validates `value`, returning every error as `<path> <message>` (Ajv `allErrors`).
    pub fn validate_all(&self, value: &Value) -> Result<(), Vec<String>> {
        let instance = value.to_serde();
        let errors: Vec<String> = self
            .0
            .iter_errors(&instance)
            .map(|err| {
                let pointer = err.instance_path().to_string();
                let path = if pointer.is_empty() {
                    "/".to_string()
                } else {
                    pointer
                };
                format!("{path} {}", ajv_message(err.kind()))
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

/// Ajv's message for an error kind (falls back to the validator's wording).
fn ajv_message(kind: &ValidationErrorKind) -> String {
    use ValidationErrorKind as K;
    match kind {
        K::Required { property } => {
            format!(
                "must have required property '{}'",
                property
                    .as_str()
                    .map_or_else(|| property.to_string(), str::to_string)
            )
        }
        K::Enum { .. } => "must be equal to one of the allowed values".into(),
        K::Constant { .. } => "must be equal to constant".into(),
        K::Type { kind } => {
            let names: Vec<String> = match kind {
                jsonschema::error::TypeKind::Single(t) => vec![t.to_string()],
                jsonschema::error::TypeKind::Multiple(ts) => {
                    ts.iter().map(|t| t.to_string()).collect()
                }
            };
            format!("must be {}", names.join(","))
        }
        K::AdditionalProperties { .. } => "must NOT have additional properties".into(),
        K::Minimum { limit } => format!("must be >= {limit}"),
        K::Maximum { limit } => format!("must be <= {limit}"),
        K::ExclusiveMinimum { limit } => format!("must be > {limit}"),
        K::ExclusiveMaximum { limit } => format!("must be < {limit}"),
        K::MinLength { limit } => format!("must NOT have fewer than {limit} characters"),
        K::MaxLength { limit } => format!("must NOT have more than {limit} characters"),
        K::MinItems { limit } => format!("must NOT have fewer than {limit} items"),
        K::MaxItems { limit } => format!("must NOT have more than {limit} items"),
        K::MinProperties { limit } => format!("must NOT have fewer than {limit} properties"),
        K::MaxProperties { limit } => format!("must NOT have more than {limit} properties"),
        K::Pattern { pattern } => format!("must match pattern \"{pattern}\""),
        K::MultipleOf { multiple_of } => format!("must be multiple of {multiple_of}"),
        K::UniqueItems => "must NOT have duplicate items".into(),
        K::Format { format } => format!("must match format \"{format}\""),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_first_error_ajv_style() {
        let schema = Schema::compile(
            &Value::from_json(r#"{"type":"object","properties":{"d":{"type":"string","enum":["a","b"]}},"required":["d"]}"#).unwrap(),
        )
        .unwrap();
        assert!(
            schema
                .validate(&Value::from_json(r#"{"d":"a"}"#).unwrap())
                .is_ok()
        );
        let e = schema
            .validate(&Value::from_json(r#"{"d":"z"}"#).unwrap())
            .unwrap_err();
        assert_eq!(
            (e.path.as_str(), e.message.as_str()),
            ("/d", "must be equal to one of the allowed values")
        );
        let e = schema
            .validate(&Value::from_json("{}").unwrap())
            .unwrap_err();
        assert_eq!(
            (e.path.as_str(), e.message.as_str()),
            ("/", "must have required property 'd'")
        );
    }
}
