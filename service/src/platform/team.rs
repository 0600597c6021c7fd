//! The team: members, invitations, roles and the permission catalog.
//!
//! Every query is scoped to the caller's business: a member, role or invitation of another
//! business is answered exactly like one that does not exist (`47`). Built-in roles
//! (`business_id IS NULL`) belong to every business and can't be edited.

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, Utc};
use generated_server::models::{self, AuditAction};
use generated_server::{Permission, ResponseCode};

use crate::datastore::invitations::{self, NewInvitation};
use crate::datastore::members::{self, MemberFilter, MemberOrder, NewMember};
use crate::datastore::{businesses, roles};
use crate::error::{Error, OrInternal};
use crate::kernel::config::Config;
use crate::kernel::paging::{self, Page};
use crate::kernel::secrets::{self};
use crate::kernel::store::{self, Store, Tx};
use crate::kernel::text;
use crate::outbox::{self, Notification};
use crate::platform::business::{self, normalize_email};
use crate::platform::caller::Caller;
use crate::platform::context::Platform;
use crate::platform::idempotency::Keyed;
use crate::platform::logs::{self, AuditEntry};
use crate::platform::permissions::{self, OWNER_ROLE_ID};
use crate::platform::principal::{member_of, MemberPrincipal};
use crate::platform::sessions;
use crate::platform::team_views::{member_from, member_view};
use crate::platform::throttle::{self, Limit, OnSuccess};

fn member_not_found(member_id: impl std::fmt::Display) -> Error {
    Error::new(ResponseCode::NotFound)
        .with_message(format!("No member {member_id} in this business"))
}

pub(super) fn role_not_found(role_id: impl std::fmt::Display) -> Error {
    Error::new(ResponseCode::NotFound).with_message(format!("No role {role_id} in this business"))
}

pub(super) fn invalid(message: impl Into<std::borrow::Cow<'static, str>>) -> Error {
    Error::new(ResponseCode::InvalidRequest).with_message(message)
}

pub(super) fn invalid_state(message: impl Into<std::borrow::Cow<'static, str>>) -> Error {
    Error::new(ResponseCode::InvalidState).with_message(message)
}

fn owners_only(message: &'static str) -> Error {
    Error::new(ResponseCode::PermissionDenied).with_message(message)
}

/// Whom an invitation is for.
pub struct Invitee<'a> {
    pub business_id: &'a str,
    pub business_name: &'a str,
    pub member_id: &'a str,
    pub email: &'a str,
    pub first_name: &'a str,
    pub role_name: &'a str,
}

/// Creates an invitation for a pending member and enqueues its email, inside `tx`. Returns the
/// token (only its hash is stored).
pub async fn invite(
    tx: &mut Tx,
    config: &Config,
    now: DateTime<Utc>,
    invitee: &Invitee<'_>,
) -> Result<String, Error> {
    let token = secrets::random_token("inv_");
    let ttl_hours = config.invitation_ttl_seconds / 3600;
    let token_hash = secrets::sha256_hex(&token);
    let invitation = NewInvitation {
        business_id: invitee.business_id,
        member_id: invitee.member_id,
        token_hash: &token_hash,
        expires_at: now + Duration::seconds(config.invitation_ttl_seconds as i64),
    };
    invitations::insert(tx, &invitation, now).await?;
    outbox::enqueue(
        tx,
        now,
        &Notification {
            business_id: Some(invitee.business_id.to_owned()),
            channel: "email",
            recipient: invitee.email.to_owned(),
            subject: format!("You are invited to {} on Kobo", invitee.business_name),
            body: format!(
                "Hello {first_name},\n\nYou are invited to join {business} on the Kobo Dashboard \
                 as {role}.\n\nOpen this link to see the invitation and choose your password \
                 (it works once and expires in {ttl_hours} hours):\n{link}{token}\n\nIf you \
                 did not expect this invitation, ignore this email: nothing happens unless the \
                 link is used.\n",
                first_name = invitee.first_name,
                business = invitee.business_name,
                role = invitee.role_name,
                link = config.invitation_link_base,
            ),
        },
    )
    .await?;
    Ok(token)
}

/// The invitation token in an invitation email's body (for the test kit).
#[cfg(any(test, feature = "testkit"))]
pub fn invitation_token_in(body: &str) -> Option<&str> {
    let start = body.find("inv_")?;
    let token = &body[start..];
    let end = token
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(token.len());
    Some(&token[..end])
}

