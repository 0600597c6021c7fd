//! Sessions and identity: tokens of both families, login, logout, passwords, OTPs, the
//! integration secret, and the authentication and authorization hooks of the router.

use generated_server::{models, ApiError, Permission, RequestContext, TokenFamily};

use crate::bank::{not_yet, Bank, Principal};

pub async fn authenticate(
    _bank: &Bank,
    _family: TokenFamily,
    _token: &str,
) -> Result<Principal, ApiError> {
    Err(ApiError::new(
        generated_server::ResponseCode::Unauthenticated,
    ))
}

pub fn authorize(principal: &Principal, permission: Permission) -> Result<(), ApiError> {
    match &principal.member {
        Some(member) if permission.implicit() || member.permissions.contains(&permission) => Ok(()),
        Some(_) => Err(
            ApiError::new(generated_server::ResponseCode::PermissionDenied).with_message(format!(
                "Permission denied: your role lacks {}",
                permission.as_str()
            )),
        ),
        // Integration tokens act for the whole business; the router never asks for them.
        None => Ok(()),
    }
}

pub async fn generate_token(
    _bank: &Bank,
    ctx: RequestContext<()>,
    _body: models::GenerateTokenRequest,
) -> Result<models::TokenGrant, ApiError> {
    Err(not_yet(ctx.operation))
}
pub async fn login(
    _bank: &Bank,
    ctx: RequestContext<()>,
    _body: models::LoginRequest,
) -> Result<models::LoginResult, ApiError> {
    Err(not_yet(ctx.operation))
}
pub async fn logout(
    _bank: &Bank,
    ctx: RequestContext<Principal>,
    _body: models::EmptyObject,
) -> Result<(), ApiError> {
    Err(not_yet(ctx.operation))
}
pub async fn change_password(
    _bank: &Bank,
    ctx: RequestContext<Principal>,
    _body: models::ChangePasswordRequest,
) -> Result<(), ApiError> {
    Err(not_yet(ctx.operation))
}
pub async fn generate_otp(
    _bank: &Bank,
    ctx: RequestContext<Principal>,
    _body: models::EmptyObject,
) -> Result<models::OtpDelivery, ApiError> {
    Err(not_yet(ctx.operation))
}
pub async fn regenerate_secret(
    _bank: &Bank,
    ctx: RequestContext<Principal>,
    _body: models::EmptyObject,
) -> Result<models::IntegrationCredentials, ApiError> {
    Err(not_yet(ctx.operation))
}
pub async fn get_profile(
    _bank: &Bank,
    ctx: RequestContext<Principal>,
    _body: models::EmptyObject,
) -> Result<models::Profile, ApiError> {
    Err(not_yet(ctx.operation))
}
