//! A database migrated by the release before this crate (0001-0013, every column text or
//! SMALLINT) is upgraded in place by `MIGRATOR.run`, which applies 0014 alone: every row is
//! kept, every balance and sum is the same, and ids and times compare equal as values.

mod common;

use chrono::{DateTime, Utc};
use common::TestDb;
use kobo_store_postgres::*;
use sqlx::{PgPool, Row};

const BUSINESS: &str = "6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f";
const ROLE: &str = "7a1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f";
const MEMBER: &str = "8b1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f";
const MAIN: &str = "9c1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f";
const VIRTUAL: &str = "ad1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f";

/// Rows of the old release, in its types: ids and times as text, flags as 0/1, lists as JSON.
const OLD_ROWS: &str = r#"
INSERT INTO businesses (id, name, status, client_id, client_secret_hash, created_at, updated_at,
    daily_transfer_limit, secret_issued_by)
VALUES ('6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', 'Ada Foods', 'active', 'kobo_test_ada', 'h',
    '2026-11-02T09:20:00.000000Z', '2026-11-02T09:20:00.123456Z', 9000000, NULL);
INSERT INTO roles (id, business_id, name, name_key, description, permission_codes, is_built_in,
    created_at, updated_at)
VALUES ('7a1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', NULL, 'Owner', 'owner', 'All', '["a"]', 1,
    '2026-10-15T10:00:00.000000Z', '2026-10-15T10:00:00.000000Z');
INSERT INTO members (id, business_id, email, first_name, last_name, role_id, password_hash,
    is_active, invitation_status, last_login, date_joined, created_at, updated_at)
VALUES ('8b1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f',
    'ada@example.com', 'Ada', 'Obi', '7a1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', 'pw', 1, 'accepted',
    '2026-11-03T08:00:00.000001Z', '2026-11-02T09:20:00.000000Z', '2026-11-02T09:20:00.000000Z',
    '2026-11-02T09:20:00.000000Z'),
   ('8b1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e60', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f',
    'bola@example.com', 'Bola', 'Ade', '7a1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', NULL, 0, 'pending',
    NULL, '2026-11-02T10:00:00.000000Z', '2026-11-02T10:00:00.000000Z',
    '2026-11-02T10:00:00.000000Z');
INSERT INTO invitations (id, business_id, member_id, token_hash, expires_at, used_at, revoked_at,
    created_at)
VALUES ('11111111-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f',
    '8b1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e60', 'tok', '2026-11-09T10:00:00.000000Z', NULL, NULL,
    '2026-11-02T10:00:00.000000Z');
INSERT INTO sessions (id, business_id, family, member_id, ip_address, created_at, expires_at,
    revoked_at)
VALUES ('22222222-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f',
    'dashboard', '8b1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', '10.0.0.1',
    '2026-11-03T08:00:00.000001Z', '2026-11-03T09:00:00.000001Z', NULL),
   ('22222222-1b2c-4d5e-8f90-0a1b2c3d4e60', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f',
    'integration', NULL, '10.0.0.2', '2026-11-03T08:00:00.000001Z',
    '2026-11-03T09:00:00.000001Z', '2026-11-03T08:30:00.000000Z');
INSERT INTO otps (id, business_id, member_id, code_hash, attempts, expires_at, used_at, created_at)
VALUES ('33333333-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f',
    '8b1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', 'c', 2, '2026-11-03T08:05:00.000000Z', NULL,
    '2026-11-03T08:00:00.000000Z');
INSERT INTO throttles (key, failures, window_started_at, locked_until)
VALUES ('login:ip:10.0.0.1', 3, '2026-11-03T08:00:00.000000Z', '2026-11-03T08:15:00.000000Z');
INSERT INTO known_addresses (credential, ip_address, last_success_at)
VALUES ('ada@example.com', '10.0.0.1', '2026-11-03T08:00:00.000001Z');
INSERT INTO activity_logs (id, business_id, endpoint, method, response_code, status, message,
    ip_address, request_id, created_at)
VALUES ('44444444-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f',
    '/transfers', 'POST', 201, 'success', 'ok', '10.0.0.2', 'req-1', '2026-11-03T08:01:00.000000Z');
