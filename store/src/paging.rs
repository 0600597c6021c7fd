//! What lists share: the keyset cursor a page starts after.

use chrono::{DateTime, Utc};

/// A validated keyset cursor: the `created_at` (as stored: to the microsecond) and `id` of the
/// last row seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cursor {
    pub created_at: DateTime<Utc>,
    pub id: uuid::Uuid,
}

/// A `LIKE` pattern matching `needle` anywhere, lower-cased, with `\`, `%` and `_` escaped
/// (use with `ESCAPE '\'`).
pub fn contains_pattern(needle: &str) -> String {
    let mut pattern = String::with_capacity(needle.len() + 2);
    pattern.push('%');
    for c in needle.to_lowercase().chars() {
        if matches!(c, '\\' | '%' | '_') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_patterns_escape_wildcards() {
        assert_eq!(contains_pattern("Create_Customer"), "%create\\_customer%");
        assert_eq!(contains_pattern("50%"), "%50\\%%");
    }
}