async fn business_name(tx: &mut Tx, business_id: &str) -> Result<String, Error> {
    Ok(businesses::name_of(tx, business_id).await?)
}

pub async fn fetch_members(
    platform: &Platform,
    caller: &Caller,
    body: models::FetchMembersRequest,
) -> Result<Page<Vec<models::Member>>, Error> {
    let Platform { store, clock, .. } = platform;
    let now = clock.now();
    let page = body.page.get();
    let page_size = body.page_size.get().min(paging::PAGE_SIZE_MAX);
    let mut filter = MemberFilter {
        business_id: caller.principal.business_id.clone(),
        ascending: body.sort_order == Some(models::SortOrder::Asc),
        order: match body.sort_by {
            None | Some(models::MemberSortField::DateJoined) => MemberOrder::DateJoined,
            Some(models::MemberSortField::Email) => MemberOrder::Email,
            Some(models::MemberSortField::FirstName) => MemberOrder::FirstName,
            Some(models::MemberSortField::LastName) => MemberOrder::LastName,
            // Members who never logged in come last either way.
            Some(models::MemberSortField::LastLogin) => MemberOrder::LastLogin,
        },
        offset: (page - 1)
            .saturating_mul(page_size)
            .min(i64::MAX as u64 / 2) as i64,
        page_size,
        ..MemberFilter::default()
    };
    if let Some(filters) = &body.filters {
        let (from, until) = paging::day_range(filters.start_date, filters.end_date, "filters.")?;
        filter.joined_from = from;
        filter.joined_until = until;
        filter.is_active = filters.is_active;
        filter.role_id = filters.role_id.map(|role_id| role_id.to_string());
    }
    let rows = members::list(store, &filter).await?;
    let mut members: Vec<models::Member> =
        rows.into_iter().map(|row| member_from(row, now)).collect();
    let has_more = paging::trim_to_page(&mut members, page_size);
    Ok(Page {
        data: members,
        pagination: paging::numbered_pagination(has_more, page, page_size),
    })
}

/// A role row as the team rules need it.
struct RoleRef {
    id: String,
    name: String,
    permissions: BTreeSet<Permission>,
}

impl RoleRef {
    fn is_owner(&self) -> bool {
        self.id == OWNER_ROLE_ID
    }
}

async fn usable_role(tx: &mut Tx, business_id: &str, role_id: &str) -> Result<RoleRef, Error> {
    let grant = roles::find_grant(tx, business_id, role_id)
        .await?
        .ok_or_else(|| role_not_found(role_id))?;
    Ok(RoleRef {
        permissions: permissions::parse_stored(&grant.permission_codes)?,
        id: grant.id,
        name: grant.name,
    })
}

/// `43` unless `actor` holds every permission in `granted`: no one hands out a permission
/// they do not hold (in a maker-checker bank, this is what keeps one person from giving
/// themselves both `transfer.initiate` and `transfer.approve`). An Owner holds them all.
pub(super) fn check_grantable(
    actor: &MemberPrincipal,
    granted: &BTreeSet<Permission>,
) -> Result<(), Error> {
    if actor.is_owner {
        return Ok(());
    }
    let lacking = granted
        .iter()
        .find(|permission| !permission.implicit() && !actor.permissions.contains(permission));
    match lacking {
        Some(permission) => Err(
            Error::new(ResponseCode::PermissionDenied).with_message(format!(
                "You cannot grant {}: your role does not hold it",
                permission.as_str()
            )),
        ),
        None => Ok(()),
    }
}

