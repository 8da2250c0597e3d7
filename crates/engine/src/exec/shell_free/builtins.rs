//! dash builtins whose effect is only their output and status, run
//! in-process: `echo`, `printf`, `true`, `false` and `:`.
//!
//! dash runs these without starting a program, so computing their output
//! here is what dash itself does. Only the forms whose output is certain
//! are taken: `echo` with no backslash in its arguments (dash's `echo`
//! interprets escapes), and `printf` with a format of plain text, `%s`,
//! `%%` and the single-letter escapes, that does not start with `-`.
//! Everything else (other conversions, octal escapes, `\c`, options) goes
//! to the shell.

/// What a builtin printed and its exit status.
#[derive(Debug, PartialEq)]
pub struct Done {
    /// Exit status.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
}

/// Runs `argv` (its first word names the builtin) when it is one of the
/// builtins above in a form this module covers.
pub fn run(argv: &[String]) -> Option<Done> {
    let (name, args) = argv.split_first()?;
    let ok = |stdout: String| Some(Done { code: 0, stdout });
    match name.as_str() {
        ":" | "true" => ok(String::new()),
        "false" => Some(Done {
            code: 1,
            stdout: String::new(),
        }),
        "echo" => echo(args).and_then(ok),
        "printf" => printf(args).and_then(ok),
        _ => None,
    }
}

/// dash's `echo`: `-n` as the first argument drops the newline; nothing
/// else is an option.
fn echo(args: &[String]) -> Option<String> {
    if args.iter().any(|a| a.contains('\\')) {
        return None;
    }
    let (newline, args) = match args.split_first() {
        Some((first, rest)) if first == "-n" => (false, rest),
        _ => (true, args),
    };
    let mut out = args.join(" ");
    if newline {
        out.push('\n');
    }
    Some(out)
}

/// dash's `printf` for formats of text, `%s`, `%%` and single-letter
/// escapes: the format is reused while arguments remain and the last pass
/// consumed some; a missing argument prints as nothing.
fn printf(args: &[String]) -> Option<String> {
    let (format, mut rest) = args.split_first()?;
    if format.starts_with('-') {
        return None;
    }
    let mut out = String::new();
    loop {
        let before = rest.len();
        let mut chars = format.chars();
        while let Some(c) = chars.next() {
            match c {
                '%' => match chars.next()? {
                    '%' => out.push('%'),
                    's' => {
                        if let Some((arg, tail)) = rest.split_first() {
                            out.push_str(arg);
                            rest = tail;
                        }
                    }
                    _ => return None,
                },
                '\\' => out.push(match chars.next()? {
                    '\\' => '\\',
                    'a' => '\u{7}',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    'v' => '\u{b}',
                    _ => return None,
                }),
                c => out.push(c),
            }
        }
        if rest.is_empty() || rest.len() == before {
            return Some(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(line: &[&str]) -> Option<String> {
        let argv: Vec<String> = line.iter().map(|s| s.to_string()).collect();
        run(&argv).map(|d| d.stdout)
    }

    #[test]
    fn echo_joins_its_arguments() {
        assert_eq!(out(&["echo", "a", "b  c", ""]).unwrap(), "a b  c \n");
        assert_eq!(out(&["echo"]).unwrap(), "\n");
        assert_eq!(out(&["echo", "-n", "x", "-n"]).unwrap(), "x -n");
        assert_eq!(out(&["echo", "-e", "x"]).unwrap(), "-e x\n");
        assert_eq!(out(&["echo", "-nn"]).unwrap(), "-nn\n");
        assert_eq!(out(&["echo", "a\\nb"]), None, "dash's echo reads escapes");
    }

    #[test]
    fn printf_covers_text_s_and_simple_escapes() {
        assert_eq!(out(&["printf", "[{\"id\":1}]"]).unwrap(), "[{\"id\":1}]");
        assert_eq!(out(&["printf", "100%%\\n"]).unwrap(), "100%\n");
        assert_eq!(
            out(&["printf", "%s\\n", "a", "b", "c"]).unwrap(),
            "a\nb\nc\n"
        );
        assert_eq!(
            out(&["printf", "%s=%s;", "a", "1", "b"]).unwrap(),
            "a=1;b=;"
        );
        assert_eq!(out(&["printf", "x", "unused"]).unwrap(), "x");
        assert_eq!(
            out(&["printf", "<%s>", "a\\n"]).unwrap(),
            "<a\\n>",
            "arguments of %s are not escaped"
        );
        assert_eq!(out(&["printf", "\\t\\\\"]).unwrap(), "\t\\");
        for refused in [
            &["printf"][..],
            &["printf", "%d", "1"],
            &["printf", "%5s", "a"],
            &["printf", "\\101"],
            &["printf", "a\\c"],
            &["printf", "--", "x"],
            &["printf", "-v"],
            &["printf", "%"],
        ] {
            assert_eq!(out(refused), None, "{refused:?}");
        }
    }

    #[test]
    fn true_false_and_colon() {
        let argv = |s: &str| vec![s.to_string(), "ignored".to_string()];
        assert_eq!(
            run(&argv("true")),
            Some(Done {
                code: 0,
                stdout: String::new()
            })
        );
        assert_eq!(
            run(&argv(":")),
            Some(Done {
                code: 0,
                stdout: String::new()
            })
        );
        assert_eq!(
            run(&argv("false")),
            Some(Done {
                code: 1,
                stdout: String::new()
            })
        );
        assert_eq!(run(&argv("cat")), None);
    }

    /// Every `echo` and `printf` over a small alphabet of arguments that is
    /// run here prints exactly what dash prints.
    #[test]
    fn covered_forms_print_what_dash_prints() {
        assert!(
            std::fs::canonicalize("/bin/sh").is_ok_and(|p| p.ends_with("dash")),
            "this test compares with dash, and /bin/sh is not dash"
        );
        let alphabet = ["a", "%", "s", "\\", "n", "t", "-", " "];
        let mut words = vec![String::new()];
        let mut level = vec![String::new()];
        for _ in 0..3 {
            level = level
                .iter()
                .flat_map(|w| alphabet.iter().map(move |c| format!("{w}{c}")))
                .collect();
            words.extend(level.iter().cloned());
        }
        let mut cases: Vec<Vec<String>> = Vec::new();
        for w in &words {
            for tail in [&[][..], &["x"][..], &["x", "-n", ""][..]] {
                for name in ["echo", "printf"] {
                    let argv: Vec<String> = [name, w.as_str()]
                        .into_iter()
                        .chain(tail.iter().copied())
                        .map(String::from)
                        .collect();
                    if run(&argv).is_some() {
                        cases.push(argv);
                    }
                }
            }
        }
        assert!(
            cases.len() > 1000,
            "the alphabet exercises both builtins ({} cases)",
            cases.len()
        );
        let quote = |a: &str| format!("'{}'", a.replace('\'', "'\\''"));
        let script: String = cases
            .iter()
            .map(|argv| {
                format!(
                    "{}; printf '\\001'\n",
                    argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")
                )
            })
            .collect();
        let out = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(&script)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dash = String::from_utf8(out.stdout).unwrap();
        let printed: Vec<&str> = dash.split('\u{1}').collect();
        assert_eq!(printed.len(), cases.len() + 1);
        for (argv, theirs) in cases.iter().zip(printed) {
            assert_eq!(run(argv).unwrap().stdout, theirs, "{argv:?}");
        }
    }
}
