//! Kobo's one implementation of the generated [`Api`] trait, on [`KoboApi`] (`http/state.rs`).
//!
//! Every method delegates to the domain module that owns its operation and hands it what it
//! uses (the store, the clock, the configuration, the token keys), never `KoboApi` itself:
//! `platform::identity` (tokens, login, passwords, OTP, credentials), `platform::sessions`
//! (authentication), `platform::team` (members, invitations), `platform::roles` (roles, permissions),
//! `platform::logs` (activity and audit logs), `platform::webhook_endpoints` (the endpoint and its
//! delivery log), and `money::*` (accounts, the ledger, transfers and approvals).

use generated_server::{
    models, Api, ApiError, CallRecord, Page, Permission, RequestContext, TokenFamily,
};

use crate::http::answer::{answer, answer_page, serve, serve_page};
pub use crate::http::state::KoboApi;
use crate::money::{
    accounts, approvals, banks, beneficiaries, bulk, cash_flow, downloads, exports, inbound,
    statements, transactions, transfers,
};
use crate::platform::principal::Principal;
use crate::platform::{
    identity, invitation_preview, logs, roles, sessions, team, webhook_endpoints,
};

/// A method that only hands its body to a domain function, through `serve` or `serve_page`:
/// `$function(&bank, caller, body)` (`caller`) or `$function(&bank, &business_id, body)`
/// (`business`); `integration` first refuses an inactive business (`60`), as the integration
/// twins of Dashboard operations do.
macro_rules! served {
    (
        $name:ident($body:ident) -> $out:ty,
        $serve:ident($who:ident $(, $integration:ident)?), $function:path
    ) => {
        async fn $name(
            &self,
            ctx: RequestContext<Principal>,
            body: models::$body,
        ) -> Result<$out, ApiError> {
            $serve(&ctx, async |caller| {
                $(served!(@$integration caller);)?
                $function(&self.bank, served!(@$who caller), body).await
            })
            .await
        }
    };
    (@integration $caller:ident) => {
        $caller.principal.ensure_business_active()?
    };
    (@caller $caller:ident) => {
        $caller
    };
    (@business $caller:ident) => {
        &$caller.principal.business_id
    };
}

impl Api for KoboApi {
    type Principal = Principal;

    async fn cancel_transfer(
        &self,
        ctx: RequestContext<Principal>,
        body: models::CancelTransferRequest,
    ) -> Result<models::Transfer, ApiError> {
        serve(&ctx, async |caller| {
            approvals::cancel(&self.bank, caller, body).await
        })
        .await
    }

    async fn fetch_banks_web(
        &self,
        ctx: RequestContext<Principal>,
        body: models::EmptyObject,
    ) -> Result<Vec<models::Bank>, ApiError> {
        Api::fetch_banks(self, ctx, body).await
    }

    async fn fetch_transfers_api(
        &self,
        ctx: RequestContext<Principal>,
        body: models::FetchTransfersRequest,
    ) -> Result<Page<Vec<models::Transfer>>, ApiError> {
        answer_page({
            transfers::fetch_transfers(&self.bank, &ctx.principal.business_id, body).await
        })
    }

    async fn fetch_transfers_web(
        &self,
        ctx: RequestContext<Principal>,
        body: models::FetchTransfersRequest,
    ) -> Result<Page<Vec<models::Transfer>>, ApiError> {
        Api::fetch_transfers_api(self, ctx, body).await
    }

    async fn funds_transfer_api(
        &self,
        ctx: RequestContext<Principal>,
        body: models::FundsTransferApiRequest,
    ) -> Result<models::Transfer, ApiError> {
        serve(&ctx, async |caller| {
            transfers::funds_transfer_api(&self.bank, caller, body).await
        })
        .await
    }

    async fn name_enquiry_web(
        &self,
        ctx: RequestContext<Principal>,
        body: models::NameEnquiryRequest,
    ) -> Result<models::NameEnquiryResult, ApiError> {
        Api::name_enquiry(self, ctx, body).await
    }

