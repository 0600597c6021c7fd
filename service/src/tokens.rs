//! Signing and verifying the JWTs of both token families.

/// The server's token signing key.
#[derive(Clone)]
pub struct TokenKeys {
    #[allow(dead_code)]
    secret: Vec<u8>,
}

impl TokenKeys {
    pub fn new(secret: Vec<u8>) -> Self {
        TokenKeys { secret }
    }
}

impl std::fmt::Debug for TokenKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenKeys(..)")
    }
}
