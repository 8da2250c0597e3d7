//! `GET /workflows`: the workflow files of `<home>/workflows` and of the
//! settings' `workflowDirs`, by name, with their args as a JSON Schema.

use clawdis_e2e::control::{Client, start_server_full};
use serde_json::json;

#[test]
fn the_library_lists_workflows_by_name_with_their_args() {
    let dir = tempfile::tempdir().unwrap();
    let (home, extra) = (dir.path().join("home"), dir.path().join("extra"));
    std::fs::create_dir_all(home.join("workflows")).unwrap();
    std::fs::create_dir_all(&extra).unwrap();
    std::fs::write(
        home.join("workflows/report.lobster"),
        "description: Weekly report\nexpose_as_tool: true\nargs:\n  team:\n    type: string\n    description: which team\n  weeks:\n    default: 1\nsteps:\n  - id: s\n    run: echo report\n",
    )
    .unwrap();
    std::fs::write(
        extra.join("cleanup.yaml"),
        "name: tidy-up\nsteps:\n  - id: s\n    run: echo tidy\n",
    )
    .unwrap();
    std::fs::write(extra.join("broken.lobster"), "steps: []\n").unwrap();
    let server = start_server_full(
        &home,
        json!({"workflowDirs": [extra.to_str().unwrap()]}),
        &["--no-browser"],
        &[],
    );
    let listed = Client::new(&server).ok("GET", "/workflows", None);
    assert_eq!(
        listed["workflows"],
        json!([
            {
                "name": "report",
                "path": home.join("workflows/report.lobster"),
                "description": "Weekly report",
                "exposeAsTool": true,
                "argsSchema": {
                    "type": "object",
                    "properties": {
                        "team": {"type": "string", "description": "which team"},
                        "weeks": {"default": 1}
                    },
                    "required": ["team"]
                }
            },
            {
                "name": "tidy-up",
                "path": extra.join("cleanup.yaml"),
                "description": null,
                "exposeAsTool": false,
                "argsSchema": {"type": "object", "properties": {}, "required": []}
            }
        ]),
        "{listed}"
    );
    assert_eq!(
        listed["broken"][0]["path"],
        json!(extra.join("broken.lobster"))
    );
}
