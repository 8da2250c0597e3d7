//! Reading JSON into values the way `JSON.parse` does: a double per
//! number, JavaScript property order, and projections that build only the
//! properties a consumer will see.

use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::object::{BuiltKey, ObjectBuilder};
use super::{Value, format_number};

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
        ValueSeed {
            depth: 0,
            keep: None,
        }
        .deserialize(deserializer)
    }
}

/// Deserializes a value nested `depth` levels deep (objects at each depth
/// share key shapes, see [`ObjectBuilder`]). With `keep`, an object builds
/// only those properties and checks the others as [`Valid`].
#[derive(Clone, Copy)]
struct ValueSeed<'k> {
    depth: usize,
    keep: Option<&'k [String]>,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v as f64))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v as f64))
    }
    fn visit_i128<E>(self, v: i128) -> Result<Value, E> {
        Ok(Value::Number(v as f64))
    }
    fn visit_u128<E>(self, v: u128) -> Result<Value, E> {
        Ok(Value::Number(v as f64))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Number(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element_seed(ValueSeed {
            depth: self.depth + 1,
            keep: None,
        })? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut builder = ObjectBuilder::new(self.depth, map.size_hint().unwrap_or(0).min(4096));
        let nested = ValueSeed {
            depth: self.depth + 1,
            keep: None,
        };
        match self.keep {
            None => {
                while let Some(key) = map.next_key_seed(KeySeed(&builder))? {
                    let value = map.next_value_seed(nested)?;
                    builder.insert(key, value);
                }
            }
            Some(keep) => {
                while let Some(key) = map.next_key_seed(KeptKey {
                    builder: &builder,
                    keep,
                })? {
                    match key {
                        Some(key) => {
                            let value = map.next_value_seed(nested)?;
                            builder.insert(key, value);
                        }
                        None => {
                            map.next_value::<Valid>()?;
                        }
                    }
                }
            }
        }
        Ok(Value::Object(builder.finish()))
    }
}

/// A JSON value checked exactly as [`Value`] would read it (strings with
/// their escapes, numbers within range) but not built: for values nobody
/// will see that building would still have refused.
pub struct Valid;

impl<'de> Deserialize<'de> for Valid {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Valid, D::Error> {
        // `deserialize_any`, as for `Value`: `deserialize_ignored_any`
        // would let through what `Value` refuses (lone surrogate escapes,
        // numbers out of range).
        deserializer.deserialize_any(ValidVisitor)
    }
}

struct ValidVisitor;

impl<'de> Visitor<'de> for ValidVisitor {
    type Value = Valid;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_i128<E>(self, _: i128) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_u128<E>(self, _: u128) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_str<E>(self, _: &str) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_unit<E>(self) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_none<E>(self) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Valid, D::Error> {
        Valid::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Valid, A::Error> {
        while seq.next_element::<Valid>()?.is_some() {}
        Ok(Valid)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Valid, A::Error> {
        while map.next_entry::<Valid, Valid>()?.is_some() {}
        Ok(Valid)
    }
}

/// Reads a value, building only the `keep` properties of a top-level
/// object; the values of its other properties are checked as [`Valid`] and
/// dropped. For readers that cannot see the other properties (see
/// `crate::commands::transform::keys_seen`).
pub struct Projection<'a> {
    /// The properties to build.
    pub keep: &'a [String],
}

impl<'de> DeserializeSeed<'de> for &Projection<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        ValueSeed {
            depth: 0,
            keep: Some(self.keep),
        }
        .deserialize(deserializer)
    }
}

/// Reads a key of a projected object: the built key when it is kept.
struct KeptKey<'a> {
    builder: &'a ObjectBuilder,
    keep: &'a [String],
}

impl<'de> DeserializeSeed<'de> for KeptKey<'_> {
    type Value = Option<BuiltKey>;

    fn deserialize<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Option<BuiltKey>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeptKey<'_> {
    type Value = Option<BuiltKey>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }
    fn visit_str<E>(self, v: &str) -> Result<Option<BuiltKey>, E> {
        Ok(self
            .keep
            .iter()
            .any(|k| k == v)
            .then(|| self.builder.key(v)))
    }
}

/// Reads a map key for the object `0` builds; YAML allows non-string keys,
/// which JavaScript turns into strings.
struct KeySeed<'a>(&'a ObjectBuilder);

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = BuiltKey;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<BuiltKey, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
    type Value = BuiltKey;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map key")
    }
    fn visit_str<E>(self, v: &str) -> Result<BuiltKey, E> {
        Ok(self.0.key(v))
    }
    fn visit_bool<E>(self, v: bool) -> Result<BuiltKey, E> {
        Ok(self.0.other_key(&Value::Bool(v).to_js_string()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<BuiltKey, E> {
        Ok(self.0.other_key(&format_number(v as f64)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<BuiltKey, E> {
        Ok(self.0.other_key(&format_number(v as f64)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<BuiltKey, E> {
        Ok(self.0.other_key(&format_number(v)))
    }
    fn visit_unit<E>(self) -> Result<BuiltKey, E> {
        Ok(self.0.other_key("null"))
    }
    fn visit_none<E>(self) -> Result<BuiltKey, E> {
        Ok(self.0.other_key("null"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<BuiltKey, A::Error> {
        Err(de::Error::custom("map keys must be scalars"))
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<BuiltKey, A::Error> {
        Err(de::Error::custom("map keys must be scalars"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projection_builds_only_the_kept_properties() {
        let keep = ["v".to_string(), "id".to_string()];
        let read = |json: &str| {
            (&Projection { keep: &keep }).deserialize(&mut serde_json::Deserializer::from_str(json))
        };
        let obj = read(r#"{"id":1,"tags":["a",{"x":[1]}],"v":2,"name":"n","v":3}"#).unwrap();
        assert_eq!(obj.to_json(), r#"{"id":1,"v":3}"#);
        for whole in [r#"[{"tags":1}]"#, "7", r#""s""#, "null"] {
            assert_eq!(
                read(whole).unwrap(),
                Value::from_json(whole).unwrap(),
                "{whole}"
            );
        }
        for bad in [
            r#"{"tags":"\ud800"}"#,
            r#"{"tags":[1e400]}"#,
            r#"{"tags":[1,]}"#,
        ] {
            assert!(read(bad).is_err(), "{bad} is refused as Value refuses it");
            assert!(Value::from_json(bad).is_err(), "{bad}");
        }
    }
}
