//! Help texts.

/// The general help text (`lobster`, `lobster --help`, `lobster help`).
pub const GENERAL: &str = "lobster — OpenClaw-native typed shell

Usage:
  lobster '<pipeline>'
  lobster run --mode tool '<pipeline>'
  lobster run path/to/workflow.lobster
  lobster run --file path/to/workflow.lobster --args-json '{...}'
  lobster run --dry-run --file path/to/workflow.lobster
  lobster run --dry-run '<pipeline>'
  lobster graph --file path/to/workflow.lobster --format mermaid
  lobster graph --file path/to/workflow.lobster --format dot
  lobster graph --file path/to/workflow.lobster --format ascii
  lobster resume --token <token> --approve yes|no
  lobster resume --token <token> --response-json '{...}'
  lobster resume --token <token> --cancel
  lobster doctor
  lobster version
  lobster help <command>

Flags:
  --dry-run  Validate and print the execution plan without running anything

Modes:
  - human (default): renderers can write to stdout
  - tool: prints a single JSON envelope for easy integration

Examples:
  lobster 'exec --json \"echo [1,2,3]\" | json'
  lobster run --mode tool 'exec --json \"echo [1]\" | approve --prompt \"ok?\"'

Commands:
  exec, head, json, pick, table, where, approve, ask, openclaw.agent, openclaw.invoke, llm.invoke, llm_task.invoke, state.get, state.set, diff.last, commands.list, workflows.list, workflows.run, graph
";

/// `lobster graph --help`.
pub const GRAPH: &str = "lobster graph — render workflow step graphs

Usage:
  lobster graph --file path/to/workflow.lobster [--format mermaid|dot|ascii] [--args-json '{...}']
  lobster graph path/to/workflow.lobster [--format mermaid|dot|ascii]

Flags:
  --file       Workflow file path (.lobster, .yaml, .yml, .json)
  --format     Output format: mermaid (default), dot, ascii
  --args-json  JSON object used to resolve workflow args for labels
";