INSERT INTO audit_logs (id, business_id, action, user_name, user_id, ip_address, response_code,
    day, target_type, target_id, request_id, created_at)
VALUES ('55555555-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f',
    'regenerate_secret', 'Ada Obi', '8b1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', '10.0.0.1', 200,
    '2026-11-03', 'business', 'kobo_test_ada', 'req-2', '2026-11-03T08:02:00.000000Z');
INSERT INTO notifications (id, business_id, channel, recipient, subject, body, created_at,
    sent_at, last_error, attempts, next_attempt_at)
VALUES ('66666666-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', 'email',
    'bola@example.com', 'Invitation', 'Join', '2026-11-02T10:00:00.000000Z', NULL, 'timeout', 1,
    '2026-11-02T10:05:00.000000Z'),
   ('66666666-1b2c-4d5e-8f90-0a1b2c3d4e60', NULL, 'email', 'ops@example.com', 'Hi', 'Body',
    '2026-11-02T10:00:00.000000Z', '2026-11-02T10:00:01.000000Z', NULL, 1, NULL);
INSERT INTO idempotency_keys (business_id, operation, idempotency_key, request_hash,
    response_data, created_at, refusal_code, refusal_message)
VALUES ('6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', 'payout', 'k1', 'h', '{"a":1}',
    '2026-11-03T08:01:00.000000Z', NULL, NULL);
INSERT INTO customers (id, business_id, email, phone, bvn_hash, nin_hash, verified_identities,
    verified_name, metadata, created_at)
VALUES ('77777777-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f',
    'c@example.com', NULL, 'bvn', NULL, '["bvn"]', 'Chidi', '{"k":"v"}',
    '2026-11-02T11:00:00.000000Z');
INSERT INTO accounts (id, business_id, account_number, account_name, account_type, account_class,
    status, parent_account_id, created_at, updated_at, balance, last_balance_update, customer_id)
VALUES ('9c1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f',
    '1000000001', 'Ada Foods', 'pool', 'primary', 'active', NULL, '2026-11-02T09:20:00.000000Z',
    '2026-11-03T08:03:00.000000Z', 999999999999999000, '2026-11-03T08:03:00.000000Z', NULL),
   ('ad1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f',
    '3000000001', 'Chidi', 'virtual', 'secondary', 'active',
    '9c1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', '2026-11-02T11:00:00.000000Z',
    '2026-11-03T08:03:00.000000Z', 0, NULL, '77777777-1b2c-4d5e-8f90-0a1b2c3d4e5f');
INSERT INTO sequences (name, value) VALUES ('nuban.pool', 1), ('nuban.virtual', 1);
INSERT INTO ledger_heads (business_id, last_sequence, last_posted_at, last_posted_micros)
VALUES ('6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', 3, '2026-11-03T08:03:00.000002Z', NULL);
INSERT INTO journal_entries (id, business_id, kind, created_at) VALUES
    ('e0000001-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f',
     'inbound_credit', '2026-11-03T08:03:00.000000Z'),
    ('e0000002-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f',
     'transfer', '2026-11-03T08:03:00.000001Z'),
    ('e0000003-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f',
     'transfer', '2026-11-03T08:03:00.000002Z');
INSERT INTO postings (id, entry_id, account_id, amount, created_at) VALUES
    ('f0000001-1b2c-4d5e-8f90-0a1b2c3d4e5f', 'e0000001-1b2c-4d5e-8f90-0a1b2c3d4e5f',
     '00000000-0000-4000-8000-000000000001', -1000000000000000000, '2026-11-03T08:03:00.000000Z'),
    ('f0000002-1b2c-4d5e-8f90-0a1b2c3d4e5f', 'e0000001-1b2c-4d5e-8f90-0a1b2c3d4e5f',
     '9c1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', 1000000000000000000, '2026-11-03T08:03:00.000000Z'),
    ('f0000003-1b2c-4d5e-8f90-0a1b2c3d4e5f', 'e0000002-1b2c-4d5e-8f90-0a1b2c3d4e5f',
     '9c1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', -500, '2026-11-03T08:03:00.000001Z'),
    ('f0000004-1b2c-4d5e-8f90-0a1b2c3d4e5f', 'e0000002-1b2c-4d5e-8f90-0a1b2c3d4e5f',
     '00000000-0000-4000-8000-000000000004', 500, '2026-11-03T08:03:00.000001Z'),
    ('f0000005-1b2c-4d5e-8f90-0a1b2c3d4e5f', 'e0000003-1b2c-4d5e-8f90-0a1b2c3d4e5f',
     '9c1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', -500, '2026-11-03T08:03:00.000002Z'),
    ('f0000006-1b2c-4d5e-8f90-0a1b2c3d4e5f', 'e0000003-1b2c-4d5e-8f90-0a1b2c3d4e5f',
     '00000000-0000-4000-8000-000000000002', 500, '2026-11-03T08:03:00.000002Z');
