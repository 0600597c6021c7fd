-- The batch of a payout (see batch.rs, `run`): the parts of `batch.sql` that a payout's writes
-- reach, and no other. Every other part of `batch.sql` is a data-modifying part PostgreSQL sets
-- up and runs for each execution even when its arrays are empty (the table opened, locked and
-- its indexes opened: about 12 µs each on the development machine), and a payout, whose
-- postings, entry and log entries its transactions and transfer carry and whose key it claims
-- with its answer, leaves five of them empty. The parts are `batch.sql`'s, word for word, their
-- parameters numbered again in order of appearance (`batch.rs`'s test
-- `the_payout_batch_is_the_batch_s_parts` derives this file's statement from `batch.sql` and
-- compares).
WITH
new_transactions AS (
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::bigint[],
        $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::bigint[],
        $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[],
        $18::text[], $19::timestamptz[], $20::boolean[], $21::boolean[], $22::text[])
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
    FROM unnest($23::uuid[], $24::uuid[], $25::text[], $26::text[], $27::uuid[], $28::text[],
        $29::text[], $30::uuid[], $31::text[], $32::text[], $33::text[], $34::bigint[],
        $35::bigint[], $36::bigint[], $37::text[], $38::text[], $39::text[], $40::uuid[],
        $41::uuid[], $42::text[], $43::text[], $44::timestamptz[], $45::text[],
        $46::timestamptz[], $47::timestamptz[], $48::text[], $49::text[], $50::text[],
        $51::text[], $52::text[], $53::text[])
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
    FROM unnest($54::uuid[], $55::uuid[], $56::text[], $57::text[], $58::timestamptz[])
        AS e (id, business_id, kind, payload, at)
    CROSS JOIN LATERAL (SELECT EXISTS (SELECT 1 FROM webhook_configurations c
        WHERE c.business_id = e.business_id AND c.is_active) AS any) active
),
-- The keys the batch claims with their answers: a new key is inserted, one stored before the
-- cutoff ($59, expired) replaced; an unexpired one is left alone and not counted. A key
-- another transaction is inserting makes this wait for it, as the claim at a transaction's
-- start would.
claimed AS (
    INSERT INTO idempotency_keys (business_id, operation, idempotency_key, request_hash,
        response_data, created_at)
    SELECT * FROM unnest($60::uuid[], $61::text[], $62::text[], $63::text[], $64::text[],
        $65::timestamptz[])
    ON CONFLICT (business_id, operation, idempotency_key) DO UPDATE
        SET request_hash = excluded.request_hash, response_data = excluded.response_data,
            refusal_code = NULL, refusal_message = NULL, created_at = excluded.created_at
        WHERE idempotency_keys.created_at < $59::timestamptz
    RETURNING 1
)
SELECT count(*) AS "claimed!" FROM claimed
