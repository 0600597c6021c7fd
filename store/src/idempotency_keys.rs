//! The rows of `idempotency_keys` (see the datastore module of the same name in `kobo`).

/// Which key: the business's, for one operation.
#[derive(Clone, Copy, Debug)]
pub struct KeyOf<'a> {
    pub business_id: &'a str,
    /// The operation's id.
    pub operation: &'a str,
    pub key: &'a str,
}

/// A key as stored: the body's hash, and the answer or the refusal once there is one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredKey {
    pub request_hash: String,
    /// The answer's `data`, JSON text.
    pub response_data: Option<String>,
    pub refusal_code: Option<String>,
    pub refusal_message: Option<String>,
}