    async fn authenticate(&self, family: TokenFamily, token: &str) -> Result<Principal, ApiError> {
        // The edge's own hook, not an operation: it is handed the parts it uses (the session
        // cache and the activity log live in the modules that use them, below the `Platform`).
        let bank = &self.bank;
        answer({
            sessions::authenticate(
                &bank.store,
                &bank.sessions,
                &bank.config,
                &bank.tokens,
                &bank.rate_limiter,
                &bank.clock,
                family,
                token,
            )
            .await
        })
    }

    async fn authorize(
        &self,
        principal: &Principal,
        permission: Permission,
    ) -> Result<(), ApiError> {
        answer(sessions::authorize(principal, permission))
    }

    async fn on_response(&self, record: &CallRecord<'_, Principal>) {
        let answered = logs::Answered {
            operation: record.operation,
            family: record.family,
            principal: record.principal,
            http_status: record.http_status,
            response_code: record.response_code,
            message: record.message,
            client_ip: record.client_ip,
            request_id: record.request_id,
            replayed: record.replayed,
            logged: record.recorded,
        };
        let bank = &self.bank;
        logs::on_response(&bank.store, &bank.clock, &bank.activity_log, &answered).await
    }

    async fn accept_invite(
        &self,
        ctx: RequestContext<()>,
        body: models::AcceptInviteRequest,
    ) -> Result<models::Member, ApiError> {
        serve(&ctx, async |caller| {
            team::accept_invite(&self.bank, caller, body).await
        })
        .await
    }

    async fn add_member(
        &self,
        ctx: RequestContext<Principal>,
        body: models::AddMemberRequest,
    ) -> Result<(), ApiError> {
        serve(&ctx, async |caller| {
            team::add_member(&self.bank, caller, body).await
        })
        .await
    }

    async fn approve_transfer(
        &self,
        ctx: RequestContext<Principal>,
        body: models::ApproveTransferRequest,
    ) -> Result<models::Transfer, ApiError> {
        serve(&ctx, async |caller| {
            approvals::approve(&self.bank, caller, body).await
        })
        .await
    }

    async fn change_password(
        &self,
        ctx: RequestContext<Principal>,
        body: models::ChangePasswordRequest,
    ) -> Result<(), ApiError> {
        serve(&ctx, async |caller| {
            identity::change_password(&self.bank, caller, body).await
        })
        .await
    }

    async fn create_account_api(
        &self,
        ctx: RequestContext<Principal>,
        body: models::CreateAccountRequest,
    ) -> Result<models::Account, ApiError> {
        serve(&ctx, async |caller| {
            accounts::create_current_account(&self.bank, caller, body).await
        })
        .await
    }

    async fn create_account_web(
        &self,
        ctx: RequestContext<Principal>,
        body: models::CreateAccountRequest,
    ) -> Result<models::Account, ApiError> {
        // The Dashboard's twin of `create_account_api`: the same body and refusals.
        Api::create_account_api(self, ctx, body).await
    }

    async fn create_approval_policy(
        &self,
        ctx: RequestContext<Principal>,
        body: models::CreateApprovalPolicyRequest,
    ) -> Result<models::ApprovalPolicy, ApiError> {
        serve(&ctx, async |caller| {
            approvals::create_policy(&self.bank, caller, body).await
        })
        .await
    }

    async fn create_customer_account(
        &self,
        ctx: RequestContext<Principal>,
        body: models::CreateCustomerAccountRequest,
    ) -> Result<models::Account, ApiError> {
        serve(&ctx, async |caller| {
            accounts::create_customer_account(&self.bank, caller, body).await
        })
        .await
    }

    async fn create_customer_account_web(
        &self,
        ctx: RequestContext<Principal>,
        body: models::CreateCustomerAccountRequest,
    ) -> Result<models::Account, ApiError> {
        Api::create_customer_account(self, ctx, body).await
    }