pub async fn add_member(
    platform: &Platform,
    caller: &Caller,
    body: models::AddMemberRequest,
) -> Result<(), Error> {
    let Platform {
        store,
        config,
        clock,
        ..
    } = platform;
    let now = clock.now();
    let actor = member_of(&caller.principal)?;
    let business_id = caller.principal.business_id.as_str();
    let email =
        normalize_email(&body.email).ok_or_else(|| invalid("`email`: must be an email address"))?;
    let first_name = body.first_name.trim();
    let last_name = body.last_name.trim();
    text::check_name("first_name", first_name)?;
    text::check_name("last_name", last_name)?;
    if first_name.is_empty() || last_name.is_empty() {
        let field = if first_name.is_empty() {
            "first_name"
        } else {
            "last_name"
        };
        return Err(invalid(format!("`{field}`: must not be blank")));
    }

    // The answer stored under the key is `{}` (no data).
    let invited = Keyed::new(store, clock, caller, &body)
        .run_in_transaction(async |tx, _| {
            let role = usable_role(tx, business_id, &body.role_id.to_string()).await?;
            if role.is_owner() && !actor.is_owner {
                return Err(owners_only("Only an Owner can invite someone as Owner"));
            }
            check_grantable(actor, &role.permissions)?;
            // Another business's members are none of this one's concern: only this business is
            // asked.
            if members::email_taken(tx, business_id, &email).await? {
                return Err(duplicate_email(&email));
            }
            let member_id = store::new_id();
            let new = NewMember {
                id: &member_id,
                business_id,
                email: &email,
                first_name,
                last_name,
                role_id: &role.id,
            };
            members::insert_invited(tx, &new, now)
                .await
                .map_err(|error| {
                    if error.is_conflict() {
                        duplicate_email(&email)
                    } else {
                        Error::from(error)
                    }
                })?;
            let business_name = business_name(tx, business_id).await?;
            let invitee = Invitee {
                business_id,
                business_name: &business_name,
                member_id: &member_id,
                email: &email,
                first_name,
                role_name: &role.name,
            };
            invite(tx, config, now, &invitee).await?;
            let entry = AuditEntry::by(caller, AuditAction::AddMember).target("member", &member_id);
            logs::audit(tx, now, entry).await?;
            Ok(models::EmptyObject {})
        })
        .await;
    invited.map(|_| ())
}

/// `26` for an email already a member of this business (the only business it is asked of).
fn duplicate_email(email: &str) -> Error {
    Error::new(ResponseCode::Duplicate)
        .with_message(format!("{email} is already a member of this business"))
}

pub async fn resend_invite(
    platform: &Platform,
    caller: &Caller,
    body: models::ResendInviteRequest,
) -> Result<(), Error> {
    let Platform {
        store,
        config,
        clock,
        ..
    } = platform;
    let now = clock.now();
    let business_id = caller.principal.business_id.as_str();
    let member_id = body.member_id.to_string();
    let mut tx = store.begin().await?;
    let member = member_view(&mut tx, business_id, &member_id, now)
        .await?
        .ok_or_else(|| member_not_found(&member_id))?;
    if member.invitation_status == models::InvitationStatus::Accepted {
        return Err(invalid_state(
            "The member has already accepted the invitation",
        ));
    }
    revoke_invitations(&mut tx, &member_id, now).await?;
    let business_name = business_name(&mut tx, business_id).await?;
    let invitee = Invitee {
        business_id,
        business_name: &business_name,
        member_id: &member_id,
        email: &member.email,
        first_name: &member.first_name,
        role_name: &member.role_name,
    };
    invite(&mut tx, config, now, &invitee).await?;
    logs::audit(
        &mut tx,
        now,
        AuditEntry::by(caller, AuditAction::ResendInvite).target("member", &member_id),
    )
    .await?;
    tx.commit().await.or_internal()
}

/// `accept_invite`: a usable invitation token (`41` otherwise: unknown, used, revoked,
/// expired, or of another environment's business) sets the member's password and activates
/// them, once.
pub async fn accept_invite(
    platform: &Platform,
    caller: &Caller<()>,
    body: models::AcceptInviteRequest,
) -> Result<models::Member, Error> {
    let Platform {
        store,
        config,
        passwords,
        clock,
        ..
    } = platform;
    secrets::check_password_rules("password", body.password.as_str())?;
    if body.confirm_password.as_str() != body.password.as_str() {
        return Err(invalid("`confirm_password`: must equal password"));
    }
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
    let hash = match passwords.hash(body.password.as_str()).await {
        Ok(hash) => hash,
        Err(busy) => {
            attempt.abandoned(store).await?;
            return Err(busy.into());
        }
    };
    let mut tx = store.begin().await?;
    let member = accept(&mut tx, caller, &invitation, &hash, now).await?;
    attempt.succeeded(&mut tx).await?;
    tx.commit().await.or_internal()?;
    Ok(member)
}

pub(super) fn invitation_rejected() -> Error {
    Error::new(ResponseCode::Unauthenticated)
        .with_message("The invitation is invalid or has expired; ask for a new one")
}

