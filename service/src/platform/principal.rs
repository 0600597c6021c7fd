//! Who is calling: the principal a bearer token resolves to (`sessions::authenticate`), handed
//! to every authenticated operation in its `Caller`.

use std::collections::BTreeSet;

use crate::error::Error;
use generated_server::{Permission, ResponseCode, TokenFamily};

/// Who is calling: resolved from a bearer token by `sessions::authenticate` on every request.
#[derive(Clone, Debug)]
pub struct Principal {
    pub business_id: String,
    /// The server-side session the token is bound to.
    pub session_id: String,
    pub family: TokenFamily,
    /// Whether the business was active when the token was checked, in the same read as the
    /// session (a suspended business still reads; it moves no money: `60`).
    pub business_active: bool,
    /// For an integration token, the member who issued the client secret it was made with
    /// (`regenerate_secret`): whoever controls the credentials. `None` when the operator
    /// issued them, and for Dashboard tokens.
    pub credential_issuer: Option<String>,
    /// The team member behind a Dashboard token; `None` for integration tokens, which act for
    /// the whole business.
    pub member: Option<std::sync::Arc<MemberPrincipal>>,
}

/// The Dashboard member behind a session, with the permissions of their role at request time.
#[derive(Clone, Debug)]
pub struct MemberPrincipal {
    pub id: String,
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub role_id: String,
    pub is_owner: bool,
    pub permissions: BTreeSet<Permission>,
    /// The member, their role and their business as `get_profile` answers them, read with the
    /// session (kept as long as the session is, see `sessions::SessionCache`); `None` when the
    /// member's role is gone or is not one their business can use.
    pub profile: Option<generated_server::models::Profile>,
}

impl MemberPrincipal {
    /// How audit-log entries name the actor: `Adaeze Okafor <adaeze.okafor@adaezefoods.ng>`.
    pub fn display_name(&self) -> String {
        format!("{} {} <{}>", self.first_name, self.last_name, self.email)
    }
}

impl Principal {
    /// Who a row says made it: the member's id, or `integration` for the business's
    /// integration credentials.
    pub fn actor_id(&self) -> String {
        match &self.member {
            Some(member) => member.id.clone(),
            None => "integration".to_owned(),
        }
    }

    /// `60` unless the business was active at this request's authentication. A check that
    /// must hold until commit reads the business again inside its transaction
    /// (`accounts::ensure_business_active`).
    pub fn ensure_business_active(&self) -> Result<(), Error> {
        if self.business_active {
            Ok(())
        } else {
            Err(Error::new(ResponseCode::BusinessInactive))
        }
    }
}

/// The member behind a Dashboard principal. Every Dashboard operation has one; its absence is
/// a programming error, answered as an internal error rather than a panic.
pub fn member_of(principal: &Principal) -> Result<&MemberPrincipal, Error> {
    principal
        .member
        .as_deref()
        .ok_or_else(|| Error::internal("a Dashboard operation ran without a member"))
}
