//! The fast paths change nothing a command sees: the same workflows run
//! with them on and off (`CLAWDIS_FAST_PATHS=0`) print the same, on this
//! machine's own system profiles and on a machine whose system profiles are
//! plain (where the login environment may be replayed), while what the
//! profiles depend on changes between runs and between steps.
//!
//! Issue #20: Debian's and Ubuntu's stock `~/.profile` add `~/.local/bin`
//! to `PATH` only if it exists; after it was created, the remembered
//! environment still lacked it.

use std::path::{Path, PathBuf};
use std::process::Command;

use clawdis_e2e::plain_system::on_plain_system;
use clawdis_e2e::{envelope, lobster, workspace_root};

/// Which system profiles the runs see.
#[derive(Clone, Copy, Debug)]
enum System {
    /// This machine's own (Debian's `/etc/profile` is not plain).
    Stock,
    /// Empty system profiles: only the user's profile decides.
    Plain,
}

/// A home with a profile and a workflow, run with the fast paths on and
/// off; each side keeps its own state directory across runs, so the "on"
/// side remembers what it learnt as a user's machine does.
struct Case {
    dir: tempfile::TempDir,
    system: System,
}

impl Case {
    fn new(system: System, profile: &str, workflow: &str) -> Case {
        let dir = tempfile::tempdir().unwrap();
        let case = Case { dir, system };
        std::fs::create_dir_all(case.home()).unwrap();
        std::fs::write(case.home().join(".profile"), profile).unwrap();
        std::fs::write(case.home().join("wf.lobster"), workflow).unwrap();
        case
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn run_one(&self, fast: bool) -> (Option<i32>, serde_json::Value) {
        let state = self
            .dir
            .path()
            .join(if fast { "state-on" } else { "state-off" });
        let mut cmd: Command = lobster(&state);
        cmd.current_dir(self.home())
            .env("HOME", self.home())
            .env_remove("ENV")
            .env_remove("BASH_ENV")
            .env_remove("ZDOTDIR")
            .args(["run", "--mode", "tool", "wf.lobster"]);
        if !fast {
            cmd.env("CLAWDIS_FAST_PATHS", "0");
        }
        let out = match self.system {
            System::Stock => cmd.output().unwrap(),
            System::Plain => on_plain_system(&cmd).output().unwrap(),
        };
        let home = self.home().to_string_lossy().into_owned();
        let text = envelope(&out).to_string().replace(&home, "~");
        (out.status.code(), serde_json::from_str(&text).unwrap())
    }

    /// Runs the workflow both ways and fails unless they agree; the result.
    fn run(&self, what: &str) -> serde_json::Value {
        let (on, off) = (self.run_one(true), self.run_one(false));
        assert_eq!(
            on, off,
            "{what} on a {:?} system: fast paths on (left) and off (right) differ",
            self.system
        );
        on.1
    }

    /// Whether the "on" side remembered a login environment.
    fn remembered(&self) -> bool {
        std::fs::read_to_string(self.dir.path().join("state-on/login-env.json"))
            .is_ok_and(|t| t.contains("\"confirmed\":true"))
    }
}

fn fixture(name: &str) -> String {
    let path = workspace_root().join("tests/fixtures/profiles").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn tool(dir: &Path, name: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\necho {name} from {}\n",
            dir.file_name().unwrap().to_string_lossy()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// Prints the `PATH` and which `pipx-tool` a command finds.
const WHICH_TOOL: &str = "steps:\n  - id: path\n    run: echo \"$PATH\"\n  - id: tool\n    run: pipx-tool || echo none\n  - id: both\n    run: printf '%s|%s' \"$path.stdout\" \"$tool.stdout\"\n";

#[test]
fn stock_profiles_see_bin_directories_created_between_runs() {
    for profile in ["debian-skel.profile", "debian-root.profile"] {
        for system in [System::Stock, System::Plain] {
            let case = Case::new(system, &fixture(profile), WHICH_TOOL);
            for _ in 0..3 {
                let out = case.run(profile);
                assert!(
                    out["output"].to_string().contains("none"),
                    "{profile}: {out}"
                );
            }
            tool(&case.home().join(".local/bin"), "pipx-tool");
            let out = case.run(profile);
            if profile == "debian-skel.profile" {
                assert!(
                    out["output"].to_string().contains("pipx-tool from bin"),
                    "{profile} finds ~/.local/bin now: {out}"
                );
            }
            tool(&case.home().join("bin"), "pipx-tool");
            case.run(profile);
            assert!(
                !case.remembered(),
                "{profile} is not plain: nothing may be remembered"
            );
        }
    }
}

/// A step creates `~/.local/bin` and the next step of the same run uses it.
#[test]
fn a_directory_created_by_an_earlier_step_is_seen_by_the_next() {
    let flow = "steps:\n  - id: install\n    run: mkdir -p \"$HOME/.local/bin\" && printf '#!/bin/sh\\necho installed\\n' > \"$HOME/.local/bin/pipx-tool\" && chmod +x \"$HOME/.local/bin/pipx-tool\"\n  - id: use\n    run: pipx-tool || echo none\n";
    for system in [System::Stock, System::Plain] {
        let case = Case::new(system, &fixture("debian-skel.profile"), flow);
        // Warm the memory first, then start from a home without the tool.
        for _ in 0..3 {
            case.run("warm-up");
            std::fs::remove_dir_all(case.home().join(".local")).unwrap();
        }
        assert_eq!(
            case.run("install then use")["output"],
            serde_json::json!(["installed\n"])
        );
    }
}

/// Profiles that read the clock, a file, or the working directory see them
/// afresh for every command.
#[test]
fn profiles_that_read_the_clock_files_or_the_directory() {
    let clock = "export NOW=$(date +%s%N)\n";
    let flow = "steps:\n  - id: a\n    run: echo \"$NOW\"\n  - id: b\n    run: echo \"$NOW\"\n  - id: cmp\n    run: if [ \"$a.stdout\" = \"$b.stdout\" ]; then echo same; else echo differ; fi\n";
    let file = "export N=$(cat \"$HOME/n\")\n";
    let counting = "steps:\n  - id: a\n    run: echo \"$N\"; echo $((N+1)) > \"$HOME/n\"\n  - id: b\n    run: echo \"$N\"\n  - id: out\n    run: printf '%s%s' \"$a.stdout\" \"$b.stdout\"\n";
    let dir = "export HERE=$(pwd)\nexport PWD_SEEN=\"$PWD\"\n";
    let moving = "steps:\n  - id: a\n    run: echo \"$HERE $PWD_SEEN\"\n  - id: b\n    cwd: sub\n    run: echo \"$HERE $PWD_SEEN\"\n  - id: out\n    run: printf '%s%s' \"$a.stdout\" \"$b.stdout\"\n";
    for system in [System::Stock, System::Plain] {
        let case = Case::new(system, clock, flow);
        for _ in 0..3 {
            assert_eq!(case.run("clock")["output"], serde_json::json!(["differ\n"]));
        }
        let case = Case::new(system, file, counting);
        std::fs::write(case.home().join("n"), "1\n").unwrap();
        for run in 0..3 {
            // Each side counts in its own run: reset between the two.
            std::fs::write(case.home().join("n"), format!("{run}\n")).unwrap();
            let on = case.run_one(true);
            std::fs::write(case.home().join("n"), format!("{run}\n")).unwrap();
            let off = case.run_one(false);
            assert_eq!(on, off, "a profile reading a file on a {system:?} system");
            assert_eq!(
                on.1["output"],
                serde_json::json!([format!("{run}\n{}\n", run + 1)])
            );
        }
        let case = Case::new(system, dir, moving);
        std::fs::create_dir_all(case.home().join("sub")).unwrap();
        for _ in 0..3 {
            assert_eq!(
                case.run("directory")["output"],
                serde_json::json!(["~ ~\n~/sub ~/sub\n"])
            );
        }
        assert!(!case.remembered());
    }
}

/// A profile that sources another file sees that file's edits.
#[test]
fn profiles_that_source_other_files() {
    let flow = "steps:\n  - id: a\n    run: echo \"$FROM_EXTRA\"\n";
    for system in [System::Stock, System::Plain] {
        let case = Case::new(system, ". \"$HOME/.extra\"\n", flow);
        for value in ["one", "one", "one", "two", "three"] {
            std::fs::write(
                case.home().join(".extra"),
                format!("export FROM_EXTRA={value}\n"),
            )
            .unwrap();
            assert_eq!(
                case.run("sourcing")["output"],
                serde_json::json!([format!("{value}\n")])
            );
        }
        assert!(!case.remembered());
    }
}

/// A plain profile is replayed where the system's are plain too, and
/// gives what the login shell gives; edits to it are seen at once.
#[test]
fn plain_profiles_are_replayed_only_on_a_plain_system() {
    let flow = "steps:\n  - id: a\n    run: echo \"$A $B\"\n  - id: b\n    run: echo \"$A $B\"\n";
    for system in [System::Stock, System::Plain] {
        let case = Case::new(system, "export A=1 B=\"$HOME/x\"\n", flow);
        for _ in 0..3 {
            assert_eq!(case.run("plain")["output"], serde_json::json!(["1 ~/x\n"]));
        }
        assert_eq!(
            case.remembered(),
            matches!(system, System::Plain),
            "{system:?}"
        );
        std::fs::write(case.home().join(".profile"), "export A=2 B=y\n").unwrap();
        assert_eq!(case.run("edited")["output"], serde_json::json!(["2 y\n"]));
    }
}
