//! Text as a person reads it, honestly: the one sanitiser of every human
//! view (the app's window and notifications, the link, inbox and pairing
//! pages). What could hide or reorder text (controls, bidirectional
//! controls, zero-width and other invisible code points, tag characters,
//! spaces other than U+0020, line separators) is shown as a visible escape,
//! `⟨U+202E⟩`, with a warning above; words that mix scripts, or imitate
//! Latin ones in another script, are flagged with what they look like
//! (UTS #39, through `unicode-security`). The HTTP API keeps the raw text.

use serde::Serialize;
use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_security::MixedScript;
use unicode_security::confusable_detection::skeleton;

/// Text made legible for a person.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Legible {
    /// The text, every hidden or direction-changing character escaped.
    pub text: String,
    /// What to say above the text: what was escaped, which words deceive.
    pub warnings: Vec<String>,
    /// The words that mix scripts or imitate Latin ones.
    pub lookalikes: Vec<Lookalike>,
}

/// A word that may not be what it looks like.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Lookalike {
    /// The word, escaped as in the text.
    pub word: String,
    /// What it reads as (its UTS #39 skeleton).
    pub looks_like: String,
    /// The scripts of its letters, e.g. `Cyrillic, Latin`.
    pub scripts: String,
}

impl Legible {
    /// Whether anything was escaped or flagged.
    pub fn is_suspect(&self) -> bool {
        !self.warnings.is_empty()
    }

    /// The warnings and the text, as one plain text (a notification's body).
    pub fn plain(&self) -> String {
        self.warnings
            .iter()
            .map(|w| format!("⚠ {w}\n"))
            .chain(std::iter::once(self.text.clone()))
            .collect()
    }
}

/// `raw` as a person should read it.
pub fn legible(raw: &str) -> Legible {
    let (text, escaped) = escape(raw);
    let mut warnings = Vec::new();
    if escaped > 0 {
        warnings.push(format!(
            "This text holds {escaped} hidden, invisible or direction-changing character{}, \
             shown as ⟨U+…⟩: it may not say what it seems to.",
            if escaped == 1 { "" } else { "s" }
        ));
    }
    let lookalikes = lookalikes(raw);
    for l in &lookalikes {
        warnings.push(format!(
            "\"{}\" mixes look-alike letters ({}): it reads as \"{}\".",
            l.word, l.scripts, l.looks_like
        ));
    }
    Legible {
        text,
        warnings,
        lookalikes,
    }
}

/// Whether `c` (after `previous`) is shown as an escape.
fn hidden(c: char, previous: Option<char>) -> bool {
    use GeneralCategory as G;
    if c == '\n' || c == '\t' {
        return false;
    }
    match get_general_category(c) {
        // Controls (C0, C1, DEL), format characters (bidirectional
        // controls, zero-width ones, tags, the soft hyphen, the BOM), line
        // and paragraph separators, private-use and unassigned code points.
        G::Control
        | G::Format
        | G::LineSeparator
        | G::ParagraphSeparator
        | G::PrivateUse
        | G::Surrogate
        | G::Unassigned => true,
        // Every space but the ASCII one.
        G::SpaceSeparator => c != ' ',
        // Invisible letters and marks (Default_Ignorable_Code_Point outside
        // Cf): Hangul fillers, the combining grapheme joiner, Mongolian
        // variation selectors. Variation selectors, except one emoji or
        // text selector right after a symbol (❤️), which is what they are
        // for; a run of them can smuggle bytes.
        _ => match u32::from(c) {
            0x115F | 0x1160 | 0x3164 | 0xFFA0 | 0x034F | 0x17B4 | 0x17B5 => true,
            0x180B..=0x180F | 0xE0100..=0xE01EF => true,
            0xFE00..=0xFE0F => {
                !(matches!(c, '\u{FE0E}' | '\u{FE0F}')
                    && previous.is_some_and(|p| {
                        !p.is_ascii() && get_general_category(p) == G::OtherSymbol
                    }))
            }
            _ => false,
        },
    }
}

/// The words of `raw` that mix scripts, or that are written wholly in
/// another script with letters that read as Latin ones, in a text that
/// also has Latin letters (`pаypal` with a Cyrillic `а`; `раураl`).
fn lookalikes(raw: &str) -> Vec<Lookalike> {
    let has_latin = raw.chars().any(|c| c.is_ascii_alphabetic());
    let mut found: Vec<Lookalike> = Vec::new();
    for word in raw.split(|c: char| !(c.is_alphanumeric() || is_mark(c))) {
        if word.is_ascii() || found.iter().any(|l| l.word == word) {
            continue;
        }
        let looks_like: String = skeleton(word).collect();
        let scripts = scripts(word);
        let mixed = !word.is_single_script();
        let imitates = has_latin
            && !scripts.is_empty()
            && !scripts.contains("Latin")
            && looks_like.chars().all(|c| c.is_ascii_alphanumeric());
        if mixed || imitates {
            found.push(Lookalike {
                word: escape(word).0,
                looks_like,
                scripts,
            });
        }
    }
    found
}

