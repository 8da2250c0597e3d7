//! A shell step that is one plain command (`cat`, `./tool 'a b'`) runs
//! without the shell when `/bin/sh` is dash, and one that is an output-only
//! builtin (`echo`, `printf`) runs in-process; what the step produces must
//! be exactly what running it through dash gives, whatever the line does.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;

use clawdis_e2e::lobster;
use clawdis_e2e::plain_system::on_plain_system;

/// Runs a workflow whose last step is `line` (with `stdin`), after a first
/// step that lets the run learn the login environment, with the fast paths
/// on or off (`CLAWDIS_FAST_PATHS`).
fn run(dir: &Path, line: &str, fast: bool) -> Output {
    // A block scalar is written as is; anything else as a JSON string.
    let yaml = if line.starts_with('|') {
        line.to_string()
    } else {
        serde_json::to_string(line).unwrap()
    };
    let flow = format!(
        "steps:\n  - id: warm\n    run: ':'\n  - id: t\n    run: {yaml}\n    stdin: \"some input\\n\"\n"
    );
    std::fs::write(dir.join("wf.lobster"), flow).unwrap();
    let mut cmd = lobster(&dir.join("state"));
    cmd.current_dir(dir)
        .env("PWD", "/")
        .env("ODD-NAME", "x")
        .env("CLAWDIS_FAST_PATHS", if fast { "1" } else { "0" })
        .args(["run", "--mode", "tool", "wf.lobster"]);
    // Lines run without the shell only where the login environment is
    // replayed, which needs plain profiles, the machine's included.
    on_plain_system(&cmd).output().unwrap()
}

fn script(dir: &Path, name: &str, body: &str, mode: u32) {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A directory with the scripts the cases run.
fn setup() -> tempfile::TempDir {
    let dash = std::fs::canonicalize("/bin/sh").unwrap();
    assert!(
        dash.ends_with("dash"),
        "these cases compare with dash, Debian's /bin/sh; here it is {}",
        dash.display()
    );
    let dir = tempfile::tempdir().unwrap();
    script(
        dir.path(),
        "parent.sh",
        "#!/bin/sh\ncat /proc/$PPID/comm\n",
        0o755,
    );
    script(
        dir.path(),
        "die.sh",
        "#!/bin/sh\necho before\necho oops >&2\nkill -$1 $$\n",
        0o755,
    );
    script(
        dir.path(),
        "env.sh",
        "#!/bin/sh\necho \"pwd=$PWD odd=$(env | grep -c ODD-NAME) home=${HOME:+set}\"\n",
        0o755,
    );
    script(
        dir.path(),
        "args.sh",
        "#!/bin/sh\nfor a; do printf '<%s>' \"$a\"; done\n",
        0o755,
    );
    script(
        dir.path(),
        "no-shebang.sh",
        "echo from a script without a shebang\n",
        0o755,
    );
    script(
        dir.path(),
        "not-executable.sh",
        "#!/bin/sh\necho never\n",
        0o644,
    );
    dir
}

#[test]
fn plain_commands_run_without_the_shell() {
    let dir = setup();
    let out = run(dir.path(), "./parent.sh", true);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("\"lobster\\n\""),
        "the command's parent is lobster itself: {text}"
    );
}

#[test]
fn plain_commands_give_what_the_shell_gives() {
    let dir = setup();
    let through_shell = run(dir.path(), "./parent.sh", false);
    assert!(
        String::from_utf8_lossy(&through_shell.stdout).contains("\"sh\\n\""),
        "with the fast paths off, lines run through the shell: {}",
        String::from_utf8_lossy(&through_shell.stdout)
    );
    for line in [
        "cat",
        "cat -n",
        "|\n      cat -n",
        "ls /no/such/path",
        "./env.sh",
        "./die.sh TERM",
        "./die.sh KILL",
        "./die.sh INT",
        "./die.sh PIPE",
        "./die.sh HUP",
        "./no-shebang.sh",
        "./not-executable.sh",
        "no-such-command-anywhere",
        "./missing.sh",
        r#"./args.sh 'a b' "c\"d\\e\n" f\ g '' x''y"#,
        "echo hello   world",
        "echo -n x",
        "echo -e x",
        r#"echo "a  b" 'c d' '' -n"#,
        "echo",
        "echo 'x\\ny'",
        r#"printf '[{"id":1,"v":5}]'"#,
        r"printf '%s\n' a b c",
        "printf '%s=%s;' a",
        r"printf '100%%\t\\'",
        "printf x extra",
        "printf '%d' 3",
        "true",
        "false",
        ":",
        "echo [1,2,3] {a,b}! c*",
        "./args.sh *.sh [!x]* c* 'd'?",
        "./args.sh [a] ?? x[",
    ] {
        let direct = run(dir.path(), line, true);
        let shelled = run(dir.path(), line, false);
        assert_eq!(direct.status.code(), shelled.status.code(), "{line}");
        assert_eq!(
            String::from_utf8_lossy(&direct.stdout),
            String::from_utf8_lossy(&shelled.stdout),
            "{line}"
        );
        assert_eq!(
            String::from_utf8_lossy(&direct.stderr),
            String::from_utf8_lossy(&shelled.stderr),
            "{line}"
        );
    }
}
