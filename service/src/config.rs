//! How a `kobo` process is configured (flags and environment variables, see `cli`).

/// Sandbox or production: the sandbox returns OTPs in responses, accepts `http://` webhook
/// URLs and offers the sandbox-only operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Environment {
    Sandbox,
    Production,
}

impl Environment {
    pub fn as_str(self) -> &'static str {
        match self {
            Environment::Sandbox => "sandbox",
            Environment::Production => "production",
        }
    }
}

/// The settings the bank reads while serving requests.
#[derive(Clone, Debug)]
pub struct Config {
    pub environment: Environment,
}