    async fn create_role(
        &self,
        ctx: RequestContext<Principal>,
        body: models::CreateRoleRequest,
    ) -> Result<models::Role, ApiError> {
        serve(&ctx, async |caller| {
            roles::create_role(&self.bank, caller, body).await
        })
        .await
    }

    async fn fetch_account_collections(
        &self,
        ctx: RequestContext<Principal>,
        body: models::FetchAccountCollectionsRequest,
    ) -> Result<Page<Vec<models::AccountCollection>>, ApiError> {
        serve_page(&ctx, async |caller| {
            accounts::fetch_account_collections(&self.bank, caller, body).await
        })
        .await
    }

    async fn fetch_account_summaries(
        &self,
        ctx: RequestContext<Principal>,
        body: models::FetchAccountSummariesRequest,
    ) -> Result<Page<Vec<models::AccountSummary>>, ApiError> {
        serve_page(&ctx, async |caller| {
            accounts::fetch_account_summaries(&self.bank, caller, body).await
        })
        .await
    }

    async fn fetch_activity_logs(
        &self,
        ctx: RequestContext<Principal>,
        body: models::FetchActivityLogsRequest,
    ) -> Result<Page<Vec<models::ActivityLogEntry>>, ApiError> {
        serve_page(&ctx, async |caller| {
            // This process's calls are answered before their entries commit: a caller reads
            // all of its own.
            self.bank.activity_log.flush().await;
            logs::fetch_activity_logs(&self.bank.store, caller, body).await
        })
        .await
    }

    async fn fetch_audit_logs(
        &self,
        ctx: RequestContext<Principal>,
        body: models::FetchAuditLogsRequest,
    ) -> Result<Page<Vec<models::AuditLogEntry>>, ApiError> {
        serve_page(&ctx, async |caller| {
            logs::fetch_audit_logs(&self.bank.store, caller, body).await
        })
        .await
    }

    async fn fetch_banks(
        &self,
        ctx: RequestContext<Principal>,
        body: models::EmptyObject,
    ) -> Result<Vec<models::Bank>, ApiError> {
        let _ = (ctx, body);
        answer(banks::fetch_banks(&self.bank))
    }

    async fn fetch_customer_accounts(
        &self,
        ctx: RequestContext<Principal>,
        body: models::FetchCustomerAccountsRequest,
    ) -> Result<Page<Vec<models::Account>>, ApiError> {
        serve_page(&ctx, async |caller| {
            accounts::fetch_customer_accounts(&self.bank, caller, body).await
        })
        .await
    }

    async fn fetch_members(
        &self,
        ctx: RequestContext<Principal>,
        body: models::FetchMembersRequest,
    ) -> Result<Page<Vec<models::Member>>, ApiError> {
        serve_page(&ctx, async |caller| {
            team::fetch_members(&self.bank, caller, body).await
        })
        .await
    }

    async fn fetch_pending_transfers(
        &self,
        ctx: RequestContext<Principal>,
        body: models::FetchPendingTransfersRequest,
    ) -> Result<Page<Vec<models::TransferDetail>>, ApiError> {
        answer_page(approvals::fetch_pending(&self.bank, &ctx.principal, body).await)
    }

    async fn fetch_permissions(
        &self,
        ctx: RequestContext<Principal>,
        body: models::EmptyObject,
    ) -> Result<Vec<models::Permission>, ApiError> {
        let _ = (ctx, body);
        answer(roles::fetch_permissions())
    }

    async fn fetch_roles(
        &self,
        ctx: RequestContext<Principal>,
        body: models::EmptyObject,
    ) -> Result<Vec<models::Role>, ApiError> {
        serve(&ctx, async |caller| {
            roles::fetch_roles(&self.bank, caller, body).await
        })
        .await
    }

