//! What lists share: the keyset cursor a page starts after.

/// A validated keyset cursor: the `created_at` (stored form) and `id` of the last row seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cursor {
    pub created_at: String,
    pub id: String,
}
