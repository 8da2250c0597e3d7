//! Which profile files can be replayed: those that are plain.
//!
//! A login shell's effect on the environment can stand in for running it
//! only when that effect is provably a function of what the key of
//! [`super::remembered`] holds: the files' bytes and the inherited
//! variables. A plain file is one whose every statement is an assignment
//! (`A=b`, `A=b C=d`), `export` of names or assignments, or `unset` of
//! names, with values made of literal text, quotes and plain variable
//! references (`$A`, `${A}`). Anything else may read the file system, the
//! clock, the working directory or a program's output, or change the
//! process in ways a replay cannot show: conditions, command substitutions,
//! `.`/`source`, other commands, redirections, pipes, patterns, tildes,
//! backslashes and the variables a shell computes itself (`$RANDOM`,
//! `$PWD`, `$$`, ...). Debian's and Ubuntu's stock `~/.profile`, which add
//! `~/bin` to `PATH` only if it exists, are not plain, and neither is any
//! stock `/etc/profile`: there every command runs through the login shell,
//! as Lobster runs it.

/// Variables a shell sets or computes itself: reading one is reading the
/// clock, the process or the working directory, not the inherited
/// environment.
const COMPUTED: [&str; 19] = [
    "PWD",
    "OLDPWD",
    "SHLVL",
    "_",
    "RANDOM",
    "SRANDOM",
    "SECONDS",
    "LINENO",
    "BASHPID",
    "PPID",
    "EPOCHSECONDS",
    "EPOCHREALTIME",
    "BASH_COMMAND",
    "BASH_SUBSHELL",
    "HISTCMD",
    "OPTIND",
    "OPTARG",
    "COLUMNS",
    "LINES",
];

/// One word of a statement, after quote removal.
#[derive(Default)]
struct Word {
    text: String,
    /// Only unquoted literal characters so far (a keyword or a name).
    bare: bool,
    /// The text before the first unquoted `=`, when that is a name.
    assigns: Option<String>,
}

/// Whether `text`, a profile file's contents, is plain (see the module
/// documentation).
pub(super) fn is_plain(text: &str) -> bool {
    statements(text).is_some_and(|statements| statements.iter().all(|words| plain_statement(words)))
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn plain_statement(words: &[Word]) -> bool {
    let Some(first) = words.first() else {
        return true;
    };
    if first.assigns.is_some() {
        return words.iter().all(|w| w.assigns.is_some());
    }
    match (first.bare, first.text.as_str()) {
        (true, "export") => words[1..]
            .iter()
            .all(|w| w.assigns.is_some() || (w.bare && is_name(&w.text))),
        (true, "unset") => words[1..]
            .iter()
            .all(|w| w.bare && (is_name(&w.text) || w.text == "-v")),
        _ => false,
    }
}

/// Splits `text` into statements of words; `None` at anything a plain file
/// cannot hold.
fn statements(text: &str) -> Option<Vec<Vec<Word>>> {
    let mut out = Vec::new();
    let mut words: Vec<Word> = Vec::new();
    let mut word: Option<Word> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | ';' => {
                words.extend(word.take());
                if c == '\n' || c == ';' {
                    out.push(std::mem::take(&mut words));
                }
            }
            '#' if word.is_none() => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
                out.push(std::mem::take(&mut words));
            }
            '\'' => {
                let w = word.get_or_insert_with(|| Word {
                    bare: true,
                    ..Word::default()
                });
                w.bare = false;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => w.text.push(c),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(|| Word {
                    bare: true,
                    ..Word::default()
                });
                w.bare = false;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '$' => variable(&mut chars, &mut w.text)?,
                        '`' | '\\' => return None,
                        c => w.text.push(c),
                    }
                }
            }
            '$' => {
                let w = word.get_or_insert_with(|| Word {
                    bare: true,
                    ..Word::default()
                });
                w.bare = false;
                variable(&mut chars, &mut w.text)?;
            }
            '=' => {
                let w = word.get_or_insert_with(|| Word {
                    bare: true,
                    ..Word::default()
                });
                if w.bare && w.assigns.is_none() && is_name(&w.text) {
                    w.assigns = Some(w.text.clone());
                }
                w.bare = false;
                w.text.push(c);
            }
            '|' | '&' | '<' | '>' | '(' | ')' | '`' | '\\' | '*' | '?' | '[' | ']' | '~' | '{'
            | '}' | '!' | '\r' => return None,
            c => {
                word.get_or_insert_with(|| Word {
                    bare: true,
                    ..Word::default()
                })
                .text
                .push(c);
            }
        }
    }
    words.extend(word);
    out.push(words);
    Some(out)
}

/// Reads a variable reference after `$`: `NAME` or `{NAME}`, naming a
/// variable the shell does not compute itself.
fn variable(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, into: &mut String) -> Option<()> {
    let braced = chars.next_if_eq(&'{').is_some();
    let mut name = String::new();
    while let Some(c) = chars.next_if(|c| c.is_ascii_alphanumeric() || *c == '_') {
        name.push(c);
    }
    if braced && chars.next() != Some('}') {
        return None;
    }
    if !is_name(&name) || COMPUTED.contains(&name.as_str()) {
        return None;
    }
    into.push_str("${");
    into.push_str(&name);
    into.push('}');
    Some(())
}

#[cfg(test)]
mod tests {
    use super::is_plain;

    /// Debian 12's `/etc/skel/.profile`, which Ubuntu ships too.
    const DEBIAN_PROFILE: &str = r#"# ~/.profile: executed by the command interpreter for login shells.
# if running bash
if [ -n "$BASH_VERSION" ]; then
    # include .bashrc if it exists
    if [ -f "$HOME/.bashrc" ]; then
	. "$HOME/.bashrc"
    fi
fi

# set PATH so it includes user's private bin if it exists
if [ -d "$HOME/bin" ] ; then
    PATH="$HOME/bin:$PATH"
fi
"#;

    #[test]
    fn assignments_exports_and_unsets_are_plain() {
        for text in [
            "",
            "# only a comment\n\n",
            "export A=1\n",
            "A=1 B='two words' C=\"$A:${B}\"\nexport A B\n",
            "export PATH=\"$HOME/.cargo/bin:$PATH\"; unset OLD\n",
            "export EDITOR=vim # the editor\n",
            "unset -v A B\n",
            "X=a=b\n",
        ] {
            assert!(is_plain(text), "{text:?}");
        }
    }

    #[test]
    fn anything_that_may_read_more_than_bytes_and_variables_is_not() {
        for text in [
            DEBIAN_PROFILE,
            "if [ -d \"$HOME/bin\" ]; then PATH=\"$HOME/bin:$PATH\"; fi\n",
            "export NOW=$(date +%s)\n",
            "export NOW=`date`\n",
            "export NOW=\"$(date)\"\n",
            ". \"$HOME/.cargo/env\"\n",
            "source ~/.extra\n",
            "mesg n 2> /dev/null || true\n",
            "export HERE=$PWD\n",
            "export HERE=\"${PWD}\"\n",
            "export R=$RANDOM\n",
            "export P=$$\n",
            "export A=${B:-c}\n",
            "PATH=~/bin:$PATH\n",
            "A=*.sh\n",
            "A=1 cmd\n",
            "export -p\n",
            "A='unterminated\n",
            "A=\"a\\\"b\"\n",
            "A=x\\\ny\n",
            "umask 077\n",
            "cd /tmp\n",
            "echo hi\n",
            "{ A=1; }\n",
            "A=1 &\n",
        ] {
            assert!(!is_plain(text), "{text:?}");
        }
    }
}