    async fn fetch_settlement_transactions_api(
        &self,
        ctx: RequestContext<Principal>,
        body: models::FetchSettlementTransactionsRequest,
    ) -> Result<Page<Vec<models::IntegrationTransaction>>, ApiError> {
        answer_page({
            ctx.principal.ensure_business_active()?;
            transactions::fetch_settlements_api(&self.bank, &ctx.principal.business_id, body).await
        })
    }

    async fn fetch_settlement_transactions_web(
        &self,
        ctx: RequestContext<Principal>,
        body: models::FetchSettlementTransactionsRequest,
    ) -> Result<Page<Vec<models::DashboardSettlement>>, ApiError> {
        answer_page({
            transactions::fetch_settlements_web(&self.bank, &ctx.principal.business_id, body).await
        })
    }

    async fn fetch_transactions_api(
        &self,
        ctx: RequestContext<Principal>,
        body: models::FetchTransactionsApiRequest,
    ) -> Result<Page<Vec<models::IntegrationTransaction>>, ApiError> {
        answer_page({
            ctx.principal.ensure_business_active()?;
            transactions::fetch_transactions_api(&self.bank, &ctx.principal.business_id, body).await
        })
    }

    async fn fetch_transactions_web(
        &self,
        ctx: RequestContext<Principal>,
        body: models::FetchTransactionsWebRequest,
    ) -> Result<Page<Vec<models::DashboardTransaction>>, ApiError> {
        answer_page({
            transactions::fetch_transactions_web(&self.bank, &ctx.principal.business_id, body).await
        })
    }

    async fn fetch_webhook_events(
        &self,
        ctx: RequestContext<Principal>,
        body: models::FetchWebhookEventsRequest,
    ) -> Result<Page<Vec<models::WebhookDelivery>>, ApiError> {
        serve_page(&ctx, async |caller| {
            webhook_endpoints::fetch_events(&self.bank, caller, body).await
        })
        .await
    }

    async fn funds_transfer(
        &self,
        ctx: RequestContext<Principal>,
        body: models::FundsTransferRequest,
    ) -> Result<models::Transfer, ApiError> {
        serve(&ctx, async |caller| {
            transfers::funds_transfer(&self.bank, caller, body).await
        })
        .await
    }

    async fn generate_otp(
        &self,
        ctx: RequestContext<Principal>,
        body: models::EmptyObject,
    ) -> Result<models::OtpDelivery, ApiError> {
        serve(&ctx, async |caller| {
            identity::generate_otp(&self.bank, caller, body).await
        })
        .await
    }

    async fn generate_token(
        &self,
        ctx: RequestContext<()>,
        body: models::GenerateTokenRequest,
    ) -> Result<models::TokenGrant, ApiError> {
        serve(&ctx, async |caller| {
            identity::generate_token(&self.bank, caller, body).await
        })
        .await
    }

    async fn get_account(
        &self,
        ctx: RequestContext<Principal>,
        body: models::GetAccountRequest,
    ) -> Result<models::AccountDetail, ApiError> {
        serve(&ctx, async |caller| {
            accounts::get_account(&self.bank, caller, body).await
        })
        .await
    }

    served!(create_export(CreateExportRequest) -> models::Export,
        serve(caller), exports::create_export);
    served!(create_export_api(CreateExportRequest) -> models::Export,
        serve(caller, integration), exports::create_export);
    served!(get_export(GetExportRequest) -> models::Export,
        serve(business), exports::get_export);
    served!(get_export_api(GetExportRequest) -> models::Export,
        serve(business, integration), exports::get_export);
    served!(fetch_exports(FetchExportsRequest) -> Page<Vec<models::Export>>,
        serve_page(business), exports::fetch_exports);
    served!(fetch_exports_api(FetchExportsRequest) -> Page<Vec<models::Export>>,
        serve_page(business, integration), exports::fetch_exports);
    served!(download_export(DownloadExportRequest) -> models::ExportPart,
        serve(business), exports::download_export);
    served!(download_export_api(DownloadExportRequest) -> models::ExportPart,
        serve(business, integration), exports::download_export);