/// An invitation that can be accepted now.
pub(super) struct Invitation {
    id: String,
    pub(super) business_id: String,
    pub(super) member_id: String,
    /// `First Last <email>`, as the audit log names the member.
    user_name: String,
}

/// The invitation of `token`, if it can be accepted now: not used, not revoked, not expired,
/// its member still pending, its business one this server serves.
pub(super) async fn usable_invitation(
    store: &Store,
    config: &Config,
    token: &str,
    now: DateTime<Utc>,
) -> Result<Option<Invitation>, Error> {
    let found = invitations::find_by_token_hash(store, &secrets::sha256_hex(token)).await?;
    let Some(found) = found else {
        return Ok(None);
    };
    let usable = found.used_at.is_none()
        && found.revoked_at.is_none()
        && found.expires_at > now
        && found.invitation_status == "pending"
        // A server serves the businesses of its own environment only.
        && business::ensure_served(config.environment, &found.client_id).is_ok();
    if !usable {
        return Ok(None);
    }
    Ok(Some(Invitation {
        user_name: format!("{} {} <{}>", found.first_name, found.last_name, found.email),
        id: found.id,
        business_id: found.business_id,
        member_id: found.member_id,
    }))
}

/// Uses the invitation and activates its member with the password `hash`, in `tx`: both
/// conditional (two accepts of one token race to them; the second is `41`), with the audit
/// entry. Returns the member.
async fn accept(
    tx: &mut Tx,
    caller: &Caller<()>,
    invitation: &Invitation,
    hash: &str,
    now: DateTime<Utc>,
) -> Result<models::Member, Error> {
    let claimed = invitations::use_up(tx, &invitation.id, now).await?;
    let activated = members::accept_invitation(
        tx,
        &invitation.member_id,
        &invitation.business_id,
        hash,
        now,
    )
    .await?;
    if !claimed || !activated {
        return Err(invitation_rejected());
    }
    let entry = AuditEntry {
        business_id: invitation.business_id.clone(),
        action: AuditAction::AcceptInvite,
        user_name: invitation.user_name.clone(),
        user_id: Some(invitation.member_id.clone()),
        ip_address: caller.client_ip.to_string(),
        response_code: 200,
        target_type: Some("member"),
        target_id: Some(invitation.member_id.clone()),
        request_id: caller.request_id.clone(),
    };
    logs::audit(tx, now, entry).await?;
    member_view(tx, &invitation.business_id, &invitation.member_id, now)
        .await?
        .ok_or_else(|| Error::internal("the accepted member vanished"))
}

/// `update_member`: another role, deactivation or reactivation, decided by [`MemberChange`]
/// (read the member, decide, write) under the business's lock, so the last active Owner
/// cannot be removed by two changes at once.
pub async fn update_member(
    platform: &Platform,
    caller: &Caller,
    body: models::UpdateMemberRequest,
) -> Result<models::Member, Error> {
    let Platform { store, clock, .. } = platform;
    let now = clock.now();
    if body.role_id.is_none() && body.is_active.is_none() {
        return Err(invalid("`role_id`: send role_id, is_active or both"));
    }
    let actor = member_of(&caller.principal)?;
    let business_id = caller.principal.business_id.as_str();
    let member_id = body.member_id.to_string();

    let mut tx = store.begin().await?;
    business::lock_business(&mut tx, business_id).await?;
    let target = members::standing(&mut tx, &member_id, business_id)
        .await?
        .ok_or_else(|| member_not_found(&member_id))?;
    let current_role = target.role_id;
    let was_active = target.is_active;
    let pending = target.invitation_status != "accepted";
    let new_role = match body.role_id {
        Some(role_id) => Some(usable_role(&mut tx, business_id, &role_id.to_string()).await?),
        None => None,
    };
    let change = MemberChange {
        actor,
        target_id: &member_id,
        target_is_owner: current_role == OWNER_ROLE_ID,
        was_active,
        pending,
        new_role: new_role.as_ref().filter(|role| role.id != current_role),
        new_active: body.is_active.filter(|active| *active != was_active),
        revokes_invitation: pending && body.is_active == Some(false),
    };
    change.check_permission()?;
    change.check_state()?;
    if change.removes_an_active_owner() {
        check_another_owner(&mut tx, business_id, &member_id).await?;
    }
    write_member_change(&mut tx, caller, &change, now).await?;
    let member = member_view(&mut tx, business_id, &member_id, now)
        .await?
        .ok_or_else(|| member_not_found(&member_id))?;
    tx.commit().await.or_internal()?;
    Ok(member)
}