INSERT INTO transactions (id, business_id, account_id, entry_id, sequence, reference_number,
    transaction_type, category, status, channel, amount, narration, narration_key, session_id,
    originator_account_number, originator_account_name, originator_bank_code,
    originator_bank_name, created_at) VALUES
    ('d0000001-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f',
     '9c1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', 'e0000001-1b2c-4d5e-8f90-0a1b2c3d4e5f', 1, 'COL1',
     'credit', 'collection', 'success', 'nip', 1000000000000000000, 'Sale', 'sale col1',
     'NIPSESSION1', '0123456789', 'Payer', '000013', 'GTBank', '2026-11-03T08:03:00.000000Z'),
    ('d0000002-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f',
     '9c1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', 'e0000002-1b2c-4d5e-8f90-0a1b2c3d4e5f', 2, 'TRF1',
     'debit', 'transfer', 'pending', 'nip', 500, 'Held', 'held trf1', NULL, NULL, NULL, NULL,
     NULL, '2026-11-03T08:03:00.000001Z'),
    ('d0000003-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f',
     '9c1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', 'e0000003-1b2c-4d5e-8f90-0a1b2c3d4e5f', 3, 'TRF2',
     'debit', 'transfer', 'success', 'nip', 500, 'Paid', 'paid trf2', 'NIPSESSION2', NULL, NULL,
     NULL, NULL, '2026-11-03T08:03:00.000002Z');
INSERT INTO settlements (id, business_id, account_id, reference, amount, status, settlement_date,
    created_at)
VALUES ('d0000001-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f',
    '9c1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', 'COL1', 1000000000000000000, 'success',
    '2026-11-03T08:03:00.000000Z', '2026-11-03T08:03:00.000000Z');
INSERT INTO transfers (id, business_id, reference_number, reference, source_account_id,
    beneficiary_account_number, beneficiary_account_name, beneficiary_account_id, bank_code,
    bank_name, transfer_type, amount, fee, vat, narration, transfer_status, approval_status,
    session_id, failure_reason, reversal_reference_number, debit_transaction_id,
    fee_transaction_id, initiated_by, initiated_via, reviewed_by, expires_at, day, submitted,
    attempts, next_attempt_at, lease_until, created_at, updated_at, credential_issued_by) VALUES
    ('c0000001-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', 'TRF1',
     'client-1', '9c1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', '0123456789', 'Landlord', NULL,
     '000013', 'GTBank', 'inter', 500, 0, 0, 'Held', 'pending_approval', 'awaiting_approval',
     NULL, NULL, NULL, 'd0000002-1b2c-4d5e-8f90-0a1b2c3d4e5f', NULL,
     '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', 'integration', NULL,
     '2026-11-04T08:03:00.000001Z', '2026-11-03', 0, 0, NULL, NULL,
     '2026-11-03T08:03:00.000001Z', '2026-11-03T08:03:00.000001Z',
     '8b1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f'),
    ('c0000002-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', 'TRF2',
     NULL, '9c1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', '0123456789', 'Landlord', NULL, '000013',
     'GTBank', 'inter', 500, 0, 0, 'Paid', 'success', 'approved', 'NIPSESSION2', NULL, NULL,
     'd0000003-1b2c-4d5e-8f90-0a1b2c3d4e5f', NULL, '8b1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f',
     'dashboard', '8b1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e60', NULL, '2026-11-03', 1, 2, NULL, NULL,
     '2026-11-03T08:03:00.000002Z', '2026-11-03T08:04:00.000000Z', NULL);
