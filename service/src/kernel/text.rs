//! Rules for text people give that other people read (names of members, roles, businesses):
//! no control characters (CR/LF included, so a name cannot forge lines in an email) and no
//! bidirectional controls (which reorder what a reader sees), and a comparison key that folds
//! case, Unicode compatibility forms and look-alike characters, so that "Оwner" in Cyrillic
//! is the same name as "Owner".

use crate::kernel::Invalid;
use unicode_normalization::UnicodeNormalization;
use unicode_security::confusable_detection::skeleton;

/// Refused, naming `field`, when `value` holds a character a name may not.
pub fn check_name(field: &str, value: &str) -> Result<(), Invalid> {
    match value.chars().find(|c| is_forbidden_in_names(*c)) {
        Some(c) => Err(Invalid::new(format!(
            "`{field}`: must not contain control or bidirectional formatting characters \
             (found U+{:04X})",
            u32::from(c)
        ))),
        None => Ok(()),
    }
}

/// Control characters (C0, DEL, C1), the bidirectional controls and marks, and the invisible
/// characters that make two names look alike (zero-width space, word joiner, BOM).
fn is_forbidden_in_names(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}'
        )
}

/// The key two names are compared by: equal keys are the same name to a reader.
pub fn name_key(name: &str) -> String {
    let folded: String = name.trim().nfkc().flat_map(char::to_lowercase).collect();
    skeleton(&folded).flat_map(char::to_lowercase).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_refuse_controls_line_breaks_and_bidi_overrides() {
        for good in [
            "Adaeze Okafor",
            "Ọlá Adébáyọ̀",
            "Treasury Analyst",
            "Zoë",
            "O'Brien",
        ] {
            assert!(check_name("name", good).is_ok(), "{good}");
        }
        for bad in [
            "a\u{0}b",
            "Ife\r\nBcc: x@y",
            "tab\there",
            "\u{202E}nimdA",
            "a\u{200B}b",
            "\u{7F}",
        ] {
            let error = check_name("first_name", bad).unwrap_err();
            assert!(
                error.message().starts_with("`first_name`"),
                "{}",
                error.message()
            );
        }
    }

    #[test]
    fn look_alike_names_share_a_key() {
        assert_eq!(name_key("Owner"), name_key("owner"));
        assert_eq!(name_key("Owner"), name_key("\u{41E}wner")); // Cyrillic О
        assert_eq!(name_key("Admin"), name_key("ＡＤＭＩＮ")); // full-width
        assert_ne!(name_key("Owner"), name_key("Viewer"));
        assert_eq!(name_key("  Maker "), name_key("maker"));
    }
}
