//! `lobster resume` arguments, with Lobster's checks and messages.

use clawdis_engine::error::{Error, Result};
use clawdis_engine::pause::Intent;
use clawdis_engine::resume::ResumeArgs;
use clawdis_engine::value::Value;

fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "y" => Some(true),
        "0" | "false" | "no" | "n" => Some(false),
        _ => None,
    }
}

/// Parses `resume` argv with Lobster's checks and messages (all `parse_error`).
pub fn parse_args(argv: &[String]) -> Result<ResumeArgs> {
    let mut token = None;
    let mut id = None;
    let mut approve: Option<String> = None;
    let mut response: Option<String> = None;
    let mut cancel: Option<String> = None;
    let mut i = 0;
    while i < argv.len() {
        let tok = argv[i].as_str();
        let (name, inline) = match tok.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (tok, None),
        };
        let take = |i: &mut usize| -> Option<String> {
            if inline.is_some() {
                return inline.clone();
            }
            let v = argv.get(*i + 1).cloned();
            if v.is_some() {
                *i += 1;
            }
            v
        };
        match name {
            "--token" => token = take(&mut i),
            "--id" => id = take(&mut i),
            "--approve" | "--decision" => approve = take(&mut i),
            "--response-json" => response = take(&mut i),
            "--cancel" => {
                cancel = match &inline {
                    Some(v) => Some(v.clone()),
                    None => match argv.get(i + 1) {
                        Some(next) if !next.starts_with("--") => {
                            i += 1;
                            Some(next.clone())
                        }
                        _ => Some("true".into()),
                    },
                }
            }
            _ => {}
        }
        i += 1;
    }
    if token.as_deref().is_none_or(str::is_empty) && id.as_deref().is_none_or(str::is_empty) {
        return Err(Error::parse("resume requires --token or --id"));
    }
    let cancel = match cancel {
        None => false,
        Some(v) => {
            parse_bool(&v).ok_or_else(|| Error::parse("resume --cancel must be true or false"))?
        }
    };
    let intents =
        usize::from(approve.is_some()) + usize::from(response.is_some()) + usize::from(cancel);
    if intents > 1 {
        return Err(Error::parse(
            "resume accepts only one of --approve, --response-json, or --cancel",
        ));
    }
    if intents == 0 {
        return Err(Error::parse(
            "resume requires --approve yes|no, --response-json, or --cancel",
        ));
    }
    let intent = if let Some(raw) = response {
        Intent::Respond(
            Value::from_json(&raw)
                .map_err(|_| Error::parse("resume --response-json must be valid JSON"))?,
        )
    } else if let Some(decision) = approve {
        match decision.trim().to_ascii_lowercase().as_str() {
            "yes" | "y" => Intent::Approve(true),
            "no" | "n" => Intent::Approve(false),
            _ => return Err(Error::parse("resume --approve must be yes or no")),
        }
    } else {
        Intent::Cancel
    };
    Ok(ResumeArgs { token, id, intent })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Result<ResumeArgs> {
        parse_args(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn argument_errors_match_lobster() {
        assert_eq!(
            args(&["--approve", "yes"]).unwrap_err().message,
            "resume requires --token or --id"
        );
        assert_eq!(
            args(&["--token", "t"]).unwrap_err().message,
            "resume requires --approve yes|no, --response-json, or --cancel"
        );
        assert_eq!(
            args(&["--token", "t", "--approve", "maybe"])
                .unwrap_err()
                .message,
            "resume --approve must be yes or no"
        );
        assert_eq!(
            args(&["--token", "t", "--approve", "yes", "--cancel"])
                .unwrap_err()
                .message,
            "resume accepts only one of --approve, --response-json, or --cancel"
        );
        assert_eq!(
            args(&["--token", "t", "--response-json", "{bad"])
                .unwrap_err()
                .message,
            "resume --response-json must be valid JSON"
        );
        assert_eq!(
            args(&["--token", "t", "--cancel", "perhaps"])
                .unwrap_err()
                .message,
            "resume --cancel must be true or false"
        );
        assert_eq!(
            args(&["--token=t", "--cancel=false"]).unwrap_err().message,
            "resume requires --approve yes|no, --response-json, or --cancel"
        );
        assert_eq!(
            args(&["--id", "ab12cd34", "--decision", "Y"])
                .unwrap()
                .intent,
            Intent::Approve(true)
        );
    }
}
