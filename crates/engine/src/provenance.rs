//! Which process asked: its pid, executable, arguments, working directory
//! and the chain of its parents, as the operating system reports them. A
//! person reads this before confirming what a process asks for (an approver
//! token), so it comes from the OS, never from what the process says.

use serde::{Deserialize, Serialize};
use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System, UpdateKind};

/// How many parents are listed above the process itself.
const MAX_PARENTS: usize = 8;

/// A process, as the OS describes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Process {
    /// Its id.
    pub pid: u32,
    /// Its executable's path, when the OS tells it.
    pub exe: Option<String>,
    /// Its name (the executable's file name, or what the OS calls it).
    pub name: String,
    /// Its command line.
    pub args: Vec<String>,
    /// Its working directory, when the OS tells it.
    pub cwd: Option<String>,
    /// The terminal its standard input is, when it is one and the OS tells
    /// it (`/dev/pts/3`; Linux only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal: Option<String>,
    /// Its parent, the parent's parent, and so on (at most 8), nearest
    /// first; each without parents of its own.
    #[serde(default)]
    pub parents: Vec<Process>,
}

impl Process {
    /// The process and its parents as a person reads them, one a line:
    /// `pid 12 · /usr/bin/x · x --flag · in /home/me · on /dev/pts/3`,
    /// then `  from …` for each parent.
    pub fn chain(&self) -> String {
        std::iter::once(self.line())
            .chain(self.parents.iter().map(|p| format!("  from {}", p.line())))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn line(&self) -> String {
        let mut line = format!(
            "pid {} · {}",
            self.pid,
            self.exe.as_deref().unwrap_or(&self.name)
        );
        if !self.args.is_empty() {
            line.push_str(&format!(" · {}", self.args.join(" ")));
        }
        if let Some(cwd) = &self.cwd {
            line.push_str(&format!(" · in {cwd}"));
        }
        if let Some(tty) = &self.terminal {
            line.push_str(&format!(" · on {tty}"));
        }
        line
    }

    /// Process `pid` and its parents; `None` when it is gone (or hidden).
    pub fn of(pid: u32) -> Option<Process> {
        let mut system = System::new().ok()?;
        let what = ProcessRefreshKind::nothing()
            .with_exe(UpdateKind::Always)
            .with_cmd(UpdateKind::Always)
            .with_cwd(UpdateKind::Always);
        system.refresh_processes_specifics(ProcessesToUpdate::All, true, what);
        let mut me = describe(&system, Pid::from_u32(pid))?;
        let mut next = system.process(Pid::from_u32(pid))?.parent();
        while let Some(parent) = next {
            if me.parents.len() == MAX_PARENTS || parent.as_u32() == 0 {
                break;
            }
            let Some(found) = describe(&system, parent) else {
                break;
            };
            me.parents.push(found);
            next = system.process(parent).and_then(sysinfo::Process::parent);
        }
        Some(me)
    }
}

fn describe(system: &System, pid: Pid) -> Option<Process> {
    let p = system.process(pid)?;
    let text = |s: &std::ffi::OsStr| s.to_string_lossy().into_owned();
    Some(Process {
        pid: pid.as_u32(),
        exe: p.exe().map(|e| e.to_string_lossy().into_owned()),
        name: text(p.name()),
        args: p.cmd().iter().map(|a| text(a)).collect(),
        cwd: p.cwd().map(|c| c.to_string_lossy().into_owned()),
        terminal: terminal(pid.as_u32()),
        parents: Vec::new(),
    })
}

/// The terminal process `pid` reads from: what its standard input links to,
/// when that is a terminal device.
fn terminal(pid: u32) -> Option<String> {
    let input = std::fs::read_link(format!("/proc/{pid}/fd/0")).ok()?;
    let input = input.to_str()?;
    (input.starts_with("/dev/pts/") || input.starts_with("/dev/tty")).then(|| input.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_described_with_its_parents() {
        let me = Process::of(std::process::id()).expect("this process");
        assert_eq!(me.pid, std::process::id());
        let exe = std::env::current_exe().unwrap();
        assert_eq!(me.exe.as_deref(), exe.to_str());
        assert_eq!(me.cwd.as_deref(), std::env::current_dir().unwrap().to_str());
        assert_eq!(
            me.args.first().map(String::as_str),
            std::env::args().next().as_deref()
        );
        // The test runner started it.
        assert!(!me.parents.is_empty());
        assert!(me.parents.iter().all(|p| p.parents.is_empty()));
        assert_eq!(Process::of(u32::MAX - 1), None);
    }
}
