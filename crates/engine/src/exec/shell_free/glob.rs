//! Pathname patterns, as far as telling that one matches nothing.
//!
//! dash leaves a word with an unquoted `*`, `?` or `[` as it is when no
//! file matches it (`echo [1,2,3]` prints `[1,2,3]` in a directory without
//! a file named `1`, `,`, `2` or `3`). Such a line can still run without the
//! shell. When a pattern might match, or this module cannot be sure (a `/`,
//! a leading `.`, character classes, names that are not ASCII, a directory
//! it cannot read), the line goes to the shell, which expands it.

use std::path::Path;

/// Longest pattern this module reasons about.
const MAX_PATTERN: usize = 256;
/// Matching steps allowed per name: backtracking over several `*` can take
/// exponential time, and a pattern that needs more is left to the shell.
const MAX_STEPS: u32 = 10_000;

/// Whether every one of `patterns` (quoted characters escaped with `\`)
/// certainly matches no entry of `dir`, as dash's pathname expansion
/// would find; the directory is read once for all of them.
pub fn matches_nothing(patterns: &[&str], dir: &Path) -> bool {
    let patterns: Vec<Vec<char>> = patterns.iter().map(|p| p.chars().collect()).collect();
    let reasoned = |p: &Vec<char>| {
        p.len() <= MAX_PATTERN
            && !p.contains(&'/')
            && p.first() != Some(&'.')
            && !p.starts_with(&['\\', '.'])
    };
    if !patterns.iter().all(reasoned) {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    for entry in entries {
        let Ok(entry) = entry else { return false };
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            return false;
        };
        // dash matches a leading `.` only with a pattern that starts with one.
        if name.starts_with('.') {
            continue;
        }
        if !name.is_ascii() {
            return false;
        }
        let n: Vec<char> = name.chars().collect();
        for p in &patterns {
            let mut steps = MAX_STEPS;
            if fnmatch(p, &n, &mut steps) != Some(false) {
                return false;
            }
        }
    }
    true
}

/// Whether pattern `p` matches name `n`; `None` when unsure, or when it
/// takes more than `steps` steps.
fn fnmatch(p: &[char], n: &[char], steps: &mut u32) -> Option<bool> {
    *steps = steps.checked_sub(1)?;
    let Some((&first, rest)) = p.split_first() else {
        return Some(n.is_empty());
    };
    match first {
        '*' => {
            for skip in 0..=n.len() {
                if fnmatch(rest, &n[skip..], steps)? {
                    return Some(true);
                }
            }
            Some(false)
        }
        '?' => match n.split_first() {
            Some((_, n_rest)) => fnmatch(rest, n_rest, steps),
            None => Some(false),
        },
        '\\' => {
            let (&literal, rest) = rest.split_first()?;
            literal_then(literal, rest, n, steps)
        }
        '[' => {
            let (set, used) = Bracket::parse(rest)?;
            match n.split_first() {
                Some((&c, n_rest)) if set.has(c) => fnmatch(&rest[used..], n_rest, steps),
                _ => Some(false),
            }
        }
        c => literal_then(c, rest, n, steps),
    }
}

/// `c` must be `n`'s first character, then `rest` match the remainder.
fn literal_then(c: char, rest: &[char], n: &[char], steps: &mut u32) -> Option<bool> {
    match n.split_first() {
        Some((&first, n_rest)) if first == c => fnmatch(rest, n_rest, steps),
        _ => Some(false),
    }
}

/// A bracket expression: `[abc]`, `[a-z]`, `[!x]`.
struct Bracket {
    negated: bool,
    ranges: Vec<(char, char)>,
}