    served!(create_beneficiary(CreateBeneficiaryRequest) -> models::SavedBeneficiary,
        serve(caller), beneficiaries::create_beneficiary);
    served!(create_beneficiary_api(CreateBeneficiaryRequest) -> models::SavedBeneficiary,
        serve(caller, integration), beneficiaries::create_beneficiary);
    served!(fetch_beneficiaries(FetchBeneficiariesRequest) -> Page<Vec<models::SavedBeneficiary>>,
        serve_page(business), beneficiaries::fetch_beneficiaries);
    served!(fetch_beneficiaries_api(FetchBeneficiariesRequest)
        -> Page<Vec<models::SavedBeneficiary>>,
        serve_page(business, integration), beneficiaries::fetch_beneficiaries);
    served!(delete_beneficiary(BeneficiaryIdRequest) -> models::SavedBeneficiary,
        serve(caller), beneficiaries::delete_beneficiary);
    served!(delete_beneficiary_api(BeneficiaryIdRequest) -> models::SavedBeneficiary,
        serve(caller, integration), beneficiaries::delete_beneficiary);
    served!(pay_beneficiary(PayBeneficiaryRequest) -> models::Transfer,
        serve(caller), transfers::pay_beneficiary);
    served!(pay_beneficiary_api(PayBeneficiaryApiRequest) -> models::Transfer,
        serve(caller), transfers::pay_beneficiary_api);

    served!(create_bulk_transfer(CreateBulkTransferRequest) -> models::BulkTransfer,
        serve(caller), bulk::create_bulk_transfer);
    served!(create_bulk_transfer_api(CreateBulkTransferRequest) -> models::BulkTransfer,
        serve(caller, integration), bulk::create_bulk_transfer);
    served!(get_bulk_transfer(BulkTransferIdRequest) -> models::BulkTransfer,
        serve(business), bulk::get_bulk_transfer);
    served!(get_bulk_transfer_api(BulkTransferIdRequest) -> models::BulkTransfer,
        serve(business, integration), bulk::get_bulk_transfer);
    served!(fetch_bulk_transfers(FetchBulkTransfersRequest) -> Page<Vec<models::BulkTransfer>>,
        serve_page(business), bulk::fetch_bulk_transfers);
    served!(fetch_bulk_transfers_api(FetchBulkTransfersRequest)
        -> Page<Vec<models::BulkTransfer>>,
        serve_page(business, integration), bulk::fetch_bulk_transfers);
    served!(fetch_bulk_transfer_items(FetchBulkTransferItemsRequest)
        -> Page<Vec<models::BulkTransferItem>>,
        serve_page(business), bulk::fetch_bulk_transfer_items);
    served!(fetch_bulk_transfer_items_api(FetchBulkTransferItemsRequest)
        -> Page<Vec<models::BulkTransferItem>>,
        serve_page(business, integration), bulk::fetch_bulk_transfer_items);
    served!(download_bulk_transfer_results(BulkTransferIdRequest) -> models::FileContent,
        serve(business), bulk::results::download_bulk_transfer_results);
    served!(download_bulk_transfer_results_api(BulkTransferIdRequest) -> models::FileContent,
        serve(business, integration), bulk::results::download_bulk_transfer_results);
    served!(cancel_bulk_transfer(BulkTransferIdRequest) -> models::BulkTransfer,
        serve(caller), bulk::cancel_bulk_transfer);
    served!(cancel_bulk_transfer_api(BulkTransferIdRequest) -> models::BulkTransfer,
        serve(caller, integration), bulk::cancel_bulk_transfer);
    served!(generate_bulk_transfer_otp(BulkTransferIdRequest) -> models::OtpDelivery,
        serve(caller), bulk::authorise::generate_bulk_transfer_otp);
    served!(authorize_bulk_transfer(AuthorizeBulkTransferRequest) -> models::BulkTransfer,
        serve(caller), bulk::authorise::authorize_bulk_transfer);
    served!(authorize_bulk_transfer_api(AuthorizeBulkTransferApiRequest) -> models::BulkTransfer,
        serve(caller, integration), bulk::authorise::authorize_bulk_transfer);
    served!(approve_bulk_transfer(ApproveBulkTransferRequest) -> models::BulkTransfer,
        serve(caller), bulk::authorise::approve_bulk_transfer);
    served!(reject_bulk_transfer(RejectBulkTransferRequest) -> models::BulkTransfer,
        serve(caller), bulk::authorise::reject_bulk_transfer);