fn is_mark(c: char) -> bool {
    use GeneralCategory as G;
    matches!(
        get_general_category(c),
        G::NonspacingMark | G::SpacingMark | G::EnclosingMark
    )
}

/// `raw` with each hidden character as its visible escape, and how many
/// there were.
fn escape(raw: &str) -> (String, usize) {
    let mut text = String::with_capacity(raw.len());
    let mut escaped = 0;
    let mut previous = None;
    for c in raw.chars() {
        if hidden(c, previous) {
            text.push_str(&format!("⟨U+{:04X}⟩", u32::from(c)));
            escaped += 1;
        } else {
            text.push(c);
        }
        previous = Some(c);
    }
    (text, escaped)
}

/// The scripts of `word`'s letters, sorted, e.g. `Cyrillic, Latin`.
fn scripts(word: &str) -> String {
    use unicode_script::UnicodeScript;
    let mut names: Vec<&'static str> = word
        .chars()
        .filter(|c| c.is_alphabetic())
        .map(|c| c.script().full_name())
        .filter(|name| !matches!(*name, "Common" | "Inherited"))
        .collect();
    names.sort_unstable();
    names.dedup();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #35: `Publish notes to \u{202E}txt.exe\u{202C} the list?`
    /// read "exe.txt" in the Approvals window and in dunst.
    #[test]
    fn a_right_to_left_override_is_shown_not_obeyed() {
        let shown = legible("Publish notes to \u{202E}txt.exe\u{202C} the list?");
        assert_eq!(
            shown.text,
            "Publish notes to ⟨U+202E⟩txt.exe⟨U+202C⟩ the list?"
        );
        assert_eq!(shown.warnings.len(), 1, "{shown:?}");
        assert!(shown.warnings[0].contains("2 hidden"), "{shown:?}");
        assert!(shown.plain().starts_with("⚠ This text holds 2 hidden"));
    }

    #[test]
    fn every_kind_of_hidden_character_is_escaped() {
        for (c, name) in [
            ('\u{0007}', "a C0 control"),
            ('\r', "a carriage return"),
            ('\u{007F}', "DEL"),
            ('\u{0085}', "a C1 control"),
            ('\u{200B}', "a zero-width space"),
            ('\u{200D}', "a zero-width joiner"),
            ('\u{2060}', "a word joiner"),
            ('\u{FEFF}', "a BOM"),
            ('\u{00AD}', "a soft hyphen"),
            ('\u{061C}', "the Arabic letter mark"),
            ('\u{200F}', "a right-to-left mark"),
            ('\u{2067}', "a right-to-left isolate"),
            ('\u{E0041}', "a tag character"),
            ('\u{00A0}', "a no-break space"),
            ('\u{3000}', "an ideographic space"),
            ('\u{2028}', "a line separator"),
            ('\u{2029}', "a paragraph separator"),
            ('\u{3164}', "a Hangul filler"),
            ('\u{034F}', "the combining grapheme joiner"),
            ('\u{E0100}', "a supplementary variation selector"),
            ('\u{FE01}', "a variation selector after a letter"),
            ('\u{E000}', "a private-use character"),
        ] {
            let shown = legible(&format!("a{c}b"));
            assert_eq!(shown.text, format!("a⟨U+{:04X}⟩b", u32::from(c)), "{name}");
            assert!(shown.is_suspect(), "{name}");
        }
    }

    #[test]
    fn ordinary_text_is_left_as_it_is() {
        for text in [
            "Deploy v1.2 to prod?\n\tthen tell #ops",
            "Envoyer la facture à Zoë ?",
            "Отправить отчёт?",
            "部署到生产环境？",
            "I ❤️ it",
            "{\"to\": \"ops@example.com\"}",
        ] {
            let shown = legible(text);
            assert_eq!(shown.text, text);
            assert!(!shown.is_suspect(), "{text}: {shown:?}");
        }
    }

    #[test]
    fn a_word_that_mixes_scripts_or_imitates_latin_is_flagged() {
        // A Cyrillic `а` in a Latin word.
        let shown = legible("Pay p\u{0430}ypal.com now?");
        assert_eq!(shown.lookalikes.len(), 1, "{shown:?}");
        let l = &shown.lookalikes[0];
        assert_eq!(
            (l.word.as_str(), l.looks_like.as_str(), l.scripts.as_str()),
            ("p\u{0430}ypal", "paypal", "Cyrillic, Latin")
        );
        assert!(
            shown.warnings[0].contains("reads as \"paypal\""),
            "{shown:?}"
        );
        // A word wholly in Cyrillic letters that read as Latin, among
        // Latin words.
        let shown = legible("Log in to \u{0440}\u{0430}\u{0443}\u{0440}\u{0430}l today");
        assert_eq!(shown.lookalikes.len(), 1, "{shown:?}");
        // Greek look-alikes too.
        let shown = legible("Open \u{039F}ffice");
        assert_eq!(shown.lookalikes[0].scripts, "Greek, Latin", "{shown:?}");
    }
}
