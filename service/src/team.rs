//! The team: members, invitations, roles and the permission catalog.
use generated_server::{models, ApiError, Page, RequestContext};

use crate::bank::{not_yet, Bank, Principal};

pub async fn accept_invite(
    _bank: &Bank,
    ctx: RequestContext<()>,
    _body: models::AcceptInviteRequest,
) -> Result<models::Member, ApiError> {
    Err(not_yet(ctx.operation))
}

pub async fn add_member(
    _bank: &Bank,
    ctx: RequestContext<Principal>,
    _body: models::AddMemberRequest,
) -> Result<(), ApiError> {
    Err(not_yet(ctx.operation))
}

pub async fn create_role(
    _bank: &Bank,
    ctx: RequestContext<Principal>,
    _body: models::CreateRoleRequest,
) -> Result<models::Role, ApiError> {
    Err(not_yet(ctx.operation))
}

pub async fn fetch_members(
    _bank: &Bank,
    ctx: RequestContext<Principal>,
    _body: models::FetchMembersRequest,
) -> Result<Page<Vec<models::Member>>, ApiError> {
    Err(not_yet(ctx.operation))
}

pub async fn fetch_permissions(
    _bank: &Bank,
    ctx: RequestContext<Principal>,
    _body: models::EmptyObject,
) -> Result<Vec<models::Permission>, ApiError> {
    Err(not_yet(ctx.operation))
}

pub async fn fetch_roles(
    _bank: &Bank,
    ctx: RequestContext<Principal>,
    _body: models::EmptyObject,
) -> Result<Vec<models::Role>, ApiError> {
    Err(not_yet(ctx.operation))
}

pub async fn resend_invite(
    _bank: &Bank,
    ctx: RequestContext<Principal>,
    _body: models::ResendInviteRequest,
) -> Result<(), ApiError> {
    Err(not_yet(ctx.operation))
}

pub async fn update_member(
    _bank: &Bank,
    ctx: RequestContext<Principal>,
    _body: models::UpdateMemberRequest,
) -> Result<models::Member, ApiError> {
    Err(not_yet(ctx.operation))
}

pub async fn update_role(
    _bank: &Bank,
    ctx: RequestContext<Principal>,
    _body: models::UpdateRoleRequest,
) -> Result<models::Role, ApiError> {
    Err(not_yet(ctx.operation))
}
