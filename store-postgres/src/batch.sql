-- Every write of a kobo_store::batch::Batch in one statement (see batch.rs): each kind of
-- write arrives as one array per column, and each table is written by a data-modifying part
-- of one WITH. A transaction may carry its entry's posting and its entry's row ($83, $84:
-- migration 0025); `journal_entries` and `postings` get only what no transaction carries. A
-- transfer may carry its payout's audit and activity entries ($94 to $98: migration 0026);
-- `audit_logs` and `activity_logs` get only what no transfer carries. A
-- posting may name the entry, and a transfer the transactions, that the same statement
-- inserts (no foreign key checks them since migration 0022); no part reads a row another part
-- writes.
WITH
entries AS (
    INSERT INTO journal_entries (id, business_id, kind, created_at)
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[])
),
postings AS (
    INSERT INTO postings (id, entry_id, account_id, amount, created_at)
    SELECT * FROM unnest($5::uuid[], $6::uuid[], $7::uuid[], $8::bigint[], $9::timestamptz[])
),
new_transactions AS (
    SELECT * FROM unnest($10::uuid[], $11::uuid[], $12::uuid[], $13::uuid[], $14::bigint[],
        $15::text[], $16::text[], $17::text[], $18::text[], $19::text[], $20::bigint[],
        $21::text[], $22::text[], $23::text[], $24::text[], $25::text[], $26::text[],
        $27::text[], $28::timestamptz[], $29::boolean[], $83::boolean[], $84::text[])
        AS t (id, business_id, account_id, entry_id, sequence, reference_number,
            transaction_type, category, status, channel, amount, narration, narration_key,
            session_id, originator_account_number, originator_account_name,
            originator_bank_code, originator_bank_name, created_at, settled, carries_posting,
            entry_kind)
),
-- A settled transaction (a collection) is its own settlement (`settlements` is their view).
transactions AS (
    INSERT INTO transactions (id, business_id, account_id, entry_id, sequence,
        reference_number, transaction_type, category, status, channel, amount, narration,
        narration_key, session_id, originator_account_number, originator_account_name,
        originator_bank_code, originator_bank_name, created_at, settled, carries_posting,
        entry_kind)
    SELECT id, business_id, account_id, entry_id, sequence, reference_number,
        transaction_type, category, status, channel, amount, narration, narration_key,
        session_id, originator_account_number, originator_account_name, originator_bank_code,
        originator_bank_name, created_at, settled, carries_posting, entry_kind
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
        initiated_by, initiated_via, NULL, expires_at, day::date, false, 0, NULL, NULL,
        created_at, updated_at, credential_issued_by, audit_user_name, call_ip_address,
        call_request_id, activity_endpoint, activity_message
    FROM unnest($30::uuid[], $31::uuid[], $32::text[], $33::text[], $34::uuid[], $35::text[],
        $36::text[], $37::uuid[], $38::text[], $39::text[], $40::text[], $41::bigint[],
        $42::bigint[], $43::bigint[], $44::text[], $45::text[], $46::text[], $47::uuid[],
        $48::uuid[], $49::text[], $50::text[], $51::timestamptz[], $52::text[],
        $53::timestamptz[], $54::timestamptz[], $55::text[], $94::text[], $95::text[],
        $96::text[], $97::text[], $98::text[])
        AS t (id, business_id, reference_number, reference, source_account_id,
            beneficiary_account_number, beneficiary_account_name, beneficiary_account_id,
            bank_code, bank_name, transfer_type, amount, fee, vat, narration, transfer_status,
            approval_status, debit_transaction_id, fee_transaction_id, initiated_by,
            initiated_via, expires_at, day, created_at, updated_at, credential_issued_by,
            audit_user_name, call_ip_address, call_request_id, activity_endpoint,
            activity_message)
),
-- An event is due at once if its business has an active endpoint; otherwise it is recorded
-- `skipped`, never queued (a queued event skipped later left a dead entry in `events_due`).
events AS (
    INSERT INTO events (id, business_id, type, payload, created_at, next_attempt_at,
        delivery_status)
    SELECT e.id, e.business_id, e.kind, e.payload, e.at,
        CASE WHEN active.any THEN e.at END,
        CASE WHEN active.any THEN 'pending' ELSE 'skipped' END
    FROM unnest($56::uuid[], $57::uuid[], $58::text[], $59::text[], $60::timestamptz[])
        AS e (id, business_id, kind, payload, at)
    CROSS JOIN LATERAL (SELECT EXISTS (SELECT 1 FROM webhook_configurations c
        WHERE c.business_id = e.business_id AND c.is_active) AS any) active
),
-- An audit entry's `day` is the UTC day of its time.
audits AS (
    INSERT INTO audit_logs (id, business_id, action, user_name, user_id, ip_address,
        response_code, day, target_type, target_id, request_id, created_at)
    SELECT a.id, a.business_id, a.action, a.user_name, a.user_id, a.ip_address,
        a.response_code, (a.at AT TIME ZONE 'UTC')::date, a.target_type, a.target_id,
        a.request_id, a.at
    FROM unnest($61::uuid[], $62::uuid[], $63::text[], $64::text[], $65::text[], $66::text[],
        $67::bigint[], $68::text[], $69::text[], $70::text[], $71::timestamptz[])
        AS a (id, business_id, action, user_name, user_id, ip_address, response_code,
            target_type, target_id, request_id, at)
),
-- An activity-log entry: the integration call whose work the batch writes.
activities AS (
    INSERT INTO activity_logs (id, business_id, endpoint, method, response_code, status,
        message, ip_address, request_id, created_at)
    SELECT id, business_id, endpoint, 'POST', response_code, status, message, ip_address,
        request_id, created_at
    FROM unnest($85::uuid[], $86::uuid[], $87::text[], $88::bigint[], $89::text[], $90::text[],
        $91::text[], $92::text[], $93::timestamptz[])
        AS a (id, business_id, endpoint, response_code, status, message, ip_address,
            request_id, created_at)
),
-- The answers stored under keys claimed earlier in the transaction (rows the batch does not
-- insert): a key answered twice in one batch keeps its last answer, as statements run in
-- order would.
answers AS (
    UPDATE idempotency_keys k SET response_data = a.data
    FROM (
        SELECT DISTINCT ON (business_id, operation, key) business_id, operation, key, data
        FROM unnest($72::uuid[], $73::text[], $74::text[], $75::text[])
            WITH ORDINALITY AS a (business_id, operation, key, data, n)
        ORDER BY business_id, operation, key, n DESC
    ) a
    WHERE k.business_id = a.business_id AND k.operation = a.operation
        AND k.idempotency_key = a.key
),
-- The keys the batch claims with their answers: a new key is inserted, one stored before the
-- cutoff ($82, expired) replaced; an unexpired one is left alone and not counted. A key
-- another transaction is inserting makes this wait for it, as the claim at a transaction's
-- start would.
claimed AS (
    INSERT INTO idempotency_keys (business_id, operation, idempotency_key, request_hash,
        response_data, created_at)
    SELECT * FROM unnest($76::uuid[], $77::text[], $78::text[], $79::text[], $80::text[],
        $81::timestamptz[])
    ON CONFLICT (business_id, operation, idempotency_key) DO UPDATE
        SET request_hash = excluded.request_hash, response_data = excluded.response_data,
            refusal_code = NULL, refusal_message = NULL, created_at = excluded.created_at
        WHERE idempotency_keys.created_at < $82::timestamptz
    RETURNING 1
)
SELECT count(*) AS "claimed!" FROM claimed