impl Bracket {
    /// Parses what follows a `[`, giving the set and the characters it took
    /// (through the closing `]`); `None` for what this module leaves to the
    /// shell: no closing `]`, `^`, classes, escapes inside, ranges of those.
    fn parse(p: &[char]) -> Option<(Bracket, usize)> {
        let mut i = 0;
        let negated = p.first() == Some(&'!');
        if negated {
            i += 1;
        }
        let start = i;
        let mut ranges = Vec::new();
        loop {
            let c = *p.get(i)?;
            if c == ']' && i > start {
                return Some((Bracket { negated, ranges }, i + 1));
            }
            if c == '\\' || c == '^' || (c == '[' && matches!(p.get(i + 1), Some(':' | '.' | '=')))
            {
                return None;
            }
            if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|&d| d != ']') {
                let hi = p[i + 2];
                if hi == '\\' || hi == '[' {
                    return None;
                }
                ranges.push((c, hi));
                i += 3;
            } else {
                ranges.push((c, c));
                i += 1;
            }
        }
    }

    fn has(&self, c: char) -> bool {
        self.ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != self.negated
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, n: &str) -> Option<bool> {
        let mut steps = MAX_STEPS;
        fnmatch(
            &p.chars().collect::<Vec<_>>(),
            &n.chars().collect::<Vec<_>>(),
            &mut steps,
        )
    }

    #[test]
    fn patterns_match_as_in_the_shell() {
        assert_eq!(m("[1,2,3]", "2"), Some(true));
        assert_eq!(m("[1,2,3]", "12"), Some(false));
        assert_eq!(m("a*b", "axxb"), Some(true));
        assert_eq!(m("a*b", "axxc"), Some(false));
        assert_eq!(m("?", ""), Some(false));
        assert_eq!(m("[!a-c]x", "dx"), Some(true));
        assert_eq!(m("[!a-c]x", "bx"), Some(false));
        assert_eq!(m("[]a]", "]"), Some(true));
        assert_eq!(m("\\*", "*"), Some(true));
        assert_eq!(m("\\*", "a"), Some(false));
        assert_eq!(
            m("[a", "a"),
            None,
            "an unclosed bracket is left to the shell"
        );
        assert_eq!(m("[[:digit:]]", "1"), None);
        assert_eq!(m("[^a]", "b"), None);
        let many_stars = "*a".repeat(20) + "b";
        assert_eq!(
            m(&many_stars, &"a".repeat(200)),
            None,
            "too much backtracking is left to the shell, quickly"
        );
    }

    /// Every pattern of up to four characters over a pattern alphabet that
    /// is said to match nothing in a directory of odd names is left as it
    /// is by dash there too.
    #[test]
    fn what_matches_nothing_here_dash_leaves_as_written() {
        assert!(
            std::fs::canonicalize("/bin/sh").is_ok_and(|p| p.ends_with("dash")),
            "this test compares with dash, and /bin/sh is not dash"
        );
        let dir = tempfile::tempdir().unwrap();
        for name in ["a", "b1", "1", "ab", "-", "]", "x!", ".a", "[b", "a-b"] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let alphabet = ['a', 'b', '1', '*', '?', '[', ']', '!', '-', '.'];
        let mut patterns = Vec::new();
        let mut level = vec![String::new()];
        for _ in 0..4 {
            level = level
                .iter()
                .flat_map(|l| alphabet.iter().map(move |c| format!("{l}{c}")))
                .collect();
            patterns.extend(
                level
                    .iter()
                    .filter(|p| p.contains(['*', '?', '[']))
                    .cloned(),
            );
        }
        let (none, some): (Vec<String>, Vec<String>) = patterns
            .into_iter()
            .partition(|p| matches_nothing(&[p], dir.path()));
        assert!(
            none.len() > 1000 && some.len() > 1000,
            "both answers are exercised ({} / {})",
            none.len(),
            some.len()
        );
        let script: String = none
            .iter()
            .map(|p| format!("set -- {p}\nprintf '%s:%s\\n' \"$#\" \"$1\"\n"))
            .collect();
        // Too long for one argument: the script goes in on stdin.
        let mut sh = std::process::Command::new("/bin/sh")
            .current_dir(dir.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = sh.stdin.take().unwrap();
        let feed =
            std::thread::spawn(move || std::io::Write::write_all(&mut stdin, script.as_bytes()));
        let out = sh.wait_with_output().unwrap();
        feed.join().unwrap().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dash = String::from_utf8(out.stdout).unwrap();
        for (pattern, line) in none.iter().zip(dash.lines()) {
            assert_eq!(line, format!("1:{pattern}"), "dash expands {pattern:?}");
        }
        assert_eq!(dash.lines().count(), none.len());
    }

    #[test]
    fn names_that_are_not_ascii_and_unreadable_directories_leave_it_to_the_shell() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches_nothing(&["[1,2]"], dir.path()));
        std::fs::write(dir.path().join("é"), "").unwrap();
        assert!(!matches_nothing(&["[1,2]"], dir.path()));
        assert!(!matches_nothing(&["[1,2]"], &dir.path().join("missing")));
        assert!(!matches_nothing(&["x/[1,2]"], dir.path()));
        assert!(!matches_nothing(&[".[1,2]"], dir.path()));
    }
}