    async fn download_account_statement(
        &self,
        ctx: RequestContext<Principal>,
        body: models::DownloadAccountStatementRequest,
    ) -> Result<models::FileContent, ApiError> {
        serve(&ctx, async |caller| {
            let business_id = &caller.principal.business_id;
            downloads::download_account_statement(&self.bank, business_id, body).await
        })
        .await
    }

    async fn download_account_statement_api(
        &self,
        ctx: RequestContext<Principal>,
        body: models::DownloadAccountStatementRequest,
    ) -> Result<models::FileContent, ApiError> {
        serve(&ctx, async |caller| {
            caller.principal.ensure_business_active()?;
            let business_id = &caller.principal.business_id;
            downloads::download_account_statement(&self.bank, business_id, body).await
        })
        .await
    }

    async fn download_transactions_api(
        &self,
        ctx: RequestContext<Principal>,
        body: models::DownloadTransactionsApiRequest,
    ) -> Result<models::FileContent, ApiError> {
        serve(&ctx, async |caller| {
            caller.principal.ensure_business_active()?;
            let business_id = &caller.principal.business_id;
            downloads::download_transactions_api(&self.bank, business_id, body).await
        })
        .await
    }

    async fn download_transactions_web(
        &self,
        ctx: RequestContext<Principal>,
        body: models::DownloadTransactionsWebRequest,
    ) -> Result<models::FileContent, ApiError> {
        serve(&ctx, async |caller| {
            let business_id = &caller.principal.business_id;
            downloads::download_transactions_web(&self.bank, business_id, body).await
        })
        .await
    }

    async fn download_transfer_receipt(
        &self,
        ctx: RequestContext<Principal>,
        body: models::GetTransferRequest,
    ) -> Result<models::FileContent, ApiError> {
        serve(&ctx, async |caller| {
            let business_id = &caller.principal.business_id;
            downloads::download_transfer_receipt(&self.bank, business_id, body).await
        })
        .await
    }

    async fn download_transfer_receipt_api(
        &self,
        ctx: RequestContext<Principal>,
        body: models::GetTransferRequest,
    ) -> Result<models::FileContent, ApiError> {
        serve(&ctx, async |caller| {
            let business_id = &caller.principal.business_id;
            downloads::download_transfer_receipt(&self.bank, business_id, body).await
        })
        .await
    }

    async fn get_account_statement(
        &self,
        ctx: RequestContext<Principal>,
        body: models::GetAccountStatementRequest,
    ) -> Result<Page<models::AccountStatement>, ApiError> {
        serve_page(&ctx, async |caller| {
            statements::get_account_statement(&self.bank, &caller.principal.business_id, body).await
        })
        .await
    }

    async fn get_account_statement_api(
        &self,
        ctx: RequestContext<Principal>,
        body: models::GetAccountStatementRequest,
    ) -> Result<Page<models::AccountStatement>, ApiError> {
        serve_page(&ctx, async |caller| {
            caller.principal.ensure_business_active()?;
            statements::get_account_statement(&self.bank, &caller.principal.business_id, body).await
        })
        .await
    }

