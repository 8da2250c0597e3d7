//! Target ids as agents type them: exact, or a unique case-insensitive
//! prefix (OpenClaw's rule).

use crate::{BrowserError, Result};

/// Picks the one id in `ids` that `wanted` names: an exact match wins, else
/// a unique case-insensitive prefix. Ambiguity is a conflict, no
/// match is "tab not found" (missing).
pub fn resolve<'a>(
    wanted: &str,
    ids: impl IntoIterator<Item = &'a str> + Clone,
) -> Result<&'a str> {
    let wanted = wanted.trim();
    if wanted.is_empty() {
        return Err(BrowserError::invalid("targetId is required"));
    }
    if let Some(id) = ids.clone().into_iter().find(|id| *id == wanted) {
        return Ok(id);
    }
    let lower = wanted.to_ascii_lowercase();
    let mut matches = ids
        .into_iter()
        .filter(|id| id.to_ascii_lowercase().starts_with(&lower));
    match (matches.next(), matches.next()) {
        (Some(id), None) => Ok(id),
        (Some(_), Some(_)) => Err(BrowserError::Conflict("ambiguous target id prefix".into())),
        (None, _) => Err(BrowserError::Missing("tab not found".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_prefix_ambiguous_and_unknown() {
        let ids = ["ABCD1234", "ABCE9999", "FF00"];
        assert_eq!(resolve("FF00", ids).unwrap(), "FF00");
        assert_eq!(resolve("abcd", ids).unwrap(), "ABCD1234");
        assert!(matches!(
            resolve("ABC", ids),
            Err(BrowserError::Conflict(_))
        ));
        assert!(matches!(
            resolve("zzzz", ids),
            Err(BrowserError::Missing(_))
        ));
        assert!(matches!(
            resolve(" ", ids),
            Err(BrowserError::Invalid { .. })
        ));
        // An exact id wins over being a prefix of another.
        assert_eq!(resolve("AB", ["AB", "ABC"]).unwrap(), "AB");
    }
}