/// `48` unless the business keeps another active Owner than `member_id`.
async fn check_another_owner(tx: &mut Tx, business_id: &str, member_id: &str) -> Result<(), Error> {
    let other_owners =
        members::count_active_with_role(tx, business_id, OWNER_ROLE_ID, member_id).await?;
    if other_owners == 0 {
        return Err(invalid_state(
            "The business must keep at least one active Owner",
        ));
    }
    Ok(())
}

/// Writes a decided [`MemberChange`] in `tx`, each part with its audit entry: the new role,
/// the deactivation (which revokes the member's sessions) or reactivation, the invitation
/// revoked.
async fn write_member_change(
    tx: &mut Tx,
    caller: &Caller,
    change: &MemberChange<'_>,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let business_id = caller.principal.business_id.as_str();
    let member_id = change.target_id;
    let audit = |action| AuditEntry::by(caller, action).target("member", member_id);
    if let Some(role) = change.new_role {
        members::set_role(tx, member_id, business_id, &role.id, now).await?;
        logs::audit(tx, now, audit(AuditAction::UpdateMemberRole)).await?;
    }
    if let Some(active) = change.new_active {
        members::set_active(tx, member_id, business_id, active, now).await?;
        let action = if active {
            AuditAction::ReactivateMember
        } else {
            sessions::revoke_member_sessions(tx, member_id, now).await?;
            AuditAction::DeactivateMember
        };
        logs::audit(tx, now, audit(action)).await?;
    }
    if change.revokes_invitation && revoke_invitations(tx, member_id, now).await? > 0 {
        logs::audit(tx, now, audit(AuditAction::DeactivateMember)).await?;
    }
    Ok(())
}

/// Revokes the open invitations of a member at `now`, inside `tx`. Returns how many.
async fn revoke_invitations(
    tx: &mut Tx,
    member_id: &str,
    now: DateTime<Utc>,
) -> Result<u64, Error> {
    Ok(invitations::revoke_open_of_member(tx, member_id, now).await?)
}

/// What an `update_member` call would change, and the rules it must keep. `new_role` and
/// `new_active` are only set when they differ from the member's current state.
struct MemberChange<'a> {
    actor: &'a MemberPrincipal,
    target_id: &'a str,
    target_is_owner: bool,
    was_active: bool,
    pending: bool,
    new_role: Option<&'a RoleRef>,
    new_active: Option<bool>,
    /// `is_active: false` for a member whose invitation is pending: the invitation is revoked.
    revokes_invitation: bool,
}

impl MemberChange<'_> {
    /// Only an Owner may grant or remove the Owner role, or (de)activate an Owner: otherwise
    /// an Admin could lock the owners out.
    fn check_permission(&self) -> Result<(), Error> {
        let grants_owner = self.new_role.is_some_and(RoleRef::is_owner);
        let touches_owner =
            self.target_is_owner && (self.new_role.is_some() || self.new_active.is_some());
        if (grants_owner || touches_owner) && !self.actor.is_owner {
            return Err(owners_only(
                "Only an Owner can grant or remove the Owner role",
            ));
        }
        match self.new_role {
            Some(role) => check_grantable(self.actor, &role.permissions),
            None => Ok(()),
        }
    }

    fn check_state(&self) -> Result<(), Error> {
        match self.new_active {
            Some(false) if self.target_id == self.actor.id => {
                Err(invalid_state("You cannot deactivate yourself"))
            }
            Some(true) if self.pending => Err(invalid_state(
                "The member has not accepted their invitation yet: resend it instead",
            )),
            _ => Ok(()),
        }
    }

    fn removes_an_active_owner(&self) -> bool {
        self.target_is_owner
            && self.was_active
            && (self.new_active == Some(false) || self.new_role.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invitation_tokens_are_found_in_email_bodies() {
        let body = "Accept here:\nhttps://x/accept?token=inv_AbC-_9\n\nOr send {\"token\": \"inv_AbC-_9\"}";
        assert_eq!(invitation_token_in(body), Some("inv_AbC-_9"));
        assert_eq!(invitation_token_in("no token"), None);
    }
}