INSERT INTO daily_transfer_totals (business_id, day, amount)
VALUES ('6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', '2026-11-03', 500);
INSERT INTO approval_policies (id, business_id, is_active, min_amount, created_at, updated_at)
VALUES ('88888888-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', 1, 100,
    '2026-11-02T09:30:00.000000Z', '2026-11-02T09:30:00.000000Z');
INSERT INTO webhook_configurations (id, business_id, url, is_active, ip_whitelist, event_types,
    secret, previous_secret, previous_secret_expires_at, created_at, updated_at)
VALUES ('99999999-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f',
    'https://example.com/hook', 1, '["10.0.0.0/8", "192.168.1.1"]',
    '["transfer.success","collection.received"]', 'whsec_new', 'whsec_old',
    '2026-11-04T08:00:00.000000Z', '2026-11-02T09:40:00.000000Z', '2026-11-03T08:00:00.000000Z');
INSERT INTO events (id, business_id, type, payload, created_at, delivery_status, attempts,
    budget_start, next_attempt_at, last_attempt_at, last_response_status, last_error) VALUES
    ('aaaaaaa1-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f',
     'transfer.success', '{"reference_number": "TRF2"}', '2026-11-03T08:04:00.000000Z',
     'delivered', 1, 0, NULL, '2026-11-03T08:04:01.000000Z', 200, NULL),
    ('aaaaaaa2-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f',
     'collection.received', '{"reference_number": "COL1"}', '2026-11-03T08:03:00.000000Z',
     'pending', 0, 0, '2026-11-03T08:03:00.000000Z', NULL, NULL, NULL);
INSERT INTO webhook_attempts (id, event_id, attempted_at, url, response_status, error,
    latency_ms, response_body)
VALUES ('bbbbbbb1-1b2c-4d5e-8f90-0a1b2c3d4e5f', 'aaaaaaa1-1b2c-4d5e-8f90-0a1b2c3d4e5f',
    '2026-11-03T08:04:01.000000Z', 'https://example.com/hook', 200, NULL, 35, 'ok');
"#;

/// Every table of the schema (the migrations' own aside).
async fn tables(pool: &PgPool) -> Vec<String> {
    sqlx::query(
        "SELECT table_name::text FROM information_schema.tables \
         WHERE table_schema = 'public' AND table_name <> '_sqlx_migrations' ORDER BY 1",
    )
    .fetch_all(pool)
    .await
    .unwrap()
    .iter()
    .map(|row| row.get(0))
    .collect()
}

/// `sql` of a table's rows (a name from [`tables`]), one text a row, sorted.
async fn texts(pool: &PgPool, sql: String) -> Vec<String> {
    let mut rows: Vec<String> = sqlx::query(sqlx::AssertSqlSafe(sql))
        .fetch_all(pool)
        .await
        .unwrap()
        .iter()
        .map(|row| row.get::<Option<String>, _>(0).unwrap_or_default())
        .collect();
    rows.sort();
    rows
}

/// What must not change: each table's rows; each row's id and time as values (a UUID and an
/// instant, whatever their text); balances and sums.
async fn figures(pool: &PgPool, native: bool) -> Vec<(String, Vec<String>)> {
    let mut figures = Vec::new();
    for table in tables(pool).await {
        let count = texts(pool, format!("SELECT COUNT(*)::text FROM {table}")).await;
        figures.push((format!("{table} rows"), count));
        let columns: Vec<String> = sqlx::query(
            "SELECT column_name::text FROM information_schema.columns \
             WHERE table_schema = 'public' AND table_name = $1",
        )
        .bind(&table)
        .fetch_all(pool)
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
        if columns.iter().any(|c| c == "id") && columns.iter().any(|c| c == "created_at") {
            // The old text is read as the values it stands for; the new columns are values.
            let sql = if native {
                format!(
                    "SELECT id::text || ' ' || (EXTRACT(EPOCH FROM created_at) * 1000000)::bigint \
                     FROM {table}"
                )
            } else {
                format!(
                    "SELECT id::uuid::text || ' ' || \
                       (EXTRACT(EPOCH FROM created_at::timestamptz) * 1000000)::bigint \
                     FROM {table}"
                )
            };
            figures.push((format!("{table} ids and times"), texts(pool, sql).await));
        }
    }
    let sums = [
        (
            "balances",
            "SELECT account_number || ' ' || balance FROM accounts",
        ),
        ("postings", "SELECT SUM(amount)::text FROM postings"),
        (
            "posted per account",
            "SELECT account_id::text || ' ' || SUM(amount) FROM postings GROUP BY account_id",
        ),
        ("transactions", "SELECT SUM(amount)::text FROM transactions"),
        ("settlements", "SELECT SUM(amount)::text FROM settlements"),
        (
            "transfers",
            "SELECT transfer_status || ' ' || SUM(amount) FROM transfers GROUP BY transfer_status",
        ),
        (
            "daily totals",
            "SELECT business_id::text || ' ' || day::text || ' ' || amount \
             FROM daily_transfer_totals",
        ),
    ];
    for (name, sql) in sums {
        figures.push((name.to_owned(), texts(pool, sql.to_owned()).await));
    }
    figures
}

