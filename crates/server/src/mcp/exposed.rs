//! The workflows marked `expose_as_tool: true`, as tools named
//! `workflow.<name>`, with the workflow's description and an input schema
//! from its args.

use std::collections::BTreeMap;
use std::path::PathBuf;

use clawdis_engine::workflow::library::Library;
use serde_json::{Value, json};

/// The longest tool name MCP allows.
const MAX_NAME: usize = 64;

/// The prefix of every exposed workflow's tool.
const PREFIX: &str = "workflow.";

/// An exposed workflow as a tool.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Exposed {
    /// The tool's name.
    pub tool: String,
    /// The workflow's file (what the tool runs).
    pub path: PathBuf,
    /// The tool's description.
    pub description: String,
    /// The tool's input schema: the workflow's args.
    pub schema: Value,
}

impl Exposed {
    /// The workflow as MCP lists it.
    pub(crate) fn tool(&self) -> rmcp::model::Tool {
        super::tool(&self.tool, &self.description, &self.schema, false)
    }
}

/// The tool name of workflow `name`: `workflow.<name>`, where a character
/// outside MCP's naming rule becomes `_`, cut to 64 characters.
pub(crate) fn tool_name(name: &str) -> String {
    let mut tool = String::from(PREFIX);
    for c in name.chars() {
        if tool.len() >= MAX_NAME {
            break;
        }
        let allowed = c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-');
        tool.push(if allowed { c } else { '_' });
    }
    tool
}

/// The exposed workflows of `library`, by tool name. Two workflows whose
/// names give the same tool name: the first by name keeps it.
pub(crate) fn exposed(library: &Library) -> BTreeMap<String, Exposed> {
    let mut tools = BTreeMap::new();
    for entry in library.workflows.iter().filter(|w| w.expose_as_tool) {
        let tool = tool_name(&entry.name);
        if tools.contains_key(&tool) {
            tracing::warn!(workflow = %entry.name, %tool, "another workflow has this tool name already");
            continue;
        }
        let mut schema = entry.args_schema.to_serde();
        if !schema.is_object() {
            schema = json!({});
        }
        if let Some(fields) = schema.as_object_mut() {
            fields.insert("type".into(), json!("object"));
            fields.entry("properties").or_insert_with(|| json!({}));
        }
        let description = entry
            .description
            .clone()
            .filter(|d| !d.trim().is_empty())
            .unwrap_or_else(|| format!("Run the workflow {}", entry.name));
        tools.insert(
            tool.clone(),
            Exposed {
                tool,
                path: entry.path.clone(),
                description,
                schema,
            },
        );
    }
    tools
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_naming_rule_and_fit() {
        assert_eq!(tool_name("deploy"), "workflow.deploy");
        assert_eq!(tool_name("ship it: now!"), "workflow.ship_it__now_");
        assert_eq!(tool_name("café/v1.2-x"), "workflow.caf_/v1.2-x");
        let long = tool_name(&"n".repeat(100));
        assert_eq!(long.len(), 64);
        assert!(long.starts_with("workflow.nnn"));
    }
}
