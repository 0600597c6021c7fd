//! What lists share: the keyset cursor a page starts after.

use chrono::{DateTime, Utc};

/// A validated keyset cursor: the `created_at` (as stored: to the microsecond) and `id` of the
/// last row seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cursor {
    pub created_at: DateTime<Utc>,
    pub id: uuid::Uuid,
}