/// A database of the last release (migrations 0001-0013) holding [`OLD_ROWS`].
async fn the_last_release() -> TestDb {
    let db = TestDb::empty().await;
    MIGRATOR.run_to(13, db.pool.inner()).await.unwrap();
    sqlx::raw_sql(OLD_ROWS)
        .execute(db.pool.inner())
        .await
        .unwrap();
    db
}

#[tokio::test]
async fn a_database_of_the_last_release_is_upgraded_in_place() {
    let db = the_last_release().await;
    let before = figures(db.pool.inner(), false).await;

    MIGRATOR.run(db.pool.inner()).await.unwrap();
    let applied: Vec<i64> = sqlx::query("SELECT version FROM _sqlx_migrations ORDER BY version")
        .fetch_all(db.pool.inner())
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    let latest = MIGRATOR
        .iter()
        .map(|migration| migration.version)
        .max()
        .unwrap();
    assert_eq!(applied, (1..=latest).collect::<Vec<i64>>());
    let after = figures(db.pool.inner(), true).await;
    // Every figure of before is kept (later migrations may add tables, as 0015 does).
    for (name, old) in &before {
        let new = after
            .iter()
            .find(|(after_name, _)| after_name == name)
            .unwrap_or_else(|| panic!("{name} is gone"));
        // 0032 adds the bulk transfers' reserve, one internal account per environment: every
        // account of before is kept, and two more stand beside them.
        if name == "internal_accounts rows" {
            let count = |rows: &[String]| rows[0].parse::<i64>().unwrap();
            assert_eq!(count(&new.1), count(old) + 2, "{name}");
            continue;
        }
        if name.starts_with("internal_accounts ") && new.1.len() == old.len() + 2 {
            assert!(old.iter().all(|row| new.1.contains(row)), "{name}");
            continue;
        }
        assert_eq!(old, &new.1, "{name}");
    }
    assert!(before
        .iter()
        .any(|(name, rows)| name == "transfers rows" && rows == &["2"]));

    // The rows read back through the crate, as their old text meant.
    let at = |text: &str| text.parse::<DateTime<Utc>>().unwrap();
    let member = members::find(&db.pool, BUSINESS, MEMBER)
        .await
        .unwrap()
        .unwrap();
    assert!(member.is_active);
    assert_eq!(member.last_login, Some(at("2026-11-03T08:00:00.000001Z")));
    assert_eq!(member.role_id.to_string(), ROLE);
    let pending = members::find(&db.pool, BUSINESS, "8b1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e60")
        .await
        .unwrap()
        .unwrap();
    assert!(!pending.is_active);
    assert_eq!(
        pending.invitation_expires_at,
        Some(at("2026-11-09T10:00:00Z"))
    );
    let endpoint = webhook_endpoints::find_endpoint(&db.pool, BUSINESS)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(endpoint.ip_whitelist, ["10.0.0.0/8", "192.168.1.1"]);
    assert_eq!(
        endpoint.event_types,
        ["transfer.success", "collection.received"]
    );
    assert!(endpoint.is_active);
    assert_eq!(
        endpoint.previous_secret_expires_at,
        Some(at("2026-11-04T08:00:00Z"))
    );
    let main = accounts::find_by_id(&db.pool, MAIN).await.unwrap().unwrap();
    assert_eq!(main.balance, 999_999_999_999_999_000);
    let child = accounts::find_by_id(&db.pool, VIRTUAL)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(child.parent_account_number.as_deref(), Some("1000000001"));
    assert_eq!(audit::postings_total(&db.pool).await.unwrap(), 0);
    let held = transfers::held(&db.pool, BUSINESS, "TRF1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(held.transfer_status, "pending_approval");
    assert_eq!(
        held.credential_issued_by.as_deref(),
        Some("8b1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f")
    );
    let settled = transfers::find(
        &db.pool,
        BUSINESS,
        kobo_store::transfers::Lookup::ReferenceNumber("TRF2"),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(settled.created_at, at("2026-11-03T08:03:00.000002Z"));
    assert_eq!(
        settled.reviewed_by.as_deref(),
        Some("8b1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e60")
    );
    let leased = transfers::leased(&db.pool, &["c0000002-1b2c-4d5e-8f90-0a1b2c3d4e5f".into()])
        .await
        .unwrap();
    assert!(leased[0].submitted);
    let authenticated = sessions::find_for_token(&db.pool, "22222222-1b2c-4d5e-8f90-0a1b2c3d4e60")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(authenticated.revoked_at, Some(at("2026-11-03T08:30:00Z")));
    let policy = approval_policies::find(&db.pool, BUSINESS)
        .await
        .unwrap()
        .unwrap();
    assert!(policy.is_active);
    let mut tx = db.pool.inner().begin().await.unwrap();
    assert_eq!(
        daily_totals::spent(&mut tx, BUSINESS, "2026-11-03")
            .await
            .unwrap(),
        Some(500)
    );
    assert_eq!(
        throttles::locked_until(&mut tx, "login:ip:10.0.0.1")
            .await
            .unwrap(),
        Some(at("2026-11-03T08:15:00Z"))
    );
    tx.rollback().await.unwrap();
    assert!(audit::daily_totals_astray(&db.pool)
        .await
        .unwrap()
        .is_empty());
    let audit_entries = logs::list_audit(
        &db.pool,
        &kobo_store::logs::AuditFilter {
            business_id: BUSINESS.into(),
            from: None,
            until: None,
            action: None,
            user_id: None,
            search: None,
            cursor: None,
            page_size: 10,
        },
    )
    .await
    .unwrap();
    assert_eq!(audit_entries[0].day, "2026-11-03");
    db.finish().await;
}

/// Migrations 0001-0013 are release 2.3.0's, byte for byte, as SQLite's store keeps them too
/// (both stores ran one set of migrations until then): a database they migrated has the
/// checksums sqlx finds here. (The service's upgrade test loads that release's databases.)
#[test]
fn the_first_thirteen_migrations_are_the_releases() {
    let ours = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
    let theirs =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../store-sqlite/migrations");
    let mut names: Vec<_> = std::fs::read_dir(&theirs)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .filter(|name| name.to_string_lossy().as_ref() < "0014")
        .collect();
    names.sort();
    assert_eq!(names.len(), 13);
    for name in names {
        assert_eq!(
            std::fs::read(ours.join(&name)).unwrap(),
            std::fs::read(theirs.join(&name)).unwrap(),
            "{name:?}"
        );
    }
}

/// Migration 0023 folds each settlement into its transaction (`settlements` becomes their
/// view): a settlement its transaction contradicts would be lost, so the upgrade stops there
/// with the table and its row as they were.
#[tokio::test]
async fn a_settlement_its_transaction_contradicts_stops_the_upgrade() {
    let db = the_last_release().await;
    sqlx::raw_sql("UPDATE settlements SET amount = amount - 1")
        .execute(db.pool.inner())
        .await
        .unwrap();

    let failed = MIGRATOR.run(db.pool.inner()).await.unwrap_err();
    assert!(
        failed.to_string().contains("migration 0023 would lose it"),
        "{failed}"
    );
    let kept: Vec<(String, i64)> = sqlx::query_as(
        "SELECT t.table_type::text, s.amount FROM settlements s, information_schema.tables t \
         WHERE t.table_name = 'settlements'",
    )
    .fetch_all(db.pool.inner())
    .await
    .unwrap();
    assert_eq!(
        kept,
        vec![("BASE TABLE".to_owned(), 1_000_000_000_000_000_000 - 1)]
    );
    db.finish().await;
}