    async fn get_approval_policy(
        &self,
        ctx: RequestContext<Principal>,
        body: models::EmptyObject,
    ) -> Result<models::ApprovalPolicy, ApiError> {
        let _ = body;
        serve(&ctx, async |caller| {
            approvals::get_policy(&self.bank, &caller.principal.business_id).await
        })
        .await
    }

    async fn get_cash_flow(
        &self,
        ctx: RequestContext<Principal>,
        body: models::GetCashFlowRequest,
    ) -> Result<models::CashFlow, ApiError> {
        serve(&ctx, async |caller| {
            cash_flow::get_cash_flow(&self.bank, caller, body).await
        })
        .await
    }

    async fn get_invitation(
        &self,
        ctx: RequestContext<()>,
        body: models::GetInvitationRequest,
    ) -> Result<models::InvitationPreview, ApiError> {
        serve(&ctx, async |caller| {
            invitation_preview::get_invitation(&self.bank, caller, body).await
        })
        .await
    }

    async fn get_profile(
        &self,
        ctx: RequestContext<Principal>,
        body: models::EmptyObject,
    ) -> Result<models::Profile, ApiError> {
        serve(&ctx, async |caller| identity::get_profile(caller, body)).await
    }

    async fn get_total_account_metrics(
        &self,
        ctx: RequestContext<Principal>,
        body: models::GetTotalAccountMetricsRequest,
    ) -> Result<models::AccountMetrics, ApiError> {
        serve(&ctx, async |caller| {
            accounts::get_total_account_metrics(&self.bank, caller, body).await
        })
        .await
    }

    async fn get_transfer_api(
        &self,
        ctx: RequestContext<Principal>,
        body: models::GetTransferRequest,
    ) -> Result<models::Transfer, ApiError> {
        serve(&ctx, async |caller| {
            transfers::get_transfer(&self.bank, &caller.principal.business_id, body).await
        })
        .await
    }

    async fn get_transfer_web(
        &self,
        ctx: RequestContext<Principal>,
        body: models::GetTransferRequest,
    ) -> Result<models::TransferDetail, ApiError> {
        serve(&ctx, async |caller| {
            let business_id = &caller.principal.business_id;
            let transfer = transfers::get_transfer(&self.bank, business_id, body).await?;
            transfers::detail(&self.bank, &caller.principal, transfer).await
        })
        .await
    }

    async fn get_webhook_configuration(
        &self,
        ctx: RequestContext<Principal>,
        _body: models::EmptyObject,
    ) -> Result<models::WebhookConfiguration, ApiError> {
        serve(&ctx, async |caller| {
            webhook_endpoints::get_configuration(&self.bank, caller).await
        })
        .await
    }

    async fn login(
        &self,
        ctx: RequestContext<()>,
        body: models::LoginRequest,
    ) -> Result<models::LoginResult, ApiError> {
        serve(&ctx, async |caller| {
            identity::login(&self.bank, caller, body).await
        })
        .await
    }

    async fn logout(
        &self,
        ctx: RequestContext<Principal>,
        body: models::EmptyObject,
    ) -> Result<(), ApiError> {
        serve(&ctx, async |caller| {
            identity::logout(&self.bank, caller, body).await
        })
        .await
    }

    async fn name_enquiry(
        &self,
        ctx: RequestContext<Principal>,
        body: models::NameEnquiryRequest,
    ) -> Result<models::NameEnquiryResult, ApiError> {
        serve(&ctx, async |caller| {
            let business_id = &caller.principal.business_id;
            banks::name_enquiry(&self.bank, business_id, body).await
        })
        .await
    }

    async fn regenerate_secret(
        &self,
        ctx: RequestContext<Principal>,
        body: models::EmptyObject,
    ) -> Result<models::IntegrationCredentials, ApiError> {
        serve(&ctx, async |caller| {
            identity::regenerate_secret(&self.bank, caller, body).await
        })
        .await
    }

