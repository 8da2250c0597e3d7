//! What `commands.list` and `help` report about each command, recorded
//! from Lobster 2026.9.13 (`commands.list` plus `help <name>`) so agents
//! that read them see the same interface. The commands themselves are
//! [`super::COMMANDS`]; a unit test holds the two to the same names.

use std::sync::LazyLock;

use crate::error::{Error, Result};
use crate::value::Value;

static CATALOG_JSON: &str = include_str!("catalog.json");

/// The catalog's entries, or why it could not be read.
fn catalog() -> Result<&'static [Value]> {
    static CATALOG: LazyLock<Result<Vec<Value>, String>> =
        LazyLock::new(|| match Value::from_json(CATALOG_JSON) {
            Ok(Value::Array(entries)) if entries.iter().all(is_entry) => Ok(entries),
            Ok(_) => Err("not an array of {name, help, ...} entries".into()),
            Err(e) => Err(e.to_string()),
        });
    CATALOG
        .as_deref()
        .map_err(|e| Error::runtime(format!("the commands catalog is malformed: {e}")))
}

fn is_entry(v: &Value) -> bool {
    v.get_key("name").and_then(Value::as_str).is_some()
        && v.get_key("help").and_then(Value::as_str).is_some()
}

/// `lobster help <name>` text; `None` for a name the catalog lacks.
pub fn help(name: &str) -> Result<Option<String>> {
    Ok(catalog()?
        .iter()
        .find(|c| c.get_key("name").and_then(Value::as_str) == Some(name))
        .and_then(|c| c.get_key("help"))
        .map(Value::to_js_string))
}

/// The `commands.list` entries: `{name, description, argsSchema, examples, sideEffects}`.
pub fn describe_all() -> Result<Vec<Value>> {
    Ok(catalog()?
        .iter()
        .filter_map(Value::as_object)
        .map(|c| {
            Value::Object(
                c.iter()
                    .filter(|(k, _)| *k != "help")
                    .map(|(k, v)| (k, v.clone()))
                    .collect(),
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::super::{COMMANDS, Runs};
    use super::*;

    #[test]
    fn the_catalog_names_exactly_the_commands_in_the_table() {
        let catalog: Vec<&str> = catalog()
            .unwrap()
            .iter()
            .map(|c| c.get_key("name").and_then(Value::as_str).unwrap())
            .collect();
        let table: Vec<&str> = COMMANDS.iter().map(|c| c.name).collect();
        assert_eq!(
            catalog, table,
            "catalog.json and COMMANDS, both sorted by name"
        );
    }

    #[test]
    fn the_table_is_sorted_for_lookup() {
        assert!(COMMANDS.windows(2).all(|w| w[0].name < w[1].name));
    }

    #[test]
    fn pure_commands_declare_no_side_effects() {
        for command in COMMANDS {
            let entry = catalog()
                .unwrap()
                .iter()
                .find(|c| c.get_key("name").and_then(Value::as_str) == Some(command.name))
                .unwrap();
            let effects = entry
                .get_key("sideEffects")
                .and_then(Value::as_array)
                .unwrap();
            if matches!(command.runs, Runs::Pure(_)) {
                assert!(
                    effects.is_empty(),
                    "{} is pure but declares {effects:?}",
                    command.name
                );
            }
        }
    }
}
