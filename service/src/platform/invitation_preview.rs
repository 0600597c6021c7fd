//! `get_invitation` (issue 59): what an invitation link is for, read before the invited person
//! chooses a password: the business, the role and what it allows, the person, the link's
//! expiry. A link that can no longer be accepted is `41` at once, as `accept_invite` would
//! answer it after the password was typed. Reading does not use the invitation up; failed
//! reads count against `accept_invite`'s per-address limit.

use generated_server::{models, Permission};

use crate::datastore::{businesses, members, roles};
use crate::error::Error;
use crate::platform::caller::Caller;
use crate::platform::context::Platform;
use crate::platform::permissions;
use crate::platform::team::{invitation_rejected, usable_invitation};
use crate::platform::throttle::{self, Limit, OnSuccess};

pub async fn get_invitation(
    platform: &Platform,
    caller: &Caller<()>,
    body: models::GetInvitationRequest,
) -> Result<models::InvitationPreview, Error> {
    let Platform {
        store,
        config,
        clock,
        ..
    } = platform;
    let now = clock.now();
    let limit = Limit::new(
        format!("invite:address:{}", throttle::network_of(caller.client_ip)),
        config.invitation_per_address,
        OnSuccess::GiveBack,
    );
    let attempt = throttle::claim(store, vec![limit], now).await?;
    let Some(invitation) = usable_invitation(store, config, body.token.as_str(), now).await? else {
        attempt.failed(store, now).await?;
        return Err(invitation_rejected());
    };
    attempt.abandoned(store).await?;
    let business_id = invitation.business_id.as_str();
    let member = members::find(store, business_id, &invitation.member_id)
        .await?
        .ok_or_else(invitation_rejected)?;
    let role = roles::find(store, business_id, &member.role_id.to_string())
        .await?
        .ok_or_else(|| Error::internal("an invited member's role vanished"))?;
    let granted = permissions::parse_stored(&role.permission_codes)?;
    let permission_names = permissions::catalog_order()
        .iter()
        .filter(|permission| granted.contains(permission))
        .map(|permission: &Permission| permission.name().to_owned())
        .collect();
    Ok(models::InvitationPreview {
        business_name: businesses::name_of(store, business_id).await?,
        email: member.email,
        first_name: member.first_name,
        last_name: member.last_name,
        role_name: role.name,
        role_description: role.description,
        permission_names,
        expires_at: member
            .invitation_expires_at
            .ok_or_else(invitation_rejected)?,
    })
}
