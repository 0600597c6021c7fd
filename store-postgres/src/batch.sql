-- Every write of a kobo_store::batch::Batch in one statement (see batch.rs): each kind of
-- write arrives as one parameter, its rows as a JSON array of objects (`json_to_recordset`
-- reads them with the types its column list names), and each table is written by a
-- data-modifying part of one WITH. A transaction may carry its entry's posting and its
-- entry's row (`carries_posting`, `entry_kind`: migration 0025); `journal_entries` and
-- `postings` get only what no transaction carries. A transfer may carry its payout's audit and
-- activity entries (`audit_user_name` to `activity_message`: migration 0026); `audit_logs` and
-- `activity_logs` get only what no transfer carries. A posting may name the entry, and a
-- transfer the transactions, that the same statement inserts (no foreign key checks them
-- since migration 0022); no part reads a row another part writes.
--
-- `payout_batch.sql` and `payout_in_one.sql` are made from this statement's parts by `cargo
-- xtask codegen`: a line `-- in one: ...` is a line of `payout_in_one.sql` alone.
WITH
entries AS (
    INSERT INTO journal_entries (id, business_id, kind, created_at)
    SELECT id, business_id, kind, created_at
    FROM json_to_recordset($1::text::json)
        AS e (id uuid, business_id uuid, kind text, created_at timestamptz)
),
postings AS (
    INSERT INTO postings (id, entry_id, account_id, amount, created_at)
    SELECT id, entry_id, account_id, amount, created_at
    FROM json_to_recordset($2::text::json)
        AS p (id uuid, entry_id uuid, account_id uuid, amount bigint, created_at timestamptz)
),
-- A transaction's balance after it (migration 0028): its account's balance once the movement
-- its rows describe is done, less what the batch's later rows on the account move it by
-- (`later`). An earlier statement of the transaction moved the balance, and this one sees it;
-- in one statement, the movement's part returns it (`moved`), and a refused movement writes no
-- transaction (its payout is rolled back). A line ending `-- apart` is left out of the
-- statement in one.
new_transactions AS (
    SELECT t.*, b.balance - t.later AS balance_after
    FROM json_to_recordset($3::text::json)
        AS t (id uuid, business_id uuid, account_id uuid, entry_id uuid, sequence bigint,
            reference_number text, transaction_type text, category text, status text,
            channel text, amount bigint, narration text, narration_key text, session_id text,
            originator_account_number text, originator_account_name text,
            originator_bank_code text, originator_bank_name text, created_at timestamptz,
            settled boolean, carries_posting boolean, entry_kind text, later bigint)
    LEFT JOIN accounts b ON b.id = t.account_id -- apart
    -- in one: JOIN moved b ON b.id = t.account_id
    -- in one: WHERE EXISTS (SELECT 1 FROM place)
),
-- A settled transaction (a collection) is its own settlement (`settlements` is their view).
transactions AS (
    INSERT INTO transactions (id, business_id, account_id, entry_id, sequence,
        reference_number, transaction_type, category, status, channel, amount, narration,
        narration_key, session_id, originator_account_number, originator_account_name,
        originator_bank_code, originator_bank_name, created_at, settled, carries_posting,
        entry_kind, balance_after)
    SELECT id, business_id, account_id, entry_id, sequence, reference_number,
        transaction_type, category, status, channel, amount, narration, narration_key,
        session_id, originator_account_number, originator_account_name, originator_bank_code,
        originator_bank_name, created_at, settled, carries_posting, entry_kind, balance_after
    FROM new_transactions
),
transfers AS (
    INSERT INTO transfers (id, business_id, reference_number, reference, source_account_id,
        beneficiary_account_number, beneficiary_account_name, beneficiary_account_id,
        bank_code, bank_name, transfer_type, amount, fee, vat, narration, transfer_status,
        approval_status, session_id, failure_reason, reversal_reference_number,
        debit_transaction_id, fee_transaction_id, initiated_by, initiated_via, reviewed_by,
        expires_at, day, submitted, attempts, next_attempt_at, lease_until, created_at,
        updated_at, credential_issued_by, audit_user_name, call_ip_address, call_request_id,
        activity_endpoint, activity_message)
    SELECT id, business_id, reference_number, reference, source_account_id,
        beneficiary_account_number, beneficiary_account_name, beneficiary_account_id,
        bank_code, bank_name, transfer_type, amount, fee, vat, narration, transfer_status,
        approval_status, NULL, NULL, NULL, debit_transaction_id, fee_transaction_id,
        initiated_by, initiated_via, NULL, expires_at, day, false, 0, NULL, NULL,
        created_at, updated_at, credential_issued_by, audit_user_name, call_ip_address,
        call_request_id, activity_endpoint, activity_message
    FROM json_to_recordset($4::text::json)
        AS t (id uuid, business_id uuid, reference_number text, reference text,
            source_account_id uuid, beneficiary_account_number text,
            beneficiary_account_name text, beneficiary_account_id uuid, bank_code text,
            bank_name text, transfer_type text, amount bigint, fee bigint, vat bigint,
            narration text, transfer_status text, approval_status text,
            debit_transaction_id uuid, fee_transaction_id uuid, initiated_by text,
            initiated_via text, expires_at timestamptz, day date, created_at timestamptz,
            updated_at timestamptz, credential_issued_by text, audit_user_name text,
            call_ip_address text, call_request_id text, activity_endpoint text,
            activity_message text)
    -- in one: WHERE EXISTS (SELECT 1 FROM place)
),
-- An event is due at once if its business has an active endpoint; otherwise it is recorded
-- `skipped`, never queued (a queued event skipped later left a dead entry in `events_due`).
events AS (
    INSERT INTO events (id, business_id, type, payload, created_at, next_attempt_at,
        delivery_status)
    SELECT e.id, e.business_id, e.kind, e.payload, e.at,
        CASE WHEN active.any THEN e.at END,
        CASE WHEN active.any THEN 'pending' ELSE 'skipped' END
    FROM json_to_recordset($5::text::json)
        AS e (id uuid, business_id uuid, kind text, payload text, at timestamptz)
    CROSS JOIN LATERAL (SELECT EXISTS (SELECT 1 FROM webhook_configurations c
        WHERE c.business_id = e.business_id AND c.is_active) AS any) active
    -- in one: WHERE EXISTS (SELECT 1 FROM place)
),
-- An audit entry's `day` is the UTC day of its time.
audits AS (
    INSERT INTO audit_logs (id, business_id, action, user_name, user_id, ip_address,
        response_code, day, target_type, target_id, request_id, created_at)
    SELECT a.id, a.business_id, a.action, a.user_name, a.user_id, a.ip_address,
        a.response_code, (a.at AT TIME ZONE 'UTC')::date, a.target_type, a.target_id,
        a.request_id, a.at
    FROM json_to_recordset($6::text::json)
        AS a (id uuid, business_id uuid, action text, user_name text, user_id text,
            ip_address text, response_code bigint, target_type text, target_id text,
            request_id text, at timestamptz)
),
-- An activity-log entry: the integration call whose work the batch writes.
activities AS (
    INSERT INTO activity_logs (id, business_id, endpoint, method, response_code, status,
        message, ip_address, request_id, created_at)
    SELECT id, business_id, endpoint, 'POST', response_code, status, message, ip_address,
        request_id, created_at
    FROM json_to_recordset($7::text::json)
        AS a (id uuid, business_id uuid, endpoint text, response_code bigint, status text,
            message text, ip_address text, request_id text, created_at timestamptz)
),
-- The answers stored under keys claimed earlier in the transaction (rows the batch does not
-- insert): a key answered twice in one batch keeps its last answer, as statements run in
-- order would.
answers AS (
    UPDATE idempotency_keys k SET response_data = a.data
    FROM (
        SELECT DISTINCT ON (business_id, operation, key) business_id, operation, key, data
        FROM ROWS FROM (json_to_recordset($8::text::json)
                AS (business_id uuid, operation text, key text, data text))
            WITH ORDINALITY AS a (business_id, operation, key, data, n)
        ORDER BY business_id, operation, key, n DESC
    ) a
    WHERE k.business_id = a.business_id AND k.operation = a.operation
        AND k.idempotency_key = a.key
),
-- The keys the batch claims with their answers: a new key is inserted, one stored before the
-- claims' cutoff (expired) replaced; an unexpired one is left alone and not counted. A key
-- another transaction is inserting makes this wait for it, as the claim at a transaction's
-- start would.
claimed AS (
    INSERT INTO idempotency_keys (business_id, operation, idempotency_key, request_hash,
        response_data, created_at)
    SELECT business_id, operation, idempotency_key, request_hash, response_data, created_at
    FROM json_to_recordset($9::text::json)
        AS k (business_id uuid, operation text, idempotency_key text, request_hash text,
            response_data text, created_at timestamptz)
    -- in one: WHERE EXISTS (SELECT 1 FROM place)
    ON CONFLICT (business_id, operation, idempotency_key) DO UPDATE
        SET request_hash = excluded.request_hash, response_data = excluded.response_data,
            refusal_code = NULL, refusal_message = NULL, created_at = excluded.created_at
        WHERE idempotency_keys.created_at < $10::timestamptz
    RETURNING 1
)
SELECT count(*) AS "claimed!" FROM claimed