    async fn reject_transfer(
        &self,
        ctx: RequestContext<Principal>,
        body: models::RejectTransferRequest,
    ) -> Result<models::Transfer, ApiError> {
        serve(&ctx, async |caller| {
            approvals::reject(&self.bank, caller, body).await
        })
        .await
    }

    async fn replay_webhook_event(
        &self,
        ctx: RequestContext<Principal>,
        body: models::ReplayWebhookEventRequest,
    ) -> Result<models::WebhookDelivery, ApiError> {
        serve(&ctx, async |caller| {
            webhook_endpoints::replay_event(&self.bank, caller, body).await
        })
        .await
    }

    async fn resend_invite(
        &self,
        ctx: RequestContext<Principal>,
        body: models::ResendInviteRequest,
    ) -> Result<(), ApiError> {
        serve(&ctx, async |caller| {
            team::resend_invite(&self.bank, caller, body).await
        })
        .await
    }

    async fn rotate_webhook_secret(
        &self,
        ctx: RequestContext<Principal>,
        body: models::EmptyObject,
    ) -> Result<models::RotatedWebhookSecret, ApiError> {
        serve(&ctx, async |caller| {
            webhook_endpoints::rotate_secret(&self.bank, caller, body).await
        })
        .await
    }

    async fn simulate_inbound_transfer(
        &self,
        ctx: RequestContext<Principal>,
        body: models::SimulateInboundTransferRequest,
    ) -> Result<models::IntegrationTransaction, ApiError> {
        serve(&ctx, async |caller| {
            inbound::simulate_inbound_transfer(&self.bank, caller, body).await
        })
        .await
    }

    async fn update_approval_policy(
        &self,
        ctx: RequestContext<Principal>,
        body: models::UpdateApprovalPolicyRequest,
    ) -> Result<models::ApprovalPolicy, ApiError> {
        serve(&ctx, async |caller| {
            approvals::update_policy(&self.bank, caller, body).await
        })
        .await
    }

    async fn update_member(
        &self,
        ctx: RequestContext<Principal>,
        body: models::UpdateMemberRequest,
    ) -> Result<models::Member, ApiError> {
        serve(&ctx, async |caller| {
            team::update_member(&self.bank, caller, body).await
        })
        .await
    }

    async fn update_role(
        &self,
        ctx: RequestContext<Principal>,
        body: models::UpdateRoleRequest,
    ) -> Result<models::Role, ApiError> {
        serve(&ctx, async |caller| {
            roles::update_role(&self.bank, caller, body).await
        })
        .await
    }

    async fn test_webhook(
        &self,
        ctx: RequestContext<Principal>,
        body: models::EmptyObject,
    ) -> Result<models::WebhookDelivery, ApiError> {
        serve(&ctx, async |caller| {
            webhook_endpoints::test_event(&self.bank, caller, body).await
        })
        .await
    }

    async fn update_webhook_configuration(
        &self,
        ctx: RequestContext<Principal>,
        body: models::UpdateWebhookConfigurationRequest,
    ) -> Result<models::WebhookConfiguration, ApiError> {
        serve(&ctx, async |caller| {
            webhook_endpoints::update_configuration(&self.bank, caller, body).await
        })
        .await
    }

    async fn update_webhook_configuration_web(
        &self,
        ctx: RequestContext<Principal>,
        body: models::UpdateWebhookConfigurationRequest,
    ) -> Result<models::WebhookConfiguration, ApiError> {
        Api::update_webhook_configuration(self, ctx, body).await
    }

    async fn webhook_configuration(
        &self,
        ctx: RequestContext<Principal>,
        body: models::WebhookConfigurationRequest,
    ) -> Result<models::CreatedWebhookConfiguration, ApiError> {
        serve(&ctx, async |caller| {
            webhook_endpoints::create_configuration(&self.bank, caller, body).await
        })
        .await
    }
}
